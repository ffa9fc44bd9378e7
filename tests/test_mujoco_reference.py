"""MuJoCo's own rows and Delassus matrix as a reference (pvosimr.reference.mjcf, mujoco_efc).

An MJCF robot is opened in both engines (:func:`open_mjcf`): the coordinate maps between
MuJoCo's ``qpos``/``qvel`` and Pinocchio's ``q``/``v`` (quaternion order, a hinge's ``ref``,
free-joint velocities) are checked, and ``check`` must catch a Pinocchio model that differs.
Every row kind :func:`efc_rows` maps (connect, weld with ``relpose``/``torquescale``, site
weld, contacts of condim 1, 3, 4, 6 in elliptic and pyramidal cones) has exactly MuJoCo's rows
``efc_J`` (``J_mj = J_pin T``); MuJoCo's ``efc_AR − diag(efc_R)``, pvosimr's ``G`` and the dense
truth agree to ``TOLERANCE`` on the zoo's own MJCF robots.
"""

from __future__ import annotations

import sys

import numpy as np
import pinocchio as pin
import pytest

import pvosimr
from pvosimr.reference import mjcf
from pvosimr.reference.mjcf import MjcfPair, open_mjcf, pinocchio_parser_notes
from pvosimr.reference.mujoco_efc import efc_rows, mujoco_model_for_delassus
from pvosimr.reference.truth import TOLERANCE, constraint_jacobian, dense_delassus, rel_err
from pvosimr.zoo.mujoco_robots import mjcf_robot, packaged_mjcf

mujoco = pytest.importorskip("mujoco")

ROW_TOL = 1e-12  # rows are the same numbers computed two ways (measured ~1e-15)


def write(tmp_path, name: str, xml: str) -> str:
    path = tmp_path / f"{name}.xml"
    path.write_text(xml, encoding="utf-8")
    return str(path)


