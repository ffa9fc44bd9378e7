"""What the numbers were measured on: CPU, cores, load, versions, compiler and source revision."""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import os
import platform
import subprocess
from pathlib import Path

import numpy as np
import pinocchio as pin

import pvosimr
from pvosimr.codegen import compiler as toolchain

__all__ = ["keep_freed_memory", "machine"]

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameters (glibc's malloc.h)
_KEPT = {_M_TRIM_THRESHOLD: 1 << 30, _M_MMAP_THRESHOLD: 32 << 20}  # the mmap one's maximum
_KEPT_TEXT = (
    f"glibc's trim threshold {_KEPT[_M_TRIM_THRESHOLD] >> 30} GiB, "
    f"mmap threshold {_KEPT[_M_MMAP_THRESHOLD] >> 20} MiB"
)


def _cpu() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, :func:`platform.processor` elsewhere)."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _cores() -> str:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count() or 0
    return f"{os.cpu_count()} logical ({usable} usable by this process)"


def _git_state() -> str:
    """``git <commit>`` of the library's source tree, flagging uncommitted changes to it."""
    root = Path(pvosimr.__file__).resolve().parent

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)

    try:
        head, status = git("rev-parse", "--short", "HEAD"), git("status", "--porcelain", "--", ".")
    except OSError:
        return ""
    if head.returncode != 0:
        return ""
    changed = [line[3:] for line in status.stdout.splitlines() if line[:2].strip()]
    note = f" + uncommitted changes to {', '.join(changed)}" if changed else ""
    return f"git {head.stdout.strip()}{note}"


def _compiler() -> str:
    """The C compiler of the generated code, as it enters the compiled libraries' cache key."""
    try:
        return toolchain.compiler_identity(tuple(toolchain.find_compiler("c")))
    except toolchain.CompilerNotFoundError as exc:
        return f"unavailable ({exc})"


def machine() -> dict[str, str]:
    """What the numbers were measured on, as ``name: value`` lines of the report."""
    info = {
        "cpu": _cpu(),
        "cores": _cores(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pin": pin.__version__,
        "pvosimr": pvosimr.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    source = _git_state()
    if source:
        info["source"] = source
    with contextlib.suppress(OSError):  # no load average on some systems
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        info["load average (1, 5, 15 min) at start"] = load
    with contextlib.suppress(ImportError):
        import casadi

        info["casadi"] = casadi.__version__
    info["C compiler"] = _compiler()
    return info


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
    return f"kept by the process ({_KEPT_TEXT})"
