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
import math
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

from . import codegen_c as c_text
from . import toolchain
from .checks import (
    check_configuration,
    check_configurations,
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
    "usable_cores",
]

_F64 = np.dtype(np.float64)

#: Flags of the derivatives' library when ``compile`` is given none (see the module docstring).
DERIVATIVE_FLAGS = ("-O1",)


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


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the OS tells it), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


# --------------------------------------------------------------------------- C source


def _unit_parts(model: pin.Model) -> list[tuple[int, int]]:
    """``(start, length)`` in q of every unit-norm part (inside composites too)."""
    return [
        (joint.idx_q + first, stop - first)
        for joint in model.joints[1:]
        for first, stop in unit_parts(joint)
    ]


def python_headers() -> list[str] | None:
    """Include folders with ``Python.h`` and ``numpy/arrayobject.h``, or None if one is missing."""
    python = sysconfig.get_paths().get("include", "")
    numpy_include = np.get_include()
    found = os.path.isfile(os.path.join(python, "Python.h")) and os.path.isfile(
        os.path.join(numpy_include, "numpy", "arrayobject.h")
    )
    return [python, numpy_include] if found else None


def generate_source(
    model: pin.Model,
    constraint_models: Iterable,
    algorithm: str = "pv-osimr",
    *,
    placements: str = "fixed",
    derivatives: bool = False,
) -> tuple[str, dict]:
    """The C source of one library and its sizes (``nq``, ``m``, ``n_out``, ``sz_w``, …).

    The library computes G (:func:`pvosimr.symbolic.delassus_function`) or, with
    ``derivatives=True``, dG (:func:`pvosimr.symbolic.delassus_derivatives_function`), of
    ``q`` and, with ``placements="input"``, ``p``; entry points of :mod:`pvosimr.codegen_c`.
    """
    import casadi as ca

    from . import symbolic

    build = symbolic.delassus_derivatives_function if derivatives else symbolic.delassus_function
    f = build(model, constraint_models, algorithm, placements=placements)
    cg = ca.CodeGenerator("pvosimr_generated.c", {"with_header": False})
    cg.add(f)
    m = math.isqrt(int(f.size1_out(0))) if derivatives else int(f.size1_out(0))
    info = {
        "fname": f.name(),
        "nq": int(model.nq),
        "nv": int(model.nv),
        "m": m,
        "n_in": int(f.n_in()),
        "n_p": int(f.nnz_in(1)) if f.n_in() > 1 else 0,
        "n_out": int(f.nnz_out(0)),
        "out_shape": (int(model.nv), m, m) if derivatives else (m, m),
        "sz_arg": int(f.sz_arg()),
        "sz_res": int(f.sz_res()),
        "sz_w": int(f.sz_w()),
        "sz_iw": int(f.sz_iw()),
        "n_instructions": int(f.n_instructions()),
        "extension": None,  # set by compile() when it builds the CPython extension too
    }
    q_bound = float(np.min(check_model(model).q_bound, initial=np.inf))
    entry = c_text.entry_points(info["fname"], info, _unit_parts(model), q_bound)
    return cg.dump() + entry, info


# --------------------------------------------------------------------------- the callable


