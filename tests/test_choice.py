"""``algorithm="auto"`` (:mod:`pvosimr.choice`): one choice per topology and path, each by the
path's own cost."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest
from _slow import slow_ones

import pvosimr
from pvosimr import choice, zoo
from pvosimr.algorithms.pv_osimh_plan import PLAN
from pvosimr.checks import topology_for
from pvosimr.topology import Topology


def _robot(name: str = "panda_mimic", preset: str = "tool_6d"):
    robot = zoo.load(name, preset)
    return robot.model, list(robot.constraints)


def test_names_pass_through_and_paths_are_checked():
    model, cms = _robot()
    topo = Topology(model, cms)
    assert choice.resolve_algorithm("efpa", model, topo, cms, "numpy") == "efpa"
    with pytest.raises(ValueError, match="path must be one of"):
        choice.resolve_algorithm("auto", model, topo, cms, "gpu")


@pytest.mark.parametrize("path", slow_ones(choice.PATHS, {"casadi"}))
def test_the_choice_is_made_once_per_topology_and_path(path):
    model, cms = _robot()
    topo = Topology(model, cms)
    chosen = choice.resolve_algorithm("auto", model, topo, cms, path)
    assert chosen in pvosimr.ALGORITHMS
    kept = topo.prepared((choice.AUTO, path), lambda t: pytest.fail("decided again"))
    assert kept == chosen == choice.resolve_algorithm("auto", model, topo, cms, path)


def test_choose_algorithm_and_the_calls_share_the_cached_topology():
    model, cms = _robot("four_bar", "coupler_rocker_3d")
    chosen = pvosimr.choose_algorithm(model, cms)
    topo = topology_for(model, cms)
    assert topo.prepared((choice.AUTO, "numpy"), lambda t: pytest.fail("not kept")) == chosen
    q = pin.neutral(model)
    G = pvosimr.compute_delassus(model, model.createData(), q, cms, algorithm="auto")
    own = pvosimr.compute_delassus(model, model.createData(), q, cms, algorithm=chosen)
    np.testing.assert_array_equal(G, own)


@pytest.mark.slow  # seconds of numpy or CasADi work
def test_the_casadi_path_takes_the_fewest_operations():
    model, cms = _robot()
    topo = Topology(model, cms)
    expected = choice.fewest_operations(model, topo, cms)
    assert choice.choose_algorithm(model, cms, topo, path="casadi") == expected


def test_the_numpy_paths_take_the_fastest_call(monkeypatch):
    """The timing keeps each algorithm's fastest call and drops the slow ones after the first
    rounds: with made-up times, the fastest is chosen and a dropped one is called no more."""
    model, cms = _robot()
    seconds = {"pv-osimr": 3.0, "pv-osim": 2.0, "efpa": 2.1, "naive": 9.0}
    calls = dict.fromkeys(pvosimr.ALGORITHMS, 0)

    def timed(run, body):
        name = next(a for a in pvosimr.ALGORITHMS if body.__name__ == _stem(a))
        calls[name] += 1
        return seconds.get(name, 5.0)

    monkeypatch.setattr(choice, "_timed", timed)
    for path in ("numpy", "batch"):
        calls.update(dict.fromkeys(calls, 0))
        assert choice.fastest_call(model, Topology(model, cms), cms, path) == "pv-osim"
        assert calls["naive"] == 1 + choice.PRUNE_AFTER  # the first call, then pruned
        assert calls["efpa"] == 1 + choice.ROUNDS[path]


@pytest.mark.slow  # seconds of numpy or CasADi work
def test_every_failed_timing_falls_back_on_the_fewest_operations(monkeypatch):
    model, cms = _robot()
    topo = Topology(model, cms)
    failed = []  # the timings the stand-in failed: it was the one the choice ran
    monkeypatch.setattr(choice, "_timed", lambda run, body: failed.append(body) or math.inf)
    assert choice.fastest_call(model, topo, cms, "numpy") == choice.fewest_operations(
        model, topo, cms
    )
    assert failed


def test_resolving_pv_osimh_prepares_its_plan_from_the_constraints():
    model, cms = _robot()
    topo = Topology(model, cms)
    assert choice.resolve_algorithm("pv-osimh", model, topo, cms, "numpy") == "pv-osimh"
    topo.prepared(PLAN, lambda t: pytest.fail("no plan prepared"))


def _stem(algorithm: str) -> str:
    return algorithm.replace("-", "_") + "_sweeps"
