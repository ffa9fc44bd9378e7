"""Every constraint model pin 4.1's solvers take, and row maps, against Pinocchio's own rows.

Random trees (:func:`_trees.random_shape`, every joint type) carry, in one list, the kinds of
``tests/test_constraint_kinds.py`` (LOCAL / LOCAL_WORLD_ALIGNED, one- and two-body
``RigidConstraintModel``; pin 4's frame anchors, point anchors and point contacts), generic
``pin.ConstraintModel`` wrappers around pin 4's models, ``JointLimitConstraintModel`` and
``JointFrictionConstraintModel`` on joints with a constant motion subspace, and row maps
(:func:`pvosimr.constraints.rows`: selections and matrices) of rigid constraints and anchors.
The truth is ``J M⁻¹ Jᵀ`` with every row of ``J`` from ``pin.getConstraintJacobian`` of its
model (:func:`pvosimr.reference.truth.pinocchio_dense_delassus`); every algorithm on every
path (numpy, batched numpy, CasADi, generated C) agrees with it to
``max|ΔG| / max(1, max|G|) ≤ 1e-9``.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from _codegen import needs_c_compiler
from _trees import (
    ANCHOR_MODELS,
    check_every_algorithm,
    drawn_mixed_tree,
    random_q,
    two_joint_chain,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pvosimr
from pvosimr.constraints import RowMap, rows
from pvosimr.kinematics.constants import CONSTANT_SUBSPACE_JOINTS
from pvosimr.reference.truth import TOLERANCE, pinocchio_dense_delassus, rel_err

JOINT_SPACE = tuple(
    getattr(pin, n)
    for n in ("JointLimitConstraintModel", "JointFrictionConstraintModel")
    if hasattr(pin, n)
)
needs_pin4 = pytest.mark.skipif(
    len(JOINT_SPACE) < 2 or not hasattr(pin, "ConstraintModel") or len(ANCHOR_MODELS) < 3,
    reason="pin 4's constraint models",
)
pytestmark = needs_pin4
FAST_TREES = 16
SLOW_TREES = 1000
SEEDS = st.integers(0, 2**31 - 1)
BRANCHING_KINDS = ["FreeFlyer", "RX", "Spherical", "RY", "PZ", "RZ", "Planar", "HX"]


def _constant_joints(model: pin.Model) -> list[int]:
    return [
        i
        for i in range(1, model.njoints)
        if model.joints[i].shortname() in CONSTANT_SUBSPACE_JOINTS
    ]


def _row_map(cm, rng: np.random.Generator):
    """A random selection (a row dropped, or one to five rows) or a random 1-4 row matrix."""
    dim = 6 if not isinstance(cm, pin.RigidConstraintModel) and cm.residualSize() == 6 else 3
    if isinstance(cm, pin.RigidConstraintModel):
        dim = 6 if cm.type == pin.ContactType.CONTACT_6D else 3
    if rng.random() < 0.5:
        r = int(rng.integers(1, dim + 1))
        return rows(cm, sorted(rng.choice(dim, r, replace=False).tolist()))
    return rows(cm, rng.normal(size=(int(rng.integers(1, 5)), dim)))


def _wrapped(cm):
    """A generic ``pin.ConstraintModel`` around pin 4's typed models (it holds no rigid one)."""
    return pin.ConstraintModel(cm) if not isinstance(cm, pin.RigidConstraintModel) else cm


def every_model_tree(seed: int) -> tuple[pin.Model, list]:
    """A depth-first tree of 2-10 joints of every kind with 1-4 rigid constraints and
    anchors, a third of them row-mapped, a third of the anchors in generic wrappers, and a
    joint limit and a joint friction model (each on 1-3 constant-subspace joints, one of them
    in a generic wrapper), shuffled into one list."""
    rng = np.random.default_rng(seed)
    model, cms = drawn_mixed_tree(rng, seed, (2, 11), (1, 5))
    out = []
    for cm in cms:
        u = rng.random()
        out.append(_row_map(cm, rng) if u < 1 / 3 else _wrapped(cm) if u < 2 / 3 else cm)
    joints = _constant_joints(model)
    for k, kind in enumerate(JOINT_SPACE):
        if joints:
            chosen = sorted(rng.choice(joints, min(len(joints), int(rng.integers(1, 4))), False))
            jm = kind(model, [int(j) for j in chosen])
            out.append(pin.ConstraintModel(jm) if (seed + k) % 2 else jm)
    order = rng.permutation(len(out))
    return model, [out[i] for i in order]


