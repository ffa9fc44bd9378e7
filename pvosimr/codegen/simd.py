"""Several configurations per instruction: CasADi's generated function rewritten on vector lanes.

CasADi's ``CodeGenerator`` writes G as straight-line C on scalar locals (``a012=(a003*a007);``,
``a008=sin(a008);``, ...).  :func:`vector_function` rewrites that body with every local a
``pv_t``, a vector of doubles (``__m256d``: four lanes with AVX2 and FMA; ``__m512d``: eight
with AVX-512F), on which GCC's and Clang's ``+ - * /`` and unary ``-`` act lane by lane: lane
``k`` holds row ``k`` of a group of rows.  Constants are broadcast, the inputs read from
``Q[i]`` (``q[i]`` of the group's rows, struct-of-arrays) and, for placements as inputs,
broadcast from ``p``; ``sqrt`` is the correctly rounded vector instruction, ``sin`` and ``cos``
a lane-wise Cephes-style polynomial (within an ulp or two of the C library's; a vector with a
lane beyond :data:`REDUCTION_LIMIT`, infinite or NaN goes through the C library lane by lane).
Any statement it does not recognise leaves the library without the vector path
(:func:`vector_function` returns None).

The rewritten function and its helpers (:func:`section`) are compiled for the width's features
only (``#pragma GCC target`` / Clang's ``#pragma clang attribute``); the rest of the library is
not: the scalar function and the single call are unchanged, and a library whose CPU lacks the
features (checked in C with ``__builtin_cpu_supports``) runs the scalar rows.
:func:`cpu_features` asks the compiler what ``-march=native`` enables here, :func:`lanes`
chooses the width; its features go into the cache key.
"""

from __future__ import annotations

import functools
import os
import platform
import re
import subprocess

from . import casadi_statements as statements
from .templating import fill, template

__all__ = [
    "ENV",
    "FEATURES",
    "NATIVE",
    "REDUCTION_LIMIT",
    "cpu_features",
    "lanes",
    "native_copy",
    "on_native",
    "scratch_bytes",
    "section",
    "vector_function",
]

#: ``PVOSIMR_SIMD``: ``0`` (or ``off``/``no``/``false``) builds the scalar path only; ``4`` or
#: ``8`` at most that many lanes; unset or anything else: the widest this CPU has.
ENV = "PVOSIMR_SIMD"

#: ``|x|`` up to which the vector sin/cos reduce the argument themselves (Cephes' three-part
#: π/4, exact while ``x·4/π`` needs at most about 29 bits); beyond it, the C library's.
REDUCTION_LIMIT = 1.0e8

#: Lanes -> the instruction-set features their code is compiled for.
FEATURES = {8: ("avx2", "fma", "avx512f"), 4: ("avx2", "fma")}


def lanes(simd: bool | int | None, features: tuple[str, ...]) -> int:
    """The lanes of the vector path: the most of :data:`FEATURES` whose features are all in
    ``features``, and at most ``simd`` when it is a number (``False``/``0``: none; ``None``:
    as ``$PVOSIMR_SIMD`` says)."""
    if simd is None:
        said = os.environ.get(ENV, "").strip().lower()
        simd = 0 if said in {"0", "off", "no", "false"} else int(said) if said.isdigit() else True
    most = max(FEATURES) if simd is True else int(simd)
    usable = [n for n, needs in FEATURES.items() if n <= most and set(needs) <= set(features)]
    return max(usable, default=0)


