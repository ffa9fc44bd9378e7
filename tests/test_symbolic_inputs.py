"""The CasADi functions with the constraint placements as an input, and their derivatives in q.

``delassus_function(..., placements="input")`` at ``(q, placement_vector(placements))`` must be
the fixed-placement function of the same constraints rebuilt with those placements (to 1e-12:
the same arithmetic but for ``K`` and the placements' actions); ``dG`` must be the central
differences of ``pvosimr.compute_delassus`` along ``pin.integrate``, and the gradient of
``⟨W, G⟩`` (``vjp=True``) their contraction with ``W``.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from _slow import slow_ones
from _trees import ANCHOR_MODELS, drawn_mixed_tree, random_placement, random_q

import pvosimr
from pvosimr import zoo
from pvosimr.backends import NUMPY
from pvosimr.codegen.contract import placements_given
from pvosimr.constraints import constraint_kind
from pvosimr.kinematics.joints import configuration_tangent
from pvosimr.kinematics.placements import placement_actions
from pvosimr.zoo import JOINT_TYPE_ROBOTS
from pvosimr.zoo.seeded import JOINT_KINDS, random_chain

symbolic = pytest.importorskip("pvosimr.symbolic")
ca = pytest.importorskip("casadi")

#: Central differences of G along ``integrate``: truncation ``h² |G'''| / 6`` against rounding
#: ``~1e-15 |G| / h``; measured on Atlas (feet_6d) and on the every-joint-type chain, the
#: error relative to max|dG| is 7e-9 at h = 1e-4, 1e-10 at 1e-5, 8e-10 at 1e-6, 1e-8 at 1e-7:
#: h = 1e-5 sits at the minimum, four orders inside the 1e-6 tolerance either way.
STEP = 1e-5
DERIVATIVE_TOLERANCE = 1e-6


def _case(spec: str) -> tuple[pin.Model, list]:
    robot = zoo.load_case(spec)
    return robot.model, list(robot.constraints)


def _needs_two(cm) -> bool:
    """Whether both placements enter G: a second body, or a point anchor's point."""
    return bool(cm.joint2_id) or constraint_kind(cm) == "point_anchor"


def random_placements(cms: list, rng: np.random.Generator) -> list:
    """One entry per constraint in ``placement_vector``'s format: a pair where two enter G."""
    return [
        (random_placement(rng), random_placement(rng)) if _needs_two(cm) else random_placement(rng)
        for cm in cms
    ]


def rebuilt(model: pin.Model, cms: list, placements: list) -> list:
    """The constraint models made again with these placements (pin 4's models have no copy
    constructor: made from their joints)."""
    out = []
    for cm, entry in zip(cms, placements, strict=True):
        first, second = entry if isinstance(entry, tuple) else (entry, cm.joint2_placement)
        if isinstance(cm, pin.RigidConstraintModel):
            copy = pin.RigidConstraintModel(cm)
            copy.joint1_placement, copy.joint2_placement = first, second
        else:
            copy = type(cm)(model, cm.joint1_id, first, cm.joint2_id, second)
        out.append(copy)
    return out


def mixed_tree(seed: int) -> tuple[pin.Model, list]:
    """A random tree of every joint kind with 2-5 constraints of every kind: LOCAL and
    LOCAL_WORLD_ALIGNED, one body and two, pin 4's anchors and point contacts."""
    return drawn_mixed_tree(np.random.default_rng(seed), seed, (3, 10), (2, 6), armature=False)


def relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(1e-300, np.abs(b).max()))


# --------------------------------------------------------------------------- the layout


def test_placement_vector_is_each_rotation_column_major_then_its_translation():
    model, cms = random_chain(("RX", "RY", "RZ"), seed=2)  # three one-body constraints
    rng = np.random.default_rng(0)
    placements = [random_placement(rng) for _ in cms]
    p = symbolic.placement_vector(model, cms, placements)
    assert p.dtype == np.float64 and p.shape == (symbolic.placement_size(model, cms),) == (36,)
    for k, P in enumerate(placements):
        np.testing.assert_array_equal(p[12 * k : 12 * k + 9].reshape(3, 3, order="F"), P.rotation)
        np.testing.assert_array_equal(p[12 * k + 9 : 12 * k + 12], P.translation)


@pytest.mark.parametrize("seed", range(6))
def test_each_placement_gives_its_action_inverse(seed):
    model, cms = mixed_tree(seed)
    rng = np.random.default_rng(seed)
    placements = random_placements(cms, rng)
    p = symbolic.placement_vector(model, cms, placements)
    topo = pvosimr.Topology(model, cms)
    actions = placement_actions(NUMPY, topo, p)
    flat = [P for e in placements for P in (e if isinstance(e, tuple) else (e,))]
    assert p.size == 12 * len(flat) == 12 * len(actions)
    for A, P in zip(actions.values(), flat, strict=True):
        np.testing.assert_allclose(A, P.actionInverse, rtol=0, atol=1e-15)


