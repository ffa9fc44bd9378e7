"""``pvosimr figures``: the paper's Figs. 3–6 and the Sec. IV-E caveat from operation counts.

Every number is :func:`pvosimr.symbolic.count_operations` of the algorithm's CasADi SX function
q ↦ G on the mechanism (through :class:`pvosimr.study.count.CountCache`).  The run writes, in the
output folder:

- ``fig3.png|pdf`` (panels b–f: op count against stem length, b = 1, 2, 4, 7, 10 branches per
  side), ``fig4.png|pdf`` (log-log, fitted slopes in the legend), ``fig5.png|pdf`` (Atlas),
  ``fig6.png|pdf`` (Shadow hand, alone and on Atlas), ``caveat.png|pdf``;
- ``opcounts.csv``: one row per (figure, panel, mechanism, x, algorithm, ops);
- ``claims.md``: claims C1–C8 of ALGORITHMS.md with the paper's words, our numbers, PASS/FAIL.

``--quick`` runs small sizes of the synthetic sweeps (the robot cases are fixed); its claims
report says which claims the small sizes cannot decide.

The modules: :mod:`~pvosimr.study.figures.model` (cases, rows, curves),
:mod:`~pvosimr.study.figures.runner` (counting, the CSV, the command line),
:mod:`~pvosimr.study.figures.plots` and :mod:`~pvosimr.study.figures.claims`.
"""

from __future__ import annotations

from . import claims, plots
from .model import FULL, QUICK, Count, Sweep, bars, read_csv, series, slope
from .runner import build_parser, count_all, main, run, sweeps, write_csv

__all__ = [
    "FULL",
    "QUICK",
    "Count",
    "Sweep",
    "bars",
    "build_parser",
    "claims",
    "count_all",
    "main",
    "plots",
    "read_csv",
    "run",
    "series",
    "slope",
    "sweeps",
    "write_csv",
]
