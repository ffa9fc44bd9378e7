"""The C that :mod:`pvosimr.codegen.build` appends to CasADi's generated function.

One library holds one CasADi function ``F`` (inputs ``q`` and, with placements as inputs, ``p``;
one dense output: ``G`` or ``dG``) and three entry points:

- ``pvosimr_eval(q, p, out, w, iw, check)``: check ``q`` (and ``p``), evaluate ``F`` at
  ``N(q)`` (the unit-part rule of :mod:`pvosimr.coordinates`: a unit part whose squared norm
  is not within :data:`~pvosimr.coordinates.AS_GIVEN_TOLERANCE` of 1 divided by its norm, in
  a copy), check ``out`` finite;
- ``pvosimr_eval_batch(qs, B, p, out, threads, check, bad)``: the same for ``B`` rows of ``qs``
  (row-major, ``nq`` each) with one ``p`` on at most ``threads`` workers, each a POSIX thread
  with its own work arrays, taking blocks of :data:`BLOCK` rows in row order.  The calling
  thread is the first; after its first block it starts the others that finish the blocks left
  soonest at that block's pace, counting :data:`SPAWN_SECONDS` a thread (``threads == 1``, or a
  small batch, creates no thread).  ``*bad`` is the first failing row (``p`` is checked once,
  before the rows: a bad ``p`` is row 0).  With the
  vector path (:mod:`pvosimr.codegen.simd`) and a CPU that has its features, whole groups of
  4 or 8 rows (from row 0) whose unit parts are used as given go through
  ``pvosimr_simd_rows``, the rest, and any group with a failing row, through ``pvosimr_eval``;
- ``pvosimr_normalize(qs, B, out)``: ``N(q)`` of ``B`` rows, unchecked, for a caller in C that
  takes q off the sphere (the JAX FFI handler): the rule in one place;
- with Python's headers, a CPython extension function ``delassus(q)`` for the single call
  (:func:`pvosimr.codegen.cpython_source.extension_source`).

A function with a weight input ``W`` (the gradient of ``⟨W, G⟩``, ``n_w = m·m`` numbers, last
input of ``F``) takes it after ``p``: ``pvosimr_eval(q, p, W, out, w, iw, check)`` and
``pvosimr_eval_batch(qs, B, p, Ws, w_stride, out, threads, check, bad)``, row ``r`` reading
``Ws + r·w_stride`` (``w_stride`` 0: one ``W`` for every row); the extension's single call is
``vjp(q, W)``.  Its library also has ``pvosimr_to_coordinates`` (:data:`COORDINATES_C`), which
maps the tangent gradient to q's coordinates for the front ends.  The other libraries' C is
unchanged.

Every entry point returns :data:`OK`, :data:`BAD_Q` (``q`` beyond the model's range, not
finite or not normalized), :data:`BAD_W` (``W`` not finite), :data:`BAD_P` (a placement in
``p`` is not a rigid transform: not finite, a rotation not orthonormal within
:data:`pvosimr.constraints.ORTHONORMAL_TOLERANCE`, or a reflection, the check of a
``pin.SE3`` placement), :data:`NON_FINITE` (the output is not finite), :data:`EVAL_FAILED`
(``F`` reported a failure) or :data:`NO_MEMORY`.
"""

from __future__ import annotations

from ..checks import NORMALIZED_TOLERANCE
from ..constraints import ORTHONORMAL_TOLERANCE
from ..coordinates import AS_GIVEN_TOLERANCE
from .simd import FEATURES, scratch_bytes

__all__ = [
    "BAD_P",
    "BAD_Q",
    "BAD_W",
    "COORDINATES_C",
    "EVAL_FAILED",
    "FINITE_C",
    "NON_FINITE",
    "NO_MEMORY",
    "OK",
    "SPAWN_SECONDS",
    "WRAPPER_VERSION",
    "entry_points",
]

#: Bumped whenever the appended C or the build command changes meaning.
WRAPPER_VERSION = "13"

