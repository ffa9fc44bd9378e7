"""The notebooks run headless (nbclient, kernel python3, cwd notebooks/) without an error or a
warning, each in under 2 minutes.  ``notebooks/render.py`` is the same runner, saving outputs."""

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
BUDGET_S = 120.0


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


def test_every_notebook_is_tested():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == ["atlas.ipynb", "shadow_hand.ipynb"]


@pytest.mark.parametrize("name", ["atlas.ipynb", "shadow_hand.ipynb"])
def test_notebook_runs_cleanly_and_quickly(name):
    _need_models()
    render = _render()
    nb, seconds = render.execute(NOTEBOOKS / name, timeout=int(BUDGET_S))
    assert render.problems(nb) == []
    assert seconds < BUDGET_S, f"{name} took {seconds:.0f} s (budget {BUDGET_S:.0f} s)"
    figures = sum(
        "image/png" in out.get("data", {}) for cell in nb.cells for out in cell.get("outputs", [])
    )
    assert figures >= 6, f"{name} drew {figures} figures"
