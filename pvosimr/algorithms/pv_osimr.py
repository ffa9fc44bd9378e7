"""PV-OSIMr, the O(n + m²) Delassus algorithm (paper Algorithm 3, eqs. 16–19, 13).

=========================================================  ====================================
Paper, Algorithm 3                                         Code
=========================================================  ====================================
line 2: ``H^A_i ← H_i``                                    :func:`backward_sweep`
lines 3–4: ``^{π(i)}P_i ← K_iᵀ``, ``^{π(i)}Ω_i ← 0``      :func:`backward_sweep` (``P.update``)
lines 5, 8–11: ``D_i``, ``^{π(i)}Ω_i``, ABI of π(i)       ``joint_step``, ``fold_into_parent``
lines 6–7, 12–15: eqs. 16–17 between branching links       :func:`_extend_to_parent`
lines 16–17: ``^0Ω_i``, eq. 18                             :func:`forward_sweep`
lines 18–22: CEMPs ``^{A(j)}K_i``, eq. 19                  :func:`cemps`
lines 23–28: blocks by eq. 13, diagonal ``^0Ω_i``          :func:`assemble`
eq. 13's products ``^0Ω_c ^cK_eᵀ`` and the blocks of each  :func:`omega_cover`, :func:`block_plan`
=========================================================  ====================================

Only fixed-size quantities travel in the backward sweep (6×6, or 6×m_i at an EE): the extended
force propagator ``^{π(k)}P_{D(k)}`` and inverse inertia ``^{π(k)}Ω_{D(k)}`` between branching
links.  A forward sweep over N gives every ``^0Ω_i`` (eq. 18), a walk up N gives the CEMPs
(eq. 19) and eq. 13 assembles the blocks.  Written in local link frames: ``P`` maps a force in
the frame of its subscript node to the frame of its superscript link; ``Ω`` of node ``j`` is in
frame ``j`` (m_j × m_j at an EE).

What depends only on the topology (the links each EE passes on its way up, the cover of eq. 13
and its block plan) is prepared once and kept with the :class:`~pvosimr.topology.Topology`
(:meth:`~pvosimr.topology.Topology.prepared`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from itertools import pairwise

from ..backends.protocol import Backend, Matrix, place_blocks, rows_through
from ..kinematics.frames import Kinematics
from ..topology import Topology
from .articulated import JointStep, fold_into_parent, joint_step

__all__ = [
    "Propagators",
    "assemble",
    "backward_sweep",
    "block_plan",
    "cemps",
    "forward_sweep",
    "minimum_cover",
    "omega_cover",
    "passing_links",
    "pv_osimr_sweeps",
]


class Propagators:
    """``^{A(j)}P_j`` for every j in N∖{0}, as a 6×m_j matrix ``P[j]``, or — when the path from
    a branching link j up to A(j) is j's own joint — as that joint's :class:`JointStep`, applied
    in factored form (through ``S_j`` and ``U_j``, as PV-OSIM and EFPA apply theirs) instead of
    being formed as a 6×6 matrix.
    """

    def __init__(self, B: Backend) -> None:
        self.B = B
        self.P: dict[int, Matrix] = {}
        self.step: dict[int, JointStep] = {}

    def rows(self, K: Matrix, j: int) -> Matrix:
        """``K ^{A(j)}P_jᵀ``: rows on j's motion → rows on A(j)'s motion (eq. 19)."""
        return self.rows_product(j)(K)

    def rows_product(self, j: int) -> Callable[[Matrix], Matrix]:
        """``K ↦ K ^{A(j)}P_jᵀ``: :meth:`rows` as a function of ``K`` alone."""
        if j in self.step:
            return self.step[j].rows_to_parent
        P = self.P[j]
        return lambda K: K @ P.T

    def congruence(self, Omega: Matrix, j: int) -> Matrix:
        """``^{A(j)}P_jᵀ Ω ^{A(j)}P_j`` for a symmetric 6×6 ``Ω`` of A(j) (eq. 18)."""
        if j in self.step:
            return self.step[j].motion_congruence(Omega)
        return self.B.symmetric(self.P[j].T @ Omega @ self.P[j])


def backward_sweep(B: Backend, topo: Topology, kin: Kinematics) -> tuple[Propagators, dict]:
    """Lines 1–15: ``^{A(j)}P_j`` and ``^{A(j)}Ω_j`` for every j in N∖{0}.

    ``P[j]`` and ``Omega[j]`` hold ``^kP_j`` and ``^kΩ_j`` for the link ``k`` the sweep has
    reached on the path from ``j`` up to ``A(j)``; when the sweep has passed ``A(j)`` they are
    ``^{A(j)}P_j`` and ``^{A(j)}Ω_j``.
    """
    props = Propagators(B)
    P = props.P
    # Line 4, "abuse of notation": an EE's propagator is its constraint matrix.
    P.update({e: kin.K[e].T for e in topo.ees})
    Omega: dict[int, Matrix] = {e: B.zeros(d, d) for e, d in topo.dim_of.items()}
    H_A = list(kin.H)  # line 2
    for i in reversed(topo.links):  # line 5
        p = topo.parent[i]
        step = joint_step(B, kin, H_A, i)  # line 8
        if topo.ES[i]:
            _extend_to_parent(B, topo, props, Omega, i, step)  # lines 6–7, 12–15
        fold_into_parent(H_A, i, p, step)  # lines 9–11
    return props, Omega


def _extend_to_parent(
    B: Backend, topo: Topology, props: Propagators, Omega: dict, i: int, step: JointStep
) -> None:
    """Lines 6–7 and 12–15 at a link ``i`` with ES(i) ≠ ∅: ``^{π(i)}P_{D(i)}`` (eq. 17) and
    ``^{π(i)}Ω_{D(i)}`` (eq. 16) from ``^iP_{D(i)}``, ``^iΩ_{D(i)}`` and link i's step."""
    P, j, p = props.P, topo.D[i], topo.parent[i]
    if topo.in_N[i]:  # lines 6–7 with ^iP_i = I, ^iΩ_i = 0, so eq. 16 gives ^{π(i)}Ω_i
        Omega[j] = step.omega()
        if p > 0 and topo.A[i] == p:
            props.step[j] = step  # ^{A(j)}P_j is this joint's propagator: keep it factored
        elif p > 0:
            P[j] = step.force_to_parent(B.eye(6))
        return
    Omega[j], P_up = step.extend(Omega[j], P[j], p)  # eqs. 16–17 (lines 15, 13)
    if P_up is not None:
        P[j] = P_up


