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
