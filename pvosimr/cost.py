"""A CasADi-free estimate of each Delassus algorithm's operation count, for ``algorithm="auto"``.

The paper's cost metric (:func:`pvosimr.symbolic.count_operations`) counts the scalar
operations of the CasADi SX function ``q ↦ G``, with the model's numeric constants folded:
a product by a structural zero costs nothing, one by an exact ±1 no multiplication.  On real
robots that sparsity decides the count (a planar double pendulum's PV-OSIMr is 25 operations,
a dense-shape formula says 200), so the estimate follows the sparsity instead of assuming
dense shapes: every algorithm body of :mod:`pvosimr.algorithms` runs unchanged on
:class:`StructureBackend`, whose matrices hold only each entry's *structure* — a structural
zero, a constant ±1, another constant, or a function of ``q`` — and which adds up, per
primitive, the operations CasADi would create:

- ``A @ B``, per entry: a multiplication per term with a ``q``-dependent factor, unless the
  other factor is ±1; an addition per further ``q``-dependent term, one more when constant
  terms fold into one; nothing when every term is constant;
- ``A ± B``, ``c * A``: one operation per entry where both are nonzero and one varies;
- ``B.inv``, ``B.cholesky``, ``B.solve_lower``: the scalar loops of
  :class:`pvosimr.symbolic.CasadiBackend`, on the same rules;
- ``B.symmetric``/``symmetric_from_upper``: the strictly lower entries of the last product
  are dead code in CasADi (only the upper triangle is read), so their operations are refunded.

The joint kinematics are the backend-generic joint models (:mod:`pvosimr.joint_models`) on the
same backend, the constants folded as :func:`pvosimr.symbolic.fold` does.  What the topology
does not hold — the constraints' placements — is taken generic: a translated, unrotated frame
(``K = [I, −p×]``), the common case of a contact point or tool frame.  Not modelled: CasADi's
constant instructions and the sharing of equal subexpressions built twice.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import pinocchio as pin

from .algorithms import sweeps_for
from .constraints import as_constraint_list
from .joint_models import joint_kinematics
from .kinematics import Kinematics, frame_transforms, model_constants
from .topology import Topology

__all__ = ["ALGORITHM_ORDER", "Structure", "StructureBackend", "cheapest", "estimate_operations"]

#: The algorithms estimated, in the order that breaks ties in :func:`cheapest`.
ALGORITHM_ORDER = ("pv-osimr", "pv-osim", "efpa", "ltl-osim", "naive")

#: Same rule as :func:`pvosimr.symbolic.fold`.
FOLD_TOLERANCE = 1e-12

# An entry's structure.
ZERO, UNIT, CONST, SYM = 0, 1, 2, 3


def _codes(a: Any) -> np.ndarray:
    """Structure codes of a numeric constant, folded as :func:`pvosimr.symbolic.fold`."""
    a = np.array(np.atleast_2d(np.asarray(a, dtype=float)))
    codes = np.full(a.shape, CONST, dtype=np.int8)
    if a.size:
        codes[np.abs(a) <= FOLD_TOLERANCE * np.abs(a).max()] = ZERO
        codes[np.abs(a) == 1.0] = UNIT
    return codes


class _Counter:
    ops = 0.0


class Structure:
    """A matrix of structure codes; arithmetic on it counts CasADi's operations."""

    __array_ufunc__ = None  # numpy defers to the reflected operators

    def __init__(self, codes: np.ndarray, counter: _Counter, own: np.ndarray | None = None):
        self.c = codes
        self.counter = counter
        self.own = own  # per-entry operations of the product that made it (refundable)

    # -- shape and indexing
    @property
    def shape(self) -> tuple[int, int]:
        return self.c.shape

    @property
    def T(self) -> Structure:
        return Structure(self.c.T, self.counter)

    def __getitem__(self, key) -> Structure:
        if not isinstance(key, tuple):
            key = (key, slice(None))
        key = tuple(slice(k, k + 1) if isinstance(k, int | np.integer) else k for k in key)
        return Structure(self.c[key], self.counter)

    def __setitem__(self, key, value) -> None:
        if not isinstance(key, tuple):
            key = (key, slice(None))
        key = tuple(slice(k, k + 1) if isinstance(k, int | np.integer) else k for k in key)
        self.c = self.c.copy()
        self.c[key] = self._lift(value).c

    def _lift(self, x: Any) -> Structure:
        return x if isinstance(x, Structure) else Structure(_codes(x), self.counter)

    # -- arithmetic
    def __matmul__(self, other: Any) -> Structure:
        return _matmul(self, self._lift(other))

    def __rmatmul__(self, other: Any) -> Structure:
        return _matmul(self._lift(other), self)

    def __add__(self, other: Any) -> Structure:
        return _elementwise(self, self._lift(other), add=True)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Structure:
        return _elementwise(self, self._lift(other), add=True)

    def __rsub__(self, other: Any) -> Structure:
        return _elementwise(self._lift(other), self, add=True)

    def __mul__(self, other: Any) -> Structure:
        return _elementwise(self, self._lift(other), add=False)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Structure:
        return _elementwise(self, self._lift(other), add=False)

    def __rtruediv__(self, other: Any) -> Structure:
        return _elementwise(self._lift(other), self, add=False)

    def __neg__(self) -> Structure:
        out = Structure(np.where(self.c == UNIT, UNIT, self.c).astype(np.int8), self.counter)
        self.counter.ops += int(np.sum(self.c == SYM))
        return out


