"""dG/dq, the (nv, m, m) array whose slice k is ``d/dε G(pin.integrate(model, q, ε e_k))`` at
ε = 0: the generated derivatives (``f.derivatives``, and ``f.vjp`` against a fixed W) and central
differences (of Pinocchio's C++, and of the generated G called once per configuration or once
batched), each gated (:func:`.loop.gate`) against the central differences of Pinocchio.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pinocchio as pin

from .loop import Method, Timed, gate
from .names import ATLAS_6D, TOLERANCES

DERIVATIVE_CASES = (ATLAS_6D,)  # timed by default (their build is the slow part of a run)
DERIVATIVE_FLAGS = ("-O1",)
"""Compiler flags of the derivatives (``codegen.compile``'s default): their generated function
is many times G's, which ``-O3`` builds far slower."""
STEP = 1e-5  # h of the central differences: truncation ~h², rounding ~eps/h, both ≪ 1e-6
TOLERANCE = TOLERANCES["derivatives"]  # max|ΔdG| / max|dG| against Pinocchio's differences
TINY = float(np.finfo(float).tiny)  # the gate's floor: relative to max|dG| alone
REFERENCE = "dG:fd-pin-efpa"
VJP = "dG:vjp-codegen"

DERIVATIVE_LABELS = {
    "dG:codegen": "pvosimr codegen dG/dq (f.derivatives, 1 thread)",
    VJP: "pvosimr codegen gradient of ⟨W, G⟩ (f.vjp, reverse mode, 1 thread)",
    REFERENCE: "central differences of Pinocchio C++ EFPA (2·nv calls of computeDelassusMatrix)",
    "dG:fd-codegen": "central differences of pvosimr codegen G (2·nv single calls)",
    "dG:fd-codegen-batch": "central differences of pvosimr codegen G (one batched call of "
    "2·nv rows, 1 thread)",
}
"""The derivative methods and their names in the report."""


def perturbed(model: pin.Model, q: np.ndarray, h: float = STEP) -> np.ndarray:
    """The 2·nv configurations ``q ⊕ h e_k`` (rows 0..nv-1) and ``q ⊕ -h e_k`` (the rest)."""
    steps = np.concatenate([np.eye(model.nv), -np.eye(model.nv)]) * h
    return np.stack([pin.integrate(model, q, v) for v in steps])


def weights(m: int) -> np.ndarray:
    """The W of ``dG:vjp-codegen``: a fixed (m, m) matrix of standard normal numbers."""
    return np.random.default_rng(0).standard_normal((m, m))


def central_differences(Gs: np.ndarray, h: float = STEP) -> np.ndarray:
    """(nv, m, m) from the 2·nv values of G at :func:`perturbed`'s configurations."""
    nv = len(Gs) // 2
    return (Gs[:nv] - Gs[nv:]) / (2 * h)


def _fd(model: pin.Model, G: Callable) -> Callable[[np.ndarray], np.ndarray]:
    """Central differences of G called once per perturbed configuration."""
    return lambda q: central_differences(np.stack([G(x) for x in perturbed(model, q)]))


def candidates(
    model: pin.Model, pinocchio_g: Callable, compiled_g, compiled_dg
) -> dict[str, Callable]:
    """The derivative methods that can run: the central differences of Pinocchio's
    ``pinocchio_g`` (G in its data: copied per call) always, the others where their generated
    code was built."""
    out = {REFERENCE: _fd(model, lambda q: pinocchio_g(q).copy())}
    if compiled_dg is not None:
        out["dG:codegen"] = lambda q: compiled_dg.derivatives(q, threads=1)
        W = weights(compiled_dg.m)
        out[VJP] = lambda q: compiled_dg.vjp(q, W, threads=1)
    if compiled_g is not None:
        out["dG:fd-codegen"] = _fd(model, compiled_g)
        out["dG:fd-codegen-batch"] = lambda q: central_differences(
            compiled_g(perturbed(model, q), threads=1)
        )
    return out


def checked(fns: dict[str, Callable], qs: list[np.ndarray], case: Timed) -> dict[str, Method]:
    """The methods agreeing with the central differences of Pinocchio at ``qs[0]`` (the
    gradient: with their contraction with :func:`weights`); their errors in
    ``case.derivatives["errors"]``, the others' reasons in ``case.skipped``."""
    fd = fns[REFERENCE](qs[0])
    contracted = np.einsum("kij,ij->k", fd, weights(fd.shape[-1]))
    errors = case.derivatives.setdefault("errors", {})
    into = Timed(case.name, case.nv, case.m, skipped=case.skipped, errors=errors)
    kept = {}
    for name, fn in fns.items():
        truth = contracted if name == VJP else fd
        kept |= gate({name: (fn, qs, 1)}, lambda q, t=truth: t, into, TOLERANCE, TINY)
    return kept


def derivative_methods(
    model: pin.Model, cms: list, qs: list[np.ndarray], case, *, pinocchio_g, compiled_g, options
) -> dict[str, Method]:
    """The derivative methods of this case, checked at ``qs[0]``; ``pinocchio_g`` is Pinocchio's
    ``computeDelassusMatrix`` as the case times it, ``compiled_g`` the generated G (None where it
    could not be built), built with ``options.derivative_flags``."""
    case.derivatives = {"step": STEP, "tolerance": TOLERANCE, "reference": REFERENCE}
    compiled_dg, why = None, case.skipped.get("codegen:pv-osimr", "no generated code")
    if compiled_g is not None:
        from pvosimr import codegen

        flags = {"flags": compiled_g.flags, "derivative_flags": options.derivative_flags}
        try:
            compiled_dg = codegen.compile(
                model, cms, derivatives=True, vjp=True, cache_dir=options.cache_dir, **flags
            )
        except (ImportError, OSError, RuntimeError, TypeError) as exc:
            why = f"{type(exc).__name__}: {exc}"
        else:
            from .methods import build_facts

            for key, b in (("build", compiled_dg.derivatives_library),
                           ("vjp_build", compiled_dg.vjp_library)):  # fmt: skip
                case.derivatives[key] = build_facts(b, b.info)
    if compiled_dg is None:
        case.skipped |= dict.fromkeys(("dG:codegen", VJP), why)
    return checked(candidates(model, pinocchio_g, compiled_g, compiled_dg), qs, case)
