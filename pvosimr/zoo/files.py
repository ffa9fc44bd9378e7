"""Robots from a user's model file (URDF or MJCF), with constraints at named frames.

::

    robot = zoo.from_file("my_robot.urdf", [("weld", "tool0"), ("point", "l_foot")],
                          free_flyer=True)

This is what ``pvosimr count FILE`` and ``pvosimr validate FILE`` load: one
:class:`~pvosimr.zoo.Robot` whose single preset holds the requested constraints, in order.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import pinocchio as pin

from ..mimic import MIMIC_JOINTS, MIMIC_UNAVAILABLE
from .presets import from_frames
from .robot import Robot

__all__ = [
    "MODEL_FILE_TYPES",
    "from_file",
    "leaf_frames",
    "looks_like_model_file",
    "model_from_file",
    "urdf_model",
]

MODEL_FILE_TYPES = {".urdf": "urdf", ".xml": "mjcf", ".mjcf": "mjcf"}
"""Model file suffix (lower case) -> format."""

# pin 4 binds MJCF with a root joint under its own name (buildModelFromMJCF's overload returns a
# tuple there); in pin 3 it is buildModelFromMJCF(path, root_joint), which returns the model.
_MJCF_WITH_ROOT = getattr(pin, "buildModelFromMJCFAndRootJoint", pin.buildModelFromMJCF)


def urdf_model(path: str, *root: pin.JointModel, mimic: bool = False) -> pin.Model:
    """``pin.buildModelFromUrdf(path, *root)``; ``mimic`` turns ``<mimic>`` joints into
    ``JointModelMimic`` joints, which pvosimr takes from pin 3.8 on: before, it raises
    NotImplementedError rather than build independent joints."""
    if not mimic:
        return pin.buildModelFromUrdf(path, *root)
    if not MIMIC_JOINTS:
        raise NotImplementedError(f"{path}: {MIMIC_UNAVAILABLE}")
    return pin.buildModelFromUrdf(path, *root, mimic=True)


_CASE = re.compile(r"\w+/[\w+-]+")
"""A zoo case, ``ROBOT/PRESET``: one slash between two names, no suffix."""


def looks_like_model_file(name: str | os.PathLike[str]) -> bool:
    """Whether ``name`` reads as a path to a model file: a known suffix, or a folder part that
    is not a zoo case's ``ROBOT/PRESET`` (``atlass/feet_6d`` is a mistyped case, not a file)."""
    text = os.fspath(name)
    if Path(text).suffix.lower() in MODEL_FILE_TYPES:
        return True
    return (os.sep in text or "/" in text) and not _CASE.fullmatch(text)


def model_from_file(
    path: str | os.PathLike[str], *, free_flyer: bool = False, mimic: bool = False
) -> pin.Model:
    """A Pinocchio model from a URDF (``.urdf``) or MJCF (``.xml``/``.mjcf``) file.

    ``free_flyer`` puts a free-flyer root joint under the model; ``mimic`` (URDF only) turns
    ``<mimic>`` joints into ``JointModelMimic`` joints instead of independent ones.

    Raises:
        FileNotFoundError: no file at ``path``.
        ValueError: an unsupported suffix, ``mimic`` on MJCF, or a file Pinocchio cannot parse.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such model file: {path}")
    kind = MODEL_FILE_TYPES.get(path.suffix.lower())
    if kind is None:
        raise ValueError(
            f"{path}: unsupported model file type {path.suffix!r} ({', '.join(MODEL_FILE_TYPES)})"
        )
    if mimic and kind != "urdf":
        raise ValueError(f"{path}: mimic joints come from URDF <mimic> tags; this is {kind}")
    root = (pin.JointModelFreeFlyer(),) if free_flyer else ()
    try:
        if kind == "urdf":
            return urdf_model(str(path), *root, mimic=mimic)
        return (_MJCF_WITH_ROOT if free_flyer else pin.buildModelFromMJCF)(str(path), *root)
    except (ValueError, RuntimeError) as exc:
        raise ValueError(f"{path}: cannot build a Pinocchio model from it: {exc}") from exc


def leaf_frames(model: pin.Model) -> list[str]:
    """The BODY frame of every leaf joint (a joint no other joint hangs from), in joint order."""
    parents = set(model.parents[1:])
    out = []
    for j in range(1, model.njoints):
        if j not in parents:
            body = [
                f.name for f in model.frames if f.parentJoint == j and f.type == pin.FrameType.BODY
            ]
            out.append(body[0] if body else model.names[j])
    return out


def from_file(
    path: str | os.PathLike[str],
    constraints: Sequence[tuple[str, str | tuple[str, str]]],
    *,
    free_flyer: bool = False,
    mimic: bool = False,
    world_aligned: bool = False,
) -> Robot:
    """The robot of a model file with ``constraints``, ``(kind, frame)`` pairs kept in order.

    ``kind`` is ``"point"`` (3D point contact at the frame's origin) or ``"weld"`` (6D weld);
    a pair of frames instead of one is a loop closure between them, and ``world_aligned`` puts
    every constraint's rows in world axes (:func:`pvosimr.zoo.presets.from_frames`).
    The robot is named after the file; its one preset after the constraints (e.g.
    ``FL_FOOT_3d+tool0_6d``).  See :func:`model_from_file` for ``free_flyer`` and ``mimic``.

    Raises:
        FileNotFoundError: no file at ``path``.
        ValueError: as :func:`model_from_file`; no constraints (the message lists the model's
            leaf frames); an unknown frame (the message names the closest frames).
    """
    model = model_from_file(path, free_flyer=free_flyer, mimic=mimic)
    if not constraints:
        raise ValueError(
            f"{path}: no constraints given; the leaf links of model {model.name!r} are "
            f"{', '.join(leaf_frames(model)) or 'none'}"
        )
    name, preset = from_frames(constraints, world_aligned_rows=world_aligned)
    return Robot.build(Path(path).name, model, {name: preset})
