"""The zoo's names: :func:`names`, :func:`skipped` and :func:`load`.

Names, in the order :func:`names` lists them:

1. the paper's robots: ``atlas``, ``shadow_hand``, ``atlas_shadow_hand``,
   ``atlas_two_shadow_hands`` (see :mod:`pvosimr.zoo.paper`);
2. the synthetic mechanisms at default sizes (see :mod:`pvosimr.zoo.synthetic`); any size is
   accepted by :func:`load` through the same patterns:

   * ``stem_b{b}_L{L}``: Fig. 3, floating stem of L links, b welded 7-link branches per end
     (listed: b = 1, 2, 4, 7, 10 as in Fig. 3b-f, L = 10);
   * ``chain_welded_every_k_k{k}``: Fig. 4a, fixed chain of k² links welded every k links
     (listed: k = 4);
   * ``chain_welded_every_link_n{n}``: Fig. 4b, fixed chain of n links, every link welded
     (listed: n = 10); ``chain_welded_every_link_n{n}_skew{s}`` is its spatial variant, each
     joint frame turned by s radians about the parent's x axis;

3. the robots built around Pinocchio 4.1's joint types: ``screw_arm`` (helical),
   ``universal_biped`` (universal), ``composite_arms`` (composite), ``ellipsoid_shoulders``
   (ellipsoid) and ``panda_mimic`` (mimic; needs example-robot-data), see
   :mod:`pvosimr.zoo.joint_types` (in :func:`skipped` where the installed pin lacks the type);
4. the mechanisms with loop closures and world-aligned contacts: ``four_bar``,
   ``atlas_holding_box`` (needs the Atlas URDF) and ``cassie_leg`` (see
   :mod:`pvosimr.zoo.closed_loops`);
5. every ``example_robot_data`` robot (sorted) except those in :func:`skipped`.
"""

from __future__ import annotations

import difflib
import importlib.util
import re
from collections.abc import Callable

from . import sources
from .closed_loops import CLOSED_LOOP_ROBOTS
from .erd import ERD_PRESETS, ERD_SKIPPED, erd_presets
from .joint_types import JOINT_TYPE_ROBOTS, JOINT_TYPE_SKIPPED
from .paper import PAPER_ROBOTS
from .robot import Robot
from .synthetic import chain_welded_every_k, chain_welded_every_link, stem_with_branches

__all__ = [
    "SYNTHETIC_DEFAULTS",
    "close_cases",
    "load",
    "load_case",
    "names",
    "parse_case",
    "skipped",
]

SYNTHETIC_DEFAULTS: tuple[str, ...] = (
    "stem_b1_L10",
    "stem_b2_L10",
    "stem_b4_L10",
    "stem_b7_L10",
    "stem_b10_L10",
    "chain_welded_every_k_k4",
    "chain_welded_every_link_n10",
)
"""Synthetic mechanisms listed by :func:`names` (others load by pattern)."""

_SYNTHETIC: tuple[tuple[re.Pattern[str], Callable[..., Robot]], ...] = (
    (re.compile(r"stem_b(\d+)_L(\d+)"), lambda b, L: stem_with_branches(int(L), int(b))),
    (re.compile(r"chain_welded_every_k_k(\d+)"), lambda k: chain_welded_every_k(int(k))),
    (
        re.compile(r"chain_welded_every_link_n(\d+)(?:_skew(-?\d+(?:\.\d+)?))?"),
        lambda n, skew: chain_welded_every_link(int(n), skew=float(skew or 0)),
    ),
)


def _erd_available() -> bool:
    return importlib.util.find_spec("example_robot_data") is not None


def _erd_all() -> list[str]:
    """example-robot-data names: from the installed package, else from the preset table."""
    if _erd_available():
        try:
            return sources.erd_names()
        except ModuleNotFoundError:
            pass
    return sorted(set(ERD_PRESETS) | set(ERD_SKIPPED))


