"""The :class:`Robot` the zoo hands out: a Pinocchio model plus one named constraint set."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from ..constraints import constraint_dim
from .presets import Preset, from_frames

__all__ = ["Robot", "random_configuration"]

# Joint limits beyond this magnitude count as "no limit" (URDF/Pinocchio use ±DBL_MAX).
_NO_LIMIT = 1e6


def random_configuration(model: pin.Model, rng: np.random.Generator | None = None) -> np.ndarray:
    """A random valid configuration of ``model`` (unit quaternions / unit complex numbers).

    The draw is ``q = pin.integrate(model, pin.neutral(model), v)`` with ``v`` uniform in
    ``[-1, 1]^nv``: rotations up to 1 rad about a random axis for free-flyer, spherical and
    unbounded (RUB) joints, translations within ±1 (length unit of the model) for free-flyer,
    planar, translation and unbounded prismatic joints.  Then every one-coordinate joint
    (revolute or prismatic, ``nq = nv = 1``) whose position limits are both finite is redrawn
    uniformly between its limits, so such configurations respect the model's joint limits.
    """
    rng = np.random.default_rng() if rng is None else rng
    q = pin.integrate(model, pin.neutral(model), rng.uniform(-1.0, 1.0, model.nv))
    lower = np.asarray(model.lowerPositionLimit, dtype=float)
    upper = np.asarray(model.upperPositionLimit, dtype=float)
    for j in model.joints[1:]:
        if j.nq == 1 and j.nv == 1:
            lo, hi = lower[j.idx_q], upper[j.idx_q]
            if abs(lo) < _NO_LIMIT and abs(hi) < _NO_LIMIT and lo <= hi:
                q[j.idx_q] = rng.uniform(lo, hi)
    return q


@dataclass(frozen=True, eq=False)
class Robot:
    """One robot of the zoo with one of its constraint sets ("presets").

    Attributes:
        name: zoo name (see :func:`pvosimr.zoo.names`).
        model: the ``pinocchio.Model`` (kinematics and inertias only, no geometry).
        preset: name of the selected constraint set.
        constraints: its ``pin.RigidConstraintModel`` list (CONTACT_3D / CONTACT_6D, LOCAL),
            ready for :func:`pvosimr.compute_delassus` or ``pin.computeDelassusMatrix``.
        presets: every preset name of this robot; the first one is the default.

    :meth:`with_preset` shares the same ``model`` object (constraints refer to its joints).
    """

    name: str
    model: pin.Model
    preset: str
    constraints: list[pin.RigidConstraintModel]
    presets: tuple[str, ...]
    _builders: Mapping[str, Preset] = field(repr=False, compare=False)

    @classmethod
    def build(
        cls,
        name: str,
        model: pin.Model,
        builders: Mapping[str, Preset],
        preset: str | None = None,
    ) -> Robot:
        """The robot with ``preset`` (default: the first of ``builders``) applied."""
        presets = tuple(builders)
        if not presets:
            raise ValueError(f"robot {name!r} has no constraint preset")
        if preset is None:
            preset = presets[0]
        if preset not in builders:
            close = difflib.get_close_matches(str(preset), presets, n=1)
            hint = f"; did you mean {name}/{close[0]}?" if close else ""
            raise ValueError(
                f"unknown preset {preset!r} for robot {name!r}; valid presets: {list(presets)}"
                + hint
            )
        constraints = list(builders[preset](model))
        return cls(name, model, preset, constraints, presets, dict(builders))

    def with_preset(self, preset: str) -> Robot:
        """The same robot (same ``model`` object) with another constraint preset."""
        return Robot.build(self.name, self.model, self._builders, preset)

    def with_constraints(self, requested: Sequence, *, world_aligned: bool = False) -> Robot:
        """The same robot with one preset made of ``(kind, frame)`` pairs, in order.

        See :func:`pvosimr.zoo.presets.from_frames` (kinds ``"point"``, ``"weld"``, a pair of
        frames for a loop closure, ``world_aligned`` rows); an unknown frame raises ValueError
        naming the closest frames of the model.
        """
        name, preset = from_frames(requested, world_aligned_rows=world_aligned)
        return Robot.build(self.name, self.model, {name: preset})

    def q_random(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """A random valid configuration: see :func:`random_configuration`."""
        return random_configuration(self.model, rng)

    @property
    def m(self) -> int:
        """Total constraint dimension (rows of the Delassus matrix)."""
        return sum(constraint_dim(cm) for cm in self.constraints)

    @property
    def nv(self) -> int:
        """Degrees of freedom of the model."""
        return self.model.nv

    def __repr__(self) -> str:
        return (
            f"Robot({self.name!r}, preset={self.preset!r}, nv={self.model.nv}, m={self.m}, "
            f"presets={self.presets})"
        )
