"""MJCF robots validated against MuJoCo's own Delassus matrix (``mujoco-efc``).

An :class:`MjcfRobot` takes its constraints from MuJoCo at each configuration: the rows of its
equality constraints and of the contacts active there (:mod:`pvosimr.reference.mujoco_efc`).
The zoo's MJCF robots (:data:`MJCF_ROBOTS`):

- ``mjcf_two_arms_bar``: two arms holding a bar (a site weld, a body weld with ``torquescale``
  and a ``connect``), on the floor with contacts of every ``condim`` (pvosimr's own file);
- ``mjcf_delta``: a delta robot, three loops closed by ``connect`` (pvosimr's own file);
- ``mjcf_quadruped``: a quadruped standing at its keyframe, four feet on the floor (pvosimr's);
- ``mjcf_shadow_hand``: the Shadow hand holding a block (gymnasium-robotics);
- ``mjcf_humanoid``, ``mjcf_ant``, ``mjcf_walker2d``: gymnasium's MuJoCo robots;
- ``mjcf_fetch``: Fetch with its gripper welded to a mocap body (gymnasium-robotics).

Configurations: the model's first keyframe (if it has one), then draws around a home pose (where
the robot rests after :data:`SETTLE_SECONDS` of MuJoCo's simulation from that keyframe or
``qpos0``):
``pin.integrate`` by a uniform ``[-½, ½]`` velocity, limited hinges and slides redrawn within
their limits, then :data:`DROP_SECONDS` of simulation, so that the robot touches what it
falls on.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin

from ..extras import require
from ..reference.mjcf import MjcfPair, mujoco_warnings, open_mjcf, pinocchio_parser_notes
from ..reference.mujoco_efc import EfcRows, efc_rows, mujoco_model_for_delassus
from .robot import random_configuration
from .sources import MODELS_EXTRA_HINT

__all__ = [
    "DROP_SECONDS",
    "MJCF_ROBOTS",
    "MUJOCO_ROWS",
    "SETTLE_SECONDS",
    "MjcfRobot",
    "mjcf_robot",
    "packaged_mjcf",
]

MUJOCO_ROWS = "mujoco_rows"
"""The one preset of an MJCF robot: MuJoCo's constraint rows at each configuration."""

SETTLE_SECONDS = 1.0
"""Simulated time from ``qpos0`` to the home pose of a robot without a keyframe."""
DROP_SECONDS = 0.5
"""Simulated time from a random draw to the configuration used (the robot lands)."""

_HERE = Path(__file__).parent / "mjcf"


def packaged_mjcf(name: str) -> Path:
    """One of pvosimr's own MJCF files (``two_arms_bar.xml``, ``delta.xml``, ...)."""
    return _HERE / name


def _installed(package: str, *parts: str) -> Callable[[], Path]:
    def path() -> Path:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise ModuleNotFoundError(
                f"this MJCF robot comes with {package}: {MODELS_EXTRA_HINT}", name=package
            )
        return Path(next(iter(spec.submodule_search_locations))).joinpath(*parts)

    return path


MJCF_ROBOTS: dict[str, Callable[[], Path]] = {
    "mjcf_two_arms_bar": lambda: packaged_mjcf("two_arms_bar.xml"),
    "mjcf_delta": lambda: packaged_mjcf("delta.xml"),
    "mjcf_quadruped": lambda: packaged_mjcf("quadruped.xml"),
    "mjcf_shadow_hand": _installed(
        "gymnasium_robotics", "envs", "assets", "hand", "manipulate_block.xml"
    ),
    "mjcf_humanoid": _installed("gymnasium", "envs", "mujoco", "assets", "humanoid.xml"),
    "mjcf_ant": _installed("gymnasium", "envs", "mujoco", "assets", "ant.xml"),
    "mjcf_walker2d": _installed("gymnasium", "envs", "mujoco", "assets", "walker2d_v5.xml"),
    "mjcf_fetch": _installed("gymnasium_robotics", "envs", "assets", "fetch", "pick_and_place.xml"),
}
"""Zoo name -> where its MJCF file is (a missing package raises ModuleNotFoundError)."""


