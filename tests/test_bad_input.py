"""Bad input raises an exception that names the problem, never a silently wrong matrix."""

import numpy as np
import pinocchio as pin
import pytest

import pvosimr
from pvosimr import constraints
from pvosimr.reference.pinocchio import pinocchio_efpa
from pvosimr.reference.truth import TOLERANCE, dense_delassus, rel_err

C3, C6 = pin.ContactType.CONTACT_3D, pin.ContactType.CONTACT_6D


@pytest.fixture(scope="module")
def humanoid():
    model = pin.buildSampleModelHumanoidRandom()
    model.lowerPositionLimit[:7] = -1.0
    model.upperPositionLimit[:7] = 1.0
    return model


@pytest.fixture
def case(humanoid):
    cms = [
        pin.RigidConstraintModel(C6, humanoid, 6, pin.SE3.Random(), pin.LOCAL),
        pin.RigidConstraintModel(C3, humanoid, 12, pin.SE3.Random(), pin.LOCAL),
    ]
    return humanoid, humanoid.createData(), pin.neutral(humanoid), cms


@pytest.mark.parametrize("algorithm", pvosimr.ALGORITHMS)
def test_q_of_the_wrong_size(case, algorithm):
    model, data, q, cms = case
    with pytest.raises(ValueError, match=r"q has shape \(32,\), expected \(33,\)"):
        pvosimr.compute_delassus(model, data, q[:-1], cms, algorithm=algorithm)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_q_not_finite(case, bad):
    model, data, q, cms = case
    q = q.copy()
    q[10] = bad
    with pytest.raises(ValueError, match=r"q is not finite at index 10 .*joint"):
        pvosimr.pv_osimr(model, data, q, cms)


def test_q_with_unnormalized_quaternion(case):
    model, data, q, cms = case
    q = q.copy()
    free_flyer = next(j for j in model.joints if j.shortname() == "JointModelFreeFlyer")
    q[free_flyer.idx_q + 3 : free_flyer.idx_q + 7] = [0.5, 0.5, 0.5, 0.6]
    with pytest.raises(ValueError, match=r"not normalized"):
        pvosimr.pv_osimr(model, data, q, cms)


def test_constraint_on_the_universe(case):
    model, data, q, cms = case
    cms[1].joint1_id = 0
    with pytest.raises(ValueError, match=r"constraint 1 .*universe \(joint 0\)"):
        pvosimr.pv_osimr(model, data, q, cms)


def test_constraint_on_a_joint_not_in_the_model(case):
    model, data, q, cms = case
    cms[0].joint1_id = model.njoints + 3
    with pytest.raises(
        ValueError, match=f"constraint 0 .*joint {model.njoints + 3}.*not in the model"
    ):
        pvosimr.efpa(model, data, q, cms)


def test_reference_frame_world(case):
    model, data, q, cms = case
    cms[1].reference_frame = pin.WORLD
    with pytest.raises(
        ValueError, match=r"constraint 1 .*reference frame .*pin.LOCAL or pin.LOCAL_WORLD_ALIGNED"
    ):
        pvosimr.pv_osim(model, data, q, cms)


def test_row_map_of_a_world_frame_constraint(case):
    """A row map reads its constraint's frame as the constraint itself does: WORLD is refused,
    not read as LOCAL."""
    model, data, q, cms = case
    cms[1].reference_frame = pin.WORLD
    mapped = [cms[0], constraints.rows(cms[1], [0, 2])]
    with pytest.raises(
        ValueError, match=r"constraint 1 .*reference frame .*pin.LOCAL or pin.LOCAL_WORLD_ALIGNED"
    ):
        pvosimr.compute_delassus(model, data, q, mapped)


def test_constraint_between_a_joint_and_itself(case):
    model, data, q, cms = case
    cms[0].joint2_id = cms[0].joint1_id
    with pytest.raises(ValueError, match=r"constraint 0 .*links joint 6 to itself"):
        pvosimr.pv_osimr(model, data, q, cms)


