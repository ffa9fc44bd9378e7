"""A large generated function as many small C functions, whose code and data grow like the
algorithm.

CasADi writes an SX function as one C function: straight-line code over a few reused local
variables.  An optimising C compiler's time on one function grows faster than its length
(register allocation and scheduling look across it), so a library for hundreds of links could
be built only at ``-O0``, whose code is several times slower.  Here the function's instructions
(CasADi's ``instruction_*`` API) are cut into runs of :data:`CHUNK` instructions, each its own
``static`` C function.  Every value lives in a local variable of the run that makes it, unless a
later run reads it: then it is stored in a slot of one array on the caller's stack, handed from
run to run.  The compiler then sees many functions of bounded size, so its time and the
library's size grow like the instruction count.

Beyond that line the function is also *outlined* (:mod:`pvosimr.backends.outlined`): each
link's fold and extension is a call of one function shared by its kind of link, so the code
grows by a call per link.  A call's argument that is an earlier call's result, or constants, is
handed over by pointer; its results live in slots.  Three more things keep the time per call
growing like the work rather than faster, once the function outgrows the core's caches:

- a slot is reused once its last reader has run, so the array holds what is live at once;
- the instructions are written in the depth-first order (from the first output or from the
  last) that needs the fewest slots (:class:`_Writer`);
- a symmetric G's upper triangle is written where it is made and the lower by one loop.

:func:`chunked_function` returns the C of ``casadi_f0`` (CasADi's name for the function's body,
called by its exported wrapper) in this form; :mod:`pvosimr.codegen.build` puts it in place of
CasADi's one body when the function has more than :data:`CHUNKED_FROM` instructions.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["CHUNK", "CHUNKED_FROM", "chunked_function", "native_copy", "replace_body"]

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
    defines value ``k`` (a call defines one value per output entry, numbered from
    ``len(ids)`` on: ``results[k]``); ``reads[k]`` are the values it reads (CasADi's work
    slots resolved to the value last written there)."""

    def __init__(self, f) -> None:
        n = int(f.n_instructions())
        self.ids = [int(f.instruction_id(k)) for k in range(n)]
        self.inputs = [tuple(int(i) for i in f.instruction_input(k)) for k in range(n)]
        self.outputs = [tuple(int(i) for i in f.instruction_output(k)) for k in range(n)]
        self.constants = {}
        self.reads: list[tuple[int, ...]] = []
        self.results: dict[int, range] = {}
        ca = _casadi()
        const, inp, out = int(ca.OP_CONST), int(ca.OP_INPUT), int(ca.OP_OUTPUT)
        self.const, self.input, self.output, self.call = const, inp, out, int(ca.OP_CALL)
        holder: dict[int, int] = {}  # work slot -> value now in it
        values = n
        for k, op in enumerate(self.ids):
            if op == const:
                self.constants[k] = float(f.instruction_constant(k))
            reads = () if op in (const, inp) else tuple(holder[w] for w in self.inputs[k])
            self.reads.append(reads)
            if op == self.call:
                self.results[k] = range(values, values + len(self.outputs[k]))
                for w, v in zip(self.outputs[k], self.results[k], strict=True):
                    holder[w] = v
                values += len(self.outputs[k])
            elif op != out:
                holder[self.outputs[k][0]] = k


def _casadi():
    from .. import symbolic  # without CasADi: one line naming the extra

    return symbolic.ca


def _callees(f, source: str) -> list:
    """The function each call instruction of ``f`` calls, in order: CasADi writes them in
    instruction order in ``source`` (its C of ``f``), as ``casadi_fN(arg…)``; the comment above
    each ``static int casadi_fN`` names the function."""
    names = dict(
        (c, n) for n, c in re.findall(r"/\* (\w+):\(.*\*/\nstatic int (casadi_f\d+)\(", source)
    )
    body = source[source.index(_HEAD) :]
    body = body[: body.index("\n}\n")]
    called = re.findall(r"if \((casadi_f\d+)\(arg", body)
    return [(c, f.get_function(names[c])) for c in called]


