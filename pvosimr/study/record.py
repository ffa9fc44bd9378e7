"""The reports' markdown, one of each: the table and the prose.

Every report writes its tables with :func:`table` and fills its paragraphs with :func:`prose`
from the markdown blocks of ``templates/``: no report prose in Python.  (The benchmarks'
record, JSON writer and targets are ``benchmarks/record.py``, out of the wheel.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from string import Template
from typing import Any

from pvosimr.codegen.templating import blocks

__all__ = ["TEMPLATES", "prose", "row", "rule", "table"]


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
