"""``timings.png|pdf`` and ``crossover.png|pdf``, drawn from a run or its ``timings.json``.

``timings``: two bar panels per case (pvosimr's numpy paths; the generated C and Pinocchio's
C++), then one log-log panel per Fig. 4 chain and the large sweep's panels (time per
configuration; memory, with the compile time on a second axis when it was measured).
``crossover``: one log-log panel per mechanism, with where each recursive route starts to beat
the dense one.  Every curve panel is a list of :class:`Series` drawn by :func:`_panel`; colours
come from :func:`pvosimr.plotting.color` (:data:`BATCH_COLORS` for the batched generated calls).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from pvosimr import plotting

from .crossover import CROSSOVER_LABELS, DENSE, FAMILIES, RECURSIVE, crossover
from .methods import THREADS, Case, batch_name, labels
from .mujoco import MujocoResult
from .scaling import LARGE_METHODS, SCALING_BATCH, SCALING_METHODS, Point, by_family, log_log_slope
from .text import microseconds

BATCH_COLORS = {1: "#17becf", 2: "#6a3d9a"}
"""Colours of the batched generated calls by thread count (apart from the single call's pink)."""
NUMPY_PATHS = ("numpy:pv-osimr", "numpy:pv-osimh", "numpy:pv-osim", "numpy:efpa",
               "numpy:ltl-osim", "numpy:naive", "batch:pv-osimr")  # fmt: skip
"""The methods of the left bar panel: pvosimr's numpy paths."""
FAMILY_TITLES = {
    "chain_welded_every_k": "Fig. 4a chain: n = k² links, 6D weld every k links",
    "chain_welded_every_link": "Fig. 4b chain: 6D weld on every link",
}
DENSE_STYLES = {"dense:pin+cholesky": ("#000000", "-"), "dense:cholesky": ("#525252", "--"),
                "dense:lu": ("#969696", ":")}  # fmt: skip
"""Colour and line style of the dense routes (black: everything; greys: linear algebra only)."""
CROSSOVER_MARKS = {"dense:pin+cholesky": (":", "everything"), "dense:lu": ("--", "LU only")}
"""The dense routes against which each recursive route's crossover is marked, and the mark."""
BAR_SPAN = 0.86  # of the unit height of one case, shared by its bars


@dataclass(frozen=True)
class Series:
    """One curve of a log-log panel: ``(n, value)`` points, colour, line style and label."""

    label: str
    color: str
    style: str
    points: list[tuple[int, float]]


def method_color(method: str) -> str:
    """The palette colour of ``method``; :data:`BATCH_COLORS` for a batched generated call."""
    if method.startswith("codegen-batch:"):
        return BATCH_COLORS.get(int(method.rsplit(":t", 1)[1]), "#8e0152")
    return plotting.color(method)


def short_label(method: str) -> str:
    """``numpy PV-OSIMr``, ``Pinocchio EFPA``: the curve labels of the scaling panels."""
    if method.startswith("codegen-batch:"):
        _, B, t = method.split(":")
        return f"codegen batch PV-OSIMr ({B[1:]} configs, {t[1:]} thr.)"
    if method.startswith("pin-"):
        return f"Pinocchio {plotting.LABELS[method.removeprefix('pin-')]}"
    path, _, algorithm = method.partition(":")
    return f"{path} {plotting.LABELS[algorithm]}"


# ------------------------------------------------------------------------------------ bars


def _bars(ax, cases: list[Case], methods: list[str], names: dict[str, str], title: str) -> None:
    """One bar panel: a group of horizontal bars per case (median, IQR whiskers, labelled in
    µs), one per method, log time; a refusal said at the left edge; its legend below it."""
    if not cases:
        ax.set_axis_off()
        ax.text(0.5, 0.5, f"{title}: no robot case in this run", ha="center", fontsize=9)
        return
    width = BAR_SPAN / max(1, len(methods))
    y = {(i, j): i - BAR_SPAN / 2 + width * (j + 0.5) for i in range(len(cases)) for j in
         range(len(methods))}  # fmt: skip
    for j, k in enumerate(methods):
        timed = [(i, c.timings[k]) for i, c in enumerate(cases) if k in c.timings]
        ys = [y[i, j] for i, _ in timed]
        medians = [t.median * 1e6 for _, t in timed]
        below = [(t.median - t.quantile(0.25)) * 1e6 for _, t in timed]
        above = [(t.quantile(0.75) - t.median) * 1e6 for _, t in timed]
        ax.barh(ys, medians, height=width * 0.9, xerr=[below, above], color=method_color(k),
                label=names[k], error_kw={"elinewidth": 0.7, "capsize": 1.2})  # fmt: skip
        for yy, v, h in zip(ys, medians, above, strict=True):
            ax.text((v + h) * 1.04, yy, microseconds(v * 1e-6), va="center", fontsize=6)
    ax.set_xscale("log")
    low, high = ax.get_xlim()
    ax.set_xlim(low, high * 2.5)  # room for the value labels
    for (i, j), yy in y.items():
        if cases[i].refused(methods[j]):
            ax.text(low, yy, "  refused (singular G)", va="center", fontsize=7,
                    color=method_color(methods[j]))  # fmt: skip
    ax.set_yticks(range(len(cases)))
    ax.set_yticklabels([f"{c.name}\nnv = {c.nv}, m = {c.m}" for c in cases], fontsize=8)
    ax.set_ylim(len(cases) - 0.5, -0.5)
    ax.set_xlabel("µs per call (per configuration when batched), log; bar = median, whisker = IQR")
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.09), ncols=2, frameon=False)