class _Library:
    """One loaded library: its entry points and the sizes of its function.

    :meth:`rows` evaluates a batch in one foreign call, which releases the GIL (the
    extension's ``rows`` where the library is one, else ``pvosimr_eval_batch`` through
    :mod:`ctypes`); ``single`` is ``pvosimr_eval`` through ctypes with preallocated buffers
    bound (the single call when there is no extension), serialised by ``lock``;
    ``extension`` is the CPython module, or None.
    """

    def __init__(self, path: Path, info: dict) -> None:
        self.path, self.info = path, info
        self.out_shape: tuple[int, ...] = info["out_shape"]
        self.n_out = info["n_out"]
        self.cdll = ctypes.CDLL(str(path))
        batch = self.cdll.pvosimr_eval_batch
        batch.restype = ctypes.c_int
        batch.argtypes = [ctypes.c_void_p, ctypes.c_longlong, ctypes.c_void_p, ctypes.c_void_p]
        batch.argtypes += [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
        self._batch = batch
        single = self.cdll.pvosimr_eval
        single.restype = ctypes.c_int
        single.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_int]
        self.q = np.zeros(info["nq"])
        self.out = np.zeros(self.n_out)
        self.view = self.shaped(self.out[None])[0]
        self._w = np.zeros(max(1, info["sz_w"]))
        self._iw = np.zeros(max(1, info["sz_iw"]), dtype=np.int64)
        # single(check) with the buffer addresses bound once: one cheap foreign call.
        self.single = functools.partial(
            single,
            ctypes.c_void_p(self.q.ctypes.data),
            None,
            ctypes.c_void_p(self.out.ctypes.data),
            ctypes.c_void_p(self._w.ctypes.data),
            ctypes.c_void_p(self._iw.ctypes.data),
        )
        self.lock = threading.Lock()
        self.extension = None if info["extension"] is None else _load(info["extension"], path)

    def rows(
        self, qs: np.ndarray, p: np.ndarray | None, threads: int, check: bool
    ) -> tuple[int, int, np.ndarray]:
        """``(code, first bad row, out)`` for the C-contiguous float64 rows ``qs``: ``out``
        (B, n_out) holds each row's output as CasADi writes it (:meth:`shaped`)."""
        out = np.empty((len(qs), self.n_out))
        if self.extension is not None:
            rc, bad = self.extension.rows(qs, p, out, threads, int(check))
            return rc, bad, out
        bad = ctypes.c_longlong(-1)
        rc = self._batch(
            _address(qs), len(qs), None if p is None else _address(p), _address(out),
            threads, int(check), ctypes.byref(bad),
        )  # fmt: skip
        return rc, bad.value, out

    def shaped(self, out: np.ndarray) -> np.ndarray:
        """``out`` (B, n_out) as B outputs of shape ``out_shape`` (a view).

        CasADi writes a matrix column-major (and dG's matrices one after the other), so the
        last two axes are swapped: each matrix is exactly the generated code's, symmetric or
        not.
        """
        return out.reshape(len(out), *self.out_shape).swapaxes(-1, -2)


