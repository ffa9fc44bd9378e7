"""The :class:`~pvosimr.kinematics.frames.Kinematics` of a symbolic configuration (CasADi SX).

The pin wheel has no CasADi bindings: the backend-generic joint models of
:mod:`pvosimr.kinematics.joints` run on SX and give the fields Pinocchio's ``forwardKinematics``
gives numerically, with the model's constants folded in.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pinocchio as pin

from ..backends.casadi import CASADI
from ..constraints import as_constraint_list
from ..topology import Topology
from .frames import Kinematics, backend_kinematics
from .joints import joint_kinematics
from .placements import placement_actions

__all__ = ["symbolic_kinematics"]


def symbolic_kinematics(
    model: pin.Model,
    q: Any,
    topology: Topology,
    constraint_models: Iterable,
    p: Any = None,
) -> Kinematics:
    """The :class:`Kinematics` of ``model`` at a symbolic ``q`` (SX, nq × 1), constants folded.

    ``p`` (SX, :func:`placement_size` × 1) makes the constraint placements symbolic too
    (:mod:`pvosimr.kinematics.placements`); by default they are the constraint models' own numbers.
    """
    X, S = joint_kinematics(CASADI, model, q, topology)
    cms = as_constraint_list(constraint_models, model)
    actions = None if p is None else placement_actions(CASADI, topology, p)
    return backend_kinematics(CASADI, model, X, S, topology, cms, actions)
