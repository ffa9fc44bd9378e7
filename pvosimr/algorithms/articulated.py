"""The articulated-body backward sweep shared by PV-OSIM, EFPA and PV-OSIMr.

Lines 6–10 of Algorithm 1, 5–9 of Algorithm 2 and 8–11 of Algorithm 3 are the same recursion:
``D_i = S_iᵀ H^A_i S_i`` (eq. 7, plus the joint's rotor inertia, as in Pinocchio's mass matrix),
``^{π(i)}Ω_i = S_i D_i⁻¹ S_iᵀ`` (eq. 10), the force propagator ``^{π(i)}P_i`` (eq. 8) and the
ABI update of the parent.  :func:`articulated_sweep` runs it once and hands each link's
:class:`JointStep` to the algorithm, which only ever needs products with ``Ω`` and ``P``.

In local frames the force propagator carries a force on link ``i`` (frame ``i``) to the parent
(frame π(i)): ``^{π(i)}P_i = X_iᵀ (I − H^A_i S_i D_i⁻¹ S_iᵀ) = X_iᵀ (I − U_i D_i⁻¹ S_iᵀ)`` with
``U_i = H^A_i S_i``; its transpose ``(I − S_i D_i⁻¹ U_iᵀ) X_i`` carries motion the other way.
The products below apply ``Ω`` and ``P`` through ``S_i`` and ``U_i`` instead of forming the 6×6
matrices: for a 1-DoF joint that is the paper's symmetric rank-1 update (Sec. IV-E).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..backend import Backend, Matrix
from ..kinematics import Kinematics
from ..spatial import SpatialTransform
from ..topology import Topology

__all__ = ["JointStep", "articulated_sweep"]


@dataclass
class JointStep:
    """Joint ``i``'s share of the sweep: ``S_i``, ``U_i = H^A_i S_i``, ``D_i⁻¹`` and ``X_i``."""

    B: Backend
    S: Matrix
    U: Matrix
    Dinv: Matrix
    X: SpatialTransform

    def omega(self) -> Matrix:
        """``^{π(i)}Ω_i = S_i D_i⁻¹ S_iᵀ`` (eq. 10), 6×6 in frame ``i``."""
        return self.B.symmetric(self.S @ self.Dinv @ self.S.T)

    def congruence(self, F: Matrix) -> Matrix:
        """``Fᵀ ^{π(i)}Ω_i F`` for a 6×k block ``F`` (a rank-nv_i update)."""
        W = self.S.T @ F
        return self.B.symmetric(W.T @ (self.Dinv @ W))

    def force_to_parent(self, F: Matrix) -> Matrix:
        """``^{π(i)}P_i F``: 6×k forces on link ``i`` (frame i) → on the parent (frame π(i))."""
        return self.X.force(F - self.U @ (self.Dinv @ (self.S.T @ F)))

    def motion_from_parent(self, A: Matrix) -> Matrix:
        """``^{π(i)}P_iᵀ A``: 6×k motions of the parent (frame π(i)) → of link ``i`` (frame i)."""
        Z = self.X.motion(A)
        return Z - self.S @ (self.Dinv @ (self.U.T @ Z))

    def motion_congruence(self, Omega: Matrix) -> Matrix:
        """``^{π(i)}P_iᵀ Ω ^{π(i)}P_i`` for a symmetric 6×6 ``Ω`` of the parent (frame π(i))."""
        half = self.motion_from_parent(Omega)  # Pᵀ Ω
        return self.B.symmetric(self.motion_from_parent(half.T))  # Pᵀ (Pᵀ Ω)ᵀ = Pᵀ Ω P

    def rows_to_parent(self, K: Matrix) -> Matrix:
        """``K ^{π(i)}P_iᵀ``: k×6 rows acting on link ``i``'s motion → on the parent's."""
        return self.X.rows(K - (K @ self.S) @ (self.Dinv @ self.U.T))


def articulated_sweep(
    B: Backend, topology: Topology, kin: Kinematics
) -> Iterator[tuple[int, JointStep]]:
    """Visit links leaves-to-root, yielding ``(i, step)`` before the ABI update of π(i).

    The caller may do its own work on link ``i`` with ``step``; the generator then folds link
    ``i``'s articulated inertia into its parent: ``H^A_{π(i)} += X_iᵀ (H^A_i − U_i D_i⁻¹ U_iᵀ) X_i``
    (Algorithm 3 line 11 written in local frames).
    """
    parent = topology.parent
    H_A = list(kin.H)
    for i in reversed(topology.links):
        S = kin.S[i]
        U = H_A[i] @ S
        D = S.T @ U
        if kin.armature[i] is not None:
            D = D + kin.armature[i]
        step = JointStep(B=B, S=S, U=U, Dinv=B.inv(D), X=kin.X[i])
        yield i, step
        p = parent[i]
        if p > 0:
            Ia = B.symmetric(H_A[i] - U @ (step.Dinv @ U.T))
            H_A[p] = B.symmetric(H_A[p] + step.X.congruence(Ia))
