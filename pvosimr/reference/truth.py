"""Independent reference Delassus matrices computed with Pinocchio only (no pvosimr algorithm).

``dense_delassus`` is the naive O(n³) ground truth ``G = J M⁻¹ Jᵀ``;
``pinocchio_delassus`` wraps Pinocchio's own ``computeDelassusMatrix`` (EFPA-style).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from ..constraints import RowMap, constraint_kind, pinocchio_kind_problem
from ..mimic import has_mimic_joints

__all__ = [
    "TOLERANCE",
    "cholesky_delassus",
    "constraint_jacobian",
    "dense_delassus",
    "mass_matrix",
    "pinocchio_constraint_jacobian",
    "pinocchio_delassus",
    "pinocchio_dense_delassus",
    "rel_err",
]


_FRAMES = (pin.LOCAL, pin.LOCAL_WORLD_ALIGNED)
#: the models whose rows the truth builds from frame Jacobians (the others: Pinocchio's own)
_FRAME_KINDS = frozenset(
    [pin.RigidConstraintModel]
    + [
        getattr(pin, n)
        for n in ("FrameAnchorConstraintModel", "PointAnchorConstraintModel",
                  "PointContactConstraintModel")
        if hasattr(pin, n)
    ]
)  # fmt: skip


def _check_constraint(cm: pin.RigidConstraintModel) -> None:
    if type(cm) not in _FRAME_KINDS or constraint_kind(cm) != "rigid":
        return
    if cm.reference_frame not in _FRAMES:
        raise NotImplementedError(
            f"only LOCAL and LOCAL_WORLD_ALIGNED constraints are supported, got "
            f"{cm.reference_frame}"
        )
    if cm.type not in (pin.ContactType.CONTACT_3D, pin.ContactType.CONTACT_6D):
        raise NotImplementedError(f"unsupported contact type {cm.type}")


def _aligned_jacobian(
    model: pin.Model, data: pin.Data, joint: int, placement: pin.SE3
) -> np.ndarray:
    """The LOCAL_WORLD_ALIGNED frame Jacobian (6 × nv) of the frame ``placement`` on ``joint``:
    its origin's velocity and its angular velocity, in world axes; zero on the world."""
    if joint == 0:
        return np.zeros((6, model.nv))
    jac = pin.getFrameJacobian(model, data, joint, placement, pin.LOCAL_WORLD_ALIGNED)
    return np.reshape(jac, (6, model.nv))  # eigenpy gives 1-D for a single dof


def _constraint_rows(model: pin.Model, data: pin.Data, cm: pin.RigidConstraintModel) -> np.ndarray:
    """Rows of ``cm`` from Pinocchio's frame Jacobians of ``c1`` and ``c2``, in world axes first:
    ``J_c1 − [[I, −(p_c1 − p_c2)×], [0, I]] J_c2`` (the motion of ``c1`` relative to ``c2``,
    ``c2``'s point velocity carried to ``c1``'s origin; 3D: the point velocities' difference),
    then turned to ``c1``'s axes for LOCAL.  On one body, LOCAL: ``^{c1}X_{j1}`` times the
    LOCAL joint Jacobian."""
    size = 6 if cm.type == pin.ContactType.CONTACT_6D else 3
    if cm.joint2_id == 0 and cm.reference_frame == pin.LOCAL:
        jj = np.reshape(pin.getJointJacobian(model, data, cm.joint1_id, pin.LOCAL), (6, model.nv))
        return (cm.joint1_placement.actionInverse @ jj)[:size]
    oMc1 = data.oMi[cm.joint1_id] * cm.joint1_placement
    J = _aligned_jacobian(model, data, cm.joint1_id, cm.joint1_placement)
    if cm.joint2_id:
        J2 = _aligned_jacobian(model, data, cm.joint2_id, cm.joint2_placement)
        oMc2 = data.oMi[cm.joint2_id] * cm.joint2_placement
        if cm.type == pin.ContactType.CONTACT_6D:
            J2 = J2.copy()
            J2[:3] -= pin.skew(oMc1.translation - oMc2.translation) @ J2[3:]
        J = J - J2
    if cm.reference_frame == pin.LOCAL:
        R = oMc1.rotation.T
        J = np.vstack([R @ J[:3], R @ J[3:]])
    return J[:size]


