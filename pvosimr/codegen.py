"""Compiled ``q ↦ G``: C generated from the CasADi function, built once, called from Python.

:func:`compile` turns :func:`pvosimr.symbolic.delassus_function` (the algorithm on CasADi SX,
model constants and constraint placements folded in) into C with CasADi's ``CodeGenerator``,
appends a small entry point ``pvosimr_delassus(q, G, w, iw, check)``, compiles it with the
system C compiler into a shared library and loads it::

    from pvosimr import codegen
    delassus = codegen.compile(robot.model, robot.constraints)   # "pv-osimr" by default
    G = delassus(q)                                             # m × m numpy array

The C entry point checks ``q`` (finite, unit quaternions / unit complex numbers, the tolerance
of ``pin.isNormalized``) and the result (finite).  Where Python's and numpy's C headers are
installed, the library is also a CPython extension module whose one function takes a float64
``q`` array and returns a new ``G`` array: a call costs about the generated code's own time
(``binding == "extension"``).  Otherwise, and for any other kind of ``q``, it is called through
:mod:`ctypes` (``binding == "ctypes"``, about 1.5 µs more per call): Python copies ``q`` into a
preallocated buffer and makes one foreign call.  Any rejected or unusual input goes through
:func:`pvosimr.checks.check_configuration`, which raises the library's usual ``ValueError``.
(``casadi.external`` loads the same library, but its generic per-call path costs several times
the computation itself on Atlas.)

Libraries are cached on disk in :func:`default_cache_dir` (``$PVOSIMR_CACHE_DIR``, else
``$XDG_CACHE_HOME/pvosimr``, else ``~/.cache/pvosimr``), under a name that hashes the generated
source (which spells out every model constant and constraint placement), the compiler (its path
and ``--version``), the flags and, for the extension, the Python and numpy versions: the compiler
runs again only when one of them changes.

The compiled function is a snapshot: editing the model (inertias, placements, armature) or the
constraint placements afterwards needs a new :func:`compile` (cached if it was built before).

Compile time grows faster than linearly with the size of the generated function.  Measured on
the 2-core reference machine with gcc 12: Atlas with 2×6D feet (8 k instructions, 180 kB of C)
1.3–2.5 s at ``-O3``; Atlas with two Shadow hands and 6D feet (51 k instructions, 1.2 MB) about
32 s at ``-O3`` or ``-O2`` but 6 s at ``-O1``, and the ``-O1`` code runs about as fast (22 µs
against 20–29 µs per call) — pass ``flags=("-O1",)`` for such models.  ``-march=native`` makes
the Atlas function about 25 % faster (FMA/AVX) but ties the library to this CPU family; it is
never added by default.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib.machinery
import importlib.util
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pinocchio as pin

from . import toolchain
from .checks import (
    NORMALIZED_TOLERANCE,
    check_configuration,
    check_model,
    topology_for,
    undefined_error,
)
from .constraints import as_constraint_list
from .joint_models import unit_parts

__all__ = [
    "CodegenError",
    "CompilationError",
    "CompiledDelassus",
    "CompilerNotFoundError",
    "compile",
    "default_cache_dir",
    "find_compiler",
    "generate_source",
    "python_headers",
]

#: Bumped whenever the appended C entry point or the build command changes meaning.
_WRAPPER_VERSION = "3"

_ENTRY = "pvosimr_delassus"

_OK, _BAD_Q, _NON_FINITE_G, _EVAL_FAILED = 0, 1, 2, 3
_NOT_FAST = -1  # the extension's answer for a q that is not a C-contiguous float64 array of nq
_F64 = np.dtype(np.float64)


class CodegenError(RuntimeError):
    """The generated C could not be turned into a loadable library."""


class CompilerNotFoundError(CodegenError, toolchain.CompilerNotFoundError):
    """No C compiler: neither ``$CC`` nor ``cc``/``gcc``/``clang`` on ``PATH``."""


class CompilationError(CodegenError):
    """The C compiler ran but failed (the message has the command and its output)."""


# --------------------------------------------------------------------------- compiler & cache


def default_cache_dir() -> Path:
    """pvosimr's cache folder, :func:`pvosimr.toolchain.cache_dir`; libraries go to ``codegen/``."""
    return toolchain.cache_dir()


