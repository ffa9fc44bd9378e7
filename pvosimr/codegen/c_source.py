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
from .templating import fill, template

__all__ = [
    "BAD_P",
    "BAD_Q",
    "BAD_W",
    "COORDINATES_C",
    "COORDINATES_ROW_C",
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

#: Subnormal numbers flushed to zero while the function runs (the macros around its call).
_FLUSH = template("flush.c")

#: C of ``pvosimr_finite(x, n)``: whether the ``n`` doubles at ``x`` are all finite.
FINITE_C = template("finite.c")

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

#: C of ``pvosimr_coordinates_row(plan, q, q_hat, g, out, stride, tolerance)``: one
#: configuration's tangent gradient ``g`` (nv) in q's coordinates (nq) at ``q`` and its
#: normalised ``q_hat``: ``T (Tᵀ T)⁻¹ g`` at ``q_hat``
#: (:func:`pvosimr.coordinates.tangent_to_coordinates` is its reference), each unit part's rows
#: then divided by that part's norm in ``q`` (1 where its squared norm is within ``tolerance``
#: of 1).  ``plan`` is :meth:`~pvosimr.coordinates.CoordinatePlan.packed`.  The gradient
#: library and the CUDA gradient kernel (:mod:`pvosimr.codegen.cuda_source`) hold it: one map.
COORDINATES_ROW_C = template("coordinates_row.c")

#: C of ``pvosimr_to_coordinates(plan, B, qs, q_hats, gs, outs, tolerance)``: the map of
#: :data:`COORDINATES_ROW_C` on ``B`` rows (row-major), for the front ends over the library.
COORDINATES_C = COORDINATES_ROW_C + template("coordinates.c")


def _q_check(nq: int, parts: list[tuple[int, int]], q_bound: float) -> str:
    """``pvosimr_check_q``: every entry within ``q_bound``, every unit-norm part normalized
    to the tolerance of ``pin.isNormalized``; ``pvosimr_unit_q(q, copy)``: ``N(q)``, the
    unit-part rule (:mod:`pvosimr.coordinates`), ``q`` itself where every part is used as
    given, else ``copy`` (nq numbers) holding it; ``pvosimr_as_given(q)``: whether it is
    ``q``."""
    norms, as_given, divide = [], [], []
    for start, length in parts:  # its squared norm summed in index order, as squared_norm sums it
        squared = " + ".join(f"q[{start + k}]*q[{start + k}]" for k in range(length))
        norms.append(f"  if (!(fabs(sqrt({squared}) - 1.0) < {NORMALIZED_TOLERANCE!r})) return 1;")
        as_given.append(f"  if (!(fabs({squared} - 1.0) <= {AS_GIVEN_TOLERANCE!r})) return 0;")
        divide.append(
            f"  s = {squared};\n"
            f"  if (!(fabs(s - 1.0) <= {AS_GIVEN_TOLERANCE!r})) {{\n"
            f"    s = sqrt(s);\n"
            f"    for (i = {start}; i < {start + length}; ++i) copy[i] = q[i] / s;\n"
            "  }"
        )
    return fill(
        "check_q.c",
        nq=nq,
        q_bound=q_bound,
        norms="\n".join(norms),
        as_given="\n".join(as_given),
        divide="\n".join(divide),
    )


#: C of ``pvosimr_check_p(p, n)``: whether the ``n`` placements of ``p`` (12 numbers each, R
#: column-major then t, :mod:`pvosimr.kinematics.placements`) are rigid transforms, as
#: :func:`pvosimr.constraints.check_placement` checks a ``pin.SE3``: finite, ``‖RᵀR − I‖``
#: (max norm) within the tolerance, ``det R > 0``.
CHECK_P_C = fill("check_p.c", ORTHONORMAL_TOLERANCE=ORTHONORMAL_TOLERANCE)


#: The fields of ``entry_points.c`` that every library shares.
_FIXED = {
    "WRAPPER_VERSION": WRAPPER_VERSION,
    "SPAWN_SECONDS": SPAWN_SECONDS,
    "BLOCK": BLOCK,
    "block_less_1": BLOCK - 1,
    "MAX_THREADS": MAX_THREADS,
    "flush": _FLUSH,
    "finite": FINITE_C,
    "OK": OK,
    "BAD_Q": BAD_Q,
    "NON_FINITE": NON_FINITE,
    "EVAL_FAILED": EVAL_FAILED,
    "NO_MEMORY": NO_MEMORY,
}


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
    lanes = sizes["simd_lanes"] if simd else 1
    checks = (CHECK_P_C if has_p else "") + _q_check(nq, parts, q_bound)
    return fill(
        "entry_points.c",
        **_FIXED,
        coordinates=COORDINATES_C if n_w else "",
        nq=nq,
        n_out=n_out,
        sz_unit=max(1, nq),
        sz_arg=max(2, sizes["sz_arg"]),
        **{k: max(1, sizes[k]) for k in ("sz_res", "sz_w", "sz_iw")},
        call=f"(pvosimr_native_usable() ? pvosimr_native_f : {fname})" if native else fname,
        native=native or "",
        **_p_fields(sizes.get("n_p", 0) if has_p else None),
        **_w_fields(n_w, sizes["n_in"]),
        **_lane_fields(simd, lanes, nq, n_out, checks),
    )


def _p_fields(n_p: int | None) -> dict[str, str]:
    """The entry points' C for placements as an input (``n_p`` numbers), or for none (None)."""
    if n_p is None:
        return {"p_arg": "  (void)p;\n", "p_check": "", "batch_p_check": ""}
    check = f"  if (check && pvosimr_check_p(p, {n_p // 12}))"
    return {
        "p_arg": "  arg[1] = p;\n",
        "p_check": f"{check} return {BAD_P};\n",
        "batch_p_check": f"{check} {{\n    *bad = 0;\n    return {BAD_P};\n  }}\n",
    }


_NO_W = dict.fromkeys(("w_param", "w_param_batch", "w_check", "w_field", "w_row", "w_batch"), "")


def _w_fields(n_w: int, n_in: int) -> dict[str, str]:
    """The entry points' C for a ``W`` input of ``n_w`` numbers (the gradient's), the last of
    ``n_in``; without one (``n_w`` 0), nothing: the C of G and dG is what it always was."""
    if not n_w:
        return _NO_W
    return {
        "w_param": " " * 38 + "const casadi_real* W,\n",
        "w_param_batch": "const casadi_real* Ws, long long w_stride,\n" + " " * 44,
        "w_check": f"  if (check && !pvosimr_finite(W, {n_w})) return {BAD_W};\n"
        f"  arg[{n_in - 1}] = W;\n",
        "w_field": "  const casadi_real* W;\n  long long w_stride;\n",
        "w_row": " b->W + r * b->w_stride,",
        "w_batch": "  batch.W = Ws;\n  batch.w_stride = w_stride;\n",
    }


def _lane_fields(simd: str | None, lanes: int, nq: int, n_out: int, checks: str) -> dict:
    """The entry points' C for the vector path ``simd`` on ``lanes`` lanes, or for none;
    ``checks`` (the checks of q and p) with the lanes' check after them."""
    if not simd:
        return {
            "simd": "",
            "checks": checks,
            "group": "",
            "usable": "0",
            "alignment": 8,
            "scratch": 0,
        }
    return {
        "simd": simd,
        "checks": checks + fill("lanes.c", lanes=lanes, nq=nq),
        "group": fill("group.c", lanes=lanes, nq=nq, n_out=n_out),
        "usable": "pvosimr_simd_usable()",
        "alignment": 8 * lanes,
        "scratch": scratch_bytes(nq, n_out, lanes),
    }
