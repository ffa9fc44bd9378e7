"""What the sweeps read of the robot at one configuration, in local link frames.

Featherstone style (the paper's own implementation choice): every quantity of link ``i`` is
expressed in link ``i``'s joint frame; ``X[i]`` carries spatial motion from the parent's frame
to link ``i``'s (``X_up(i) = X_J(q_i) X_tree(i)``), its transpose carries forces back; spatial
vectors are ordered as in Pinocchio (linear, then angular).  The algorithms never ask where the
numbers came from: :func:`numeric_kinematics` takes them from Pinocchio's ``forwardKinematics``;
:func:`pvosimr.kinematics.stacked.batched_kinematics` computes them for a stack of configurations
with the backend-generic joint models of :mod:`pvosimr.kinematics.joints`, which the symbolic
builder runs on CasADi SX.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from ..backends import NUMPY, Backend, Matrix, mirror_upper
from ..constraints import end_effector_placements
from ..spatial import DenseTransform, SpatialTransform
from ..topology import Topology

__all__ = [
    "Kinematics",
    "backend_kinematics",
    "frame_transforms",
    "link_constants",
    "link_world",
    "model_constants",
    "numeric_kinematics",
    "pinocchio_joint_kinematics",
]


@dataclass
class Kinematics:
    """Per-configuration inputs of the sweeps; lists are indexed by link (entry 0 unused).

    - ``X[i]``: motion transform, parent frame → frame ``i`` (:mod:`pvosimr.spatial`);
    - ``S[i]``: 6×nv_i joint motion subspace in frame ``i``;
    - ``H[i]``: 6×6 spatial inertia of link ``i`` in frame ``i``;
    - ``armature[i]``: nv_i×nv_i rotor inertia added to ``D_i`` (``None`` when zero);
    - ``K[e]``: constraint matrix of each EE ``e`` (m_e×6, link frame);
    - ``world[e]``: ``^{c}X_0`` (6×6), world → the frame ``c`` of each EE in
      ``topology.framed`` (none for plain constraints), and of each world-fixed ``c2`` of a
      point anchor under its key in ``topology.anchors``;
    - ``axis[i]``: ``k`` where ``S[i]`` is the unit vector ``e_k`` for every configuration (an
      axis-aligned one-DoF joint), for numpy's products with it (the
      :func:`~pvosimr.backends.protocol.joint_step` hook); empty unless the caller knows;
    - ``identity``: the links whose ``S[i]`` is the 6×6 identity for every configuration (a
      free-flyer in its own frame), for the same use; empty unless the caller knows.
    """

    X: list[SpatialTransform]
    S: list[Matrix]
    H: list[Matrix]
    armature: list[Matrix | None]
    K: dict[int, Matrix]
    world: dict[int, Matrix] = field(default_factory=dict)
    axis: dict[int, int] = field(default_factory=dict)
    identity: set[int] = field(default_factory=set)


def _end_effectors(topology: Topology, constraint_models) -> dict[int, tuple]:
    """EE node → (placement in its link, sign of its rows): the constraints' EEs, in ``ees``
    order."""
    placed = [
        (P, shape.sign)
        for shape, cm in zip(topology.signature, constraint_models, strict=True)
        for P in end_effector_placements(cm)
    ]
    return dict(zip(topology.ees[: len(placed)], placed, strict=False))


def _anchors(topology: Topology, constraint_models) -> dict[int, np.ndarray]:
    """``^{c2}X_0`` of each point anchor's world-fixed ``c2`` (constant), by its world key."""
    cms = list(constraint_models)
    return {key: cms[k].joint2_placement.actionInverse for k, key in topology.anchors.items()}


def link_constants(
    model: pin.Model, topology: Topology
) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    """The link inertias ``H_i`` and armature blocks (``None`` when zero) of every link.

    Each ``H_i`` is read from its upper triangle: exactly symmetric, as the articulated-body
    step relies on (:meth:`~pvosimr.backends.numpy.Backend.symmetric`)."""
    H = [np.zeros((6, 6))] + [mirror_upper(model.inertias[i].matrix()) for i in topology.links]
    rotor = np.asarray(model.armature)  # one read: per-joint slices of a pin vector are slow
    armature: list[np.ndarray | None] = [None]
    for i in topology.links:  # the model's dofs: a mimic joint has none, and no rotor of its own
        a = rotor[topology.model_dofs[i]]
        armature.append(np.diag(a) if a.any() else None)
    return H, armature


def model_constants(
    model: pin.Model,
    topology: Topology,
    constraint_models,
    actions: Mapping[int, Matrix] | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray | None], dict[int, Matrix]]:
    """The configuration-independent inputs: link inertias, armature blocks and ``K_i``.

    ``K_i`` is the first ``m_i`` rows of ``^{c}X_i``, the action of the EE's placement
    inverted; ``actions`` (by EE node, any backend's 6×6 matrices) stands for the constraint
    models' own placements, e.g. placements that are symbolic inputs.
    """
    H, armature = link_constants(model, topology)
    placed = _end_effectors(topology, constraint_models)
    left = [L for shape in topology.signature for L in shape.end_rows()]
    K = {}
    for (e, (P, sign)), L in zip(placed.items(), left, strict=True):
        A = P.actionInverse if actions is None or e not in actions else actions[e]
        if L is not None:  # a row map or a joint-space row (pvosimr.lowering); A may be SX
            K[e] = L @ A if isinstance(A, np.ndarray) else type(A)(L) @ A
            continue
        K[e] = A[: topology.dim_of[e], :]
        if sign < 0:  # pin 4's models: rows negated
            K[e] = -K[e]
    rows = [row for c in topology.couplings for _, row in c.rows]
    K.update(zip(topology.ees[len(placed) :], rows, strict=True))  # the mimic couplings' rows
    return H, armature, K


