"""The backend seam on JAX arrays: one configuration, traced by ``jax.jit``, batched by ``vmap``.

The algorithm bodies of :mod:`pvosimr.algorithms` assign into matrices (``G[ri, rj] = …``,
``M[k, k] = …``); JAX arrays are immutable, so every matrix is a :class:`JaxMatrix`, a small
mutable holder whose ``__setitem__`` rebinds it to ``a.at[key].set(value)`` (value semantics,
as CasADi's SX slices have).  Under ``jax.jit`` the sweep is traced once, as matrix operations
(6×6 products, slices, concatenations), never as scalar instructions; ``jax.vmap`` adds the
batch axis.

Numeric constants (inertias, placements, subspaces, ``eye``) stay numpy float64 until they
meet a traced operand, where they take its dtype: float32 or float64 (JAX's x64 mode), so
products of constants fold in numpy.  Nothing is checked inside a traced function: a pivot
``D_i`` that is not positive definite gives non-finite entries (JAX's Cholesky gives NaN).
Only :mod:`pvosimr.jax.xla` imports this module.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from ..extras import require
from .numpy import NUMPY, blockdiag_by_assignment, upper_mirror
from .protocol import arithmetic

require("pvosimr.backends.jax", "jax")

import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

__all__ = ["JaxBackend", "JaxMatrix"]


def _raw(x: Any) -> Any:
    return x.a if type(x) is JaxMatrix else x


def _numeric(x: Any) -> bool:
    """A constant of the host: a numpy array or a plain number."""
    return isinstance(x, (np.ndarray, int, float, np.number))


def _pair(x: Any, y: Any) -> tuple[Any, Any]:
    """The raw operands, a numpy constant beside a JAX array cast to the JAX array's dtype
    (numpy's float64 would otherwise promote a float32 computation)."""
    x, y = _raw(x), _raw(y)
    if isinstance(x, np.ndarray) and not _numeric(y):
        x = jnp.asarray(x, y.dtype)
    elif isinstance(y, np.ndarray) and not _numeric(x):
        y = jnp.asarray(y, x.dtype)
    return x, y


def _product(x: Any, y: Any) -> Any:
    """``x @ y`` at full precision: a product of JAX arrays asks XLA for
    ``Precision.HIGHEST``, since its default lets a GPU multiply float32 in TF32 (a 10-bit
    mantissa, far coarser than float32's 23); two numpy constants multiply in numpy."""
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
        return x @ y
    return jnp.matmul(x, y, precision=lax.Precision.HIGHEST)


def _keep(k: Any) -> Any:
    """An integer index as a length-1 slice, so that a matrix's entries stay 1×1 matrices."""
    if isinstance(k, (int, np.integer)):
        k = int(k)
        return slice(k, k + 1) if k != -1 else slice(-1, None)
    return k


def _key(key: Any) -> tuple:
    if not isinstance(key, tuple):
        key = (key, slice(None))  # one index selects rows (``q[k]`` of a column)
    rows, cols = key
    return (_keep(rows), _keep(cols))


def _operators(f: Callable[[Any, Any], Any]) -> tuple[Callable, Callable]:
    """``x ∘ y`` and ``y ∘ x`` of a matrix ``x`` for a binary ``f`` on the raw operands, a
    numpy constant cast to the JAX operand's dtype (:func:`_pair`)."""

    def left(x: JaxMatrix, y: Any) -> JaxMatrix:
        return JaxMatrix(f(*_pair(x, y)))

    def right(x: JaxMatrix, y: Any) -> JaxMatrix:
        return JaxMatrix(f(*_pair(y, x)))

    return left, right


@arithmetic(_product, _operators)
class JaxMatrix:
    """A 2-D matrix on JAX (or, while it is a constant, numpy) that the algorithms use as the
    backend's matrix: ``@ + - * /`` with broadcasting, ``.T``, ``m[i:j, k:l]`` reads and
    assignments (an integer index keeps its axis: ``m[k, k]`` is 1×1), assignment rebinding
    ``a`` to ``a.at[key].set(value)``.  ``__array_ufunc__ = None``: ``ndarray @ JaxMatrix``
    defers to these methods."""

    __slots__ = ("a",)
    __array_ufunc__ = None

    def __init__(self, a: Any) -> None:
        self.a = a

    @property
    def T(self) -> JaxMatrix:
        return JaxMatrix(self.a.T)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.a.shape)

    def __getitem__(self, key: Any) -> JaxMatrix:
        return JaxMatrix(self.a[_key(key)])

    def __setitem__(self, key: Any, value: Any) -> None:
        value = _raw(value)
        if isinstance(self.a, np.ndarray):
            if _numeric(value):
                self.a = self.a.copy()  # a constant may be shared (``eye``, an inertia)
                self.a[_key(key)] = value
                return
            self.a = jnp.asarray(self.a, value.dtype)
        self.a = self.a.at[_key(key)].set(jnp.asarray(value, self.a.dtype))

    def __neg__(self) -> JaxMatrix:
        return JaxMatrix(-self.a)

    def __repr__(self) -> str:
        return f"JaxMatrix(shape={self.shape}, dtype={self.a.dtype})"