@functools.lru_cache(maxsize=8)
def cpu_features(compiler: tuple[str, ...]) -> tuple[str, ...]:
    """Those of :data:`FEATURES`' features that the compiler's ``-march=native`` enables on
    this machine (x86-64 only; ``()`` elsewhere or when the compiler cannot tell)."""
    if platform.machine().lower() not in {"x86_64", "amd64"}:
        return ()
    try:
        out = subprocess.run(
            [*compiler, "-march=native", "-dM", "-E", "-x", "c", os.devnull],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return ()
    if out.returncode != 0:
        return ()
    macros = set(re.findall(r"#define (__\w+__) ", out.stdout))
    known = sorted({name for needs in FEATURES.values() for name in needs})
    return tuple(name for name in known if f"__{name.upper()}__" in macros)


def _input(match: re.Match) -> str | None:
    """``q`` from the group's rows (struct-of-arrays), ``p`` broadcast; no other input."""
    at = {"0": "Q[{}]", "1": "pv_splat(p[{}])"}.get(match["input"])
    return at and f"  {match['to']}={at.format(match['index'])};"


_FORMS = {  # the vector form of CasADi's statements (the rest: their common form)
    "constant": r"  \g<to>=pv_splat(\g<sign>\g<value>);",
    "input": _input,
    "output": r"  R[\g<index>]=\g<value>;",
}


def vector_function(source: str, fname: str, n_in: int) -> str | None:
    """C of ``static void pvosimr_simd_f(const pv_t* Q, const double* p, pv_t* R)``: the body
    of CasADi's function ``fname`` in ``source`` on vector lanes, or None where the body holds
    anything :data:`_FORMS` does not take (work arrays, branches, other functions)."""
    generated = statements.function_body(source, fname)
    if generated is None or n_in not in (1, 2):
        return None
    try:
        body = statements.rewrite(generated, _FORMS)
    except statements.UnknownStatementError:
        return None
    return f"""
static void pvosimr_simd_f(const pv_t* Q, const double* p, pv_t* R) {{
  (void)p;
{body}
}}
"""


#: Per width: the vector type, broadcast, sqrt, |x|, floor, comparisons (``pv_cmp``, to a lane
#: mask ``pv_mask``), masks' union and exclusive or, a blend (``m`` ? b : a), a sign flip where
#: ``m``, whether a mask holds every lane, whether a vector has a non-finite lane, store, load.
_WIDTH = {lanes: template(f"simd{lanes}.c") for lanes in FEATURES}

#: ``pv_sin`` and ``pv_cos`` of every lane, on the helpers of :data:`_WIDTH`.
_MATH = fill("simd_math.c", REDUCTION_LIMIT=REDUCTION_LIMIT)


NATIVE = FEATURES[4]
"""The features the single call's copy is compiled for: fused multiply-adds (FMA) and AVX2."""


def native_copy(source: str, fname: str) -> str | None:
    """CasADi's function ``fname`` of ``source`` once more, as ``pvosimr_native_f`` (for
    :func:`on_native`); None where the function is not found."""
    header = re.search(r"/\* " + re.escape(fname) + r":.*\*/\nstatic int (casadi_f\d+)\(", source)
    if header is None:
        return None
    start = header.start(1) - len("static int ")
    end = source.index("\n}\n", header.end()) + 3
    return source[start:end].replace(header.group(1), "pvosimr_native_f", 1)


def on_native(code: str) -> str:
    """``code``, which defines ``pvosimr_native_f`` (a copy of the generated function:
    :func:`native_copy`, :func:`pvosimr.codegen.chunks.native_copy`), compiled for
    :data:`NATIVE` (a ``target`` pragma) behind ``pvosimr_native_usable()``: the single call on
    this CPU's fused multiply-adds, with the plain function as the fallback."""
    target = ",".join(NATIVE)
    supports = " && ".join(f'__builtin_cpu_supports("{name}")' for name in NATIVE)
    return fill("native.c", target=target, supports=supports, code=code)


def scratch_bytes(nq: int, n_out: int, lanes: int) -> int:
    """Bytes of ``pvosimr_simd_rows``'s inputs and outputs on ``lanes`` lanes (on the heap: a
    large G's would not fit a small thread stack)."""
    return (nq + n_out) * 8 * lanes


def section(function: str, nq: int, n_out: int, lanes: int) -> str:
    """The vector path of a library on ``lanes`` lanes (4 or 8): :func:`vector_function`'s
    ``function``, its helpers and ``pvosimr_simd_rows(qs, p, out, check, scratch)``, which
    evaluates the ``lanes`` rows at ``qs`` into ``out`` and returns 0, or 1 where a row fails
    the check of ``q`` or has a non-finite output (nothing is reported: the caller runs those
    rows through the scalar function, which names the failure); ``scratch`` holds
    :func:`scratch_bytes` aligned on ``8 * lanes`` bytes.  Compiled for ``FEATURES[lanes]``;
    ``pvosimr_simd_usable()`` says whether this CPU has them.  Needs ``pvosimr_check_q``
    defined before it."""
    target = ",".join(FEATURES[lanes])
    supports = " && ".join(f'__builtin_cpu_supports("{name}")' for name in FEATURES[lanes])
    gather = ", ".join(f"qs[{k * nq} + i]" for k in reversed(range(lanes)))
    stores = " ".join(f"out[{k * n_out} + i] = v[{k}];" for k in range(lanes))
    prefix = "_mm256" if lanes == 4 else "_mm512"
    # the rows left after whole vectors; none where lanes divides n_out (a loop that never
    # runs would make GCC warn that its first iteration is undefined behaviour)
    tail = fill("simd_tail.c", n_out=n_out, lanes=lanes, stores=stores) if n_out % lanes else ""
    return fill(
        "simd.c",
        **{"lanes": lanes, "nq": nq, "n_out": n_out, "target": target, "supports": supports},
        **{"width": _WIDTH[lanes], "math": _MATH, "function": function},
        **{"prefix": prefix, "gather": gather, "tail": tail},
    )
