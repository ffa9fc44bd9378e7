"""``pvosimr figures``: the quick run end to end, the count cache, and the claim checks."""

from __future__ import annotations

import ast
import csv
import dataclasses
from pathlib import Path

import pytest

pytest.importorskip("casadi")
pytest.importorskip("matplotlib")

from pvosimr import zoo
from pvosimr.plotting import LABELS
from pvosimr.study import figures
from pvosimr.study.count import CountCache, model_digest
from pvosimr.study.figures import Count, claims, plots

# The verdicts of the quick run. C1-C5 are judged on the robots, whose cases do not depend on
# the sweep sizes: each must pass, as must H1 (PV-OSIMh never above PV-OSIM and PV-OSIMr) on
# every counted case. C6-C8 judge asymptotic behaviour, which the quick sweeps are
# too small to show: they are QUICK (undecided), and a PASS or FAIL there is a change to look at.
QUICK_VERDICTS = {
    "C1": "PASS",
    "C2": "PASS",
    "C3": "PASS",
    "C4": "PASS",
    "C5": "PASS",
    "H1": "PASS",
    "C6": "QUICK",
    "C7": "QUICK",
    "C8": "QUICK",
}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("figures")
    summary = figures.run(out, quick=True, cache_path=out / "cache.json", progress=False)
    return out, summary


@pytest.mark.slow
def test_quick_run_writes_every_artefact(quick_run):
    out, summary = quick_run
    for name in ("fig3", "fig4", "fig5", "fig6", "caveat"):
        for ext in ("png", "pdf"):
            assert (out / f"{name}.{ext}").stat().st_size > 10_000, f"{name}.{ext}"
    with (out / "opcounts.csv").open() as f:
        rows = list(csv.DictReader(f))
    expected = sum(len(c.algorithms) for c in figures.sweeps(figures.QUICK))
    assert len(rows) == expected == len(summary["rows"])
    assert all(int(r["ops"]) > 0 for r in rows)
    assert summary["misses"] == len(rows) and summary["hits"] == 0  # counted afresh


@pytest.mark.slow
def test_quick_run_verdicts(quick_run):
    out, summary = quick_run
    verdicts = {v.claim: v.status for v in summary["verdicts"]}
    assert verdicts == QUICK_VERDICTS
    table = (out / "claims.md").read_text()
    for claim, status in QUICK_VERDICTS.items():
        assert f"| {claim} |" in table and f"### {claim} — {status}" in table


@pytest.mark.slow
def test_rerun_comes_from_the_cache_and_writes_the_same_counts(quick_run, tmp_path):
    out, summary = quick_run
    again = figures.run(tmp_path, quick=True, cache_path=out / "cache.json", progress=False)
    assert again["misses"] == 0 and again["hits"] == len(summary["rows"])
    assert (tmp_path / "opcounts.csv").read_bytes() == (out / "opcounts.csv").read_bytes()
    assert again["verdicts"] == summary["verdicts"]


@pytest.mark.slow
def test_counts_on_robots_do_not_depend_on_sweep_size(quick_run):
    """The robot panels (Figs. 5, 6, caveat) are the same in quick and full runs."""
    _, summary = quick_run
    fig5a = figures.bars(summary["rows"], "fig5", "a")
    assert set(fig5a) == {"pv-osimr", "pv-osim", "efpa", "ltl-osim", "pv-osimh"}
    robot = zoo.load("atlas", "feet_6d")
    assert CountCache(None).count(robot.model, robot.constraints, "efpa") == fig5a["efpa"]


