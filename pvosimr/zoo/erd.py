"""Constraint presets for the ``example_robot_data`` robots, and the ones the zoo skips.

Frames were chosen by reading each model's frame list (``erd_model(name).frames``):

* quadrupeds and point-footed bipeds: ``feet_3d``, a 3D point contact at each foot frame;
* bipeds/humanoids: ``feet_6d``, a 6D weld on each sole (or foot/ankle link when the model
  has no sole frame); most also get ``hands_feet_6d`` (welds on both hands/wrists and feet);
* arms: ``tool_6d``, a 6D weld on the tool / end-effector frame (``tool0``, ``*_tcp``,
  ``*end_effector*``, ``link_eef``, gripper base); planar 2-3 DoF arms: ``tip_3d``;
* dexterous hands: ``fingertips_3d``, a 3D point at each fingertip frame;
* mobile and multi-arm manipulators: ``tool_6d`` / ``tools_6d`` (one weld per arm);
  legged manipulators: ``feet_3d`` and ``feet_3d_tool_6d``;
* free-flying single bodies (drones): ``base_6d``, a weld on the body.

The first preset of each robot is its default.  A robot that ``example_robot_data`` adds in a
later version and that is not in :data:`ERD_PRESETS` gets :func:`fallback_presets`.
"""

from __future__ import annotations

import pinocchio as pin

from .files import leaf_frames
from .presets import Preset, com_points, combine, points, welds

__all__ = ["ERD_PRESETS", "ERD_SKIPPED", "erd_presets", "fallback_presets"]


def _feet3(*frames: str) -> dict[str, Preset]:
    return {"feet_3d": points(*frames)}


def _legged_arm(feet: tuple[str, ...], tool: str) -> dict[str, Preset]:
    return {"feet_3d": points(*feet), "feet_3d_tool_6d": combine(points(*feet), welds(tool))}


def _humanoid(feet: tuple[str, str], hands: tuple[str, str] | None = None) -> dict[str, Preset]:
    out = {"feet_6d": welds(*feet)}
    if hands is not None:
        out["hands_feet_6d"] = welds(*hands, *feet)
    return out


def _tool(*frames: str) -> dict[str, Preset]:
    return {("tool_6d" if len(frames) == 1 else "tools_6d"): welds(*frames)}


_UNITREE_FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
_ANYMAL_FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")
_SOLO_FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
_TALOS = _humanoid(
    ("left_sole_link", "right_sole_link"), ("gripper_left_base_link", "gripper_right_base_link")
)
_ICUB = _humanoid(("l_sole", "r_sole"), ("l_hand", "r_hand"))
_SIMPLE_HUMANOID = _humanoid(("l_ankle", "r_ankle"), ("l_wrist", "r_wrist"))
_ALLEGRO = {"fingertips_3d": points(*(f"link_{k}.0_tip" for k in (3, 7, 11, 15)))}
_ALEX_HANDS = ("LeftGripperYawLink", "RightGripperYawLink")
_PSYONIC_TIPS = tuple(
    f"{side}_{finger}_anchor"
    for side in ("Left", "Right")
    for finger in ("thumb", "index", "middle", "ring", "pinky")
)
_SAKE_TIPS = tuple(f"{side}SakeFingerTip{k}" for side in ("Left", "Right") for k in (1, 2))
_G1_FINGERS = tuple(
    f"{side}_hand_{finger}_link"
    for side in ("left", "right")
    for finger in ("thumb_2", "index_1", "middle_1")
)
_G1_FEET = ("left_ankle_roll_link", "right_ankle_roll_link")
_CENTAURO_FEET = tuple(f"contact_{k}" for k in (1, 2, 3, 4))

