"""``accuracy.png``: error against depth (one panel per chain kind) and against cond(M)."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path
from typing import Any

from pvosimr.plotting import COLORS, MARKERS, color, pyplot

from ..text import prose
from .cases import ALGORITHMS, BACKENDS, PINOCCHIO, TOL
from .tables import as_float, case_views, worst

#: Errors below this are drawn on it (a log axis has no 0).
FLOOR = 1e-17

#: One curve per algorithm (the worst of its backends) and per Pinocchio routine.
CURVES = [(a, [f"{b}:{a}" for b in BACKENDS]) for a in ALGORITHMS] + [(p, [p]) for p in PINOCCHIO]

#: Pinocchio's two routines (dashed): one hollow square, one dot, so that one never hides the other.
PIN_STYLE = {
    "pin-efpa": {"marker": "s", "mfc": "none", "ms": 7, "mew": 1.2},
    "pin-pv-osimr": {"marker": ".", "ms": 7},
}
TRUTH_SWITCH = "truth: double dense → wide (longdouble)"
"""Label of the line where a depth panel's truth changes precision."""


def _truth_switch(ax: Any, recs: list[dict], x: str) -> None:
    """A vertical line between the last point measured against the double dense truth and the
    first measured against the wide one (errors drop there: the truth got more precise)."""
    dense = [r[x] for r in recs if r["reference"] == "dense"]
    wide = [r[x] for r in recs if r["reference"] != "dense"]
    if dense and wide and max(dense) < min(wide):
        ax.axvline(math.sqrt(max(dense) * min(wide)), color="0.45", ls="-.", lw=1.0)


def _draw(ax: Any, recs: list[dict], key: str, x: str) -> None:
    """Every curve of ``recs``' errors ``key`` against ``x``, the double dense truth's error
    against the wide one, and the tolerance, on log-log axes."""
    from matplotlib.ticker import NullFormatter

    recs = sorted(recs, key=lambda r: r[x])
    for label, paths in CURVES:
        pts = [(r[x], worst(r[key], paths)) for r in recs]
        pts = [(u, max(v, FLOOR)) for u, v in pts if v is not None]
        if pts:
            style = "--" if label.startswith("pin-") else "-"
            marks = PIN_STYLE.get(label, {"marker": MARKERS.get(label, ".")})
            ax.plot(*zip(*pts, strict=True), style, color=color(label), label=label, **marks)
    pts = [(r[x], max(as_float(r["truth_vs_wide"]), FLOOR)) for r in recs]
    pts = [(u, v) for u, v in pts if not math.isnan(v)]
    if pts:
        truth = COLORS["ref:pin-cholesky"]
        ax.plot(*zip(*pts, strict=True), ":", color=truth, label="double dense truth vs wide")
    ax.axhline(TOL, color="r", lw=0.8)
    if key == "errors":
        _truth_switch(ax, recs, x)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", alpha=0.3)


def plot(results: dict, path: Path) -> None:
    """Error against depth (one panel per chain kind) and against cond(M), log-log."""
    views, plt = case_views(results), pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5), layout="constrained")
    for ax, family in zip(axes.flat[:3], ("Spherical", "FreeFlyer", "mixed"), strict=True):
        depth = [r for r in views if r["sweep"] == "depth" and r["family"] == family]
        _draw(ax, depth, "errors", "n")
        ax.set_title(f"{family} chains, uniform masses")
        ax.set_xlabel("links n")
        ax.set_ylabel("rel. error vs truth")
    ax = axes.flat[3]
    # the alternating (heavy/light) profile: the geometric one loses nothing (see the tables)
    hard = [r for r in views if r["sweep"] == "cond" and r["family"] == "Spherical"]
    hard = [r for r in hard if r["profile"] == "alternating"]
    _draw(ax, hard, "errors_wide", "cond")
    ax.set_title(f"Spherical n={hard[0]['n'] if hard else '?'}, alternating mass ratio")
    ax.set_xlabel("cond(M)")
    ax.set_ylabel("rel. error vs wide truth")
    _legend(fig, axes.flat[0])
    fig.suptitle("Delassus accuracy (red: 1e-9)", fontsize=10)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _legend(fig: Any, ax: Any) -> None:
    """One legend right of the panels, with the truth's change of precision explained."""
    from matplotlib.lines import Line2D

    handles, labels = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], color="0.45", ls="-.", lw=1.0))
    labels.append(TRUTH_SWITCH)
    fig.legend(
        handles,
        labels,
        loc="upper left",
        bbox_to_anchor=(1.0, 0.95),
        fontsize=7,
        title="worst over backends",
        title_fontsize=7,
        frameon=False,
    )
    note = textwrap.fill(prose("accuracy", "figure-note"), 62)
    fig.text(1.0, 0.35, note, fontsize=7, va="top", ha="left")


def redraw(json_path: Path, png_path: Path) -> None:
    """``accuracy.png`` again from a written ``accuracy.json``, measuring nothing."""
    plot(json.loads(Path(json_path).read_text()), png_path)
