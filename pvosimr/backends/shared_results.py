"""Bodies counted one after another on one graph, each reusing what an earlier one made from the
same operands, each counted as if alone.

PV-OSIMh's rule prices dozens of cut plans on one graph (:mod:`pvosimr.algorithms.pv_osimh_plan`).
Two plans that differ by a cut compute most of their products from the same operands: the
sweeps below the cut, the other branches, the blocks of G between EEs the cut does not
separate.  A counting primitive is a function of its operands' values and nodes alone, so its
result made once serves every later body that asks for it with the same operands: the nodes are
the same, and so is every count of what G reads.  What a body makes (:attr:`Graph.made
<pvosimr.backends.graph.Graph.made>`, the search's measure) is kept as if the body ran
alone:

- a result taken again adds the operations it made when it was made;
- a constant counts once per body (the first time the body reads it), unless the shared prefix
  made it, as on a graph rewound to the prefix before each body;
- a result serves a body once: a body that asks twice for the same product makes it twice, as
  it would alone;
- where a body takes too few results from earlier ones to pay for keeping them
  (:meth:`SharedResults.pays`), the graph is rewound to the prefix and counts each body alone
  from then on.

:meth:`pvosimr.cost.Counter.share` turns this on; the counts are those of bodies counted alone
on a rewound graph, to the operation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["SharedResults"]


@dataclass
class _Result:
    """A primitive's result arrays, what it made (constants apart) and the constants it read."""

    arrays: tuple[np.ndarray, ...]
    made: int
    constants: tuple[float, ...]
    edges: range  # the graph's edges it made (indices into its list)
    body: int  # the last body that took it


class SharedResults:
    """The results kept between bodies on a graph whose first ``size`` nodes (``made``
    operations) are the prefix every body shares."""

    def __init__(self, size: int, made: int, edges: int) -> None:
        self.floor, self.floor_made, self.floor_edges = size, made, edges
        self.body = 0
        self.edges: list[range] = []  # the edges this body made or took, past the prefix's
        self._prefix_blocks: list | None = None
        self.results: dict[tuple, list[_Result]] = {}
        self._read: set[float] = set()  # the constants this body has counted
        self._constants_made = 0  # operations of constants counted so far (all bodies)
        self._recording: list[float] | None = None  # the constants the primitive running read
        self._start = (0, 0, 0)
        self.taken = self.kept = 0  # this body's results taken from earlier ones, and made

    def start(self) -> int:
        """A new body: returns the operations it starts with (the prefix's)."""
        self.body += 1
        self._read = set()
        self.edges = []
        self._recording = None  # a body stopped past its budget stops its primitive too
        self.taken = self.kept = 0
        return self.floor_made

    def pays(self) -> bool:
        """Whether the last body took at least a tenth of its results from earlier ones (the
        first body, which has none to take, pays for the second)."""
        return self.body < 2 or 10 * self.taken >= self.taken + self.kept

    def constant(self, value: float, node: int, new: bool) -> int:
        """A constant read: the operations it adds to this body's count (1 the first time the
        body reads a constant the prefix did not make; a new one counts 1 in ``Graph.nodes``)."""
        if self._recording is not None:
            self._recording.append(value)
        if value in self._read or node < self.floor:
            return 0
        self._read.add(value)
        self._constants_made += 1
        return 0 if new else 1

    def take(self, key: tuple) -> _Result | None:
        """A result of the same primitive on the same operands that this body has not taken."""
        for result in self.results.get(key, ()):
            if result.body != self.body:
                result.body = self.body
                self.edges.append(result.edges)
                self.taken += 1
                return result
        return None

    def body_blocks(self, edges: list, blocks: Callable[[list], list]) -> list:
        """The ``blocks`` of the reverse pass over this body's graph: the prefix's (made
        once), then those of the edges this body made or took, in the order they were made."""
        if self._prefix_blocks is None:
            self._prefix_blocks = blocks(edges[: self.floor_edges])
        own = [edges[k] for r in sorted(self.edges, key=lambda r: r.start) for k in r]
        return self._prefix_blocks + blocks(own)

    def begin(self, made: int, edges: int) -> None:
        """A primitive starts, with the graph at ``made`` operations and ``edges`` edge
        blocks: what it makes until :meth:`keep` is its result."""
        self._start = (made, self._constants_made, edges)
        self._recording = []

    def keep(self, key: tuple, arrays: tuple, made: int, edges: int) -> None:
        """The primitive begun last made ``arrays`` (the graph now at ``made``, ``edges``):
        kept as ``key``'s result."""
        before, constants_before, first_edge = self._start
        own = made - before - (self._constants_made - constants_before)
        made_edges = range(first_edge, edges)
        self.edges.append(made_edges)
        read, self._recording = tuple(self._recording or ()), None
        self.results.setdefault(key, []).append(_Result(arrays, own, read, made_edges, self.body))
        self.kept += 1
