"""The thin seam between the algorithms and the array library they run on.

Every algorithm body is written once against this interface: it uses only the matrix operators
``@``, ``+``, ``-``, ``.T``, slicing (reads, and slice assignment into ``zeros``), the methods of
:class:`Backend` and the hooks below.  :data:`~pvosimr.backends.numpy.NUMPY` evaluates
numerically; the batched backend (:mod:`pvosimr.backends.batched`) evaluates many configurations
at once; CasADi SX (:mod:`pvosimr.backends.casadi`) turns the very same code into a symbolic
expression graph (operation counts, code generation).

The hooks, :func:`joint_step`, :func:`rows_through` and :func:`place_blocks`, are the steps a
backend may do its own, faster way (:func:`implements`).  The generic forms of the first two
are the products the paper counts, and the only ones CasADi and the counting backends run; a
backend's own must give the same matrices to rounding.  :func:`place_blocks` only places blocks
(no arithmetic): a backend's own must give the very same matrix.  The algorithms call the hooks
and never ask which backend they run on.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np

__all__ = [
    "FOLD_TOLERANCE",
    "Backend",
    "Block",
    "JointStep",
    "Matrix",
    "arithmetic",
    "folded",
    "implements",
    "joint_step",
    "place_blocks",
    "rows_through",
]

#: Constant entries within this fraction of their matrix's largest entry are exact zeros when a
#: backend counts operations (CasADi SX, the counting backends).  Model files round: MJCF
#: quaternions leave ~1e-17 in rotation matrices and inertias, a URDF angle of π written as
#: 3.14159265359 gives sin = 2.1e-13.  Kept, each such entry costs arithmetic in every sweep;
#: folded, the function moves by at most about this fraction, far inside the 1e-10 agreement
#: with numpy.
FOLD_TOLERANCE = 1e-12


def folded(a: Any) -> np.ndarray:
    """A numeric constant as a float array (2-D at least) with its rounding residue, the entries
    within :data:`FOLD_TOLERANCE` of its largest, made exact zeros: what the backends that
    count operations take it as."""
    a = np.array(np.atleast_2d(np.asarray(a, dtype=float)))
    if a.size:
        a[np.abs(a) <= FOLD_TOLERANCE * np.abs(a).max()] = 0.0
    return a


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
        """Inverse of a small symmetric positive-definite matrix (a joint's ``D_i``), read from its
        lower triangle; not finite, or ``LinAlgError``, where ``a`` is not positive definite.

        The result must be *exactly* symmetric.  The articulated-body update writes
        ``H^A − U D⁻¹ Uᵀ`` for ``H^A − U D⁻¹ (S^T H^A)``, the same only when everything is
        symmetric; an antisymmetric rounding error in ``D⁻¹`` passes through the oblique
        projector ``U D⁻¹ Sᵀ`` into the parent's ``H^A`` and ``D``, whose inverse then carries
        it, amplified, one joint further up: on a chain of spherical joints it grows about
        tenfold every three links, from 1e-16 to O(1) in some 50 links."""

    def cholesky(self, a: Matrix) -> Matrix:
        """Lower-triangular ``L`` with ``a = L Lᵀ`` (dense, for the naive baseline)."""

    def solve_lower(self, lower: Matrix, b: Matrix) -> Matrix:
        """``L⁻¹ b`` for a lower-triangular ``L``."""

    def cos(self, x: Matrix) -> Matrix:
        """Elementwise cosine (of a joint angle, a 1×1 matrix); used by the joint models."""

    def sin(self, x: Matrix) -> Matrix: ...

    def column(self, a: np.ndarray) -> Matrix:
        """A constant column vector (a joint axis), kept dense: its zero entries stay operands."""

    def vstack(self, blocks: list[Matrix]) -> Matrix:
        """Blocks stacked vertically; plain numbers are 1×1 blocks (as for ``hstack``)."""

    def hstack(self, blocks: list[Matrix]) -> Matrix: ...

    def hat(self, p: Matrix) -> Matrix:
        """The 3×3 cross-product matrix ``p×`` of a 3×1 ``p``."""

    def blockdiag(self, blocks: list[Matrix]) -> Matrix: ...

    def symmetric_from_upper(self, a: Matrix) -> Matrix:
        """The symmetric matrix whose upper triangle is that of ``a`` (mirrors, never averages)."""

    def permute(self, a: Matrix, order: list[int]) -> Matrix:
        """``a[order][:, order]``: rows and columns reordered symmetrically."""

    def symmetric(self, a: Matrix) -> Matrix:
        """``a``, known to be symmetric up to rounding, made exactly symmetric.

        Every backend must, for the reason given at :meth:`inv`: a rounding asymmetry left in
        an articulated inertia ``H^A = Xᵀ (…) X`` is carried into ``U = H^A S`` and amplified at
        the next joint by the oblique projector ``S D⁻¹ Sᵀ H^A``, whose norm grows with the mass
        ratio between neighbouring links (alternating 1 kg and 1e-6 kg links: 1e-9 relative
        error after 12 spherical joints).  Every backend keeps the upper triangle
        (:meth:`symmetric_from_upper`): numerically one gather, symbolically the arithmetic of
        the lower triangle is never generated."""


@dataclass(slots=True)
class JointStep:
    """Joint ``i``'s share of the sweep: ``S_i``, ``U_i = H^A_i S_i``, ``D_i⁻¹`` and ``X_i``
    (``^iX_{π(i)}``, a :mod:`pvosimr.spatial` transform), with the products of the paper's
    ``^{π(i)}Ω_i`` (eq. 10) and ``^{π(i)}P_i`` (eq. 8) applied through ``S_i`` and ``U_i``
    (:mod:`pvosimr.algorithms.articulated`).  The generic form of :func:`joint_step`."""

    B: Backend
    S: Matrix
    U: Matrix
    Dinv: Matrix
    X: Any

    @classmethod
    def build(
        cls, B: Backend, S: Matrix, H_A: Matrix, armature: Matrix | None, X: Any
    ) -> JointStep:
        """The step of :func:`joint_step` by the products themselves: ``U_i = H^A_i S_i``,
        ``D_i = S_iᵀ U_i + armature`` and ``D_i⁻¹``."""
        U = H_A @ S
        D = S.T @ U
        if armature is not None:
            D = D + armature
        return cls(B=B, S=S, U=U, Dinv=B.inv(D), X=X)

    def omega(self) -> Matrix:
        """``^{π(i)}Ω_i = S_i D_i⁻¹ S_iᵀ`` (eq. 10), 6×6 in frame ``i``."""
        return self.B.symmetric(self.S @ self.Dinv @ self.S.T)

    def congruence(self, F: Matrix) -> Matrix:
        """``Fᵀ ^{π(i)}Ω_i F`` for a 6×k block ``F`` (a rank-nv_i update)."""
        W = self.S.T @ F
        return self.B.symmetric(W.T @ (self.Dinv @ W))

    def force_to_parent(self, F: Matrix) -> Matrix:
        """``^{π(i)}P_i F``: 6×k forces on link ``i`` (frame i) → on the parent (frame π(i))."""
        return self.X.force(F - self.U @ (self.Dinv @ (self.S.T @ F)))

    def extend(self, Omega: Matrix, F: Matrix, parent: int) -> tuple[Matrix, Matrix | None]:
        """``Ω + Fᵀ ^{π(i)}Ω_i F`` and ``^{π(i)}P_i F`` (None where π(i) is the world): eqs. 16
        and 17 carrying an extended inverse inertia and propagator over joint ``i``."""
        Omega = self.B.symmetric(Omega + self.congruence(F))
        return Omega, self.force_to_parent(F) if parent > 0 else None

    def motion_from_parent(self, A: Matrix) -> Matrix:
        """``^{π(i)}P_iᵀ A``: 6×k motions of the parent (frame π(i)) → of link ``i`` (frame i)."""
        Z = self.X.motion(A)
        return Z - self.S @ (self.Dinv @ (self.U.T @ Z))

    def motion_congruence(self, Omega: Matrix) -> Matrix:
        """``^{π(i)}P_iᵀ Ω ^{π(i)}P_i`` for a symmetric 6×6 ``Ω`` of the parent (frame π(i))."""
        half = self.motion_from_parent(Omega)  # Pᵀ Ω
        return self.B.symmetric(self.motion_from_parent(half.T))  # Pᵀ (Pᵀ Ω)ᵀ = Pᵀ Ω P

    def rows_to_parent(self, K: Matrix) -> Matrix:
        """``K ^{π(i)}P_iᵀ``: k×6 rows acting on link ``i``'s motion → on the parent's."""
        return self.X.rows(K - (K @ self.S) @ (self.Dinv @ self.U.T))

    def fold_into(self, H_A: list[Matrix], i: int, parent: int) -> None:
        """``H^A_{π(i)} += X_iᵀ (H^A_i − U_i D_i⁻¹ U_iᵀ) X_i``; nothing where π(i) is the
        world."""
        if parent > 0:
            B = self.B
            Ia = B.symmetric(H_A[i] - self.U @ (self.Dinv @ self.U.T))
            H_A[parent] = B.symmetric(H_A[parent] + self.X.congruence(Ia))


def joint_step(
    B: Backend,
    S: Matrix,
    H_A: Matrix,
    armature: Matrix | None,
    X: Any,
    axis: int | None,
    identity: bool,
) -> JointStep:
    """Hook: joint ``i``'s step from its articulated inertia ``H_A`` = ``H^A_i`` (6×6, complete
    once every child has been folded in), its motion subspace ``S`` = ``S_i`` (6×nv_i), its
    rotor inertia ``armature`` (nv_i×nv_i, or None) and ``X`` = ``^iX_{π(i)}``:
    ``U_i = H^A_i S_i``, ``D_i = S_iᵀ U_i + armature`` and ``D_i⁻¹``, in an object with the
    methods of :class:`JointStep` (generic form: :meth:`JointStep.build`).

    ``axis`` is ``k`` where ``S_i = e_k`` at every configuration (None otherwise) and
    ``identity`` says ``S_i = I``: what a backend's own step may read instead of multiplying."""
    own = _OWN_JOINT_STEP.get(type(B))
    if own is None:
        return JointStep.build(B, S, H_A, armature, X)
    return own(B, S, H_A, armature, X, axis, identity)


