"""The batched numpy backend: many configurations at once, each matrix a :class:`MatrixStack`.

A :class:`MatrixStack` holds ``(batch, rows, cols)`` and behaves as one ``rows × cols`` matrix
under the operators the algorithms use, so the algorithm bodies of :mod:`pvosimr.algorithms`
run unchanged on :class:`BatchedNumpyBackend`; each matrix operation is one numpy call for the
whole batch.  Constants (``S``, inertias, ``K``, ``eye``) stay plain 2-D arrays and broadcast.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from .numpy import NUMPY, blockdiag_by_assignment, upper_mirror
from .protocol import arithmetic

__all__ = ["BatchedNumpyBackend", "MatrixStack", "inv_spd", "stack_matmul"]


def _raw(x: Any) -> Any:
    return x.a if type(x) is MatrixStack else x


def _keep(k: Any, n: int) -> Any:
    """An integer index as a length-1 slice, so that a stack's entries stay matrices."""
    if isinstance(k, (int, np.integer)):
        k = int(k) + n if k < 0 else int(k)
        return slice(k, k + 1)
    return k


def _unit(v: np.ndarray) -> int | None:
    """The index ``k`` if the constant vector ``v`` (k×1 or 1×k) is the unit vector ``e_k``."""
    nz = np.flatnonzero(v)
    return int(nz[0]) if nz.size == 1 and v.flat[nz[0]] == 1.0 else None


def _placed(n: int, shape: tuple[int, int], index: tuple, value: np.ndarray) -> np.ndarray:
    out = np.zeros((n, *shape))
    out[index] = value
    return out


def stack_matmul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x @ y`` with a stack on either side (or both), broadcast over the stack.

    numpy pays per matrix of the stack, so each shape gets its cheapest form (measured on
    1024 6×6 matrices): a product with a constant unit vector (the motion subspace of an
    aligned 1-DoF joint) picks or places one row or column; a stack times another constant
    is one 2-D product on the stacked rows (BLAS); rank-1 products are broadcast
    multiplications or ``einsum``, as are matrix–vector products, which ``np.matmul`` does
    matrix by matrix.  Every result is a new array, as for numpy's ``@``.
    """
    if y.ndim == 2:
        if x.ndim == 2:
            return x @ y
        n, r, k = x.shape  # stack @ constant
        if y.shape[1] == 1 and (j := _unit(y)) is not None:  # column j of x
            return x[:, :, j : j + 1].copy()
        if k == 1 and y.shape[0] == 1 and (j := _unit(y)) is not None:  # x as column j
            return _placed(n, (r, y.shape[1]), (slice(None), slice(None), j), x[:, :, 0])
        return (x.reshape(n * r, k) @ y).reshape(n, r, y.shape[1])
    if x.ndim == 2:  # constant @ stack
        if x.shape[0] == 1 and (i := _unit(x)) is not None:  # row i of y
            return y[:, i : i + 1, :].copy()
        if x.shape[1] == 1 and y.shape[1] == 1 and (i := _unit(x)) is not None:  # y as row i
            return _placed(y.shape[0], (x.shape[0], y.shape[2]), (slice(None), i), y[:, 0, :])
        return np.einsum("ij,njk->nik", x, y) if x.shape[0] == 1 else np.matmul(x, y)
    r, k, c = x.shape[1], x.shape[2], y.shape[2]
    if k == 1:  # a rank-1 product: scalar times matrix, or an outer product
        return x * y if r == 1 or c == 1 else np.einsum("nik,nkj->nij", x, y)
    if c == 1:  # matrix times vector
        return np.einsum("nij,njk->nik", x, y)
    return np.matmul(x, y)


def _operators(f: Callable[[Any, Any], np.ndarray]) -> tuple[Callable, Callable]:
    """``x ∘ y`` and ``y ∘ x`` of a stack ``x`` for a binary ``f`` on arrays (``y`` a stack or
    a plain operand, which broadcasts; a reflected ``y`` is never a stack)."""

    def left(x: MatrixStack, y: Any) -> MatrixStack:
        return MatrixStack(f(x.a, _raw(y)))

    def right(x: MatrixStack, y: Any) -> MatrixStack:
        return MatrixStack(f(y, x.a))

    return left, right


@arithmetic(stack_matmul, _operators)
class MatrixStack:
    """A stack of equally shaped matrices, ``a`` of shape ``(batch, rows, cols)``, that the
    algorithms use as one ``rows × cols`` matrix.

    ``@ + - * /`` broadcast over the stack (a plain 2-D ndarray operand is the same matrix for
    every configuration), ``.T`` swaps the last two axes, and ``m[i:j, k:l]`` reads or
    assigns on the last two axes; an integer index keeps its axis (``m[k, k]`` is a stack of
    1×1 matrices, the backend's scalars) and a single index selects rows (``q[k]`` of a
    column).  ``__array_ufunc__ = None`` makes numpy's operators defer to these methods, so
    ``ndarray @ MatrixStack`` is a ``MatrixStack`` too.
    """

    __slots__ = ("a",)
    __array_ufunc__ = None

    def __init__(self, a: np.ndarray) -> None:
        self.a = a

    @property
    def T(self) -> MatrixStack:
        return MatrixStack(self.a.swapaxes(-1, -2))

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of each matrix of the stack."""
        return self.a.shape[1:]

    def _key(self, key: Any) -> tuple:
        if not isinstance(key, tuple):
            key = (key, slice(None))
        rows, cols = key
        return (slice(None), _keep(rows, self.a.shape[1]), _keep(cols, self.a.shape[2]))

    def __getitem__(self, key: Any) -> MatrixStack:
        return MatrixStack(self.a[self._key(key)])

    def __setitem__(self, key: Any, value: Any) -> None:
        self.a[self._key(key)] = _raw(value)

    def __neg__(self) -> MatrixStack:
        return MatrixStack(-self.a)

    def __repr__(self) -> str:
        return f"MatrixStack(batch={self.a.shape[0]}, shape={self.shape})"


