"""Joint kinematics written once against the backend seam: ``R(q_i)``, ``p(q_i)``, ``S(q_i)``.

Pinocchio's ``forwardKinematics`` gives the numeric path its joint transforms, but neither a
CasADi expression graph nor a stack of configurations can go through it.  This module is the
one implementation of each supported joint type's motion, in backend operations only
(``B.cos``, ``B.sin``, ``B.vstack``/``hstack``, ``B.hat``, ``B.column``, slice assignment into
``B.zeros``, matrix operators): :func:`pvosimr.symbolic.symbolic_kinematics` runs it on CasADi
SX, :func:`pvosimr.kinematics.batched_kinematics` on stacks of numpy matrices.

A scalar is a 1×1 matrix of the backend (``q[k]`` of the configuration column).  The
expressions follow Pinocchio's joint models (Eigen's quaternion-to-matrix formula, the
(cos, sin) pairs of unbounded and planar joints), so they agree with it to rounding.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from .backend import Backend, Matrix
from .spatial import Chain, Transform
from .topology import Topology

__all__ = ["joint_kinematics", "joint_motion", "joint_transform_up", "rotation_cs"]

_X, _Y, _Z = np.array([1.0, 0, 0]), np.array([0.0, 1, 0]), np.array([0.0, 0, 1])


def rotation_cs(B: Backend, axis: np.ndarray, c: Any, s: Any) -> Matrix:
    """Rotation about a unit ``axis`` with cosine ``c`` and sine ``s`` (Rodrigues)."""
    components = [abs(float(a)) for a in axis]
    k = components.index(max(components))
    if abs(components[k] - 1.0) <= 1e-8 + 1e-5:  # aligned (np.isclose): the exact sparse matrix
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


def joint_motion(
    B: Backend, kind: str, qi: Matrix, S: np.ndarray
) -> tuple[Matrix | None, Matrix | None, Matrix | np.ndarray]:
    """``(R, p, S)`` of the joint transform ``M_J(q_i)`` and its motion subspace.

    ``R`` is ``None`` for a joint that does not rotate, ``p`` ``None`` for one that does not
    translate.  ``S`` is Pinocchio's (constant) subspace, which also tells the axis of
    unaligned joints, returned as is (a numpy array); only SphericalZYX has a
    configuration-dependent one, returned as a backend matrix.
    """
    short = kind.removeprefix("JointModel")
    if short in ("RX", "RY", "RZ", "RevoluteUnaligned"):
        return rotation_cs(B, S[3:, 0], B.cos(qi[0]), B.sin(qi[0])), None, S
    if short in ("RUBX", "RUBY", "RUBZ", "RevoluteUnboundedUnaligned"):
        return rotation_cs(B, S[3:, 0], qi[0], qi[1]), None, S
    if short in ("PX", "PY", "PZ", "PrismaticUnaligned"):
        return None, B.column(S[:3, 0]) * qi[0], S
    if short == "Translation":
        return None, qi[0:3], S
    if short == "Spherical":
        return _rotation_quaternion(B, qi[0], qi[1], qi[2], qi[3]), None, S
    if short == "FreeFlyer":
        return _rotation_quaternion(B, qi[3], qi[4], qi[5], qi[6]), qi[0:3], S
    if short == "Planar":
        R = rotation_cs(B, _Z, qi[2], qi[3])
        return R, B.vstack([qi[0], qi[1], 0]), S
    if short == "SphericalZYX":
        a, b, c = qi[0], qi[1], qi[2]
        angular = B.hstack(
            [
                B.vstack([-B.sin(b), B.cos(b) * B.sin(c), B.cos(b) * B.cos(c)]),
                B.vstack([0, B.cos(c), -B.sin(c)]),
                B.vstack([1, 0, 0]),
            ]
        )
        return _rotation_zyx(B, a, b, c), None, B.vstack([B.zeros(3, 3), angular])
    raise NotImplementedError(f"no joint kinematics for {kind}")


def joint_transform_up(
    B: Backend, placement: pin.SE3, R_J: Matrix | None, p_J: Matrix | None
) -> Chain:
    """``X_up = X_J X_tree``: ``actionInverse(M_J)`` after ``actionInverse(placement)``.

    Kept as two factors (Featherstone's local-frame form): the tree factor is constant, so on a
    symbolic backend its zeros and ones fold away, and the joint factor is the joint's own
    rotation or translation.  Identity rotations and zero translations are left out.
    """
    E, p = placement.rotation.T, placement.translation[:, None]
    tree = Transform(
        B,
        None if np.array_equal(E, np.eye(3)) else B.const(E),
        None if not p.any() else B.const(p),
    )
    return Chain((Transform(B, None if R_J is None else R_J.T, p_J), tree))


def _subspace_at(joint: pin.JointModel, q: np.ndarray) -> np.ndarray:
    """Pinocchio's ``S`` of one joint at ``q`` (its own data: a whole ``model.createData()``
    costs O(n²) time and memory, seconds and gigabytes on the Fig. 4 chains)."""
    jdata = joint.createData()
    joint.calc(jdata, q)
    return np.reshape(jdata.S, (6, -1))


def joint_kinematics(
    B: Backend, model: pin.Model, q: Matrix, topology: Topology
) -> tuple[list[Chain], list[Matrix]]:
    """``X_up`` (as :class:`~pvosimr.spatial.Chain`) and ``S`` of every link at ``q`` (nq × 1).

    Entry 0 (the world) is an empty chain and a 6×0 subspace.
    """
    q0 = pin.neutral(model)  # the subspaces are read there; only SphericalZYX's depends on q
    X: list[Chain] = [Chain(())]
    S: list[Matrix] = [B.zeros(6, 0)]
    for i in topology.links:
        joint = model.joints[i]
        qi = q[joint.idx_q : joint.idx_q + joint.nq]
        S_num = _subspace_at(joint, q0)
        R_J, p_J, S_i = joint_motion(B, joint.shortname(), qi, S_num)
        X.append(joint_transform_up(B, model.jointPlacements[i], R_J, p_J))
        S.append(B.const(S_i) if isinstance(S_i, np.ndarray) else S_i)
    return X, S
