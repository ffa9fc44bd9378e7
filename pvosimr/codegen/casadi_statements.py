"""CasADi's generated function, statement by statement: the one grammar its rewriters share.

CasADi's ``CodeGenerator`` writes a function as straight-line C on scalar locals
(``a012=(a003*a007);``, ``a008=sin(a008);``, ...).  :data:`STATEMENTS` names each kind of line
it writes for G and its gradient; a rewriter (:mod:`pvosimr.codegen.simd`'s vector lanes,
:mod:`pvosimr.codegen.cuda_source`'s kernels) supplies only its form of each kind, and
:func:`rewrite` turns the body into that target line for line, or names the first line it
does not know.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

__all__ = ["STATEMENTS", "UnknownStatementError", "function_body", "rewrite"]

_LOCAL = r"a\d+"
#: A literal CasADi writes, never signed (a negative constant is ``-`` before it).
LITERAL = r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_OPERAND = rf"{_LOCAL}|{LITERAL}"
_CALLED = "sin|cos|sqrt|fabs|casadi_sq"

#: Each kind of line of CasADi's body, its pattern (its parts as named groups).
STATEMENTS = {
    "declare": re.compile(rf"  casadi_real (?P<locals>(?:{_LOCAL}, )*{_LOCAL};)"),
    "constant": re.compile(rf"  (?P<to>{_LOCAL})=(?P<sign>-?)(?P<value>{LITERAL});"),
    "input": re.compile(
        rf"  (?P<to>{_LOCAL})=arg\[(?P<input>\d)\]\? arg\[(?P=input)\]\[(?P<index>\d+)\] : 0;"
    ),
    "operation": re.compile(
        rf"  (?P<to>{_LOCAL})=\((?P<a>{_OPERAND})(?P<op>[-+*/])(?P<b>{_OPERAND})\);"
    ),
    "negation": re.compile(rf"  (?P<to>{_LOCAL})=\(-(?P<a>{_LOCAL})\);"),
    "call": re.compile(rf"  (?P<to>{_LOCAL})=(?P<f>{_CALLED})\((?P<a>{_LOCAL})\);"),
    "output": re.compile(rf"  if \(res\[0\]!=0\) res\[0\]\[(?P<index>\d+)\]=(?P<value>{_LOCAL});"),
}

#: The forms every target shares: operators and calls on its own type, ``pv_sin`` … its math.
_COMMON = {
    "declare": r"  pv_t \g<locals>",
    "negation": r"  \g<to>=(-\g<a>);",
    "call": r"  \g<to>=pv_\g<f>(\g<a>);",
    "operation": r"  \g<to>=(\g<a>\g<op>\g<b>);",
}

#: A target's form of a kind: a template of its groups, or a function of the match that gives
#: the line, or None where the target cannot take it.
Form = str | Callable[[re.Match], str | None]


class UnknownStatementError(ValueError):
    """A line of the body that is not a statement the target knows (``number`` from 1)."""

    def __init__(self, number: int, line: str) -> None:
        super().__init__(f"line {number}: {line.strip()!r}")
        self.number, self.line = number, line


def function_body(generated: str, fname: str) -> str | None:
    """The lines of CasADi's function ``fname`` in ``generated`` (declarations included,
    ``return 0;`` not), or None where it is not there."""
    header = re.search(r"/\* " + re.escape(fname) + r":.*\*/\nstatic int casadi_f\d+\(", generated)
    if header is None:
        return None
    start = generated.index("{\n", header.end()) + 2
    return generated[start : generated.index("\n  return 0;\n}\n", start)]


def rewrite(body: str, forms: Mapping[str, Form]) -> str:
    """``body`` line for line in the target's ``forms`` (with :data:`_COMMON` for the kinds it
    leaves out); :class:`UnknownStatementError` for the first line it cannot take."""
    forms = {**_COMMON, **forms}
    lines = []
    for number, line in enumerate(body.split("\n"), 1):
        for kind, pattern in STATEMENTS.items():
            match = pattern.fullmatch(line)
            if match is not None:
                form = forms[kind]
                written = match.expand(form) if isinstance(form, str) else form(match)
                if written is None:
                    raise UnknownStatementError(number, line)
                lines.append(written)
                break
        else:
            raise UnknownStatementError(number, line)
    return "\n".join(lines)