_NO_COMPILER_FIX = toolchain.how_to_get_compiler("c")


def find_compiler() -> list[str]:
    """The C compiler command: ``$CC`` (split like a shell would) or ``cc``/``gcc``/``clang``."""
    try:
        return toolchain.find_compiler("c", needed_by="pvosimr.codegen")
    except toolchain.CompilerNotFoundError as exc:
        raise CompilerNotFoundError(str(exc)) from None


def _run_compiler(command: list[str]) -> None:
    """Run one compiler command; :class:`CompilationError` with its output on failure."""
    try:
        out = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise CompilerNotFoundError(
            f"cannot run {command[0]!r}: {exc}. {_NO_COMPILER_FIX}"
        ) from exc
    if out.returncode != 0:
        log = (out.stderr or out.stdout).strip()
        if len(log) > 4000:
            log = "…\n" + log[-4000:]
        raise CompilationError(
            f"compiling the generated C failed (exit {out.returncode}):\n  {shlex.join(command)}"
            f"\n{log}\nCheck that the compiler works (`{command[0]} --version`), set CC to "
            "another compiler, or pass other flags= to pvosimr.codegen.compile."
        )


# --------------------------------------------------------------------------- C source


def _unit_parts(model: pin.Model) -> list[tuple[int, int]]:
    """``(start, length)`` in q of every unit-norm part (inside composites too)."""
    return [
        (joint.idx_q + first, stop - first)
        for joint in model.joints[1:]
        for first, stop in unit_parts(joint)
    ]


def _entry_point(
    fname: str,
    nq: int,
    m: int,
    sizes: tuple[int, int],
    parts: list[tuple[int, int]],
    q_bound: float,
) -> str:
    """C for ``pvosimr_delassus(q, G, w, iw, check)``: check q, evaluate, check G.

    Returns 0 (ok), 1 (q rejected: beyond ``q_bound`` — the model's range, see
    :func:`pvosimr.checks.check_model` — not finite, or not normalized), 2 (G not finite) or
    3 (the generated function failed).  With ``check == 0`` q is not looked at.
    """
    checks = []
    for start, length in parts:
        terms = " + ".join(f"q[{start + k}]*q[{start + k}]" for k in range(length))
        checks.append(f"    if (!(fabs(sqrt({terms}) - 1.0) < {NORMALIZED_TOLERANCE!r})) return 1;")
    return f"""
/* ---- pvosimr entry point (wrapper version {_WRAPPER_VERSION}) ---- */
CASADI_SYMBOL_EXPORT int {_ENTRY}(const casadi_real* q, casadi_real* G, casadi_real* w,
                                  casadi_int* iw, int check) {{
  const casadi_real* arg[{max(1, sizes[0])}];
  casadi_real* res[{max(1, sizes[1])}];
  casadi_int i;
  if (check) {{
    for (i = 0; i < {nq}; ++i) if (!(fabs(q[i]) <= {q_bound!r})) return 1;
{chr(10).join(checks)}
  }}
  arg[0] = q;
  res[0] = G;
  if ({fname}(arg, res, iw, w, 0)) return 3;
  for (i = 0; i < {m * m}; ++i) if (!isfinite(G[i])) return 2;
  return 0;
}}
"""


def python_headers() -> list[str] | None:
    """Include folders with ``Python.h`` and ``numpy/arrayobject.h``, or None if one is missing."""
    python = sysconfig.get_paths().get("include", "")
    numpy_include = np.get_include()
    found = os.path.isfile(os.path.join(python, "Python.h")) and os.path.isfile(
        os.path.join(numpy_include, "numpy", "arrayobject.h")
    )
    return [python, numpy_include] if found else None


