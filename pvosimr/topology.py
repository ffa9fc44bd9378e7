"""What depends only on the tree and the constraints (paper Sec. I-C): ES, N, A, D, cca.

Built once per (model, constraint structure), like Pinocchio's ``initPvDelassus``, and reused
by every call whatever the configuration and the constraint placements.  A :class:`Topology` is
also the one place where what follows from that structure is prepared and kept
(:meth:`Topology.prepared`): PV-OSIMr's block plan and minimum cover, PV-OSIMh's cuts, the
choice of ``algorithm="auto"`` per path, the numeric single call's constants.

Indexing follows the paper and Pinocchio: the world is node 0, real links are the joint indices
``1 .. njoints-1`` (parents before children), and constraint ``k`` (in list order) gets the
fictitious end-effector (EE) node ``njoints + k`` whose parent is its constrained link.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import TypeVar

import numpy as np
import pinocchio as pin

from .constraints import (
    LoweredConstraint,
    as_constraint_list,
    constraint_kind,
    constraint_label,
    constraint_shape,
)
from .lowering import CONSTANT_SUBSPACE_JOINTS
from .mimic import MIMIC_JOINTS, MIMIC_UNAVAILABLE, mimic_couplings, relaxed_idx_v, relaxed_nv

__all__ = ["SUPPORTED_JOINTS", "Topology", "constraint_signature"]

T = TypeVar("T")

#: Joint types the algorithms (and the symbolic kinematics) support, by Pinocchio short name,
#: that the installed pin has (pin 3.4 has neither Mimic nor Ellipsoid, 3.8 no Ellipsoid;
#: Mimic from pin 3.8 on, see :data:`pvosimr.mimic.MIMIC_JOINTS`): those whose motion subspace
#: is constant, and those whose subspace depends on q.  Composites may nest any of them,
#: composites included.
SUPPORTED_JOINTS = frozenset(
    name
    for name in CONSTANT_SUBSPACE_JOINTS
    | {"JointModel" + kind for kind in ("SphericalZYX", "Universal", "Ellipsoid", "Composite")}
    | {"JointModelMimic"}
    if hasattr(pin, name) and (name != "JointModelMimic" or MIMIC_JOINTS)
)

_LOCAL = pin.ReferenceFrame.LOCAL


def constraint_signature(model: pin.Model, constraint_models: Iterable) -> tuple:
    """The structural identity of a constraint list, validated against ``model``: one
    :class:`~pvosimr.constraints.ConstraintShape` per constraint.

    Raises a ``TypeError`` for a constraint model other than ``RigidConstraintModel`` and pin 4's
    frame anchor, point anchor and point contact, and a ``ValueError`` naming the first
    constraint that is on the universe, on a joint not in the model, in a reference frame other
    than LOCAL or LOCAL_WORLD_ALIGNED, or between a joint and itself.  Placements are not part
    of the signature: they are read on every call.
    """
    sig = []
    for k, cm in enumerate(as_constraint_list(constraint_models, model)):
        j = cm.joint1_id
        label = constraint_label(k, cm)
        if j == 0:
            raise ValueError(f"{label} is on the universe (joint 0); it must be on a moving joint")
        for name, joint in (("joint1_id", j), ("joint2_id", cm.joint2_id)):
            if not 0 <= joint < model.njoints:
                raise ValueError(
                    f"{label} is on joint {joint} ({name}), which is not in the model "
                    f"({model.njoints} joints)"
                )
        sig.append(constraint_shape(cm, label))
    return tuple(sig)


def structure_key(constraint_models: Iterable) -> tuple:
    """What :func:`constraint_signature` reads of each constraint, as read (no validation):
    its type, joints and, for a ``RigidConstraintModel``, contact type and reference frame.
    Equal keys give equal signatures on one model; reading them costs a fraction of
    validating them, so caches key on this and validate once."""
    key = []
    for cm in constraint_models:
        if type(cm) is LoweredConstraint:
            key.append((LoweredConstraint, cm.key()))
        elif constraint_kind(cm) == "rigid":
            key.append((type(cm), cm.joint1_id, cm.joint2_id, cm.type, cm.reference_frame))
        else:
            key.append((type(cm), cm.joint1_id, cm.joint2_id))
    return tuple(key)


def _short(kind: str) -> str:
    return kind.removeprefix("JointModel")


#: Tolerance on ``|‖a‖ − 1|`` of a joint axis and on ``|a1 · a2|`` of a universal joint's axes.
AXIS_TOLERANCE = 1e-9


def _typed(joint):
    """The typed joint model behind a generic ``pin.JointModel`` (its parameters' accessors)."""
    return joint.extract() if hasattr(joint, "extract") else joint


def _axis_problem(joint) -> str | None:
    """Why a joint's axes are not what its kinematics assume (unit, orthogonal), or None.

    Pinocchio checks this only in debug builds; a release build silently computes a transform
    that is not a rigid motion from a non-unit axis, and so would every path here.
    """
    typed = _typed(joint)
    names = [name for name in ("axis", "axis1", "axis2") if hasattr(typed, name)]
    axes = [np.asarray(getattr(typed, name), dtype=float) for name in names]
    for a in axes:
        if not abs(float(np.linalg.norm(a)) - 1.0) <= AXIS_TOLERANCE:
            return f"its axis {a.tolist()} is not a unit vector (norm {np.linalg.norm(a):.12g})"
    if len(axes) == 2 and not abs(float(axes[0] @ axes[1])) <= AXIS_TOLERANCE:
        return f"its axes {axes[0].tolist()} and {axes[1].tolist()} are not orthogonal"
    return None


def _joint_problem(joint) -> tuple[type[Exception], str] | None:
    """The exception type and reason why pvosimr cannot take ``joint`` (composites are looked
    into, recursively), or None."""
    kind = joint.shortname()
    if kind == "JointModelMimic" and not MIMIC_JOINTS:
        return NotImplementedError, f"is a mimic joint: {MIMIC_UNAVAILABLE}"
    if kind not in SUPPORTED_JOINTS:
        return NotImplementedError, (
            f"is of type {kind}, which pvosimr does not support "
            f"(supported: {', '.join(sorted(_short(s) for s in SUPPORTED_JOINTS))})"
        )
    if kind == "JointModelComposite":
        for k, sub in enumerate(_typed(joint).joints):
            problem = _joint_problem(sub)
            if problem is not None:
                return problem[0], f"is a composite whose sub-joint {k} {problem[1]}"
        return None
    reason = _axis_problem(joint)
    return None if reason is None else (ValueError, f"({_short(kind)}) is invalid: {reason}")


def _check_joints(model: pin.Model) -> None:
    """NotImplementedError for a joint type pvosimr has no kinematics for, ValueError for an
    axis that is not unit (or universal axes that are not orthogonal); both name the joint."""
    for i in range(1, model.njoints):
        problem = _joint_problem(model.joints[i])
        if problem is not None:
            error, reason = problem
            raise error(f"joint {i} ({model.names[i]!r}) {reason}")


@dataclass(frozen=True)
class _Tree:
    """The relaxed tree's dofs: a mimic joint moves on its own (``nvExtended``, ``idx_vExtended``);
    the same as ``nv``, ``idx_v`` for a model without mimic joints."""

    parents: tuple[int, ...]
    nv: tuple[int, ...]
    idx_v: tuple[int, ...]


class Topology:
    """Tree and constraint structure: ES, N, A, D and cca of the paper's Sec. I-C.

    Attributes (node ids as in the module docstring; ``-1`` where a quantity is undefined):

    - ``parent[i]``: π(i) for every node (links and EEs), ``parent[0] = -1``;
    - ``ees``: EE node ids in constraint-list order; ``link_of[e]`` the link an EE is on;
    - ``dims``: m_i of each EE; ``offsets``: its first row in the swept matrix;
    - ``ES[i]``: EEs supported by link ``i`` (tuple, constraint order);
    - ``N``: branching links, sorted: the world, every EE, every link where two or more
      children (EE children included) carry constraints;
    - ``A[i]``: closest strict ancestor of ``i`` in N; ``D[i]``: closest descendant-or-self of
      ``i`` in N (defined where ES(i) ≠ ∅);
    - ``cca(e1, e2)``: closest common ancestor of two EEs (a link in N, or 0 for the world);
    - ``n_chain[e]``: the branching ancestors of EE ``e`` from A(e) up, excluding the world.

    Mimic joints (:mod:`pvosimr.mimic`): the sweeps run on the relaxed tree, where each mimic
    joint moves on its own, and each coupling adds one-row EEs after the constraints' (its
    ``rows``, in ``couplings`` order; ``coupling_matrix`` sums them into the coupling rows).
    ``m`` counts the constraint rows only, the rows of G; ``m_relaxed = sum(dims)`` all rows the
    sweeps produce, ``nv_relaxed`` the relaxed tree's dofs.

    Constraints between two bodies or in world-aligned axes (:mod:`pvosimr.constraints`): each
    has one LOCAL EE per body, ``ends[k]`` those of constraint ``k`` (``m_virtual`` rows in
    all), combined into its ``dim`` rows of G, from ``constraint_offsets[k]`` on
    (:mod:`pvosimr.combination`); ``framed`` are the EEs whose world placement that reads.  A
    list of plain constraints has one EE each, ``m_virtual = m`` and nothing framed.  Pin 4's
    point anchors on one body also read ``c2``'s fixed placement in the world (``anchors``).
    """

    def __init__(self, model: pin.Model, constraint_models: Iterable) -> None:
        _check_joints(model)
        self.signature = constraint_signature(model, constraint_models)
        self.model = model
        self.njoints = nj = model.njoints
        self.nq, self.nv, self.nv_relaxed = model.nq, model.nv, relaxed_nv(model)
        self.tree = _Tree(
            tuple(model.parents),
            tuple(relaxed_nv(j) for j in model.joints),
            tuple(relaxed_idx_v(j) for j in model.joints),
        )
        self.links = range(1, nj)
        #: each joint's own dofs in the model's velocity (and armature) vector; none for a mimic
        self.model_dofs = tuple(slice(j.idx_v, j.idx_v + j.nv) for j in model.joints)
        self.couplings = mimic_couplings(model)
        virtual = tuple(
            pair for s in self.signature for pair in zip(s.joints, s.end_dims, strict=True)
        )
        swept = virtual + tuple((link, 1) for c in self.couplings for link, _ in c.rows)
        self.dims = tuple(dim for _, dim in swept)
        self.m = sum(s.dim for s in self.signature)
        #: constraint ``k`` → the ``Kinematics.world`` key of its world-fixed ``c2`` (one-body
        #: point anchors only; past every node id)
        self.anchors = {
            k: nj + len(swept) + a
            for a, k in enumerate(k for k, s in enumerate(self.signature) if s.anchored)
        }
        self.m_virtual = sum(dim for _, dim in virtual)
        self.m_relaxed = sum(self.dims)
        self.offsets = tuple(sum(self.dims[:k]) for k in range(len(self.dims)))
        self.ees = tuple(nj + k for k in range(len(swept)))
        self._build_combination()
        self.link_of = {e: j for e, (j, _) in zip(self.ees, swept, strict=True)}
        self.dim_of = {e: dim for e, dim in zip(self.ees, self.dims, strict=True)}
        self.parent = list(model.parents) + [j for j, _ in swept]
        self.parent[0] = -1
        self._build_supports()
        self._build_branching()
        self._cca = self._build_cca()
        self._prepared: dict[Hashable, object] = {}

    def _build_combination(self) -> None:
        """Which EEs make up each constraint (``ends``), and the EEs whose placement in the
        world the combination reads (``framed``: ``c1`` of a world-aligned or two-body
        constraint, ``c2`` of a two-body one)."""
        ends, framed, start = [], [], 0
        for s in self.signature:
            own = self.ees[start : start + len(s.joints)]
            ends.append(own)
            framed += list(own) if s.framed else []
            start += len(own)
        self.ends = tuple(ends)
        self.framed = tuple(framed)
        #: some constraint is not one plain EE: G is combined from the EEs' (``combine``)
        self.combined = any(not s.plain for s in self.signature)
        #: the constraint offsets in G (``offsets`` are the swept EEs')
        self.constraint_offsets = tuple(
            sum(s.dim for s in self.signature[:k]) for k in range(len(self.signature))
        )

    def _build_supports(self) -> None:
        nj = self.njoints
        es: list[list[int]] = [[] for _ in range(nj)] + [[e] for e in self.ees]
        for e in self.ees:
            i = self.link_of[e]
            while i > 0:
                es[i].append(e)
                i = self.parent[i]
        self.ES = tuple(tuple(sorted(s)) for s in es)
        self.children: list[list[int]] = [[] for _ in self.parent]
        for i, p in enumerate(self.parent):
            if p >= 0:
                self.children[p].append(i)

    def _build_branching(self) -> None:
        n_nodes = len(self.parent)
        in_n = [False] * n_nodes
        in_n[0] = True
        for e in self.ees:
            in_n[e] = True
        for i in self.links:
            in_n[i] = sum(1 for c in self.children[i] if self.ES[c]) >= 2
        self.N = tuple(i for i in range(n_nodes) if in_n[i])
        self.in_N = tuple(in_n)
        self.D = [-1] * n_nodes
        for e in self.ees:
            self.D[e] = e
        for i in reversed(self.links):
            if in_n[i]:
                self.D[i] = i
            elif self.ES[i]:
                (c,) = (c for c in self.children[i] if self.ES[c])
                self.D[i] = self.D[c]
        self.A = [-1] * n_nodes
        for i in list(self.links) + list(self.ees):
            p = self.parent[i]
            self.A[i] = p if in_n[p] else self.A[p]
        self.n_chain = {}
        for e in self.ees:
            chain, j = [], self.A[e]
            while j != 0:
                chain.append(j)
                j = self.A[j]
            self.n_chain[e] = tuple(chain)

    def _build_cca(self) -> dict[tuple[int, int], int]:
        """cca of every pair of EEs: the deepest common ancestor of their links.

        For each EE ``e1``, one pass over the links (a parent before its children) gives the
        deepest common ancestor of ``e1``'s link and every link: O(m n), not O(m² n)."""
        cca = {}
        parent, link_of = self.parent, self.link_of
        for a, e1 in enumerate(self.ees[:-1]):
            anc1, i = set(), link_of[e1]  # e1's link and its ancestors
            while i >= 0:
                anc1.add(i)
                i = parent[i]
            meet = [0] * self.njoints  # the world is everyone's ancestor
            for x in range(1, self.njoints):
                meet[x] = x if x in anc1 else meet[parent[x]]
            for e2 in self.ees[a + 1 :]:
                cca[e1, e2] = meet[link_of[e2]]
        return cca

    @cached_property
    def coupling_matrix(self) -> np.ndarray:
        """``T`` (couplings × coupling EEs): coupling ``k``'s row is the sum of its EEs' rows."""
        n_rows = [len(c.rows) for c in self.couplings]  # column k of I once per EE of coupling k
        return np.repeat(np.eye(len(n_rows)), n_rows, axis=1)

    def cca(self, e1: int, e2: int) -> int:
        """Closest common ancestor of two different EEs (in N; 0 if only the world)."""
        return self._cca[(e1, e2) if e1 < e2 else (e2, e1)]

    def prepared(self, key: Hashable, prepare: Callable[[Topology], T]) -> T:
        """``prepare(self)``, made on first use and kept with this topology under ``key``.

        What depends only on the tree and the constraint structure is prepared here, once, as
        Pinocchio's ``initPvDelassus`` fills its ``Data`` once: each user names its own ``key``
        (an algorithm's plan, ``auto``'s choice for a path, the numeric constants)."""
        try:
            return self._prepared[key]  # type: ignore[return-value]
        except KeyError:
            made = self._prepared[key] = prepare(self)
            return made

    def is_for(self, model: pin.Model, signature: tuple) -> bool:
        """True if this topology was built for ``model``'s tree and this constraint structure."""
        return (
            signature == self.signature
            and model.njoints == self.njoints
            and (model is self.model or tuple(model.parents) == self.tree.parents)
        )

    def __repr__(self) -> str:
        return (
            f"Topology(links={self.njoints - 1}, nv={self.nv}, constraints={len(self.ees)}, "
            f"m={self.m}, N={list(self.N)})"
        )
