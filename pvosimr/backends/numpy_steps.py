"""The articulated-body step of a one-DoF joint, on numpy.

A joint with ``nv_i = 1`` (revolute, prismatic, helical: most joints of a humanoid) has a scalar
``D_i`` and a column ``S_i``, so each product of :class:`~pvosimr.algorithms.articulated.JointStep`
is a rank-1 update (paper Sec. IV-E) whose 1×1 factor ``D_i⁻¹`` can be a float.  numpy pays per
call, not per flop: :class:`OneDofStep` gives the same quantities as the generic step with fewer
calls, and where ``S_i`` is a unit vector ``e_k`` (an axis-aligned joint, :attr:`Kinematics.axis`)
its products with ``S_i`` are reads of row or column ``k``, exactly equal in floating point.
It serves the numpy backend alone; every other backend (batched, CasADi, counting, structure)
runs the generic step, so symbolic operation counts never see it.
"""

from __future__ import annotations

import math

import numpy as np

from ..kinematics.frames import Kinematics
from ..spatial import DenseTransform, SpatialTransform

__all__ = ["OneDofStep", "one_dof_step"]


class OneDofStep:
    """Joint ``i``'s step (``S_i``, ``U_i = H^A_i S_i``, ``d⁻¹ = D_i⁻¹``, ``X_i``) for
    ``nv_i = 1``; ``k`` is the row of ``S_i = e_k``, or None for another axis.

    Products are ``ndarray.dot`` (a third of ``@``'s cost on 6×6 operands: no ufunc dispatch)
    on ``Xm``, the 6×6 matrix of a :class:`~pvosimr.spatial.DenseTransform` ``X`` (None for
    another transform, applied through its methods)."""

    __slots__ = ("S", "U", "Ud", "X", "Xm", "dinv", "k")

    def __init__(self, S: np.ndarray, U: np.ndarray, dinv: float, X: SpatialTransform, k) -> None:
        self.S, self.U, self.dinv, self.X, self.k = S, U, dinv, X, k
        self.Ud = U * dinv  # U_i D_i⁻¹, shared by the fold and the force propagator
        self.Xm = X.X if type(X) is DenseTransform else None

    @property
    def Dinv(self) -> np.ndarray:
        """``D_i⁻¹`` as a 1×1 matrix, for the algorithms' own products with it."""
        return np.array([[self.dinv]])

    def _W(self, F: np.ndarray) -> np.ndarray:
        """``S_iᵀ F`` (1×k)."""
        k = self.k
        return self.S.T.dot(F) if k is None else F[k : k + 1]

    def _force(self, F: np.ndarray) -> np.ndarray:
        return self.X.force(F) if self.Xm is None else self.Xm.T.dot(F)

    def _motion(self, A: np.ndarray) -> np.ndarray:
        return self.X.motion(A) if self.Xm is None else self.Xm.dot(A)

    def omega(self) -> np.ndarray:
        """``S_i D_i⁻¹ S_iᵀ`` (eq. 10); exactly symmetric: ``S Sᵀ`` is, and so its multiple."""
        if self.k is None:
            return self.S.dot(self.S.T) * self.dinv
        out = np.zeros((6, 6))
        out[self.k, self.k] = self.dinv
        return out

    def congruence(self, F: np.ndarray) -> np.ndarray:
        """``Fᵀ Ω F = Wᵀ W D_i⁻¹`` with ``W = S_iᵀ F``; ``Wᵀ W`` is exactly symmetric."""
        W = self._W(F)
        return W.T.dot(W) * self.dinv

    def force_to_parent(self, F: np.ndarray) -> np.ndarray:
        return self._force(F - self.Ud.dot(self._W(F)))

    def extend(self, Omega: np.ndarray, F: np.ndarray, parent: int):
        """See :meth:`JointStep.extend`; ``W = S_iᵀ F`` read once for both products.  The sum
        is exactly symmetric without a mirror: ``Ω`` is, and so is ``Wᵀ W D_i⁻¹``."""
        k = self.k
        W = self.S.T.dot(F) if k is None else F[k : k + 1]  # _W's read, without its call
        Omega = Omega + W.T.dot(W) * self.dinv
        if parent <= 0:
            return Omega, None
        R, Xm = F - self.Ud.dot(W), self.Xm
        return Omega, self.X.force(R) if Xm is None else Xm.T.dot(R)

    def motion_from_parent(self, A: np.ndarray) -> np.ndarray:
        Z = self._motion(A)
        V = self.Ud.T.dot(Z)
        if self.k is None or Z is A:
            return Z - self.S.dot(V)
        Z[self.k] -= V[0]  # Z is a fresh product: row k alone changes
        return Z

    def motion_congruence(self, Omega: np.ndarray) -> np.ndarray:
        half = self.motion_from_parent(Omega)
        return self.motion_from_parent(half.T).take(_MIRROR)

    def rows_to_parent(self, K: np.ndarray) -> np.ndarray:
        KS = K.dot(self.S) if self.k is None else K[:, self.k : self.k + 1]
        R = K - (KS * self.dinv).dot(self.U.T)
        return self.X.rows(R) if self.Xm is None else R.dot(self.Xm)

    def fold_into(self, H_A: list[np.ndarray], i: int, parent: int) -> None:
        """``H^A_{π(i)} += X_iᵀ (H^A_i − U_i D_i⁻¹ U_iᵀ) X_i``; the sum is made exactly
        symmetric, the asymmetric rounding of the rank-1 term never reaches a pivot."""
        if parent > 0:
            Ia = H_A[i] - self.Ud.dot(self.U.T)
            Xm = self.Xm
            C = self.X.congruence(Ia) if Xm is None else Xm.T.dot(Ia).dot(Xm)
            H_A[parent] = (H_A[parent] + C).take(_MIRROR)


_index = np.arange(36).reshape(6, 6)
_MIRROR = np.where(np.triu(np.ones((6, 6), dtype=bool)), _index, _index.T)
"""Indices that read a 6×6 matrix's upper triangle into both triangles (one gather)."""


def one_dof_step(kin: Kinematics, H_A: list[np.ndarray], i: int) -> OneDofStep:
    """Link ``i``'s step from ``H^A_i``: ``U_i`` and ``D_i = S_iᵀ U_i`` (plus the rotor
    inertia), read as column and entry ``k`` of ``H^A_i`` where ``S_i = e_k``; ``D_i⁻¹`` a
    float (infinite for ``D_i = 0``, as numpy's division gives).

    ``H^A_i`` is exactly symmetric (the link inertias are, and every fold mirrors), so column
    ``k`` is read as row ``k`` transposed: the same numbers, contiguous, which numpy's
    products and ufuncs take at half the cost of a strided column."""
    S, H = kin.S[i], H_A[i]
    k = kin.axis.get(i)
    if k is None:
        U = H.dot(S)
        D = S.T.dot(U).item()
    else:
        U = H[k : k + 1].T
        D = H.item(k, k)
    rotor = kin.armature[i]
    if rotor is not None:
        D += rotor.item()
    return OneDofStep(S, U, 1.0 / D if D else math.copysign(math.inf, D), kin.X[i], k)