def _point_anchor_rows(model: pin.Model, data: pin.Data, cm) -> np.ndarray:
    """Rows of pin 4's point anchor (and point contact): ``−R_c1ᵀ (v_1(p_c2) − v_2(p_c2))``,
    body 1's velocity at ``c2``'s point, ``J_c1,lin − (p_c2 − p_c1)× J_c1,ang`` in world axes
    (``c2`` is fixed in the world on joint 0, whose ``oMi`` is the identity)."""
    oMc1 = data.oMi[cm.joint1_id] * cm.joint1_placement
    oMc2 = data.oMi[cm.joint2_id] * cm.joint2_placement
    J1 = _aligned_jacobian(model, data, cm.joint1_id, cm.joint1_placement)
    J2 = _aligned_jacobian(model, data, cm.joint2_id, cm.joint2_placement)
    v1_at_c2 = J1[:3] - pin.skew(oMc2.translation - oMc1.translation) @ J1[3:]
    return -oMc1.rotation.T @ (v1_at_c2 - J2[:3])


def _pinocchio_rows(model: pin.Model, data: pin.Data, cm) -> np.ndarray:
    """Rows of ``cm`` from ``pin.getConstraintJacobian`` after ``cm.calc`` (``data`` holds the
    joint Jacobians); a row map's are ``A`` times the held model's (:func:`_rows`: from frame
    Jacobians for a rigid constraint)."""
    if isinstance(cm, RowMap):
        inner = _rows(model, data, cm.model)
        A = np.eye(len(inner))[list(cm.selection)] if cm.matrix is None else cm.matrix
        return A @ inner
    cd = cm.createData()
    cm.calc(model, data, cd)
    return np.reshape(np.asarray(pin.getConstraintJacobian(model, data, cm, cd)), (-1, model.nv))


def _rows(model: pin.Model, data: pin.Data, cm) -> np.ndarray:
    """Rows of any accepted constraint model; a frame anchor's are ``−`` a 6D LOCAL rigid
    constraint's on the same frames.  The kinds pvosimr lowers (generic wrappers, row maps,
    joint-space models, :mod:`pvosimr.lowering`) take Pinocchio's own rows."""
    if type(cm) not in _FRAME_KINDS:
        return _pinocchio_rows(model, data, cm)
    kind = constraint_kind(cm)
    if kind == "point_anchor":
        return _point_anchor_rows(model, data, cm)
    if kind == "frame_anchor":
        rigid = pin.RigidConstraintModel(
            pin.ContactType.CONTACT_6D, model, cm.joint1_id, cm.joint1_placement,
            cm.joint2_id, cm.joint2_placement, pin.LOCAL,
        )  # fmt: skip
        return -_constraint_rows(model, data, rigid)
    return _constraint_rows(model, data, cm)


def mass_matrix(model: pin.Model, q: np.ndarray, data: pin.Data | None = None) -> np.ndarray:
    """Joint-space mass matrix from ``pin.crba`` (armature included), fully symmetric.

    With mimic joints, ``M = Σ_i J_iᵀ I_i J_i + armature`` from Pinocchio's joint Jacobians
    instead: pin 4.1's ``crba`` is silently wrong on some mimic trees (0.13 off in M on a tree
    whose mimic joint carries links of its own, on another branch than its primary) while its
    Jacobians match finite differences of its kinematics — except for the mimic of a helical
    joint, whose Jacobian misses the pitch: there this truth is wrong too.
    """
    if data is None:
        data = model.createData()
    q = np.asarray(q, dtype=float)
    if has_mimic_joints(model):
        pin.computeJointJacobians(model, data, q)
        M = np.diag(np.asarray(model.armature, dtype=float))
        for i in range(1, model.njoints):
            J = np.reshape(pin.getJointJacobian(model, data, i, pin.LOCAL), (6, model.nv))
            M += J.T @ model.inertias[i].matrix() @ J
        return 0.5 * (M + M.T)
    crba = pin.crba(model, data, q)
    upper = np.triu(np.reshape(np.array(crba, dtype=float), (model.nv, model.nv)))
    return upper + np.triu(upper, 1).T


