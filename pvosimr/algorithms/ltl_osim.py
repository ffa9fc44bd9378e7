"""LTL-OSIM, the O(nd² + m²d + md²) baseline (Featherstone 2010; paper Sec. II-A, eqs. 4–6).

=========================================================  ====================================
Paper, Sec. II-A                                           Code
=========================================================  ====================================
``M``, ``J`` in joint space                                 ``mass_matrix``, ``constraint_jacobian``
eq. 4: ``M = Lᵀ L``                                        :func:`ltl_factor`
eq. 5: ``Y = J L⁻¹``                                       :func:`_right_solve`
eq. 6: ``Λ⁻¹ = Y Yᵀ``                                       :func:`ltl_osim_sweeps`
=========================================================  ====================================

Featherstone's LTL factorization keeps the branch-induced sparsity of ``M`` in ``L`` when
joints are numbered root to leaves; ``Y = J L⁻¹`` keeps ``J``'s sparsity.  Only entries on
ancestor pairs of the dof tree are ever touched (:func:`ancestor_runs`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..backends import Backend, Matrix
from ..kinematics.frames import Kinematics
from ..topology import Topology
from .joint_space import constraint_jacobian, dof_parents, mass_matrix

__all__ = ["ancestor_runs", "ltl_factor", "ltl_osim_sweeps"]


def ancestor_runs(lam: Sequence[int]) -> tuple[tuple[slice, ...], ...]:
    """For each dof ``k``, its ancestors ``λ(k), λ(λ(k)), …`` as ascending runs of consecutive
    indices (slices).  Joints numbered root to leaves keep a path's dofs in a few runs — one on a
    chain — so each step of the factorization is a handful of block operations, not O(d²)
    scalar ones, and only ancestor pairs are ever touched."""
    runs = []
    for k in range(len(lam)):
        bounds: list[list[int]] = []
        i = lam[k]
        while i != -1:
            if bounds and bounds[-1][0] == i + 1:
                bounds[-1][0] = i
            else:
                bounds.append([i, i + 1])
            i = lam[i]
        runs.append(tuple(slice(a, b) for a, b in reversed(bounds)))
    return tuple(runs)


def ltl_factor(B: Backend, M: Matrix, runs: tuple[tuple[slice, ...], ...]) -> Matrix:
    """Lower-triangular ``L`` with ``M = Lᵀ L`` (Featherstone RBDA Table 6.3), in place on ``M``.

    Step ``k`` (leaves first): ``M[k,k] ← √M[k,k]``, ``M[k,i] ← M[k,i] / M[k,k]`` and
    ``M[i,j] ← M[i,j] − M[k,i] M[k,j]`` for ancestors ``j ⪯ i`` of ``k``, applied run by run of
    :func:`ancestor_runs` (``runs``).  Only the lower triangle is read afterwards; the block
    update also writes the mirror entries of a run, which nothing reads (a symbolic backend
    drops them).
    """
    n = len(runs)
    for k in reversed(range(n)):
        row = slice(k, k + 1)
        M[k, k] = B.sqrt(M[k, k])
        for r in runs[k]:
            M[row, r] = M[row, r] / M[k, k]
        for a, ri in enumerate(runs[k]):
            for rj in runs[k][: a + 1]:  # runs of ancestors of ri's dofs, ri included
                M[ri, rj] = M[ri, rj] - M[row, ri].T @ M[row, rj]
    L = B.zeros(n, n)
    for k in range(n):
        L[k, k] = M[k, k]
        for r in runs[k]:
            L[k : k + 1, r] = M[k : k + 1, r]
    return L


def _right_solve(L: Matrix, J: Matrix, runs: tuple[tuple[slice, ...], ...]) -> Matrix:
    """``Y = J L⁻¹`` column by column, leaves first, pushing each column to its ancestors."""
    Y = J
    for k in reversed(range(len(runs))):
        col = slice(k, k + 1)
        Y[:, col] = Y[:, col] / L[k, k]
        for r in runs[k]:
            Y[:, r] = Y[:, r] - Y[:, col] @ L[col, r]
    return Y


def ltl_osim_sweeps(B: Backend, topo: Topology, kin: Kinematics) -> Matrix:
    """The Delassus matrix G (m × m) by LTL-OSIM, blocks in constraint-list order."""
    runs = topo.prepared("ltl-osim ancestor runs", lambda t: ancestor_runs(dof_parents(t)))
    L = ltl_factor(B, mass_matrix(B, topo, kin), runs)
    Y = _right_solve(L, constraint_jacobian(B, topo, kin), runs)
    return B.symmetric_from_upper(Y @ Y.T)
