"""What every measurement writes, one of each: the record, the JSON writer, the markdown table,
the relative error, and the targets as data with their verdicts.

A section measures into :class:`Record` rows, writes its JSON with :func:`write_json` and its
tables with :func:`table`, checks a result with :func:`relative_error`, and states its targets
as :class:`Target` data judged by :func:`verdicts`.  The standalone GPU runner keeps a copy of
:class:`Record` (it must not import pvosimr); a test checks both have the same fields.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from string import Template
from typing import Any

import numpy as np

from pvosimr.codegen.templating import blocks

__all__ = [
    "Measured",
    "Record",
    "Row",
    "Target",
    "prose",
    "relative_error",
    "row",
    "rule",
    "table",
    "target_json",
    "target_lines",
    "verdicts",
    "write_json",
]


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


def row(first: str, cells: Iterable[str]) -> str:
    """A markdown table row: ``| first | cell | cell |``."""
    return "| " + " | ".join([first, *cells]) + " |"


def rule(columns: Sequence[str]) -> str:
    """A markdown header rule from column alignments: ``"l"`` left, ``"r"`` right."""
    return "|" + "".join("---:|" if c == "r" else "---|" for c in columns)


def table(header: Sequence[str], rows: Iterable[Sequence[str]], align: str = "") -> list[str]:
    """A markdown table: the header, its rule (``align``, one letter per column, ``r`` right,
    anything else left; missing letters: left for the first column, right for the rest) and one
    line per row."""
    align = align.ljust(len(header), "r") if align else "l" + "r" * (len(header) - 1)
    return [row(header[0], header[1:]), rule(align), *(row(r[0], r[1:]) for r in rows)]


def relative_error(a: Any, b: Any, floor: float = float(np.finfo(float).tiny)) -> float:
    """``max|a − b| / max(floor, max|b|)``; infinite on a shape mismatch or a non-finite
    result.  (The library's :func:`pvosimr.reference.truth.rel_err` is this with floor 1.)"""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return float("inf")
    error = float(np.max(np.abs(a - b)) / max(floor, float(np.max(np.abs(b)))))
    return error if np.isfinite(error) else float("inf")


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

    def met(self, value: float) -> bool:
        if self.comparison == "<":
            return value < self.bound
        if self.comparison == "<=":
            return value <= self.bound
        raise ValueError(f"target {self.text!r}: unknown comparison {self.comparison!r}")


@dataclass(frozen=True)
class Measured:
    """A section's reading of a target's quantity: the value compared with the bound (None when
    not measured) and how the report shows it (or why it is missing)."""

    value: float | None
    shown: str


def verdicts(targets: Iterable[Target], measure: Callable[[Target], Measured]) -> list[Row]:
    """``(target, measured, verdict)`` of each target, its quantity read by ``measure``."""
    rows = []
    for target in targets:
        got = measure(target)
        if got.value is None:
            rows.append((target.text, got.shown, target.missing))
        else:
            rows.append((target.text, got.shown, "met" if target.met(got.value) else "not met"))
    return rows


def target_lines(rows: Iterable[Row]) -> list[str]:
    """A section's targets as a markdown table, the verdicts in bold."""
    cells = ((t, m, f"**{v}**") for t, m, v in rows)
    return table(("target", "measured", "verdict"), cells, "lll")


def target_json(rows: Iterable[Row]) -> list[dict]:
    """A section's targets as JSON."""
    return [{"target": t, "measured": m, "verdict": v} for t, m, v in rows]


TEMPLATES = Path(__file__).resolve().parent / "templates"
"""The reports' prose: one markdown file per report, its blocks headed ``<!-- block: name -->``."""

_ITEM = re.compile(r"- |\||#|\d+\. ")  # a line that starts a list item, a table row or a heading


def _unwrap(text: str) -> str:
    """Markdown soft line breaks joined: a paragraph's wrapped lines become one line; a line
    starting a list item (``-`` or ``1.``), a table row or a heading keeps its own."""
    out: list[str] = []
    for line in text.splitlines():
        starts = not line or _ITEM.match(line) or not out or not out[-1]
        if starts:
            out.append(line)
        else:
            out[-1] += " " + line
    return "\n".join(out)


def prose(report: str, block: str, templates: Path = TEMPLATES, **values: Any) -> str:
    """The block ``block`` of ``<templates>/<report>.md``, its ``$name`` placeholders filled
    from ``values`` (KeyError naming a missing one)."""
    return Template(_unwrap(blocks(templates / f"{report}.md")[block])).substitute(values)