def constraint_jacobian(
    model: pin.Model,
    q: np.ndarray,
    constraint_models: Sequence[pin.RigidConstraintModel],
    data: pin.Data | None = None,
) -> np.ndarray:
    """Stacked constraint Jacobian J (m × nv), blocks in list order: the rows of Pinocchio's
    ``getConstraintJacobian`` (``tests/test_constraint_kinds.py`` checks them against it).

    A LOCAL constraint on one joint has the LOCAL frame Jacobian of its frame ``c1``: all 6
    rows (linear, angular) for CONTACT_6D, the first 3 (linear) for CONTACT_3D;
    LOCAL_WORLD_ALIGNED the same in world axes.  A constraint between two joints has the
    motion of ``c1`` relative to ``c2`` (see :func:`_constraint_rows`).  Pin 4's frame
    anchors, point anchors and point contacts: see :func:`_rows`.
    """
    if data is None:
        data = model.createData()
    pin.computeJointJacobians(model, data, np.asarray(q, dtype=float))
    blocks: list[np.ndarray] = []
    for cm in constraint_models:
        _check_constraint(cm)
        blocks.append(_rows(model, data, cm))
    return np.vstack(blocks) if blocks else np.zeros((0, model.nv))


def dense_delassus(
    model: pin.Model,
    q: np.ndarray,
    constraint_models: Sequence[pin.RigidConstraintModel],
) -> np.ndarray:
    """Dense ground truth ``G = J M⁻¹ Jᵀ`` through a Cholesky factorization ``M = L Lᵀ``.

    ``G = Yᵀ Y`` with ``Y = L⁻¹ Jᵀ``, hence exactly symmetric.
    """
    data = model.createData()
    M = mass_matrix(model, q, data)
    return cholesky_delassus(M, constraint_jacobian(model, q, constraint_models, data))


def cholesky_delassus(M: np.ndarray, J: np.ndarray) -> np.ndarray:
    """``J M⁻¹ Jᵀ`` as ``Yᵀ Y`` with ``Y = L⁻¹ Jᵀ``, ``M = L Lᵀ``: exactly symmetric."""
    if J.shape[0] == 0:
        return np.zeros((0, 0))
    y = np.linalg.solve(np.linalg.cholesky(M), J.T)
    g = y.T @ y
    return 0.5 * (g + g.T)


def pinocchio_constraint_jacobian(model: pin.Model, q: np.ndarray, constraint_models) -> np.ndarray:
    """The constraint rows stacked from Pinocchio's own ``pin.getConstraintJacobian``: its
    definition of every constraint kind, independent of :func:`constraint_jacobian` (a row
    map :func:`pvosimr.constraints.rows` gives ``A`` times its model's rows)."""
    data = model.createData()
    pin.computeJointJacobians(model, data, np.asarray(q, dtype=float))
    blocks = [_pinocchio_rows(model, data, cm) for cm in constraint_models]
    return np.vstack(blocks) if blocks else np.zeros((0, model.nv))


def pinocchio_dense_delassus(model: pin.Model, q: np.ndarray, constraint_models) -> np.ndarray:
    """``J M⁻¹ Jᵀ`` with every row of J from :func:`pinocchio_constraint_jacobian` (Pinocchio's
    own Jacobian of each model), through a Cholesky factorization of M as
    :func:`dense_delassus`."""
    J = pinocchio_constraint_jacobian(model, q, constraint_models)
    return cholesky_delassus(mass_matrix(model, q), J)


def pinocchio_delassus(
    model: pin.Model,
    q: np.ndarray,
    constraint_models: Sequence[pin.RigidConstraintModel],
) -> np.ndarray:
    """Pinocchio's own Delassus matrix, ``pin.computeDelassusMatrix(..., mu=0)``.

    In pin 4.1.0 plain Python lists of ``RigidConstraintModel`` / ``RigidConstraintData``
    are accepted (as are ``StdVec_*``); no prior ``initConstraintDynamics`` is needed (the
    routine runs its own kinematics pass from ``q``); the returned array is a fresh,
    fully filled, symmetric copy.
    """
    for k, cm in enumerate(constraint_models):
        _check_constraint(cm)
        problem = pinocchio_kind_problem(cm)
        if problem:
            raise NotImplementedError(f"constraint {k} {problem}")
    cms = list(constraint_models)
    if not cms:
        return np.zeros((0, 0))
    data = model.createData()
    cds = [cm.createData() for cm in cms]
    g = pin.computeDelassusMatrix(model, data, np.asarray(q, dtype=float), cms, cds, 0.0)
    return np.array(g, dtype=float, copy=True)


TOLERANCE = 1e-9
"""The agreement every pvosimr path keeps with the dense truth: ``rel_err(G, truth) ≤ 1e-9``
(tests and ``pvosimr validate``)."""


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    """``max|A − B| / max(1, max|B|)`` (0 for empty matrices)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"shape mismatch {a.shape} vs {b.shape}")
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))
