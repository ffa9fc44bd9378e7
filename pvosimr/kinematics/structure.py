"""The :class:`~pvosimr.kinematics.frames.Kinematics` of a symbolic configuration on the counting
backend (:mod:`pvosimr.backends.counting`): each entry's structure, not its value.

The backend-generic joint models of :mod:`pvosimr.kinematics.joints` run on a symbolic ``q``, so
an entry varies exactly where it varies with ``q`` (no configuration is drawn, none can be
special); the model's constants are folded as the CasADi path folds them.  The constraints'
own placements give ``K`` where the constraint models are known; without them a placement is
generic: a translated, unrotated frame (``K = [I, −p×]``).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pinocchio as pin

from ..backends.counting import CountingBackend
from ..constraints import as_constraint_list
from ..topology import Topology
from .frames import (
    Kinematics,
    backend_kinematics,
    link_constants,
    link_world,
)
from .joints import joint_kinematics

__all__ = ["structure_kinematics"]


def _generic_placement() -> np.ndarray:
    """``^{c}X_i`` of a translated, unrotated frame (its ``actionInverse``)."""
    return pin.SE3(np.eye(3), np.array([0.1, 0.2, 0.3])).actionInverse


def structure_kinematics(
    B: CountingBackend,
    model: pin.Model,
    topology: Topology,
    constraint_models: Iterable | None = None,
) -> Kinematics:
    """:class:`Kinematics` on ``B``: joint models at a symbolic ``q``, the model's constants
    folded; the constraints' own placements when given, else generic ones."""
    X, S = joint_kinematics(B, model, B.symbol(model.nq), topology)
    if constraint_models is not None:
        cms = as_constraint_list(constraint_models, model)
        return backend_kinematics(B, model, X, S, topology, cms)
    H, armature = link_constants(model, topology)
    K, world = _generic_rows(B, X, topology)
    return Kinematics(
        X=X,
        S=S,
        H=[B.const(h) for h in H],
        armature=[None if a is None else B.const(a) for a in armature],
        K={e: B.const(k) for e, k in K.items()},
        world=world,
    )


def _generic_rows(B: CountingBackend, X: list, topo: Topology) -> tuple[dict, dict]:
    """``K`` and ``Kinematics.world`` of generic placements: the mimic couplings' own rows."""
    n_virtual = len(topo.ees) - sum(len(c.rows) for c in topo.couplings)
    K = {e: _generic_placement()[: topo.dim_of[e]] for e in topo.ees[:n_virtual]}
    rows = [row for c in topo.couplings for _, row in c.rows]
    K.update(zip(topo.ees[n_virtual:], rows, strict=True))
    world: dict = {0: B.eye(6)}
    framed = {
        e: B.const(_generic_placement()) @ link_world(X, topo, topo.link_of[e], world)
        for e in topo.framed
    }
    framed.update((key, B.const(np.eye(6) + 0.5)) for key in topo.anchors.values())
    return K, framed
