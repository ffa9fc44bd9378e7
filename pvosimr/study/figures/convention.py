"""The paper authors' counting convention, for comparing our counts with the paper's axes.

The paper's counts (Sec. IV) come from the authors' MATLAB fork of spatial_v2 with CasADi
(github.com/AjSat/spatial_V2, commit 9818f8e).  The metric is ours too —
``n_instructions - nnz_in - nnz_out`` of the SX function of the joint positions
(``examples/long_tree.m``: ``Function('f', {x_fb, q}, {inv_OSIM})``), numeric inertias
(``sparsify(SX(model.I{i}), 1e-12)``).  Two things differ, and together they make the Fig. 3
counts 4–5 times ours:

1. **The mechanism is spatial, ours planar.**  Their links come from spatial_v2's
   ``models/autoTree.m``, ``Xtree{i} = rotx(skew) * xlt([len 0 0])``: each joint frame is
   turned about the parent's x axis (``skew`` = 1 rad on the stem, π/3 on the branches in
   ``long_tree.m``).  Our reference link (:mod:`pvosimr.zoo.synthetic`) keeps every revolute
   axis parallel, so the articulated inertias and propagators keep the in-plane/out-of-plane
   zeros and SX sparsity drops their arithmetic.  :func:`autotree_frames` turns the frames.
2. **Their transforms are 6×6 matrices.**  ``dynamics/OSIM_fb.m`` (PV-OSIM), ``LOSIM.m``
   (PV-OSIMr) and ``EFP.m`` (EFPA) form ``Xup{i} = XJ * model.Xtree{i}`` and apply it as
   ``Xup{i}' * Ia * Xup{i}`` and ``K * Xup{i}``; ours keep ``X_J`` and ``X_tree`` as two
   factors applied block-wise (:class:`pvosimr.spatial.Chain`).
   :func:`paper_delassus_function` runs the same sweeps with
   :class:`pvosimr.spatial.DenseTransform` holding ``X_J X_tree`` as one matrix.

The algorithms themselves are not touched: the convention changes the mechanism's frames and
the representation of ``X_up``, and G is the same function of q (of the turned mechanism).
``long_tree.m`` afterwards writes ``SX.eye(3)`` over both diagonal blocks of every ``Xtree``,
which leaves ``[[1, 0], [-E p×, 1]]`` (not a rigid transform); transliterated with that line,
their own code counts about 1.5 times below their plotted axes, without it (the frames of
``autoTree``, as here) on them, so the figure was evidently made with turned frames.

``pvosimr figures --convention paper`` counts every case this way; :data:`VARIANTS` names the
four combinations of the two halves, which the default run's claims.md sets side by side.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pinocchio as pin

from pvosimr.algorithms import sweeps_for
from pvosimr.choice import resolve_algorithm
from pvosimr.constraints import as_constraint_list
from pvosimr.kinematics.frames import Kinematics
from pvosimr.spatial import DenseTransform
from pvosimr.topology import Topology
from pvosimr.zoo.robot import Robot

if TYPE_CHECKING:  # CasADi (the symbolic extra) is imported by the functions that count, so
    import casadi as ca  # that `pvosimr figures --help` and the frames run without it

__all__ = [
    "AUTOTREE_SKEW",
    "CONVENTIONS",
    "VARIANTS",
    "Variant",
    "autotree_frames",
    "dense_transforms",
    "paper_count_operations",
    "paper_delassus_function",
    "paper_mechanism",
    "synthetic_mechanism",
]

CONVENTIONS = ("pvosimr", "paper")
"""``pvosimr``: our mechanisms and block-wise transforms; ``paper``: the authors' (above)."""


class Variant(NamedTuple):
    """One combination of the convention's halves: ``turned`` frames on the synthetic
    mechanisms, and the ``counting`` convention (``paper``: 6×6 ``X_up``)."""

    turned: bool
    counting: str


VARIANTS = {
    "pvosimr": Variant(turned=False, counting="pvosimr"),
    "turned frames only": Variant(turned=True, counting="pvosimr"),
    "6×6 only": Variant(turned=False, counting="paper"),
    "paper": Variant(turned=True, counting="paper"),
}
"""Ours, each half of the authors' convention alone, and both (``paper``), in that order."""

