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

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "export.md"
BLOCK = re.compile(r"^(?:<!-- (file|not run): ?([^\n]*?) -->\n)?```(\w+)\n(.*?)^```", re.S | re.M)
LANGUAGES = {"bash", "cmake", "cpp", "c"}

#: The model file the page's third command exports: two links, a revolute and a prismatic
#: joint, and the tool frame it welds.
ARM_URDF = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"/>
  <link name="upper"><inertial><mass value="1.0"/><origin xyz="0 0 0.2"/>
    <inertia ixx="0.02" iyy="0.02" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="slider"><inertial><mass value="0.5"/><origin xyz="0 0 0.1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.005" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tool0"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
  <joint name="slide" type="prismatic"><parent link="upper"/><child link="slider"/>
    <origin xyz="0 0 0.4"/><axis xyz="0 0 1"/>
    <limit lower="-0.2" upper="0.2" effort="10" velocity="1"/></joint>
  <joint name="tool" type="fixed"><parent link="slider"/><child link="tool0"/>
    <origin xyz="0.05 0 0.2" rpy="0.3 0 0"/></joint>
</robot>
"""


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
