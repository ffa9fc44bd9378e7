"""Constraint models that are not one of the paper's end-effectors, lowered to ones that are.

Three inputs are read here, once per call, and only when a list holds one of them (a list of
``RigidConstraintModel`` and pin 4's anchors is returned as is by
:func:`pvosimr.constraints.as_constraint_list`):

- the generic ``pin.ConstraintModel`` wrapper (what ``pin.StdVec_ConstraintModel`` holds, and
  pin 4.1's ADMM and PGS solvers take) is unwrapped with ``extract()`` to the typed model;
- a row map :func:`pvosimr.constraints.rows` ``(cm, A)`` keeps ``cm``'s end-effectors and
  premultiplies its combination blocks by the constant ``A`` (:mod:`pvosimr.combination`):
  ``G_A = A G Aᵀ``, the rows ``A J``.  In LOCAL axes body 1's block is the identity, so ``A``
  is folded into body 1's ``K`` (``K_1 = A K``): its EE sweeps ``r`` rows, not 6;
- a joint-space model (``JointLimitConstraintModel``, ``JointFrictionConstraintModel``)
  becomes one constraint per row of its ``pin.getConstraintJacobian`` (read from Pinocchio
  after ``calc``, in Pinocchio's row order; each row is ``c`` times one velocity ``v_k`` of a
  joint ``i``).

**Joint-space rows as constraints across the joint.**  In local frames the joint velocity is
the motion of link ``i`` relative to its parent, ``S_i v_i = v_i − X_up(i) v_π(i)``
(Featherstone's ``v_i = X_up(i) v_π(i) + S_i q̇_i``, the paper's eq. 7 motion recursion), so
with ``S_i`` constant and ``S_i⁺`` its left inverse the row is

    c v_k = a v_i − a X_J(q_i) ^{c2}X_π(i) v_π(i),     a = c e_kᵀ S_i⁺ (1 × 6),

``c2`` the joint's frame on the parent (``model.jointPlacements[i]``).  That is a two-body
6D LOCAL constraint between ``c1`` = link ``i``'s frame and ``c2``, under the row map ``a``:
a constraint the paper's Algorithm 3 already takes as two end-effectors (one on link ``i``,
one on ``π(i)``), so PV-OSIMr stays O(n + m²).  Three cases, from cheap to general:

- a root joint (``π(i)`` is the world): one EE on link ``i`` with ``K = a`` (1 row, plain);
- a one-DoF joint: its transform is the screw of its own axis, so ``a X_J(q) = a`` and the
  parent's EE is ``K = −a ^{c2}X_π`` (1 row): two one-row EEs whose rows add (kind
  ``"joint"``), no world placement read;
- a multi-DoF joint with a constant ``S`` (spherical, planar, translation, free-flyer not at
  the root): body 1 one row (``a`` folded), body 2 six rows with the block
  ``−a ^{c1}X_{c2}`` from the world placements (a rigid two-body constraint under a map).

A joint whose ``S`` depends on ``q`` (spherical ZYX, universal, ellipsoid, composite) or a
mimic joint is refused by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from ._lru import LRU

__all__ = [
    "CONSTANT_SUBSPACE_JOINTS",
    "CONTACT_DIMS",
    "JOINT_SPACE_MODELS",
    "PIN4_MODELS",
    "LoweredConstraint",
    "RowMap",
    "constraint_label",
    "lower",
    "rows",
]

#: Pin 4's constraint models pvosimr takes → (kind, rows); absent from pin 3.
PIN4_MODELS = {
    getattr(pin, name): spec
    for name, spec in (
        ("FrameAnchorConstraintModel", ("frame_anchor", 6)),
        ("PointAnchorConstraintModel", ("point_anchor", 3)),
        ("PointContactConstraintModel", ("point_anchor", 3)),
    )
    if hasattr(pin, name)
}
#: Joint types whose motion subspace ``S`` (in the joint's frame, Pinocchio's ``data.joints[i].S``)
#: does not depend on ``q``; the others' (spherical ZYX, universal, ellipsoid, composite,
#: mimic) are read at every configuration, and take no joint-space rows.
CONSTANT_SUBSPACE_JOINTS = frozenset(
    "JointModel" + kind
    for kind in (
        "FreeFlyer", "Spherical", "Planar", "Translation", "RX", "RY", "RZ",
        "RevoluteUnaligned", "RUBX", "RUBY", "RUBZ", "RevoluteUnboundedUnaligned", "PX", "PY",
        "PZ", "PrismaticUnaligned", "HX", "HY", "HZ", "HelicalUnaligned",
    )
)  # fmt: skip
#: Rows of a ``RigidConstraintModel`` by its contact type.
CONTACT_DIMS = {pin.ContactType.CONTACT_3D: 3, pin.ContactType.CONTACT_6D: 6}


def _kind_and_dim(cm) -> tuple[str, int]:
    """The kind and rows of a rigid constraint or pin 4's anchor (``constraint_kind``,
    ``constraint_dim`` of :mod:`pvosimr.constraints`)."""
    spec = PIN4_MODELS.get(type(cm))
    return spec if spec is not None else ("rigid", CONTACT_DIMS.get(cm.type, 0))


#: pin 4's joint-space constraint models (absent from pin 3).
JOINT_SPACE_MODELS = tuple(
    getattr(pin, name)
    for name in ("JointLimitConstraintModel", "JointFrictionConstraintModel")
    if hasattr(pin, name)
)
_GENERIC = getattr(pin, "ConstraintModel", None)
_LOCAL, _ALIGNED = pin.ReferenceFrame.LOCAL, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
_IDENTITY = pin.SE3.Identity()
_ROWS: LRU = LRU(64)  # joint-space rows per (model, model of constraint): one Data each


@dataclass(slots=True, eq=False)
class RowMap:
    """A linear map ``A`` (``r × d``) of the ``d`` rows of a constraint model: its rows in G
    are ``A`` times the model's (those of ``pin.getConstraintJacobian``), ``G_A = A G Aᵀ``.

    Made by :func:`rows`; ``model`` is the Pinocchio constraint model it holds (any model
    pvosimr takes but a joint-space one, or another :class:`RowMap`), ``selection`` the row
    indices or ``matrix`` the map, as given: both are checked against the model's rows when
    the constraint list is read, and a bad one named by its index in the list.
    """

    model: Any
    selection: tuple[int, ...] | None = None
    matrix: np.ndarray | None = None

    @property
    def name(self) -> str:
        """The held model's name (errors name the constraint by it)."""
        return getattr(self.model, "name", "")

    def __repr__(self) -> str:
        what = (
            f"selection={list(self.selection)}"
            if self.matrix is None
            else (f"matrix of shape {self.matrix.shape}")
        )
        return f"pvosimr.constraints.rows({type(self.model).__name__}, {what})"