def _depth_first(prog: _Program, roots: list[int]) -> list[int]:
    """The instructions in post-order of a depth-first walk from ``roots`` (each instruction
    once, after everything it reads)."""
    n = len(prog.ids)
    maker = dict(enumerate(range(n)))
    for k, values in prog.results.items():
        maker.update((v, k) for v in values)
    done, order = [False] * n, []
    for root in roots:
        stack = [(root, False)]
        while stack:
            k, expanded = stack.pop()
            if done[k]:
                continue
            if expanded:
                done[k] = True
                order.append(k)
                continue
            stack.append((k, True))
            operands = dict.fromkeys(maker[v] for v in prog.reads[k])
            stack.extend((p, False) for p in reversed(operands) if not done[p])
    return order


class _Layout:
    """Runs of ``chunk`` instructions in ``order``, and slots for the values that cross runs
    and for calls' results, reused once their last reader has run (first fit over free
    blocks): the array holds what is live at once, not every value made."""

    def __init__(self, prog: _Program, order: list[int], chunk: int) -> None:
        n = len(prog.ids)
        self.run_of = [0] * n
        for position, k in enumerate(order):
            self.run_of[k] = position // chunk
        crossing = {
            v for k in range(n) for v in prog.reads[k] if v < n and self.run_of[v] != self.run_of[k]
        }  # values a later run reads: kept in slots
        self.slot: dict[int, int] = {}
        self.result_at: dict[int, int] = {}  # call result value -> its slot
        self.size = self._allocate(prog, order, crossing)

    def _allocate(self, prog: _Program, order: list[int], crossing: set[int]) -> int:
        last: dict[int, int] = {}  # value -> position of its last reader
        for position, k in enumerate(order):
            for v in prog.reads[k]:
                last[v] = position
        free: list[list[int]] = []  # [start, length] blocks, by start
        size = 0
        ending: dict[int, list[tuple[int, int]]] = {}

        def take(length: int) -> int:
            nonlocal size
            for block in free:
                if block[1] >= length:
                    start = block[0]
                    block[0] += length
                    block[1] -= length
                    if not block[1]:
                        free.remove(block)
                    return start
            size += length
            return size - length

        for position, k in enumerate(order):
            if k in crossing:
                self.slot[k] = take(1)
                ending.setdefault(last[k], []).append((self.slot[k], 1))
            elif k in prog.results:
                values = prog.results[k]
                start = take(len(values))
                for j, v in enumerate(values):
                    self.result_at[v] = start + j
                end = max((last.get(v, position) for v in values), default=position)
                ending.setdefault(end, []).append((start, len(values)))
            done = ending.pop(position, ())  # blocks read for the last time here
            if not done:
                continue
            free.extend([start, length] for start, length in done)
            free.sort()
            merged: list[list[int]] = []
            for block in free:
                if merged and merged[-1][0] + merged[-1][1] == block[0]:
                    merged[-1][1] += block[1]
                else:
                    merged.append(block)
            free[:] = merged
        return size


