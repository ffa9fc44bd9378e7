"""The committed timings report is what its writer makes of the committed JSON: rendering
figures/timings.json again gives figures/timings.md byte for byte (so a change of the writer
that changes the report shows here), and ``pvosimr bench --from-json`` does the same."""

from pathlib import Path

import pytest

from benchmarks import figure, report
from pvosimr.study import cli

FIGURES = Path(__file__).resolve().parents[1] / "figures"


def test_the_committed_report_renders_again_from_its_json():
    run = figure.load(FIGURES / "timings.json")
    assert report.markdown(run) == (FIGURES / "timings.md").read_text(encoding="utf-8")


def test_the_committed_frameworks_report_renders_again_from_its_json():
    """The section "JAX and PyTorch" alone (figures/jax-torch)."""
    folder = FIGURES / "jax-torch"
    committed = (folder / "timings.md").read_text(encoding="utf-8")
    md = report.markdown(figure.load(folder / "timings.json"))
    assert md == committed


@pytest.mark.slow  # seconds: matplotlib draws both figures
def test_bench_from_json_writes_the_report_and_its_figures(tmp_path, capsys):
    argv = ["bench", "--from-json", str(FIGURES / "timings.json"), "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    names = ["timings.md", *(f"{s}.{e}" for s in ("timings", "crossover") for e in ("png", "pdf"))]
    assert capsys.readouterr().out.split() == [str(tmp_path / n) for n in names]
    md = (tmp_path / "timings.md").read_text(encoding="utf-8")
    assert md == (FIGURES / "timings.md").read_text(encoding="utf-8")
