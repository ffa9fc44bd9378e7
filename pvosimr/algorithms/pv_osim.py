"""PV-OSIM, the O(n + m²d) two-sweep Delassus algorithm (paper Algorithm 1).

=========================================================  ====================================
Paper, Algorithm 1                                         Code (:func:`pv_osim_sweeps`)
=========================================================  ====================================
line 2: ``H^A_i ← H_i``; ``K^A_i``, ``L^A_i`` empty          ``H_A``, ``K_A``, ``L_A``
lines 3–5: each EE's ``K_i`` and ``0`` on its link          the loop over ``topo.ees``
lines 6–10: ``D_i``, ``^{π(i)}Ω_i``, ABI of π(i)            ``joint_step``, ``fold_into_parent``
line 13: ``K^A_{π(i)} ← [K^A_{π(i)}; K^A_i ^{π(i)}P_iᵀ]``   ``step.rows_to_parent(KA)``
line 14: ``L^A_{π(i)} ← blkdiag(…, L^A_i + K^A_i Ω K^Aᵀ)``  ``KS @ (step.Dinv @ KS.T)``
line 15: ``Λ⁻¹ = L^A_0`` (eq. 15)                          ``L_A[0]``, :func:`_inverse_order`
=========================================================  ====================================

Every link that supports constraints stacks the propagated constraint rows ``K^A`` of its
subtree (line 13) and grows the block-diagonal constraint-space inverse inertia ``L^A``
(line 14); ``L^A_0`` is the Delassus matrix (line 15, eq. 15).  Line 14 is the O(m²d)
bottleneck; it is applied through ``K^A_i S_i`` — for a 1-DoF joint a symmetric rank-1 update.
"""

from __future__ import annotations

from ..backends import Backend, Matrix
from ..kinematics.frames import Kinematics
from ..topology import Topology
from .articulated import fold_into_parent, joint_step

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
    H_A = list(kin.H)  # line 2
    for i in reversed(topo.links):  # lines 6–14
        p = topo.parent[i]
        step = joint_step(B, kin, H_A, i)  # line 7
        if topo.ES[i]:
            KA = B.vstack(K_A[i])
            LA = B.blockdiag(L_A[i]) if len(L_A[i]) > 1 else L_A[i][0]
            KS = KA @ step.S
            L_A[p].append(B.symmetric(LA + KS @ (step.Dinv @ KS.T)))  # line 14
            if p > 0:
                K_A[p].append(step.rows_to_parent(KA))  # line 13
            rows[p].extend(rows[i])
        fold_into_parent(H_A, i, p, step)  # lines 8–10
    G = B.blockdiag(L_A[0])  # line 15: Λ⁻¹ = L^A_0
    return B.symmetric_from_upper(B.permute(G, _inverse_order(rows[0], topo)))


def _inverse_order(stack: list[int], topo: Topology) -> list[int]:
    """Row indices of ``L^A_0`` that put the constraint blocks back in list order."""
    start, pos = 0, {}
    for k in stack:
        pos[k] = start
        start += topo.dims[k]
    return [pos[k] + r for k in range(len(topo.dims)) for r in range(topo.dims[k])]
