"""Constraints as Pinocchio's constraint models, and their constraint matrices ``K_i``.

pvosimr takes the very objects a user passes to ``pin.computeDelassusMatrix``.  A constraint of
type CONTACT_6D on joint ``j`` with placement ``X`` and reference frame LOCAL constrains the
spatial velocity of the frame ``X`` attached to link ``j``, expressed in that frame (linear rows
first, then angular); CONTACT_3D keeps the three linear rows.  Its constraint matrix
``K_i`` (paper Sec. I-C) maps the link's spatial motion, in the link frame, to those rows.

Every constraint is made of such one-body LOCAL rows, the paper's end-effectors: one on
``joint1`` at ``joint1_placement`` (frame ``c1``) and, for a constraint between two bodies, one
on ``joint2`` at ``joint2_placement`` (``c2``).  The rows of ``pin.getConstraintJacobian``
combine them (all four kinds; tests/test_constraint_models.py checks it):

- 6D LOCAL: ``v_c1 − ^{c1}X_{c2} v_c2`` (the motion of ``c1`` relative to ``c2``, in ``c1``);
- 3D LOCAL: ``v_c1 − R_c1ᵀ R_c2 v_c2`` (linear velocities of the two points, in ``c1``);
- LOCAL_WORLD_ALIGNED: the LOCAL rows turned to world axes, ``R_c1`` on each 3-row half.

A constraint on one body has no ``c2`` term.  :class:`ConstraintShape` is that structure.

Pin 4's constraint models lower to the same end-effectors, each with its rows negated
(against ``getConstraintJacobian``, checked by tests/test_constraint_models.py):

- ``FrameAnchorConstraintModel``: ``−`` the 6D LOCAL rows above;
- ``PointAnchorConstraintModel`` and ``PointContactConstraintModel``:
  ``−R_c1ᵀ (v_1(p_c2) − v_2(p_c2))``, body 1's velocity taken at ``c2``'s point (a point
  fixed in the world at ``joint2_placement`` when ``joint2_id = 0``).  Body 1's end-effector
  has 6 rows, its motion at ``c1``, shifted to ``p_c2`` by the lever ``R_c1ᵀ (p_c2 − p_c1)``.

Generic ``pin.ConstraintModel`` wrappers, row maps (:func:`rows`, any number of rows of the
constraints above) and pin 4's joint-space models are lowered to :class:`LoweredConstraint`,
read like the others (:mod:`pvosimr.lowering`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from .lowering import (
    CONTACT_DIMS,
    JOINT_SPACE_MODELS,
    PIN4_MODELS,
    LoweredConstraint,
    RowMap,
    constraint_label,
    lower,
    rows,
)

__all__ = [
    "ORTHONORMAL_TOLERANCE",
    "ConstraintShape",
    "RowMap",
    "as_constraint_list",
    "check_placement",
    "check_placements",
    "constraint_dim",
    "constraint_kind",
    "constraint_label",
    "constraint_matrix",
    "constraint_shape",
    "contact_cholesky",
    "end_effector_placements",
    "find_frame",
    "pinocchio_kind_problem",
    "place_constraints",
    "point",
    "rows",
    "weld",
]

_ACCEPTED = (pin.RigidConstraintModel, *PIN4_MODELS)

#: The reference frames a constraint's rows may be expressed in → whether they are world-aligned.
_FRAMES = {pin.ReferenceFrame.LOCAL: False, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED: True}


class ConstraintShape(NamedTuple):
    """What of a constraint the sweeps' structure depends on (not its placements)."""

    joint1: int
    dim: int
    joint2: int = 0  #: 0: the constraint is between ``joint1`` and the world
    world_aligned: bool = False  #: LOCAL_WORLD_ALIGNED rather than LOCAL
    #: "rigid", "frame_anchor", "point_anchor" (see the module docstring) or "joint" (a
    #: joint-space row, :mod:`pvosimr.lowering`)
    kind: str = "rigid"
    #: the rows of the constraint under a row map (:func:`rows`), 0 without one: ``dim`` is
    #: then the map's row count, ``base`` the 3 or 6 rows it maps
    base: int = 0
    #: the constant row map ``A`` (``dim × base``) as nested tuples; empty without one
    rows: tuple = ()

    @property
    def joints(self) -> tuple[int, ...]:
        """The links carrying its end-effectors: ``joint1``, then ``joint2`` if not the world."""
        return (self.joint1, self.joint2) if self.joint2 else (self.joint1,)

    @property
    def swept(self) -> int:
        """The rows of the constraint the map takes (``dim`` without a map)."""
        return self.base or self.dim

    @property
    def folded(self) -> bool:
        """The row map is folded into body 1's ``K`` (its EE sweeps ``dim`` rows): in LOCAL
        axes, body 1's block of a rigid constraint or frame anchor is the identity."""
        return bool(self.rows) and not self.world_aligned and self.kind != "point_anchor"

    @property
    def end_dims(self) -> tuple[int, ...]:
        """Rows of each end-effector: body 1 of a point anchor sweeps its full motion (6); a
        folded row map's body 1 sweeps the mapped rows; both ends of a joint-space row one."""
        if self.kind == "joint":
            return (self.dim, self.dim)[: len(self.joints)]
        first = 6 if self.kind == "point_anchor" else (self.dim if self.folded else self.swept)
        return (first, self.swept)[: len(self.joints)]

    @property
    def sign(self) -> float:
        """The sign of its end-effectors' rows: pin 4's models negate them."""
        return 1.0 if self.kind in ("rigid", "joint") else -1.0

    @property
    def plain(self) -> bool:
        """One LOCAL end-effector whose rows are the constraint's own (paper Sec. I-C)."""
        return not self.joint2 and not self.world_aligned and self.kind != "point_anchor"

    @property
    def framed(self) -> bool:
        """Its combination reads its EEs' placements in the world: not plain, and not a
        joint-space row (whose two ends sum, :mod:`pvosimr.lowering`)."""
        return not self.plain and self.kind != "joint"

    def end_rows(self) -> tuple[np.ndarray | None, ...]:
        """The constant left factor ``L`` of each EE's ``K = L ^{c}X_i``, or None for the
        first ``end_dims`` rows times :attr:`sign` (every constraint without a row map)."""
        n = len(self.joints)
        if not self.rows:
            return (None,) * n
        A = np.array(self.rows, dtype=float)
        if self.kind == "joint":  # child: A v_i; parent: −A ^{c2}X_π (lowering module)
            return (A, -A)[:n]
        if not self.folded:
            return (None,) * n
        return (self.sign * A @ np.eye(6)[: self.swept], *(None,) * (n - 1))

    @property
    def anchored(self) -> bool:
        """A point anchor on one body: ``c2`` is fixed in the world."""
        return self.kind == "point_anchor" and not self.joint2


