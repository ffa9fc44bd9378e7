"""The sweeps against problem size: the Fig. 4 chains (single calls), and the batched and
generated paths with their memory up to about a thousand links.

:func:`time_scaling` times :data:`SCALING_METHODS` on both Fig. 4 chains of
:data:`SCALING_SIZES`.  :func:`time_large` times :data:`LARGE_METHODS` (per configuration) on
the Fig. 4a chain up to n = 961 links, and records what each path holds in memory: the peak
bytes traced by :mod:`tracemalloc` during one batched numpy call, and for the generated code
the size of its shared library, its work arrays (CasADi's ``sz_w`` doubles and ``sz_iw``
integers, one set per thread) and its compile time.  Inline, the generated function of the
Fig. 4a chain has about 160 CasADi instructions per link; large sizes are outlined and chunked
(:mod:`pvosimr.codegen.chunks`) and compiled at ``-O2`` (:func:`large_flags`).  Beyond
:data:`DATA_LINKS` no ``pin.Data`` is made (its size grows like nv³), so the numpy single call
and Pinocchio's are left out there.
"""

from __future__ import annotations

import sys
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pvosimr import compute_delassus_batch, zoo
from pvosimr.reference.truth import rel_err
from pvosimr.study.names import SCALING_BATCH, TOLERANCES
from pvosimr.study.progress import progress_bar

from .compiled import batch_error, batch_name, g_facts
from .loop import N_CONFIGS, Method, time_methods
from .methods import numpy_methods, pinocchio_bare
from .results import PIN, ScalingPoint, byte_size

__all__ = [
    "LARGE_FAMILY",
    "LARGE_METHODS",
    "LARGE_SIZES",
    "QUICK_LINKS",
    "SCALING_BATCH",
    "SCALING_METHODS",
    "SCALING_SIZES",
    "SweepOptions",
    "large_flags",
    "links",
    "quick_sizes",
    "time_large",
    "time_scaling",
]


@dataclass(frozen=True)
class SweepOptions:
    """What the large and crossover sweeps share: the seed of their random configurations, and
    whether the generated code is timed, built with which flags, cached where."""

    seed: int = 0
    flags: tuple[str, ...] = ("-O3",)
    cache_dir: Path | None = None
    codegen: bool = True


SCALING_SIZES: dict[str, tuple[int, ...]] = {
    "chain_welded_every_k": (2, 3, 4, 5, 6, 8, 10),  # k: n = k² links, m = 6k
    "chain_welded_every_link": (2, 4, 8, 16, 32, 48),  # n links, m = 6n
}
"""Fig. 4 mechanisms and their sizes for the single-call sweep."""

SCALING_METHODS = (
    "numpy:pv-osimr",
    "numpy:pv-osim",
    "numpy:efpa",
    "numpy:ltl-osim",
    "pin-efpa",
    "pin-pv-osimr",
)
"""The methods of the single-call sweep."""

LARGE_FAMILY = "chain_welded_every_k"
LARGE_SIZES = (2, 4, 8, 16, 22, 31)  # k: n = 4, 16, 64, 256, 484, 961 links, m = 6k
LARGE_METHODS = (
    "numpy:pv-osimr",
    "batch:pv-osimr",
    "codegen:pv-osimr",
    batch_name(SCALING_BATCH, 1),
    batch_name(SCALING_BATCH, 2),
    "pin-efpa",
    "pin-pv-osimr",
)
"""The methods of the large sweep (batched ones per configuration)."""

LARGE_FLAG_STEPS = ((64, None), (None, ("-O2",)))
"""``(up to n links, flags)``: None flags are the run's ``--codegen-flags``.  Beyond, ``-O2``:
``-O3`` adds build time for little speed on straight-line code this long, and from
:data:`pvosimr.codegen.chunks.CHUNKED_FROM` instructions on the generated C is outlined and
many small functions, so the compiler's time grows like the code."""

DATA_LINKS = 300
"""Largest chain on which the sweep makes a ``pin.Data``: Pinocchio 4 allocates four nv³
tensors of second-order derivatives in every Data (28 GB at n = 961), and pvosimr's single
call makes one too.  Beyond, the numpy single call and Pinocchio's are not run and the
generated code is checked against the batched numpy path."""

