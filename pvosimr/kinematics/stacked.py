"""The :class:`~pvosimr.kinematics.frames.Kinematics` of a stack of configurations."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..backends.batched import BatchedNumpyBackend, MatrixStack
from ..spatial import DenseTransform
from ..topology import Topology
from .frames import Kinematics, backend_kinematics
from .joints import joint_kinematics

__all__ = ["batched_kinematics"]


def batched_kinematics(
    B: BatchedNumpyBackend,
    model: pin.Model,
    qs: np.ndarray,
    topology: Topology,
    constraint_models,
) -> Kinematics:
    """The :class:`Kinematics` of ``B.batch`` configurations at once (``qs`` batch × nq).

    Each ``X_up = X_J X_tree`` is built by the joint models, as the symbolic path builds it,
    then made one dense stack of 6×6 matrices (a :class:`~pvosimr.spatial.DenseTransform`):
    numpy pays per call, not per flop.  Constant subspaces and the model constants stay 2-D.
    """
    q = MatrixStack(np.asarray(qs, dtype=float)[:, :, None])
    chains, S = joint_kinematics(B, model, q, topology)
    eye = np.eye(6)
    X = [DenseTransform(B, eye)] + [DenseTransform(B, c.motion(eye)) for c in chains[1:]]
    return backend_kinematics(B, model, X, S, topology, constraint_models)
