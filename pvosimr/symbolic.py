"""The same algorithm code on CasADi SX: symbolic kinematics, operation counts, a q ↦ G function.

The paper measures cost as the operation count of a CasADi SX function with the joint
positions (the free-flyer pose included) as symbolic inputs and the model's numeric constants
folded in.  :class:`CasadiBackend` implements the backend seam of :mod:`pvosimr.backend`, and
:func:`symbolic_kinematics` produces the same :class:`~pvosimr.kinematics.Kinematics` fields as
Pinocchio's ``forwardKinematics`` does numerically (the pin wheel has no CasADi bindings) by
running the backend-generic joint models of :mod:`pvosimr.joint_models` on SX, so every
algorithm body in :mod:`pvosimr.algorithms` runs unchanged.  The constraint placements may be
a second input (:mod:`pvosimr.symbolic_inputs`), and ``dG/dq`` along Pinocchio's ``integrate``
is the same graph differentiated (:func:`delassus_derivatives_function`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np
import pinocchio as pin

from .algorithms import sweeps_for
from .auto import resolve_algorithm
from .constraints import as_constraint_list
from .joint_models import configuration_tangent, joint_kinematics
from .kinematics import Kinematics, frame_transforms, model_constants
from .symbolic_inputs import placement_actions, placement_size, placement_vector
from .topology import Topology

try:
    import casadi as ca
except ModuleNotFoundError as exc:  # pragma: no cover - exercised only without the extra
    raise ModuleNotFoundError(
        "operation counts and code generation need CasADi: pip install 'pvosimr[symbolic]'"
    ) from exc

__all__ = [
    "CASADI",
    "FOLD_TOLERANCE",
    "PLACEMENTS",
    "CasadiBackend",
    "count_operations",
    "delassus_derivatives_function",
    "delassus_function",
    "fold",
    "function_cost",
    "placement_size",
    "placement_vector",
    "symbolic_kinematics",
]

SX = ca.SX


#: Constant entries within this fraction of their matrix's largest entry are exact zeros.
#: Model files round: MJCF quaternions leave ~1e-17 in rotation matrices and inertias, a URDF
#: angle of π written as 3.14159265359 gives sin = 2.1e-13.  Kept, each such entry costs
#: arithmetic in every sweep (halving the Shadow hand's counts when folded); folded, the
#: function moves by at most about this fraction, far inside the 1e-10 agreement with numpy.
FOLD_TOLERANCE = 1e-12


def fold(a: np.ndarray) -> ca.DM:
    """A numeric constant as a sparse DM, with rounding residue (``FOLD_TOLERANCE``) zeroed."""
    a = np.array(np.atleast_2d(a), dtype=float)
    if a.size:
        a[np.abs(a) <= FOLD_TOLERANCE * np.abs(a).max()] = 0.0
    return ca.sparsify(ca.DM(a))


class CasadiBackend:
    """The backend seam on CasADi SX; numeric constants become sparse DM (zeros fold away)."""

    name = "casadi"

    def const(self, a: np.ndarray) -> Any:
        return fold(a)

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

    def cos(self, x: Any) -> Any:
        return ca.cos(x)

    def sin(self, x: Any) -> Any:
        return ca.sin(x)

    def column(self, a: np.ndarray) -> Any:
        return fold(np.reshape(a, (-1, 1)))

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

    def operations(self, a: Any) -> int:
        """The :func:`function_cost` of a function of ``a``'s symbols returning ``a`` (how an
        algorithm compares ways of computing the same matrix, e.g. PV-OSIMh's plans)."""
        x = ca.symvar(a)
        return function_cost(ca.Function("g", [ca.vertcat(*x)], [ca.densify(a)]))


CASADI = CasadiBackend()


def _hat(p: Any) -> Any:
    return ca.vertcat(
        ca.horzcat(0, -p[2], p[1]), ca.horzcat(p[2], 0, -p[0]), ca.horzcat(-p[1], p[0], 0)
    )


def symbolic_kinematics(
    model: pin.Model,
    q: Any,
    topology: Topology,
    constraint_models: Iterable,
    p: Any = None,
) -> Kinematics:
    """The :class:`Kinematics` of ``model`` at a symbolic ``q`` (SX, nq × 1), constants folded.

    ``p`` (SX, :func:`placement_size` × 1) makes the constraint placements symbolic too
    (:mod:`pvosimr.symbolic_inputs`); by default they are the constraint models' own numbers.
    """
    X, S = joint_kinematics(CASADI, model, q, topology)
    cms = as_constraint_list(constraint_models)
    actions = None if p is None else placement_actions(CASADI, topology, p)
    H, armature, K = model_constants(model, topology, cms, actions)
    return Kinematics(
        X=X,
        S=S,
        H=[CASADI.const(h) for h in H],
        armature=[None if a is None else CASADI.const(a) for a in armature],
        K={e: k if isinstance(k, SX) else CASADI.const(k) for e, k in K.items()},
        world=frame_transforms(CASADI, X, topology, cms, actions),
    )