class CompiledDelassus:
    """``G = f(q)``: the compiled Delassus matrix of one model, constraint list and algorithm.

    ``f(q)``: the m × m matrix at one configuration; ``f(qs)`` with ``qs`` of shape (B, nq)
    (any 2-D array with nq columns): the (B, m, m) matrices, computed in one call into C
    split over ``threads`` threads (default :func:`usable_cores`).  With
    ``placements="input"`` every call takes ``placements=`` (one list for every row).
    :meth:`derivatives` gives dG where the function was compiled with ``derivatives=True``.

    Attributes: ``model``, ``constraint_models``, ``algorithm``, ``m``, ``nq``, ``nv``,
    ``placements`` (``"fixed"`` or ``"input"``), ``library`` (path of the shared library),
    ``source`` (path of the generated C beside it), ``flags``, ``compiled`` (whether this
    :func:`compile` call ran the compiler), ``compile_seconds`` (its wall time, 0 when the
    library came from the cache), ``n_instructions`` (of the CasADi function), ``binding``
    (``"extension"`` or ``"ctypes"``: how the single call passes a float64 ``q``, see the
    module docstring), and ``derivatives_library`` (a :class:`Build`, or None).

    Single calls through ctypes are serialised by a lock (the buffers are shared); calls
    through the extension and batched calls run in parallel across threads (their own work
    arrays, the GIL released).
    """

    def __init__(
        self,
        model: pin.Model,
        constraint_models: list,
        algorithm: str,
        build: Build,
        derivatives: Build | None = None,
    ) -> None:
        self.model = model
        self.constraint_models = constraint_models
        self.algorithm = algorithm
        self.library, self.source, self.flags = build.library, build.source, build.flags
        self.compiled, self.compile_seconds = build.compiled, build.compile_seconds
        info = build.info
        self.nq, self.nv, self.m = info["nq"], info["nv"], info["m"]
        self.placements = "input" if info["n_in"] == 2 else "fixed"
        self.n_instructions = info["n_instructions"]
        self.derivatives_library = derivatives
        self._G = _Library(build.library, info)
        self._dG = None if derivatives is None else _Library(derivatives.library, derivatives.info)
        # Everything the ctypes single call needs, in one attribute (fewer lookups).
        self._fast = (self._G.q, self._G.view, self._G.single, self._G.lock, (self.nq,))
        self._extension = getattr(self._G.extension, "delassus", None)
        self.binding = "ctypes" if self._G.extension is None else "extension"

    def __repr__(self) -> str:
        return (
            f"CompiledDelassus({self.model.name!r}, {self.algorithm!r}, m={self.m}, "
            f"library={str(self.library)!r})"
        )

    def __call__(self, q, placements=None, threads: int | None = None) -> np.ndarray:
        """G at ``q`` (m × m) or at every row of ``qs`` (B × m × m); a new array.

        ``ValueError`` on a bad ``q`` (for a batch: ``"row r of qs: "`` and the single
        call's message) or where G is not finite.
        """
        if placements is None and self._extension is not None:
            G = self._extension(q)
            if G.__class__ is np.ndarray:
                return G
            if G != c_text.NOT_FAST:
                return self._retry(G, q)
        if placements is None and self.placements == "fixed" and self._extension is None:
            q_buf, G, invoke, lock, shape = self._fast
            if q.__class__ is np.ndarray and q.dtype is _F64 and q.shape == shape:
                with lock:
                    q_buf[:] = q
                    rc = invoke(1)
                    if rc == c_text.OK:
                        return G.copy(order="K")
                return self._retry(rc, q)
        return self._evaluate(self._G, q, placements, threads)

    def derivatives(self, q, placements=None, threads: int | None = None) -> np.ndarray:
        """dG at ``q``: (nv, m, m), slice ``k`` = d/dε G(pin.integrate(model, q, ε e_k)) at
        ε = 0; at every row of ``qs``: (B, nv, m, m).  Errors as for the call."""
        if self._dG is None:
            raise TypeError(
                "this function was compiled without derivatives: pass derivatives=True to "
                "pvosimr.codegen.compile"
            )
        return self._evaluate(self._dG, q, placements, threads)

    def placement_vector(self, placements) -> np.ndarray | None:
        """``p`` for the call's ``placements`` (None for a function of ``q`` alone)."""
        if self.placements == "fixed":
            if placements is not None:
                raise TypeError(
                    "placements= given to a function compiled with placements='fixed' (the "
                    "constraint models' own placements are built in): compile with "
                    "placements='input' to pass them per call"
                )
            return None
        if placements is None:
            raise TypeError(
                "this function was compiled with placements='input': pass placements=[...], "
                "one entry per constraint (see pvosimr.symbolic.placement_vector)"
            )
        from .symbolic_inputs import placement_vector

        p = placement_vector(self.model, self.constraint_models, placements)
        return np.ascontiguousarray(p, dtype=np.float64)

    def _evaluate(self, lib: _Library, q, placements, threads: int | None) -> np.ndarray:
        """Through the batched entry point: a batch if ``q`` has nq columns, else one q."""
        p = self.placement_vector(placements)
        a = q if isinstance(q, np.ndarray) else np.asarray(q)
        batch = a.ndim == 2 and a.shape[1] == self.nq
        if batch:
            qs = self._rows(a)
        elif a.__class__ is np.ndarray and a.dtype == _F64 and a.shape == (self.nq,):
            qs = np.ascontiguousarray(a)[None]
        else:
            qs = check_configuration(self.model, q)[None]
        threads = usable_cores() if threads is None else int(threads)
        if threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        rc, bad, out = lib.rows(qs, p, threads, True)
        if rc != c_text.OK:
            out = self._failed(lib, rc, bad, qs, p, threads, batch)
        shaped = lib.shaped(out)
        return shaped if batch else shaped[0]

    def _rows(self, qs: np.ndarray) -> np.ndarray:
        """``qs`` as C-contiguous float64 rows (values are checked in C)."""
        if qs.dtype.kind not in "fiu":
            qs = check_configurations(self.model, qs)  # TypeError naming a non-real entry
        return np.ascontiguousarray(qs, dtype=np.float64)

    def _failed(
        self,
        lib: _Library,
        rc: int,
        bad: int,
        qs: np.ndarray,
        p: np.ndarray | None,
        threads: int,
        batch: bool,
    ) -> np.ndarray:
        """The error for the first failing row (row ``bad``, code ``rc``) or, when Python
        accepts the rows C rejected (a norm within rounding of the tolerance), the outputs
        evaluated without the check."""
        if rc == c_text.BAD_Q:
            for r in range(bad, len(qs)):  # the rows before ``bad`` passed
                try:
                    check_configuration(self.model, qs[r])
                except ValueError as exc:
                    if not batch:
                        raise
                    raise ValueError(f"row {r} of qs: {exc}") from None
            rc, bad, out = lib.rows(qs, p, threads, False)
            if rc == c_text.OK:
                return out
        if rc == c_text.NON_FINITE:  # the library's verdict: singular M, or precision lost
            topology = topology_for(self.model, self.constraint_models)
            err = undefined_error(
                self.algorithm, self.model, qs[bad], topology, self.constraint_models
            )
            if not batch:
                raise err
            raise ValueError(f"{err.what} at row {bad} of qs{err.why}")
        if rc == c_text.NO_MEMORY:
            raise MemoryError(f"{lib.path.name}: no memory for the work arrays")
        raise CodegenError(f"the generated function {lib.path.name} failed (code {rc})")

    def _retry(self, rc: int, q) -> np.ndarray:
        """The single call's error, or G evaluated without the check when Python accepts
        a ``q`` C rejected."""
        q = check_configuration(self.model, q)  # raises the library's message
        rc, bad, out = self._G.rows(q[None], None, 1, rc != c_text.BAD_Q)
        if rc != c_text.OK:
            out = self._failed(self._G, rc, bad, q[None], None, 1, False)
        return self._G.shaped(out)[0]


