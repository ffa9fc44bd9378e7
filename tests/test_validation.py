"""The validation harness on a small zoo: report contents, JSON twin, exit status."""

import json

import numpy as np

from pvosimr import validation


def test_validate_writes_a_passing_report(tmp_path):
    code = validation.main(["--robots", "ur5", "solo12", "--configs", "2", "--out", str(tmp_path)])
    assert code == 0
    md = (tmp_path / "report.md").read_text()
    assert "**PASS**" in md and "| ur5 |" in md and "| solo12 |" in md
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["pass"] is True
    row = data["rows"][0]
    for method in ("pv-osimr", "pv-osim", "efpa", "ltl-osim", "naive", "pin-efpa"):
        assert row["errors"][method] <= validation.TOLERANCE


def test_a_wrong_algorithm_fails_the_run(tmp_path, monkeypatch):
    real = validation.compute_delassus

    def off_by_a_bit(model, data, q, cms, algorithm):
        G = real(model, data, q, cms, algorithm=algorithm)
        return G * (1 + 1e-6) if algorithm == "efpa" else G

    monkeypatch.setattr(validation, "compute_delassus", off_by_a_bit)
    code = validation.main(["--robots", "ur5", "--configs", "1", "--out", str(tmp_path)])
    assert code == 1
    md = (tmp_path / "report.md").read_text()
    assert "**FAIL**" in md and "❌" in md
    row = json.loads((tmp_path / "report.json").read_text())["rows"][0]
    assert np.isclose(row["errors"]["efpa"], 1e-6, rtol=0.5)


def test_missing_optional_model(tmp_path, monkeypatch, capsys):
    """Named explicitly, a missing Atlas stops the run with the fix; from the zoo it is listed."""
    monkeypatch.setenv("PVOSIMR_MODEL_PATH", str(tmp_path))
    monkeypatch.setitem(__import__("sys").modules, "robot_descriptions", None)
    assert validation.main(["--robots", "atlas", "--out", str(tmp_path)]) == 2
    assert "PVOSIMR_MODEL_PATH" in capsys.readouterr().err

    monkeypatch.setattr(validation.zoo, "names", lambda: ["atlas", "ur5"])
    assert validation.main(["--configs", "1", "--out", str(tmp_path)]) == 0
    md = (tmp_path / "report.md").read_text()
    assert "## Robots not validated" in md and "**atlas**" in md and "| ur5 |" in md


def test_demo_prints_the_table_for_the_papers_robots(capsys):
    from pvosimr import cli

    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "| shadow_hand | fingertips_3d |" in out and "PASS" in out
