"""Compiled ``q ↦ G``: C generated from the CasADi function, built once, called from Python.

:func:`compile` turns :func:`pvosimr.symbolic.delassus_function` (the algorithm on CasADi SX,
model constants folded in) into C with CasADi's ``CodeGenerator``, appends the entry points of
:mod:`pvosimr.codegen.c_source`, compiles it with the system C compiler into a shared library and
loads it (:class:`~pvosimr.codegen.call.CompiledDelassus`)::

    from .. import codegen
    delassus = codegen.compile(robot.model, robot.constraints)   # "pv-osimr" by default
    G = delassus(q)                                             # m × m numpy array
    Gs = delassus(qs)                  # qs (B, nq) -> (B, m, m): one call into C, all cores
    Gs = delassus(qs, threads=1)       # ... on the calling thread only

**One q.**  The C checks ``q`` (within the model's range, finite, unit quaternions / unit
complex numbers to the tolerance of ``pin.isNormalized``) and the result (finite).  Where
Python's and numpy's C headers are installed, the library is also a CPython extension whose
``delassus(q)`` takes a float64 ``q`` and returns a new ``G``: a call costs about the generated
code's own time (``binding == "extension"``).  Otherwise it is called through :mod:`ctypes`
(``binding == "ctypes"``, a little more per call).  Any rejected or unusual input goes
through :func:`pvosimr.checks.check_configuration`, which raises the library's usual
``ValueError``.  (``casadi.external`` loads the same library, but its generic per-call path
costs more than the computation itself.)

**A batch.**  A 2-D array with nq columns is a batch of rows: ``pvosimr_eval_batch`` runs with
the GIL released on ``threads`` workers (default: the usable cores,
:func:`~pvosimr.codegen.call.usable_cores`; never more than the blocks of rows), each a POSIX
thread with its own work arrays (the calling thread is the first: ``threads=1`` starts no
thread) taking blocks of a few consecutive rows in turn, so a worker the OS runs less often
takes fewer rows.  On the scalar path every row is the single call's matrix bit for bit; on vector
lanes (below) within rounding of it.  A bad row raises ``ValueError``
naming the first one, ``"row 17 of qs: "`` and the single call's message; a row where G is not
finite raises the single call's error with the row in place of "this q".  Through the
extension or ctypes alike (the ctypes call releases the GIL too).  Starting a thread is not
free: a second one pays off only from some number of rows on (fewer for a heavier function), so
pass ``threads=1`` for small batches.  ``pvosimr bench`` times one call, ``casadi.external``
and batches of 1, 64 and 1024 rows on one and two threads against Pinocchio's C++
(``figures/timings.md``).

**Vector lanes.**  Where the CPU and the compiler have AVX-512F, or else AVX2 and FMA (asked
once of the compiler's ``-march=native``; x86-64 only), the library also holds the generated
function rewritten on vectors of eight, or four, doubles (:mod:`pvosimr.codegen.simd`): a
batch runs that many configurations per instruction, rows transposed into lanes (struct of
arrays) and back; sin and cos are lane-wise polynomials, sqrt the vector instruction.  Only
that code is compiled for those features (a ``target`` pragma; the scalar function, the single
call and the flags are unchanged), and they are part of the cache key.  Groups of lanes start
at row 0 and blocks of rows on them, so a row's matrix does not depend on ``threads``; the
last ``B mod lanes`` rows, and any group where a row fails a check or gives a non-finite G
(the scalar rows then name it), run through the scalar function.  Lane rows differ from the
scalar function's by rounding (FMA contraction, the polynomial sin/cos): within 1e-13 of
``max|G|``, which tests/test_codegen_simd.py checks.  ``compile(..., simd=4)`` (or
``PVOSIMR_SIMD=4``) caps the lanes at four; ``simd=False`` (or ``PVOSIMR_SIMD=0``) builds the
scalar path only (the compiled function's ``simd_lanes`` is then 0); so does a function whose
C has a statement the rewriter does not know, or a CPU without the features (also checked in
C when the library is loaded elsewhere).  dG's library is scalar.  With the lanes comes one more
copy of the scalar function, compiled for FMA and AVX2, which the single call and the scalar rows
of a batch run where the CPU has them (the plain function elsewhere): its matrices differ from
the plain function's by rounding, and a batch's scalar rows are still the single call's bit for
bit.

**Placements as inputs.**  ``compile(..., placements="input")`` compiles
``delassus_function(..., placements="input")``: the constraint placements are an argument of
every call, ``f(q, placements=[...])`` (one ``pin.SE3`` per constraint, a pair for one with a
second placement in G: :func:`pvosimr.symbolic.placement_vector`'s format, checked by it; the
same placements for every row of a batch).  One build then serves every contact location on the
same bodies.  Likewise a sub-list of the constraints gives the sub-matrix of G on their rows
(G's blocks are pairwise: ``G_ij = J_i M⁻¹ J_jᵀ``), so one build with every candidate contact
serves every active subset: ``G[np.ix_(rows, rows)]`` (the same matrix to rounding).

**Derivatives.**  ``compile(..., derivatives=True)`` adds a second library for
``pvosimr.symbolic.delassus_function(..., output="dG")``: ``f.derivatives(q[, placements])`` is
(nv, m, m), slice ``k`` = d/dε G(pin.integrate(q, ε e_k)) at ε = 0, and (B, nv, m, m) for a
batch, with the checks and errors of the call.  It is a separate library (the G library is the
one ``derivatives=False`` builds, shared in the cache) so that it gets its own flags,
``derivative_flags`` (default ``-O1``): its C is about nv times G's.

**A gradient.**  ``compile(..., vjp=True)`` adds a library for
``pvosimr.symbolic.delassus_function(..., output="vjp")``: ``f.vjp(q, W[, placements])`` is the
gradient of ``⟨W, G⟩`` along ``pin.integrate``, (nv,) with entry ``k`` ``Σ_ij W_ij ∂G_ij/∂ε_k``
(the contraction of ``f.derivatives(q)`` with ``W``; ``W`` taken as given, not symmetrised),
and (B, nv) for a batch, with ``W`` (m, m) for every row or (B, m, m), one per row.  ``W`` is
checked too (its shape, finite entries: ``ValueError`` naming the entry).  It is one reverse
pass of G's graph, so its C is a few times G's whatever nv (dG's grows like nv times G's), and
it is built with ``derivative_flags`` too.  Through the extension the single call is one C
call, like G's.  ``pvosimr bench`` times it against G (``figures/timings.md``).

Libraries are cached on disk in :func:`default_cache_dir` (``$PVOSIMR_CACHE_DIR``, else
``$XDG_CACHE_HOME/pvosimr``, else ``~/.cache/pvosimr``), under a name that hashes the generated
source (which spells out every model constant and, unless they are inputs, every constraint
placement), the compiler (its path and ``--version``), the flags and, for the extension, the
Python and numpy versions: the compiler runs again only when one of them changes.  Each
library's size and SHA-256 are recorded beside it and checked before it is loaded
(:mod:`pvosimr.codegen.cache`): a damaged one is set aside and rebuilt, with one line on stderr.

The compiled function is a snapshot: editing the model (inertias, placements, armature) or,
with ``placements="fixed"``, the constraint placements afterwards needs a new :func:`compile`
(cached if it was built before).

A C compiler's time on one function grows faster than linearly with its length, and
straight-line code for hundreds of links no longer fits the core's caches, so that its time per
link grows with the links.  So a function of more than
:data:`pvosimr.codegen.chunks.CHUNKED_FROM` CasADi instructions (a few hundred links; every
robot of the bench is below) is *outlined*: traced again on
:data:`pvosimr.backends.outlined.OUTLINED`, where each link's fold and extension is a call of a
function shared by its kind of link (``f.shared_functions`` counts them), and written as many
small C functions (:mod:`pvosimr.codegen.chunks`; ``f.chunked`` says so): its build time, its
library and its call then grow like the algorithm (``pvosimr bench`` writes each library's size
and build time to ``figures/timings.md``).  Below that line CasADi's one unrolled body is
faster: every value in registers, no calls, and batches may run on vector lanes (an outlined
function's batches are scalar; where the CPU has FMA and AVX2, its single call and batch rows
run on a copy of its C compiled for them, as below the line).  dG and the gradient are never
outlined.  A lower optimization level still builds faster for a somewhat slower call:
``flags=("-O1",)`` when the build time matters more.  dG's C is the largest (about nv times
G's): hence ``derivative_flags=("-O1",)``.  The vector lanes and the FMA copy put G's function
in the library three times below the line (plain, on lanes, on FMA) and twice above it (plain,
on FMA), which doubles its build time or more: ``simd=False`` builds the plain one only, when
the build time matters more than batches and a faster single call.

Subnormal numbers are flushed to zero while the generated code runs (x86 FTZ and DAZ, the
caller's mode restored after): on a long chain the coupling between far-apart constraints
underflows, and x86 computes on subnormal numbers many times slower.  An entry of G changes by
less than the smallest normal double.

``-march=native`` can make the single call faster (FMA, AVX) but ties the library to this CPU
family; it is never added by default (the vector lanes of batches need no flag).
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import shlex
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pinocchio as pin

from ..checks import check_model
from ..constraints import as_constraint_list
from ..coordinates import unit_part_spans
from ..notices import announce, said_if_slow
from . import c_source as c_text
from . import chunks, cpython_source
from . import compiler as toolchain
from . import simd as vector
from .cache import (
    CacheFolderError,
    building,
    cache_folder,
    install,
    set_aside,
    usable,
)
from .call import CodegenError, CompiledDelassus, EmptyDelassus, usable_cores
from .templating import template

__all__ = [
    "CacheFolderError",
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

#: Always given after ``flags``: a shared library with threads; its internal symbols hidden
#: (only the entry points, CasADi's API and the extension's init are exported), so CasADi's
#: helpers (``casadi_sq``, …) are inlined instead of called through the PLT; no ``errno`` from
#: ``sqrt``, so it is one instruction (the same IEEE result).  None is machine-specific.
BUILD_FLAGS = ("-shared", "-fPIC", "-pthread", "-fvisibility=hidden", "-fno-math-errno")

#: CasADi's API and the entry points stay visible under ``-fvisibility=hidden`` (gcc, clang).
_EXPORTS = template("exports.c")

#: Flags of the derivatives' library when ``compile`` is given none (see the module docstring).
DERIVATIVE_FLAGS = ("-O1",)

#: A step of :func:`compile` that runs longer than this (seconds) says what it is doing.
SLOW_SECONDS = 2.0


class CompilerNotFoundError(CodegenError, toolchain.CompilerNotFoundError):
    """No C compiler: neither ``$CC`` nor ``cc``/``gcc``/``clang`` on ``PATH``."""


class CompilationError(CodegenError):
    """The C compiler ran but failed (the message has the command and its output)."""


# --------------------------------------------------------------------------- compiler & cache


def default_cache_dir() -> Path:
    """pvosimr's cache folder, :func:`pvosimr.codegen.compiler.cache_dir`; libraries go to
    ``codegen/``."""
    return toolchain.cache_dir()


_NO_COMPILER_FIX = toolchain.how_to_get_compiler("c")


def find_compiler() -> list[str]:
    """The C compiler command: ``$CC`` (split like a shell would) or ``cc``/``gcc``/``clang``."""
    try:
        return toolchain.find_compiler("c", needed_by="pvosimr.codegen.build")
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
            "another compiler, or pass other flags= to pvosimr.codegen.build.compile."
        )


# --------------------------------------------------------------------------- C source


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
    simd: int = 0,
    output: str = "G",
) -> tuple[str, dict]:
    """The C source of one library and its sizes (``nq``, ``m``, ``n_out``, ``sz_w``, …; and
    ``generated``, CasADi's part of the source).

    The library computes :func:`pvosimr.symbolic.delassus_function`'s ``output``: G, dG
    (``"dG"``) or the gradient of ``⟨W, G⟩`` (``"vjp"``), of ``q`` and, with
    ``placements="input"``, ``p`` (and ``W``, ``n_w = m·m`` numbers, for the gradient); entry
    points of :mod:`pvosimr.codegen.c_source`.  A function of more than
    :data:`~pvosimr.codegen.chunks.CHUNKED_FROM` instructions is written in chunks
    (``info["chunked"]``).  ``simd=4`` or ``8`` adds the vector path of the batch on that many
    lanes (:mod:`pvosimr.codegen.simd`, for x86-64 with AVX2 and FMA, or AVX-512F) where the
    generated function allows it: ``info["simd_lanes"]`` is then its lanes, else 0.
    """
    from .. import symbolic  # without CasADi: one line naming the extra to install

    ca = symbolic.ca
    f = symbolic.delassus_function(
        model, constraint_models, algorithm, placements=placements, output=output
    )
    chunked = int(f.n_instructions()) > chunks.CHUNKED_FROM
    if chunked and output == "G":  # beyond the line: a shared fold per kind of link
        f = symbolic.delassus_function(
            model, constraint_models, algorithm, placements=placements, outlined=True
        )
    cg = ca.CodeGenerator("pvosimr_generated.c", {"with_header": False})
    cg.add(f)
    names = f.name_in()
    if output == "dG":
        m, out_shape = math.isqrt(int(f.size1_out(0))), (int(model.nv),)
    elif output == "vjp":
        m, out_shape = int(f.size1_in(names.index("W"))), (int(model.nv),)
    else:
        m, out_shape = int(f.size1_out(0)), ()
    out_shape = (*out_shape, m, m) if output != "vjp" else out_shape
    info = {
        "fname": f.name(),
        "algorithm": f.name().removeprefix("delassus_").removesuffix("_placed").replace("_", "-"),
        "nq": int(model.nq),
        "nv": int(model.nv),
        "m": m,
        "n_in": int(f.n_in()),
        "n_p": int(f.nnz_in(names.index("p"))) if "p" in names else 0,
        "n_w": int(f.nnz_in(names.index("W"))) if output == "vjp" else 0,
        "n_out": int(f.nnz_out(0)),
        "out_shape": out_shape,
        "sz_arg": int(f.sz_arg()),
        "sz_res": int(f.sz_res()),
        "sz_w": int(f.sz_w()),
        "sz_iw": int(f.sz_iw()),
        "n_instructions": int(f.n_instructions()),
        "shared_functions": len(f.get_function()),
        "extension": None,  # set by compile() when it builds the CPython extension too
    }
    body = cg.dump()
    info["chunked"] = chunked
    if chunked:  # many small C functions: the compiler's time stays linear
        body = chunks.replace_body(body, f)
    info["generated"] = body
    info["q_bound"] = float(np.min(check_model(model).q_bound, initial=np.inf))
    info["unit_parts"] = unit_part_spans(model)
    return _assemble(info, simd), info


def _assemble(info: dict, lanes: int) -> str:
    """The library's C from CasADi's (``info["generated"]``): with ``lanes``, the vector path
    on that many where the function allows it (``info["simd_lanes"]``: ``lanes``, else 0; a
    chunked function's batches, and a function of ``W``'s, stay scalar)."""
    generated = info["generated"]
    wanted = lanes and not info["chunked"] and not info["n_w"]  # the lanes read q and p only
    function = vector.vector_function(generated, info["fname"], info["n_in"]) if wanted else None
    info["simd_lanes"] = 0 if function is None else lanes
    section = function and vector.section(function, info["nq"], info["n_out"], lanes)
    if info["chunked"]:  # no lanes, but the single call and rows on fused multiply-adds
        copy = chunks.native_copy(generated) if lanes else None
    else:
        copy = vector.native_copy(generated, info["fname"]) if function else None
    native = vector.on_native(copy) if copy else None
    info["native"] = native is not None
    entry = c_text.entry_points(
        info["fname"], info, info["unit_parts"], info["q_bound"], section, native
    )
    return _EXPORTS + generated + entry


# --------------------------------------------------------------------------- compile


class Build:
    """One library in the cache: ``library`` (path), ``source`` (its C beside it), ``flags``,
    ``info`` (sizes, :func:`generate_source`), ``compiled`` (whether this process built it)
    and ``compile_seconds`` (0 when it came from the cache).

    A library already in the cache is used only if it matches the size and hash recorded when
    it was built (:func:`pvosimr.codegen.cache.usable`); a damaged one is set aside and rebuilt.
    """

    def __init__(self, library: Path, source: Path, flags: tuple[str, ...], info: dict, make):
        self.library, self.source, self.flags, self.info = library, source, flags, info
        self._make = make
        self.compiled, self.compile_seconds = False, 0.0
        with building(library):  # another process building it: wait, then load its library
            if not usable(library):
                self.make()

    def make(self) -> None:
        """Run the compiler (again: a damaged cache entry is replaced)."""
        self.compile_seconds, self.compiled = self._make(), True

    def __repr__(self) -> str:
        return f"Build({str(self.library)!r}, flags={self.flags})"


def compile(  # the natural name: pvosimr.codegen.build.compile (shadows the builtin here only)
    model: pin.Model,
    constraint_models: Iterable,
    algorithm: str = "pv-osimr",
    *,
    placements: str = "fixed",
    derivatives: bool = False,
    vjp: bool = False,
    cache_dir: str | os.PathLike | None = None,
    flags: Sequence[str] = ("-O3",),
    derivative_flags: Sequence[str] = DERIVATIVE_FLAGS,
    simd: bool | int | None = None,
) -> CompiledDelassus:
    """A compiled ``q ↦ G`` for ``model`` and ``constraint_models`` (see the module docstring).

    ``algorithm`` is any of :data:`pvosimr.ALGORITHMS`, or ``"auto"`` for the one with the
    fewest operations here (the compiled function's ``algorithm`` names it).
    ``placements="input"``: the constraint placements are arguments of every call instead of
    constants.  ``derivatives=True``: also dG (:meth:`CompiledDelassus.derivatives`), in a
    second library built with ``derivative_flags``.  ``vjp=True``: also the gradient of
    ``⟨W, G⟩`` (:meth:`CompiledDelassus.vjp`), in a library of its own, also built with
    ``derivative_flags``.
    ``flags`` go to the compiler before the build's own (:data:`BUILD_FLAGS`); no
    machine-specific flag is added.
    The libraries are cached in ``cache_dir`` (default :func:`default_cache_dir`).
    ``simd``: the vector path of batches (see the module docstring) on the widest lanes this
    CPU and compiler have (True), at most that many (4 or 8), or none (False); None (default):
    as ``$PVOSIMR_SIMD`` says (``0``: none, ``4`` or ``8``: at most that many, else the
    widest).  The compiled function's ``simd_lanes`` says which was built (0: scalar).

    It says what it is doing on stderr (:func:`pvosimr.notices.announce`; silenced by
    ``PVOSIMR_QUIET=1``): one line per library it compiles (compiler, flags, cache folder), one
    for a step that takes longer than :data:`SLOW_SECONDS`, one for a damaged cache entry set
    aside; a library found in the cache is loaded without a word.

    Raises:
        ModuleNotFoundError: CasADi is missing (the message: ``pip install "pvosimr[symbolic]"``).
        CompilerNotFoundError: no C compiler (install one, or set ``CC``).
        CacheFolderError: the cache folder cannot be created or written (the message names it
            and the variable or argument that chose it).
        CompilationError: the compiler failed (message has the command and its output).
        ValueError / NotImplementedError: constraints or joints pvosimr does not support.
    """
    from .. import symbolic  # noqa: F401  (first: without CasADi, one line naming the extra)

    cms = as_constraint_list(constraint_models, model)
    _, info = _generate(model, cms, algorithm, placements)
    algorithm = info["algorithm"]  # "auto" resolved
    if info["m"] == 0:
        return EmptyDelassus(model, algorithm, placements)  # type: ignore[return-value]
    compiler = find_compiler()
    lanes = vector.lanes(simd, vector.cpu_features(tuple(compiler)))
    source = _assemble(info, lanes)
    del info["generated"]  # in the source now (a large G's is megabytes)
    info["cpu"] = " ".join(vector.FEATURES[lanes]) if info["simd_lanes"] else ""
    try:
        identity = toolchain.compiler_identity(tuple(compiler))
    except toolchain.CompilerNotFoundError as exc:
        raise CompilerNotFoundError(f"{exc} {_NO_COMPILER_FIX}") from None
    folder = cache_folder("codegen", cache_dir, "pvosimr.codegen.compile")  # before a compiler runs
    cached = functools.partial(_cached, compiler, identity, folder)
    builds = {"build": cached(tuple(flags), source, info)}
    for part, output, wanted in (("derivatives", "dG", derivatives), ("vjp", "vjp", vjp)):
        if wanted:
            source, info = _generate(model, cms, algorithm, placements, output)
            del info["generated"]
            builds[part] = cached(tuple(derivative_flags), source, info)
    try:
        return CompiledDelassus(model, cms, algorithm, **builds)
    except (OSError, ImportError) as exc:
        if all(build.compiled for build in builds.values()):
            raise
        for build in builds.values():  # matches its record, does not load: set aside, rebuild
            if not build.compiled:
                set_aside(build.library, f"it does not load: {exc}")
                build.make()
        return CompiledDelassus(model, cms, algorithm, **builds)


def _generate(
    model: pin.Model,
    cms: list,
    algorithm: str,
    placements: str,
    output: str = "G",
) -> tuple[str, dict]:
    """:func:`generate_source`, announced when it is slow (a large model, or dG)."""
    what = {"G": "G", "dG": "dG", "vjp": "the gradient of <W, G>"}[output]
    message = (
        f"code generation: building the expression graph of {what} ({algorithm}, "
        f"model {model.name or '?'} with nq={model.nq}) and writing its C"
    )
    with said_if_slow(message + " …", SLOW_SECONDS):
        return generate_source(model, cms, algorithm, placements=placements, output=output)


def _cached(
    compiler: list[str],
    identity: str,
    folder: Path,
    flags: tuple[str, ...],
    source: str,
    info: dict,
) -> Build:
    """The library of ``source`` in ``folder``, built unless it is there; a CPython extension
    too where Python's headers are found (:func:`python_headers`).  Its name hashes the source,
    the compiler, the flags and the Python ABI and, with the vector path, the CPU features it
    is compiled for.  Its source and the library appear atomically (safe across processes),
    the library after its record (size and hash, :func:`pvosimr.codegen.cache.install`)."""
    headers = python_headers()
    if headers is not None:
        info["extension"] = "pvosimr_" + hashlib.sha256(source.encode()).hexdigest()[:20]
        source += cpython_source.extension_source(info["extension"], info)
    abi = f"{sys.implementation.cache_tag} numpy {np.__version__}" if headers else "ctypes"
    key = hashlib.sha256(
        "\0".join(
            [c_text.WRAPPER_VERSION, source, identity, shlex.join(flags), abi, info.get("cpu", "")]
        ).encode()
    ).hexdigest()[:24]
    stem = f"{info['fname']}_{info['nq']}q_{info['m']}m_{key}"
    library, c_file = folder / f"{stem}.so", folder / f"{stem}.c"
    lanes = f", batches on {info['simd_lanes']} lanes ({info['cpu']})" if info["simd_lanes"] else ""
    said = (
        f"code generation: compiling {info['n_instructions']:,} CasADi instructions "
        f"({len(source) // 1000:,} kB of C, {info['fname']}) with "
        f"{Path(compiler[0]).name} {shlex.join(flags)}{lanes} into {folder} (once: later calls "
        "load it)"
    )
    extension = [f"-I{include}" for include in headers or []]
    if headers and sys.platform == "darwin":
        extension.append("-Wl,-undefined,dynamic_lookup")  # Python's symbols at load time
    command = [*compiler, *flags, *extension, *BUILD_FLAGS, "-o"]

    def make() -> float:
        announce(said)
        install(c_file, lambda tmp: tmp.write_bytes(source.encode()), recorded=False)
        start = time.perf_counter()
        install(library, lambda tmp: _run_compiler([*command, str(tmp), str(c_file), "-lm"]))
        return time.perf_counter() - start

    return Build(library, c_file, flags, info, make)
