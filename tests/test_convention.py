"""The paper authors' counting convention: turned frames and 6×6 transforms, same G."""

import numpy as np
import pinocchio as pin
import pytest

import pvosimr
from pvosimr.zoo import synthetic

ca = pytest.importorskip("casadi")
convention = pytest.importorskip("pvosimr.study.figures.convention")
symbolic = pytest.importorskip("pvosimr.symbolic")

ALGORITHMS = ("pv-osimr", "pv-osim", "efpa")


@pytest.fixture(scope="module")
def stem():
    return synthetic.stem_with_branches(3, 2)


def test_autotree_frames_turn_every_joint_off_the_world_and_nothing_else(stem):
    model = stem.model
    before = [pin.SE3(M) for M in model.jointPlacements]
    turned = convention.autotree_frames(model, 0.7)
    R = pin.utils.rotate("x", 0.7)
    for i in range(1, model.njoints):
        M, T = model.jointPlacements[i], turned.jointPlacements[i]
        expected = M.rotation if model.parents[i] == 0 else M.rotation @ R
        np.testing.assert_allclose(T.rotation, expected, atol=1e-15)
        np.testing.assert_array_equal(T.translation, M.translation)
        assert turned.inertias[i] == model.inertias[i]
        assert turned.joints[i].shortname() == model.joints[i].shortname()
    assert list(turned.parents) == list(model.parents)
    assert all(M == B for M, B in zip(model.jointPlacements, before, strict=True))  # a copy


def test_autotree_frames_reject_a_non_finite_angle(stem):
    with pytest.raises(ValueError, match="finite"):
        convention.autotree_frames(stem.model, float("nan"))


def test_paper_mechanism_keeps_the_constraints(stem):
    paper = convention.paper_mechanism(stem)
    assert paper.name == f"{stem.name}_autotree"
    assert paper.constraints is stem.constraints
    assert paper.m == stem.m
    assert not np.allclose(
        paper.model.jointPlacements[2].rotation, stem.model.jointPlacements[2].rotation
    )


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_dense_transforms_compute_the_same_delassus_matrix(stem, algorithm):
    robot = convention.paper_mechanism(stem)
    turned, cms = robot.model, robot.constraints
    paper = convention.paper_delassus_function(turned, cms, algorithm)
    ours = symbolic.delassus_function(turned, cms, algorithm)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = robot.q_random(rng)
        truth = pvosimr.compute_delassus(turned, turned.createData(), q, cms, "naive")
        np.testing.assert_allclose(np.array(paper(q)), truth, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(np.array(paper(q)), np.array(ours(q)), rtol=1e-9, atol=1e-9)


def test_each_half_of_the_convention_adds_arithmetic():
    robot = synthetic.stem_with_branches(4, 2)
    cms = robot.constraints
    turned = convention.autotree_frames(robot.model)
    for algorithm in ALGORITHMS:
        ours = symbolic.count_operations(robot.model, cms, algorithm)
        dense = convention.paper_count_operations(robot.model, cms, algorithm)
        spatial = symbolic.count_operations(turned, cms, algorithm)
        paper = convention.paper_count_operations(turned, cms, algorithm)
        assert ours < dense < paper, algorithm
        assert ours < spatial < paper, algorithm
