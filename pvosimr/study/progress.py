"""The study apps' progress: tqdm's bars on a terminal (``pip install "pvosimr[study]"``),
whole lines elsewhere, so that a captured log holds no ``\\r`` frames and every command runs on
the core install."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

__all__ = ["progress_bar"]

#: Away from a terminal, at most one progress line per this many seconds (and one at the end).
LINE_SECONDS = 15.0


class _Quiet:
    """The part of tqdm's interface the study apps use, showing nothing."""

    def __init__(self, iterable: Iterable | None = None, **_: Any) -> None:
        self._iterable = () if iterable is None else iterable

    def __iter__(self) -> Iterator:
        return iter(self._iterable)

    def __enter__(self) -> _Quiet:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def set_postfix_str(self, *_: Any, **__: Any) -> None:
        return None

    def update(self, *_: Any) -> None:
        return None

    def close(self) -> None:
        return None


class _Lines(_Quiet):
    """Progress as whole lines, ``desc: 3/10 case in 31 s (postfix)``: at most one every
    :data:`LINE_SECONDS`, and one when done (unless ``leave=False``, tqdm's transient bar)."""

    def __init__(
        self,
        iterable: Iterable | None = None,
        *,
        file: TextIO,
        desc: str | None = None,
        total: int | None = None,
        unit: str = "it",
        leave: bool = True,
        **_: Any,
    ) -> None:
        super().__init__(iterable)
        if total is None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        self._file, self._desc, self._total, self._unit = file, desc or "progress", total, unit
        self._leave, self._done, self._postfix, self._closed = leave, 0, "", False
        self._start = self._last = time.monotonic()

    def __iter__(self) -> Iterator:
        for item in self._iterable:
            yield item
            self.update()
        self.close()

    def set_postfix_str(self, s: str = "", *_: Any, **__: Any) -> None:
        self._postfix = s

    def update(self, n: int = 1) -> None:
        self._done += n
        if time.monotonic() - self._last >= LINE_SECONDS:
            self._say("")

    def close(self) -> None:
        if not self._closed and self._leave and self._done:
            self._say(", done")
        self._closed = True

    def _say(self, done: str) -> None:
        self._last = time.monotonic()
        count = f"{self._done}/{self._total}" if self._total is not None else f"{self._done}"
        postfix = f" ({self._postfix})" if self._postfix and not done else ""
        elapsed = self._last - self._start
        line = f"{self._desc}: {count} {self._unit}{done} in {elapsed:.0f} s{postfix}"
        print(line, file=self._file, flush=True)


def progress_bar(iterable: Iterable | None = None, **options: Any) -> Any:
    """``tqdm(iterable, **options)`` when its stream (``file``, default stderr) is a terminal
    and tqdm is installed; otherwise plain lines (:class:`_Lines`), or nothing when
    ``disable=True``."""
    if options.get("disable"):
        return _Quiet(iterable)
    stream = options.get("file") or sys.stderr
    isatty = getattr(stream, "isatty", None)
    if isatty and isatty():
        try:
            from tqdm import tqdm
        except ImportError:
            pass
        else:
            return tqdm(iterable, **options)
    return _Lines(iterable, **{**options, "file": stream})