def test_second_joint_not_in_the_model(case):
    model, data, q, cms = case
    cms[0].joint2_id = model.njoints
    with pytest.raises(ValueError, match=rf"constraint 0 .*joint {model.njoints} \(joint2_id\)"):
        pvosimr.pv_osimr(model, data, q, cms)


def test_second_placement_not_rigid(case):
    model, data, q, cms = case
    cms[0].joint2_id = 3
    cms[0].joint2_placement = pin.SE3(2.0 * np.eye(3), np.zeros(3))
    with pytest.raises(ValueError, match=r"constraint 0: joint2_placement .*not orthonormal"):
        pvosimr.pv_osimr(model, data, q, cms)


def test_not_a_constraint_model(case):
    model, data, q, cms = case
    with pytest.raises(TypeError, match=r"constraint 1 is a str"):
        pvosimr.pv_osimr(model, data, q, [cms[0], "l_foot"])


def test_data_from_another_model(case):
    model, _, q, cms = case
    other = pin.buildSampleModelManipulator().createData()
    with pytest.raises(ValueError, match=r"data was not created from this model"):
        pvosimr.pv_osimr(model, other, q, cms)


def test_unknown_algorithm(case):
    model, data, q, cms = case
    with pytest.raises(ValueError, match=r"unknown algorithm 'osim'"):
        pvosimr.compute_delassus(model, data, q, cms, algorithm="osim")


def test_unknown_algorithm_lists_auto_among_the_choices(case):
    model, data, q, cms = case
    for call in (
        lambda: pvosimr.compute_delassus(model, data, q, cms, algorithm="fastest"),
        lambda: pvosimr.compute_delassus_batch(model, q[None], cms, algorithm="fastest"),
    ):
        with pytest.raises(ValueError, match=r"choose one of 'pv-osimr', .*'naive', 'auto'"):
            call()


@pytest.mark.parametrize(
    ("spelling", "algorithm"),
    [
        ("PV-OSIMr", "pv-osimr"),
        ("PV-OSIM", "pv-osim"),
        ("PV-OSIMh", "pv-osimh"),
        ("EFPA", "efpa"),
        ("LTL-OSIM", "ltl-osim"),
        ("ltl_osim", "ltl-osim"),
        ("Naive", "naive"),
    ],
)
def test_algorithm_names_in_any_case_and_the_papers_spelling(case, spelling, algorithm):
    model, data, q, cms = case
    G = pvosimr.compute_delassus(model, data, q, cms, algorithm=algorithm)
    assert np.array_equal(pvosimr.compute_delassus(model, data, q, cms, algorithm=spelling), G)
    batch = pvosimr.compute_delassus_batch(model, q[None], cms, algorithm=spelling)
    assert batch.shape == (1, *G.shape)
    assert pvosimr.DelassusOperator(model, data, q, cms, algorithm=spelling).algorithm == algorithm


@pytest.mark.parametrize(
    "reshape",
    [lambda q: q[None], lambda q: np.stack([q, q]), lambda q: q[:, None]],
    ids=["(1, nq)", "(2, nq)", "(nq, 1)"],
)
def test_a_single_configuration_is_one_dimensional(case, reshape):
    """One rule: the single call takes q of shape (nq,) only; (1, nq) is refused as (2, nq)."""
    model, data, q, cms = case
    with pytest.raises(ValueError, match=r"a single configuration is 1-D.*compute_delassus_batch"):
        pvosimr.compute_delassus(model, data, reshape(q), cms)
    with pytest.raises(ValueError, match=r"a single configuration is 1-D"):
        pvosimr.DelassusOperator(model, data, reshape(q), cms)
    with pytest.raises(ValueError, match=r"a single configuration is 1-D"):
        pinocchio_efpa(model, data, reshape(q), cms)  # the references take the same rule


