"""The validation harness on a small zoo: report contents, JSON twin, exit status."""

import json
from pathlib import Path

import numpy as np
import pytest
from _urdf import joint, link, robot

from pvosimr import ALGORITHMS, zoo
from pvosimr.study import cli, validate_report
from pvosimr.study import validate as validation


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_validate_writes_a_passing_report(tmp_path):
    code = validation.main(["--robots", "ur5", "solo12", "--configs", "2", "--out", str(tmp_path)])
    assert code == 0
    md = (tmp_path / "report.md").read_text()
    assert "**PASS**" in md and "| ur5 |" in md and "| solo12 |" in md
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["pass"] is True
    row = data["rows"][0]
    for method in ("pv-osimr", "pv-osim", "efpa", "ltl-osim", "naive", "pin-efpa"):
        assert row["methods"][method]["error"] <= validation.TOLERANCE


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
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
    assert np.isclose(row["methods"]["efpa"]["error"], 1e-6, rtol=0.5)


def test_an_algorithm_that_raises_on_one_configuration_fails_the_run(tmp_path, monkeypatch):
    """Right on the other configurations is not enough: the row fails, the cell says so."""
    why = "not needed here"  # the bridge's build would make this the slowest default test
    monkeypatch.setattr(validation.reference, "unavailable", lambda: {"pin-pv-osimr": why})
    real = validation.compute_delassus
    calls = {"efpa": 0}

    def raises_once(model, data, q, cms, algorithm):
        if algorithm == "efpa":
            calls["efpa"] += 1
            if calls["efpa"] == 1:
                raise RuntimeError("efpa gave up on this configuration")
        return real(model, data, q, cms, algorithm=algorithm)

    monkeypatch.setattr(validation, "compute_delassus", raises_once)
    code = validation.main(["--robots", "ur5", "--configs", "2", "--out", str(tmp_path)])
    assert code == 1
    efpa = json.loads((tmp_path / "report.json").read_text())["rows"][0]["methods"]["efpa"]
    assert efpa["error"] <= validation.TOLERANCE  # right where it ran
    assert efpa["failure"] == "RuntimeError: efpa gave up on this configuration"
    assert "failed ❌ [1]" in (tmp_path / "report.md").read_text()


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_missing_optional_model(tmp_path, monkeypatch, capsys):
    """Named explicitly, a missing Atlas stops the run with the fix; from the zoo it is listed."""
    monkeypatch.setenv("PVOSIMR_MODEL_PATH", str(tmp_path))
    monkeypatch.setitem(__import__("sys").modules, "robot_descriptions", None)
    assert validation.main(["--robots", "atlas", "--out", str(tmp_path)]) == 2
    assert "PVOSIMR_MODEL_PATH" in capsys.readouterr().err

    # The zoo-wide list (the MJCF robots are test_validate_mujoco's): atlas and ur5 only.
    monkeypatch.setattr(validation, "zoo_names", lambda: ["atlas", "ur5"])
    assert validation.main(["--configs", "1", "--out", str(tmp_path)]) == 0
    md = (tmp_path / "report.md").read_text()
    assert "## Robots not validated" in md and "**atlas**" in md and "| ur5 |" in md
    rows = json.loads((tmp_path / "report.json").read_text())["rows"]
    assert {row["robot"] for row in rows} == {"ur5"}  # the stand-in zoo was the one validated
    # the section on Pinocchio's silently wrong routines, without the Atlas case
    assert "## Where Pinocchio's routines are silently wrong" in md
    assert "| four_bar/coupler_rocker_3d_lwa | 3 | 3 | 1 × 3D two-body LWA |" in md
    assert "atlas_holding_box/" not in md.split("silently wrong")[-1]


@pytest.mark.slow  # CasADi graphs of Atlas
def test_demo_prints_the_table_for_the_papers_robots(capsys):
    from pvosimr.study import cli

    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "| shadow_hand | fingertips_3d |" in out and "PASS" in out
    # four 3D points per foot make G singular: the Cholesky route is refused, and the table says
    # why beside the cell rather than "failed"
    assert "| atlas | feet_4x3d |" in out and "refused [1]" in out and "failed" not in out
    assert "\n[1] pin-cholesky (pvosimr refused the input): ValueError: " in out


# ----------------------------------------------------------------------------- the command line

