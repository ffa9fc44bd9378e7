"""The report of the accuracy study: ``accuracy.md`` (method, limits, acceptance, the depth and
conditioning tables, a plain-language summary), ``accuracy.json`` and ``accuracy.png``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pinocchio as pin

from pvosimr.study.record import write_json

from ..text import prose
from .cases import ALGORITHMS, PATHS, PINOCCHIO, TOL, mixed_kinds
from .plot import plot
from .tables import acceptance, accuracy_limits, as_float, cond_sweeps, failures

__all__ = ["fmt", "markdown", "summary", "write_outputs"]


def fmt(x: Any) -> str:
    """An error or a cond(M) in a table cell: ``—`` not run, ``raise`` raised, else ``1.2e-16``."""
    if x is None:
        return "—"
    if isinstance(x, str):
        return "raise"
    if x == 0:
        return "0"
    return f"{x:.1e}"


def _path_table(recs: list[dict], key: str, head: list[str], extra: list[tuple]) -> list[str]:
    paths = [p for p in PATHS if any(p in r[key] for r in recs)]
    lines = ["| path | " + " | ".join(head) + " |", "|---|" + "---|" * len(head)]
    for label, values in extra:
        lines.append(f"| {label} | " + " | ".join(values) + " |")
    for p in paths:
        cells = [fmt(r[key].get(p)) for r in recs]
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    return lines


def markdown(results: dict, seconds: float, command: str) -> str:
    """The report: method, acceptance numbers, depth and conditioning tables, summary."""
    lim = results["limits"]
    values = {k: lim[k] for k in ("configurations", "nv_decimal", "nv_pin", "nv_casadi_naive")}
    values |= {k: lim[k] for k in ("nv_casadi_ltl", "codegen_instructions")}
    head = prose(
        "accuracy",
        "head",
        command=command,
        seconds=f"{seconds:.0f}",
        pin=pin.__version__,
        n_kinds=len(mixed_kinds()),
        kinds=", ".join(mixed_kinds()),
        **values,
    )
    out = [head, ""]
    out += ["## Acceptance: worst error where cond(M) ≤ 1e8", ""]
    acc = acceptance(results)
    fams = list(acc)
    out += [
        prose("accuracy", "acceptance", nv_pin=lim["nv_pin"]),
        "",
        "| path | " + " | ".join(f"{f} (nv ≤ {acc[f]['nv']})" for f in fams) + " |",
        "|---|" + "---|" * len(fams),
    ]
    for p in PATHS:
        if any(p in acc[f] for f in fams):
            out.append(f"| {p} | " + " | ".join(fmt(acc[f].get(p)) for f in fams) + " |")
    out += ["", "## Error against depth (uniform random masses)", ""]
    for family in dict.fromkeys(r["family"] for r in results["depth"]):
        recs = [r for r in results["depth"] if r["family"] == family]
        out += [f"### {family} chains", ""]
        head = [f"n={r['n']}" for r in recs]
        extra = [
            ("nv", [str(r["nv"]) for r in recs]),
            ("cond(M)", [fmt(r["cond"]) for r in recs]),
            ("reference", [r["reference"].replace("wide-", "") for r in recs]),
            ("dense truth vs wide", [fmt(r["truth_vs_wide"]) for r in recs]),
            ("dense LU vs Cholesky", [fmt(r["lu_vs_cholesky"]) for r in recs]),
        ]
        out += [*_path_table(recs, "errors", head, extra), ""]
    out += [
        "## Error against cond(M) (mass ratio inside the chain)",
        "",
        prose("accuracy", "cond"),
        "",
    ]
    for (family, n, profile), recs in cond_sweeps(results).items():
        out += [f"### {family}, n = {n} (nv = {recs[0]['nv']}), {profile}", ""]
        head = [f"{r['ratio']:.0e}" for r in recs]
        extra = [
            ("cond(M)", [fmt(r["cond"]) for r in recs]),
            ("dense truth vs wide", [fmt(r["truth_vs_wide"]) for r in recs]),
            ("dense LU vs Cholesky", [fmt(r["lu_vs_cholesky"]) for r in recs]),
            ("sensitivity", [fmt(r["sensitivity"]) for r in recs]),
        ]
        out += ["ratio →", "", *_path_table(recs, "errors_wide", head, extra), ""]
    out += summary(results)
    fails = failures(results)
    out += ["## Paths that raised", ""]
    out += [f"- {f}" for f in fails] if fails else ["None."]
    return "\n".join(out) + "\n"


def summary(results: dict) -> list[str]:
    """The plain-language summary, every number read from ``results``."""
    acc = acceptance(results)
    worst_pv = max(
        (
            e
            for row in acc.values()
            for p, e in row.items()
            if p not in ("nv",) and not p.startswith("pin-")
        ),
        default=None,
    )
    worst_pin = {
        p: max((row[p] for row in acc.values() if p in row), default=None) for p in PINOCCHIO
    }
    truth_ok = [r for r in results["depth"] + results["cond"] if r["truth_vs_wide"] is not None]
    bad_truth = sorted(
        (r for r in truth_ok if as_float(r["truth_vs_wide"], math.inf) > TOL),
        key=lambda r: r["cond"],
    )
    good_truth = [r["cond"] for r in truth_ok if as_float(r["truth_vs_wide"], math.inf) <= TOL]
    lines = ["## Summary", ""]
    lines.append(
        prose(
            "accuracy",
            "summary-paths",
            n_algorithms=len(ALGORITHMS),
            worst=fmt(worst_pv),
            nv=max(r["nv"] for r in acc.values()),
            pin_efpa=fmt(worst_pin["pin-efpa"]),
            pin_pv_osimr=fmt(worst_pin["pin-pv-osimr"]),
        )
    )
    good_cond = fmt(max(good_truth, default=None))
    if bad_truth:
        first = bad_truth[0]
        miss = {"first_cond": fmt(first["cond"]), "first_error": fmt(first["truth_vs_wide"])}
        total = {"good": len(good_truth), "total": len(truth_ok), "good_cond": good_cond}
        lines.append(prose("accuracy", "summary-truth-miss", **miss, **total))
    else:
        lines.append(prose("accuracy", "summary-truth-ok", good_cond=good_cond))
    for row in accuracy_limits(results):
        lines.append(_limit_line(row))
    return [*lines, ""]


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
    """``accuracy.json`` (every record, the acceptance table and the limits), ``accuracy.md``
    and ``accuracy.png`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    payload = {
        "seconds": seconds,
        "command": command,
        "tolerance": TOL,
        **results,
        "acceptance": acceptance(results),
        "accuracy_limits": accuracy_limits(results),
    }
    write_json(out / "accuracy.json", payload)
    (out / "accuracy.md").write_text(markdown(results, seconds, command))
    plot(results, out / "accuracy.png")
