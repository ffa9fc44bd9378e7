"""Random kinematic trees with constraints, built with Pinocchio, for property tests.

The tree *structure* (parent array, joint types, floating root, constraint joints and
types) is drawn from hypothesis so that failures shrink to small trees; the numeric
parts (placements, inertias, armature, axes) come from a numpy ``Generator`` seeded by a
hypothesis-drawn integer, which keeps shrinking cheap.  The numbers are drawn by
:mod:`pvosimr.zoo.seeded` (joints with their edge cases, bodies, placements, configurations),
re-exported here under the names the tests use.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import numpy as np
import pinocchio as pin
import pytest
from _slow import LONG, SLOW
from hypothesis import strategies as st

import pvosimr
from pvosimr.algorithms.pv_osimh_plan import Plan, candidates, set_plan
from pvosimr.checks import topology_for
from pvosimr.reference.truth import TOLERANCE, rel_err
from pvosimr.zoo.seeded import (
    JOINT_KINDS,
    MIDDLE_ANGLE_SINGULAR,
    random_inertia,
    random_placement,
    random_q,
    random_rotation,
    random_tree,
    random_unit_vector,
    revolute_unbounded_unaligned,
)
from pvosimr.zoo.seeded import random_joint as make_joint

__all__ = [
    "ANCHOR_MODELS",
    "CONTACT_TYPES",
    "DEFAULT_JOINT_TYPES",
    "FIG1_PARENTS",
    "MIDDLE_ANGLE_SINGULAR",
    "MIMICABLE",
    "ROBOT_SAMPLE",
    "TreeSpec",
    "add_mimics",
    "branching_tree",
    "build_tree",
    "check_every_algorithm",
    "drawn_mixed_tree",
    "drawn_plan",
    "drawn_shape",
    "every_kind_of_joint",
    "fig1_tree",
    "make_joint",
    "mass_on_the_first_axis",
    "mixed_kinds",
    "pin_constraint_size",
    "random_inertia",
    "random_placement",
    "random_q",
    "random_rotation",
    "random_shape",
    "random_trees",
    "random_unit_vector",
    "reduced_truth",
    "requires_pin_feature",
    "robot_sweep",
    "tree_specs",
    "with_anchors",
]

Tree = tuple[pin.Model, list[pin.RigidConstraintModel]]
#: A dense G of ``(model, q, cms)``: :func:`pvosimr.reference.truth.dense_delassus` or
#: :func:`pvosimr.reference.truth.pinocchio_dense_delassus`.
Truth = Callable[[pin.Model, np.ndarray, Sequence], np.ndarray]


#: The robots the default run sweeps, one of each kind: the paper's Atlas and Shadow hand, every
#: joint-type robot, the closed loops, one branching stem, one welded chain, and
#: example-robot-data's arms, legged robots, hands and humanoids, with the two whose mass matrix
#: is singular (romeo, bravo7).  The slow suite sweeps every robot.
ROBOT_SAMPLE = frozenset(
    (
        "atlas", "shadow_hand", "atlas_shadow_hand", "screw_arm", "universal_biped",
        "composite_arms", "ellipsoid_shoulders", "panda_mimic", "four_bar", "cassie_leg",
        "stem_b2_L10", "chain_welded_every_k_k4", "talos", "solo12", "panda", "ur5", "tiago",
        "double_pendulum", "anymal_kinova", "allegro_left_hand", "romeo", "bravo7_gripper",
    )
)  # fmt: skip


#: The slow property tests keep PV-OSIMh's own rule on every ``RULE_EVERY``-th tree.
RULE_EVERY = 10


def drawn_plan(model: pin.Model, cms: Sequence, seed: int) -> None:
    """PV-OSIMh's plan for ``model`` and ``cms`` (the cached topology the calls use): cuts drawn
    at random from ``seed``, except on every :data:`RULE_EVERY`-th seed, which keeps the plan
    the rule picks.  Every plan gives the same G (``tests/test_pv_osimh.py``), so a drawn plan
    checks the sweeps on plans of every shape, and spares the rule's pricing on the cost model,
    most of a small tree's time; the rule has its own tests (``test_pv_osimh``, ``test_cost``)."""
    if seed % RULE_EVERY == 0:
        return
    topology = topology_for(model, cms)
    rng = np.random.default_rng(seed)
    cuts = frozenset(i for i in sorted(candidates(topology)) if rng.random() < 0.5)
    set_plan(topology, Plan.build(topology, cuts))


