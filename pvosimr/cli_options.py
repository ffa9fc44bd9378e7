"""Command-line options shared by ``pvosimr count`` and ``pvosimr validate``.

A model file (URDF or MJCF) with ``--point FRAME`` / ``--weld FRAME`` constraints (repeatable,
command-line order kept), ``--free-flyer`` and ``--mimic``; the robot itself comes from
:func:`pvosimr.zoo.from_file`.  Errors end the run through ``parser.error`` (exit status 2)
with the message of the zoo: the missing file, the unknown frame and its closest names.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from . import zoo

__all__ = ["MODEL_FILE_OPTIONS", "add_model_file_options", "robot_from_file", "with_frames"]

MODEL_FILE_OPTIONS = ("--point", "--weld", "--free-flyer", "--mimic")


def add_model_file_options(parser: argparse.ArgumentParser) -> None:
    """``--point``/``--weld`` (into ``args.constraints``: ``(kind, frame)`` pairs in order),
    ``--free-flyer`` and ``--mimic``."""
    for kind, what in (("point", "3D point contact"), ("weld", "6D weld")):
        parser.add_argument(
            f"--{kind}",
            dest="constraints",
            action="append",
            type=lambda frame, kind=kind: (kind, frame),
            metavar="FRAME",
            help=f"a {what} at this frame (repeatable; command-line order is kept)",
        )
    parser.add_argument(
        "--free-flyer", action="store_true", help="add a free-flyer root joint (model files only)"
    )
    parser.add_argument(
        "--mimic",
        action="store_true",
        help="URDF <mimic> joints become Pinocchio mimic joints (default: independent joints)",
    )


def model_file_options_used(args: argparse.Namespace) -> list[str]:
    """The model-file options given on the command line (for "only with a FILE" errors)."""
    used = [f"--{kind}" for kind in dict.fromkeys(k for k, _ in args.constraints or [])]
    return used + [o for o in ("--free-flyer", "--mimic") if getattr(args, o[2:].replace("-", "_"))]


def robot_from_file(
    path: Path, args: argparse.Namespace, parser: argparse.ArgumentParser
) -> zoo.Robot:
    """:func:`pvosimr.zoo.from_file` with the parsed options; any problem is a usage error."""
    try:
        return zoo.from_file(
            path, args.constraints or [], free_flyer=args.free_flyer, mimic=args.mimic
        )
    except (FileNotFoundError, ValueError) as exc:
        hint = "; pass --point FRAME and/or --weld FRAME" if not args.constraints else ""
        parser.error(f"{exc}{hint}")


def with_frames(
    robot: zoo.Robot, args: argparse.Namespace, parser: argparse.ArgumentParser
) -> zoo.Robot:
    """A zoo robot with the ``--point``/``--weld`` constraints instead of its presets."""
    try:
        return robot.with_constraints(args.constraints)
    except ValueError as exc:
        parser.error(str(exc))
