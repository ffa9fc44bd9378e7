"""Random trees with every joint type: every algorithm on every path against the dense truth.

Each tree is drawn from a seed (structure and numbers), so a failure names a seed and a
:class:`~_trees.TreeSpec` that rebuild it.  The default run checks a fast subset; the slow run
(``pytest -m slow``) checks 2,000 trees: numpy and batched numpy for every algorithm at two
configurations each, the CasADi function (evaluated numerically) for one algorithm on every
tenth tree, all at ``max|ΔG| / max(1, max|G|) ≤ 1e-9``.  On every fourth tree up to two of
the 1-DoF joints become mimic joints (:func:`_trees.add_mimics`); their truth is Pinocchio's on
the tree without them, reduced (:func:`_trees.reduced_truth`).
"""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pinocchio as pin
import pytest
from _trees import (
    DEFAULT_JOINT_TYPES,
    TreeSpec,
    add_mimics,
    build_tree,
    drawn_plan,
    drawn_shape,
    random_q,
    reduced_truth,
)

import pvosimr
from pvosimr import compute_delassus_batch
from pvosimr.reference.truth import TOLERANCE, dense_delassus, rel_err

TOL = TOLERANCE
SLOW_TREES = 2000
CASADI_EVERY = 10
MIMIC_EVERY = 4
HAS_MIMIC = "JointModelMimic" in pvosimr.SUPPORTED_JOINTS  # from pin 3.8 on
EVERY_TYPE = {*DEFAULT_JOINT_TYPES, *(["Mimic"] if HAS_MIMIC else [])}


def random_spec(seed: int) -> TreeSpec:
    """A depth-first tree of 1-12 joints of uniformly drawn kinds (a free-flyer root one time
    in three), 0-5 constraints of random type on random joints, armature one time in two."""
    rng = np.random.default_rng(seed)
    parents, kinds, constraints = drawn_shape(rng, (1, 13), (0, 6))
    return TreeSpec(parents, kinds, constraints, bool(rng.random() < 0.5), seed)


def _kinds_in(model: pin.Model) -> set[str]:
    """Every joint type in ``model``, composites' contents included."""

    def walk(joint) -> set[str]:
        kind = joint.shortname().removeprefix("JointModel")
        if kind != "Composite":
            return {kind}
        return {kind}.union(*(walk(sub) for sub in joint.extract().joints))

    return set().union(*(walk(j) for j in model.joints[1:]))


def check_tree(seed: int, casadi: bool, drawn: bool = False) -> tuple[dict[str, float], pin.Model]:
    """Every algorithm, numpy and batched, at two configurations; the worst error per path.
    ``drawn``: PV-OSIMh on a drawn plan (:func:`_trees.drawn_plan`), not always the rule's."""
    spec = random_spec(seed)
    relaxed, cms = build_tree(spec)
    rng = np.random.default_rng(seed + 1)
    count = 2 if HAS_MIMIC and seed % MIMIC_EVERY == 0 else 0
    model, cms, pairs = add_mimics(relaxed, cms, rng, count)
    if drawn:
        drawn_plan(model, cms, seed)
    qs = np.array([random_q(model, rng) for _ in range(2)])
    truths = [
        reduced_truth(model, cms, relaxed, pairs, q) if pairs else dense_delassus(model, q, cms)
        for q in qs
    ]
    data = model.createData()
    worst = {"numpy": 0.0, "batch": 0.0, "casadi": 0.0}
    for algorithm in pvosimr.ALGORITHMS:
        batch = compute_delassus_batch(model, qs, cms, algorithm=algorithm)
        for b, (q, truth) in enumerate(zip(qs, truths, strict=True)):
            G = pvosimr.compute_delassus(model, data, q, cms, algorithm=algorithm)
            errors = {"numpy": rel_err(G, truth), "batch": rel_err(batch[b], truth)}
            for path, err in errors.items():
                assert err <= TOL, f"{algorithm} {path}: {err:.2e} on seed {seed}: {spec}"
                worst[path] = max(worst[path], err)
    if casadi and cms:
        from pvosimr.symbolic import delassus_function

        algorithm = pvosimr.ALGORITHMS[seed % len(pvosimr.ALGORITHMS)]
        f = delassus_function(model, cms, algorithm)
        for q, truth in zip(qs, truths, strict=True):
            err = rel_err(np.array(f(q)), truth)
            assert err <= TOL, f"{algorithm} casadi: {err:.2e} on seed {seed}: {spec}"
            worst["casadi"] = max(worst["casadi"], err)
    return worst, model


def run(seeds: range, drawn: bool = False) -> tuple[dict[str, float], Counter]:
    worst: dict[str, float] = {}
    seen: Counter = Counter()
    for seed in seeds:
        errors, model = check_tree(seed, casadi=seed % CASADI_EVERY == 0, drawn=drawn)
        for path, err in errors.items():
            worst[path] = max(worst.get(path, 0.0), err)
        seen.update(_kinds_in(model))
    return worst, seen


@pytest.mark.slow  # seconds of numpy or CasADi work
def test_random_trees_fast_subset():
    pytest.importorskip("casadi")
    _, seen = run(range(40))
    assert set(seen) >= EVERY_TYPE, EVERY_TYPE - set(seen)


@pytest.mark.slow
@pytest.mark.long  # the oldest pin's run leaves it out (.ci/run)
def test_random_trees_every_joint_type_every_algorithm_every_path():
    pytest.importorskip("casadi")
    start = time.perf_counter()
    worst, seen = run(range(SLOW_TREES), drawn=True)  # the rule's plan on every tenth tree
    elapsed = time.perf_counter() - start
    assert set(seen) >= EVERY_TYPE, EVERY_TYPE - set(seen)
    print(
        f"\n{SLOW_TREES} trees in {elapsed:.0f} s; worst relative error: "
        + ", ".join(f"{path} {err:.2e}" for path, err in worst.items())
        + "\njoint types (trees containing each): "
        + ", ".join(f"{k} {n}" for k, n in sorted(seen.items()))
    )
