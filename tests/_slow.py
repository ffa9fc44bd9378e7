"""Where a test's parameters are slow, written beside the test: :func:`slow_ones` marks some of
a parametrization's values ``slow`` (they run under ``pytest -m slow``, not in the default
``pytest``).  A test function that is slow whole carries ``@pytest.mark.slow``, a file
``pytestmark = pytest.mark.slow``.

:data:`LONG` marks the long sweeps of the core files (every zoo robot, thousands of random
trees, a full grid: minutes), slow too; the oldest pin's run in ``.ci/run`` takes every other
test of those files (``-m "not long"``): their default tests and the slow ones that take
seconds.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

import pytest

SLOW = pytest.mark.slow
LONG = (pytest.mark.slow, pytest.mark.long)


def slow_ones(values: Iterable[Any], slow: Collection[Any], marks: Any = SLOW) -> list:
    """``values`` for ``pytest.mark.parametrize``, those in ``slow`` marked with ``marks``.  A
    tuple is one value per argument name, as ``parametrize`` reads it."""

    def marked(value: Any) -> Any:
        args = value if isinstance(value, tuple) else (value,)
        return pytest.param(*args, marks=marks)

    return [marked(v) if v in slow else v for v in values]