#: pin 4's constraint models compute their own data (``calc``, ``residualSize``); pin 3's leave
#: that to the algorithms that take them.
_CONSTRAINTS_CALC = hasattr(pin.RigidConstraintModel, "calc")


def find_frame(model: pin.Model, frame_name: str) -> pin.Frame:
    """The frame named ``frame_name`` (its BODY frame if the name is shared), or ValueError."""
    if not model.existFrame(frame_name):
        hint = _frames_hint(model, frame_name)
        raise ValueError(f"unknown frame {frame_name!r} in model {model.name!r}. {hint}")
    # URDF parsers may give a fixed joint and its child link the same name (z1's
    # gripperStator), and getFrameId then refuses to choose: the link's BODY frame is meant.
    if model.existFrame(frame_name, pin.FrameType.BODY):
        return model.frames[model.getFrameId(frame_name, pin.FrameType.BODY)]
    return model.frames[model.getFrameId(frame_name)]


def _frames_hint(model: pin.Model, frame_name: str, shown: int = 8) -> str:
    """The frames nearest a mistyped name, or, with none near, the model's links."""
    names = [f.name for f in model.frames]
    close = difflib.get_close_matches(frame_name, names, n=3)
    if close:
        return f"Did you mean {', '.join(map(repr, close))}?"
    links = [f.name for f in model.frames if f.type == pin.FrameType.BODY] or names
    more = f", ... ({len(links)} in all)" if len(links) > shown else ""
    return f"Its links: {', '.join(links[:shown])}{more}."


