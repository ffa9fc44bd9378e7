"""One MJCF robot in both engines: MuJoCo's compiled model and the Pinocchio model built from it.

MuJoCo's compiler resolves what an MJCF file leaves implicit (``<include>``, default classes,
``childclass``, angle units, Euler sequences, inertias from geoms, unnamed bodies).  pvosimr
hands Pinocchio that compiled model, not the file: :func:`kinematic_mjcf` writes it back as a
kinematics-only MJCF (bodies, joints, armature, inertias, every number at full precision) and
``pin.buildModelFromMJCF`` reads it.  :func:`pinocchio_parser_notes` says where Pinocchio's
parser, given the user's file itself, builds another robot.

The two engines order the joints alike (depth first); they differ in three conventions, mapped
here and checked at a configuration when the pair is made (:meth:`MjcfPair.check`):

- quaternions: MuJoCo ``(w, x, y, z)``, Pinocchio ``(x, y, z, w)`` (free and ball joints);
- hinge and slide joints: MuJoCo's angle counts from ``qpos0`` (the joint's ``ref``), so
  Pinocchio's ``q = qpos − qpos0``;
- free-joint velocities: MuJoCo's linear part is in world axes, Pinocchio's in the body's
  (``v = Rᵀ v_mj``).  ``J M⁻¹ Jᵀ`` does not depend on the velocity coordinates, but the mass
  matrices are compared through this map.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from ..extras import require
from .truth import mass_matrix

__all__ = [
    "ANCHOR_BODY",
    "MjcfPair",
    "kinematic_mjcf",
    "mujoco_warnings",
    "open_mjcf",
    "pinocchio_parser_notes",
]

ANCHOR_BODY = "pvosimr_world"
"""The jointless body at the world's origin that holds every top-level body in the MJCF
Pinocchio reads: its parser reads only the first top-level body, and ignores the pose of a
top-level body without joints (this one sits at the origin)."""

_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3
_NQ = {_FREE: 7, _BALL: 4, _SLIDE: 1, _HINGE: 1}
_CHECK_TOL = 1e-9  # placements and mass matrix, relative to max(1, their size)


@contextlib.contextmanager
def mujoco_warnings() -> Iterator[None]:
    """MuJoCo's warnings inside the block as Python ``UserWarning`` s ("MuJoCo: …"): without a
    handler, MuJoCo prints them and appends them to ``MUJOCO_LOG.TXT`` in the current folder."""
    import mujoco

    before = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda text: warnings.warn(f"MuJoCo: {text}", stacklevel=2))
    try:
        yield
    finally:
        mujoco.set_mju_user_warning(before)


def _num(values) -> str:
    return " ".join(repr(float(x)) for x in np.ravel(values))


def _body_name(mj, b: int) -> str:
    return mj.body(b).name or f"pvosimr_body{b}"


def kinematic_mjcf(mj) -> str:
    """MuJoCo's compiled model ``mj`` as an MJCF string Pinocchio reads: the body tree with
    each body's pose, inertia and joints (type, anchor, axis, armature); radians; every
    top-level body under :data:`ANCHOR_BODY`.  A free joint's body sits at the origin, as
    MuJoCo's free joint sets the body's world pose itself."""
    root = ET.Element("mujoco", model="mjcf")
    ET.SubElement(root, "compiler", angle="radian", autolimits="true")
    anchor = ET.SubElement(ET.SubElement(root, "worldbody"), "body", name=ANCHOR_BODY)
    elements = {0: anchor}
    for b in range(1, mj.nbody):  # a parent precedes its children in MuJoCo's body order
        elements[b] = _body_element(mj, b, elements[int(mj.body_parentid[b])])
    return ET.tostring(root, encoding="unicode")


def _body_element(mj, b: int, parent: ET.Element) -> ET.Element:
    joints = range(mj.body_jntadr[b], mj.body_jntadr[b] + mj.body_jntnum[b])
    free = any(mj.jnt_type[j] == _FREE for j in joints)
    pose = {} if free else {"pos": _num(mj.body_pos[b]), "quat": _num(mj.body_quat[b])}
    body = ET.SubElement(parent, "body", name=_body_name(mj, b), **pose)
    ET.SubElement(
        body,
        "inertial",
        pos=_num(mj.body_ipos[b]),
        quat=_num(mj.body_iquat[b]),
        mass=repr(float(mj.body_mass[b])),
        diaginertia=_num(mj.body_inertia[b]),
    )
    for j in joints:
        kind = ("free", "ball", "slide", "hinge")[mj.jnt_type[j]]
        attrs = {"name": mj.joint(j).name or f"pvosimr_joint{j}", "type": kind}
        attrs["armature"] = repr(float(mj.dof_armature[mj.jnt_dofadr[j]]))
        if kind != "free":
            attrs["pos"] = _num(mj.jnt_pos[j])
        if kind in ("slide", "hinge"):
            attrs["axis"] = _num(mj.jnt_axis[j])
            if mj.jnt_limited[j]:  # Pinocchio's angle counts from qpos0
                attrs["range"] = _num(mj.jnt_range[j] - mj.qpos0[mj.jnt_qposadr[j]])
        ET.SubElement(body, "joint", attrs)
    return body


@dataclass(frozen=True, eq=False)
class MjcfPair:
    """An MJCF robot in both engines (made by :func:`open_mjcf`).

    Attributes:
        path: the MJCF file.
        mj: MuJoCo's compiled ``MjModel`` (the file's options, solver and cone as written).
        model: the Pinocchio model of the same robot (:func:`kinematic_mjcf`).
        body_frames: per MuJoCo body, the id of its BODY frame in ``model`` (0: the world).
    """

    path: str
    mj: object
    model: pin.Model
    body_frames: tuple[int, ...]

    @property
    def name(self) -> str:
        return Path(self.path).name

    def body_joint(self, b: int) -> int:
        """The Pinocchio joint that carries MuJoCo body ``b`` (0: the world)."""
        return int(self.model.frames[self.body_frames[b]].parentJoint) if b else 0

    def qpos(self, q: np.ndarray) -> np.ndarray:
        """MuJoCo's ``qpos`` of Pinocchio's configuration ``q``."""
        order, shift = _coordinate_map(self.mj)
        return np.asarray(q, dtype=float)[order] + shift

    def q(self, qpos: np.ndarray) -> np.ndarray:
        """Pinocchio's configuration of MuJoCo's ``qpos``."""
        order, shift = _coordinate_map(self.mj)
        q = np.empty(self.model.nq)
        q[order] = np.asarray(qpos, dtype=float) - shift
        return q

    def velocity_map(self, q: np.ndarray) -> np.ndarray:
        """``T`` with Pinocchio's ``v = T qvel`` (the identity but on free joints)."""
        mj, T = self.mj, np.eye(self.model.nv)
        order, _ = _coordinate_map(mj)
        for j in range(mj.njnt):
            if mj.jnt_type[j] == _FREE:
                d, a = mj.jnt_dofadr[j], order[mj.jnt_qposadr[j]]  # a: the joint's start in q
                R = pin.Quaternion(*np.roll(q[a + 3 : a + 7], 1)).toRotationMatrix()
                T[d : d + 3, d : d + 3] = R.T
        return T

    def check(self, q: np.ndarray) -> None:
        """ValueError naming the body or velocity where the two engines' robots differ at
        ``q``: every body's world pose, and ``M_mj = Tᵀ M T``."""
        import mujoco

        mj, model = self.mj, self.model
        d = mujoco.MjData(mj)
        d.qpos[:] = self.qpos(q)
        with mujoco_warnings():
            mujoco.mj_forward(mj, d)
        data = model.createData()
        pin.framesForwardKinematics(model, data, q)
        scale = max(1.0, float(np.abs(d.xpos).max()))
        for b in range(1, mj.nbody):
            oMf = data.oMf[self.body_frames[b]]
            err = max(
                np.abs(oMf.translation - d.xpos[b]).max() / scale,
                np.abs(oMf.rotation - d.xmat[b].reshape(3, 3)).max(),
            )
            if err > _CHECK_TOL:
                raise ValueError(
                    f"{self.name}: body {_body_name(mj, b)!r} is {err:.2g} away from its "
                    "MuJoCo pose in the Pinocchio model built from it"
                )
        M_mj = np.zeros((mj.nv, mj.nv))
        mujoco.mj_fullM(mj, d, M_mj)
        M = mass_matrix(model, q, data)
        T = self.velocity_map(q)
        diff = np.abs(M_mj - T.T @ M @ T)
        if diff.max() > _CHECK_TOL * max(1.0, float(np.abs(M_mj).max())):
            k = int(np.unravel_index(diff.argmax(), diff.shape)[0])
            raise ValueError(
                f"{self.name}: the mass matrices differ by {diff.max():.2g} at velocity {k} "
                f"(joint {mj.joint(int(mj.dof_jntid[k])).name!r})"
            )


