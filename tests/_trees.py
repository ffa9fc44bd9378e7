"""Random kinematic trees with constraints, built with Pinocchio, for property tests.

The tree *structure* (parent array, joint types, floating root, constraint joints and
types) is drawn from hypothesis so that failures shrink to small trees; the numeric
parts (placements, inertias, armature, axes) come from a numpy ``Generator`` seeded by a
hypothesis-drawn integer, which keeps shrinking cheap.

Joints are always added depth-first (every subtree is a contiguous index range):
``pin.Model.addJoint`` silently produces an indefinite ``crba`` mass matrix otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import strategies as st

__all__ = [
    "DEFAULT_JOINT_TYPES",
    "FIG1_PARENTS",
    "MIDDLE_ANGLE_SINGULAR",
    "MIMICABLE",
    "TreeSpec",
    "add_mimics",
    "build_tree",
    "fig1_tree",
    "pin_constraint_size",
    "random_inertia",
    "random_placement",
    "random_q",
    "random_rotation",
    "random_trees",
    "random_unit_vector",
    "reduced_truth",
    "requires_pin_feature",
    "tree_specs",
]

Tree = tuple[pin.Model, list[pin.RigidConstraintModel]]


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


# Ordered roughly from simplest to most complex: hypothesis shrinks towards the front; the
# types the installed pin lacks (Ellipsoid before pin 3.9) are left out.
DEFAULT_JOINT_TYPES: tuple[str, ...] = tuple(
    kind
    for kind in (
        "RZ",
        "RX",
        "RY",
        "RevoluteUnaligned",
        "PX",
        "PY",
        "PZ",
        "PrismaticUnaligned",
        "RUBX",
        "RUBY",
        "RUBZ",
        "RevoluteUnboundedUnaligned",
        "Spherical",
        "SphericalZYX",
        "Planar",
        "Translation",
        "FreeFlyer",
        "HX",
        "HY",
        "HZ",
        "HelicalUnaligned",
        "Universal",
        "Ellipsoid",
        "Composite",
    )
    if hasattr(pin, f"JointModel{kind}")
)

#: Joints whose motion subspace loses rank where their middle angle q_i[1] is ±π/2 (gimbal
#: lock): SphericalZYX (R_z R_y R_x) and Ellipsoid (R_x R_y R_z).
MIDDLE_ANGLE_SINGULAR = frozenset({"JointModelSphericalZYX", "JointModelEllipsoid"})

#: Smallest singular value of a composite's S that random_q accepts (its angular columns are
#: unit, its linear ones of the order of the sub-joint offsets, ≤ 0.3 m).
COMPOSITE_MIN_SIGMA = 0.05

CONTACT_TYPES: tuple[pin.ContactType, ...] = (
    pin.ContactType.CONTACT_3D,
    pin.ContactType.CONTACT_6D,
)

# Paper Fig. 1: parent of links 1..6 (link 1 on the world, link 6 on link 2).
FIG1_PARENTS: tuple[int, ...] = (0, 1, 2, 3, 4, 2)
# Fig. 1 end-effectors EE7, EE8, EE9 sit on links 6, 3, 5 (in that order).
FIG1_CONSTRAINED_LINKS: tuple[int, ...] = (6, 3, 5)


# --------------------------------------------------------------------------- numerics


def random_unit_vector(rng: np.random.Generator) -> np.ndarray:
    """A uniformly distributed unit 3-vector."""
    while True:
        v = rng.standard_normal(3)
        n = float(np.linalg.norm(v))
        if n > 1e-3:
            return v / n


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A uniformly distributed rotation matrix (from a random unit quaternion)."""
    w, x, y, z = rng.standard_normal(4)
    n = np.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def random_placement(rng: np.random.Generator, scale: float = 0.5) -> pin.SE3:
    """A random (non-identity) rigid transform: uniform rotation, translation in ±scale."""
    return pin.SE3(random_rotation(rng), rng.uniform(-scale, scale, 3))


