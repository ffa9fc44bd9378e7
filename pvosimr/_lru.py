"""A small least-recently-used map, the one cache mechanism of the library's per-model state.

The keys are built from a model's ``id``, which Python reuses once the model is gone; each
caller therefore passes ``fresh``, which tells whether a stored value still belongs to the
object asking (``topology.model is model``, ``model == snapshot``).  A stale value is rebuilt
and replaced, never returned.  ``functools.lru_cache`` cannot express that check.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["LRU"]

V = TypeVar("V")


class LRU(Generic[V]):
    """At most ``maxsize`` values by key; the least recently used goes first.

    ``hits`` and ``misses`` count the lookups of :meth:`get_or_make`; :meth:`clear` forgets the
    values, not the counts.
    """

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.hits = self.misses = 0
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_make(
        self, key: Hashable, make: Callable[[], V], fresh: Callable[[V], bool] | None = None
    ) -> V:
        """The value stored at ``key`` if ``fresh(value)`` holds, else ``make()``, stored."""
        with self._lock:
            value = self._items.get(key)
            if value is not None and (fresh is None or fresh(value)):
                self._items.move_to_end(key)
                self.hits += 1
                return value
            self.misses += 1
        value = make()  # outside the lock: it may be slow, and may raise
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
