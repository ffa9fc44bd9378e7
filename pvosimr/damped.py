"""The damped Delassus matrix ``G + μI`` of contact solvers: its inverse and a reusable solver.

Proximal and ADMM contact solvers, and PGS with compliance, work with ``G + μI`` (``μ ≥ 0`` a
scalar, or a vector ``μ`` of one damping per constraint row, ``G + diag(μ)``), and change ``μ``
between iterations.  Two entry points, on top of :func:`pvosimr.compute_delassus`:

* :func:`damped_delassus_inverse` — ``(G + μI)⁻¹`` by a Cholesky factorization of ``G + μI``.
* :class:`DelassusOperator` — ``G`` once, then ``(G + μI) x = b`` for any ``μ`` at ``O(m²)``.

Pinocchio's ``mu`` is not this ``μ`` (measured with pin 4.1.0, pinned by ``tests/test_damped.py``):

* ``pin.computeDelassusMatrix(model, data, q, cms, cdatas, mu)`` adds a body of mass ``mu`` at
  each contact point (with rotational inertia ``mu I₃`` for a 6D contact) to the articulated
  inertias, i.e. ``M + mu JᵀJ``, and so returns ``(G⁻¹ + mu I)⁻¹`` (Woodbury), not ``G + mu I``
  (docs/solvers.md gives the distances on Atlas).
* ``pin.computeDampedDelassusMatrixInverse(model, data, q, cms, cdatas, mu)`` returns exactly
  ``I / mu`` from Python (``I`` with ``scaled=True``); ``mu`` below 1e-12 raises.  Its C++ body is
  right: it forms ``H = (G⁻¹ + mu⁻¹ I)⁻¹`` and returns ``mu⁻¹ (I − mu⁻¹ H) = (G + mu I)⁻¹``, but
  through ``computePvDelassusMatrix`` (its default ``Pv=true``), whose per-joint constraint lists
  ``initPvDelassus`` fills — a function Python has no binding for.  On a fresh ``Data`` the lists
  are empty, ``H = 0`` and the result is ``I / mu``.  (Two constraints on one joint make that
  call undefined behaviour; :func:`pvosimr.reference.pinocchio.damped_delassus_inverse_defect`
  measures it, and the right C++ result after ``initPvDelassus``.)

With pvosimr::

    G = pvosimr.compute_delassus(model, data, q, cms)
    G + mu * np.eye(len(G))                                            # G + μI
    pvosimr.damped_delassus_inverse(model, data, q, cms, mu)           # (G + μI)⁻¹
    op = pvosimr.DelassusOperator(model, data, q, cms); op.solve(b, mu)   # (G + μI)⁻¹ b
    op.to_pinocchio(mu)                                   # pin.DelassusOperatorDense of G + μI
    op.spectral_bounds()                                  # (λ_min, λ_max), exact
    lanczos_bounds(G)                                     # the same, iterative, with bounds
    effective_model(model, d)       # G = J (M + diag(d))⁻¹ Jᵀ on every path: armature + d
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from .choice import canonical_algorithm
from .delassus import compute_delassus

__all__ = [
    "DelassusOperator",
    "SpectralEstimate",
    "damped_delassus_inverse",
    "effective_model",
    "lanczos_bounds",
]

EPS = float(np.finfo(float).eps)

Damping = float | np.ndarray


def check_damping(mu, m: int) -> Damping:
    """``mu`` as a float (one damping for every row) or a float array of ``m`` row dampings.

    Raises ``ValueError`` naming the problem: a negative, NaN or infinite entry, a vector whose
    length is not ``m``, an array of more than one dimension.
    """
    arr = np.asarray(mu, dtype=float)
    if arr.ndim > 1:
        raise ValueError(
            f"mu must be a scalar or a vector of m = {m} row dampings, got shape {arr.shape}"
        )
    if arr.ndim == 1 and arr.shape[0] != m:
        raise ValueError(
            f"mu has {arr.shape[0]} entries, expected one per constraint row (m = {m})"
        )
    if np.isnan(arr).any():
        raise ValueError(f"mu must not be NaN, got {mu!r}")
    if np.isinf(arr).any():
        raise ValueError(f"mu must be finite, got {mu!r}")
    if (arr < 0).any():
        raise ValueError(f"mu must be ≥ 0 (G + μI damps G), got {mu!r}")
    return float(arr) if arr.ndim == 0 else arr.copy()


def _singular(smallest: float, largest: float, m: int, mu: Damping) -> ValueError:
    hint = (
        "G is singular (more constraint rows than independent constraints, e.g. redundant "
        "welds or contacts); pass a damping mu > 0"
        if np.all(np.asarray(mu) == 0)
        else "the damping is below G's rounding level; pass a larger mu"
    )
    return ValueError(
        f"G + μI is numerically singular: smallest pivot {smallest:.3g} against largest "
        f"{largest:.3g} (threshold m·eps = {m * EPS:.1e} relative): {hint}"
    )


def cholesky_factor(G: np.ndarray, mu: Damping) -> np.ndarray:
    """The lower factor ``L`` of ``G + diag(μ) = L Lᵀ``, refusing a numerically singular one.

    The pivots ``L_ii²`` lie between the extreme eigenvalues, so ``min L_ii² ≤ m·eps·max L_ii²``
    proves ``κ(G + μI) ≥ 1 / (m·eps)``: a solve would return noise, and this raises instead.
    """
    m = G.shape[0]
    A = G + np.diag(np.broadcast_to(mu, (m,)))
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        raise _singular(float(np.linalg.eigvalsh(A)[0]), float(np.max(np.diag(A))), m, mu) from None
    pivots = np.diag(L) ** 2
    if m and pivots.min() <= m * EPS * pivots.max():
        raise _singular(float(pivots.min()), float(pivots.max()), m, mu)
    return L


def cholesky_inverse(L: np.ndarray) -> np.ndarray:
    """``(L Lᵀ)⁻¹ = WᵀW`` with ``W = L⁻¹``, symmetrized against the rounding of the product."""
    W = np.linalg.solve(L, np.eye(L.shape[0]))
    inv = W.T @ W
    return 0.5 * (inv + inv.T)


def damped_delassus_inverse(
    model: pin.Model,
    data: pin.Data,
    q,
    constraint_models: Iterable,
    mu,
    algorithm: str = "pv-osimr",
) -> np.ndarray:
    """``(G + μI)⁻¹`` (m × m, symmetric), ``G`` from :func:`pvosimr.compute_delassus`.

    ``mu`` is a scalar ``μ ≥ 0`` or a vector of ``m`` row dampings (``(G + diag(μ))⁻¹``).  The
    inverse comes from the Cholesky factor ``G + μI = L Lᵀ`` as ``L⁻ᵀ L⁻¹``, never from a
    general inverse.  ``μ = 0`` gives ``G⁻¹`` when ``G`` is positive definite; a singular ``G``
    (redundant constraints) with ``μ = 0`` raises ``ValueError``.  This is not Pinocchio's
    ``mu``: see the module docstring.
    """
    G = compute_delassus(model, data, q, constraint_models, algorithm=algorithm)
    mu = check_damping(mu, G.shape[0])
    return cholesky_inverse(cholesky_factor(G, mu))


class DelassusOperator:
    """``G`` once, then ``(G + μI) x = b`` and ``(G + μI)⁻¹`` for any damping ``μ``.

    ::

        op = pvosimr.DelassusOperator(model, data, q, cms, algorithm="pv-osimr")
        op.G                    # the Delassus matrix, m × m (read-only)
        op.solve(b, 1e-4)       # b: m or m × k
        op.inverse(1e-4)        # (G + 1e-4 I)⁻¹

    **Factorization.**  The constructor factors ``G = V Λ Vᵀ`` once (symmetric eigendecomposition,
    ``O(m³)``); then ``(G + μI)⁻¹ b = V (Λ + μ)⁻¹ Vᵀ b`` costs two ``m × m`` products, ``O(m²)``
    per right-hand side, for every new scalar ``μ``.  A Cholesky of ``G + μI`` would cost a new
    ``O(m³)`` factorization per ``μ``.  A vector ``μ`` (one damping per row) has no such shortcut:
    ``G + diag(μ)`` does not share ``G``'s eigenvectors, and each call factors it by Cholesky.

    **Accuracy.**  Both routes are normwise backward stable, so their worst-case error grows as
    ``eps·κ(G + μI)``: largest when ``μ`` is tiny against ``G``'s small eigenvalues (a singular
    ``G``, redundant welds, has ``κ(G + μI) ≈ λ_max / μ``).  The eigenvalues carry an absolute
    error ``~ eps·λ_max`` and the eigen route reaches that bound; Cholesky does better where the
    rows of ``G`` differ in scale (linear and angular rows: its error depends on ``G``'s
    diagonally scaled condition number).  One step of iterative refinement (``refine=True``, the
    default) closes the gap at ``O(m²)``.  docs/solvers.md gives the errors of the three routes
    on Atlas and on rank-deficient chains.

    **Cost.**  After the one ``eigh``, a new scalar ``μ`` costs the two ``m × m`` products above
    (refined: one more product with ``G`` and a second such solve), where a Cholesky route pays a
    new ``O(m³)`` factorization and its triangular solves for every ``μ``.

    ``μ = 0`` with a singular ``G``, or a ``μ`` at ``G``'s rounding level, raises ``ValueError``.
    """

    def __init__(
        self,
        model: pin.Model,
        data: pin.Data,
        q,
        constraint_models: Iterable,
        algorithm: str = "pv-osimr",
    ) -> None:
        self._factor(compute_delassus(model, data, q, constraint_models, algorithm=algorithm))
        #: What G was computed by and for (None for :meth:`from_matrix`), for ``repr``.
        self.algorithm: str | None = canonical_algorithm(algorithm)
        self.model_name: str | None = model.name

    @classmethod
    def from_matrix(cls, G) -> DelassusOperator:
        """The operator of a Delassus matrix at hand (``compute_delassus_batch``'s, a code's)."""
        G = np.array(G, dtype=float)
        if G.ndim != 2 or G.shape[0] != G.shape[1]:
            raise ValueError(f"G must be a square matrix, got shape {G.shape}")
        if not np.allclose(G, G.T, rtol=0.0, atol=1e3 * EPS * max(1.0, np.abs(G).max(initial=0))):
            raise ValueError("G must be symmetric")
        op = cls.__new__(cls)
        op._factor(G)
        op.algorithm = op.model_name = None
        return op

    def __repr__(self) -> str:
        """Shape, origin and spectrum: what a reader needs to tell two operators apart."""
        origin = (
            "from a matrix"
            if self.algorithm is None
            else f"algorithm={self.algorithm!r}, model={self.model_name!r}"
        )
        spectrum = (
            f", eigenvalues in [{self.eigenvalues[0]:.3g}, {self.eigenvalues[-1]:.3g}]"
            if self.m
            else ""
        )
        return f"DelassusOperator({self.m}×{self.m}, {origin}{spectrum})"

    def _factor(self, G: np.ndarray) -> None:
        self.G = 0.5 * (G + G.T)
        self.G.flags.writeable = False  # the factors below describe this very matrix
        #: ``Λ`` ascending and ``V`` of ``G = V Λ Vᵀ``.
        self.eigenvalues, self.eigenvectors = np.linalg.eigh(self.G)

    @property
    def m(self) -> int:
        """The number of constraint rows."""
        return self.G.shape[0]

    def _shifted(self, mu: float) -> np.ndarray:
        """``Λ + μ``, refused when ``G + μI`` is numerically singular."""
        shifted = self.eigenvalues + mu
        if self.m and shifted[0] <= self.m * EPS * max(shifted[-1], 0.0):
            raise _singular(float(shifted[0]), float(shifted[-1]), self.m, mu)
        return shifted

    def _eig_solve(self, b: np.ndarray, shifted: np.ndarray) -> np.ndarray:
        """``V (Λ + μ)⁻¹ Vᵀ b``: two ``m × m`` products."""
        V = self.eigenvectors
        scale = 1.0 / shifted if b.ndim == 1 else (1.0 / shifted)[:, None]
        return V @ (scale * (V.T @ b))

    def solve(self, b, mu=0.0, refine: bool = True) -> np.ndarray:
        """``x`` with ``(G + μI) x = b`` (``b``: m or m × k), ``O(m²)`` per column for scalar ``μ``.

        ``refine`` adds one step of iterative refinement, ``x += V (Λ + μ)⁻¹ Vᵀ (b − (G + μI) x)``
        (twice the work, still ``O(m²)``), which brings the eigen route to Cholesky's accuracy
        (see the class docstring).  A vector ``μ`` (one damping per row) solves
        ``(G + diag(μ)) x = b`` by a Cholesky of ``G + diag(μ)`` on each call, ``O(m³)``.
        """
        b = np.asarray(b, dtype=float)
        if b.ndim not in (1, 2) or b.shape[0] != self.m:
            raise ValueError(f"b must have shape ({self.m},) or ({self.m}, k), got {b.shape}")
        if not np.isfinite(b).all():  # else x is NaN throughout, silently
            bad = tuple(int(i) for i in np.argwhere(~np.isfinite(b))[0])
            where = f"b[{bad[0]}]" if b.ndim == 1 else f"b[{bad[0]}, {bad[1]}]"
            raise ValueError(f"b must be finite: {where} is {b[bad]}")
        mu = check_damping(mu, self.m)
        if isinstance(mu, np.ndarray):  # L Lᵀ x = b: two triangular solves
            L = cholesky_factor(self.G, mu)
            return np.linalg.solve(L.T, np.linalg.solve(L, b))
        shifted = self._shifted(mu)
        x = self._eig_solve(b, shifted)
        if refine:
            x = x + self._eig_solve(b - (self.G @ x + mu * x), shifted)
        return x

    def inverse(self, mu=0.0, refine: bool = True) -> np.ndarray:
        """``(G + μI)⁻¹ = V (Λ + μ)⁻¹ Vᵀ`` (symmetric), refined once as ``X + X (I − (G + μI) X)``
        when ``refine``; a vector ``μ`` goes through Cholesky."""
        mu = check_damping(mu, self.m)
        if isinstance(mu, np.ndarray):
            return cholesky_inverse(cholesky_factor(self.G, mu))
        V = self.eigenvectors
        X = (V / self._shifted(mu)) @ V.T
        if refine:
            X = X + X @ (np.eye(self.m) - (self.G @ X + mu * X))
        return 0.5 * (X + X.T)

    def to_pinocchio(self, mu=0.0, compliance=0.0) -> pin.DelassusOperatorDense:
        """``pin.DelassusOperatorDense`` of ``G``, what ``pin.ADMMConstraintSolver.solve`` and
        ``pin.PGSConstraintSolver.solve`` take (the name and type Pinocchio's Python tests use).

        ``mu`` (scalar or one per row) is Pinocchio's *damping*, the numerical ``G + μI`` of this
        class: ``to_pinocchio(mu).matrix()`` is ``G + μI``.  (pin 4.1 binds no
        ``updateDecomposition``, so the operator's own ``solve`` cannot run from Python; the
        solvers factor it themselves.)  Pinocchio's solvers
        overwrite that damping with their own proximal term; a regularisation that must survive
        the solve (a soft contact) is Pinocchio's *compliance*, ``compliance`` here (scalar or
        one per row), which the solvers keep and add to ``G``.
        """
        op = pin.DelassusOperatorDense(np.array(self.G))  # a copy: G stays read-only here
        for value, update in ((mu, op.updateDamping), (compliance, op.updateCompliance)):
            value = check_damping(value, self.m)
            update(np.broadcast_to(value, (self.m,)).astype(float))
        return op

    def spectral_bounds(self) -> tuple[float, float]:
        """``(λ_min, λ_max)`` of ``G``, exact to ``~eps·λ_max``: read off the factorization the
        constructor made, no new work.  Without that factorization (large ``m``, ``G`` only as a
        product), :func:`lanczos_bounds` estimates both with a stated error."""
        if not self.m:
            raise ValueError("G is empty (no constraint rows): it has no eigenvalues")
        return float(self.eigenvalues[0]), float(self.eigenvalues[-1])


class SpectralEstimate(NamedTuple):
    """Lanczos' estimate of ``G``'s extreme eigenvalues, with bounds that hold.

    * ``smallest_lower ≤ λ_min ≤ smallest`` and ``largest ≤ λ_max ≤ largest_upper``: Ritz
      values lie inside the spectrum; the outer bounds are Gershgorin's discs (``max(0, ·)``
      below, ``G`` being positive semi-definite), ``O(m²)`` from the matrix, ``nan`` when ``G``
      is given only as a product.
    * Each Ritz value lies within its ``*_residual`` (``β_k |s_k|``) of *an* eigenvalue of
      ``G``, not necessarily the extreme one: a cluster of eigenvalues at the top (symmetric
      branches) slows Lanczos and leaves ``largest`` below ``λ_max`` by more than its residual
      (``tests/test_damped.py`` has such a case).
    """

    smallest: float
    largest: float
    smallest_residual: float
    largest_residual: float
    smallest_lower: float
    largest_upper: float
    steps: int


def lanczos_bounds(
    G, steps: int = 30, seed: int = 0, product: Callable[[np.ndarray], np.ndarray] | None = None
) -> SpectralEstimate:
    """The extreme eigenvalues of the symmetric ``G`` (a matrix, or ``m`` with ``product(x) =
    G x``) by ``steps`` Lanczos steps with full reorthogonalization from a random start:
    ``steps`` products with ``G`` and ``O(m·steps²)`` more, no factorization.  The largest
    converges first (what ADMM's penalty needs); once ``steps ≥ m`` both are exact.  See
    :class:`SpectralEstimate` for what the bounds guarantee."""
    if product is None:
        G = np.asarray(G, dtype=float)
        m, product = G.shape[0], G.__matmul__
        radius = np.abs(G).sum(axis=1) - np.abs(np.diag(G))
        outer = (
            max(0.0, float((np.diag(G) - radius).min(initial=0))),
            float((np.diag(G) + radius).max(initial=0)),
        )
    else:
        m, outer = int(G), (float("nan"), float("nan"))
    if m == 0:
        raise ValueError("G is empty (no constraint rows): it has no eigenvalues")
    if steps < 1:
        raise ValueError(f"steps must be ≥ 1, got {steps}")
    theta, residual, done = _lanczos(product, m, min(steps, m), seed)
    return SpectralEstimate(
        float(theta[0]),
        float(theta[-1]),
        float(residual[0]),
        float(residual[-1]),
        outer[0],
        outer[1],
        done,
    )


def _lanczos(product, m: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Ritz values, their residuals and the steps taken (fewer on an invariant subspace)."""
    Q = np.zeros((m, k + 1))
    alpha, beta = np.zeros(k), np.zeros(k)
    start = np.random.default_rng(seed).standard_normal(m)
    Q[:, 0] = start / np.linalg.norm(start)
    done = k
    for j in range(k):
        w = product(Q[:, j])
        alpha[j] = Q[:, j] @ w
        for _ in range(2):  # full reorthogonalization, twice: no ghost eigenvalues
            w -= Q[:, : j + 1] @ (Q[:, : j + 1].T @ w)
        beta[j] = np.linalg.norm(w)
        if beta[j] <= 1e3 * EPS * max(np.abs(alpha[: j + 1]).max(), 1e-300):
            done, beta[j] = j + 1, 0.0  # an invariant subspace: its Ritz values are exact
            break
        Q[:, j + 1] = w / beta[j]
    T = np.diag(alpha[:done]) + np.diag(beta[: done - 1], 1) + np.diag(beta[: done - 1], -1)
    theta, S = np.linalg.eigh(T)
    return theta, np.abs(beta[done - 1] * S[-1, :]), done


def effective_model(model: pin.Model, diagonal) -> pin.Model:
    """A copy of ``model`` whose ``G`` is ``J (M + diag(d))⁻¹ Jᵀ``: ``d`` (one entry ≥ 0 per
    joint velocity) added to its rotor armature, which every algorithm and path (numpy, batch,
    CasADi, generated C) already puts on ``M``'s diagonal.

    An implicit integrator's effective mass ``M + hD + h²K`` (MuJoCo's implicit damping ``D``
    and stiffness ``K``, diagonal per joint) is ``d = h·D + h²·K``.  Build the copy once per
    ``d`` (a model copy, then one topology per copy); calls on ``model`` itself do not change.
    """
    d = np.asarray(diagonal, dtype=float)
    if d.shape != (model.nv,):
        raise ValueError(
            f"the diagonal has shape {d.shape}, expected one entry per joint velocity "
            f"(nv = {model.nv},)"
        )
    bad = np.flatnonzero(~np.isfinite(d) | (d < 0))
    if bad.size:
        raise ValueError(
            f"the diagonal must be finite and ≥ 0 (M + diag(d) must stay positive definite): "
            f"entry {bad[0]} is {d[bad[0]]}"
        )
    out = model.copy()
    out.armature = np.asarray(model.armature, dtype=float) + d
    return out