class _Writer:
    """The C of one chunked function (see :func:`chunked_function`).

    Its instructions are written in one of two depth-first orders from the outputs, first to
    last or last to first, whichever keeps fewer values live at once (the smaller slot array).
    CasADi's own order is the first; on the Fig. 4a chain it makes the articulated inertia of
    every link before the first extension of a propagator that needs one (the constraint
    nearest the root needs the whole chain folded), so all of them are live at once, more than
    the core's first-level cache holds on long chains.  From the last output (the constraint
    farthest from the root), each link's fold comes just before its extension.
    """

    def __init__(self, f, source: str, chunk: int) -> None:
        self.prog = prog = _Program(f)
        self.ops = _operations(_casadi())
        calls = [k for k, op in enumerate(prog.ids) if op == prog.call]
        self.callees = dict(zip(calls, _callees(f, source) if calls else [], strict=True))
        roots = [k for k, op in enumerate(prog.ids) if op == prog.output]
        self.size = -1
        for order in (_depth_first(prog, roots), _depth_first(prog, roots[::-1])):
            layout = _Layout(prog, order, chunk)
            if self.size < 0 or layout.size < self.size:
                self.order, self.run_of, self.size = order, layout.run_of, layout.size
                self.slot, self.result_at = layout.slot, layout.result_at
        self.tables: dict[tuple[float, ...], str] = {}
        self.mirrored = self._symmetric(f)

    def name(self, v: int, run: int) -> str:
        if v in self.result_at:
            return f"s[{self.result_at[v]}]"
        if v in self.slot and self.run_of[v] != run:
            return f"s[{self.slot[v]}]"
        return f"v{v}"

    def lines(self, k: int, run: int) -> list[str]:
        """The C of instruction ``k`` in run ``run``."""
        prog = self.prog
        op = prog.ids[k]
        if op == prog.output:
            o, nz = prog.outputs[k]
            m = self.mirrored.get(o)
            if m and nz % m > nz // m:  # below the diagonal: the mirror loop writes it
                return []
            return [f"  res[{o}][{nz}] = {self.name(prog.reads[k][0], run)};"]
        if op == prog.call:
            return self.call(k, run)
        if op == prog.const:
            expr = repr(prog.constants[k])
        elif op == prog.input:
            i, nz = prog.inputs[k]
            expr = f"(arg[{i}] ? arg[{i}][{nz}] : 0.)"
        elif op in self.ops:
            expr = self.ops[op](*(self.name(v, run) for v in prog.reads[k]))
        else:
            raise NotImplementedError(f"CasADi operation {op} has no C form here")
        lines = [f"  const casadi_real v{k} = {expr};"]
        if k in self.slot:
            lines.append(f"  s[{self.slot[k]}] = v{k};")
        return lines

    def call(self, k: int, run: int) -> list[str]:
        """A call of a shared function: each argument by pointer where it is a run of an
        earlier call's results or constants, else gathered into a local array."""
        prog = self.prog
        cname, callee = self.callees[k]
        reads, start, pointers, lines = prog.reads[k], 0, [], []
        for i in range(int(callee.n_in())):
            values = reads[start : start + int(callee.nnz_in(i))]
            start += len(values)
            pointers.append(self.argument(k, i, values, run, lines))
        first, out = self.result_at[prog.results[k][0]], []
        for i in range(int(callee.n_out())):
            out.append(f"s + {first}")
            first += int(callee.nnz_out(i))
        lines.append(
            f"  {{ const casadi_real* a[] = {{{', '.join(pointers)}}}; "
            f"casadi_real* r[] = {{{', '.join(out)}}}; {cname}(a, r, 0, w, 0); }}"
        )
        return lines

    def argument(self, k: int, i: int, values: tuple, run: int, lines: list[str]) -> str:
        prog = self.prog
        if not values:
            return "0"
        at = [self.result_at.get(v) for v in values]
        if None not in at and at == list(range(at[0], at[0] + len(at))):
            return f"s + {at[0]}"
        if all(v in prog.constants for v in values):
            numbers = tuple(prog.constants[v] for v in values)
            if numbers not in self.tables:
                self.tables[numbers] = f"pvosimr_table{len(self.tables)}"
            return self.tables[numbers]
        names = ", ".join(self.name(v, run) for v in values)
        lines.append(f"  const casadi_real g{k}_{i}[] = {{{names}}};")
        return f"g{k}_{i}"

    def _symmetric(self, f) -> dict[int, int]:
        """Output -> m for the dense m × m outputs whose entry (i, j) is the same value as
        (j, i): their upper triangle is written where it is made, the lower by one loop."""
        prog, found = self.prog, {}
        for o in range(int(f.n_out())):
            m = int(f.size1_out(o))
            if m != f.size2_out(o) or not f.sparsity_out(o).is_dense():
                continue
            value = {
                prog.outputs[k][1]: prog.reads[k][0]
                for k, op in enumerate(prog.ids)
                if op == prog.output and prog.outputs[k][0] == o
            }
            pairs = ((i + j * m, j + i * m) for j in range(m) for i in range(j + 1, m))
            if all(value.get(low) == value.get(up) for low, up in pairs):
                found[o] = m
        return found

    def mirror_c(self) -> str:
        """The loops that fill the lower triangles of :meth:`_symmetric`'s outputs."""
        return "".join(
            f"  for (int j = 0; j < {m}; ++j) for (int i = j + 1; i < {m}; ++i) "
            f"res[{o}][i + j * {m}] = res[{o}][j + i * {m}];\n"
            for o, m in self.mirrored.items()
        )

    def tables_c(self) -> str:
        return "".join(
            f"static const casadi_real {name}[] = {{{', '.join(map(repr, numbers))}}};\n"
            for numbers, name in self.tables.items()
        )


