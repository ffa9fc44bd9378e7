"""Several configurations per instruction: CasADi's generated function rewritten on AVX2 lanes.

CasADi's ``CodeGenerator`` writes G as straight-line C on scalar locals (``a012=(a003*a007);``,
``a008=sin(a008);``, ...).  :func:`vector_function` rewrites that body with every local a
``__m256d`` (GCC's and Clang's vector type of four doubles, on which ``+ - * /`` and unary
``-`` act lane by lane): four configurations per instruction, lane ``k`` holding row ``k`` of a
group of four.  Constants are broadcast, the inputs read from ``Q[i]`` (``q[i]`` of the four
rows, struct-of-arrays) and, for placements as inputs, broadcast from ``p``; ``sqrt`` is the
correctly rounded vector instruction, ``sin`` and ``cos`` a lane-wise Cephes-style polynomial
(within an ulp or two of the C library's; arguments beyond :data:`REDUCTION_LIMIT`, infinite or
NaN go through the C library lane by lane).  Any statement it does not recognise leaves the
library without the vector path (:func:`vector_function` returns None).

The rewritten function and its helpers are compiled for AVX2 and FMA only (``#pragma GCC target``
/ Clang's ``#pragma clang attribute``), the rest of the library is not: the scalar function
and the single call are unchanged, and a library whose CPU lacks the features (checked once in C
with ``__builtin_cpu_supports``) runs the scalar rows.  :func:`cpu_features` asks the compiler
what ``-march=native`` enables here; the features go into the cache key.
"""

from __future__ import annotations

import functools
import os
import platform
import re
import subprocess

__all__ = [
    "ENV",
    "LANES",
    "REDUCTION_LIMIT",
    "cpu_features",
    "section",
    "vector_function",
    "wanted",
]

#: Configurations per vector (four doubles in a 256-bit register).
LANES = 4

#: ``PVOSIMR_SIMD=0`` (or ``off``/``no``/``false``) builds the scalar path only.
ENV = "PVOSIMR_SIMD"

#: ``|x|`` up to which the vector sin/cos reduce the argument themselves (Cephes' three-part
#: π/4, exact while ``x·4/π`` needs at most about 29 bits); beyond it, the C library's.
REDUCTION_LIMIT = 1.0e8

#: The instruction-set features the vector path is compiled for.
FEATURES = ("avx2", "fma")


def wanted(simd: bool | None) -> bool:
    """Whether the build should try the vector path: ``simd`` if given, else not when
    ``$PVOSIMR_SIMD`` says off."""
    if simd is not None:
        return bool(simd)
    return os.environ.get(ENV, "").strip().lower() not in {"0", "off", "no", "false"}