def _broadcast(a: Structure, b: Structure) -> tuple[np.ndarray, np.ndarray]:
    """1×1 operands broadcast (a scalar times a matrix)."""
    return np.broadcast_arrays(a.c, b.c)


def _elementwise(a: Structure, b: Structure, add: bool) -> Structure:
    """``a ± b`` (``add``) or ``a * b``, ``a / b``: one operation where it is not folded."""
    x, y = _broadcast(a, b)
    sym = (x == SYM) | (y == SYM)
    if add:
        both = (x != ZERO) & (y != ZERO)
        ops = sym & both
        codes = np.where(sym, SYM, np.where((x != ZERO) | (y != ZERO), CONST, ZERO))
    else:
        both = (x != ZERO) & (y != ZERO)
        ops = sym & both & (x != UNIT) & (y != UNIT)
        codes = np.where(
            both, np.where(sym, SYM, np.where((x == UNIT) & (y == UNIT), UNIT, CONST)), ZERO
        )
    own = ops.astype(np.int32)
    a.counter.ops += int(own.sum())
    return Structure(codes.astype(np.int8), a.counter, own)


def _matmul(a: Structure, b: Structure) -> Structure:
    """``a @ b`` per entry: the rules of the module docstring."""
    if a.shape == (1, 1) or b.shape == (1, 1):
        return _elementwise(a, b, add=False)
    nz_a, nz_b = (a.c != ZERO).astype(np.int32), (b.c != ZERO).astype(np.int32)
    sym_a, sym_b = (a.c == SYM).astype(np.int32), (b.c == SYM).astype(np.int32)
    unit_a, unit_b = (a.c == UNIT).astype(np.int32), (b.c == UNIT).astype(np.int32)
    terms = nz_a @ nz_b
    folded = (nz_a - sym_a) @ (nz_b - sym_b)  # both factors constant
    symbolic = terms - folded
    free = sym_a @ unit_b + unit_a @ sym_b  # a q-dependent factor times ±1
    own = symbolic - free + np.maximum(symbolic - 1, 0) + ((folded > 0) & (symbolic > 0))
    codes = np.where(symbolic > 0, SYM, np.where(folded > 0, CONST, ZERO)).astype(np.int8)
    a.counter.ops += int(own.sum())
    return Structure(codes, a.counter, own)


class StructureBackend:
    """The backend seam (:class:`pvosimr.backend.Backend`) on :class:`Structure` matrices."""

    name = "structure"

    def __init__(self) -> None:
        self.counter = _Counter()

    def _s(self, codes: np.ndarray) -> Structure:
        return Structure(np.asarray(codes, dtype=np.int8), self.counter)

    def const(self, a: np.ndarray) -> Structure:
        return self._s(_codes(a))

    def column(self, a: np.ndarray) -> Structure:
        return self.const(np.reshape(a, (-1, 1)))

    def symbol(self, n: int) -> Structure:
        return self._s(np.full((n, 1), SYM))

    def zeros(self, rows: int, cols: int) -> Structure:
        return self._s(np.zeros((rows, cols)))

    def eye(self, n: int) -> Structure:
        return self._s(np.eye(n) * UNIT)

    def _unary(self, x: Structure) -> Structure:
        self.counter.ops += int(np.sum(x.c == SYM))
        return self._s(np.where(x.c == SYM, SYM, np.where(x.c == ZERO, ZERO, CONST)))

    sqrt = cos = sin = _unary

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
            d = a[j, j] - (row @ row.T if j else self.zeros(1, 1))
            L[j, j] = self.sqrt(d)
            if j + 1 < n:
                s = a[j + 1 : n, j] - (L[j + 1 : n, 0:j] @ row.T if j else self.zeros(n - j - 1, 1))
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
        return self._s(np.vstack([self._block(b).c for b in blocks]))

    def hstack(self, blocks: list) -> Structure:
        return self._s(np.hstack([self._block(b).c for b in blocks]))

    def _block(self, b: Any) -> Structure:
        return b if isinstance(b, Structure) else self.const(b)

    def hat(self, p: Structure) -> Structure:
        x, y, z = (p.c[k, 0] for k in range(3))
        self.counter.ops += int((x == SYM) + (y == SYM) + (z == SYM))  # −x, −y, −z
        return self._s(np.array([[ZERO, z, y], [z, ZERO, x], [y, x, ZERO]]))

    def blockdiag(self, blocks: list) -> Structure:
        size = sum(b.shape[0] for b in blocks)
        out, start = np.zeros((size, size), dtype=np.int8), 0
        for b in blocks:
            stop = start + b.shape[0]
            out[start:stop, start:stop] = b.c
            start = stop
        return self._s(out)

    def symmetric_from_upper(self, a: Structure) -> Structure:
        if a.own is not None and a.own.shape[0] == a.own.shape[1]:
            self.counter.ops -= int(np.tril(a.own, -1).sum())  # dead: never read
        upper = np.triu(a.c)
        return self._s(upper + np.triu(a.c, 1).T)

    symmetric = symmetric_from_upper

    def permute(self, a: Structure, order: list[int]) -> Structure:
        return self._s(a.c[np.ix_(order, order)])