def test_bad_placements_are_refused_naming_the_constraint():
    model, cms = mixed_tree(4)
    two = next(k for k, cm in enumerate(cms) if _needs_two(cm))
    one = next(k for k, cm in enumerate(cms) if not _needs_two(cm))
    good = random_placements(cms, np.random.default_rng(0))
    with pytest.raises(ValueError, match=f"got {len(cms) - 1} for {len(cms)} constraints"):
        symbolic.placement_vector(model, cms, good[:-1])
    with pytest.raises(ValueError, match="one entry per constraint, not a SE3"):
        symbolic.placement_vector(model, cms, good[one])
    cases = {
        two: (good[two][0], f"constraint {two}.*expected a pair"),
        one: ((good[one], good[one]), f"constraint {one}.*expected a pin.SE3"),
    }
    skew = pin.SE3(np.diag([1.0, 1.0, 1.1]), np.zeros(3))
    nan = pin.SE3(np.eye(3), np.array([0.0, np.nan, 0.0]))
    for k, (entry, message) in [
        *cases.items(),
        (one, (np.eye(4), f"constraint {one}.*must be a pin.SE3, got ndarray")),
        (one, (skew, f"constraint {one}.*joint1_placement has a rotation that is not orthonormal")),
        (one, (nan, f"constraint {one}.*joint1_placement is not finite")),
        (two, ((good[two][0], skew), f"constraint {two}.*joint2_placement has a rotation")),
    ]:
        bad = list(good)
        bad[k] = entry
        with pytest.raises(ValueError, match=message):
            symbolic.placement_vector(model, cms, bad)


# --------------------------------------------------------------------------- G at placements


def assert_input_placements_give_the_rebuilt_models_g(
    model: pin.Model, cms: list, algorithm: str, seed: int, trials: int = 2
) -> None:
    f = symbolic.delassus_function(model, cms, algorithm, placements="input")
    assert f.name_in() == ["q", "p"] and f.name_out() == ["G"]
    assert f.size1_in(1) == symbolic.placement_size(model, cms)
    rng = np.random.default_rng(seed)
    for _ in range(trials):
        placements = random_placements(cms, rng)
        q = random_q(model, rng)
        G = np.array(f(q, symbolic.placement_vector(model, cms, placements)))
        fixed = symbolic.delassus_function(model, rebuilt(model, cms, placements), algorithm)
        assert relative(G, np.array(fixed(q))) <= 1e-12


@pytest.mark.parametrize(
    ("preset", "algorithm"),
    [
        *slow_ones(
            [(preset, a) for preset in ("feet_6d", "feet_4x3d") for a in ("pv-osimr", "pv-osimh")],
            {("feet_6d", "pv-osimh"), ("feet_4x3d", "pv-osimh")},
        ),
        ("feet_6d", "efpa"),
        # PV-OSIMh's plan and auto priced on SX with symbolic K (auto's cost model: ~13 s)
        pytest.param("feet_6d", "auto", marks=pytest.mark.slow),
    ],
)
def test_atlas_with_placements_as_input(atlas, preset, algorithm):
    model, cms = _case(f"atlas/{preset}")
    assert_input_placements_give_the_rebuilt_models_g(model, cms, algorithm, seed=1)


@pytest.mark.parametrize(
    "spec",
    [
        "four_bar/coupler_rocker_3d",
        "four_bar/coupler_rocker_3d_lwa",
        "cassie_leg/rods_3d_toe_2x3d_lwa",
    ],
)
def test_loop_closures_and_world_aligned_rows_with_placements_as_input(spec):
    model, cms = _case(spec)
    assert_input_placements_give_the_rebuilt_models_g(model, cms, "pv-osimr", seed=2)


@pytest.mark.slow  # seconds (measured)
def test_two_body_and_world_aligned_atlas_with_placements_as_input(atlas):
    model, cms = _case("atlas_holding_box/hands_6d_lwa_feet_4x3d_lwa")
    assert_input_placements_give_the_rebuilt_models_g(model, cms, "pv-osimr", seed=3, trials=1)


@pytest.mark.parametrize("seed", slow_ones(range(8), {1}))
def test_every_constraint_kind_with_placements_as_input(seed):
    model, cms = mixed_tree(seed)
    algorithm = ("pv-osimr", "pv-osimh", "ltl-osim", "naive")[seed % 4]
    assert_input_placements_give_the_rebuilt_models_g(model, cms, algorithm, seed)


