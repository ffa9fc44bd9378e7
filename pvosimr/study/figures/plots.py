"""Matplotlib figures of operation counts, laid out like the paper's Figs. 3–6 (PNG and PDF)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pvosimr.plotting import COLORS, LABELS, MARKERS, pyplot

from .model import BRANCHES, Count, bars, series, slope

__all__ = ["write_all"]

FIG6_TITLES = {
    "a": "(a) Shadow hand, 5×3D tips",
    "b": "(b) hand on Atlas",
    "c": "(c) two hands on Atlas",
    "d": "(d) two hands + 6D feet",
}
FIG5_TITLES = {"a": "(a) 6D weld per foot", "b": "(b) 4×3D contacts per foot"}


def _save(fig, out: Path, name: str) -> list[Path]:
    paths = [out / f"{name}.png", out / f"{name}.pdf"]
    fig.savefig(paths[0], dpi=200, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight")
    return paths


def _curve(ax, x, y, algorithm: str, label: str | None = None) -> None:
    ax.plot(
        x,
        y,
        marker=MARKERS[algorithm],
        ms=3,
        lw=1.2,
        color=COLORS[algorithm],
        label=label or LABELS[algorithm],
    )


def fig3(rows: Sequence[Count], out: Path) -> list[Path]:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(BRANCHES), figsize=(14, 3.0), constrained_layout=True)
    for ax, b, letter in zip(axes, BRANCHES, "bcdef", strict=True):
        for algorithm in ("pv-osim", "efpa", "pv-osimr", "pv-osimh"):
            _curve(ax, *series(rows, "fig3", f"b={b}", algorithm), algorithm)
        ax.set_title(f"({letter}) {b} branch{'es' if b > 1 else ''} per side")
        ax.set_xlabel("Number of links in the stem")
        ax.ticklabel_format(axis="y", style="sci", scilimits=(3, 3))
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("Number of operations")
    axes[0].legend(loc="upper left")
    fig.suptitle("Fig. 3: stem with b branches of 7 links at each end, a 6D weld on each tip")
    return _save(fig, out, "fig3")


def fig4(rows: Sequence[Count], out: Path) -> list[Path]:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), constrained_layout=True)
    panels = (
        ("a", "k", "(a) chain of k² links, 6D welds on links k, 2k, …, k²", 2),
        ("b", "n", "(b) chain of n links, a 6D weld on every link", None),
    )
    for ax, (panel, xlabel, title, ref_power) in zip(axes, panels, strict=True):
        for algorithm in ("pv-osim", "efpa", "pv-osimr", "pv-osimh"):
            x, y = series(rows, "fig4", panel, algorithm)
            _curve(ax, x, y, algorithm, f"{LABELS[algorithm]} (slope {slope(x, y):.2f})")
        if ref_power:
            x, y = series(rows, "fig4", panel, "pv-osimr")
            ref = y[-1] * (x / x[-1]) ** ref_power
            ax.plot(x, ref, "k--", lw=0.8, label=f"∝ {xlabel}²")
        ax.set_xscale("log")
        ax.set_yscale("log")
        _integer_ticks(ax, series(rows, "fig4", panel, "pv-osimr")[0])
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        ax.grid(alpha=0.3, which="both")
        ax.legend(loc="upper left")
    axes[0].set_ylabel("Number of operations")
    fig.suptitle("Fig. 4: scaling (slopes fitted over the five largest sizes)")
    return _save(fig, out, "fig4")


def _integer_ticks(ax, sizes: np.ndarray) -> None:
    """Plain integer labels at powers of two (and the largest size) on a log x axis."""
    from matplotlib.ticker import NullFormatter

    ticks = [int(v) for v in sizes if int(v) & (int(v) - 1) == 0] + [int(sizes[-1])]
    ax.set_xticks(sorted(set(ticks)), [str(t) for t in sorted(set(ticks))])
    ax.xaxis.set_minor_formatter(NullFormatter())


def _bar_panel(ax, counts: dict[str, int], title: str) -> None:
    algorithms = [a for a in ("pv-osimr", "pv-osim", "efpa", "ltl-osim", "pv-osimh") if a in counts]
    values = [counts[a] for a in algorithms]
    x = np.arange(len(algorithms))
    ax.bar(x, values, color=[COLORS[a] for a in algorithms], width=0.65)
    for xi, v in zip(x, values, strict=True):
        ax.text(xi, v, f"{v:,}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(x, [LABELS[a] for a in algorithms], rotation=20)
    ax.set_title(title)
    ax.set_ylim(0, max(values) * 1.15)
    ax.grid(alpha=0.3, axis="y")


def _bar_figure(rows, out: Path, figure: str, titles: dict[str, str], suptitle: str) -> list[Path]:
    plt = pyplot()
    fig, axes = plt.subplots(
        1, len(titles), figsize=(3.0 * len(titles), 3.0), constrained_layout=True, squeeze=False
    )
    for ax, (panel, title) in zip(axes[0], titles.items(), strict=True):
        _bar_panel(ax, bars(rows, figure, panel), title)
    axes[0][0].set_ylabel("Number of operations")
    fig.suptitle(suptitle)
    return _save(fig, out, figure)


def write_all(rows: Sequence[Count], out: Path) -> list[Path]:
    """Every figure as PNG and PDF in ``out``; returns the paths written."""
    paths = fig3(rows, out) + fig4(rows, out)
    paths += _bar_figure(rows, out, "fig5", FIG5_TITLES, "Fig. 5: Atlas (36 DoF) standing")
    paths += _bar_figure(
        rows, out, "fig6", FIG6_TITLES, "Fig. 6: Shadow hand (24 DoF), alone and on Atlas"
    )
    paths += _bar_figure(
        rows, out, "caveat", {"": "Atlas, 6D welds on both hands and feet"}, "Sec. IV-E caveat"
    )
    return paths