def test_the_batch_still_takes_one_row(case):
    model, data, q, cms = case
    G = pvosimr.compute_delassus(model, data, q, cms)
    assert rel_err(pvosimr.compute_delassus_batch(model, q[None], cms)[0], G) <= 1e-12


def test_topology_of_another_constraint_set(case):
    model, data, q, cms = case
    topo = pvosimr.Topology(model, cms[:1])
    with pytest.raises(ValueError, match=r"topology was built for another"):
        pvosimr.pv_osimr(model, data, q, cms, topology=topo)


@pytest.mark.parametrize("algorithm", pvosimr.ALGORITHMS)
@pytest.mark.parametrize("empty", [[], pin.StdVec_RigidConstraintModel()])
def test_no_constraints_gives_an_empty_matrix(case, algorithm, empty):
    model, data, q, _ = case
    G = pvosimr.compute_delassus(model, data, q, empty, algorithm=algorithm)
    assert G.shape == (0, 0)


def _model_with(joint: pin.JointModel) -> pin.Model:
    model = pin.Model()
    j1 = model.addJoint(0, pin.JointModelRX(), pin.SE3.Random(), "shoulder")
    model.appendBodyToJoint(j1, pin.Inertia.Random(), pin.SE3.Identity())
    j2 = model.addJoint(j1, joint, pin.SE3.Random(), "odd_joint")
    model.appendBodyToJoint(j2, pin.Inertia.Random(), pin.SE3.Identity())
    return model


def test_unsupported_joint_type_is_named(monkeypatch):
    """Every joint type of pin 4.1 may become supported: take RY out of the list to see the
    refusal name the joint."""
    from pvosimr import topology

    monkeypatch.setattr(topology, "SUPPORTED_JOINTS", topology.SUPPORTED_JOINTS - {"JointModelRY"})
    model = _model_with(pin.JointModelRY())
    cms = [pin.RigidConstraintModel(C3, model, 2, pin.SE3.Identity(), pin.LOCAL)]
    with pytest.raises(NotImplementedError, match=r"joint 2 \('odd_joint'\) is of type .*RY"):
        pvosimr.pv_osimr(model, model.createData(), pin.neutral(model), cms)


def test_unknown_frame_in_constraint_helpers(humanoid):
    with pytest.raises(
        ValueError, match=r"unknown frame 'lleg6_jointt'.*Did you mean 'lleg6_joint'"
    ):
        constraints.weld(humanoid, "lleg6_jointt")
    with pytest.raises(ValueError, match=r"unknown frame 'nope'"):
        constraints.point(humanoid, "nope")


@pytest.mark.parametrize("algorithm", pvosimr.ALGORITHMS)
def test_massless_subtree_makes_the_matrix_undefined(algorithm):
    model = _model_with(pin.JointModelRY())
    model.inertias[2] = pin.Inertia.Zero()
    cms = [pin.RigidConstraintModel(C6, model, 2, pin.SE3.Random(), pin.LOCAL)]
    with pytest.raises(ValueError, match=r"mass matrix is singular.*'odd_joint' move no mass"):
        pvosimr.compute_delassus(
            model, model.createData(), pin.neutral(model), cms, algorithm=algorithm
        )


# --------------------------------------------------------------------------- non-real q


def _joint_at(model, index):
    return next(
        i
        for i in range(1, model.njoints)
        if model.idx_qs[i] <= index < model.idx_qs[i] + model.nqs[i]
    )


def test_complex_q_is_refused(case):
    model, data, q, cms = case
    z = q.astype(complex)
    z[9] += 1e-3j
    j = _joint_at(model, 9)
    with pytest.raises(TypeError, match=rf"q must be real.*index 9 \(joint {j} '.*imaginary"):
        pvosimr.compute_delassus(model, data, z, cms)
    with pytest.raises(TypeError, match=r"q must be real.*imaginary part is zero.*q\.real"):
        pvosimr.compute_delassus(model, data, q.astype(complex), cms)