def _generic_placement_rows(dim: int) -> np.ndarray:
    """``K`` of a translated, unrotated EE frame: the first ``dim`` rows of its
    ``actionInverse``."""
    return pin.SE3(np.eye(3), np.array([0.1, 0.2, 0.3])).actionInverse[:dim]


def structure_kinematics(
    B: StructureBackend, model: pin.Model, topo: Topology, constraint_models=None
) -> Kinematics:
    """:class:`Kinematics` on structure codes: joint models at a symbolic ``q``, the model's
    constants folded; the constraints' own placements when given, else generic ones."""
    X, S = joint_kinematics(B, model, B.symbol(model.nq), topo)
    if constraint_models is not None:
        cms = as_constraint_list(constraint_models)
        H, armature, K = model_constants(model, topo, cms)
        return Kinematics(
            X=X,
            S=S,
            H=[B.const(h) for h in H],
            armature=[None if a is None else B.const(a) for a in armature],
            K={e: B.const(k) for e, k in K.items()},
            world=frame_transforms(B, X, topo, cms),
        )
    H = [B.zeros(6, 6)] + [B.const(model.inertias[i].matrix()) for i in topo.links]
    rotor = np.asarray(model.armature)
    armature: list = [None]
    for i in topo.links:
        a = rotor[topo.model_dofs[i]]
        armature.append(B.const(np.diag(a)) if a.any() else None)
    K = {}
    n_virtual = len(topo.ees) - sum(len(c.rows) for c in topo.couplings)
    for e in topo.ees[:n_virtual]:
        K[e] = B.const(_generic_placement_rows(topo.dim_of[e]))
    rows = [row for c in topo.couplings for _, row in c.rows]
    K.update((e, B.const(row)) for e, row in zip(topo.ees[n_virtual:], rows, strict=True))
    world: dict = {0: B.eye(6)}
    framed = {}
    for e in topo.framed:  # ^{c}X_0 as pvosimr.kinematics.frame_transforms composes it
        path, i = [], topo.link_of[e]
        while i not in world:
            path.append(i)
            i = topo.parent[i]
        for i in reversed(path):
            world[i] = X[i].motion(world[topo.parent[i]])
        framed[e] = (
            B.const(pin.SE3(np.eye(3), np.array([0.1, 0.2, 0.3])).actionInverse)
            @ world[topo.link_of[e]]
        )
    framed.update((key, B.const(np.eye(6) + 0.5)) for key in topo.anchors.values())
    return Kinematics(X=X, S=S, H=H, armature=armature, K=K, world=framed)


_CACHE: weakref.WeakKeyDictionary[Topology, dict] = weakref.WeakKeyDictionary()


def estimate_operations(
    model: pin.Model, topology: Topology, algorithm: str, constraint_models=None
) -> float:
    """The estimated :func:`pvosimr.symbolic.count_operations` of ``algorithm`` for ``model``
    and the constraint structure of ``topology``; ``constraint_models`` (the list the topology
    was built from) gives the constraints' placements, whose sparsity the count depends on.
    Cached per topology while ``model`` and ``constraint_models`` are the same objects."""
    if algorithm not in ALGORITHM_ORDER:
        raise ValueError(
            f"no cost model for algorithm {algorithm!r}; choose one of {ALGORITHM_ORDER}"
        )
    if topology.m == 0:
        return 0.0
    cache = _CACHE.setdefault(topology, {})
    key = (id(model), id(constraint_models), algorithm)
    if key not in cache or cache[key][0] is not model:
        B = StructureBackend()
        kin = structure_kinematics(B, model, topology, constraint_models)
        base = B.counter.ops
        sweeps_for(algorithm)(B, topology, kin)
        cache[key] = (model, float(B.counter.ops), float(base))
    return cache[key][1]


def cheapest(
    model: pin.Model,
    topology: Topology,
    algorithms: tuple[str, ...] = ALGORITHM_ORDER,
    constraint_models=None,
) -> str:
    """The algorithm of ``algorithms`` with the lowest estimate; ties go to the first in
    :data:`ALGORITHM_ORDER`."""
    ranked = sorted(algorithms, key=ALGORITHM_ORDER.index)
    return min(ranked, key=lambda a: estimate_operations(model, topology, a, constraint_models))
