"""The C of pvosimr's CUDA kernels (:mod:`pvosimr.codegen.cuda`): CasADi's generated function
of G or of its gradient, line for line, in a kernel with one configuration per thread.

Configurations lie fastest in memory: entry ``i`` of a configuration's array at ``[i * B]``.
Each thread checks its ``q`` as the front ends over the CPU library do
(:func:`pvosimr.checks.check_configuration_rows`: every entry within the model's range, every
unit part of non-zero norm) and applies the unit-part rule of every route
(:mod:`pvosimr.coordinates`): the body reads ``N(q)``, G is ``G(N(q))``.  The gradient kernel
maps its tangent gradient to q's coordinates with the gradient library's own C
(:data:`pvosimr.codegen.c_source.COORDINATES_ROW_C`).  The same source compiles as C for the
host (``__device__`` empty, the kernel a loop over configurations).  Its fixed text is in
``templates/cuda_*.cu.in`` (:mod:`pvosimr.codegen.templating`).
"""

from __future__ import annotations

import re

import numpy as np

from ..coordinates import AS_GIVEN_TOLERANCE
from . import casadi_statements as statements
from .c_source import BAD_Q, BAD_W, COORDINATES_ROW_C, NON_FINITE, OK
from .call import CodegenError
from .templating import fill

__all__ = ["DTYPES", "CudaError", "kernel_body", "kernel_source"]

#: The numbers a kernel computes in -> their C type.
DTYPES = {"float64": "double", "float32": "float"}


class CudaError(CodegenError):
    """The kernel cannot be written or compiled (the message says which step and why)."""


def _operation(match: re.Match) -> str:
    """An operation with its literal operands as constants in ``pv_t``."""
    a, b = (x if x.startswith("a") else f"PV_C({x})" for x in match.group("a", "b"))
    return f"  {match['to']}=({a}{match['op']}{b});"


_FORMS = {  # the kernel's form of each of CasADi's statements (the rest: their common form)
    "constant": r"  \g<to>=\g<sign>PV_C(\g<value>);",
    "input": r"  \g<to>=PV_IN\g<input>(\g<index>);",
    "operation": _operation,
    "output": r"  PV_OUT(\g<index>)=\g<value>;",
}


def kernel_body(generated: str, fname: str) -> str:
    """CasADi's function ``fname`` of ``generated``, line for line in the kernel's macros:
    ``PV_INk(i)`` reads entry ``i`` of input ``k``, ``PV_OUT(i)`` is output entry ``i``,
    ``PV_C(x)`` a constant and ``pv_sin`` … the math of ``pv_t``.  :class:`CudaError` naming
    a line that is not one of the straight-line statements it knows."""
    body = statements.function_body(generated, fname)
    if body is None:
        raise CudaError(f"no function {fname} in the generated C")
    try:
        return statements.rewrite(body, _FORMS)
    except statements.UnknownStatementError as exc:
        raise CudaError(
            f"line {exc.number} of {fname}'s generated body is not a statement the CUDA "
            f"kernel knows: {exc.line.strip()!r}"
        ) from None


_MATH = {  # the C library's functions of pv_t
    dtype: "\n".join(f"#define pv_{f} {f}{suffix}" for f in ("sin", "cos", "sqrt", "fabs"))
    for dtype, suffix in (("float64", ""), ("float32", "f"))
}


def _q_check(nq: int, parts: list[tuple[int, int]], q_bound: float) -> str:
    """``pvosimr_bad_q(q, B, u)``: 1 where an entry of ``q`` is beyond the model's range or a
    unit part's squared norm is not positive and finite (computed in double, whatever ``pv_t``);
    else 0, with ``u[i]`` entry ``i`` of ``N(q)`` for each unit part by the CPU library's
    unit-part rule (:mod:`pvosimr.coordinates`: as given within ``AS_GIVEN_TOLERANCE`` of a
    unit squared norm, else divided by their norm, the squared norm summed in index order), and
    ``PV_Q_i``, entry ``i`` of ``N(q)`` as the body reads it: ``u[i]`` in a unit part, else
    ``q`` in memory."""
    checks, unit = [], {start + k for start, length in parts for k in range(length)}
    for start, length in parts:
        squared = " + ".join(f"x[{start + k}] * x[{start + k}]" for k in range(length))
        checks.append(
            f"  s = {squared};\n"
            "  if (!(s > 0.0 && s - s == 0.0)) return 1;\n"
            f"  s = fabs(s - 1.0) <= {AS_GIVEN_TOLERANCE!r} ? 1.0 : sqrt(s);\n"
            + "".join(f"  u[{start + k}] = (pv_t)(x[{start + k}] / s);\n" for k in range(length))
        )
    reads = "\n".join(
        f"#define PV_Q_{i} u[{i}]" if i in unit else f"#define PV_Q_{i} q[{i}LL * B]"
        for i in range(nq)
    )
    return fill(
        "cuda_check_q.cu",
        reads=reads,
        size=max(nq, 1),
        nq=nq,
        q_bound=q_bound,
        checks="".join(checks),
    )