OK, BAD_Q, NON_FINITE, EVAL_FAILED, NO_MEMORY, BAD_W = 0, 1, 2, 3, 4, 5
#: A placement of ``p`` that is not a rigid transform (6 is the export's BAD_ARGUMENT).
BAD_P = 7

_FLUSH = """#if defined(__x86_64__) || defined(__SSE2__)
#include <xmmintrin.h>
/* Subnormal numbers flushed to zero (FTZ and DAZ) while the function runs, the caller's mode
   restored after: on long chains the coupling between far-apart constraints underflows, and
   x86 computes on subnormal numbers many times slower.  An entry changes by less than the
   smallest normal double, 2.2e-308. */
#define PVOSIMR_FLUSH_BEGIN const unsigned int pvosimr_csr = _mm_getcsr(); \\
  _mm_setcsr(pvosimr_csr | 0x8040u);
#define PVOSIMR_FLUSH_END _mm_setcsr(pvosimr_csr);
#else
#define PVOSIMR_FLUSH_BEGIN
#define PVOSIMR_FLUSH_END
#endif
"""

#: C of ``pvosimr_finite(x, n)``: whether the ``n`` doubles at ``x`` are all finite.
FINITE_C = """
/* Whether all n numbers of x are finite, read as integers: a double is infinite or NaN exactly
   where its 11 exponent bits are all ones, and only there does adding one to them carry into
   the sign bit.  Branch-free, two numbers to a 16-byte vector (a width every x86-64 and ARMv8
   CPU has): a large model's output holds tens of thousands of numbers, and a compare and
   branch for each is a visible part of the call. */
#define PVOSIMR_EXPONENT 0x7ff0000000000000ULL
#define PVOSIMR_EXPONENT_ONE 0x0010000000000000ULL
typedef unsigned long long pvosimr_u2 __attribute__((vector_size(16), aligned(8), may_alias));
static int pvosimr_finite(const casadi_real* x, casadi_int n) {
  pvosimr_u2 a = {0, 0}, b = {0, 0};
  unsigned long long t, one = 0;
  casadi_int i, groups = n - n % 4;
  for (i = 0; i < groups; i += 4) {
    a |= (*(const pvosimr_u2*)(x + i) & PVOSIMR_EXPONENT) + PVOSIMR_EXPONENT_ONE;
    b |= (*(const pvosimr_u2*)(x + i + 2) & PVOSIMR_EXPONENT) + PVOSIMR_EXPONENT_ONE;
  }
  for (i = groups; i < n; ++i) {
    __builtin_memcpy(&t, x + i, sizeof t);
    one |= (t & PVOSIMR_EXPONENT) + PVOSIMR_EXPONENT_ONE;
  }
  a |= b;
  return !((a[0] | a[1] | one) >> 63);
}
"""

#: Threads beyond this are not used (the table of workers lives on the stack).
MAX_THREADS = 256

#: What a batch's caller counts for starting and joining a thread (seconds): after its first
#: block it starts the threads that, at that block's pace, finish the batch soonest, none for a
#: small batch.  The C macro ``PVOSIMR_SPAWN_SECONDS`` (``-D`` in the flags) replaces it.
SPAWN_SECONDS = 1e-4

#: Rows a batch's worker takes at a time: a multiple of every width of vector lanes, so that
#: groups of lanes always start at multiples of the lanes (a row's matrix does not depend on
#: the threads).
BLOCK = 8
assert all(BLOCK % lanes == 0 for lanes in FEATURES)

