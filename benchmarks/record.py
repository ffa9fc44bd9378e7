"""The harness's record and its targets, one of each: the record every section writes, the JSON
writer, the relative error, and the targets as data with their verdicts.

A section measures into :class:`Record` rows, writes its JSON with :func:`write_json` and its
tables with :func:`pvosimr.study.record.table`, checks a result with :func:`relative_error` (and
stops with its own message where :func:`within` finds it off), and states its targets as
:class:`Target` data judged by :func:`verdicts`.  The standalone GPU runner keeps a copy of
:class:`Record` (it must not import pvosimr); a test checks both have the same fields.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pvosimr.study.record import table


@dataclass(frozen=True)
class Record:
    """One measured number: what (``quantity`` of ``method`` on ``case``), how much (``value``
    in ``unit``, with its ``spread`` [p25, p75] where sampled) and on which run."""

    case: str
    method: str
    quantity: str
    value: float
    unit: str
    spread: tuple[float, float] | None = None
    run: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def _plain(x: Any) -> Any:
    """numpy scalars and arrays, records and paths as JSON."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, Record):
        return x.to_json()
    if isinstance(x, Path):
        return str(x)
    raise TypeError(f"not JSON serializable: {type(x).__name__}")


def write_json(path: Path, data: Any) -> Path:
    """``data`` as indented JSON in ``path``; the one writer of every section's JSON."""
    path = Path(path)
    path.write_text(json.dumps(data, indent=1, default=_plain) + "\n", encoding="utf-8")
    return path


def relative_error(a: Any, b: Any, floor: float = float(np.finfo(float).tiny)) -> float:
    """``max|a − b| / max(floor, max|b|)``; infinite on a shape mismatch or a non-finite
    result.  (The library's :func:`pvosimr.reference.truth.rel_err` is this with floor 1.)"""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return float("inf")
    error = float(np.max(np.abs(a - b)) / max(floor, float(np.max(np.abs(b)))))
    return error if np.isfinite(error) else float("inf")


def within(
    error: float, tolerance: float, message: str, raises: type[Exception] = AssertionError
) -> float:
    """``error`` where it is at most ``tolerance``, else ``raises(message)`` (a NaN is not)."""
    if not error <= tolerance:
        raise raises(message)
    return error


Row = tuple[str, str, str]
"""``(target, measured, verdict)``: one line of a section's targets table."""


@dataclass(frozen=True)
class Target:
    """A target as data: ``quantity`` on ``case`` compared (``<=`` or ``<``) with ``bound``;
    ``text`` is how the report states it, ``missing`` the verdict when it was not measured."""

    text: str
    case: str
    quantity: str
    bound: float
    comparison: str = "<="
    missing: str = "not met"


@dataclass(frozen=True)
class Measured:
    """A section's reading of a target's quantity: the value compared with the bound (None when
    not measured) and how the report shows it (or why it is missing)."""

    value: float | None
    shown: str


def verdict(value: float, bound: float, comparison: str = "<=") -> str:
    """``met`` where ``value`` is within ``bound`` (``<=`` it, or ``<``), else ``not met``."""
    return "met" if (value < bound if comparison == "<" else value <= bound) else "not met"


def verdicts(targets: Iterable[Target], measure: Callable[[Target], Measured]) -> list[Row]:
    """``(target, measured, verdict)`` of each target, its quantity read by ``measure``."""
    rows = []
    for target in targets:
        got = measure(target)
        if got.value is None:
            rows.append((target.text, got.shown, target.missing))
        else:
            judged = verdict(got.value, target.bound, target.comparison)
            rows.append((target.text, got.shown, judged))
    return rows


def target_lines(rows: Iterable[Row]) -> list[str]:
    """A section's targets as a markdown table, the verdicts in bold."""
    cells = ((t, m, f"**{v}**") for t, m, v in rows)
    return table(("target", "measured", "verdict"), cells, "lll")


def target_json(rows: Iterable[Row]) -> list[dict]:
    """A section's targets as JSON."""
    return [{"target": t, "measured": m, "verdict": v} for t, m, v in rows]
