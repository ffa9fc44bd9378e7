"""The structure PV-OSIMh works on: a :class:`Plan` (its cut links and what follows from them),
and the rule that picks the cuts.

Everything here depends only on the topology, the constraints' placements and the set of cuts,
not on a configuration; the sweeps are :mod:`pvosimr.algorithms.pv_osimh`.

**The rule** (:func:`plan_of`).  ``C`` is chosen once per topology and kept with it
(:meth:`~pvosimr.topology.Topology.prepared`).  Each candidate plan is priced by running the
sweeps on the cost model (:mod:`pvosimr.cost`: the structure of every entry at a symbolic
configuration and the expression graph CasADi would build; no CasADi), which gives two numbers:
the operations the sweeps make, and the operations G reads (the estimate of the count).  The
search (:func:`ranked_plans`) goes by the first: it grows as the sweeps run, so a candidate is
dropped as soon as it makes more than ``SHORTLIST_FACTOR`` times the best so far, and most of a
poor candidate is never built.  Candidates: cut every branching link, every j-th one, none,
then single cuts toggled while the count drops.  Of the few it ranks first, the one whose G
reads the fewest operations is the plan (:func:`cheapest_plan`).  The plan only decides what
is computed, never what G is: every plan gives the same matrix.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pinocchio as pin

from ..cost import Count, Counter
from ..notices import said_if_slow
from ..topology import Topology
from .pv_osimr import minimum_cover

__all__ = [
    "PLAN",
    "Plan",
    "candidates",
    "cheapest_plan",
    "cover",
    "plan_of",
    "plan_prices",
    "ranked_plans",
    "set_plan",
]

#: The key of a topology's plan (:meth:`~pvosimr.topology.Topology.prepared`).
PLAN = "pv-osimh plan"

#: A candidate is dropped once it makes more than ``SHORTLIST_FACTOR`` times the operations the
#: best candidate so far made; the plan is the best count of the first ``SHORTLIST`` candidates
#: within that factor of the best.
SHORTLIST_FACTOR, SHORTLIST = 1.5, 5


@dataclass(frozen=True)
class Plan:
    """The cut links ``C`` and what follows from them (node ids as in :class:`Topology`).

    - ``A[u]``: ``A'(u)``, the closest strict ancestor of node ``u`` in ``C ∪ {0}``;
    - ``chain[e]``: the cuts above EE ``e``, from ``A'(e)`` up, excluding the world;
    - ``passing[i]``: the nodes whose propagators cross link ``i``'s joint (sorted);
    - ``shared``: the node pairs (u < v) of one group whose paths share a link (Ω[u, v] ≠ 0).
    """

    cuts: frozenset[int]
    A: dict[int, int]
    chain: dict[int, tuple[int, ...]]
    passing: dict[int, tuple[int, ...]]
    shared: frozenset[tuple[int, int]]

    @classmethod
    def build(cls, topo: Topology, cuts: frozenset[int]) -> Plan:
        if not cuts <= candidates(topo):
            raise ValueError(f"cuts {sorted(cuts - candidates(topo))} are not branching links")
        A: dict[int, int] = {}
        for u in sorted(cuts) + list(topo.ees):
            a = topo.parent[u]
            while a != 0 and a not in cuts:
                a = topo.parent[a]
            A[u] = a
        chain = {}
        for e in topo.ees:
            up, c = [], A[e]
            while c != 0:
                up.append(c)
                c = A[c]
            chain[e] = tuple(up)
        arriving: dict[int, list[int]] = defaultdict(list)
        passing: dict[int, tuple[int, ...]] = {}
        shared: set[tuple[int, int]] = set()
        for e in topo.ees:
            arriving[topo.link_of[e]].append(e)
        for i in reversed(topo.links):
            if not topo.ES[i]:
                continue
            here = sorted(arriving.pop(i, []))
            passing[i] = (i,) if i in cuts else tuple(here)
            if i not in cuts:
                shared |= {(u, v) for a, u in enumerate(here) for v in here[a + 1 :]}
            arriving[topo.parent[i]].extend(passing[i])
        return cls(frozenset(cuts), A, chain, passing, frozenset(shared))

    def node_below(self, e: int, c: int) -> int:
        """The node of ``c``'s group on the path from EE ``e`` up to ``c``."""
        path = (e, *self.chain[e])
        return path[path.index(c) - 1] if c != 0 else path[-1]

    def meet(self, e1: int, e2: int) -> int:
        """``cca'(e1, e2)``: the closest common ancestor of two EEs in ``C ∪ {0}``."""
        up1 = set(self.chain[e1])
        return next((c for c in self.chain[e2] if c in up1), 0)


def candidates(topo: Topology) -> frozenset[int]:
    """The links a plan may cut: the branching links of PV-OSIMr's N (neither EEs nor 0)."""
    return frozenset(i for i in topo.N if 0 < i < topo.njoints)


def cover(topo: Topology, plan: Plan) -> frozenset[tuple[int, int]]:
    """The (c, e) whose ``^0Ω_c ^cK_eᵀ`` eq. 13' forms: PV-OSIMr's minimum cover
    (:func:`pvosimr.algorithms.pv_osimr.omega_cover`) with the plan's groups as the parts."""
    return minimum_cover(topo.ees, plan.A, plan.meet, plan.node_below)