def robot_sweep(names: Sequence[str], slow: Collection[str] = ()) -> list:
    """``names`` as parameters: those outside :data:`ROBOT_SAMPLE` marked long (the slow suite
    sweeps them, the oldest pin's run does not), those in ``slow`` marked slow (seconds each)."""
    return [
        pytest.param(n, marks=LONG) if n not in ROBOT_SAMPLE
        else pytest.param(n, marks=SLOW) if n in slow
        else n
        for n in names
    ]  # fmt: skip


def requires_pin_feature(*names: str) -> pytest.MarkDecorator:
    """Skip unless the installed pin has every attribute ``pin.<name>`` (a joint type, a
    function) and pvosimr takes every such joint type from it (``SUPPORTED_JOINTS``): older
    releases lack some (a user of those cannot build such a model), pin 3.7's mimic joints
    are refused."""
    from pvosimr.topology import SUPPORTED_JOINTS

    version = pin.__version__
    absent = [n for n in names if not hasattr(pin, n)]
    refused = [n for n in names if n not in absent and n.startswith("JointModel")]
    refused = [n for n in refused if n not in SUPPORTED_JOINTS]
    reasons = []
    if absent:
        reasons.append(f"pin {version} has no {', '.join('pin.' + n for n in absent)}")
    if refused:
        reasons.append(f"pvosimr does not take {', '.join(refused)} from pin {version}")
    return pytest.mark.skipif(bool(reasons), reason="; ".join(reasons))


def pin_constraint_size(cm: pin.RigidConstraintModel) -> int:
    """Pinocchio's own row count of a constraint (``residualSize()``; ``size()`` before pin 4)."""
    return int(cm.residualSize() if hasattr(cm, "residualSize") else cm.size())


#: Every joint kind the trees draw, simplest first: hypothesis shrinks towards the front.
DEFAULT_JOINT_TYPES: tuple[str, ...] = JOINT_KINDS

CONTACT_TYPES: tuple[pin.ContactType, ...] = (
    pin.ContactType.CONTACT_3D,
    pin.ContactType.CONTACT_6D,
)

# Paper Fig. 1: parent of links 1..6 (link 1 on the world, link 6 on link 2).
FIG1_PARENTS: tuple[int, ...] = (0, 1, 2, 3, 4, 2)
# Fig. 1 end-effectors EE7, EE8, EE9 sit on links 6, 3, 5 (in that order).
FIG1_CONSTRAINED_LINKS: tuple[int, ...] = (6, 3, 5)


# --------------------------------------------------------------------------- building


class TreeSpec:
    """The hypothesis-drawn structure of a random tree (numeric parts come from ``seed``).

    ``parents[i]`` is the parent of joint ``i + 1`` (0 = universe), depth-first ordered;
    ``joint_types[i]`` its kind; ``constraints`` a list of ``(joint_id, contact_type)``;
    ``armature`` whether some dofs get a random rotor inertia.
    """

    __slots__ = ("armature", "constraints", "joint_types", "parents", "seed")

    def __init__(
        self,
        parents: Sequence[int],
        joint_types: Sequence[str],
        constraints: Sequence[tuple[int, pin.ContactType]],
        armature: bool,
        seed: int,
    ) -> None:
        self.parents = tuple(parents)
        self.joint_types = tuple(joint_types)
        self.constraints = tuple(constraints)
        self.armature = armature
        self.seed = seed

    def __repr__(self) -> str:
        cons = [(j, str(t).rsplit(".", 1)[-1]) for j, t in self.constraints]
        return (
            f"TreeSpec(parents={list(self.parents)}, joint_types={list(self.joint_types)}, "
            f"constraints={cons}, armature={self.armature}, seed={self.seed})"
        )


