"""The generated-C methods: PV-OSIMr's G compiled by :func:`pvosimr.codegen.build.compile`.

Called one configuration at a time (directly, and through ``casadi.external``), and batched:
``f(qs, threads=t)`` on B configurations at once, for every B of :func:`batch_sizes` and every
t of :data:`THREADS`, timed per configuration (on the vector lanes where the CPU has them:
``simd_lanes`` in the build's facts, :mod:`pvosimr.codegen.simd`).  Every batched method is
checked row by row against numpy PV-OSIMr before it is timed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pinocchio as pin

from pvosimr import compute_delassus
from pvosimr.reference.truth import rel_err
from pvosimr.study.names import COMPILED_BATCHES

__all__ = [
    "BATCH_SIZES",
    "CHECKED_ROWS",
    "THREADS",
    "batch_name",
    "batch_sizes",
    "build_facts",
    "codegen_batch_methods",
    "codegen_methods",
    "external",
    "g_facts",
    "numpy_rows",
]

BATCH_SIZES = COMPILED_BATCHES
"""Batch sizes of the generated code besides the run's ``--batch-size``."""

THREADS = (1, 2)
"""Threads of the batched generated code (``f(qs, threads=t)``)."""

CHECKED_ROWS = 4  # rows of each batched result compared with numpy PV-OSIMr


def batch_sizes(batch_size: int) -> tuple[int, ...]:
    """The batch sizes of the generated code: :data:`BATCH_SIZES` and the run's own B."""
    return tuple(sorted({*BATCH_SIZES, batch_size}))


def batch_name(B: int, threads: int) -> str:
    """``codegen-batch:B1024:t2``: the batched generated code's method name."""
    return f"codegen-batch:B{B}:t{threads}"


def external(compiled):
    """The generated library loaded by ``casadi.external`` (the C function carries the name
    :mod:`pvosimr.symbolic` gives the CasADi function)."""
    import casadi as ca

    return ca.external(f"delassus_{compiled.algorithm.replace('-', '_')}", str(compiled.library))


def build_facts(
    library: Path,
    source: Path,
    flags: tuple[str, ...],
    compiled: bool,
    seconds: float,
    sizes: dict,
) -> dict:
    """How a generated library was built and what it holds: flags, compile time (None when it
    came from the cache), CasADi instructions, source and library bytes, work arrays (bytes of
    ``sz_w`` doubles and ``sz_iw`` integers, one set per calling thread)."""
    return {
        "flags": list(flags),
        "compiled_in_this_run": compiled,
        "compile_seconds": seconds if compiled else None,
        "n_instructions": sizes["n_instructions"],
        "source_bytes": source.stat().st_size,
        "library_bytes": library.stat().st_size,
        "sz_w": sizes["sz_w"],
        "sz_iw": sizes["sz_iw"],
        "work_bytes": 8 * (sizes["sz_w"] + sizes["sz_iw"]),
    }


def g_facts(compiled, flags: tuple[str, ...]) -> dict:
    """:func:`build_facts` of the generated G and how it is called: its binding and the lanes
    of its batches (``simd_lanes``, 0 for the scalar path)."""
    f = external(compiled)
    sizes = {"n_instructions": compiled.n_instructions, "sz_w": f.sz_w(), "sz_iw": f.sz_iw()}
    args = (compiled.library, compiled.source, flags, compiled.compiled, compiled.compile_seconds)
    facts = build_facts(*args, sizes)
    shared = compiled.shared_functions
    return {**facts, "binding": compiled.binding, "simd_lanes": compiled.simd_lanes,
            "shared_functions": shared}  # fmt: skip


def codegen_methods(
    model: pin.Model, cms: list, flags: tuple[str, ...], cache_dir: Path | None
) -> tuple[object, dict[str, Callable], dict]:
    """The compiled function, its one-configuration methods (direct and through
    ``casadi.external``) and the facts of its build (raises ImportError, OSError or
    RuntimeError where it cannot be built)."""
    from pvosimr import codegen

    compiled = codegen.compile(model, cms, cache_dir=cache_dir, flags=flags)
    f = external(compiled)
    methods = {"codegen:pv-osimr": compiled, "codegen-external:pv-osimr": lambda q: f(q)}
    return compiled, methods, g_facts(compiled, flags)


def _batched(compiled, threads: int) -> Callable[[np.ndarray], np.ndarray]:
    return lambda qs: compiled(qs, threads=threads)


def numpy_rows(model: pin.Model, cms: list) -> Callable[[np.ndarray], np.ndarray]:
    """G of each row of ``qs`` by numpy PV-OSIMr called row by row."""
    data = model.createData()
    return lambda qs: np.stack([compute_delassus(model, data, q, cms) for q in qs])


def batch_error(
    fn: Callable[[np.ndarray], np.ndarray],
    qs: np.ndarray,
    reference: Callable[[np.ndarray], np.ndarray],
) -> float:
    """Largest :func:`~pvosimr.reference.truth.rel_err` of ``fn(qs)``'s first :data:`CHECKED_ROWS`
    rows
    against ``reference`` on them (e.g. :func:`numpy_rows`); ValueError where ``fn`` refuses
    ``qs``."""
    Gs = np.asarray(fn(qs))
    if Gs.shape[0] != len(qs):
        raise ValueError(f"{Gs.shape[0]} results for {len(qs)} configurations")
    rows = qs[:CHECKED_ROWS]
    truth = reference(rows)
    return max(rel_err(Gs[k], truth[k]) for k in range(len(rows)))


def codegen_batch_methods(
    compiled, Q: np.ndarray, batch_size: int
) -> dict[str, tuple[Callable, list[np.ndarray], int]]:
    """``name -> (fn, qs, B)`` for every batch size and thread count, unchecked; ``qs`` is the
    first B rows of ``Q``."""
    return {
        batch_name(B, t): (_batched(compiled, t), [Q[:B]], B)
        for B in batch_sizes(batch_size)
        for t in THREADS
    }
