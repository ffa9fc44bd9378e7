"""The wheel carries every file the library reads at run time (templates, C sources, models)."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tracked() -> list[str]:
    done = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.split() if done.returncode == 0 else []


def test_the_wheel_holds_every_file_of_the_package(tmp_path):
    tracked = _tracked()
    if not tracked:
        pytest.skip("not a git checkout")
    source = tmp_path / "source"  # the tracked files alone: no build/ left by an earlier build
    for name in tracked:
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path), str(source)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("pvosimr-*.whl")
    inside = set(zipfile.ZipFile(wheel).namelist())
    package = [name for name in tracked if name.startswith("pvosimr/")]
    missing = [name for name in package if name not in inside]
    assert not missing, f"files of pvosimr/ the wheel leaves out: {missing}"