#: C of ``pvosimr_to_coordinates(plan, B, qs, q_hats, gs, outs, tolerance)``: for each of ``B``
#: rows, the tangent gradient ``g`` (nv) in q's coordinates (nq) at ``q`` (as given) and its
#: normalised ``q_hat``: ``T (Tᵀ T)⁻¹ g`` at ``q_hat``
#: (:func:`pvosimr.coordinates.tangent_to_coordinates` is its reference), each unit part's rows
#: then divided by that part's norm in ``q`` (1 where its squared norm is within ``tolerance``
#: of 1).  ``plan`` is :meth:`~pvosimr.coordinates.CoordinatePlan.packed`.  The JAX handler
#: and the PyTorch ops call it, one map for both.
COORDINATES_C = """
static double pvosimr_divisor(const casadi_real* u, long long length, double tolerance) {
  double squared = 0.0;
  long long k;
  for (k = 0; k < length; ++k) squared += u[k] * u[k];
  return fabs(squared - 1.0) <= tolerance ? 1.0 : sqrt(squared);
}

CASADI_SYMBOL_EXPORT void pvosimr_to_coordinates(const long long* plan, long long B,
                                                 const casadi_real* qs,
                                                 const casadi_real* q_hats,
                                                 const casadi_real* gs, casadi_real* outs,
                                                 double tolerance) {
  /* plan: nq, nv, then sections of a count and its records: identity (row, column),
     quaternions (x y z w rows, 3 columns), se3 (3 rows, 3 columns, the quaternion's rows),
     complexes (cos and sin rows, a column), se2 (2 rows, 2 columns, the angle's 2 rows),
     unit parts (start, length) */
  static const int width[6] = {2, 7, 10, 3, 6, 2};
  const long long nq = plan[0], nv = plan[1];
  const long long* section[6];
  long long count[6], b, k, i;
  const long long* at = plan + 2;
  for (k = 0; k < 6; ++k) {
    count[k] = *at++;
    section[k] = at;
    at += count[k] * width[k];
  }
  for (b = 0; b < B; ++b) {
    const casadi_real* q = qs + b * nq;
    const casadi_real* q_hat = q_hats + b * nq;
    const casadi_real* g = gs + b * nv;
    casadi_real* out = outs + b * nq;
    const long long* e;
    for (i = 0; i < nq; ++i) out[i] = 0.0;
    for (k = 0, e = section[0]; k < count[0]; ++k, e += 2) out[e[0]] = g[e[1]];
    /* 4 T_Q g = 2 [w 1 + v× ; -v^T] g */
    for (k = 0, e = section[1]; k < count[1]; ++k, e += 7) {
      const double x = q_hat[e[0]], y = q_hat[e[1]], z = q_hat[e[2]], w = q_hat[e[3]];
      const double u = g[e[4]], v = g[e[5]], t = g[e[6]];
      out[e[0]] = 2.0 * (w * u - z * v + y * t);
      out[e[1]] = 2.0 * (z * u + w * v - x * t);
      out[e[2]] = 2.0 * (-y * u + x * v + w * t);
      out[e[3]] = 2.0 * (-x * u - y * v - z * t);
    }
    /* the translation: R(Q) g */
    for (k = 0, e = section[2]; k < count[2]; ++k, e += 10) {
      const double x = q_hat[e[6]], y = q_hat[e[7]], z = q_hat[e[8]], w = q_hat[e[9]];
      const double u = g[e[3]], v = g[e[4]], t = g[e[5]];
      const double xx = 2 * x * x, yy = 2 * y * y, zz = 2 * z * z;
      const double xy = 2 * x * y, xz = 2 * x * z, yz = 2 * y * z;
      const double xw = 2 * x * w, yw = 2 * y * w, zw = 2 * z * w;
      out[e[0]] = (1 - yy - zz) * u + (xy - zw) * v + (xz + yw) * t;
      out[e[1]] = (xy + zw) * u + (1 - xx - zz) * v + (yz - xw) * t;
      out[e[2]] = (xz - yw) * u + (yz + xw) * v + (1 - xx - yy) * t;
    }
    /* (cos, sin) turned: (-sin, cos) g */
    for (k = 0, e = section[3]; k < count[3]; ++k, e += 3) {
      out[e[0]] = -q_hat[e[1]] * g[e[2]];
      out[e[1]] = q_hat[e[0]] * g[e[2]];
    }
    /* the planar translation: R(theta) g */
    for (k = 0, e = section[4]; k < count[4]; ++k, e += 6) {
      const double c = q_hat[e[4]], s = q_hat[e[5]], u = g[e[2]], v = g[e[3]];
      out[e[0]] = c * u - s * v;
      out[e[1]] = s * u + c * v;
    }
    for (k = 0, e = section[5]; k < count[5]; ++k, e += 2) {
      const double d = pvosimr_divisor(q + e[0], e[1], tolerance);
      for (i = 0; i < e[1]; ++i) out[e[0] + i] /= d;
    }
  }
}
"""