def forward_sweep(topo: Topology, props: Propagators, Omega: dict) -> dict[int, Matrix]:
    """Lines 16–17, eq. 18: ``^0Ω_i`` for every branching link i, root side first.

    The EEs' own ``^0Ω_i`` (the diagonal blocks) are finished in :func:`pv_osimr_sweeps`,
    where the product ``^0Ω_{A(i)} ^{A(i)}P_i`` is shared with the off-diagonal blocks.
    """
    Omega0: dict[int, Matrix] = {}
    for i in topo.N[1:]:
        if i >= topo.njoints:  # an EE: finished at assembly
            continue
        a = topo.A[i]
        Omega0[i] = (
            Omega[i] if a == 0 else props.B.symmetric(Omega[i] + props.congruence(Omega0[a], i))
        )
    return Omega0


def cemps(topo: Topology, props: Propagators) -> dict[int, dict[int, Matrix]]:
    """Lines 18–22, eq. 19: ``^jK_i`` for every EE i and every branching ancestor j ≠ 0.

    Line 20 starts each EE's walk up N at ``^{A(i)}K_i = ^{A(i)}P_iᵀ``; line 22 takes it one
    node further, ``^{A(j)}K_i = ^jK_i ^{A(j)}P_jᵀ``.  The loops of lines 18 and 21 are
    exchanged (the same products): link by link, deepest first, the rows of every EE passing
    j are handed to ``^{A(j)}P_j`` together, and the backend applies it to each block or to
    all at once (:func:`~pvosimr.backends.protocol.rows_through`)."""
    K: dict[int, dict[int, Matrix]] = {e: {} for e in topo.ees}
    for e in topo.ees:
        chain = topo.n_chain[e]
        if chain:
            K[e][chain[0]] = props.P[e].T  # line 20
    for j, passing in passing_links(topo):  # line 21, over the EEs of line 18
        moved = rows_through(props.B, props.rows_product(j), [K[e][j] for e, _ in passing])
        for (e, up), rows in zip(passing, moved, strict=True):
            K[e][up] = rows  # line 22
    return K