def _apply(f, x: Any) -> Any:
    return MatrixStack(f(x.a)) if type(x) is MatrixStack else f(x)


def inv_spd(x: np.ndarray) -> np.ndarray:
    """Inverses of a stack of small symmetric positive-definite matrices, ``L⁻ᵀ L⁻¹``.

    Written entry by entry on vectors that run over the stack (numpy then pays per entry of
    the d×d matrix, not per matrix: about 4× faster than ``np.linalg.inv`` for 1024 6×6).
    Cholesky needs no pivoting on SPD matrices; a singular one gives non-finite entries in
    its own slice only, never an exception for the whole stack.  The result is symmetric.
    """
    d = x.shape[-1]
    a = x.transpose(1, 2, 0)  # a[i, j] runs over the stack
    L: list[list] = [[None] * d for _ in range(d)]
    for j in range(d):
        s = a[j, j].copy()
        for k in range(j):
            s -= L[j][k] * L[j][k]
        L[j][j] = np.sqrt(s)
        for i in range(j + 1, d):
            s = a[i, j].copy()
            for k in range(j):
                s -= L[i][k] * L[j][k]
            L[i][j] = s / L[j][j]
    Li: list[list] = [[None] * d for _ in range(d)]  # L⁻¹, lower triangular
    for j in range(d):
        Li[j][j] = 1.0 / L[j][j]
        for i in range(j + 1, d):
            s = L[i][j] * Li[j][j]
            for k in range(j + 1, i):
                s = s + L[i][k] * Li[k][j]
            Li[i][j] = -s / L[i][i]
    out = np.empty((x.shape[0], d, d))
    for i in range(d):
        for j in range(i, d):  # (L⁻ᵀ L⁻¹)[i, j] = Σ_k≥j L⁻¹[k, i] L⁻¹[k, j]
            s = Li[j][i] * Li[j][j]
            for k in range(j + 1, d):
                s = s + Li[k][i] * Li[k][j]
            out[:, i, j] = out[:, j, i] = s
    return out