def rows(cm, selection_or_matrix) -> RowMap:
    """The rows of ``cm`` picked or mapped: a sequence of row indices (``[0, 1, 2, 3, 4]``: a
    revolute loop closure about z from a 6D two-body constraint) or a 2-D array ``A`` with one
    column per row of ``cm`` (``[[0, 0, 1]]``: a distance along the contact's z axis from a
    3D one).  The result goes in a constraint list like any model; its rows in G are ``A``
    times ``cm``'s (a selection is the identity's rows), in ``cm``'s LOCAL or world-aligned
    axes, on one body or two.  A row index out of range or a map of the wrong width raises
    ``ValueError`` naming the constraint when the list is read."""
    a = np.asarray(selection_or_matrix)
    if a.ndim == 1 and a.size and np.issubdtype(a.dtype, np.integer):
        return RowMap(cm, selection=tuple(int(i) for i in a))
    if a.ndim == 2 and a.size and np.issubdtype(a.dtype, np.number):
        matrix = np.array(a, dtype=float)
        matrix.setflags(write=False)
        return RowMap(cm, matrix=matrix)
    raise ValueError(
        "rows(cm, ...) takes a non-empty sequence of row indices or a 2-D numeric matrix with "
        f"one column per row of cm, not {selection_or_matrix!r}"
    )


