"""``pvosimr validate`` on MJCF robots: MuJoCo's own G beside Pinocchio's, on MuJoCo's rows."""

import json
import sys

import numpy as np
import pytest

pytest.importorskip("mujoco")

from pvosimr.study import validate as validation
from pvosimr.study.mujoco_section import MUJOCO
from pvosimr.zoo.mujoco_robots import MJCF_ROBOTS, MjcfRobot, packaged_mjcf

TWO_ARMS = str(packaged_mjcf("two_arms_bar.xml"))


@pytest.mark.slow  # seconds of numpy or CasADi work
def test_an_mjcf_file_alone_is_validated_against_mujoco(capsys):
    """The two-arm robot holding a bar (two welds, a connect, contacts of every condim)."""
    assert validation.main([TWO_ARMS, "--configs", "2"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("| robot"))
    assert MUJOCO in header
    assert "the three engines agree" in out
    assert "PASS" in out


@pytest.mark.slow  # seconds of numpy or CasADi work
def test_the_report_has_the_three_engines(tmp_path):
    assert validation.main([TWO_ARMS, "--configs", "2", "--out", str(tmp_path)]) == 0
    md = (tmp_path / "report.md").read_text()
    section = md.split("## MuJoCo's own Delassus matrix on MJCF robots")[1]
    assert "| two_arms_bar.xml | 24 |" in section and "| agree |" in section
    row = json.loads((tmp_path / "report.json").read_text())["rows"][0]
    assert row["methods"][MUJOCO]["error"] <= validation.TOLERANCE
    assert row["pvosimr_vs_mujoco"] <= validation.TOLERANCE
    assert row["m"] >= 23  # 6 + 3 + 6 equality rows and the feet's contacts
    # Pinocchio's own parser cannot read this file's keyframe: said, not hidden
    assert any("buildModelFromMJCF" in note for note in row["parser_notes"])


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_a_wrong_mujoco_matrix_is_a_disagreement(tmp_path, monkeypatch):
    real = MjcfRobot.efc

    def off(self, q):
        rows = real(self, q)
        rows.G = rows.G * (1 + 1e-6)
        return rows

    monkeypatch.setattr(MjcfRobot, "efc", off)
    assert validation.main([TWO_ARMS, "--configs", "1", "--out", str(tmp_path)]) == 0
    md = (tmp_path / "report.md").read_text()
    assert f"`{MUJOCO}` is off the dense truth by 1.0e-06" in md
    assert "| **disagree** |" in md
    row = json.loads((tmp_path / "report.json").read_text())["rows"][0]
    assert np.isclose(row["pvosimr_vs_mujoco"], 1e-6, rtol=0.5)


def test_without_mujoco_the_file_run_says_what_to_install(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)
    with pytest.raises(SystemExit) as stop:
        validation.main([TWO_ARMS])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ['pvosimr validate: needs MuJoCo: pip install "pvosimr[mujoco]"']


def test_the_default_zoo_holds_the_mjcf_robots():
    names = validation.zoo_names()
    assert set(MJCF_ROBOTS) <= set(names)
    assert {"mjcf_two_arms_bar", "mjcf_delta", "mjcf_quadruped", "mjcf_shadow_hand"} <= set(
        MJCF_ROBOTS
    )


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_zoo_cases_by_name(capsys):
    assert validation.main(["--robots", "mjcf_delta", "mjcf_quadruped", "--configs", "1"]) == 0
    out = capsys.readouterr().out
    assert "| mjcf_delta | mujoco_rows |" in out and "| mjcf_quadruped | mujoco_rows |" in out
