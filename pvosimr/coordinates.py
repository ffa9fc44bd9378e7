"""q's own coordinates and the tangent coordinates of ``pin.integrate``, for gradients; the
one unit-part rule of every route.

Pinocchio's ``q`` holds unit quaternions (FreeFlyer, Spherical) and unit complex pairs
(``(cos θ, sin θ)``: RUB*, RevoluteUnboundedUnaligned, Planar).  The generated gradient
(:meth:`pvosimr.codegen.call.CompiledDelassus.vjp`) is *tangent*: entry ``k`` is
``d/dε ⟨W, G(pin.integrate(model, q, ε e_k))⟩`` at ``ε = 0`` (nv numbers).  A JAX or PyTorch
user differentiates in q's own coordinates (nq numbers), where a gradient step leaves the unit
sphere.  So the front ends (:mod:`pvosimr.jax`, :mod:`pvosimr.torch`) define G off the sphere
as ``G(N(q))``, ``N`` dividing each unit part by its norm, and its gradient in q's coordinates
is then the unique vector ``g_q`` with

- no radial part: ``g_q`` restricted to a unit part ``u`` is orthogonal to ``u``, and
- the chain rule along ``pin.integrate``: ``T(q̂)ᵀ g_q(q̂) = g`` with ``T`` the tangent map
  (:func:`pvosimr.kinematics.joints.configuration_tangent`), ``q̂ = N(q)``;

that is ``g_q(q̂) = T (Tᵀ T)⁻¹ g`` at ``q̂`` and, off the sphere, each unit part's rows divided
by that part's norm (the derivative of ``u/|u|`` is ``(1 − n nᵀ)/|u|``).

:func:`tangent_to_coordinates` and :func:`coordinates_to_tangent` map one to the other in
numpy (the reference).  :class:`CoordinatePlan` says where each joint's coordinates are, packed
for the C of the map (the gradient library's, which the CUDA gradient kernel holds too).

**The unit-part rule** (every route: ``pvosimr.compute_delassus`` and the batch, the compiled
``f(q)`` and the standalone export through the C of :mod:`pvosimr.codegen.c_source`, the JAX
and PyTorch front ends, the XLA route): G at ``q`` is ``G(N(q))``.  A unit part whose squared
norm is within :data:`AS_GIVEN_TOLERANCE` of 1 is used as given (dividing it by a norm that
rounds to 1 would change it by rounding only, so a normalised ``q`` gives what it always gave);
any other is divided by its norm, its squared norm summed in index order (:func:`squared_norm`,
the same sum in the C).  So a ``q`` that ``pin.isNormalized`` accepts (norm within 1e-6) gives
the same G on every route, and that G is the function whose gradient the front ends return
(no radial part): as given, a quaternion of norm ``1 + ε`` would give a rotation off by ``2ε``
whose change along ``q`` the gradient does not contain.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pinocchio as pin

from .backends import NUMPY
from .kinematics.joints import configuration_tangent, unit_parts

__all__ = [
    "AS_GIVEN_TOLERANCE",
    "CoordinatePlan",
    "coordinate_plan",
    "coordinates_to_tangent",
    "normalized",
    "squared_norm",
    "tangent_to_coordinates",
    "unit_normalized",
    "unit_part_spans",
]

#: A unit part whose squared norm is within this of 1 is used as given, not divided by its
#: norm: a q normalised to rounding then gives exactly the library's ``f(q)``.  (Dividing by a
#: norm that rounds to 1 ± 1 ulp would move the matrix by rounding, nothing more.)
AS_GIVEN_TOLERANCE = 1e-14


def unit_part_spans(model: pin.Model) -> list[tuple[int, int]]:
    """``(start, length)`` in ``q`` of every unit-norm part (inside composites too)."""
    return [
        (joint.idx_q + first, stop - first)
        for joint in model.joints[1:]
        for first, stop in unit_parts(joint)
    ]


def squared_norm(u):
    """``u·u`` over the last axis, summed in index order (as the C of the rule sums it), on any
    array library."""
    squared = u[..., 0] * u[..., 0]
    for k in range(1, u.shape[-1]):
        squared = squared + u[..., k] * u[..., k]
    return squared


def unit_normalized(qs: np.ndarray, spans) -> np.ndarray:
    """``N(qs)`` for float64 rows ``qs`` (..., nq) and the unit parts ``spans`` (``(start,
    length)``, :func:`unit_part_spans`): ``qs`` itself where every part is used as given, else a
    copy (a zero or non-finite part gives NaN, which the checks refuse)."""
    out = qs
    for start, length in spans:
        u = qs[..., start : start + length]
        squared = squared_norm(u)
        divide = ~(np.abs(squared - 1.0) <= AS_GIVEN_TOLERANCE)
        if divide.any():
            if out is qs:
                out = qs.copy()
            with np.errstate(invalid="ignore", divide="ignore"):
                norm = np.sqrt(squared)[..., None]
                out[..., start : start + length] = np.where(divide[..., None], u / norm, u)
    return out


def normalized(model: pin.Model, q) -> tuple[np.ndarray, list[float]]:
    """``(N(q), norms)``: ``q`` (nq,) with every unit part divided by its norm (as given within
    :data:`AS_GIVEN_TOLERANCE`), and the norm of each part of :func:`unit_part_spans`."""
    q = np.array(q, dtype=np.float64)
    spans = unit_part_spans(model)
    norms = [float(np.sqrt(squared_norm(q[a : a + n]))) for a, n in spans]
    return unit_normalized(q, spans), norms


def tangent_to_coordinates(model: pin.Model, q, g) -> np.ndarray:
    """The gradient in q's coordinates (nq,) of ``q ↦ φ(G(N(q)))`` from its tangent gradient
    ``g`` (nv,) at ``N(q)`` (as :meth:`~pvosimr.codegen.call.CompiledDelassus.vjp` gives it):
    ``T (Tᵀ T)⁻¹ g`` at ``q̂ = N(q)``, each unit part's rows divided by its norm."""
    q_hat, norms = normalized(model, q)
    T = configuration_tangent(NUMPY, model, q_hat)
    g_q = np.linalg.pinv(T.T) @ np.asarray(g, dtype=np.float64)
    for (start, length), norm in zip(unit_part_spans(model), norms, strict=True):
        g_q[start : start + length] /= norm
    return g_q


