"""What the numbers were measured on (the one description, with the C compiler), and the memory
setting of a timing run."""

from __future__ import annotations

import ctypes
import platform
from pathlib import Path

import pvosimr
from pvosimr.codegen import compiler as toolchain
from pvosimr.study.machine import describe

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameters (glibc's malloc.h)
_KEPT = {_M_TRIM_THRESHOLD: 1 << 30, _M_MMAP_THRESHOLD: 32 << 20}  # the mmap one's maximum


def machine() -> dict[str, str]:
    """What the numbers were measured on (:func:`pvosimr.study.machine.describe`), with the C
    compiler of the generated code as it enters the compiled libraries' cache key."""
    try:
        compiler = toolchain.compiler_identity(tuple(toolchain.find_compiler("c")))
    except toolchain.CompilerNotFoundError as exc:
        compiler = f"unavailable ({exc})"
    source = Path(pvosimr.__file__).resolve().parent
    return describe(source=source, **{"C compiler": compiler})


def keep_freed_memory() -> str:
    """Have glibc keep the memory this process frees instead of handing it back to the system
    (its trim and mmap thresholds raised with ``mallopt``), for the rest of the process.
    Otherwise a large buffer freed and taken again, such as the output XLA allocates for a
    jitted batch, pays a page fault per 4 KiB in some calls and not in others, as the process's
    earlier allocations decide; the numpy arrays of the direct calls do not.  What was done,
    for the report."""
    if platform.libc_ver()[0] != "glibc":
        return "not set (the C library is not glibc)"
    mallopt = ctypes.CDLL(None).mallopt
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    if not all(mallopt(parameter, value) == 1 for parameter, value in _KEPT.items()):
        return "not set (glibc's mallopt refused)"
    trim, mmap = _KEPT[_M_TRIM_THRESHOLD] >> 30, _KEPT[_M_MMAP_THRESHOLD] >> 20
    return f"kept by the process (glibc's trim threshold {trim} GiB, mmap threshold {mmap} MiB)"
