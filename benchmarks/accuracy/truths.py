"""The accuracy study's truths: Pinocchio's dense route in double, and the same formula in
extended precision.

``dense``: :func:`pvosimr.reference.truth.cholesky_delassus` on Pinocchio's ``M`` and
Jacobians, one ``pin.Data`` per model.  ``wide``: the same dense formula (composite-rigid-body
``M``, Jacobian, Cholesky) evaluated in extended precision — Python ``Decimal`` at 40 digits, or
``np.longdouble`` (64-bit mantissa) for large models — from pvosimr's joint models, taking every
double input (q, placements, inertias) as an exact number.  It tells up to which cond(M) the
double ``dense`` truth can be trusted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal, localcontext
from typing import Any

import numpy as np
import pinocchio as pin

from pvosimr.algorithms.joint_space import constraint_jacobian, mass_matrix
from pvosimr.backends import NumpyBackend
from pvosimr.kinematics.frames import Kinematics, model_constants
from pvosimr.kinematics.joints import joint_kinematics
from pvosimr.reference import truth
from pvosimr.topology import Topology


def dense_truth(
    model: pin.Model, data: pin.Data, q: np.ndarray, cms: Sequence
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(G, G_lu, M)``: :func:`pvosimr.reference.truth.cholesky_delassus` on the given ``data``
    (one per model: a Data is O(nv³) bytes), and ``G_lu = J · solve(M, Jᵀ)`` (LU)."""
    M = truth.mass_matrix(model, q, data)
    J = truth.constraint_jacobian(model, q, cms, data)
    G_lu = J @ np.linalg.solve(M, J.T)
    return truth.cholesky_delassus(M, J), 0.5 * (G_lu + G_lu.T), M


class _Dec(Decimal):
    """A Decimal that takes floats (exactly) in arithmetic and stays a ``_Dec``."""

    __slots__ = ()

    def __neg__(self) -> _Dec:
        return _Dec(Decimal.__neg__(self))


def _lifted(op: Callable[[Decimal, Any], Any]) -> Callable[[Decimal, Any], Any]:
    """The Decimal operator ``op`` taking floats (exactly) and returning a ``_Dec``."""

    def method(self: Decimal, other: Any) -> Any:
        if isinstance(other, float | np.floating):
            other = Decimal(float(other))
        result = op(Decimal(self), other)
        return NotImplemented if result is NotImplemented else _Dec(result)

    return method


for _op in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv"):
    setattr(_Dec, f"__{_op}__", _lifted(getattr(Decimal, f"__{_op}__")))


def _dec_sin_cos(x: Decimal) -> tuple[_Dec, _Dec]:
    """``(sin x, cos x)`` by their Taylor series, with guard digits (|x| ≲ 10 here)."""
    with localcontext() as ctx:
        ctx.prec += 12
        sin_cos, term, k = [Decimal(0), Decimal(0)], Decimal(1), 0
        while term != 0 and abs(term) >= Decimal(10) ** (-ctx.prec - 2):  # term = x^k / k!
            sin_cos[1 - k % 2] += term if k % 4 < 2 else -term
            k += 1
            term = term * x / k
    return _Dec(+sin_cos[0]), _Dec(+sin_cos[1])


