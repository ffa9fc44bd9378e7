"""EFPA, the O(n + md + m²) extended-force-propagator Delassus algorithm (paper Algorithm 2).

=========================================================  ====================================
Paper, Algorithm 2                                         Code
=========================================================  ====================================
line 2: ``H^A_i ← H_i``                                    :func:`backward_sweep`
lines 3–4: ``^{π(i)}K_i ← K_i``                            :func:`backward_sweep`
lines 5–9: ``D_i``, ``^{π(i)}Ω_i``, ABI of π(i)             ``joint_step``, ``fold_into_parent``
lines 10–11: CEMPs ``^{π(i)}K_j = ^iK_j ^{π(i)}P_iᵀ``        :func:`backward_sweep`
lines 12–17: ``(^0Ω_i ^iK_jᵀ)``, line 15                    :func:`forward_sweep`
lines 18–19: blocks ``^{cca}K_i (^0Ω_{cca} ^{cca}K_jᵀ)``     :func:`assemble`
=========================================================  ====================================

In local frames ``^kK_j`` maps link ``k``'s motion (frame k) to EE ``j``'s constraint rows;
``Y[k, j] = ^0Ω_k ^kK_jᵀ`` is 6×m_j in frame ``k``.  Line 15 is the O(md) term.
"""

from __future__ import annotations

from ..backends.protocol import Backend, Matrix, place_blocks
from ..kinematics.frames import Kinematics
from ..topology import Topology
from .articulated import JointStep, fold_into_parent, joint_step

__all__ = ["assemble", "backward_sweep", "efpa_sweeps", "forward_sweep"]

Pairs = dict[tuple[int, int], Matrix]
"""Matrices indexed by (link k, EE j): ``^kK_j`` or ``^0Ω_k ^kK_jᵀ``."""


def backward_sweep(
    B: Backend, topo: Topology, kin: Kinematics
) -> tuple[Pairs, dict[int, JointStep]]:
    """Lines 4–11: the ABI recursion and ``^kK_j`` for every link k and every EE j ∈ ES(k)."""
    K: Pairs = {(topo.link_of[e], e): kin.K[e] for e in topo.ees}  # line 4: ^{π(j)}K_j = K_j
    steps: dict[int, JointStep] = {}
    H_A = list(kin.H)  # line 2
    for i in reversed(topo.links):  # line 5
        p = topo.parent[i]
        steps[i] = step = joint_step(B, kin, H_A, i)  # line 6
        if p > 0:
            for e in topo.ES[i]:  # line 10
                K[p, e] = step.rows_to_parent(K[i, e])  # line 11
        fold_into_parent(H_A, i, p, step)  # lines 7–9
    return K, steps


def forward_sweep(topo: Topology, K: Pairs, steps: dict[int, JointStep]) -> Pairs:
    """Lines 12–17: ``^0Ω_i ^iK_jᵀ`` for every link i and every EE j ∈ ES(i), root side first."""
    Y: Pairs = {}
    for i in topo.links:
        step, p = steps[i], topo.parent[i]
        for e in topo.ES[i]:
            KS = K[i, e] @ step.S
            Y[i, e] = step.S @ (step.Dinv @ KS.T)  # ^{π(i)}Ω_i ^iK_jᵀ
            if p > 0:
                Y[i, e] = Y[i, e] + step.motion_from_parent(Y[p, e])  # line 15
    return Y


def assemble(B: Backend, topo: Topology, K: Pairs, Y: Pairs) -> Matrix:
    """Lines 18–19: every block from the CEMP of one EE and ``Y`` of the other at their cca."""
    blocks = []
    for a, ei in enumerate(topo.ees):
        ri = slice(topo.offsets[a], topo.offsets[a] + topo.dim_of[ei])
        for b in range(a, len(topo.ees)):
            ej = topo.ees[b]
            c = topo.link_of[ei] if a == b else topo.cca(ei, ej)
            if c == 0:
                continue
            rj = slice(topo.offsets[b], topo.offsets[b] + topo.dim_of[ej])
            blocks.append((ri, rj, K[c, ei] @ Y[c, ej]))
    return B.symmetric_from_upper(place_blocks(B, topo.m_relaxed, topo.m_relaxed, blocks))


def efpa_sweeps(B: Backend, topo: Topology, kin: Kinematics) -> Matrix:
    """The Delassus matrix G (m × m) by EFPA, blocks in constraint-list order."""
    K, steps = backward_sweep(B, topo, kin)
    return assemble(B, topo, K, forward_sweep(topo, K, steps))
