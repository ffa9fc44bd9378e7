"""The robot zoo: names, presets, the paper's robots, the synthetic mechanisms, errors."""

from __future__ import annotations

import importlib.util
import re
import sys
import zlib
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from _trees import requires_pin_feature, robot_sweep

import pvosimr
from pvosimr import zoo
from pvosimr.reference.truth import TOLERANCE, constraint_jacobian, dense_delassus, mass_matrix
from pvosimr.zoo import sources

TOL = TOLERANCE
HAS_HAND = importlib.util.find_spec("gymnasium_robotics") is not None
HAS_ERD = importlib.util.find_spec("example_robot_data") is not None
HAS_ATLAS = sources.find_model_file(sources.ATLAS_URDF) is not None
PAPER = ("atlas", "shadow_hand", "atlas_shadow_hand", "atlas_two_shadow_hands")
needs_erd = pytest.mark.skipif(not HAS_ERD, reason="example-robot-data loaders not installed")


def _load_or_skip(name: str, preset: str | None = None) -> zoo.Robot:
    try:
        return zoo.load(name, preset)
    except (FileNotFoundError, ModuleNotFoundError) as exc:  # optional model source missing
        pytest.skip(str(exc))


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max())) if b.size else 0.0


def is_depth_first(model: pin.Model) -> bool:
    """Every subtree is a contiguous range of joint indices."""
    parents = list(model.parents)
    for j in range(1, model.njoints):
        i = j + 1
        while i < model.njoints and _descends(parents, i, j):
            i += 1
        if any(_descends(parents, k, j) for k in range(i, model.njoints)):
            return False
    return True


def _descends(parents: list[int], i: int, j: int) -> bool:
    while i > j:
        i = parents[i]
    return i == j


# ----------------------------------------------------------------------------- names, skipped


def test_names_and_skipped_are_consistent() -> None:
    names = zoo.names()
    assert len(names) == len(set(names))
    assert tuple(names[:4]) == PAPER
    assert set(zoo.SYNTHETIC_DEFAULTS) <= set(names)
    assert set(zoo.JOINT_TYPE_ROBOTS) <= set(names)
    assert {"stem_b2_L10", "chain_welded_every_k_k4", "chain_welded_every_link_n10"} <= set(names)
    skipped = zoo.skipped()
    assert not set(skipped) & set(names)
    assert {"cassie", "romeo", "bravo7_gripper"} <= set(skipped)
    assert all(isinstance(why, str) and why for why in skipped.values())
    assert set(zoo.ERD_PRESETS).isdisjoint(skipped)


@needs_erd
def test_every_example_robot_data_robot_is_listed_or_skipped() -> None:
    erd = set(sources.erd_names())
    names, skipped = set(zoo.names()), set(zoo.skipped())
    assert erd <= names | skipped
    assert skipped - set(zoo.JOINT_TYPE_SKIPPED) <= erd
    # the hand-made preset table covers exactly the listed example-robot-data robots
    assert set(zoo.ERD_PRESETS) == erd - skipped


_ROMEO_HAND = re.compile(r"[LR](Hand|Finger\d\d|Thumb\d)")
DEAD_JOINTS = {
    "romeo": lambda dead: len(dead) == 24 and all(_ROMEO_HAND.fullmatch(j) for j in dead),
    **{
        name: lambda dead: dead == ["bravo_finger1_joint", "bravo_finger2_joint"]
        for name in ("bravo7_gripper", "bluevolta_bravo7_gripper", "falcon_bravo7_gripper")
    },
}
"""The skipped robots with a singular mass matrix, and the joints that move no inertia."""


@needs_erd
def test_skipped_reasons_hold() -> None:
    with pytest.raises(NotImplementedError, match="SDF"):
        sources.erd_model("cassie")
    assert "SDF" in zoo.skipped()["cassie"]
    rng = np.random.default_rng(0)
    singular = {n for n, why in zoo.skipped().items() if "singular" in why}
    assert singular == set(DEAD_JOINTS)
    for name, expected in DEAD_JOINTS.items():
        model = sources.erd_model(name)
        cms = zoo.erd.fallback_presets(model)["leaves_6d"](model)
        data = model.createData()
        for _ in range(2):
            q = zoo.random_configuration(model, rng)
            with pytest.raises(ValueError, match="mass matrix is singular") as info:
                pvosimr.compute_delassus(model, data, q, cms, algorithm="naive")
            dead = re.findall(r"'([^']+)'", str(info.value).split("joints ", 1)[1])
            assert expected(dead), (name, dead)
        with pytest.raises(ValueError, match="not supported"):
            zoo.load(name)