def link_world(
    X: list[SpatialTransform], topology: Topology, i: int, world: dict[int, Matrix]
) -> Matrix:
    """``^{i}X_0 = X_up(i) ^{π(i)}X_0``, composed only down from the nearest link in ``world``
    (``{0: B.eye(6)}`` at first), which keeps every link composed on the way."""
    path, j = [], i
    while j not in world:  # the links down to this one not composed yet
        path.append(j)
        j = topology.parent[j]
    for j in reversed(path):
        world[j] = X[j].motion(world[topology.parent[j]])
    return world[i]


def frame_transforms(
    B: Backend,
    X: list[SpatialTransform],
    topology: Topology,
    constraint_models,
    actions: Mapping[int, Matrix] | None = None,
) -> dict[int, Matrix]:
    """``^{c}X_0`` of each framed EE from the joint transforms: ``^{i}X_0 = X_up(i) ^{π(i)}X_0``
    down to its link only (O(n) at most), then the constant ``^{c}X_i`` of its placement.

    ``actions`` (backend matrices by ``Kinematics.world`` key: EE nodes and anchor keys) stands
    for the constraint models' ``^{c}X_i`` and the anchors' ``^{c2}X_0``."""
    placed = _end_effectors(topology, constraint_models)
    world: dict[int, Matrix] = {0: B.eye(6)}
    out = {}
    for e in topology.framed:
        A = B.const(placed[e][0].actionInverse) if actions is None else actions[e]
        out[e] = A @ link_world(X, topology, topology.link_of[e], world)
    if actions is None:
        out.update((key, B.const(W)) for key, W in _anchors(topology, constraint_models).items())
    else:
        out.update((key, actions[key]) for key in topology.anchors.values())
    return out


def backend_kinematics(
    B: Backend,
    model: pin.Model,
    X: list[SpatialTransform],
    S: list[Matrix],
    topology: Topology,
    constraint_models,
    actions: Mapping[int, Matrix] | None = None,
) -> Kinematics:
    """The :class:`Kinematics` of joint transforms and subspaces computed on ``B`` (symbolic or
    traced), with the model's constants made ``B``'s constants.  ``actions``: as for
    :func:`model_constants` (a ``K`` built from them is ``B``'s already)."""
    H, armature, K = model_constants(model, topology, constraint_models, actions)
    world = frame_transforms(B, X, topology, constraint_models, actions)
    return Kinematics(
        X=X,
        S=S,
        H=[B.const(h) for h in H],
        armature=[None if a is None else B.const(a) for a in armature],
        K={e: B.const(k) if isinstance(k, np.ndarray) else k for e, k in K.items()},
        world=world,
    )


def pinocchio_joint_kinematics(
    model: pin.Model,
    data: pin.Data,
    q: np.ndarray,
    topology: Topology,
    fixed_S: list[np.ndarray | None] | None = None,
) -> tuple[list[DenseTransform], list[np.ndarray]]:
    """``X_up`` (6×6, from ``data.liMi``) and ``S`` of every link at ``q``, from Pinocchio.

    ``fixed_S[i]``, where given and not None, is link ``i``'s motion subspace known not to
    depend on ``q`` (a revolute, prismatic, free-flyer joint, ...): used as is, not read."""
    pin.forwardKinematics(model, data, q)
    liMi, joints = data.liMi.tolist(), data.joints  # one list: an index into data.liMi is slow
    X = [DenseTransform(NUMPY, np.eye(6))]
    X += [DenseTransform(NUMPY, liMi[i].actionInverse) for i in topology.links]
    S = [None] * topology.njoints if not fixed_S else list(fixed_S)
    S[0] = np.zeros((6, 0))
    for i in topology.links:
        if S[i] is None:
            S[i] = np.reshape(joints[i].S, (6, -1))
    for c in topology.couplings:  # the relaxed tree moves a mimic joint by its own screw
        S[c.joint] = c.screw[:, None]
    return X, S


def numeric_kinematics(
    model: pin.Model,
    data: pin.Data,
    q: np.ndarray,
    topology: Topology,
    constraint_models,
    constants: Kinematics | None = None,
) -> Kinematics:
    """Joint transforms and motion subspaces at ``q`` from Pinocchio, plus the model constants.

    ``constants`` holds what does not depend on ``q``, read from the model and constraints
    when None: ``H``, ``armature``, ``K``, the anchors' ``world`` entries, and ``S[i]`` where
    it does not depend on ``q`` (None elsewhere);
    :func:`pvosimr.kinematics.constants.numeric_constants`
    keeps them between calls."""
    if constants is None:
        H, armature, K = model_constants(model, topology, constraint_models)
        anchors = _anchors(topology, constraint_models)
        constants = Kinematics(X=[], S=[], H=H, armature=armature, K=K, world=anchors)
    X, S = pinocchio_joint_kinematics(model, data, q, topology, constants.S)
    world = constants.world
    if topology.framed:  # plain constraints need no world placement
        world = dict(world)
        placed = _end_effectors(topology, constraint_models)
        for e in topology.framed:
            P, _ = placed[e]
            world[e] = (data.oMi[topology.link_of[e]] * P).actionInverse
    return Kinematics(
        X=X,
        S=S,
        H=constants.H,
        armature=constants.armature,
        K=constants.K,
        world=world,
        axis=constants.axis,
        identity=constants.identity,
    )