def random_shape(rng: np.random.Generator, n: int) -> tuple[list[int], list[str]]:
    """Depth-first parents of ``n`` joints and their uniformly drawn kinds (a free-flyer root
    one time in three), drawn from ``rng`` in this order."""
    parents, path = [], [0]
    for i in range(1, n + 1):
        parent = path[int(rng.integers(len(path)))]
        del path[path.index(parent) + 1 :]
        path.append(i)
        parents.append(parent)
    fixed_kinds = [k for k in DEFAULT_JOINT_TYPES if k != "FreeFlyer"]
    kinds = [str(k) for k in rng.choice(DEFAULT_JOINT_TYPES, n)]
    kinds[0] = "FreeFlyer" if rng.random() < 1 / 3 else str(rng.choice(fixed_kinds))
    return parents, kinds


def drawn_shape(
    rng: np.random.Generator, joints: tuple[int, int], constraints: tuple[int, int]
) -> tuple[list[int], list[str], list[tuple[int, pin.ContactType]]]:
    """:func:`random_shape` of ``rng.integers(*joints)`` joints, then ``rng.integers(*constraints)``
    constraints of random type on random joints: ``(parents, kinds, constraints)`` for a
    :class:`TreeSpec`, drawn from ``rng`` in this order."""
    n = int(rng.integers(*joints))
    parents, kinds = random_shape(rng, n)
    m = int(rng.integers(*constraints))
    sites = [(int(rng.integers(1, n + 1)), CONTACT_TYPES[int(rng.integers(2))]) for _ in range(m)]
    return parents, kinds, sites


def build_tree(spec: TreeSpec) -> Tree:
    """Build the Pinocchio model and constraint list described by ``spec``."""
    model, cms = random_tree(
        spec.parents, spec.joint_types, spec.constraints, spec.seed, armature=spec.armature
    )
    return model, cms


@st.composite
def tree_specs(
    draw: st.DrawFn,
    min_joints: int = 1,
    max_joints: int = 15,
    max_constraints: int = 6,
    joint_types: Sequence[str] = DEFAULT_JOINT_TYPES,
) -> TreeSpec:
    """Hypothesis strategy for :class:`TreeSpec` (structure only, numerics via seed)."""
    n = draw(st.integers(min_joints, max_joints))
    parents: list[int] = []
    path: list[int] = [0]  # root-to-(i-1) path: depth-first parents are exactly these
    for i in range(1, n + 1):
        # Index from the deep end so that shrinking (towards 0) gives chains.
        k = draw(st.integers(0, len(path) - 1))
        parent = path[len(path) - 1 - k]
        del path[path.index(parent) + 1 :]
        path.append(i)
        parents.append(parent)
    floating = draw(st.booleans())
    kinds = [draw(st.sampled_from(tuple(joint_types))) for _ in range(n)]
    if floating:
        kinds[0] = "FreeFlyer"
    elif kinds[0] == "FreeFlyer" and len(joint_types) > 1:
        kinds[0] = next(k for k in joint_types if k != "FreeFlyer")
    m = draw(st.integers(0, max_constraints))
    constraints = [
        (draw(st.integers(1, n)), draw(st.sampled_from(CONTACT_TYPES))) for _ in range(m)
    ]
    armature = draw(st.booleans())
    seed = draw(st.integers(0, 2**32 - 1))
    return TreeSpec(parents, kinds, constraints, armature, seed)


def random_trees(
    min_joints: int = 1,
    max_joints: int = 15,
    max_constraints: int = 6,
    joint_types: Sequence[str] = DEFAULT_JOINT_TYPES,
) -> st.SearchStrategy[Tree]:
    """Hypothesis strategy of ``(model, constraint_models)`` random trees.

    Depth-first joint order, random parent structure (chains, branches, several roots),
    joint kinds from ``joint_types`` anywhere in the tree, root either fixed or a
    free-flyer, random placements/inertias/armature, 0..max_constraints LOCAL
    CONTACT_3D/CONTACT_6D constraints with random placements (possibly several on one
    joint, possibly on joint 1).
    """
    return tree_specs(min_joints, max_joints, max_constraints, joint_types).map(build_tree)


