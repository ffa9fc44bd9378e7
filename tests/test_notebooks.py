"""The notebooks run headless (nbclient, kernel python3, cwd notebooks/) without an error or a
warning, every code cell runs, and each draws its figures and shows its tables and counts.
``notebooks/render.py`` is the same runner, saving outputs.  Minutes each: ``pytest -m slow``."""

import importlib.util
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
GOLDEN = Path(__file__).resolve().parent / "golden" / "opcounts.json"

# What each notebook must show: its figures (one PNG per plt.show()) and, in its text outputs,
# the tables it builds and the operation counts of its default case (tests/golden/opcounts.json).
FIGURES = {"atlas.ipynb": 8, "shadow_hand.ipynb": 6}
TABLES = {
    "atlas.ipynb": (
        "**Branching links N**",
        "| method | from | relative error vs dense truth | max asymmetry |",
        "| μ | cond(G + μI) | Pinocchio C++ damped inverse: relative error |",
        "| Atlas holding a box | relative error vs getConstraintJacobian truth |",
    ),
    "shadow_hand.ipynb": (
        "**Branching links N**",
        "| method | from | relative error vs dense truth | max asymmetry |",
        "| the paper's claim | holds on these counts |",
    ),
}
COUNTED = {"atlas.ipynb": "atlas/feet_4x3d", "shadow_hand.ipynb": "shadow_hand/fingertips_3d"}
"""The case whose counts each notebook's summary lists with its defaults (Fig. 5b, Fig. 6a)."""


def _render():
    spec = importlib.util.spec_from_file_location("notebooks_render", NOTEBOOKS / "render.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _need_models():
    """Skip (with the reason) when Atlas's URDF or the Shadow hand's MJCF is not available."""
    from pvosimr.zoo import sources

    try:
        sources.atlas_urdf_path()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    pytest.importorskip("gymnasium_robotics")


def _text(nb) -> str:
    """Every text output of an executed notebook: printed lines and displayed Markdown."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            parts.append(out.get("data", {}).get("text/markdown", ""))
    return "\n".join(parts)


def test_every_notebook_is_tested():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == sorted(FIGURES)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FIGURES))
def test_notebook_runs_and_shows_its_results(name):
    _need_models()
    render = _render()
    nb, _ = render.execute(NOTEBOOKS / name)
    assert render.problems(nb) == []
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in code), "a code cell did not run"
    figures = sum(
        "image/png" in out.get("data", {}) for cell in code for out in cell.get("outputs", [])
    )
    assert figures == FIGURES[name], f"{name} drew {figures} figures"
    text = _text(nb)
    for table in TABLES[name]:
        assert table in text, f"{name} shows no table {table!r}"
    assert _counts_line(name) in text, f"{name} does not show the counts of {COUNTED[name]}"
    if name == "atlas.ipynb":  # the loop closure: pvosimr right, Pinocchio silently wrong
        errors = dict(
            re.findall(
                r"^\| (pvosimr \(PV-OSIMr\)|pin\.computeDelassusMatrix) \| (\S+) \|$", text, re.M
            )
        )
        assert float(errors["pvosimr (PV-OSIMr)"]) <= 1e-9
        assert float(errors["pin.computeDelassusMatrix"]) > 0.1


def _counts_line(name: str) -> str:
    """How the notebook's summary lists the counts of its default case."""
    c = json.loads(GOLDEN.read_text())[COUNTED[name]]
    if name == "atlas.ipynb":
        return (
            f"PV-OSIMr {c['pv-osimr']:,}, PV-OSIM {c['pv-osim']:,}, EFPA {c['efpa']:,}, "
            f"LTL-OSIM {c['ltl-osim']:,}"
        )
    return "6a: hand: " + ", ".join(f"{a} {c[a]:,}" for a in sorted(c, key=c.get))
