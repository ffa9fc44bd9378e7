"""The report of the accuracy study: ``accuracy.md`` (method, limits, acceptance, the depth and
conditioning tables, a plain-language summary), ``accuracy.json`` and ``accuracy.png``; its
prose is ``benchmarks/templates/accuracy.md``'s, only the measured values filled in."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pinocchio as pin

from pvosimr.study.record import table

from ..record import write_json
from ..text import prose
from .cases import ALGORITHMS, PATHS, PINOCCHIO, TOL, mixed_kinds
from .plot import plot
from .tables import acceptance, accuracy_limits, as_float, case_views, cond_sweeps, failures


def fmt(x: Any) -> str:
    """An error or a cond(M) in a table cell: ``—`` not run, ``raise`` raised, else ``1.2e-16``."""
    if x is None:
        return "—"
    if isinstance(x, str):
        return "raise"
    return "0" if x == 0 else f"{x:.1e}"


def _path_table(recs: list[dict], key: str, head: list[str], extra: list[tuple]) -> list[str]:
    """One column per case: the case's own rows ``extra``, then every path's error ``key``."""
    paths = [p for p in PATHS if any(p in r[key] for r in recs)]
    rows = [*extra, *((p, [fmt(r[key].get(p)) for r in recs]) for p in paths)]
    return table(["path", *head], [[label, *cells] for label, cells in rows], "l" * (len(head) + 1))


def _depth(views: list[dict]) -> list[str]:
    out = ["## Error against depth (uniform random masses)", ""]
    depth = [r for r in views if r["sweep"] == "depth"]
    for family in dict.fromkeys(r["family"] for r in depth):
        recs = [r for r in depth if r["family"] == family]
        extra = [
            ("nv", [str(r["nv"]) for r in recs]),
            ("cond(M)", [fmt(r["cond"]) for r in recs]),
            ("reference", [r["reference"].replace("wide-", "") for r in recs]),
            ("dense truth vs wide", [fmt(r["truth_vs_wide"]) for r in recs]),
            ("dense LU vs Cholesky", [fmt(r["lu_vs_cholesky"]) for r in recs]),
        ]
        head = [f"n={r['n']}" for r in recs]
        out += [f"### {family} chains", "", *_path_table(recs, "errors", head, extra), ""]
    return out


def _cond(views: list[dict]) -> list[str]:
    out = ["## Error against cond(M) (mass ratio inside the chain)", "", prose("accuracy", "cond")]
    for (family, n, profile), recs in cond_sweeps(views).items():
        extra = [
            ("cond(M)", [fmt(r["cond"]) for r in recs]),
            ("dense truth vs wide", [fmt(r["truth_vs_wide"]) for r in recs]),
            ("dense LU vs Cholesky", [fmt(r["lu_vs_cholesky"]) for r in recs]),
            ("sensitivity", [fmt(r["sensitivity"]) for r in recs]),
        ]
        head = [f"{r['ratio']:.0e}" for r in recs]
        out += ["", f"### {family}, n = {n} (nv = {recs[0]['nv']}), {profile}", "", "ratio →", ""]
        out += _path_table(recs, "errors_wide", head, extra)
    return [*out, ""]


def markdown(results: dict, seconds: float, command: str) -> str:
    """The report: method, acceptance numbers, depth and conditioning tables, summary."""
    lim, views = results["limits"], case_views(results)
    names = ("configurations", "nv_decimal", "nv_pin", "nv_casadi_naive", "nv_casadi_ltl")
    head = prose(
        "accuracy",
        "head",
        command=command,
        seconds=f"{seconds:.0f}",
        pin=pin.__version__,
        n_kinds=len(mixed_kinds()),
        kinds=", ".join(mixed_kinds()),
        codegen_instructions=lim["codegen_instructions"],
        **{k: lim[k] for k in names},
    )
    acc = acceptance(views)
    header = ["path", *(f"{f} (nv ≤ {acc[f]['nv']})" for f in acc)]
    paths = [p for p in PATHS if any(p in row for row in acc.values())]
    rows = [[p, *(fmt(acc[f].get(p)) for f in acc)] for p in paths]
    out = [head, "", "## Acceptance: worst error where cond(M) ≤ 1e8", ""]
    out += [prose("accuracy", "acceptance", nv_pin=lim["nv_pin"]), ""]
    out += [*table(header, rows, "l" * len(header)), "", *_depth(views), *_cond(views)]
    out += [*summary(views), "## Paths that raised", ""]
    out += [f"- {f}" for f in failures(views)] or ["None."]
    return "\n".join(out) + "\n"


def summary(views: list[dict]) -> list[str]:
    """The plain-language summary, every number read from the cases ``views``."""
    acc = acceptance(views)
    ours = [e for row in acc.values() for p, e in row.items() if p != "nv" and p[:4] != "pin-"]
    pins = {p: max((row[p] for row in acc.values() if p in row), default=None) for p in PINOCCHIO}
    checked = [r for r in views if r["truth_vs_wide"] is not None]
    good = [r["cond"] for r in checked if as_float(r["truth_vs_wide"], math.inf) <= TOL]
    misses = (r for r in checked if as_float(r["truth_vs_wide"], math.inf) > TOL)
    first = min(misses, key=lambda r: r["cond"], default=None)
    paths = prose(
        "accuracy",
        "summary-paths",
        n_algorithms=len(ALGORITHMS),
        worst=fmt(max(ours, default=None)),
        nv=max(r["nv"] for r in acc.values()),
        pin_efpa=fmt(pins["pin-efpa"]),
        pin_pv_osimr=fmt(pins["pin-pv-osimr"]),
    )
    good_cond = fmt(max(good, default=None))
    if first is not None:
        miss = {"first_cond": fmt(first["cond"]), "first_error": fmt(first["truth_vs_wide"])}
        total = {"good": len(good), "total": len(checked), "good_cond": good_cond}
        dense = prose("accuracy", "summary-truth-miss", **miss, **total)
    else:
        dense = prose("accuracy", "summary-truth-ok", good_cond=good_cond)
    return ["## Summary", "", paths, dense, *map(_limit_line, accuracy_limits(views)), ""]


def _limit_line(row: dict) -> str:
    """The summary's line on one conditioning sweep."""
    pv, rec = row["pvosimr"], row["pvosimr recursive"]
    text = prose(
        "accuracy",
        "summary-limit",
        family=row["family"],
        n=row["n"],
        profile=row["profile"],
        pv_ratio=fmt(pv["ratio"]),
        pv_cond=fmt(pv["cond"]),
        rec_ratio=fmt(rec["ratio"]),
        rec_cond=fmt(rec["cond"]),
        efpa_ratio=fmt(row["pin-efpa"]["ratio"]),
        pv_osimr_ratio=fmt(row["pin-pv-osimr"]["ratio"]),
        dense_ratio=fmt(row["dense truth"]["ratio"]),
    )
    at = row.get("at_1e10")
    if not at:
        return text
    values = {k.replace("-", "_").replace(" ", "_"): fmt(v) for k, v in at.items()}
    return text + " " + prose("accuracy", "summary-at-1e10", **values)


def write_outputs(results: dict, out: Path, seconds: float, command: str) -> None:
    """``accuracy.json`` (every case and record, the acceptance table and the limits),
    ``accuracy.md`` and ``accuracy.png`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    views = case_views(results)
    payload = {"seconds": seconds, "command": command, "tolerance": TOL, **results}
    payload |= {"acceptance": acceptance(views), "accuracy_limits": accuracy_limits(views)}
    write_json(out / "accuracy.json", payload)
    (out / "accuracy.md").write_text(markdown(results, seconds, command))
    plot(results, out / "accuracy.png")
