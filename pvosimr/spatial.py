"""Plücker transforms between link frames, applied without forming 6×6 products.

Spatial vectors are ordered as in Pinocchio (linear, then angular).  The motion transform from
frame ``a`` to frame ``b`` is ``^bX_a = [[E, −E p×], [0, E]]`` with ``E`` the rotation from
``a``-coordinates to ``b``-coordinates and ``p`` the origin of ``b`` in ``a``-coordinates
(Pinocchio's ``actionInverse`` of the placement ``(Eᵀ, p)`` of ``b`` in ``a``).

The sweeps need four products with a transform ``X``: ``X A`` (motions), ``Xᵀ F`` (forces),
``K X`` (constraint rows) and ``Xᵀ H X`` (an inertia).  :class:`DenseTransform` does them as
6×6 matrix products — the fastest choice in numpy, where each call costs the same whatever its
size.  :class:`Transform` does them on the 3×3 blocks (RBDA Sec. 2.8), and :class:`Chain` keeps
``X_up(i) = X_J(q_i) X_tree(i)`` as two factors (Featherstone's local-frame formulation), so on
a symbolic backend the constant tree transform's zeros and ones fold away and only the joint's
own rotation costs arithmetic.  Each is a thin layer over the backend seam; the algorithms see
only the four products.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, reduce
from typing import Protocol

from .backends import Backend, Matrix

__all__ = ["Chain", "DenseTransform", "SpatialTransform", "Transform"]


class SpatialTransform(Protocol):
    """What the sweeps ask of ``X = ^bX_a``; ``k``-column blocks stay in their own backend."""

    def motion(self, A: Matrix) -> Matrix:
        """``X A``: 6×k motions in frame ``a`` → frame ``b``."""

    def force(self, F: Matrix) -> Matrix:
        """``Xᵀ F``: 6×k forces in frame ``b`` → frame ``a``."""

    def rows(self, K: Matrix) -> Matrix:
        """``K X``: k×6 rows acting on frame-``b`` motion → rows acting on frame-``a`` motion."""

    def congruence(self, H: Matrix) -> Matrix:
        """``Xᵀ H X`` for a symmetric 6×6 ``H`` (an inertia in ``b`` → in ``a``)."""


@dataclass(slots=True)
class DenseTransform:
    """``X`` as a 6×6 matrix: every product is one or two matrix multiplications.

    Not frozen: one is made per link and call, and a frozen dataclass takes five times as long
    to make."""

    B: Backend
    X: Matrix

    def motion(self, A: Matrix) -> Matrix:
        return self.X @ A

    def force(self, F: Matrix) -> Matrix:
        return self.X.T @ F

    def rows(self, K: Matrix) -> Matrix:
        return K @ self.X

    def congruence(self, H: Matrix) -> Matrix:
        # Not symmetrized: every caller adds it to a symmetric matrix and symmetrizes the sum,
        # and numerically each symmetrization is a call of its own.
        return self.X.T @ H @ self.X


@dataclass(frozen=True)
class Transform:
    """``X = [[E, −E p×], [0, E]]`` applied block-wise; ``E`` or ``p`` ``None`` means 1 or 0.

    ``p_hat``, ``p×`` made once by the caller where ``p`` is a constant (the tree factor): on
    CasADi each ``hat`` is a dozen calls, and a symbolic ``p``'s would add its negations to
    the graph once per product, as the count expects, so it is never kept.
    """

    B: Backend
    E: Matrix | None
    p: Matrix | None
    p_hat: Matrix | None = None

    def motion(self, A: Matrix) -> Matrix:
        v, w = A[0:3, :], A[3:6, :]
        if self.p is not None:
            v = v - self._p_hat() @ w
        return self.B.vstack([self._rot(v), self._rot(w)])

    def force(self, F: Matrix) -> Matrix:
        f, n = self._rot_t(F[0:3, :]), self._rot_t(F[3:6, :])
        if self.p is not None:
            n = n + self._p_hat() @ f
        return self.B.vstack([f, n])

    def rows(self, K: Matrix) -> Matrix:
        return self.force(K.T).T

    def congruence(self, H: Matrix) -> Matrix:
        """``Tᵀ (Rᵀ H R) T`` with ``R = diag(E, E)`` and ``T = [[1, −p×], [0, 1]]``."""
        B = self.B
        if self.E is not None:  # Rᵀ H R, block by block
            HR = B.hstack([H[:, 0:3] @ self.E, H[:, 3:6] @ self.E])
            H = B.symmetric(B.vstack([self._Et @ HR[0:3, :], self._Et @ HR[3:6, :]]))
        if self.p is not None:  # Tᵀ H T: columns, then rows, of the angular half
            px = self._p_hat()
            HT = B.hstack([H[:, 0:3], H[:, 3:6] - H[:, 0:3] @ px])
            H = B.symmetric(B.vstack([HT[0:3, :], HT[3:6, :] + px @ HT[0:3, :]]))
        return H

    def _rot(self, v: Matrix) -> Matrix:
        return v if self.E is None else self.E @ v

    def _rot_t(self, v: Matrix) -> Matrix:
        return v if self.E is None else self._Et @ v

    @cached_property
    def _Et(self) -> Matrix:
        """``Eᵀ``, made once: a transpose adds no arithmetic, only a backend call per use."""
        return self.E.T

    def _p_hat(self) -> Matrix:
        return self.B.hat(self.p) if self.p_hat is None else self.p_hat


@dataclass(frozen=True)
class Chain:
    """``X = X_1 X_2 ⋯``: e.g. ``X_up(i) = X_J(q_i) X_tree(i)``, each factor applied in turn."""

    factors: tuple[SpatialTransform, ...]

    def motion(self, A: Matrix) -> Matrix:
        return reduce(lambda A, X: X.motion(A), reversed(self.factors), A)

    def force(self, F: Matrix) -> Matrix:
        return reduce(lambda F, X: X.force(F), self.factors, F)

    def rows(self, K: Matrix) -> Matrix:
        return reduce(lambda K, X: X.rows(K), self.factors, K)

    def congruence(self, H: Matrix) -> Matrix:
        return reduce(lambda H, X: X.congruence(H), self.factors, H)
