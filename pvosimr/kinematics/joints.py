"""Joint kinematics written once against the backend seam: ``R(q_i)``, ``p(q_i)``, ``S(q_i)``.

Pinocchio's ``forwardKinematics`` gives the numeric path its joint transforms, but neither a
CasADi expression graph nor a stack of configurations can go through it.  This module is the
one implementation of each supported joint type's motion, in backend operations only
(``B.cos``, ``B.sin``, ``B.vstack``/``hstack``, ``B.hat``, ``B.column``, slice assignment into
``B.zeros``, matrix operators): :func:`pvosimr.symbolic.symbolic_kinematics` runs it on CasADi
SX, :func:`pvosimr.kinematics.stacked.batched_kinematics` on stacks of numpy matrices.

A scalar is a 1×1 matrix of the backend (``q[k]`` of the configuration column).  The
expressions follow Pinocchio's joint models (``M_J(q) = (R, p)`` maps joint-child coordinates
to joint-parent coordinates; ``S`` maps ``v_i`` to the joint velocity in the child frame,
linear part first), so they agree with ``jdata.M`` and ``jdata.S`` to rounding.  No axis is
ever rounded to a coordinate axis: the sparse rotation of an aligned joint is used only for
axes that are ``±e_k`` to the last few ulps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from ..backends import Backend, Matrix
from ..spatial import Chain, Transform

if TYPE_CHECKING:
    from ..mimic import MimicCoupling
    from ..topology import Topology

__all__ = [
    "aligned_index",
    "configuration_tangent",
    "joint_kinematics",
    "joint_motion",
    "joint_transform_up",
    "rotation_cs",
    "unit_parts",
]

_X, _Y, _Z = np.array([1.0, 0, 0]), np.array([0.0, 1, 0]), np.array([0.0, 0, 1])

#: An axis is ``±e_k`` when ``| |a_k| − 1 |`` and every other ``|a_j|`` are at most this: the
#: rounding of a normalized coordinate axis (a few ulps of 1), never a deliberate tilt.
ALIGNED_TOLERANCE = 1e-15

Motion = tuple[Matrix | None, Matrix | None, Matrix | np.ndarray]


def aligned_index(axis: np.ndarray) -> int | None:
    """``k`` if the unit ``axis`` is ``±e_k`` to rounding, else None."""
    a = [abs(float(x)) for x in np.ravel(axis)]  # plain floats: called per joint and call
    k = a.index(max(a))
    aligned = abs(a[k] - 1.0) <= ALIGNED_TOLERANCE
    return k if aligned and all(a[j] <= ALIGNED_TOLERANCE for j in range(3) if j != k) else None


def rotation_cs(B: Backend, axis: np.ndarray, c: Any, s: Any) -> Matrix:
    """Rotation about a unit ``axis`` with cosine ``c`` and sine ``s``.

    Rodrigues, ``R = c 1 + s a× + (1 − c) a aᵀ`` (Pinocchio's ``toRotationMatrix``); for an axis
    ``±e_k`` (:func:`aligned_index`) the same matrix with its structural zeros and ones.
    """
    k = aligned_index(axis)
    if k is not None:
        R = B.zeros(3, 3)
        i, j = (k + 1) % 3, (k + 2) % 3
        sign = 1.0 if axis[k] > 0 else -1.0
        R[k, k] = 1
        R[i, i], R[j, j], R[i, j], R[j, i] = c, c, -sign * s, sign * s
        return R
    a = B.column(axis)
    return c * B.eye(3) + s * B.hat(a) + (1 - c) * (a @ a.T)


def _rotation_quaternion(B: Backend, x: Any, y: Any, z: Any, w: Any) -> Matrix:
    """Eigen's ``Quaternion::toRotationMatrix`` for a unit quaternion (x, y, z, w)."""
    return B.vstack(
        [
            B.hstack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)]),
            B.hstack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)]),
            B.hstack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]),
        ]
    )


