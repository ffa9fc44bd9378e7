"""The batched numpy path: the Delassus matrix of many configurations at once.

- :mod:`.stack`: :class:`MatrixStack` and :class:`BatchedNumpyBackend`, the array library the
  algorithm bodies run on when every matrix is a stack over the batch;
- :mod:`.kinematics`: :func:`batched_kinematics`, the sweeps' inputs for a stack of
  configurations;
- :mod:`.evaluate`: :func:`compute_delassus_batch`, and :func:`delassus_at`, the evaluation of
  one configuration that :func:`pvosimr.compute_delassus` dispatches to (numpy first, these
  stacks where a numpy pivot fails).

This package depends on the core (backend, kinematics, algorithms, checks); the core reaches
into it only through :func:`delassus_at`.
"""

from .evaluate import compute_delassus_batch, delassus_at, sweep_stack
from .kinematics import batched_kinematics
from .stack import BatchedNumpyBackend, MatrixStack, inv_spd, stack_matmul

__all__ = [
    "BatchedNumpyBackend",
    "MatrixStack",
    "batched_kinematics",
    "compute_delassus_batch",
    "delassus_at",
    "inv_spd",
    "stack_matmul",
    "sweep_stack",
]