def coordinates_to_tangent(model: pin.Model, q, g_q) -> np.ndarray:
    """The inverse of :func:`tangent_to_coordinates` on gradients with no radial part: the
    tangent gradient (nv,) at ``N(q)``, ``T(q̂)ᵀ`` applied to ``g_q`` with each unit part's rows
    multiplied by its norm."""
    q_hat, norms = normalized(model, q)
    g_q = np.array(g_q, dtype=np.float64)
    for (start, length), norm in zip(unit_part_spans(model), norms, strict=True):
        g_q[start : start + length] *= norm
    return configuration_tangent(NUMPY, model, q_hat).T @ g_q


@dataclass(frozen=True)
class CoordinatePlan:
    """Where each joint's coordinates are, :meth:`packed` for the generated map of the tangent
    gradient to q's coordinates (:data:`pvosimr.codegen.c_source.COORDINATES_ROW_C`, the C of
    :func:`tangent_to_coordinates`).

    Index arrays (rows of q, columns of v): ``identity`` (vector-space coordinates),
    ``quaternions`` (4 rows and 3 columns each), ``se3`` (3 translation rows, 3 columns and the
    4 rows of the joint's quaternion), ``complexes`` (2 rows, 1 column), ``se2`` (2 translation
    rows, 2 columns, the 2 rows of ``(cos θ, sin θ)``), ``unit`` (rows of the unit parts, by
    length).
    """

    nq: int
    nv: int
    identity: tuple[np.ndarray, np.ndarray]
    quaternions: tuple[np.ndarray, np.ndarray]
    se3: tuple[np.ndarray, np.ndarray, np.ndarray]
    complexes: tuple[np.ndarray, np.ndarray]
    se2: tuple[np.ndarray, np.ndarray, np.ndarray]
    unit: dict[int, np.ndarray] = field(default_factory=dict)

    def packed(self) -> np.ndarray:
        """The plan as one int64 array, for C (the map's, in the gradient library and the CUDA
        gradient kernel): ``nq, nv``,
        then six sections, each its count of records and the records, row-major:
        ``identity`` (row, column), ``quaternions`` (4 rows, 3 columns), ``se3`` (3 rows,
        3 columns, the quaternion's 4 rows), ``complexes`` (2 rows, 1 column), ``se2`` (2 rows,
        2 columns, the angle's 2 rows) and the unit parts (start, length)."""
        units = [(rows[0], length) for length, table in self.unit.items() for rows in table]
        sections = [
            np.column_stack(self.identity),
            np.column_stack(self.quaternions),
            np.column_stack(self.se3),
            np.column_stack(self.complexes),
            np.column_stack(self.se2),
            np.array(units, dtype=np.int64).reshape(-1, 2),
        ]
        out = [np.array([self.nq, self.nv])]
        for records in sections:
            out += [np.array([len(records)]), records.ravel()]
        return np.concatenate(out).astype(np.int64)