@pytest.mark.skipif(not ANCHOR_MODELS, reason="pin 4's anchor models are absent")
def test_pin4_anchors_and_point_contacts_with_placements_as_input():
    # every one of pin 4's models, on one body (the point anchors' c2 fixed in the world) and
    # on two
    model, _ = random_chain(("RX", "RY", "RZ", "RX", "RY", "RZ"), seed=5)
    rng = np.random.default_rng(5)
    anchors = [
        kind(model, joint1, random_placement(rng), joint2, random_placement(rng))
        for kind in ANCHOR_MODELS
        for joint1, joint2 in ((6, 0), (5, 2))
    ]
    assert_input_placements_give_the_rebuilt_models_g(model, anchors, "pv-osimr", seed=5)


def test_fixed_placements_keep_q_as_the_only_input(atlas):
    model, cms = _case("atlas/feet_6d")
    f = symbolic.delassus_function(model, cms, placements="fixed")
    assert f.name_in() == ["q"] and f.name() == "delassus_pv_osimr"
    with pytest.raises(ValueError, match="placements must be one of"):
        symbolic.delassus_function(model, cms, placements="numbers")


def test_the_front_ends_options_are_checked_by_name():
    assert not placements_given(None, None) and not placements_given("ffi", "fixed")
    assert placements_given("xla", "input")
    with pytest.raises(ValueError, match="placements must be None or one of"):
        placements_given(None, "numbers")
    with pytest.raises(ValueError, match="route must be one of 'ffi', 'xla'"):
        placements_given("gpu", None)


