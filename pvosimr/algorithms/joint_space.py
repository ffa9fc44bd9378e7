"""Joint-space quantities for the baselines: mass matrix ``M`` and constraint Jacobian ``J``.

Both are written once against the backend seam in local link frames, so the naive and LTL-OSIM
baselines are evaluated (and counted) exactly like the recursive algorithms.
"""

from __future__ import annotations

from ..backends import Backend, Matrix
from ..kinematics.frames import Kinematics
from ..topology import Topology

__all__ = ["constraint_jacobian", "dof_parents", "mass_matrix"]


def _dofs(topo: Topology, i: int) -> slice:
    return slice(topo.tree.idx_v[i], topo.tree.idx_v[i] + topo.tree.nv[i])


def mass_matrix(B: Backend, topo: Topology, kin: Kinematics) -> Matrix:
    """``M(q)`` by the composite-rigid-body algorithm (RBDA Table 6.2), armature added."""
    parent = topo.parent
    Ic = list(kin.H)
    for i in reversed(topo.links):  # composite inertias, leaves to root
        if parent[i] > 0:
            Ic[parent[i]] = B.symmetric(Ic[parent[i]] + kin.X[i].congruence(Ic[i]))
    M = B.zeros(topo.nv_relaxed, topo.nv_relaxed)
    for i in topo.links:
        F = Ic[i] @ kin.S[i]
        di = _dofs(topo, i)
        Mii = kin.S[i].T @ F
        M[di, di] = Mii if kin.armature[i] is None else Mii + kin.armature[i]
        j = i
        while parent[j] > 0:
            F = kin.X[j].force(F)
            j = parent[j]
            dj = _dofs(topo, j)
            M[dj, di] = kin.S[j].T @ F
            M[di, dj] = M[dj, di].T
    return M


def constraint_jacobian(B: Backend, topo: Topology, kin: Kinematics) -> Matrix:
    """``J(q)`` (m × nv): EE rows ``K_e X_{i←k} S_k`` over the ancestors ``k`` of its link."""
    J = B.zeros(topo.m_relaxed, topo.nv_relaxed)
    for a, e in enumerate(topo.ees):
        rows = slice(topo.offsets[a], topo.offsets[a] + topo.dim_of[e])
        Kk = kin.K[e]  # rows acting on link k's motion, k walking to the root
        k = topo.link_of[e]
        while k > 0:
            J[rows, _dofs(topo, k)] = Kk @ kin.S[k]
            if topo.parent[k] > 0:
                Kk = kin.X[k].rows(Kk)
            k = topo.parent[k]
    return J


def dof_parents(topo: Topology) -> list[int]:
    """λ of the dof tree: each dof's parent dof (−1 at a root), joints numbered root to leaves."""
    lam = [-1] * topo.nv_relaxed
    for i in topo.links:
        first = topo.tree.idx_v[i]
        p = topo.parent[i]
        while p > 0 and topo.tree.nv[p] == 0:
            p = topo.parent[p]
        lam[first] = topo.tree.idx_v[p] + topo.tree.nv[p] - 1 if p > 0 else -1
        for d in range(first + 1, first + topo.tree.nv[i]):
            lam[d] = d - 1
    return lam