def random_q(pair: MjcfPair, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    model = pair.model
    return pin.integrate(model, pin.neutral(model), rng.uniform(-1.0, 1.0, model.nv))


def rows_against_efc_J(pair: MjcfPair, q: np.ndarray):
    """``efc_rows`` at ``q``, after checking its constraints' rows against MuJoCo's ``efc_J``
    (kept rows, MuJoCo's velocity coordinates) and its ``G`` against the dense truth."""
    mj = mujoco_model_for_delassus(pair.mj)
    d = mujoco.MjData(mj)
    efc = efc_rows(pair, q, mj, d)
    nv = pair.model.nv
    J_mj = np.asarray(d.efc_J[: d.nefc * nv]).reshape(d.nefc, nv)[efc.kept]
    J = constraint_jacobian(pair.model, q, efc.constraints) @ pair.velocity_map(q)
    assert J.shape == J_mj.shape, efc.labels
    assert rel_err(J, J_mj) <= ROW_TOL, (efc.labels, rel_err(J, J_mj))
    truth = dense_delassus(pair.model, q, efc.constraints)
    assert rel_err(efc.G, truth) <= TOLERANCE, rel_err(efc.G, truth)
    efc.types = [mujoco.mjtConstraint(int(t)).name for t in np.asarray(d.efc_type)[efc.kept]]
    return efc


@pytest.fixture(scope="module")
def arms() -> MjcfPair:
    return open_mjcf(packaged_mjcf("two_arms_bar.xml"))


def joint_qpos(pair: MjcfPair, name: str) -> int:
    return int(pair.mj.joint(name).qposadr[0])


# --------------------------------------------------------------------------- coordinate maps


def test_q_and_qpos_round_trip(arms):
    for seed in range(3):
        q = random_q(arms, seed)
        np.testing.assert_allclose(arms.q(arms.qpos(q)), q, rtol=0, atol=1e-15)
        qpos = arms.qpos(q)
        np.testing.assert_allclose(arms.qpos(arms.q(qpos)), qpos, rtol=0, atol=1e-15)


def test_quaternions_are_wxyz_in_mujoco_and_xyzw_in_pinocchio(arms):
    q = pin.neutral(arms.model)
    xyzw = np.array([0.1, -0.2, 0.3, 0.9])
    xyzw /= np.linalg.norm(xyzw)
    root, wrist = joint_qpos(arms, "root"), joint_qpos(arms, "l_wrist")
    q[root + 3 : root + 7] = xyzw  # free joint: position, then the quaternion
    q[wrist : wrist + 4] = xyzw  # ball joint (after the hinges, their ref unchanged)
    qpos = arms.qpos(q)
    wxyz = np.roll(xyzw, 1)
    assert np.array_equal(qpos[root + 3 : root + 7], wxyz)
    assert np.array_equal(qpos[wrist : wrist + 4], wxyz)
    arms.check(q)


def test_a_hinge_ref_is_pinocchios_zero(arms, monkeypatch):
    elbow = joint_qpos(arms, "l_elbow")  # ref="0.3" in two_arms_bar.xml
    assert arms.mj.qpos0[elbow] == pytest.approx(0.3)
    q = random_q(arms, 1)
    assert arms.qpos(q)[elbow] == pytest.approx(q[elbow] + 0.3)
    assert arms.qpos(pin.neutral(arms.model))[elbow] == pytest.approx(0.3)
    arms.check(q)
    # without the shift the forearm is where MuJoCo's is not: check says so
    order, shift = mjcf._coordinate_map(arms.mj)
    monkeypatch.setattr(mjcf, "_coordinate_map", lambda mj: (order, np.zeros_like(shift)))
    with pytest.raises(ValueError, match="body 'l_fore'"):
        arms.check(q)


def test_limits_of_a_hinge_with_ref_count_from_ref(tmp_path):
    pair = open_mjcf(
        write(
            tmp_path,
            "ref_range",
            """<mujoco><compiler angle="radian"/><worldbody>
            <body name="a"><joint name="h" axis="0 1 0" ref="0.2" range="-0.5 0.7"/>
              <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/></body>
            </worldbody></mujoco>""",
        )
    )
    assert pair.model.lowerPositionLimit[0] == pytest.approx(-0.7)
    assert pair.model.upperPositionLimit[0] == pytest.approx(0.5)


def test_free_joint_velocities_map_through_T(arms):
    """MuJoCo's body velocities at ``qvel`` are Pinocchio's at ``v = T qvel``."""
    mj, rng = arms.mj, np.random.default_rng(4)
    q = random_q(arms, 4)
    qvel = rng.uniform(-1.0, 1.0, mj.nv)
    d = mujoco.MjData(mj)
    d.qpos[:], d.qvel[:] = arms.qpos(q), qvel
    mujoco.mj_forward(mj, d)
    T = arms.velocity_map(q)
    assert not np.allclose(T, np.eye(mj.nv))  # the torso and the bar are free and turned
    data = arms.model.createData()
    pin.forwardKinematics(arms.model, data, q, T @ qvel)
    pin.updateFramePlacements(arms.model, data)
    for b in range(1, mj.nbody):
        mine = pin.getFrameVelocity(arms.model, data, arms.body_frames[b], pin.LOCAL_WORLD_ALIGNED)
        theirs = np.zeros(6)  # (angular, linear) at the body's origin, world axes
        mujoco.mj_objectVelocity(mj, d, mujoco.mjtObj.mjOBJ_XBODY, b, theirs, 0)
        np.testing.assert_allclose(mine.angular, theirs[:3], atol=1e-12)
        np.testing.assert_allclose(mine.linear, theirs[3:], atol=1e-12)


def test_check_needs_the_free_joint_velocity_map(arms, monkeypatch):
    q = random_q(arms, 2)
    arms.check(q)
    monkeypatch.setattr(MjcfPair, "velocity_map", lambda self, q: np.eye(self.model.nv))
    with pytest.raises(ValueError, match="mass matrices differ"):
        arms.check(q)


def test_check_catches_a_changed_armature():
    pair = open_mjcf(packaged_mjcf("two_arms_bar.xml"))
    v = pair.model.joints[pair.model.getJointId("r_elbow")].idx_v
    pair.model.armature[v] += 0.05
    with pytest.raises(ValueError, match=r"mass matrices differ .*'r_elbow'"):
        pair.check(random_q(pair, 0))


def test_check_catches_a_moved_body():
    pair = open_mjcf(packaged_mjcf("two_arms_bar.xml"))
    j = pair.model.getJointId("r_elbow")
    placement = pin.SE3(pair.model.jointPlacements[j])
    placement.translation = placement.translation + np.array([0.0, 0.0, 0.01])
    pair.model.jointPlacements[j] = placement
    with pytest.raises(ValueError, match="body 'r_fore'"):
        pair.check(random_q(pair, 0))


# --------------------------------------------------------------------------- rows against efc_J

EQUALITIES = """<mujoco><compiler angle="radian"/><worldbody>
  <body name="a" pos="0 0 1">
    <joint name="ja" axis="0 1 0"/><joint name="jb" type="ball" pos="0.1 0 0"/>
    <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/>
    <site name="sa" pos="0.5 0.02 0" euler="0.2 0.5 -0.3"/>
    <body name="a2" pos="0.5 0 0"><joint name="jc" axis="1 0 0" ref="0.4"/>
      <geom type="box" size="0.1 0.05 0.05"/></body>
  </body>
  <body name="b" pos="0.6 0.1 1.1" euler="0.1 0.2 0.3"><freejoint/>
    <geom type="box" size="0.1 0.2 0.05"/>
    <site name="sb" pos="0.05 0 0.03" euler="-0.4 0.1 0.2"/>
  </body>
</worldbody>
<contact><exclude body1="a" body2="b"/><exclude body1="a2" body2="b"/></contact>
<equality>{}</equality></mujoco>"""

EQUALITY_CASES = {
    "connect bodies": ('<connect body1="a2" body2="b" anchor="0.1 0.05 0"/>', 3),
    "connect sites": ('<connect site1="sa" site2="sb"/>', 3),
    "connect to the world": ('<connect body1="world" body2="b" anchor="0.6 0.1 1.1"/>', 3),
    "weld relpose torquescale": (
        '<weld body1="a2" body2="b" anchor="0.02 0.03 0.04" '
        'relpose="0.1 0.2 0.3 0.9 0.1 0.3 0.2" torquescale="0.4"/>',
        6,
    ),
    "weld to the world": ('<weld body1="b" anchor="0.02 0.03 0.04" torquescale="2"/>', 6),
    "weld the world to": ('<weld body1="world" body2="b" relpose="0 0 -0.2 1 0 0 0"/>', 6),
    "weld sites": ('<weld site1="sa" site2="sb" torquescale="0.7"/>', 6),
}


@pytest.mark.parametrize("case", EQUALITY_CASES)
def test_equality_rows_are_mujocos(tmp_path, case):
    element, size = EQUALITY_CASES[case]
    pair = open_mjcf(write(tmp_path, "eq", EQUALITIES.format(element)))
    for seed in range(3):
        efc = rows_against_efc_J(pair, random_q(pair, seed))
        assert efc.types == ["mjCNSTR_EQUALITY"] * size
        assert not efc.left_out
        assert len(efc.labels) == 1 and efc.labels[0].startswith(case.split()[0])


def test_a_weld_torquescale_scales_its_angular_rows(tmp_path):
    G = {}
    for scale in (1.0, 3.0):
        element = f'<weld body1="a2" body2="b" torquescale="{scale}"/>'
        pair = open_mjcf(write(tmp_path, "eq", EQUALITIES.format(element)))
        G[scale] = rows_against_efc_J(pair, random_q(pair, 0)).G
    np.testing.assert_allclose(G[3.0][:3, :3], G[1.0][:3, :3], rtol=1e-12)
    np.testing.assert_allclose(G[3.0][3:, 3:], 9.0 * G[1.0][3:, 3:], rtol=1e-12)


CONTACTS = """<mujoco><option cone="{cone}"/><worldbody>
  <geom name="floor" type="plane" size="5 5 0.1" condim="1"/>
  <body pos="0 0 0.099"><freejoint/><geom name="c1" type="sphere" size="0.1" condim="1"/></body>
  <body pos="1 0 0.099"><freejoint/><geom name="c3" type="sphere" size="0.1" condim="3"/></body>
  <body pos="2 0 0.099"><freejoint/><geom name="c4" type="sphere" size="0.1" condim="4"/></body>
  <body pos="3 0 0.099"><freejoint/>
    <geom name="c6" type="sphere" size="0.1" condim="6" friction="0.7 0.03 0.002"/></body>
</worldbody></mujoco>"""
# elliptic: a condim-n contact has n rows; pyramidal: 2 (n − 1), the frictionless one 1
CONE_ROWS = {
    "elliptic": ("mjCNSTR_CONTACT_ELLIPTIC", [1, 3, 4, 6]),
    "pyramidal": ("mjCNSTR_CONTACT_PYRAMIDAL", [1, 4, 6, 10]),
}


@pytest.mark.parametrize("cone", CONE_ROWS)
def test_contact_rows_of_every_condim_are_mujocos(tmp_path, cone):
    pair = open_mjcf(write(tmp_path, "contacts", CONTACTS.format(cone=cone)))
    efc = rows_against_efc_J(pair, pair.q(pair.mj.qpos0))
    kind, sizes = CONE_ROWS[cone]
    assert [label.split("(")[1][:8] for label in efc.labels] == [
        f"condim {n}" for n in (1, 3, 4, 6)
    ]
    assert efc.types == ["mjCNSTR_CONTACT_FRICTIONLESS"] + [kind] * sum(sizes[1:])
    q = pair.q(pair.mj.qpos0)
    assert [len(constraint_jacobian(pair.model, q, [c])) for c in efc.constraints] == sizes
    # condim 4 and 6 take the angular rows of a 6D constraint, 1 and 3 a 3D one's
    assert [c.model.type == pin.ContactType.CONTACT_6D for c in efc.constraints] == [0, 0, 1, 1]


SIDES = """<mujoco><option cone="{cone}"/><worldbody>
  <body pos="0 0 0.08"><joint name="z" type="slide" axis="0 0 1"/>
    <joint name="h" axis="1 0 0"/><geom name="ball" type="sphere" size="0.1" condim="6"/>
    <body name="jointless" pos="0.3 0 0"><geom name="child" type="sphere" size="0.1" condim="4"/>
    </body>
  </body>
  <body name="static" pos="0.3 0 0"><geom name="slab" type="box" size="0.2 0.2 0.05"/></body>
  <geom name="block" type="box" size="0.1 0.1 0.1" pos="-0.05 0 0"/>
  <body pos="0 0.19 0.08"><freejoint/><geom name="other" type="sphere" size="0.1"/></body>
</worldbody></mujoco>"""


@pytest.mark.parametrize("cone", CONE_ROWS)
def test_contacts_with_the_world_second_on_jointless_and_moving_bodies(tmp_path, cone):
    """The world's geom as a contact's second geom (a box after a sphere), a jointless body's
    geom, a jointless top-level body's geom, two moving bodies."""
    pair = open_mjcf(write(tmp_path, "sides", SIDES.format(cone=cone)))
    q = pair.q(pair.mj.qpos0)
    efc = rows_against_efc_J(pair, q)
    mj = pair.mj
    d = mujoco.MjData(mj)
    d.qpos[:] = pair.qpos(q)
    mujoco.mj_fwdPosition(mj, d)
    pairs = {(mj.geom(int(c.geom[0])).name, mj.geom(int(c.geom[1])).name) for c in d.contact}
    assert ("ball", "block") in pairs  # geom[1] is the world's
    assert ("child", "slab") in pairs  # a jointless child against a jointless top-level body
    assert any("other" in p for p in pairs)  # two moving bodies
    assert len(efc.labels) == len(pairs)


# --------------------------------------------------------------------------- G on the zoo


@pytest.mark.parametrize("name", ["mjcf_two_arms_bar", "mjcf_delta", "mjcf_quadruped"])
def test_mujoco_pvosimr_and_truth_agree_on_G(name):
    robot = mjcf_robot(name)
    model, rng = robot.model, np.random.default_rng(0)
    contacts = 0
    for k in range(3):
        q = robot.configuration(k, rng)
        efc = robot.efc(q)
        if not efc.constraints:
            continue
        contacts += sum(label.startswith("contact") for label in efc.labels)
        truth = dense_delassus(model, q, efc.constraints)
        assert rel_err(efc.G, truth) <= TOLERANCE, (k, "MuJoCo", rel_err(efc.G, truth))
        for algorithm in (None, "pv-osimr", "efpa"):
            extra = {} if algorithm is None else {"algorithm": algorithm}
            G = pvosimr.compute_delassus(model, model.createData(), q, efc.constraints, **extra)
            assert rel_err(G, truth) <= TOLERANCE, (k, algorithm, rel_err(G, truth))
            assert rel_err(G, efc.G) <= TOLERANCE, (k, algorithm, rel_err(G, efc.G))
    if name != "mjcf_delta":
        assert contacts, "no configuration with contacts"


def test_the_quadruped_keyframe_stands_on_four_feet():
    robot = mjcf_robot("mjcf_quadruped")
    q = robot.configuration(0, np.random.default_rng(0))  # the keyframe
    efc = robot.efc(q)
    assert len(efc.labels) == 4 and all("condim 3" in label for label in efc.labels)
    assert {label.split("/")[1].split("'")[1] for label in efc.labels} == {
        f"{leg}_foot" for leg in ("fl", "fr", "hl", "hr")
    }
    assert efc.G.shape == (12, 12)
    assert rel_err(efc.G, dense_delassus(robot.model, q, efc.constraints)) <= TOLERANCE


def test_the_delassus_copy_keeps_the_model(arms):
    mj = mujoco_model_for_delassus(arms.mj)
    assert mj.opt.solver == mujoco.mjtSolver.mjSOL_PGS
    assert mj.opt.jacobian == mujoco.mjtJacobian.mjJAC_DENSE
    assert mj.opt.cone == arms.mj.opt.cone
    assert arms.mj.opt.solver != mujoco.mjtSolver.mjSOL_PGS  # the pair's model is untouched


# --------------------------------------------------------------------------- rows left out

LEFT_OUT = """<mujoco><compiler angle="radian"/><worldbody>
  <body name="a"><joint name="h1" axis="0 1 0" range="-0.5 0.5" frictionloss="0.1"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
    <body name="b" pos="0.3 0 0"><joint name="h2" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/></body></body>
  <body name="c" pos="0 0.5 0"><joint name="h3" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/></body>
</worldbody>
<equality><connect body1="b" body2="world" anchor="0.3 0 0"/>
  <joint joint1="h3" joint2="h2"/></equality></mujoco>"""


def test_rows_left_out_are_counted_by_kind(tmp_path):
    pair = open_mjcf(write(tmp_path, "left_out", LEFT_OUT))
    q = np.array([0.6, 0.1, 0.2])  # h1 beyond its upper limit
    efc = rows_against_efc_J(pair, q)
    assert dict(efc.left_out) == {"limit joint": 1, "friction dof": 1, "equality joint": 1}
    assert efc.types == ["mjCNSTR_EQUALITY"] * 3 and efc.labels == ["connect 0"]
    inside = rows_against_efc_J(pair, np.array([0.2, 0.1, 0.2]))
    assert "limit joint" not in inside.left_out


# --------------------------------------------------------------------------- failures


def test_a_missing_mujoco_is_one_line_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)
    with pytest.raises(ModuleNotFoundError) as caught:
        open_mjcf(packaged_mjcf("delta.xml"))
    message = str(caught.value)
    assert 'pip install "pvosimr[mujoco]"' in message and "\n" not in message
    assert caught.value.name == "mujoco"


