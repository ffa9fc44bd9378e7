"""The benchmarks' report prose: :func:`pvosimr.study.record.prose` on ``templates/`` here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pvosimr.study import record

__all__ = ["TEMPLATES", "prose"]

TEMPLATES = Path(__file__).resolve().parent / "templates"
"""The paragraphs of timings.md, its section "JAX and PyTorch", gpu.md and accuracy.md."""


def prose(report: str, block: str, **values: Any) -> str:
    """The block ``block`` of ``templates/<report>.md`` here, filled from ``values``."""
    return record.prose(report, block, TEMPLATES, **values)
