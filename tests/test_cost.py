"""The CasADi-free cost model (:mod:`pvosimr.cost`, on :mod:`pvosimr.backends.counting`) against
the counted operations."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from _slow import slow_ones

from pvosimr import zoo
from pvosimr.algorithms import pv_osimh, sweeps_for
from pvosimr.algorithms.pv_osimh_plan import PLAN, Plan, candidates, cheapest_plan, plan_prices
from pvosimr.backends.counting import CountingBackend
from pvosimr.choice import ALGORITHM_ORDER, fewest_operations, operation_counts, prepare
from pvosimr.cost import Counter
from pvosimr.kinematics.frames import model_constants
from pvosimr.kinematics.structure import structure_kinematics
from pvosimr.topology import Topology

pytest.importorskip("casadi")
import casadi as ca

from pvosimr.symbolic import count_operations, fold, function_cost

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
#: The cases of :data:`CASES` that take seconds: the slow suite's.
SLOW_CASES = {
    ("shadow_hand", "fingertips_3d"),
    ("chain_welded_every_k_k4", "welds_6d"),
    ("panda_mimic", "tool_6d"),
    ("panda_mimic", "fingers_3d"),
    ("xarm7", "tool_6d"),
}

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
    """The zoo robot and its topology, one per case (PV-OSIMh's plan is kept on it)."""
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
    estimates = operation_counts(robot.model, topo, robot.constraints)
    for algorithm in ALGORITHM_ORDER:
        counted = _counted(name, preset, algorithm)
        # |counted|: the metric subtracts nnz_in, so a robot whose G reads few inputs counts < 0
        estimate = estimates[algorithm]
        assert abs(estimate - counted) <= TOLERANCE * abs(counted), (algorithm, estimate, counted)


def _check_choice(name: str, preset: str) -> None:
    robot, topo = _robot(name, preset)
    counts = {a: _counted(name, preset, a) for a in ALGORITHM_ORDER}
    choice = fewest_operations(robot.model, topo, robot.constraints)
    best = min(counts.values())  # 5% of |best|: tiny robots can count below zero
    assert counts[choice] <= best + 0.05 * abs(best), (choice, counts)


@pytest.mark.parametrize(("name", "preset"), slow_ones(CASES, SLOW_CASES))
def test_estimate_is_close_to_the_count(name: str, preset: str) -> None:
    _check_estimates(name, preset)


@pytest.mark.parametrize(("name", "preset"), slow_ones(CASES, SLOW_CASES))
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
    estimates = operation_counts(robot.model, topo, robot.constraints, ("pv-osimr", "naive"))
    for algorithm, estimate in estimates.items():
        assert estimate <= 1.06 * _counted("double_pendulum_continuous", "com_3d", algorithm)


def test_the_counting_backend_counts_as_casadi_does() -> None:
    """Primitives with zeros, ±1, shared constants, quotients and a symmetric result, counted
    by the counting backend and by CasADi's metric on the same expressions."""

    def expression(B, q, c):
        x = B.vstack([B.hstack([q[0:1, :], q[1:2, :], q[2:3, :]]), B.hstack([q[1:2, :], 0, 5])])
        y = x @ c(np.array([[1.0], [4.0], [0.0]]))  # x00·1 free, x01·4, x10·1 free
        S = x @ x.T  # symmetric: its lower entry never read
        return B.symmetric(S) + B.vstack([y.T, y.T]) - 1 / (q[0:1, :] * c(np.full((1, 1), 3.0)))

    B = CountingBackend()
    counted = B.operations(expression(B, B.symbol(3), B.const))
    q = ca.SX.sym("q", 3)
    G = expression(_Casadi(), q, fold)
    assert counted == function_cost(ca.Function("g", [q], [ca.densify(G)]))


class _Casadi:
    """The few backend methods :func:`test_the_counting_backend_counts_as_casadi_does` uses."""

    vstack = staticmethod(lambda blocks: ca.vertcat(*blocks))
    hstack = staticmethod(lambda blocks: ca.horzcat(*blocks))
    symmetric = staticmethod(lambda a: ca.triu(a) + ca.triu(a, False).T)


@pytest.mark.slow  # seconds (measured)
def test_bodies_counted_on_one_counter_are_counted_alone() -> None:
    """What one body adds to the graph is dropped once it is counted: two bodies counted on one
    :class:`~pvosimr.cost.Counter` count what each counts on its own."""
    robot, topo = _robot("shadow_hand", "fingertips_3d")
    shared = Counter(robot.model, topo, robot.constraints)
    for algorithm in ("pv-osimr", "naive", "pv-osim"):
        alone = Counter(robot.model, topo, robot.constraints).count(sweeps_for(algorithm))
        assert shared.count(sweeps_for(algorithm)) == alone
        assert shared.measure(sweeps_for(algorithm), budget=alone / 10) is None  # past budget


@pytest.mark.parametrize(
    "name, preset",
    slow_ones(
        [("chain_welded_every_k_k4", "welds_6d"), ("panda_mimic", "fingers_3d")],
        {("chain_welded_every_k_k4", "welds_6d")},
    ),
)
def test_bodies_sharing_results_are_counted_alone(name: str, preset: str) -> None:
    """On a counter that shares results between bodies (:meth:`Counter.share`), every plan of
    PV-OSIMh, priced in any order and again, with or without a budget, counts what it counts on
    a counter rewound after each body; so does a body that makes the same products twice."""
    robot = zoo.load(name, preset)
    topo = Topology(robot.model, robot.constraints)
    links = sorted(candidates(topo))
    plans = [
        frozenset(c for k, c in enumerate(links) if s >> k & 1) for s in range(2 ** len(links))
    ]
    plans = [plans[k] for k in np.random.default_rng(7).permutation(len(plans))]
    plans += plans[:3]  # taken again
    counters = {}
    for sharing in (False, True):
        counter = Counter(robot.model, topo, robot.constraints)
        steps = counter.keep(pv_osimh.joint_steps)
        if sharing:
            counter.share()
        counters[sharing] = counter, steps

    def priced(sharing: bool, cuts: frozenset, budget: float = math.inf, twice: bool = False):
        counter, steps = counters[sharing]
        plan = Plan.build(topo, cuts)

        def body(B, t, kin):
            G = pv_osimh._sweeps(B, t, kin, plan, steps)
            return G + pv_osimh._sweeps(B, t, kin, plan, steps) if twice else G

        return counter.measure(body, budget)

    shared_bodies = 0
    for k, cuts in enumerate(plans):
        alone = priced(False, cuts)
        shared_bodies += counters[True][0].B.graph.shared is not None
        assert priced(True, cuts) == alone, sorted(cuts)
        for budget in (alone.made, alone.made - 1):  # at the bound, just past it
            assert priced(True, cuts, budget) == priced(False, cuts, budget), (sorted(cuts), budget)
        if k < 2:
            assert priced(True, cuts, twice=True) == priced(False, cuts, twice=True), sorted(cuts)
    assert shared_bodies >= len(plans) // 2  # the plans shared (until it stopped paying)


def test_sharing_stops_where_it_does_not_pay() -> None:
    """Bodies that share nothing (other algorithms) stop the sharing after the second: the
    graph is rewound to the prefix, and every count is still the body's alone."""
    robot, topo = _robot("shadow_hand", "fingertips_3d")
    shared = Counter(robot.model, topo, robot.constraints)
    shared.share()
    for algorithm in ("pv-osimr", "naive", "ltl-osim", "pv-osimr"):
        alone = Counter(robot.model, topo, robot.constraints).measure(sweeps_for(algorithm))
        assert shared.measure(sweeps_for(algorithm)) == alone, algorithm  # made included
    assert shared.B.graph.shared is None


@pytest.mark.slow  # seconds (measured)
def test_pv_osimh_plans_on_the_constraints_placements() -> None:
    """The counting backend's ``K`` are the constraints' own placements, folded as CasADi folds
    them, and the entry points make PV-OSIMh's plan from them: on the chain welded every four
    links generic placements would cut one more link."""
    robot = zoo.load("chain_welded_every_k_k4", "welds_6d")
    topo = Topology(robot.model, robot.constraints)
    kin = structure_kinematics(CountingBackend(), robot.model, topo, robot.constraints)
    _, _, K = model_constants(robot.model, topo, robot.constraints)
    for e, k in K.items():
        np.testing.assert_array_equal(kin.K[e].a, fold(k).full())
    prepare("pv-osimh", robot.model, topo, robot.constraints)
    planned = topo.prepared(PLAN, lambda t: pytest.fail("the plan was not prepared"))
    counter = Counter(topo.model, topo)
    generic = cheapest_plan(topo, plan_prices(counter, pv_osimh._sweeps, pv_osimh.joint_steps))
    assert planned.cuts == {8, 12} and generic.cuts == {4, 8, 12}


def test_ties_break_in_the_fixed_order() -> None:
    robot = zoo.load("hector", "base_6d")  # one free body: every algorithm is the same product
    topo = Topology(robot.model, robot.constraints)
    estimates = operation_counts(robot.model, topo, robot.constraints)
    lowest = min(estimates.values())
    first = next(a for a in ALGORITHM_ORDER if estimates[a] == lowest)
    assert fewest_operations(robot.model, topo, robot.constraints) == first
    reordered = tuple(reversed(ALGORITHM_ORDER))
    assert fewest_operations(robot.model, topo, robot.constraints, reordered) == first


def test_unknown_algorithm_is_refused() -> None:
    robot = zoo.load("double_pendulum_simple", "tip_3d")
    topo = Topology(robot.model, robot.constraints)
    with pytest.raises(ValueError, match="unknown algorithm 'magic'"):
        operation_counts(robot.model, topo, robot.constraints, ("magic",))


@pytest.mark.slow  # seconds (measured)
def test_the_cost_model_runs_without_casadi() -> None:
    code = (
        "import sys; sys.modules['casadi'] = None\n"
        "from pvosimr import zoo; from pvosimr.topology import Topology\n"
        "from pvosimr.choice import fewest_operations\n"
        "r = zoo.load('four_bar', 'coupler_rocker_3d')\n"
        "t = Topology(r.model, r.constraints)\n"
        "print(fewest_operations(r.model, t, r.constraints))\n"
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
