"""The package's import graph: no cycle, and the library never reaches into the study apps.

Every ``import``/``from ... import`` in every module counts, also those inside functions (a lazy
import that closes a loop is still a loop for the reader).  An edge goes to the imported module,
or to the submodule when ``from package import name`` names one.
"""

import ast
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pvosimr"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported(path: Path, name: str, known: set[str]) -> set[str]:
    """The pvosimr modules that ``path`` (module ``name``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)
    return {m for m in found if m in known}


@cache
def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imported(path, name, set(mods)) - {name} for name, path in mods.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(edges[m]):
            if state.get(n) == 1:
                return [*stack[stack.index(n) :], n]
            if n not in state and (cycle := visit(n)):
                return cycle
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state and (cycle := visit(m)):
            return cycle
    return None


def test_the_package_has_no_import_cycle():
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_a_cycle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert find_cycle(edges) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_relative_and_submodule_imports_resolve(tmp_path):
    known = {"pvosimr", "pvosimr.x", "pvosimr.study", "pvosimr.study.figures"}
    source = "from .. import x\nfrom . import figures\nfrom pvosimr import compute_delassus\n"
    path = tmp_path / "cli.py"
    path.write_text(source)
    assert imported(path, "pvosimr.study.cli", known) == {
        "pvosimr.x",
        "pvosimr.study.figures",
        "pvosimr",
    }


ENTRY_POINTS = {"pvosimr.__main__"}  # ``python -m pvosimr`` runs the command line


@pytest.mark.parametrize(
    "name", [m for m in modules() if not m.startswith("pvosimr.study") and m not in ENTRY_POINTS]
)
def test_the_library_does_not_import_the_study_apps(name):
    edges = graph()
    assert not {m for m in edges[name] if m.startswith("pvosimr.study")}, (
        f"{name} imports the study apps"
    )
