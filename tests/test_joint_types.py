"""Every joint type's kinematics in pvosimr.kinematics.joints equal Pinocchio's, on every backend.

``joint_motion`` gives ``(R, p, S)`` of ``M_J(q_i)``; Pinocchio's ``jmodel.calc(jdata, q)`` gives
``jdata.M`` and ``jdata.S``.  They must agree to rounding for every supported type (nested
composites included) at random configurations, on the batched numpy backend and on CasADi SX
evaluated numerically.  Joint axes tilted slightly off x, y or z must not be rounded onto them:
the whole Delassus matrix is checked there on every path.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from _trees import (
    DEFAULT_JOINT_TYPES,
    MIDDLE_ANGLE_SINGULAR,
    TreeSpec,
    build_tree,
    make_joint,
    random_inertia,
    random_placement,
    random_q,
    requires_pin_feature,
)

import pvosimr
from pvosimr import compute_delassus_batch
from pvosimr.backends.batched import BatchedNumpyBackend, MatrixStack
from pvosimr.kinematics.joints import aligned_index, joint_motion, rotation_cs, unit_parts
from pvosimr.reference.truth import TOLERANCE, dense_delassus, rel_err
from pvosimr.topology import SUPPORTED_JOINTS

ca = pytest.importorskip("casadi")
symbolic = pytest.importorskip("pvosimr.symbolic")

KINEMATICS_TOL = 1e-14  # entries of R, p, S are O(1): rounding only
DELASSUS_TOL = 1e-12
C6 = pin.ContactType.CONTACT_6D


# --------------------------------------------------------------------------- joints


def _composite(*parts: tuple[object, pin.SE3]) -> pin.JointModelComposite:
    composite = pin.JointModelComposite(*parts[0])
    for joint, placement in parts[1:]:
        composite.addJoint(joint, placement)
    return composite


def _cases() -> dict[str, object]:
    """One joint of every supported type (several of the new ones), by label."""
    rng = np.random.default_rng(3)
    cases = {kind: make_joint(kind, rng) for kind in DEFAULT_JOINT_TYPES if kind != "Composite"}
    P = lambda: random_placement(rng, 0.3)  # noqa: E731
    ellipsoid = getattr(pin, "JointModelEllipsoid", None)  # not in pin before 3.9
    if ellipsoid:
        cases |= {
            "Ellipsoid_sphere0": ellipsoid(0.0, 0.0, 0.0),
            "Ellipsoid_one_radius": ellipsoid(0.0, 0.3, 0.0),
        }
    cases |= {
        "HX_pitch0": pin.JointModelHX(0.0),
        "HelicalUnaligned_negative": pin.JointModelHelicalUnaligned(np.array([0, 0.6, 0.8]), -0.2),
        "Universal_xy": pin.JointModelUniversal(np.array([1.0, 0, 0]), np.array([0, 1.0, 0])),
        "Universal_z_minus_x": pin.JointModelUniversal(np.array([0, 0, 1.0]), -np.eye(3)[0]),
        "Composite_single": _composite((pin.JointModelRY(), pin.SE3.Identity())),
        "Composite_rz_ry_rx": _composite(
            (pin.JointModelRZ(), P()), (pin.JointModelRY(), P()), (pin.JointModelRX(), P())
        ),
        "Composite_manifolds": _composite(
            (pin.JointModelSpherical(), P()), (pin.JointModelTranslation(), P())
        ),
        "Composite_new_types": _composite(
            (pin.JointModelUniversal(*np.eye(3)[[1, 2]]), P()),
            *([(ellipsoid(0.1, 0.2, 0.05), P())] if ellipsoid else []),
            (pin.JointModelHelicalUnaligned(np.array([0.48, 0.6, 0.64]), 0.1), P()),
        ),
        "Composite_nested": _composite(
            (pin.JointModelPY(), P()),
            (
                _composite(
                    (pin.JointModelRUBX(), P()),
                    (_composite((pin.JointModelPlanar(), P()), (pin.JointModelHZ(0.3), P())), P()),
                ),
                P(),
            ),
        ),
        "Composite_freeflyer": _composite((pin.JointModelFreeFlyer(), P())),
    }
    for seed in range(4):
        cases[f"Composite_random{seed}"] = make_joint("Composite", np.random.default_rng(seed))
    return cases


CASES = _cases()


def _in_a_model(joint) -> tuple[pin.Model, pin.JointModel]:
    """``joint`` as joint 2 of a model (behind an RZ, so its indexes are not 0)."""
    model = pin.Model()
    model.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), "first")
    model.addJoint(1, joint, random_placement(np.random.default_rng(0)), "tested")
    return model, model.joints[2]


def _pinocchio(joint, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    jdata = joint.createData()
    joint.calc(jdata, q)
    return jdata.M.rotation, jdata.M.translation, np.reshape(jdata.S, (6, -1))


def _full(R, p, S, batch: int, nv: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(R, p, S)`` of joint_motion as (batch, …) arrays, ``None`` as identity / zero."""

    def stack(x, default):
        x = default if x is None else getattr(x, "a", x)
        return np.broadcast_to(x, (batch, *np.shape(x)[-2:]))

    return stack(R, np.eye(3)), stack(p, np.zeros((3, 1)))[:, :, 0], stack(S, np.zeros((6, nv)))