def names() -> list[str]:
    """Every robot name :func:`load` accepts by default (see the module docstring for order).

    The example-robot-data part comes from the installed ``example_robot_data`` (falling back
    to the preset table when it is not installed; :func:`load` then says how to install it).
    Optional sources are listed even when missing (``atlas`` needs the URDF on
    ``PVOSIMR_MODEL_PATH``; the Shadow hand robots need ``gymnasium-robotics``).
    """
    erd = [n for n in _erd_all() if n not in ERD_SKIPPED]
    return [*PAPER_ROBOTS, *SYNTHETIC_DEFAULTS, *JOINT_TYPE_ROBOTS, *CLOSED_LOOP_ROBOTS, *erd]


def skipped() -> dict[str, str]:
    """Robots deliberately not in :func:`names`, with the reason (also the joint-type robots
    the installed pin cannot build)."""
    return {**ERD_SKIPPED, **JOINT_TYPE_SKIPPED}


def close_cases(spec: str, n: int = 3) -> list[str]:
    """The zoo cases nearest ``spec``, a mistyped ``ROBOT[/PRESET]``, its preset kept:
    ``"atlass/feet_6d"`` -> ``["atlas/feet_6d"]``; a listed robot is its own nearest, and an
    unlisted one with nothing near gives ``[]``."""
    name, _, preset = str(spec).partition("/")
    valid = names()
    close = [name] if name in valid else difflib.get_close_matches(name, valid, n=n)
    return [f"{c}/{preset}" if preset else c for c in close]


def load(name: str, preset: str | None = None) -> Robot:
    """The zoo robot ``name`` with constraint preset ``preset`` (default: its first preset).

    Raises:
        ValueError: unknown robot (the message lists the valid names), unknown preset (lists
            the robot's presets), or a robot in :func:`skipped` (gives the reason).
        FileNotFoundError / ModuleNotFoundError: an optional model source is missing; the
            message says how to get it (Atlas URDF, gymnasium-robotics, example-robot-data).
    """
    if not isinstance(name, str):
        raise TypeError(f"robot name must be a str, got {type(name).__name__}")
    if "/" in name:  # a ROBOT/PRESET case given as a name
        robot, _, case_preset = name.partition("/")
        raise ValueError(
            f"robot name {name!r} holds a '/': for a robot with a preset, call "
            f"load({robot!r}, {case_preset!r}) or load_case({name!r})"
        )
    built = {**PAPER_ROBOTS, **JOINT_TYPE_ROBOTS, **CLOSED_LOOP_ROBOTS}
    if name in built:
        build, presets = built[name]
        return Robot.build(name, build(), presets, preset)
    for pattern, builder in _SYNTHETIC:
        match = pattern.fullmatch(name)
        if match:
            robot = builder(*match.groups())
            return robot if preset is None else robot.with_preset(preset)
    if name in skipped():
        raise ValueError(f"robot {name!r} is not supported: {skipped()[name]}")
    if name in ERD_PRESETS or (_erd_available() and name in _erd_all()):
        model = sources.erd_model(name)
        return Robot.build(name, model, erd_presets(name, model), preset)
    close = close_cases(name if preset is None else f"{name}/{preset}")
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    raise ValueError(
        f"unknown robot {name!r}.{hint} Valid names: {names()} (synthetic sizes by pattern: "
        "stem_b{b}_L{L}, chain_welded_every_k_k{k}, chain_welded_every_link_n{n})"
    )


def parse_case(spec: str) -> tuple[str, str | None]:
    """``"robot/preset"`` -> ``("robot", "preset")``; a bare ``"robot"`` -> ``("robot", None)``.

    The command lines' ``ROBOT[/PRESET]`` form (robot and preset names hold no ``/``).
    """
    name, _, preset = str(spec).partition("/")
    if not name or "/" in preset:
        raise ValueError(f"robot case {spec!r} is not of the form ROBOT or ROBOT/PRESET")
    return name, (preset or None)


def load_case(spec: str) -> Robot:
    """The robot of ``"robot"`` (its first preset) or ``"robot/preset"``: see :func:`load`."""
    return load(*parse_case(spec))
