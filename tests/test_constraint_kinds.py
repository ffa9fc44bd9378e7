"""World-aligned, two-body and pin 4's constraints: the rows of ``getConstraintJacobian``.

The truth builds them from Pinocchio's frame Jacobians
(:func:`pvosimr.reference.truth.constraint_jacobian`)
and is checked here against ``pin.getConstraintJacobian``; every algorithm on every path (numpy,
batched numpy, the CasADi function, compiled C) is checked against the truth on random trees
with every joint type and a mix of LOCAL / LOCAL_WORLD_ALIGNED, one-body / two-body
``RigidConstraintModel`` and pin 4's ``FrameAnchorConstraintModel``,
``PointAnchorConstraintModel`` and ``PointContactConstraintModel`` in one list
(:func:`_trees.mixed_kinds`, :func:`_trees.with_anchors`), at
``max|ΔG| / max(1, max|G|) ≤ 1e-9``.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from _codegen import needs_c_compiler
from _slow import slow_ones
from _trees import (
    ANCHOR_MODELS,
    check_every_algorithm,
    drawn_mixed_tree,
    random_q,
    requires_pin_feature,
    two_joint_chain,
)

import pvosimr
from pvosimr.reference.truth import (
    TOLERANCE,
    constraint_jacobian,
    dense_delassus,
    pinocchio_constraint_jacobian,
    pinocchio_delassus,
    rel_err,
)

C3, C6 = pin.ContactType.CONTACT_3D, pin.ContactType.CONTACT_6D
LWA = pin.LOCAL_WORLD_ALIGNED
FAST_TREES = 24
SLOW_TREES = 2000
#: Trees for the CasADi function: every rigid kind (0-3) and every pin 4 model, on one body
#: and on two (4, 5, 15).
CASADI_SEEDS = (0, 1, 2, 3, 4, 5, 15)
PIN4_MODELS = (
    "FrameAnchorConstraintModel",
    "PointAnchorConstraintModel",
    "PointContactConstraintModel",
)
needs_pin4_models = requires_pin_feature(*PIN4_MODELS)
BRANCHING_KINDS = ["FreeFlyer", "RX", "Spherical", "RY", "PZ", "RZ", "Universal", "HX"]


def assert_rows_are_pinocchios(model: pin.Model, q: np.ndarray, cms: list) -> None:
    """The truth's rows (frame Jacobians) equal ``getConstraintJacobian``'s to 1e-12."""
    J = constraint_jacobian(model, q, cms)
    assert np.abs(J - pinocchio_constraint_jacobian(model, q, cms)).max() <= 1e-12


def mixed_tree(seed: int, min_constraints: int = 1) -> tuple[pin.Model, list]:
    """A depth-first tree of 2-12 joints of every kind (a free-flyer root one time in three)
    with ``min_constraints``-5 constraints of mixed kinds, pin 4's models among them, all
    drawn from ``seed``."""
    return drawn_mixed_tree(np.random.default_rng(seed), seed, (2, 13), (min_constraints, 6))


def _kind(cm) -> tuple:
    if isinstance(cm, pin.RigidConstraintModel):
        return cm.type, cm.joint2_id != 0, cm.reference_frame
    return type(cm), cm.joint2_id != 0


def test_trees_draw_every_kind():
    kinds = {_kind(cm) for s in range(FAST_TREES) for cm in mixed_tree(s)[1]}
    rigid = {(t, b, f) for t in (C3, C6) for b in (False, True) for f in (pin.LOCAL, LWA)}
    assert kinds == rigid | {(t, b) for t in ANCHOR_MODELS for b in (False, True)}


def test_casadi_trees_draw_every_kind():
    kinds = {_kind(cm) for s in CASADI_SEEDS for cm in mixed_tree(s)[1]}
    assert kinds >= {(t, b) for t in ANCHOR_MODELS for b in (False, True)}


@pytest.mark.parametrize("seed", range(FAST_TREES))
def test_truth_rows_are_pinocchios(seed):
    model, cms = mixed_tree(seed)
    q = random_q(model, np.random.default_rng(seed))
    assert_rows_are_pinocchios(model, q, cms)


@pytest.mark.parametrize("seed", slow_ones(range(FAST_TREES), {4, 7, 15}))
def test_every_algorithm_numpy_and_batch(seed):
    check_every_algorithm(*mixed_tree(seed), seed, dense_delassus, auto=seed % 4 == 0)


@pytest.mark.parametrize("seed", slow_ones(CASADI_SEEDS, {0, 2, 3, 4, 15}))
def test_casadi_function(seed):
    symbolic = pytest.importorskip("pvosimr.symbolic")
    model, cms = mixed_tree(seed)
    q = random_q(model, np.random.default_rng(seed))
    for algorithm in pvosimr.ALGORITHMS:
        f = symbolic.delassus_function(model, cms, algorithm)
        assert rel_err(np.array(f(q)), dense_delassus(model, q, cms)) <= TOLERANCE, algorithm


def _hand_to_hand(model: pin.Model) -> list:
    """A 6D world-aligned weld between two links of different branches, a 3D LOCAL loop
    closure, a one-body world-aligned point contact and a plain LOCAL weld."""
    rng = np.random.default_rng(3)
    place = [pin.SE3(pin.exp3(rng.normal(size=3)), rng.normal(size=3)) for _ in range(5)]
    return [
        pin.RigidConstraintModel(C6, model, 4, place[0], 7, place[1], LWA),
        pin.RigidConstraintModel(C3, model, 6, place[2], 2, place[3], pin.LOCAL),
        pin.RigidConstraintModel(C3, model, 8, place[4], LWA),
        pin.RigidConstraintModel(C6, model, 5, place[0], pin.LOCAL),
    ]


def _anchors(model: pin.Model) -> list:
    """Pin 4's models on :func:`_trees.branching_tree`: a frame anchor between two branches, a point
    contact fixed in the world, a point anchor between two links and a one-body frame anchor."""
    if len(ANCHOR_MODELS) < len(PIN4_MODELS):
        return []
    rng = np.random.default_rng(4)
    place = [pin.SE3(pin.exp3(rng.normal(size=3)), rng.normal(size=3)) for _ in range(6)]
    frame, point, contact = ANCHOR_MODELS
    return [
        frame(model, 3, place[0], 8, place[1]),
        contact(model, 7, place[2], 0, place[3]),
        point(model, 5, place[4], 4, place[5]),
        frame(model, 6, place[1]),
    ]


@pytest.mark.slow  # builds C libraries of its own
@needs_c_compiler
def test_compiled(tmp_path, branching_model):
    codegen = pytest.importorskip("pvosimr.codegen.build")
    model = branching_model
    cms = _hand_to_hand(model) + _anchors(model)
    # beyond the line of outlined code; one copy of it (not also the FMA one) is enough here
    f = codegen.compile(model, cms, cache_dir=tmp_path, flags=("-O1",), simd=False)
    assert f.chunked
    q = random_q(model, np.random.default_rng(5))
    assert rel_err(f(q), dense_delassus(model, q, cms)) <= TOLERANCE


def test_pinocchio_is_wrong_and_refused(branching_model):
    """``pin.computeDelassusMatrix`` takes these kinds and returns another matrix (LWA read as
    LOCAL, joint2 ignored); :func:`pinocchio_delassus` refuses them, pvosimr gets them right."""
    model = branching_model
    q = random_q(model, np.random.default_rng(2))
    for cm in _hand_to_hand(model)[:3]:
        truth = dense_delassus(model, q, [cm])
        data, cd = model.createData(), cm.createData()
        theirs = pin.computeDelassusMatrix(model, data, q, [cm], [cd], 0.0)
        assert rel_err(theirs, truth) > 1e-3
        assert rel_err(pvosimr.pv_osimr(model, data, q, [cm]), truth) <= TOLERANCE
        with pytest.raises(NotImplementedError, match=r"constraint 0 .*Pinocchio's routines"):
            pinocchio_delassus(model, q, [cm])


def test_plain_constraints_keep_their_end_effectors(branching_model):
    """A list of LOCAL one-body constraints is swept as before: one EE each, nothing framed."""
    model = branching_model
    cms = _hand_to_hand(model)
    plain = pvosimr.topology_for(model, cms[3:])
    assert (plain.m, plain.m_virtual, plain.framed) == (6, 6, ())
    mixed = pvosimr.topology_for(model, cms)
    assert (mixed.m, mixed.m_virtual, len(mixed.ees)) == (18, 27, 6)


@needs_pin4_models
def test_pin4_models_end_effectors(branching_model):
    """A frame anchor on one body is one plain EE (its rows negated in ``K``); a point anchor
    sweeps body 1's six rows and reads where ``c1`` and its world-fixed ``c2`` are."""
    model = branching_model
    cms = _anchors(model)
    plain = pvosimr.topology_for(model, cms[3:])
    assert (plain.m, plain.m_virtual, plain.framed) == (6, 6, ())
    anchored = pvosimr.topology_for(model, cms[1:2])
    assert (anchored.m, anchored.dims, anchored.framed) == (3, (6,), anchored.ees)
    assert list(anchored.anchors) == [0]
    both = pvosimr.topology_for(model, cms)
    assert (both.m, both.m_virtual, both.dims) == (18, 33, (6, 6, 6, 6, 3, 6))