@pytest.mark.parametrize("label", sorted(CASES))
def test_batched_joint_motion_is_pinocchios(label):
    model, joint = _in_a_model(CASES[label])
    rng = np.random.default_rng(11)
    qs = np.array([random_q(model, rng) for _ in range(16)])
    qi = MatrixStack(qs[:, joint.idx_q : joint.idx_q + joint.nq, None])
    R, p, S = _full(*joint_motion(BatchedNumpyBackend(len(qs)), joint, qi), len(qs), joint.nv)
    for b, q in enumerate(qs):
        R_pin, p_pin, S_pin = _pinocchio(joint, q)
        assert np.abs(R[b] - R_pin).max() <= KINEMATICS_TOL
        assert np.abs(p[b] - p_pin).max() <= KINEMATICS_TOL
        assert S[b].shape == S_pin.shape
        assert np.abs(S[b] - S_pin).max() <= KINEMATICS_TOL


@pytest.mark.parametrize("label", sorted(CASES))
def test_symbolic_joint_motion_is_pinocchios(label):
    model, joint = _in_a_model(CASES[label])
    q_sym = ca.SX.sym("qi", joint.nq)
    R, p, S = joint_motion(symbolic.CASADI, joint, q_sym)
    outputs = [ca.SX.eye(3) if R is None else R, ca.SX(3, 1) if p is None else p]
    outputs.append(ca.DM(S) if isinstance(S, np.ndarray) else S)
    f = ca.Function("motion", [q_sym], outputs)
    rng = np.random.default_rng(12)
    for _ in range(8):
        q = random_q(model, rng)
        R_num, p_num, S_num = (np.array(v) for v in f(q[joint.idx_q : joint.idx_q + joint.nq]))
        R_pin, p_pin, S_pin = _pinocchio(joint, q)
        assert np.abs(R_num - R_pin).max() <= KINEMATICS_TOL
        assert np.abs(p_num[:, 0] - p_pin).max() <= KINEMATICS_TOL
        assert np.abs(S_num - S_pin).max() <= KINEMATICS_TOL


def test_cases_cover_every_supported_type_and_nesting():
    kinds = {CASES[label].shortname() for label in CASES}
    assert kinds == SUPPORTED_JOINTS - {"JointModelMimic"}  # a coupling: tests/test_mimic.py
    nested = CASES["Composite_nested"]
    assert nested.joints[1].extract().joints[1].shortname() == "JointModelComposite"


@pytest.mark.slow  # seconds (measured)
def test_random_joints_cover_every_type_and_nest_composites():
    """make_joint("Composite") draws every type, and composites inside composites."""
    inside: set[str] = set()
    depth = 0

    def walk(joint, level: int) -> None:
        nonlocal depth
        typed = joint.extract() if hasattr(joint, "extract") else joint
        depth = max(depth, level)
        for sub in typed.joints:
            inside.add(sub.shortname())
            if sub.shortname() == "JointModelComposite":
                walk(sub, level + 1)

    for seed in range(200):  # nested composites are rare: a few in 200 with any type set
        walk(make_joint("Composite", np.random.default_rng(seed)), 1)
    assert inside == SUPPORTED_JOINTS - {"JointModelMimic"}  # mimic: tests/test_mimic.py
    assert depth >= 2  # a composite inside a composite
    assert {"JointModel" + k for k in DEFAULT_JOINT_TYPES} == SUPPORTED_JOINTS - {"JointModelMimic"}


