"""Matplotlib figures of operation counts, laid out like the paper's Figs. 3–6 (PNG and PDF)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pvosimr.plotting import COLORS, LABELS, MARKERS, pyplot

from .model import BRANCHES, Count, bars, read_csv, series, slope

__all__ = ["RATIO_LABEL", "redraw", "write_all"]

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


PAPER_ORDER = ("pv-osim", "efpa", "pv-osimr")
"""The paper's algorithms of the sweeps, drawn first; pvosimr's PV-OSIMh comes last."""
CURVES = (*PAPER_ORDER, "pv-osimh")
RATIO_LABEL = "ratio panel"
"""Label (``Axes.get_label``) of the panels that divide each curve by a reference curve."""


def _ratios(ax, rows: Sequence[Count], figure: str, panel: str, reference: str) -> None:
    """Each curve ÷ ``reference``'s (same x), zoomed on the band around 1 where the curves that
    coincide above separate; a curve that leaves the band upwards is named in the corner."""
    x_ref, y_ref = series(rows, figure, panel, reference)
    ratios = {}
    for algorithm in CURVES:
        x, y = series(rows, figure, panel, algorithm)
        if algorithm != reference and np.array_equal(x, x_ref):
            ratios[algorithm] = y / y_ref
            _curve(ax, x, ratios[algorithm], algorithm)
    ax.axhline(1.0, color=COLORS[reference], lw=1.0, ls="--")
    half = 1.3 * max(0.02, 1 - min((float(r.min()) for r in ratios.values()), default=1.0))
    ax.set_ylim(1 - half, 1 + half)
    above = [f"{LABELS[a]} (to ×{r.max():.2f})" for a, r in ratios.items() if r.max() > 1 + half]
    if above:
        ax.text(
            0.02,
            0.95,
            "above: " + ", ".join(above),
            transform=ax.transAxes,
            fontsize=6.5,
            va="top",
            bbox={"fc": "white", "ec": "none", "alpha": 0.8},
        )
    ax.set_ylabel(f"÷ {LABELS[reference]}")
    ax.set_label(RATIO_LABEL)
    ax.grid(alpha=0.3, which="both")


def fig3(rows: Sequence[Count], out: Path) -> list[Path]:
    plt = pyplot()
    fig, axes = plt.subplots(
        2,
        len(BRANCHES),
        figsize=(14, 4.6),
        sharex="col",
        height_ratios=(2.2, 1),
        constrained_layout=True,
    )
    for top, low, b, letter in zip(axes[0], axes[1], BRANCHES, "bcdef", strict=True):
        for algorithm in CURVES:
            _curve(top, *series(rows, "fig3", f"b={b}", algorithm), algorithm)
        top.set_title(f"({letter}) {b} branch{'es' if b > 1 else ''} per side")
        _thousands(top)
        top.grid(alpha=0.3)
        _ratios(low, rows, "fig3", f"b={b}", "pv-osimr")
        low.set_xlabel("Number of links in the stem")
    axes[0][0].set_ylabel("Number of operations")
    axes[0][0].legend(loc="upper left")
    fig.suptitle(
        "Fig. 3: stem with b branches of 7 links at each end, a 6D weld on each tip "
        "(below: each algorithm ÷ PV-OSIMr)"
    )
    return _save(fig, out, "fig3")


def fig4(rows: Sequence[Count], out: Path) -> list[Path]:
    plt = pyplot()
    fig, axes = plt.subplots(
        2, 2, figsize=(9, 5.4), sharex="col", height_ratios=(2.2, 1), constrained_layout=True
    )
    panels = (
        ("a", "k", "(a) chain of k² links, 6D welds on links k, 2k, …, k²", 2, "pv-osimr"),
        ("b", "n", "(b) chain of n links, a 6D weld on every link", None, "efpa"),
    )
    for top, low, (panel, xlabel, title, ref_power, divisor) in zip(
        axes[0], axes[1], panels, strict=True
    ):
        for algorithm in CURVES:
            x, y = series(rows, "fig4", panel, algorithm)
            _curve(top, x, y, algorithm, f"{LABELS[algorithm]} (slope {slope(x, y):.2f})")
        if ref_power:
            x, y = series(rows, "fig4", panel, "pv-osimr")
            ref = y[-1] * (x / x[-1]) ** ref_power
            top.plot(x, ref, "k--", lw=0.8, label=f"∝ {xlabel}²")
        top.set_xscale("log")
        top.set_yscale("log")
        top.set_title(title)
        top.grid(alpha=0.3, which="both")
        top.legend(loc="upper left")
        _ratios(low, rows, "fig4", panel, divisor)
        _integer_ticks(low, series(rows, "fig4", panel, divisor)[0])
        low.set_xlabel(xlabel)
    axes[0][0].set_ylabel("Number of operations")
    fig.suptitle(
        "Fig. 4: scaling (slopes fitted over the five largest sizes; "
        "below: ÷ PV-OSIMr in (a), ÷ EFPA in (b))"
    )
    return _save(fig, out, "fig4")


def _integer_ticks(ax, sizes: np.ndarray) -> None:
    """Plain integer labels at powers of two (and the largest size) on a log x axis."""
    from matplotlib.ticker import NullFormatter

    ticks = [int(v) for v in sizes if int(v) & (int(v) - 1) == 0] + [int(sizes[-1])]
    ax.set_xticks(sorted(set(ticks)), [str(t) for t in sorted(set(ticks))])
    ax.xaxis.set_minor_formatter(NullFormatter())


def _thousands(ax) -> None:
    """Tick labels of the y axis with thousands separators (12,000, not 12000)."""
    from matplotlib.ticker import StrMethodFormatter

    ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))


HATCH = "///"
"""Hatching of PV-OSIMh's bars: pvosimr's hybrid, not one of the paper's algorithms."""