def mixed_kinds(
    model: pin.Model, cms: Sequence[pin.RigidConstraintModel], rng: np.random.Generator
) -> list[pin.RigidConstraintModel]:
    """``cms`` remade in LOCAL or LOCAL_WORLD_ALIGNED (half each), a third of them between
    their joint and another joint of the tree (world excluded) at a random placement."""
    out = []
    for cm in cms:
        frame = (pin.LOCAL, pin.LOCAL_WORLD_ALIGNED)[int(rng.integers(2))]
        others = [j for j in range(1, model.njoints) if j != cm.joint1_id]
        joint2 = int(rng.choice(others)) if others and rng.random() < 1 / 3 else 0
        out.append(
            pin.RigidConstraintModel(
                cm.type, model, cm.joint1_id, cm.joint1_placement, joint2,
                random_placement(rng), frame,
            )
        )  # fmt: skip
    return out


#: Pin 4's constraint models pvosimr takes (none before pin 4).
ANCHOR_MODELS = tuple(
    getattr(pin, name)
    for name in (
        "FrameAnchorConstraintModel",
        "PointAnchorConstraintModel",
        "PointContactConstraintModel",
    )
    if hasattr(pin, name)
)


def with_anchors(model: pin.Model, cms: Sequence, rng: np.random.Generator) -> list:
    """``cms`` with a third of them remade as pin 4's models on the same joints and placements
    (``joint2_placement`` included, a point fixed in the world for a one-body point anchor):
    a 6D one as a ``FrameAnchorConstraintModel``, a 3D one as a ``PointAnchorConstraintModel``
    or a ``PointContactConstraintModel``; unchanged on a pin without them."""
    if not ANCHOR_MODELS:
        return list(cms)
    frame, points = ANCHOR_MODELS[0], ANCHOR_MODELS[1:]
    out = []
    for cm in cms:
        if rng.random() >= 1 / 3:
            out.append(cm)
            continue
        six = cm.type == pin.ContactType.CONTACT_6D
        kind = frame if six else points[int(rng.integers(len(points)))]
        out.append(
            kind(model, cm.joint1_id, cm.joint1_placement, cm.joint2_id, cm.joint2_placement)
        )
    return out


def drawn_mixed_tree(
    rng: np.random.Generator,
    seed: int,
    joints: tuple[int, int],
    constraints: tuple[int, int],
    armature: bool = True,
) -> Tree:
    """A tree of :func:`drawn_shape` (armature one time in two, none if ``armature`` is false)
    with its constraints of every kind (:func:`mixed_kinds`, :func:`with_anchors`), drawn from
    ``rng``; ``seed`` draws the numeric parts."""
    parents, kinds, sites = drawn_shape(rng, joints, constraints)
    armed = bool(rng.integers(2)) if armature else False
    model, cms = build_tree(TreeSpec(parents, kinds, sites, armed, seed))
    return model, with_anchors(model, mixed_kinds(model, cms, rng), rng)


# --------------------------------------------------------------------------- Fig. 1


def branching_tree(kinds: Sequence[str]) -> pin.Model:
    """Eight joints of ``kinds`` (the first the root) on two branches from joint 1 and one from
    joint 2 (parents 0, 1, 2, 3, 2, 1, 6, 7), with armature, no constraints."""
    return build_tree(TreeSpec([0, 1, 2, 3, 2, 1, 6, 7], kinds, [], True, 11))[0]


def two_joint_chain(kinds: Sequence[str]) -> pin.Model:
    """Two joints of ``kinds`` on one chain from the root, no armature, no constraints."""
    return build_tree(TreeSpec([0, 1], kinds, [], False, 1))[0]


