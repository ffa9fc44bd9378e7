"""Bad input raises an exception that names the problem, never a silently wrong matrix."""

import numpy as np
import pinocchio as pin
import pytest

import pvosimr
from pvosimr import constraints

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


@pytest.mark.parametrize("frame", [pin.WORLD, pin.LOCAL_WORLD_ALIGNED])
def test_reference_frame_other_than_local(case, frame):
    model, data, q, cms = case
    cms[1].reference_frame = frame
    with pytest.raises(ValueError, match=r"constraint 1 .*reference frame .*only pin.LOCAL"):
        pvosimr.pv_osim(model, data, q, cms)


def test_constraint_between_two_bodies(case):
    model, data, q, cms = case
    cms[0].joint2_id = 3
    with pytest.raises(NotImplementedError, match=r"constraint 0 .*joint 6 to joint 3"):
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


def test_mimic_joint_is_refused():
    model = pin.Model()
    j1 = model.addJoint(0, pin.JointModelRZ(), pin.SE3.Random(), "primary")
    model.appendBodyToJoint(j1, pin.Inertia.Random(), pin.SE3.Identity())
    j2 = model.addJoint(j1, pin.JointModelRZ(), pin.SE3.Random(), "secondary")
    model.appendBodyToJoint(j2, pin.Inertia.Random(), pin.SE3.Identity())
    try:
        mimic = pin.transformJointIntoMimic(model, j1, j2, 2.0, 0.0)
    except AttributeError:
        pytest.skip("this pinocchio has no mimic joints")
    cms = [pin.RigidConstraintModel(C3, mimic, 2, pin.SE3.Identity(), pin.LOCAL)]
    with pytest.raises(NotImplementedError, match=r"joint 2 \('secondary'\) is of type .*Mimic"):
        pvosimr.pv_osimr(mimic, mimic.createData(), pin.neutral(mimic), cms)


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