def _rigid_constraint(
    model: pin.Model, frame_name: str, contact_type: pin.ContactType, offset: pin.SE3 | None = None
) -> pin.RigidConstraintModel:
    frame = find_frame(model, frame_name)
    if frame.parentJoint == 0:
        raise ValueError(f"frame {frame_name!r} is attached to the universe; it cannot move")
    placement = frame.placement if offset is None else frame.placement * offset
    cm = pin.RigidConstraintModel(
        contact_type, model, frame.parentJoint, placement, pin.ReferenceFrame.LOCAL
    )
    cm.name = frame_name
    return cm


def weld(model: pin.Model, frame_name: str) -> pin.RigidConstraintModel:
    """A 6D weld (CONTACT_6D, LOCAL) on the model frame ``frame_name``."""
    return _rigid_constraint(model, frame_name, pin.ContactType.CONTACT_6D)


def point(model: pin.Model, frame_name: str, offset=None) -> pin.RigidConstraintModel:
    """A 3D point contact (CONTACT_3D, LOCAL) at the origin of the model frame ``frame_name``.

    ``offset`` (a 3-vector in that frame's coordinates) moves the point within the link.
    """
    shift = None if offset is None else pin.SE3(np.eye(3), np.asarray(offset, dtype=float))
    return _rigid_constraint(model, frame_name, pin.ContactType.CONTACT_3D, shift)


def constraint_kind(cm) -> str:
    """``"rigid"`` for a ``RigidConstraintModel``, else the kind of pin 4's model
    (:attr:`ConstraintShape.kind`)."""
    if type(cm) is LoweredConstraint:
        return cm.kind
    spec = PIN4_MODELS.get(type(cm))
    return "rigid" if spec is None else spec[0]


def constraint_dim(cm: pin.RigidConstraintModel) -> int:
    """Rows the constraint contributes: 3 (CONTACT_3D, point anchors), 6 (CONTACT_6D, frame
    anchors), or those of its row map (:func:`rows`)."""
    if type(cm) is LoweredConstraint:
        return cm.dim
    if isinstance(cm, RowMap):
        return len(cm.selection) if cm.matrix is None else cm.matrix.shape[0]
    spec = PIN4_MODELS.get(type(cm))
    if spec is not None:
        return spec[1]
    try:
        return CONTACT_DIMS[cm.type]
    except KeyError:
        raise ValueError(
            f"unsupported constraint type {cm.type} (CONTACT_3D or CONTACT_6D)"
        ) from None


#: The largest ``‖RᵀR − I‖`` (max norm) of a placement's rotation, wherever a placement is
#: checked (a ``pin.SE3``, a placement vector ``p``, the generated C's check of ``p``).  A
#: rotation read from a file with 9 digits is R + E, |E_ij| ≤ 5e-10: ‖RᵀR − I‖ ≤ 2√3 · 5e-10
#: (1.7e-9; 22 % of random rotations so rounded exceed 1e-9).
ORTHONORMAL_TOLERANCE = 2e-9
_CHECKED_PLACEMENTS: set[bytes] = set()  # homogeneous matrices that passed check_placement


def check_placement(placement: pin.SE3) -> str:
    """What is wrong with ``placement`` as a rigid transform ("" if nothing): a non-finite
    entry, a rotation ``R`` with ``‖RᵀR − I‖ > 2e-9`` (max norm), or a reflection (det R < 0).

    ``pin.SE3`` stores any 3×3 matrix; its ``actionInverse`` takes ``Rᵀ`` for ``R⁻¹``, so a
    matrix that is not a rotation gives a constraint matrix of the wrong frame, silently.
    """
    M = placement.homogeneous
    if not np.isfinite(M).all():
        return f"is not finite: {np.round(M[:3], 6).tolist()}"
    R = M[:3, :3]
    shown = np.round(R, 6).tolist()
    error = float(np.abs(R.T @ R - np.eye(3)).max())
    if error > ORTHONORMAL_TOLERANCE:
        return f"has a rotation that is not orthonormal (‖RᵀR − I‖ = {error:.2e}): {shown}"
    if np.linalg.det(R) < 0:
        return f"has a rotation with determinant {np.linalg.det(R):.6g} (a reflection): {shown}"
    return ""


