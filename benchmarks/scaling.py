"""The sweeps against size: the Fig. 4 chains (single calls, :func:`time_scaling`), and the
batched and generated paths with their memory on the Fig. 4a chain up to n = 961
(:func:`time_large`).  Every point of every sweep (the crossover's too) is a :class:`Point`.
"""

from __future__ import annotations

import sys
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from pvosimr import compute_delassus_batch, zoo
from pvosimr.study.progress import progress_bar

from .loop import N_CONFIGS, Method, Timed, gate, time_methods
from .methods import PIN, Options, batch_name, compile_g, g_facts, numpy_methods, pinocchio_bare
from .names import SCALING_BATCH, TOLERANCES
from .record import Record
from .text import byte_size, slope


@dataclass
class Point:
    """One size of a sweep: median µs per call (per configuration when batched) of each method,
    their quartiles, their errors against the sweep's truth, why some were not timed, what the
    methods hold in memory and the build of the generated code, where measured."""

    family: str
    size: int  # the mechanism's own size parameter (k, n or the stem's L)
    n: int
    m: int
    medians_us: dict[str, float]
    memory: dict[str, dict] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    quartiles_us: dict[str, list[float]] = field(default_factory=dict)  # [p25, p75]
    errors: dict[str, float] = field(default_factory=dict)
    build: dict = field(default_factory=dict)

    def records(self) -> list[Record]:
        """Each median as a :class:`~benchmarks.record.Record` on the case ``family/size``."""
        return [
            Record(f"{self.family}/{self.size}", k, "time per call", us, "µs",
                   tuple(self.quartiles_us[k]) if k in self.quartiles_us else None)
            for k, us in self.medians_us.items()
        ]  # fmt: skip

    def timed(self, methods: dict[str, Method], repeats: int) -> Point:
        """``methods`` timed into this point's medians and quartiles."""
        timings = time_methods(methods, repeats)
        self.medians_us = {k: t.median * 1e6 for k, t in timings.items()}
        self.quartiles_us = {
            k: [t.quantile(p) * 1e6 for p in (0.25, 0.75)] for k, t in timings.items()
        }
        return self


SCALING_SIZES: dict[str, tuple[int, ...]] = {
    "chain_welded_every_k": (2, 3, 4, 5, 6, 8, 10),  # k: n = k² links, m = 6k
    "chain_welded_every_link": (2, 4, 8, 16, 32, 48),  # n links, m = 6n
}
"""Fig. 4 mechanisms and their sizes for the single-call sweep."""
SCALING_METHODS = ("numpy:pv-osimr", "numpy:pv-osim", "numpy:efpa", "numpy:ltl-osim", *PIN)
LARGE_FAMILY = "chain_welded_every_k"
LARGE_SIZES = {LARGE_FAMILY: (2, 4, 8, 16, 22, 31)}  # k: n = 4 … 961 links, m = 6k
BATCHED = tuple(batch_name(SCALING_BATCH, t) for t in (1, 2))
LARGE_METHODS = ("numpy:pv-osimr", "batch:pv-osimr", "codegen:pv-osimr", *BATCHED, *PIN)
"""The methods of the large sweep (batched ones per configuration)."""
RUN_FLAGS_UP_TO, LONG_CODE_FLAGS = 64, ("-O2",)
"""The generated code of up to this many links is built with the run's ``--codegen-flags``,
longer code with ``-O2``: ``-O3`` adds build time for little speed on straight-line code this
long."""

DATA_LINKS = 300
"""Largest chain on which the sweep makes a ``pin.Data``: Pinocchio 4 allocates four nv³
tensors of second-order derivatives in every Data, and pvosimr's single call makes one too.
Beyond, the generated code is checked against the batched numpy path."""

QUICK_LINKS = 16  # --quick-scaling: chains of at most this many links
CHECK_TOLERANCE = TOLERANCES["check"]


def mechanism(family: str, size: int) -> zoo.Robot:
    """The mechanism ``family`` of this size, of every sweep: the Fig. 4 chains (named after
    their builders in :mod:`pvosimr.zoo`) and the crossover's (:data:`.crossover.FAMILIES`)."""
    if family == "chain_two_welds":
        if size < 2:
            raise ValueError(f"chain_two_welds needs at least 2 links, got {size}")
        chain = zoo.chain_welded_every_link(size)
        return chain.with_constraints([("weld", f"link_{size // 2}"), ("weld", f"link_{size}")])
    if family == "stem_with_branches":
        return zoo.stem_with_branches(size, 1)
    if family in ("chain_welded_every_k", "chain_welded_every_link"):
        return getattr(zoo, family)(size)
    raise ValueError(f"unknown mechanism {family!r}")


def links(family: str, size: int) -> int:
    """Links (= dofs) of the mechanism ``family`` of this size."""
    return {"chain_welded_every_k": size * size, "stem_with_branches": size + 19}.get(family, size)


def quick_sizes(
    sizes: dict[str, Sequence[int]] = SCALING_SIZES, up_to: int = QUICK_LINKS, most: int = 99
) -> dict[str, tuple[int, ...]]:
    """The sizes of at most ``up_to`` links, ``most`` per mechanism (``--quick-scaling``)."""
    return {f: tuple(s for s in v if links(f, s) <= up_to)[:most] for f, v in sizes.items()}


def large_flags(n: int, flags: tuple[str, ...]) -> tuple[str, ...]:
    """Compiler flags of the generated code of ``n`` links (:data:`RUN_FLAGS_UP_TO`)."""
    return flags if n <= RUN_FLAGS_UP_TO else LONG_CODE_FLAGS


