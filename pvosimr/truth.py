"""Independent reference Delassus matrices computed with Pinocchio only (no pvosimr algorithm).

``dense_delassus`` is the naive O(n³) ground truth ``G = J M⁻¹ Jᵀ``;
``pinocchio_delassus`` wraps Pinocchio's own ``computeDelassusMatrix`` (EFPA-style).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from .mimic import has_mimic_joints

__all__ = [
    "TOLERANCE",
    "constraint_jacobian",
    "dense_delassus",
    "mass_matrix",
    "pinocchio_delassus",
    "rel_err",
]


def _check_constraint(cm: pin.RigidConstraintModel) -> None:
    if cm.reference_frame != pin.LOCAL:
        raise NotImplementedError(f"only LOCAL constraints are supported, got {cm.reference_frame}")
    if cm.joint2_id != 0:
        raise NotImplementedError("only constraints between a joint and the world are supported")
    if cm.type not in (pin.ContactType.CONTACT_3D, pin.ContactType.CONTACT_6D):
        raise NotImplementedError(f"unsupported contact type {cm.type}")


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
    """Stacked constraint Jacobian J (m × nv), blocks in list order.

    A LOCAL constraint on joint j with placement X has the rows of ``X⁻¹`` (action) applied
    to the LOCAL joint Jacobian of j: all 6 (linear, angular) for CONTACT_6D, the first 3
    (linear) for CONTACT_3D.
    """
    if data is None:
        data = model.createData()
    pin.computeJointJacobians(model, data, np.asarray(q, dtype=float))
    blocks: list[np.ndarray] = []
    for cm in constraint_models:
        _check_constraint(cm)
        # eigenpy returns a 1-D array for a 6 x 1 Jacobian: reshape explicitly.
        jj = np.reshape(pin.getJointJacobian(model, data, cm.joint1_id, pin.LOCAL), (6, model.nv))
        rows = cm.joint1_placement.actionInverse @ jj
        size = 6 if cm.type == pin.ContactType.CONTACT_6D else 3
        blocks.append(rows[:size])
    if not blocks:
        return np.zeros((0, model.nv))
    return np.vstack(blocks)


def dense_delassus(
    model: pin.Model,
    q: np.ndarray,
    constraint_models: Sequence[pin.RigidConstraintModel],
) -> np.ndarray:
    """Dense ground truth ``G = J M⁻¹ Jᵀ`` through a Cholesky factorization ``M = L Lᵀ``.

    ``G = Yᵀ Y`` with ``Y = L⁻¹ Jᵀ``, hence exactly symmetric.
    """
    data = model.createData()
    m = mass_matrix(model, q, data)
    jac = constraint_jacobian(model, q, constraint_models, data)
    if jac.shape[0] == 0:
        return np.zeros((0, 0))
    chol = np.linalg.cholesky(m)
    y = np.linalg.solve(chol, jac.T)
    g = y.T @ y
    return 0.5 * (g + g.T)


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
    for cm in constraint_models:
        _check_constraint(cm)
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