def check_placements(constraint_models: Sequence[pin.RigidConstraintModel]) -> None:
    """ValueError naming the first constraint whose ``joint1_placement`` (or, between two
    bodies, ``joint2_placement``) is not a rigid transform (:func:`check_placement`).

    Placements are read on every call, so is this check: a placement seen before is found in
    a set by the bytes of its homogeneous matrix (one hash), the full check runs once.
    """
    for k, cm in enumerate(constraint_models):
        both = cm.joint2_id or constraint_kind(cm) == "point_anchor"
        names = ("joint1_placement", "joint2_placement") if both else ("joint1_placement",)
        for name in names:
            placement = getattr(cm, name)
            key = placement.homogeneous.tobytes()
            if key in _CHECKED_PLACEMENTS:
                continue
            problem = check_placement(placement)
            if problem:
                raise ValueError(f"{constraint_label(k, cm)}: {name} {problem}")
            if len(_CHECKED_PLACEMENTS) >= 4096:
                _CHECKED_PLACEMENTS.clear()
            _CHECKED_PLACEMENTS.add(key)


def constraint_matrix(cm: pin.RigidConstraintModel) -> np.ndarray:
    """``K_i`` (m_i × 6) of a plain constraint: link-frame spatial motion → constraint-frame
    motion rows (negated for pin 4's models; all 6 rows of a point anchor's body 1; a row map
    in LOCAL axes folded in, :func:`rows`)."""
    if type(cm) is LoweredConstraint:
        shape = ConstraintShape(*cm.key())
        left = shape.end_rows()[0]
        if left is None:
            left = shape.sign * np.eye(6)[: shape.end_dims[0]]
        return left @ cm.joint1_placement.actionInverse
    kind = constraint_kind(cm)
    if kind == "rigid":
        return cm.joint1_placement.actionInverse[: constraint_dim(cm)]
    return -cm.joint1_placement.actionInverse


def end_effector_placements(cm: pin.RigidConstraintModel) -> tuple[pin.SE3, ...]:
    """The placements of the constraint's end-effectors in their links (c1, then c2)."""
    if cm.joint2_id:
        return cm.joint1_placement, cm.joint2_placement
    return (cm.joint1_placement,)


def constraint_shape(cm: pin.RigidConstraintModel, label: str) -> ConstraintShape:
    """The :class:`ConstraintShape` of ``cm``; ValueError (with ``label``) for a reference frame
    other than LOCAL or LOCAL_WORLD_ALIGNED, or two ends on the same joint."""
    lowered, kind = type(cm) is LoweredConstraint, constraint_kind(cm)
    rigid = kind == "rigid" and not lowered
    if rigid and cm.reference_frame not in _FRAMES:
        raise ValueError(
            f"{label} uses reference frame {cm.reference_frame}; pin.LOCAL or "
            "pin.LOCAL_WORLD_ALIGNED are supported"
        )
    if cm.joint2_id == cm.joint1_id:
        which = "" if lowered else " (joint1_id = joint2_id)"
        raise ValueError(f"{label} links joint {cm.joint1_id} to itself{which}: its rows are zero")
    if lowered:
        return ConstraintShape(*cm.key())
    aligned = rigid and _FRAMES[cm.reference_frame]
    return ConstraintShape(cm.joint1_id, constraint_dim(cm), cm.joint2_id, aligned, kind)


