"""The XLA FFI handler that runs a generated library inside JAX on CPU.

One handler (``pvosimr_ffi.cc`` beside this module, C++17) serves every library: the address of
the library's ``pvosimr_eval_batch`` (:mod:`pvosimr.codegen.c_source`) is an attribute of the
call, so a call (vmapped over any batch shape, nested) is one batched call into C on the
library's threads.  The handler is compiled at first use against the installed jaxlib's own
headers (``jax.ffi.include_dir()``), cached in pvosimr's cache folder with its record
(:mod:`pvosimr.codegen.cache`; the key holds the source, jaxlib's version and the compiler), loaded
with :mod:`ctypes` and registered once per process with ``jax.ffi.register_ffi_target``.
"""

from __future__ import annotations

import ctypes
import hashlib
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
from ..codegen.call import CodegenError, usable_cores
from ..coordinates import AS_GIVEN_TOLERANCE
from ..notices import announce

__all__ = [
    "TARGET",
    "Entry",
    "batch_entry",
    "call",
    "handler_library",
    "register",
    "single_entry",
]

#: The name the handler is registered under (CPU).
TARGET = "pvosimr_eval"
SOURCE = "pvosimr_ffi.cc"
_FLAGS = ("-std=c++17", "-O2", "-shared", "-fPIC")

_lock = threading.Lock()
_registered: dict[str, ctypes.CDLL] = {}
_entries: dict[str, ctypes.CDLL] = {}


def handler_library() -> Path:
    """The compiled handler, built now if this source, jaxlib and compiler have none yet."""
    source = resources.files(__package__).joinpath(SOURCE).read_bytes()
    compiler = toolchain.find_compiler("c++", needed_by="pvosimr.jax")
    identity = toolchain.compiler_identity(tuple(compiler))
    parts = (jaxlib.__version__, identity, " ".join(_FLAGS))
    key = hashlib.sha256(b"\0".join([source, *(s.encode() for s in parts)])).hexdigest()[:16]
    folder = cache.make_folder(toolchain.cache_dir() / "jax", cache.cache_dir_origin())
    library = folder / f"pvosimr_ffi_{key}.so"
    if not cache.usable(library):
        _build(compiler, source, library)
    return library


def _build(compiler: list[str], source: bytes, library: Path) -> None:
    """Compile into a fresh name, record it, move it into place (atomic across processes)."""
    announce(
        f"compiling pvosimr's XLA FFI handler for jaxlib {jaxlib.__version__} with "
        f"{Path(compiler[0]).name} (once; a few seconds) into {library.parent}"
    )
    src = library.parent / f".build-{os.getpid()}-{uuid.uuid4().hex}.cc"
    try:
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


def register() -> None:
    """Compile (or find in the cache), load and register the handler, once per process."""
    with _lock:
        if TARGET in _registered:
            return
        library = ctypes.CDLL(str(handler_library()))
        jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(library.PvosimrEval), platform="cpu")
        _registered[TARGET] = library


def batch_entry(library: str | os.PathLike) -> int:
    """The address of ``pvosimr_eval_batch`` in the generated ``library`` (loaded once; the
    dynamic loader hands back the copy :mod:`pvosimr.codegen` has loaded)."""
    return _address(library, "pvosimr_eval_batch")


def single_entry(library: str | os.PathLike) -> int:
    """The address of ``pvosimr_eval`` (one row, the caller's work arrays) in ``library``."""
    return _address(library, "pvosimr_eval")


def coordinates_entry(library: str | os.PathLike) -> int:
    """The address of ``pvosimr_to_coordinates`` in a gradient ``library``."""
    return _address(library, "pvosimr_to_coordinates")


def _address(library: str | os.PathLike, symbol: str) -> int:
    key = str(library)
    with _lock:
        if key not in _entries:
            _entries[key] = ctypes.CDLL(key)
        cdll = _entries[key]
    return ctypes.cast(getattr(cdll, symbol), ctypes.c_void_p).value


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

    @classmethod
    def of(
        cls,
        library: str | os.PathLike,
        work_size: tuple[int, int],
        plan: np.ndarray,
        gradient: bool = False,
    ):
        """The entry of ``library``; ``gradient``: a gradient library (a W input)."""
        coordinates = coordinates_entry(library) if gradient else 0
        return cls(batch_entry(library), single_entry(library), work_size, plan, coordinates)


def call(
    entry: Entry,
    out: jax.ShapeDtypeStruct,
    *args,
    has_p: bool,
    threads: int | None = None,
):
    """The handler on ``args`` (q, then p where ``has_p``, then W for a gradient library):
    one call of ``entry``'s library into ``out``'s shape, G (..., m, m) or, with W, the
    gradient in q's coordinates (..., nq).  With the entry's plan the handler normalises q's
    unit parts (as given within :data:`~pvosimr.coordinates.AS_GIVEN_TOLERANCE`) and maps a
    gradient.  vmap broadcasts every input to the batch ("broadcast_all"), so nested vmaps stay
    one call; W may also be one (m, m) for every row of q."""
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
    )
