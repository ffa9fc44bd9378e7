"""docs/export.md as a C++ user pastes it: every shell, CMake, C and C++ snippet runs as
written, in order, in one folder (a block after ``<!-- file: PATH -->`` is that file; a block
after ``<!-- not run: why -->`` is skipped, with its reason on the page).  The first command's
``--out`` is the name the consumer's ``find_package`` and ``#include`` use."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _urdf import joint, link, robot

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "export.md"
BLOCK = re.compile(r"^(?:<!-- (file|not run): ?([^\n]*?) -->\n)?```(\w+)\n(.*?)^```", re.S | re.M)
LANGUAGES = {"bash", "cmake", "cpp", "c"}

#: The model file the page's third command exports: two links, a revolute and a prismatic
#: joint, and the tool frame it welds.
ARM_URDF = robot(
    "arm",
    link("base"),
    link("upper", "1.0", "0 0 0.2", "0.02 0.02 0.01"),
    link("slider", "0.5", "0 0 0.1", "0.01 0.01 0.005"),
    link("tool0"),
    joint("shoulder", "revolute", "base", "upper", axis="0 1 0", limits="-3 3 10 5"),
    joint("slide", "prismatic", "upper", "slider", 'xyz="0 0 0.4"', "0 0 1", "-0.2 0.2 10 1"),
    joint("tool", "fixed", "slider", "tool0", 'xyz="0.05 0 0.2" rpy="0.3 0 0"'),
)


def blocks() -> list[tuple[str, str, str, str]]:
    """``(marker, argument, language, code)`` of every shell, CMake, C and C++ block, in order."""
    found = [m.groups() for m in BLOCK.finditer(PAGE.read_text(encoding="utf-8"))]
    return [
        (mark or "", arg or "", lang, code) for mark, arg, lang, code in found if lang in LANGUAGES
    ]


def test_every_block_is_run_or_says_why_not():
    found = blocks()
    assert {lang for *_, lang, _ in found} >= {"bash", "cmake", "cpp"}
    for mark, arg, lang, _ in found:
        assert mark != "not run" or arg.strip(), "a skipped block names its reason"
        assert lang == "bash" or mark == "file", f"a {lang} block that is not a file"


@pytest.mark.slow  # exports Atlas and solo12, builds with CMake and alone, validates: a minute
def test_the_page_runs_as_written(tmp_path):
    for tool in ("cmake", "cc", "c++"):
        if shutil.which(tool) is None:
            pytest.skip(f"needs {tool}")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "pvosimr"  # the installed command, run by this interpreter and checkout
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pvosimr "$@"\n')
    shim.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    (work / "arm.urdf").write_text(ARM_URDF)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    for mark, arg, _lang, code in blocks():
        if mark == "not run":
            continue
        if mark == "file":
            (work / arg).parent.mkdir(parents=True, exist_ok=True)
            (work / arg).write_text(code)
            continue
        run = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", code], cwd=work, env=env, capture_output=True,
            text=True, timeout=900, check=False,
        )  # fmt: skip
        assert run.returncode == 0, f"{code}\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
        if "validate --exported" in code:
            assert run.stdout.rstrip().endswith("PASS") and "solo_derivatives_batch" in run.stdout
        if "./controller" in code:
            assert "l_foot: rows 0..5" in run.stdout and "rc 0" in run.stdout, run.stdout
    assert (work / "atlas_feet" / "atlas_feet.h").is_file()
    assert (work / "arm" / "arm.h").is_file()
