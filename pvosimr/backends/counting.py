"""Operation counts without CasADi: the backend seam on matrices of entry *structure*.

The paper's cost metric (:func:`pvosimr.symbolic.count_operations`) counts the instructions of
the CasADi SX function ``q ↦ G``, less its inputs and outputs, with the model's numeric
constants folded: a product by a structural zero costs nothing, one by +1 no multiplication,
and only what the output G depends on is counted.  On real robots that sparsity decides the
count (a planar double pendulum's PV-OSIMr is a few dozen operations, a dense-shape formula
says hundreds), so :class:`CountingBackend` follows it.  Its matrices (:class:`Structure`) hold
each entry's structure — a structural zero, a constant ±1, another constant, or a function of
``q`` — and, per entry that is not a structural zero or ±1, a node of an expression graph
(:class:`Graph`).  Each matrix primitive adds, in one numpy step, the nodes of its result
entries with the operations CasADi would create for them and their operand nodes:

- ``A @ B``, per entry (terms in CasADi's order k = 0, 1, …): a multiplication per term with a
  ``q``-dependent factor, unless the other factor is ±1; an addition per further term, where
  the constant terms before the first ``q``-dependent one fold into one;
- ``A ± B``, ``A * B``, ``A / B``: one operation where both are nonzero and one varies (none
  for a product by ±1), and ``0 − B`` a negation;
- ``B.inv``, ``B.cholesky``, ``B.solve_lower``: the scalar loops of
  :class:`pvosimr.backends.casadi.CasadiBackend`, on the same rules;
- a constant is a node of its own, one per distinct value (CasADi keeps one per value), and
  the constant a fold produces is a new one; constants are folded as
  :func:`pvosimr.backends.casadi.fold` folds them (:data:`~.protocol.FOLD_TOLERANCE`).

The count is then taken as CasADi takes it (:meth:`CountingBackend.operations`): a reverse pass
from the entries of G marks the nodes G reads (the dead code is what the sweeps compute and G
never reads: the lower triangles of symmetric products, inertia folded into a fixed root,
kinematics of unconstrained branches), and the count is the operations and constants of the
marked nodes, less the entries of ``q`` that G does not read (CasADi has no instruction for
them but subtracts all of ``q``).  Not modelled: CasADi's rewriting of sums with negated terms
and the identities it spots between equal subexpressions.  :mod:`pvosimr.cost` runs the
algorithms on this backend.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from .graph import NONE, ONE, Graph, OverBudgetError
from .numpy import blockdiag_by_assignment
from .protocol import folded

__all__ = ["CountingBackend", "Graph", "OverBudgetError", "Structure", "constant"]

# An entry's structure.
ZERO, UNIT, CONST, SYM = 0, 1, 2, 3


# The matrices here are small (6 × 6 at most, mostly): a numpy call's overhead is the cost, so
# the hot paths test masks with ``np.count_nonzero`` (a fraction of ``.any()``'s) and make
# arrays with ``np.empty`` and ``fill``.


def _nones(shape) -> np.ndarray:
    """Node ids ``NONE`` of that shape."""
    ids = np.empty(shape, dtype=np.int64)
    ids.fill(NONE)
    return ids


def _kinds(v: np.ndarray) -> np.ndarray:
    """Structure codes of values (NaN: varies with ``q``), as CasADi tells constants apart:
    only an exact 0 vanishes and only an exact ±1 multiplies for free."""
    codes = np.empty(v.shape, dtype=np.int8)
    codes.fill(CONST)
    codes[np.isnan(v)] = SYM
    codes[v == 0.0] = ZERO
    codes[np.abs(v) == 1.0] = UNIT
    return codes


def _key(key) -> tuple:
    """A 2-D index that keeps both dimensions."""
    if not isinstance(key, tuple):
        key = (key, slice(None))
    return tuple(slice(k, k + 1) if isinstance(k, int | np.integer) else k for k in key)


def constant(g: Graph, a: Any) -> Structure:
    """A numeric constant: one node per distinct value other than 0 and ±1."""
    v = folded(a)
    return _with_constants(g, v, _nones(v.shape))


def _with_constants(g: Graph, v: np.ndarray, ids: np.ndarray) -> Structure:
    """``v`` with the node of its value at every constant entry other than 0 and ±1."""
    codes = _kinds(v)
    mask = codes == CONST
    if np.count_nonzero(mask):
        ids[mask] = g.constants(v[mask])
    ids[codes < CONST] = NONE  # a structural zero or ±1: no node
    return Structure(v, ids, g, codes)


def _operation(g: Graph, ids: np.ndarray, mask: np.ndarray, cost, *operands: np.ndarray):
    """New nodes at the entries of ``mask`` costing ``cost`` each, reading ``operands``."""
    n = int(np.count_nonzero(mask))
    if n:
        ids[mask] = new = g.nodes(cost[mask] if isinstance(cost, np.ndarray) else cost, n)
        for src in operands:
            g.link(new, src[mask])


def _shared(f: Callable[..., Structure]) -> Callable[..., Structure]:
    """The primitive ``f``, whose result a graph that shares results (:mod:`.shared_results`) takes
    from an earlier body where it can (the same primitive, operands of the same values and
    nodes) and otherwise keeps."""

    def primitive(*args: Any) -> Structure:
        g: Graph = args[0].g
        if g.shared is None:
            return f(*args)
        key = (f, *((x.v.shape, x.v.tobytes(), x.n.tobytes()) if isinstance(x, Structure) else x
                    for x in args))  # fmt: skip
        found = g.taken(key)
        if found is not None:  # arrays kept, never written: a Structure copies before writing
            v, n, c = found
            return Structure(v, n, g, c)
        g.shared.begin(g.made, g.edge_count())
        out = f(*args)
        g.shared.keep(key, (out.v, out.n, out.c), g.made, g.edge_count())
        return out

    return primitive


@_shared
def _unary(x: Structure, f) -> Structure:
    """``f(x)`` entrywise (−, sqrt, cos, sin): one operation per varying entry; constants fold."""
    with np.errstate(all="ignore"):
        v = f(x.v)
    ids = _nones(x.shape)
    _operation(x.g, ids, x.c == SYM, 1, x.n)
    return _with_constants(x.g, v, ids)


def _broadcast(a: Structure, b: Structure):
    """1×1 operands broadcast (a scalar times a matrix); other shapes must agree, as CasADi's."""
    if a.shape == b.shape:
        return a.c, b.c, a.v, b.v, a.n, b.n
    if a.shape == (1, 1):
        return _spread(a.c, b.shape), b.c, _spread(a.v, b.shape), b.v, _spread(a.n, b.shape), b.n
    if b.shape == (1, 1):
        return a.c, _spread(b.c, a.shape), a.v, _spread(b.v, a.shape), a.n, _spread(b.n, a.shape)
    raise ValueError(f"dimension mismatch: {a.shape} and {b.shape}")