@pytest.mark.parametrize("seed", range(6))
def test_a_sub_list_of_constraints_is_a_sub_matrix_of_g(seed):
    model, cms = mixed_tree(seed)
    rng = np.random.default_rng(seed)
    q = random_q(model, rng)
    data = model.createData()
    G = pvosimr.compute_delassus(model, data, q, cms)
    keep = sorted(rng.choice(len(cms), size=max(1, len(cms) // 2), replace=False))
    topo = pvosimr.Topology(model, cms)
    rows = np.concatenate(
        [topo.constraint_offsets[k] + np.arange(topo.signature[k].dim) for k in keep]
    )
    G_sub = pvosimr.compute_delassus(model, data, q, [cms[k] for k in keep])
    assert relative(G_sub, G[np.ix_(rows, rows)]) <= 1e-12


# --------------------------------------------------------------------------- derivatives


#: A chain of every joint kind (composites of random sub-joints among them) and the zoo's
#: joint-type robots (helical, universal, composite, ellipsoid, mimic).
EVERY_JOINT_TYPE = ("chain of every kind", *sorted(JOINT_TYPE_ROBOTS))


def joint_type_model(name: str) -> tuple[pin.Model, list]:
    if name == "chain of every kind":
        return random_chain(JOINT_KINDS, seed=1)
    try:
        robot = zoo.load(name)
    except (FileNotFoundError, ModuleNotFoundError) as exc:  # the Panda: example-robot-data
        pytest.skip(str(exc))
    return robot.model, list(robot.constraints)


def integrate_differences(model: pin.Model, q: np.ndarray, h: float, f) -> np.ndarray:
    """``(f(q ⊕ h e_k) − f(q ⊕ −h e_k)) / 2h`` for every k, stacked on a first axis."""
    return np.stack(
        [
            (f(pin.integrate(model, q, h * e)) - f(pin.integrate(model, q, -h * e))) / (2 * h)
            for e in np.eye(model.nv)
        ]
    )


@pytest.mark.parametrize("name", EVERY_JOINT_TYPE)
def test_configuration_tangent_is_the_derivative_of_integrate(name):
    model, _ = joint_type_model(name)
    q_sym = ca.SX.sym("q", model.nq)
    T_sym = ca.Function("T", [q_sym], [configuration_tangent(symbolic.CASADI, model, q_sym)])
    for seed in range(3):
        q = random_q(model, np.random.default_rng(seed))
        T = configuration_tangent(NUMPY, model, q)
        expected = integrate_differences(model, q, 1e-6, lambda x: x).T
        assert np.abs(T - expected).max() <= 1e-8
        np.testing.assert_array_equal(np.array(T_sym(q)), T)


def derivatives(f, model: pin.Model, m: int, *args) -> np.ndarray:
    """The (nv, m, m) array from the function's column-major (m·m) × nv output."""
    out = np.array(f(*args))
    assert out.shape == (m * m, model.nv)
    return np.ascontiguousarray(out.T).reshape(model.nv, m, m)


def assert_derivatives_match_differences(
    model: pin.Model, cms: list, seed: int, placements: list | None = None
) -> None:
    rng = np.random.default_rng(seed)
    q = random_q(model, rng)
    data = model.createData()
    if placements is None:
        f = symbolic.delassus_function(model, cms, output="dG")
        args, truth_cms = (q,), cms
    else:
        f = symbolic.delassus_function(model, cms, placements="input", output="dG")
        args = (q, symbolic.placement_vector(model, cms, placements))
        truth_cms = rebuilt(model, cms, placements)
    assert f.name_out() == ["dG"]
    m = pvosimr.Topology(model, cms).m
    dG = derivatives(f, model, m, *args)
    np.testing.assert_array_equal(dG, np.swapaxes(dG, 1, 2))  # each ∂G/∂ε_k is symmetric
    expected = integrate_differences(
        model, q, STEP, lambda x: pvosimr.compute_delassus(model, data, x, truth_cms)
    )
    assert relative(dG, expected) <= DERIVATIVE_TOLERANCE


@pytest.mark.slow  # CasADi graphs of Atlas
@pytest.mark.parametrize("preset", ["feet_6d", "feet_4x3d"])
def test_derivatives_on_atlas(atlas, preset):
    model, cms = _case(f"atlas/{preset}")
    assert_derivatives_match_differences(model, cms, seed=7)


# the chain of every kind builds an 820 k-instruction dG (~18 s); the universal biped takes seconds
@pytest.mark.parametrize(
    "name", slow_ones(EVERY_JOINT_TYPE, {"chain of every kind", "universal_biped"})
)
def test_derivatives_on_every_joint_type(name):
    model, cms = joint_type_model(name)
    assert_derivatives_match_differences(model, cms, seed=8)


@pytest.mark.parametrize("seed", slow_ones(range(3), {1}))
def test_derivatives_with_placements_as_input(seed):
    model, cms = mixed_tree(seed)
    placements = random_placements(cms, np.random.default_rng(seed))
    assert_derivatives_match_differences(model, cms, seed, placements)


@pytest.mark.slow
def test_derivatives_with_placements_as_input_on_atlas(atlas):
    model, cms = _case("atlas/feet_4x3d")
    placements = random_placements(cms, np.random.default_rng(9))
    assert_derivatives_match_differences(model, cms, 9, placements)


# --------------------------------------------------------------------------- the gradient


def gradient(model: pin.Model, cms: list, q: np.ndarray, W: np.ndarray, p=None) -> np.ndarray:
    """``delassus_function(..., output="vjp")`` at ``q`` (and ``p``) and ``W``: (nv,)."""
    placements = "fixed" if p is None else "input"
    f = symbolic.delassus_function(model, cms, placements=placements, output="vjp")
    assert f.name_in() == ["q", "W"] if p is None else ["q", "p", "W"]
    assert f.name_out() == ["vjp"]
    args = (q,) if p is None else (q, p)
    return np.array(f(*args, W.T)).ravel()  # W's row-major buffer is the CasADi matrix Wᵀ


@pytest.mark.parametrize("name", slow_ones(EVERY_JOINT_TYPE, {"chain of every kind"}))
def test_gradient_is_contracted_differences_on_every_joint_type(name):
    model, cms = joint_type_model(name)
    rng = np.random.default_rng(10)
    q = random_q(model, rng)
    data = model.createData()
    m = pvosimr.Topology(model, cms).m
    W = rng.standard_normal((m, m))  # not symmetric: taken as given
    dG = integrate_differences(
        model, q, STEP, lambda x: pvosimr.compute_delassus(model, data, x, cms)
    )
    g = gradient(model, cms, q, W)
    assert g.shape == (model.nv,)
    assert relative(g, np.einsum("kij,ij->k", dG, W)) <= DERIVATIVE_TOLERANCE


@pytest.mark.slow  # CasADi graphs of Atlas
def test_gradient_is_the_contraction_of_derivatives_on_atlas(atlas):
    model, cms = _case("atlas/feet_6d")
    rng = np.random.default_rng(11)
    q = random_q(model, rng)
    m = pvosimr.Topology(model, cms).m
    W = rng.standard_normal((m, m))
    dG = derivatives(symbolic.delassus_function(model, cms, output="dG"), model, m, q)
    assert relative(gradient(model, cms, q, W), np.einsum("kij,ij->k", dG, W)) <= 1e-10
    placements = random_placements(cms, rng)
    p = symbolic.placement_vector(model, cms, placements)
    f = symbolic.delassus_function(model, cms, placements="input", output="dG")
    dG = derivatives(f, model, m, q, p)
    assert relative(gradient(model, cms, q, W, p), np.einsum("kij,ij->k", dG, W)) <= 1e-10
    with pytest.raises(ValueError, match="output must be one of 'G', 'dG', 'vjp', not 'dG/dq'"):
        symbolic.delassus_function(model, cms, output="dG/dq")