def _kind(cm) -> str:
    if isinstance(cm, RowMap):
        return "rows"
    if type(cm) is pin.ConstraintModel:
        return "generic " + type(cm.extract()).__name__
    return type(cm).__name__


def test_trees_draw_every_model():
    kinds = {_kind(cm) for s in range(60) for cm in every_model_tree(s)[1]}
    generic = {f"generic {t.__name__}" for t in (*ANCHOR_MODELS, *JOINT_SPACE)}
    typed = {t.__name__ for t in (pin.RigidConstraintModel, *ANCHOR_MODELS, *JOINT_SPACE)}
    assert kinds == {"rows"} | generic | typed


@pytest.mark.slow  # seconds of numpy or CasADi work
@settings(max_examples=FAST_TREES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEEDS)
def test_every_model_numpy_and_batch(seed):
    check_every_algorithm(*every_model_tree(seed), seed, pinocchio_dense_delassus, auto=False)


@pytest.mark.slow  # CasADi graphs: seconds each
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_model_casadi(seed):
    symbolic = pytest.importorskip("pvosimr.symbolic")
    model, cms = every_model_tree(seed)
    q = random_q(model, np.random.default_rng(seed))
    truth = pinocchio_dense_delassus(model, q, cms)
    for algorithm in pvosimr.ALGORITHMS:
        f = symbolic.delassus_function(model, cms, algorithm)
        assert rel_err(np.array(f(q)), truth) <= TOLERANCE, algorithm


def _loops(model: pin.Model) -> list:
    """A 5-row revolute loop closure, a 1-row distance along a direction, a 2-row planar
    contact (world-aligned), a mapped frame anchor, joint limits and friction (wrapped)."""
    rng = np.random.default_rng(4)
    place = [pin.SE3(pin.exp3(rng.normal(size=3)), rng.normal(size=3)) for _ in range(4)]
    C3, C6 = pin.ContactType.CONTACT_3D, pin.ContactType.CONTACT_6D
    hinge = pin.RigidConstraintModel(C6, model, 4, place[0], 7, place[1], pin.LOCAL)
    rod = pin.RigidConstraintModel(C3, model, 5, place[2], 8, place[3], pin.LOCAL)
    foot = pin.RigidConstraintModel(C3, model, 3, place[1], pin.LOCAL_WORLD_ALIGNED)
    direction = rng.normal(size=(1, 3))
    frame = ANCHOR_MODELS[0](model, 6, place[2], 2, place[0])
    limits, friction = JOINT_SPACE
    return [
        rows(hinge, [0, 1, 2, 3, 4]),
        rows(rod, direction / np.linalg.norm(direction)),
        rows(foot, [0, 1]),
        pin.ConstraintModel(frame),
        rows(pin.ConstraintModel(frame), rng.normal(size=(3, 6))),
        limits(model, [1, 2, 4, 7]),
        pin.ConstraintModel(friction(model, [1, 3, 5, 6, 8])),
    ]


@pytest.mark.slow  # PV-OSIMh prices its plans on 13 end-effectors (7 s); the default run's
# random trees draw these kinds too (test_every_model_numpy_and_batch)
def test_loops_and_joint_rows_every_path_numpy(branching_model):
    model = branching_model
    assert (
        check_every_algorithm(model, _loops(model), 3, pinocchio_dense_delassus, auto=True)
        <= TOLERANCE
    )


@pytest.mark.slow  # a C build of its own (5 s)
@needs_c_compiler
def test_loops_and_joint_rows_compiled(tmp_path, branching_model):
    codegen = pytest.importorskip("pvosimr.codegen.build")
    model = branching_model
    cms = _loops(model)
    f = codegen.compile(model, cms, cache_dir=tmp_path, flags=("-O1",))
    for seed in (5, 6):
        q = random_q(model, np.random.default_rng(seed))
        assert rel_err(f(q), pinocchio_dense_delassus(model, q, cms)) <= TOLERANCE