def check_every_algorithm(
    model: pin.Model, cms: Sequence, seed: int, truth: Truth, auto: bool, drawn: bool = False
) -> float:
    """Every algorithm (and ``"auto"`` if ``auto``: its cost model takes about a second per
    tree), one call at a time and batched, on numpy at two configurations drawn from ``seed``,
    against ``truth(model, q, cms)``; the largest error.  ``drawn``: PV-OSIMh on a plan drawn
    from ``seed`` (:func:`drawn_plan`)."""
    if drawn:
        drawn_plan(model, cms, seed)
    rng = np.random.default_rng(seed)
    qs = np.stack([random_q(model, rng) for _ in range(2)])
    truths = [truth(model, q, cms) for q in qs]
    data, worst = model.createData(), 0.0
    for algorithm in (*pvosimr.ALGORITHMS, *(("auto",) if auto else ())):
        G = pvosimr.compute_delassus_batch(model, qs, cms, algorithm)
        for q, expected, Gb in zip(qs, truths, G, strict=True):
            single = rel_err(pvosimr.compute_delassus(model, data, q, cms, algorithm), expected)
            batch = rel_err(Gb, expected)
            assert single <= TOLERANCE, (algorithm, seed, single)
            assert batch <= TOLERANCE, (algorithm, seed, "batch", batch)
            worst = max(worst, single, batch)
    return worst


def fig1_tree(seed: int = 0) -> Tree:
    """The PV-OSIMr paper's Fig. 1 tree: 6 revolute links, 3 welded end-effectors.

    Parents of links 1..6 are ``FIG1_PARENTS`` = (0, 1, 2, 3, 4, 2) (already depth-first).
    Constraints, in order: EE7 on link 6, EE8 on link 3, EE9 on link 5, all CONTACT_6D,
    LOCAL, at random (deterministic for a given ``seed``) non-identity placements.
    Joint axes cycle RX, RY, RZ; placements and inertias are random but deterministic.
    """
    kinds = ("RX", "RY", "RZ", "RX", "RY", "RZ")
    spec = TreeSpec(
        parents=FIG1_PARENTS,
        joint_types=kinds,
        constraints=[(j, pin.ContactType.CONTACT_6D) for j in FIG1_CONSTRAINED_LINKS],
        armature=False,
        seed=seed,
    )
    model, constraints = build_tree(spec)
    model.name = "pvosimr_fig1"
    return model, constraints


# --------------------------------------------------------------------------- mimic couplings

#: Joint kinds that can take part in a mimic coupling (1-DoF screws with nq = 1).
MIMICABLE: tuple[str, ...] = (
    "RX", "RY", "RZ", "RevoluteUnaligned", "PX", "PY", "PZ", "PrismaticUnaligned",
    "HX", "HY", "HZ", "HelicalUnaligned",
)  # fmt: skip


def add_mimics(
    relaxed: pin.Model, cms: list, rng: np.random.Generator, count: int
) -> tuple[pin.Model, list, list[tuple[int, int, float, float]]]:
    """``relaxed`` with up to ``count`` of its 1-DoF joints turned into mimics of others
    (``pin.transformJointIntoMimic``), the constraints rebuilt on it, and the couplings
    ``(mimic, primary, scaling, offset)``.  A mimic may follow a joint in another branch, its
    parent or a child.  ``relaxed`` keeps its joints (the truth's tree); a mimic joint's
    armature is zeroed there, as the mimic model has none for it."""
    kinds = [j.shortname().removeprefix("JointModel") for j in relaxed.joints]
    model, pairs, mimics, primaries = relaxed, [], set(), set()
    for _ in range(count):
        free = [j for j in range(1, relaxed.njoints) if j not in mimics and kinds[j] in MIMICABLE]
        if len(free) < 2:
            break
        a, b = sorted(int(j) for j in rng.choice(free, size=2, replace=False))
        if b in primaries:  # Pinocchio wants the mimic after its primary, and no chains
            continue
        if kinds[b] == "HelicalUnaligned":
            continue  # pin 4.1's forwardKinematics segfaults on a mimic of this type
        scaling, offset = rng.uniform(0.3, 2.0) * rng.choice([-1.0, 1.0]), rng.uniform(-0.5, 0.5)
        model = pin.transformJointIntoMimic(model, a, b, scaling, offset)
        pairs.append((b, a, float(scaling), float(offset)))
        mimics.add(b)
        primaries.add(a)
    if not pairs:
        return relaxed, cms, []
    cms = [pin.RigidConstraintModel(cm.type, model, cm.joint1_id, cm.joint1_placement, pin.LOCAL)
           for cm in cms]  # fmt: skip
    model.lowerPositionLimit = -np.pi * np.ones(model.nq)
    model.upperPositionLimit = np.pi * np.ones(model.nq)
    armature = relaxed.armature.copy()
    armature[[relaxed.joints[m].idx_v for m, *_ in pairs]] = 0.0
    relaxed.armature = armature
    return model, cms, pairs


