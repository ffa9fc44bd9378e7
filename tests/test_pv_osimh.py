"""PV-OSIMh (:mod:`pvosimr.algorithms.pv_osimh`): every plan gives the same G, the chosen plan
never counts more than PV-OSIM or PV-OSIMr, and ``algorithm="auto"``.

The plan (the cut links) only decides what is computed: every subset of the branching links
must give the truth's G, on trees with every joint type and constraint kind.  The rule picks
the plan by the cost model's estimate (:mod:`pvosimr.cost`); by CasADi's count it must never
be dearer than either extreme, on random trees and on the robots where PV-OSIM and PV-OSIMr
trade places.
"""

from __future__ import annotations

import itertools

import numpy as np
import pinocchio as pin
import pytest
from _slow import slow_ones
from _trees import drawn_mixed_tree, random_q

import pvosimr
from pvosimr.algorithms import pv_osimh, sweeps_for
from pvosimr.algorithms.pv_osimh_plan import Plan, candidates, set_plan
from pvosimr.backends import NUMPY
from pvosimr.kinematics.frames import numeric_kinematics
from pvosimr.reference.truth import TOLERANCE, dense_delassus, rel_err
from pvosimr.topology import Topology


def mixed_tree(seed: int) -> tuple[pin.Model, list]:
    """2-14 joints of every kind, 2-6 constraints of every kind, drawn from ``seed``."""
    return drawn_mixed_tree(np.random.default_rng(seed), seed, (2, 15), (2, 7))


def every_plan(topo: Topology, limit: int = 16):
    """Every subset of the branching links (the first ``limit`` of them, by size)."""
    links = sorted(candidates(topo))
    subsets = itertools.chain.from_iterable(
        itertools.combinations(links, k) for k in range(len(links) + 1)
    )
    for cuts in itertools.islice(subsets, limit):
        yield Plan.build(topo, frozenset(cuts))


def sweep(model, cms, q, plan: Plan) -> np.ndarray:
    """G by PV-OSIMh with ``plan``, through the same reduction and combination as every call."""
    topo = Topology(model, cms)
    set_plan(topo, Plan.build(topo, plan.cuts))
    kin = numeric_kinematics(model, model.createData(), q, topo, cms)
    return sweeps_for("pv-osimh")(NUMPY, topo, kin)


@pytest.mark.parametrize("seed", range(16))
def test_every_plan_gives_the_truth(seed):
    model, cms = mixed_tree(seed)
    q = random_q(model, np.random.default_rng(seed))
    truth = dense_delassus(model, q, cms)
    topo = Topology(model, cms)
    for plan in every_plan(topo):
        G = sweep(model, cms, q, plan)
        assert rel_err(G, truth) <= TOLERANCE, (seed, sorted(plan.cuts))


def test_a_plan_refuses_a_link_that_does_not_branch():
    model, cms = mixed_tree(3)
    topo = Topology(model, cms)
    plain = next(i for i in topo.links if i not in candidates(topo))
    with pytest.raises(ValueError, match="not branching links"):
        Plan.build(topo, frozenset({plain}))


@pytest.mark.parametrize("seed", slow_ones(range(12), {2, 5}))
def test_the_rule_never_counts_more_than_either_extreme(seed):
    """The plan the cost model picks, counted by CasADi, against PV-OSIMh cutting nothing
    (PV-OSIM's shape) and cutting every branching link (PV-OSIMr's)."""
    from pvosimr.symbolic import CASADI, SX, ca, function_cost, symbolic_kinematics

    model, cms = mixed_tree(100 + seed)
    topo = Topology(model, cms)
    chosen = pv_osimh.prepare_plan(topo, model, cms)
    q = SX.sym("q", model.nq)
    kin = symbolic_kinematics(model, q, topo, cms)

    def counted(plan: Plan) -> int:
        G = pv_osimh.pv_osimh_sweeps(CASADI, topo, kin, plan)
        return function_cost(ca.Function("G", [q], [ca.densify(G)]))

    extremes = [Plan.build(topo, frozenset()), Plan.build(topo, candidates(topo))]
    assert counted(chosen) <= min(counted(p) for p in extremes), sorted(chosen.cuts)