def test_row_map_is_a_congruence(branching_model):
    """``G`` of ``rows(cm, A)`` is ``A G Aᵀ`` of ``cm``'s, to rounding."""
    model = branching_model
    q = random_q(model, np.random.default_rng(8))
    hinge = pin.RigidConstraintModel(
        pin.ContactType.CONTACT_6D, model, 5, pin.SE3.Random(), 8, pin.SE3.Random(), pin.LOCAL
    )
    A = np.random.default_rng(1).normal(size=(4, 6))
    data = model.createData()
    full = pvosimr.compute_delassus(model, data, q, [hinge])
    mapped = pvosimr.compute_delassus(model, data, q, [rows(hinge, A)])
    assert np.abs(mapped - A @ full @ A.T).max() <= 1e-10 * max(1.0, np.abs(full).max())


def test_joint_rows_end_effectors(branching_model):
    """A row on a one-DoF joint is two one-row EEs (child, parent) and nothing framed; on a
    root joint one EE; on a multi-DoF joint not at the root, one row and a six-row EE."""
    model = branching_model
    one_dof = pvosimr.topology_for(model, [JOINT_SPACE[1](model, [4])])
    assert (one_dof.m, one_dof.dims, one_dof.framed) == (1, (1, 1), ())
    root = pvosimr.topology_for(model, [JOINT_SPACE[1](model, [1])])
    assert (root.m, root.dims, root.framed) == (6, (1,) * 6, ())
    spherical = pvosimr.topology_for(model, [JOINT_SPACE[1](model, [3])])
    assert (spherical.m, spherical.dims) == (3, (1, 6) * 3)


def test_selection_of_local_constraint_is_folded(branching_model):
    """A selection of a LOCAL one-body constraint is one EE of the selected rows."""
    model = branching_model
    cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_6D, model, 5, pin.SE3.Random())
    topo = pvosimr.topology_for(model, [rows(cm, [0, 2])])
    assert (topo.m, topo.dims, topo.framed) == (2, (2,), ())


# ----------------------------------------------------------------------------- bad input


def test_bad_row_maps_named(branching_model):
    model = branching_model
    data, q = model.createData(), random_q(model, np.random.default_rng(2))
    cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, model, 5, pin.SE3.Random())
    cm.name = "toe"
    ok = pin.RigidConstraintModel(pin.ContactType.CONTACT_6D, model, 2, pin.SE3.Random())
    with pytest.raises(ValueError, match=r"constraint 1 \('toe'\): row selection \[0, 3\] is out"):
        pvosimr.compute_delassus(model, data, q, [ok, rows(cm, [0, 3])])
    with pytest.raises(ValueError, match=r"constraint 1 \('toe'\): its row map has shape \(2, 6\)"):
        pvosimr.compute_delassus(model, data, q, [ok, rows(cm, np.ones((2, 6)))])
    with pytest.raises(ValueError, match=r"constraint 0 \('toe'\): its row map has shape"):
        pvosimr.compute_delassus(model, data, q, [rows(cm, np.full((1, 3), np.nan))])
    with pytest.raises(ValueError, match="non-empty sequence of row indices"):
        rows(cm, [])


def test_unsupported_models_named(branching_model):
    model = branching_model
    data, q = model.createData(), random_q(model, np.random.default_rng(2))
    ok = pin.RigidConstraintModel(pin.ContactType.CONTACT_6D, model, 2, pin.SE3.Random())
    with pytest.raises(TypeError, match="constraint 1 is a SE3, which pvosimr cannot take"):
        pvosimr.compute_delassus(model, data, q, [ok, pin.SE3.Identity()])
    limits = JOINT_SPACE[0](model, [4])
    with pytest.raises(TypeError, match="constraint 0: a row map of a JointLimitConstraintModel"):
        pvosimr.compute_delassus(model, data, q, [rows(limits, [0])])
    universal = two_joint_chain(["RX", "Universal"])
    friction = JOINT_SPACE[1](universal, [2])
    friction.name = "hip"
    with pytest.raises(NotImplementedError, match=r"constraint 0 \('hip'\).*joint 2.*Universal"):
        pvosimr.compute_delassus(
            universal, universal.createData(), pin.neutral(universal), [friction]
        )