def test_a_file_mujoco_cannot_compile_is_named(tmp_path):
    path = write(tmp_path, "broken", '<mujoco><worldbody><body><joint type="spiral"/>')
    with pytest.raises(ValueError, match=r"broken\.xml: MuJoCo cannot compile it"):
        open_mjcf(path)


def test_a_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nowhere\.xml"):
        open_mjcf(tmp_path / "nowhere.xml")


# --------------------------------------------------------------------------- Pinocchio's parser

ARM = """<geom type="sphere" size="0.1"/>
    <body name="c" pos="0 0.1 -0.3"><joint name="h" axis="0 1 0"/><geom type="sphere" size="0.1"/>
    </body>"""


def notes(tmp_path, worldbody: str) -> list[str]:
    pair = open_mjcf(
        write(tmp_path, "notes", f"<mujoco><worldbody>{worldbody}</worldbody></mujoco>")
    )
    return pinocchio_parser_notes(pair, random_q(pair, 0))


def test_parser_notes_a_second_top_level_body(tmp_path):
    found = notes(
        tmp_path,
        f'<body name="a"><joint name="s" type="slide" axis="0 0 1"/>{ARM}</body>'
        '<body name="b" pos="1 0 0"><joint name="t" axis="0 0 1"/><geom type="sphere" size="0.1"/>'
        "</body>",
    )
    assert len(found) == 1 and "nv=2" in found[0] and "nv=3" in found[0], found


