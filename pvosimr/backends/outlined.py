"""Each link's articulated-body fold and propagator extension as a call of one shared function
per kind of link.

The backward sweep folds each link into its parent, ``H^A_{π(i)} += X_iᵀ (H^A_i − U_i D_i⁻¹
U_iᵀ) X_i`` (:meth:`pvosimr.backends.protocol.JointStep.fold_into`), and PV-OSIMr carries its
extended inverse inertia and propagator over each link below a constraint (eqs. 16–17,
:meth:`~pvosimr.backends.protocol.JointStep.extend`): on a long chain these are most of the
operations of a generated function.  Unrolled, they make code that grows with the links and,
beyond a few hundred, no longer fits the core's caches: time per link rises with n.  Here each
step is a CasADi function of its inputs, traced once for each *kind* of link (the joint's
motion subspace; which entries of its transforms, armature and arguments are structurally
nonzero) and called where each link folds or extends (a CasADi ``never_inline`` call node).
The link's own numbers (its joint's rotation, its tree placement, its inertia) are the call's
arguments, so one copy serves every link of its kind: the generated code grows by a call per
link.  :mod:`pvosimr.codegen.chunks` writes the calls, with the arguments handed over by pointer
where they are an earlier call's results or constants.

:data:`OUTLINED` is a :class:`~pvosimr.backends.casadi.CasadiBackend` whose
:func:`~pvosimr.backends.protocol.joint_step` hook returns an :class:`OutlinedStep`: the
algorithms run on it unchanged.  Everything else (the kinematics, the constraint rows, the
O(m²) assembly) stays inline, and so does the step of a joint whose motion subspace depends on
q (no shared function can hold it as a constant).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from ..spatial import Chain, DenseTransform, Transform
from .casadi import CASADI, SX, CasadiBackend, ca
from .protocol import Backend, Block, JointStep, Matrix, implements, joint_step, place_blocks

__all__ = ["OUTLINED", "OutlinedCasadi", "OutlinedStep"]


class OutlinedCasadi(CasadiBackend):
    """CasADi SX whose joint steps fold through shared functions (module docstring)."""

    name = "casadi-outlined"


OUTLINED = OutlinedCasadi()


@implements(place_blocks, OutlinedCasadi)
def _place_blocks(B: OutlinedCasadi, rows: int, cols: int, blocks: Sequence[Block]) -> Any:
    """CasADi's own :func:`~.protocol.place_blocks`: placing blocks is no arithmetic to outline."""
    return place_blocks(CASADI, rows, cols, blocks)


def _pattern(sp: Any) -> tuple:
    """A hashable form of a CasADi sparsity."""
    return (sp.size1(), sp.size2(), tuple(sp.colind()), tuple(sp.row()))


def _leaves(X: Any) -> tuple[tuple, list[Matrix]]:
    """``X``'s structure (the transform classes and the sparsity of each matrix in them) and
    its matrices, each reduced to its structural nonzeros."""
    if isinstance(X, Chain):
        parts = [_leaves(f) for f in X.factors]
        return ("chain", tuple(s for s, _ in parts)), [m for _, ms in parts for m in ms]
    if isinstance(X, Transform):
        kept = [ca.sparsify(SX(m)) for m in (X.E, X.p) if m is not None]
        shape = tuple(None if m is None else True for m in (X.E, X.p))
        return ("transform", shape, tuple(_pattern(m.sparsity()) for m in kept)), kept
    if isinstance(X, DenseTransform):
        m = ca.sparsify(SX(X.X))
        return ("dense", _pattern(m.sparsity())), [m]
    raise TypeError(f"no outlined fold for a transform of type {type(X).__name__}")


def _rebuilt(structure: tuple, leaves: list[Matrix]) -> Any:
    """A transform of ``structure`` on the matrices ``leaves`` (consumed from the front)."""
    kind = structure[0]
    if kind == "chain":
        return Chain(tuple(_rebuilt(s, leaves) for s in structure[1]))
    if kind == "transform":
        E, p = (leaves.pop(0) if present else None for present in structure[1])
        return Transform(CASADI, E, p)
    return DenseTransform(CASADI, leaves.pop(0))