class WideBackend(NumpyBackend):
    """The numpy backend in extended precision: ``"decimal"`` (40 digits, object arrays of
    Decimal) or ``"longdouble"`` (x87 80-bit).  Scalars of ``q`` are 0-d, so a configuration is
    passed as a flat vector; Cholesky and triangular solves are written out (numpy's linalg
    has neither type)."""

    def __init__(self, kind: str = "decimal", digits: int = 40) -> None:
        if kind not in ("decimal", "longdouble"):
            raise ValueError(f"unknown precision {kind!r} (decimal or longdouble)")
        self.name = f"wide-{kind}"
        self.kind, self.digits = kind, digits
        self.dtype = object if kind == "decimal" else np.longdouble

    def scalar(self, x: Any) -> Any:
        return _Dec(float(x)) if self.kind == "decimal" else np.longdouble(x)

    def const(self, a: Any) -> np.ndarray:
        a = np.asarray(a, dtype=float)
        if self.kind == "longdouble":
            return a.astype(np.longdouble)
        out = np.empty(a.shape, dtype=object)
        out.flat[:] = [_Dec(float(x)) for x in a.flat]
        return out

    def zeros(self, rows: int, cols: int) -> np.ndarray:
        return self.const(np.zeros((rows, cols)))

    def eye(self, n: int) -> np.ndarray:
        return self.const(np.eye(n))

    def column(self, a: Any) -> np.ndarray:
        return self.const(np.reshape(np.asarray(a, dtype=float), (-1, 1)))

    def sqrt(self, x: Any) -> Any:
        if self.kind == "longdouble":
            return np.sqrt(x)
        if x <= 0:
            raise np.linalg.LinAlgError("matrix is not positive definite (wide precision)")
        return _Dec(Decimal(x).sqrt())

    def cos(self, x: Any) -> Any:
        return np.cos(x) if self.kind == "longdouble" else _dec_sin_cos(x)[1]

    def sin(self, x: Any) -> Any:
        return np.sin(x) if self.kind == "longdouble" else _dec_sin_cos(x)[0]

    def hat(self, p: Any) -> np.ndarray:
        x, y, z = np.ravel(p)
        zero = self.scalar(0.0)
        return np.array([[zero, -z, y], [z, zero, -x], [-y, x, zero]], dtype=self.dtype)

    def cholesky(self, a: np.ndarray) -> np.ndarray:
        """Lower ``L`` with ``a = L Lᵀ``, by columns (LinAlgError unless positive definite)."""
        n = a.shape[0]
        L = self.zeros(n, n)
        for j in range(n):
            s = a[j:, j] - L[j:, :j] @ L[j, :j] if j else a[j:, j].copy()
            if self.kind == "longdouble" and not s[0] > 0:
                raise np.linalg.LinAlgError("matrix is not positive definite (wide precision)")
            d = self.sqrt(s[0])
            L[j, j] = d
            L[j + 1 :, j] = s[1:] / d
        return L

    def solve_lower(self, lower: np.ndarray, b: np.ndarray) -> np.ndarray:
        x = self.zeros(*b.shape)
        for i in range(lower.shape[0]):
            acc = b[i, :] - lower[i, :i] @ x[:i, :] if i else b[i, :]
            x[i, :] = acc / lower[i, i]
        return x


def wide_truth(
    model: pin.Model, q: np.ndarray, cms: Sequence, kind: str = "decimal"
) -> tuple[np.ndarray, np.ndarray]:
    """``(G, M)`` as float arrays, computed in extended precision (:class:`WideBackend`).

    ``M`` by the composite-rigid-body algorithm and ``J`` from pvosimr's joint models and
    :mod:`pvosimr.algorithms.joint_space`, then ``G = Zᵀ Z``, ``Z = L⁻¹ Jᵀ``, ``M = L Lᵀ``,
    all on the wide backend: the double inputs are taken as exact numbers.
    """
    B = WideBackend(kind)
    topo = Topology(model, cms)
    with localcontext() as ctx:
        ctx.prec = B.digits
        X, S = joint_kinematics(B, model, B.const(q), topo)
        H, armature, K = model_constants(model, topo, cms)
        kin = Kinematics(
            X=X,
            S=S,
            H=[B.const(h) for h in H],
            armature=[None if a is None else B.const(a) for a in armature],
            K={e: B.const(k) for e, k in K.items()},
        )
        M = mass_matrix(B, topo, kin)
        Z = B.solve_lower(B.cholesky(M), constraint_jacobian(B, topo, kin).T)
        G = Z.T @ Z
        return np.array(G, dtype=np.longdouble).astype(float), np.array(M, dtype=float)