# ----------------------------------------------------------------------------- paper robots


@pytest.mark.parametrize(
    ("name", "nv", "sizes"),
    [
        ("atlas", 36, {"feet_6d": 12, "feet_4x3d": 24, "hands_feet_6d": 24}),
        ("shadow_hand", 24, {"fingertips_3d": 15}),
        ("atlas_shadow_hand", 60, {"fingertips_3d": 15, "fingertips_3d_feet_6d": 27}),
        ("atlas_two_shadow_hands", 84, {"fingertips_3d": 30, "fingertips_3d_feet_6d": 42}),
    ],
)
def test_paper_robot_sizes(name: str, nv: int, sizes: dict[str, int]) -> None:
    robot = _load_or_skip(name)
    assert robot.model.nv == nv
    assert robot.presets == tuple(sizes)
    assert robot.preset == robot.presets[0]
    for preset, m in sizes.items():
        assert robot.with_preset(preset).m == m
    assert is_depth_first(robot.model)


def test_two_shadow_hands_names_and_joint_parameters() -> None:
    robot = _load_or_skip("atlas_two_shadow_hands")
    model = robot.model
    frames = [f.name for f in model.frames]
    assert len(frames) == len(set(frames))
    assert len(set(model.names)) == model.njoints
    for side, wrist in (("l_", "l_arm_wry2"), ("r_", "r_arm_wry2")):
        for tip in zoo.SHADOW_FINGERTIPS:
            assert model.existFrame(side + tip)
        first = model.getJointId(side + "robot0:WRJ1")
        assert model.names[model.parents[first]] == wrist
    hand, atlas = zoo.shadow_hand_model(), zoo.atlas_model()
    # pin.appendModel drops the appended armature; the zoo restores it
    assert np.sum(model.armature) == pytest.approx(
        2 * np.sum(hand.armature) + np.sum(atlas.armature)
    )
    tip_joints = {c.joint1_id for c in robot.with_preset("fingertips_3d").constraints}
    assert len(tip_joints) == 10
    assert sum(inertia.mass for inertia in model.inertias) == pytest.approx(
        2 * sum(i.mass for i in hand.inertias) + sum(i.mass for i in atlas.inertias)
    )


# ----------------------------------------------------------------------------- synthetic


def _branching_links(robot: zoo.Robot) -> list[int]:
    topo = pvosimr.topology_for(robot.model, robot.constraints)
    return [i for i in topo.N if 0 < i < robot.model.njoints]


@pytest.mark.parametrize(("L", "b"), [(1, 1), (1, 3), (2, 1), (10, 1), (10, 2), (5, 4), (3, 10)])
def test_stem_with_branches_sizes(L: int, b: int) -> None:
    robot = zoo.stem_with_branches(L, b)
    model = robot.model
    assert robot.name == f"stem_b{b}_L{L}"
    assert model.njoints - 1 == L + 2 * b * 7
    assert model.nv == 6 + (L - 1) + 14 * b
    assert model.joints[1].shortname() == "JointModelFreeFlyer"
    assert robot.m == 12 * b and len(robot.constraints) == 2 * b
    assert is_depth_first(model)
    stem_1, stem_L = 1, L
    expected = [stem_1] if b == 1 or L == 1 else [stem_1, stem_L]
    assert _branching_links(robot) == expected
    # every weld sits on a branch tip (a leaf), 7 links below a stem end
    for cm in robot.constraints:
        j, depth = cm.joint1_id, 0
        assert j not in set(model.parents)
        while j > L:
            j, depth = model.parents[j], depth + 1
        assert depth == 7 and j in (stem_1, stem_L)
        assert cm.joint1_placement.isIdentity()