def random_inertia(rng: np.random.Generator) -> pin.Inertia:
    """A well-conditioned random rigid-body inertia.

    Mass in [0.1, 5], centre of mass within ±0.3, rotational inertia about the CoM built
    as that of a mass distribution with second moments ``s_k = m σ_k²`` (σ_k in
    [0.05, 0.5]) along random principal axes, so the principal moments
    ``(s2+s3, s1+s3, s1+s2)`` are positive and strictly satisfy the triangle inequality.
    """
    mass = float(rng.uniform(0.1, 5.0))
    com = rng.uniform(-0.3, 0.3, 3)
    s = mass * rng.uniform(0.1, 0.5, 3) ** 2
    principal = np.array([s[1] + s[2], s[0] + s[2], s[0] + s[1]])
    r = random_rotation(rng)
    inertia = r @ np.diag(principal) @ r.T
    return pin.Inertia(mass, com, 0.5 * (inertia + inertia.T))


def _leaves(joint) -> list:
    """The non-composite joints of ``joint`` (itself, or a composite's, recursively), typed."""
    typed = joint.extract() if hasattr(joint, "extract") else joint
    if typed.shortname() != "JointModelComposite":
        return [typed]
    return [leaf for sub in typed.joints for leaf in _leaves(sub)]


def _composite_sigma(joint, q: np.ndarray) -> float:
    """Smallest singular value of a joint's motion subspace at the model configuration q."""
    jdata = joint.createData()
    joint.calc(jdata, q)
    return float(np.linalg.svd(np.reshape(jdata.S, (6, -1)), compute_uv=False)[-1])


def _tame_middle_angles(v: np.ndarray, joints, scale: float, pitch_max: float) -> None:
    """Scale the middle angle of every gimbal-lock-prone joint (composites' included) in
    ``joints`` from ±scale into ±pitch_max."""
    if scale <= pitch_max:
        return
    for joint in joints:
        for leaf in _leaves(joint):
            if leaf.shortname() in MIDDLE_ANGLE_SINGULAR:
                v[leaf.idx_v + 1] *= pitch_max / scale


def random_q(
    model: pin.Model,
    rng: np.random.Generator,
    scale: float = np.pi,
    zyx_pitch_max: float | None = 1.2,
) -> np.ndarray:
    """A valid configuration of ``model`` drawn from ``rng``.

    ``q = integrate(neutral, v)`` with ``v`` uniform in ±scale per velocity coordinate, so
    quaternions (FreeFlyer, Spherical) are unit and the (cos, sin) pairs of RUB and
    Planar joints lie on the unit circle whatever the model's position limits are.

    SphericalZYX and Ellipsoid joints (also inside composites) are singular (gimbal lock: the
    mass matrix loses rank) when their middle angle is ±π/2; unless ``zyx_pitch_max`` is None
    that angle is kept within ±zyx_pitch_max so the mass matrix stays well conditioned.  For
    the same reason (and also unless it is None) a composite's velocity part is drawn again,
    up to 50 times, while the smallest singular value of its S is below
    ``COMPOSITE_MIN_SIGMA``.
    """
    v = rng.uniform(-scale, scale, model.nv)
    if zyx_pitch_max is None:
        return pin.integrate(model, pin.neutral(model), v)
    _tame_middle_angles(v, model.joints[1:], scale, zyx_pitch_max)
    q = pin.integrate(model, pin.neutral(model), v)
    for joint in model.joints[1:]:
        if joint.shortname() != "JointModelComposite":
            continue
        for _ in range(50):
            if _composite_sigma(joint, q) >= COMPOSITE_MIN_SIGMA:
                break
            v[joint.idx_v : joint.idx_v + joint.nv] = rng.uniform(-scale, scale, joint.nv)
            _tame_middle_angles(v, [joint], scale, zyx_pitch_max)
            q = pin.integrate(model, pin.neutral(model), v)
    return q


# --------------------------------------------------------------------------- joints