def test_a_plan_is_set_before_the_first_call_only():
    model, cms = mixed_tree(3)
    topo = Topology(model, cms)
    set_plan(topo, Plan.build(topo, frozenset()))
    with pytest.raises(ValueError, match="has its plan already"):
        set_plan(topo, Plan.build(topo, candidates(topo)))


# The cases where PV-OSIM and PV-OSIMr trade places (``figures/opcounts.csv``) and where mixing
# the two should beat both (Atlas's four 3D foot contacts, a short chain welded at every link).
COUNTED = [
    ("atlas", "feet_6d", False),
    ("atlas", "feet_4x3d", True),
    ("atlas", "hands_feet_6d", False),
    ("shadow_hand", "fingertips_3d", False),
    ("chain_welded_every_link_n8", None, True),
    ("stem_b2_L10", None, False),
]


@pytest.mark.slow  # CasADi graphs of Atlas: seconds each
@pytest.mark.parametrize(("name", "preset", "strictly_both"), COUNTED)
def test_casadi_counts_never_above_pv_osim_or_pv_osimr(name, preset, strictly_both):
    from pvosimr import zoo
    from pvosimr.symbolic import count_operations

    robot = zoo.load(name, preset)
    counts = {
        a: count_operations(robot.model, robot.constraints, a)
        for a in ("pv-osim", "pv-osimr", "pv-osimh")
    }
    assert counts["pv-osimh"] <= min(counts["pv-osim"], counts["pv-osimr"]), counts
    if strictly_both:  # mixing cuts and carried rows: well below both
        assert counts["pv-osimh"] < 0.9 * min(counts["pv-osim"], counts["pv-osimr"]), counts


@pytest.mark.parametrize("seed", range(3))
def test_auto_is_an_algorithm_and_gives_the_truth(seed):
    model, cms = mixed_tree(200 + seed)
    q = random_q(model, np.random.default_rng(seed))
    chosen = pvosimr.choose_algorithm(model, cms)
    assert chosen in pvosimr.ALGORITHMS
    G = pvosimr.compute_delassus(model, model.createData(), q, cms, algorithm="auto")
    assert rel_err(G, dense_delassus(model, q, cms)) <= TOLERANCE
    Gb = pvosimr.compute_delassus_batch(model, q[None], cms, algorithm="auto")
    assert rel_err(Gb[0], G) <= TOLERANCE


@pytest.mark.slow  # CasADi graphs of Atlas
def test_auto_names_its_choice_in_the_casadi_function():
    from pvosimr import zoo
    from pvosimr.symbolic import delassus_function

    robot = zoo.load("atlas", "feet_4x3d")
    chosen = pvosimr.choose_algorithm(robot.model, robot.constraints, path="casadi")
    f = delassus_function(robot.model, robot.constraints, "auto")
    assert f.name() == f"delassus_{chosen.replace('-', '_')}"


@pytest.mark.slow  # seconds (measured)
def test_a_slow_first_choice_says_what_it_is_doing(capfd, monkeypatch):
    """PV-OSIMh's plan pricing and auto's choice run once per topology; past SLOW_SECONDS
    each says so in one line on stderr, and a later call (or PVOSIMR_QUIET) says nothing."""
    from pvosimr import notices

    model, cms = mixed_tree(3)
    assert candidates(Topology(model, cms))
    q, data = random_q(model, np.random.default_rng(0)), model.createData()
    monkeypatch.delenv(notices.QUIET_VARIABLE, raising=False)
    monkeypatch.setattr(notices, "SLOW_SECONDS", 0.0)
    capfd.readouterr()
    pvosimr.compute_delassus(model, data, q, cms, algorithm="pv-osimh")
    pvosimr.compute_delassus(model, data, q, cms, algorithm="auto")
    said = capfd.readouterr().err.splitlines()
    assert said[0].startswith("pvosimr: PV-OSIMh: pricing cut plans for this topology")
    assert said[-1].startswith("pvosimr: auto: timing the six algorithms on this topology")
    pvosimr.compute_delassus(model, data, q, cms, algorithm="auto")
    assert capfd.readouterr().err == ""
    monkeypatch.setenv(notices.QUIET_VARIABLE, "1")
    pvosimr.compute_delassus(model, data, q, [*cms[1:], cms[0]], algorithm="pv-osimh")
    assert capfd.readouterr().err == ""
