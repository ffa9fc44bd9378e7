"""validation/explicit_propagators.py: the ablation claims.md cites computes the same G."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from _trees import fig1_tree, random_q

import pvosimr
from pvosimr import Topology
from pvosimr.algorithms.articulated import JointStep, fold_into_parent, joint_step
from pvosimr.backends import NUMPY
from pvosimr.kinematics.frames import numeric_kinematics
from pvosimr.reference.truth import rel_err

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
    # the swap reached the counted function (which form is cheaper depends on the tree: on this
    # one, with random axes and 6D welds, forming P once beats applying it factored to 6 rows
    # for EFPA and PV-OSIM)
    assert explicit != symbolic.count_operations(model, cms, algorithm)


def _steps():
    """Every joint's numeric :class:`JointStep` on the Fig. 1 tree, as the sweeps make them."""
    model, cms = fig1_tree()
    q = random_q(model, np.random.default_rng(5))
    topo = Topology(model, cms)
    kin = numeric_kinematics(model, model.createData(), q, topo, cms)
    H_A, steps = list(kin.H), []
    for i in reversed(topo.links):
        step = joint_step(NUMPY, kin, H_A, i)
        fold_into_parent(H_A, i, topo.parent[i], step)
        # numpy's one-DoF joints get a step of their own (pvosimr.backends.numpy); the
        # products swapped are the generic JointStep's, the one every counted backend runs
        steps.append(JointStep(B=NUMPY, S=step.S, U=step.U, Dinv=step.Dinv, X=step.X))
    return steps


@pytest.mark.parametrize("name", sorted(ablation.EXPLICIT))
def test_each_explicit_product_equals_the_factored_one(name):
    """Each swapped product, on every joint: the 6×6 propagator the paper forms (Alg. 2 line 8,
    Alg. 3 line 10) and the factored one agree to rounding."""
    rng = np.random.default_rng(3)
    F = rng.standard_normal((6, 4))
    Omega = F @ F.T  # a symmetric 6×6 operand for the congruence
    operand = {"rows_to_parent": F.T, "motion_congruence": Omega}.get(name, F)
    for step in _steps():
        factored = getattr(JointStep, name)(step, operand)
        explicit = ablation.EXPLICIT[name](step, operand)
        assert rel_err(explicit, factored) <= 1e-12, name


@pytest.mark.parametrize("algorithm", ablation.ALGORITHMS)
def test_factored_propagators_are_cheaper_on_the_fig4b_chain(algorithm):
    """Fig. 4b, the case the ablation is about: 1-DoF joints, a 6D weld on every link.  Applied
    through ``S_i`` and ``U_i`` a propagator costs a rank-1 update; formed, a 6×6 product."""
    from pvosimr.zoo import synthetic

    robot = synthetic.chain_welded_every_link(8)
    cms = list(robot.constraints)
    factored = symbolic.count_operations(robot.model, cms, algorithm)
    with ablation.explicit_propagators():
        explicit = symbolic.count_operations(robot.model, cms, algorithm)
    assert factored < explicit
