"""What the front ends over pvosimr's CUDA kernels (:mod:`pvosimr.codegen.cuda`) share: the
kernels' layouts on any array library with ``reshape``, ``.T`` and ``swapaxes`` (JAX, PyTorch),
and a rejected configuration's error in the CPU route's words.

Configurations lie fastest in memory: ``q`` (..., nq) goes in as (nq, B), the weights ``W``
(..., m, m) as (m·m, B) (row ``k``: entry ``k`` of each C-ordered W), G comes back as (m·m, B)
(row ``k``: entry ``k`` of the column-major m × m matrix) and the gradient, in q's coordinates,
as (nq, B).  The kernels apply the contract of the CPU library themselves (the checks of q,
``G(N(q))``, the gradient in q's coordinates): a front end only lays its arrays out.
"""

from __future__ import annotations

import numpy as np

from ..checks import row_name
from .c_source import OK
from .contract import FAILURE_WORDS, UNKNOWN, evaluate

__all__ = ["columns", "matrices", "reject", "rows"]


def columns(x, width: int):
    """``x`` (..., width) in the kernels' layout, (width, B)."""
    return x.reshape(-1, width).T


def matrices(out, batch: tuple[int, ...], m: int):
    """G from the kernel's (m·m, B) as (*batch, m, m)."""
    return out.T.reshape(-1, m, m).swapaxes(-1, -2).reshape(*batch, m, m)


def rows(out, batch: tuple[int, ...]):
    """The gradient from the kernel's (nq, B) as (*batch, nq)."""
    return out.T.reshape(*batch, out.shape[0])


def reject(where: str, status: np.ndarray, library, q, p=None, W=None) -> None:
    """The error of a batch whose ``status`` (B,) a kernel did not leave all
    :data:`~pvosimr.codegen.c_source.OK`: the CPU route's for the same float64 ``q`` (..., nq),
    ``p`` and ``W`` (``library``, a :class:`~pvosimr.codegen.call.CompiledDelassus` with its
    gradient, names the entry and row), or, where the library accepts them (a float32 kernel
    lost precision), one line from ``where`` with the first failing row and its code's words
    (:data:`~pvosimr.codegen.contract.FAILURE_WORDS`)."""
    evaluate(library, q, p, W)  # raises where the library fails too
    r = int(np.flatnonzero(status != OK)[0])
    code = int(status[r])
    words = FAILURE_WORDS.get(code, f"{UNKNOWN} (code {code})")
    raise ValueError(f"{where}: at row {row_name(np.shape(q)[:-1], r)} of qs: {words}")