def _load(module: str, library: Path):
    """The library loaded as the CPython extension ``module``."""
    loader = importlib.machinery.ExtensionFileLoader(module, str(library))
    spec = importlib.util.spec_from_loader(module, loader)
    extension = importlib.util.module_from_spec(spec)
    loader.exec_module(extension)
    return extension


def _address(a: np.ndarray) -> int:
    """The address of ``a``'s data (cheaper than ``a.ctypes.data``)."""
    return a.__array_interface__["data"][0]


class _Empty:
    """No constraint rows: nothing to compile; still validates ``q``."""

    def __init__(self, model: pin.Model, algorithm: str, placements: str) -> None:
        self.model, self.algorithm, self.m, self.nq = model, algorithm, 0, model.nq
        self.nv, self.placements = model.nv, placements
        self.compiled, self.compile_seconds, self.library, self.source = False, 0.0, None, None

    def _shape(self, q) -> tuple[int, ...]:
        a = np.asarray(q)
        if a.ndim == 2 and a.shape[1] == self.nq:
            return (len(check_configurations(self.model, a)),)
        check_configuration(self.model, q)
        return ()

    def __call__(self, q, placements=None, threads: int | None = None) -> np.ndarray:
        return np.zeros((*self._shape(q), 0, 0))

    def derivatives(self, q, placements=None, threads: int | None = None) -> np.ndarray:
        return np.zeros((*self._shape(q), self.nv, 0, 0))


# --------------------------------------------------------------------------- compile


class Build:
    """One library in the cache: ``library`` (path), ``source`` (its C beside it), ``flags``,
    ``info`` (sizes, :func:`generate_source`), ``compiled`` (whether this process built it)
    and ``compile_seconds`` (0 when it came from the cache)."""

    def __init__(self, library: Path, source: Path, flags: tuple[str, ...], info: dict, make):
        self.library, self.source, self.flags, self.info = library, source, flags, info
        self._make = make
        self.compiled, self.compile_seconds = False, 0.0
        if not library.exists():
            self.make()

    def make(self) -> None:
        """Run the compiler (again: a damaged cache entry is replaced)."""
        self.compile_seconds, self.compiled = self._make(), True

    def __repr__(self) -> str:
        return f"Build({str(self.library)!r}, flags={self.flags})"


