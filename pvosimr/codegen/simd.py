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
_WIDTH = {
    4: """typedef __m256d pv_t;
typedef __m256d pv_mask;
static inline pv_t pv_splat(double x) { return _mm256_set1_pd(x); }
static inline pv_t pv_sqrt(pv_t x) { return _mm256_sqrt_pd(x); }
static inline pv_t pv_fabs(pv_t x) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x); }
static inline pv_t pv_floor(pv_t x) { return _mm256_floor_pd(x); }
#define pv_cmp(x, c, op) _mm256_cmp_pd((x), pv_splat(c), (op))
static inline pv_mask pv_or(pv_mask a, pv_mask b) { return _mm256_or_pd(a, b); }
static inline pv_mask pv_xor(pv_mask a, pv_mask b) { return _mm256_xor_pd(a, b); }
static inline pv_t pv_blend(pv_t a, pv_t b, pv_mask m) { return _mm256_blendv_pd(a, b, m); }
static inline pv_t pv_flip(pv_t x, pv_mask m) {
  return _mm256_xor_pd(x, _mm256_and_pd(m, _mm256_set1_pd(-0.0)));
}
static inline int pv_all(pv_mask m) { return _mm256_movemask_pd(m) == 15; }
static inline int pv_nonfinite(pv_t x) {  /* x - x is 0 exactly where x is finite */
  return _mm256_movemask_pd(_mm256_cmp_pd(x - x, pv_splat(0.0), _CMP_NEQ_UQ));
}
static inline void pv_store(double* v, pv_t x) { _mm256_storeu_pd(v, x); }
static inline pv_t pv_load(const double* v) { return _mm256_loadu_pd(v); }
/* a[j] holds entry j of the 4 rows, one per lane: row k's 4 entries to out + k * stride */
static inline void pv_store_rows(const pv_t* a, double* out, long long stride) {
  const __m256d t0 = _mm256_unpacklo_pd(a[0], a[1]), t1 = _mm256_unpackhi_pd(a[0], a[1]);
  const __m256d t2 = _mm256_unpacklo_pd(a[2], a[3]), t3 = _mm256_unpackhi_pd(a[2], a[3]);
  _mm256_storeu_pd(out, _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(out + stride, _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(out + 2 * stride, _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(out + 3 * stride, _mm256_permute2f128_pd(t1, t3, 0x31));
}
""",
    8: """typedef __m512d pv_t;
typedef __mmask8 pv_mask;
static inline pv_t pv_splat(double x) { return _mm512_set1_pd(x); }
static inline pv_t pv_sqrt(pv_t x) { return _mm512_sqrt_pd(x); }
static inline pv_t pv_fabs(pv_t x) { return _mm512_abs_pd(x); }
static inline pv_t pv_floor(pv_t x) { return _mm512_roundscale_pd(x, _MM_FROUND_TO_NEG_INF); }
#define pv_cmp(x, c, op) _mm512_cmp_pd_mask((x), pv_splat(c), (op))
static inline pv_mask pv_or(pv_mask a, pv_mask b) { return (pv_mask)(a | b); }
static inline pv_mask pv_xor(pv_mask a, pv_mask b) { return (pv_mask)(a ^ b); }
static inline pv_t pv_blend(pv_t a, pv_t b, pv_mask m) { return _mm512_mask_blend_pd(m, a, b); }
static inline pv_t pv_flip(pv_t x, pv_mask m) {
  return _mm512_castsi512_pd(_mm512_mask_xor_epi64(_mm512_castpd_si512(x), m,
      _mm512_castpd_si512(x), _mm512_set1_epi64((long long)0x8000000000000000ULL)));
}
static inline int pv_all(pv_mask m) { return m == 0xFF; }
static inline int pv_nonfinite(pv_t x) {  /* x - x is 0 exactly where x is finite */
  return _mm512_cmp_pd_mask(x - x, pv_splat(0.0), _CMP_NEQ_UQ) != 0;
}
static inline void pv_store(double* v, pv_t x) { _mm512_storeu_pd(v, x); }
static inline pv_t pv_load(const double* v) { return _mm512_loadu_pd(v); }
/* a[j] holds entry j of the 8 rows, one per lane: row k's 8 entries to out + k * stride.
   An 8 x 8 transpose: t[2j] and t[2j + 1] pair entries 2j and 2j + 1 of the even and of the
   odd lanes; u[4j..4j + 3] hold entries 4j to 4j + 3 of lanes 0 and 4, 2 and 6, 1 and 5,
   3 and 7; the last shuffles gather the 8 entries of one lane */
static inline void pv_store_rows(const pv_t* a, double* out, long long stride) {
  __m512d t[8], u[8];
  int j;
  for (j = 0; j < 4; ++j) {
    t[2 * j] = _mm512_unpacklo_pd(a[2 * j], a[2 * j + 1]);
    t[2 * j + 1] = _mm512_unpackhi_pd(a[2 * j], a[2 * j + 1]);
  }
  for (j = 0; j < 2; ++j) {
    u[4 * j] = _mm512_shuffle_f64x2(t[4 * j], t[4 * j + 2], 0x88);
    u[4 * j + 1] = _mm512_shuffle_f64x2(t[4 * j], t[4 * j + 2], 0xDD);
    u[4 * j + 2] = _mm512_shuffle_f64x2(t[4 * j + 1], t[4 * j + 3], 0x88);
    u[4 * j + 3] = _mm512_shuffle_f64x2(t[4 * j + 1], t[4 * j + 3], 0xDD);
  }
  _mm512_storeu_pd(out, _mm512_shuffle_f64x2(u[0], u[4], 0x88));
  _mm512_storeu_pd(out + 4 * stride, _mm512_shuffle_f64x2(u[0], u[4], 0xDD));
  _mm512_storeu_pd(out + 2 * stride, _mm512_shuffle_f64x2(u[1], u[5], 0x88));
  _mm512_storeu_pd(out + 6 * stride, _mm512_shuffle_f64x2(u[1], u[5], 0xDD));
  _mm512_storeu_pd(out + stride, _mm512_shuffle_f64x2(u[2], u[6], 0x88));
  _mm512_storeu_pd(out + 5 * stride, _mm512_shuffle_f64x2(u[2], u[6], 0xDD));
  _mm512_storeu_pd(out + 3 * stride, _mm512_shuffle_f64x2(u[3], u[7], 0x88));
  _mm512_storeu_pd(out + 7 * stride, _mm512_shuffle_f64x2(u[3], u[7], 0xDD));
}
""",
}

