"""The study's report, read off its records: ``accuracy.md`` (every table from
:func:`benchmarks.text.grid` and a table spec, the prose from
``benchmarks/templates/accuracy.md``), ``accuracy.json`` and ``accuracy.png`` (its panels from
:data:`PANELS`)."""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pinocchio as pin

from ..record import Record, write_json
from ..text import grid, prose
from .cases import (
    ACCEPT_COND,
    ALGORITHMS,
    BACKENDS,
    ERROR,
    PATHS,
    PINOCCHIO,
    RECURSIVE,
    TOL,
    WIDE,
    mixed_kinds,
)

CASE_NUMBERS = {
    ("M", "cond"): "cond",
    ("dense truth", WIDE): "truth_vs_wide",
    ("dense LU", "error vs Cholesky"): "lu_vs_cholesky",
    ("wide truth", "sensitivity"): "sensitivity",
}
"""The records that describe a case rather than a path, and their keys in its view."""


def case_views(results: dict) -> list[dict]:
    """Each case's description with its records: ``cond``, ``errors`` and ``errors_wide`` (per
    path: its number, or why it raised), ``truth_vs_wide`` and ``lu_vs_cholesky`` (the message
    where the double truth raised), ``sensitivity``."""
    views: dict[str, dict] = {}
    for info in results["cases"]:
        raised = {p: why for p, why in info["raised"].items() if p != "dense truth"}
        dense = info["raised"].get("dense truth")
        view = {**info, "errors": dict(raised), "errors_wide": dict(raised), "sensitivity": None}
        views[info["name"]] = view | {"truth_vs_wide": dense, "lu_vs_cholesky": dense}
    for r in results["records"]:
        r = r if isinstance(r, Record) else Record(**r)
        if (r.method, r.quantity) in CASE_NUMBERS:
            views[r.case][CASE_NUMBERS[r.method, r.quantity]] = r.value
        elif r.quantity in (ERROR, WIDE):
            views[r.case]["errors" if r.quantity == ERROR else "errors_wide"][r.method] = r.value
    return list(views.values())


def numbers(errors: dict) -> dict[str, float]:
    """The measured errors (the paths that ran without raising)."""
    return {p: e for p, e in errors.items() if isinstance(e, float)}


def worst(errors: dict, prefix: Sequence[str]) -> float | None:
    """The largest measured error of the paths starting with one of ``prefix`` (None: none)."""
    vals = [e for p, e in numbers(errors).items() if p.startswith(tuple(prefix))]
    return max(vals) if vals else None


def as_float(x: Any, failed: float = math.nan) -> float:
    """A measured error as a float: ``failed`` where the path raised, NaN where not run."""
    return failed if isinstance(x, str) else math.nan if x is None else float(x)


def fmt(x: Any) -> str:
    """An error or a cond(M) in a table cell: ``—`` not run, ``raise`` raised, else ``1.2e-16``."""
    if x is None or isinstance(x, str):
        return "—" if x is None else "raise"
    return "0" if x == 0 else f"{x:.1e}"


def acceptance(views: list[dict]) -> dict[str, dict[str, float]]:
    """Per family, every path's worst error over every case with cond(M) ≤ ACCEPT_COND; the key
    ``"nv"`` holds the largest nv covered."""
    out: dict[str, dict[str, float]] = {}
    for v in (v for v in views if v["cond"] <= ACCEPT_COND):
        row = out.setdefault(v["family"], {"nv": 0})
        row["nv"] = max(row["nv"], v["nv"])
        for path, err in numbers(v["errors"]).items():
            row[path] = max(row.get(path, 0.0), err)
    return out


def failures(views: list[dict]) -> list[str]:
    """Every path that raised, with its case (a raise is reported, never hidden)."""
    return [
        f"{v['family']} n={v['n']} ratio={v['ratio']:.0e} {path}: {err}"
        for v in views
        for path, err in v["errors"].items()
        if isinstance(err, str)
    ]


def groups(views: list[dict], sweep: str, key: Callable[[dict], Any]) -> dict[Any, list[dict]]:
    """The cases of ``sweep`` grouped by ``key``, in run order."""
    out: dict[Any, list[dict]] = {}
    for v in (v for v in views if v["sweep"] == sweep):
        out.setdefault(key(v), []).append(v)
    return out