def _rotation_zyx(B: Backend, a: Any, b: Any, c: Any) -> Matrix:
    return (
        rotation_cs(B, _Z, B.cos(a), B.sin(a))
        @ rotation_cs(B, _Y, B.cos(b), B.sin(b))
        @ rotation_cs(B, _X, B.cos(c), B.sin(c))
    )


# --------------------------------------------------------------------------- joint types


def _concrete(joint: Any) -> Any:
    """The typed joint model (``JointModelRX``, ...) behind a generic ``pin.JointModel``."""
    return joint.extract() if hasattr(joint, "extract") else joint


_zeros = np.zeros(64)  # read-only configuration buffer for _constant_subspace, grown on demand


def _constant_subspace(joint: Any) -> np.ndarray:
    """Pinocchio's ``S`` of a joint whose subspace does not depend on ``q``.

    Read at ``q = 0`` (any ``q`` gives the same ``S``) from a shared zero vector, so that a
    long chain does not build a configuration per joint; a joint not yet in a model (indexes
    −1) is read from a copy with indexes (0, 0).
    """
    global _zeros
    if joint.idx_q < 0:
        joint = pin.JointModel(joint)
        joint.setIndexes(1, 0, 0)
    if _zeros.size < joint.idx_q + joint.nq:
        _zeros = np.zeros(2 * (joint.idx_q + joint.nq))
    jdata = joint.createData()
    joint.calc(jdata, _zeros)
    return np.reshape(jdata.S, (6, -1)).copy()


def _revolute(B: Backend, joint: Any, qi: Matrix) -> Motion:
    S = _constant_subspace(joint)
    return rotation_cs(B, S[3:, 0], B.cos(qi[0]), B.sin(qi[0])), None, S


def _revolute_unbounded(B: Backend, joint: Any, qi: Matrix) -> Motion:
    """(cos q, sin q) stored in ``q_i``."""
    S = _constant_subspace(joint)
    return rotation_cs(B, S[3:, 0], qi[0], qi[1]), None, S


def _prismatic(B: Backend, joint: Any, qi: Matrix) -> Motion:
    S = _constant_subspace(joint)
    return None, B.column(S[:3, 0]) * qi[0], S


def _helical(B: Backend, joint: Any, qi: Matrix) -> Motion:
    """Screw about axis ``a`` with pitch ``h``: ``R = rot(a, q)``, ``p = h q a``,
    ``S = (h a, a)``; a zero pitch leaves ``p`` out."""
    S = _constant_subspace(joint)
    R = rotation_cs(B, S[3:, 0], B.cos(qi[0]), B.sin(qi[0]))
    return R, (B.column(S[:3, 0]) * qi[0] if S[:3, 0].any() else None), S


def _translation(B: Backend, joint: Any, qi: Matrix) -> Motion:
    return None, qi[0:3], _constant_subspace(joint)


def _spherical(B: Backend, joint: Any, qi: Matrix) -> Motion:
    return _rotation_quaternion(B, qi[0], qi[1], qi[2], qi[3]), None, _constant_subspace(joint)


def _free_flyer(B: Backend, joint: Any, qi: Matrix) -> Motion:
    R = _rotation_quaternion(B, qi[3], qi[4], qi[5], qi[6])
    return R, qi[0:3], _constant_subspace(joint)


def _planar(B: Backend, joint: Any, qi: Matrix) -> Motion:
    """``q_i = (x, y, cos θ, sin θ)``: rotation about z, translation in the xy-plane."""
    R = rotation_cs(B, _Z, qi[2], qi[3])
    return R, B.vstack([qi[0], qi[1], 0]), _constant_subspace(joint)


def _spherical_zyx(B: Backend, joint: Any, qi: Matrix) -> Motion:
    """``R = R_z(a) R_y(b) R_x(c)``; ``S``'s angular columns ``(−sb, cb sc, cb cc)``,
    ``(0, cc, −sc)``, ``e_x``: singular where ``cos b = 0``."""
    a, b, c = qi[0], qi[1], qi[2]
    angular = B.hstack(
        [
            B.vstack([-B.sin(b), B.cos(b) * B.sin(c), B.cos(b) * B.cos(c)]),
            B.vstack([0, B.cos(c), -B.sin(c)]),
            B.vstack([1, 0, 0]),
        ]
    )
    return _rotation_zyx(B, a, b, c), None, B.vstack([B.zeros(3, 3), angular])