# Two revolute links on a fixed base and a finger that mimics the second joint (URDF <mimic>).
ARM_URDF = robot(
    "mimic_arm",
    link("base"),
    link("upper", "2", "0.2 0 0", "0.01 0.03 0.03"),
    link("lower", "1", "0.15 0 0", "0.005 0.02 0.02"),
    link("finger", "0.1", "0.02 0 0", "0.001 0.001 0.001"),
    joint("shoulder", "revolute", "base", "upper", axis="0 0 1", limits="-3 3 1 1"),
    joint(
        "elbow", "revolute", "upper", "lower", 'xyz="0.4 0 0" rpy="0.3 0 0"', "0 1 0", "-3 3 1 1"
    ),
    joint(
        "finger_joint",
        "revolute",
        "lower",
        "finger",
        'xyz="0.3 0 0"',
        "1 0 0",
        "-3 3 1 1",
        '<mimic joint="elbow" multiplier="0.5" offset="0.1"/>',
    ),
)


@pytest.fixture
def arm_urdf(tmp_path, monkeypatch):
    """The URDF above, and the working directory moved to an empty folder (nothing written)."""
    path = tmp_path / "mimic_arm.urdf"
    path.write_text(ARM_URDF)
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    return path


def _rows(out: str) -> dict[str, list[str]]:
    """The printed Markdown table: ``robot/preset`` -> its cells."""
    cells = [line.strip("|").split("|") for line in out.splitlines() if line.startswith("| ")]
    head = [c.strip() for c in cells[0]]
    assert head[:4] == ["robot", "preset", "nv", "m"]
    return {f"{c[0].strip()}/{c[1].strip()}": [x.strip() for x in c] for c in cells[1:]}


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_a_urdf_file_runs_every_method_against_the_truth(arm_urdf, capsys):
    argv = [str(arm_urdf), "--weld", "finger", "--point", "lower", "--configs", "2"]
    assert cli.main(["validate", *argv]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    assert list(rows) == ["mimic_arm.urdf/finger_6d+lower_3d"]  # command-line order kept
    cells = rows["mimic_arm.urdf/finger_6d+lower_3d"]
    assert cells[2:4] == ["3", "9"]  # without --mimic the finger is an independent joint
    assert all(float(c) <= validation.TOLERANCE for c in cells[4 : 4 + len(ALGORITHMS)])
    assert "PASS" in out
    assert not list(Path.cwd().iterdir())  # a file run writes no report unless asked


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_a_file_run_writes_its_report_where_out_says(arm_urdf, tmp_path):
    out = tmp_path / "report"
    argv = [str(arm_urdf), "--point", "finger", "--configs", "1", "--out", str(out)]
    assert validation.main(argv) == 0
    (row,) = json.loads((out / "report.json").read_text())["rows"]
    assert (row["robot"], row["preset"], row["nv"], row["m"]) == (
        "mimic_arm.urdf",
        "finger_3d",
        3,
        3,
    )
    assert all(row["methods"][a]["error"] <= validation.TOLERANCE for a in ALGORITHMS)
    assert "damped" not in (out / "report.md").read_text()  # the zoo-wide section only


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_mimic_file_is_validated(arm_urdf, capsys):
    """With --mimic the finger follows the elbow (nv 2): every algorithm matches the truth."""
    code = cli.main(["validate", str(arm_urdf), "--mimic", "--weld", "finger", "--configs", "1"])
    captured = capsys.readouterr()
    cells = _rows(captured.out)["mimic_arm.urdf/finger_6d"]
    assert cells[2:4] == ["2", "6"]
    results = cells[4 : 4 + len(ALGORITHMS)]
    assert all(float(cell) <= validation.TOLERANCE for cell in results)
    assert code == 0


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_robots_take_robot_or_robot_slash_preset(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["--robots", "solo12/feet_3d", "chain_welded_every_k_k2", "--configs", "1"]
    assert validation.main(argv) == 0
    rows = _rows(capsys.readouterr().out)
    assert list(rows) == ["solo12/feet_3d", "chain_welded_every_k_k2/welds_6d"]
    assert not list(tmp_path.iterdir())  # a --robots run writes no report without --out
    talos = zoo.load("talos")
    assert validation.main(["--robots", "talos", "--configs", "1"]) == 0
    assert list(_rows(capsys.readouterr().out)) == [f"talos/{p}" for p in talos.presets]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["no/such/arm.urdf", "--weld", "x"], "no such model file: no/such/arm.urdf"),
        (["ur5"], "no such model file: ur5; 'ur5' is a zoo robot: pvosimr validate --robots ur5"),
        (["URDF", "--weld", "fingr"], "unknown frame 'fingr' in model 'mimic_arm'. Did you mean"),
        (["URDF"], "no constraints given; the leaf links of model 'mimic_arm' are finger"),
        (["URDF", "--robots", "ur5", "--weld", "finger"], "a model FILE or --robots, not both"),
        (["--robots", "ur5", "--weld", "tool0"], "--weld: only with a model FILE"),
        (["--robots", "ur55"], "unknown robot 'ur55'. Did you mean 'ur5'"),
        (["--robots", "ur5/tool_7d"], "unknown preset 'tool_7d' for robot 'ur5'; valid presets:"),
        (["--robots", "ur5/a/b"], "is not of the form ROBOT or ROBOT/PRESET"),
        (["URDF", "--weld", "finger", "--configs", "0"], "--configs: must be at least 1, got 0"),
        # a free-flyer on the massless base link turns like the shoulder: M is singular
        pytest.param(
            ["URDF", "--free-flyer", "--weld", "finger"],
            "the mass matrix is not positive definite",
            marks=pytest.mark.slow,  # Pinocchio's C++ PV-OSIMr through the bridge
        ),
    ],
)
def test_errors_name_the_problem(arm_urdf, capsys, argv, message):
    argv = [str(arm_urdf) if a == "URDF" else a for a in argv]
    try:
        code = cli.main(["validate", *argv])
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    assert code == 2
    captured = capsys.readouterr()
    assert message in captured.err and not captured.out


