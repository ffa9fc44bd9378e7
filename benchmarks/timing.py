"""The robot cases and the whole run: every method of a case timed in interleaved rounds
(:mod:`.loop`), then MuJoCo's route on MJCF robots (:mod:`.mujoco`), then the sweeps
(:mod:`.scaling`, :mod:`.crossover`)."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pvosimr import zoo
from pvosimr.study.names import DEFAULT_CASES
from pvosimr.study.progress import progress_bar

from .crossover import CROSSOVER_BATCH, CROSSOVER_SIZES, blas_threads, time_crossover
from .derivatives import DERIVATIVE_CASES, DERIVATIVE_FLAGS
from .environment import keep_freed_memory, machine
from .loop import N_CONFIGS, time_methods
from .methods import BATCH_SIZE, CaseOptions, case_methods
from .mujoco import MUJOCO_ROBOTS, time_mujoco
from .results import CaseResult
from .scaling import LARGE_SIZES, SCALING_SIZES, SweepOptions, time_large, time_scaling

__all__ = ["DEFAULT_CASES", "N_CONFIGS", "case_name", "run", "time_case"]


def case_name(spec: str) -> str:
    """``robot/preset`` of a ``robot[/preset]`` spec (a bare name means its first preset)."""
    robot = zoo.load_case(spec)
    return f"{robot.name}/{robot.preset}"


def time_case(
    spec: str,
    *,
    repeats: int,
    codegen: bool = True,
    codegen_flags: Sequence[str] = ("-O3",),
    cache_dir: Path | None = None,
    batch_size: int = BATCH_SIZE,
    derivatives: bool = False,
    derivative_flags: Sequence[str] = DERIVATIVE_FLAGS,
    seed: int = 0,
) -> CaseResult:
    """Time every method on one ``robot[/preset]`` case (the derivatives where asked)."""
    robot = zoo.load_case(spec)
    rng = np.random.default_rng(seed)
    qs = [robot.q_random(rng) for _ in range(N_CONFIGS)]
    result = CaseResult(f"{robot.name}/{robot.preset}", robot.model.nv, robot.m)
    options = CaseOptions(
        codegen=codegen,
        codegen_flags=tuple(codegen_flags),
        cache_dir=cache_dir,
        batch_size=batch_size,
        derivatives=derivatives,
        derivative_flags=tuple(derivative_flags),
    )
    groups = case_methods(robot, qs, result, options, rng)
    result.timings = time_methods(groups["calls"], repeats)
    # A numpy batch sample lasts B calls: fewer of them keep the run short.
    result.timings.update(time_methods(groups["numpy batch"], max(3, min(repeats, 7))))
    result.timings.update(time_methods(groups.get("derivatives", {}), repeats))
    return result


def _time_cases(
    cases: Sequence[str], derivative_cases: set[str], progress: bool, **options
) -> tuple[list, dict[str, str]]:
    """:func:`time_case` on each case; the cases whose model is not installed, with why."""

    results, unavailable = [], {}
    for spec in progress_bar(list(cases), desc="robots", disable=not progress, file=sys.stderr):
        try:
            derivatives = case_name(spec) in derivative_cases
            results.append(time_case(spec, derivatives=derivatives, **options))
        except (FileNotFoundError, ModuleNotFoundError) as exc:  # an optional model source
            unavailable[spec] = str(exc).split(". ")[0]
    return results, unavailable


def _derivative_cases(specs: Sequence[str]) -> set[str]:
    """The ``robot/preset`` names of ``specs`` whose model is installed."""
    names = set()
    for spec in specs:
        try:
            names.add(case_name(spec))
        except (FileNotFoundError, ModuleNotFoundError):
            continue
    return names


def run(
    cases: Sequence[str] = DEFAULT_CASES,
    *,
    repeats: int = 30,
    scaling: dict[str, Sequence[int]] | None = None,
    large: Sequence[int] | None = None,
    crossover: dict[str, Sequence[int]] | None = None,
    codegen: bool = True,
    codegen_flags: Sequence[str] = ("-O3",),
    derivative_cases: Sequence[str] = DERIVATIVE_CASES,
    derivative_flags: Sequence[str] = DERIVATIVE_FLAGS,
    cache_dir: Path | None = None,
    batch_size: int = BATCH_SIZE,
    mujoco_robots: Sequence[str] = MUJOCO_ROBOTS,
    seed: int = 0,
    progress: bool = True,
    frameworks: dict | None = None,
    only_frameworks: bool = False,
    command: str | None = None,
) -> dict:
    """Time every case, MuJoCo's route against pvosimr's on ``mujoco_robots`` (none: not run),
    the Fig. 4 sweep (``scaling``, default :data:`SCALING_SIZES`), the large sweep (``large``,
    default :data:`LARGE_SIZES`) and the crossover sweep (``crossover``, default
    :data:`~.crossover.CROSSOVER_SIZES`; empty: none) and the section "JAX and PyTorch"
    (``frameworks``: the options of :func:`.frameworks_section.time_frameworks`, which runs
    first, before anything imports jax; None: not run; ``only_frameworks``: the report has
    that section alone); the returned dict is what :func:`benchmarks.write` reports."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    # One BLAS thread for the whole run: after a numpy call OpenBLAS keeps its idle threads
    # spinning for a while, on the core that the two-thread batches of the next sample need.
    # And the memory the process frees stays with it: no call pays page faults that another
    # call's earlier allocations decided.
    with blas_threads(1) as blas:
        info = {**machine(), "freed memory": keep_freed_memory()}
        started = time.perf_counter()
        section = None
        if frameworks is not None:
            from .frameworks_section import time_frameworks

            section = time_frameworks(**frameworks, repeats=repeats, seed=seed, cache_dir=cache_dir)
        results, unavailable = _time_cases(
            cases,
            _derivative_cases(derivative_cases),
            progress,
            repeats=repeats,
            codegen=codegen,
            codegen_flags=codegen_flags,
            derivative_flags=derivative_flags,
            cache_dir=cache_dir,
            batch_size=batch_size,
            seed=seed,
        )
        mujoco, mujoco_unavailable, mujoco_skipped = time_mujoco(
            mujoco_robots, repeats=repeats, seed=seed, progress=progress
        )
        sizes = SCALING_SIZES if scaling is None else scaling
        few = max(3, repeats // 3)
        points = time_scaling(sizes, few, seed, progress) if sizes else []
        ks = LARGE_SIZES if large is None else large
        options = SweepOptions(seed, tuple(codegen_flags), cache_dir, codegen)
        large_repeats = max(2, min(5, repeats // 6))  # a sample of n = 961 lasts up to a second
        large_points = time_large(ks, large_repeats, options, progress=progress) if ks else []
        crossover_sizes = CROSSOVER_SIZES if crossover is None else crossover
        crossover_points = []
        if crossover_sizes:
            crossover_points, _ = time_crossover(
                crossover_sizes,
                max(3, min(7, repeats // 4)),  # a sample of n = 300 lasts up to half a second
                options,
                batch=CROSSOVER_BATCH,
                progress=progress,
            )
    return {
        "machine": {**info, "numpy's BLAS threads during the run": blas},
        "command": command or "benchmarks.run()",
        "repeats": repeats,
        "batch_size": batch_size,
        "codegen_flags": list(codegen_flags),
        "derivative_flags": list(derivative_flags),
        "cases": results,
        "unavailable": unavailable,
        "mujoco": mujoco,
        "mujoco_unavailable": mujoco_unavailable,
        "mujoco_skipped": mujoco_skipped,
        "scaling": points,
        "large": large_points,
        "crossover": crossover_points,
        "crossover_batch": CROSSOVER_BATCH,
        "crossover_blas_threads": blas,
        "frameworks": section,
        "only_frameworks": only_frameworks,
        "seconds": time.perf_counter() - started,
    }