def _revolute_unbounded_unaligned(axis: np.ndarray) -> pin.JointModel:
    """JointModelRevoluteUnboundedUnaligned about ``axis``.

    The Python binding of this joint (pin 4.1.0) has only a default constructor (axis =
    UnitX); a URDF ``continuous`` joint with a non-aligned axis yields the general one.
    """
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    xyz = " ".join(repr(float(c)) for c in a)
    urdf = (
        '<robot name="r"><link name="a"/><link name="b"/>'
        '<joint name="j" type="continuous"><parent link="a"/><child link="b"/>'
        f'<axis xyz="{xyz}"/></joint></robot>'
    )
    joint = pin.buildModelFromXML(urdf).joints[1]
    assert joint.shortname() == "JointModelRevoluteUnboundedUnaligned", joint.shortname()
    return joint


def _unaligned_axis(rng: np.random.Generator) -> np.ndarray:
    """A unit axis that is not (nearly) aligned with x, y or z."""
    while True:
        a = random_unit_vector(rng)
        if np.max(np.abs(a)) < 0.95:
            return a


_SIMPLE_JOINTS: dict[str, Callable[[], object]] = {
    "RX": pin.JointModelRX,
    "RY": pin.JointModelRY,
    "RZ": pin.JointModelRZ,
    "RUBX": pin.JointModelRUBX,
    "RUBY": pin.JointModelRUBY,
    "RUBZ": pin.JointModelRUBZ,
    "PX": pin.JointModelPX,
    "PY": pin.JointModelPY,
    "PZ": pin.JointModelPZ,
    "Spherical": pin.JointModelSpherical,
    "SphericalZYX": pin.JointModelSphericalZYX,
    "Planar": pin.JointModelPlanar,
    "Translation": pin.JointModelTranslation,
    "FreeFlyer": pin.JointModelFreeFlyer,
}


