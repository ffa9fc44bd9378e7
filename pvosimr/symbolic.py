"""The same algorithm code on CasADi SX: symbolic kinematics, operation counts, a q ↦ G function.

The paper measures cost as the operation count of a CasADi SX function with the joint
positions (the free-flyer pose included) as symbolic inputs and the model's numeric constants
folded in.  :class:`CasadiBackend` implements the backend seam
(:mod:`pvosimr.backends.protocol`) on SX, and :func:`symbolic_kinematics` produces the same
:class:`~pvosimr.kinematics.frames.Kinematics` fields as Pinocchio's ``forwardKinematics`` does
numerically (the pin wheel has no CasADi bindings) by running the backend-generic joint models
of :mod:`pvosimr.kinematics.joints` on SX, so every algorithm body in :mod:`pvosimr.algorithms`
runs unchanged.  The constraint placements may be a second input
(:mod:`pvosimr.kinematics.placements`), and ``dG/dq`` along Pinocchio's ``integrate`` is the
same graph differentiated (:func:`delassus_function` with ``output="dG"``), its gradient
against a weight matrix ``W`` the same graph in reverse mode (``output="vjp"``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import pinocchio as pin

from .algorithms import sweeps_for
from .backends.casadi import CASADI, SX, CasadiBackend, ca, fold, function_cost
from .backends.protocol import FOLD_TOLERANCE
from .choice import canonical_algorithm, resolve_algorithm
from .constraints import as_constraint_list
from .kinematics.frames import Kinematics, backend_kinematics
from .kinematics.joints import configuration_tangent, joint_kinematics
from .kinematics.placements import (
    PLACEMENTS,
    placement_actions,
    placement_size,
    placement_vector,
    placements_are_inputs,
)
from .topology import Topology

__all__ = [
    "CASADI",
    "FOLD_TOLERANCE",
    "OUTPUTS",
    "PLACEMENTS",
    "CasadiBackend",
    "count_operations",
    "delassus_function",
    "fold",
    "function_cost",
    "placement_size",
    "placement_vector",
    "symbolic_kinematics",
]

OUTPUTS = ("G", "dG", "vjp")
"""What :func:`delassus_function` computes: G, dG/dq, or the gradient of ⟨W, G⟩ (the output's
name in the CasADi function)."""


def symbolic_kinematics(
    model: pin.Model, q: Any, topology: Topology, constraint_models: Iterable, p: Any = None
) -> Kinematics:
    """The :class:`~pvosimr.kinematics.frames.Kinematics` of ``model`` at a symbolic ``q`` (SX,
    nq × 1), constants folded (the module docstring says how).

    ``p`` (SX, :func:`placement_size` × 1) makes the constraint placements symbolic too
    (:mod:`pvosimr.kinematics.placements`); by default they are the constraint models' own numbers.
    """
    X, S = joint_kinematics(CASADI, model, q, topology)
    cms = as_constraint_list(constraint_models, model)
    actions = None if p is None else placement_actions(CASADI, topology, p)
    return backend_kinematics(CASADI, model, X, S, topology, cms, actions)


class _Delassus(NamedTuple):
    """G of one algorithm as an SX expression of its inputs (``q``, and ``p`` if placements
    are inputs), and the algorithm's name (``"auto"`` resolved)."""

    algorithm: str
    inputs: list
    names: list[str]
    G: Any


def _delassus(
    model: pin.Model,
    constraint_models: Iterable,
    algorithm: str,
    placements: str,
    B: CasadiBackend = CASADI,
) -> _Delassus:
    """G's expression, the one graph :func:`delassus_function` returns or differentiates."""
    given = placements_are_inputs(placements)
    algorithm = canonical_algorithm(algorithm)
    cms = as_constraint_list(constraint_models, model)
    topology = Topology(model, cms)
    q = SX.sym("q", model.nq)
    p = SX.sym("p", placement_size(model, cms)) if given else None
    kin = symbolic_kinematics(model, q, topology, cms, p)
    algorithm = (
        resolve_algorithm(algorithm, model, topology, cms, "casadi") if topology.m else algorithm
    )
    sweeps = sweeps_for(algorithm)
    G = ca.densify(sweeps(B, topology, kin)) if topology.m else SX(0, 0)
    if not ca.is_equal(G, G.T, 0):  # the compiled libraries' buffers rely on it
        raise RuntimeError(f"{algorithm}: G's lower triangle is not its upper's expressions")
    inputs, names = ([q], ["q"]) if p is None else ([q, p], ["q", "p"])
    return _Delassus(algorithm.replace("-", "_"), inputs, names, G)