FOLLOWED: dict[str, Callable[[str], bool]] = {
    "pvosimr": lambda p: not p.startswith("pin-"),
    "pvosimr recursive": lambda p: not p.startswith("pin-") and p.split(":")[1] in RECURSIVE,
    "pin-efpa": lambda p: p == "pin-efpa",
    "pin-pv-osimr": lambda p: p == "pin-pv-osimr",
}
"""Who :func:`accuracy_limits` follows, and which paths are theirs."""
BASELINES = ("naive", "ltl-osim")
SWEEP_KEYS = ("family", "n", "profile")
"""What a conditioning sweep's cases share."""


def _within_tol_up_to(views: list[dict], who: str) -> dict[str, Any]:
    """The largest ratio (and its cond(M)) of a sweep (by increasing ratio) up to which ``who``
    stays within TOL of the wide truth; a raise ends every pvosimr path."""
    ok: dict[str, Any] = {"ratio": None, "cond": None}
    for v in views:
        if who == "dense truth":
            err = as_float(v["truth_vs_wide"], math.inf)
        else:
            errs = [e for p, e in numbers(v["errors_wide"]).items() if FOLLOWED[who](p)]
            raised = any(isinstance(e, str) for e in v["errors_wide"].values())
            err = max(errs) if errs and not (raised and who == "pvosimr") else None
        if err is None or err > TOL:
            break
        ok = {"ratio": v["ratio"], "cond": v["cond"]}
    return ok


def accuracy_limits(views: list[dict]) -> list[dict]:
    """Per conditioning sweep: the largest ratio and cond(M) up to which every pvosimr path
    (and each of Pinocchio's routines) stays within TOL of the wide truth, and the errors at
    a mass ratio of 1e10."""
    rows = []
    for group, vs in groups(views, "cond", lambda v: tuple(v[k] for k in SWEEP_KEYS)).items():
        vs = sorted(vs, key=lambda v: v["ratio"])
        row: dict[str, Any] = dict(zip(SWEEP_KEYS, group, strict=True))
        row |= {who: _within_tol_up_to(vs, who) for who in (*FOLLOWED, "dense truth")}
        at = next((v for v in vs if v["ratio"] == 1e10), None)
        if at is not None:
            e = at["errors_wide"]
            row["at_1e10"] = {
                "cond": at["cond"],
                "recursive": worst(e, [f"{b}:{a}" for b in BACKENDS for a in RECURSIVE]),
                "baselines": worst(e, [f"{b}:{a}" for b in BACKENDS for a in BASELINES]),
                **{p: e.get(p) for p in PINOCCHIO},
                "dense truth": at["truth_vs_wide"],
            }
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------- the tables

LABELS = {"cond": "cond(M)", "truth_vs_wide": "dense truth vs wide"}
LABELS |= {"lu_vs_cholesky": "dense LU vs Cholesky", "sensitivity": "sensitivity"}


TRUTHS = ("truth_vs_wide", "lu_vs_cholesky")
TABLES = {
    "depth": (("family",), "### {family} chains", "n={n}", ("nv", "cond", "reference", *TRUTHS)),
    "cond": (
        SWEEP_KEYS,
        "### {family}, n = {n} (nv = {nv}), {profile}\n\nratio →",
        "{ratio:.0e}",
        ("cond", *TRUTHS, "sensitivity"),
    ),
}
"""Per sweep, its tables, one per group of its cases (these keys alike): a heading formatted
with the group's first case, a column per case (its header formatted with it), a row per key
of the cases' views, then per path its errors (the sweep's of :data:`AXES`)."""


def _case_cell(key: str) -> Callable[[dict], str]:
    """A case's own row: nv, its reference truth's name, or a number of :data:`LABELS`."""
    if key in ("nv", "reference"):
        return lambda v: str(v[key]).replace("wide-", "")
    return lambda v: fmt(v[key])


def _tables(views: list[dict], sweep: str) -> list[str]:
    (group, heading, column, keys), errors, out = TABLES[sweep], AXES[sweep][0], []
    for vs in groups(views, sweep, lambda v: tuple(v[k] for k in group)).values():
        rows = [(LABELS.get(k, k), _case_cell(k)) for k in keys]
        paths = [p for p in PATHS if any(p in v[errors] for v in vs)]
        rows += [(p, lambda v, p=p: fmt(v[errors].get(p))) for p in paths]
        heads = [column.format(**v) for v in vs]
        out += [heading.format(**vs[0]), "", *grid("path", heads, rows, vs, left=True), ""]
    return out