def _universal(B: Backend, joint: Any, qi: Matrix) -> Motion:
    """Two orthogonal axes ``a1``, ``a2``: ``R = rot(a1, q0) rot(a2, q1)``;
    ``S`` angular ``[rot(a2, q1)ᵀ a1, a2]``, of rank 2 everywhere (``a1 ⊥ a2``)."""
    j = _concrete(joint)
    a1, a2 = np.asarray(j.axis1, dtype=float), np.asarray(j.axis2, dtype=float)
    R1 = rotation_cs(B, a1, B.cos(qi[0]), B.sin(qi[0]))
    R2 = rotation_cs(B, a2, B.cos(qi[1]), B.sin(qi[1]))
    angular = B.hstack([R2.T @ B.column(a1), B.column(a2)])
    return R1 @ R2, None, B.vstack([B.zeros(3, 2), angular])


def _ellipsoid(B: Backend, joint: Any, qi: Matrix) -> Motion:
    """A point on an ellipsoid of radii ``(r_x, r_y, r_z)``, the frame turning with its normal.

    ``R = R_x(q0) R_y(q1) R_z(q2)``, ``p = (r_x n_x, r_y n_y, r_z n_z)`` with the normal
    ``n = R e_z = (s1, −s0 c1, c0 c1)``; ``S = [Rᵀ ∂p/∂q ; ω]`` with the angular columns
    ``Rᵀ e_x``, ``R_z(q2)ᵀ e_y``, ``e_z``, so ``S`` loses rank where ``cos q1 = 0``.
    """
    j = _concrete(joint)
    rx, ry, rz = float(j.radius_x), float(j.radius_y), float(j.radius_z)
    c0, s0 = B.cos(qi[0]), B.sin(qi[0])
    c1, s1 = B.cos(qi[1]), B.sin(qi[1])
    c2, s2 = B.cos(qi[2]), B.sin(qi[2])
    R = B.vstack(
        [
            B.hstack([c1 * c2, -c1 * s2, s1]),
            B.hstack([c0 * s2 + c2 * s0 * s1, c0 * c2 - s0 * s1 * s2, -c1 * s0]),
            B.hstack([s0 * s2 - c0 * c2 * s1, c0 * s1 * s2 + c2 * s0, c0 * c1]),
        ]
    )
    angular = B.hstack(
        [B.vstack([c1 * c2, -c1 * s2, s1]), B.vstack([s2, c2, 0]), B.vstack([0, 0, 1])]
    )
    if rx == ry == rz == 0.0:
        return R, None, B.vstack([B.zeros(3, 3), angular])

    def scaled(r: float, x: Any) -> Any:
        return 0 if r == 0.0 else r * x

    p = B.vstack([scaled(rx, s1), scaled(ry, -s0 * c1), scaled(rz, c0 * c1)])
    dp = B.hstack(
        [
            B.vstack([0, scaled(ry, -c0 * c1), scaled(rz, -s0 * c1)]),
            B.vstack([scaled(rx, c1), scaled(ry, s0 * s1), scaled(rz, -c0 * s1)]),
        ]
    )
    linear = B.hstack([R.T @ dp, B.zeros(3, 1)])
    return R, p, B.vstack([linear, angular])


def _placement(B: Backend, M: pin.SE3) -> tuple[Matrix | None, Matrix | None]:
    """A constant SE3 as ``(R, p)``, ``None`` for an identity rotation or a zero translation."""
    R, p = M.rotation, M.translation[:, None]
    return (
        None if np.array_equal(R, np.eye(3)) else B.const(R),
        None if not p.any() else B.const(p),
    )