#: What ``placements=`` may be: the constraint models' own numbers, or an input ``p``.
PLACEMENTS = ("fixed", "input")


class _Delassus(NamedTuple):
    """G of one algorithm as an SX expression of its inputs (``q``, and ``p`` if placements
    are inputs), and the algorithm's name (``"auto"`` resolved)."""

    algorithm: str
    inputs: list
    names: list[str]
    G: Any


def _delassus(
    model: pin.Model, constraint_models: Iterable, algorithm: str, placements: str
) -> _Delassus:
    """G's expression, the one graph both :func:`delassus_function` and its derivatives use."""
    if placements not in PLACEMENTS:
        raise ValueError(f"placements must be one of {PLACEMENTS}, not {placements!r}")
    cms = as_constraint_list(constraint_models)
    topology = Topology(model, cms)
    q = SX.sym("q", model.nq)
    p = SX.sym("p", placement_size(model, cms)) if placements == "input" else None
    kin = symbolic_kinematics(model, q, topology, cms, p)
    algorithm = resolve_algorithm(algorithm, model, topology, cms) if topology.m else algorithm
    sweeps = sweeps_for(algorithm)
    G = ca.densify(sweeps(CASADI, topology, kin)) if topology.m else SX(0, 0)
    inputs, names = ([q], ["q"]) if p is None else ([q, p], ["q", "p"])
    return _Delassus(algorithm.replace("-", "_"), inputs, names, G)


def delassus_function(
    model: pin.Model,
    constraint_models: Iterable,
    algorithm: str = "pv-osimr",
    *,
    placements: str = "fixed",
) -> ca.Function:
    """The CasADi function ``q ↦ G`` (dense m × m) of one algorithm, model and constraint list
    (``"auto"``: the one :mod:`pvosimr.auto` picks, named in the function's name).

    ``placements="input"``: the function ``(q, p) ↦ G`` with the constraint placements as the
    second input, ``p = placement_vector(model, constraint_models, placements)``; its name ends
    in ``_placed``.

    It checks nothing: evaluated at a ``q`` where M is singular (or the recursion loses its
    precision) it returns non-finite entries, not an error, and a ``q`` that is not normalized
    (or a ``p`` whose rotations are not) gives a G that is not the model's.
    :func:`pvosimr.codegen.compile` wraps the same function with those checks.
    """
    d = _delassus(model, constraint_models, algorithm, placements)
    name = f"delassus_{d.algorithm}" + ("_placed" if placements == "input" else "")
    return ca.Function(name, d.inputs, [d.G], d.names, ["G"])


def delassus_derivatives_function(
    model: pin.Model,
    constraint_models: Iterable,
    algorithm: str = "pv-osimr",
    *,
    placements: str = "fixed",
) -> ca.Function:
    """The CasADi function of :func:`delassus_function`'s inputs to ``dG`` ((m·m) × nv):
    column ``k`` is ``vec(∂G/∂ε_k)`` (column-major), ``∂G/∂ε_k = d/dε G(q ⊕ ε e_k)`` at
    ``ε = 0`` with ``⊕`` Pinocchio's ``integrate``; as G is symmetric, the buffer is an
    (nv, m, m) C-contiguous array of the nv matrices.

    Forward-mode AD of the same SX graph, seeded by the tangent map of ``⊕``
    (:func:`pvosimr.joint_models.configuration_tangent`): ``dG = (∂vec G/∂q) T(q)``, one
    pass per velocity coordinate, then common subexpressions merged (``casadi.cse``: the
    passes rebuild the same products).  On Atlas with its feet welded that is 120k
    instructions (15 G's worth), with 4 points per sole 185k; reverse mode costs 5x more.
    """
    d = _delassus(model, constraint_models, algorithm, placements)
    q = d.inputs[0]
    dG = ca.cse(ca.densify(ca.jtimes(ca.vec(d.G), q, configuration_tangent(CASADI, model, q))))
    name = f"delassus_derivatives_{d.algorithm}" + ("_placed" if placements == "input" else "")
    return ca.Function(name, d.inputs, [dG], d.names, ["dG"])


def function_cost(f: ca.Function) -> int:
    """The paper's cost metric of a CasADi function: ``n_instructions - nnz_in - nnz_out``."""
    return int(f.n_instructions() - f.nnz_in() - f.nnz_out())


def count_operations(model: pin.Model, constraint_models: Iterable, algorithm: str) -> int:
    """The paper's cost metric (:func:`function_cost`) of the function q ↦ G."""
    return function_cost(delassus_function(model, constraint_models, algorithm))
