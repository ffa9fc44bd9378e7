"""Every path on a chain: pvosimr's numpy, batch, CasADi and compiled paths, and Pinocchio's
``pin.computeDelassusMatrix`` and C++ PV-OSIMr, each against the truths, as
:class:`~benchmarks.record.Record` rows.

A ``pin.Data`` holds O(nv³) memory in pin 4.1, so models with ``nv > Limits.nv_pin`` skip
every path that needs one (the numpy path, Pinocchio's routines, the ``dense`` truth) and are
measured against the longdouble ``wide`` truth.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import asdict

import numpy as np
import pinocchio as pin

import pvosimr
from pvosimr import reference
from pvosimr.reference import truth
from pvosimr.study.progress import progress_bar
from pvosimr.zoo.seeded import random_q

from ..record import Record, relative_error
from .cases import ALGORITHMS, ERROR, WIDE, ChainCase, Limits, StudyPlan
from .truths import dense_truth, wide_truth


def _failure(exc: BaseException) -> str:
    return f"raised {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"


def _error(a: np.ndarray, b: np.ndarray) -> float:
    """``max|a − b| / max(1, max|b|)``: the study's error (pvosimr.reference.truth's)."""
    return relative_error(a, b, 1.0)


def _attempt(out: dict, path: str, run: Callable[[], list[np.ndarray]]) -> None:
    """``out[path]``: every G of ``run()``, or why it raised (a raise is a result, never a
    silent wrong matrix)."""
    try:
        out[path] = run()
    except Exception as exc:
        out[path] = _failure(exc)


def _run_paths(model, data, qs, cms, limits: Limits, codegen: bool) -> dict:
    """Every pvosimr path's G at every q (or the failure string)."""
    from pvosimr import codegen as cg
    from pvosimr.symbolic import delassus_function

    out: dict[str, list[np.ndarray] | str] = {}
    one, batch = pvosimr.compute_delassus, pvosimr.compute_delassus_batch
    casadi_limits = {"naive": limits.nv_casadi_naive, "ltl-osim": limits.nv_casadi_ltl}
    for alg in ALGORITHMS:
        if data is not None:
            _attempt(out, f"numpy:{alg}", lambda a=alg: [one(model, data, q, cms, a) for q in qs])
        _attempt(out, f"batch:{alg}", lambda a=alg: list(batch(model, qs, cms, a)))
        if model.nv > casadi_limits.get(alg, model.nv):
            continue
        try:
            f = delassus_function(model, cms, alg)
        except Exception as exc:
            out[f"casadi:{alg}"] = _failure(exc)
            continue
        out[f"casadi:{alg}"] = [np.array(f(q), dtype=float) for q in qs]
        if codegen and f.n_instructions() <= limits.codegen_instructions:
            compiled = lambda a=alg: [cg.compile(model, cms, a)(q) for q in qs]  # noqa: E731
            _attempt(out, f"codegen:{alg}", compiled)
    return out


def _reference(model, data, qs, cms, wide_kind: str) -> tuple:
    """``(truths, M, reference, LU vs Cholesky, dense failure)``: the dense truth at every q
    where there is a Data and it holds, else the wide one (longdouble where there is no Data,
    ``wide_kind`` where the double Cholesky failed)."""
    failure = None
    if data is not None:
        try:
            dense = [dense_truth(model, data, q, cms) for q in qs]
            lu = max(_error(d[1], d[0]) for d in dense)
            return [d[0] for d in dense], dense[0][2], "dense", lu, None
        except np.linalg.LinAlgError as exc:  # M is not positive definite in float64
            failure = _failure(exc)
    kind = wide_kind if failure else "longdouble"
    wides = [wide_truth(model, q, cms, kind) for q in qs]
    M = truth.mass_matrix(model, qs[0], data) if data is not None else wides[0][1]
    return [w[0] for w in wides], M, f"wide-{kind}", None, failure


def _sensitivity(model, q: np.ndarray, cms, wide: np.ndarray, rng) -> float:
    """How much the decimal truth moves under 1-ulp relative noise on q (quaternions
    re-normalized): an error of that size is in the inputs every double algorithm rounds."""
    noise = 1 + np.finfo(float).eps * rng.choice([-1.0, 1.0], model.nq)
    q1 = pin.normalize(model, q * noise)
    return _error(wide_truth(model, q1, cms, "decimal")[0], wide)


