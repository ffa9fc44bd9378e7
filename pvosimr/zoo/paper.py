"""The paper's robots (Sec. IV-C/D): Atlas, the Shadow hand, and Atlas with Shadow hands.

* ``atlas``: Atlas v4, floating base at the pelvis, nv = 36 (Fig. 5 and the Sec. IV-E caveat).
* ``shadow_hand``: the Shadow Dexterous Hand alone, fixed base, nv = 24 (Fig. 6a).
* ``atlas_shadow_hand``: a Shadow hand on Atlas's left wrist, nv = 60 (Fig. 6b).
* ``atlas_two_shadow_hands``: a Shadow hand on each wrist, nv = 84 (Fig. 6c, 6d).

Attaching a hand: the hand model's joint and frame names get a prefix (``l_`` on the left
wrist, ``r_`` on the right, e.g. ``l_robot0:S_fftip``, ``r_robot0:FFJ3``) so both hands can
live in one model, then ``pin.appendModel`` puts it on Atlas's ``l_hand`` / ``r_hand`` frame
(a frame of the last wrist joint ``l_arm_wry2`` / ``r_arm_wry2`` with identity placement).
Placement: the hand's ``robot0:hand mount`` body frame (the MJCF's mounting plate, from
which the 4 kg forearm extends to the first wrist joint ``WRJ1`` at (0, 0.01, 0.256) m)
coincides with Atlas's wrist link frame — identity rotation, no offset.  The jointless mount
and forearm bodies become part of Atlas's wrist link (+4.1 kg).  The same (right) Shadow
hand model goes on both wrists: the paper only needs the tree, not a mirrored hand.
``pin.appendModel`` inserts the hand's joints right after the wrist joint, so the tree stays
depth-first.
"""

from __future__ import annotations

import pinocchio as pin

from .presets import ATLAS_PRESETS, Preset, combine, points, welds
from .sources import SHADOW_FINGERTIPS, atlas_model, copy_joint_parameters, shadow_hand_model

__all__ = [
    "ATLAS_SHADOW_HAND_PRESETS",
    "ATLAS_TWO_SHADOW_HANDS_PRESETS",
    "SHADOW_HAND_PRESETS",
    "SHADOW_MOUNT",
    "atlas_shadow_hand_model",
    "atlas_two_shadow_hands_model",
    "prefixed_shadow_hand_model",
]

SHADOW_MOUNT = "robot0:hand mount"
"""Frame of the Shadow hand model that is bolted to a wrist."""

_ATLAS_WRISTS = {"l_": "l_hand", "r_": "r_hand"}
_ATLAS_FEET = welds("l_foot", "r_foot")


def prefixed_shadow_hand_model(prefix: str) -> pin.Model:
    """:func:`~pvosimr.zoo.sources.shadow_hand_model` with ``prefix`` on every joint/frame name."""
    hand = shadow_hand_model()
    for i in range(1, hand.njoints):
        hand.names[i] = prefix + hand.names[i]
    for f in range(1, len(hand.frames)):
        hand.frames[f].name = prefix + hand.frames[f].name
    hand.name = f"{prefix}shadow_hand"
    return hand


def _attach_hand(robot: pin.Model, prefix: str) -> pin.Model:
    hand = prefixed_shadow_hand_model(prefix)
    mount = hand.frames[hand.getFrameId(prefix + SHADOW_MOUNT)].placement
    wrist = robot.getFrameId(_ATLAS_WRISTS[prefix])
    combined = pin.appendModel(robot, hand, wrist, mount.inverse())
    # pin.appendModel (pin 4.1.0) keeps the limits but drops the appended model's armature,
    # which is part of the mass matrix: restored with the other per-joint arrays
    copy_joint_parameters(robot, combined)
    copy_joint_parameters(hand, combined)
    return combined


def atlas_shadow_hand_model() -> pin.Model:
    """Atlas with a Shadow hand (prefix ``l_``) on its left wrist: nq = 61, nv = 60."""
    model = _attach_hand(atlas_model(), "l_")
    model.name = "atlas_shadow_hand"
    return model


def atlas_two_shadow_hands_model() -> pin.Model:
    """Atlas with a Shadow hand on each wrist (prefixes ``l_``, ``r_``): nq = 85, nv = 84."""
    model = _attach_hand(_attach_hand(atlas_model(), "l_"), "r_")
    model.name = "atlas_two_shadow_hands"
    return model


def _fingertips(prefix: str = "") -> Preset:
    return points(*(prefix + tip for tip in SHADOW_FINGERTIPS))


SHADOW_HAND_PRESETS: dict[str, Preset] = {"fingertips_3d": _fingertips()}
"""Fig. 6a: 3D points on the five fingertips (m = 15)."""

ATLAS_SHADOW_HAND_PRESETS: dict[str, Preset] = {
    "fingertips_3d": _fingertips("l_"),
    "fingertips_3d_feet_6d": combine(_fingertips("l_"), _ATLAS_FEET),
}
"""Fig. 6b: the five fingertips of the left hand (m = 15); plus both feet welded (m = 27)."""

ATLAS_TWO_SHADOW_HANDS_PRESETS: dict[str, Preset] = {
    "fingertips_3d": combine(_fingertips("l_"), _fingertips("r_")),
    "fingertips_3d_feet_6d": combine(_fingertips("l_"), _fingertips("r_"), _ATLAS_FEET),
}
"""Fig. 6c: ten fingertips (m = 30); Fig. 6d: plus a 6D weld on each foot (m = 42)."""

PAPER_ROBOTS = {
    "atlas": (atlas_model, ATLAS_PRESETS),
    "shadow_hand": (shadow_hand_model, SHADOW_HAND_PRESETS),
    "atlas_shadow_hand": (atlas_shadow_hand_model, ATLAS_SHADOW_HAND_PRESETS),
    "atlas_two_shadow_hands": (atlas_two_shadow_hands_model, ATLAS_TWO_SHADOW_HANDS_PRESETS),
}
"""Zoo name -> (model builder, presets); the first preset is the default."""