# --------------------------------------------------------------------------- unit parts


@pytest.mark.parametrize("label", sorted(CASES))
def test_unit_parts_are_what_pinocchio_normalizes(label):
    """Scaling a part unit_parts names makes q unnormalized for Pinocchio; scaling any other
    coordinate does not."""
    model, joint = _in_a_model(CASES[label])
    q = random_q(model, np.random.default_rng(5))
    parts = unit_parts(joint)
    assert all(0 <= a < b <= joint.nq for a, b in parts)
    in_part = set()
    for a, b in parts:
        bad = q.copy()
        bad[joint.idx_q + a : joint.idx_q + b] *= 1.01
        assert not pin.isNormalized(model, bad), (label, a, b)
        in_part |= set(range(a, b))
    for k in set(range(joint.nq)) - in_part:
        moved = q.copy()
        moved[joint.idx_q + k] *= 1.01
        assert pin.isNormalized(model, moved), (label, k)


def test_unit_parts_offsets_in_a_nested_composite():
    joint = _composite(
        (pin.JointModelPX(), pin.SE3.Identity()),
        (
            _composite(
                (pin.JointModelRUBY(), pin.SE3.Random()),
                (pin.JointModelSpherical(), pin.SE3.Random()),
            ),
            pin.SE3.Random(),
        ),
        (pin.JointModelFreeFlyer(), pin.SE3.Random()),
    )
    assert unit_parts(joint) == ((1, 3), (3, 7), (10, 14))


# --------------------------------------------------------------------------- singularities


def test_universal_never_loses_rank():
    """Universal: S has orthonormal columns for every q (never singular)."""
    rng = np.random.default_rng(2)
    model, joint = _in_a_model(make_joint("Universal", rng))
    for _ in range(20):
        q = pin.integrate(model, pin.neutral(model), rng.uniform(-10, 10, model.nv))
        S = _pinocchio(joint, q)[2]
        np.testing.assert_allclose(S.T @ S, np.eye(2), atol=1e-14)


@requires_pin_feature("JointModelEllipsoid")
def test_ellipsoid_loses_rank_where_random_q_does_not_go():
    """Ellipsoid: S loses rank exactly where cos q1 = 0 (as SphericalZYX), which random_q keeps
    away from."""
    rng = np.random.default_rng(2)
    model, joint = _in_a_model(pin.JointModelEllipsoid(0.1, 0.2, 0.3))
    assert "JointModelEllipsoid" in MIDDLE_ANGLE_SINGULAR
    for q1 in (np.pi / 2, -np.pi / 2):
        q = np.array([0.3, 0.7, q1, -0.4])
        assert np.linalg.svd(_pinocchio(joint, q)[2], compute_uv=False)[-1] < 1e-15
    for _ in range(20):
        q = random_q(model, rng)
        assert abs(q[2]) <= 1.2
        assert np.linalg.svd(_pinocchio(joint, q)[2], compute_uv=False)[-1] >= np.sqrt(
            1 - np.sin(1.2)
        )


# --------------------------------------------------------------------------- exact axes


def test_only_rounding_counts_as_aligned():
    assert aligned_index(np.array([0.0, -1.0, 0.0])) == 1
    assert aligned_index(np.array([1.0 - 2.2e-16, 1e-16, -3e-16])) == 0
    for tilt in (1e-2, 1e-4, 1e-8, 1e-12):
        assert aligned_index(_tilted(2, tilt)) is None
    R = rotation_cs(BatchedNumpyBackend(1), _tilted(0, 1e-8), np.array(0.6), np.array(0.8))
    R_pin = pin.AngleAxis(np.arctan2(0.8, 0.6), _tilted(0, 1e-8)).matrix()
    assert np.abs(np.asarray(R) - R_pin).max() <= 1e-16


def _tilted(k: int, tilt: float) -> np.ndarray:
    """``e_k`` turned by ``tilt`` rad towards a direction that mixes both other axes."""
    u = (np.roll([0.0, 1.0, 2.0], k)) / np.sqrt(5.0)
    return np.cos(tilt) * np.eye(3)[k] + np.sin(tilt) * u