class LoweredConstraint:
    """A constraint pvosimr runs as a rigid-like constraint with a constant row map: a
    :class:`RowMap` or one row of a joint-space model (this module), read like a
    ``RigidConstraintModel`` by every path (joints, placements, name).  ``owner`` is its
    index in the list the user gave, ``source`` the Pinocchio model it comes from."""

    __slots__ = (
        "base", "dim", "joint1_id", "joint1_placement", "joint2_id", "joint2_placement",
        "kind", "name", "owner", "rows", "source", "world_aligned",
    )  # fmt: skip

    def __init__(self, **fields) -> None:
        for key, value in fields.items():
            setattr(self, key, value)

    def key(self) -> tuple:
        """What its :class:`~pvosimr.constraints.ConstraintShape` is made of, in its order
        (the map is part of the structure)."""
        return (
            self.joint1_id, self.dim, self.joint2_id, self.world_aligned, self.kind,
            self.base, self.rows,
        )  # fmt: skip


def constraint_label(k: int, cm) -> str:
    """``constraint k`` and its name, if it has one: how every error names a constraint."""
    name = getattr(cm, "name", "")
    return f"constraint {k}" + (f" ({name!r})" if name else "")


def _unwrap(cm):
    """The typed model behind a generic ``pin.ConstraintModel`` wrapper (else ``cm``)."""
    return cm.extract() if _GENERIC is not None and type(cm) is _GENERIC else cm


def _refuse(k: int, cm) -> TypeError:
    return TypeError(
        f"{constraint_label(k, cm)} is a {type(cm).__name__}, which pvosimr cannot take (it takes "
        "pinocchio.RigidConstraintModel, FrameAnchorConstraintModel, PointAnchorConstraintModel, "
        "PointContactConstraintModel, JointLimitConstraintModel, JointFrictionConstraintModel, "
        "the generic pinocchio.ConstraintModel holding one, and pvosimr.constraints.rows(...))"
    )


def lower(cms: Sequence, model: pin.Model | None) -> list:
    """The list with every wrapper unwrapped, every row map and joint-space model lowered to
    :class:`~pvosimr.constraints.LoweredConstraint` (see the module docstring); TypeError
    naming the index and type of a model pvosimr cannot take, ValueError naming the
    constraint for a row map that does not fit its rows."""
    out: list = []
    for k, cm in enumerate(cms):
        typed = _unwrap(cm)
        if isinstance(typed, RowMap):
            out.append(_mapped(k, typed))
        elif isinstance(typed, JOINT_SPACE_MODELS):
            if model is None:
                raise ValueError(f"{constraint_label(k, typed)}: joint-space rows need the model")
            out += _joint_rows(k, typed, model)
        elif type(typed) is LoweredConstraint or _takes(typed):
            out.append(typed)
        else:
            raise _refuse(k, typed)
    return out


def _takes(cm) -> bool:
    return isinstance(cm, pin.RigidConstraintModel) or type(cm) in PIN4_MODELS


def _matrix(k: int, rm: RowMap, width: int) -> np.ndarray:
    """The map of ``rm`` as a matrix with ``width`` columns, or ValueError naming it."""
    label = constraint_label(k, rm)
    if rm.matrix is None:
        bad = [i for i in rm.selection if not 0 <= i < width]
        if bad:
            raise ValueError(
                f"{label}: row selection {list(rm.selection)} is out of range for its "
                f"{width} rows (bad: {bad})"
            )
        return np.eye(width)[list(rm.selection)]
    if rm.matrix.shape[1] != width or not np.isfinite(rm.matrix).all():
        raise ValueError(
            f"{label}: its row map has shape {rm.matrix.shape}; it must be finite with "
            f"{width} columns, one per row of the constraint"
        )
    return np.asarray(rm.matrix)


def _mapped(k: int, rm: RowMap) -> LoweredConstraint:
    """A row map lowered: the held model's EEs, the composed map (maps of maps compose)."""
    inner = _unwrap(rm.model)
    if isinstance(inner, RowMap):
        low = _mapped(k, inner)
        A = _matrix(k, rm, low.dim) @ np.array(low.rows)
        return _with_rows(low, A, rm)
    if isinstance(inner, JOINT_SPACE_MODELS):
        raise TypeError(
            f"{constraint_label(k, rm)}: a row map of a {type(inner).__name__} is not supported "
            "(map the rows of a rigid constraint or an anchor)"
        )
    if not _takes(inner):
        raise _refuse(k, inner)
    kind, dim = _kind_and_dim(inner)
    frame = inner.reference_frame if kind == "rigid" else _LOCAL
    if frame not in (_LOCAL, _ALIGNED):  # as the constraint's own shape refuses it
        raise ValueError(
            f"{constraint_label(k, rm)} uses reference frame {frame}; pin.LOCAL or "
            "pin.LOCAL_WORLD_ALIGNED are supported"
        )
    low = LoweredConstraint(
        joint1_id=inner.joint1_id, joint2_id=inner.joint2_id,
        joint1_placement=inner.joint1_placement, joint2_placement=inner.joint2_placement,
        name=inner.name, kind=kind, dim=dim, base=dim, rows=(), world_aligned=frame == _ALIGNED,
        owner=k, source=inner,
    )  # fmt: skip
    return _with_rows(low, _matrix(k, rm, dim), rm)