def rows_through(
    B: Backend, product: Callable[[Matrix], Matrix], blocks: list[Matrix]
) -> list[Matrix]:
    """Hook: ``[product(K) for K in blocks]`` for a ``product`` that maps each row of a k×6
    block on its own (``K ↦ K Pᵀ``, eq. 19), so that a backend may apply it once to the
    blocks stacked.  The generic form is one product per block: the paper's line 22 per EE."""
    own = _OWN_ROWS_THROUGH.get(type(B))
    if own is None:
        return [product(K) for K in blocks]
    return own(B, product, blocks)


#: A block of a matrix being assembled: its rows, its columns (slices with a start and a stop)
#: and its value.
Block = tuple[slice, slice, Matrix]


def place_blocks(B: Backend, rows: int, cols: int, blocks: Sequence[Block]) -> Matrix:
    """Hook: the ``rows × cols`` matrix of zeros with each block of ``blocks`` written at its
    rows and columns, in order (a later block replaces what an earlier one wrote there): the
    generic form is that slice assignment into ``B.zeros``.  The sweeps end by placing G's
    blocks (O(m²) of them for EFPA), where a backend whose assignment copies the whole matrix
    (CasADi's SX) places them all at once instead."""
    own = _OWN_PLACE_BLOCKS.get(type(B))
    if own is not None:
        return own(B, rows, cols, blocks)
    G = B.zeros(rows, cols)
    for r, c, block in blocks:
        G[r, c] = block
    return G


