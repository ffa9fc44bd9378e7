"""validation/fig4b_breakdown.py: the stage split claims.md cites for C8 adds up."""

import importlib.util
import sys
from pathlib import Path

import pytest

from pvosimr.zoo import synthetic

symbolic = pytest.importorskip("pvosimr.symbolic")

_SCRIPT = Path(__file__).parents[1] / "validation" / "fig4b_breakdown.py"
_spec = importlib.util.spec_from_file_location("fig4b_breakdown", _SCRIPT)
ablation = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = ablation  # dataclasses look their module up there
_spec.loader.exec_module(ablation)


@pytest.mark.parametrize("skew", ablation.SKEWS)
def test_stages_add_up_to_the_count(skew: float) -> None:
    robot = synthetic.chain_welded_every_link(6, skew=skew)
    pv, ef = ablation.breakdown(robot)
    for part, algorithm in ((pv, "pv-osimr"), (ef, "efpa")):
        assert part.total == symbolic.count_operations(robot.model, robot.constraints, algorithm)
        assert all(ops >= 0 for ops in part.stages.values()), part
    # each EE's weld sits at its link frame: K_i = I, so EFPA's line 19 is free on this chain
    assert list(ef.stages.values())[-1] == 0
    assert all(ops > 0 for ops in pv.stages.values())


def test_report(tmp_path: Path) -> None:
    out = tmp_path / "breakdown.md"
    assert ablation.main(["--sizes", "3", "--out", str(out)]) == 0
    text = out.read_text()
    assert "n = 3, planar (reference)" in text and "n = 3, spatial, skew 1 rad" in text
    assert text.count("| PV-OSIMr |") == text.count("| EFPA |") == 6