#: ``price(plan, budget)``: a plan's :class:`~pvosimr.cost.Count`, or None past ``budget``
#: operations made.
Price = Callable[..., "Count | None"]

#: PV-OSIMh's body given its plan, ``sweeps(B, topology, kinematics, plan, steps)``, and the
#: articulated-body recursion every plan shares, ``steps(B, topology, kinematics)``: passed in
#: by :mod:`.pv_osimh`, which imports this module.
PlanSweeps = Callable[..., Any]


def plan_of(
    topo: Topology,
    sweeps: PlanSweeps,
    steps: Callable[..., Any],
    model: pin.Model | None = None,
    constraint_models: Iterable | None = None,
) -> Plan:
    """The plan of ``topo``, chosen at the first call and kept with it: :func:`cheapest_plan`
    priced by ``sweeps`` on the cost model, with the placements of ``constraint_models``
    (generic ones when None).  It decides the work, never the result."""

    def choose(t: Topology) -> Plan:
        if not candidates(t):  # no link to cut: one plan, nothing to price
            return Plan.build(t, frozenset())
        notice = (
            f"PV-OSIMh: pricing cut plans for this topology ({len(candidates(t))} links that may "
            "be cut; once per model and constraint structure) …"
        )
        with said_if_slow(notice):
            counter = Counter(t.model if model is None else model, t, constraint_models)
            return cheapest_plan(t, plan_prices(counter, sweeps, steps))

    return topo.prepared(PLAN, choose)


def set_plan(topo: Topology, plan: Plan) -> None:
    """Make ``plan`` the plan of ``topo``, before its first PV-OSIMh call (to study plans
    other than the rule's; any plan gives the same G)."""
    if plan.A.keys() != set(plan.cuts) | set(topo.ees):
        raise ValueError("the plan was built for another topology")
    if topo.prepared(PLAN, lambda t: plan) is not plan:
        raise ValueError("this topology has its plan already: set it on a new Topology")


def plan_prices(counter: Counter, sweeps: PlanSweeps, steps: Callable[..., Any]) -> Price:
    """``price(plan, budget)``: the cost model's :class:`~pvosimr.cost.Count` of ``sweeps``
    with that plan on ``counter``, or None past ``budget`` operations made; the recursion every
    plan shares is made once."""
    shared = counter.keep(steps)
    counter.share()  # plans differing by a cut share most of their sweeps

    def price(plan: Plan, budget: float = math.inf) -> Count | None:
        return counter.measure(lambda B, t, kin: sweeps(B, t, kin, plan, shared), budget)

    return price


def cheapest_plan(topo: Topology, price: Price) -> Plan:
    """The rule's plan: of the shortlist of :func:`ranked_plans` (at most ``SHORTLIST``
    plans, within ``SHORTLIST_FACTOR`` of the fewest operations made), the one whose G reads
    the fewest; ties go to the first."""
    ranked = ranked_plans(topo, price)
    best = ranked[0][0]
    shortlist = [(count, plan) for made, count, plan in ranked if made <= SHORTLIST_FACTOR * best]
    return min(shortlist[:SHORTLIST], key=lambda pair: pair[0].operations)[1]


def ranked_plans(
    topo: Topology, price: Price, search_limit: int = 16
) -> list[tuple[float, Count | None, Plan]]:
    """The search: every plan it looked at, as (operations made, :class:`~pvosimr.cost.Count`,
    plan), fewest made first (then fewer cuts, then the cut links in order); a plan dropped
    once it made more than ``SHORTLIST_FACTOR`` times the best so far has made infinity and no
    count.

    Candidates, in this order: cut every branching link (PV-OSIMr's shape), cut every j-th
    branching link by depth (j = 2 … 8, the blocking that suits long welded chains), cut
    nothing (PV-OSIM's shape); then, when at most ``search_limit`` links may be cut, single
    cuts toggled, deepest first, while the operations made drop.
    """
    seen: dict[frozenset[int], float] = {}
    counts: dict[frozenset[int], Count | None] = {}

    def look(cuts: frozenset[int]) -> float:
        if cuts not in seen:
            best = min(seen.values(), default=math.inf)
            counts[cuts] = c = price(Plan.build(topo, cuts), SHORTLIST_FACTOR * best)
            seen[cuts] = math.inf if c is None else c.made
        return seen[cuts]

    todo = sorted(candidates(topo), key=lambda i: (-_depth(topo, i), i))
    for cuts in (
        frozenset(todo),
        *(frozenset(todo[j - 1 :: j]) for j in range(2, 9) if j < len(todo)),
        frozenset(),
    ):
        look(cuts)
    improved = len(todo) <= search_limit
    while improved:
        improved = False
        for c in todo:
            best_cuts = min(seen, key=seen.get)
            if look(best_cuts ^ {c}) < seen[best_cuts]:
                improved = True
    order = sorted(seen, key=lambda cuts: (seen[cuts], len(cuts), sorted(cuts)))
    return [(seen[cuts], counts[cuts], Plan.build(topo, cuts)) for cuts in order]


def _depth(topo: Topology, i: int) -> int:
    d = 0
    while i > 0:
        i, d = topo.parent[i], d + 1
    return d