def _sparsity(pattern: tuple) -> Any:
    rows, cols, colind, row = pattern
    return ca.Sparsity(rows, cols, list(colind), list(row))


def _key(M: Matrix) -> Matrix:
    """``M`` as SX reduced to its structural nonzeros (a kernel's argument: its pattern is part
    of the kernel's kind)."""
    return ca.sparsify(SX(M))


@cache
def _kernel(method: str, S: tuple, armature: bool, structure: tuple, patterns: tuple):
    """The step's ``method`` as a function of its matrix arguments, then link ``i``'s
    upper-triangular ``H^A_i``, its armature and its transform's matrices (``patterns``, in
    that order), built by the generic step on symbols; its outputs are the method's, symmetric
    ones as their upper triangles."""
    syms = [SX.sym(f"x{k}", _sparsity(p)) for k, p in enumerate(patterns)]
    inputs = list(syms)
    n_args = {"fold": 1, "extend": 2}[method]
    args, H_i, rest = syms[:n_args], syms[n_args], syms[n_args + 1 :]
    arm = rest.pop(0) if armature else None
    X = _rebuilt(structure, rest)
    nv = len(S) // 6
    S_i = ca.reshape(ca.DM(list(S)), 6, nv)
    step = JointStep.build(CASADI, S_i, CASADI.symmetric_from_upper(H_i), arm, X)
    if method == "fold":  # H^A_π + X_iᵀ (H^A_i − U_i D_i⁻¹ U_iᵀ) X_i
        H = [None, CASADI.symmetric_from_upper(args[0]), CASADI.symmetric_from_upper(H_i)]
        step.fold_into(H, 2, 1)
        outputs = [ca.triu(H[1])]
    else:  # "extend": eqs. 16–17, (Ω + Fᵀ ^{π(i)}Ω_i F, ^{π(i)}P_i F)
        Omega, P = step.extend(CASADI.symmetric_from_upper(args[0]), args[1], 1)
        outputs = [ca.triu(Omega), P]
    outputs = [ca.sparsify(o) for o in outputs]
    key = repr((method, S, armature, structure, patterns)).encode()
    name = f"pvosimr_{method}_{hashlib.sha256(key).hexdigest()[:12]}"  # the same in every run
    return ca.Function(name, inputs, outputs, {"never_inline": True})


class OutlinedStep(JointStep):
    """A :class:`JointStep` whose :meth:`fold_into` and :meth:`extend` call the shared
    function of their kind of link (module docstring)."""

    __slots__ = ("H_i", "armature")

    def _call(self, method: str, args: list[Matrix]) -> list[Matrix] | None:
        S = SX(self.S)
        if not S.is_constant():
            return None
        S_key = tuple(float(v) for v in np.asarray(ca.evalf(S)).ravel(order="F"))
        structure, leaves = _leaves(self.X)
        arm = [] if self.armature is None else [_key(self.armature)]
        values = [*map(_key, args), _key(ca.triu(SX(self.H_i))), *arm, *leaves]
        patterns = tuple(_pattern(v.sparsity()) for v in values)
        return _kernel(method, S_key, bool(arm), structure, patterns).call(values)

    def fold_into(self, H_A: list[Matrix], i: int, parent: int) -> None:
        if parent <= 0:
            return
        out = self._call("fold", [ca.triu(SX(H_A[parent]))])
        if out is None:
            JointStep.fold_into(self, H_A, i, parent)
        else:
            H_A[parent] = CASADI.symmetric_from_upper(out[0])

    def extend(self, Omega: Matrix, F: Matrix, parent: int) -> tuple[Matrix, Matrix | None]:
        out = self._call("extend", [ca.triu(SX(Omega)), F])
        if out is None:
            return JointStep.extend(self, Omega, F, parent)
        return CASADI.symmetric_from_upper(out[0]), out[1] if parent > 0 else None


@implements(joint_step, OutlinedCasadi)
def _outlined_step(
    B: Backend, S: Matrix, H_A: Matrix, armature: Matrix | None, X: Any, axis, identity
) -> OutlinedStep:
    step = OutlinedStep.build(B, S, H_A, armature, X)
    step.armature, step.H_i = armature, H_A
    return step
