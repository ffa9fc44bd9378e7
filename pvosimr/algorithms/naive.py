"""The naive O(n³ + m²n) Delassus matrix ``J M⁻¹ Jᵀ`` through a dense Cholesky factor of M."""

from __future__ import annotations

from ..backend import Backend, Matrix
from ..kinematics import Kinematics
from ..topology import Topology
from .joint_space import constraint_jacobian, mass_matrix

__all__ = ["naive_sweeps"]


def naive_sweeps(B: Backend, topo: Topology, kin: Kinematics) -> Matrix:
    """``G = Zᵀ Z`` with ``Z = C⁻¹ Jᵀ`` and ``M = C Cᵀ`` (Cholesky)."""
    C = B.cholesky(mass_matrix(B, topo, kin))
    Z = B.solve_lower(C, constraint_jacobian(B, topo, kin).T)
    return B.symmetric_from_upper(Z.T @ Z)
