"""``timings.png`` and ``timings.pdf``: per-case bars (log time) over log-log scaling panels.

The bars come in two panels, pvosimr's numpy paths (:data:`NUMPY_PATHS`) and the generated C
and Pinocchio's C++ (:func:`compiled_paths`), each on its own time axis.  Below them: one
panel per Fig. 4 chain of the single-call sweep, then the large sweep's panels (time per
configuration of the batched and generated paths against n, and their memory, with the
compile time on a second axis when it was measured).  A row with nothing to draw is left out.
Colours come from the one palette, :func:`pvosimr.plotting.color` (the batched generated
calls, which it does not name, take :data:`BATCH_COLORS`); the bar labels are bench's long
method names (:func:`~benchmarks.methods.labels`), the curve labels the short ones
of :func:`short_label`.  :func:`redraw` draws them again from a written ``timings.json``.

``crossover.png`` and ``crossover.pdf`` (:func:`plot_crossover`): one log-log panel per
mechanism of the crossover sweep, time per configuration of every route against n, with the
size where each recursive route starts to beat the dense route (everything) marked.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

from pvosimr import plotting

from .crossover import CROSSOVER_LABELS, DENSE, FAMILIES, RECURSIVE, crossover
from .mujoco import MujocoResult
from .methods import THREADS, Case, batch_name, labels
from .scaling import LARGE_METHODS, SCALING_BATCH, SCALING_METHODS, Point, log_log_slope
from .text import microseconds

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

BATCH_COLORS = {1: "#17becf", 2: "#6a3d9a"}
"""Colours of the batched generated calls by thread count (apart from the single call's pink)."""

NUMPY_PATHS = (
    "numpy:pv-osimr",
    "numpy:pv-osimh",
    "numpy:pv-osim",
    "numpy:efpa",
    "numpy:ltl-osim",
    "numpy:naive",
    "batch:pv-osimr",
)
"""The methods of the left bar panel: pvosimr's numpy paths."""


def compiled_paths(batch_size: int) -> tuple[str, ...]:
    """The methods of the right bar panel: generated C and Pinocchio's C++."""
    batched = tuple(batch_name(batch_size, t) for t in THREADS)
    return ("codegen:pv-osimr", *batched, "pin-efpa", "pin-pv-osimr", "ref:pin-cholesky")


def method_color(method: str) -> str:
    """The palette colour of ``method``; :data:`BATCH_COLORS` for a batched generated call."""
    if method.startswith("codegen-batch:"):
        return BATCH_COLORS.get(int(method.rsplit(":t", 1)[1]), "#8e0152")
    return plotting.color(method)


FAMILY_TITLES = {
    "chain_welded_every_k": "Fig. 4a chain: n = k² links, 6D weld every k links",
    "chain_welded_every_link": "Fig. 4b chain: 6D weld on every link",
}

BAR_SPAN = 0.86  # of the unit height of one case, shared by its bars


def short_label(method: str) -> str:
    """``numpy PV-OSIMr``, ``Pinocchio EFPA``: the curve labels of the scaling panels."""
    if method.startswith("codegen-batch:"):
        _, B, t = method.split(":")
        return f"codegen batch PV-OSIMr ({B[1:]} configs, {t[1:]} thr.)"
    if method.startswith("pin-"):
        return f"Pinocchio {plotting.LABELS[method.removeprefix('pin-')]}"
    path, _, algorithm = method.partition(":")
    return f"{path} {plotting.LABELS[algorithm]}"


def _bar_y(case: int, slot: int, width: float) -> float:
    """Centre of the bar of method number ``slot`` in the group of case number ``case``."""
    return case - BAR_SPAN / 2 + width * (slot + 0.5)


def _draw_method(
    ax: Axes, cases: list[Case], method: str, label: str, slot: int, width: float
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
        color=method_color(method),
        label=label,
        error_kw={"elinewidth": 0.7, "capsize": 1.2},
    )
    for y, v, h in zip(ys, medians, above, strict=True):
        ax.text((v + h) * 1.04, y, microseconds(v * 1e-6), va="center", fontsize=6)


def _mark_refusals(ax: Axes, cases: list[Case], methods: list[str], width: float) -> None:
    """Where a bar is missing because the method refused the case, say so at the left edge."""
    left = ax.get_xlim()[0]
    for i, c in enumerate(cases):
        for j, k in enumerate(methods):
            if c.refused(k):
                y = _bar_y(i, j, width)
                text = "  refused (singular G)"
                ax.text(left, y, text, va="center", fontsize=7, color=method_color(k))


def _draw_cases(
    ax: Axes, cases: list[Case], methods: list[str], names: dict[str, str], title: str
) -> None:
    """One bar panel: a group of horizontal bars per case, one per method of ``methods``, log
    time; its legend below it (a note instead on a run without robot cases)."""
    if not cases:
        ax.set_axis_off()
        ax.text(0.5, 0.5, f"{title}: no robot case in this run", ha="center", fontsize=9)
        return
    width = BAR_SPAN / max(1, len(methods))
    for j, k in enumerate(methods):
        _draw_method(ax, cases, k, names[k], j, width)
    ax.set_xscale("log")
    low, high = ax.get_xlim()
    ax.set_xlim(low, high * 2.5)  # room for the value labels
    _mark_refusals(ax, cases, methods, width)
    ax.set_yticks(range(len(cases)))
    ax.set_yticklabels([f"{c.name}\nnv = {c.nv}, m = {c.m}" for c in cases], fontsize=8)
    ax.set_ylim(len(cases) - 0.5, -0.5)
    ax.set_xlabel("µs per call (per configuration when batched), log; bar = median, whisker = IQR")
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.09), ncols=2, frameon=False)


