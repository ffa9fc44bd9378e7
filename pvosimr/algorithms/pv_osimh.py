"""PV-OSIMh, a hybrid of PV-OSIM and PV-OSIMr that chooses, link by link, which one to run.

=========================================================  ====================================
Paper (Alg. 1 / Alg. 3), generalized                        Code
=========================================================  ====================================
Alg. 3 line 2, Alg. 1 line 2: ``H^A_i ← H_i``              :func:`backward_sweep`
Alg. 3 lines 3–4: ``^{π(e)}P_e ← K_eᵀ``, ``Ω_e ← 0``       :func:`backward_sweep`
Alg. 3 lines 6–7 at a cut: ``^{π(c)}Ω_c``, ``^{π(c)}P_c``  :func:`_start_node`
eqs. 16–17 (Alg. 3) = lines 13–14 (Alg. 1) on a group     :func:`_carry_group`
Alg. 3 lines 16–17, eq. 18: ``^0Ω_c`` for every cut        :func:`forward_sweep`
Alg. 3 lines 18–22, eq. 19: CEMPs ``^cK_e`` up the cuts     :func:`cemps`
eq. 13 plus the group's own ``Ω`` (Alg. 1 line 15)         :func:`assemble`
=========================================================  ====================================

**Why a hybrid.**  PV-OSIM (Alg. 1) carries every constraint row of a subtree up to the root
(``K^A``, m_i rows through each link, and their m_i × m_i inverse inertia ``L^A``: a rank-1
update per 1-DoF joint costing about ``(m_i + c) m_i``).  PV-OSIMr (Alg. 3) cuts at every
branching link: above it only a 6-row extended force propagator travels (eq. 17), and the
rows below are rejoined at the end through the forward sweep, the CEMPs and eq. 13.  Where
fewer rows than 6 cross a stretch of the tree, or the stretch is short, carrying them is
cheaper (the paper's own caveat, Sec. IV-E); where many cross a long stretch, cutting is.

**The algorithm.**  Given a set ``C`` of *cut* branching links (a :class:`Plan`), every EE and
every cut link ``u`` is a *node*, with ``A'(u)`` its closest strict ancestor in ``C ∪ {0}``.
The nodes with the same ``A'`` = c form the *group* of ``c``.  The backward sweep carries a
group's extended force propagators ``^kP_u`` (6×m_u each) and the group's inverse inertia
``Ω[u, v]`` between its nodes — the diagonal blocks are eq. 16, the off-diagonal ones are
PV-OSIM's ``L^A`` blocks (Alg. 1 line 14) — from link to link, by eqs. 16–17 applied to the
stacked propagators.  A cut closes the groups arriving at it and starts a node of its own
(Alg. 3 lines 6–7).  The forward sweep gives ``^0Ω_c`` for every cut (eq. 18).  With ``u1``,
``u2`` the nodes of the group of ``c = cca'(e1, e2)`` on the paths of ``e1``, ``e2``::

    G[e1, e2] = ^{u1}K_{e1} Ω[u1, u2] ^{u2}K_{e2}ᵀ + ^cK_{e1} ^0Ω_c ^cK_{e2}ᵀ        (eq. 13')

where ``^uK_e`` is the identity for ``u = e``, the first term exists only where the paths of
``u1`` and ``u2`` share a link below ``c``, and the second only for ``c ≠ 0``.  With ``C``
empty this is PV-OSIM (one group, ``G = L^A_0``); with every branching link cut it is
PV-OSIMr (groups never share a link, the first term vanishes).  Both sweeps share the
product ``D_i⁻¹ S_iᵀ P`` between eq. 16 and eq. 17 (Alg. 1 forms ``D_i⁻¹ U_iᵀ`` and
``D_i⁻¹ S_iᵀ K^Aᵀ`` separately, Alg. 3 ``D_i⁻¹ S_iᵀ P`` twice).

**The plan.**  ``C`` is chosen once per topology (:func:`prepare_plan`) by the rule of
:mod:`.pv_osimh_plan`, which prices candidate plans by running these very sweeps on the cost
model (:mod:`pvosimr.cost`).  The plan only decides what is computed, never what G is: every
plan gives the same matrix.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

import pinocchio as pin

from ..backends.protocol import Backend, Matrix, place_blocks
from ..kinematics.frames import Kinematics
from ..topology import Topology
from .articulated import JointStep, fold_into_parent, joint_step
from .pv_osimh_plan import Plan, cover, plan_of
from .pv_osimr import Propagators  # ^{A'(u)}P_u: the same store, with A' for A

__all__ = [
    "assemble",
    "backward_sweep",
    "cemps",
    "forward_sweep",
    "joint_steps",
    "prepare_plan",
    "pv_osimh_sweeps",
]


def backward_sweep(
    B: Backend, topo: Topology, kin: Kinematics, plan: Plan, steps: list[JointStep] | None = None
) -> tuple[Propagators, dict[tuple[int, int], Matrix]]:
    """The propagators ``^{A'(u)}P_u`` of every node and the groups' ``Ω[u, v]`` (u ≤ v);
    ``steps``, every link's :func:`joint_steps` when already known (they do not depend on the
    plan), spares the articulated-body recursion."""
    props = Propagators(B)
    props.P.update({e: kin.K[e].T for e in topo.ees})  # Alg. 3 line 4
    Omega: dict[tuple[int, int], Matrix] = {(e, e): B.zeros(d, d) for e, d in topo.dim_of.items()}
    H_A = list(kin.H)
    for i in reversed(topo.links):
        step = joint_step(B, kin, H_A, i) if steps is None else steps[i]
        if topo.ES[i]:
            if i in plan.cuts:
                _start_node(B, topo, plan, props, Omega, i, step)
            else:
                _carry_group(B, props, Omega, plan.passing[i], topo.parent[i] > 0, step)
        if steps is None:
            fold_into_parent(H_A, i, topo.parent[i], step)
    return props, Omega


def joint_steps(B: Backend, topo: Topology, kin: Kinematics) -> list[JointStep | None]:
    """Every link's :class:`JointStep` (entry 0, the world, is ``None``): the articulated-body
    recursion alone (Alg. 3 lines 8–11)."""
    steps: list[JointStep | None] = [None] * topo.njoints
    H_A = list(kin.H)
    for i in reversed(topo.links):
        steps[i] = joint_step(B, kin, H_A, i)
        fold_into_parent(H_A, i, topo.parent[i], steps[i])
    return steps


def _start_node(
    B: Backend, topo: Topology, plan: Plan, props: Propagators, Omega: dict, c: int, s: JointStep
) -> None:
    """Alg. 3 lines 6–7 at a cut ``c``: the groups arriving here are closed (their ``P`` are
    ``^cP_u``), and node ``c`` starts with ``^{π(c)}Ω_c`` and ``^{π(c)}P_c`` of its joint."""
    Omega[c, c] = s.omega()
    p = topo.parent[c]
    if p in plan.cuts:
        props.step[c] = s
    elif p > 0:
        props.P[c] = s.force_to_parent(B.eye(6))


def _carry_group(
    B: Backend, props: Propagators, Omega: dict, nodes: tuple[int, ...], up: bool, s: JointStep
) -> None:
    """Eqs. 16–17 on the stacked propagators of the nodes crossing link i's joint:
    ``Ω[u, v] += W_uᵀ D_i⁻¹ W_v`` with ``W_u = S_iᵀ P_u`` (Alg. 1 line 14 for u ≠ v), and
    ``P_u ← X_iᵀ (P_u − U_i D_i⁻¹ W_u)``; ``D_i⁻¹ W_u`` serves both."""
    P = props.P
    W = {u: s.S.T @ P[u] for u in nodes}
    DW = {u: s.Dinv @ W[u] for u in nodes}
    for a, u in enumerate(nodes):
        Omega[u, u] = B.symmetric(_plus(B, Omega.get((u, u)), W[u].T @ DW[u]))
        for v in nodes[a + 1 :]:
            Omega[u, v] = _plus(B, Omega.get((u, v)), W[u].T @ DW[v])
        if up:
            P[u] = s.X.force(P[u] - s.U @ DW[u])


def _plus(B: Backend, A: Matrix | None, Z: Matrix) -> Matrix:
    return Z if A is None else A + Z


def forward_sweep(plan: Plan, props: Propagators, Omega: dict) -> dict[int, Matrix]:
    """Eq. 18 for every cut, root side first: ``^0Ω_c = Ω[c, c] + ^aP_cᵀ ^0Ω_a ^aP_c``."""
    Omega0: dict[int, Matrix] = {}
    for c in sorted(plan.cuts):
        a = plan.A[c]
        own = Omega[c, c]
        Omega0[c] = own if a == 0 else props.B.symmetric(own + props.congruence(Omega0[a], c))
    return Omega0


def cemps(topo: Topology, plan: Plan, props: Propagators) -> dict[int, dict[int, Matrix]]:
    """Eq. 19 up the cuts: ``^cK_e`` for every EE e and every cut c above it."""
    K: dict[int, dict[int, Matrix]] = {}
    for e in topo.ees:
        chain = plan.chain[e]
        K[e] = {}
        if chain:
            K[e][chain[0]] = props.P[e].T
            for u, up in pairwise(chain):
                K[e][up] = props.rows(K[e][u], u)
    return K


def assemble(
    B: Backend,
    topo: Topology,
    plan: Plan,
    Omega: dict,
    Omega0: dict[int, Matrix],
    K: dict[int, dict[int, Matrix]],
) -> Matrix:
    """Eq. 13' for every block (upper triangle; G is symmetric)."""
    Y = {(c, e): Omega0[c] @ K[e][c].T for c, e in cover(topo, plan)}  # ^0Ω_c ^cK_eᵀ
    shared = _SharedTerms(B, plan, Omega, K)
    blocks = []
    for a, ei in enumerate(topo.ees):
        ri = slice(topo.offsets[a], topo.offsets[a] + topo.dim_of[ei])
        c = plan.A[ei]
        blocks.append((ri, ri, Omega[ei, ei] if c == 0 else Omega[ei, ei] + K[ei][c] @ Y[c, ei]))
        for b in range(a + 1, len(topo.ees)):
            ej = topo.ees[b]
            rj = slice(topo.offsets[b], topo.offsets[b] + topo.dim_of[ej])
            c = plan.meet(ei, ej)
            block = shared.term(ei, ej, c)
            if c != 0:
                via_c = K[ei][c] @ Y[c, ej] if (c, ej) in Y else (K[ej][c] @ Y[c, ei]).T
                block = via_c if block is None else block + via_c
            if block is not None:
                blocks.append((ri, rj, block))
    return B.symmetric_from_upper(place_blocks(B, topo.m_relaxed, topo.m_relaxed, blocks))