def _extension_source(module: str, info: dict) -> str:
    """C making the library a CPython extension ``module`` with ``delassus(q) -> G | int``.

    ``delassus`` takes an aligned, C-contiguous float64 array of ``nq`` values and returns a new
    Fortran-ordered m × m array, or an int: the entry point's code, or ``_NOT_FAST`` for any
    other ``q`` (the caller then takes the general path).  The work arrays are thread-local
    and the GIL is released while the generated code runs, so threads evaluate in parallel.
    """
    return f"""
/* ---- CPython extension (wrapper version {_WRAPPER_VERSION}) ---- */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

static PyObject* pvosimr_py_delassus(PyObject* self, PyObject* arg) {{
  static _Thread_local casadi_real w[{max(1, info["sz_w"])}];
  static _Thread_local casadi_int iw[{max(1, info["sz_iw"])}];
  npy_intp dims[2] = {{{info["m"]}, {info["m"]}}};
  PyArrayObject* q = (PyArrayObject*)arg;
  PyObject* G;
  int rc;
  (void)self;
  if (!PyArray_CheckExact(arg) || PyArray_TYPE(q) != NPY_DOUBLE || PyArray_NDIM(q) != 1
      || PyArray_DIM(q, 0) != {info["nq"]} || !PyArray_IS_C_CONTIGUOUS(q)
      || !PyArray_ISALIGNED(q))
    return PyLong_FromLong({_NOT_FAST});
  G = PyArray_EMPTY(2, dims, NPY_DOUBLE, 1);
  if (G == NULL) return NULL;
  Py_BEGIN_ALLOW_THREADS  /* other threads may evaluate meanwhile: w and iw are per thread */
  rc = {_ENTRY}((const casadi_real*)PyArray_DATA(q),
                (casadi_real*)PyArray_DATA((PyArrayObject*)G), w, iw, 1);
  Py_END_ALLOW_THREADS
  if (rc == 0) return G;
  Py_DECREF(G);
  return PyLong_FromLong(rc);
}}

static PyMethodDef pvosimr_py_methods[] = {{
  {{"delassus", pvosimr_py_delassus, METH_O, "G at q (float64, nq), or an int code"}},
  {{NULL, NULL, 0, NULL}}
}};

static struct PyModuleDef pvosimr_py_module = {{
  PyModuleDef_HEAD_INIT, "{module}", NULL, -1, pvosimr_py_methods
}};

PyMODINIT_FUNC PyInit_{module}(void) {{
  import_array();
  return PyModule_Create(&pvosimr_py_module);
}}
"""


def generate_source(
    model: pin.Model, constraint_models: Iterable, algorithm: str = "pv-osimr"
) -> tuple[str, dict]:
    """The complete C source and its sizes (``nq``, ``m``, ``sz_w``, ``sz_iw``, ``fname``, …)."""
    import casadi as ca

    from .symbolic import delassus_function

    f = delassus_function(model, constraint_models, algorithm)
    fname = f.name()
    cg = ca.CodeGenerator("pvosimr_generated.c", {"with_header": False})
    cg.add(f)
    m = int(f.size1_out(0))
    parts = _unit_parts(model)
    q_bound = float(np.min(check_model(model).q_bound, initial=np.inf))
    entry = _entry_point(fname, model.nq, m, (int(f.sz_arg()), int(f.sz_res())), parts, q_bound)
    source = cg.dump() + entry
    info = {
        "fname": fname,
        "nq": int(model.nq),
        "m": m,
        "sz_w": int(f.sz_w()),
        "sz_iw": int(f.sz_iw()),
        "n_instructions": int(f.n_instructions()),
        "extension": None,  # set by compile() when it builds the CPython extension too
    }
    return source, info


# --------------------------------------------------------------------------- the callable