#: Each hook's backends' own forms, by backend class (:func:`implements`).
_OWN: dict[Callable[..., Any], dict[type, Callable[..., Any]]] = {}
_OWN_JOINT_STEP = _OWN[joint_step] = {}
_OWN_ROWS_THROUGH = _OWN[rows_through] = {}
_OWN_PLACE_BLOCKS = _OWN[place_blocks] = {}

F = TypeVar("F", bound=Callable[..., Any])


def implements(hook: Callable[..., Any], cls: type) -> Callable[[F], F]:
    """Decorator: the function is backend class ``cls``'s own form of ``hook``
    (:func:`joint_step`, :func:`rows_through` or :func:`place_blocks`), called with the hook's
    arguments.

    Exactly ``cls``, not its subclasses: a subclass may change the arithmetic that a shortcut
    goes around (the pivot probe of :mod:`pvosimr.checks` notes every ``B.inv``, the
    wide-precision backend of the accuracy study holds Decimals), so it runs the generic form
    on its own methods.  A hook costs one dictionary lookup per call (the sweeps call
    :func:`joint_step` once per link), and no backend derives from anything to get the
    generic form."""
    own = _OWN[hook]

    def add(f: F) -> F:
        own[cls] = f
        return f

    return add


def arithmetic(matmul: Callable, operators: Callable) -> Callable[[type], type]:
    """A class decorator for a backend's matrix type: ``@``, ``+``, ``-``, ``*``, ``/`` and their
    reflections, each pair ``operators(f)`` (``x ∘ y``, ``y ∘ x``) of the binary ``f`` on the raw
    operands; ``@`` is ``matmul``."""
    binary = {"matmul": matmul, "add": operator.add, "sub": operator.sub, "mul": operator.mul,
              "truediv": operator.truediv}  # fmt: skip

    def decorate(cls: type) -> type:
        for name, f in binary.items():
            left, right = operators(f)
            setattr(cls, f"__{name}__", left)
            setattr(cls, f"__r{name}__", right)
        return cls

    return decorate