@needs_pin4_models
def test_pin4_models_refused_by_pinocchio_routines(branching_model):
    model = branching_model
    q = random_q(model, np.random.default_rng(6))
    for cm in _anchors(model):
        with pytest.raises(NotImplementedError, match=r"takes? RigidConstraintModel only"):
            pinocchio_delassus(model, q, [cm])


@needs_pin4_models
def test_pin4_bad_input(branching_model):
    """An object that is no constraint model (pin 4.1's joint-space models are taken:
    ``tests/test_constraint_models.py``), a lone model, joints outside the model or equal, and a
    world anchor's placement that is not rigid: each a named error."""
    model = branching_model
    data, q = model.createData(), random_q(model, np.random.default_rng(7))
    frame, point, _ = ANCHOR_MODELS
    with pytest.raises(TypeError, match="constraint 1 is a SE3, which pvosimr cannot take"):
        pvosimr.compute_delassus(model, data, q, [frame(model, 2), pin.SE3.Identity()])
    with pytest.raises(TypeError, match="not one"):
        pvosimr.compute_delassus(model, data, q, frame(model, 2))
    small = two_joint_chain(["RX", "RY"])
    with pytest.raises(ValueError, match=r"joint 8 \(joint2_id\), which is not in the model"):
        pvosimr.compute_delassus(
            small,
            small.createData(),
            pin.neutral(small),
            [point(model, 1, pin.SE3.Identity(), 8, pin.SE3.Identity())],
        )
    with pytest.raises(ValueError, match="to itself"):
        pvosimr.compute_delassus(
            model, data, q, [point(model, 4, pin.SE3.Identity(), 4, pin.SE3.Identity())]
        )
    skewed = point(model, 4, pin.SE3.Identity(), 0, pin.SE3(2 * np.eye(3), np.zeros(3)))
    with pytest.raises(ValueError, match="constraint 0: joint2_placement has a rotation"):
        pvosimr.compute_delassus(model, data, q, [skewed])


@pytest.mark.slow
def test_property_mixed_kinds():
    """2,000 trees of mixed kinds: the truth against Pinocchio's rows, every algorithm on numpy
    and batched numpy against the truth ("auto" and PV-OSIMh's own rule on every tenth,
    PV-OSIMh on a drawn plan elsewhere); the CasADi functions of PV-OSIMr and PV-OSIMh on
    every fiftieth."""
    symbolic = pytest.importorskip("pvosimr.symbolic")
    for seed in range(1000, 1000 + SLOW_TREES):
        model, cms = mixed_tree(seed, min_constraints=1)
        q = random_q(model, np.random.default_rng(seed))
        assert_rows_are_pinocchios(model, q, cms)
        check_every_algorithm(model, cms, seed, dense_delassus, auto=seed % 10 == 0, drawn=True)
        if seed % 50 == 0:
            for algorithm in ("pv-osimr", "pv-osimh"):
                f = symbolic.delassus_function(model, cms, algorithm)
                G = np.array(f(q))
                assert rel_err(G, dense_delassus(model, q, cms)) <= TOLERANCE, (seed, algorithm)
