"""How every section writes a number: the report prose from ``templates/``, times, sizes,
slopes and ratios as the reports print them, and a table of rows by columns (:func:`grid`; its
markdown from :mod:`pvosimr.study.record`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pvosimr.study import figures, record

TEMPLATES = Path(__file__).resolve().parent / "templates"
"""The paragraphs of timings.md, its section "JAX and PyTorch", gpu.md and accuracy.md; the C++ of
the trivial FFI call (:data:`.frameworks.SOURCE`)."""

Rows = Sequence[tuple[str, Callable]]
"""A table as data: each row's name and the function giving its cell of one column."""


def grid(
    corner: str, heads: Sequence[str], rows: Rows, columns: Sequence, left: bool = False
) -> list[str]:
    """One row per ``(name, cell)`` of ``rows``, one column per item of ``columns`` (headed
    ``heads``, under ``corner``) with ``cell(column)`` in it; every column left-aligned where
    ``left``, else the first."""
    body = [[name, *map(cell, columns)] for name, cell in rows]
    return record.table([corner, *heads], body, "l" * (len(heads) + 1) if left else "")


def prose(report: str, block: str, **values: Any) -> str:
    """The block ``block`` of ``templates/<report>.md`` here, filled from ``values``."""
    return record.prose(report, block, TEMPLATES, **values)


def microseconds(seconds: float) -> str:
    """``seconds`` in µs with three significant digits (no decimals from 100 µs on)."""
    us = seconds * 1e6
    if us >= 100:
        return f"{us:.0f}"
    return f"{us:.1f}" if us >= 10 else f"{us:.2f}"


def timing_cell(t: Any) -> str:
    """``median [p25–p75]`` in µs of a :class:`~benchmarks.loop.Timing`."""
    q25, q75 = microseconds(t.quantile(0.25)), microseconds(t.quantile(0.75))
    return f"{microseconds(t.median)} [{q25}–{q75}]"


def byte_size(n: float | None) -> str:
    """Bytes in B, kB, MB or GB with three significant digits (``—`` for None)."""
    if n is None:
        return "—"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def slope(ns: Sequence[float], values: Sequence[float], last: int = 4) -> float | None:
    """:func:`pvosimr.study.figures.slope` (log-log, least squares) of ``values`` against
    ``ns`` over the ``last`` largest sizes (None with fewer than two)."""
    if len(ns) < 2:
        return None
    return figures.slope(np.array(ns, dtype=float), np.array(values, dtype=float), last)