class _SharedTerms:
    """The first term of eq. 13', ``^{u1}K_{e1} Ω[u1, u2] ^{u2}K_{e2}ᵀ``, with each
    ``Ω[u1, u2] ^{u2}K_{e2}ᵀ`` formed once and shared by every EE below ``u1``."""

    def __init__(self, B: Backend, plan: Plan, Omega: dict, K: dict) -> None:
        self.B, self.plan, self.Omega, self.K = B, plan, Omega, K
        self.right: dict[tuple[int, int, int], Matrix] = {}

    def term(self, e1: int, e2: int, c: int) -> Matrix | None:
        u1, u2 = self.plan.node_below(e1, c), self.plan.node_below(e2, c)
        if (min(u1, u2), max(u1, u2)) not in self.plan.shared:
            return None
        if u1 > u2:  # Ω is stored for u < v: form the transposed block
            return self._term(e2, u2, e1, u1).T
        return self._term(e1, u1, e2, u2)

    def _term(self, e1: int, u1: int, e2: int, u2: int) -> Matrix:
        key = (u1, u2, e2)
        right = self.right.get(key)
        if right is None:
            Om = self.Omega[u1, u2]
            right = self.right[key] = Om if u2 == e2 else Om @ self.K[e2][u2].T
        return right if u1 == e1 else self.K[e1][u1] @ right


