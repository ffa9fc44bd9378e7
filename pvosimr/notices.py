"""One line on stderr while the caller waits: what pvosimr is doing and why it takes time.

A compile, a damaged cache entry set aside, a one-time choice made for a new topology: each says
so in one line, ``pvosimr: <message>``, on stderr (stdout stays the caller's).  Set
``PVOSIMR_QUIET=1`` to silence them all.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator

__all__ = ["QUIET_VARIABLE", "SLOW_SECONDS", "announce", "said_if_slow"]

#: Set to anything but ``""`` or ``"0"`` to silence :func:`announce`.
QUIET_VARIABLE = "PVOSIMR_QUIET"

#: A step that runs longer than this (seconds) says what it is doing (:func:`said_if_slow`).
SLOW_SECONDS = 2.0


def announce(message: str) -> None:
    """One line on stderr, ``pvosimr: <message>``.  ``PVOSIMR_QUIET=1`` silences it."""
    if os.environ.get(QUIET_VARIABLE, "") in ("", "0"):
        print(f"pvosimr: {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def said_if_slow(message: str, seconds: float | None = None) -> Iterator[None]:
    """Announce ``message`` once the block has run ``seconds`` (default :data:`SLOW_SECONDS`)
    and is still running; a quick block says nothing."""
    timer = threading.Timer(SLOW_SECONDS if seconds is None else seconds, announce, (message,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