def _curves(ax: Axes, points: list[Point], methods, color) -> None:
    """Median time against n (log-log) of each of ``methods`` measured, labelled with its
    log-log slope; Pinocchio's dashed."""
    for k in methods:
        pts = [(p.n, p.medians_us[k]) for p in points if k in p.medians_us]
        if not pts:
            continue
        xs, ys = zip(*pts, strict=True)
        s = log_log_slope(points, k)
        label = short_label(k) + ("" if s is None else f", slope {s:.2f}")
        style = "--" if k.startswith("pin") else "-"
        ax.loglog(xs, ys, style, marker="o", ms=3.5, color=color(k), label=label)


def _draw_times(ax: Axes, points: list[Point], methods, color, title: str, per: str) -> None:
    """One sweep's panel: log-log time against links, one curve per method, with its slope."""
    _curves(ax, points, methods, color)
    ax.set_title(title, fontsize=10)
    _links_axis(ax, points)
    ax.set_ylabel(f"wall time per {per} (µs)")
    _headroom(ax, 0.3 if per == "call" else 0.45)
    ax.legend(fontsize=7, loc="upper left", ncols=2 if per == "call" else 1)


def _headroom(ax: Axes, share: float = 0.45) -> None:
    """Raise the top of a log y axis so the legend sits above the curves."""
    low, high = ax.get_ylim()
    ax.set_ylim(low, high * (high / low) ** share)


def _links_axis(ax: Axes, points: list[Point]) -> None:
    from matplotlib.ticker import NullLocator

    ticks = sorted({p.n for p in points})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("number of links n (= dofs)")
    ax.grid(which="both", alpha=0.3)


def _memory_curves(points: list[Point]) -> dict[str, tuple[str, str, list]]:
    """label -> (colour, style, [(n, bytes)]) of what the large sweep measured."""

    def per_config(p: Point) -> float | None:
        batch = p.memory.get("batch:pv-osimr")
        return None if batch is None else batch["peak_bytes"] / batch["B"]

    def read(method: str, key: str):
        return lambda p: p.memory.get(method, {}).get(key)

    green, pink = plotting.color("batch:pv-osimr"), plotting.color("codegen:pv-osimr")
    curves = {
        f"numpy batch: peak traced ÷ B (B = {SCALING_BATCH})": (green, "-", per_config),
        "numpy single call: peak traced": (green, ":", read("numpy:pv-osimr", "peak_bytes")),
        "generated: shared library": (pink, "-", read("codegen:pv-osimr", "library_bytes")),
        "generated: work arrays per thread": (pink, ":", read("codegen:pv-osimr", "work_bytes")),
    }
    out = {}
    for label, (colour, style, value) in curves.items():
        pts = [(p.n, value(p)) for p in points if value(p)]  # 0 bytes has no place on a log axis
        if pts:
            out[label] = (colour, style, pts)
    return out


