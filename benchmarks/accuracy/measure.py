"""Running every path on a chain: pvosimr's numpy, batch, CasADi and compiled paths, and
Pinocchio's ``pin.computeDelassusMatrix`` and C++ PV-OSIMr, each against the truths.

A ``pin.Data`` holds O(nv³) memory in pin 4.1 (1.7 GB at nv = 300, 13.6 GB at nv = 600,
measured), so models with ``nv > Limits.nv_pin`` skip every path that needs one (the numpy
path, Pinocchio's routines, the ``dense`` truth) and are measured against the longdouble
``wide`` truth.
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
import pinocchio as pin

import pvosimr
from pvosimr import reference
from pvosimr.reference import truth
from pvosimr.study.progress import progress_bar
from pvosimr.zoo.seeded import random_q

from .cases import ALGORITHMS, ChainCase, Limits, StudyPlan
from .truths import dense_truth, wide_truth

__all__ = ["Record", "condition_number", "measure", "run_study"]


def condition_number(M: np.ndarray) -> float:
    """cond₂(M) from its singular values (inf where M is singular)."""
    s = np.linalg.svd(M, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else math.inf


def _failure(exc: BaseException) -> str:
    return f"raised {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"


@dataclass
class Record:
    """One case's measurements; ``errors[path]`` is the worst over the configurations (or a
    string when the path raised), ``errors_wide[path]`` the error at q₀ against the wide truth."""

    family: str
    n: int
    nv: int
    m: int
    profile: str
    ratio: float
    cond: float
    reference: str
    wide: str | None = None
    truth_vs_wide: float | str | None = None  # a string: the double truth raised
    lu_vs_cholesky: float | str | None = None
    sensitivity: float | None = None
    errors: dict[str, float | str] = field(default_factory=dict)
    errors_wide: dict[str, float | str] = field(default_factory=dict)
    seconds: float = 0.0


def _casadi_allowed(alg: str, nv: int, limits: Limits) -> bool:
    if alg == "naive":
        return nv <= limits.nv_casadi_naive
    if alg == "ltl-osim":
        return nv <= limits.nv_casadi_ltl
    return True


def _run_paths(
    model: pin.Model,
    data: pin.Data | None,
    qs: np.ndarray,
    cms: list,
    limits: Limits,
    codegen: bool,
) -> dict[str, list[np.ndarray] | str]:
    """Every pvosimr path's G at every q (or the failure string)."""
    out: dict[str, list[np.ndarray] | str] = {}

    def attempt(path: str, run: Callable[[], list[np.ndarray]]) -> None:
        try:
            out[path] = run()
        except Exception as exc:  # a raise is a result (never a silent wrong matrix)
            out[path] = _failure(exc)

    for alg in ALGORITHMS:
        if data is not None:
            attempt(
                f"numpy:{alg}",
                lambda alg=alg: [pvosimr.compute_delassus(model, data, q, cms, alg) for q in qs],
            )
        attempt(
            f"batch:{alg}", lambda a=alg: list(pvosimr.compute_delassus_batch(model, qs, cms, a))
        )
        if not _casadi_allowed(alg, model.nv, limits):
            continue
        from pvosimr.symbolic import delassus_function

        try:
            f = delassus_function(model, cms, alg)
        except Exception as exc:
            out[f"casadi:{alg}"] = _failure(exc)
            continue
        out[f"casadi:{alg}"] = [np.array(f(q), dtype=float) for q in qs]
        if codegen and f.n_instructions() <= limits.codegen_instructions:
            from pvosimr import codegen as cg

            def compiled(alg: str = alg) -> list[np.ndarray]:
                function = cg.compile(model, cms, alg)
                return [function(q) for q in qs]

            attempt(f"codegen:{alg}", compiled)
    return out


def _run_pinocchio(model: pin.Model, data: pin.Data | None, qs: np.ndarray, cms: list) -> dict:
    out: dict[str, list[np.ndarray] | str] = {}
    if data is None:
        return out
    try:
        out["pin-efpa"] = [np.array(reference.pinocchio_efpa(model, data, q, cms)) for q in qs]
    except Exception as exc:
        out["pin-efpa"] = _failure(exc)
    return out


def _run_pin_pv(model: pin.Model, qs: np.ndarray, cms: list) -> dict:
    """Pinocchio's C++ PV-OSIMr, which owns a second O(nv³) Data: run after ours is freed."""
    try:
        return {"pin-pv-osimr": [reference.pinocchio_pv_osimr(model, None, q, cms) for q in qs]}
    except Exception as exc:
        return {"pin-pv-osimr": _failure(exc)}
    finally:
        reference.clear_cache()
        gc.collect()


