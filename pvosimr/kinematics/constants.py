"""The numeric single call's constants: read from the model once, checked on every call.

``H_i``, the armature blocks, ``K_e``, the anchors' world placements and the motion subspaces
that do not depend on ``q`` are read on first use and kept, per model and topology.  Each
later call checks them in two cheap steps, so that an edit to the model or to a constraint
takes effect at once: :func:`pvosimr.checks.check_model` compares the model with its copy
(one C++ ``model == copy``: inertias, armature, joint placements, joint models, ...), and every
constraint's two placements are compared with the copies kept here (one ``SE3 ==`` each):
a small fraction of what reading the constants again would cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..checks import ModelCheck, check_model
from ..lowering import CONSTANT_SUBSPACE_JOINTS
from ..topology import Topology
from .frames import Kinematics, numeric_kinematics

__all__ = ["CONSTANT_SUBSPACE_JOINTS", "numeric_constants"]


@dataclass(frozen=True)
class _Entry:
    """The constants of one (model, topology), and what they were read from."""

    check: ModelCheck
    placements: tuple[pin.SE3, ...]
    constants: Kinematics


def _unit_axes(fixed: list[np.ndarray | None]):
    """``(i, k)`` for every link whose constant ``S_i`` is the unit vector ``e_k``."""
    for i, S in enumerate(fixed):
        if S is not None and S.shape == (6, 1):
            nonzero = np.flatnonzero(S)
            if nonzero.size == 1 and S[nonzero[0], 0] == 1.0:
                yield i, int(nonzero[0])


def _frozen(a: np.ndarray | None) -> np.ndarray | None:
    """A read-only copy: the constants are shared by every call, an in-place write would
    corrupt the next."""
    if a is None:
        return None
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


def _read(
    model: pin.Model,
    data: pin.Data | None,
    topology: Topology,
    constraint_models,
    check: ModelCheck,
    placements,
) -> _Entry:
    if data is None:  # a pin.Data costs O(nv³) memory and time to make: the caller's if any
        data = model.createData()
    kin = numeric_kinematics(model, data, pin.neutral(model), topology, constraint_models)
    joints = model.joints  # S_i of the joint types in CONSTANT_SUBSPACE_JOINTS, None elsewhere
    fixed = [
        _frozen(S) if i and joints[i].shortname() in CONSTANT_SUBSPACE_JOINTS else None
        for i, S in enumerate(kin.S)
    ]
    constants = Kinematics(
        X=[],
        S=fixed,
        H=[_frozen(H) for H in kin.H],
        armature=[_frozen(a) for a in kin.armature],
        K={e: _frozen(K) for e, K in kin.K.items()},
        world={key: _frozen(kin.world[key]) for key in topology.anchors.values()},
    )
    constants.axis.update(_unit_axes(fixed))
    constants.identity.update(
        i for i, S in enumerate(fixed) if S is not None and np.array_equal(S, np.eye(6))
    )
    kept = tuple(pin.SE3(P) for P in placements)  # copies: a placement may be a live view
    return _Entry(check, kept, constants)


def numeric_constants(
    model: pin.Model,
    topology: Topology,
    constraint_models,
    checked: ModelCheck | None = None,
    data: pin.Data | None = None,
) -> Kinematics:
    """What :func:`~pvosimr.kinematics.frames.numeric_kinematics` reads besides ``q`` (its
    ``constants``), kept with the topology (:meth:`~pvosimr.topology.Topology.prepared`) and read
    again after any edit to the model or to a constraint's placement, or for another model of
    the same tree.  ``checked``: ``check_model(model)`` made by the caller in
    this call (the model's comparison with its copy is not repeated); ``data``: a
    ``model.createData()`` the constants may be read with (its contents are overwritten)."""
    check = check_model(model) if checked is None else checked
    placements = tuple(  # both of every constraint: a one-body point anchor's c2 is in the world
        P for cm in constraint_models for P in (cm.joint1_placement, cm.joint2_placement)
    )
    kept: list[_Entry] = topology.prepared("numpy constants", lambda t: [])  # the last read
    if not kept or kept[0].check is not check or kept[0].placements != placements:
        kept[:] = [_read(model, data, topology, constraint_models, check, placements)]
    return kept[0].constants
