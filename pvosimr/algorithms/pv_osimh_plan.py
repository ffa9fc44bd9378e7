"""The structure PV-OSIMh works on: a :class:`Plan` (its cut links and what follows from them).

Everything here depends only on the topology and the set of cuts, not on a configuration; the
sweeps are :mod:`pvosimr.algorithms.pv_osimh`, which also holds the rule that picks the cuts.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..topology import Topology

__all__ = ["Plan", "candidates", "cover"]


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
    chosen = {(plan.A[e], e) for e in topo.ees if plan.A[e] != 0}
    parts: dict[int, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
    for a, e1 in enumerate(topo.ees):
        for e2 in topo.ees[a + 1 :]:
            c = plan.meet(e1, e2)
            if c != 0:
                for e in (e1, e2):
                    parts[c][plan.node_below(e, c)].add(e)
    for c, by_node in parts.items():
        cost = {u: sum((c, e) not in chosen for e in ees) for u, ees in by_node.items()}
        spared = max(sorted(cost), key=cost.__getitem__)
        chosen |= {(c, e) for u, ees in by_node.items() if u != spared for e in ees}
    return frozenset(chosen)