def passing_links(topo: Topology) -> list[tuple[int, list[tuple[int, int]]]]:
    """``(j, [(e, A(j)), …])`` for every branching link j ≠ 0 that EEs pass on their way up N,
    deepest first (a link's index exceeds its parent's, so ``^jK_e`` is ready when j comes);
    prepared once per topology."""
    return topo.prepared("pv-osimr passing links", _passing_links)


def _passing_links(topo: Topology) -> list[tuple[int, list[tuple[int, int]]]]:
    by_link: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for e in topo.ees:
        for j, up in pairwise(topo.n_chain[e]):
            by_link[j].append((e, up))
    return sorted(by_link.items(), reverse=True)


def omega_cover(topo: Topology) -> frozenset[tuple[int, int]]:
    """The (c, e) whose product ``^0Ω_c ^cK_eᵀ`` PV-OSIMr forms to evaluate eq. 13; prepared
    once per topology.

    Block (i, j) with c = cca(i, j) is ``^cK_i (^0Ω_c ^cK_jᵀ)`` or the transpose of
    ``^cK_j (^0Ω_c ^cK_iᵀ)``, so it needs the product for i *or* for j.  The EEs meeting at c
    fall into parts, one per branch below c (keyed by the next node of N on their path), and
    two EEs form a block at c exactly when their parts differ: the products for every EE
    outside one part cover all blocks at c (a minimum vertex cover of a complete multipartite
    graph).  The part left out is the one that would cost the most products; its EEs with
    A(e) = c cost none, as the diagonal block ``^0Ω_e`` (eq. 18) needs ``(A(e), e)`` anyway.
    On a chain welded at every link this forms O(m) products, not O(m d): the O(md)
    inverse-inertia term that PV-OSIMr exists to avoid (paper Sec. IV-B).
    """
    return topo.prepared(
        "pv-osimr cover", lambda t: minimum_cover(t.ees, t.A, t.cca, partial(_branch, t))
    )


def _branch(topo: Topology, e: int, c: int) -> int:
    """The node of N through which EE ``e`` reaches its branching ancestor ``c``."""
    below = (e, *topo.n_chain[e])
    return below[below.index(c) - 1]