def _squared(start: int, length: int) -> str:
    """C of a unit part's squared norm, summed in index order
    (:func:`pvosimr.coordinates.squared_norm`)."""
    return " + ".join(f"q[{start + k}]*q[{start + k}]" for k in range(length))


def _q_check(nq: int, parts: list[tuple[int, int]], q_bound: float) -> str:
    """``pvosimr_check_q``: every entry within ``q_bound``, every unit-norm part normalized
    to the tolerance of ``pin.isNormalized``; ``pvosimr_unit_q(q, copy)``: ``N(q)``, the
    unit-part rule (:mod:`pvosimr.coordinates`), ``q`` itself where every part is used as
    given, else ``copy`` (nq numbers) holding it; ``pvosimr_as_given(q)``: whether it is
    ``q``."""
    norms, as_given, divide = [], [], []
    for start, length in parts:
        squared = _squared(start, length)
        norms.append(f"  if (!(fabs(sqrt({squared}) - 1.0) < {NORMALIZED_TOLERANCE!r})) return 1;")
        as_given.append(f"  if (!(fabs({squared} - 1.0) <= {AS_GIVEN_TOLERANCE!r})) return 0;")
        divide.append(
            f"  s = {squared};\n"
            f"  if (!(fabs(s - 1.0) <= {AS_GIVEN_TOLERANCE!r})) {{\n"
            f"    s = sqrt(s);\n"
            f"    for (i = {start}; i < {start + length}; ++i) copy[i] = q[i] / s;\n"
            "  }"
        )
    return f"""
static int pvosimr_check_q(const casadi_real* q) {{
  casadi_int i;
  for (i = 0; i < {nq}; ++i) if (!(fabs(q[i]) <= {q_bound!r})) return 1;
{chr(10).join(norms)}
  return 0;
}}

static int pvosimr_as_given(const casadi_real* q) {{
{chr(10).join(as_given)}
  return 1;
}}

static const casadi_real* pvosimr_unit_q(const casadi_real* q, casadi_real* copy) {{
  casadi_int i;
  double s;
  if (pvosimr_as_given(q)) return q;
  for (i = 0; i < {nq}; ++i) copy[i] = q[i];
{chr(10).join(divide)}
  (void)s;
  return copy;
}}

/* N(q) of B rows into out, unchecked (any non-zero norm; a zero part gives NaN): the rule for
   a caller in C that takes q off the sphere (the JAX FFI handler).  Whether any row changed. */
CASADI_SYMBOL_EXPORT int pvosimr_normalize(const casadi_real* qs, long long B, casadi_real* out) {{
  long long b;
  casadi_int i;
  int changed = 0;
  for (b = 0; b < B; ++b) {{
    const casadi_real* q = qs + b * {nq};
    casadi_real* o = out + b * {nq};
    if (pvosimr_unit_q(q, o) == q) for (i = 0; i < {nq}; ++i) o[i] = q[i];
    else changed = 1;
  }}
  return changed;
}}
"""


#: C of ``pvosimr_check_p(p, n)``: whether the ``n`` placements of ``p`` (12 numbers each, R
#: column-major then t, :mod:`pvosimr.kinematics.placements`) are rigid transforms, as
#: :func:`pvosimr.constraints.check_placement` checks a ``pin.SE3``: finite, ``‖RᵀR − I‖``
#: (max norm) within the tolerance, ``det R > 0``.
CHECK_P_C = f"""
static int pvosimr_check_p(const casadi_real* p, long long n) {{
  long long j;
  int a, b, k;
  for (j = 0; j < n; ++j) {{
    const casadi_real* P = p + 12 * j;
    double det;
    for (k = 0; k < 12; ++k) if (!(fabs(P[k]) <= 1.7976931348623157e308)) return 1;
    for (a = 0; a < 3; ++a)
      for (b = 0; b < 3; ++b) {{
        const double d = P[3 * a] * P[3 * b] + P[3 * a + 1] * P[3 * b + 1]
                         + P[3 * a + 2] * P[3 * b + 2] - (a == b ? 1.0 : 0.0);
        if (!(fabs(d) <= {ORTHONORMAL_TOLERANCE!r})) return 1;
      }}
    det = P[0] * (P[4] * P[8] - P[5] * P[7]) - P[3] * (P[1] * P[8] - P[2] * P[7])
          + P[6] * (P[1] * P[5] - P[2] * P[4]);
    if (!(det > 0.0)) return 1;
  }}
  return 0;
}}
"""