def _compose(B: Backend, a: tuple, b: tuple) -> tuple[Matrix | None, Matrix | None]:
    """``(R_a, p_a)(R_b, p_b) = (R_a R_b, R_a p_b + p_a)``, ``None`` meaning 1 or 0."""
    (Ra, pa), (Rb, pb) = a, b
    R = Rb if Ra is None else Ra if Rb is None else Ra @ Rb
    if pb is not None and Ra is not None:
        pb = Ra @ pb
    p = pb if pa is None else pa if pb is None else pa + pb
    return R, p


def _act_inv(B: Backend, M: tuple, S: Matrix | np.ndarray) -> Matrix | np.ndarray:
    """``M⁻¹ S``: motions from the frame ``M`` is expressed in to ``M``'s own frame."""
    R, p = M
    if R is None and p is None:
        return S
    if isinstance(S, np.ndarray):
        S = B.const(S)
    return Transform(B, None if R is None else R.T, p).motion(S)


def _hstack(B: Backend, blocks: list) -> Matrix | np.ndarray:
    if all(isinstance(b, np.ndarray) for b in blocks):
        return np.hstack(blocks)
    return B.hstack([B.const(b) if isinstance(b, np.ndarray) else b for b in blocks])


def _composite(B: Backend, joint: Any, qi: Matrix) -> Motion:
    """Sub-joints ``k = 0..n−1`` in series, sub-joint ``k`` placed by ``P_k`` in the previous one.

    ``M = P_0 M_0(q_0) P_1 M_1(q_1) ⋯ P_{n−1} M_{n−1}``; ``S``'s columns of sub-joint ``k``
    are its own ``S_k`` carried to the last sub-joint's frame, ``L_{k+1}⁻¹ S_k`` with
    ``L_{k+1} = P_{k+1} M_{k+1} ⋯ P_{n−1} M_{n−1}`` (Pinocchio's ``iMlast``).  Sub-joints take
    consecutive parts of ``q_i``; composites may nest.
    """
    j = _concrete(joint)
    subs, placements = list(j.joints), list(j.jointPlacements)
    starts = np.cumsum([0] + [s.nq for s in subs])
    last: tuple = (None, None)  # L_{k+1}, from the last sub-joint back
    columns: list = [None] * len(subs)
    for k in reversed(range(len(subs))):
        R_k, p_k, S_k = joint_motion(B, subs[k], qi[int(starts[k]) : int(starts[k + 1])])
        columns[k] = _act_inv(B, last, S_k)
        last = _compose(B, _compose(B, _placement(B, placements[k]), (R_k, p_k)), last)
    R, p = last
    return R, p, _hstack(B, columns)


#: The one-DoF families, by Pinocchio short name less ``JointModel``: about x, y, z, an axis.
_REVOLUTE = ("RX", "RY", "RZ", "RevoluteUnaligned")
_UNBOUNDED = ("RUBX", "RUBY", "RUBZ", "RevoluteUnboundedUnaligned")
_PRISMATIC = ("PX", "PY", "PZ", "PrismaticUnaligned")
_HELICAL = ("HX", "HY", "HZ", "HelicalUnaligned")

_MOTIONS = {
    **dict.fromkeys(_REVOLUTE, _revolute),
    **dict.fromkeys(_UNBOUNDED, _revolute_unbounded),
    **dict.fromkeys(_PRISMATIC, _prismatic),
    **dict.fromkeys(_HELICAL, _helical),
    "Translation": _translation,
    "Spherical": _spherical,
    "FreeFlyer": _free_flyer,
    "Planar": _planar,
    "SphericalZYX": _spherical_zyx,
    "Universal": _universal,
    "Ellipsoid": _ellipsoid,
    "Composite": _composite,
}


def joint_motion(B: Backend, joint: Any, qi: Matrix) -> Motion:
    """``(R, p, S)`` of the joint transform ``M_J(q_i)`` and its motion subspace.

    ``joint`` is a Pinocchio joint model (generic or typed), ``qi`` its part of ``q``
    (``nq_i × 1``).  ``R`` is ``None`` for a joint that does not rotate, ``p`` ``None`` for one
    that does not translate.  A constant ``S`` is returned as Pinocchio's own numbers (a numpy
    array, which also gives the axis of unaligned joints); one that depends on ``q``
    (SphericalZYX, Universal, Ellipsoid, most composites) as a backend matrix.
    """
    kind = joint.shortname()
    motion = _MOTIONS.get(kind.removeprefix("JointModel"))
    if motion is None:
        raise NotImplementedError(f"no joint kinematics for {kind}")
    return motion(B, joint, qi)