class CompiledDelassus:
    """``G = f(q)``: the compiled Delassus matrix of one model, constraint list and algorithm.

    Attributes: ``model``, ``algorithm``, ``m``, ``nq``, ``library`` (path of the shared
    library), ``source`` (path of the generated C beside it), ``flags``, ``compiled`` (whether
    this :func:`compile` call ran the compiler), ``compile_seconds`` (its wall time, 0 when the
    library came from the cache), ``n_instructions`` (of the CasADi function), ``binding``
    (``"extension"`` or ``"ctypes"``: how a float64 ``q`` array is passed, see the module
    docstring).

    Calls through ctypes are serialised by a lock (the buffers are shared); calls through the
    extension run in parallel across threads (per-thread work arrays, the GIL released).
    """

    def __init__(
        self,
        model: pin.Model,
        constraint_models: list,
        algorithm: str,
        library: Path,
        source: Path,
        info: dict,
        flags: tuple[str, ...],
        compiled: bool,
        compile_seconds: float,
    ) -> None:
        self.model = model
        self.constraint_models = constraint_models
        self.algorithm = algorithm
        self.library = library
        self.source = source
        self.flags = flags
        self.compiled = compiled
        self.compile_seconds = compile_seconds
        self.nq = info["nq"]
        self.m = info["m"]
        self.n_instructions = info["n_instructions"]
        self._lib = ctypes.CDLL(str(library))
        fn = getattr(self._lib, _ENTRY)
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int]
        self._fn = fn
        self._q = np.zeros(self.nq)
        self._G = np.zeros((self.m, self.m), order="F")  # CasADi writes column-major
        self._w = np.zeros(max(1, info["sz_w"]))
        self._iw = np.zeros(max(1, info["sz_iw"]), dtype=np.int64)
        # fn(check) with the buffer addresses bound once: one cheap foreign call per evaluation.
        self._invoke = functools.partial(
            fn,
            ctypes.c_void_p(self._q.ctypes.data),
            ctypes.c_void_p(self._G.ctypes.data),
            ctypes.c_void_p(self._w.ctypes.data),
            ctypes.c_void_p(self._iw.ctypes.data),
        )
        self._lock = threading.Lock()
        # Everything __call__ needs, in one attribute (fewer lookups on the hot path).
        self._fast = (self._q, self._G, self._invoke, self._lock, (self.nq,))
        self._extension = None if info["extension"] is None else _load(info["extension"], library)
        self.binding = "ctypes" if self._extension is None else "extension"

    def __repr__(self) -> str:
        return (
            f"CompiledDelassus({self.model.name!r}, {self.algorithm!r}, m={self.m}, "
            f"library={str(self.library)!r})"
        )

    def __call__(self, q) -> np.ndarray:
        """The m × m Delassus matrix at ``q`` (a new array; ``ValueError`` on bad ``q``)."""
        if self._extension is not None:
            G = self._extension(q)
            if G.__class__ is np.ndarray:
                return G
            if G != _NOT_FAST:
                return self._retry(G, q)
        q_buf, G, invoke, lock, shape = self._fast
        if q.__class__ is not np.ndarray or q.dtype is not _F64 or q.shape != shape:
            q = check_configuration(self.model, q)  # the general path: any sequence
        with lock:
            q_buf[:] = q
            rc = invoke(1)
            if rc == _OK:
                return G.copy()
        return self._retry(rc, q)

    def _retry(self, rc: int, q: np.ndarray) -> np.ndarray:
        if rc == _BAD_Q:
            check_configuration(self.model, q)  # raises the library's message
            # Accepted after all (a norm within rounding of the tolerance): evaluate unchecked.
            with self._lock:
                self._q[:] = q
                rc = self._invoke(0)
                if rc == _OK:
                    return self._G.copy()
        if rc == _NON_FINITE_G:  # the library's verdict: singular M, or precision lost
            topology = topology_for(self.model, self.constraint_models)
            raise undefined_error(self.algorithm, self.model, q, topology, self.constraint_models)
        raise CodegenError(f"the generated function {self.library.name} failed (code {rc})")


def _load(module: str, library: Path):
    """The ``delassus`` function of the library loaded as the CPython extension ``module``."""
    loader = importlib.machinery.ExtensionFileLoader(module, str(library))
    spec = importlib.util.spec_from_loader(module, loader)
    extension = importlib.util.module_from_spec(spec)
    loader.exec_module(extension)
    return extension.delassus


class _Empty:
    """No constraint rows: nothing to compile; still validates ``q``."""

    def __init__(self, model: pin.Model, algorithm: str) -> None:
        self.model, self.algorithm, self.m, self.nq = model, algorithm, 0, model.nq
        self.compiled, self.compile_seconds, self.library, self.source = False, 0.0, None, None

    def __call__(self, q) -> np.ndarray:
        check_configuration(self.model, q)
        return np.zeros((0, 0))


