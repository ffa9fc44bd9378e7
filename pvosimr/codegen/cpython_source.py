"""The C making a library of :mod:`pvosimr.codegen.c_source` a CPython extension.

:func:`extension_source` is appended to the library's C when Python's and numpy's headers are
found (:mod:`pvosimr.codegen.build`): ``rows`` runs ``pvosimr_eval_batch`` with the GIL
released, and ``delassus(q)`` (or ``vjp(q, W)``) is the single call with thread-local work
arrays, answering :data:`NOT_FAST` for a ``q`` it does not take so that the caller
(:mod:`pvosimr.codegen.call`) goes the general way.
"""

from __future__ import annotations

from .c_source import WRAPPER_VERSION
from .templating import fill

__all__ = ["NOT_FAST", "extension_source"]

#: The extension's answer for a ``q`` that is not a C-contiguous float64 array of ``nq``.
NOT_FAST = -1


def extension_source(module: str, sizes: dict) -> str:
    """C making the library a CPython extension ``module``.

    ``rows(qs, p, out, threads, check) -> (code, bad row)`` runs ``pvosimr_eval_batch`` with
    the GIL released on C-contiguous float64 arrays: ``qs`` (B, nq), ``p`` (n_p,) or None,
    ``out`` (B, n_out) (TypeError for anything else).  For a function of ``q`` alone,
    ``delassus(q) -> out | int`` is the single call: an aligned, C-contiguous float64 array of
    ``nq`` values gives a new Fortran-ordered m × m array, or the entry point's code, or
    :data:`NOT_FAST` for any other ``q`` (the caller then takes the general path); its work
    arrays are thread-local, so threads evaluate in parallel.

    With a ``W`` input (``n_w``): ``rows(qs, p, W, out, threads, check)``, ``W`` (1, n_w) for
    every row or (B, n_w), one per row; for a function of ``q`` and ``W`` alone,
    ``vjp(q, W) -> out | int`` is the single call (``W`` an aligned, C-contiguous float64
    (m, m) array; the output a new (n_out,) array).
    """
    n_w = sizes.get("n_w", 0)
    single = sizes["n_in"] == 1 and sizes["out_shape"] == (sizes["m"], sizes["m"])
    single_w = n_w > 0 and sizes["n_in"] == 2
    has_p = sizes["n_in"] - (n_w > 0) == 2
    return fill(
        "extension.c",
        WRAPPER_VERSION=WRAPPER_VERSION,
        module=module,
        sizes=sizes,
        has_p=int(has_p),
        no_p=int(not has_p),
        inputs="p, W" if n_w else "p",
        **_w_fields(n_w),
        delassus=_single("extension_delassus.c", sizes, m=sizes["m"]) if single else "",
        vjp=_single("extension_vjp.c", sizes) if single_w else "",
        delassus_method=_SINGLE_METHOD if single else "",
        vjp_method=_VJP_METHOD if single_w else "",
    )


def _w_fields(n_w: int) -> dict[str, str]:
    """``rows``'s C for a ``W`` input of ``n_w`` numbers (one for every row or one per row),
    or for none (``n_w`` 0)."""
    if not n_w:
        return dict.fromkeys(("w_decl", "w_fmt", "w_arg", "w_check", "w_pass"), "")
    one_or_each = f"pvosimr_py_array(W, 2, 1, {n_w}) || pvosimr_py_array(W, 2, B, {n_w})"
    return {
        "w_decl": ", *W",
        "w_fmt": "O",
        "w_arg": " &W,",
        "w_check": f"\n      || !({one_or_each})",
        "w_pass": " " * 26
        + "(const casadi_real*)PyArray_DATA((PyArrayObject*)W),\n"
        + " " * 26
        + f"PyArray_DIM((PyArrayObject*)W, 0) == 1 ? 0 : {n_w},\n",
    }


_SINGLE_METHOD = (
    '  {"delassus", pvosimr_py_delassus, METH_O, "G at q (float64, nq), or an int code"},\n'
)
_VJP_METHOD = (
    '  {"vjp", pvosimr_py_vjp, METH_VARARGS, "the output at (q, W) (float64), or an int code"},\n'
)


def _single(name: str, sizes: dict, **values) -> str:
    """A single call of the extension, ``delassus(q)`` or ``vjp(q, W)`` (see
    :func:`extension_source`), on work arrays of its own per thread, as several threads may
    call it at once."""
    work_arrays = (
        f"  static _Thread_local casadi_real w[{max(1, sizes['sz_w'])}];\n"
        f"  static _Thread_local casadi_int iw[{max(1, sizes['sz_iw'])}];"
    )
    return fill(name, sizes=sizes, work_arrays=work_arrays, NOT_FAST=NOT_FAST, **values)