def compile(  # the natural name: pvosimr.codegen.compile (shadows the builtin here only)
    model: pin.Model,
    constraint_models: Iterable,
    algorithm: str = "pv-osimr",
    *,
    placements: str = "fixed",
    derivatives: bool = False,
    cache_dir: str | os.PathLike | None = None,
    flags: Sequence[str] = ("-O3",),
    derivative_flags: Sequence[str] = DERIVATIVE_FLAGS,
) -> CompiledDelassus:
    """A compiled ``q ↦ G`` for ``model`` and ``constraint_models`` (see the module docstring).

    ``algorithm`` is any of :data:`pvosimr.ALGORITHMS`, or ``"auto"`` for the one with the
    fewest operations here (the compiled function's ``algorithm`` names it).
    ``placements="input"``: the constraint placements are arguments of every call instead of
    constants.  ``derivatives=True``: also dG (:meth:`CompiledDelassus.derivatives`), in a
    second library built with ``derivative_flags``.
    ``flags`` go to the compiler before ``-shared -fPIC``; no machine-specific flag is added.
    The libraries are cached in ``cache_dir`` (default :func:`default_cache_dir`).

    Raises:
        CompilerNotFoundError: no C compiler (install one, or set ``CC``).
        CompilationError: the compiler failed (message has the command and its output).
        ModuleNotFoundError: CasADi is missing (``pip install 'pvosimr[symbolic]'``).
        ValueError / NotImplementedError: constraints or joints pvosimr does not support.
    """
    cms = as_constraint_list(constraint_models)
    source, info = generate_source(model, cms, algorithm, placements=placements)
    name = info["fname"].removeprefix("delassus_").removesuffix("_placed")
    algorithm = name.replace("_", "-")  # "auto" resolved
    if info["m"] == 0:
        return _Empty(model, algorithm, placements)  # type: ignore[return-value]
    compiler = find_compiler()
    try:
        identity = toolchain.compiler_identity(tuple(compiler))
    except toolchain.CompilerNotFoundError as exc:
        raise CompilerNotFoundError(f"{exc} {_NO_COMPILER_FIX}") from None
    folder = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    cached = functools.partial(_cached, compiler, identity, folder / "codegen")
    builds = [cached(tuple(flags), source, info, python_headers())]
    if derivatives:
        source, info = generate_source(
            model, cms, algorithm, placements=placements, derivatives=True
        )
        builds.append(cached(tuple(derivative_flags), source, info, python_headers()))
    try:
        return CompiledDelassus(model, cms, algorithm, *builds)
    except (OSError, ImportError):
        if all(build.compiled for build in builds):
            raise
        for build in builds:  # a damaged cache entry (e.g. a truncated file): build it again
            if not build.compiled:
                build.make()
        return CompiledDelassus(model, cms, algorithm, *builds)


def _cached(
    compiler: list[str],
    identity: str,
    folder: Path,
    flags: tuple[str, ...],
    source: str,
    info: dict,
    headers: list[str] | None,
) -> Build:
    """The library of ``source`` in ``folder``, built unless it is there.  With ``headers``
    it is a CPython extension too.  Its name hashes the source, the compiler, the flags and
    the Python ABI."""
    if headers is not None:
        info["extension"] = "pvosimr_" + hashlib.sha256(source.encode()).hexdigest()[:20]
        source += c_text.extension_source(info["extension"], info)
    abi = f"{sys.implementation.cache_tag} numpy {np.__version__}" if headers else "ctypes"
    key = hashlib.sha256(
        "\0".join([c_text.WRAPPER_VERSION, source, identity, shlex.join(flags), abi]).encode()
    ).hexdigest()[:24]
    stem = f"{info['fname']}_{info['nq']}q_{info['m']}m_{key}"
    library, c_file = folder / f"{stem}.so", folder / f"{stem}.c"
    make = functools.partial(_build, compiler, flags, source, library, c_file, headers or [])
    return Build(library, c_file, flags, info, make)


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
        command = [*compiler, *flags, *extension, "-shared", "-fPIC", "-pthread", "-o", tmp]
        _run_compiler([*command, str(c_file), "-lm"])
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