# ----------------------------------------------------------------------------- refusals


def _refuse(algorithm: str, monkeypatch) -> None:
    real = validation.compute_delassus

    def refusing(model, data, q, cms, algorithm=algorithm, _refused=algorithm):
        if algorithm == _refused:
            raise NotImplementedError(f"{_refused} does not do this joint")
        return real(model, data, q, cms, algorithm=algorithm)

    monkeypatch.setattr(validation, "compute_delassus", refusing)


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_a_refusal_fails_the_run(tmp_path, monkeypatch):
    _refuse("efpa", monkeypatch)
    assert validation.main(["--robots", "ur5", "--configs", "1", "--out", str(tmp_path)]) == 1
    md = (tmp_path / "report.md").read_text()
    assert "**FAIL**" in md and "failed ❌" in md and "efpa does not do this joint" in md


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_a_wrong_number_on_newer_joint_types_fails(tmp_path, monkeypatch):
    real = validation.compute_delassus

    def off(model, data, q, cms, algorithm):
        G = real(model, data, q, cms, algorithm=algorithm)
        return G + 1e-7 * np.abs(G).max() if algorithm == "pv-osimr" else G

    monkeypatch.setattr(validation, "compute_delassus", off)
    argv = ["--robots", "universal_biped/feet_3d", "--configs", "1", "--out", str(tmp_path)]
    assert validation.main(argv) == 1
    assert "**FAIL**" in (tmp_path / "report.md").read_text()


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_report_carries_the_accuracy_study_summary(tmp_path):
    """The accuracy study written beside the report lends it its summary and figure."""
    assert validate_report.accuracy_section(tmp_path) == []
    (tmp_path / "accuracy.md").write_text(
        "# study\n\n| table |\n\n## Summary\n\n- within 1e-11 where cond(M) <= 1e8\n- ends there\n"
        "\n## Paths that raised\n\n- a failure listed in the study only\n"
    )
    (tmp_path / "accuracy.png").write_bytes(b"")
    code = validation.main(["--robots", "ur5", "--configs", "1", "--out", str(tmp_path)])
    md = (tmp_path / "report.md").read_text()
    assert code == 0 and "## Accuracy against chain depth and conditioning" in md
    assert "- within 1e-11 where cond(M) <= 1e8\n- ends there" in md and "(accuracy.png)" in md
    assert "| table |" not in md and "a failure listed in the study only" not in md


# ----------------------------------------------------------------------------- refused or failed