# --------------------------------------------------------------------------- compile


def compile(  # the natural name: pvosimr.codegen.compile (shadows the builtin here only)
    model: pin.Model,
    constraint_models: Iterable,
    algorithm: str = "pv-osimr",
    *,
    cache_dir: str | os.PathLike | None = None,
    flags: Sequence[str] = ("-O3",),
) -> CompiledDelassus:
    """A compiled ``q ↦ G`` for ``model`` and ``constraint_models`` (see the module docstring).

    ``algorithm`` is any of :data:`pvosimr.ALGORITHMS`, or ``"auto"`` for the one with the
    fewest operations here (the compiled function's ``algorithm`` names it).
    ``flags`` go to the compiler before ``-shared -fPIC``; no machine-specific flag is added.
    The library is cached in ``cache_dir`` (default :func:`default_cache_dir`).

    Raises:
        CompilerNotFoundError: no C compiler (install one, or set ``CC``).
        CompilationError: the compiler failed (message has the command and its output).
        ModuleNotFoundError: CasADi is missing (``pip install 'pvosimr[symbolic]'``).
        ValueError / NotImplementedError: constraints or joints pvosimr does not support.
    """
    cms = as_constraint_list(constraint_models)
    flags = tuple(flags)
    source, info = generate_source(model, cms, algorithm)
    algorithm = info["fname"].removeprefix("delassus_").replace("_", "-")  # "auto" resolved
    if info["m"] == 0:
        return _Empty(model, algorithm)  # type: ignore[return-value]
    compiler = find_compiler()
    try:
        identity = toolchain.compiler_identity(tuple(compiler))
    except toolchain.CompilerNotFoundError as exc:
        raise CompilerNotFoundError(f"{exc} {_NO_COMPILER_FIX}") from None
    headers = python_headers()
    if headers is not None:
        info["extension"] = "pvosimr_" + hashlib.sha256(source.encode()).hexdigest()[:20]
        source += _extension_source(info["extension"], info)
    abi = f"{sys.implementation.cache_tag} numpy {np.__version__}" if headers else "ctypes"
    key = hashlib.sha256(
        "\0".join([_WRAPPER_VERSION, source, identity, shlex.join(flags), abi]).encode()
    ).hexdigest()[:24]
    folder = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    folder = folder / "codegen"
    stem = f"{info['fname']}_{model.nq}q_{info['m']}m_{key}"
    library, c_file = folder / f"{stem}.so", folder / f"{stem}.c"
    build = functools.partial(_build, compiler, flags, source, library, c_file, headers or [])
    compiled, seconds = False, 0.0
    if not library.exists():
        seconds, compiled = build(), True
    try:
        return CompiledDelassus(
            model, cms, algorithm, library, c_file, info, flags, compiled, seconds
        )
    except (OSError, ImportError):
        if compiled:
            raise
        # A damaged cache entry (e.g. a truncated file): build it again, once.
        seconds = build()
        return CompiledDelassus(model, cms, algorithm, library, c_file, info, flags, True, seconds)


def _build(
    compiler: list[str],
    flags: tuple[str, ...],
    source: str,
    library: Path,
    c_file: Path,
    includes: list[str],
) -> float:
    """Write the source and compile it; both files appear atomically (safe across processes)."""
    library.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(c_file, source.encode())
    # A fresh name the compiler creates: a "successful" run that wrote nothing cannot leave an
    # empty library in the cache (os.replace then fails).
    tmp = str(library.parent / f".build-{os.getpid()}-{uuid.uuid4().hex}.so")
    start = time.perf_counter()
    try:
        extension = [f"-I{folder}" for folder in includes]
        if includes and sys.platform == "darwin":
            extension.append("-Wl,-undefined,dynamic_lookup")  # Python's symbols at load time
        command = [*compiler, *flags, *extension, "-shared", "-fPIC", "-o", tmp, str(c_file)]
        _run_compiler([*command, "-lm"])
        os.replace(tmp, library)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return time.perf_counter() - start


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".src-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