AUTOTREE_SKEW = 1.0
"""Radians each joint frame is turned about its parent's x axis: ``autoTree(n, 1, 1, 1)``, the
stem of ``long_tree.m``.  Its branches' π/3 gives Fig. 3 counts within 0.05 %: SX arithmetic
depends on which entries are zero or one, hardly on their values."""


def autotree_frames(model: pin.Model, skew: float = AUTOTREE_SKEW) -> pin.Model:
    """A copy of ``model`` with every joint not on the world turned by ``skew`` radians about
    its own x axis (the parent's, where the placement has no rotation, as in the synthetic
    mechanisms): ``rotx(skew) * xlt(p)`` in spatial_v2's ``autoTree``.

    Tree, joint types, inertias and translations are kept, so the joint ids — and the
    constraints of ``model``, which name a joint and a placement in its frame — stay valid.
    """
    if not np.isfinite(skew):
        raise ValueError(f"skew must be a finite angle in radians, got {skew!r}")
    turned = model.copy()
    R = pin.utils.rotate("x", skew)  # spatial_v2's rx(skew) is its transpose, Eᵀ = R
    for i in range(1, turned.njoints):
        if turned.parents[i] > 0:
            M = turned.jointPlacements[i]
            turned.jointPlacements[i] = pin.SE3(M.rotation @ R, M.translation)
    return turned


def paper_mechanism(robot: Robot, skew: float = AUTOTREE_SKEW) -> Robot:
    """A synthetic zoo robot with :func:`autotree_frames` (same constraints, name
    ``<name>_autotree``); for Figs. 3–4 only: the robot models are spatial already."""
    return replace(robot, name=f"{robot.name}_autotree", model=autotree_frames(robot.model, skew))


def synthetic_mechanism(robot: Robot, convention: str) -> Robot:
    """A synthetic mechanism of Figs. 3–4 in ``convention`` (one of :data:`CONVENTIONS`)."""
    if convention not in CONVENTIONS:
        raise ValueError(f"unknown convention {convention!r}; valid: {', '.join(CONVENTIONS)}")
    return paper_mechanism(robot) if convention == "paper" else robot


def dense_transforms(kin: Kinematics) -> Kinematics:
    """``kin`` with each ``X_up = X_J X_tree`` formed as one 6×6 SX matrix, as ``Xup{i} =
    XJ * model.Xtree{i}`` in the authors' files (the product itself is part of the count)."""
    from pvosimr.symbolic import CASADI, SX

    I6 = SX.eye(6)
    X = [X if i == 0 else DenseTransform(CASADI, X.motion(I6)) for i, X in enumerate(kin.X)]
    return replace(kin, X=X)


def paper_delassus_function(
    model: pin.Model, constraint_models: Iterable, algorithm: str = "pv-osimr"
) -> ca.Function:
    """:func:`pvosimr.symbolic.delassus_function` with :func:`dense_transforms`: the same q ↦ G,
    the same sweeps, the authors' matrix arithmetic."""
    import casadi as ca

    from pvosimr.symbolic import CASADI, SX, symbolic_kinematics

    cms = as_constraint_list(constraint_models)
    topology = Topology(model, cms)
    q = SX.sym("q", model.nq)
    kin = dense_transforms(symbolic_kinematics(model, q, topology, cms))
    if topology.m:
        algorithm = resolve_algorithm(algorithm, model, topology, cms, "casadi")
    G = ca.densify(sweeps_for(algorithm)(CASADI, topology, kin)) if topology.m else SX(0, 0)
    return ca.Function(f"paper_{algorithm.replace('-', '_')}", [q], [G], ["q"], ["G"])


def paper_count_operations(model: pin.Model, constraint_models: Iterable, algorithm: str) -> int:
    """The paper's metric (:func:`pvosimr.symbolic.function_cost`) of
    :func:`paper_delassus_function`."""
    from pvosimr.symbolic import function_cost

    return function_cost(paper_delassus_function(model, constraint_models, algorithm))
