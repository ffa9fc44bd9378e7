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
FIGURES = {"atlas.ipynb": 8, "shadow_hand.ipynb": 6, "contact_simulation.ipynb": 2}
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
        "| claim | the paper's statement (its four algorithms) | holds on these counts "
        "| with PV-OSIMh (not in the paper) counted in |",
    ),
    "contact_simulation.ipynb": (
        "| scene | final q: max difference | final v: max difference "
        "| impulses: max difference over 1 s | normal impulse at the end / (m g h) |",
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
    if name == "contact_simulation.ipynb":
        _check_simulation(text)
        return
    assert _counts_line(name) in text, f"{name} does not show the counts of {COUNTED[name]}"
    if name == "atlas.ipynb":  # the loop closure: pvosimr right, Pinocchio silently wrong
        errors = dict(
            re.findall(
                r"^\| (pvosimr \(PV-OSIMr\)|pin\.computeDelassusMatrix) \| (\S+) \|$", text, re.M
            )
        )
        assert float(errors["pvosimr (PV-OSIMr)"]) <= 1e-9
        assert float(errors["pin.computeDelassusMatrix"]) > 0.1
    _check_summary(name, _summary(nb))
    if name == "shadow_hand.ipynb":
        _check_verdicts(text)


def _counts_line(name: str) -> str:
    """How the notebook's summary lists the counts of its default case."""
    c = json.loads(GOLDEN.read_text())[COUNTED[name]]
    if name == "atlas.ipynb":
        return (
            f"PV-OSIMr {c['pv-osimr']:,}, PV-OSIM {c['pv-osim']:,}, EFPA {c['efpa']:,}, "
            f"LTL-OSIM {c['ltl-osim']:,}; beside them PV-OSIMh {c['pv-osimh']:,}"
        )
    return "6a: hand: " + ", ".join(f"{a} {c[a]:,}" for a in sorted(c, key=c.get))


# The summary cell of each notebook, checked number by number against a fresh computation of
# its default case (same seed): a number typed in by hand, or taken from a variable that a
# later cell reused, fails here.
DEFAULT_CASE = {
    "atlas.ipynb": ("atlas", "feet_4x3d"),
    "shadow_hand.ipynb": ("atlas_two_shadow_hands", "fingertips_3d_feet_6d"),
}
"""The robot and preset of each notebook's default parameters (seed 0)."""


def _summary(nb) -> str:
    """The Markdown the last code cell (the summary) displays."""
    last = [cell for cell in nb.cells if cell.cell_type == "code"][-1]
    return "\n".join(out.get("data", {}).get("text/markdown", "") for out in last.outputs)


def _fresh(robot_name: str, preset: str) -> dict:
    """nv, m, rank, condition number and the worst pvosimr error of the case at seed 0."""
    import numpy as np

    import pvosimr
    from pvosimr import zoo
    from pvosimr.reference.truth import dense_delassus, rel_err

    robot = zoo.load(robot_name, preset)
    model, cms = robot.model, robot.constraints
    q = robot.q_random(np.random.default_rng(0))
    truth = dense_delassus(model, q, cms)
    G = {
        a: pvosimr.compute_delassus(model, model.createData(), q, cms, algorithm=a)
        for a in pvosimr.ALGORITHMS
    }
    eig = np.linalg.eigvalsh(G["pv-osimr"])
    return {
        "nv": model.nv,
        "m": G["pv-osimr"].shape[0],
        "rank": int(np.linalg.matrix_rank(G["pv-osimr"], hermitian=True)),
        "cond": eig[-1] / eig[0],
        "worst": max(rel_err(g, truth) for g in G.values()),
    }


def _committed_counts() -> dict[str, dict[str, int]]:
    """``{"fig6/a": {algorithm: ops}, ...}`` of figures/opcounts.csv's robot panels."""
    import csv

    out: dict[str, dict[str, int]] = {}
    with (NOTEBOOKS.parent / "figures" / "opcounts.csv").open() as f:
        for r in csv.DictReader(f):
            out.setdefault(f"{r['figure']}/{r['panel']}", {})[r["algorithm"]] = int(r["ops"])
    return out


def _naive(robot_name: str, preset: str) -> int:
    from pvosimr import zoo
    from pvosimr.symbolic import count_operations

    robot = zoo.load(robot_name, preset)
    return count_operations(robot.model, robot.constraints, "naive")


def _one(pattern: str, text: str) -> tuple[str, ...]:
    found = re.search(pattern, text)
    assert found, f"the summary has no {pattern!r}:\n{text}"
    return found.groups()


def _ops(text: str) -> dict[str, int]:
    """``{name: count}`` of "name 1,234" pairs, each name once."""
    pairs = re.findall(r"([A-Za-z-]+) ([\d,]+\d)", text)
    names = [a for a, _ in pairs]
    assert len(names) == len(set(names)), f"a count shown twice: {text}"
    return {a: int(v.replace(",", "")) for a, v in pairs}


def _check_summary(name: str, summary: str) -> None:
    fresh = _fresh(*DEFAULT_CASE[name])
    nv, m = _one(r"nv = (\d+), m = (\d+)", summary)
    assert (int(nv), int(m)) == (fresh["nv"], fresh["m"])
    rank, of = _one(r"G has rank (\d+) of (\d+)", summary)
    assert (int(rank), int(of)) == (fresh["rank"], fresh["m"])
    (worst,) = _one(r"matches the dense truth to ([0-9.e+-]+\d)", summary)
    assert float(worst) == pytest.approx(fresh["worst"], rel=0.25)
    if name == "atlas.ipynb":
        (line,) = _one(r"Operation counts, the paper's four: (.*)", summary)
        expected = {**json.loads(GOLDEN.read_text())["atlas/feet_4x3d"]}
        expected["naive"] = _naive("atlas", "feet_4x3d")
        labels = {"PV-OSIMr": "pv-osimr", "PV-OSIM": "pv-osim", "EFPA": "efpa"}
        labels |= {"LTL-OSIM": "ltl-osim", "PV-OSIMh": "pv-osimh", "naive": "naive"}
        shown = {labels[k]: v for k, v in _ops(line).items() if k in labels}
        assert shown == expected
        return
    (cond,) = _one(r"condition number ([0-9.e+-]+\d)", summary)
    assert float(cond) == pytest.approx(fresh["cond"], rel=5e-3)
    committed = _committed_counts()
    for panel in "abcd":
        (line,) = _one(rf"\* 6{panel}: [^:]+: (.*) operations", summary)
        shown = _ops(line)
        naive = shown.pop("naive", None)
        assert shown == committed[f"fig6/{panel}"], f"6{panel}"
        if panel == "a":
            assert naive == _naive("shadow_hand", "fingertips_3d")


def _check_verdicts(text: str) -> None:
    """The Shadow-hand notebook's C3 and C4 verdicts are figures/claims.md's."""
    report = (NOTEBOOKS.parent / "figures" / "claims.md").read_text()
    status = dict(re.findall(r"^\| (C\d) \|.*\*\*(PASS|FAIL)\*\* \|$", report, re.M))
    rows = re.findall(r"^\| (C[34]) \| [^|]+ \| (yes|\*\*no\*\*) \|", text, re.M)
    assert sorted({claim for claim, _ in rows}) == ["C3", "C4"]
    for claim, verdict in rows:
        assert (verdict == "yes") == (status[claim] == "PASS"), claim


def _check_simulation(text: str) -> None:
    """Both scenes: the loops on pvosimr's and Pinocchio's G end within 1e-8 of each other,
    and the robot ends up carried by its contacts (normal impulse ≈ its weight over a step)."""
    rows = re.findall(r"^\| (atlas|solo12) \| (\S+) \| (\S+) \| (\S+) \| (\S+) \|$", text, re.M)
    assert sorted(r[0] for r in rows) == ["atlas", "solo12"], rows
    for scene, dq, dv, dl, carried in rows:
        assert max(float(dq), float(dv), float(dl)) <= 1e-8, scene
        assert float(carried) == pytest.approx(1.0, abs=0.01), scene
