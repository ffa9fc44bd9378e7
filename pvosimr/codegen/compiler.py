"""What pvosimr's two compiled paths share: the cache folder, finding a compiler, its identity.

:mod:`pvosimr.codegen.build` (generated C) and :mod:`pvosimr.reference.bridge` (the C++ bridge
to Pinocchio's PV-OSIMr) build shared libraries on first use and keep them in :func:`cache_dir`,
under names that hash everything the library depends on, the compiler's
:func:`compiler_identity` included: a new compiler, Python or pin is a new name, never a stale
library.  While they build they say so in one line on stderr (:func:`pvosimr.notices.announce`).
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
from pathlib import Path

__all__ = [
    "CompilerNotFoundError",
    "cache_dir",
    "compiler_identity",
    "find_compiler",
    "run_compiler",
]

#: ``(environment variable, names tried on PATH)`` per language.
_COMPILERS = {"c": ("CC", ("cc", "gcc", "clang")), "c++": ("CXX", ("c++", "g++", "clang++"))}

_INSTALL_ONE = {
    "c": "Debian/Ubuntu: `apt-get install gcc`; Fedora: `dnf install gcc`",
    "c++": "Debian/Ubuntu: `apt-get install g++`; Fedora: `dnf install gcc-c++`",
}


class CompilerNotFoundError(OSError):
    """No usable compiler: the environment variable is wrong, or none is on ``PATH``."""


def cache_dir() -> Path:
    """``$PVOSIMR_CACHE_DIR``, else ``$XDG_CACHE_HOME/pvosimr``, else ``~/.cache/pvosimr``.

    The one cache folder of pvosimr: compiled libraries and operation counts live below it.
    """
    explicit = os.environ.get("PVOSIMR_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "pvosimr"


def how_to_get_compiler(language: str = "c") -> str:
    """One sentence: how to install a compiler for ``language``, or point pvosimr at one."""
    variable, _ = _COMPILERS[language]
    return (
        f"Install one ({_INSTALL_ONE[language]}; macOS: `xcode-select --install`) or point the "
        f"{variable} environment variable at it ({variable}=/path/to/compiler)."
    )


def find_compiler(language: str = "c", needed_by: str = "pvosimr.codegen.build") -> list[str]:
    """The compiler command for ``language`` (``"c"`` or ``"c++"``) as an argv list.

    ``$CC`` / ``$CXX`` (split like a shell would) when set, else the first of ``cc``, ``gcc``,
    ``clang`` (``c++``, ``g++``, ``clang++``) on ``PATH``.
    """
    variable, names = _COMPILERS[language]
    env = os.environ.get(variable, "").strip()
    if env:
        argv = shlex.split(env)
        exe = shutil.which(argv[0])
        if exe is None:
            raise CompilerNotFoundError(
                f"{variable}={env!r} is not an executable on PATH. Fix {variable} or unset it "
                f"to use {'/'.join(names[:2])}. " + how_to_get_compiler(language)
            )
        return [exe, *argv[1:]]
    for name in names:
        exe = shutil.which(name)
        if exe is not None:
            return [exe]
    raise CompilerNotFoundError(
        f"{needed_by} needs a {language.upper()} compiler, and none was found (no ${variable}, "
        f"and none of {', '.join(names)} on PATH). " + how_to_get_compiler(language)
    )


@functools.lru_cache(maxsize=8)
def compiler_identity(argv: tuple[str, ...]) -> str:
    """Path and first line of ``--version``: part of every compiled library's cache key."""
    try:
        out = subprocess.run(
            [*argv, "--version"], capture_output=True, text=True, timeout=60, check=False
        )
        version = (out.stdout or out.stderr).strip().splitlines()[:1]
    except (OSError, subprocess.SubprocessError) as exc:
        what = " ".join(argv)
        raise CompilerNotFoundError(f"the compiler {what!r} cannot be run ({exc}).") from exc
    return " ".join(argv) + " | " + (version[0] if version else "unknown version")


def run_compiler(command: list[str], error: type[Exception], what: str) -> None:
    """Run one compiler command; ``error`` when it fails, naming ``what`` (e.g. "compiling
    the bridge"), the command and the end of the compiler's output."""
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        log = (out.stderr or out.stdout).strip()
        raise error(
            f"{what} failed (exit {out.returncode}):\n  {shlex.join(command)}\n{log[-4000:]}"
        )