def log_log_slope(points: list[Point], method: str, last: int = 4) -> float | None:
    """:func:`~.text.slope` of ``method``'s time per call on the points that timed it."""
    timed = [p for p in points if method in p.medians_us]
    return slope([p.n for p in timed], [p.medians_us[method] for p in timed], last)


def by_family(points: list[Point]) -> dict[str, list[Point]]:
    """The points of each mechanism, in the order of ``points``."""
    families = dict.fromkeys(p.family for p in points)
    return {f: [p for p in points if p.family == f] for f in families}


def sweep(desc: str, point: Callable, sizes: dict[str, Sequence[int]], *rest, progress: bool):
    """``point(family, size, *rest)`` of every size of every family of ``sizes``, with a
    progress bar."""
    jobs = [(family, s) for family, values in sizes.items() for s in values]
    bar = progress_bar(jobs, desc=desc, disable=not progress, file=sys.stderr)
    return [point(*job, *rest) for job in bar]


def start(family: str, size: int, options: Options, count: int) -> tuple:
    """A point of a sweep: its mechanism, ``count`` random configurations (the run's seed), the
    empty point and the gate's record of it (sharing the point's reasons and errors)."""
    robot = mechanism(family, size)
    rng = np.random.default_rng(options.seed)
    Q = np.stack([robot.q_random(rng) for _ in range(count)])
    point = Point(family, size, robot.model.nv, robot.m, {})
    gated = Timed(family, point.n, point.m, skipped=point.skipped, errors=point.errors)
    return robot, Q, point, gated


def _scaling_point(family: str, size: int, repeats: int, options: Options) -> Point:
    """:data:`SCALING_METHODS` on the Fig. 4 chain ``family`` of this size."""
    robot, Q, point, gated = start(family, size, options, N_CONFIGS)
    model, cms, qs = robot.model, robot.constraints, list(Q)
    fns = numpy_methods(model, model.createData(), cms) | pinocchio_bare(model, cms)
    methods = {k: (fns[k], qs, 1) for k in SCALING_METHODS if k in fns}
    return point.timed(gate(methods, fns["numpy:pv-osimr"], gated, CHECK_TOLERANCE), repeats)


def time_scaling(
    sizes: dict[str, Sequence[int]], repeats: int, options: Options, *, progress: bool = True
) -> list[Point]:
    """Median time per call of :data:`SCALING_METHODS` on the Fig. 4 chains."""
    return sweep("scaling", _scaling_point, sizes, repeats, options, progress=progress)


def peak_bytes(fn: Callable, *args) -> int:
    """Peak bytes :mod:`tracemalloc` traces during ``fn(*args)`` (numpy's arrays included)."""
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def data_bytes(nv: int) -> int:
    """Bytes of the four nv × nv × nv second-order derivative tensors a ``pin.Data`` holds."""
    return 4 * 8 * nv**3


def _large_point(family: str, k: int, repeats: int, options: Options) -> Point:
    """:data:`LARGE_METHODS` on the Fig. 4a chain of k² links, gated, with their memory."""
    robot, Q, point, gated = start(family, k, options, SCALING_BATCH)
    model, cms = robot.model, robot.constraints

    def batch(Q: np.ndarray) -> np.ndarray:
        return compute_delassus_batch(model, Q, cms, algorithm="pv-osimr")

    methods: dict[str, Method] = {"batch:pv-osimr": (batch, [Q], len(Q))}
    if model.nv <= DATA_LINKS:
        single = numpy_methods(model, model.createData(), cms)["numpy:pv-osimr"]
        point.memory["numpy:pv-osimr"] = {"peak_bytes": peak_bytes(single, Q[0])}
        qs = list(Q[:N_CONFIGS])
        fns = {"numpy:pv-osimr": single, **pinocchio_bare(model, cms)}
        methods |= {name: (fn, qs, 1) for name, fn in fns.items()}
        truth = single
    else:
        why = f"not run: a pin.Data of this model holds {byte_size(data_bytes(model.nv))}"
        point.skipped.update({k: why for k in ("numpy:pv-osimr", *PIN)})
        truth = None  # the generated code is checked against the batched numpy path
    point.memory["batch:pv-osimr"] = {"peak_bytes": peak_bytes(batch, Q), "B": len(Q)}
    flags = large_flags(model.nv, options.flags)
    compiled = compile_g(gated, model, cms, flags, options)
    if compiled is not None:
        point.memory["codegen:pv-osimr"] = g_facts(compiled)
        methods["codegen:pv-osimr"] = (compiled, list(Q[:N_CONFIGS]), 1)
        for t, name in enumerate(BATCHED, 1):
            methods[name] = (lambda Q, t=t: compiled(Q, threads=t), [Q], len(Q))
    if truth is None:
        rows = {q.tobytes(): G for q, G in zip(Q, batch(Q), strict=True)}
        truth = lambda q: rows[q.tobytes()]  # noqa: E731
    methods = gate(methods, truth, gated, CHECK_TOLERANCE)
    point.timed(methods, repeats)
    point.medians_us = {k: point.medians_us[k] for k in LARGE_METHODS if k in point.medians_us}
    return point


def time_large(
    sizes: dict[str, Sequence[int]], repeats: int, options: Options, *, progress: bool = True
) -> list[Point]:
    """Median time per configuration of :data:`LARGE_METHODS` and their memory on the Fig. 4a
    chains (:data:`LARGE_FAMILY`) of ``sizes``."""
    return sweep("large", _large_point, sizes, repeats, options, progress=progress)
