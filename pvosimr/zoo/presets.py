"""Constraint sets ("presets") for the robots the project validates on.

Each preset is a function ``model -> list[pin.RigidConstraintModel]`` built from frame names,
so it works on any model that has those frames (e.g. Atlas alone or Atlas with hands).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pinocchio as pin

from ..constraints import find_frame, point, weld

__all__ = [
    "ATLAS_PRESETS",
    "CONSTRAINT_KINDS",
    "Preset",
    "atlas_sole_corners",
    "between",
    "com_points",
    "combine",
    "from_frames",
    "points",
    "sole_corners",
    "welds",
    "world_aligned",
]

Preset = Callable[[pin.Model], list[pin.RigidConstraintModel]]

# Atlas v4 sole: the bottom face of the l_foot/r_foot collision box of the URDF
# (box 0.227 × 0.133887 × 0.05 centred at (0.023, 0, -0.049119) in the foot frame).
_ATLAS_SOLE_CENTRE = np.array([0.023, 0.0, -0.049119 - 0.025])
_ATLAS_SOLE_HALF = np.array([0.227 / 2, 0.133887 / 2])


def welds(*frames: str) -> Preset:
    """A 6D weld on each frame."""
    return lambda model: [weld(model, f) for f in frames]


def points(*frames: str) -> Preset:
    """A 3D point contact at each frame's origin."""
    return lambda model: [point(model, f) for f in frames]


def com_points(*frames: str) -> Preset:
    """A 3D point contact at the centre of mass of the link carrying each frame.

    For links without a tool or tip frame (e.g. the double pendulums): the point is
    ``model.inertias[j].lever`` in the frame of the frame's parent joint ``j``.
    """

    def build(model: pin.Model) -> list[pin.RigidConstraintModel]:
        out = []
        for f in frames:
            frame = find_frame(model, f)
            com_in_frame = frame.placement.actInv(model.inertias[frame.parentJoint].lever)
            cm = point(model, f, offset=com_in_frame)
            cm.name = f"{f}[com]"
            out.append(cm)
        return out

    return build


CONSTRAINT_KINDS = {"point": 3, "weld": 6}
"""Constraint kinds :func:`from_frames` builds, with their dimension."""


def from_frames(
    requested: Sequence[tuple[str, str | tuple[str, str]]], *, world_aligned_rows: bool = False
) -> tuple[str, Preset]:
    """A preset of ``(kind, frame)`` pairs, in the given order, and its name.

    ``kind`` is ``"point"`` (3D point contact at the frame origin) or ``"weld"`` (6D weld).  A
    pair of frames ``(frame1, frame2)`` is a loop closure between them (:func:`between`).  With
    ``world_aligned_rows`` every constraint's rows are in world axes (:func:`world_aligned`).
    The name joins ``{frame}_3d`` / ``{frame}_6d`` (``{frame1}-{frame2}_6d`` for a loop
    closure) with ``+``, and ends in ``_lwa`` for world-aligned rows; e.g.
    ``from_frames([("weld", "tool0")])`` is ``("tool0_6d", welds("tool0"))``.
    """
    requested = [(str(kind), frames) for kind, frames in requested]
    bad = [kind for kind, _ in requested if kind not in CONSTRAINT_KINDS]
    if bad:
        raise ValueError(f"unknown constraint kind(s) {bad}; valid: {list(CONSTRAINT_KINDS)}")
    if not requested:
        raise ValueError("no constraints requested (give at least one point or weld frame)")
    builders = {"point": point, "weld": weld}

    def one(kind: str, frames) -> Preset:
        if isinstance(frames, str):
            return lambda model: [builders[kind](model, frames)]
        frame1, frame2 = frames
        return between(kind, frame1, frame2)

    def label(frames) -> str:
        return frames if isinstance(frames, str) else "-".join(frames)

    name = "+".join(f"{label(frames)}_{CONSTRAINT_KINDS[kind]}d" for kind, frames in requested)
    preset = combine(*(one(kind, frames) for kind, frames in requested))
    if world_aligned_rows:
        return f"{name}_lwa", world_aligned(preset)
    return name, preset