QUICK_LINKS = 16  # --quick-scaling: chains of at most this many links
CHECK_TOLERANCE = TOLERANCES["check"]


def links(family: str, size: int) -> int:
    """Links (= dofs) of the Fig. 4 chain ``family`` of this size: k² or n."""
    return size * size if family == "chain_welded_every_k" else size


def quick_sizes(sizes: dict[str, Sequence[int]] = SCALING_SIZES) -> dict[str, tuple[int, ...]]:
    """The sizes of chains with at most :data:`QUICK_LINKS` links (``--quick-scaling``)."""
    return {f: tuple(s for s in v if links(f, s) <= QUICK_LINKS) for f, v in sizes.items()}


def large_flags(n: int, flags: tuple[str, ...]) -> tuple[str, ...]:
    """Compiler flags of the generated code of ``n`` links (:data:`LARGE_FLAG_STEPS`)."""
    for up_to, step in LARGE_FLAG_STEPS:
        if up_to is None or n <= up_to:
            return flags if step is None else step
    raise AssertionError("the last step has no bound")


def _progress(jobs: list, desc: str, progress: bool):

    return progress_bar(jobs, desc=desc, disable=not progress, file=sys.stderr)


def _scaling_point(family: str, size: int, repeats: int, seed: int) -> ScalingPoint:
    """:data:`SCALING_METHODS` on the Fig. 4 chain ``family`` of this size."""
    robot = getattr(zoo, family)(size)  # the family is named after its builder in pvosimr.zoo
    model, cms = robot.model, robot.constraints
    rng = np.random.default_rng(seed)
    qs = [robot.q_random(rng) for _ in range(N_CONFIGS)]
    fns = numpy_methods(model, model.createData(), cms) | pinocchio_bare(model, cms)
    timings = time_methods({k: (fns[k], qs, 1) for k in SCALING_METHODS if k in fns}, repeats)
    medians = {k: t.median * 1e6 for k, t in timings.items()}
    return ScalingPoint(family, size, model.nv, robot.m, medians)


def time_scaling(
    sizes: dict[str, Sequence[int]], repeats: int, seed: int = 0, progress: bool = True
) -> list[ScalingPoint]:
    """Median time per call of :data:`SCALING_METHODS` on the Fig. 4 chains."""
    jobs = [(family, s) for family, values in sizes.items() for s in values]
    return [
        _scaling_point(family, size, repeats, seed)
        for family, size in _progress(jobs, "scaling", progress)
    ]


def peak_bytes(fn: Callable, *args) -> int:
    """Peak bytes :mod:`tracemalloc` traces during ``fn(*args)`` (numpy's arrays included)."""
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _checked_in(
    point: ScalingPoint, methods: dict[str, Method], name: str, method: Method, error: float
) -> None:
    if error > CHECK_TOLERANCE:
        point.skipped[name] = f"wrong result (error {error:.1e}), not timed"
    else:
        methods[name] = method


def _batch_checked(
    point: ScalingPoint,
    methods: dict[str, Method],
    name: str,
    fn: Callable[[np.ndarray], np.ndarray],
    Q: np.ndarray,
    reference: Callable[[np.ndarray], np.ndarray],
) -> None:
    """``fn`` on all of ``Q`` per call, if its first rows agree with ``reference``."""
    try:
        error = batch_error(fn, Q, reference)
    except (ValueError, TypeError) as exc:  # TypeError: no batched call in this build
        point.skipped[name] = f"refused: {str(exc).split('. ')[0]}"
        return
    _checked_in(point, methods, name, (fn, [Q], len(Q)), error)


def _threads(compiled, t: int) -> Callable[[np.ndarray], np.ndarray]:
    return lambda Q: compiled(Q, threads=t)


