"""The timed methods: every way bench computes one case's G, each checked before it is timed.

A method is ``(fn, inputs, per)``: ``fn(inputs[k])`` computes ``per`` Delassus matrices (1, or B
for the batch path).  Every method's first result is compared with ``numpy:pv-osimr``; one that
disagrees, or refuses the case, is left out of the timing with the reason in
:attr:`CaseResult.skipped <pvosimr.study.bench.results.CaseResult.skipped>`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pinocchio as pin

from pvosimr import ALGORITHMS, compute_delassus, compute_delassus_batch, plotting, reference, zoo
from pvosimr.truth import rel_err

from .results import CaseResult

__all__ = [
    "BATCH_SIZE",
    "CHECK_TOLERANCE",
    "LABELS",
    "Method",
    "case_methods",
    "labels",
    "single_methods",
]

BATCH_SIZE = 1024
CHECK_TOLERANCE = 1e-8  # a method disagreeing with numpy:pv-osimr by more is not timed

Method = tuple[Callable, Sequence, int]
"""``(fn, inputs, per)``: ``fn(inputs[k])`` computes ``per`` Delassus matrices."""


def labels(batch_size: int = BATCH_SIZE) -> dict[str, str]:
    """Every method bench knows and its name in the report, in the order of the report's rows;
    the batch path's name gives its batch size."""
    return {
        **{f"numpy:{a}": f"pvosimr numpy {plotting.LABELS[a]}" for a in ALGORITHMS},
        "batch:pv-osimr": f"pvosimr numpy batch PV-OSIMr (per config, B={batch_size})",
        "codegen:pv-osimr": "pvosimr codegen PV-OSIMr",
        "codegen-external:pv-osimr": "pvosimr codegen PV-OSIMr (casadi.external)",
        "pin-efpa": "Pinocchio C++ EFPA (computeDelassusMatrix)",
        "pin-pv-osimr": "Pinocchio C++ PV-OSIMr (computePvDelassusMatrix)",
        "ref:pin-efpa": "Pinocchio C++ EFPA via pvosimr.reference",
        "ref:pin-pv-osimr": "Pinocchio C++ PV-OSIMr via pvosimr.reference",
        "ref:pin-cholesky": "Pinocchio contact Cholesky via pvosimr.reference",
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
    """Pinocchio through :mod:`pvosimr.reference` (its input check and cache lookup included)."""
    out = {"ref:pin-efpa": lambda q: reference.pinocchio_efpa(model, data, q, cms)}
    if reference.extension_available():
        out["ref:pin-pv-osimr"] = lambda q: reference.pinocchio_pv_osimr(model, data, q, cms)
    out["ref:pin-cholesky"] = lambda q: reference.pinocchio_cholesky(model, data, q, cms)
    return out


def codegen_methods(
    model: pin.Model, cms: list, flags: tuple[str, ...], cache_dir: Path | None
) -> tuple[dict[str, Callable], dict]:
    """The generated C of PV-OSIMr, called directly and through ``casadi.external``, and the
    facts of its build (raises ImportError, OSError or RuntimeError where it cannot be built)."""
    import casadi as ca

    from pvosimr import codegen

    compiled = codegen.compile(model, cms, cache_dir=cache_dir, flags=flags)
    facts = {
        "flags": list(flags),
        "binding": compiled.binding,
        "compiled_in_this_run": compiled.compiled,
        "compile_seconds": compiled.compile_seconds if compiled.compiled else None,
        "n_instructions": compiled.n_instructions,
        "source_bytes": compiled.source.stat().st_size,
    }
    # The C function carries the name pvosimr.symbolic gives the CasADi function.
    name = f"delassus_{compiled.algorithm.replace('-', '_')}"
    external = ca.external(name, str(compiled.library))
    methods = {"codegen:pv-osimr": compiled, "codegen-external:pv-osimr": lambda q: external(q)}
    return methods, facts


def single_methods(
    model: pin.Model,
    data: pin.Data,
    cms: list,
    result: CaseResult,
    *,
    codegen: bool,
    codegen_flags: tuple[str, ...],
    cache_dir: Path | None,
) -> dict[str, Callable]:
    """Every one-configuration method (``q ↦ G``), in the order of :data:`LABELS`."""
    singles = numpy_methods(model, data, cms)
    if not codegen:
        result.skipped["codegen:pv-osimr"] = "not requested (--no-codegen)"
    else:
        try:
            compiled, result.codegen = codegen_methods(model, cms, codegen_flags, cache_dir)
        except (ImportError, OSError, RuntimeError) as exc:
            result.skipped["codegen:pv-osimr"] = f"{type(exc).__name__}: {exc}"
        else:
            singles.update(compiled)
    singles.update(pinocchio_bare(model, cms))
    singles.update(reference_methods(model, data, cms))
    return singles


def _refusal(exc: ValueError) -> str:
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


def batch_method(
    robot: zoo.Robot, data: pin.Data, result: CaseResult, batch_size: int, rng: np.random.Generator
) -> Method | None:
    """:func:`pvosimr.compute_delassus_batch` on ``batch_size`` random configurations, checked
    against the single call on the first four."""
    model, cms = robot.model, robot.constraints
    Q = np.stack([robot.q_random(rng) for _ in range(batch_size)])

    def batch(Q: np.ndarray) -> np.ndarray:
        return compute_delassus_batch(model, Q, cms, algorithm="pv-osimr")

    try:
        Gs = batch(Q)
    except ValueError as exc:
        result.skipped["batch:pv-osimr"] = _refusal(exc)
        return None
    error = max(
        rel_err(Gs[k], compute_delassus(model, data, Q[k], cms)) for k in range(min(4, batch_size))
    )
    return (batch, [Q], batch_size) if _admit("batch:pv-osimr", error, result) else None


def case_methods(
    robot: zoo.Robot,
    qs: list[np.ndarray],
    result: CaseResult,
    *,
    codegen: bool,
    codegen_flags: tuple[str, ...],
    cache_dir: Path | None,
    batch_size: int,
    rng: np.random.Generator,
) -> dict[str, Method]:
    """Every method for this case that agrees with numpy:pv-osimr on ``qs[0]``."""
    model, cms = robot.model, robot.constraints
    data = model.createData()
    singles = single_methods(
        model, data, cms, result, codegen=codegen, codegen_flags=codegen_flags, cache_dir=cache_dir
    )
    G = compute_delassus(model, data, qs[0], cms)
    methods: dict[str, Method] = {
        name: (fn, qs, 1) for name, fn in checked(singles, qs[0], G, result).items()
    }
    batch = batch_method(robot, data, result, batch_size, rng)
    if batch is not None:
        methods["batch:pv-osimr"] = batch
    return methods