@dataclass(frozen=True, eq=False)
class MjcfRobot:
    """An MJCF robot whose constraints are MuJoCo's rows at each configuration.

    It reads like a :class:`~pvosimr.zoo.Robot` (``name``, ``model``, ``preset``,
    ``q_random``); ``constraints`` is empty because the rows depend on the configuration:
    :meth:`efc` gives them with MuJoCo's matrix.
    """

    name: str
    pair: MjcfPair
    preset: str = MUJOCO_ROWS
    presets: tuple[str, ...] = (MUJOCO_ROWS,)
    constraints: list = field(default_factory=list)
    _engine: list = field(default_factory=list, repr=False)

    @property
    def model(self) -> pin.Model:
        return self.pair.model

    @property
    def nv(self) -> int:
        return self.pair.model.nv

    @property
    def m(self) -> int:
        return 0

    def home(self) -> np.ndarray:
        """Where the robot rests after :data:`SETTLE_SECONDS` of MuJoCo's simulation from its
        first keyframe, else from ``qpos0`` (on the floor, if it has one)."""
        mj = self.pair.mj
        return self._settled(self.pair.q(mj.key_qpos[0] if mj.nkey else mj.qpos0), SETTLE_SECONDS)

    def configuration(self, k: int, rng: np.random.Generator) -> np.ndarray:
        """The first keyframe for ``k = 0`` (if the model has one), else :meth:`q_random`."""
        mj = self.pair.mj
        return self.pair.q(mj.key_qpos[0]) if k == 0 and mj.nkey else self.q_random(rng)

    def q_random(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """A configuration near :meth:`home` where contacts happen (module docstring)."""
        rng = np.random.default_rng() if rng is None else rng
        model = self.model
        q = pin.integrate(model, self.home(), rng.uniform(-0.5, 0.5, model.nv))
        limited = random_configuration(model, rng)
        lower, upper = model.lowerPositionLimit, model.upperPositionLimit
        finite = (np.abs(lower) < 1e6) & (np.abs(upper) < 1e6) & (lower <= upper)
        for j in model.joints[1:]:
            if j.nq == 1 and j.nv == 1 and finite[j.idx_q]:
                q[j.idx_q] = limited[j.idx_q]
        return self._settled(q, DROP_SECONDS)

    def _settled(self, q: np.ndarray, seconds: float) -> np.ndarray:
        """``q`` after ``seconds`` of MuJoCo's simulation from rest, without control."""
        import mujoco

        mj = self.pair.mj
        d = mujoco.MjData(mj)
        d.qpos[:] = self.pair.qpos(q)
        with mujoco_warnings():
            for _ in range(round(seconds / mj.opt.timestep)):
                mujoco.mj_step(mj, d)
        return self.pair.q(d.qpos)

    def efc(self, q: np.ndarray) -> EfcRows:
        """MuJoCo's rows and Delassus matrix at ``q`` (:func:`efc_rows`)."""
        import mujoco

        if not self._engine:
            mj = mujoco_model_for_delassus(self.pair.mj)
            self._engine.extend([mj, mujoco.MjData(mj), self.model.createData()])
        return efc_rows(self.pair, q, *self._engine)

    def parser_notes(self) -> list[str]:
        """Where ``pin.buildModelFromMJCF`` on the file itself builds another robot than
        MuJoCo (:func:`~pvosimr.reference.mjcf.pinocchio_parser_notes`, at ``qpos0``)."""
        return pinocchio_parser_notes(self.pair, self.pair.q(self.pair.mj.qpos0))

    def with_preset(self, preset: str) -> MjcfRobot:
        if preset != MUJOCO_ROWS:
            raise ValueError(
                f"unknown preset {preset!r} for MJCF robot {self.name!r}; valid presets: "
                f"[{MUJOCO_ROWS!r}] (MuJoCo's own rows)"
            )
        return self

    def __repr__(self) -> str:
        return f"MjcfRobot({self.name!r}, {self.pair.path!r}, nv={self.nv})"


def mjcf_robot(path_or_name: str | os.PathLike[str]) -> MjcfRobot:
    """The MJCF robot of a zoo name in :data:`MJCF_ROBOTS` or of a file.

    Raises:
        ModuleNotFoundError: MuJoCo, or the package holding the model, is not installed.
        FileNotFoundError, ValueError: as :func:`pvosimr.reference.mjcf.open_mjcf`.
    """
    require("mujoco-efc", "mujoco")
    name = os.fspath(path_or_name)
    if name in MJCF_ROBOTS:
        return MjcfRobot(name, open_mjcf(MJCF_ROBOTS[name]()))
    return MjcfRobot(Path(name).name, open_mjcf(name))
