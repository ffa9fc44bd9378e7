"""The entries of pvosimr's cache folder: made with a clear error, recorded, checked before use.

Both compiled paths (:mod:`pvosimr.codegen.build`, :mod:`pvosimr.reference.bridge`) keep shared
libraries in :func:`pvosimr.codegen.compiler.cache_dir`.  Loading a library that was cut short
(a full disk, an interrupted copy) does not raise: the dynamic loader maps it and the process
dies of SIGBUS.  So every build writes the library's size and SHA-256 beside it
(``<library>.sha256``, before the library itself appears, both atomically), and
:func:`usable` compares them before anything loads it: an entry that does not match (or has no
record) is renamed to ``<library>.damaged-<time>`` (kept for a look, not deleted) and built again,
with one line on stderr (:func:`pvosimr.notices.announce`).  An entry is checked and built
under :func:`building`, so that processes wanting the same entry at once (test workers, a
pool) compile it once: the others wait, then load it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock, each process builds (atomically)
    fcntl = None  # type: ignore[assignment]

from ..notices import announce
from .compiler import cache_dir

__all__ = [
    "RECORD_SUFFIX",
    "CacheFolderError",
    "building",
    "cache_dir_origin",
    "cache_folder",
    "damage",
    "install",
    "make_folder",
    "record",
    "set_aside",
    "usable",
]

RECORD_SUFFIX = ".sha256"


class CacheFolderError(OSError):
    """pvosimr's cache folder cannot be created or written; the message names the folder and
    what chose it (``$PVOSIMR_CACHE_DIR``, ``$XDG_CACHE_HOME``, an argument or the default)."""


def cache_dir_origin() -> str:
    """What chose :func:`pvosimr.codegen.compiler.cache_dir`, for messages."""
    for variable in ("PVOSIMR_CACHE_DIR", "XDG_CACHE_HOME"):
        if os.environ.get(variable):
            return f"${variable}={os.environ[variable]}"
    return "the default, ~/.cache/pvosimr"


def make_folder(folder: Path, chosen_by: str) -> Path:
    """``folder`` created if needed and writable, else :class:`CacheFolderError` in one line
    naming it and ``chosen_by`` (the variable or argument that set it)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        why = f"cannot be created ({exc.strerror or exc})"
    else:
        if os.access(folder, os.W_OK | os.X_OK):
            return folder
        why = "is not writable"
    raise CacheFolderError(
        f"pvosimr's cache folder {folder} {why}; it was set by {chosen_by}. "
        "Point PVOSIMR_CACHE_DIR at a writable folder."
    )


def cache_folder(name: str, chosen: str | os.PathLike | None = None, argument_of: str = "") -> Path:
    """``name/`` in pvosimr's cache folder (:func:`pvosimr.codegen.compiler.cache_dir`), or in
    ``chosen`` (the ``cache_dir`` argument of ``argument_of``) where given, created now
    (:func:`make_folder`)."""
    if chosen is not None:
        argument = f"the cache_dir argument of {argument_of}"
        return make_folder(Path(chosen).expanduser() / name, argument)
    return make_folder(cache_dir() / name, cache_dir_origin())


def _fingerprint(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return f"{os.path.getsize(path)} {digest.hexdigest()}"


def _record_of(entry: Path) -> Path:
    return entry.with_name(entry.name + RECORD_SUFFIX)


def record(built: str | os.PathLike, entry: Path) -> None:
    """Record the size and SHA-256 of ``built`` (the file about to be moved to ``entry``) beside
    ``entry``, atomically: called before the move, so a library in place always has one."""
    fingerprint = _fingerprint(built) + "\n"
    install(_record_of(entry), lambda tmp: tmp.write_text(fingerprint), recorded=False)


def damage(entry: Path) -> str | None:
    """Why ``entry`` does not match its record, or None when it does (the OSError of ``open``
    when there is no ``entry``)."""
    found = _fingerprint(entry)
    try:
        recorded = _record_of(entry).read_text().strip()
    except FileNotFoundError:
        return "no size and hash recorded: cut short, or built by an older pvosimr"
    if found == recorded:
        return None
    size = (recorded.split() or ["?"])[0]
    return f"{found.split()[0]} bytes and another hash than the {size} bytes recorded"


def set_aside(entry: Path, why: str) -> Path:
    """Rename the damaged ``entry`` out of the way, saying so in one line (its record stays:
    the rebuild replaces it)."""
    stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"  # unique: never replaces one
    aside = entry.with_name(f"{entry.name}.damaged-{stamp}")
    try:
        os.replace(entry, aside)
    except FileNotFoundError:
        return aside  # another process set it aside first
    announce(f"the cached {entry.name} is damaged ({why}); set aside as {aside.name}, rebuilding")
    return aside


def usable(entry: Path) -> bool:
    """Whether ``entry`` is in the cache and matches its record; a damaged one is set aside
    (:func:`set_aside`) and False returned, so the caller builds it again."""
    try:
        why = damage(entry)
    except (FileNotFoundError, NotADirectoryError):
        return False  # not built yet (or set aside by another process meanwhile)
    if why is None:
        return True
    set_aside(entry, why)
    return False


@contextlib.contextmanager
def building(entry: Path) -> Iterator[None]:
    """Held while ``entry`` is checked (:func:`usable`) and built: a process that wants the same
    entry meanwhile waits here, saying so in one line, and then finds it built.  An advisory
    lock on ``<entry>.lock`` (``fcntl.flock``, released when the process ends, however it ends);
    without ``fcntl`` nothing is locked and each process builds its own copy, atomically."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    with open(entry.with_name(entry.name + ".lock"), "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            announce(f"waiting for another process to finish building {entry.name}")
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def install(entry: Path, make: Callable[[Path], object], recorded: bool = True) -> None:
    """Build ``entry`` with ``make(path)`` into a fresh name beside it, record it (where
    ``recorded``) and move it into place: atomic across processes, and a build that writes
    nothing leaves nothing."""
    tmp = entry.with_name(f".build-{os.getpid()}-{uuid.uuid4().hex}{entry.suffix}")
    try:
        make(tmp)
        if recorded:
            record(tmp, entry)
        os.replace(tmp, entry)
    finally:
        tmp.unlink(missing_ok=True)