def chunked_function(f, source: str = "", chunk: int | None = None) -> str:
    """C defining ``casadi_f0`` for CasADi function ``f`` in runs of ``chunk`` instructions
    (default :data:`CHUNK`; module docstring), with CasADi's signature (``iw`` and ``mem``
    unused; ``w`` handed to the functions ``f`` calls, whose C is in ``source``, CasADi's C
    of ``f``)."""
    chunk = CHUNK if chunk is None else chunk
    writer = _Writer(f, source, chunk)
    n = len(writer.prog.ids)
    runs = []
    for r, start in enumerate(range(0, n, chunk)):
        lines = [line for k in writer.order[start : start + chunk] for line in writer.lines(k, r)]
        runs.append(
            f"static void pvosimr_run{r}(const casadi_real** arg, casadi_real** res, "
            f"casadi_real* restrict s, casadi_real* w) {{\n" + "\n".join(lines) + "\n}\n"
        )
    calls = "\n".join(f"  pvosimr_run{r}(arg, res, s, w);" for r in range(len(runs)))
    size = max(1, writer.size)
    n_out = int(f.n_out())
    return (
        writer.tables_c() + "\n".join(runs) + f"\n{_HEAD}casadi_real* w, int mem) {{\n"
        f"  casadi_real s[{size}];  /* values handed from run to run, and calls' results */\n"
        "  (void)iw; (void)mem;\n"
        f"  for (int o = 0; o < {n_out}; ++o) if (!res[o]) return 1;  /* every output wanted */\n"
        f"{calls}\n{writer.mirror_c()}  return 0;\n}}\n"
    )


_HEAD = "static int casadi_f0(const casadi_real** arg, casadi_real** res, casadi_int* iw, "


def replace_body(source: str, f, chunk: int | None = None) -> str:
    """CasADi's generated ``source`` with its one ``casadi_f0`` replaced by
    :func:`chunked_function` of ``f`` (the function it was generated from)."""
    start = source.index(_HEAD)
    end = source.index("\n}\n", start) + 3
    head = re.sub(r"\nstatic int (casadi_f[1-9]\d*)\(", _NOINLINE, source[:start])
    return head + chunked_function(f, source, chunk) + source[end:]


_NOINLINE = r"\nstatic __attribute__((noinline)) int \1("
"""The functions ``f`` calls stay functions: inlined at every call, they would be the unrolled
code again."""


def native_copy(source: str) -> str:
    """The C of :func:`replace_body`'s ``source`` that runs the function (the functions it
    calls, its runs and ``casadi_f0``) once more, ``casadi_f0`` as ``pvosimr_native_f`` and the
    rest renamed beside it, for :func:`pvosimr.codegen.simd.on_native`; the tables of constants
    are shared."""
    parts = []
    for match in re.finditer(r"\nstatic __attribute__\(\(noinline\)\) int casadi_f\d+\(", source):
        parts.append(source[match.start() + 1 : source.index("\n}\n", match.end()) + 3])
    start = source.index("static void pvosimr_run0(")
    parts.append(source[start : source.index("\n}\n", source.index(_HEAD)) + 3])
    code = re.sub(r"\bcasadi_f0\(", "pvosimr_native_f(", "\n".join(parts))
    code = re.sub(r"\bcasadi_f(\d+)\(", r"pvosimr_native_f\1(", code)
    return re.sub(r"\bpvosimr_run(\d+)\(", r"pvosimr_native_run\1(", code)
