"""The XLA FFI handler that runs a generated library inside JAX on CPU.

One handler (``pvosimr_ffi.cc`` beside this module, C++17) serves every library: the address of
the library's ``pvosimr_eval_batch`` (:mod:`pvosimr.codegen.c_source`, from the library's one
binding, :meth:`pvosimr.codegen.call.CompiledDelassus.entry_point`) is an attribute of the
call, so a call (vmapped over any batch shape, nested) is one batched call into C on the
library's threads.  The handler is compiled at first use against the installed jaxlib's own
headers (``jax.ffi.include_dir()``), cached in pvosimr's cache folder with its record
(:mod:`pvosimr.codegen.cache`; the key holds the source, jaxlib's version and the compiler), loaded
with :mod:`ctypes` and registered once per process with ``jax.ffi.register_ffi_target``.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import threading
import uuid
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import jax
import jaxlib
import numpy as np

from ..codegen import cache
from ..codegen import compiler as toolchain
from ..codegen.call import CodegenError, CompiledDelassus, usable_cores
from ..codegen.contract import FAILURE_WORDS, UNKNOWN
from ..codegen.templating import fill
from ..coordinates import AS_GIVEN_TOLERANCE, coordinate_plan
from ..notices import announce

__all__ = ["TARGET", "Entry", "call", "handler_library", "handler_source", "register"]

#: The name the handler is registered under (CPU).
TARGET = "pvosimr_eval"
SOURCE = "pvosimr_ffi.cc"
_FLAGS = ("-std=c++17", "-O2", "-shared", "-fPIC")

_lock = threading.Lock()
_registered: dict[str, ctypes.CDLL] = {}


def handler_source(name: str = SOURCE) -> bytes:
    """A handler's C++: ``name`` beside this module (:data:`SOURCE`, or the CUDA route's
    handler of :mod:`.cuda`) after ``failure_words(code)``, written from
    :data:`pvosimr.codegen.contract.FAILURE_WORDS` (one table of words for every front end)."""
    cases = "".join(
        f"    case {code}: return {json.dumps(words)};\n" for code, words in FAILURE_WORDS.items()
    )
    table = fill("failure_words.cc", cases=cases, unknown=json.dumps(UNKNOWN + " (code "))
    return table.encode() + resources.files(__package__).joinpath(name).read_bytes()


def handler_library(name: str = SOURCE) -> Path:
    """The compiled handler of ``name`` (:func:`handler_source`), built now if this source,
    jaxlib and compiler have none yet."""
    source = handler_source(name)
    compiler = toolchain.find_compiler("c++", needed_by="pvosimr.jax")
    identity = toolchain.compiler_identity(tuple(compiler))
    parts = (jaxlib.__version__, identity, " ".join(_FLAGS))
    key = hashlib.sha256(b"\0".join([source, *(s.encode() for s in parts)])).hexdigest()[:16]
    library = cache.cache_folder("jax") / f"{Path(name).stem}_{key}.so"
    if cache.usable(library):
        return library
    announce(
        f"compiling pvosimr's XLA FFI handler for jaxlib {jaxlib.__version__} with "
        f"{Path(compiler[0]).name} (once; a few seconds) into {library.parent}"
    )
    src = library.parent / f".build-{os.getpid()}-{uuid.uuid4().hex}.cc"
    try:  # compiled into a fresh name, recorded, moved into place (atomic across processes)
        src.write_bytes(source)
        cache.install(
            library,
            lambda tmp: toolchain.run_compiler(
                [*compiler, *_FLAGS, f"-I{jax.ffi.include_dir()}", str(src), "-o", str(tmp)],
                CodegenError,
                "compiling pvosimr's XLA FFI handler",
            ),
        )
    finally:
        src.unlink(missing_ok=True)
    return library


def register(
    target: str = TARGET, source: str = SOURCE, symbol: str = "PvosimrEval", platform: str = "cpu"
) -> None:
    """Compile (or find in the cache), load and register the handler of ``source``, its
    function ``symbol``, as ``target`` for ``platform``, once per process."""
    with _lock:
        if target not in _registered:
            library = ctypes.CDLL(str(handler_library(source)))
            capsule = jax.ffi.pycapsule(getattr(library, symbol))
            jax.ffi.register_ffi_target(target, capsule, platform=platform)
            _registered[target] = library


@dataclass(frozen=True)
class Entry:
    """One library as the handler calls it: its batch entry point, its single one (for one
    row, on the work arrays of the calling thread, ``work_size`` = ``(sz_w, sz_iw)``), the
    model's :meth:`~pvosimr.coordinates.CoordinatePlan.packed` plan, and a gradient library's
    map to q's coordinates (0 for G's)."""

    batch: int
    single: int
    work_size: tuple[int, int]
    plan: np.ndarray
    coordinates: int = 0
    normalize: int = 0

    @classmethod
    def of(cls, f: CompiledDelassus, library: str = "G"):
        """The entry of ``f``'s library of G (``"G"``) or of its gradient (``"vjp"``), its
        addresses from the library's one binding (:meth:`CompiledDelassus.entry_point`)."""
        coordinates = f.entry_point(library, "pvosimr_to_coordinates") if library == "vjp" else 0
        return cls(
            f.entry_point(library, "pvosimr_eval_batch"),
            f.entry_point(library, "pvosimr_eval"),
            f.work_size(library),
            coordinate_plan(f.model).packed(),
            coordinates,
            f.entry_point(library, "pvosimr_normalize"),
        )


def call(
    entry: Entry,
    out: jax.ShapeDtypeStruct,
    *args,
    has_p: bool,
    threads: int | None = None,
):
    """The handler on ``args`` (q, then p where ``has_p``, then W for a gradient library):
    one call of ``entry``'s library into ``out``'s shape, G (..., m, m) or, with W, the
    gradient in q's coordinates (..., nq).  The handler applies the unit-part rule to q by the
    library's own ``pvosimr_normalize`` and, with the entry's plan, maps a gradient.  vmap
    broadcasts every input to the batch ("broadcast_all"), so nested vmaps stay one call; W may
    also be one (m, m) for every row of q."""
    threads = usable_cores() if threads is None else int(threads)
    return jax.ffi.ffi_call(TARGET, out, vmap_method="broadcast_all")(
        *args,
        entry=np.int64(entry.batch),
        has_p=np.int64(has_p),
        threads=np.int64(threads),
        plan=entry.plan,
        tolerance=np.float64(AS_GIVEN_TOLERANCE),
        single=np.int64(entry.single),
        work_size=np.array(entry.work_size, dtype=np.int64),
        coordinates=np.int64(entry.coordinates),
        normalize=np.int64(entry.normalize),
    )