def pv_osimh_sweeps(B: Backend, topo: Topology, kin: Kinematics, plan: Plan | None = None):
    """The Delassus matrix G (m × m) by PV-OSIMh, blocks in constraint-list order; ``plan``:
    the topology's own (:func:`prepare_plan`) when None."""
    return _sweeps(B, topo, kin, prepare_plan(topo) if plan is None else plan)


def prepare_plan(
    topo: Topology, model: pin.Model | None = None, constraint_models: Iterable | None = None
) -> Plan:
    """The plan of ``topo``: made at the first call by the rule of :mod:`.pv_osimh_plan`, which
    prices candidate plans by running these sweeps on the cost model, then kept with the
    topology.  The entry points make it from their constraint models
    (:func:`pvosimr.choice.resolve_algorithm`): the sparsity of their placements decides the
    count; a body run on a topology no entry point prepared gets the plan of generic
    placements (:mod:`pvosimr.kinematics.structure`)."""
    return plan_of(topo, _sweeps, joint_steps, model, constraint_models)


def _sweeps(B: Backend, topo: Topology, kin: Kinematics, plan: Plan, steps=None):
    props, Omega = backward_sweep(B, topo, kin, plan, steps)
    Omega0 = forward_sweep(plan, props, Omega)
    return assemble(B, topo, plan, Omega, Omega0, cemps(topo, plan, props))