def test_parser_notes_a_top_level_pose_it_ignores(tmp_path):
    found = notes(tmp_path, f'<body name="a" pos="0.3 0.2 0.5">{ARM}</body>')
    assert any("'c'" in note for note in found), found


def test_parser_notes_a_body_only_turned(tmp_path):
    """A jointless top-level body turned about z over its child: the child is where MuJoCo
    puts it, turned."""
    child = (
        '<body name="c" pos="0 0 -0.3"><joint name="h" axis="0 1 0"/>'
        '<geom type="sphere" size="0.1"/></body>'
    )
    found = notes(
        tmp_path, f'<body name="a" euler="0 0 30"><geom type="sphere" size="0.1"/>{child}</body>'
    )
    assert any("'c'" in note for note in found), found


PIN3_PARSER = pytest.mark.skipif(
    int(pin.__version__.split(".")[0]) < 4,
    reason="pin 3's MJCF parser builds these otherwise (a hinge's ref, a free top-level body's "
    "pose): its notes say so there",
)


@PIN3_PARSER
@pytest.mark.parametrize(
    "worldbody",
    [
        f'<body name="a"><joint name="s" type="slide" axis="0 0 1"/>{ARM}</body>',
        f'<body name="a" pos="0.3 0.2 0.5"><joint name="s" type="slide" axis="1 0 0"/>{ARM}</body>',
        f'<body name="a"><joint name="s" axis="1 0 0" ref="30"/>{ARM}</body>',
    ],
    ids=["plain", "posed slide", "hinge ref"],
)
def test_parser_notes_nothing_where_pinocchio_agrees(tmp_path, worldbody):
    assert notes(tmp_path, worldbody) == []


@PIN3_PARSER
def test_parser_notes_on_the_zoo(arms):
    assert pinocchio_parser_notes(arms, random_q(arms, 0))  # two top-level bodies, a keyframe
    quadruped = open_mjcf(packaged_mjcf("quadruped.xml"))
    assert pinocchio_parser_notes(quadruped, random_q(quadruped, 0)) == []
