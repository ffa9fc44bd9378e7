"""PV-OSIM, the O(n + m²d) two-sweep Delassus algorithm (paper Algorithm 1).

Every link that supports constraints stacks the propagated constraint rows ``K^A`` of its
subtree (line 13) and grows the block-diagonal constraint-space inverse inertia ``L^A``
(line 14); ``L^A_0`` is the Delassus matrix (line 15, eq. 15).  Line 14 is the O(m²d)
bottleneck; it is applied through ``K^A_i S_i`` — for a 1-DoF joint a symmetric rank-1 update.
"""

from __future__ import annotations

from ..backend import Backend, Matrix
from ..kinematics import Kinematics
from ..topology import Topology
from .articulated import articulated_sweep

__all__ = ["pv_osim_sweeps"]


def pv_osim_sweeps(B: Backend, topo: Topology, kin: Kinematics) -> Matrix:
    """The Delassus matrix G (m × m) by PV-OSIM, blocks in constraint-list order."""
    n_nodes = topo.njoints
    K_A: list[list[Matrix]] = [[] for _ in range(n_nodes)]  # row blocks of K^A_i
    L_A: list[list[Matrix]] = [[] for _ in range(n_nodes)]  # diagonal blocks of L^A_i
    rows: list[list[int]] = [[] for _ in range(n_nodes)]  # constraints stacked in K^A_i, in order
    for k, e in reversed(list(enumerate(topo.ees))):  # lines 3–5
        i = topo.link_of[e]
        K_A[i].append(kin.K[e])
        L_A[i].append(B.zeros(topo.dims[k], topo.dims[k]))
        rows[i].append(k)
    for i, step in articulated_sweep(B, topo, kin):  # lines 6–14
        if not topo.ES[i]:
            continue
        p = topo.parent[i]
        KA = B.vstack(K_A[i])
        LA = B.blockdiag(L_A[i]) if len(L_A[i]) > 1 else L_A[i][0]
        KS = KA @ step.S
        L_A[p].append(B.symmetric(LA + KS @ (step.Dinv @ KS.T)))  # line 14
        if p > 0:
            K_A[p].append(step.rows_to_parent(KA))  # line 13
        rows[p].extend(rows[i])
    G = B.blockdiag(L_A[0])  # line 15: Λ⁻¹ = L^A_0
    return B.symmetric_from_upper(B.permute(G, _inverse_order(rows[0], topo)))


def _inverse_order(stack: list[int], topo: Topology) -> list[int]:
    """Row indices of ``L^A_0`` that put the constraint blocks back in list order."""
    start, pos = 0, {}
    for k in stack:
        pos[k] = start
        start += topo.dims[k]
    return [pos[k] + r for k in range(len(topo.dims)) for r in range(topo.dims[k])]
