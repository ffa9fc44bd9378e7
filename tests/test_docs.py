"""The README and the documentation site (docs/): every Python snippet runs as written, each in a
fresh interpreter as a user pastes it; the module map names every module; the API pages name
modules that exist; no documented command's ``--out`` rewrites a committed folder unless it says
so.

A snippet runs in the default suite unless the line before its fence is ``<!-- slow: why -->``
(it compiles C, or takes seconds): then in ``pytest -m slow``.  ``mkdocs build --strict``
itself runs in ``.ci/run``.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.parts)]
SNIPPET = re.compile(r"^(?:<!-- (slow)\b[^\n]*-->\n)?```python\n(.*?)^```", re.S | re.M)


def snippets() -> list:
    params = []
    for page in PAGES:
        name = page.relative_to(ROOT).as_posix()
        for number, match in enumerate(SNIPPET.finditer(page.read_text(encoding="utf-8"))):
            marks = [pytest.mark.slow] if match.group(1) else []
            params.append(pytest.param(name, match.group(2), marks=marks, id=f"{name}-{number}"))
    return params


SNIPPETS = snippets()


def test_the_pages_have_snippets():
    pages = {param.values[0] for param in SNIPPETS}
    assert "README.md" in pages and len(SNIPPETS) >= 8, pages


@pytest.mark.parametrize(("page", "code"), SNIPPETS)
def test_snippet_runs_as_written(page, code, tmp_path):
    """A fresh interpreter per snippet: nothing defined by another snippet or by the tests."""
    script = tmp_path / "snippet.py"
    script.write_text(code, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env={**os.environ, "MPLBACKEND": "Agg"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, f"snippet of {page}:\n{code}\n{run.stderr}"


ARCHITECTURE = DOCS / "architecture.md"


def module_table() -> dict[str, str]:
    """The rows of the module map: path → what the row says about it."""
    section = ARCHITECTURE.read_text(encoding="utf-8").split("## Module map", 1)[1]
    section = section.split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `(pvosimr/[^`]*)` \| (.*) \|$", section, re.M))


def test_every_row_of_the_module_map_exists():
    missing = [path for path in module_table() if not (ROOT / path).exists()]
    assert not missing, f"docs/architecture.md's module map names what the tree lacks: {missing}"


def test_every_module_is_in_the_module_map():
    """A module has its own row, or its folder has one that names it (``pvosimr/zoo/``:
    ``registry``, ``robot``, ...)."""
    table = module_table()
    package = ROOT / "pvosimr"
    sources = [*package.rglob("*.py"), *package.rglob("*.cpp")]
    unlisted = []
    for source in sorted(sources):
        path = source.relative_to(ROOT).as_posix()
        folder = source.parent.relative_to(ROOT).as_posix() + "/"
        if path in table:
            continue
        if folder in table and (
            source.stem in ("__init__", "__main__") or f"`{source.stem}`" in table[folder]
        ):
            continue
        unlisted.append(path)
    assert not unlisted, f"modules missing from docs/architecture.md's module map: {unlisted}"


def _exists(dotted: str) -> bool:
    """``pvosimr.a.b`` is a module or package, or ``b`` is defined at the top of module ``a``."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:cut])
        module = base.with_suffix(".py") if not base.is_dir() else base / "__init__.py"
        if module.exists():
            rest = parts[cut:]
            if not rest:
                return True
            text = module.read_text(encoding="utf-8")
            return len(rest) == 1 and bool(
                re.search(rf"^(?:def|class) {rest[0]}\b|^{rest[0]}\b.*=", text, re.M)
            )
    return False


def test_the_api_pages_name_what_exists():
    """Each ``::: pvosimr.…`` of docs/api/ is a module or a top-level name of one (the strict
    build would fail on it; this says which, without building)."""
    names = [
        (page.name, name)
        for page in sorted((DOCS / "api").glob("*.md"))
        for name in re.findall(r"^::: (\S+)", page.read_text(encoding="utf-8"), re.M)
    ]
    assert names
    missing = [(page, name) for page, name in names if not _exists(name)]
    assert not missing, f"API pages name what the package lacks: {missing}"


# ------------------------------------------------------------------------- commands' --out

FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
SHELL = ("", "bash", "sh", "console", "shell")
COMMAND = re.compile(r"(?:^|[\s(])(?:pvosimr|python3?\s+(?:-m\s+pvosimr|\S+\.py))\b.*--out[= ]")
OUT = re.compile(r"--out[= ]([^\s`)]+)")


def _documented_outs() -> list[tuple[str, str, str]]:
    """``(page, command, where)`` for every documented command with ``--out``: each line of a
    shell block (``where``: the line, its comment included) and each inline code span of prose
    (``where``: its paragraph)."""
    found = []
    for page in PAGES:
        name = page.relative_to(ROOT).as_posix()
        text = page.read_text(encoding="utf-8")
        for block in FENCE.finditer(text):
            if block.group(1) in SHELL:
                found += [(name, line, line) for line in block.group(2).splitlines()]
        prose = FENCE.sub("", text)
        for paragraph in re.split(r"\n\s*\n", prose):
            joined = " ".join(paragraph.split())
            found += [(name, span, joined) for span in re.findall(r"`([^`]+)`", joined)]
    return [(n, c, w) for n, c, w in found if COMMAND.search(c)]


def _tracked(path: str) -> bool:
    """Whether git tracks ``path`` or anything below it (relative to the repository's top)."""
    listed = subprocess.run(
        ["git", "ls-files", "--", path], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return bool(listed.stdout.strip())


def test_no_documented_command_writes_into_a_tracked_folder():
    """A command a reader pastes from the repository's top must not rewrite a committed file:
    its ``--out`` names a folder git does not track, unless the sentence (a shell line: its
    comment) says plainly that it rewrites the committed report, a regeneration instruction."""
    commands = _documented_outs()
    assert any("--out" in c for _, c, _ in commands)  # the scan finds the pages' commands
    wrong = [
        f"{page}: `{command}`"
        for page, command, where in commands
        for out in OUT.findall(command)
        if _tracked(out.rstrip(".,;:")) and "committed" not in where
    ]
    assert not wrong, "\n".join(wrong)