def reduced_truth(model: pin.Model, cms: list, relaxed: pin.Model, pairs: list, q) -> np.ndarray:
    """``J_r Φ (Φᵀ M_r Φ)⁻¹ Φᵀ J_rᵀ`` from Pinocchio on the tree without mimic joints, ``Φ`` the
    map from the mimic model's velocities to the relaxed tree's: a truth that never meets a
    mimic joint (Pinocchio 4.1's own miss a helical mimic's pitch)."""
    from pvosimr.reference.truth import constraint_jacobian, mass_matrix

    mimic = {m: (p, s, o) for m, p, s, o in pairs}
    q_r, Phi = np.zeros(relaxed.nq), np.zeros((relaxed.nv, model.nv))
    for i in range(1, relaxed.njoints):
        jr, j = relaxed.joints[i], model.joints[i]
        if i in mimic:  # 1-DoF: θ = s q_p + o, θ̇ = s q̇_p
            p, s, o = mimic[i]
            q_r[jr.idx_q] = s * q[model.joints[p].idx_q] + o
            Phi[jr.idx_v, model.joints[p].idx_v] = s
        else:
            q_r[jr.idx_q : jr.idx_q + jr.nq] = q[j.idx_q : j.idx_q + j.nq]
            Phi[jr.idx_v : jr.idx_v + jr.nv, j.idx_v : j.idx_v + j.nv] = np.eye(jr.nv)
    J = constraint_jacobian(relaxed, q_r, cms) @ Phi
    M = Phi.T @ mass_matrix(relaxed, q_r) @ Phi
    Y = np.linalg.solve(np.linalg.cholesky(M), J.T)
    return Y.T @ Y


def every_kind_of_joint() -> pin.Model:
    """A chain with one joint of each kind of coordinates (all massive)."""
    composite = pin.JointModelComposite(pin.JointModelRX())
    composite.addJoint(pin.JointModelRUBY(), pin.SE3(np.eye(3), np.array([0.0, 0.1, 0.0])))
    joints = [
        pin.JointModelFreeFlyer(),
        pin.JointModelSpherical(),
        pin.JointModelPlanar(),
        pin.JointModelRUBX(),
        revolute_unbounded_unaligned(np.array([0.6, 0.0, 0.8])),
        composite,
        pin.JointModelSphericalZYX(),
        pin.JointModelTranslation(),
        pin.JointModelRY(),
    ]
    return chain_of(joints)


def chain_of(joints: list) -> pin.Model:
    """A chain of ``joints``, each 0.2 along z from its parent, each link massive."""
    model = pin.Model()
    parent = 0
    for k, joint in enumerate(joints):
        placement = pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.2]))
        parent = model.addJoint(parent, joint, placement, f"joint{k}")
        inertia = pin.Inertia(1.0 + 0.1 * k, np.array([0.0, 0.0, 0.1]), np.diag([0.1, 0.2, 0.3]))
        model.appendBodyToJoint(parent, inertia, pin.SE3.Identity())
    return model


def mass_on_the_first_axis() -> tuple[pin.Model, list, np.ndarray]:
    """A point mass on the axis of the first joint, a point contact at it, and three q: M is
    singular exactly when q_tilt = 0, in the last of them."""
    model = pin.Model()
    turn = model.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), "turn")
    tilt = model.addJoint(turn, pin.JointModelRY(), pin.SE3.Identity(), "tilt")
    point_mass = pin.Inertia(2.0, np.array([0, 0, 1.0]), np.zeros((3, 3)))
    model.appendBodyToJoint(tilt, point_mass, pin.SE3.Identity())
    at_mass = pin.SE3(np.eye(3), np.array([0, 0, 1.0]))
    contact = pin.ContactType.CONTACT_3D
    cms = [pin.RigidConstraintModel(contact, model, tilt, at_mass, pin.LOCAL)]
    return model, cms, np.array([[0.3, 0.5], [0.2, 0.7], [0.1, 0.0]])