def _spread(x: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """The one entry of a 1×1 ``x`` at every entry of ``shape``."""
    out = np.empty(shape, dtype=x.dtype)
    out.fill(x[0, 0])
    return out


def _sum(a: Structure, b: Structure, subtract: bool) -> Structure:
    """``a ± b``: an operation where both are nonzero and one varies; ``0 − b`` a negation."""
    x, y, vx, vy, nx, ny = _broadcast(a, b)
    v = vx - vy if subtract else vx + vy
    if subtract:  # x - x is 0 for CasADi
        v[(x == SYM) & (nx == ny)] = 0.0
    ids = np.where(x == ZERO, ny, nx).astype(np.int64)
    sym = np.isnan(v)
    _operation(a.g, ids, sym & (x != ZERO) & (y != ZERO), 1, nx, ny)
    if subtract:
        _operation(a.g, ids, (x == ZERO) & (y == SYM), 1, ny)
    return _with_constants(a.g, v, ids)


def _product(a: Structure, b: Structure, divide: bool) -> Structure:
    """``a * b`` or ``a / b``: an operation where both are nonzero and one varies, unless the
    other is ±1 (``x / ±1``, ``±1 * x``) or CasADi rewrites it (:meth:`Graph.products`)."""
    g = a.g
    x, y, vx, vy, nx, ny = _broadcast(a, b)
    with np.errstate(all="ignore"):
        v = vx / vy if divide else vx * vy
    both = (x != ZERO) & (y != ZERO)
    v[~both] = 0.0
    if divide:
        one, copy, src_x, src_y = (nx == ny) & (x == SYM), _nones(v.shape), nx, ny
    else:
        rules = g.products(nx, ny)
        one, copy, src_x, src_y = rules or (False, _nones(v.shape), nx, ny)
    v[one] = 1.0
    sym = np.isnan(v)
    ids = np.where(sym & (y == UNIT), nx, np.where(sym & (x == UNIT) & (not divide), ny, copy))
    work = sym & (ids == NONE)
    _operation(g, ids, work, 1, src_x, src_y)
    quotient = work & (divide | (src_x != nx) | (src_y != ny))
    if np.count_nonzero(quotient):  # x / y, or (1/x) y rewritten as y / x
        num = np.where(vx == 1.0, ONE, src_x) if divide else np.where(src_x != nx, src_y, src_x)
        den = src_y if divide else np.where(src_x != nx, src_x, src_y)
        g.quotients(ids[quotient], num[quotient], den[quotient])
    return _with_constants(g, v, ids)


def _matmul(a: Structure, b: Structure) -> Structure:
    """``a @ b``: the rules of the module docstring, on the terms ``a[i, k] b[k, j]``."""
    if a.shape == (1, 1) or b.shape == (1, 1):
        return _product(a, b, divide=False)
    g = a.g
    ca, cb = a.c[:, :, None], b.c[None]
    terms = (ca != ZERO) & (cb != ZERO)  # (i, k, j)
    varying = terms & ((ca == SYM) | (cb == SYM))
    rules = g.products(a.n[:, :, None], b.n[None])
    if rules is not None:
        one = rules[0]
        one &= varying
        varying &= ~one
    fixed = terms & ~varying
    products = a.v[:, :, None] * b.v[None]
    if rules is not None:
        products[one] = 1.0
    products[~fixed] = 0.0
    v = products.sum(1)  # in the order of k, as CasADi adds them
    out = np.logical_or.reduce(varying, axis=1)
    ids = _nones(v.shape)
    if np.count_nonzero(out):
        v[out] = np.nan
        _matmul_nodes(a, b, ids, out, varying, fixed, products, rules)
    return _with_constants(g, v, ids)


def _matmul_nodes(
    a: Structure,
    b: Structure,
    ids: np.ndarray,
    out: np.ndarray,
    varying: np.ndarray,
    fixed: np.ndarray,
    products: np.ndarray,
    rules: tuple | None,
) -> None:
    """The nodes of the entries of ``a @ b`` that vary (``out``), into ``ids``: their
    operations and edges, as :func:`_matmul` sorted its terms."""
    g = a.g
    free = varying & ((a.c == UNIT)[:, :, None] | (b.c == UNIT)[None])  # no multiplication
    if rules is not None:
        _, copy, src_a, src_b = rules
        free |= varying & (copy != NONE)
        # a term that is a node itself: ±1 · x, x (y/x)
        term = np.where((a.c == SYM)[:, :, None], a.n[:, :, None], b.n[None])
        term = np.where(copy != NONE, copy, term)
        src_a = np.where(copy != NONE, term, src_a)
        src_b = np.where(copy != NONE, NONE, src_b)
    first = np.argmax(varying, axis=1)
    count = partial(np.add.reduce, axis=1)
    cost = 2 * count(varying) - count(free) - 1  # a product per term not free, then the sums
    constants = np.count_nonzero(fixed)  # constant terms: folded before ``first``, added after
    if constants:
        before = fixed & ~np.logical_or.accumulate(varying, axis=1)
        leading = np.where(before, products, 0.0).sum(1)
        trailing = fixed & ~before
        cost += count(trailing) + (leading != 0.0)
    i, j = np.nonzero(out & (cost == 0))  # that term alone
    if i.size:
        k = first[i, j]
        if rules is None:
            ids[i, j] = np.where(a.c[i, k] == SYM, a.n[i, k], b.n[k, j])
        else:
            ids[i, j] = term[i, k, j]
    work = out & (cost > 0)
    ids[work] = g.nodes(cost[work])
    i, k, j = np.nonzero(varying & work[:, None, :])
    dst = ids[i, j]
    if rules is None:
        g.link(dst, a.n[i, k])
        g.link(dst, b.n[k, j])
    else:
        g.link(dst, src_a[i, k, j])
        g.link(dst, src_b[i, k, j])
    if not constants:
        return
    lead = work & (leading != 0.0) & (np.abs(leading) != 1.0)
    if np.count_nonzero(lead):
        g.link(ids[lead], g.constants(leading[lead]))
    i, k, j = np.nonzero(trailing & work[:, None, :])
    if i.size:
        g.link(ids[i, j], g.constants(products[i, k, j]))


def _operators(f: Callable[[Structure, Structure], Structure]) -> tuple[Callable, Callable]:
    """``x ∘ y`` and ``y ∘ x`` for a binary ``f``, the other operand lifted to a
    :class:`Structure` (a number or a numeric array)."""

    f = _shared(f)

    def left(self: Structure, other: Any) -> Structure:
        return f(self, self._lift(other))

    def right(self: Structure, other: Any) -> Structure:
        return f(self._lift(other), self)

    return left, right


class Structure:
    """A matrix of values ``v`` (NaN where the entry varies with ``q``), their structure codes
    ``c`` and node ids ``n``; arithmetic on it adds the operations CasADi would create, and
    folds the constants CasADi would fold, in the graph ``g``."""

    __array_ufunc__ = None  # numpy defers to the reflected operators

    def __init__(self, v: np.ndarray, n: np.ndarray, g: Graph, c: np.ndarray | None = None):
        self.v, self.n, self.g = v, n, g
        self.c = _kinds(v) if c is None else c
        self._own = False  # written in place once it holds copies of its own

    @property
    def shape(self) -> tuple[int, int]:
        return self.v.shape

    @property
    def a(self) -> np.ndarray:
        """The numbers of a constant, ones (the densest pattern) where it varies."""
        return np.where(self.c == SYM, 1.0, self.v)

    @property
    def T(self) -> Structure:
        return Structure(self.v.T, self.n.T, self.g, self.c.T)

    def __getitem__(self, key) -> Structure:
        key = _key(key)
        return Structure(self.v[key], self.n[key], self.g, self.c[key])

    def __setitem__(self, key, value) -> None:
        key, value = _key(key), self._lift(value)
        if not self._own:
            self.v, self.n, self.c = self.v.copy(), self.n.copy(), self.c.copy()
            self._own = True
        self.v[key], self.n[key], self.c[key] = value.v, value.n, value.c

    def _lift(self, x: Any) -> Structure:
        return x if isinstance(x, Structure) else constant(self.g, x)

    __matmul__, __rmatmul__ = _operators(_matmul)
    __add__, _ = _operators(partial(_sum, subtract=False))
    __radd__ = __add__
    __sub__, __rsub__ = _operators(partial(_sum, subtract=True))
    __mul__, _ = _operators(partial(_product, divide=False))
    __rmul__ = __mul__
    __truediv__, __rtruediv__ = _operators(partial(_product, divide=True))

    def __neg__(self) -> Structure:
        return _unary(self, np.negative)


class CountingBackend:
    """The backend seam (:class:`~.protocol.Backend`) on :class:`Structure` matrices: every
    primitive adds to :attr:`graph` what CasADi would; :meth:`operations` counts it."""

    name = "counting"

    def __init__(self) -> None:
        self.graph = Graph()

    def _s(self, v: np.ndarray, ids: np.ndarray | None = None, c=None) -> Structure:
        v = np.asarray(v, dtype=float)
        if ids is None:
            ids = np.full(v.shape, NONE, dtype=np.int64)
        return Structure(v, ids, self.graph, c)

    def const(self, a: np.ndarray) -> Structure:
        return constant(self.graph, a)

    def column(self, a: np.ndarray) -> Structure:
        return self.const(np.reshape(a, (-1, 1)))

    def operations(self, G: Structure) -> int:
        """What CasADi counts of a function returning ``G`` (dense): the operations and
        constants G reads (:meth:`Graph.reached_cost`), and the constant 0 its structural
        zeros read."""
        return self.graph.reached_cost(G.n.ravel()) + int((G.c == ZERO).any())

    def symbol(self, n: int) -> Structure:
        """``q``: inputs, which cost nothing."""
        self.graph.inputs = ids = self.graph.nodes(0, n)
        return self._s(np.full((n, 1), np.nan), ids[:, None])

    def zeros(self, rows: int, cols: int) -> Structure:
        return self._s(np.zeros((rows, cols)))

    def eye(self, n: int) -> Structure:
        return self._s(np.eye(n))

    def sqrt(self, x: Structure) -> Structure:
        return _unary(x, np.sqrt)

    def cos(self, x: Structure) -> Structure:
        return _unary(x, np.cos)

    def sin(self, x: Structure) -> Structure:
        return _unary(x, np.sin)

    def inv(self, a: Structure) -> Structure:
        if a.shape == (1, 1):
            return 1 / a
        lower_inv = self.solve_lower(self.cholesky(a), self.eye(a.shape[0]))
        return self.symmetric_from_upper(lower_inv.T @ lower_inv)

    def cholesky(self, a: Structure) -> Structure:
        n = a.shape[0]
        L = self.zeros(n, n)
        for j in range(n):
            row = L[j, 0:j]
            d = a[j, j] - row @ row.T if j else a[j, j]
            L[j, j] = self.sqrt(d)
            if j + 1 < n:
                s = a[j + 1 : n, j] - L[j + 1 : n, 0:j] @ row.T if j else a[j + 1 : n, j]
                L[j + 1 : n, j] = s / L[j, j]
        return L

    def solve_lower(self, lower: Structure, b: Structure) -> Structure:
        n = lower.shape[0]
        x = self.zeros(n, b.shape[1])
        for i in range(n):
            acc = b[i, :]
            if i:
                acc = acc - lower[i, 0:i] @ x[0:i, :]
            x[i, :] = acc / lower[i, i]
        return x

    def vstack(self, blocks: list) -> Structure:
        return self._stack(np.vstack, blocks)

    def hstack(self, blocks: list) -> Structure:
        return self._stack(np.hstack, blocks)

    def _stack(self, stack, blocks: list) -> Structure:
        blocks = [b if isinstance(b, Structure) else self.const(b) for b in blocks]
        return self._s(stack([b.v for b in blocks]), stack([b.n for b in blocks]))

    def hat(self, p: Structure) -> Structure:
        m = -p  # the negated entries, as CasADi's hat writes them
        zero = self.zeros(1, 1)
        return self.vstack(
            [
                self.hstack([zero, m[2, 0], p[1, 0]]),
                self.hstack([p[2, 0], zero, m[0, 0]]),
                self.hstack([m[1, 0], p[0, 0], zero]),
            ]
        )

    def blockdiag(self, blocks: list) -> Structure:
        return blockdiag_by_assignment(self, blocks)

    def symmetric_from_upper(self, a: Structure) -> Structure:
        """The strictly lower entries of ``a`` are never read: the reverse pass drops them."""
        upper = np.triu(np.ones(a.shape, dtype=bool))
        return Structure(
            np.where(upper, a.v, a.v.T),
            np.where(upper, a.n, a.n.T),
            self.graph,
            np.where(upper, a.c, a.c.T),
        )

    def symmetric(self, a: Structure) -> Structure:
        """:meth:`symmetric_from_upper`; the strictly lower entries made apart from the upper
        ones leave :attr:`Graph.made` at once."""
        lower = np.tril(np.ones(a.shape, dtype=bool), -1) & (a.n >= 0) & (a.n != a.n.T)
        if lower.any():
            self.graph.drop(a.n[lower])
        return self.symmetric_from_upper(a)

    def permute(self, a: Structure, order: list[int]) -> Structure:
        index = np.ix_(order, order)
        return Structure(a.v[index], a.n[index], self.graph, a.c[index])