_UNIT_PARTS = {
    "FreeFlyer": ((3, 7),),
    "Spherical": ((0, 4),),
    "Planar": ((2, 4),),
    **dict.fromkeys(_UNBOUNDED, ((0, 2),)),
}


def unit_parts(joint: Any) -> tuple[tuple[int, int], ...]:
    """``(first, stop)`` in the joint's own ``q_i`` of every part that must have unit norm.

    Quaternions (FreeFlyer, Spherical) and unit complex numbers ``(cos, sin)`` (RUB*,
    RevoluteUnboundedUnaligned, Planar), also inside composites (recursively, offset by the
    sub-joint's place in ``q_i``); ``()`` for a joint on a vector space.
    """
    short = joint.shortname().removeprefix("JointModel")
    if short != "Composite":
        return _UNIT_PARTS.get(short, ())
    parts: list[tuple[int, int]] = []
    start = 0
    for sub in _concrete(joint).joints:
        parts += [(start + a, start + b) for a, b in unit_parts(sub)]
        start += sub.nq
    return tuple(parts)


def mimic_motion(B: Backend, coupling: MimicCoupling, q_primary: Matrix) -> Motion:
    """``(R, p, S)`` of a mimic joint at ``θ = s q_primary + o`` in the relaxed tree: its screw
    ``[v; w]`` (revolute, prismatic or helical) turned by ``θ |w|`` about ``w`` and moved by
    ``θ v``, as Pinocchio's 1-DoF joints are."""
    theta = coupling.scaling * q_primary[0] + coupling.offset
    v, w = coupling.screw[:3], coupling.screw[3:]
    R = None
    if np.any(w):
        norm = float(np.linalg.norm(w))
        R = rotation_cs(B, w / norm, B.cos(norm * theta), B.sin(norm * theta))
    p = B.column(v) * theta if np.any(v) else None
    return R, p, coupling.screw[:, None]


def joint_transform_up(
    B: Backend, placement: pin.SE3, R_J: Matrix | None, p_J: Matrix | None
) -> Chain:
    """``X_up = X_J X_tree``: ``actionInverse(M_J)`` after ``actionInverse(placement)``.

    Kept as two factors (Featherstone's local-frame form): the tree factor is constant, so on a
    symbolic backend its zeros and ones fold away, and the joint factor is the joint's own
    rotation or translation.  Identity rotations and zero translations are left out.
    """
    E, p = placement.rotation.T, placement.translation[:, None]
    p = None if not p.any() else B.const(p)
    E = None if np.array_equal(E, np.eye(3)) else B.const(E)
    tree = Transform(B, E, p, None if p is None else B.hat(p))  # p× once: p is constant
    return Chain((Transform(B, None if R_J is None else R_J.T, p_J), tree))


def joint_kinematics(
    B: Backend, model: pin.Model, q: Matrix, topology: Topology
) -> tuple[list[Chain], list[Matrix]]:
    """``X_up`` (as :class:`~pvosimr.spatial.Chain`) and ``S`` of every link at ``q`` (nq × 1).

    Entry 0 (the world) is an empty chain and a 6×0 subspace.
    """
    X: list[Chain] = [Chain(())]
    S: list[Matrix] = [B.zeros(6, 0)]
    mimics = {c.joint: c for c in topology.couplings}
    for i in topology.links:
        joint = model.joints[i]
        if i in mimics:  # its q is the primary's (same idx_q), scaled and offset
            R_J, p_J, S_i = mimic_motion(B, mimics[i], q[joint.idx_q : joint.idx_q + 1])
        else:
            R_J, p_J, S_i = joint_motion(B, joint, q[joint.idx_q : joint.idx_q + joint.nq])
        X.append(joint_transform_up(B, model.jointPlacements[i], R_J, p_J))
        S.append(B.const(S_i) if isinstance(S_i, np.ndarray) else S_i)
    return X, S


