"""The CasADi-free cost model (:mod:`pvosimr.cost`) against the counted operations."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from pvosimr import zoo
from pvosimr.algorithms.pv_osimh import cheapest_plan
from pvosimr.cost import (
    ALGORITHM_ORDER,
    StructureBackend,
    cheapest,
    estimate_operations,
    structure_kinematics,
)
from pvosimr.kinematics.frames import model_constants
from pvosimr.topology import Topology

pytest.importorskip("casadi")
from pvosimr.symbolic import count_operations, fold

#: (zoo robot, preset): a hand, a welded chain, a loop closure, a mimic robot with two presets,
#: a planar double pendulum and a 7-DoF arm (small mechanisms, where dead code and folded
#: constants weigh most).
CASES = [
    ("shadow_hand", "fingertips_3d"),
    ("chain_welded_every_k_k4", "welds_6d"),
    ("four_bar", "coupler_rocker_3d"),
    ("panda_mimic", "tool_6d"),
    ("panda_mimic", "fingers_3d"),
    ("double_pendulum_continuous", "com_3d"),
    ("xarm7", "tool_6d"),
]

#: Larger ones (slow suite): a floating humanoid, a branching stem, a chain welded at every link.
LARGE_CASES = [
    ("atlas", "feet_6d"),
    ("stem_b2_L10", "branch_tips_6d"),
    ("chain_welded_every_link_n10", "welds_6d"),
]

#: The estimate is within this fraction of the count (over the zoo: at most 8.7 %, the
#: median 1-4 % depending on the algorithm; CasADi's rewriting of sums with negated terms is
#: not modelled).
TOLERANCE = 0.10

_COUNTS: dict[tuple[str, str, str], int] = {}
_ROBOTS: dict[tuple[str, str], tuple] = {}


def _robot(name: str, preset: str) -> tuple:
    """The zoo robot and its topology, one per case (the estimates are cached on them)."""
    if (name, preset) not in _ROBOTS:
        robot = zoo.load(name, preset)
        _ROBOTS[name, preset] = robot, Topology(robot.model, robot.constraints)
    return _ROBOTS[name, preset]


def _counted(name: str, preset: str, algorithm: str) -> int:
    key = (name, preset, algorithm)
    if key not in _COUNTS:
        robot, _ = _robot(name, preset)
        _COUNTS[key] = count_operations(robot.model, robot.constraints, algorithm)
    return _COUNTS[key]


def _check_estimates(name: str, preset: str) -> None:
    robot, topo = _robot(name, preset)
    for algorithm in ALGORITHM_ORDER:
        counted = _counted(name, preset, algorithm)
        estimate = estimate_operations(robot.model, topo, algorithm, robot.constraints)
        # |counted|: the metric subtracts nnz_in, so a robot whose G reads few inputs counts < 0
        assert abs(estimate - counted) <= TOLERANCE * abs(counted), (algorithm, estimate, counted)


def _check_choice(name: str, preset: str) -> None:
    robot, topo = _robot(name, preset)
    counts = {a: _counted(name, preset, a) for a in ALGORITHM_ORDER}
    choice = cheapest(robot.model, topo, constraint_models=robot.constraints)
    best = min(counts.values())  # 5% of |best|: tiny robots can count below zero
    assert counts[choice] <= best + 0.05 * abs(best), (choice, counts)


@pytest.mark.parametrize(("name", "preset"), CASES)
def test_estimate_is_close_to_the_count(name: str, preset: str) -> None:
    _check_estimates(name, preset)


@pytest.mark.parametrize(("name", "preset"), CASES)
def test_cheapest_is_within_five_percent_of_the_best_count(name: str, preset: str) -> None:
    _check_choice(name, preset)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "preset"), LARGE_CASES)
def test_estimate_and_choice_on_larger_robots(name: str, preset: str) -> None:
    _check_estimates(name, preset)
    _check_choice(name, preset)


def test_dead_code_is_not_counted() -> None:
    """A fixed root link's inertia never reaches G: its constants and the joint kinematics
    of a branch no constraint reads cost nothing (CasADi drops them)."""
    robot, topo = _robot("double_pendulum_continuous", "com_3d")
    for algorithm in ("pv-osimr", "naive"):
        counted = _counted("double_pendulum_continuous", "com_3d", algorithm)
        assert (
            estimate_operations(robot.model, topo, algorithm, robot.constraints) <= 1.06 * counted
        )


def test_pv_osimh_plans_on_the_constraints_placements() -> None:
    """PV-OSIMh's plan reads the numbers of ``K`` (``.a`` of a structure matrix): they are the
    constraints' own placements, so the estimate runs the plan the counted function runs."""
    robot = zoo.load("stem_b2_L10", "branch_tips_6d")
    topo = Topology(robot.model, robot.constraints)
    kin = structure_kinematics(StructureBackend(), robot.model, topo, robot.constraints)
    _, _, K = model_constants(robot.model, topo, robot.constraints)
    for e, k in K.items():
        np.testing.assert_array_equal(kin.K[e].a, fold(k).full())
    structural = cheapest_plan(topo, {e: k.a for e, k in kin.K.items()})
    assert structural.cuts == cheapest_plan(topo, {e: fold(k).full() for e, k in K.items()}).cuts


def test_ties_break_in_the_fixed_order() -> None:
    robot = zoo.load("hector", "base_6d")  # one free body: every algorithm is the same product
    topo = Topology(robot.model, robot.constraints)
    estimates = {
        a: estimate_operations(robot.model, topo, a, robot.constraints) for a in ALGORITHM_ORDER
    }
    lowest = min(estimates.values())
    first = next(a for a in ALGORITHM_ORDER if estimates[a] == lowest)
    assert cheapest(robot.model, topo, constraint_models=robot.constraints) == first
    reordered = tuple(reversed(ALGORITHM_ORDER))
    assert cheapest(robot.model, topo, reordered, robot.constraints) == first


def test_unknown_algorithm_is_refused() -> None:
    robot = zoo.load("double_pendulum_simple", "tip_3d")
    with pytest.raises(ValueError, match="no cost model"):
        estimate_operations(robot.model, Topology(robot.model, robot.constraints), "magic")


def test_the_cost_model_runs_without_casadi() -> None:
    code = (
        "import sys; sys.modules['casadi'] = None\n"
        "from pvosimr import zoo; from pvosimr.topology import Topology\n"
        "from pvosimr.cost import cheapest\n"
        "r = zoo.load('four_bar', 'coupler_rocker_3d')\n"
        "t = Topology(r.model, r.constraints)\n"
        "print(cheapest(r.model, t, constraint_models=r.constraints))\n"
        "assert 'casadi' not in {m.split('.')[0] for m in sys.modules if sys.modules[m]}\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() in ALGORITHM_ORDER


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in zoo.names() if zoo.load(n).model.nv <= 40])
def test_cheapest_on_the_zoo(name: str) -> None:
    for preset in zoo.load(name).presets:
        _check_choice(name, preset)