def combine(*presets: Preset) -> Preset:
    """The constraints of every preset, concatenated in order."""
    return lambda model: [cm for p in presets for cm in p(model)]


def sole_corners(
    frame: str, centre: np.ndarray, half: np.ndarray
) -> Callable[[pin.Model], list[pin.RigidConstraintModel]]:
    """Four 3D point contacts at the corners of a rectangular sole below ``frame``."""

    def build(model: pin.Model) -> list[pin.RigidConstraintModel]:
        out = []
        for sx, sy in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
            cm = point(model, frame, offset=centre + np.array([sx * half[0], sy * half[1], 0.0]))
            cm.name = f"{frame}[{'+' if sx > 0 else '-'}x{'+' if sy > 0 else '-'}y]"
            out.append(cm)
        return out

    return build


def atlas_sole_corners(feet: Sequence[str] = ("l_foot", "r_foot")) -> Preset:
    """Four 3D contacts at the corners of each Atlas sole (12D per foot)."""
    return combine(*(sole_corners(f, _ATLAS_SOLE_CENTRE, _ATLAS_SOLE_HALF) for f in feet))


#: Atlas's constraint sets of the paper: Fig. 5a, Fig. 5b and the Sec. IV-E caveat.
ATLAS_PRESETS: dict[str, Preset] = {
    "feet_6d": welds("l_foot", "r_foot"),
    "feet_4x3d": atlas_sole_corners(),
    "hands_feet_6d": welds("l_hand", "r_hand", "l_foot", "r_foot"),
}


def world_aligned(preset: Preset) -> Preset:
    """``preset`` with every constraint's rows in ``LOCAL_WORLD_ALIGNED``: the contact point's
    velocity (and the angular velocity) in world axes, as contact solvers with a world
    friction cone write them."""

    def build(model: pin.Model) -> list[pin.RigidConstraintModel]:
        out = []
        for cm in preset(model):
            aligned = pin.RigidConstraintModel(
                cm.type,
                model,
                cm.joint1_id,
                cm.joint1_placement,
                cm.joint2_id,
                cm.joint2_placement,
                pin.ReferenceFrame.LOCAL_WORLD_ALIGNED,
            )
            aligned.name = cm.name
            out.append(aligned)
        return out

    return build


def between(
    kind: str,
    frame1: str,
    frame2: str,
    offset1: pin.SE3 | None = None,
    offset2: pin.SE3 | None = None,
    reference_frame: pin.ReferenceFrame = pin.ReferenceFrame.LOCAL,
) -> Preset:
    """One constraint between two bodies (a loop closure): ``kind`` ``"point"`` (CONTACT_3D)
    or ``"weld"`` (CONTACT_6D) between ``frame1 · offset1`` on the first link
    (``joint1_placement``) and ``frame2 · offset2`` on the second (``joint2_placement``).

    Rows as Pinocchio's ``getConstraintJacobian`` defines them: the velocity of frame 1
    relative to frame 2, in frame 1's axes (LOCAL) or the world's (LOCAL_WORLD_ALIGNED).
    """
    contact_type = {"point": pin.ContactType.CONTACT_3D, "weld": pin.ContactType.CONTACT_6D}[kind]

    def build(model: pin.Model) -> list[pin.RigidConstraintModel]:
        ends = []
        for name, offset in ((frame1, offset1), (frame2, offset2)):
            frame = find_frame(model, name)
            placement = frame.placement if offset is None else frame.placement * offset
            ends.append((frame.parentJoint, placement))
        (j1, p1), (j2, p2) = ends
        cm = pin.RigidConstraintModel(contact_type, model, j1, p1, j2, p2, reference_frame)
        cm.name = f"{frame1}-{frame2}"
        return [cm]

    return build