def _orthogonal_axes(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two orthonormal axes: a pair of coordinate axes one time in three, else random."""
    if rng.random() < 1 / 3:
        i, j = rng.choice(3, size=2, replace=False)
        return np.eye(3)[i] * rng.choice([-1, 1]), np.eye(3)[j] * rng.choice([-1, 1])
    a = random_unit_vector(rng)
    b = np.cross(a, random_unit_vector(rng))
    while np.linalg.norm(b) < 1e-2:
        b = np.cross(a, random_unit_vector(rng))
    return a, b / np.linalg.norm(b)


def _pitch(rng: np.random.Generator) -> float:
    """A helical pitch in ±0.5 m/rad, zero one time in six."""
    return 0.0 if rng.random() < 1 / 6 else float(rng.uniform(-0.5, 0.5))


#: nv of every joint kind but Composite (whose nv is that of its contents) in the installed pin.
_NV = {
    kind: nv
    for kind, nv in {
        **dict.fromkeys(("RX", "RY", "RZ", "RevoluteUnaligned", "RUBX", "RUBY", "RUBZ"), 1),
        **dict.fromkeys(("RevoluteUnboundedUnaligned", "PX", "PY", "PZ"), 1),
        **dict.fromkeys(("PrismaticUnaligned", "HX", "HY", "HZ", "HelicalUnaligned"), 1),
        **dict.fromkeys(("Spherical", "SphericalZYX", "Planar", "Translation", "Ellipsoid"), 3),
        "Universal": 2,
        "FreeFlyer": 6,
    }.items()
    if kind in DEFAULT_JOINT_TYPES
}

#: A composite's nv stays within this (a rigid body has 6 dofs).
_COMPOSITE_MAX_NV = 6


def _random_composite(rng: np.random.Generator, max_nv: int, depth: int) -> pin.JointModel:
    """A composite of 1 to 3 random sub-joints (any kind; a nested composite while ``depth``
    allows) at random placements, of nv ≤ ``max_nv``, whose S has full column rank at generic
    q (checked at a few random configurations: e.g. two spherical joints never do)."""
    while True:
        composite, nv = None, 0
        for _ in range(int(rng.integers(1, 4))):
            kinds = [k for k, n in _NV.items() if nv + n <= max_nv]
            if depth > 0 and nv + 1 < max_nv:
                kinds.append("Composite")
            if not kinds:
                break
            kind = kinds[int(rng.integers(len(kinds)))]
            if kind == "Composite":
                sub = _random_composite(rng, max_nv - nv, depth - 1)
            else:
                sub = make_joint(kind, rng)
            placement = random_placement(rng, scale=0.3)
            if composite is None:
                composite = pin.JointModelComposite(sub, placement)
            else:
                composite.addJoint(sub, placement)
            nv += sub.nv
        if _generic_full_rank(composite, rng):
            return composite


def _generic_full_rank(joint, rng: np.random.Generator) -> bool:
    model = pin.Model()
    model.addJoint(0, joint, pin.SE3.Identity(), "j")
    sigmas = [
        _composite_sigma(model.joints[1], random_q(model, rng, zyx_pitch_max=1.2)) for _ in range(4)
    ]
    return max(sigmas) >= 2 * COMPOSITE_MIN_SIGMA


def make_joint(kind: str, rng: np.random.Generator) -> object:
    """A Pinocchio joint model of the named kind (random axes, pitches, radii, contents)."""
    if kind in _SIMPLE_JOINTS:
        return _SIMPLE_JOINTS[kind]()
    if kind == "RevoluteUnaligned":
        return pin.JointModelRevoluteUnaligned(_unaligned_axis(rng))
    if kind == "PrismaticUnaligned":
        return pin.JointModelPrismaticUnaligned(_unaligned_axis(rng))
    if kind == "RevoluteUnboundedUnaligned":
        return _revolute_unbounded_unaligned(_unaligned_axis(rng))
    if kind in ("HX", "HY", "HZ"):
        return getattr(pin, f"JointModel{kind}")(_pitch(rng))
    if kind == "HelicalUnaligned":
        return pin.JointModelHelicalUnaligned(_unaligned_axis(rng), _pitch(rng))
    if kind == "Universal":
        return pin.JointModelUniversal(*_orthogonal_axes(rng))
    if kind == "Ellipsoid":
        radii = rng.uniform(0.02, 0.4, 3) * (rng.random(3) < 0.8)
        return pin.JointModelEllipsoid(*map(float, radii))
    if kind == "Composite":
        return _random_composite(rng, _COMPOSITE_MAX_NV, depth=2)
    raise ValueError(f"unknown joint kind {kind!r}")


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


def _check_depth_first(parents: Sequence[int]) -> None:
    """Raise unless parent[i] is an ancestor-or-self of joint i-1 (or the universe)."""
    path: list[int] = [0]
    for i, p in enumerate(parents, start=1):
        if p not in path:
            raise ValueError(f"joint {i} with parent {p} breaks depth-first order {parents}")
        del path[path.index(p) + 1 :]
        path.append(i)


def build_tree(spec: TreeSpec) -> Tree:
    """Build the Pinocchio model and constraint list described by ``spec``."""
    _check_depth_first(spec.parents)
    rng = np.random.default_rng(spec.seed)
    model = pin.Model()
    model.name = "random_tree"
    for i, (parent, kind) in enumerate(zip(spec.parents, spec.joint_types, strict=True), 1):
        joint = make_joint(kind, rng)
        jid = model.addJoint(parent, joint, random_placement(rng), f"joint{i}")
        assert jid == i
        model.appendBodyToJoint(jid, random_inertia(rng), pin.SE3.Identity())
    # Finite limits so that pin.randomConfiguration(model) also works on these models.
    model.lowerPositionLimit = -np.pi * np.ones(model.nq)
    model.upperPositionLimit = np.pi * np.ones(model.nq)
    if spec.armature:
        mask = rng.random(model.nv) < 0.5
        model.armature = np.where(mask, rng.uniform(0.0, 0.5, model.nv), 0.0)
    constraints = [
        pin.RigidConstraintModel(ctype, model, jid, random_placement(rng), pin.LOCAL)
        for jid, ctype in spec.constraints
    ]
    return model, constraints


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


# --------------------------------------------------------------------------- Fig. 1


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
    from pvosimr.truth import constraint_jacobian, mass_matrix

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
