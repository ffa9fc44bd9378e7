"""The naive O(n³ + m²n) Delassus matrix ``J M⁻¹ Jᵀ`` through a dense Cholesky factor of M.

=========================================================  ====================================
Paper                                                      Code (:func:`naive_sweeps`)
=========================================================  ====================================
``M``, ``J`` (Sec. I-A, eq. 1)                             ``mass_matrix``, ``constraint_jacobian``
``Λ⁻¹ := J M⁻¹ Jᵀ`` (Sec. I-A, after eq. 2)               ``Zᵀ Z``, ``Z = C⁻¹ Jᵀ``, ``M = C Cᵀ``
=========================================================  ====================================
"""

from __future__ import annotations

from ..backends import Backend, Matrix
from ..kinematics.frames import Kinematics
from ..topology import Topology
from .joint_space import constraint_jacobian, mass_matrix

__all__ = ["naive_sweeps"]


def naive_sweeps(B: Backend, topo: Topology, kin: Kinematics) -> Matrix:
    """``G = Zᵀ Z`` with ``Z = C⁻¹ Jᵀ`` and ``M = C Cᵀ`` (Cholesky)."""
    C = B.cholesky(mass_matrix(B, topo, kin))
    Z = B.solve_lower(C, constraint_jacobian(B, topo, kin).T)
    return B.symmetric_from_upper(Z.T @ Z)
