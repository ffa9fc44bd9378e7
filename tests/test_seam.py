"""The seam: no backend code in the paper's algorithms (:mod:`pvosimr.algorithms`).

Every algorithm body runs on every backend through :mod:`pvosimr.backends.protocol`: the
:class:`~pvosimr.backends.protocol.Backend` protocol and its hooks, whose generic forms are the
paper's products and whose backends' own forms are where a backend is faster.  So no module of
``algorithms/`` may import a backend (numpy's, the stacks', CasADi's, the counting one) or
CasADi, test which backend it runs on (``B is NUMPY``, ``B.name == ...``, ``type(B)``), or probe a
backend or a matrix (``getattr``, ``hasattr``, ``isinstance``, ``type``).  Imports inside
functions count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pvosimr.backends import protocol

ALGORITHMS = Path(__file__).resolve().parents[1] / "pvosimr" / "algorithms"

#: What an algorithm may take from the backends: the protocol module and what it defines.
SEAM = {"protocol", *protocol.__all__}

PROBES = {"getattr", "hasattr", "isinstance", "issubclass", "type", "vars"}

#: Attributes that tell one backend from another (its name, its class).
IDENTITY = {"name", "__class__", "__dict__", "__module__"}


def _module(path: Path) -> str:
    return f"pvosimr.algorithms.{path.stem}" if path.stem != "__init__" else "pvosimr.algorithms"


def _absolute(node: ast.ImportFrom, module: str) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if module == "pvosimr.algorithms" else module.split(".")[:-1]
    anchor = package[: len(package) - (node.level - 1)]
    return ".".join(anchor + ([node.module] if node.module else []))


def _backend_names(tree: ast.AST) -> set[str]:
    """``B`` and every parameter annotated as a :class:`Backend`."""
    names = {"B"}
    for node in ast.walk(tree):
        annotation = node.annotation if isinstance(node, ast.arg) else None
        if annotation is not None and "Backend" in ast.unparse(annotation):
            names.add(node.arg)
    return names


def _is_backend(node: ast.AST, names: set[str]) -> bool:
    """``B`` (or another backend parameter), or ``something.B``."""
    return (isinstance(node, ast.Name) and node.id in names) or (
        isinstance(node, ast.Attribute) and node.attr == "B"
    )


def seam_violations(source: str, module: str) -> list[str]:
    """What in ``source`` (module ``module`` of ``algorithms/``) is backend code, one line
    each."""
    tree = ast.parse(source)
    backends = _backend_names(tree)
    found: list[str] = []

    def say(node: ast.AST, what: str) -> None:
        found.append(f"{module}:{node.lineno}: {what}: {ast.unparse(node)[:80]}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                if name.split(".")[0] == "casadi":
                    say(node, "imports CasADi")
                elif name.startswith("pvosimr.backends.") and name != "pvosimr.backends.protocol":
                    say(node, "imports a backend")
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module)
            if base.split(".")[0] == "casadi":
                say(node, "imports CasADi")
            elif base == "pvosimr.backends":
                for alias in node.names:
                    if alias.name not in SEAM:
                        say(node, f"imports {alias.name} from the backends, not the protocol")
            elif base.startswith("pvosimr.backends.") and base != "pvosimr.backends.protocol":
                say(node, "imports a backend")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in PROBES:
            say(node, f"probes with {node.func.id}")
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_is_backend(x, backends) for x in operands) or any(
                isinstance(x, ast.Attribute)
                and x.attr in IDENTITY
                and _is_backend(x.value, backends)
                for x in operands
            ):
                say(node, "tests which backend it runs on")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in IDENTITY
            and _is_backend(node.value, backends)
        ):
            say(node, "reads which backend it runs on")
    return sorted(set(found))


@pytest.mark.parametrize("path", sorted(ALGORITHMS.glob("*.py")), ids=lambda p: p.name)
def test_no_backend_code_in_the_algorithms(path):
    violations = seam_violations(path.read_text(), _module(path))
    assert not violations, "backend code in algorithms/:\n" + "\n".join(violations)


@pytest.mark.parametrize(
    "snippet",
    [
        "from ..backends import NUMPY",
        "from ..backends.numpy import NUMPY",
        "from ..backends import numpy",
        "from ..backends.counting import CountingBackend",
        "from ..backends.batched import MatrixStack",
        "import pvosimr.backends.casadi",
        "import casadi as ca",
        "def f(B):\n    if B is NUMPY:\n        pass",
        "def f(props):\n    if props.B is not CASADI:\n        pass",
        "def f(B):\n    return B.name == 'numpy'",
        "def f(backend: Backend):\n    return type(backend).__name__",
        "def f(B):\n    return getattr(B, 'operations', None)",
        "def f(K):\n    return hasattr(K, 'a')",
        "def f(K):\n    return isinstance(K, list)",
        "def f():\n    from ..backends import numpy\n",
    ],
)
def test_the_seam_check_finds_backend_code(snippet):
    assert seam_violations(snippet, "pvosimr.algorithms.example")


def test_the_seam_check_lets_the_protocol_through():
    source = (
        "from ..backends import Backend, Matrix, protocol as seam\n"
        "from ..backends.protocol import JointStep, joint_step, rows_through\n"
        "def f(B: Backend, step: JointStep):\n"
        "    if step is None:\n"
        "        return seam.rows_through(B, step.rows_to_parent, [])\n"
    )
    assert seam_violations(source, "pvosimr.algorithms.example") == []
