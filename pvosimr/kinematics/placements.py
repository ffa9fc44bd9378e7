"""Constraint placements as inputs of a function: the layout of ``p`` and the actions it gives.

A constraint's placements enter G through its end-effectors' ``^{c}X_i`` only: ``K_i`` (their
first rows, :func:`pvosimr.kinematics.frames.model_constants`) and, for the EEs a combination reads
(:mod:`pvosimr.combination`), ``^{c}X_0 = ^{c}X_i ^{i}X_0``
(:func:`pvosimr.kinematics.frames.frame_transforms`); a one-body point anchor also reads its
world-fixed ``^{c2}X_0``.  Every one of them is the
``actionInverse`` of one placement, so a function may take the placements as numbers:

    p = [P_0, P_1, ...],  P = (R[:, 0], R[:, 1], R[:, 2], t)  (12 numbers per SE3),

in constraint order, each constraint's ``joint1_placement`` then, where it enters G, its
``joint2_placement`` (a second body, or a point anchor's world point).  From ``(R, t)``,

    ^{c}X_i = [[Rᵀ, −Rᵀ t×], [0, Rᵀ]],

on any backend (:func:`placement_actions`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pinocchio as pin

from ..backends import Backend, Matrix
from ..constraints import (
    ORTHONORMAL_TOLERANCE,
    ConstraintShape,
    LoweredConstraint,
    as_constraint_list,
    check_placement,
    constraint_label,
)
from ..lowering import JOINT_SPACE_MODELS
from ..topology import Topology, constraint_signature

__all__ = [
    "PLACEMENTS",
    "SE3_SIZE",
    "check_placement_vector",
    "placement_actions",
    "placement_keys",
    "placement_labels",
    "placement_size",
    "placement_vector",
    "placements_are_inputs",
]

#: Numbers per placement in ``p``: the rotation column-major, then the translation.
SE3_SIZE = 12

#: What a function's ``placements=`` may be: the constraint models' own numbers, or an input
#: ``p``.
PLACEMENTS = ("fixed", "input")


def placements_are_inputs(placements: str) -> bool:
    """Whether ``placements`` (one of :data:`PLACEMENTS`) makes ``p`` an input of the function;
    ``ValueError`` naming the option otherwise."""
    if placements not in PLACEMENTS:
        raise ValueError(f"placements must be one of {PLACEMENTS}, not {placements!r}")
    return placements == "input"


def _placed(shape: ConstraintShape) -> int:
    """How many of the constraint's placements enter G: 2 with a second body or a point
    anchor's world-fixed point, else 1."""
    return 2 if shape.joint2 or shape.kind == "point_anchor" else 1


#: A constraint's placements, in their order in ``p``.
_NAMES = ("joint1_placement", "joint2_placement")


def _shaped(model: pin.Model, constraint_models: Iterable) -> tuple[Sequence, tuple]:
    """The constraint list and its signature; NotImplementedError naming the first joint-space
    model: its rows have no placement a user gives (:mod:`pvosimr.lowering`), and it stands for
    several entries of the list."""
    cms = as_constraint_list(constraint_models, model)
    for cm in cms:
        if type(cm) is LoweredConstraint and cm.source.__class__ in JOINT_SPACE_MODELS:
            raise NotImplementedError(
                f"constraint {cm.owner} is a {type(cm.source).__name__}: placements as an "
                "input take rigid constraints, pin 4's anchors and row maps of them only"
            )
    return cms, constraint_signature(model, cms)


def placement_size(model: pin.Model, constraint_models: Iterable) -> int:
    """The length of ``p``: 12 numbers for every placement that enters G (NotImplementedError
    for a joint-space model)."""
    _, signature = _shaped(model, constraint_models)
    return SE3_SIZE * sum(_placed(s) for s in signature)


def placement_keys(topology: Topology) -> list[int]:
    """The ``Kinematics.world`` key of each placement of ``p``, in its order: the EE nodes
    of each constraint (``topology.ends``), then its anchor's key if it is an anchor."""
    keys: list[int] = []
    for k, ends in enumerate(topology.ends):
        keys += ends
        if k in topology.anchors:
            keys.append(topology.anchors[k])
    return keys


def _pair_or_one(entry, two: bool, label: str) -> tuple:
    """``entry`` as a tuple of ``two + 1`` placements, or ValueError naming the constraint."""
    is_pair = isinstance(entry, (tuple, list))
    if two and not (is_pair and len(entry) == 2):
        raise ValueError(
            f"{label} has two placements in G: expected a pair (joint1_placement, "
            f"joint2_placement), got {type(entry).__name__}"
            + (f" of length {len(entry)}" if is_pair else "")
        )
    if not two and is_pair:
        raise ValueError(
            f"{label} has one placement in G (joint1_placement): expected a pin.SE3, got a "
            f"{type(entry).__name__} of length {len(entry)}"
        )
    return tuple(entry) if two else (entry,)


