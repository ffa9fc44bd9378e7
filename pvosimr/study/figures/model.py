"""The data of ``pvosimr figures``: the cases of each figure, one counted row, and curve helpers.

A :class:`Case` is one mechanism of one panel of Figs. 3–6 or the Sec. IV-E caveat; counting
its algorithms gives one :class:`Count` each (a row of ``opcounts.csv``).  :func:`series`,
:func:`bars` and :func:`slope` read those rows back as the curves, bar groups and log-log slopes
that :mod:`~pvosimr.study.figures.plots` draws and :mod:`~pvosimr.study.figures.claims` judges.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pvosimr import zoo

__all__ = [
    "ALL_FOUR",
    "BRANCHES",
    "FULL",
    "QUICK",
    "RECURSIVE",
    "Case",
    "Count",
    "Sweep",
    "bars",
    "read_csv",
    "series",
    "slope",
]

RECURSIVE = ("pv-osimr", "pv-osim", "efpa", "pv-osimh")
"""The algorithms of the synthetic sweeps (Figs. 3–4): the paper's three and pvosimr's hybrid."""
ALL_FOUR = ("pv-osimr", "pv-osim", "efpa", "ltl-osim", "pv-osimh")
"""The algorithms of the robot panels (Figs. 5–6, the caveat)."""
BRANCHES = (1, 2, 4, 7, 10)
"""Branches per side of the stem in Fig. 3b–f."""


@dataclass(frozen=True)
class Case:
    """One mechanism of one figure panel; ``x`` is its abscissa (stem length, k, n) or 0."""

    figure: str
    panel: str
    x: int
    build: Callable[[], zoo.Robot]
    algorithms: tuple[str, ...]


@dataclass(frozen=True)
class Count:
    """One row of ``opcounts.csv``."""

    figure: str
    panel: str
    mechanism: str
    x: int
    algorithm: str
    ops: int


@dataclass(frozen=True)
class Sweep:
    """Sizes of the synthetic sweeps: the full run and ``--quick``."""

    stems: tuple[int, ...]
    k: tuple[int, ...]
    n: tuple[int, ...]


FULL = Sweep(
    stems=(1, *range(5, 101, 5)),
    k=(*range(2, 17), 20, 24, 28, 32),
    n=(4, 6, 8, 12, 16, 24, 32, 48, 64, 96),
)
QUICK = Sweep(stems=(1, 5, 10, 20), k=(2, 3, 4, 5, 6), n=(4, 6, 8, 12, 16))


def read_csv(path: Path) -> list[Count]:
    """The rows of an ``opcounts.csv`` (as ``pvosimr figures`` writes it), in file order."""
    with Path(path).open(newline="") as f:
        rows = list(csv.DictReader(f))
    return [
        Count(r["figure"], r["panel"], r["mechanism"], int(r["x"]), r["algorithm"], int(r["ops"]))
        for r in rows
    ]


def series(rows: Sequence[Count], figure: str, panel: str, algorithm: str) -> tuple:
    """``(x, ops)`` arrays of one curve, sorted by x."""
    pts = sorted(
        (r.x, r.ops) for r in rows if (r.figure, r.panel, r.algorithm) == (figure, panel, algorithm)
    )
    return np.array([p[0] for p in pts], float), np.array([p[1] for p in pts], float)


def bars(rows: Sequence[Count], figure: str, panel: str) -> dict[str, int]:
    """``{algorithm: ops}`` of one bar panel."""
    return {r.algorithm: r.ops for r in rows if (r.figure, r.panel) == (figure, panel)}


def slope(x: np.ndarray, y: np.ndarray, last: int = 5) -> float:
    """Least-squares slope of log y against log x over the ``last`` largest sizes."""
    x, y = x[-last:], y[-last:]
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])
