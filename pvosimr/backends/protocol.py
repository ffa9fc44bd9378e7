"""The thin seam between the algorithms and the array library they run on.

Every algorithm body is written once against this interface: it uses only the matrix operators
``@``, ``+``, ``-``, ``.T``, slicing (reads, and slice assignment into ``zeros``) and the few
functions below.  :data:`NUMPY` evaluates numerically; the batched backend of
:mod:`pvosimr.batch` evaluates many configurations at once; a CasADi SX backend with the same
methods (:mod:`pvosimr.symbolic`) turns the very same code into a symbolic expression graph
(operation counts, code generation).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

__all__ = ["FOLD_TOLERANCE", "Backend", "Matrix"]

#: Constant entries within this fraction of their matrix's largest entry are exact zeros when a
#: backend counts operations (CasADi SX, the counting backends).  Model files round: MJCF
#: quaternions leave ~1e-17 in rotation matrices and inertias, a URDF angle of π written as
#: 3.14159265359 gives sin = 2.1e-13.  Kept, each such entry costs arithmetic in every sweep;
#: folded, the function moves by at most about this fraction, far inside the 1e-10 agreement
#: with numpy.
FOLD_TOLERANCE = 1e-12

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