@pytest.mark.slow
def test_property_every_model():
    """1,000 trees with every model: every algorithm on numpy and batched numpy (PV-OSIMh on a
    drawn plan, the rule's on every tenth tree); the CasADi functions of every algorithm on
    every 25th."""
    symbolic = pytest.importorskip("pvosimr.symbolic")
    for seed in range(10_000, 10_000 + SLOW_TREES):
        model, cms = every_model_tree(seed)
        check_every_algorithm(model, cms, seed, pinocchio_dense_delassus, auto=False, drawn=True)
        if seed % 25 == 0:
            q = random_q(model, np.random.default_rng(seed))
            truth = pinocchio_dense_delassus(model, q, cms)
            for algorithm in pvosimr.ALGORITHMS:
                G = np.array(symbolic.delassus_function(model, cms, algorithm)(q))
                assert rel_err(G, truth) <= TOLERANCE, (seed, algorithm)


def test_row_maps_with_placements_as_input(branching_model):
    """Row maps keep one placement entry per constraint (``placements="input"``); joint-space
    models, which have none a user gives, are refused by name there."""
    symbolic = pytest.importorskip("pvosimr.symbolic")
    model = branching_model
    q = random_q(model, np.random.default_rng(9))
    C6 = pin.ContactType.CONTACT_6D
    P1, P2 = pin.SE3.Random(), pin.SE3.Random()
    hinge = pin.RigidConstraintModel(C6, model, 4, P1, 7, P2, pin.LOCAL)
    one = pin.RigidConstraintModel(C6, model, 5, P2, pin.LOCAL_WORLD_ALIGNED)
    cms = [rows(hinge, [0, 1, 2, 3, 4]), rows(one, [1, 5])]
    f = symbolic.delassus_function(model, cms, "pv-osimr", placements="input")
    Q1, Q2 = pin.SE3.Random(), pin.SE3.Random()
    p = symbolic.placement_vector(model, cms, [(Q1, Q2), Q1])
    moved = [
        rows(pin.RigidConstraintModel(C6, model, 4, Q1, 7, Q2, pin.LOCAL), [0, 1, 2, 3, 4]),
        rows(pin.RigidConstraintModel(C6, model, 5, Q1, pin.LOCAL_WORLD_ALIGNED), [1, 5]),
    ]
    assert rel_err(np.array(f(q, p)), pinocchio_dense_delassus(model, q, moved)) <= TOLERANCE
    friction = JOINT_SPACE[1](model, [4])
    with pytest.raises(NotImplementedError, match="constraint 1 is a JointFrictionConstraint"):
        symbolic.delassus_function(model, [cms[0], friction], "pv-osimr", placements="input")


def test_pinocchio_routines_map_row_maps_and_refuse_joint_rows(branching_model):
    """Pinocchio's own Delassus routines take whole ``RigidConstraintModel``s: under a row map
    they compute G of the model and the map gives ``A G Aᵀ`` (equal to the dense truth of the
    mapped rows); a joint-space row is refused by name, not computed wrong."""
    from pvosimr.reference.pinocchio import pinocchio_cholesky, pinocchio_efpa
    from pvosimr.reference.truth import dense_delassus

    model = branching_model
    q = random_q(model, np.random.default_rng(3))
    weld = pin.RigidConstraintModel(pin.ContactType.CONTACT_6D, model, 5, pin.SE3.Random())
    A = np.random.default_rng(4).standard_normal((2, 6))
    cases = ([rows(weld, [0, 4])], [rows(weld, A), weld], [rows(rows(weld, A), [1])])
    for k, cms in enumerate(cases):
        truth = dense_delassus(model, q, cms)
        # Cholesky factorises the models under the maps: the weld twice is singular there
        for reference in (pinocchio_efpa, pinocchio_cholesky)[: 1 if k == 1 else 2]:
            G = reference(model, model.createData(), q, cms)
            assert G.shape == truth.shape
            assert np.abs(G - truth).max() <= 1e-10 * max(1.0, np.abs(truth).max())
    with pytest.raises(ValueError, match="constraint 0 is a row of a JointFrictionConstraintModel"):
        pinocchio_efpa(model, model.createData(), q, [JOINT_SPACE[1](model, [4])])