def test_reference_link() -> None:
    robot = zoo.stem_with_branches(3, 2)
    model = robot.model
    for j in range(2, model.njoints):
        assert model.joints[j].shortname() == "JointModelRZ"
        np.testing.assert_array_equal(model.jointPlacements[j].rotation, np.eye(3))
        np.testing.assert_array_equal(model.jointPlacements[j].translation, [1.0, 0.0, 0.0])
    for inertia in model.inertias[1:]:
        assert inertia.mass == 1.0
        np.testing.assert_array_equal(inertia.lever, [0.5, 0.0, 0.0])
        np.testing.assert_allclose(inertia.inertia, np.diag([0.0025, 1.015 / 12, 1.015 / 12]))
    zero = zoo.stem_with_branches(3, 2, branch_offset=0.0).model
    first = zero.getJointId("branch_far1_1_joint")
    np.testing.assert_array_equal(zero.jointPlacements[first].translation, np.zeros(3))


@pytest.mark.parametrize("k", [1, 2, 4, 5])
def test_chain_welded_every_k_sizes(k: int) -> None:
    robot = zoo.chain_welded_every_k(k)
    assert robot.name == f"chain_welded_every_k_k{k}"
    assert robot.model.nv == robot.model.njoints - 1 == k * k
    assert robot.m == 6 * k
    assert [c.joint1_id for c in robot.constraints] == list(range(k, k * k + 1, k))
    assert _branching_links(robot) == list(range(k, k * k, k))


@pytest.mark.parametrize("n", [1, 3, 10])
def test_chain_welded_every_link_sizes(n: int) -> None:
    robot = zoo.chain_welded_every_link(n)
    assert robot.name == f"chain_welded_every_link_n{n}"
    assert robot.model.nv == n and robot.m == 6 * n
    assert robot.model.joints[1].shortname() == "JointModelRZ"  # fixed base
    assert _branching_links(robot) == list(range(1, n))


def test_chain_welded_every_link_skew_makes_it_spatial() -> None:
    """skew = 0 is the planar reference chain; skew ≠ 0 turns each joint frame about x."""
    planar = zoo.chain_welded_every_link(5, skew=0.0)
    assert planar.name == "chain_welded_every_link_n5"
    spatial = zoo.chain_welded_every_link(5, skew=1.0)
    assert spatial.name == "chain_welded_every_link_n5_skew1"
    for j in range(2, 6):
        np.testing.assert_array_equal(planar.model.jointPlacements[j].rotation, np.eye(3))
        np.testing.assert_allclose(
            spatial.model.jointPlacements[j].rotation, pin.utils.rotate("x", 1.0)
        )
    rng = np.random.default_rng(3)
    J_flat = pin.computeJointJacobians(
        planar.model, planar.model.createData(), planar.q_random(rng)
    )
    assert np.abs(J_flat[2:5]).max() < 1e-12  # vz, ωx, ωy never move in the plane
    q = spatial.q_random(rng)
    data = spatial.model.createData()
    J = pin.computeJointJacobians(spatial.model, data, q)
    assert np.abs(J[2:5]).max() > 0.1  # vz, ωx, ωy move: not planar any more
    truth = pvosimr.compute_delassus(spatial.model, data, q, spatial.constraints, "naive")
    for algorithm in pvosimr.ALGORITHMS:
        G = pvosimr.compute_delassus(spatial.model, data, q, spatial.constraints, algorithm)
        assert rel_err(G, truth) <= TOL, algorithm
    with pytest.raises(ValueError, match="skew"):
        zoo.chain_welded_every_link(3, skew=float("nan"))


def test_synthetic_names_load_by_pattern() -> None:
    assert zoo.load("stem_b3_L7").model.nv == 6 + 6 + 42
    assert zoo.load("chain_welded_every_k_k3", "welds_6d").m == 18
    assert zoo.load("chain_welded_every_link_n4").m == 24
    skewed = zoo.load("chain_welded_every_link_n4_skew0.5")
    assert skewed.name == "chain_welded_every_link_n4_skew0.5" and skewed.m == 24
    with pytest.raises(ValueError, match="positive"):
        zoo.load("stem_b0_L5")


# ----------------------------------------------------------------------------- joint types