def delassus_function(
    model: pin.Model,
    constraint_models: Iterable,
    algorithm: str = "pv-osimr",
    *,
    placements: str = "fixed",
    output: str = "G",
    outlined: bool = False,
) -> ca.Function:
    """The CasADi function ``q ↦ G`` (dense m × m) of one algorithm, model and constraint list
    (``"auto"``: the one :mod:`pvosimr.choice` picks, named in the function's name).

    ``placements="input"``: the function ``(q, p) ↦ G`` with the constraint placements as the
    second input, ``p = placement_vector(model, constraint_models, placements)``; its name ends
    in ``_placed``.

    ``output`` (one of :data:`OUTPUTS`, the CasADi function's output name) chooses what it
    computes: G (``"G"``), dG or the gradient of ``⟨W, G⟩``.

    ``output="dG"``: the function of the same inputs to ``dG`` ((m·m) × nv) instead:
    column ``k`` is ``vec(∂G/∂ε_k)`` (column-major), ``∂G/∂ε_k = d/dε G(q ⊕ ε e_k)`` at
    ``ε = 0`` with ``⊕`` Pinocchio's ``integrate``; as G is symmetric, the buffer is an
    (nv, m, m) C-contiguous array of the nv matrices.  It is forward-mode AD of the same SX
    graph, seeded by the tangent map of ``⊕``
    (:func:`pvosimr.kinematics.joints.configuration_tangent`): ``dG = (∂vec G/∂q) T(q)``, one
    pass per velocity coordinate, then common subexpressions merged (``casadi.cse``: the
    passes rebuild the same products); reverse mode would cost several times more.

    ``output="vjp"``: the function of the same inputs and a last one, ``W`` (m × m), to the
    gradient ``g`` (nv × 1) of ``⟨W, G⟩`` along ``⊕``: ``g_k = Σ_ij W_ij ∂G_ij/∂ε_k``, dG
    contracted with ``W`` (no symmetrisation: ``W`` is taken as given, symmetric or not).
    ``W`` is read row-major: the input's buffer is a C-contiguous (m, m) array, so the input
    as a CasADi matrix is ``Wᵀ`` (and ``⟨W, G⟩ = ⟨Wᵀ, Gᵀ⟩``).  It is
    one reverse-mode pass of the same SX graph (``casadi.jtimes`` transposed, seeded by ``W``),
    then ``T(q)ᵀ``: a few times G's operations whatever nv, where ``dG`` is about nv times.
    Its name has ``_vjp`` after ``delassus``.

    It checks nothing: evaluated at a ``q`` where M is singular (or the recursion loses its
    precision) it returns non-finite entries, not an error, and a ``q`` that is not normalized
    (or a ``p`` whose rotations are not) gives a G that is not the model's.
    ``outlined=True`` (G only): the same function with each link's fold and extension a call of
    a function shared by the links of its kind (:mod:`pvosimr.backends.outlined`), for
    generated code that grows by a call per link.
    :func:`pvosimr.codegen.build.compile` wraps the same function with those checks.
    """
    if output not in OUTPUTS:
        raise ValueError(f"output must be one of {', '.join(map(repr, OUTPUTS))}, not {output!r}")
    if outlined and output != "G":
        raise ValueError("outlined=True is for G itself; dG and its gradient are inline")
    B = CASADI
    if outlined:
        from .backends.outlined import OUTLINED as B
    d = _delassus(model, constraint_models, algorithm, placements, B)
    out, name, inputs, names = d.G, "delassus", d.inputs, d.names
    if output != "G":
        q = d.inputs[0]
        tangent = configuration_tangent(CASADI, model, q)
    if output == "dG":
        out, name = ca.cse(ca.densify(ca.jtimes(ca.vec(d.G), q, tangent))), "delassus_derivatives"
    elif output == "vjp":
        m = d.G.size1()
        Wt = SX.sym("W", m, m)  # the row-major buffer of W, i.e. Wᵀ as CasADi reads it
        pulled = ca.jtimes(ca.vec(d.G.T), q, ca.vec(Wt), True)  # (∂vec Gᵀ/∂q)ᵀ vec Wᵀ
        out, name = ca.cse(ca.densify(ca.mtimes(tangent.T, pulled))), "delassus_vjp"
        inputs, names = [*inputs, Wt], [*names, "W"]
    name += f"_{d.algorithm}" + ("_placed" if placements == "input" else "")
    return ca.Function(name, inputs, [out], names, [output])


def count_operations(model: pin.Model, constraint_models: Iterable, algorithm: str) -> int:
    """The paper's cost metric (:func:`function_cost`) of the function q ↦ G."""
    return function_cost(delassus_function(model, constraint_models, algorithm))
