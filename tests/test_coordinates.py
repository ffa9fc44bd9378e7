"""pvosimr.coordinates: the tangent gradient of pin.integrate and the gradient in q's own
coordinates, on every kind of joint coordinates (quaternions, unit complex pairs, SE(3), SE(2),
composites, vector spaces), against pvosimr's tangent map and against finite differences of the
numpy path's G."""

import numpy as np
import pinocchio as pin
import pytest
from _trees import every_kind_of_joint

import pvosimr
from pvosimr.backends import NUMPY
from pvosimr.constraints import point, weld
from pvosimr.coordinates import (
    coordinates_to_tangent,
    normalized,
    tangent_to_coordinates,
    unit_normalized,
    unit_part_spans,
)
from pvosimr.kinematics.joints import configuration_tangent

MODELS = {"every kind": every_kind_of_joint, "humanoid": pin.buildSampleModelHumanoid}


def random_q(model, rng):
    return pin.integrate(model, pin.neutral(model), rng.uniform(-1.5, 1.5, model.nv))


@pytest.mark.parametrize("name", MODELS)
def test_the_map_is_the_chain_rule_with_no_radial_part(name):
    model = MODELS[name]()
    rng = np.random.default_rng(0)
    spans = unit_part_spans(model)
    assert name != "every kind" or {length for _, length in spans} == {2, 4}
    for _ in range(5):
        q = random_q(model, rng)
        g = rng.standard_normal(model.nv)
        g_q = tangent_to_coordinates(model, q, g)
        T = configuration_tangent(NUMPY, model, q)
        np.testing.assert_allclose(T.T @ g_q, g, rtol=0, atol=1e-13)  # the chain rule
        for start, length in spans:  # orthogonal to each unit part
            assert abs(g_q[start : start + length] @ q[start : start + length]) < 1e-13
        np.testing.assert_allclose(coordinates_to_tangent(model, q, g_q), g, atol=1e-13)


@pytest.mark.parametrize("name", MODELS)
def test_the_rule_normalises_as_the_reference(name):
    """(The plan's map, in the generated gradient library and the CUDA gradient kernel, is
    tested by tests/test_jax.py, tests/test_torch.py and tests/test_codegen_cuda.py against
    :func:`tangent_to_coordinates`.)"""
    model = MODELS[name]()
    rng = np.random.default_rng(1)
    qs = np.stack([random_q(model, rng) for _ in range(4)])
    # off the sphere: N divides each unit part by its norm, and nothing else moves
    scaled = qs.copy()
    spans = unit_part_spans(model)
    for start, length in spans:
        scaled[:, start : start + length] *= rng.uniform(0.5, 2.0, (4, 1))
    np.testing.assert_allclose(unit_normalized(scaled, spans), qs, rtol=0, atol=1e-15)
    assert np.array_equal(unit_normalized(qs, spans)[0], normalized(model, qs[0])[0])


def test_a_q_normalised_to_rounding_is_used_as_given():
    model = pin.buildSampleModelHumanoid()
    q = random_q(model, np.random.default_rng(2))
    assert np.array_equal(normalized(model, q)[0], q)
    start, length = unit_part_spans(model)[0]
    off = q.copy()
    off[start : start + length] *= 1 + 1e-9
    assert not np.array_equal(normalized(model, off)[0], off)


def test_the_gradient_is_that_of_G_of_the_normalised_q():
    """Finite differences of ⟨W, G(N(q))⟩ in q's coordinates, on the numpy path, against the
    map of the tangent gradient (itself by finite differences along pin.integrate): the
    meaning of the map, independent of the generated code."""
    model = pin.buildSampleModelHumanoid()
    data = model.createData()
    cms = [weld(model, "rleg_effector_body"), point(model, "larm_effector_body")]
    rng = np.random.default_rng(3)
    q = random_q(model, rng)
    q[3:7] *= 1.3  # off the sphere: G there is G(N(q))
    W = rng.standard_normal((9, 9))

    def phi(x):
        return float(
            np.sum(W * pvosimr.compute_delassus(model, data, normalized(model, x)[0], cms))
        )

    h = 1e-6
    q_hat = normalized(model, q)[0]
    tangent = np.array(
        [
            (phi(pin.integrate(model, q_hat, h * e)) - phi(pin.integrate(model, q_hat, -h * e)))
            / (2 * h)
            for e in np.eye(model.nv)
        ]
    )
    g_q = tangent_to_coordinates(model, q, tangent)
    for d in rng.standard_normal((3, model.nq)):
        slope = (phi(q + h * d) - phi(q - h * d)) / (2 * h)
        assert abs(slope - g_q @ d) <= 1e-6 * max(1.0, abs(slope))
