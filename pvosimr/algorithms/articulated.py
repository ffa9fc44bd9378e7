"""The articulated-body step shared by PV-OSIM, EFPA and PV-OSIMr.

=====================================================  =====================================
Paper (Alg. 1 / Alg. 2 / Alg. 3)                       Code
=====================================================  =====================================
lines 2 / 2 / 2: ``H^A_i ← H_i``                        ``H_A = list(kin.H)`` in each sweep
lines 7 / 6 / 8: ``D_i``, ``^{π(i)}Ω_i`` (eqs. 7, 10)   :func:`joint_step`, :meth:`JointStep.omega`
lines 9 / 8 / 10: ``^{π(i)}P_i`` (eq. 8)                :meth:`JointStep.force_to_parent`, ...
lines 10 / 9 / 11: ``H^A_{π(i)} += ^{π(i)}P_i H^A_i``   :func:`fold_into_parent`
=====================================================  =====================================

Each algorithm runs the recursion in its own backward loop, Featherstone's way: compute link
``i``'s :func:`joint_step`, use it, then :func:`fold_into_parent`.  ``D_i`` carries the joint's
rotor inertia as well, as in Pinocchio's mass matrix.  The algorithms only ever need products
with ``Ω`` and ``P``, which :class:`JointStep` provides.

In local frames the force propagator carries a force on link ``i`` (frame ``i``) to the parent
(frame π(i)): ``^{π(i)}P_i = X_iᵀ (I − H^A_i S_i D_i⁻¹ S_iᵀ) = X_iᵀ (I − U_i D_i⁻¹ S_iᵀ)`` with
``U_i = H^A_i S_i``; its transpose ``(I − S_i D_i⁻¹ U_iᵀ) X_i`` carries motion the other way.
The products below apply ``Ω`` and ``P`` through ``S_i`` and ``U_i`` instead of forming the 6×6
matrices: for a 1-DoF joint that is the paper's symmetric rank-1 update (Sec. IV-E).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..backends import NUMPY, Backend, Matrix
from ..backends.numpy_steps import one_dof_step
from ..kinematics.frames import Kinematics
from ..spatial import SpatialTransform

__all__ = ["IdentityStep", "JointStep", "fold_into_parent", "joint_step"]


@dataclass(slots=True)
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

    def extend(self, Omega: Matrix, F: Matrix, parent: int) -> tuple[Matrix, Matrix | None]:
        """``Ω + Fᵀ ^{π(i)}Ω_i F`` and ``^{π(i)}P_i F`` (None where π(i) is the world): eqs. 16
        and 17 carrying an extended inverse inertia and propagator over joint ``i``."""
        Omega = self.B.symmetric(Omega + self.congruence(F))
        return Omega, self.force_to_parent(F) if parent > 0 else None

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

    def fold_into(self, H_A: list[Matrix], i: int, parent: int) -> None:
        """See :func:`fold_into_parent`."""
        if parent > 0:
            B = self.B
            Ia = B.symmetric(H_A[i] - self.U @ (self.Dinv @ self.U.T))
            H_A[parent] = B.symmetric(H_A[parent] + self.X.congruence(Ia))


@dataclass(slots=True)
class IdentityStep(JointStep):
    """A numpy step where ``S_i = I`` (a free-flyer in its own frame): ``U_i = D_i = H^A_i``
    and ``^{π(i)}Ω_i = D_i⁻¹``, exactly symmetric as :meth:`~pvosimr.backends.numpy.Backend.inv`
    returns it; its other products are the generic ones."""

    def omega(self) -> Matrix:
        return self.Dinv


def joint_step(B: Backend, kin: Kinematics, H_A: list[Matrix], i: int) -> JointStep:
    """Link ``i``'s step from its articulated inertia ``H^A_i``, complete once every child has
    been folded in: ``U_i = H^A_i S_i``, ``D_i = S_iᵀ U_i`` (plus the joint's rotor inertia)
    and ``D_i⁻¹`` (Alg. 3 line 8; Alg. 1 line 7, Alg. 2 line 6).

    On :data:`~pvosimr.backends.numpy.NUMPY` a one-DoF joint gets the same quantities in fewer numpy
    calls (:mod:`.one_dof`), and so does a joint with ``S_i = I`` (:class:`IdentityStep`);
    every other backend, symbolic ones included, runs the products below."""
    S = kin.S[i]
    if B is NUMPY:
        if S.shape[1] == 1:
            return one_dof_step(kin, H_A, i)
        if i in kin.identity:
            D = H_A[i] if kin.armature[i] is None else H_A[i] + kin.armature[i]
            return IdentityStep(B=B, S=S, U=H_A[i], Dinv=B.inv(D), X=kin.X[i])
    U = H_A[i] @ S
    D = S.T @ U
    if kin.armature[i] is not None:
        D = D + kin.armature[i]
    return JointStep(B=B, S=S, U=U, Dinv=B.inv(D), X=kin.X[i])


def fold_into_parent(H_A: list[Matrix], i: int, parent: int, step: JointStep) -> None:
    """``H^A_{π(i)} += ^{π(i)}P_i H^A_i``, in local frames
    ``X_iᵀ (H^A_i − U_i D_i⁻¹ U_iᵀ) X_i``; nothing where π(i) is the world (Alg. 3 lines 9–11;
    Alg. 1 lines 8–10, Alg. 2 lines 7–9)."""
    step.fold_into(H_A, i, parent)
