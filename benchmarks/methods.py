"""The timed methods: every way bench computes one case's G, each checked before it is timed.

A method is ``(fn, inputs, per)``: ``fn(inputs[k])`` computes ``per`` Delassus matrices (1, or B
for the batched paths).  Every method's first result is compared with ``numpy:pv-osimr`` (the
batched ones row by row); one that disagrees, or refuses the case, is left out of the timing
with the reason in :attr:`CaseResult.skipped <benchmarks.results.CaseResult.skipped>`.
The generated code is built in :mod:`.compiled`, the derivatives in :mod:`.derivatives`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from pvosimr import ALGORITHMS, compute_delassus, compute_delassus_batch, plotting, reference, zoo
from pvosimr.reference.truth import rel_err
from pvosimr.study.names import BATCH_SIZE, TOLERANCES

from .compiled import (
    THREADS,
    batch_error,
    batch_name,
    batch_sizes,
    codegen_batch_methods,
    numpy_rows,
)
from .compiled import codegen_methods as compiled_methods
from .derivatives import DERIVATIVE_FLAGS, DERIVATIVE_LABELS, derivative_methods
from .loop import Method
from .results import CaseResult

__all__ = [
    "BATCH_SIZE",
    "CHECK_TOLERANCE",
    "LABELS",
    "CaseOptions",
    "Method",
    "case_methods",
    "checked",
    "checked_batches",
    "labels",
    "numpy_batch",
    "numpy_methods",
    "pinocchio_bare",
    "reference_methods",
]

CHECK_TOLERANCE = TOLERANCES["check"]


def _codegen_batch_labels(batch_size: int) -> dict[str, str]:
    return {
        batch_name(B, t): f"pvosimr codegen batch PV-OSIMr (per config, B={B}, "
        f"{t} thread{'s' if t > 1 else ''})"
        for B in batch_sizes(batch_size)
        for t in THREADS
    }


def labels(batch_size: int = BATCH_SIZE) -> dict[str, str]:
    """Every method bench knows and its name in the report, in the order of the report's rows;
    the batched paths' names give their batch size.  The derivative methods come last."""
    return {
        **{f"numpy:{a}": f"pvosimr numpy {plotting.LABELS[a]}" for a in ALGORITHMS},
        "batch:pv-osimr": f"pvosimr numpy batch PV-OSIMr (per config, B={batch_size})",
        "codegen:pv-osimr": "pvosimr codegen PV-OSIMr",
        **_codegen_batch_labels(batch_size),
        "codegen-external:pv-osimr": "pvosimr codegen PV-OSIMr (casadi.external)",
        "pin-efpa": "Pinocchio C++ EFPA (computeDelassusMatrix)",
        "pin-pv-osimr": "Pinocchio C++ PV-OSIMr (computePvDelassusMatrix)",
        "ref:pin-efpa": "Pinocchio C++ EFPA via pvosimr.reference.pinocchio",
        "ref:pin-pv-osimr": "Pinocchio C++ PV-OSIMr via pvosimr.reference.pinocchio",
        "ref:pin-cholesky": "Pinocchio contact Cholesky via pvosimr.reference.pinocchio",
        **DERIVATIVE_LABELS,
    }


LABELS = labels()
"""The methods' names in a run of the default batch size."""


def numpy_methods(model: pin.Model, data: pin.Data, cms: list) -> dict[str, Callable]:
    """:func:`pvosimr.compute_delassus` with every algorithm."""
    return {
        f"numpy:{a}": (lambda q, a=a: compute_delassus(model, data, q, cms, algorithm=a))
        for a in ALGORITHMS
    }


def pinocchio_bare(model: pin.Model, cms: list) -> dict[str, Callable]:
    """Pinocchio's two C++ Delassus routines as bare binding calls (structures prepared once)."""
    data = model.createData()
    scms = pin.StdVec_RigidConstraintModel(cms)
    cds = pin.StdVec_RigidConstraintData([cm.createData() for cm in scms])
    out = {"pin-efpa": lambda q: pin.computeDelassusMatrix(model, data, q, scms, cds, 0.0)}
    if reference.extension_available():
        pv = reference.pinocchio_pv_object(model, cms)
        out["pin-pv-osimr"] = lambda q: pv.compute(model, q)
    return out


def reference_methods(model: pin.Model, data: pin.Data, cms: list) -> dict[str, Callable]:
    """Pinocchio through :mod:`pvosimr.reference.pinocchio` (its input check and cache lookup
    included)."""
    out = {"ref:pin-efpa": lambda q: reference.pinocchio_efpa(model, data, q, cms)}
    if reference.extension_available():
        out["ref:pin-pv-osimr"] = lambda q: reference.pinocchio_pv_osimr(model, data, q, cms)
    out["ref:pin-cholesky"] = lambda q: reference.pinocchio_cholesky(model, data, q, cms)
    return out