def pinocchio_kind_problem(cm: pin.RigidConstraintModel) -> str:
    """Why Pinocchio's own Delassus routines (pin 4.1) give a silently wrong matrix for ``cm``
    ("" if they do not): they read a LOCAL_WORLD_ALIGNED constraint as LOCAL (the C++
    PV-OSIMr asserts on it) and ignore ``joint2`` of a constraint between two bodies; they
    take no constraint model but ``RigidConstraintModel``."""
    if type(cm) is LoweredConstraint:
        what = "a row of" if type(cm.source) in JOINT_SPACE_MODELS else "a row map of"
        return (
            f"is {what} a {type(cm.source).__name__}; Pinocchio's Delassus routines take whole "
            "RigidConstraintModels only (pvosimr.compute_delassus takes it)"
        )
    if constraint_kind(cm) != "rigid":
        return (
            f"is a {type(cm).__name__}; Pinocchio's Delassus routines take RigidConstraintModel "
            "only (pvosimr.compute_delassus takes it)"
        )
    if cm.joint2_id != 0:
        return (
            f"links joint {cm.joint1_id} to joint {cm.joint2_id}; Pinocchio's routines ignore "
            "joint2 (pvosimr.compute_delassus takes it)"
        )
    if cm.reference_frame != pin.ReferenceFrame.LOCAL:
        return (
            f"uses reference frame {cm.reference_frame}; Pinocchio's routines support only "
            "pin.LOCAL (pvosimr.compute_delassus takes LOCAL_WORLD_ALIGNED)"
        )
    return ""


_DIRECT = frozenset((pin.RigidConstraintModel, LoweredConstraint, *PIN4_MODELS))


def as_constraint_list(
    constraint_models: Iterable[pin.RigidConstraintModel], model: pin.Model | None = None
) -> Sequence[pin.RigidConstraintModel]:
    """A list from anything iterable (a list, a tuple, ``pin.StdVec_RigidConstraintModel``,
    ``pin.StdVec_ConstraintModel``) of ``RigidConstraintModel`` and pin 4's
    ``FrameAnchorConstraintModel``, ``PointAnchorConstraintModel`` and
    ``PointContactConstraintModel``, mixed; generic ``pin.ConstraintModel`` wrappers, row maps
    (:func:`rows`) and joint-space models (``JointLimitConstraintModel``,
    ``JointFrictionConstraintModel``: ``model`` needed) are lowered to
    :class:`LoweredConstraint` (:mod:`pvosimr.lowering`).  A list of the first kinds is
    returned as is, after one type look-up per entry."""
    if isinstance(constraint_models, (*_ACCEPTED, RowMap)):
        raise TypeError(
            "constraint_models must be a sequence of constraint models, not one "
            + " or ".join(f"pinocchio.{t.__name__}" for t in _ACCEPTED)
        )
    out = list(constraint_models)
    for cm in out:
        if type(cm) not in _DIRECT and not isinstance(cm, pin.RigidConstraintModel):
            return lower(out, model)  # only lists with other kinds pay for it
    return out


def contact_cholesky(
    model: pin.Model, data: pin.Data, constraint_models: Sequence, constraint_datas: Sequence
) -> pin.ContactCholeskyDecomposition:
    """Pinocchio's sparse Cholesky of the KKT matrix for these constraints (pin 4 builds it
    from the model, data and constraint datas; pin 3 from the model and constraints)."""
    if _CONSTRAINTS_CALC:
        return pin.ContactCholeskyDecomposition(model, data, constraint_models, constraint_datas)
    return pin.ContactCholeskyDecomposition(model, constraint_models)


def place_constraints(
    model: pin.Model, data: pin.Data, constraint_models: Sequence, constraint_datas: Sequence
) -> None:
    """Each constraint's placement in the world from ``data``'s joint placements, which
    ``ContactCholeskyDecomposition.compute`` reads: pin 4's ``calc`` (without it the result is
    silently wrong); pin 3's ``compute`` places the constraints itself."""
    if _CONSTRAINTS_CALC:
        for cm, cd in zip(constraint_models, constraint_datas, strict=True):
            cm.calc(model, data, cd)
