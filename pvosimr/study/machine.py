"""What a number was measured on: the one machine description of every report.

Standard library only, so that a runner that must not import pvosimr (the GPU host's, in
``benchmarks/``) can load this file as it is and write the same description.
"""

from __future__ import annotations

import contextlib
import datetime
import importlib.metadata
import os
import platform
import subprocess
from collections.abc import Iterable
from pathlib import Path

__all__ = ["describe", "one_line"]


def _cpu() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, :func:`platform.processor` elsewhere)."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown"


def _cores() -> str:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count() or 0
    return f"{os.cpu_count()} logical ({usable} usable by this process)"


def _git_state(folder: Path) -> str:
    """``git <commit>`` of the source tree at ``folder``, naming uncommitted changes to it."""

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True)

    try:
        head, status = git("rev-parse", "--short", "HEAD"), git("status", "--porcelain", "--", ".")
    except OSError:
        return ""
    if head.returncode != 0:
        return ""
    changed = [line[3:] for line in status.stdout.splitlines() if line[:2].strip()]
    note = f" + uncommitted changes to {', '.join(changed)}" if changed else ""
    return f"git {head.stdout.strip()}{note}"


def describe(
    packages: Iterable[str] = ("pvosimr", "pin", "numpy", "casadi"),
    *,
    source: str | os.PathLike | None = None,
    **extra: str,
) -> dict[str, str]:
    """``name: value`` lines of what runs this process: CPU, cores, OS, Python, the versions of
    ``packages`` that are installed, the date, the load average at this call, the git state of
    ``source`` (a folder) where it is a checkout, then ``extra`` (a compiler, a device)."""
    info = {"cpu": _cpu(), "cores": _cores(), "os": platform.platform()}
    info["python"] = platform.python_version()
    for name in packages:  # those installed
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            info[name] = importlib.metadata.version(name)
    info["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    with contextlib.suppress(OSError):  # no load average on some systems
        info["load average (1, 5, 15 min)"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    state = _git_state(Path(source)) if source is not None else ""
    if state:
        info["source"] = state
    info.update(extra)
    return info


def one_line(info: dict[str, str]) -> str:
    """:func:`describe`'s lines as one sentence for a report's head."""
    return "; ".join(f"{k} {v}" for k, v in info.items())
