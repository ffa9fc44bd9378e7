"""The C making a library of :mod:`pvosimr.codegen.c_source` a CPython extension.

:func:`extension_source` is appended to the library's C when Python's and numpy's headers are
found (:mod:`pvosimr.codegen.build`): ``rows`` runs ``pvosimr_eval_batch`` with the GIL
released, and ``delassus(q)`` (or ``vjp(q, W)``) is the single call with thread-local work
arrays, answering :data:`NOT_FAST` for a ``q`` it does not take so that the caller
(:mod:`pvosimr.codegen.call`) goes the general way.
"""

from __future__ import annotations

from .c_source import WRAPPER_VERSION

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
    inputs = "p, W" if n_w else "p"
    out_args = " " * 26 + "(casadi_real*)PyArray_DATA((PyArrayObject*)out), threads, check, &bad);"
    w_decl = w_fmt = w_arg = w_check = w_pass = ""
    if n_w:
        w_decl, w_fmt, w_arg = ", *W", "O", " &W,"
        one_or_each = f"pvosimr_py_array(W, 2, 1, {n_w}) || pvosimr_py_array(W, 2, B, {n_w})"
        w_check = f"\n      || !({one_or_each})"
        w_pass = (
            "                          (const casadi_real*)PyArray_DATA((PyArrayObject*)W),\n"
            f"                          PyArray_DIM((PyArrayObject*)W, 0) == 1 ? 0 : {n_w},\n"
        )
    return f"""
/* ---- CPython extension (wrapper version {WRAPPER_VERSION}) ---- */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

static int pvosimr_py_array(PyObject* a, int ndim, npy_intp rows, npy_intp cols) {{
  PyArrayObject* x = (PyArrayObject*)a;
  return PyArray_CheckExact(a) && PyArray_TYPE(x) == NPY_DOUBLE && PyArray_NDIM(x) == ndim
         && PyArray_IS_C_CONTIGUOUS(x) && PyArray_ISALIGNED(x)
         && (ndim == 1 ? PyArray_DIM(x, 0) == cols
                       : (rows < 0 || PyArray_DIM(x, 0) == rows) && PyArray_DIM(x, 1) == cols);
}}

static PyObject* pvosimr_py_rows(PyObject* self, PyObject* args) {{
  PyObject *qs, *p{w_decl}, *out;
  int threads, check, rc;
  long long B, bad = -1;
  (void)self;
  if (!PyArg_ParseTuple(args, "OO{w_fmt}Oii", &qs, &p,{w_arg} &out, &threads, &check)) return NULL;
  if (!pvosimr_py_array(qs, 2, -1, {sizes["nq"]})) {{
    PyErr_SetString(PyExc_TypeError, "rows: qs must be a C-contiguous float64 (B, nq) array");
    return NULL;
  }}
  B = (long long)PyArray_DIM((PyArrayObject*)qs, 0);
  if (!(p == Py_None ? {int(not has_p)} : {int(has_p)}
        && pvosimr_py_array(p, 1, 0, {sizes["n_p"]})){w_check}
      || !pvosimr_py_array(out, 2, B, {sizes["n_out"]})) {{
    PyErr_SetString(PyExc_TypeError, "rows: {inputs} or out of the wrong kind or size");
    return NULL;
  }}
  Py_BEGIN_ALLOW_THREADS
  rc = pvosimr_eval_batch((const casadi_real*)PyArray_DATA((PyArrayObject*)qs), B,
                          p == Py_None ? NULL
                                       : (const casadi_real*)PyArray_DATA((PyArrayObject*)p),
{w_pass}{out_args}
  Py_END_ALLOW_THREADS
  return Py_BuildValue("(iL)", rc, bad);
}}
{_single_source(sizes) if single else ""}{_vjp_source(sizes) if single_w else ""}
static PyMethodDef pvosimr_py_methods[] = {{
  {{"rows", pvosimr_py_rows, METH_VARARGS, "pvosimr_eval_batch: (code, first bad row)"}},
{_SINGLE_METHOD if single else ""}{_VJP_METHOD if single_w else ""}  {{NULL, NULL, 0, NULL}}
}};

static struct PyModuleDef pvosimr_py_module = {{
  PyModuleDef_HEAD_INIT, "{module}", NULL, -1, pvosimr_py_methods
}};

PyMODINIT_FUNC PyInit_{module}(void) {{
  import_array();
  return PyModule_Create(&pvosimr_py_module);
}}
"""


