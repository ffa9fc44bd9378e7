"""Random kinematic trees from a seed: joints, bodies, placements, chains and configurations.

Everything numeric (axes, pitches, radii, placements, inertias, armature) comes from one
``numpy.random.Generator``, so a seed rebuilds a model to the last bit.  Joints are added
depth-first (every subtree a contiguous index range): ``pin.Model.addJoint`` silently yields
an indefinite ``crba`` mass matrix otherwise.

Two frozen ways to draw (:class:`Draws`); the order of the draws is part of each, so a seed
rebuilds what was stored from it:

* :data:`EDGE_CASES` (the property tests, the golden operation counts): joints with their
  special values too — a zero helical pitch one time in six, a pair of coordinate axes for a
  universal joint one time in three, zero ellipsoid radii, composites of 1 to 3 random
  sub-joints nested up to twice;
* :data:`GENERIC` (the accuracy study): a generic joint of each kind — axes off the coordinate
  axes, non-zero pitch and radii, a composite of two unaligned revolute joints.  It also draws
  a rotation's quaternion and a body's parameters in another order (both uniform, each seed
  its own model).

::

    from . import seeded
    model, constraints = seeded.random_chain(["Spherical"] * 80, seed=0)
    q = seeded.random_q(model, np.random.default_rng(1))
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin

__all__ = [
    "COMPOSITE_MIN_SIGMA",
    "EDGE_CASES",
    "GENERIC",
    "JOINT_KINDS",
    "MIDDLE_ANGLE_SINGULAR",
    "Draws",
    "GenericDraws",
    "check_depth_first",
    "joint_leaves",
    "random_chain",
    "random_inertia",
    "random_joint",
    "random_placement",
    "random_q",
    "random_rotation",
    "random_tree",
    "random_unaligned_axis",
    "random_unit_vector",
    "revolute_unbounded_unaligned",
]

Tree = tuple[pin.Model, list[pin.RigidConstraintModel]]
C3, C6 = pin.ContactType.CONTACT_3D, pin.ContactType.CONTACT_6D

#: Kinds :func:`random_joint` builds, simplest first (hypothesis shrinks towards the front);
#: the ones the installed pin lacks (Ellipsoid before pin 3.9) are left out.
_KINDS = (
    "RZ", "RX", "RY", "RevoluteUnaligned", "PX", "PY", "PZ", "PrismaticUnaligned",
    "RUBX", "RUBY", "RUBZ", "RevoluteUnboundedUnaligned", "Spherical", "SphericalZYX",
    "Planar", "Translation", "FreeFlyer", "HX", "HY", "HZ", "HelicalUnaligned",
    "Universal", "Ellipsoid", "Composite",
)  # fmt: skip
JOINT_KINDS: tuple[str, ...] = tuple(k for k in _KINDS if hasattr(pin, f"JointModel{k}"))

#: Joints without parameters: axes fixed by the kind.
_PLAIN = frozenset(
    {"RX", "RY", "RZ", "RUBX", "RUBY", "RUBZ", "PX", "PY", "PZ", "Spherical", "SphericalZYX"}
    | {"Planar", "Translation", "FreeFlyer"}
)

#: Joints whose motion subspace loses rank where their middle angle q_i[1] is ±π/2 (gimbal
#: lock): SphericalZYX (R_z R_y R_x) and Ellipsoid (R_x R_y R_z).
MIDDLE_ANGLE_SINGULAR = frozenset({"JointModelSphericalZYX", "JointModelEllipsoid"})

#: Smallest singular value of a composite's S that :func:`random_q` accepts (its angular
#: columns are unit, its linear ones of the order of the sub-joint offsets, ≤ 0.3 m).
COMPOSITE_MIN_SIGMA = 0.05


# --------------------------------------------------------------------------- numbers


def random_unit_vector(rng: np.random.Generator) -> np.ndarray:
    """A uniformly distributed unit 3-vector."""
    while True:
        v = rng.standard_normal(3)
        n = float(np.linalg.norm(v))
        if n > 1e-3:
            return v / n


def random_unaligned_axis(rng: np.random.Generator) -> np.ndarray:
    """A random unit axis not within 0.95 of x, y or z (no coordinate axis in disguise)."""
    while True:
        a = random_unit_vector(rng)
        if np.max(np.abs(a)) < 0.95:
            return a


def revolute_unbounded_unaligned(axis: np.ndarray) -> pin.JointModel:
    """``JointModelRevoluteUnboundedUnaligned`` about the unit ``axis``.

    Its Python binding (pin 4.1) has only a default constructor (axis x); a URDF
    ``continuous`` joint about a non-aligned axis yields the general one.
    """
    xyz = " ".join(repr(float(c)) for c in axis)
    urdf = (
        '<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="continuous">'
        f'<parent link="a"/><child link="b"/><axis xyz="{xyz}"/></joint></robot>'
    )
    return pin.buildModelFromXML(urdf).joints[1]


def _inertia(mass: float, s: np.ndarray, r: np.ndarray, com: np.ndarray, scale: float):
    """The body of mass ``mass`` with second moments ``s`` along the axes ``r`` (see
    :meth:`Draws.inertia`), mass and rotational inertia times ``scale``."""
    inertia = r @ np.diag([s[1] + s[2], s[0] + s[2], s[0] + s[1]]) @ r.T
    return pin.Inertia(scale * mass, com, scale * 0.5 * (inertia + inertia.T))


class Draws:
    """How a generator's numbers become rotations, placements, bodies and joints, in a frozen
    order: the property tests' way, special values included (:data:`EDGE_CASES`)."""

    edge_cases = True

    def rotation(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly distributed rotation matrix (from a random unit quaternion w, x, y, z)."""
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

    def placement(self, rng: np.random.Generator, scale: float = 0.5) -> pin.SE3:
        """A random rigid transform: uniform rotation, translation in ±scale."""
        return pin.SE3(self.rotation(rng), rng.uniform(-scale, scale, 3))

    def inertia(self, rng: np.random.Generator, scale: float = 1.0) -> pin.Inertia:
        """A well-conditioned random rigid-body inertia, mass and rotational part times ``scale``.

        Mass in [0.1, 5], centre of mass within ±0.3, rotational inertia about the CoM that of
        a mass distribution with second moments ``s_k = m σ_k²`` (σ_k in [0.1, 0.5]) along
        random principal axes, so the principal moments ``(s2+s3, s1+s3, s1+s2)`` are positive
        and strictly satisfy the triangle inequality.
        """
        mass = float(rng.uniform(0.1, 5.0))
        com = rng.uniform(-0.3, 0.3, 3)
        s = mass * rng.uniform(0.1, 0.5, 3) ** 2
        return _inertia(mass, s, self.rotation(rng), com, scale)

    def joint(self, kind: str, rng: np.random.Generator) -> pin.JointModel:
        """A Pinocchio joint of short name ``kind`` (random axes, pitches, radii, contents)."""
        if kind in _PLAIN:
            return getattr(pin, f"JointModel{kind}")()
        if kind in ("RevoluteUnaligned", "PrismaticUnaligned"):
            return getattr(pin, f"JointModel{kind}")(random_unaligned_axis(rng))
        if kind == "RevoluteUnboundedUnaligned":
            return revolute_unbounded_unaligned(random_unaligned_axis(rng))
        if kind in ("HX", "HY", "HZ"):
            return getattr(pin, f"JointModel{kind}")(self._pitch(rng))
        if kind == "HelicalUnaligned":
            return pin.JointModelHelicalUnaligned(random_unaligned_axis(rng), self._pitch(rng))
        if kind == "Universal":
            return pin.JointModelUniversal(*self._orthogonal_axes(rng))
        if kind == "Ellipsoid":
            return pin.JointModelEllipsoid(*map(float, self._ellipsoid_radii(rng)))
        if kind == "Composite":
            return self._composite(rng)
        raise ValueError(f"unknown joint kind {kind!r} (one of {', '.join(JOINT_KINDS)})")

    def _pitch(self, rng: np.random.Generator) -> float:
        """A helical pitch in ±0.5 m/rad (zero one time in six with edge cases)."""
        if self.edge_cases and rng.random() < 1 / 6:
            return 0.0
        return float(rng.uniform(-0.5, 0.5))

    def _orthogonal_axes(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Two orthonormal axes (with edge cases, a pair of coordinate axes one time in three)."""
        draw = random_unaligned_axis
        if self.edge_cases:
            if rng.random() < 1 / 3:
                i, j = rng.choice(3, size=2, replace=False)
                return np.eye(3)[i] * rng.choice([-1, 1]), np.eye(3)[j] * rng.choice([-1, 1])
            draw = random_unit_vector
        a = draw(rng)
        b = np.cross(a, draw(rng))
        while np.linalg.norm(b) < 1e-2:
            b = np.cross(a, draw(rng))
        return a, b / np.linalg.norm(b)

    def _ellipsoid_radii(self, rng: np.random.Generator) -> np.ndarray:
        """Radii in [0.05, 0.4] m; with edge cases in [0.02, 0.4] m, each zero one time in five."""
        if self.edge_cases:
            return rng.uniform(0.02, 0.4, 3) * (rng.random(3) < 0.8)
        return rng.uniform(0.05, 0.4, 3)

    def _composite(self, rng: np.random.Generator) -> pin.JointModel:
        return _random_composite(self, rng, _COMPOSITE_MAX_NV, depth=2)


class GenericDraws(Draws):
    """The accuracy study's frozen draws (:data:`GENERIC`): generic joints only, a rotation's
    quaternion drawn x, y, z, w, a body's parameters drawn mass, moments, axes, CoM."""

    edge_cases = False

    def rotation(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly distributed rotation matrix (from a random unit quaternion x, y, z, w)."""
        x, y, z, w = rng.standard_normal(4)
        return pin.Quaternion(w, x, y, z).normalized().toRotationMatrix()

    def inertia(self, rng: np.random.Generator, scale: float = 1.0) -> pin.Inertia:
        mass = float(rng.uniform(0.1, 5.0))
        s = mass * rng.uniform(0.1, 0.5, 3) ** 2
        r = self.rotation(rng)
        return _inertia(mass, s, r, rng.uniform(-0.3, 0.3, 3), scale)

    def _composite(self, rng: np.random.Generator) -> pin.JointModel:
        """Two unaligned revolute joints in series at a random offset (a 2-dof composite)."""
        first = pin.JointModelRevoluteUnaligned(random_unaligned_axis(rng))
        joint = pin.JointModelComposite(first, pin.SE3.Identity())
        second = pin.JointModelRevoluteUnaligned(random_unaligned_axis(rng))
        joint.addJoint(second, self.placement(rng, 0.3))
        return joint


EDGE_CASES = Draws()
GENERIC = GenericDraws()

random_rotation = EDGE_CASES.rotation
random_placement = EDGE_CASES.placement
random_inertia = EDGE_CASES.inertia
random_joint = EDGE_CASES.joint


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
    if kind in JOINT_KINDS
}

#: A composite's nv stays within this (a rigid body has 6 dofs).
_COMPOSITE_MAX_NV = 6


def _random_composite(
    draws: Draws, rng: np.random.Generator, max_nv: int, depth: int
) -> pin.JointModel:
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
                sub = _random_composite(draws, rng, max_nv - nv, depth - 1)
            else:
                sub = draws.joint(kind, rng)
            placement = draws.placement(rng, scale=0.3)
            if composite is None:
                composite = pin.JointModelComposite(sub, placement)
            else:
                composite.addJoint(sub, placement)
            nv += sub.nv
        model = pin.Model()
        model.addJoint(0, composite, pin.SE3.Identity(), "j")
        q = [random_q(model, rng, zyx_pitch_max=1.2) for _ in range(4)]
        if max(_smallest_sigma(model.joints[1], qi) for qi in q) >= 2 * COMPOSITE_MIN_SIGMA:
            return composite


def _smallest_sigma(joint: pin.JointModel, q: np.ndarray) -> float:
    """Smallest singular value of a joint's motion subspace at the model configuration q."""
    jdata = joint.createData()
    joint.calc(jdata, q)
    return float(np.linalg.svd(np.reshape(jdata.S, (6, -1)), compute_uv=False)[-1])


def joint_leaves(joint: pin.JointModel) -> list:
    """The non-composite joints of ``joint`` (itself, or a composite's, recursively), typed."""
    typed = joint.extract() if hasattr(joint, "extract") else joint
    if typed.shortname() != "JointModelComposite":
        return [typed]
    return [leaf for sub in typed.joints for leaf in joint_leaves(sub)]


# --------------------------------------------------------------------------- trees


def check_depth_first(parents: Sequence[int]) -> None:
    """Raise unless parent[i] is an ancestor-or-self of joint i-1 (or the universe)."""
    path: list[int] = [0]
    for i, p in enumerate(parents, start=1):
        if p not in path:
            raise ValueError(f"joint {i} with parent {p} breaks depth-first order {parents}")
        del path[path.index(p) + 1 :]
        path.append(i)


def random_tree(
    parents: Sequence[int],
    kinds: Sequence[str],
    constraints: Sequence[tuple[int, pin.ContactType]],
    seed: int,
    *,
    armature: bool = False,
    inertia_scales: Sequence[float] | None = None,
    draws: Draws = EDGE_CASES,
    name: str = "random_tree",
) -> Tree:
    """A Pinocchio model and its constraints, every number drawn from ``seed``.

    ``parents[i]`` is the parent of joint ``i + 1`` (0 = universe, depth-first), ``kinds[i]``
    its kind (:meth:`Draws.joint`), its body :meth:`Draws.inertia` times
    ``inertia_scales[i]``; ``armature``: half the dofs get a rotor inertia in [0, 0.5];
    ``constraints``: ``(joint, contact type)`` pairs, LOCAL at random placements.  Position
    limits ±π on every coordinate, so ``pin.randomConfiguration`` works too.
    """
    check_depth_first(parents)
    rng = np.random.default_rng(seed)
    scales = np.ones(len(kinds)) if inertia_scales is None else inertia_scales
    model = pin.Model()
    model.name = name
    for i, (parent, kind) in enumerate(zip(parents, kinds, strict=True), 1):
        joint = draws.joint(kind, rng)
        jid = model.addJoint(parent, joint, draws.placement(rng), f"{kind}_{i}")
        body = draws.inertia(rng, float(scales[i - 1]))
        model.appendBodyToJoint(jid, body, pin.SE3.Identity())
    model.lowerPositionLimit = -np.pi * np.ones(model.nq)
    model.upperPositionLimit = np.pi * np.ones(model.nq)
    if armature:
        mask = rng.random(model.nv) < 0.5
        model.armature = np.where(mask, rng.uniform(0.0, 0.5, model.nv), 0.0)
    cms = []
    for joint_id, ctype in constraints:
        cm = pin.RigidConstraintModel(ctype, model, joint_id, draws.placement(rng), pin.LOCAL)
        cm.name = f"{'weld' if ctype == C6 else 'point'}@{joint_id}"
        cms.append(cm)
    return model, cms


def random_chain(
    kinds: Sequence[str],
    seed: int = 0,
    *,
    inertia_scales: Sequence[float] | None = None,
    draws: Draws = EDGE_CASES,
) -> Tree:
    """A serial chain of joints ``kinds`` (:func:`random_tree`) with a 6D weld on the tip, a 3D
    point contact on the middle link and a 6D weld on the first link."""
    n = len(kinds)
    sites = [(n, C6), (max(1, (n + 1) // 2), C3), (1, C6)]
    return random_tree(
        range(n), kinds, sites, seed,
        inertia_scales=inertia_scales, draws=draws, name=f"chain_{n}",
    )  # fmt: skip


# --------------------------------------------------------------------------- configurations


def _tame_middle_angles(v: np.ndarray, joints, scale: float, pitch_max: float) -> None:
    """Scale the middle angle of every gimbal-lock-prone joint (composites' included) in
    ``joints`` from ±scale into ±pitch_max."""
    if scale <= pitch_max:
        return
    for joint in joints:
        for leaf in joint_leaves(joint):
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
    quaternions (FreeFlyer, Spherical) are unit and the (cos, sin) pairs of RUB and Planar
    joints lie on the unit circle whatever the model's position limits are.

    SphericalZYX and Ellipsoid joints (also inside composites) are singular (gimbal lock: the
    mass matrix loses rank) when their middle angle is ±π/2; unless ``zyx_pitch_max`` is None
    that angle is kept within ±zyx_pitch_max so the mass matrix stays well conditioned.  For
    the same reason (and also unless it is None) a composite's velocity part is drawn again,
    up to 50 times, while the smallest singular value of its S is below
    :data:`COMPOSITE_MIN_SIGMA`.
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
            if _smallest_sigma(joint, q) >= COMPOSITE_MIN_SIGMA:
                break
            v[joint.idx_v : joint.idx_v + joint.nv] = rng.uniform(-scale, scale, joint.nv)
            _tame_middle_angles(v, [joint], scale, zyx_pitch_max)
            q = pin.integrate(model, pin.neutral(model), v)
    return q