def _tilted_joint(kind: str, k: int, tilt: float):
    axis = _tilted(k, tilt)
    if kind == "revolute":
        return pin.JointModelRevoluteUnaligned(axis)
    if kind == "prismatic":
        return pin.JointModelPrismaticUnaligned(axis)
    if kind == "helical":
        return pin.JointModelHelicalUnaligned(axis, 0.15)
    other = _tilted((k + 1) % 3, tilt)  # the second axis, made orthogonal to the first
    other -= (other @ axis) * axis
    return pin.JointModelUniversal(axis, other / np.linalg.norm(other))


def _tilted_tree(kind: str, k: int, tilt: float) -> tuple[pin.Model, list]:
    """A 4-link chain of tilted joints at random placements (the tilt is in the joint's own
    frame; a spherical root for the prismatic case, whose chain would otherwise only
    translate), welds at the tip and mid-chain."""
    rng = np.random.default_rng(k)
    model = pin.Model()
    parent = 0
    if kind == "prismatic":
        parent = model.addJoint(0, pin.JointModelSpherical(), random_placement(rng), "root")
        model.appendBodyToJoint(parent, random_inertia(rng), pin.SE3.Identity())
    for i in range(4):
        joint = _tilted_joint(kind, k, tilt)
        parent = model.addJoint(parent, joint, random_placement(rng, 1.0), f"j{i}")
        model.appendBodyToJoint(parent, random_inertia(rng), pin.SE3.Identity())
    cms = [
        pin.RigidConstraintModel(C6, model, parent, random_placement(rng), pin.LOCAL),
        pin.RigidConstraintModel(C6, model, parent - 2, random_placement(rng), pin.LOCAL),
    ]
    return model, cms


def _check_tilted(kind: str, k: int, tilt: float, compiled=None) -> float:
    model, cms = _tilted_tree(kind, k, tilt)
    rng = np.random.default_rng(1)
    qs = np.array([random_q(model, rng) for _ in range(4)])
    data = model.createData()
    f = symbolic.delassus_function(model, cms)
    outlined = symbolic.delassus_function(model, cms, outlined=True)  # a shared fold per kind
    assert outlined.get_function() or kind == "universal"  # whose S moves with q: inline
    batch = compute_delassus_batch(model, qs, cms)
    worst = 0.0
    for b, q in enumerate(qs):
        G = pvosimr.compute_delassus(model, data, q, cms)
        errors = [
            rel_err(G, dense_delassus(model, q, cms)),
            rel_err(batch[b], G),
            rel_err(np.array(f(q)), G),
            rel_err(np.array(outlined(q)), G),
        ]
        if compiled is not None:
            errors.append(rel_err(compiled(q), G))
        assert max(errors) <= DELASSUS_TOL, (kind, k, tilt, errors)
        worst = max(worst, *errors)
    return worst


TILTS = (1e-2, 1e-4, 1e-8)
KINDS = ("revolute", "prismatic", "helical", "universal")


@pytest.mark.parametrize("tilt", TILTS)
@pytest.mark.parametrize("kind", KINDS)
def test_tilted_axes_numpy_batch_and_casadi(kind, tilt):
    for k in range(3):
        _check_tilted(kind, k, tilt)


@pytest.mark.slow  # builds C libraries of its own
def test_tilted_axis_compiled(tmp_path):
    codegen = pytest.importorskip("pvosimr.codegen.build")
    model, cms = _tilted_tree("revolute", 0, 1e-8)
    compiled = codegen.compile(model, cms, cache_dir=tmp_path, flags=("-O1",))
    _check_tilted("revolute", 0, 1e-8, compiled)


@pytest.mark.slow
@pytest.mark.long  # the oldest pin's run leaves it out (.ci/run)
@pytest.mark.parametrize("tilt", TILTS)
@pytest.mark.parametrize("kind", KINDS)
def test_tilted_axes_compiled_full_grid(kind, tilt, tmp_path):
    codegen = pytest.importorskip("pvosimr.codegen.build")
    for k in range(3):
        model, cms = _tilted_tree(kind, k, tilt)
        compiled = codegen.compile(model, cms, cache_dir=tmp_path, flags=("-O1",))
        _check_tilted(kind, k, tilt, compiled)