@pytest.mark.parametrize(
    ("entry", "kind"), [("0.25", "str"), (0.25 + 1j, "complex"), (True, "bool"), (None, "NoneType")]
)
def test_object_q_names_its_first_non_real_entry(case, entry, kind):
    model, data, q, cms = case
    items = list(q)
    items[4] = entry
    j = _joint_at(model, 4)
    with pytest.raises(TypeError, match=rf"q must be real.*index 4 \(joint {j} '.*a {kind}"):
        pvosimr.compute_delassus(model, data, np.array(items, dtype=object), cms)


def test_object_q_of_real_numbers_is_accepted(case):
    model, data, q, cms = case
    expected = pvosimr.compute_delassus(model, data, q, cms)
    items = np.array([int(x) if x == int(x) else float(x) for x in q], dtype=object)
    np.testing.assert_array_equal(pvosimr.compute_delassus(model, data, items, cms), expected)


def test_strings_are_not_parsed(case):
    model, data, q, cms = case
    with pytest.raises(TypeError, match=r"q must be real numbers, not <U.*index 0 \(joint 1 "):
        pvosimr.compute_delassus(model, data, [str(x) for x in q], cms)


def test_complex_batch_names_row_index_and_joint(case):
    model, _, q, cms = case
    qs = np.array([q, q, q], dtype=complex)
    qs[2, 11] += 2e-9j
    j = _joint_at(model, 11)
    with pytest.raises(TypeError, match=rf"qs must be real.*row 2, index 11 \(joint {j} '"):
        pvosimr.compute_delassus_batch(model, qs, cms)


# --------------------------------------------------------------------------- placements


def _with_rotation(placement: pin.SE3, rotation) -> pin.SE3:
    out = pin.SE3(placement)
    out.rotation = rotation
    return out


_NOT_ROTATIONS = {
    "scaled": (np.diag([1.0, 1.0, 1.0 + 1e-6]), r"not orthonormal \(‖RᵀR − I‖ = 2"),
    "sheared": (np.array([[1.0, 1e-3, 0], [0, 1, 0], [0, 0, 1]]), r"not orthonormal"),
    "reflection": (np.diag([1.0, 1.0, -1.0]), r"determinant -1 \(a reflection\)"),
    "nan": (np.full((3, 3), np.nan), r"not finite"),
}


@pytest.mark.parametrize("bad", sorted(_NOT_ROTATIONS))
def test_constraint_placement_must_be_a_rigid_transform(case, bad):
    model, data, q, cms = case
    rotation, message = _NOT_ROTATIONS[bad]
    cms[1].name = "left_hand"
    cms[1].joint1_placement = _with_rotation(cms[1].joint1_placement, rotation)
    match = rf"constraint 1 \('left_hand'\): joint1_placement .*{message}"
    with pytest.raises(ValueError, match=match):
        pvosimr.compute_delassus(model, data, q, cms)
    with pytest.raises(ValueError, match=match):
        pvosimr.compute_delassus_batch(model, q[None], cms)


def test_constraint_placement_with_a_non_finite_translation(case):
    model, data, q, cms = case
    placement = pin.SE3(cms[0].joint1_placement)
    placement.translation = np.array([0.0, np.inf, 0.0])
    cms[0].joint1_placement = placement
    with pytest.raises(ValueError, match=r"constraint 0: joint1_placement is not finite"):
        pvosimr.compute_delassus(model, data, q, cms)


def test_rotation_rounded_to_nine_digits_is_accepted(case):
    """A rotation written to a file with 9 digits (‖RᵀR − I‖ ~ 1e-10) is a rotation."""
    model, data, q, cms = case
    cms[0].joint1_placement = _with_rotation(
        cms[0].joint1_placement, np.round(cms[0].joint1_placement.rotation, 9)
    )
    pvosimr.compute_delassus(model, data, q, cms)