def _figures_imports(module: str) -> set[str]:
    """The modules of ``pvosimr.study.figures`` that ``module`` imports (by its source)."""
    source = Path(figures.__file__).with_name(f"{module}.py").read_text()
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            package = ["pvosimr", "study", "figures"]
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            where = ".".join(filter(None, (base, node.module)))
            names = [where] + [f"{where}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        prefix = "pvosimr.study.figures."
        found |= {n.removeprefix(prefix).split(".")[0] for n in names if n.startswith(prefix)}
    return found


def test_the_figures_modules_import_without_a_cycle():
    assert _figures_imports("model") == set()
    assert _figures_imports("claims") == {"model"}
    assert _figures_imports("plots") == {"model"}
    assert _figures_imports("convention") == set()
    assert _figures_imports("runner") == {"model", "claims", "convention", "plots"}


def test_model_digest_sees_inertias_and_constraints():
    robot = zoo.load("atlas", "feet_6d")
    before = model_digest(robot.model, robot.constraints)
    assert model_digest(robot.model, robot.constraints[:1]) != before
    robot.model.inertias[3].mass += 1.0
    assert model_digest(robot.model, robot.constraints) != before


def _bar_rows(figure: str, panel: str, **ops: int) -> list[Count]:
    return [Count(figure, panel, "m", 0, a.replace("_", "-"), v) for a, v in ops.items()]


def test_claim_bounds_can_fail():
    """C2's bound is [1.10, 1.30]; C5's [0.95, 1.02]; C3 needs LTL below EFPA."""
    rows = _bar_rows("fig5", "b", pv_osimr=100, pv_osim=140, efpa=150, ltl_osim=160)
    assert not claims._c2(rows).passed
    rows = _bar_rows("fig5", "b", pv_osimr=100, pv_osim=120, efpa=150, ltl_osim=160)
    assert claims._c2(rows).passed
    rows = _bar_rows("caveat", "", pv_osimr=100, pv_osim=90, efpa=150, ltl_osim=160)
    assert not claims._c5(rows).passed
    rows = _bar_rows("fig6", "a", pv_osimr=100, pv_osim=90, efpa=150, ltl_osim=160)
    assert not claims._c3(rows).passed


def test_quick_never_turns_a_failure_into_a_pass():
    v = claims.Verdict("C7", "", "", "", "", passed=False, quick=True)
    assert v.status == "QUICK"
    assert dataclasses.replace(v, claim="C4").status == "FAIL"


@pytest.mark.slow
def test_full_run_counts_the_committed_figures(tmp_path):
    """The full regeneration, uncached (minutes; ``pytest -m slow``), counts exactly the
    committed ``figures/opcounts.csv``: a change of any count fails until the figures are
    regenerated (``pvosimr figures --out figures``)."""
    summary = figures.run(tmp_path, quick=False, cache_path=None, progress=False)
    assert len(summary["rows"]) == sum(len(c.algorithms) for c in figures.sweeps(figures.FULL))
    committed = figures.read_csv(Path(__file__).parents[1] / "figures" / "opcounts.csv")
    changed = [(c, n) for c, n in zip(committed, summary["rows"], strict=True) if c != n]
    assert not changed, f"{len(changed)} counts differ from figures/opcounts.csv: {changed[:5]}"


def _sweep_rows() -> list[Count]:
    """Fig. 3 (b=1 … 10) and Fig. 4 (a, b) curves of three sizes: PV-OSIMh 2% under PV-OSIMr."""
    ops = {"pv-osimr": 100, "pv-osim": 101, "efpa": 150, "pv-osimh": 98}
    panels = [("fig3", f"b={b}") for b in figures.model.BRANCHES] + [("fig4", "a"), ("fig4", "b")]
    return [
        Count(figure, panel, "m", x, a, v * x)
        for figure, panel in panels
        for x in (2, 4, 8)
        for a, v in ops.items()
    ]


def _ratio_panels(fig) -> list:
    return [ax for ax in fig.axes if ax.get_label() == plots.RATIO_LABEL]


@pytest.mark.slow  # seconds of counting per figure
@pytest.mark.parametrize(
    ("draw", "divisors"), [("fig3", ["pv-osimr"] * 5), ("fig4", ["pv-osimr", "efpa"])]
)
def test_sweep_figures_have_ratio_panels(tmp_path, draw, divisors):
    """Under every panel: each algorithm ÷ PV-OSIMr (÷ EFPA in Fig. 4b), zoomed around 1."""
    import matplotlib.pyplot as plt

    getattr(plots, draw)(_sweep_rows(), tmp_path)
    panels = _ratio_panels(plt.gcf())
    assert len(panels) == len(divisors)
    ops = {"pv-osimr": 100, "pv-osim": 101, "efpa": 150, "pv-osimh": 98}
    for ax, divisor in zip(panels, divisors, strict=True):
        drawn = {
            line.get_label(): line.get_ydata() for line in ax.lines if line.get_label()[0] != "_"
        }
        expected = {LABELS[a]: v / ops[divisor] for a, v in ops.items() if a != divisor}
        assert set(drawn) == set(expected)
        for label, ratio in expected.items():
            assert drawn[label] == pytest.approx([ratio] * 3)
        low, high = ax.get_ylim()  # zoomed on 1, every ratio below 1 inside
        assert low < min(expected.values()) and high - 1 == pytest.approx(1 - low)
        if divisor == "pv-osimr":
            assert high < 1.1 and "EFPA (to ×1.50)" in ax.texts[0].get_text()
    plt.close("all")


@pytest.mark.slow  # seconds (measured)
def test_bar_figures_set_pvosimh_apart_with_thousands_separators(tmp_path):
    import matplotlib.pyplot as plt

    rows = _bar_rows("fig5", "a", pv_osimr=12000, pv_osim=13000, efpa=15000, ltl_osim=16000)
    rows += _bar_rows("fig5", "a", pv_osimh=11000)
    rows += _bar_rows("fig5", "b", pv_osimr=1, pv_osim=1, efpa=1, ltl_osim=1, pv_osimh=1)
    plots._bar_figure(rows, tmp_path, "fig5", plots.FIG5_TITLES, "Fig. 5")
    ax = plt.gcf().axes[0]
    hatches = {
        t.get_text(): p.get_hatch() for t, p in zip(ax.get_xticklabels(), ax.patches, strict=True)
    }
    assert hatches == {
        "PV-OSIMr": None,
        "PV-OSIM": None,
        "EFPA": None,
        "LTL-OSIM": None,
        "PV-OSIMh": plots.HATCH,
    }
    plt.gcf().canvas.draw()
    assert "10,000" in [t.get_text() for t in ax.get_yticklabels()]
    plt.close("all")


def test_redraw_reads_back_the_written_csv(tmp_path):
    rows = _sweep_rows()
    figures.write_csv(rows, tmp_path / "opcounts.csv")
    assert figures.read_csv(tmp_path / "opcounts.csv") == rows