def _with_rows(low: LoweredConstraint, A: np.ndarray, rm: RowMap) -> LoweredConstraint:
    low.rows = tuple(tuple(float(x) for x in row) for row in A)
    low.dim = A.shape[0]
    low.name = rm.name or low.name
    return low


def _joint_rows(k: int, cm, model: pin.Model) -> list[LoweredConstraint]:
    """One lowered constraint per row of the joint-space model ``cm`` (module docstring)."""
    key = (id(model), model.nv, type(cm).__name__, *_selection(cm))
    rows = _ROWS.get_or_make(
        key, lambda: _read_rows(k, cm, model), fresh=lambda entry: entry[0] is model
    )[1]
    return [_joint_row(k, cm, model, *row) for row in rows]


def _selection(cm) -> tuple:
    """What a joint-space model's rows depend on: its joints, active rows and size."""
    joints = cm.getSelectedJoints() if hasattr(cm, "getSelectedJoints") else cm.getActiveJoints()
    active = (
        cm.active_idx_in_activable() if hasattr(cm, "active_idx_in_activable")
        else cm.getActiveDofs()
    )  # fmt: skip
    return tuple(joints), tuple(active), cm.residualSize()


def _read_rows(k: int, cm, model: pin.Model) -> tuple:
    """``(model, [(joint, dof in joint, c, a)])``: each row of ``pin.getConstraintJacobian`` at
    the neutral configuration as ``c`` times one velocity, ``a = c e_kᵀ S⁺``."""
    data = model.createData()
    q = pin.neutral(model)
    pin.computeJointJacobians(model, data, q)
    cd = cm.createData()
    cm.calc(model, data, cd)
    J = np.reshape(np.asarray(pin.getConstraintJacobian(model, data, cm, cd)), (-1, model.nv))
    joint_of = [i for i in range(1, model.njoints) for _ in range(model.joints[i].nv)]
    out = []
    for r, row in enumerate(J):
        (cols,) = np.nonzero(row)
        if len(cols) != 1:
            raise NotImplementedError(
                f"{constraint_label(k, cm)}: its row {r} touches {len(cols)} velocities; "
                "pvosimr takes joint-space rows on one velocity each"
            )
        v = int(cols[0])
        i = joint_of[v]
        joint = model.joints[i]
        if joint.shortname() not in CONSTANT_SUBSPACE_JOINTS:
            raise NotImplementedError(
                f"{constraint_label(k, cm)}: its row {r} is on joint {i} ({model.names[i]!r}, "
                f"{joint.shortname()}), whose motion subspace depends on q; pvosimr takes "
                "joint-space rows on joints with a constant one"
            )
        S = np.reshape(np.asarray(data.joints[i].S), (6, -1))
        a = row[v] * np.linalg.pinv(S)[v - joint.idx_v]
        out.append((i, a))
    return model, out


def _joint_row(k: int, cm, model: pin.Model, i: int, a: np.ndarray) -> LoweredConstraint:
    """Row ``a`` (1 × 6) on joint ``i``: on the root, one-DoF and multi-DoF joints as the
    module docstring says."""
    parent = model.parents[i]
    one_dof = model.joints[i].nv == 1
    return LoweredConstraint(
        joint1_id=i, joint2_id=parent, joint1_placement=_IDENTITY,
        joint2_placement=model.jointPlacements[i] if parent else _IDENTITY,
        name=cm.name, kind="joint" if parent and one_dof else "rigid", dim=1, base=6,
        rows=(tuple(float(x) for x in a),), world_aligned=False, owner=k, source=cm,
    )  # fmt: skip