def _draw_memory(ax: Axes, points: list[Point]) -> None:
    """Bytes of the batched and generated paths against n, compile time on a second axis."""
    for label, (colour, style, pts) in _memory_curves(points).items():
        xs, ys = zip(*pts, strict=True)
        ax.loglog(xs, ys, style, marker="o", ms=3.5, color=colour, label=label)
    builds = [(p.n, p.memory["codegen:pv-osimr"]) for p in points if "codegen:pv-osimr" in p.memory]
    timed = [(n, g["compile_seconds"], g["flags"]) for n, g in builds if g["compile_seconds"]]
    title = "Fig. 4a chain: memory" + (", and compile time (right axis)" if timed else "")
    ax.set_title(title, fontsize=10)
    _links_axis(ax, points)
    ax.set_ylabel("bytes")
    _headroom(ax, 0.6)
    handles, labels_ = ax.get_legend_handles_labels()
    if timed:
        right = ax.twinx()
        xs, ys, flags = zip(*timed, strict=True)
        line = right.loglog(xs, ys, "--", marker="s", ms=3.5, color="#525252")[0]
        for x, y, f in zip(xs, ys, flags, strict=True):
            right.annotate(
                " ".join(f), (x, y), fontsize=6, xytext=(3, -9), textcoords="offset points"
            )
        right.set_ylabel("compile time of the generated G (s)")
        _headroom(right, 0.6)
        _links_axis(ax, points)  # the twin axis reset the shared x ticks
        handles.append(line)
        labels_.append("generated: compile time (right axis; flags at each point)")
    ax.legend(handles, labels_, fontsize=7, loc="upper left")