ERD_PRESETS: dict[str, dict[str, Preset]] = {
    # quadrupeds (point feet)
    "a1": _feet3(*_UNITREE_FEET),
    "b1": _feet3(*_UNITREE_FEET),
    "go1": _feet3(*_UNITREE_FEET),
    "go2": _feet3(*_UNITREE_FEET),
    "laikago": _feet3(*_UNITREE_FEET),
    "anymal": _feet3(*_ANYMAL_FEET),
    "anymal_c": _feet3(*_ANYMAL_FEET),
    "solo8": _feet3(*_SOLO_FEET),
    "solo12": _feet3(*_SOLO_FEET),
    "hyq": _feet3("lf_foot", "lh_foot", "rf_foot", "rh_foot"),
    "quadruped": _feet3("BL_contact", "BR_contact", "FL_contact", "FR_contact"),
    # legged manipulators
    "anymal_kinova": _legged_arm(_ANYMAL_FEET, "j2s6s200_end_effector"),
    "b1_z1": _legged_arm(_UNITREE_FEET, "gripperStator"),
    "centauro": {
        "feet_3d": points(*_CENTAURO_FEET),
        "feet_3d_tools_6d": combine(points(*_CENTAURO_FEET), welds("ball1_tip", "ball2_tip")),
    },
    # bipeds and humanoids
    "bolt": _feet3("FL_FOOT", "FR_FOOT"),
    "alexander": _humanoid(("LEFT_FOOT", "RIGHT_FOOT")),
    "g1": _humanoid(_G1_FEET, ("left_rubber_hand", "right_rubber_hand")),
    "g1_with_hands": {
        **_humanoid(_G1_FEET, ("left_hand_palm_link", "right_hand_palm_link")),
        "fingertips_3d_feet_6d": combine(points(*_G1_FINGERS), welds(*_G1_FEET)),
    },
    "human": _humanoid(("left_foot", "right_foot"), ("left_hand", "right_hand")),
    "icub": _ICUB,
    "icub_reduced": _ICUB,
    "simple_humanoid": _SIMPLE_HUMANOID,
    "simple_humanoid_classical": _SIMPLE_HUMANOID,
    "talos": _TALOS,
    "talos_box": _TALOS,
    "talos_full": _TALOS,
    "talos_full_box": _TALOS,
    "talos_legs": _humanoid(("left_sole_link", "right_sole_link")),
    # upper bodies and hands
    "alex_nub_hands": {"hands_6d": welds(*_ALEX_HANDS)},
    "alex_psyonic_hands": {
        "fingertips_3d": points(*_PSYONIC_TIPS),
        "hands_6d": welds(*_ALEX_HANDS),
    },
    "alex_sake_hands": {"fingertips_3d": points(*_SAKE_TIPS), "hands_6d": welds(*_ALEX_HANDS)},
    "allegro_left_hand": _ALLEGRO,
    "allegro_right_hand": _ALLEGRO,
    "baxter": _tool("left_gripper", "right_gripper"),
    # arms
    "asr_twodof": {"tip_3d": points("Tip")},
    "double_pendulum": {"com_3d": com_points("link2")},
    "double_pendulum_continuous": {"com_3d": com_points("link2")},
    "double_pendulum_simple": {"tip_3d": points("link3")},
    "finger_edu": {"tip_3d": points("finger_tip_link")},
    "bravo7_no_ee": _tool("end_effector_ball"),
    "kinova": _tool("j2s6s200_end_effector"),
    "panda": _tool("panda_hand_tcp"),
    "panda_collision": _tool("panda_hand_tcp"),
    "so100": _tool("gripper"),
    "so101": _tool("gripper_frame_link"),
    "talos_arm": _tool("gripper_left_base_link"),
    "ur3": _tool("tool0"),
    "ur3_gripper": _tool("tool0"),
    "ur3_limited": _tool("tool0"),
    "ur5": _tool("tool0"),
    "ur5_gripper": _tool("tool0"),
    "ur5_limited": _tool("tool0"),
    "ur10": _tool("tool0"),
    "ur10_limited": _tool("tool0"),
    "xarm7": _tool("link_eef"),
    "z1": _tool("gripperStator"),
    # mobile / floating manipulators
    "bluevolta_bravo7_no_ee": _tool("end_effector_ball"),
    "falcon_bravo7_no_ee": _tool("end_effector_ball"),
    "borinot": _tool("flying_arm_2__ee"),
    "hextilt": _tool("flying_arm_5__gripper"),
    "pr2": _tool("l_gripper_tool_frame", "r_gripper_tool_frame"),
    "tiago": _tool("arm_tool_link"),
    "tiago_no_hand": _tool("arm_tool_link"),
    "tiago_dual": _tool("arm_left_tool_link", "arm_right_tool_link"),
    "tiago_pro": _tool("arm_left_tool_link", "arm_right_tool_link"),
    # free-flying bodies
    "hector": {"base_6d": welds("base_link")},
    "iris": {"base_6d": welds("iris__base_link")},
}
"""Robot name -> {preset name -> preset}; the first preset is the default."""

_MASSLESS = "the mass matrix is singular at every q (G = J M⁻¹ Jᵀ undefined): joints {} move "
_MASSLESS += "no mass, inertia or armature in example-robot-data's model"
_BRAVO_JAWS = _MASSLESS.format("'bravo_finger1_joint', 'bravo_finger2_joint' (the gripper jaws)")
_BRAVO_JAWS += "; the '*_no_ee' variant of this arm is in the zoo"

ERD_SKIPPED: dict[str, str] = {
    "cassie": (
        "example-robot-data describes it only by SDF (cassie.sdf, closed kinematic loops); "
        "this Pinocchio build has no SDFormat parser (pin.WITH_SDFORMAT is False) and the "
        "algorithms here handle kinematic trees only"
    ),
    "romeo": _MASSLESS.format(
        "LHand, LFinger12, LFinger13, LFinger21..23, LFinger31..33, LThumb1..3 and the 12 "
        "matching R* joints (the hands' fingers)"
    ),
    "bravo7_gripper": _BRAVO_JAWS,
    "bluevolta_bravo7_gripper": _BRAVO_JAWS,
    "falcon_bravo7_gripper": _BRAVO_JAWS,
}
"""example-robot-data robots not in the zoo, with the measured reason."""


def fallback_presets(model: pin.Model) -> dict[str, Preset]:
    """``leaves_6d``: a 6D weld on the body frame of every leaf joint (robots not in the table)."""
    return {"leaves_6d": welds(*leaf_frames(model))}


def erd_presets(name: str, model: pin.Model) -> dict[str, Preset]:
    """Presets of the example-robot-data robot ``name`` (table entry or fallback)."""
    return ERD_PRESETS.get(name) or fallback_presets(model)