@functools.lru_cache(maxsize=8)
def cpu_features(compiler: tuple[str, ...]) -> tuple[str, ...]:
    """:data:`FEATURES` if the compiler's ``-march=native`` enables all of them on this
    machine (x86-64 only), else ``()``."""
    if platform.machine().lower() not in {"x86_64", "amd64"}:
        return ()
    try:
        out = subprocess.run(
            [*compiler, "-march=native", "-dM", "-E", "-x", "c", os.devnull],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return ()
    macros = set(re.findall(r"#define (__\w+__) ", out.stdout))
    found = all(f"__{name.upper()}__" in macros for name in FEATURES)
    return FEATURES if out.returncode == 0 and found else ()


_LOCAL = r"a\d+"
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_OPERAND = rf"{_LOCAL}|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"  # a local or a literal >= 0
_STATEMENTS = [  # (pattern of one line of CasADi's body, its vector form)
    (re.compile(rf"  (casadi_real (?:{_LOCAL}, )*{_LOCAL};)"), None),
    (re.compile(rf"  ({_LOCAL})=({_NUMBER});"), r"  \1=_mm256_set1_pd(\2);"),
    (re.compile(rf"  ({_LOCAL})=arg\[0\]\? arg\[0\]\[(\d+)\] : 0;"), r"  \1=Q[\2];"),
    (
        re.compile(rf"  ({_LOCAL})=arg\[1\]\? arg\[1\]\[(\d+)\] : 0;"),
        r"  \1=_mm256_set1_pd(p[\2]);",
    ),
    (re.compile(rf"  ({_LOCAL})=\(({_OPERAND})([-+*/])({_OPERAND})\);"), r"  \1=(\2\3\4);"),
    (re.compile(rf"  ({_LOCAL})=\(-({_LOCAL})\);"), r"  \1=(-\2);"),
    (re.compile(rf"  ({_LOCAL})=(sin|cos|sqrt|fabs|casadi_sq)\(({_LOCAL})\);"), r"  \1=pv_\2(\3);"),
    (re.compile(rf"  if \(res\[0\]!=0\) res\[0\]\[(\d+)\]=({_LOCAL});"), r"  R[\1]=\2;"),
]


def vector_function(source: str, fname: str, n_in: int) -> str | None:
    """C of ``static void pvosimr_simd_f(const __m256d* Q, const double* p, __m256d* R)``: the
    body of CasADi's function ``fname`` in ``source`` on four lanes, or None where the body
    holds anything :data:`_STATEMENTS` does not know (work arrays, branches, other
    functions)."""
    header = re.search(r"/\* " + re.escape(fname) + r":.*\*/\nstatic int (casadi_f\d+)\(", source)
    if header is None or n_in not in (1, 2):
        return None
    start = source.index("{\n", header.end()) + 2
    end = source.index("\n  return 0;\n}\n", start)
    lines = []
    for line in source[start:end].split("\n"):
        for pattern, vector in _STATEMENTS:
            match = pattern.fullmatch(line)
            if match is not None:
                if vector is None:  # declarations
                    lines.append("  __m256d " + match.group(1).removeprefix("casadi_real "))
                else:
                    lines.append(match.expand(vector))
                break
        else:
            return None
    body = "\n".join(lines)
    return f"""
static void pvosimr_simd_f(const __m256d* Q, const double* p, __m256d* R) {{
  (void)p;
{body}
}}
"""


_HELPERS = f"""
static inline __m256d pv_sqrt(__m256d x) {{ return _mm256_sqrt_pd(x); }}
static inline __m256d pv_fabs(__m256d x) {{ return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x); }}
static inline __m256d pv_casadi_sq(__m256d x) {{ return x * x; }}

/* sin and cos of four lanes (Cephes' sin.c: x reduced by a multiple j of pi/4 in three parts,
   a degree-13 or degree-14 polynomial on [-pi/4, pi/4]); lanes beyond {REDUCTION_LIMIT!r}, infinite
   or NaN through the C library. */
static inline __m256d pv_sincos_poly(__m256d x, int want_cos) {{
  const __m256d zero = _mm256_setzero_pd(), sign_bit = _mm256_set1_pd(-0.0);
  __m256d ax = _mm256_andnot_pd(sign_bit, x);
  __m256d y = _mm256_floor_pd(ax * _mm256_set1_pd(1.27323954473516268615));
  __m256d odd = y - _mm256_set1_pd(2.0) * _mm256_floor_pd(y * _mm256_set1_pd(0.5));
  __m256d j, z, zz, ps, pc, use_c, neg;
  y = y + odd;                                                   /* even: 0, 2, 4, 6 mod 8 */
  j = y - _mm256_set1_pd(8.0) * _mm256_floor_pd(y * _mm256_set1_pd(0.125));
  z = ((ax - y * _mm256_set1_pd(7.85398125648498535156e-1))
       - y * _mm256_set1_pd(3.77489470793079817668e-8))
      - y * _mm256_set1_pd(2.69515142907905952645e-15);
  zz = z * z;
  ps = _mm256_set1_pd(1.58962301576546568060e-10);
  ps = ps * zz + _mm256_set1_pd(-2.50507477628578072866e-8);
  ps = ps * zz + _mm256_set1_pd(2.75573136213857245213e-6);
  ps = ps * zz + _mm256_set1_pd(-1.98412698295895385996e-4);
  ps = ps * zz + _mm256_set1_pd(8.33333333332211858878e-3);
  ps = ps * zz + _mm256_set1_pd(-1.66666666666666307295e-1);
  ps = z + z * (zz * ps);
  pc = _mm256_set1_pd(-1.13585365213876817300e-11);
  pc = pc * zz + _mm256_set1_pd(2.08757008419747316778e-9);
  pc = pc * zz + _mm256_set1_pd(-2.75573141792967388112e-7);
  pc = pc * zz + _mm256_set1_pd(2.48015872888517045348e-5);
  pc = pc * zz + _mm256_set1_pd(-1.38888888888730564116e-3);
  pc = pc * zz + _mm256_set1_pd(4.16666666666665929218e-2);
  pc = (_mm256_set1_pd(1.0) - zz * _mm256_set1_pd(0.5)) + zz * zz * pc;
  /* j = 2 or 6: the other polynomial; sin negative for j >= 4 (x >= 0), cos for j = 2, 4 */
  use_c = _mm256_or_pd(_mm256_cmp_pd(j, _mm256_set1_pd(2.0), _CMP_EQ_OQ),
                       _mm256_cmp_pd(j, _mm256_set1_pd(6.0), _CMP_EQ_OQ));
  if (want_cos) {{
    neg = _mm256_or_pd(_mm256_cmp_pd(j, _mm256_set1_pd(2.0), _CMP_EQ_OQ),
                       _mm256_cmp_pd(j, _mm256_set1_pd(4.0), _CMP_EQ_OQ));
    return _mm256_xor_pd(_mm256_blendv_pd(pc, ps, use_c), _mm256_and_pd(neg, sign_bit));
  }}
  neg = _mm256_xor_pd(_mm256_cmp_pd(j, _mm256_set1_pd(4.0), _CMP_GE_OQ),
                      _mm256_cmp_pd(x, zero, _CMP_LT_OQ));
  return _mm256_xor_pd(_mm256_blendv_pd(ps, pc, use_c), _mm256_and_pd(neg, sign_bit));
}}

static __attribute__((noinline)) __m256d pv_libm(__m256d x, int want_cos) {{
  double v[4];
  int k;
  _mm256_storeu_pd(v, x);
  for (k = 0; k < 4; ++k) v[k] = want_cos ? cos(v[k]) : sin(v[k]);
  return _mm256_loadu_pd(v);
}}

static inline int pv_reducible(__m256d x) {{
  __m256d ax = _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
  __m256d within = _mm256_cmp_pd(ax, _mm256_set1_pd({REDUCTION_LIMIT!r}), _CMP_LE_OQ);
  return _mm256_movemask_pd(within) == 15;  /* false for NaN */
}}

static inline __m256d pv_sin(__m256d x) {{
  return pv_reducible(x) ? pv_sincos_poly(x, 0) : pv_libm(x, 0);
}}

static inline __m256d pv_cos(__m256d x) {{
  return pv_reducible(x) ? pv_sincos_poly(x, 1) : pv_libm(x, 1);
}}
"""


def section(function: str, nq: int, n_out: int) -> str:
    """The vector path of a library: :func:`vector_function`'s ``function``, its helpers and
    ``pvosimr_simd_rows(qs, p, out, check)``, which evaluates the four rows at ``qs`` into
    ``out`` and returns 0, or 1 where a row fails the check of ``q`` or has a non-finite output
    (nothing is reported: the caller runs those rows through the scalar function, which
    names the failure).  Compiled for :data:`FEATURES`; ``pvosimr_simd_usable()`` says whether
    this CPU has them.  Needs ``pvosimr_check_q`` defined before it."""
    target = ",".join(FEATURES)
    supports = " && ".join(f'__builtin_cpu_supports("{name}")' for name in FEATURES)
    stores = " ".join(f"out[{k * n_out} + i] = v[{k}];" for k in range(LANES))
    return f"""
/* ---- vector path: {LANES} configurations per instruction ({target}) ---- */
#include <immintrin.h>
static int pvosimr_simd_usable(void) {{ return {supports}; }}
#if defined(__clang__)
#pragma clang attribute push (__attribute__((target("{target}"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("{target}")
#endif
{_HELPERS}{function}
static int pvosimr_simd_rows(const casadi_real* qs, const casadi_real* p, casadi_real* out,
                             int check) {{
  __m256d Q[{nq}], R[{n_out}], bad = _mm256_setzero_pd();
  double v[{LANES}];
  casadi_int i;
  int k;
  if (check) for (k = 0; k < {LANES}; ++k) if (pvosimr_check_q(qs + k * {nq})) return 1;
  for (i = 0; i < {nq}; ++i)
    Q[i] = _mm256_set_pd(qs[{3 * nq} + i], qs[{2 * nq} + i], qs[{nq} + i], qs[i]);
  pvosimr_simd_f(Q, p, R);
  for (i = 0; i < {n_out}; ++i) {{  /* x - x is 0 exactly where x is finite */
    bad = _mm256_or_pd(bad, _mm256_cmp_pd(R[i] - R[i], _mm256_setzero_pd(), _CMP_NEQ_UQ));
    _mm256_storeu_pd(v, R[i]);
    {stores}
  }}
  return _mm256_movemask_pd(bad) != 0;
}}
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
"""
