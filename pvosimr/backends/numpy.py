"""Numerical evaluation with numpy (float64): :data:`NUMPY`, and the mirror of an upper
triangle that every numpy backend uses to keep a matrix exactly symmetric."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .protocol import Backend, Matrix

__all__ = [
    "NUMPY",
    "NumpyBackend",
    "blockdiag_by_assignment",
    "mirror_upper",
    "upper_mirror",
]


@lru_cache(maxsize=64)
def upper_mirror(n: int) -> np.ndarray:
    """Flat indices that read an n×n matrix's upper triangle into both triangles."""
    index = np.arange(n * n).reshape(n, n)
    return np.where(np.triu(np.ones((n, n), dtype=bool)), index, index.T).ravel()


_MIRRORS: dict[int, np.ndarray] = {}

_GATHER_BUDGET = 128 * 2**20
"""Bytes of gather indices kept over every size (8 n² bytes for size n: ``take`` converts any
other index type to ``intp`` on every call, five times the cost of the gather itself).  PV-OSIM's
``L^A`` passes through every size up to m on a chain welded at every link, each once per call:
on 6D welds every size up to m ≈ 650 fits and is mirrored by one gather; beyond the budget a size is
mirrored by copies of blocks of :data:`_BLOCK` columns, with nothing kept (a fixed index per
size would need 2.6 GB at m = 1800).  The gather is ~3× faster than the copies in the sweeps."""

_BLOCK = 128

_kept = 0  # bytes in _MIRRORS


def _mirror(n: int) -> np.ndarray | None:
    """:func:`upper_mirror` as an n×n array (``a.take`` of it is the mirrored matrix), or
    None once the kept indices would exceed :data:`_GATHER_BUDGET`."""
    global _kept
    index = _MIRRORS.get(n)
    if index is None:
        if _kept + 8 * n * n > _GATHER_BUDGET:
            return None
        flat = np.arange(n * n, dtype=np.intp).reshape(n, n)
        index = _MIRRORS[n] = np.where(np.triu(np.ones((n, n), dtype=bool)), flat, flat.T)
        _kept += index.nbytes
    return index


def mirror_upper(a: np.ndarray) -> np.ndarray:
    """The symmetric matrix whose upper triangle is that of the square ``a`` (numpy)."""
    index = _mirror(a.shape[0])
    if index is not None:
        return a.take(index)  # one gather: cheaper than triu + triu.T
    n = a.shape[0]
    out = np.array(a, subok=True)  # a copy, of a's own array type; no arithmetic to count
    for start in range(0, n, _BLOCK):  # by blocks of columns: the transposed reads stay cached
        stop = min(start + _BLOCK, n)
        out[stop:, start:stop] = out[start:stop, stop:].T
        diagonal = out[start:stop, start:stop]
        np.copyto(diagonal, diagonal.T, where=np.tri(stop - start, k=-1, dtype=bool))
    return out


def blockdiag_by_assignment(B: Backend, blocks: list[Matrix]) -> Matrix:
    """The block-diagonal matrix of square ``blocks``, by slice assignment into ``B.zeros``."""
    size = sum(b.shape[0] for b in blocks)
    out = B.zeros(size, size)
    start = 0
    for b in blocks:
        stop = start + b.shape[0]
        out[start:stop, start:stop] = b
        start = stop
    return out


class NumpyBackend:
    """Numerical evaluation with numpy (float64)."""

    name = "numpy"

    def const(self, a: np.ndarray) -> np.ndarray:
        return a

    def zeros(self, rows: int, cols: int) -> np.ndarray:
        return np.zeros((rows, cols))

    def eye(self, n: int) -> np.ndarray:
        return np.eye(n)

    def sqrt(self, x: float) -> float:
        return np.sqrt(x)

    def inv(self, a: np.ndarray) -> np.ndarray:
        if a.shape == (1, 1):
            return 1.0 / a
        lower_inv = np.linalg.inv(np.linalg.cholesky(a))  # LinAlgError unless positive definite
        return mirror_upper(lower_inv.T.dot(lower_inv))  # .dot: no ufunc dispatch on 6×6

    def cholesky(self, a: np.ndarray) -> np.ndarray:
        return np.linalg.cholesky(a)

    def solve_lower(self, lower: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.linalg.solve(lower, b)

    def cos(self, x: np.ndarray) -> np.ndarray:
        return np.cos(x)

    def sin(self, x: np.ndarray) -> np.ndarray:
        return np.sin(x)

    def column(self, a: np.ndarray) -> np.ndarray:
        return np.reshape(np.asarray(a, dtype=float), (-1, 1))

    def vstack(self, blocks: list[np.ndarray]) -> np.ndarray:
        return np.vstack(blocks)

    def hstack(self, blocks: list[np.ndarray]) -> np.ndarray:
        return np.hstack(blocks)

    def hat(self, p: np.ndarray) -> np.ndarray:
        x, y, z = np.ravel(p)
        return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])

    def blockdiag(self, blocks: list[np.ndarray]) -> np.ndarray:
        return blockdiag_by_assignment(self, blocks)

    def symmetric_from_upper(self, a: np.ndarray) -> np.ndarray:
        return mirror_upper(a)

    def permute(self, a: np.ndarray, order: list[int]) -> np.ndarray:
        idx = np.asarray(order, dtype=int)
        return a[np.ix_(idx, idx)]

    symmetric = symmetric_from_upper  # called for every link: no second call


NUMPY = NumpyBackend()
