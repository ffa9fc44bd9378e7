"""The crossover sweep: per-configuration time of the batched recursive code against the dense
route ``G = J M⁻¹ Jᵀ`` (numpy on Pinocchio's M and J) up to n = 300, on one BLAS thread, and
where the recursive code starts to win (:func:`crossover`).  Every route's G must agree with the
dense route's at the first configuration (:func:`check_agreement`) before it is timed.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from pvosimr import compute_delassus_batch, zoo
from pvosimr.reference.truth import TOLERANCE, constraint_jacobian, rel_err

from .loop import Method
from .methods import Options, batch_name, compile_g, g_facts, pinocchio_bare
from .names import CROSSOVER_BATCH
from .record import within
from .scaling import Point, large_flags, quick_sizes, start, sweep

CODEGEN = batch_name(CROSSOVER_BATCH, 1)
CROSSOVER_LABELS = {
    "dense:pin+cholesky": "dense: Pinocchio's M and J + Cholesky (everything)",
    "dense:cholesky": "dense: Cholesky only (M, J given)",
    "dense:lu": "dense: LU solve only (M, J given)",
    "batch:pv-osimr": "numpy batch PV-OSIMr",
    CODEGEN: "codegen batch PV-OSIMr (1 thread)",
    "pin-efpa": "Pinocchio C++ EFPA (one call per configuration)",
}
"""The routes, dense first, all timed per configuration, as the report and the figure name them."""
CROSSOVER_METHODS = tuple(CROSSOVER_LABELS)
DENSE = CROSSOVER_METHODS[:3]
RECURSIVE = CROSSOVER_METHODS[3:]

FAMILIES = {
    "chain_welded_every_k": "Fig. 4a chain: n = k² links, 6D weld every k links (m = 6k)",
    "chain_two_welds": "chain of n links, 6D welds on links n/2 and n (m = 12)",
    "stem_with_branches": "Fig. 3a tree: floating stem of L links, one 7-link welded branch "
    "at each end (n = L + 19, m = 12)",
}
"""The mechanisms and what they are."""

CROSSOVER_SIZES: dict[str, tuple[int, ...]] = {
    "chain_welded_every_k": (2, 3, 4, 6, 8, 10, 12, 14, 17),  # k: n = 4 … 289
    "chain_two_welds": (4, 8, 16, 32, 64, 100, 150, 200, 300),  # n
    "stem_with_branches": (1, 13, 45, 81, 131, 181, 231, 281),  # L: n = 20 … 300
}
"""Mechanism -> its sizes (the argument of :func:`mechanism`)."""
QUICK_CROSSOVER_LINKS = 20  # --quick-scaling: mechanisms of at most this many links
CODEGEN_LINKS = 300  # the largest n whose generated code is built (its build grows with n)
AGREEMENT_TOLERANCE = TOLERANCE  # rel_err of every route against the dense one, or a stop


def quick_crossover_sizes() -> dict[str, tuple[int, ...]]:
    """The sizes of at most :data:`QUICK_CROSSOVER_LINKS` links, two per mechanism at most."""
    return quick_sizes(CROSSOVER_SIZES, QUICK_CROSSOVER_LINKS, 2)


def _openblas_setter() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    """numpy's OpenBLAS get/set thread count, found among the loaded libraries (Linux)."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        return None
    names = [(f"{p}_get_num_threads{s}", f"{p}_set_num_threads{s}")
             for p in ("scipy_openblas", "openblas") for s in ("64_", "")]  # fmt: skip
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get, put in names:
            if hasattr(lib, get) and hasattr(lib, put):
                getattr(lib, put).argtypes = [ctypes.c_int]
                return getattr(lib, get), getattr(lib, put)
    return None


@contextlib.contextmanager
def blas_threads(n: int) -> Iterator[str]:
    """numpy's OpenBLAS on ``n`` threads inside the block; yields what was done."""
    np.linalg.cholesky(np.eye(2))  # numpy's BLAS is loaded
    found = _openblas_setter()
    if found is None:
        yield "unchanged (numpy's OpenBLAS not found)"
        return
    get, put = found
    before = get()
    put(n)
    try:
        yield f"{n} (OpenBLAS, {before} by default)"
    finally:
        put(before)


