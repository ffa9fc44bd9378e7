"""Operation counts without CasADi: numpy arrays that count the scalar operations CasADi would.

A :class:`Counted` array is a numpy array whose arithmetic also adds to a :class:`Tally` the
operations an SX graph of the same expression would hold, read from the numbers' structural
sparsity: at a generic configuration an entry is zero exactly when it is zero for every
configuration, and exactly ±1 only where it is a constant ±1.  Products by 0 or ±1 cost nothing
and sums with 0 cost nothing, as in CasADi; operations between constants (plain arrays) are
folded and cost nothing.  Not modelled: CasADi's removal of work whose result is never used,
except the lower triangle :meth:`CountingBackend.symmetric` discards.  The count is for
comparing ways of computing the same thing (:mod:`pvosimr.algorithms.pv_osimh_plan`), not a
substitute for :func:`pvosimr.symbolic.count_operations`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .numpy import NumpyBackend

__all__ = ["Counted", "CountingBackend", "OverBudgetError", "Tally"]

_ZERO = 1e-12


class OverBudgetError(Exception):
    """Raised by a counted operation that takes the tally past its ``limit``."""


@dataclass
class Tally:
    """Operations counted so far; counting past ``limit`` raises :class:`OverBudgetError` (a search
    can drop a candidate as soon as it costs more than the best one found)."""

    ops: int = 0
    limit: float = float("inf")


def _nonzero(a: np.ndarray) -> np.ndarray:
    return np.abs(a) > _ZERO


def _unit(a: np.ndarray) -> np.ndarray:
    """Entries that are exactly ±1: a product by them costs nothing."""
    return np.abs(np.abs(a) - 1.0) <= _ZERO


class Counted(np.ndarray):
    """A numpy array whose arithmetic is counted into ``tally`` (see the module docstring)."""

    tally: Tally
    ops: np.ndarray | None  # each entry's cost of its last operation (for symmetric)

    def __new__(cls, a, tally: Tally, ops: np.ndarray | None = None) -> Counted:
        obj = np.asarray(a, dtype=float).view(cls)
        obj.tally, obj.ops = tally, ops
        return obj

    def __array_finalize__(self, obj) -> None:
        self.tally = getattr(obj, "tally", None)
        self.ops = None

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        tally = next(x.tally for x in inputs if isinstance(x, Counted))
        plain = [np.asarray(x).view(np.ndarray) if isinstance(x, Counted) else x for x in inputs]
        out = getattr(ufunc, method)(*plain, **kwargs)
        if method != "__call__" or not isinstance(out, np.ndarray):
            return out
        counted = [isinstance(x, Counted) for x in inputs]
        ops = _ops(ufunc, plain, counted)
        tally.ops += int(ops.sum())
        if tally.ops > tally.limit:
            raise OverBudgetError(tally.ops)
        return Counted(out, tally, ops)


def _ops(ufunc, args: list, counted: list[bool]) -> np.ndarray:
    """Per result entry, the operations of one ufunc call on counted (symbolic) inputs."""
    a = np.asarray(args[0], dtype=float)
    if len(args) == 1:  # negative, sin, cos, sqrt, ...
        return _nonzero(a).astype(int) if ufunc is np.negative else np.ones(a.shape, int)
    b = np.asarray(args[1], dtype=float)
    nz_a, nz_b = _nonzero(a), _nonzero(b)
    if ufunc is np.matmul:
        A, Bm = nz_a.astype(float), nz_b.astype(float)
        terms = A @ Bm
        if not counted[0]:  # a constant on the left: its ±1 entries multiply for free
            terms_free = (nz_a & _unit(a)).astype(float) @ Bm
        elif not counted[1]:
            terms_free = A @ (nz_b & _unit(b)).astype(float)
        else:
            terms_free = 0.0
        return np.where(terms > 0, 2 * terms - 1 - terms_free, 0).astype(int)
    both = nz_a & nz_b
    if ufunc in (np.add, np.subtract):
        return both.astype(int)
    if ufunc is np.multiply:
        constant = b if not counted[1] else a if not counted[0] else None
        return (both if constant is None else both & ~_unit(constant)).astype(int)
    return np.ones(np.broadcast(a, b).shape, int)


class CountingBackend(NumpyBackend):
    """The numpy backend on :class:`Counted` arrays (stacking keeps them counted)."""

    name = "counting"

    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    def _wrap(self, a: np.ndarray) -> Counted:
        return Counted(a, self.tally)

    def _stacked(self, stack, blocks):
        """Counted if any block is: stacking constants gives a constant."""
        out = stack([np.asarray(b) for b in blocks])
        return self._wrap(out) if any(isinstance(b, Counted) for b in blocks) else out

    def vstack(self, blocks):
        return self._stacked(np.vstack, blocks)

    def hstack(self, blocks):
        return self._stacked(np.hstack, blocks)

    def eye(self, n: int) -> Counted:
        return self._wrap(np.eye(n))

    def inv(self, a) -> Counted:
        """``D⁻¹`` stands for a symbolic quantity: products with it are counted."""
        return self._wrap(NumpyBackend.inv(self, np.asarray(a)))

    def symmetric(self, a):
        """The upper triangle, mirrored; the lower triangle's last operations were never needed."""
        if isinstance(a, Counted) and a.ops is not None and a.ops.shape == a.shape:
            self.tally.ops -= int(np.tril(a.ops, -1).sum())
        return NumpyBackend.symmetric(self, a)