JOINT_TYPES = {
    "screw_arm": (8, {"JointModelHZ", "JointModelHX", "JointModelHelicalUnaligned"}),
    "universal_biped": (16, {"JointModelUniversal"}),
    "composite_arms": (13, {"JointModelComposite"}),
    "ellipsoid_shoulders": (14, {"JointModelEllipsoid"}),
    "panda_mimic": (8, {"JointModelMimic"}),
}


def _fd_joint_jacobians(model: pin.Model, q: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """LOCAL joint Jacobians (njoints × 6 × nv) by central differences of forward kinematics:
    column k is log6(oMi(q)⁻¹ oMi(q ⊕ ε e_k)) / ε, symmetrised."""
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    base = [pin.SE3(data.oMi[i]) for i in range(model.njoints)]
    jac = np.zeros((model.njoints, 6, model.nv))
    for k in range(model.nv):
        step = np.zeros(model.nv)
        step[k] = eps
        logs = []
        for sign in (1.0, -1.0):
            pin.forwardKinematics(model, data, pin.integrate(model, q, sign * step))
            logs.append(
                [pin.log6(base[i].actInv(data.oMi[i])).vector for i in range(model.njoints)]
            )
        jac[:, :, k] = (np.array(logs[0]) - np.array(logs[1])) / (2 * eps)
    return jac


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            name,
            marks=[
                requires_pin_feature(*(kinds - {"JointModelComposite"})),
                *([pytest.mark.slow] if name == "panda_mimic" else []),
            ],
        )
        for name, (_, kinds) in sorted(JOINT_TYPES.items())
    ],
)
def test_joint_type_robots_and_their_dense_truth(name: str) -> None:
    """The robot has its joint types, every preset has m ≤ nv and a positive definite G, and
    Pinocchio's crba and Jacobians (the dense truth's inputs) agree with finite differences of
    its forward kinematics: M = Σ Jᵢᵀ Iᵢ Jᵢ + diag(armature) with Jᵢ from the differences.
    Every algorithm computes G on them (no refusal) within 1e-9 of that truth."""
    nv, kinds = JOINT_TYPES[name]
    robot = _load_or_skip(name)
    model = robot.model
    assert model.nv == nv and kinds <= {j.shortname() for j in model.joints}
    assert is_depth_first(model)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    q = robot.q_random(rng)
    fd = _fd_joint_jacobians(model, q)
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    for i in range(1, model.njoints):
        assert np.abs(pin.getJointJacobian(model, data, i, pin.LOCAL) - fd[i]).max() < 1e-7
    m_fd = sum(fd[i].T @ model.inertias[i].matrix() @ fd[i] for i in range(1, model.njoints))
    m = mass_matrix(model, q)
    assert rel_err(m, m_fd + np.diag(model.armature)) < 1e-7
    for preset in robot.presets:
        r = robot.with_preset(preset)
        assert 0 < r.m <= nv
        truth = dense_delassus(model, q, r.constraints)
        assert np.linalg.eigvalsh(truth).min() > 1e-9
        for algorithm in pvosimr.ALGORITHMS:  # every algorithm supports these robots' joints
            G = pvosimr.compute_delassus(model, data, q, r.constraints, algorithm=algorithm)
            assert rel_err(G, truth) <= TOL, f"{name}/{preset}/{algorithm}"


@needs_erd
@requires_pin_feature("JointModelMimic")
def test_panda_mimic_truth_equals_the_reduced_independent_fingers() -> None:
    """With the second finger mimicking the first (q₂ = a q₁ + b, v₂ = a v₁), the mimic model's
    G equals J S (Sᵀ M S)⁻¹ Sᵀ Jᵀ of the model with independent fingers, S the 9 × 8 map."""
    robot = zoo.load("panda_mimic", "fingers_3d")
    free = sources.erd_model("panda")
    assert (free.nv, robot.model.nv) == (9, 8)
    q = robot.q_random(np.random.default_rng(3))
    ratio, offset = 1.0, 0.0  # the URDF's <mimic joint="panda_finger_joint1"/> defaults
    q_free = np.append(q, ratio * q[-1] + offset)
    select = np.vstack([np.eye(8), ratio * np.eye(8)[-1]])
    jac = constraint_jacobian(free, q_free, zoo.presets.points(*FINGERS)(free)) @ select
    mass = select.T @ mass_matrix(free, q_free) @ select
    expected = jac @ np.linalg.solve(mass, jac.T)
    assert rel_err(dense_delassus(robot.model, q, robot.constraints), expected) < 1e-12
    assert np.abs(expected).max() > 1e-3  # the fingers do move the constrained points