def dense_inputs(
    model: pin.Model, data: pin.Data, cms: list, Q: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(B, n, n) mass matrices as ``pin.crba`` returns them (M in the upper triangle) and
    (B, m, n) constraint Jacobians of the rows of ``Q``, from Pinocchio."""
    Ms = np.zeros((len(Q), model.nv, model.nv))
    Js = []
    for b, q in enumerate(Q):
        Ms[b] = pin.crba(model, data, q)
        Js.append(constraint_jacobian(model, q, cms, data))
    return Ms, np.stack(Js)


def dense_cholesky(Ms: np.ndarray, Js: np.ndarray) -> np.ndarray:
    """``G = Yᵀ Y``, ``Y = U⁻ᵀ Jᵀ``, ``M = Uᵀ U`` (M's upper triangle is read), batched."""
    U = np.linalg.cholesky(Ms, upper=True)
    Y = np.linalg.solve(np.swapaxes(U, 1, 2), np.swapaxes(Js, 1, 2))
    return np.swapaxes(Y, 1, 2) @ Y


def dense_lu(Ms: np.ndarray, Js: np.ndarray) -> np.ndarray:
    """``G = J M⁻¹ Jᵀ`` through one batched LU solve (M full, symmetric)."""
    X = np.linalg.solve(Ms, np.swapaxes(Js, 1, 2))
    return Js @ X


def check_agreement(
    Gs: dict[str, np.ndarray], reference: str, tolerance: float = AGREEMENT_TOLERANCE
) -> dict[str, float]:
    """``rel_err`` of every route's G against ``reference``'s; ValueError naming the first
    route beyond ``tolerance``."""
    errors = {name: rel_err(G, Gs[reference]) for name, G in Gs.items() if name != reference}
    for name, error in errors.items():
        message = f"{name} disagrees with {reference}: rel_err {error:.1e} > {tolerance:g}"
        within(error, tolerance, message, ValueError)
    return errors


def _generated(robot: zoo.Robot, point: Point, options: Options) -> Callable | None:
    """The batched generated call on one thread, or None (with the reason in the point)."""
    if options.codegen and point.n > CODEGEN_LINKS:
        point.skipped[CODEGEN] = f"not built beyond n = {CODEGEN_LINKS}"
        return None
    flags = large_flags(point.n, options.flags)
    compiled = compile_g(point, robot.model, robot.constraints, flags, options)
    if compiled is None:
        point.skipped[CODEGEN] = point.skipped.pop("codegen:pv-osimr")
        return None
    point.build = g_facts(compiled)
    return lambda Q: compiled(Q, threads=1)


def _point(family: str, size: int, repeats: int, options: Options, batch: int) -> Point:
    """Every route on one mechanism: checked against the dense route, then timed."""
    robot, Q, point, _ = start(family, size, options, batch)
    model, cms = robot.model, robot.constraints
    data = model.createData()
    Ms, Js = dense_inputs(model, data, cms, Q)
    full = np.triu(Ms) + np.swapaxes(np.triu(Ms, 1), 1, 2)  # M whole for the LU route
    fns = {
        "dense:pin+cholesky": (lambda Q: dense_cholesky(*dense_inputs(model, data, cms, Q)), Q),
        "dense:cholesky": (lambda MJ: dense_cholesky(*MJ), (Ms, Js)),
        "dense:lu": (lambda MJ: dense_lu(*MJ), (full, Js)),
        "batch:pv-osimr": (lambda Q: compute_delassus_batch(model, Q, cms, "pv-osimr"), Q),
        CODEGEN: (_generated(robot, point, options), Q),
    }
    methods: dict[str, Method] = {k: (f, [x], len(Q)) for k, (f, x) in fns.items() if f}
    methods["pin-efpa"] = (pinocchio_bare(model, cms)["pin-efpa"], list(Q[: min(8, len(Q))]), 1)
    Gs = {k: np.asarray(f(x[0]), dtype=float) for k, (f, x, _) in methods.items()}
    Gs = {k: G[0] if methods[k][2] > 1 else G for k, G in Gs.items()}  # a batch's first G
    point.errors = check_agreement(Gs, "dense:pin+cholesky")
    return point.timed(methods, repeats)


def time_crossover(
    sizes: dict[str, Sequence[int]],
    repeats: int,
    options: Options,
    *,
    batch: int = CROSSOVER_BATCH,
    progress: bool = True,
) -> list[Point]:
    """Median time per configuration of :data:`CROSSOVER_METHODS` on every mechanism size of
    ``sizes``, each on ``batch`` configurations, on one BLAS thread."""
    with blas_threads(1):
        return sweep("crossover", _point, sizes, repeats, options, batch, progress=progress)


@dataclass(frozen=True)
class Crossover:
    """Where ``fast`` starts to beat ``slow`` for good on one mechanism.

    ``kind``: ``"always"`` (faster at every size measured), ``"never"`` (slower at the largest
    size), ``"between"`` (slower at ``below``, faster at ``above`` and every larger size; ``n``
    is the log-log interpolation of the ratio's crossing of 1), ``"unmeasured"``.
    """

    kind: str
    n: float | None = None
    below: int | None = None
    above: int | None = None

    def text(self) -> str:
        if self.kind == "always":
            return f"faster from n = {self.above} (smallest)"
        if self.kind == "never":
            return f"slower up to n = {self.below}"
        if self.kind == "between":
            return f"n ≈ {self.n:.0f} ({self.below}–{self.above})"
        return "—"


def crossover(points: Sequence[Point], fast: str, slow: str) -> Crossover:
    """Where ``fast`` becomes faster than ``slow`` for good (the points of one mechanism)."""
    pts = sorted(
        (p.n, p.medians_us[fast] / p.medians_us[slow])
        for p in points
        if fast in p.medians_us and slow in p.medians_us
    )
    if not pts:
        return Crossover("unmeasured")
    if pts[-1][1] >= 1:
        return Crossover("never", below=pts[-1][0])
    last_slow = max((i for i, (_, r) in enumerate(pts) if r >= 1), default=None)
    if last_slow is None:
        return Crossover("always", above=pts[0][0])
    (n0, r0), (n1, r1) = pts[last_slow], pts[last_slow + 1]
    t = math.log(r0) / (math.log(r0) - math.log(r1))
    n = math.exp(math.log(n0) + t * (math.log(n1) - math.log(n0)))
    return Crossover("between", n, n0, n1)
