"""Mechanisms with loop closures and world-aligned contacts: constraints between two bodies
(``joint2_id ≠ 0``, ``joint2_placement``) and ``LOCAL_WORLD_ALIGNED`` rows.

Each constraint is a ``pin.RigidConstraintModel`` whose rows are those of Pinocchio's
``getConstraintJacobian``: the velocity of the frame on ``joint1`` relative to the frame on
``joint2``, in the first frame's axes (LOCAL) or the world's (LOCAL_WORLD_ALIGNED).  Every loop
closes exactly at the neutral configuration; the zoo's random configurations do not stay on the
loop, and need not: ``G = J M⁻¹ Jᵀ`` is defined at every ``q``.

* ``four_bar`` (fixed ground, nv = 3): a planar four-bar linkage (Grashof crank-rocker) of
  revolute joints about z: a crank (1 m) and its coupler (2 m) from the ground pivot at the
  origin, a rocker (1.5 m) from the ground pivot at (2, 0, 0); at q = 0 the crank stands at
  90° and the loop is closed.  The coupler's tip is pinned to
  the rocker's tip by a 3D point constraint (``coupler`` on joint 2, ``rocker`` on joint 3).
  Presets ``coupler_rocker_3d`` (LOCAL) and ``coupler_rocker_3d_lwa`` (LOCAL_WORLD_ALIGNED),
  m = 3.  The mechanism is planar, so no point moves out of its plane: the z row of ``J`` and
  of ``G`` is identically zero (G is singular; Pinocchio's Cholesky route refuses it).
* ``atlas_holding_box`` (Atlas v4, floating base, nv = 36): both hands hold one rigid box,
  a 6D weld between the two wrists (``l_hand`` on ``l_arm_wry2``, ``r_hand`` on
  ``r_arm_wry2``) at the box centre (midway between the hands at the neutral configuration,
  world axes), and four 3D contacts at the corners of each sole in LOCAL_WORLD_ALIGNED.
  Presets ``hands_6d_feet_4x3d_lwa`` (weld LOCAL) and ``hands_6d_lwa_feet_4x3d_lwa``
  (weld LOCAL_WORLD_ALIGNED), m = 6 + 24 = 30.  Needs the Atlas URDF (``PVOSIMR_MODEL_PATH``).
* ``cassie_leg`` (floating pelvis, nv = 19): a Cassie-like leg, built here in code because
  example-robot-data describes Cassie only by SDF and no SDF parser is used: it is *Cassie-like*
  (Agility Robotics' leg topology with link lengths and masses of the order of the public
  ``cassie.xml``, sagittal geometry simplified), not Cassie.  Hip roll (x), yaw (z) and pitch
  (y), knee, shin (the knee spring) and tarsus (y), toe (y); on the thigh a spherical joint
  carries the achilles rod (0.5012 m), which closes on the heel spring (y, on the tarsus); on
  the tarsus a foot crank (y) carries the plantar rod (y, 0.35 m), which closes on the foot.
  Presets ``rods_3d`` (the achilles and plantar closures, two-body 3D points, LOCAL; m = 6) and
  ``rods_3d_toe_2x3d_lwa`` (everything LOCAL_WORLD_ALIGNED plus two 3D contacts under the foot,
  at its heel and toe ends; m = 12).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..constraints import point
from .joint_types import box_link
from .presets import ATLAS_PRESETS, Preset, atlas_sole_corners, between, combine, world_aligned
from .sources import atlas_model
from .synthetic import add_link, limit_positions

__all__ = [
    "CLOSED_LOOP_ROBOTS",
    "atlas_box_grasp",
    "cassie_leg_model",
    "four_bar_model",
]

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


def _at(x: float = 0.0, y: float = 0.0, z: float = 0.0) -> pin.SE3:
    return pin.SE3(np.eye(3), np.array([x, y, z]))


def _rod(mass: float, length: float, along: str = "x") -> pin.Inertia:
    """A slender box of ``length`` (2 cm square section) from the joint origin along ±axis."""
    axis = {"x": 0, "-z": 2}[along]
    size = [0.02, 0.02, 0.02]
    size[axis] = length
    com = [0.0, 0.0, 0.0]
    com[axis] = length / 2 * (-1 if along.startswith("-") else 1)
    return box_link(mass, tuple(size), tuple(com))


# ----------------------------------------------------------------------------- four-bar

FOUR_BAR = {"ground": 2.0, "crank": 1.0, "coupler": 2.0, "rocker": 1.5}
"""Link lengths (m) of the four-bar: ground pivots, crank, coupler, rocker."""


def _four_bar_posture() -> tuple[float, float]:
    """The closed posture at q = 0, crank at 90°: the coupler's and the rocker's angles.

    The coupler's tip B is where the circles of radius ``coupler`` about the crank's tip
    A = (0, crank) and of radius ``rocker`` about the rocker's pivot P = (ground, 0) meet (the
    upper intersection)."""
    L = FOUR_BAR
    a, p = np.array([0.0, L["crank"]]), np.array([L["ground"], 0.0])
    d = np.linalg.norm(p - a)
    along = (L["coupler"] ** 2 - L["rocker"] ** 2 + d * d) / (2 * d)
    across = np.sqrt(L["coupler"] ** 2 - along**2)
    u = (p - a) / d
    b = a + along * u + across * np.array([-u[1], u[0]])
    return float(np.arctan2(*(b - a)[::-1])), float(np.arctan2(*(b - p)[::-1]))


def four_bar_model() -> pin.Model:
    """The four-bar's open tree: crank → coupler, and the rocker; revolute z, links along x,
    1 kg per metre; at q = 0 the loop is closed with the crank at 90°.  Limits ±π."""
    model = pin.Model()
    model.name = "four_bar"
    L = FOUR_BAR
    coupler_angle, rocker_angle = _four_bar_posture()
    crank_at = pin.SE3(pin.utils.rotate("z", np.pi / 2), np.zeros(3))
    coupler_at = pin.SE3(
        pin.utils.rotate("z", coupler_angle - np.pi / 2), _at(L["crank"]).translation
    )
    rocker_at = pin.SE3(pin.utils.rotate("z", rocker_angle), _at(L["ground"]).translation)
    crank = add_link(model, 0, "crank", pin.JointModelRZ(), crank_at, _rod(L["crank"], L["crank"]))
    coupler = _rod(L["coupler"], L["coupler"])
    add_link(model, crank, "coupler", pin.JointModelRZ(), coupler_at, coupler)
    add_link(model, 0, "rocker", pin.JointModelRZ(), rocker_at, _rod(L["rocker"], L["rocker"]))
    return limit_positions(model)


def _four_bar_closure(model: pin.Model) -> list[pin.RigidConstraintModel]:
    """The coupler's tip pinned to the rocker's tip (each placement is its link's own tip)."""
    tips = between("point", "coupler", "rocker", _at(FOUR_BAR["coupler"]), _at(FOUR_BAR["rocker"]))
    return tips(model)


FOUR_BAR_PRESETS: dict[str, Preset] = {
    "coupler_rocker_3d": _four_bar_closure,
    "coupler_rocker_3d_lwa": world_aligned(_four_bar_closure),
}


# ----------------------------------------------------------------------------- Atlas + box


def atlas_box_grasp(reference_frame: pin.ReferenceFrame = pin.ReferenceFrame.LOCAL) -> Preset:
    """A 6D weld ``l_hand`` ↔ ``r_hand`` at the centre of a box held by both hands.

    The box frame sits midway between the hands at the neutral configuration, with world axes;
    ``joint1_placement`` / ``joint2_placement`` are that frame seen from each wrist, so the weld
    holds exactly at the neutral configuration.
    """

    def build(model: pin.Model) -> list[pin.RigidConstraintModel]:
        data = model.createData()
        pin.framesForwardKinematics(model, data, pin.neutral(model))
        hands = [data.oMf[model.getFrameId(f)] for f in ("l_hand", "r_hand")]
        box = _at(*(hands[0].translation + hands[1].translation) / 2)
        offsets = [h.actInv(box) for h in hands]
        (cm,) = between("weld", "l_hand", "r_hand", *offsets, reference_frame)(model)
        cm.name = "box[l_hand-r_hand]"
        return [cm]

    return build


ATLAS_BOX_PRESETS: dict[str, Preset] = {
    "hands_6d_feet_4x3d_lwa": combine(atlas_box_grasp(), world_aligned(atlas_sole_corners())),
    "hands_6d_lwa_feet_4x3d_lwa": combine(
        atlas_box_grasp(_LWA), world_aligned(atlas_sole_corners())
    ),
}
assert set(ATLAS_BOX_PRESETS).isdisjoint(ATLAS_PRESETS)


# ----------------------------------------------------------------------------- Cassie-like leg

ACHILLES_LENGTH = 0.5012
"""Length of the achilles rod (m), as in Cassie's models."""
PLANTAR_LENGTH = 0.35
#: The leg: (link, parent, joint, placement in the parent, mass kg, rod length m, direction).
_CASSIE_LEG = (
    ("pelvis", None, pin.JointModelFreeFlyer(), _at(), 10.33, 0.2, "x"),
    ("hip_roll", "pelvis", pin.JointModelRX(), _at(0.02, 0.135), 1.82, 0.07, "-z"),
    ("hip_yaw", "hip_roll", pin.JointModelRZ(), _at(z=-0.07), 1.17, 0.09, "-z"),
    ("hip_pitch", "hip_yaw", pin.JointModelRY(), _at(z=-0.09), 5.52, 0.12, "-z"),
    ("achilles_rod", "hip_pitch", pin.JointModelSpherical(), _at(-0.05), 0.157, 0.5012, "-z"),
    ("knee", "hip_pitch", pin.JointModelRY(), _at(z=-0.12), 0.758, 0.06, "-z"),
    ("shin", "knee", pin.JointModelRY(), _at(z=-0.06), 0.577, 0.435, "-z"),
    ("tarsus", "shin", pin.JointModelRY(), _at(z=-0.435), 0.782, 0.408, "-z"),
    ("heel_spring", "tarsus", pin.JointModelRY(), _at(-0.03), 0.126, 0.1138, "x"),
    ("foot_crank", "tarsus", pin.JointModelRY(), _at(0.03, z=-0.05), 0.1261, 0.055, "x"),
    ("plantar_rod", "foot_crank", pin.JointModelRY(), _at(0.055), 0.1186, PLANTAR_LENGTH, "-z"),
    ("toe", "tarsus", pin.JointModelRY(), _at(z=-0.408), 0.1498, 0.2, "x"),
)
# Where each rod closes, in the frame of the link it closes on: the rod tip at neutral.
# Achilles: rod tip (-0.05, 0, -0.5012) from the hip pitch joint; heel spring joint at
# (-0.03, 0, -0.615) from it.  Plantar: rod tip (0.085, 0, -0.4) from the tarsus joint; toe
# joint at (0, 0, -0.408) from it.
_HEEL_SPRING_END = _at(-0.02, 0.0, 0.615 - ACHILLES_LENGTH)
_FOOT_END = _at(0.085, 0.0, 0.408 - 0.05 - PLANTAR_LENGTH)


def cassie_leg_model() -> pin.Model:
    """The Cassie-like leg's open tree (see the module docstring): nq = 20, nv = 19.

    Limits: ±π on the revolute joints, ±1 on the pelvis coordinates."""
    model = pin.Model()
    model.name = "cassie_leg"
    ids = {None: 0}
    for link, parent, joint, placement, mass, length, along in _CASSIE_LEG:
        ids[link] = add_link(model, ids[parent], link, joint, placement, _rod(mass, length, along))
    return limit_positions(model, others=1.0)


_CASSIE_RODS = combine(
    between("point", "achilles_rod", "heel_spring", _at(z=-ACHILLES_LENGTH), _HEEL_SPRING_END),
    between("point", "plantar_rod", "toe", _at(z=-PLANTAR_LENGTH), _FOOT_END),
)


def _foot_ends(model: pin.Model) -> list[pin.RigidConstraintModel]:
    """3D contacts under the foot, at its heel (the toe joint) and its toe end."""
    heel, tip = point(model, "toe"), point(model, "toe", offset=(0.2, 0.0, 0.0))
    heel.name, tip.name = "toe[heel]", "toe[tip]"
    return [heel, tip]


CASSIE_LEG_PRESETS: dict[str, Preset] = {
    "rods_3d": _CASSIE_RODS,
    "rods_3d_toe_2x3d_lwa": world_aligned(combine(_CASSIE_RODS, _foot_ends)),
}

CLOSED_LOOP_ROBOTS = {
    "four_bar": (four_bar_model, FOUR_BAR_PRESETS),
    "atlas_holding_box": (atlas_model, ATLAS_BOX_PRESETS),
    "cassie_leg": (cassie_leg_model, CASSIE_LEG_PRESETS),
}
"""Zoo name -> (model builder, presets); the first preset is the default."""
