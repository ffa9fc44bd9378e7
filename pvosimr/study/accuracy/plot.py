"""``accuracy.png``: error against depth (one panel per chain kind) and against cond(M)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pvosimr.plotting import COLORS, MARKERS, color, pyplot

from .cases import ALGORITHMS, BACKENDS, PINOCCHIO, TOL
from .tables import as_float, worst

__all__ = ["plot"]

#: Errors below this are drawn on it (a log axis has no 0).
FLOOR = 1e-17

#: One curve per algorithm (the worst of its backends) and per Pinocchio routine.
CURVES = [(a, [f"{b}:{a}" for b in BACKENDS]) for a in ALGORITHMS] + [(p, [p]) for p in PINOCCHIO]


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
            marker = MARKERS.get(label, ".")
            ax.plot(*zip(*pts, strict=True), style, marker=marker, color=color(label), label=label)
    pts = [(r[x], max(as_float(r["truth_vs_wide"]), FLOOR)) for r in recs]
    pts = [(u, v) for u, v in pts if not math.isnan(v)]
    if pts:
        truth = COLORS["ref:pin-cholesky"]
        ax.plot(*zip(*pts, strict=True), ":", color=truth, label="double dense truth vs wide")
    ax.axhline(TOL, color="r", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", alpha=0.3)


def plot(results: dict, path: Path) -> None:
    """Error against depth (one panel per chain kind) and against cond(M), log-log."""
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    for ax, family in zip(axes.flat[:3], ("Spherical", "FreeFlyer", "mixed"), strict=True):
        _draw(ax, [r for r in results["depth"] if r["family"] == family], "errors", "n")
        ax.set_title(f"{family} chains, uniform masses")
        ax.set_xlabel("links n")
        ax.set_ylabel("rel. error vs truth")
    ax = axes.flat[3]
    # the alternating (heavy/light) profile: the geometric one loses nothing (see the tables)
    hard = [
        r for r in results["cond"] if r["family"] == "Spherical" and r["profile"] == "alternating"
    ]
    _draw(ax, hard, "errors_wide", "cond")
    ax.set_title(f"Spherical n={hard[0]['n'] if hard else '?'}, alternating mass ratio")
    ax.set_xlabel("cond(M)")
    ax.set_ylabel("rel. error vs wide truth")
    axes.flat[0].legend(fontsize=7, title="worst over backends", title_fontsize=7)
    fig.suptitle("Delassus accuracy (red: 1e-9)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
