"""G through XLA: the instruction graph of the CasADi function ``q ↦ G``, emitted as JAX.

The generated C and this route read the same graph: :func:`pvosimr.symbolic.delassus_function`
(inline, never the outlined form: XLA inlines calls anyway).  :func:`read_program` reads its
straight-line instruction list once (operation, operand slots, result slot, constant);
:func:`emit` replays it on JAX arrays whose leading axes are the batch, one JAX operation per
CasADi instruction, so that ``jit``, ``vmap``, ``grad``, ``jvp`` and ``jacfwd`` are JAX's own and
XLA sees every operation.  Every operation keeps the input's dtype: float64 (with JAX's x64
mode on) or float32.

Unit quaternions and unit complex numbers in ``q`` are normalised inside the traced function
(each part divided by its norm), so G is the model's at any non-zero ``q`` and a gradient with
respect to those coordinates has no radial part.  Nothing is checked inside the traced
function: a zero quaternion or a configuration where M is singular gives non-finite entries.
Shapes and dtypes are checked when the function is traced, with errors that say what is wrong.

XLA's persistent compilation cache is pointed at ``xla/`` in pvosimr's cache folder
(:func:`pvosimr.codegen.compiler.cache_dir`) unless the caller chose one
(:func:`use_persistent_cache`), so a second process loads the compiled executable instead of
compiling again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pinocchio as pin

from ..extras import require

require("pvosimr.jax.xla", "jax", "casadi")

import casadi as ca  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

from ..constraints import as_constraint_list  # noqa: E402
from ..coordinates import unit_part_spans  # noqa: E402
from ..symbolic import delassus_function  # noqa: E402
from .arrays import checked_inputs  # noqa: E402
from .cache import use_persistent_cache  # noqa: E402

__all__ = [
    "OPERATIONS",
    "Program",
    "XlaDelassus",
    "compile_xla",
    "emit",
    "read_program",
    "use_persistent_cache",
]


def _where_nonzero(c: Any, x: Any) -> Any:
    return jnp.where(c != 0, x, jnp.zeros_like(x))


def _as_float(b: Any, like: Any) -> Any:
    return b.astype(like.dtype)


#: CasADi operation code → the JAX function of its operands (unary or binary), with CasADi's
#: semantics (comparisons and logic give 0 or 1 in the operands' dtype).
OPERATIONS: dict[int, Callable[..., Any]] = {
    ca.OP_ASSIGN: lambda x: x,
    ca.OP_ADD: lax.add,
    ca.OP_SUB: lax.sub,
    ca.OP_MUL: lax.mul,
    ca.OP_DIV: lax.div,
    ca.OP_NEG: lax.neg,
    ca.OP_TWICE: lambda x: lax.add(x, x),
    ca.OP_SQ: lambda x: lax.mul(x, x),
    ca.OP_INV: lambda x: lax.div(jnp.ones_like(x), x),
    ca.OP_SQRT: lax.sqrt,
    ca.OP_EXP: lax.exp,
    ca.OP_LOG: lax.log,
    ca.OP_POW: jnp.power,
    ca.OP_CONSTPOW: jnp.power,
    ca.OP_SIN: lax.sin,
    ca.OP_COS: lax.cos,
    ca.OP_TAN: lax.tan,
    ca.OP_ASIN: lax.asin,
    ca.OP_ACOS: lax.acos,
    ca.OP_ATAN: lax.atan,
    ca.OP_ATAN2: lax.atan2,
    ca.OP_SINH: lax.sinh,
    ca.OP_COSH: lax.cosh,
    ca.OP_TANH: lax.tanh,
    ca.OP_FABS: lax.abs,
    ca.OP_SIGN: lax.sign,
    ca.OP_COPYSIGN: jnp.copysign,
    ca.OP_FMIN: jnp.fmin,
    ca.OP_FMAX: jnp.fmax,
    ca.OP_FLOOR: lax.floor,
    ca.OP_CEIL: lax.ceil,
    ca.OP_ERF: lax.erf,
    ca.OP_LOG1P: lax.log1p,
    ca.OP_EXPM1: lax.expm1,
    ca.OP_HYPOT: jnp.hypot,
    ca.OP_LT: lambda x, y: _as_float(x < y, x),
    ca.OP_LE: lambda x, y: _as_float(x <= y, x),
    ca.OP_EQ: lambda x, y: _as_float(x == y, x),
    ca.OP_NE: lambda x, y: _as_float(x != y, x),
    ca.OP_NOT: lambda x: _as_float(x == 0, x),
    ca.OP_AND: lambda x, y: _as_float((x != 0) & (y != 0), x),
    ca.OP_OR: lambda x, y: _as_float((x != 0) | (y != 0), x),
    ca.OP_IF_ELSE_ZERO: _where_nonzero,
}

_NAMES = {getattr(ca, name): name for name in dir(ca) if name.startswith("OP_")}


@dataclass(frozen=True)
class Program:
    """One CasADi SX function's instruction list, read once (:func:`read_program`).

    ``code[k]`` is instruction ``k``'s operation (``casadi.OP_*``), ``args[k]`` its operand
    work slots (for ``OP_INPUT``: the input and the entry read), ``result[k]`` its result slot
    (for ``OP_OUTPUT``: the output and the entry written), ``constant[k]`` its number
    (``OP_CONST``).  ``in_sizes`` are the inputs' lengths, ``out_shape`` the one dense output's
    (rows, columns), read column-major as CasADi stores it.
    """

    name: str
    code: tuple[int, ...]
    args: tuple[tuple[int, ...], ...]
    result: tuple[tuple[int, ...], ...]
    constant: tuple[float, ...]
    n_work: int
    in_sizes: tuple[int, ...]
    out_shape: tuple[int, int]


def read_program(f: ca.Function) -> Program:
    """The instruction list of ``f``, an SX function of dense column inputs and one dense output.

    Raises:
        NotImplementedError: ``f`` calls other functions or has an operation :data:`OPERATIONS`
            lacks (the message names it), or its output is not dense.
    """
    if f.n_out() != 1 or f.nnz_out(0) != f.numel_out(0):
        raise NotImplementedError(f"{f.name()}: one dense output is emitted, not {f}")
    n = int(f.n_instructions())
    code = tuple(int(f.instruction_id(k)) for k in range(n))
    known = {ca.OP_CONST, ca.OP_INPUT, ca.OP_OUTPUT, *OPERATIONS}
    unknown = sorted({_NAMES.get(op, str(op)) for op in code if op not in known})
    if unknown:
        raise NotImplementedError(f"{f.name()}: no JAX emission for {', '.join(unknown)}")
    return Program(
        name=f.name(),
        code=code,
        args=tuple(tuple(int(i) for i in f.instruction_input(k)) for k in range(n)),
        result=tuple(tuple(int(i) for i in f.instruction_output(k)) for k in range(n)),
        constant=tuple(
            float(f.instruction_constant(k)) if code[k] == ca.OP_CONST else 0.0 for k in range(n)
        ),
        n_work=int(f.sz_w()),
        in_sizes=tuple(int(f.nnz_in(i)) for i in range(f.n_in())),
        out_shape=(int(f.size1_out(0)), int(f.size2_out(0))),
    )


def emit(program: Program, columns: Sequence[Sequence[Any]]) -> Any:
    """Replay ``program`` on JAX arrays: ``columns[i][j]`` is entry ``j`` of input ``i``, every
    one an array of the same shape and float dtype (the batch); returns the output as an array
    of that shape followed by ``out_shape``.

    One JAX operation per instruction; constants are broadcast to the batch's shape and dtype.
    """
    first = columns[0][0]
    shape, dtype = first.shape, first.dtype
    work: list[Any] = [None] * program.n_work
    out: list[Any] = [None] * (program.out_shape[0] * program.out_shape[1])
    for op, args, result, constant in zip(
        program.code, program.args, program.result, program.constant, strict=True
    ):
        if op == ca.OP_CONST:
            work[result[0]] = lax.full(shape, constant, dtype)
        elif op == ca.OP_INPUT:
            work[result[0]] = columns[args[0]][args[1]]
        elif op == ca.OP_OUTPUT:
            out[result[1]] = work[args[0]]
        else:
            work[result[0]] = OPERATIONS[op](*(work[a] for a in args))
    rows, cols = program.out_shape
    if not out:  # no constraint rows: an empty G
        return jnp.zeros((*shape, rows, cols), dtype)
    stacked = jnp.stack(out, axis=-1).reshape((*shape, cols, rows))
    return jnp.swapaxes(stacked, -1, -2)  # CasADi's buffer is column-major


def _normalised(columns: list[Any], spans: Iterable[tuple[int, int]]) -> list[Any]:
    """``columns`` with each unit part (``(start, length)``,
    :func:`pvosimr.coordinates.unit_part_spans`) divided by its norm (the radial direction
    removed)."""
    columns = list(columns)
    for start, length in spans:
        part = slice(start, start + length)
        norm = lax.sqrt(sum(lax.mul(c, c) for c in columns[part]))
        columns[part] = [lax.div(c, norm) for c in columns[part]]
    return columns


class XlaDelassus:
    """``G(q)`` (or ``G(q, p)`` with placements as inputs) as JAX operations: ``q`` of shape
    ``(..., nq)`` (``p``: ``(..., n_p)``, broadcast against q's batch) gives ``(..., m, m)``
    in q's dtype, float32 or float64.  Not jitted: wrap it in ``jax.jit`` (and ``vmap``,
    ``grad``, ``jvp``, ``jacfwd``) as any JAX function.

    Raises (when traced): TypeError for a non-float ``q`` or ``p``, or a float64 one while JAX's
    x64 mode is off; ValueError for a wrong last axis (the message gives the expected size).
    """

    def __init__(self, model: pin.Model, program: Program, algorithm: str, placements: str):
        self.program = program
        self.algorithm = algorithm
        self.placements = placements
        self.nq = int(model.nq)
        self.n_p = program.in_sizes[1] if placements == "input" else 0
        self.m = program.out_shape[0]
        self.unit_spans = tuple(unit_part_spans(model))

    def __repr__(self) -> str:
        return f"XlaDelassus({self.program.name}, nq={self.nq}, m={self.m})"

    def __call__(self, q: Any, p: Any = None) -> Any:
        inputs, batch = checked_inputs(q, p, self.placements, self.nq, self.n_p)
        columns = [[jnp.broadcast_to(x[..., j], batch) for j in range(x.shape[-1])] for x in inputs]
        columns[0] = _normalised(columns[0], self.unit_spans)
        return emit(self.program, columns)


def compile_xla(
    model: pin.Model,
    constraint_models: Iterable,
    algorithm: str = "pv-osimr",
    *,
    placements: str = "fixed",
) -> XlaDelassus:
    """The XLA route's ``G`` for ``model`` and ``constraint_models`` (any of
    :data:`pvosimr.ALGORITHMS`, or ``"auto"``; ``placements="input"``: ``G(q, p)`` with
    ``p = pvosimr.symbolic.placement_vector(model, constraint_models, placements)``).

    Builds the CasADi function (no C compiler), reads its instructions, and points XLA's
    persistent cache at pvosimr's cache folder (:func:`use_persistent_cache`).  XLA compiles
    when the caller's ``jax.jit`` first runs.

    Raises:
        ModuleNotFoundError: JAX or CasADi is missing (the message names the extra).
        ValueError / NotImplementedError: constraints or joints pvosimr does not support.
    """
    cms = as_constraint_list(constraint_models, model)
    f = delassus_function(model, cms, algorithm, placements=placements)
    name = f.name().removeprefix("delassus_").removesuffix("_placed")
    use_persistent_cache()
    return XlaDelassus(model, read_program(f), name.replace("_", "-"), placements)