@pytest.mark.parametrize("bad", sorted(_NOT_ROTATIONS))
def test_joint_placement_must_be_a_rigid_transform(case, bad):
    model, _, q, cms = case
    model = model.copy()
    rotation, message = _NOT_ROTATIONS[bad]
    model.jointPlacements[5] = _with_rotation(model.jointPlacements[5], rotation)
    match = rf"model\.jointPlacements\[5\] \(joint 5 '{model.names[5]}'\) .*{message}"
    with pytest.raises(ValueError, match=match):
        pvosimr.compute_delassus(model, model.createData(), q, cms)
    with pytest.raises(ValueError, match=match):
        pvosimr.compute_delassus_batch(model, q[None], cms)


# --------------------------------------------------------------------------- inertias, armature


def _edit_inertia(model, i, mass=None, lever=None, rotational=None):
    inertia = pin.Inertia(model.inertias[i])
    if mass is not None:
        inertia.mass = mass
    if lever is not None:
        inertia.lever = np.asarray(lever, dtype=float)
    if rotational is not None:  # the setter checks symmetry only, the constructor positivity
        inertia.inertia = np.asarray(rotational, dtype=float)
    model.inertias[i] = inertia


def _nan_rotational_inertia(model, i):
    """Pinocchio's constructor refuses a NaN inertia (not symmetric); its parameters do not."""
    parameters = model.inertias[i].toDynamicParameters()
    parameters[6] = np.nan  # I_yy
    model.inertias[i] = pin.Inertia.FromDynamicParameters(parameters)


_BAD_BODIES = {
    "nan mass": (dict(mass=np.nan), r"non-finite mass"),
    "inf lever": (dict(lever=[0.0, np.inf, 0.0]), r"non-finite centre of mass"),
    "nan inertia": (None, r"non-finite inertia"),
    "negative mass": (dict(mass=-2.0), r"negative mass \(-2 kg\)"),
    "indefinite inertia": (
        dict(rotational=np.diag([0.1, 0.1, -0.05])),
        r"rotational inertia about its centre of mass that is not positive semi-definite",
    ),
}


@pytest.mark.parametrize("bad", sorted(_BAD_BODIES))
def test_bad_body_is_named(case, bad):
    model, _, q, cms = case
    model = model.copy()
    edit, message = _BAD_BODIES[bad]
    if edit is None:
        _nan_rotational_inertia(model, 7)
    else:
        _edit_inertia(model, 7, **edit)
    match = rf"model\.inertias\[7\] \(the body of joint 7 '{model.names[7]}'\) has a {message}"
    for algorithm in pvosimr.ALGORITHMS:
        with pytest.raises(ValueError, match=match):
            pvosimr.compute_delassus(model, model.createData(), q, cms, algorithm=algorithm)
    with pytest.raises(ValueError, match=match):
        pvosimr.compute_delassus_batch(model, q[None], cms)


@pytest.mark.parametrize(("value", "what"), [(np.nan, "not finite"), (-0.1, "negative")])
def test_bad_armature_names_the_joint(case, value, what):
    model, _, q, cms = case
    model = model.copy()
    armature = np.array(model.armature)
    dof = model.idx_vs[9]
    armature[dof] = value
    model.armature = armature
    match = rf"model\.armature\[{dof}\] = .* is {what} \(joint 9 '{model.names[9]}'\)"
    with pytest.raises(ValueError, match=match):
        pvosimr.compute_delassus(model, model.createData(), q, cms)
    with pytest.raises(ValueError, match=match):
        pvosimr.compute_delassus_batch(model, q[None], cms)


def test_model_edited_between_calls_is_checked_again(case):
    """The model check is cached, but an edit of model.inertias in between is still seen."""
    model, _, q, cms = case
    model = model.copy()
    data = model.createData()
    expected = pvosimr.compute_delassus(model, data, q, cms)
    kept = pin.Inertia(model.inertias[3])
    _edit_inertia(model, 3, mass=np.nan)
    with pytest.raises(ValueError, match=r"model\.inertias\[3\] .*non-finite mass"):
        pvosimr.compute_delassus(model, data, q, cms)
    model.inertias[3] = kept
    np.testing.assert_array_equal(pvosimr.compute_delassus(model, data, q, cms), expected)
    model.jointPlacements[4] = _with_rotation(model.jointPlacements[4], np.diag([1.0, 1, -1]))
    with pytest.raises(ValueError, match=r"model\.jointPlacements\[4\] .*reflection"):
        pvosimr.compute_delassus_batch(model, q[None], cms)


