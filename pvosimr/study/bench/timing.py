"""The timing loop: interleaved rounds over the methods of one case, the robot cases, the sweep.

A sample is the mean time of ``number`` consecutive calls (``number`` chosen so a sample lasts
about :data:`SAMPLE_SECONDS`) cycling over :data:`N_CONFIGS` configurations.  Round r takes one
sample of every method, so load changes on a shared machine hit all methods alike.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from pvosimr import zoo

from .environment import machine
from .methods import BATCH_SIZE, Method, case_methods, numpy_methods, pinocchio_bare
from .results import CaseResult, ScalingPoint, Timing

__all__ = [
    "DEFAULT_CASES",
    "N_CONFIGS",
    "SCALING_METHODS",
    "SCALING_SIZES",
    "quick_sizes",
    "run",
    "time_case",
    "time_methods",
    "time_scaling",
]

DEFAULT_CASES: tuple[str, ...] = (
    "atlas/feet_6d",
    "atlas/feet_4x3d",
    "atlas_two_shadow_hands/fingertips_3d",
    "atlas_two_shadow_hands/fingertips_3d_feet_6d",
    "shadow_hand/fingertips_3d",
    "talos/feet_6d",
)
"""``robot/preset`` names timed by default (a bare robot name means its first preset)."""

SCALING_SIZES: dict[str, tuple[int, ...]] = {
    "chain_welded_every_k": (2, 3, 4, 5, 6, 8, 10),  # k: n = k² links, m = 6k
    "chain_welded_every_link": (2, 4, 8, 16, 32, 48),  # n links, m = 6n
}
"""Fig. 4 mechanisms and their sizes for the scaling sweep."""

SCALING_METHODS = (
    "numpy:pv-osimr",
    "numpy:pv-osim",
    "numpy:efpa",
    "numpy:ltl-osim",
    "pin-efpa",
    "pin-pv-osimr",
)
"""The methods of the scaling sweep."""

QUICK_LINKS = 16  # --quick-scaling: chains of at most this many links
SAMPLE_SECONDS = 0.003  # target duration of one sample
N_CONFIGS = 8  # configurations cycled through in the timed loops


def _sample(fn: Callable, inputs: Sequence, number: int) -> float:
    n = len(inputs)
    start = time.perf_counter()
    for k in range(number):
        fn(inputs[k % n])
    return (time.perf_counter() - start) / number


def _calibrate(fn: Callable, inputs: Sequence) -> int:
    """Calls per sample so that a sample lasts about :data:`SAMPLE_SECONDS`."""
    once = _sample(fn, inputs, 3)
    return int(np.clip(round(SAMPLE_SECONDS / max(once, 1e-9)), 1, 5000))


def time_methods(methods: dict[str, Method], repeats: int) -> dict[str, Timing]:
    """``repeats`` interleaved rounds; a call of ``per`` configurations counts ``per`` times."""
    numbers = {name: _calibrate(fn, inputs) for name, (fn, inputs, _) in methods.items()}
    samples: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(repeats):
        for name, (fn, inputs, per) in methods.items():
            samples[name].append(_sample(fn, inputs, numbers[name]) / per)
    return {name: Timing(samples[name], numbers[name]) for name in methods}


def time_case(
    spec: str,
    *,
    repeats: int,
    codegen: bool = True,
    codegen_flags: Sequence[str] = ("-O3",),
    cache_dir: Path | None = None,
    batch_size: int = BATCH_SIZE,
    seed: int = 0,
) -> CaseResult:
    """Time every method on one ``robot[/preset]`` case."""
    robot = zoo.load_case(spec)
    rng = np.random.default_rng(seed)
    qs = [robot.q_random(rng) for _ in range(N_CONFIGS)]
    result = CaseResult(f"{robot.name}/{robot.preset}", robot.model.nv, robot.m)
    methods = case_methods(
        robot,
        qs,
        result,
        codegen=codegen,
        codegen_flags=tuple(codegen_flags),
        cache_dir=cache_dir,
        batch_size=batch_size,
        rng=rng,
    )
    # A batch sample lasts B calls: fewer of them keep the run short.
    batch = {k: methods.pop(k) for k in [k for k in methods if k.startswith("batch:")]}
    result.timings = time_methods(methods, repeats)
    if batch:
        result.timings.update(time_methods(batch, max(3, min(repeats, 7))))
    return result


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
    from tqdm import tqdm

    jobs = [(family, s) for family, values in sizes.items() for s in values]
    return [
        _scaling_point(family, size, repeats, seed)
        for family, size in tqdm(jobs, desc="scaling", disable=not progress, file=sys.stderr)
    ]


def links(family: str, size: int) -> int:
    """Links (= dofs) of the Fig. 4 chain ``family`` of this size: k² or n."""
    return size * size if family == "chain_welded_every_k" else size


def quick_sizes(sizes: dict[str, Sequence[int]] = SCALING_SIZES) -> dict[str, tuple[int, ...]]:
    """The sizes of chains with at most :data:`QUICK_LINKS` links (``--quick-scaling``)."""
    return {f: tuple(s for s in v if links(f, s) <= QUICK_LINKS) for f, v in sizes.items()}


def _time_cases(cases: Sequence[str], progress: bool, **options) -> tuple[list, dict[str, str]]:
    """:func:`time_case` on each case; the cases whose model is not installed, with why."""
    from tqdm import tqdm

    results, unavailable = [], {}
    for spec in tqdm(list(cases), desc="robots", disable=not progress, file=sys.stderr):
        try:
            results.append(time_case(spec, **options))
        except (FileNotFoundError, ModuleNotFoundError) as exc:  # an optional model source
            unavailable[spec] = str(exc).split(". ")[0]
    return results, unavailable


def run(
    cases: Sequence[str] = DEFAULT_CASES,
    *,
    repeats: int = 30,
    scaling: dict[str, Sequence[int]] | None = None,
    codegen: bool = True,
    codegen_flags: Sequence[str] = ("-O3",),
    cache_dir: Path | None = None,
    batch_size: int = BATCH_SIZE,
    seed: int = 0,
    progress: bool = True,
    command: str | None = None,
) -> dict:
    """Time every case and the scaling sweep (``scaling``, default :data:`SCALING_SIZES`); the
    returned dict is what :func:`pvosimr.study.bench.write` reports."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    info = machine()
    started = time.perf_counter()
    results, unavailable = _time_cases(
        cases,
        progress,
        repeats=repeats,
        codegen=codegen,
        codegen_flags=codegen_flags,
        cache_dir=cache_dir,
        batch_size=batch_size,
        seed=seed,
    )
    sizes = SCALING_SIZES if scaling is None else scaling
    points = time_scaling(sizes, max(3, repeats // 3), seed, progress) if sizes else []
    return {
        "machine": info,
        "command": command or "pvosimr.study.bench.run()",
        "repeats": repeats,
        "batch_size": batch_size,
        "codegen_flags": list(codegen_flags),
        "cases": results,
        "unavailable": unavailable,
        "scaling": points,
        "seconds": time.perf_counter() - started,
    }
