"""A large generated function as many small C functions, so that C compilers stay linear in it.

CasADi writes an SX function as one C function: straight-line code over a few reused local
variables.  An optimising C compiler's time on one function grows faster than its length
(register allocation and scheduling look across it), so a library for hundreds of links could
be built only at ``-O0``, whose code is several times slower.  Here the function's instructions
(CasADi's ``instruction_*`` API, in evaluation order) are cut into runs of :data:`CHUNK`
instructions, each its own ``static`` C function.  Every value lives in a local variable of the
run that makes it, unless a later run reads it: then it is stored in a slot of one array on the
caller's stack, handed from run to run.  The compiler then sees many functions of bounded size,
so its time, the library's size and the call's time grow like the instruction count: the
algorithm's cost.

:func:`chunked_function` returns the C of ``casadi_f0`` (CasADi's name for the function's body,
called by its exported wrapper) in this form; :mod:`pvosimr.codegen.build` puts it in place of
CasADi's one body when the function has more than :data:`CHUNKED_FROM` instructions.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["CHUNK", "CHUNKED_FROM", "chunked_function", "replace_body"]

CHUNK = 400
"""Instructions per C function: small enough for an optimising compiler's time per function to
stay bounded, large enough for most values to stay in registers within it."""

CHUNKED_FROM = 50_000
"""Functions with more instructions are written in chunks.  Below, CasADi's one body still
compiles at ``-O3`` in reasonable time (the paper's robots, Atlas with two Shadow hands
included), keeps every value in registers, and its batches run on vector lanes
(:mod:`pvosimr.codegen.simd` rewrites that one body)."""


def _operations(ca) -> dict[int, Callable[..., str]]:
    """CasADi operation id -> C expression of its operand names (those pvosimr's functions use,
    and their usual neighbours)."""
    binary = {
        "ADD": "({} + {})", "SUB": "({} - {})", "MUL": "({} * {})", "DIV": "({} / {})",
        "LT": "(casadi_real)({} < {})", "LE": "(casadi_real)({} <= {})",
        "EQ": "(casadi_real)({} == {})", "NE": "(casadi_real)({} != {})",
        "AND": "(casadi_real)({} && {})", "OR": "(casadi_real)({} || {})",
        "IF_ELSE_ZERO": "({} ? {} : 0.)", "FMIN": "fmin({}, {})", "FMAX": "fmax({}, {})",
        "ATAN2": "atan2({}, {})", "POW": "pow({}, {})", "CONSTPOW": "pow({}, {})",
        "COPYSIGN": "copysign({}, {})", "FMOD": "fmod({}, {})",
    }  # fmt: skip
    unary = {
        "NEG": "(-{})", "SQ": "({0} * {0})", "TWICE": "(2. * {})", "INV": "(1. / {})",
        "SQRT": "sqrt({})", "SIN": "sin({})", "COS": "cos({})", "TAN": "tan({})",
        "ASIN": "asin({})", "ACOS": "acos({})", "ATAN": "atan({})", "EXP": "exp({})",
        "LOG": "log({})", "FABS": "fabs({})", "FLOOR": "floor({})", "CEIL": "ceil({})",
        "NOT": "(casadi_real)(!{})", "SIGN": "(casadi_real)(({0} > 0) - ({0} < 0))",
        "ASSIGN": "{}", "TANH": "tanh({})", "SINH": "sinh({})", "COSH": "cosh({})",
    }  # fmt: skip
    ops: dict[int, Callable[..., str]] = {}
    for name, form in {**binary, **unary}.items():
        op = getattr(ca, f"OP_{name}", None)
        if op is not None:
            ops[int(op)] = form.format
    return ops


class _Program:
    """The instructions of one SX function as single-assignment values: instruction ``k``
    defines value ``k``; ``reads[k]`` are the values it reads (CasADi's work slots resolved
    to the value last written there)."""

    def __init__(self, f) -> None:
        n = int(f.n_instructions())
        self.ids = [int(f.instruction_id(k)) for k in range(n)]
        self.inputs = [tuple(int(i) for i in f.instruction_input(k)) for k in range(n)]
        self.outputs = [tuple(int(i) for i in f.instruction_output(k)) for k in range(n)]
        self.constants = {}
        self.reads: list[tuple[int, ...]] = []
        ca = _casadi()
        const, inp, out = int(ca.OP_CONST), int(ca.OP_INPUT), int(ca.OP_OUTPUT)
        self.const, self.input, self.output = const, inp, out
        holder: dict[int, int] = {}  # work slot -> value now in it
        for k, op in enumerate(self.ids):
            if op == const:
                self.constants[k] = float(f.instruction_constant(k))
            reads = () if op in (const, inp) else tuple(holder[w] for w in self.inputs[k])
            self.reads.append(reads)
            if op != out:
                holder[self.outputs[k][0]] = k


def _casadi():
    from .. import symbolic  # without CasADi: one line naming the extra

    return symbolic.ca


def chunked_function(f, chunk: int | None = None) -> str:
    """C defining ``casadi_f0`` for CasADi function ``f`` in runs of ``chunk`` instructions
    (default :data:`CHUNK`; module docstring), with CasADi's signature (``iw``, ``w`` and
    ``mem`` unused)."""
    chunk = CHUNK if chunk is None else chunk
    ca = _casadi()
    ops = _operations(ca)
    prog = _Program(f)
    n = len(prog.ids)
    run_of = [k // chunk for k in range(n)]
    crossing = sorted(
        {v for k in range(n) for v in prog.reads[k] if run_of[v] != run_of[k]}
    )  # values a later run reads: kept in slots
    slot = {v: s for s, v in enumerate(crossing)}

    def name(v: int, run: int) -> str:
        if v in slot and run_of[v] != run:
            return f"s[{slot[v]}]"
        return f"v{v}"

    runs = []
    for r, start in enumerate(range(0, n, chunk)):
        lines = []
        for k in range(start, min(start + chunk, n)):
            op = prog.ids[k]
            if op == prog.output:
                o, nz = prog.outputs[k]
                lines.append(f"  if (res[{o}]) res[{o}][{nz}] = {name(prog.reads[k][0], r)};")
                continue
            if op == prog.const:
                expr = repr(prog.constants[k])
            elif op == prog.input:
                i, nz = prog.inputs[k]
                expr = f"(arg[{i}] ? arg[{i}][{nz}] : 0.)"
            elif op in ops:
                expr = ops[op](*(name(v, r) for v in prog.reads[k]))
            else:
                raise NotImplementedError(f"CasADi operation {op} has no C form here")
            lines.append(f"  const casadi_real v{k} = {expr};")
            if k in slot:
                lines.append(f"  s[{slot[k]}] = v{k};")
        runs.append(
            f"static void pvosimr_run{r}(const casadi_real** arg, casadi_real** res, "
            f"casadi_real* restrict s) {{\n" + "\n".join(lines) + "\n}\n"
        )
    calls = "\n".join(f"  pvosimr_run{r}(arg, res, s);" for r in range(len(runs)))
    size = max(1, len(crossing))
    return (
        "\n".join(runs)
        + "\nstatic int casadi_f0(const casadi_real** arg, casadi_real** res, casadi_int* iw, "
        "casadi_real* w, int mem) {\n"
        f"  casadi_real s[{size}];  /* the values one run hands to a later one */\n"
        "  (void)iw; (void)w; (void)mem;\n"
        f"{calls}\n  return 0;\n}}\n"
    )


def replace_body(source: str, f, chunk: int | None = None) -> str:
    """CasADi's generated ``source`` with its one ``casadi_f0`` replaced by
    :func:`chunked_function` of ``f`` (the function it was generated from)."""
    head = "static int casadi_f0(const casadi_real** arg, casadi_real** res, casadi_int* iw, "
    start = source.index(head)
    end = source.index("\n}\n", start) + 3
    return source[:start] + chunked_function(f, chunk) + source[end:]