# ---------------------------------------------------------------------------- curve panels


def _headroom(ax, share: float) -> None:
    """Raise the top of a log y axis so the legend sits above the curves."""
    low, high = ax.get_ylim()
    ax.set_ylim(low, high * (high / low) ** share)


def _links_axis(ax, points: list[Point]) -> None:
    from matplotlib.ticker import NullLocator

    ticks = sorted({p.n for p in points})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("number of links n (= dofs)")
    ax.grid(which="both", alpha=0.3)


def _panel(ax, series: list[Series], points: list[Point], title: str, ylabel: str, size=10):
    """Log-log curves against the links of ``points``, titled and labelled."""
    for s in series:
        xs, ys = zip(*s.points, strict=True)
        ax.loglog(xs, ys, s.style, marker="o", ms=3.5, color=s.color, label=s.label)
    ax.set_title(title, fontsize=size)
    _links_axis(ax, points)
    ax.set_ylabel(ylabel)


def _timed(points: list[Point], methods, color) -> list[Series]:
    """A :class:`Series` per method timed on ``points`` (label with its log-log slope);
    Pinocchio's dashed."""
    out = []
    for k in methods:
        pts = [(p.n, p.medians_us[k]) for p in points if k in p.medians_us]
        s = log_log_slope(points, k)
        text = short_label(k) + ("" if s is None else f", slope {s:.2f}")
        out += [Series(text, color(k), "--" if k.startswith("pin") else "-", pts)] if pts else []
    return out


def _memory(points: list[Point]) -> list[Series]:
    """What the large sweep measured in bytes (0 bytes has no place on a log axis)."""

    def read(method: str, key: str, per: str | None = None):
        def value(p: Point) -> float | None:
            m = p.memory.get(method, {})
            return m[key] / m[per] if per and key in m else m.get(key)

        return value

    green, pink = plotting.color("batch:pv-osimr"), plotting.color("codegen:pv-osimr")
    curves = (
        (f"numpy batch: peak traced ÷ B (B = {SCALING_BATCH})", green, "-",
         read("batch:pv-osimr", "peak_bytes", "B")),
        ("numpy single call: peak traced", green, ":", read("numpy:pv-osimr", "peak_bytes")),
        ("generated: shared library", pink, "-", read("codegen:pv-osimr", "library_bytes")),
        ("generated: work arrays per thread", pink, ":", read("codegen:pv-osimr", "work_bytes")),
    )  # fmt: skip
    series = [Series(name, c, s, [(p.n, v(p)) for p in points if v(p)]) for name, c, s, v in curves]
    return [s for s in series if s.points]


