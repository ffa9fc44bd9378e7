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
    "constraint_dim",
    "constraint_matrix",
    "find_frame",
    "point",
    "weld",
]

_DIM = {pin.ContactType.CONTACT_3D: 3, pin.ContactType.CONTACT_6D: 6}


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