def entry_points(
    fname: str,
    sizes: dict,
    parts: list[tuple[int, int]],
    q_bound: float,
    simd: str | None = None,
    native: str | None = None,
) -> str:
    """C for ``pvosimr_eval`` and ``pvosimr_eval_batch`` around the CasADi function ``fname``.

    ``sizes``: ``nq``, ``n_in`` (1 to 3), ``n_w`` (numbers in ``W``, 0 without it), ``n_out``
    (numbers in the output), ``sz_arg``, ``sz_res``, ``sz_w``, ``sz_iw`` (CasADi's work
    sizes).  ``parts`` are the ``(start,
    length)`` in ``q`` of the unit-norm parts, ``q_bound`` the model's range
    (:func:`pvosimr.checks.check_model`).  ``simd``: the vector path
    (:func:`pvosimr.codegen.simd.section`), which the batch then runs on groups of
    ``sizes["simd_lanes"]`` rows where the CPU allows, or None (scalar rows only).
    ``native``: a copy of the function compiled for this CPU's fused multiply-adds
    (:func:`pvosimr.codegen.simd.on_native`), which every row then runs where the CPU has
    them, or None.
    """
    nq, n_out, n_w = sizes["nq"], sizes["n_out"], sizes.get("n_w", 0)
    has_p = sizes["n_in"] - (n_w > 0) == 2
    p_arg = "  arg[1] = p;\n" if has_p else "  (void)p;\n"
    n_placements = sizes.get("n_p", 0) // 12 if has_p else 0
    p_check = (
        f"  if (check && pvosimr_check_p(p, {n_placements})) return {BAD_P};\n" if has_p else ""
    )
    batch_p_check = (
        f"  if (check && pvosimr_check_p(p, {n_placements})) {{\n"
        "    *bad = 0;\n"
        f"    return {BAD_P};\n"
        "  }\n"
        if has_p
        else ""
    )
    # With a W input (else nothing: the C of G and dG is what it always was).
    w_param = w_check = w_field = w_row = w_batch = ""
    w_param_batch = ""
    if n_w:
        w_param = "                                      const casadi_real* W,\n"
        w_check = (
            f"  if (check && !pvosimr_finite(W, {n_w})) return {BAD_W};\n"
            f"  arg[{sizes['n_in'] - 1}] = W;\n"
        )
        w_field = "  const casadi_real* W;\n  long long w_stride;\n"
        w_row = " b->W + r * b->w_stride,"
        w_batch = "  batch.W = Ws;\n  batch.w_stride = w_stride;\n"
        w_param_batch = "const casadi_real* Ws, long long w_stride,\n" + " " * 44
    lanes = sizes["simd_lanes"] if simd else 1
    group = (
        f"""      if (scratch != NULL && r + {lanes} <= end
          && pvosimr_lanes_as_given(b->qs + r * {nq})) {{
        if (!pvosimr_simd_rows(b->qs + r * {nq}, b->p, b->out + r * {n_out}, b->check,
                               scratch)) {{
          r += {lanes};
          continue;
        }}
        stop = r + {lanes};  /* a failure among these rows: the scalar rows name it */
      }}
"""
        if simd
        else ""
    )
    usable = "pvosimr_simd_usable()" if simd else "0"
    lanes_c = (
        f"""
/* Whether the {lanes} rows from q all have their unit parts used as given (the vector lanes
   read q itself; a row to normalise goes through pvosimr_eval). */
static int pvosimr_lanes_as_given(const casadi_real* q) {{
  int k;
  for (k = 0; k < {lanes}; ++k) if (!pvosimr_as_given(q + k * {nq})) return 0;
  return 1;
}}
"""
        if simd
        else ""
    )
    call = f"(pvosimr_native_usable() ? pvosimr_native_f : {fname})" if native else fname
    scratch = scratch_bytes(nq, n_out, lanes) if simd else 0
    coordinates = COORDINATES_C if n_w else ""
    checks = (CHECK_P_C if has_p else "") + _q_check(nq, parts, q_bound) + lanes_c
    return f"""
/* ---- pvosimr entry points (wrapper version {WRAPPER_VERSION}) ---- */
#include <stdlib.h>
#include <pthread.h>
#include <time.h>
{_FLUSH}{FINITE_C}{coordinates}{checks}{native or ""}{simd or ""}
CASADI_SYMBOL_EXPORT int pvosimr_eval(const casadi_real* q, const casadi_real* p,
{w_param}                                      casadi_real* out, casadi_real* w, casadi_int* iw,
                                      int check) {{
  const casadi_real* arg[{max(2, sizes["sz_arg"])}];
  casadi_real* res[{max(1, sizes["sz_res"])}];
  casadi_real unit[{max(1, nq)}];  /* N(q) where a unit part is divided */
  casadi_int i;
  if (check && pvosimr_check_q(q)) return {BAD_Q};
{p_check}  arg[0] = pvosimr_unit_q(q, unit);
{p_arg}{w_check}  res[0] = out;
  PVOSIMR_FLUSH_BEGIN
  i = {call}(arg, res, iw, w, 0);
  PVOSIMR_FLUSH_END
  if (i) return {EVAL_FAILED};
  if (!pvosimr_finite(out, {n_out})) return {NON_FINITE};
  return {OK};
}}

typedef struct pvosimr_worker pvosimr_worker;

typedef struct {{
  const casadi_real* qs;
  const casadi_real* p;
{w_field}  casadi_real* out;
  long long B, next;  /* next: the first row not yet handed out (atomic) */
  int check, simd, stop;  /* stop (atomic): a worker has failed */
  /* the threads the caller may start (after its first block), and those it started */
  int threads, spawned;
  pvosimr_worker* workers;
  pthread_t* tid;
}} pvosimr_batch;

struct pvosimr_worker {{
  pvosimr_batch* batch;
  long long bad;
  int rc;
}};

static void* pvosimr_run_worker(void* arg);

static double pvosimr_seconds(void) {{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}}

/* After the caller's first block (`rows` rows in `seconds`): the number of other workers
   that finishes the blocks left soonest at that pace, each costing PVOSIMR_SPAWN_SECONDS to
   start and join; none where the caller alone is as quick. */
#ifndef PVOSIMR_SPAWN_SECONDS
#define PVOSIMR_SPAWN_SECONDS {SPAWN_SECONDS!r}
#endif
static void pvosimr_spawn(pvosimr_batch* b, long long rows, double seconds) {{
  const long long left = (b->B - rows + {BLOCK - 1}) / {BLOCK};
  double best = (double)left * seconds;
  int k, more = 0;
  for (k = 1; k < b->threads; ++k) {{
    const double t = PVOSIMR_SPAWN_SECONDS * k + (double)((left + k) / (k + 1)) * seconds;
    if (t < best) {{
      best = t;
      more = k;
    }}
  }}
  for (k = 1; k <= more; ++k) {{
    b->workers[k].batch = b;
    b->workers[k].rc = {OK};
    b->workers[k].bad = -1;
    if (pthread_create(&b->tid[k], NULL, pvosimr_run_worker, &b->workers[k]) != 0) break;
    b->spawned = k;
  }}
}}

/* Blocks of {BLOCK} rows are handed out in row order to whichever worker asks first: every
   block before a failing one is handed out before it and finished, so the smallest failing
   row over the workers is the first of the batch.  A worker has work arrays of its own and
   stops at its first failing row.  The caller is worker 0; it starts the others after its
   first block, where the rows left are worth it (pvosimr_spawn). */
static void* pvosimr_run_worker(void* arg) {{
  pvosimr_worker* me = (pvosimr_worker*)arg;
  pvosimr_batch* b = me->batch;
  const int first = me == b->workers && b->threads > 1;  /* the caller, free to start more */
  const double start = first ? pvosimr_seconds() : 0.0;
  casadi_real* w = (casadi_real*)malloc(sizeof(casadi_real) * {max(1, sizes["sz_w"])});
  casadi_int* iw = (casadi_int*)malloc(sizeof(casadi_int) * {max(1, sizes["sz_iw"])});
  void* scratch = NULL;  /* the vector lanes' inputs and outputs; none: scalar rows only */
  long long r, end;
  if (b->simd && posix_memalign(&scratch, {8 * lanes}, {scratch}) != 0) scratch = NULL;
  PVOSIMR_FLUSH_BEGIN
  me->rc = {OK};
  me->bad = -1;
  while (me->rc == {OK} && !__atomic_load_n(&b->stop, __ATOMIC_RELAXED)) {{
    r = __atomic_fetch_add(&b->next, {BLOCK}, __ATOMIC_RELAXED);
    if (r >= b->B) break;
    end = r + {BLOCK} < b->B ? r + {BLOCK} : b->B;
    if (w == NULL || iw == NULL) {{
      me->rc = {NO_MEMORY};
      me->bad = r;
    }}
    while (r < end && me->rc == {OK}) {{
      long long stop = r + 1;
{group}      for (; r < stop; ++r) {{
        int rc = pvosimr_eval(b->qs + r * {nq}, b->p,{w_row} b->out + r * {n_out}, w, iw,
                              b->check);
        if (rc != {OK}) {{
          me->rc = rc;
          me->bad = r;
          break;
        }}
      }}
    }}
    if (me->rc != {OK}) __atomic_store_n(&b->stop, 1, __ATOMIC_RELAXED);
    else if (first && b->spawned == 0 && end < b->B && b->threads > 1) {{
      pvosimr_spawn(b, end, pvosimr_seconds() - start);
      b->threads = 1;  /* decided */
    }}
  }}
  PVOSIMR_FLUSH_END
  free(w);
  free(iw);
  free(scratch);
  return NULL;
}}

CASADI_SYMBOL_EXPORT int pvosimr_eval_batch(const casadi_real* qs, long long B,
                                            const casadi_real* p, {w_param_batch}casadi_real* out,
                                            int threads, int check, long long* bad) {{
  pvosimr_batch batch;
  pvosimr_worker worker[{MAX_THREADS}];
  pthread_t tid[{MAX_THREADS}];
  int k, rc = {OK};
  *bad = -1;
  if (B <= 0) return {OK};
{batch_p_check}  if (threads > (B + {BLOCK - 1}) / {BLOCK})
    threads = (int)((B + {BLOCK - 1}) / {BLOCK});
  if (threads > {MAX_THREADS}) threads = {MAX_THREADS};
  if (threads < 1) threads = 1;
  batch.qs = qs;
  batch.p = p;
  batch.out = out;
  batch.B = B;
  batch.next = 0;
  batch.check = check;
  batch.simd = {usable};
  batch.stop = 0;
  batch.threads = threads;
  batch.spawned = 0;
  batch.workers = worker;
  batch.tid = tid;
{w_batch}  worker[0].batch = &batch;
  pvosimr_run_worker(&worker[0]);  /* starts the others (no thread to spare: fewer) */
  for (k = 1; k <= batch.spawned; ++k) pthread_join(tid[k], NULL);
  for (k = 0; k <= batch.spawned; ++k) {{
    if (worker[k].rc != {OK} && (*bad < 0 || worker[k].bad < *bad)) {{
      *bad = worker[k].bad;
      rc = worker[k].rc;
    }}
  }}
  return rc;
}}
"""