def markdown(results: dict, seconds: float, command: str) -> str:
    """The report: method, acceptance numbers, depth and conditioning tables, summary."""
    lim, views, kinds = results["limits"], case_views(results), mixed_kinds()
    values = {"command": command, "seconds": f"{seconds:.0f}", "pin": pin.__version__}
    head = prose("accuracy", "head", **values, n_kinds=len(kinds), kinds=", ".join(kinds), **lim)
    acc = acceptance(views)
    heads = [f"{f} (nv ≤ {row['nv']})" for f, row in acc.items()]
    paths = [p for p in PATHS if any(p in row for row in acc.values())]
    out = [head, "", "## Acceptance: worst error where cond(M) ≤ 1e8", ""]
    out += [prose("accuracy", "acceptance", nv_pin=lim["nv_pin"]), ""]
    rows = [(p, lambda row, p=p: fmt(row.get(p))) for p in paths]
    out += [*grid("path", heads, rows, list(acc.values()), left=True), ""]
    out += ["## Error against depth (uniform random masses)", "", *_tables(views, "depth")]
    out += ["## Error against cond(M) (mass ratio inside the chain)", "", prose("accuracy", "cond")]
    out += ["", *_tables(views, "cond"), *summary(views), "## Paths that raised", ""]
    return "\n".join(out + ([f"- {f}" for f in failures(views)] or ["None."])) + "\n"


def summary(views: list[dict]) -> list[str]:
    """The plain-language summary, every number read from the cases ``views``."""
    acc = acceptance(views)
    ours = [e for row in acc.values() for p, e in row.items() if p != "nv" and p[:4] != "pin-"]
    pins = {p: max((r[p] for r in acc.values() if p in r), default=None) for p in PINOCCHIO}
    values = {"n_algorithms": len(ALGORITHMS), "worst": fmt(max(ours, default=None))}
    values |= {"nv": max(r["nv"] for r in acc.values())}
    paths = prose(
        "accuracy", "summary-paths", **values, **{_name(p): fmt(e) for p, e in pins.items()}
    )
    checked = [v for v in views if v["truth_vs_wide"] is not None]
    good = [v["cond"] for v in checked if as_float(v["truth_vs_wide"], math.inf) <= TOL]
    misses = (v for v in checked if as_float(v["truth_vs_wide"], math.inf) > TOL)
    first = min(misses, key=lambda v: v["cond"], default=None)
    total = {"good": len(good), "total": len(checked), "good_cond": fmt(max(good, default=None))}
    if first is None:
        dense = prose("accuracy", "summary-truth-ok", **total)
    else:
        miss = {"first_cond": fmt(first["cond"]), "first_error": fmt(first["truth_vs_wide"])}
        dense = prose("accuracy", "summary-truth-miss", **miss, **total)
    return ["## Summary", "", paths, dense, *map(_limit_line, accuracy_limits(views)), ""]


def _name(key: str) -> str:
    """A key of the study's data as a template's placeholder (``pin-efpa``: ``pin_efpa``)."""
    return key.replace("-", "_").replace(" ", "_")


def _limit_line(row: dict) -> str:
    """The summary's line on one conditioning sweep."""
    limits = {f"{_name(w)}_{k}": fmt(row[w][k]) for w in (*FOLLOWED, "dense truth") for k in row[w]}
    text = prose("accuracy", "summary-limit", **limits, **{k: row[k] for k in SWEEP_KEYS})
    at = row.get("at_1e10")
    values = {_name(k): fmt(v) for k, v in (at or {}).items()}
    return text + " " + prose("accuracy", "summary-at-1e10", **values) if at else text


# ---------------------------------------------------------------------------- the figure

