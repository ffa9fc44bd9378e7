"""The backend seam on CasADi SX: the same algorithm bodies as an expression graph.

Numeric constants become sparse DM with rounding residue folded to exact zeros
(:data:`~pvosimr.backends.protocol.FOLD_TOLERANCE`), so structural zeros cost no operation,
as in the paper's counts.  G's blocks are placed all at once (:func:`~.protocol.place_blocks`):
an SX slice assignment copies the whole matrix, so placing EFPA's O(m²) blocks one at a time
would take time quadratic in their number.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..extras import require
from .protocol import Block, folded, implements, place_blocks

require("operation counts and code generation", "casadi")  # one line naming the extra
import casadi as ca  # noqa: E402

__all__ = ["CASADI", "SX", "CasadiBackend", "fold", "function_cost"]

SX = ca.SX


def fold(a: np.ndarray) -> ca.DM:
    """A numeric constant as a sparse DM, its rounding residue zeroed (:func:`.protocol.folded`)."""
    return ca.sparsify(ca.DM(folded(a)))


class CasadiBackend:
    """The backend seam on CasADi SX; numeric constants become sparse DM (zeros fold away)."""

    name = "casadi"

    def const(self, a: np.ndarray) -> Any:
        return fold(a)

    zeros = staticmethod(SX)
    eye = staticmethod(SX.eye)
    sqrt = staticmethod(ca.sqrt)
    cos = staticmethod(ca.cos)
    sin = staticmethod(ca.sin)

    def inv(self, a: Any) -> Any:
        if a.shape == (1, 1):
            return 1 / a
        lower = self.cholesky(a)
        lower_inv = self.solve_lower(lower, SX.eye(a.shape[0]))
        return self.symmetric_from_upper(lower_inv.T @ lower_inv)

    def cholesky(self, a: Any) -> Any:
        n = a.shape[0]
        L = SX(n, n)
        for j in range(n):
            d = a[j, j] - sum((L[j, k] * L[j, k] for k in range(j)), SX(0))
            L[j, j] = ca.sqrt(d)
            for i in range(j + 1, n):
                s = a[i, j] - sum((L[i, k] * L[j, k] for k in range(j)), SX(0))
                L[i, j] = s / L[j, j]
        return L

    def solve_lower(self, lower: Any, b: Any) -> Any:
        n = lower.shape[0]
        x = SX(n, b.shape[1])
        for i in range(n):
            acc = b[i, :]
            for k in range(i):
                acc = acc - lower[i, k] * x[k, :]
            x[i, :] = acc / lower[i, i]
        return x

    def column(self, a: np.ndarray) -> Any:
        return fold(np.reshape(a, (-1, 1)))

    def vstack(self, blocks: list) -> Any:
        return ca.vertcat(*blocks)

    def hstack(self, blocks: list) -> Any:
        return ca.horzcat(*blocks)

    def hat(self, p: Any) -> Any:
        return ca.vertcat(
            ca.horzcat(0, -p[2], p[1]), ca.horzcat(p[2], 0, -p[0]), ca.horzcat(-p[1], p[0], 0)
        )

    def blockdiag(self, blocks: list) -> Any:
        return ca.diagcat(*blocks)

    def symmetric_from_upper(self, a: Any) -> Any:
        return ca.triu(a) + ca.triu(a, False).T

    symmetric = symmetric_from_upper

    def permute(self, a: Any, order: list[int]) -> Any:
        return a[order, order]


CASADI = CasadiBackend()


@implements(place_blocks, CasadiBackend)
def _place_blocks(B: CasadiBackend, rows: int, cols: int, blocks: Sequence[Block]) -> Any:
    """:func:`~.protocol.place_blocks` in one concatenation: the rows and columns are cut where any
    block starts or stops, each block fills the cells it covers (a later one replacing an
    earlier one's, its structural zeros included, as slice assignment does), and the grid of
    cells, zeros where none was written, is concatenated once."""
    if not rows or not cols:
        return SX(rows, cols)
    row_cuts = sorted({0, rows, *(x for r, _, _ in blocks for x in (r.start, r.stop))})
    col_cuts = sorted({0, cols, *(x for _, c, _ in blocks for x in (c.start, c.stop))})
    row_at = {x: k for k, x in enumerate(row_cuts)}
    col_at = {x: k for k, x in enumerate(col_cuts)}
    cells: dict[tuple[int, int], Any] = {}
    for r, c, block in blocks:
        block = SX(block)
        whole = row_at[r.stop] - row_at[r.start] == 1 and col_at[c.stop] - col_at[c.start] == 1
        for i in range(row_at[r.start], row_at[r.stop]):
            for j in range(col_at[c.start], col_at[c.stop]):
                cells[i, j] = (
                    block
                    if whole
                    else block[
                        row_cuts[i] - r.start : row_cuts[i + 1] - r.start,
                        col_cuts[j] - c.start : col_cuts[j + 1] - c.start,
                    ]
                )
    return ca.blockcat([
        [cells.get((i, j), SX(row_cuts[i + 1] - row_cuts[i], col_cuts[j + 1] - col_cuts[j]))
         for j in range(len(col_cuts) - 1)]
        for i in range(len(row_cuts) - 1)
    ])  # fmt: skip


def function_cost(f: ca.Function) -> int:
    """The paper's cost metric of a CasADi function: ``n_instructions - nnz_in - nnz_out``."""
    return int(f.n_instructions() - f.nnz_in() - f.nnz_out())