def coordinate_plan(model: pin.Model) -> CoordinatePlan:
    """The :class:`CoordinatePlan` of ``model``'s joints (composites walked; a mimic joint has
    no coordinates of its own)."""
    found: dict[str, list] = {k: [] for k in ("identity", "quaternions", "se3", "complexes", "se2")}
    for joint in model.joints[1:]:
        if joint.nq:
            _plan_joint(found, joint, joint.idx_q, joint.idx_v)
    unit: dict[int, list] = {}
    for start, length in unit_part_spans(model):
        unit.setdefault(length, []).append(range(start, start + length))

    def table(rows: list, width: int) -> np.ndarray:
        return np.array(rows, dtype=np.int64).reshape(-1, width)

    identity = table(found["identity"], 2)
    quaternions = found["quaternions"]
    se3, se2 = found["se3"], found["se2"]
    return CoordinatePlan(
        nq=model.nq,
        nv=model.nv,
        identity=(identity[:, 0], identity[:, 1]),
        quaternions=(table([r for r, _ in quaternions], 4), table([c for _, c in quaternions], 3)),
        se3=(table([r for r, _, _ in se3], 3), table([c for _, c, _ in se3], 3),
             table([k for _, _, k in se3], 4)),
        complexes=(table([r for r, _ in found["complexes"]], 2),
                   np.array([c for _, c in found["complexes"]], dtype=np.int64)),
        se2=(table([r for r, _, _ in se2], 2), table([c for _, c, _ in se2], 2),
             table([k for _, _, k in se2], 2)),
        unit={length: table(rows, length) for length, rows in unit.items()},
    )  # fmt: skip


def _plan_joint(found: dict[str, list], joint: Any, r: int, c: int) -> None:
    """One joint's entries (configuration rows from ``r``, velocity columns from ``c``), as
    :func:`pvosimr.kinematics.joints.configuration_tangent` lays out its block."""
    short = joint.shortname().removeprefix("JointModel")
    if short == "Composite":
        for sub in joint.extract().joints if hasattr(joint, "extract") else joint.joints:
            _plan_joint(found, sub, r, c)
            r, c = r + sub.nq, c + sub.nv
        return
    parts = unit_parts(joint)
    if short == "FreeFlyer":
        found["se3"].append((range(r, r + 3), range(c, c + 3), range(r + 3, r + 7)))
        found["quaternions"].append((range(r + 3, r + 7), range(c + 3, c + 6)))
    elif short == "Spherical":
        found["quaternions"].append((range(r, r + 4), range(c, c + 3)))
    elif short == "Planar":
        found["se2"].append((range(r, r + 2), range(c, c + 2), range(r + 2, r + 4)))
        found["complexes"].append((range(r + 2, r + 4), c + 2))
    elif parts == ((0, 2),):
        found["complexes"].append((range(r, r + 2), c))
    elif not parts and joint.nq == joint.nv:
        found["identity"] += [(r + k, c + k) for k in range(joint.nv)]
    else:
        raise NotImplementedError(f"no coordinate map for {joint.shortname()}")