_MATH = f"""
static inline pv_t pv_casadi_sq(pv_t x) {{ return x * x; }}
#define pv_eq(x, c) pv_cmp(x, c, _CMP_EQ_OQ)
#define pv_ge(x, c) pv_cmp(x, c, _CMP_GE_OQ)
#define pv_le(x, c) pv_cmp(x, c, _CMP_LE_OQ)
#define pv_negative(x) pv_cmp(x, 0.0, _CMP_LT_OQ)

/* sin and cos of every lane (Cephes' sin.c: x reduced by a multiple j of pi/4 in three parts,
   a polynomial of sin or cos on [-pi/4, pi/4]); a vector with a lane beyond {REDUCTION_LIMIT!r},
   infinite or NaN through the C library, lane by lane. */
static inline pv_t pv_sincos_poly(pv_t x, int want_cos) {{
  pv_t ax = pv_fabs(x);
  pv_t y = pv_floor(ax * pv_splat(1.27323954473516268615));
  pv_t odd = y - pv_splat(2.0) * pv_floor(y * pv_splat(0.5));
  pv_t j, z, zz, ps, pc;
  pv_mask use_c, neg;
  y = y + odd;                                                   /* even: 0, 2, 4, 6 mod 8 */
  j = y - pv_splat(8.0) * pv_floor(y * pv_splat(0.125));
  z = ((ax - y * pv_splat(7.85398125648498535156e-1)) - y * pv_splat(3.77489470793079817668e-8))
      - y * pv_splat(2.69515142907905952645e-15);
  zz = z * z;
  ps = pv_splat(1.58962301576546568060e-10);
  ps = ps * zz + pv_splat(-2.50507477628578072866e-8);
  ps = ps * zz + pv_splat(2.75573136213857245213e-6);
  ps = ps * zz + pv_splat(-1.98412698295895385996e-4);
  ps = ps * zz + pv_splat(8.33333333332211858878e-3);
  ps = ps * zz + pv_splat(-1.66666666666666307295e-1);
  ps = z + z * (zz * ps);
  pc = pv_splat(-1.13585365213876817300e-11);
  pc = pc * zz + pv_splat(2.08757008419747316778e-9);
  pc = pc * zz + pv_splat(-2.75573141792967388112e-7);
  pc = pc * zz + pv_splat(2.48015872888517045348e-5);
  pc = pc * zz + pv_splat(-1.38888888888730564116e-3);
  pc = pc * zz + pv_splat(4.16666666666665929218e-2);
  pc = (pv_splat(1.0) - zz * pv_splat(0.5)) + zz * zz * pc;
  /* j = 2 or 6: the other polynomial; sin negative for j >= 4 (x >= 0), cos for j = 2, 4 */
  use_c = pv_or(pv_eq(j, 2.0), pv_eq(j, 6.0));
  if (want_cos) {{
    neg = pv_or(pv_eq(j, 2.0), pv_eq(j, 4.0));
    return pv_flip(pv_blend(pc, ps, use_c), neg);
  }}
  neg = pv_xor(pv_ge(j, 4.0), pv_negative(x));
  return pv_flip(pv_blend(ps, pc, use_c), neg);
}}

static __attribute__((noinline)) pv_t pv_libm(pv_t x, int want_cos) {{
  double v[sizeof(pv_t) / sizeof(double)];
  unsigned k;
  pv_store(v, x);
  for (k = 0; k < sizeof(pv_t) / sizeof(double); ++k) v[k] = want_cos ? cos(v[k]) : sin(v[k]);
  return pv_load(v);
}}

static inline int pv_reducible(pv_t x) {{  /* false for NaN */
  return pv_all(pv_le(pv_fabs(x), {REDUCTION_LIMIT!r}));
}}

static inline pv_t pv_sin(pv_t x) {{
  return pv_reducible(x) ? pv_sincos_poly(x, 0) : pv_libm(x, 0);
}}

static inline pv_t pv_cos(pv_t x) {{
  return pv_reducible(x) ? pv_sincos_poly(x, 1) : pv_libm(x, 1);
}}
"""


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
    return f"""
/* ---- the single call on {target} (the plain function where the CPU lacks them) ---- */
static int pvosimr_native_usable(void) {{
  static int usable = -1;
  if (usable < 0) usable = {supports};
  return usable;
}}
#if defined(__clang__)
#pragma clang attribute push (__attribute__((target("{target}"))), apply_to = function)
#pragma clang fp contract(fast) /* GCC's default: a product and a sum in two statements fuse */
#else
#pragma GCC push_options
#pragma GCC target("{target}")
#endif
{code}#if defined(__clang__)
#pragma clang fp contract(on)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
"""


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
    tail = (
        f"  for (; i < {n_out}; ++i) {{\n    double v[{lanes}];\n"
        f"    bad |= pv_nonfinite(R[i]);\n    pv_store(v, R[i]);\n    {stores}\n  }}\n"
        if n_out % lanes
        else ""
    )
    return f"""
/* ---- vector path: {lanes} configurations per instruction ({target}) ---- */
#include <immintrin.h>
static int pvosimr_simd_usable(void) {{ return {supports}; }}
#if defined(__clang__)
#pragma clang attribute push (__attribute__((target("{target}"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("{target}")
#endif
{_WIDTH[lanes]}{_MATH}{function}
static int pvosimr_simd_rows(const casadi_real* qs, const casadi_real* p, casadi_real* out,
                             int check, void* scratch) {{
  pv_t* Q = (pv_t*)scratch;
  pv_t* R = Q + {nq};
  casadi_int i;
  int k, bad = 0;
  if (check) for (k = 0; k < {lanes}; ++k) if (pvosimr_check_q(qs + k * {nq})) return 1;
  for (i = 0; i < {nq}; ++i) Q[i] = {prefix}_set_pd({gather});
  pvosimr_simd_f(Q, p, R);
  /* {lanes} entries of every row at a time, transposed in registers: whole vectors stored */
  for (i = 0; i + {lanes} <= {n_out}; i += {lanes}) {{
    for (k = 0; k < {lanes}; ++k) bad |= pv_nonfinite(R[i + k]);
    pv_store_rows(R + i, out + i, {n_out});
  }}
{tail}  return bad != 0;
}}
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
"""
