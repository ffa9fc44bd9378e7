"""Constraints as combinations of one-body LOCAL end-effectors: ``G = T G_v Tᵀ``.

A constraint between two bodies, or in world-aligned axes, is not one of the paper's
end-effectors, but its rows (:mod:`pvosimr.constraints`, those of Pinocchio's
``getConstraintJacobian``) are a configuration-dependent combination of such end-effectors:
one per body, ``v_c1`` and ``v_c2``, each the LOCAL motion of its frame.  The sweeps compute
``G_v`` of those EEs unchanged; the rows of constraint ``k`` are ``Σ_a T_ka v_a``, so

    G[k, j] = Σ_a Σ_b T_ka G_v[a, b] T_jbᵀ,

with at most two blocks ``T_ka`` per constraint: O(m²) for the m² blocks of G, so PV-OSIMr
stays O(n + m²).  The blocks come from the EE frames' placements in the world,
``W = ^{c}X_0`` (:attr:`pvosimr.kinematics.frames.Kinematics.world`):

- two bodies, 6D: ``[I, −^{c1}X_{c2}]`` with ``^{c1}X_{c2} = W_1 W_2⁻¹``;
- two bodies, 3D: ``[I, −R_c1ᵀ R_c2]``, the rotation block of the same;
- world-aligned: every block premultiplied by ``R_c1`` (3D) or ``diag(R_c1, R_c1)`` (6D);
- a row map ``A`` (:func:`pvosimr.constraints.rows`): every block premultiplied by ``A``; in
  LOCAL axes body 1's block is the identity and ``A`` is folded into its ``K`` instead;
- a joint-space row (:mod:`pvosimr.lowering`): two one-row EEs whose rows add, ``[I, I]``;
- pin 4's point anchor (its EEs' rows negated, :mod:`pvosimr.constraints`): body 1's 6-row EE
  shifted to ``c2``'s point, ``[I, −r×]`` with ``r = R_c1ᵀ (p_c2 − p_c1)``, and ``−R_c1ᵀ R_c2``
  on body 2's; ``c2`` fixed in the world when on one body.  A frame anchor has a 6D rigid
  constraint's blocks.

The same code runs on every backend (numpy, stacks, CasADi SX); a plain constraint's block is
the identity and costs nothing.
"""

from __future__ import annotations

import numpy as np

from .backends import Backend, Matrix
from .kinematics.frames import Kinematics
from .topology import Topology

__all__ = ["combination", "combine", "motion_inverse"]

Block = Matrix | None  # None: the identity


def motion_inverse(B: Backend, X: Matrix) -> Matrix:
    """``X⁻¹`` of a Plücker motion transform ``[[E, −E p×], [0, E]]``: ``[[Eᵀ, p× Eᵀ], [0, Eᵀ]]``,
    each 3×3 block transposed."""
    return B.vstack(
        [B.hstack([X[0:3, 0:3].T, X[0:3, 3:6].T]), B.hstack([B.zeros(3, 3), X[3:6, 3:6].T])]
    )


def _point_anchor(B: Backend, W1: Matrix, W2: Matrix, on_two_bodies: bool) -> list[Block]:
    """``[I, −r×]`` (3×6) on body 1's EE and ``−R`` on body 2's, from ``^{c1}X_{c2} =
    [[R, r× R], [0, R]]``: ``r×`` is its upper-right block times ``Rᵀ``."""
    X = W1 @ motion_inverse(B, W2)
    R = X[3:6, 3:6]
    blocks: list[Block] = [B.hstack([B.eye(3), -(X[0:3, 3:6] @ R.T)])]
    return [*blocks, -R] if on_two_bodies else blocks


def combination(B: Backend, topo: Topology, kin: Kinematics) -> list[list[Block]]:
    """``T_ka`` for each constraint ``k`` and each of its EEs ``a`` (``topo.ends[k]``)."""
    T = []
    for k, (shape, ends) in enumerate(zip(topo.signature, topo.ends, strict=True)):
        blocks: list[Block] = [None]
        if shape.kind == "joint":  # both ends carry the row already (pvosimr.lowering)
            T.append([None, None])
            continue
        if shape.kind == "point_anchor":
            c2 = ends[1] if shape.joint2 else topo.anchors[k]
            blocks = _point_anchor(B, kin.world[ends[0]], kin.world[c2], bool(shape.joint2))
        elif shape.joint2:
            W1, W2 = kin.world[ends[0]], kin.world[ends[1]]
            if shape.swept == 6:
                blocks.append(-(W1 @ motion_inverse(B, W2)))
            else:
                blocks.append(-(W1[3:6, 3:6] @ W2[3:6, 3:6].T))
        if shape.world_aligned:
            R = kin.world[ends[0]][3:6, 3:6].T  # c1 → world
            L = R if shape.swept == 3 else B.blockdiag([R, R])
            blocks = [L if b is None else L @ b for b in blocks]
        if shape.rows:
            blocks = _mapped(B, shape, blocks)
        T.append(blocks)
    return T


def _mapped(B: Backend, shape, blocks: list[Block]) -> list[Block]:
    """The blocks of a row map ``A`` (:func:`pvosimr.constraints.rows`): ``A T_ka``; body 1's
    identity block stays where ``A`` is folded into its ``K`` (``shape.folded``)."""
    A = B.const(np.array(shape.rows, dtype=float))
    first = blocks[0] if shape.folded else (A if blocks[0] is None else A @ blocks[0])
    return [first, *(A @ b for b in blocks[1:])]


def _sandwich(left: Block, G: Matrix, right: Block) -> Matrix:
    """``T_ka G T_jbᵀ`` with ``None`` the identity."""
    if left is not None:
        G = left @ G
    return G if right is None else G @ right.T


def combine(B: Backend, topo: Topology, kin: Kinematics, G_v: Matrix) -> Matrix:
    """G (m × m) from ``G_v``, the swept matrix of the constraints' EEs (symmetric)."""
    T = combination(B, topo, kin)
    span = {e: slice(o, o + d) for e, o, d in zip(topo.ees, topo.offsets, topo.dims, strict=True)}
    G = B.zeros(topo.m, topo.m)
    starts, dims = topo.constraint_offsets, [s.dim for s in topo.signature]
    for k, (Tk, ends_k) in enumerate(zip(T, topo.ends, strict=True)):
        rk = slice(starts[k], starts[k] + dims[k])
        for j in range(k, len(T)):
            rj = slice(starts[j], starts[j] + dims[j])
            terms = [
                _sandwich(Ta, G_v[span[a], span[b]], Tb)
                for Ta, a in zip(Tk, ends_k, strict=True)
                for Tb, b in zip(T[j], topo.ends[j], strict=True)
            ]
            G[rk, rj] = sum(terms[1:], terms[0])  # Σ_a Σ_b T_ka G_v[a, b] T_jbᵀ, in order
    return B.symmetric_from_upper(G)