FLOOR = 1e-17
"""Errors below this are drawn on it (a log axis has no 0)."""
CURVES = [(a, [f"{b}:{a}" for b in BACKENDS]) for a in ALGORITHMS] + [(p, [p]) for p in PINOCCHIO]
"""One curve per algorithm (the worst of its backends) and per Pinocchio routine."""
PIN_STYLE = {  # dashed: one hollow square, one dot, so that one never hides the other
    "pin-efpa": {"marker": "s", "mfc": "none", "ms": 7, "mew": 1.2},
    "pin-pv-osimr": {"marker": ".", "ms": 7},
}
TRUTH_SWITCH = "truth: double dense → wide (longdouble)"
"""Label of the line where a depth panel's truth changes precision."""
FAMILIES = ("Spherical", "FreeFlyer", "mixed")
PANELS = [("depth", family, "uniform", f"{family} chains, uniform masses") for family in FAMILIES]
PANELS += [("cond", "Spherical", "alternating", "Spherical n={n}, alternating mass ratio")]
"""The four panels: their cases' sweep, family and mass profile, and their title; the
alternating (heavy/light) profile: the geometric one loses nothing (see the tables)."""
AXES = {
    "depth": ("errors", "n", "links n", "rel. error vs truth"),
    "cond": ("errors_wide", "cond", "cond(M)", "rel. error vs wide truth"),
}
"""Per sweep: the errors drawn, x and the labels of both axes."""


def _draw(ax: Any, views: list[dict], key: str, x: str) -> None:
    """Every curve of the errors ``key`` against ``x``, the double dense truth's error against
    the wide one, the tolerance and, on the depth panels, where the truth turns wide."""
    from matplotlib.ticker import NullFormatter

    from pvosimr.plotting import COLORS, MARKERS, color

    views = sorted(views, key=lambda v: v[x])
    for label, paths in CURVES:
        pts = [(v[x], max(e, FLOOR)) for v in views if (e := worst(v[key], paths)) is not None]
        style = PIN_STYLE.get(label, {"marker": MARKERS.get(label, ".")})
        if pts:
            ls = "--" if label.startswith("pin-") else "-"
            ax.plot(*zip(*pts, strict=True), ls, color=color(label), label=label, **style)
    pts = [(v[x], max(as_float(v["truth_vs_wide"]), FLOOR)) for v in views]
    if pts := [(u, e) for u, e in pts if not math.isnan(e)]:
        truth = COLORS["ref:pin-cholesky"]
        ax.plot(*zip(*pts, strict=True), ":", color=truth, label="double dense truth vs wide")
    ax.axhline(TOL, color="r", lw=0.8)
    dense = [v[x] for v in views if v["reference"] == "dense"]
    wide = [v[x] for v in views if v["reference"] != "dense"]
    if key == "errors" and dense and wide and max(dense) < min(wide):
        ax.axvline(math.sqrt(max(dense) * min(wide)), color="0.45", ls="-.", lw=1.0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", alpha=0.3)


def plot(results: dict, path: Path) -> None:
    """:data:`PANELS` on log-log axes, one legend right of them with the truth's change of
    precision explained."""
    from matplotlib.lines import Line2D

    from pvosimr.plotting import pyplot

    views, plt = case_views(results), pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5), layout="constrained")
    for ax, (*which, title) in zip(axes.flat, PANELS, strict=True):
        vs = [v for v in views if [v["sweep"], v["family"], v["profile"]] == which]
        key, x, xlabel, ylabel = AXES[which[0]]
        _draw(ax, vs, key, x)
        ax.set(title=title.format(n=vs[0]["n"] if vs else "?"), xlabel=xlabel, ylabel=ylabel)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    handles.append(Line2D([], [], color="0.45", ls="-.", lw=1.0))
    legend = {"loc": "upper left", "bbox_to_anchor": (1.0, 0.95), "frameon": False}
    legend |= {"fontsize": 7, "title": "worst over backends", "title_fontsize": 7}
    fig.legend(handles, [*labels, TRUTH_SWITCH], **legend)
    note = textwrap.fill(prose("accuracy", "figure-note"), 62)
    fig.text(1.0, 0.35, note, fontsize=7, va="top", ha="left")
    fig.suptitle("Delassus accuracy (red: 1e-9)", fontsize=10)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def redraw(json_path: Path, png_path: Path) -> None:
    """``accuracy.png`` again from a written ``accuracy.json``, measuring nothing."""
    plot(json.loads(Path(json_path).read_text()), png_path)


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
