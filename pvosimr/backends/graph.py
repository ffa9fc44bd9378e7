"""The expression graph of the counting backend (:mod:`.counting`): nodes with their operations,
the edges between them, the constants (one node per value), and the reverse pass that counts
what an output reads.  A graph can keep what bodies make for later ones (:mod:`.shared_results`).
"""

from __future__ import annotations

import math

import numpy as np

from .shared_results import SharedResults

__all__ = ["NONE", "ONE", "Graph", "OverBudgetError"]

NONE = -1  # the node id of an entry without a node (a structural zero or ±1)
ONE = -2  # the numerator of 1 / x


class OverBudgetError(Exception):
    """Raised by a primitive that takes :attr:`Graph.made` past :attr:`Graph.budget`."""


class Graph:
    """The expression graph of a count: per node its operation count (a constant counts one
    instruction, an input none), and per operation its edges ``dst ← src`` to earlier nodes.

    ``made`` is the operations of every node made so far, read or not (at least the count);
    making more than ``budget`` raises :class:`OverBudgetError` (a search can drop a candidate as
    soon as it makes more than the best one did)."""

    def __init__(self) -> None:
        self.size = 0
        self.made = 0
        self.budget = math.inf
        self._edges: list[_Edges] = []
        self._constants: dict[float, int] = {}
        self._num = np.full(64, NONE, dtype=np.int64)  # of a quotient node: its numerator
        self._den = np.full(64, NONE, dtype=np.int64)  # ... and denominator
        self._ops = np.zeros(64, dtype=np.int64)  # of every node: its own operations
        self.inputs = np.zeros(0, dtype=np.int64)
        self.shared: SharedResults | None = None  # see :meth:`share`

    def share(self) -> None:
        """From now on, bodies share what they make (:mod:`.shared_results`); the graph as it is
        now is the prefix they all start from (:meth:`start_body`)."""
        self.shared = SharedResults(self.size, self.made, len(self._edges))

    def start_body(self) -> None:
        """A new body on a shared graph: :attr:`made` is the prefix's again.  Where the last
        body took too few results from earlier ones to pay for keeping them
        (:meth:`.shared_results.SharedResults.pays`), the graph stops sharing: rewound to the
        prefix, it counts each body alone from now on (the same counts, less memory)."""
        assert self.shared is not None
        if not self.shared.pays():
            shared, self.shared = self.shared, None
            self.rewind((shared.floor, shared.floor_made, shared.floor_edges))
            return
        self.made = self.shared.start()

    def add(self, made: int) -> None:
        """``made`` more operations (new nodes, or a result or constant taken again); past
        :attr:`budget`, :class:`OverBudgetError`."""
        self.made += made
        if self.made > self.budget:
            raise OverBudgetError(self.made)

    def nodes(self, cost: np.ndarray | int, count: int | None = None) -> np.ndarray:
        """Ids of new nodes, ``count`` of them or one per entry of ``cost``."""
        n = np.size(cost) if count is None else count
        start, self.size = self.size, self.size + n
        ids = np.arange(start, self.size, dtype=np.int64)
        if self.size > self._num.size:  # grown, the new nodes no quotients (yet)
            self._num, self._den = (_grown(r, 2 * self.size, NONE) for r in (self._num, self._den))
            self._ops = _grown(self._ops, 2 * self.size, 0)
        self._ops[start : self.size] = cost
        self.add(int(cost.sum()) if isinstance(cost, np.ndarray) else int(cost) * n)
        return ids

    def drop(self, ids: np.ndarray) -> None:
        """Nodes known dead at once (the lower triangle a symmetric result drops): their
        operations leave :attr:`made`."""
        self.made -= int(self._ops[np.unique(ids)].sum())

    def quotients(self, ids: np.ndarray, num: np.ndarray, den: np.ndarray) -> None:
        """Nodes ``ids`` are ``num / den`` (``num`` ONE for ``1 / den``)."""
        self._num[ids], self._den[ids] = num, den

    def products(self, x: np.ndarray, y: np.ndarray):
        """CasADi's rewriting of a product ``x y`` of nodes: ``(1/x) x`` is 1; ``x (y/x)`` is
        ``y`` (no operation); ``(1/x) y`` is ``y / x`` (reads x, not its inverse).  Returns
        where the product is 1, where it is a node of its own (and which), and the nodes
        the product reads in place of ``x`` and ``y``; None where no quotient takes part."""
        x0, y0 = np.maximum(x, 0), np.maximum(y, 0)  # no node: read node 0 (an input, or the
        # full rules below run, which mask it)
        dx, dy = self._den[x0], self._den[y0]
        if not (np.count_nonzero(dx >= 0) or np.count_nonzero(dy >= 0)):
            return None
        nx, ny = self._num[x0], self._num[y0]
        valid = (x >= 0) & (y >= 0)
        inv_x, inv_y = valid & (nx == ONE), valid & (ny == ONE)
        one = (inv_x & (dx == y)) | (inv_y & (dy == x))
        from_y = valid & (dy == x) & ~inv_y
        from_x = valid & (dx == y) & ~inv_x & ~from_y
        copy = np.where(from_y, ny, np.where(from_x, nx, NONE))
        src_x = np.where(inv_x & ~one, dx, x)
        src_y = np.where(inv_y & ~one & ~inv_x, dy, y)
        return one, copy, src_x, src_y

    def link(self, dst: np.ndarray, src: np.ndarray) -> None:
        """Edges ``dst[k] ← src[k]``, those from an entry without a node dropped; the arrays
        are kept, not copied, where none is dropped (pass arrays that nothing writes later)."""
        keep = src >= 0
        kept = np.count_nonzero(keep)
        if kept:
            if kept < keep.size:
                dst, src = dst[keep], src[keep]
            self._edges.append((dst, src, int(dst.min()), int(src.max())))

    def constants(self, values: np.ndarray) -> np.ndarray:
        """One node per distinct value, shared by every constant of that value."""
        unique, where = np.unique(values, return_inverse=True)
        ids = np.empty(unique.size, dtype=np.int64)
        for k, v in enumerate(unique.tolist()):
            node = self._constants.get(v)
            new = node is None
            if new:
                node = self._constants[v] = int(self.nodes(1, 1)[0])
            if self.shared is not None:
                self.add(self.shared.constant(v, node, new))
            ids[k] = node
        return ids[where]

    def taken(self, key: tuple) -> tuple[np.ndarray, ...] | None:
        """The arrays of a shared result (:meth:`.shared_results.SharedResults.take`), its
        operations and constants counted in this body."""
        assert self.shared is not None
        result = self.shared.take(key)
        if result is None:
            return None
        self.add(result.made)
        for v in result.constants:
            self.add(self.shared.constant(v, self._constants[v], False))
        return result.arrays

    def edge_count(self) -> int:
        """How many edge blocks the graph holds (a primitive's are those it adds)."""
        return len(self._edges)

    def mark(self) -> tuple[int, int, int]:
        """The graph as it is now, for :meth:`rewind`."""
        return self.size, self.made, len(self._edges)

    def rewind(self, mark: tuple[int, int, int]) -> None:
        """Drop every node made since ``mark`` (one body counted after a shared prefix)."""
        self.size, self.made, edges = mark
        del self._edges[edges:]
        self._constants = {v: n for v, n in self._constants.items() if n < self.size}
        self._num[self.size :] = self._den[self.size :] = NONE

    def reached_cost(self, outputs: np.ndarray) -> int:
        """The operations of the nodes ``outputs`` depend on, less the unread inputs."""
        reach = np.zeros(self.size, dtype=bool)
        reach[outputs[outputs >= 0]] = True
        if self.shared is None:
            blocks = _blocks(self._edges)
        else:
            blocks = self.shared.body_blocks(self._edges, _blocks)
        for dst, src in reversed(blocks):
            reach[src[reach[dst]]] = True
        return int(self._ops[: self.size][reach].sum()) - int((~reach[self.inputs]).sum())


#: Edges ``dst[k] ← src[k]`` with the least ``dst`` and the greatest ``src``.
_Edges = tuple[np.ndarray, np.ndarray, int, int]


def _blocks(edges: list[_Edges]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The edges (in the order they were made) in blocks, each block's sources older than all
    its nodes, so one pass over the blocks, last first, marks everything reachable (nodes are
    numbered in creation order)."""
    blocks: list[list] = []
    for dst, src, lo, hi in edges:
        if blocks and hi < blocks[-1][0]:
            blocks[-1][0] = min(lo, blocks[-1][0])
            blocks[-1][1].append((dst, src))
        else:
            blocks.append([lo, [(dst, src)]])
    return [
        parts[0] if len(parts) == 1 else tuple(map(np.concatenate, zip(*parts, strict=True)))
        for _, parts in blocks
    ]


def _grown(a: np.ndarray, size: int, fill: int) -> np.ndarray:
    grown = np.full(size, fill, dtype=np.int64)
    grown[: a.size] = a
    return grown
