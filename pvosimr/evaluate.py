"""Evaluation on numpy and on stacks, and the fallbacks between them.

``compute_delassus_batch(model, qs, constraint_models)`` runs the very algorithm bodies of
:mod:`pvosimr.algorithms` once, on :class:`~pvosimr.backends.batched.BatchedNumpyBackend`: every
configuration-dependent matrix is a stack over the batch, so each matrix operation of the
algorithm is one numpy call for all configurations, and there is no Python loop over them
(a batch larger than ``block_size`` runs block by block, each block vectorised).
The joint transforms come from the backend-generic joint models (the code the symbolic path
runs), not from one ``pin.forwardKinematics`` per configuration.

:func:`delassus_at` is the single call's evaluation.  Both paths give G on the same
configurations: a single call whose numpy pivots fail retries on the batched arithmetic
(:func:`sweep_stack` of one row), and a batch row that fails is computed as the single call
computes it.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

import numpy as np
import pinocchio as pin

from .algorithms import attempt, sweeps_for
from .backends import NUMPY
from .backends.batched import BatchedNumpyBackend, MatrixStack
from .checks import (
    ModelCheck,
    UndefinedError,
    check_configurations,
    resolve_topology,
    undefined_error,
)
from .choice import canonical_algorithm, resolve_algorithm
from .constraints import as_constraint_list, check_placements
from .kinematics.constants import numeric_constants
from .kinematics.frames import numeric_kinematics
from .kinematics.stacked import batched_kinematics
from .topology import Topology

__all__ = ["compute_delassus_batch", "delassus_at", "sweep_stack"]


@cache
def _warm_allocator() -> None:
    """Once per process, let glibc's malloc serve the batch's temporaries from its heap.

    Every operation on a batch makes a temporary of ``batch × 36`` doubles (288 KiB at 1024):
    above glibc's initial 128 KiB mmap threshold, each would be a fresh ``mmap`` whose pages
    fault in on first touch, and a heap that shrinks as soon as 256 KiB are free at its top.
    glibc raises both thresholds on its own once a large mmapped block is freed (its
    documented dynamic threshold); freeing one 24 MiB block, never touched, does that at once.
    Nothing changes on other allocators (``pvosimr bench`` times the batch:
    figures/timings.md).
    """
    np.empty(3 << 20)  # 24 MiB, freed at once


def compute_delassus_batch(
    model: pin.Model,
    qs,
    constraint_models: Iterable,
    algorithm: str = "pv-osimr",
    topology: Topology | None = None,
    block_size: int = 1024,
) -> np.ndarray:
    """``G[b] = J M⁻¹ Jᵀ`` at configuration ``qs[b]`` for every row of ``qs`` (batch × nq).

    Returns a (batch, m, m) array; ``G[b]`` equals
    ``compute_delassus(model, data, qs[b], constraint_models, algorithm)`` up to rounding, and is
    exactly symmetric.  Every algorithm of :data:`pvosimr.ALGORITHMS` runs batched; ``"auto"``
    is the one whose batched call is fastest here, chosen once (:mod:`pvosimr.choice`).  ``qs``
    must be 2-D, real, finite, in range and normalized (error naming the first bad row and
    joint).  A row whose vectorised sweep meets a pivot that is not positive definite in
    floating point is computed as the single call computes it (so both compute G on the same
    configurations); where that fails too, ValueError names the first such row and says
    whether M is singular there or the recursion lost its precision.

    Each operation of the algorithm is one numpy call on ``block_size`` configurations at once;
    a larger batch runs in blocks of that size, because the per-configuration cost grows once
    the stacks outgrow the CPU cache (``pvosimr bench`` measures it: figures/timings.md).
    """
    algorithm = canonical_algorithm(algorithm)  # an unknown name fails first
    qs = check_configurations(model, qs)
    cms = as_constraint_list(constraint_models, model)
    check_placements(cms)
    topology = resolve_topology(model, cms, topology)
    if block_size < 1:
        raise ValueError(f"block_size must be positive, not {block_size}")
    n, m = qs.shape[0], topology.m
    G = np.zeros((n, m, m))
    if n == 0 or m == 0:
        return G
    algorithm = resolve_algorithm(algorithm, model, topology, cms, "batch")
    sweeps = sweeps_for(algorithm)
    _warm_allocator()
    for start in range(0, n, block_size):
        block = qs[start : start + block_size]
        G[start : start + len(block)] = sweep_stack(sweeps, model, block, topology, cms)
    bad = np.flatnonzero(~np.isfinite(G).all(axis=(1, 2)))
    if bad.size:
        _single_calls(algorithm, model, qs, topology, cms, G, bad)
    return G


def _single_calls(
    algorithm: str, model: pin.Model, qs: np.ndarray, topology: Topology, cms, G, rows
) -> None:
    """``G[r]`` of the single call for each of ``rows``, or ValueError naming the first row
    where the single call fails too (and how many do)."""
    data = model.createData()
    failed: list[tuple[int, UndefinedError]] = []
    for r in rows:
        try:
            G[r] = delassus_at(algorithm, model, data, qs[r], topology, cms)
        except UndefinedError as undefined:
            failed.append((int(r), undefined))
    if failed:
        row, first = failed[0]
        raise ValueError(
            f"{first.what} at row {row} of qs ({len(failed)} of {len(qs)} rows){first.why}"
        )


def delassus_at(
    algorithm: str,
    model: pin.Model,
    data: pin.Data,
    q: np.ndarray,
    topology: Topology,
    cms,
    checked: ModelCheck | None = None,
) -> np.ndarray:
    """G at one checked ``q``, or :class:`UndefinedError` saying why not.

    The numpy sweep runs on Pinocchio's kinematics; should one of its pivots ``D_i`` not be
    positive definite in floating point, the batched arithmetic (the joint models'
    kinematics, the stacked inverse) gets the same ``q``, so that this call and
    :func:`compute_delassus_batch` (which falls back on this function) compute
    G on the same configurations.  Only when both fail does :func:`undefined_error` decide, with
    the dense truth, whether M itself is singular.  ``checked``: the model's
    :func:`~pvosimr.checks.check_model`, when the caller has just made it.
    """
    sweeps = sweeps_for(algorithm)
    constants = numeric_constants(model, topology, cms, checked, data)
    kin = numeric_kinematics(model, data, q, topology, cms, constants)
    G = attempt(sweeps, NUMPY, topology, kin)
    if G is None or not np.isfinite(G).all():
        G = sweep_stack(sweeps, model, q[None], topology, cms)[0]
        if not np.isfinite(G).all():
            raise undefined_error(algorithm, model, q, topology, cms)
    return G


def sweep_stack(sweeps, model: pin.Model, qs: np.ndarray, topology: Topology, cms) -> np.ndarray:
    """The algorithm body run once on the stack of configurations ``qs`` (batch × m × m); rows
    whose pivots failed are non-finite."""
    n, m = qs.shape[0], topology.m
    B = BatchedNumpyBackend(n)
    G = attempt(sweeps, B, topology, batched_kinematics(B, model, qs, topology, cms))
    if G is None:
        return np.full((n, m, m), np.nan)
    return np.broadcast_to(G.a if isinstance(G, MatrixStack) else G, (n, m, m))