# --------------------------------------------------------------------------- topology


def _one_joint_model(joint) -> pin.Model:
    model = pin.Model()
    jid = model.addJoint(0, joint, pin.SE3.Identity(), "bad")
    model.appendBodyToJoint(jid, pin.Inertia.Random(), pin.SE3.Identity())
    return model


@pytest.mark.parametrize(
    "joint, message",
    [
        (pin.JointModelRevoluteUnaligned(np.array([1.0, 2.0, 0.0])), "not a unit vector"),
        (pin.JointModelHelicalUnaligned(np.array([0.0, 0.0, 1.1]), 0.1), "not a unit vector"),
        (pin.JointModelUniversal(np.array([1.0, 0, 0]), np.array([0.6, 0.8, 0])), "orthogonal"),
        (
            _composite(
                (pin.JointModelRX(), pin.SE3.Identity()),
                (pin.JointModelPrismaticUnaligned(np.array([0.0, 3.0, 4.0])), pin.SE3.Identity()),
            ),
            r"sub-joint 1 \(PrismaticUnaligned\) is invalid: its axis .* not a unit vector",
        ),
    ],
)
def test_invalid_axes_are_named(joint, message):
    with pytest.raises(ValueError, match=r"joint 1 \('bad'\) .*" + message):
        pvosimr.Topology(_one_joint_model(joint), [])


@pytest.mark.slow  # seconds (measured)
def test_every_default_type_in_one_tree_agrees_with_the_truth():
    """A chain of every type (a free-flyer root), welded at its tip, on the three paths."""
    kinds = ["FreeFlyer"] + [k for k in DEFAULT_JOINT_TYPES if k != "FreeFlyer"]
    spec = TreeSpec(range(len(kinds)), kinds, [(len(kinds), C6), (9, C6)], True, 4)
    model, cms = build_tree(spec)
    rng = np.random.default_rng(0)
    qs = np.array([random_q(model, rng) for _ in range(3)])
    f = symbolic.delassus_function(model, cms, "pv-osimr")
    data = model.createData()
    for algorithm in pvosimr.ALGORITHMS:
        batch = compute_delassus_batch(model, qs, cms, algorithm=algorithm)
        for b, q in enumerate(qs):
            truth = dense_delassus(model, q, cms)
            assert (
                rel_err(pvosimr.compute_delassus(model, data, q, cms, algorithm), truth)
                <= TOLERANCE
            )
            assert rel_err(batch[b], truth) <= TOLERANCE
            if algorithm == "pv-osimr":
                assert rel_err(np.array(f(q)), truth) <= TOLERANCE


def test_urdf_axis_a_quarter_degree_off_x():
    """A URDF axis ``1 0.004 0`` (a RevoluteUnaligned 0.23° off x) on the batch and CasADi paths."""
    links = "".join(
        f'<link name="l{i}"><inertial><mass value="{1 + i}"/>'
        f'<origin xyz="0.1 0.05 {0.1 * i}"/>'
        '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.3"/>'
        "</inertial></link>"
        for i in range(4)
    )
    joints = "".join(
        f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/><child link="l{i}"/>'
        f'<origin xyz="0.3 0.1 0.2" rpy="0.1 0.2 {0.3 * i}"/><axis xyz="1 0.004 0"/>'
        '<limit lower="-3" upper="3" effort="1" velocity="1"/></joint>'
        for i in range(1, 4)
    )
    model = pin.buildModelFromXML(f'<robot name="tilted">{links}{joints}</robot>')
    assert {j.shortname() for j in model.joints[1:]} == {"JointModelRevoluteUnaligned"}
    cms = [pin.RigidConstraintModel(C6, model, 3, random_placement(np.random.default_rng(0)))]
    rng = np.random.default_rng(4)
    qs = np.array([random_q(model, rng) for _ in range(3)])
    batch = compute_delassus_batch(model, qs, cms)
    f = symbolic.delassus_function(model, cms)
    for b, q in enumerate(qs):
        G = pvosimr.compute_delassus(model, model.createData(), q, cms)
        assert rel_err(G, dense_delassus(model, q, cms)) <= DELASSUS_TOL
        assert rel_err(batch[b], G) <= DELASSUS_TOL
        assert rel_err(np.array(f(q)), G) <= DELASSUS_TOL