# --------------------------------------------------------------------------- q out of range


def _slider_arm() -> pin.Model:
    model = pin.Model()
    parent = 0
    for name, joint in (("shoulder", pin.JointModelRX()), ("slider", pin.JointModelPX())):
        parent = model.addJoint(parent, joint, pin.SE3.Random(), name)
        model.appendBodyToJoint(parent, pin.Inertia.Random(), pin.SE3.Identity())
    wrist = model.addJoint(parent, pin.JointModelRY(), pin.SE3.Random(), "wrist")
    model.appendBodyToJoint(wrist, pin.Inertia.Random(), pin.SE3.Identity())
    return model


@pytest.mark.parametrize("value", [1e200, -1e160])
def test_translation_beyond_float_range_is_out_of_range(value):
    model = _slider_arm()
    cms = [pin.RigidConstraintModel(C6, model, 3, pin.SE3.Random(), pin.LOCAL)]
    q = np.array([0.3, value, 0.2])
    for algorithm in pvosimr.ALGORITHMS:
        with pytest.raises(ValueError, match=r"q is out of range at index 1 \(joint 2 'slider'\)"):
            pvosimr.compute_delassus(model, model.createData(), q, cms, algorithm=algorithm)
        with pytest.raises(ValueError, match=r"qs is out of range at row 1, index 1 \(joint 2 "):
            pvosimr.compute_delassus_batch(model, np.array([q * 0, q]), cms, algorithm=algorithm)


def test_long_translation_within_range_is_computed():
    """1e6 m along the slider: far, but the sweeps stay exact (checked against the truth)."""
    model = _slider_arm()
    cms = [pin.RigidConstraintModel(C6, model, 3, pin.SE3.Random(), pin.LOCAL)]
    q = np.array([0.3, 1e6, 0.2])
    truth = dense_delassus(model, q, cms)
    for algorithm in pvosimr.ALGORITHMS:
        G = pvosimr.compute_delassus(model, model.createData(), q, cms, algorithm=algorithm)
        assert rel_err(G, truth) <= TOLERANCE, algorithm
        G = pvosimr.compute_delassus_batch(model, q[None], cms, algorithm=algorithm)[0]
        assert rel_err(G, truth) <= TOLERANCE, algorithm


def test_a_unit_part_within_the_tolerance_is_normalised(humanoid):
    """A quaternion within pin.isNormalized's 1e-6 of unit norm was used as given (a rotation
    off by ~1e-6): now G(N(q)) as on every route, single call and batch alike."""
    from pvosimr.coordinates import normalized

    cms = [pin.RigidConstraintModel(C3, humanoid, 12, pin.SE3.Random(), pin.LOCAL_WORLD_ALIGNED)]
    data = humanoid.createData()
    q = pin.integrate(humanoid, pin.neutral(humanoid), np.linspace(-0.5, 0.5, humanoid.nv))
    near = q.copy()
    near[3:7] *= 1.0 + 5e-7  # the free flyer's quaternion: a world-aligned G reads it
    q_hat = normalized(humanoid, near)[0]
    G = pvosimr.compute_delassus(humanoid, data, near, cms)
    assert np.array_equal(G, pvosimr.compute_delassus(humanoid, data, q_hat, cms))
    assert rel_err(G, dense_delassus(humanoid, q_hat, cms)) <= TOLERANCE
    batch = pvosimr.compute_delassus_batch(humanoid, np.stack([near, q_hat]), cms)
    assert rel_err(batch[0], batch[1]) <= 1e-15 and rel_err(batch[0], G) <= TOLERANCE