def _draw_memory(ax, points: list[Point]) -> None:
    """Bytes of the batched and generated paths against n, compile time on a second axis."""
    builds = [(p.n, p.memory.get("codegen:pv-osimr", {})) for p in points]
    timed = [(n, g["compile_seconds"], g["flags"]) for n, g in builds if g.get("compile_seconds")]
    title = "Fig. 4a chain: memory" + (", and compile time (right axis)" if timed else "")
    _panel(ax, _memory(points), points, title, "bytes")
    _headroom(ax, 0.6)
    handles, names = ax.get_legend_handles_labels()
    if timed:
        right = ax.twinx()
        xs, ys, _ = zip(*timed, strict=True)
        handles += right.loglog(xs, ys, "--", marker="s", ms=3.5, color="#525252")
        for x, y, f in timed:
            right.annotate(" ".join(f), (x, y), fontsize=6, xytext=(3, -9),
                           textcoords="offset points")  # fmt: skip
        right.set_ylabel("compile time of the generated G (s)")
        _headroom(right, 0.6)
        _links_axis(ax, points)  # the twin axis reset the shared x ticks
        names.append("generated: compile time (right axis; flags at each point)")
    ax.legend(handles, names, fontsize=7, loc="upper left")


def _layout(plt, n_cases: int, n_families: int, bottom: int):
    """Two bar panels on top (their height grows with the cases), a row of one scaling panel
    per family, and a row of ``bottom`` large-sweep panels; a row without panels is left out."""
    rows = [1.6 + 1.05 * max(1, n_cases)] + [4.2] * (bool(n_families) + bool(bottom))
    columns = 2 * max(1, n_families, bottom)
    fig = plt.figure(figsize=(15, sum(rows) + 0.6), layout="constrained")
    grid = fig.add_gridspec(len(rows), columns, height_ratios=rows)
    numpy_ax = fig.add_subplot(grid[0, : columns // 2])
    bars = [numpy_ax, fig.add_subplot(grid[0, columns // 2 :], sharey=numpy_ax)]

    def row(r: int, count: int) -> list:
        width = columns // count if count else 0
        return [fig.add_subplot(grid[r, c * width : (c + 1) * width]) for c in range(count)]

    return fig, bars, row(1, n_families), row(len(rows) - 1, bottom)


def _saved(plt, fig, path_stem: Path) -> list[Path]:
    paths = [path_stem.with_suffix(suffix) for suffix in (".png", ".pdf")]
    try:
        for path in paths:
            fig.savefig(path, dpi=130, bbox_inches="tight")  # the legends below the bars
        return paths
    finally:
        plt.close(fig)


def plot(run_result: dict, path_stem: Path) -> list[Path]:
    """``timings.png`` and ``.pdf``: per-case bars (log time) of the numpy paths and of the
    compiled and C++ paths, the log-log scaling panels below."""
    plt = plotting.pyplot()
    cases: list[Case] = run_result["cases"]
    families = by_family(run_result["scaling"])
    large: list[Point] = run_result.get("large", [])
    bottom = bool(large) + bool(_memory(large))
    fig, bars, panels, sweep = _layout(plt, len(cases), len(families), bottom)
    batch_size = run_result["batch_size"]
    batched = (batch_name(batch_size, t) for t in THREADS)
    compiled = ("codegen:pv-osimr", *batched, "pin-efpa", "pin-pv-osimr", "ref:pin-cholesky")
    groups = {"pvosimr's numpy paths": NUMPY_PATHS, "generated C and Pinocchio's C++": compiled}
    for ax, (title, group) in zip(bars, groups.items(), strict=True):
        methods = [k for k in group if any(k in c.timings or c.refused(k) for c in cases)]
        _bars(ax, cases, methods, labels(batch_size), f"G = J M⁻¹ Jᵀ, time per call: {title}")
    bars[1].tick_params(axis="y", labelleft=False)
    for ax, (family, mine) in zip(panels, families.items(), strict=True):
        series = _timed(mine, SCALING_METHODS, plotting.color)
        _panel(ax, series, mine, FAMILY_TITLES.get(family, family), "wall time per call (µs)")
        _headroom(ax, 0.3)
        ax.legend(fontsize=7, loc="upper left", ncols=2)
    if large:
        title = f"Fig. 4a chain: per configuration (batched: B = {SCALING_BATCH})"
        series = _timed(large, LARGE_METHODS, method_color)
        _panel(sweep[0], series, large, title, "wall time per configuration (µs)")
        _headroom(sweep[0], 0.45)
        sweep[0].legend(fontsize=7, loc="upper left", ncols=1)
    if len(sweep) > 1:
        _draw_memory(sweep[1], large)
    return _saved(plt, fig, path_stem)


def _crossover_color(method: str) -> tuple[str, str]:
    """Colour and style of a route: the dense ones' own, dash-dot for Pinocchio's call."""
    return DENSE_STYLES.get(method) or (method_color(method), "-." if method == "pin-efpa" else "-")


def _draw_crossover(ax, family: str, points: list[Point]) -> None:
    """One mechanism: every route against n, and where each recursive route starts to beat
    the dense routes of :data:`CROSSOVER_MARKS`."""
    routes = (*DENSE, *RECURSIVE)
    series = [
        Series(CROSSOVER_LABELS[k], *_crossover_color(k), pts)
        for k in routes
        if (pts := [(p.n, p.medians_us[k]) for p in points if k in p.medians_us])
    ]
    title = FAMILIES.get(family, family)
    _panel(ax, series, points, title, "wall time per configuration (µs)", 9)
    height, (low, high) = 0.03, ax.get_xlim()
    for k in RECURSIVE:
        for dense, (style, what) in CROSSOVER_MARKS.items():
            found = crossover(points, k, dense)
            if found.kind != "between":
                continue
            colour = _crossover_color(k)[0]
            ax.axvline(found.n, color=colour, lw=0.9, ls=style)
            left = math.log(found.n / low) < 0.5 * math.log(high / low)  # text on the wider side
            ax.annotate(
                f"beats dense ({what}) from n ≈ {found.n:.0f}",
                (found.n, height),
                xycoords=("data", "axes fraction"),
                xytext=(3 if left else -3, 0),
                textcoords="offset points",
                ha="left" if left else "right",
                fontsize=7,
                color=colour,
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.75, "pad": 0.5},
            )
            height += 0.06


def plot_crossover(points: list[Point], path_stem: Path) -> list[Path]:
    """``crossover.png`` and ``.pdf``: a log-log panel per mechanism of the crossover sweep."""
    plt = plotting.pyplot()
    families = by_family(points) or {"(none)": []}
    fig, axes = plt.subplots(1, len(families), figsize=(5.2 * len(families), 4.6),
                             layout="constrained", squeeze=False)  # fmt: skip
    for ax, (family, mine) in zip(axes[0], families.items(), strict=True):
        _draw_crossover(ax, family, mine)
    handles, names = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, names, loc="outside lower center", ncols=3, fontsize=8, frameon=False)
    fig.suptitle(
        "G = J M⁻¹ Jᵀ per configuration: recursive code against the dense route "
        "(vertical lines: where a recursive route starts to beat a dense one for good)",
        fontsize=10,
    )
    return _saved(plt, fig, path_stem)


def load(path: Path) -> dict:
    """A written ``timings.json`` as the run result that :func:`plot` draws and
    :func:`.report.markdown` writes."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {
        **data,
        "cases": [Case.from_json(c) for c in data["cases"]],
        "mujoco": [MujocoResult.from_json(r) for r in data.get("mujoco", [])],
        **{k: [Point(**p) for p in data.get(k, [])] for k in ("scaling", "large", "crossover")},
    }


def redraw(json_path: Path, path_stem: Path) -> list[Path]:
    """``timings.png`` and ``.pdf`` again from a written ``timings.json``, measuring nothing."""
    return plot(load(json_path), path_stem)
