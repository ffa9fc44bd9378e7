"""The same algorithm code on CasADi SX: symbolic kinematics, operation counts, a q ↦ G function.

The paper measures cost as the operation count of a CasADi SX function with the joint
positions (the free-flyer pose included) as symbolic inputs and the model's numeric constants
folded in.  :class:`CasadiBackend` implements the backend seam of :mod:`pvosimr.backend`, and
:func:`symbolic_kinematics` produces the same :class:`~pvosimr.kinematics.Kinematics` fields as
Pinocchio's ``forwardKinematics`` does numerically (the pin wheel has no CasADi bindings), so
every algorithm body in :mod:`pvosimr.algorithms` runs unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pinocchio as pin

from .algorithms import sweeps_for
from .constraints import as_constraint_list
from .kinematics import Kinematics, model_constants
from .spatial import Chain, Transform
from .topology import Topology

try:
    import casadi as ca
except ModuleNotFoundError as exc:  # pragma: no cover - exercised only without the extra
    raise ModuleNotFoundError(
        "operation counts and code generation need CasADi: pip install 'pvosimr[symbolic]'"
    ) from exc

__all__ = [
    "CASADI",
    "CasadiBackend",
    "count_operations",
    "delassus_function",
    "symbolic_kinematics",
]

SX = ca.SX


class CasadiBackend:
    """The backend seam on CasADi SX; numeric constants become sparse DM (zeros fold away)."""

    name = "casadi"

    def const(self, a: np.ndarray) -> Any:
        return ca.sparsify(ca.DM(np.atleast_2d(a)))

    def zeros(self, rows: int, cols: int) -> Any:
        return SX(rows, cols)

    def eye(self, n: int) -> Any:
        return SX.eye(n)

    def sqrt(self, x: Any) -> Any:
        return ca.sqrt(x)

    def inv(self, a: Any) -> Any:
        if a.shape == (1, 1):
            return 1 / a
        lower = self.cholesky(a)
        lower_inv = self.solve_lower(lower, SX.eye(a.shape[0]))
        return self.symmetric_from_upper(lower_inv.T @ lower_inv)

    def cholesky(self, a: Any) -> Any:
        n = a.shape[0]
        L = SX(n, n)
        for j in range(n):
            d = a[j, j] - sum((L[j, k] * L[j, k] for k in range(j)), SX(0))
            L[j, j] = ca.sqrt(d)
            for i in range(j + 1, n):
                s = a[i, j] - sum((L[i, k] * L[j, k] for k in range(j)), SX(0))
                L[i, j] = s / L[j, j]
        return L

    def solve_lower(self, lower: Any, b: Any) -> Any:
        n = lower.shape[0]
        x = SX(n, b.shape[1])
        for i in range(n):
            acc = b[i, :]
            for k in range(i):
                acc = acc - lower[i, k] * x[k, :]
            x[i, :] = acc / lower[i, i]
        return x

    def vstack(self, blocks: list) -> Any:
        return ca.vertcat(*blocks)

    def hstack(self, blocks: list) -> Any:
        return ca.horzcat(*blocks)

    def hat(self, p: Any) -> Any:
        return _hat(p)

    def blockdiag(self, blocks: list) -> Any:
        return ca.diagcat(*blocks)

    def symmetric_from_upper(self, a: Any) -> Any:
        return ca.triu(a) + ca.triu(a, False).T

    def permute(self, a: Any, order: list[int]) -> Any:
        return a[order, order]

    def symmetric(self, a: Any) -> Any:
        return self.symmetric_from_upper(a)


CASADI = CasadiBackend()

_AXES = {"X": 0, "Y": 1, "Z": 2}


def _hat(p: Any) -> Any:
    return ca.vertcat(
        ca.horzcat(0, -p[2], p[1]), ca.horzcat(p[2], 0, -p[0]), ca.horzcat(-p[1], p[0], 0)
    )


def _rotation_cs(axis: np.ndarray, c: Any, s: Any) -> Any:
    """Rotation about a unit ``axis`` with cosine ``c`` and sine ``s`` (Rodrigues)."""
    k = int(np.argmax(np.abs(axis)))
    if np.isclose(abs(axis[k]), 1.0):  # an aligned axis: write the exact sparse matrix
        R = SX.eye(3)
        i, j = (k + 1) % 3, (k + 2) % 3
        sign = np.sign(axis[k])
        R[i, i], R[j, j], R[i, j], R[j, i] = c, c, -sign * s, sign * s
        return R
    a = ca.DM(axis)
    return c * SX.eye(3) + s * _hat(a) + (1 - c) * (a @ a.T)


def _rotation_quaternion(x: Any, y: Any, z: Any, w: Any) -> Any:
    """Eigen's ``Quaternion::toRotationMatrix`` for a unit quaternion (x, y, z, w)."""
    return ca.vertcat(
        ca.horzcat(1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
        ca.horzcat(2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
        ca.horzcat(2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)),
    )


def _rotation_zyx(a: Any, b: Any, c: Any) -> Any:
    return (
        _rotation_cs(np.array([0.0, 0, 1]), ca.cos(a), ca.sin(a))
        @ _rotation_cs(np.array([0.0, 1, 0]), ca.cos(b), ca.sin(b))
        @ _rotation_cs(np.array([1.0, 0, 0]), ca.cos(c), ca.sin(c))
    )


def _joint_motion(kind: str, qi: Any, S: np.ndarray) -> tuple[Any, Any, Any]:
    """``(R, p, S)`` of the joint transform ``M_J(q_i)`` and its motion subspace.

    ``S`` is Pinocchio's (constant) subspace, which also tells the axis of unaligned joints;
    only SphericalZYX has a configuration-dependent one.
    """
    zero = SX.zeros(3, 1)
    short = kind.removeprefix("JointModel")
    if short in ("RX", "RY", "RZ", "RevoluteUnaligned"):
        return _rotation_cs(S[3:, 0], ca.cos(qi[0]), ca.sin(qi[0])), zero, S
    if short in ("RUBX", "RUBY", "RUBZ", "RevoluteUnboundedUnaligned"):
        return _rotation_cs(S[3:, 0], qi[0], qi[1]), zero, S
    if short in ("PX", "PY", "PZ", "PrismaticUnaligned"):
        return SX.eye(3), ca.DM(S[:3, 0]) * qi[0], S
    if short == "Translation":
        return SX.eye(3), qi[0:3], S
    if short == "Spherical":
        return _rotation_quaternion(qi[0], qi[1], qi[2], qi[3]), zero, S
    if short == "FreeFlyer":
        return _rotation_quaternion(qi[3], qi[4], qi[5], qi[6]), qi[0:3], S
    if short == "Planar":
        R = _rotation_cs(np.array([0.0, 0, 1]), qi[2], qi[3])
        return R, ca.vertcat(qi[0], qi[1], 0), S
    if short == "SphericalZYX":
        a, b, c = qi[0], qi[1], qi[2]
        angular = ca.horzcat(
            ca.vertcat(-ca.sin(b), ca.cos(b) * ca.sin(c), ca.cos(b) * ca.cos(c)),
            ca.vertcat(0, ca.cos(c), -ca.sin(c)),
            ca.vertcat(1, 0, 0),
        )
        return _rotation_zyx(a, b, c), zero, ca.vertcat(SX(3, 3), angular)
    raise NotImplementedError(f"no symbolic kinematics for {kind}")


def _factor(E: Any, p: Any) -> Transform:
    """A block-wise transform; identity rotations and zero translations are left out."""
    E = None if _is_constant(E, np.eye(3)) else E
    p = None if _is_constant(p, np.zeros((3, 1))) else p
    return Transform(CASADI, E, p)


def _is_constant(a: Any, value: np.ndarray) -> bool:
    return bool(a.is_constant()) and np.array_equal(np.array(ca.DM(a)), value)


def _motion_transform_up(placement: pin.SE3, R_J: Any, p_J: Any) -> Chain:
    """``X_up = X_J X_tree``: ``actionInverse(M_J)`` after ``actionInverse(placement)``.

    Kept as two factors (Featherstone's local-frame form): the tree factor is constant, so its
    zeros and ones fold away, and the joint factor is the joint's own rotation or translation.
    """
    tree = _factor(CASADI.const(placement.rotation.T), CASADI.const(placement.translation[:, None]))
    return Chain((_factor(R_J.T, p_J), tree))


def symbolic_kinematics(
    model: pin.Model, q: Any, topology: Topology, constraint_models: Iterable
) -> Kinematics:
    """The :class:`Kinematics` of ``model`` at a symbolic ``q`` (SX, nq × 1), constants folded."""
    data = model.createData()
    pin.forwardKinematics(model, data, pin.neutral(model))
    X, S = [Chain(())], [SX(6, 0)]
    for i in topology.links:
        joint = model.joints[i]
        qi = q[joint.idx_q : joint.idx_q + joint.nq]
        S_num = np.reshape(data.joints[i].S, (6, -1))
        R_J, p_J, S_i = _joint_motion(joint.shortname(), qi, S_num)
        X.append(_motion_transform_up(model.jointPlacements[i], R_J, p_J))
        S.append(CASADI.const(S_i) if isinstance(S_i, np.ndarray) else S_i)
    H, armature, K = model_constants(model, topology, as_constraint_list(constraint_models))
    return Kinematics(
        X=X,
        S=S,
        H=[CASADI.const(h) for h in H],
        armature=[None if a is None else CASADI.const(a) for a in armature],
        K={e: CASADI.const(k) for e, k in K.items()},
    )


def delassus_function(
    model: pin.Model, constraint_models: Iterable, algorithm: str = "pv-osimr"
) -> ca.Function:
    """The CasADi function ``q ↦ G`` (dense m × m) of one algorithm, model and constraint list."""
    cms = as_constraint_list(constraint_models)
    topology = Topology(model, cms)
    q = SX.sym("q", model.nq)
    kin = symbolic_kinematics(model, q, topology, cms)
    sweeps = sweeps_for(algorithm)
    G = ca.densify(sweeps(CASADI, topology, kin)) if topology.m else SX(0, 0)
    return ca.Function(f"delassus_{algorithm.replace('-', '_')}", [q], [G], ["q"], ["G"])


def count_operations(model: pin.Model, constraint_models: Iterable, algorithm: str) -> int:
    """The paper's cost metric: ``f.n_instructions() - f.nnz_in() - f.nnz_out()`` of q ↦ G."""
    f = delassus_function(model, constraint_models, algorithm)
    return int(f.n_instructions() - f.nnz_in() - f.nnz_out())
