"""The study's numbers read off its records: each case's errors by path, acceptance per family,
the conditioning limits of every path, the paths that raised."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ..record import Record
from .cases import ACCEPT_COND, BACKENDS, RECURSIVE, TOL
from .measure import ERROR, WIDE

_CASE_NUMBERS = {
    ("M", "cond"): "cond",
    ("dense truth", WIDE): "truth_vs_wide",
    ("dense LU", "error vs Cholesky"): "lu_vs_cholesky",
    ("wide truth", "sensitivity"): "sensitivity",
}
"""The records that describe a case rather than a path, and their keys in its view."""


def case_views(results: dict) -> list[dict]:
    """Each case's description with its records by path, as the tables read them: ``cond``,
    ``errors`` and ``errors_wide`` (per path: its number, or why it raised), ``truth_vs_wide``
    and ``lu_vs_cholesky`` (the message where the double truth raised), ``sensitivity``."""
    views: dict[str, dict] = {}
    for info in results["cases"]:
        raised = {p: why for p, why in info["raised"].items() if p != "dense truth"}
        dense = info["raised"].get("dense truth")
        view = {**info, "errors": dict(raised), "errors_wide": dict(raised), "sensitivity": None}
        views[info["name"]] = view | {"truth_vs_wide": dense, "lu_vs_cholesky": dense}
    for r in results["records"]:
        r = r if isinstance(r, Record) else Record(**r)
        view = views[r.case]
        if (r.method, r.quantity) in _CASE_NUMBERS:
            view[_CASE_NUMBERS[r.method, r.quantity]] = r.value
        elif r.quantity in (ERROR, WIDE):
            view["errors" if r.quantity == ERROR else "errors_wide"][r.method] = r.value
    return list(views.values())


def numbers(errors: dict) -> dict[str, float]:
    """The measured errors (the paths that ran without raising)."""
    return {p: e for p, e in errors.items() if isinstance(e, float)}


def acceptance(views: list[dict], cond_max: float = ACCEPT_COND) -> dict[str, dict[str, float]]:
    """Per family, every path's worst error (against the run's reference truth) over every
    case with cond(M) ≤ ``cond_max``; the key ``"nv"`` holds the largest nv covered."""
    table: dict[str, dict[str, float]] = {}
    for rec in views:
        if rec["cond"] > cond_max:
            continue
        row = table.setdefault(rec["family"], {"nv": 0})
        row["nv"] = max(row["nv"], rec["nv"])
        for path, err in numbers(rec["errors"]).items():
            row[path] = max(row.get(path, 0.0), err)
    return table


def failures(views: list[dict]) -> list[str]:
    """Every path that raised, with its case (a raise is reported, never hidden)."""
    return [
        f"{rec['family']} n={rec['n']} ratio={rec['ratio']:.0e} {path}: {err}"
        for rec in views
        for path, err in rec["errors"].items()
        if isinstance(err, str)
    ]


def as_float(x: Any, failed: float = math.nan) -> float:
    """A measured error as a float: ``failed`` where the path raised, NaN where not run."""
    if isinstance(x, str):
        return failed
    return math.nan if x is None else float(x)


def worst(errors: dict, prefix: Sequence[str]) -> float | None:
    """The largest measured error of the paths starting with one of ``prefix`` (None: none)."""
    vals = [e for p, e in numbers(errors).items() if p.startswith(tuple(prefix))]
    return max(vals) if vals else None


_FOLLOWED: dict[str, Callable[[str], bool]] = {
    "pvosimr": lambda p: not p.startswith("pin-"),
    "pvosimr recursive": lambda p: not p.startswith("pin-") and p.split(":")[1] in RECURSIVE,
    "pin-efpa": lambda p: p == "pin-efpa",
    "pin-pv-osimr": lambda p: p == "pin-pv-osimr",
}
"""Who :func:`accuracy_limits` follows, and which paths are theirs."""


def cond_sweeps(views: list[dict]) -> dict[tuple[str, int, str], list[dict]]:
    """The cases of the conditioning sweeps by ``(family, n, profile)``, in run order."""
    groups: dict[tuple[str, int, str], list[dict]] = {}
    for rec in views:
        if rec["sweep"] == "cond":
            groups.setdefault((rec["family"], rec["n"], rec["profile"]), []).append(rec)
    return groups


def _within_tol_up_to(recs: list[dict], who: str) -> dict[str, Any]:
    """The largest ratio (and its cond(M)) of the sweep ``recs`` (by increasing ratio) up to
    which ``who`` stays within TOL of the wide truth; a raise ends every pvosimr path."""
    ok_ratio, ok_cond = None, None
    for rec in recs:
        if who == "dense truth":
            err = as_float(rec["truth_vs_wide"], math.inf)
        else:
            errs = [e for p, e in numbers(rec["errors_wide"]).items() if _FOLLOWED[who](p)]
            raised = any(isinstance(v, str) for v in rec["errors_wide"].values())
            err = max(errs) if errs and not (raised and who == "pvosimr") else None
        if err is None or err > TOL:
            break
        ok_ratio, ok_cond = rec["ratio"], rec["cond"]
    return {"ratio": ok_ratio, "cond": ok_cond}


def accuracy_limits(views: list[dict]) -> list[dict]:
    """For each conditioning sweep: the largest ratio and cond(M) up to which every pvosimr
    path (and each of Pinocchio's routines) stays within TOL of the wide truth, and the
    errors at a mass ratio of 1e10."""
    rows = []
    for (family, n, profile), recs in cond_sweeps(views).items():
        recs = sorted(recs, key=lambda r: r["ratio"])
        row: dict[str, Any] = {"family": family, "n": n, "profile": profile}
        for who in (*_FOLLOWED, "dense truth"):
            row[who] = _within_tol_up_to(recs, who)
        at = [r for r in recs if r["ratio"] == 1e10]
        baselines = [f"{b}:{a}" for b in BACKENDS for a in ("naive", "ltl-osim")]
        if at:
            e = at[0]["errors_wide"]
            row["at_1e10"] = {
                "cond": at[0]["cond"],
                "recursive": worst(e, [f"{b}:{a}" for b in BACKENDS for a in RECURSIVE]),
                "baselines": worst(e, baselines),
                "pin-efpa": e.get("pin-efpa"),
                "pin-pv-osimr": e.get("pin-pv-osimr"),
                "dense truth": at[0]["truth_vs_wide"],
            }
        rows.append(row)
    return rows