def _layout(
    plt, n_cases: int, n_families: int, bottom: int
) -> tuple[Figure, list[Axes], list[Axes], list[Axes]]:
    """Two bar panels on top (numpy paths | compiled and C++ paths; their height grows with the
    cases), a row of one scaling panel per family, and a row of ``bottom`` large-sweep panels;
    a row without panels is left out, so no axes stay empty."""
    rows = [1.6 + 1.05 * max(1, n_cases)] + [4.2] * (bool(n_families) + bool(bottom))
    columns = 2 * max(1, n_families, bottom)
    fig = plt.figure(figsize=(15, sum(rows) + 0.6), layout="constrained")
    grid = fig.add_gridspec(len(rows), columns, height_ratios=rows)
    half = columns // 2
    numpy_ax = fig.add_subplot(grid[0, :half])
    bars = [numpy_ax, fig.add_subplot(grid[0, half:], sharey=numpy_ax)]

    def row(r: int, count: int) -> list[Axes]:
        return [
            fig.add_subplot(grid[r, c * columns // count : (c + 1) * columns // count])
            for c in range(count)
        ]

    families = row(1, n_families) if n_families else []
    return fig, bars, families, row(len(rows) - 1, bottom) if bottom else []


def _save(fig: Figure, path_stem: Path) -> list[Path]:
    paths = [path_stem.with_suffix(suffix) for suffix in (".png", ".pdf")]
    for path in paths:
        fig.savefig(path, dpi=130, bbox_inches="tight")  # the legends below the bars
    return paths


def plot(run_result: dict, path_stem: Path) -> list[Path]:
    """``timings.png`` and ``.pdf``: per-case bars (log time) of the numpy paths and of the
    compiled and C++ paths, the log-log scaling panels below."""
    plt = plotting.pyplot()
    cases: list[Case] = run_result["cases"]
    points: list[Point] = run_result["scaling"]
    large: list[Point] = run_result.get("large", [])
    families = list(dict.fromkeys(p.family for p in points))
    bottom = bool(large) + bool(_memory_curves(large))
    fig, bars, panels, sweep = _layout(plt, len(cases), len(families), bottom)
    batch_size = run_result["batch_size"]
    names = labels(batch_size)
    groups = (
        ("pvosimr's numpy paths", NUMPY_PATHS),
        ("generated C and Pinocchio's C++", compiled_paths(batch_size)),
    )
    for ax, (title, group) in zip(bars, groups, strict=True):
        methods = [k for k in group if any(k in c.timings or c.refused(k) for c in cases)]
        _draw_cases(ax, cases, methods, names, f"G = J M⁻¹ Jᵀ, time per call: {title}")
    bars[1].tick_params(axis="y", labelleft=False)
    for ax, family in zip(panels, families, strict=True):
        mine = [p for p in points if p.family == family]
        title = FAMILY_TITLES.get(family, family)
        _draw_times(ax, mine, SCALING_METHODS, plotting.color, title, "call")
    if large:
        title = f"Fig. 4a chain: per configuration (batched: B = {SCALING_BATCH})"
        _draw_times(sweep[0], large, LARGE_METHODS, method_color, title, "configuration")
    if len(sweep) > 1:
        _draw_memory(sweep[1], large)
    try:
        return _save(fig, path_stem)
    finally:
        plt.close(fig)


def load(path: Path) -> dict:
    """A written ``timings.json`` as the run result that :func:`plot` draws and
    :func:`.report.markdown` writes."""
    from .frameworks import FrameworkResult

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    section = data.get("frameworks")
    if section is not None:
        frax = section.get("frax") and FrameworkResult.from_json(section["frax"])
        cases = [FrameworkResult.from_json(c) for c in section["cases"]]
        section = {**section, "cases": cases, "frax": frax}
    return {
        **data,
        "cases": [Case.from_json(c) for c in data["cases"]],
        "mujoco": [MujocoResult.from_json(r) for r in data.get("mujoco", [])],
        **{k: [Point(**p) for p in data.get(k, [])] for k in ("scaling", "large", "crossover")},
        "frameworks": section,
    }


def redraw(json_path: Path, path_stem: Path) -> list[Path]:
    """``timings.png`` and ``.pdf`` again from a written ``timings.json``, measuring nothing."""
    return plot(load(json_path), path_stem)


DENSE_STYLES = {
    "dense:pin+cholesky": ("#000000", "-"),
    "dense:cholesky": ("#525252", "--"),
    "dense:lu": ("#969696", ":"),
}
"""Colour and line style of the dense routes (black: everything; greys: linear algebra only)."""


def _crossover_style(method: str) -> tuple[str, str]:
    return DENSE_STYLES.get(method) or (method_color(method), "-.")


CROSSOVER_MARKS = (("dense:pin+cholesky", ":"), ("dense:lu", "--"))
"""The dense routes against which the crossover of each recursive route is marked, and the
line style of the mark: everything from q, and the fastest linear algebra alone."""


def _draw_crossover(ax: Axes, family: str, points: list[Point]) -> None:
    """One mechanism: time per configuration of every route against n (log-log), and where
    each recursive route starts to beat the dense routes of :data:`CROSSOVER_MARKS`."""
    for k in (*DENSE, *RECURSIVE):
        pts = [(p.n, p.medians_us[k]) for p in points if k in p.medians_us]
        if not pts:
            continue
        xs, ys = zip(*pts, strict=True)
        colour, style = _crossover_style(k)
        style = "-" if k in RECURSIVE and k != "pin-efpa" else style
        ax.loglog(xs, ys, style, marker="o", ms=3.5, color=colour, label=CROSSOVER_LABELS[k])
    height, (low, high) = 0.03, ax.get_xlim()
    for k in RECURSIVE:
        for dense, style in CROSSOVER_MARKS:
            found = crossover(points, k, dense)
            if found.kind != "between":
                continue
            colour = _crossover_style(k)[0]
            ax.axvline(found.n, color=colour, lw=0.9, ls=style)
            what = "everything" if dense == DENSE[0] else "LU only"
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
    ax.set_title(FAMILIES.get(family, family), fontsize=9)
    _links_axis(ax, points)  # reads p.n only
    ax.set_ylabel("wall time per configuration (µs)")


def plot_crossover(points: list[Point], path_stem: Path) -> list[Path]:
    """``crossover.png`` and ``.pdf``: a log-log panel per mechanism of the crossover sweep."""
    plt = plotting.pyplot()
    families = list(dict.fromkeys(p.family for p in points)) or ["(none)"]
    fig, axes = plt.subplots(
        1, len(families), figsize=(5.2 * len(families), 4.6), layout="constrained", squeeze=False
    )
    for ax, family in zip(axes[0], families, strict=True):
        _draw_crossover(ax, family, [p for p in points if p.family == family])
    handles, names = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, names, loc="outside lower center", ncols=3, fontsize=8, frameon=False)
    fig.suptitle(
        "G = J M⁻¹ Jᵀ per configuration: recursive code against the dense route "
        "(vertical lines: where a recursive route starts to beat a dense one for good)",
        fontsize=10,
    )
    try:
        return _save(fig, path_stem)
    finally:
        plt.close(fig)