def _scored(name: str, results: dict, truths: list, wide) -> tuple[list[Record], dict]:
    """Every path's worst error over the configurations, and at q₀ against the wide truth;
    ``raised``: why a path gave no number (a raise, or a non-finite G)."""
    records, raised = [], {}
    for path, Gs in results.items():
        if not isinstance(Gs, str) and not all(np.isfinite(G).all() for G in Gs):
            Gs = "returned a non-finite G without raising"
        if isinstance(Gs, str):
            raised[path] = Gs
            continue
        worst = max(_error(G, T) for G, T in zip(Gs, truths, strict=True))
        records.append(Record(name, path, ERROR, worst, ""))
        if wide is not None:
            records.append(Record(name, path, WIDE, _error(Gs[0], wide), ""))
    return records, raised


def measure(
    case: ChainCase, limits: Limits, codegen: bool, sensitivity: bool, sweep: str
) -> tuple[dict, list[Record]]:
    """``(description, records)`` of ``case``: its sizes, reference truth and the paths that
    raised; and every number measured on it (one ``pin.Data``, freed at the end)."""
    start = time.perf_counter()
    model, cms = case.build()
    rng = np.random.default_rng(case.seed + 7)
    qs = np.stack([random_q(model, rng) for _ in range(limits.configurations)])
    nv, use_pin = model.nv, model.nv <= limits.nv_pin
    data = model.createData() if use_pin else None
    wide_kind = "decimal" if nv <= limits.nv_decimal else "longdouble"
    truths, M, ref, lu, failure = _reference(model, data, qs, cms, wide_kind)
    name = f"{sweep}/{case.family} n={case.n} {case.profile} {case.ratio:.0e}"
    info = {"name": name, "sweep": sweep, **asdict(case), "nv": nv, "m": truths[0].shape[0]}
    info |= {"reference": ref, "wide": None, "raised": {}}
    records = [Record(name, "M", "cond", float(np.linalg.cond(M)), "")]
    if failure is not None:
        info["raised"]["dense truth"] = failure
    if lu is not None:
        records.append(Record(name, "dense LU", "error vs Cholesky", lu, ""))
    wide = None
    if nv <= limits.nv_wide:
        info["wide"] = wide_kind
        same = ref == f"wide-{wide_kind}"
        wide = truths[0] if same else wide_truth(model, qs[0], cms, wide_kind)[0]
        if ref == "dense":
            records.append(Record(name, "dense truth", WIDE, _error(truths[0], wide), ""))
        if sensitivity and wide_kind == "decimal":
            value = _sensitivity(model, qs[0], cms, wide, rng)
            records.append(Record(name, "wide truth", "sensitivity", value, ""))
    results = _run_paths(model, data, qs, cms, limits, codegen)
    efpa, pv = reference.pinocchio_efpa, reference.pinocchio_pv_osimr
    if use_pin:
        _attempt(results, "pin-efpa", lambda d=data: [np.array(efpa(model, d, q, cms)) for q in qs])
    del data
    gc.collect()
    if use_pin:  # Pinocchio's C++ PV-OSIMr owns a second O(nv³) Data: after ours is freed
        _attempt(results, "pin-pv-osimr", lambda: [pv(model, None, q, cms) for q in qs])
        reference.clear_cache()
        gc.collect()
    scored, raised = _scored(name, results, truths, wide)
    info["raised"] |= raised
    seconds = Record(name, "study", "seconds", time.perf_counter() - start, "s")
    return info, [*records, *scored, seconds]


def run_study(plan: StudyPlan, progress: bool = True) -> dict:
    """Measure every case of ``plan``: ``{"limits", "cases": [description], "records"}``."""
    out: dict = {"limits": asdict(plan.limits), "cases": [], "records": []}
    bar = progress_bar(plan.cases(), desc="accuracy", unit="case", disable=not progress)
    for sweep, case, compiled, sensitivity in bar:
        bar.set_postfix_str(f"{sweep} {case.family} n={case.n} ratio={case.ratio:.0e}")
        info, records = measure(case, plan.limits, compiled, sensitivity, sweep)
        out["cases"].append(info)
        out["records"] += records
    return out