# --------------------------------------------------------------------------- tangent map


def _quaternion_tangent(T: Matrix, r: int, c: int, x: Any, y: Any, z: Any, w: Any) -> None:
    """``∂(Q ⊗ exp(ω))/∂ω`` at ``ω = 0`` into rows ``r..r+3``, columns ``c..c+2`` of ``T``:
    ``½ [w 1 + [x y z]× ; −(x y z)]`` for the unit quaternion ``Q = (x, y, z, w)``."""
    block = ((w, -z, y), (z, w, -x), (-y, x, w), (-x, -y, -z))
    for a, row in enumerate(block):
        for b, entry in enumerate(row):
            T[r + a, c + b] = 0.5 * entry


def _joint_tangent(B: Backend, T: Matrix, joint: Any, q: Matrix, r: int, c: int) -> None:
    """The block of one joint (configuration rows from ``r``, velocity columns from ``c``)."""
    short = joint.shortname().removeprefix("JointModel")
    if short == "Composite":  # sub-joints in series: a block diagonal
        for sub in _concrete(joint).joints:
            _joint_tangent(B, T, sub, q, r, c)
            r, c = r + sub.nq, c + sub.nv
    elif short == "FreeFlyer":  # SE(3) ∋ (p, Q): ṗ = R(Q) v, Q as a spherical joint's
        x, y, z, w = (q[r + k, 0] for k in range(3, 7))
        T[r : r + 3, c : c + 3] = _rotation_quaternion(B, x, y, z, w)
        _quaternion_tangent(T, r + 3, c + 3, x, y, z, w)
    elif short == "Spherical":
        _quaternion_tangent(T, r, c, *(q[r + k, 0] for k in range(4)))
    elif short == "Planar":  # SE(2) ∋ (x, y, cos θ, sin θ): (ẋ, ẏ) = R(θ) v, then as RUB
        cos, sin = q[r + 2, 0], q[r + 3, 0]
        T[r, c], T[r, c + 1], T[r + 1, c], T[r + 1, c + 1] = cos, -sin, sin, cos
        T[r + 2, c + 2], T[r + 3, c + 2] = -sin, cos
    elif _UNIT_PARTS.get(short) == ((0, 2),):  # (cos θ, sin θ) turned by ε: (−sin θ, cos θ)
        T[r, c], T[r + 1, c] = -q[r + 1, 0], q[r, 0]
    else:  # a vector space (revolute, prismatic, helical, universal, ZYX, translation, ...)
        for k in range(joint.nv):
            T[r + k, c + k] = 1.0


def configuration_tangent(B: Backend, model: pin.Model, q: Matrix) -> Matrix:
    """``T(q) = ∂(q ⊕ ε)/∂ε`` at ``ε = 0`` (nq × nv), ``q ⊕ ε`` being ``pin.integrate``.

    The chain rule of any function of the configuration along the model's velocity
    coordinates: ``d/dε f(q ⊕ ε e_k) = (∂f/∂q) T e_k``.  Identity blocks on vector spaces;
    ``(−sin θ, cos θ)`` on a unit complex number (RUB*); ``½ [w 1 + v× ; −vᵀ]`` on a unit
    quaternion ``(v, w)`` (Pinocchio integrates on the right, ``Q ⊗ exp(ω)``); SE(3) and
    SE(2) move their translation by ``R v``, ``v`` in the joint frame.  A mimic joint has no
    coordinates of its own, so no block.  ``q`` is an nq × 1 column of the backend.
    """
    if isinstance(q, np.ndarray):
        q = np.reshape(q, (-1, 1))
    T = B.zeros(model.nq, model.nv)
    for joint in model.joints[1:]:
        if joint.nq:  # a mimic joint reads its primary's coordinate
            _joint_tangent(B, T, joint, q, joint.idx_q, joint.idx_v)
    return T
