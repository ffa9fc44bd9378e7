"""validation/explicit_propagators.py: the ablation claims.md cites computes the same G."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from _trees import fig1_tree, random_q

import pvosimr
from pvosimr.algorithms.articulated import JointStep

symbolic = pytest.importorskip("pvosimr.symbolic")

_SCRIPT = Path(__file__).parents[1] / "validation" / "explicit_propagators.py"
_spec = importlib.util.spec_from_file_location("explicit_propagators", _SCRIPT)
ablation = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ablation)


@pytest.mark.parametrize("algorithm", ablation.ALGORITHMS)
def test_explicit_propagators_give_the_same_matrix(algorithm):
    model, cms = fig1_tree()
    q = random_q(model, np.random.default_rng(11))
    expected = pvosimr.compute_delassus(model, model.createData(), q, cms, algorithm=algorithm)
    factored = JointStep.rows_to_parent
    with ablation.explicit_propagators():
        assert JointStep.rows_to_parent is not factored
        G = np.array(symbolic.delassus_function(model, cms, algorithm)(q))
        explicit = symbolic.count_operations(model, cms, algorithm)
    assert JointStep.rows_to_parent is factored  # the library is left as it was
    assert np.abs(G - expected).max() / np.abs(expected).max() <= 1e-10
    # other arithmetic (cheaper or dearer depends on the tree: on this one, with random axes and
    # 6D welds, forming P once beats applying it factored to 6 rows for EFPA and PV-OSIM)
    assert explicit != symbolic.count_operations(model, cms, algorithm)