FINGERS = ("panda_leftfinger", "panda_rightfinger")


# ----------------------------------------------------------------------------- every robot


#: The sample's robots that take seconds here: the slow suite's.
SLOWEST_ZOO = {
    "anymal_kinova", "atlas", "atlas_shadow_hand", "cassie_leg", "chain_welded_every_k_k4",
    "panda_mimic", "stem_b2_L10", "talos",
}  # fmt: skip


@pytest.mark.parametrize("name", robot_sweep(zoo.names(), slow=SLOWEST_ZOO))
def test_every_robot_and_preset_agrees_with_the_dense_truth(name: str) -> None:
    """Every algorithm within 1e-9 of J M⁻¹ Jᵀ."""
    robot = _load_or_skip(name)
    assert robot.presets and robot.preset == robot.presets[0]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    data = robot.model.createData()
    assert any(robot.with_preset(p).m > 0 for p in robot.presets)
    for preset in robot.presets:
        r = robot.with_preset(preset)
        assert r.model is robot.model and r.preset == preset and r.m > 0
        q = r.q_random(rng)
        assert pin.isNormalized(r.model, q, 1e-12)
        truth = dense_delassus(r.model, q, r.constraints)
        assert truth.shape == (r.m, r.m) and np.isfinite(truth).all()
        for algorithm in pvosimr.ALGORITHMS:
            G = pvosimr.compute_delassus(r.model, data, q, r.constraints, algorithm=algorithm)
            assert rel_err(G, truth) <= TOL, f"{name}/{preset}/{algorithm}"


def test_q_random_respects_limits_and_seed() -> None:
    model = zoo.load("talos" if HAS_ERD else "stem_b2_L3").model
    q1 = zoo.random_configuration(model, np.random.default_rng(7))
    q2 = zoo.random_configuration(model, np.random.default_rng(7))
    np.testing.assert_array_equal(q1, q2)
    assert pin.isNormalized(model, q1, 1e-12)
    for j in model.joints[1:]:
        if j.nq == 1:
            lo, hi = model.lowerPositionLimit[j.idx_q], model.upperPositionLimit[j.idx_q]
            assert lo <= q1[j.idx_q] <= hi


# ----------------------------------------------------------------------------- errors


def test_unknown_robot_lists_valid_names() -> None:
    with pytest.raises(ValueError, match="unknown robot 'atlsa'") as info:
        zoo.load("atlsa")
    message = str(info.value)
    assert "Did you mean 'atlas'" in message
    assert "stem_b2_L10" in message and "chain_welded_every_link_n10" in message


def test_a_case_given_as_a_name_says_how_to_load_it() -> None:
    """``load("atlas/feet_6d")`` names the call that takes a case, not a look-alike of itself."""
    with pytest.raises(ValueError, match="holds a '/'") as info:
        zoo.load("ur5/nosuchpreset")
    message = str(info.value)
    assert "load('ur5', 'nosuchpreset')" in message and "Did you mean" not in message
    assert "load_case('ur5/nosuchpreset')" in message


def test_unknown_preset_lists_presets() -> None:
    robot = zoo.load("chain_welded_every_k_k2")
    with pytest.raises(ValueError, match=r"unknown preset 'feet'.*\['welds_6d'\]"):
        robot.with_preset("feet")
    with pytest.raises(ValueError, match=r"valid presets: \['branch_tips_6d'\]"):
        zoo.load("stem_b1_L2", "nope")
    if HAS_ERD:
        with pytest.raises(ValueError, match=r"'feet_6d', 'hands_feet_6d'"):
            zoo.load("talos", "tool_6d")


def test_skipped_robot_gives_reason() -> None:
    with pytest.raises(ValueError, match=r"'cassie' is not supported: .*SDF"):
        zoo.load("cassie")
    for name in zoo.JOINT_TYPE_SKIPPED:  # only in a pin without some joint types
        with pytest.raises(ValueError, match=rf"{name!r} is not supported: .*pin\.JointModel"):
            zoo.load(name)


