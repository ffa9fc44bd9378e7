"""Charts of numbers: :func:`draw_delassus` (a heatmap of ``G`` with its constraint blocks),
:func:`draw_eigenvalues` (sorted magnitudes with the rank threshold), :func:`draw_bars` and
:func:`draw_hbars` (operation counts, timings)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..topology import Topology
from .style import color, drawing, new_axes

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.axes import Axes

__all__ = ["draw_bars", "draw_delassus", "draw_eigenvalues", "draw_hbars"]


def _symlog(G: np.ndarray, decades: float = 10.0):
    """Symmetric-log colour scale of ``G``: linear only under its smallest nonzero magnitude."""
    from matplotlib.colors import SymLogNorm

    magnitudes = np.abs(G[G != 0])
    vmax = float(magnitudes.max()) if magnitudes.size else 1.0
    floor = vmax * 10.0**-decades
    linthresh = max(float(magnitudes[magnitudes > floor].min(initial=vmax)), floor)
    return SymLogNorm(linthresh=linthresh, vmin=-vmax, vmax=vmax)


def _symlog_ticks(norm, per_side: int = 4) -> list[float]:
    """0 and at most ``per_side`` powers of ten on each side, from a decade above the linear
    band (whose label would sit on 0's) to the top."""
    low, high = np.ceil(np.log10(norm.linthresh)) + 1, np.floor(np.log10(norm.vmax))
    step = max(1, int(np.ceil((high - low + 1) / per_side)))
    powers = [10.0**k for k in np.arange(high, low - 1, -step)]
    return sorted([-p for p in powers] + [0.0] + powers)


@drawing
def draw_delassus(
    G: np.ndarray,
    topology: Topology,
    *,
    constraint_names: Sequence[str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Heatmap of ``G`` with its constraint blocks outlined and named on both axes.

    The colour scale is symmetric-logarithmic around 0 (``G`` mixes 1/kg linear entries with
    larger angular ones, and weak couplings between far contacts with strong ones): logarithmic
    down to the smallest nonzero entry (at most ten decades below the largest), linear under it.
    """
    G = np.asarray(G, dtype=float)
    if G.shape != (topology.m, topology.m):
        raise ValueError(f"G has shape {G.shape}, the topology has m = {topology.m}")
    ax = new_axes(ax, (7.5, 6.2), title)
    image = ax.imshow(G, cmap="RdBu_r", norm=_symlog(G), interpolation="nearest")
    colourbar = ax.figure.colorbar(image, ax=ax, shrink=0.85, ticks=_symlog_ticks(image.norm))
    colourbar.set_label("entry of G (SI units; symmetric-log colour scale)")
    # one block per constraint of the list: G's rows (a two-body constraint sweeps two EEs)
    dims = [s.dim for s in topology.signature]
    offsets = np.cumsum([0, *dims[:-1]])
    for start in offsets[1:]:
        ax.axhline(start - 0.5, color="black", lw=0.9)
        ax.axvline(start - 0.5, color="black", lw=0.9)
    centres = [o + d / 2 - 0.5 for o, d in zip(offsets, dims, strict=True)]
    names = constraint_names or [f"constraint {k}" for k in range(len(dims))]
    tick = [f"{k}: {n} ({d}D)" for k, (n, d) in enumerate(zip(names, dims, strict=True))]
    ax.set_xticks(centres, tick, rotation=90, fontsize=7)
    ax.set_yticks(centres, tick, fontsize=7)
    ax.set_xlabel("constraint block (column: force applied)")
    ax.set_ylabel("constraint block (row: acceleration produced)")
    return ax


@drawing
def draw_eigenvalues(
    eigenvalues: Mapping[str, np.ndarray],
    *,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Sorted ``|λ|`` of each symmetric matrix's eigenvalues on a log axis, largest first.

    Negative eigenvalues (round-off of a singular matrix) are hollow markers.  Each series gets
    a dotted line at its numerical rank threshold ``max|λ| · m · eps`` (numpy's ``matrix_rank``
    rule): eigenvalues below it are zeros in floating point.
    """
    ax = new_axes(ax, (7.5, 4.5), title)
    for k, (name, values) in enumerate(eigenvalues.items()):
        values = np.asarray(values, dtype=float)
        values = values[np.argsort(-np.abs(values), kind="stable")]
        index = np.arange(1, values.size + 1)
        colour = f"C{k}"
        mags = np.maximum(np.abs(values), np.finfo(float).tiny)
        tol = float(np.max(mags)) * values.size * np.finfo(float).eps
        rank = int(np.sum(mags > tol))
        ax.plot(index, mags, color=colour, lw=0.8, alpha=0.6)
        pos = values >= 0
        ax.scatter(index[pos], mags[pos], color=colour, label=f"{name} (rank {rank}/{values.size})")
        if (~pos).any():
            ax.scatter(
                index[~pos],
                mags[~pos],
                facecolors="none",
                edgecolors=colour,
                label=f"{name}: negative (round-off)",
            )
        ax.axhline(tol, color=colour, ls=":", lw=1.2, label=f"{name}: rank threshold")
    ax.set_yscale("log")
    ax.set_xlabel("eigenvalue index (sorted by magnitude)")
    ax.set_ylabel("|eigenvalue of G|")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return ax


@drawing
def draw_bars(
    values: Mapping[str, Mapping[str, float]],
    *,
    ylabel: str,
    log: bool = False,
    ax: Axes | None = None,
    title: str | None = None,
    annotate: bool = True,
    fmt: str = "{:.3g}",
    hatched: Sequence[str] = (),
) -> Axes:
    """Grouped bar chart: one group per key of ``values``, one bar per inner key (series).

    Series keep one colour across groups, in order of first appearance; a series missing from
    a group (e.g. a method that refused the case) leaves a gap.  ``annotate`` writes each value
    above its bar with the format string ``fmt`` (e.g. ``"{:,.0f}"`` for counts; a linear axis
    then has thousands separators too).  The series in ``hatched`` (e.g. PV-OSIMh, not one of
    the paper's algorithms) are hatched.
    """
    groups = list(values)
    series: list[str] = []
    for g in groups:
        series += [s for s in values[g] if s not in series]
    ax = new_axes(ax, (max(6.0, 1.2 + 0.5 * len(groups) * len(series)), 4.8), title)
    width = 0.8 / max(len(series), 1)
    for k, s in enumerate(series):
        xs = [
            j + (k - (len(series) - 1) / 2) * width for j, g in enumerate(groups) if s in values[g]
        ]
        ys = [float(values[g][s]) for g in groups if s in values[g]]
        bars = ax.bar(xs, ys, width=width * 0.95, color=color(s, k), label=s)
        if s in hatched:
            for patch in bars:
                patch.set(hatch="///", edgecolor="white")
        if annotate:
            ax.bar_label(
                bars, labels=[fmt.format(y) for y in ys], fontsize=7, rotation=90, padding=2
            )
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    elif "," in fmt:
        from matplotlib.ticker import StrMethodFormatter

        ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    ax.margins(y=0.25 if not log else 0.1)
    if log:
        low, high = ax.get_ylim()
        ax.set_ylim(low, high * 4)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8, ncols=min(len(series), 4))
    return ax


@drawing
def draw_hbars(
    values: Mapping[str, float],
    *,
    xlabel: str,
    category: Mapping[str, str] | None = None,
    colors: Mapping[str, str] | None = None,
    log: bool = False,
    ax: Axes | None = None,
    title: str | None = None,
    fmt: str = "{:.3g}",
) -> Axes:
    """Horizontal bar chart, one bar per key of ``values`` (first key on top).

    ``category`` maps a key to a group name (e.g. "numpy" or "C++"): bars of one group share a
    colour and the legend lists the groups.  ``colors`` gives each key its own colour instead
    (e.g. :func:`color` of the algorithm it times, so that it matches every other figure); the
    keys then name the bars and no legend is drawn.  Each bar is labelled with ``fmt``.
    """
    keys = list(values)
    groups = list(dict.fromkeys((category or {}).get(k, "") for k in keys))
    colour = {g: f"C{j}" for j, g in enumerate(groups)}
    ax = new_axes(ax, (8.0, 1.2 + 0.42 * len(keys)), title)
    for g in groups:
        idx = [j for j, k in enumerate(keys) if (category or {}).get(k, "") == g]
        fill = [(colors or {}).get(keys[j], colour[g]) for j in idx]
        bars = ax.barh(idx, [float(values[keys[j]]) for j in idx], color=fill, label=g or None)
        ax.bar_label(bars, labels=[fmt.format(values[keys[j]]) for j in idx], fontsize=8, padding=3)
    ax.set_yticks(range(len(keys)), keys)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    if log:
        ax.set_xscale("log")
        low, high = ax.get_xlim()
        ax.set_xlim(low, high * 3)
    else:
        ax.margins(x=0.15)
    ax.grid(True, axis="x", which="major", alpha=0.3)
    if any(groups) and colors is None:
        ax.legend(fontsize=8, loc="lower right")
    return ax