def _cholesky(x: np.ndarray) -> np.ndarray:
    """Cholesky factors of a stack; a slice that is not positive definite becomes NaN."""
    try:
        return np.linalg.cholesky(x)
    except np.linalg.LinAlgError:
        ok = np.isfinite(x).all(axis=(-2, -1))
        ok[ok] = (np.linalg.eigvalsh(x[ok]) > 0).all(axis=-1)
        out = np.full_like(x, np.nan)
        out[ok] = np.linalg.cholesky(x[ok])
        return out


class BatchedNumpyBackend:
    """Numerical evaluation of ``batch`` configurations at once, with no loop over them.

    Configuration-dependent matrices are :class:`MatrixStack`\\ s; constants (``S``, inertias,
    ``K``, ``eye``) stay plain 2-D arrays and broadcast, so work that depends on no
    configuration is done once for the whole batch.
    """

    name = "numpy-batched"

    def __init__(self, batch: int) -> None:
        self.batch = batch

    def const(self, a: np.ndarray) -> np.ndarray:
        return np.asarray(a, dtype=float)

    def zeros(self, rows: int, cols: int) -> MatrixStack:
        return MatrixStack(np.zeros((self.batch, rows, cols)))

    eye = staticmethod(np.eye)

    sqrt = staticmethod(partial(_apply, np.sqrt))
    cos = staticmethod(partial(_apply, np.cos))
    sin = staticmethod(partial(_apply, np.sin))

    column = staticmethod(NUMPY.column)

    def inv(self, a: Any) -> Any:
        if type(a) is not MatrixStack:
            return NUMPY.inv(a)
        if a.shape == (1, 1):
            return MatrixStack(1.0 / a.a)
        return MatrixStack(inv_spd(a.a))

    cholesky = staticmethod(partial(_apply, _cholesky))

    def solve_lower(self, lower: Any, b: Any) -> Any:
        x = np.linalg.solve(_raw(lower), _raw(b))
        return x if x.ndim == 2 else MatrixStack(x)

    def _stack(self, blocks: list, axis: int) -> Any:
        arrays = [np.atleast_2d(_raw(b)) for b in blocks]
        if not any(type(b) is MatrixStack for b in blocks):
            return np.concatenate(arrays, axis=axis).astype(float, copy=False)
        n = self.batch
        arrays = [a if a.ndim == 3 else np.broadcast_to(a, (n, *a.shape)) for a in arrays]
        return MatrixStack(np.concatenate(arrays, axis=axis - 2).astype(float, copy=False))

    def vstack(self, blocks: list) -> Any:
        return self._stack(blocks, 0)

    def hstack(self, blocks: list) -> Any:
        return self._stack(blocks, 1)

    def hat(self, p: Any) -> Any:
        if type(p) is not MatrixStack:
            return NUMPY.hat(p)
        x, y, z = p.a[:, 0, 0], p.a[:, 1, 0], p.a[:, 2, 0]
        out = np.zeros((p.a.shape[0], 3, 3))
        out[:, 0, 1], out[:, 0, 2] = -z, y
        out[:, 1, 0], out[:, 1, 2] = z, -x
        out[:, 2, 0], out[:, 2, 1] = -y, x
        return MatrixStack(out)

    def blockdiag(self, blocks: list) -> MatrixStack:
        return blockdiag_by_assignment(self, blocks)

    def symmetric_from_upper(self, a: Any) -> Any:
        if type(a) is not MatrixStack:
            return NUMPY.symmetric_from_upper(a)
        n, m = a.a.shape[0], a.shape[0]
        return MatrixStack(np.take(a.a.reshape(n, m * m), upper_mirror(m), axis=1))

    symmetric = symmetric_from_upper

    def permute(self, a: Any, order: list[int]) -> Any:
        idx = np.asarray(order, dtype=int)
        return _apply(lambda x: x[..., idx[:, None], idx], a)