def _apply(f_numpy: Any, f_jax: Any, x: Any) -> Any:
    """``f`` on a matrix: numpy's on a constant, JAX's otherwise; plain numbers stay plain."""
    raw = _raw(x)
    if isinstance(raw, np.ndarray):
        return JaxMatrix(f_numpy(raw))
    if _numeric(raw):
        return f_numpy(raw)
    return JaxMatrix(f_jax(raw))


class JaxBackend:
    """The backend seam on JAX: single-configuration matrices (:class:`JaxMatrix`) in ``dtype``
    (float32 or float64); batching is ``jax.vmap``'s.  Uses the protocol's generic hooks."""

    name = "jax"

    def __init__(self, dtype: Any = np.float64) -> None:
        self.dtype = np.dtype(dtype)

    def const(self, a: np.ndarray) -> JaxMatrix:
        return JaxMatrix(np.array(np.atleast_2d(a), dtype=np.float64))

    def zeros(self, rows: int, cols: int) -> JaxMatrix:
        return JaxMatrix(jnp.zeros((rows, cols), self.dtype))

    def eye(self, n: int) -> JaxMatrix:
        return JaxMatrix(np.eye(n))

    sqrt = staticmethod(partial(_apply, np.sqrt, lax.sqrt))
    cos = staticmethod(partial(_apply, np.cos, lax.cos))
    sin = staticmethod(partial(_apply, np.sin, lax.sin))

    def column(self, a: np.ndarray) -> JaxMatrix:
        return JaxMatrix(NUMPY.column(a))

    def _traced(self, a: Any) -> Any:
        raw = _raw(a)
        return raw if not _numeric(raw) else jnp.asarray(raw, self.dtype)

    def inv(self, a: Any) -> Any:
        """``L⁻ᵀ L⁻¹`` from the Cholesky factor, mirrored from its upper triangle (exactly
        symmetric); NaN where ``a`` is not positive definite."""
        if isinstance(_raw(a), np.ndarray):
            return JaxMatrix(NUMPY.inv(_raw(a)))
        if a.shape == (1, 1):
            return 1.0 / a
        lower = jnp.linalg.cholesky(self._traced(a))
        eye = jnp.eye(lower.shape[0], dtype=lower.dtype)
        lower_inv = lax.linalg.triangular_solve(lower, eye, left_side=True, lower=True)
        return self.symmetric_from_upper(JaxMatrix(_product(lower_inv.T, lower_inv)))

    def cholesky(self, a: Any) -> JaxMatrix:
        return JaxMatrix(jnp.linalg.cholesky(self._traced(a)))

    def solve_lower(self, lower: Any, b: Any) -> JaxMatrix:
        L = self._traced(lower)
        rhs = jnp.asarray(_raw(b), L.dtype)
        return JaxMatrix(lax.linalg.triangular_solve(L, rhs, left_side=True, lower=True))

    def _stack(self, blocks: list, axis: int) -> JaxMatrix:
        raws = [np.atleast_2d(b) if _numeric(b) else _raw(b) for b in blocks]
        if all(isinstance(r, np.ndarray) for r in raws):
            return JaxMatrix(np.concatenate(raws, axis=axis).astype(np.float64))
        dtype = next(r.dtype for r in raws if not isinstance(r, np.ndarray))
        return JaxMatrix(jnp.concatenate([jnp.asarray(r, dtype) for r in raws], axis=axis))

    def vstack(self, blocks: list) -> JaxMatrix:
        return self._stack(blocks, 0)

    def hstack(self, blocks: list) -> JaxMatrix:
        return self._stack(blocks, 1)

    def hat(self, p: Any) -> JaxMatrix:
        raw = _raw(p)
        if isinstance(raw, np.ndarray):
            return JaxMatrix(NUMPY.hat(raw))
        x, y, z = raw[0, 0], raw[1, 0], raw[2, 0]
        zero = jnp.zeros_like(x)
        return JaxMatrix(jnp.stack([zero, -z, y, z, zero, -x, -y, x, zero]).reshape(3, 3))

    def blockdiag(self, blocks: list) -> JaxMatrix:
        return blockdiag_by_assignment(self, blocks)

    def symmetric_from_upper(self, a: Any) -> JaxMatrix:
        """One gather of the upper triangle into both (never an average)."""
        raw = _raw(a)
        n = raw.shape[0]
        if isinstance(raw, np.ndarray):
            return JaxMatrix(NUMPY.symmetric_from_upper(raw))
        # The index as a JAX array of a stated dtype: JAX keeps its conversion of a numpy
        # constant per object, so the kept numpy index, first converted with x64 off (int32),
        # would come back int32 in a trace with x64 on and fail to add to int64 sizes.
        index = jnp.asarray(upper_mirror(n), dtype=jnp.int32)
        return JaxMatrix(raw.reshape(n * n)[index].reshape(n, n))

    symmetric = symmetric_from_upper

    def permute(self, a: Any, order: list[int]) -> JaxMatrix:
        idx = np.asarray(order, dtype=int)
        return JaxMatrix(_raw(a)[idx[:, None], idx])