def placement_vector(
    model: pin.Model, constraint_models: Iterable, placements: Sequence
) -> np.ndarray:
    """``p`` (float64, :func:`placement_size`) from one entry per constraint: a ``pin.SE3``
    (its ``joint1_placement``) or, for a constraint with two placements in G, a pair
    ``(joint1_placement, joint2_placement)``.

    ValueError naming the constraint for a wrong count, a missing or extra pair, an entry that
    is not a ``pin.SE3``, a non-finite entry or a rotation that is not one
    (:func:`pvosimr.constraints.check_placement`).
    """
    cms, signature = _shaped(model, constraint_models)
    if isinstance(placements, pin.SE3):
        raise ValueError("placements must be a sequence with one entry per constraint, not a SE3")
    placements = list(placements)
    if len(placements) != len(cms):
        raise ValueError(
            f"expected one placement (or pair) per constraint: got {len(placements)} for "
            f"{len(cms)} constraints"
        )
    out = []
    for k, (cm, shape, entry) in enumerate(zip(cms, signature, placements, strict=True)):
        label = constraint_label(k, cm)
        for name, P in zip(_NAMES, _pair_or_one(entry, _placed(shape) == 2, label), strict=False):
            if not isinstance(P, pin.SE3):
                raise ValueError(f"{label}: {name} must be a pin.SE3, got {type(P).__name__}")
            problem = check_placement(P)
            if problem:
                raise ValueError(f"{label}: {name} {problem}")
            out += [np.ravel(P.rotation, order="F"), P.translation]
    return np.concatenate(out) if out else np.zeros(0)


def placement_labels(model: pin.Model, constraint_models: Iterable) -> list[str]:
    """What each placement of ``p`` is, in its order: ``"constraint k ('name'):
    joint1_placement"`` (or ``joint2_placement``)."""
    cms, signature = _shaped(model, constraint_models)
    return [
        f"{constraint_label(k, cm)}: {name}"
        for k, (cm, shape) in enumerate(zip(cms, signature, strict=True))
        for name in _NAMES[: _placed(shape)]
    ]


def check_placement_vector(labels: Sequence[str], p: np.ndarray) -> None:
    """ValueError naming the row of ``p`` (float64, (..., 12·len(labels))), the constraint and
    the placement (``labels``, :func:`placement_labels`) of the first placement that is not a
    rigid transform, as :func:`pvosimr.constraints.check_placement` checks a ``pin.SE3``: finite,
    ``‖RᵀR − I‖ ≤`` :data:`~pvosimr.constraints.ORTHONORMAL_TOLERANCE`, ``det R ≥ 0``."""
    n = len(labels)
    blocks = p.reshape(-1, n, SE3_SIZE)
    R = blocks[..., :9].reshape(*blocks.shape[:2], 3, 3).swapaxes(-1, -2)  # columns stored
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(R.swapaxes(-1, -2) @ R - np.eye(3)).max(axis=(-1, -2))
        rigid = np.isfinite(blocks).all(-1) & (error <= ORTHONORMAL_TOLERANCE)
        rigid &= ~(np.linalg.det(np.where(rigid[..., None, None], R, np.eye(3))) < 0)
    if rigid.all():
        return
    from ..checks import row_name  # the checks import this layer's kinematics

    r, j = (int(i) for i in np.argwhere(~rigid)[0])
    problem = check_placement(pin.SE3(R[r, j].copy(), blocks[r, j, 9:].copy()))
    row = f"row {row_name(p.shape[:-1], r)} of p: " if p.ndim > 1 else ""
    raise ValueError(f"{row}{labels[j]} {problem or 'is not a rigid transform'}")


def placement_actions(B: Backend, topology: Topology, p: Matrix) -> dict[int, Matrix]:
    """``^{c}X_i = [[Rᵀ, −Rᵀ t×], [0, Rᵀ]]`` of each placement of ``p`` (a column of the
    backend), by its ``Kinematics.world`` key (:func:`placement_keys`)."""
    if isinstance(p, np.ndarray):
        p = np.reshape(p, (-1, 1))
    actions = {}
    for j, key in enumerate(placement_keys(topology)):
        a = SE3_SIZE * j
        Rt = B.hstack([p[a : a + 3, :], p[a + 3 : a + 6, :], p[a + 6 : a + 9, :]]).T
        t = p[a + 9 : a + 12, :]
        actions[key] = B.vstack([B.hstack([Rt, -(Rt @ B.hat(t))]), B.hstack([B.zeros(3, 3), Rt])])
    return actions