_SINGLE_METHOD = (
    '  {"delassus", pvosimr_py_delassus, METH_O, "G at q (float64, nq), or an int code"},\n'
)
_VJP_METHOD = (
    '  {"vjp", pvosimr_py_vjp, METH_VARARGS, "the output at (q, W) (float64), or an int code"},\n'
)


def _work_arrays(sizes: dict) -> str:
    """A method's work arrays: one per thread, as several threads may call it at once."""
    return (
        f"  static _Thread_local casadi_real w[{max(1, sizes['sz_w'])}];\n"
        f"  static _Thread_local casadi_int iw[{max(1, sizes['sz_iw'])}];"
    )


def _single_source(sizes: dict) -> str:
    """The extension's ``delassus(q)`` (see :func:`extension_source`)."""
    m = sizes["m"]
    return f"""
static PyObject* pvosimr_py_delassus(PyObject* self, PyObject* arg) {{
{_work_arrays(sizes)}
  npy_intp dims[2] = {{{m}, {m}}};
  PyArrayObject* q = (PyArrayObject*)arg;
  PyObject* G;
  int rc;
  (void)self;
  if (!PyArray_CheckExact(arg) || PyArray_TYPE(q) != NPY_DOUBLE || PyArray_NDIM(q) != 1
      || PyArray_DIM(q, 0) != {sizes["nq"]} || !PyArray_IS_C_CONTIGUOUS(q)
      || !PyArray_ISALIGNED(q))
    return PyLong_FromLong({NOT_FAST});
  G = PyArray_EMPTY(2, dims, NPY_DOUBLE, 1);
  if (G == NULL) return NULL;
  Py_BEGIN_ALLOW_THREADS  /* other threads may evaluate meanwhile: w and iw are per thread */
  rc = pvosimr_eval((const casadi_real*)PyArray_DATA(q), NULL,
                    (casadi_real*)PyArray_DATA((PyArrayObject*)G), w, iw, 1);
  Py_END_ALLOW_THREADS
  if (rc == 0) return G;
  Py_DECREF(G);
  return PyLong_FromLong(rc);
}}
"""


def _vjp_source(sizes: dict) -> str:
    """The extension's ``vjp(q, W)`` (see :func:`extension_source`)."""
    return f"""
static PyObject* pvosimr_py_vjp(PyObject* self, PyObject* args) {{
{_work_arrays(sizes)}
  npy_intp dims[1] = {{{sizes["n_out"]}}};
  PyObject *q, *W, *out;
  PyArrayObject *qa, *Wa;
  int rc;
  (void)self;
  if (!PyArg_UnpackTuple(args, "vjp", 2, 2, &q, &W)) return NULL;
  qa = (PyArrayObject*)q;
  Wa = (PyArrayObject*)W;
  if (!PyArray_CheckExact(q) || PyArray_TYPE(qa) != NPY_DOUBLE || PyArray_NDIM(qa) != 1
      || PyArray_DIM(qa, 0) != {sizes["nq"]} || !PyArray_IS_C_CONTIGUOUS(qa)
      || !PyArray_ISALIGNED(qa) || !PyArray_CheckExact(W) || PyArray_TYPE(Wa) != NPY_DOUBLE
      || PyArray_NDIM(Wa) != 2 || PyArray_DIM(Wa, 0) != {sizes["m"]}
      || PyArray_DIM(Wa, 1) != {sizes["m"]}
      || !PyArray_IS_C_CONTIGUOUS(Wa) || !PyArray_ISALIGNED(Wa))
    return PyLong_FromLong({NOT_FAST});
  out = PyArray_EMPTY(1, dims, NPY_DOUBLE, 0);
  if (out == NULL) return NULL;
  Py_BEGIN_ALLOW_THREADS  /* other threads may evaluate meanwhile: w and iw are per thread */
  rc = pvosimr_eval((const casadi_real*)PyArray_DATA(qa), NULL,
                    (const casadi_real*)PyArray_DATA(Wa),
                    (casadi_real*)PyArray_DATA((PyArrayObject*)out), w, iw, 1);
  Py_END_ALLOW_THREADS
  if (rc == 0) return out;
  Py_DECREF(out);
  return PyLong_FromLong(rc);
}}
"""