def _reference(
    model: pin.Model, data: pin.Data | None, qs: np.ndarray, cms: list, wide_kind: str
) -> tuple[list[np.ndarray], float, str, float | str | None, str | None]:
    """``(truths, cond(M), reference, LU vs Cholesky, dense failure)``: the dense truth at every
    q where there is a Data and it holds, else the wide one (longdouble where there is no Data,
    ``wide_kind`` where the double Cholesky failed)."""
    dense_failure = None
    if data is not None:
        try:
            dense = [dense_truth(model, data, q, cms) for q in qs]
        except np.linalg.LinAlgError as exc:  # M is not positive definite in float64
            dense_failure = _failure(exc)
    if data is not None and dense_failure is None:
        lu = max(truth.rel_err(d[1], d[0]) for d in dense)
        return [d[0] for d in dense], condition_number(dense[0][2]), "dense", lu, None
    kind = wide_kind if dense_failure else "longdouble"
    wides = [wide_truth(model, q, cms, kind) for q in qs]
    M = truth.mass_matrix(model, qs[0], data) if data is not None else wides[0][1]
    return [w[0] for w in wides], condition_number(M), f"wide-{kind}", dense_failure, dense_failure


def _compare_with_wide(
    record: Record,
    model: pin.Model,
    qs: np.ndarray,
    cms: list,
    truths: list[np.ndarray],
    rng: np.random.Generator,
    sensitivity: bool,
) -> np.ndarray:
    """The wide truth at ``qs[0]`` (the reference itself if it is wide); the dense truth's error
    against it and, with ``sensitivity``, how much it moves under 1-ulp noise on q."""
    kind = record.wide
    if record.reference == f"wide-{kind}":
        wide = truths[0]
    else:
        wide = wide_truth(model, qs[0], cms, kind)[0]
    if record.reference == "dense":
        record.truth_vs_wide = truth.rel_err(truths[0], wide)
    if sensitivity and kind == "decimal":
        # 1-ulp relative noise on q (quaternions re-normalized): how much G moves for inputs
        # every double algorithm must round anyway.
        noise = 1 + np.finfo(float).eps * rng.choice([-1.0, 1.0], model.nq)
        q1 = pin.normalize(model, qs[0] * noise)
        record.sensitivity = truth.rel_err(wide_truth(model, q1, cms, kind)[0], wide)
    return wide


def _score(
    record: Record, results: dict, truths: list[np.ndarray], wide: np.ndarray | None
) -> None:
    """Every path's worst error over the configurations, and at q₀ against the wide truth; a
    raise (or a non-finite G) is recorded as a string, never as a number."""
    for path, Gs in results.items():
        if not isinstance(Gs, str) and not all(np.isfinite(G).all() for G in Gs):
            Gs = "returned a non-finite G without raising"
        if isinstance(Gs, str):
            record.errors[path] = record.errors_wide[path] = Gs
            continue
        record.errors[path] = max(truth.rel_err(G, T) for G, T in zip(Gs, truths, strict=True))
        if wide is not None:
            record.errors_wide[path] = truth.rel_err(Gs[0], wide)


def measure(
    case: ChainCase,
    limits: Limits | None = None,
    codegen: bool = False,
    sensitivity: bool = False,
) -> Record:
    """Every path's error on ``case`` (see :class:`Record`); one ``pin.Data``, freed at the end."""
    limits = Limits() if limits is None else limits
    start = time.perf_counter()
    model, cms = case.build()
    rng = np.random.default_rng(case.seed + 7)
    qs = np.stack([random_q(model, rng) for _ in range(limits.configurations)])
    nv, use_pin = model.nv, model.nv <= limits.nv_pin
    data = model.createData() if use_pin else None
    wide_kind = "decimal" if nv <= limits.nv_decimal else "longdouble"
    truths, cond, ref, lu, dense_failure = _reference(model, data, qs, cms, wide_kind)
    m = truths[0].shape[0]
    record = Record(case.family, case.n, nv, m, case.profile, case.ratio, cond, ref)
    record.lu_vs_cholesky = lu
    record.truth_vs_wide = dense_failure
    wide = None
    if nv <= limits.nv_wide:
        record.wide = wide_kind
        wide = _compare_with_wide(record, model, qs, cms, truths, rng, sensitivity)
    results = _run_paths(model, data, qs, cms, limits, codegen)
    results |= _run_pinocchio(model, data, qs, cms)
    del data
    gc.collect()
    if use_pin:
        results |= _run_pin_pv(model, qs, cms)
    _score(record, results, truths, wide)
    record.seconds = time.perf_counter() - start
    return record


# --------------------------------------------------------------------------- the study


def run_study(plan: StudyPlan, progress: bool = True) -> dict:
    """Measure every case of ``plan``: ``{"depth": [...], "cond": [...], "limits": ...}``."""
    out: dict = {"depth": [], "cond": [], "limits": asdict(plan.limits)}
    bar = progress_bar(plan.cases(), desc="accuracy", unit="case", disable=not progress)
    for sweep, case, compiled, sensitivity in bar:
        bar.set_postfix_str(f"{sweep} {case.family} n={case.n} ratio={case.ratio:.0e}")
        record = measure(case, plan.limits, codegen=compiled, sensitivity=sensitivity)
        out[sweep].append(asdict(record))
    return out
