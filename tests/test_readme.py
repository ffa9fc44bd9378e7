"""Every Python snippet of the README runs as written, each on its own, as a user pastes it."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SNIPPETS = re.findall(r"^```python\n(.*?)^```", README.read_text(), re.S | re.M)


def test_the_readme_has_snippets():
    assert len(SNIPPETS) >= 3


@pytest.mark.parametrize("number", range(len(SNIPPETS)))
def test_snippet_runs_as_written(number, tmp_path):
    """A fresh interpreter per snippet: nothing defined by another snippet or by the tests."""
    script = tmp_path / f"snippet_{number}.py"
    script.write_text(SNIPPETS[number])
    run = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env={**os.environ, "MPLBACKEND": "Agg"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, f"README snippet {number}:\n{SNIPPETS[number]}\n{run.stderr}"


def module_table() -> dict[str, str]:
    """The rows of "How the code is organised": path → what the row says about it."""
    section = README.read_text().split("## How the code is organised", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `(pvosimr/[^`]*)` \| (.*) \|$", section, re.M))


def test_every_row_of_the_module_table_exists():
    root = README.parent
    missing = [path for path in module_table() if not (root / path).exists()]
    assert not missing, f"the README's module table names what the tree lacks: {missing}"


def test_every_module_is_in_the_module_table():
    """A module has its own row, or its package has one that names it (``pvosimr/batch/``:
    ``stack``, ``evaluate``, ...)."""
    table = module_table()
    package = README.parent / "pvosimr"
    sources = [*package.rglob("*.py"), *package.rglob("*.cpp")]
    unlisted = []
    for source in sorted(sources):
        path = source.relative_to(README.parent).as_posix()
        folder = source.parent.relative_to(README.parent).as_posix() + "/"
        if path in table:
            continue
        if folder in table and (
            source.stem in ("__init__", "__main__") or f"`{source.stem}`" in table[folder]
        ):
            continue
        unlisted.append(path)
    assert not unlisted, f"modules missing from the README's module table: {unlisted}"