def _generated(
    model: pin.Model, cms: list, result: CaseResult, options: CaseOptions
) -> tuple[object, dict[str, Callable]]:
    """The generated G and its one-configuration methods (none where it is not built)."""
    if not options.codegen:
        result.skipped["codegen:pv-osimr"] = "not requested (--no-codegen)"
        return None, {}
    try:
        compiled, singles, result.codegen = compiled_methods(
            model, cms, options.codegen_flags, options.cache_dir
        )
    except (ImportError, OSError, RuntimeError) as exc:
        result.skipped["codegen:pv-osimr"] = f"{type(exc).__name__}: {exc}"
        return None, {}
    return compiled, singles


def _refusal(exc: Exception) -> str:
    """The first sentence of a method's refusal (a singular G, a zero pivot, ...)."""
    return f"refused: {str(exc).split('. ')[0]}"


def _admit(name: str, error: float, result: CaseResult) -> bool:
    """Record ``name``'s error against numpy:pv-osimr; whether it is close enough to be timed."""
    result.errors[name] = error
    if error > CHECK_TOLERANCE:
        result.skipped[name] = f"wrong result (error {error:.1e}), not timed"
        return False
    return True


def checked(
    singles: dict[str, Callable], q: np.ndarray, G: np.ndarray, result: CaseResult
) -> dict[str, Callable]:
    """The methods whose result at ``q`` agrees with ``G`` (numpy PV-OSIMr's)."""
    kept = {}
    for name, fn in singles.items():
        try:
            error = rel_err(np.asarray(fn(q)), G)
        except ValueError as exc:
            result.skipped[name] = _refusal(exc)
            continue
        if _admit(name, error, result):
            kept[name] = fn
    return kept


def checked_batches(
    batches: dict[str, Method], model: pin.Model, cms: list, result: CaseResult
) -> dict[str, Method]:
    """The batched methods whose first rows agree with numpy PV-OSIMr called row by row."""
    kept, reference = {}, numpy_rows(model, cms)
    for name, (fn, (Q,), per) in batches.items():
        try:
            error = batch_error(fn, Q, reference)
        except (ValueError, TypeError) as exc:  # TypeError: no batched call in this build
            result.skipped[name] = _refusal(exc)
            continue
        if _admit(name, error, result):
            kept[name] = (fn, [Q], per)
    return kept


def numpy_batch(model: pin.Model, cms: list, Q: np.ndarray) -> Method:
    """:func:`pvosimr.compute_delassus_batch` on the configurations ``Q`` at once."""

    def batch(Q: np.ndarray) -> np.ndarray:
        return compute_delassus_batch(model, Q, cms, algorithm="pv-osimr")

    return batch, [Q], len(Q)


@dataclass(frozen=True)
class CaseOptions:
    """What to time on a case beyond the numpy and Pinocchio calls."""

    codegen: bool = True
    codegen_flags: tuple[str, ...] = ("-O3",)
    cache_dir: Path | None = None
    batch_size: int = BATCH_SIZE
    derivatives: bool = False
    derivative_flags: tuple[str, ...] = DERIVATIVE_FLAGS


def case_methods(
    robot: zoo.Robot,
    qs: list[np.ndarray],
    result: CaseResult,
    options: CaseOptions,
    rng: np.random.Generator,
) -> dict[str, dict[str, Method]]:
    """Every method for this case that agrees with numpy:pv-osimr, in groups timed apart:
    ``calls`` (one configuration, or a batch of the generated code), ``numpy batch`` (long
    samples) and ``derivatives``."""
    model, cms = robot.model, robot.constraints
    data = model.createData()
    compiled, generated = _generated(model, cms, result, options)
    singles = {**numpy_methods(model, data, cms), **generated}
    singles.update(pinocchio_bare(model, cms) | reference_methods(model, data, cms))
    G = compute_delassus(model, data, qs[0], cms)
    calls: dict[str, Method] = {
        name: (fn, qs, 1) for name, fn in checked(singles, qs[0], G, result).items()
    }
    Q = np.stack([robot.q_random(rng) for _ in range(max(batch_sizes(options.batch_size)))])
    if compiled is not None:
        batches = codegen_batch_methods(compiled, Q, options.batch_size)
        calls.update(checked_batches(batches, model, cms, result))
    numpy_batches = {"batch:pv-osimr": numpy_batch(model, cms, Q[: options.batch_size])}
    groups = {"calls": calls, "numpy batch": checked_batches(numpy_batches, model, cms, result)}
    if options.derivatives:
        groups["derivatives"] = derivative_methods(
            model,
            cms,
            qs,
            result,
            compiled_g=compiled,
            flags=options.derivative_flags,
            cache_dir=options.cache_dir,
        )
    return groups