def _bar_panel(ax, counts: dict[str, int], title: str) -> None:
    """The paper's algorithms, then PV-OSIMh hatched behind a dotted separator."""
    paper = [a for a in ("pv-osimr", "pv-osim", "efpa", "ltl-osim") if a in counts]
    algorithms = paper + [a for a in ("pv-osimh",) if a in counts]
    values = [counts[a] for a in algorithms]
    x = np.arange(len(algorithms), dtype=float)
    x[len(paper) :] += 0.4  # a gap before pvosimr's own algorithm
    drawn = ax.bar(x, values, color=[COLORS[a] for a in algorithms], width=0.65)
    for patch, algorithm in zip(drawn.patches, algorithms, strict=True):
        if algorithm not in paper:
            patch.set_hatch(HATCH)
            patch.set_edgecolor("white")
    if len(algorithms) > len(paper):
        ax.axvline(len(paper) - 0.3, color="0.4", ls=":", lw=1.0)
    for xi, v in zip(x, values, strict=True):
        ax.text(xi, v, f"{v:,}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(x, [LABELS[a] for a in algorithms], rotation=35, ha="right")
    ax.set_title(title)
    ax.set_ylim(0, max(values) * 1.15)
    _thousands(ax)
    ax.grid(alpha=0.3, axis="y")


def _bar_figure(rows, out: Path, figure: str, titles: dict[str, str], suptitle: str) -> list[Path]:
    plt = pyplot()
    fig, axes = plt.subplots(
        1,
        len(titles),
        figsize=(max(3.0 * len(titles), 4.5), 3.0),
        constrained_layout=True,
        squeeze=False,
    )
    for ax, (panel, title) in zip(axes[0], titles.items(), strict=True):
        _bar_panel(ax, bars(rows, figure, panel), title)
    axes[0][0].set_ylabel("Number of operations")
    fig.suptitle(f"{suptitle}\nhatched, right of the dotted line: PV-OSIMh (not in the paper)")
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


def redraw(csv_path: Path, out: Path) -> list[Path]:
    """Every figure again from a written ``opcounts.csv``, counting nothing (the CSV and
    ``claims.md`` are left as they are); returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    return write_all(read_csv(csv_path), out)