def test_a_loop_closure_on_one_link_is_refused_before_any_work(arm_urdf, capsys, monkeypatch):
    """`--weld-between A A` is the user's mistake: exit 2 and one line, nothing validated."""

    def no_work(*args, **kwargs):
        raise AssertionError("validated a case the command line already refused")

    monkeypatch.setattr(validation, "validate_cases", no_work)
    with pytest.raises(SystemExit) as stopped:
        validation.main([str(arm_urdf), "--weld-between", "finger", "finger"])
    code = stopped.value.code
    captured = capsys.readouterr()
    assert code == 2 and not captured.out
    assert captured.err == (
        "pvosimr validate: error: --weld-between finger finger: both frames are on joint 3 "
        "('finger_joint'), so constraint 0 has zero rows; name frames on two different links\n"
    )


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_the_table_says_why_a_reference_is_refused(capsys, monkeypatch, tmp_path):
    """four_bar's loop closure: pvosimr refuses to hand Pinocchio a second body it ignores;
    the cell says "refused [n]" and footnote n who refused and why."""
    monkeypatch.chdir(tmp_path)
    assert validation.main(["--robots", "four_bar/coupler_rocker_3d", "--configs", "1"]) == 0
    out = capsys.readouterr().out
    cells = _rows(out)["four_bar/coupler_rocker_3d"]
    head = [c.strip() for c in out.splitlines()[0].strip("|").split("|")]
    n = cells[head.index("pin-efpa")].removeprefix("refused [").removesuffix("]")
    assert cells[head.index("pin-cholesky")] == f"refused [{n}]" and n.isdigit()
    (note,) = [line for line in out.splitlines() if line.startswith(f"[{n}] ")]
    assert note.startswith(f"[{n}] pin-cholesky, pin-efpa (pvosimr refused the input): ValueError")
    assert "Pinocchio's routines ignore joint2" in note


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_the_report_tells_refusals_from_disagreements(tmp_path):
    """report.md: "Pinocchio disagrees with the truth" only where it returned a result; the
    loop closures pvosimr refused to pass it are listed apart, not counted as agreement."""
    argv = ["--robots", "four_bar/coupler_rocker_3d", "ur5", "--configs", "1", "--out"]
    assert validation.main([*argv, str(tmp_path)]) == 0
    md = (tmp_path / "report.md").read_text()
    disagree = md.split("## Where Pinocchio or MuJoCo disagrees with the dense truth\n\n")[1]
    assert disagree.startswith("- None of the results Pinocchio or MuJoCo returned here")
    assert "That says nothing of the cases where pvosimr refused the input" in disagree
    refused = md.split("## pvosimr refused the input (Pinocchio not called)\n\n")[1]
    refused = refused.split("\n## ")[0]
    assert "- `pin-efpa` on 1 case(s) (four_bar/coupler_rocker_3d): ValueError:" in refused
    raised = md.split("## The C++ call raised an error")[1].split("\n## ")[0]
    assert "four_bar" not in raised
    algorithms = md.split("## pvosimr algorithms that raised an error")[1].split("\n## ")[0]
    assert algorithms.strip().endswith("- None.")
    assert "refused [" in md and "- [1] " in md  # the table's footnotes


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_an_error_from_cpp_is_not_a_pvosimr_refusal():
    """Told apart by where the ValueError was raised: a `raise` of pvosimr's input checks (the
    loop closure handed to pin-efpa), or a C++ call (the bridge refusing mimic joints raises a
    ValueError too, from its C++)."""
    from pvosimr import reference

    if reference.unavailable():
        pytest.skip(f"the bridge is needed: {reference.unavailable()}")
    cases = [zoo.load("four_bar", "coupler_rocker_3d"), zoo.load("panda_mimic", "tool_6d")]
    loop, mimic = validation.validate_cases(cases, configs=1, progress=False)
    assert loop.result("pin-efpa").raised_by == validation.REFUSED
    assert mimic.result("pin-pv-osimr").failure.startswith("ValueError: ")
    assert mimic.result("pin-pv-osimr").raised_by == validation.RAISED
    assert mimic.result("pin-efpa").raised_by == validation.RAISED  # a RuntimeError from Pinocchio


def test_a_missing_bridge_note_says_how_to_get_it(capsys, monkeypatch, tmp_path):
    why = "no Eigen headers (looked in /nowhere)"
    monkeypatch.setattr(validation.reference, "unavailable", lambda: {"pin-pv-osimr": why})
    assert validation.main(["--robots", "ur5", "--configs", "1", "--out", str(tmp_path)]) == 0
    (note,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("not run: ")]
    assert why in note and 'pip install "pvosimr[bridge]"' in note
    assert (
        f"- **pin-pv-osimr**: Pinocchio's C++ PV-OSIMr (pin-pv-osimr) is unavailable: {why}."
        in (tmp_path / "report.md").read_text()
    )
