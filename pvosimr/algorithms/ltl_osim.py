"""LTL-OSIM, the O(nd² + m²d + md²) baseline (Featherstone 2010; paper Sec. II-A, eqs. 4–6).

``M = Lᵀ L`` by Featherstone's LTL factorization, which keeps the branch-induced sparsity of
``M`` in ``L`` when joints are numbered root to leaves (eq. 4); ``Y = J L⁻¹`` keeps ``J``'s
sparsity (eq. 5); ``Λ⁻¹ = Y Yᵀ`` (eq. 6).  Only entries on ancestor pairs of the dof tree are
ever touched.
"""

from __future__ import annotations

from ..backend import Backend, Matrix
from ..kinematics import Kinematics
from ..topology import Topology
from .joint_space import constraint_jacobian, dof_parents, mass_matrix

__all__ = ["ltl_factor", "ltl_osim_sweeps"]


def _ancestors(lam: list[int], k: int):
    i = lam[k]
    while i != -1:
        yield i
        i = lam[i]


def ltl_factor(B: Backend, M: Matrix, lam: list[int]) -> Matrix:
    """Lower-triangular ``L`` with ``M = Lᵀ L`` (Featherstone RBDA Table 6.3), in place on ``M``."""
    for k in reversed(range(len(lam))):
        M[k, k] = B.sqrt(M[k, k])
        for i in _ancestors(lam, k):
            M[k, i] = M[k, i] / M[k, k]
        for i in _ancestors(lam, k):
            M[i, i] = M[i, i] - M[k, i] * M[k, i]
            for j in _ancestors(lam, i):
                M[i, j] = M[i, j] - M[k, i] * M[k, j]
    n = len(lam)
    L = B.zeros(n, n)
    for k in range(n):
        L[k, k] = M[k, k]
        for i in _ancestors(lam, k):
            L[k, i] = M[k, i]
    return L


def _right_solve(L: Matrix, J: Matrix, lam: list[int]) -> Matrix:
    """``Y = J L⁻¹`` column by column, leaves first, pushing each column to its ancestors."""
    Y = J
    for k in reversed(range(len(lam))):
        Y[:, k] = Y[:, k] / L[k, k]
        for i in _ancestors(lam, k):
            Y[:, i] = Y[:, i] - Y[:, k] * L[k, i]
    return Y


def ltl_osim_sweeps(B: Backend, topo: Topology, kin: Kinematics) -> Matrix:
    """The Delassus matrix G (m × m) by LTL-OSIM, blocks in constraint-list order."""
    lam = dof_parents(topo)
    L = ltl_factor(B, mass_matrix(B, topo, kin), lam)
    Y = _right_solve(L, constraint_jacobian(B, topo, kin), lam)
    return B.symmetric_from_upper(Y @ Y.T)