def test_missing_atlas_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(sources.MODEL_PATH_ENV, str(tmp_path))
    monkeypatch.setitem(sys.modules, "robot_descriptions", None)
    for name in ("atlas", "atlas_two_shadow_hands"):
        with pytest.raises(FileNotFoundError, match="PVOSIMR_MODEL_PATH"):
            zoo.load(name)


def test_missing_hand_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "_package_dir", lambda name: None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'pvosimr\[models\]'"):
        zoo.load("shadow_hand")


# ----------------------------------------------------------------------------- cases and files


def test_parse_case_and_load_case() -> None:
    assert zoo.parse_case("solo12") == ("solo12", None)
    assert zoo.parse_case("solo12/feet_3d") == ("solo12", "feet_3d")
    with pytest.raises(ValueError, match="ROBOT or ROBOT/PRESET"):
        zoo.parse_case("a/b/c")
    robot = zoo.load_case("chain_welded_every_link_n3/welds_6d")
    assert (robot.name, robot.preset, robot.m) == ("chain_welded_every_link_n3", "welds_6d", 18)
    with pytest.raises(ValueError, match=r"unknown preset 'x' .*\['welds_6d'\]"):
        zoo.load_case("chain_welded_every_link_n3/x")


URDF = """<robot name="two_links">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="ja" type="continuous"><parent link="base"/><child link="a"/>
    <axis xyz="0 0 1"/></joint>
  <joint name="jb" type="continuous"><parent link="a"/><child link="b"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 1 0"/></joint>
</robot>
"""


def test_from_file_keeps_constraint_order_and_matches_constraints_module(tmp_path: Path) -> None:
    path = tmp_path / "two_links.urdf"
    path.write_text(URDF)
    robot = zoo.from_file(path, [("weld", "b"), ("point", "a")], free_flyer=True)
    assert (robot.name, robot.preset, robot.presets) == (
        "two_links.urdf",
        "b_6d+a_3d",
        ("b_6d+a_3d",),
    )
    assert robot.model.nv == 8 and robot.m == 9
    expected = [
        pvosimr.constraints.weld(robot.model, "b"),
        pvosimr.constraints.point(robot.model, "a"),
    ]
    for cm, ref in zip(robot.constraints, expected, strict=True):
        assert (cm.name, cm.type, cm.joint1_id) == (ref.name, ref.type, ref.joint1_id)
        assert cm.joint1_placement.isApprox(ref.joint1_placement)
    again = robot.with_constraints([("point", "b")])
    assert again.model is robot.model and again.preset == "b_3d" and again.m == 3


def test_from_file_errors_name_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "two_links.urdf"
    path.write_text(URDF)
    with pytest.raises(FileNotFoundError, match=r"no such model file: .*missing\.urdf"):
        zoo.from_file(tmp_path / "missing.urdf", [("weld", "b")])
    with pytest.raises(
        ValueError, match=r"unknown frame 'bb' in model 'two_links'\. Did you mean 'b'"
    ):
        zoo.from_file(path, [("weld", "bb")])
    with pytest.raises(
        ValueError, match="no constraints given; the leaf links of model 'two_links' are b"
    ):
        zoo.from_file(path, [])
    with pytest.raises(ValueError, match=r"unknown constraint kind\(s\) \['contact'\]"):
        zoo.from_file(path, [("contact", "b")])
    mjcf = tmp_path / "x.xml"
    mjcf.write_text("<mujoco/>")
    with pytest.raises(ValueError, match="mimic joints come from URDF"):
        zoo.model_from_file(mjcf, mimic=True)
    bad = tmp_path / "robot.sdf"
    bad.write_text("<sdf/>")
    with pytest.raises(ValueError, match=r"unsupported model file type '\.sdf'"):
        zoo.model_from_file(bad)
    broken = tmp_path / "broken.urdf"
    broken.write_text("<robot name='x'><link name='a'>")
    with pytest.raises(ValueError, match="cannot build a Pinocchio model from it"):
        zoo.model_from_file(broken)
