"""Constraints as Pinocchio ``RigidConstraintModel`` objects, and their constraint matrices ``K_i``.

pvosimr takes the very objects a user passes to ``pin.computeDelassusMatrix``.  A constraint of
type CONTACT_6D on joint ``j`` with placement ``X`` and reference frame LOCAL constrains the
spatial velocity of the frame ``X`` attached to link ``j``, expressed in that frame (linear rows
first, then angular); CONTACT_3D keeps the three linear rows.  Its constraint matrix
``K_i`` (paper Sec. I-C) maps the link's spatial motion, in the link frame, to those rows.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

import numpy as np
import pinocchio as pin

__all__ = [
    "as_constraint_list",
    "check_placement",
    "check_placements",
    "constraint_dim",
    "constraint_matrix",
    "contact_cholesky",
    "find_frame",
    "place_constraints",
    "point",
    "weld",
]

_DIM = {pin.ContactType.CONTACT_3D: 3, pin.ContactType.CONTACT_6D: 6}

#: pin 4's constraint models compute their own data (``calc``, ``residualSize``); pin 3's leave
#: that to the algorithms that take them.
_CONSTRAINTS_CALC = hasattr(pin.RigidConstraintModel, "calc")


def find_frame(model: pin.Model, frame_name: str) -> pin.Frame:
    """The frame named ``frame_name`` (its BODY frame if the name is shared), or ValueError."""
    if not model.existFrame(frame_name):
        names = [f.name for f in model.frames]
        close = difflib.get_close_matches(frame_name, names, n=3)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ValueError(f"unknown frame {frame_name!r} in model {model.name!r}.{hint}")
    # URDF parsers may give a fixed joint and its child link the same name (z1's
    # gripperStator), and getFrameId then refuses to choose: the link's BODY frame is meant.
    if model.existFrame(frame_name, pin.FrameType.BODY):
        return model.frames[model.getFrameId(frame_name, pin.FrameType.BODY)]
    return model.frames[model.getFrameId(frame_name)]


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


def constraint_dim(cm: pin.RigidConstraintModel) -> int:
    """Rows the constraint contributes: 3 (CONTACT_3D) or 6 (CONTACT_6D)."""
    try:
        return _DIM[cm.type]
    except KeyError:
        raise ValueError(
            f"unsupported constraint type {cm.type} (CONTACT_3D or CONTACT_6D)"
        ) from None


# A rotation read from a file with 9 digits is R + E, |E_ij| ≤ 5e-10: ‖RᵀR − I‖ ≤ 2√3 · 5e-10
# (1.7e-9; 22 % of random rotations so rounded exceed 1e-9).
_ORTHONORMAL_TOL = 2e-9
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
    if error > _ORTHONORMAL_TOL:
        return f"has a rotation that is not orthonormal (‖RᵀR − I‖ = {error:.2e}): {shown}"
    if np.linalg.det(R) < 0:
        return f"has a rotation with determinant {np.linalg.det(R):.6g} (a reflection): {shown}"
    return ""


def check_placements(constraint_models: Sequence[pin.RigidConstraintModel]) -> None:
    """ValueError naming the first constraint whose ``joint1_placement`` is not a rigid
    transform (:func:`check_placement`).

    Placements are read on every call, so is this check: a placement seen before is found in
    a set by the bytes of its homogeneous matrix (about 0.5 µs), the full check runs once.
    """
    for k, cm in enumerate(constraint_models):
        key = cm.joint1_placement.homogeneous.tobytes()
        if key in _CHECKED_PLACEMENTS:
            continue
        problem = check_placement(cm.joint1_placement)
        if problem:
            label = f"constraint {k}" + (f" ({cm.name!r})" if cm.name else "")
            raise ValueError(f"{label}: joint1_placement {problem}")
        if len(_CHECKED_PLACEMENTS) >= 4096:
            _CHECKED_PLACEMENTS.clear()
        _CHECKED_PLACEMENTS.add(key)


def constraint_matrix(cm: pin.RigidConstraintModel) -> np.ndarray:
    """``K_i`` (m_i × 6): link-frame spatial motion → constraint-frame motion rows."""
    return cm.joint1_placement.actionInverse[: constraint_dim(cm)]


def as_constraint_list(
    constraint_models: Iterable[pin.RigidConstraintModel],
) -> Sequence[pin.RigidConstraintModel]:
    """A list from anything iterable (a list, a tuple, ``pin.StdVec_RigidConstraintModel``)."""
    if isinstance(constraint_models, pin.RigidConstraintModel):
        raise TypeError("constraint_models must be a sequence of RigidConstraintModel, not one")
    out = list(constraint_models)
    for k, cm in enumerate(out):
        if not isinstance(cm, pin.RigidConstraintModel):
            raise TypeError(
                f"constraint {k} is a {type(cm).__name__}, expected pinocchio.RigidConstraintModel"
            )
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
