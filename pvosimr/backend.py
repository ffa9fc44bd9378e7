"""The thin seam between the algorithms and the array library they run on.

Every algorithm body is written once against this interface: it uses only the matrix operators
``@``, ``+``, ``-``, ``.T``, slicing (reads, and slice assignment into ``zeros``) and the few
functions below.  :data:`NUMPY` evaluates numerically; a CasADi SX backend with the same methods
turns the very same code into a symbolic expression graph (operation counts, code generation).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

Matrix = Any
"""A 2-D matrix of the backend in use (``numpy.ndarray``, ``casadi.SX``, ...)."""


class Backend(Protocol):
    """What an algorithm body may ask of the array library besides matrix operators."""

    name: str

    def const(self, a: np.ndarray) -> Matrix:
        """A numeric constant (inertias, placements) as a backend matrix; used by kinematics."""

    def zeros(self, rows: int, cols: int) -> Matrix:
        """A zero matrix that supports slice assignment."""

    def eye(self, n: int) -> Matrix: ...

    def sqrt(self, x: Matrix) -> Matrix: ...

    def inv(self, a: Matrix) -> Matrix:
        """Inverse of a small symmetric positive-definite matrix (a joint's ``D_i``)."""

    def cholesky(self, a: Matrix) -> Matrix:
        """Lower-triangular ``L`` with ``a = L Lᵀ`` (dense, for the naive baseline)."""

    def solve_lower(self, lower: Matrix, b: Matrix) -> Matrix:
        """``L⁻¹ b`` for a lower-triangular ``L``."""

    def vstack(self, blocks: list[Matrix]) -> Matrix: ...

    def hstack(self, blocks: list[Matrix]) -> Matrix: ...

    def hat(self, p: Matrix) -> Matrix:
        """The 3×3 cross-product matrix ``p×`` of a 3×1 ``p``."""

    def blockdiag(self, blocks: list[Matrix]) -> Matrix: ...

    def symmetric_from_upper(self, a: Matrix) -> Matrix:
        """The symmetric matrix whose upper triangle is that of ``a`` (mirrors, never averages)."""

    def permute(self, a: Matrix, order: list[int]) -> Matrix:
        """``a[order][:, order]``: rows and columns reordered symmetrically."""

    def symmetric(self, a: Matrix) -> Matrix:
        """``a``, known to be symmetric (up to rounding): a symbolic backend keeps only its upper
        triangle, so the arithmetic of the lower one is never generated; numpy returns ``a``."""


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
        return np.linalg.inv(a)

    def cholesky(self, a: np.ndarray) -> np.ndarray:
        return np.linalg.cholesky(a)

    def solve_lower(self, lower: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.linalg.solve(lower, b)

    def vstack(self, blocks: list[np.ndarray]) -> np.ndarray:
        return np.vstack(blocks)

    def hstack(self, blocks: list[np.ndarray]) -> np.ndarray:
        return np.hstack(blocks)

    def hat(self, p: np.ndarray) -> np.ndarray:
        x, y, z = np.ravel(p)
        return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])

    def blockdiag(self, blocks: list[np.ndarray]) -> np.ndarray:
        size = sum(b.shape[0] for b in blocks)
        out = np.zeros((size, size))
        start = 0
        for b in blocks:
            stop = start + b.shape[0]
            out[start:stop, start:stop] = b
            start = stop
        return out

    def symmetric_from_upper(self, a: np.ndarray) -> np.ndarray:
        upper = np.triu(a)
        return upper + np.triu(a, 1).T

    def permute(self, a: np.ndarray, order: list[int]) -> np.ndarray:
        idx = np.asarray(order, dtype=int)
        return a[np.ix_(idx, idx)]

    def symmetric(self, a: np.ndarray) -> np.ndarray:
        return a


NUMPY = NumpyBackend()