def _generated(
    point: ScalingPoint,
    robot,
    Q: np.ndarray,
    methods: dict[str, Method],
    reference: Callable[[np.ndarray], np.ndarray],
    options: SweepOptions,
) -> None:
    """The generated code, single and batched, checked and with its build facts."""
    from pvosimr import codegen

    model, cms = robot.model, robot.constraints
    flags = large_flags(model.nv, options.flags)
    try:
        compiled = codegen.compile(model, cms, flags=flags, cache_dir=options.cache_dir)
    except (ImportError, OSError, RuntimeError) as exc:
        point.skipped["codegen:pv-osimr"] = f"{type(exc).__name__}: {exc}"
        return
    point.memory["codegen:pv-osimr"] = g_facts(compiled, flags)
    error = batch_error(lambda Q: np.stack([compiled(q) for q in Q]), Q, reference)
    _checked_in(point, methods, "codegen:pv-osimr", (compiled, list(Q[:N_CONFIGS]), 1), error)
    for t in (1, 2):
        _batch_checked(point, methods, batch_name(len(Q), t), _threads(compiled, t), Q, reference)


def data_bytes(nv: int) -> int:
    """Bytes of the four nv × nv × nv second-order derivative tensors a ``pin.Data`` holds."""
    return 4 * 8 * nv**3


def _with_data(
    point: ScalingPoint, model, cms: list, Q: np.ndarray, methods: dict[str, Method]
) -> Callable[[np.ndarray], np.ndarray]:
    """The methods that need a ``pin.Data`` (numpy single call, Pinocchio's calls), each
    checked against the numpy single call; that call row by row is the reference."""
    data = model.createData()
    single = numpy_methods(model, data, cms)["numpy:pv-osimr"]
    point.memory["numpy:pv-osimr"] = {"peak_bytes": peak_bytes(single, Q[0])}
    qs = list(Q[:N_CONFIGS])
    methods["numpy:pv-osimr"] = (single, qs, 1)
    G = single(Q[0])
    for name, fn in pinocchio_bare(model, cms).items():
        _checked_in(point, methods, name, (fn, qs, 1), rel_err(fn(Q[0]), G))
    return lambda qs: np.stack([single(q) for q in qs])


def _large_point(k: int, repeats: int, options: SweepOptions) -> ScalingPoint:
    """:data:`LARGE_METHODS` on the Fig. 4a chain of k² links, with their memory."""
    robot = zoo.chain_welded_every_k(k)
    model, cms = robot.model, robot.constraints
    rng = np.random.default_rng(options.seed)
    Q = np.stack([robot.q_random(rng) for _ in range(SCALING_BATCH)])
    point = ScalingPoint(LARGE_FAMILY, k, model.nv, robot.m, {})
    methods: dict[str, Method] = {}

    def batch(Q: np.ndarray) -> np.ndarray:
        return compute_delassus_batch(model, Q, cms, algorithm="pv-osimr")

    if model.nv <= DATA_LINKS:
        reference = _with_data(point, model, cms, Q, methods)
        _batch_checked(point, methods, "batch:pv-osimr", batch, Q, reference)
    else:
        why = f"not run: a pin.Data of this model holds {byte_size(data_bytes(model.nv))}"
        point.skipped.update({k: why for k in ("numpy:pv-osimr", *PIN)})
        reference = batch  # the generated code is checked against the batched numpy path
        methods["batch:pv-osimr"] = (batch, [Q], len(Q))
    if "batch:pv-osimr" in methods:
        point.memory["batch:pv-osimr"] = {"peak_bytes": peak_bytes(batch, Q), "B": len(Q)}
    if options.codegen:
        _generated(point, robot, Q, methods, reference, options)
    timings = time_methods(methods, repeats)
    point.medians_us = {k: timings[k].median * 1e6 for k in LARGE_METHODS if k in timings}
    return point


def time_large(
    sizes: Sequence[int],
    repeats: int,
    options: SweepOptions | None = None,
    *,
    progress: bool = True,
) -> list[ScalingPoint]:
    """Median time per configuration of :data:`LARGE_METHODS` and their memory on the Fig. 4a
    chains of k² links, k in ``sizes`` (``options``: default :class:`SweepOptions`)."""
    options = options or SweepOptions()
    return [_large_point(k, repeats, options) for k in _progress(list(sizes), "large", progress)]
