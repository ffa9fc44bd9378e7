"""``pvosimr export`` and ``pvosimr validate --exported``: a user's mistakes are one line and
exit 2 (nothing compiled), a good export passes, a tampered one fails."""

import json
import shutil

import pytest

from pvosimr.study import cli

pytest.importorskip("casadi")


def run(capsys, *argv: str) -> tuple[int, str]:
    """Exit status and stderr of ``pvosimr ARGV``."""
    try:
        status = cli.main(list(argv))
    except SystemExit as exc:
        status = exc.code
    return status, capsys.readouterr().err


def test_an_unknown_robot_is_one_line_and_exit_2(capsys, tmp_path):
    status, err = run(capsys, "export", "no_such_robot", "--out", str(tmp_path / "x"))
    assert status == 2
    assert err.count("\n") == 1 and "unknown robot 'no_such_robot'" in err
    assert not (tmp_path / "x").exists()


def test_an_output_folder_in_use_is_one_line_and_exit_2(capsys, tmp_path):
    (tmp_path / "mine.txt").write_text("keep")
    status, err = run(capsys, "export", "solo12/feet_3d", "--out", str(tmp_path))
    assert status == 2
    assert err.count("\n") == 1 and "not empty" in err
    assert (tmp_path / "mine.txt").read_text() == "keep"


def test_no_c_compiler_is_one_line_and_exit_2(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    status, err = run(capsys, "export", "solo12/feet_3d", "--out", str(tmp_path / "x"))
    assert status == 2
    assert err.count("\n") == 1 and "CC=" in err
    assert not (tmp_path / "x").exists()


def test_an_unsupported_constraint_is_refused_with_exit_2(capsys, tmp_path):
    argv = ["export", "solo12", "--weld-between", "FL_FOOT", "FL_FOOT"]
    status, err = run(capsys, *argv, "--out", str(tmp_path / "x"))
    assert status == 2
    assert err.count("\n") == 1 and "zero rows" in err


def test_validate_exported_without_an_export_is_exit_2(capsys, tmp_path):
    status, err = run(capsys, "validate", "--exported", str(tmp_path))
    assert status == 2 and "export.json" in err


@pytest.mark.slow
def test_export_then_validate_passes_and_a_tampered_export_fails(capsys, tmp_path):
    if not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
        pytest.skip("no C compiler")
    folder = tmp_path / "solo"
    status, _ = run(capsys, "export", "solo12/feet_3d", "--out", str(folder))
    assert status == 0
    assert (folder / "solo12_feet_3d.h").is_file()
    status, _ = run(capsys, "validate", "--exported", str(folder), "--configs", "2")
    assert status == 0
    # a G that is not the truth: its first entry moved in the exported call
    source = folder / "solo12_feet_3d.c"
    text = source.read_text()
    marker = "  PVOSIMR_FLUSH_END\n  if (i) return 3;"
    assert text.count(marker) == 1
    source.write_text(
        text.replace(marker, "  PVOSIMR_FLUSH_END\n  out[0] += 1e-3;\n  if (i) return 3;")
    )
    status, _ = run(capsys, "validate", "--exported", str(folder), "--configs", "2")
    assert status == 1
    source.write_text(text)
    # another model than the exported one
    spec = json.loads((folder / "export.json").read_text())
    spec["provenance"]["model hash"] = "0" * 16
    (folder / "export.json").write_text(json.dumps(spec))
    status, _ = run(capsys, "validate", "--exported", str(folder), "--configs", "2")
    assert status == 1
