"""The generated files' fixed text: C, CMake and Markdown in ``templates/`` (package data),
read as written (:func:`template`) or with their ``{field}``s filled (:func:`fill`)."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["TEMPLATES", "blocks", "fill", "template"]

TEMPLATES = Path(__file__).resolve().parent / "templates"
"""``<name>``: text as written; ``<name>.in``: a :meth:`str.format` template, in which ``{{``
and ``}}`` stand for C's and CMake's braces."""


def template(name: str) -> str:
    """The text of ``templates/<name>``."""
    return (TEMPLATES / name).read_text(encoding="utf-8")


def fill(name: str, /, **values: object) -> str:
    """The template ``templates/<name>.in``, its fields filled from ``values`` (KeyError naming
    a missing one)."""
    return template(f"{name}.in").format(**values)


_BLOCK = re.compile(r"^<!-- block: ([\w-]+) -->\n", re.MULTILINE)


def blocks(path: Path) -> dict[str, str]:
    """The blocks of the text file ``path`` by name, each headed ``<!-- block: name -->``, as
    written but for the blank lines around it."""
    parts = _BLOCK.split(path.read_text(encoding="utf-8"))
    return {name: text.strip("\n") for name, text in zip(parts[1::2], parts[2::2], strict=True)}