def _function(name: str, info: dict) -> str:
    """The kernel ``name`` around the :func:`kernel_body` of ``info``'s function (G or its
    gradient): G stored where CasADi writes it, the tangent gradient into ``g`` and mapped to
    q's coordinates (:data:`~pvosimr.codegen.c_source.COORDINATES_ROW_C`)."""
    vjp, body = bool(info["n_w"]), kernel_body(info["generated"], info["fname"])
    inputs = ["q"] + (["p"] if info["n_p"] else []) + (["w"] if vjp else [])
    # q's entries through PV_Q_i (pvosimr_bad_q's N(q)), the others from memory
    macros = {"q": "PV_Q_##i", "p": "(pv_t)p[i]", "w": "w[(long long)(i) * B]"}
    defines = "\n".join(f"#define PV_IN{k}(i) {macros[x]}" for k, x in enumerate(inputs))
    undefines = "\n".join(f"#undef PV_IN{k}" for k in range(len(inputs)))
    w_param = "const pv_t* __restrict__ w, " if vjp else ""
    params = (
        "const pv_t* __restrict__ qs, const pv_t* __restrict__ p, "
        + ("const pv_t* __restrict__ ws, " if vjp else "")
        + "pv_t* __restrict__ outs, int* __restrict__ status, long long B"
    )
    args = "qs, p, " + ("ws, " if vjp else "") + "outs, status, B"
    if vjp:
        row = f"""  const pv_t* w = ws + b;
  pv_t g[{info["n_out"]}];
  if (pvosimr_bad_q(q, B, u)) {{ status[b] = {BAD_Q}; return; }}
  if (!pvosimr_finite(w, {info["n_w"]}, B)) {{ status[b] = {BAD_W}; return; }}
  {name}_body(q, u, p, w, g, B);
  pvosimr_coordinates_row(pvosimr_plan, q, u, g, out, B, {AS_GIVEN_TOLERANCE!r});
  status[b] = pvosimr_finite(out, {info["nq"]}, B) ? {OK} : {NON_FINITE};"""
    else:
        row = f"""  if (pvosimr_bad_q(q, B, u)) {{ status[b] = {BAD_Q}; return; }}
  {name}_body(q, u, p, out, B);
  status[b] = pvosimr_finite(out, {info["n_out"]}, B) ? {OK} : {NON_FINITE};"""
    return fill(
        "cuda_kernel.cu",
        name=name,
        fname=info["fname"],
        n_instructions=info["n_instructions"],
        defines=defines,
        out_index="i" if vjp else "(long long)(i) * B",
        w_param=w_param,
        body=body,
        undefines=undefines,
        params=params,
        u_size=max(info["nq"], 1),
        row=row,
        args=args,
    )


def kernel_source(
    g_info: dict, vjp_info: dict | None, dtype: str, plan: np.ndarray | None = None
) -> str:
    """The CUDA C of ``pvosimr_G`` (G of :func:`~pvosimr.codegen.build.generate_source`'s
    ``g_info``) and, with ``vjp_info`` and the model's ``plan``
    (:meth:`~pvosimr.coordinates.CoordinatePlan.packed`), ``pvosimr_vjp`` (the gradient of
    ``⟨W, G⟩`` in q's coordinates), in ``dtype`` (:data:`DTYPES`); also C for the host."""
    prelude = fill("cuda_prelude.cu", dtype=dtype, ctype=DTYPES[dtype], math=_MATH[dtype])
    check = _q_check(g_info["nq"], g_info["unit_parts"], g_info["q_bound"])
    parts = [prelude, check, _function("pvosimr_G", g_info)]
    if vjp_info is not None:
        numbers = ", ".join(str(int(x)) for x in plan)
        parts += [
            COORDINATES_ROW_C,
            f"static __constant__ const long long pvosimr_plan[{len(plan)}] = {{{numbers}}};\n",
            _function("pvosimr_vjp", vjp_info),
        ]
    return "".join(parts)
