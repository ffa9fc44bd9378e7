"""The study apps' progress bars: tqdm's where it is installed (``pip install "pvosimr[study]"``),
a silent stand-in otherwise, so that every command runs on the core install."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["progress_bar"]


class _Quiet:
    """The part of tqdm's interface the study apps use, showing nothing."""

    def __init__(self, iterable: Iterable | None = None, **_: Any) -> None:
        self._iterable = () if iterable is None else iterable

    def __iter__(self) -> Iterator:
        return iter(self._iterable)

    def __enter__(self) -> _Quiet:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def set_postfix_str(self, *_: Any, **__: Any) -> None:
        return None

    def update(self, *_: Any) -> None:
        return None

    def close(self) -> None:
        return None


def progress_bar(iterable: Iterable | None = None, **options: Any) -> Any:
    """``tqdm(iterable, **options)``, or a silent stand-in with the same methods where tqdm is
    not installed."""
    try:
        from tqdm import tqdm
    except ImportError:
        return _Quiet(iterable, **options)
    return tqdm(iterable, **options)