def minimum_cover(
    ees: Sequence[int],
    A: Mapping[int, int],
    meet: Callable[[int, int], int],
    branch: Callable[[int, int], int],
) -> frozenset[tuple[int, int]]:
    """The cover of :func:`omega_cover` for EEs ``ees`` whose closest branching ancestor is
    ``A[e]``, two EEs meeting at ``meet(e1, e2)`` (0: only at the world) and EE ``e`` reaching
    a meeting node ``c`` through ``branch(e, c)``; PV-OSIMh's plans have their own ``A`` and
    meeting nodes."""
    cover = {(A[e], e) for e in ees if A[e] != 0}
    parts: dict[int, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
    for a, e1 in enumerate(ees):
        for e2 in ees[a + 1 :]:
            c = meet(e1, e2)
            if c == 0:
                continue
            for e in (e1, e2):
                parts[c][branch(e, c)].add(e)
    for c, by_branch in parts.items():
        cost = {b: sum((c, e) not in cover for e in ees) for b, ees in by_branch.items()}
        spared = max(sorted(cost), key=cost.__getitem__)
        cover |= {(c, e) for b, ees in by_branch.items() if b != spared for e in ees}
    return frozenset(cover)


Run = tuple[int, tuple[int, ...], bool]
"""``(c, partners, upper)`` of one product of :func:`assemble`: the CEMPs at ``c`` of
``partners`` (consecutive EEs, so their rows are one slice), stacked, times one bracket."""


def block_plan(topo: Topology) -> dict[tuple[int, int], list[Run]]:
    """For each bracket ``(c, e)`` of :func:`omega_cover`, the blocks of eq. 13 it forms, as
    runs of consecutive partner EEs (prepared once per topology).

    Block (i, j), i before j, is ``^cK_i (^0Ω_c ^cK_jᵀ)`` when the cover has ``(c, j)`` — i is
    then a partner of ``(c, j)`` above the diagonal (``upper``) — and otherwise the transpose
    of ``^cK_j (^0Ω_c ^cK_iᵀ)``, j a partner of ``(c, i)`` whose product lands below the
    diagonal and is written transposed.  A run of consecutive partners of one side is one
    product with their stacked CEMPs and one slice assignment into G; on a chain welded at
    every link that is one product per link instead of one per block.
    """
    return topo.prepared("pv-osimr block plan", _block_plan)


def _block_plan(topo: Topology) -> dict[tuple[int, int], list[Run]]:
    cover = omega_cover(topo)
    partners: dict[tuple[int, int, bool], list[int]] = defaultdict(list)
    for a, ei in enumerate(topo.ees):
        for ej in topo.ees[a + 1 :]:
            c = topo.cca(ei, ej)
            if c == 0:
                continue
            if (c, ej) in cover:
                partners[c, ej, True].append(ei)
            else:
                partners[c, ei, False].append(ej)
    plan = {pair: [] for pair in cover}
    for (c, e, upper), ees in partners.items():
        run = [ees[0]]
        for p in ees[1:]:
            if p != run[-1] + 1:
                plan[c, e].append((c, tuple(run), upper))
                run = []
            run.append(p)
        plan[c, e].append((c, tuple(run), upper))
    return plan


def assemble(B: Backend, topo: Topology, Omega: dict, Omega0: dict[int, Matrix], K: dict) -> Matrix:
    """Lines 23–28: eq. 13 for every block, as ``^cK_i (^0Ω_c ^cK_jᵀ)`` or as the transpose of
    ``^cK_j (^0Ω_c ^cK_iᵀ)``.

    The bracket is formed once per (c, e) of :func:`omega_cover`, the fewest products that
    cover every block, and shared by every block that uses it (one product per run of
    :func:`block_plan`) and by e's diagonal block,
    ``^0Ω_e = ^{A(e)}Ω_e + ^{A(e)}K_e (^0Ω_{A(e)} ^{A(e)}K_eᵀ)`` (eq. 18 at an EE, where
    ``^{A(e)}P_e = ^{A(e)}K_eᵀ`` by line 20).
    """
    blocks = []
    start = dict(zip(topo.ees, topo.offsets, strict=True))

    def span(first: int, last: int) -> slice:
        return slice(start[first], start[last] + topo.dim_of[last])

    Y = {}
    for (c, e), runs in block_plan(topo).items():
        Y[c, e] = Y_ce = Omega0[c] @ K[e][c].T  # ^0Ω_c ^cK_eᵀ
        for _, run, upper in runs:
            stacked = [K[p][c] for p in run]
            Z = (B.vstack(stacked) if len(stacked) > 1 else stacked[0]) @ Y_ce  # eq. 13
            if upper:
                blocks.append((span(run[0], run[-1]), span(e, e), Z))
            else:
                blocks.append((span(e, e), span(run[0], run[-1]), Z.T))
    for e in topo.ees:
        A, rows = topo.A[e], span(e, e)
        blocks.append((rows, rows, Omega[e] if A == 0 else Omega[e] + K[e][A] @ Y[A, e]))  # l. 28
    return B.symmetric_from_upper(place_blocks(B, topo.m_relaxed, topo.m_relaxed, blocks))


def pv_osimr_sweeps(B: Backend, topo: Topology, kin: Kinematics) -> Matrix:
    """The Delassus matrix G (m × m) by PV-OSIMr, blocks in constraint-list order."""
    props, Omega = backward_sweep(B, topo, kin)
    return assemble(B, topo, Omega, forward_sweep(topo, props, Omega), cemps(topo, props))
