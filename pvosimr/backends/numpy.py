"""Numerical evaluation with numpy (float64): :data:`NUMPY`, its own steps of the sweeps, and
the mirror of an upper triangle that every numpy backend keeps a matrix exactly symmetric with.

numpy pays per call, not per flop.  So :class:`NumpyBackend` gives the seam's two hooks
(:mod:`.protocol`) its own forms, each the same numbers as the generic one to rounding:

- :func:`joint_step`: a joint with ``nv_i = 1`` (revolute, prismatic, helical: most joints of a
  humanoid) has a scalar ``D_i`` and a column ``S_i``, so each product of the step is a rank-1
  update (paper Sec. IV-E) whose factor ``D_i⁻¹`` can be a float (:class:`OneDofStep`); where
  ``S_i = e_k`` its products with ``S_i`` are reads of row or column ``k``, exactly equal in
  floating point.  A free-flyer in its own frame (``S_i = I``) has ``U_i = D_i = H^A_i`` and
  ``^{π(i)}Ω_i = D_i⁻¹`` (:class:`IdentityStep`).
- :func:`rows_through`: the rows of every EE passing a branching link go through its propagator
  as one stacked product (eq. 19), one call per link instead of one per EE and link.

They serve this class alone, not its subclasses (:func:`~.protocol.implements`): the
pivot-probing and wide-precision backends derive from it and run the generic steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate, pairwise
from typing import Any

import numpy as np

from .protocol import Backend, JointStep, Matrix, implements, joint_step, rows_through

__all__ = [
    "NUMPY",
    "IdentityStep",
    "NumpyBackend",
    "OneDofStep",
    "blockdiag_by_assignment",
    "mirror_upper",
    "upper_mirror",
]

_MIRRORS: dict[int, np.ndarray] = {}

_GATHER_BUDGET = 128 * 2**20
"""Bytes of gather indices kept over every size (8 n² bytes for size n: ``take`` converts any
other index type to ``intp`` on every call, five times the cost of the gather itself).  PV-OSIM's
``L^A`` passes through every size up to m on a chain welded at every link, each once per call:
on 6D welds every size up to m ≈ 650 fits and is mirrored by one gather; beyond the budget a size is
mirrored by copies of blocks of :data:`_BLOCK` columns, with nothing kept (a fixed index per
size grows as m³ over every size).  The gather is the faster of the two where it fits."""

_BLOCK = 128

_kept = 0  # bytes in _MIRRORS


def _mirror_index(n: int) -> np.ndarray:
    flat = np.arange(n * n, dtype=np.intp).reshape(n, n)
    return np.where(np.triu(np.ones((n, n), dtype=bool)), flat, flat.T)


def _kept_mirror(n: int) -> np.ndarray | None:
    """:func:`upper_mirror` of size ``n`` from :data:`_MIRRORS`, made and kept on first use;
    None once it would take the kept indices past :data:`_GATHER_BUDGET`."""
    global _kept
    index = _MIRRORS.get(n)
    if index is None:
        if _kept + 8 * n * n > _GATHER_BUDGET:
            return None
        index = _MIRRORS[n] = _mirror_index(n)
        _kept += index.nbytes
    return index


def upper_mirror(n: int) -> np.ndarray:
    """The n×n flat indices that read an n×n matrix's upper triangle into both triangles
    (``a.take(upper_mirror(n))`` is the mirrored matrix): the one index every numpy backend
    mirrors with, kept per size within :data:`_GATHER_BUDGET`."""
    index = _kept_mirror(n)
    return _mirror_index(n) if index is None else index


def mirror_upper(a: np.ndarray) -> np.ndarray:
    """The symmetric matrix whose upper triangle is that of the square ``a`` (numpy)."""
    index = _kept_mirror(a.shape[0])
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
    ends = list(accumulate((b.shape[0] for b in blocks), initial=0))
    out = B.zeros(ends[-1], ends[-1])
    for b, (start, stop) in zip(blocks, pairwise(ends), strict=True):
        out[start:stop, start:stop] = b
    return out


class NumpyBackend:
    """Numerical evaluation with numpy (float64)."""

    name = "numpy"

    def const(self, a: np.ndarray) -> np.ndarray:
        return a

    def zeros(self, rows: int, cols: int) -> np.ndarray:
        return np.zeros((rows, cols))

    eye = staticmethod(np.eye)
    sqrt = staticmethod(np.sqrt)
    cos = staticmethod(np.cos)
    sin = staticmethod(np.sin)
    cholesky = staticmethod(np.linalg.cholesky)
    solve_lower = staticmethod(np.linalg.solve)
    vstack = staticmethod(np.vstack)
    hstack = staticmethod(np.hstack)

    def inv(self, a: np.ndarray) -> np.ndarray:
        if a.shape == (1, 1):
            return 1.0 / a
        lower_inv = np.linalg.inv(np.linalg.cholesky(a))  # LinAlgError unless positive definite
        return mirror_upper(lower_inv.T.dot(lower_inv))  # .dot: no ufunc dispatch on 6×6

    def column(self, a: np.ndarray) -> np.ndarray:
        return np.reshape(np.asarray(a, dtype=float), (-1, 1))

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


@implements(joint_step, NumpyBackend)
def _joint_step(
    B: NumpyBackend,
    S: np.ndarray,
    H_A: np.ndarray,
    armature: np.ndarray | None,
    X: Any,
    axis: int | None,
    identity: bool,
) -> JointStep | OneDofStep:
    """:func:`~.protocol.joint_step` in fewer numpy calls: a one-DoF joint's ``U_i`` and
    ``D_i = S_iᵀ U_i`` (plus the rotor inertia) are column and entry ``k`` of ``H^A_i`` where
    ``S_i = e_k``, and ``D_i⁻¹`` a float (infinite for ``D_i = 0``, as numpy's division gives);
    a free-flyer's are ``H^A_i`` itself.

    ``H^A_i`` is exactly symmetric (the link inertias are, and every fold mirrors), so column
    ``k`` is read as row ``k`` transposed: the same numbers, contiguous, which numpy's
    products and ufuncs take at half the cost of a strided column."""
    if S.shape[1] == 1:
        if axis is None:
            U = H_A.dot(S)
            D = S.T.dot(U).item()
        else:
            U = H_A[axis : axis + 1].T
            D = H_A.item(axis, axis)
        if armature is not None:
            D += armature.item()
        return OneDofStep(S, U, 1.0 / D if D else math.copysign(math.inf, D), X, axis)
    if identity:
        D = H_A if armature is None else H_A + armature
        return IdentityStep(B=B, S=S, U=H_A, Dinv=B.inv(D), X=X)
    return JointStep.build(B, S, H_A, armature, X)


@implements(rows_through, NumpyBackend)
def _rows_through(
    B: NumpyBackend, product: Callable[[np.ndarray], np.ndarray], blocks: list[np.ndarray]
) -> list[np.ndarray]:
    """:func:`~.protocol.rows_through` as one product on the stacked blocks; each row of the
    result is the product of that row alone."""
    if len(blocks) == 1:
        return [product(blocks[0])]
    R = product(np.concatenate(blocks))
    ends = accumulate((K.shape[0] for K in blocks), initial=0)
    return [R[start:stop] for start, stop in pairwise(ends)]


class OneDofStep:
    """Joint ``i``'s step (``S_i``, ``U_i = H^A_i S_i``, ``d⁻¹ = D_i⁻¹``, ``X_i``) for
    ``nv_i = 1``, with the methods of :class:`~.protocol.JointStep`; ``k`` is the row of
    ``S_i = e_k``, or None for another axis.

    Products are ``ndarray.dot`` (a third of ``@``'s cost on 6×6 operands: no ufunc dispatch)
    on ``Xm``, the 6×6 matrix of a dense transform (:class:`pvosimr.spatial.DenseTransform`,
    read as its ``X``; None for another transform, applied through its methods)."""

    __slots__ = ("S", "U", "Ud", "X", "Xm", "dinv", "k")

    def __init__(self, S: np.ndarray, U: np.ndarray, dinv: float, X: Any, k: int | None) -> None:
        self.S, self.U, self.dinv, self.X, self.k = S, U, dinv, X, k
        self.Ud = U * dinv  # U_i D_i⁻¹, shared by the fold and the force propagator
        try:  # a DenseTransform's matrix (pvosimr.spatial imports the backends: not named here)
            self.Xm = X.X
        except AttributeError:  # another transform, applied through its methods
            self.Xm = None

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
        return self.motion_from_parent(half.T).take(_MIRROR6)

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
            H_A[parent] = (H_A[parent] + C).take(_MIRROR6)


@dataclass(slots=True)
class IdentityStep(JointStep):
    """A step where ``S_i = I`` (a free-flyer in its own frame): ``U_i = D_i = H^A_i`` and
    ``^{π(i)}Ω_i = D_i⁻¹``, exactly symmetric as :meth:`NumpyBackend.inv` returns it; its
    other products are the generic ones."""

    def omega(self) -> np.ndarray:
        return self.Dinv


_MIRROR6 = upper_mirror(6)
"""The 6×6 :func:`upper_mirror`, named once for the steps' gathers."""