def _coordinate_map(mj) -> tuple[np.ndarray, np.ndarray]:
    """``(order, shift)`` with ``qpos = q[order] + shift``: quaternions turned from
    ``(x, y, z, w)`` to ``(w, x, y, z)``, hinge and slide angles counted from ``qpos0``."""
    order, c = [], 0
    for j in range(mj.njnt):
        kind = int(mj.jnt_type[j])
        local = {_FREE: [0, 1, 2, 6, 3, 4, 5], _BALL: [3, 0, 1, 2]}.get(kind, [0])
        order += [c + k for k in local]
        c += len(local)
    hinge = np.isin(np.repeat(mj.jnt_type, [_NQ[int(t)] for t in mj.jnt_type]), (_SLIDE, _HINGE))
    return np.array(order, dtype=int), np.where(hinge, mj.qpos0, 0.0)


def open_mjcf(path: str | os.PathLike[str], *, check: bool = True) -> MjcfPair:
    """The MJCF robot at ``path`` in MuJoCo and Pinocchio (:class:`MjcfPair`), checked at a
    random configuration unless ``check`` is False.

    Raises:
        ModuleNotFoundError: MuJoCo is not installed (one line with its extra).
        FileNotFoundError: no file at ``path``.
        ValueError: MuJoCo cannot compile the file, or the two robots differ (named).
    """
    require("mujoco-efc", "mujoco")
    import mujoco

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such MJCF file: {path}")
    try:
        with mujoco_warnings():
            mj = mujoco.MjModel.from_xml_path(str(path))
    except ValueError as exc:
        raise ValueError(f"{path}: MuJoCo cannot compile it: {exc}") from exc
    with tempfile.TemporaryDirectory(prefix="pvosimr-mjcf-") as tmp:  # pin reads files only
        file = Path(tmp) / "model.xml"
        file.write_text(kinematic_mjcf(mj), encoding="utf-8")
        model = pin.buildModelFromMJCF(str(file))
    model.name = path.stem
    frames = tuple(
        model.getFrameId(_body_name(mj, b), pin.FrameType.BODY) if b else 0 for b in range(mj.nbody)
    )
    pair = MjcfPair(str(path), mj, model, frames)
    if check:
        rng = np.random.default_rng(0)
        pair.check(pin.integrate(model, pin.neutral(model), rng.uniform(-1.0, 1.0, model.nv)))
    return pair


