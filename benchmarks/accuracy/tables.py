"""The study's numbers read off its records: acceptance per family, the conditioning limits
of every path, the paths that raised."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .cases import ACCEPT_COND, BACKENDS, RECURSIVE, TOL

__all__ = [
    "acceptance",
    "accuracy_limits",
    "as_float",
    "cond_sweeps",
    "failures",
    "numbers",
    "worst",
]


def numbers(errors: dict) -> dict[str, float]:
    """The measured errors (the paths that ran without raising)."""
    return {p: e for p, e in errors.items() if isinstance(e, float)}


def acceptance(results: dict, cond_max: float = ACCEPT_COND) -> dict[str, dict[str, float]]:
    """Per family, every path's worst error (against the run's reference truth) over every
    case with cond(M) ≤ ``cond_max``; the key ``"nv"`` holds the largest nv covered."""
    table: dict[str, dict[str, float]] = {}
    for rec in results["depth"] + results["cond"]:
        if rec["cond"] > cond_max:
            continue
        row = table.setdefault(rec["family"], {"nv": 0})
        row["nv"] = max(row["nv"], rec["nv"])
        for path, err in numbers(rec["errors"]).items():
            row[path] = max(row.get(path, 0.0), err)
    return table


def failures(results: dict) -> list[str]:
    """Every path that raised, with its case (a raise is reported, never hidden)."""
    out = []
    for rec in results["depth"] + results["cond"]:
        for path, err in rec["errors"].items():
            if isinstance(err, str):
                out.append(f"{rec['family']} n={rec['n']} ratio={rec['ratio']:.0e} {path}: {err}")
    return out


def as_float(x: Any, failed: float = math.nan) -> float:
    """A measured error as a float: ``failed`` where the path raised, NaN where not run."""
    if isinstance(x, str):
        return failed
    return math.nan if x is None else float(x)


def worst(errors: dict, prefix: Sequence[str]) -> float | None:
    """The largest measured error of the paths starting with one of ``prefix`` (None: none)."""
    vals = [e for p, e in numbers(errors).items() if p.startswith(tuple(prefix))]
    return max(vals) if vals else None


def _pvosimr_paths(errors: dict) -> dict[str, float]:
    return {p: e for p, e in numbers(errors).items() if not p.startswith("pin-")}


def _recursive_paths(errors: dict) -> dict[str, float]:
    return {p: e for p, e in _pvosimr_paths(errors).items() if p.split(":")[1] in RECURSIVE}


def _one_path(path: str) -> Callable[[dict], dict[str, float]]:
    return lambda errors: {p: e for p, e in numbers(errors).items() if p == path}


#: Who :func:`accuracy_limits` follows, and which of a record's errors are theirs.
_FOLLOWED: tuple[tuple[str, Callable[[dict], dict[str, float]]], ...] = (
    ("pvosimr", _pvosimr_paths),
    ("pvosimr recursive", _recursive_paths),
    ("pin-efpa", _one_path("pin-efpa")),
    ("pin-pv-osimr", _one_path("pin-pv-osimr")),
)


def cond_sweeps(results: dict) -> dict[tuple[str, int, str], list[dict]]:
    """The records of the conditioning sweeps by ``(family, n, profile)``, in run order."""
    groups: dict[tuple[str, int, str], list[dict]] = {}
    for rec in results["cond"]:
        groups.setdefault((rec["family"], rec["n"], rec["profile"]), []).append(rec)
    return groups


def _within_tol_up_to(recs: list[dict], who: str, select: Callable) -> dict[str, Any]:
    """The largest ratio (and its cond(M)) of the sweep ``recs`` (by increasing ratio) up to
    which ``who`` stays within TOL of the wide truth; a raise ends every pvosimr path."""
    ok_ratio, ok_cond = None, None
    for rec in recs:
        if who == "dense truth":
            err = as_float(rec["truth_vs_wide"], math.inf)
        else:
            errs = select(rec["errors_wide"])
            raised = any(isinstance(v, str) for v in rec["errors_wide"].values())
            err = max(errs.values()) if errs and not (raised and who == "pvosimr") else None
        if err is None or err > TOL:
            break
        ok_ratio, ok_cond = rec["ratio"], rec["cond"]
    return {"ratio": ok_ratio, "cond": ok_cond}


def accuracy_limits(results: dict) -> list[dict]:
    """For each conditioning sweep: the largest ratio and cond(M) up to which every pvosimr
    path (and each of Pinocchio's routines) stays within TOL of the wide truth, and the
    errors at a mass ratio of 1e10."""
    rows = []
    for (family, n, profile), recs in cond_sweeps(results).items():
        recs = sorted(recs, key=lambda r: r["ratio"])
        row: dict[str, Any] = {"family": family, "n": n, "profile": profile}
        for who, select in _FOLLOWED:
            row[who] = _within_tol_up_to(recs, who, select)
        row["dense truth"] = _within_tol_up_to(recs, "dense truth", lambda e: {})
        at = [r for r in recs if r["ratio"] == 1e10]
        if at:
            e = at[0]["errors_wide"]
            row["at_1e10"] = {
                "cond": at[0]["cond"],
                "recursive": worst(e, [f"{b}:{a}" for b in BACKENDS for a in RECURSIVE]),
                "baselines": worst(
                    e, [f"{b}:{a}" for b in BACKENDS for a in ("naive", "ltl-osim")]
                ),
                "pin-efpa": e.get("pin-efpa"),
                "pin-pv-osimr": e.get("pin-pv-osimr"),
                "dense truth": at[0]["truth_vs_wide"],
            }
        rows.append(row)
    return rows
