"""Robots built around the joint types Pinocchio 4.1 added: helical, universal, composite,
ellipsoid and mimic.

Every mechanism here is built in Python with ``pin.Model.addJoint`` (joints depth-first) and
solid-box links (:func:`box_link`: uniform density, the centre of mass at the box centre);
all constraints sit at tip frames offset from the joint origins, so no constraint placement is
the identity.  Joint axes are deliberately not aligned with the link frames where the joint
type allows it, so the new joint kinematics are exercised in full:

* ``screw_arm`` (fixed base, nv = 8): a vertical lead screw (``HZ``, pitch 0.05 m/rad)
  carries a carriage; on it an arm (``RZ``, ``RY``) whose forearm holds a spherical wrist
  with a tilted screwdriver (``HelicalUnaligned``, axis (0, 0.6, 0.8), pitch -0.02 m/rad)
  and, beside it, a screw along the forearm's x axis (``HX``, pitch 0.01 m/rad).  Presets
  ``driver_6d`` (a weld at the screwdriver tip) and ``tips_3d`` (points at both tips).
* ``universal_biped`` (free-flyer pelvis, nv = 16): two legs, each a ``Universal`` hip
  (x then y), a knee (``RY``) and a ``Universal`` ankle (y then x, axes turned 0.3 rad
  about z).  Presets ``feet_6d`` and ``feet_3d`` (a point at each sole centre).
* ``composite_arms`` (fixed base, nv = 13): a waist (``RZ``) and two arms, each a 3-DoF
  ``Composite`` shoulder (``RZ``, ``RY``, ``RX`` with 2 cm offsets between the axes), an
  elbow (``RY``) and a 2-DoF ``Composite`` wrist (``RevoluteUnaligned`` then ``RX``).
  Presets ``tools_6d`` and ``left_tool_3d``.
* ``ellipsoid_shoulders`` (fixed thorax, nv = 14): a scapula gliding on the thorax over an
  ``Ellipsoid`` joint (radii 0.07, 0.15, 0.08 m) on each side, then a ``Spherical``
  gleno-humeral joint and an elbow (``RY``).  Presets ``hands_6d`` and ``hands_3d``.
* ``panda_mimic`` (fixed base, nv = 8): example-robot-data's Franka Panda loaded with
  ``mimic=True``: its second finger becomes a ``JointModelMimic`` of the first (the URDF's
  ``<mimic>``), so the two fingers share one degree of freedom.  Presets ``fingers_3d`` (a
  point on each finger) and ``tool_6d`` (a weld at the hand's TCP).

Every preset has no more constraint rows than the degrees of freedom that move them, so G is
positive definite at generic configurations (Pinocchio's Cholesky reference needs that).

Position limits: ±π on one-coordinate joints (the helical ones included), none on the
others; :func:`pvosimr.zoo.random_configuration` draws within them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pinocchio as pin

from ..topology import SUPPORTED_JOINTS
from .presets import Preset, points, welds
from .sources import erd_model
from .synthetic import add_link, limit_positions

__all__ = [
    "JOINT_TYPE_ROBOTS",
    "JOINT_TYPE_SKIPPED",
    "box_link",
    "composite_arms_model",
    "ellipsoid_shoulders_model",
    "panda_mimic_model",
    "screw_arm_model",
    "universal_biped_model",
]


def box_link(mass: float, size: tuple[float, float, float], com: tuple[float, ...]) -> pin.Inertia:
    """Inertia of a solid box of ``size`` (full edge lengths) centred at ``com``.

    Rotational inertia about the centre ``m/12 diag(y²+z², x²+z², x²+y²)``.
    """
    x, y, z = size
    rotational = mass / 12.0 * np.diag([y * y + z * z, x * x + z * z, x * x + y * y])
    return pin.Inertia(mass, np.asarray(com, dtype=float), rotational)


def _se3(xyz: tuple[float, float, float], axis: str = "z", angle: float = 0.0) -> pin.SE3:
    return pin.SE3(pin.utils.rotate(axis, angle), np.asarray(xyz, dtype=float))


def _model(name: str, rows: list, tips: dict[str, tuple[str, pin.SE3]]) -> pin.Model:
    """The model ``name`` of the links of ``rows``, added depth-first in order:
    ``(parent, name, joint, placement, body)``, the parent by name (``""``: the universe), the
    placement as :func:`_se3`'s arguments, the body as :func:`box_link`'s; each link with a BODY
    frame named after it and ``tips[name]``, an operational frame's name and placement (a
    constraint site), right after it.  Limits: :func:`~pvosimr.zoo.synthetic.limit_positions`."""
    model = pin.Model()
    model.name = name
    ids = {"": 0}
    for parent, link, joint, placement, body in rows:
        ids[link] = add_link(model, ids[parent], link, joint, _se3(*placement), box_link(*body))
        if link in tips:
            tip, at = tips[link]
            joint_frame = model.getFrameId(model.names[ids[link]])
            model.addFrame(pin.Frame(tip, ids[link], joint_frame, at, pin.FrameType.OP_FRAME))
    return limit_positions(model)


def screw_arm_model() -> pin.Model:
    """``screw_arm``: a lead screw, an arm with a spherical wrist and two helical end joints."""
    helical = pin.JointModelHelicalUnaligned(np.array([0.0, 0.6, 0.8]), -0.02)
    tips = {
        "driver": ("driver_tip", _se3((0, 0.02, 0.15), "x", 0.3)),
        "screw": ("screw_tip", _se3((0.12, 0, 0.01))),
    }
    rows = [  # (parent, name, joint, placement, (mass, box size, centre of mass))
        ("", "carriage", pin.JointModelHZ(0.05), ((0, 0, 0.1),), (3.0, (0.2, 0.2, 0.1), (0, 0, 0))),
        ("carriage", "upper_arm", pin.JointModelRZ(), ((0.1, 0, 0.05), "x", 0.2),
         (1.5, (0.4, 0.06, 0.06), (0.2, 0, 0))),
        ("upper_arm", "forearm", pin.JointModelRY(), ((0.4, 0, 0),),
         (1.0, (0.3, 0.05, 0.05), (0.15, 0, 0))),
        ("forearm", "wrist", pin.JointModelSpherical(), ((0.3, 0, 0), "y", 0.4),
         (0.3, (0.05, 0.05, 0.05), (0.01, 0, 0))),
        ("wrist", "driver", helical, ((0.04, 0, 0),), (0.4, (0.03, 0.03, 0.15), (0, 0.01, 0.07))),
        ("forearm", "screw", pin.JointModelHX(0.01), ((0.3, 0.05, 0), "z", -0.5),
         (0.3, (0.12, 0.02, 0.02), (0.06, 0, 0))),
    ]  # fmt: skip
    return _model("screw_arm", rows, tips)


def universal_biped_model() -> pin.Model:
    """``universal_biped``: free-flyer pelvis, Universal hips and ankles, revolute knees."""
    x, y = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
    rows = [
        (
            "",
            "pelvis",
            pin.JointModelFreeFlyer(),
            ((0, 0, 0),),
            (8.0, (0.2, 0.3, 0.15), (0, 0, 0.02)),
        )
    ]
    tips = {}
    for side, sign in (("left", 1.0), ("right", -1.0)):
        rows += [
            ("pelvis", f"{side}_thigh", pin.JointModelUniversal(x, y), ((0, sign * 0.1, -0.08),),
             (3.0, (0.08, 0.08, 0.4), (0, 0, -0.2))),
            (f"{side}_thigh", f"{side}_shank", pin.JointModelRY(), ((0, 0, -0.4),),
             (2.0, (0.06, 0.06, 0.4), (0, 0, -0.2))),
            (f"{side}_shank", f"{side}_foot", pin.JointModelUniversal(y, x),
             ((0, 0, -0.4), "z", sign * 0.3), (0.8, (0.2, 0.08, 0.04), (0.04, 0, -0.03))),
        ]  # fmt: skip
        tips[f"{side}_foot"] = (f"{side}_sole", _se3((0.04, 0, -0.05)))
    return _model("universal_biped", rows, tips)


def _composite(*parts: tuple[pin.JointModel, pin.SE3]) -> pin.JointModelComposite:
    """One composite joint: ``parts`` in order, each at its placement in the previous one."""
    composite = pin.JointModelComposite(len(parts))
    for joint, placement in parts:
        composite.addJoint(joint, placement)
    return composite


def composite_arms_model() -> pin.Model:
    """``composite_arms``: a waist and two arms with composite shoulders and wrists (nv = 13)."""
    rows = [
        ("", "torso", pin.JointModelRZ(), ((0, 0, 0.8),), (10.0, (0.25, 0.4, 0.5), (0, 0, 0.25)))
    ]
    tips = {}
    for side, sign in (("left", 1.0), ("right", -1.0)):
        shoulder = _composite(
            (pin.JointModelRZ(), pin.SE3.Identity()),
            (pin.JointModelRY(), _se3((0, sign * 0.02, 0))),
            (pin.JointModelRX(), _se3((0.02, 0, 0), "y", 0.3)),
        )
        wrist = _composite(
            (pin.JointModelRevoluteUnaligned(np.array([0.0, 0.8, 0.6])), pin.SE3.Identity()),
            (pin.JointModelRX(), _se3((0.03, 0, 0), "z", 0.2)),
        )
        rows += [
            ("torso", f"{side}_upper_arm", shoulder, ((0, sign * 0.25, 0.45), "x", -sign * 0.4),
             (2.0, (0.3, 0.07, 0.07), (0.15, 0, 0))),
            (f"{side}_upper_arm", f"{side}_forearm", pin.JointModelRY(), ((0.3, 0, 0),),
             (1.2, (0.28, 0.05, 0.05), (0.14, 0, 0))),
            (f"{side}_forearm", f"{side}_hand", wrist, ((0.28, 0, 0),),
             (0.5, (0.1, 0.08, 0.03), (0.05, 0, 0))),
        ]  # fmt: skip
        tips[f"{side}_hand"] = (f"{side}_tool", _se3((0.12, 0, 0.01), "y", 0.5))
    return _model("composite_arms", rows, tips)


def ellipsoid_shoulders_model() -> pin.Model:
    """``ellipsoid_shoulders``: scapulae on Ellipsoid joints, spherical shoulders (nv = 14)."""
    rows, tips = [], {}
    for side, sign in (("left", 1.0), ("right", -1.0)):
        rows += [
            ("", f"{side}_scapula", pin.JointModelEllipsoid(0.07, 0.15, 0.08),
             ((-0.05, sign * 0.08, 1.3), "z", sign * 0.3),
             (0.6, (0.02, 0.12, 0.15), (0, 0, -0.02))),
            (f"{side}_scapula", f"{side}_humerus", pin.JointModelSpherical(),
             ((0.02, sign * 0.1, 0.02),), (2.0, (0.06, 0.06, 0.3), (0, 0, -0.15))),
            (f"{side}_humerus", f"{side}_forearm", pin.JointModelRY(),
             ((0, 0, -0.3), "x", sign * 0.1), (1.2, (0.05, 0.05, 0.27), (0, 0, -0.13))),
        ]  # fmt: skip
        tips[f"{side}_forearm"] = (f"{side}_hand", _se3((0, 0, -0.3), "y", 0.2))
    return _model("ellipsoid_shoulders", rows, tips)


def panda_mimic_model() -> pin.Model:
    """``panda_mimic``: example-robot-data's Panda with its finger ``<mimic>`` (nv = 8)."""
    model = erd_model("panda", mimic=True)
    model.name = "panda_mimic"
    return model