def pinocchio_parser_notes(pair: MjcfPair, q: np.ndarray) -> list[str]:
    """Where ``pin.buildModelFromMJCF`` on the file itself builds another robot than MuJoCo
    (it fails, another size, bodies elsewhere), with the likely cause where the file shows it;
    empty when it agrees.

    Pinocchio's parser counts hinge and slide angles as MuJoCo does (from 0, not from the
    joint's ``ref``), so its model is compared at MuJoCo's ``qpos`` of ``q`` (quaternions in
    Pinocchio's order), not at ``q``: a ``ref`` alone is no note.
    """
    mj = pair.mj
    tops = [b for b in range(1, mj.nbody) if mj.body_parentid[b] == 0]
    several = (
        f" (it reads the first of the file's {len(tops)} top-level bodies only)"
        if len(tops) > 1
        else ""
    )
    try:
        parsed = pin.buildModelFromMJCF(pair.path)
    except Exception as exc:  # its failure is the note
        return [f"pin.buildModelFromMJCF fails on this file: {exc}{several}"]
    if (parsed.nq, parsed.nv) != (pair.model.nq, pair.model.nv):
        return [
            f"pin.buildModelFromMJCF on this file builds nq={parsed.nq}, nv={parsed.nv}; "
            f"MuJoCo compiles nq={pair.model.nq}, nv={pair.model.nv}{several}"
        ]
    order, _ = _coordinate_map(pair.mj)
    q_file = np.empty(pair.model.nq)
    q_file[order] = pair.qpos(q)
    data, ours = parsed.createData(), pair.model.createData()
    pin.framesForwardKinematics(parsed, data, q_file)
    pin.framesForwardKinematics(pair.model, ours, q)
    off = {}
    for b in range(1, mj.nbody):
        name = _body_name(mj, b)
        if not parsed.existFrame(name, pin.FrameType.BODY):
            continue
        theirs = data.oMf[parsed.getFrameId(name, pin.FrameType.BODY)]
        mine = ours.oMf[pair.body_frames[b]]
        off[name] = max(
            float(np.abs(theirs.translation - mine.translation).max()),
            float(np.abs(theirs.rotation - mine.rotation).max()),
        )
    wrong = [name for name, err in off.items() if err > 1e-6]
    if not wrong:
        return []
    posed = [
        _body_name(mj, b) for b in tops
        if mj.body_jntnum[b] == 0 and (np.abs(mj.body_pos[b]).max() > 0 or mj.body_quat[b][0] != 1)
    ]  # fmt: skip
    cause = f" (it ignores the pose of the jointless top-level body {posed[0]!r})" if posed else ""
    named = ", ".join(repr(name) for name in wrong[:3]) + (", …" if len(wrong) > 3 else "")
    return [
        f"pin.buildModelFromMJCF puts {len(wrong)} of {len(off)} bodies up to "
        f"{max(off[n] for n in wrong):.3g} from MuJoCo's pose ({named}){cause}"
    ]
