"""``timings.png`` and ``timings.pdf``: per-case bars (log time) over log-log scaling panels.

Colours come from the one palette, :func:`pvosimr.plotting.color`; the bar labels are bench's
long method names (:func:`~pvosimr.study.bench.methods.labels`), the curve labels the short
ones of :func:`short_label`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pvosimr import plotting

from .methods import labels
from .results import CaseResult, ScalingPoint, log_log_slope, microseconds
from .timing import SCALING_METHODS

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["PLOTTED", "plot", "short_label"]

PLOTTED = (
    "numpy:pv-osimr",
    "numpy:efpa",
    "numpy:pv-osim",
    "numpy:ltl-osim",
    "numpy:naive",
    "batch:pv-osimr",
    "codegen:pv-osimr",
    "pin-efpa",
    "pin-pv-osimr",
    "ref:pin-cholesky",
)
"""Methods drawn in the per-case bar chart (the rest are in the tables)."""

FAMILY_TITLES = {
    "chain_welded_every_k": "Fig. 4a chain: n = k² links, 6D weld every k links",
    "chain_welded_every_link": "Fig. 4b chain: 6D weld on every link",
}

BAR_SPAN = 0.84  # of the unit height of one case, shared by its bars


def short_label(method: str) -> str:
    """``numpy PV-OSIMr``, ``Pinocchio EFPA``: the curve labels of the scaling panels."""
    if method.startswith("pin-"):
        return f"Pinocchio {plotting.LABELS[method.removeprefix('pin-')]}"
    path, _, algorithm = method.partition(":")
    return f"{path} {plotting.LABELS[algorithm]}"


def _bar_y(case: int, slot: int, width: float) -> float:
    """Centre of the bar of method number ``slot`` in the group of case number ``case``."""
    return case - BAR_SPAN / 2 + width * (slot + 0.5)


def _draw_method(
    ax: Axes, cases: list[CaseResult], method: str, label: str, slot: int, width: float
) -> None:
    """One method's bars (median, IQR whiskers) across the cases, each labelled in µs."""
    ys, medians, below, above = [], [], [], []
    for i, c in enumerate(cases):
        if method not in c.timings:
            continue
        t = c.timings[method]
        ys.append(_bar_y(i, slot, width))
        medians.append(t.median * 1e6)
        below.append((t.median - t.quantile(0.25)) * 1e6)
        above.append((t.quantile(0.75) - t.median) * 1e6)
    ax.barh(
        ys,
        medians,
        height=width * 0.9,
        xerr=[below, above],
        color=plotting.color(method),
        label=label,
        error_kw={"elinewidth": 0.7, "capsize": 1.2},
    )
    for y, v, h in zip(ys, medians, above, strict=True):
        ax.text((v + h) * 1.04, y, microseconds(v * 1e-6), va="center", fontsize=6)


def _mark_refusals(ax: Axes, cases: list[CaseResult], methods: list[str], width: float) -> None:
    """Where a bar is missing because the method refused the case, say so at the left edge."""
    left = ax.get_xlim()[0]
    for i, c in enumerate(cases):
        for j, k in enumerate(methods):
            if c.refused(k):
                y = _bar_y(i, j, width)
                text = "  refused (singular G)"
                ax.text(left, y, text, va="center", fontsize=7, color=plotting.color(k))


def _draw_cases(ax: Axes, cases: list[CaseResult], names: dict[str, str]) -> None:
    """The top panel: one group of horizontal bars per case, log time."""
    methods = [k for k in PLOTTED if any(k in c.timings for c in cases)]
    width = BAR_SPAN / max(1, len(methods))
    for j, k in enumerate(methods):
        _draw_method(ax, cases, k, names[k], j, width)
    ax.set_xscale("log")
    _mark_refusals(ax, cases, methods, width)
    ax.set_yticks(range(len(cases)))
    ax.set_yticklabels([f"{c.name}\nnv = {c.nv}, m = {c.m}" for c in cases], fontsize=9)
    ax.invert_yaxis()
    ax.set_xlabel("wall time per call from Python (µs, log scale; bar = median, whisker = IQR)")
    ax.set_title("Delassus matrix G = J M⁻¹ Jᵀ: time per call, pvosimr and Pinocchio (same run)")
    ax.grid(axis="x", which="both", alpha=0.3)


def _draw_family(ax: Axes, family: str, points: list[ScalingPoint]) -> None:
    """One scaling panel: log-log time against links, one curve per method, with its slope."""
    from matplotlib.ticker import NullLocator

    for k in SCALING_METHODS:
        pts = [(p.n, p.medians_us[k]) for p in points if k in p.medians_us]
        if not pts:
            continue
        xs, ys = zip(*pts, strict=True)
        s = log_log_slope(points, k)
        label = short_label(k) + ("" if s is None else f", slope {s:.2f}")
        style = "--" if k.startswith("pin") else "-"
        ax.loglog(xs, ys, style, marker="o", ms=3.5, color=plotting.color(k), label=label)
    ax.set_title(FAMILY_TITLES.get(family, family), fontsize=10)
    ticks = sorted({p.n for p in points})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("number of links n (= dofs)")
    ax.set_ylabel("wall time per call (µs)")
    ax.grid(which="both", alpha=0.3)
    low, high = ax.get_ylim()
    ax.set_ylim(low, high * (high / low) ** 0.3)  # headroom for the legend
    ax.legend(fontsize=7, loc="upper left", ncols=2)


def _layout(plt, n_cases: int, n_families: int) -> tuple[Figure, Axes, list[Axes]]:
    """A figure with the bar panel on top (its height grows with the cases) and one scaling
    panel per family below it."""
    top = 1.2 + 0.75 * max(1, n_cases)  # inches for the bar panel
    bottom = 4.2 if n_families else 0.0
    fig = plt.figure(figsize=(14, top + bottom + 1.0), layout="constrained")
    grid = fig.add_gridspec(
        2 if n_families else 1,
        max(1, n_families),
        height_ratios=[top, bottom] if n_families else [1],
    )
    bars = fig.add_subplot(grid[0, :])
    return fig, bars, [fig.add_subplot(grid[1, col]) for col in range(n_families)]


def _save(fig: Figure, path_stem: Path) -> list[Path]:
    paths = [path_stem.with_suffix(suffix) for suffix in (".png", ".pdf")]
    for path in paths:
        fig.savefig(path, dpi=130)
    return paths


def plot(run_result: dict, path_stem: Path) -> list[Path]:
    """``timings.png`` and ``.pdf``: per-case bars (log time) and the log-log scaling panels."""
    plt = plotting.pyplot()
    cases: list[CaseResult] = run_result["cases"]
    points: list[ScalingPoint] = run_result["scaling"]
    families = list(dict.fromkeys(p.family for p in points))
    fig, bars, panels = _layout(plt, len(cases), len(families))
    _draw_cases(bars, cases, labels(run_result["batch_size"]))
    fig.legend(
        fontsize=8,
        loc="outside lower center",
        ncols=4,
        frameon=False,
        title="top panel" if families else None,  # the scaling panels have their own
        title_fontsize=8,
    )
    for ax, family in zip(panels, families, strict=True):
        _draw_family(ax, family, [p for p in points if p.family == family])
    try:
        return _save(fig, path_stem)
    finally:
        plt.close(fig)
