"""MuJoCo's Delassus matrix as a reference (``mujoco-efc``), and pvosimr constraints for its rows.

With its PGS solver MuJoCo forms ``efc_AR = J M⁻¹ Jᵀ + diag(efc_R)`` over its constraint rows
``efc_J`` (``mj_projectConstraint``, in ``mj_fwdPosition``), so ``efc_AR − diag(efc_R)`` is
its Delassus matrix.  :func:`efc_rows` reads those rows at a configuration and builds, for each
row block pvosimr takes, the Pinocchio constraint with the same rows, in MuJoCo's order
(read from MuJoCo's ``engine_core_constraint.c`` and checked against ``efc_J``):

equality ``connect`` (3 rows)
    ``v_1(p_1) − v_2(p_2)`` in world axes, ``p_k`` the anchor on body ``k`` (or the sites):
    a 3D constraint between the two points.
equality ``weld`` (6 rows)
    the three ``connect`` rows (anchors: ``relpose``'s point on body 1, the ``anchor`` on
    body 2), then ``½ · torquescale · E (ω_1 − ω_2)`` with
    ``E ω = Im(q̄_2 ⊗ (0, ω) ⊗ q_1 ⊗ relpose)`` (site semantics: the sites' orientations):
    that map of the angular rows of a 6D constraint.
contacts (``condim`` 1, 3, 4, 6)
    ``C (v_b(p) − v_a(p))`` and, from ``condim`` 4, ``C (ω_b − ω_a)``, ``a`` and ``b`` the
    bodies of the contact's first and second geom, ``p`` its point and ``C`` the rows of its
    frame (normal first); elliptic cones keep these rows, pyramidal cones take
    ``r_0 ± μ_k r_k`` in pairs: each a row map (:func:`pvosimr.constraints.rows`) of a
    3D or 6D two-body constraint at ``p``.

Every constraint frame is put at its point with world axes at this configuration, so its LOCAL
rows are world rows: the constraints hold for this configuration only, as MuJoCo's rows do, and
a one-body constraint is of the kind Pinocchio's own routines take (``pin-efpa``,
``pin-cholesky`` and ``pin-pv-osimr`` compute ``A G Aᵀ`` of the constraints under the maps).

Rows pvosimr does not map (joint and tendon limits, friction loss, joint, tendon and flex
equalities, flex contacts) are left out: a principal submatrix of ``efc_AR`` is the Delassus
matrix of those rows alone.  They are counted in :attr:`EfcRows.left_out`.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from ..constraints import rows
from .mjcf import MjcfPair, mujoco_warnings

__all__ = ["EfcRows", "efc_rows", "mujoco_model_for_delassus"]

_LOCAL = pin.ReferenceFrame.LOCAL
_3D, _6D = pin.ContactType.CONTACT_3D, pin.ContactType.CONTACT_6D


@dataclass
class EfcRows:
    """MuJoCo's constraint rows at one configuration, as pvosimr constraints.

    Attributes:
        q: Pinocchio's configuration.
        constraints: the constraint list whose rows are MuJoCo's kept rows, in order.
        labels: one line per constraint naming MuJoCo's object (``weld 'grip'``, ...).
        G: ``efc_AR − diag(efc_R)`` on the kept rows (MuJoCo's Delassus matrix).
        kept: the kept rows' indices in MuJoCo's ``efc`` arrays.
        left_out: rows not mapped, counted by kind.
        seconds: the time of the ``mj_fwdPosition`` call that formed ``efc_AR``.
    """

    q: np.ndarray
    constraints: list = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    G: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    kept: list[int] = field(default_factory=list)
    left_out: Counter = field(default_factory=Counter)
    seconds: float = 0.0


def mujoco_model_for_delassus(mj):
    """A copy of MuJoCo model ``mj`` that forms ``efc_AR`` densely: the PGS solver (a dual
    solver: MuJoCo assembles ``efc_AR`` for dual solvers only) and dense Jacobians.  The cone
    and every other option stay as written."""
    import mujoco

    out = mj.__copy__()
    out.opt.solver = mujoco.mjtSolver.mjSOL_PGS
    out.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    return out


def efc_rows(pair: MjcfPair, q: np.ndarray, mj=None, d=None, data=None) -> EfcRows:
    """MuJoCo's rows and Delassus matrix at Pinocchio's configuration ``q`` (module docstring).

    ``mj`` is :func:`mujoco_model_for_delassus` of ``pair.mj``, ``d`` its ``MjData`` and
    ``data`` a ``pin.Data`` of ``pair.model`` (each made here if None; a caller that keeps them
    makes none per call).
    """
    import mujoco

    mj = mujoco_model_for_delassus(pair.mj) if mj is None else mj
    d = mujoco.MjData(mj) if d is None else d
    d.qpos[:] = pair.qpos(q)
    with mujoco_warnings():
        start = time.perf_counter()
        mujoco.mj_fwdPosition(mj, d)
        seconds = time.perf_counter() - start
    out = EfcRows(q=np.array(q, dtype=float), seconds=seconds)
    data = pair.model.createData() if data is None else data
    pin.forwardKinematics(pair.model, data, q)
    builder = _Builder(pair, mj, d, data)
    for start_row, size, kind, ident in _blocks(d):
        made = builder.make(kind, ident, size)
        if made is None:
            out.left_out[_kind_name(mj, kind, ident)] += size
            continue
        constraints, label = made
        out.constraints += constraints
        out.labels.append(label)
        out.kept += range(start_row, start_row + size)
    nefc = d.nefc
    AR = np.asarray(d.efc_AR[: nefc * nefc]).reshape(nefc, nefc)
    k = np.asarray(out.kept, dtype=int)
    out.G = AR[np.ix_(k, k)] - np.diag(np.asarray(d.efc_R)[k])
    return out


def _blocks(d):
    """``(first row, rows, type, id)`` of each constraint object in ``efc``, in order."""
    types, ids = np.asarray(d.efc_type[: d.nefc]), np.asarray(d.efc_id[: d.nefc])
    r = 0
    while r < d.nefc:
        end = r + 1
        while end < d.nefc and types[end] == types[r] and ids[end] == ids[r]:
            end += 1
        yield r, end - r, int(types[r]), int(ids[r])
        r = end


def _kind_name(mj, kind: int, ident: int) -> str:
    import mujoco

    name = mujoco.mjtConstraint(kind).name.removeprefix("mjCNSTR_").lower()
    if kind == mujoco.mjtConstraint.mjCNSTR_EQUALITY:
        name += " " + mujoco.mjtEq(int(mj.eq_type[ident])).name.removeprefix("mjEQ_").lower()
    return name.replace("_", " ")


# --------------------------------------------------------------------------- quaternions


def _qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of ``(w, x, y, z)`` quaternions (MuJoCo's ``mju_mulQuat``)."""
    w1, v1, w2, v2 = a[0], a[1:], b[0], b[1:]
    return np.concatenate(([w1 * w2 - v1 @ v2], w1 * v2 + w2 * v1 + np.cross(v1, v2)))


def _weld_map(q_1: np.ndarray, q_2: np.ndarray) -> np.ndarray:
    """``E`` (3 × 3): ``E ω = Im(q̄_2 ⊗ (0, ω) ⊗ q_1)``, ``q_1`` body 1's orientation times
    ``relpose``, ``q_2`` body 2's (MuJoCo's weld rows, before ``½ · torquescale``)."""
    conj = q_2 * np.array([1.0, -1.0, -1.0, -1.0])
    cols = [_qmul(_qmul(conj, np.concatenate(([0.0], e))), q_1)[1:] for e in np.eye(3)]
    return np.column_stack(cols)


# --------------------------------------------------------------------------- rows


class _Builder:
    """Pinocchio constraints with the rows of MuJoCo's constraint objects at one state."""

    def __init__(self, pair: MjcfPair, mj, d, data: pin.Data) -> None:
        self.pair, self.mj, self.d, self.data = pair, mj, d, data

    def make(self, kind: int, ident: int, size: int) -> tuple[list, str] | None:
        import mujoco

        C = mujoco.mjtConstraint
        if kind == C.mjCNSTR_EQUALITY:
            return self._equality(ident)
        if kind in (C.mjCNSTR_CONTACT_FRICTIONLESS, C.mjCNSTR_CONTACT_ELLIPTIC):
            return self._contact(ident, pyramid=False)
        if kind == C.mjCNSTR_CONTACT_PYRAMIDAL:
            return self._contact(ident, pyramid=True)
        return None

    # -- one constraint between two points

    def _placement(self, joint: int, p: np.ndarray) -> pin.SE3:
        """World axes at world point ``p``, in ``joint``'s frame."""
        oMi = self.data.oMi[joint]
        return oMi.actInv(pin.SE3(np.eye(3), np.asarray(p, dtype=float)))

    def _pair(self, six: bool, b1: int, p1, b2: int, p2, A: np.ndarray):
        """``rows(cm, A)``, ``cm`` the constraint ``v_b1(p1) − v_b2(p2)`` in world axes
        (6D: and ``ω_b1 − ω_b2``, with ``p2 = p1``); the world on side 1 swaps the sides."""
        j1, j2 = self.pair.body_joint(b1), self.pair.body_joint(b2)
        if j1 == 0:
            (j1, p1), (j2, p2), A = (j2, p2), (j1, p1), -A
        cm = pin.RigidConstraintModel(
            _6D if six else _3D, self.pair.model, j1, self._placement(j1, p1),
            j2, self._placement(j2, p2), _LOCAL,
        )  # fmt: skip
        return rows(cm, A)

    # -- equality constraints

    def _equality(self, e: int) -> tuple[list, str] | None:
        import mujoco

        mj, d = self.mj, self.d
        kind = mujoco.mjtEq(int(mj.eq_type[e]))
        if kind not in (mujoco.mjtEq.mjEQ_CONNECT, mujoco.mjtEq.mjEQ_WELD):
            return None
        data = mj.eq_data[e]
        o1, o2 = int(mj.eq_obj1id[e]), int(mj.eq_obj2id[e])
        sites = mj.eq_objtype[e] == mujoco.mjtObj.mjOBJ_SITE
        weld = kind == mujoco.mjtEq.mjEQ_WELD
        if sites:
            b1, b2 = int(mj.site_bodyid[o1]), int(mj.site_bodyid[o2])
            p1, p2 = d.site_xpos[o1].copy(), d.site_xpos[o2].copy()
        else:
            b1, b2 = o1, o2
            local1, local2 = (data[3:6], data[0:3]) if weld else (data[0:3], data[3:6])
            p1 = d.xmat[b1].reshape(3, 3) @ local1 + d.xpos[b1]
            p2 = d.xmat[b2].reshape(3, 3) @ local2 + d.xpos[b2]
        label = f"{'weld' if weld else 'connect'} {mj.eq(e).name or e!r}"
        linear = self._pair(False, b1, p1, b2, p2, np.eye(3))
        if not weld:
            return [linear], label
        if sites:
            q_1 = _qmul(d.xquat[b1], mj.site_quat[o1])
            q_2 = _qmul(d.xquat[b2], mj.site_quat[o2])
        else:
            q_1, q_2 = _qmul(d.xquat[b1], data[6:10]), d.xquat[b2]
        E = 0.5 * float(data[10]) * _weld_map(q_1, q_2)
        angular = self._pair(True, b1, p1, b2, p1, np.hstack([np.zeros((3, 3)), E]))
        return [linear, angular], label

    # -- contacts

    def _contact(self, c: int, pyramid: bool) -> tuple[list, str] | None:
        mj, con = self.mj, self.d.contact[c]
        if con.geom[0] < 0 or con.geom[1] < 0:
            return None  # a flex contact: several bodies per side
        a, b = int(mj.geom_bodyid[con.geom[0]]), int(mj.geom_bodyid[con.geom[1]])
        dim = int(con.dim)
        frame = con.frame.reshape(3, 3)
        A = np.zeros((dim, 6))
        A[: min(dim, 3), :3] = frame[: min(dim, 3)]
        A[3:, 3:] = frame[: dim - 3] if dim > 3 else A[3:, 3:]
        if pyramid and dim > 1:
            mu = con.friction[: dim - 1]
            P = np.zeros((2 * (dim - 1), dim))
            P[:, 0] = 1.0
            for k in range(1, dim):
                P[2 * k - 2, k], P[2 * k - 1, k] = mu[k - 1], -mu[k - 1]
            A = P @ A
        six = dim > 3
        A = A if six else A[:, :3]
        names = [mj.geom(int(g)).name or f"#{int(g)}" for g in con.geom]
        label = f"contact {names[0]!r}/{names[1]!r} (condim {dim}{', pyramid' if pyramid else ''})"
        return [self._pair(six, b, con.pos, a, con.pos, A)], label