_EVERY_JOINT_TYPE_ROBOT: dict[str, tuple[Callable[[], pin.Model], dict[str, Preset]]] = {
    "screw_arm": (
        screw_arm_model,
        {"driver_6d": welds("driver_tip"), "tips_3d": points("driver_tip", "screw_tip")},
    ),
    "universal_biped": (
        universal_biped_model,
        {"feet_6d": welds("left_sole", "right_sole"), "feet_3d": points("left_sole", "right_sole")},
    ),
    "composite_arms": (
        composite_arms_model,
        {"tools_6d": welds("left_tool", "right_tool"), "left_tool_3d": points("left_tool")},
    ),
    "ellipsoid_shoulders": (
        ellipsoid_shoulders_model,
        {
            "hands_6d": welds("left_hand", "right_hand"),
            "hands_3d": points("left_hand", "right_hand"),
        },
    ),
    "panda_mimic": (
        panda_mimic_model,
        {
            "fingers_3d": points("panda_leftfinger", "panda_rightfinger"),
            "tool_6d": welds("panda_hand_tcp"),
        },
    ),
}

#: The joint type a robot is built around, where not every supported pin has it.
_NEEDS = {"ellipsoid_shoulders": "JointModelEllipsoid", "panda_mimic": "JointModelMimic"}

JOINT_TYPE_ROBOTS = {
    name: robot
    for name, robot in _EVERY_JOINT_TYPE_ROBOT.items()
    if name not in _NEEDS or _NEEDS[name] in SUPPORTED_JOINTS
}
"""Zoo name -> (model builder, presets); the first preset is the default.  Only the robots the
installed pin can build (see :data:`JOINT_TYPE_SKIPPED`)."""

JOINT_TYPE_SKIPPED = {
    name: f"it is built from pin.{_NEEDS[name]}, which pvosimr cannot take from pin "
    f"{pin.__version__}"
    for name in _EVERY_JOINT_TYPE_ROBOT.keys() - JOINT_TYPE_ROBOTS.keys()
}
"""Joint-type robots the installed pin cannot build, with the reason."""
