"""The articulated-body step shared by PV-OSIM, EFPA, PV-OSIMr and PV-OSIMh.

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
The products apply ``Ω`` and ``P`` through ``S_i`` and ``U_i`` instead of forming the 6×6
matrices: for a 1-DoF joint that is the paper's symmetric rank-1 update (Sec. IV-E).

The step is the backend's (:func:`pvosimr.backends.protocol.joint_step`, a hook): its generic
form is :class:`JointStep`, defined with the seam so that a backend can build it; a backend may
build its own with the same methods from fewer calls.
"""

from __future__ import annotations

from ..backends import protocol as seam
from ..backends.protocol import Backend, JointStep, Matrix
from ..kinematics.frames import Kinematics

__all__ = ["JointStep", "fold_into_parent", "joint_step"]


def joint_step(B: Backend, kin: Kinematics, H_A: list[Matrix], i: int) -> JointStep:
    """Link ``i``'s step from its articulated inertia ``H^A_i``, complete once every child has
    been folded in: ``U_i = H^A_i S_i``, ``D_i = S_iᵀ U_i`` (plus the joint's rotor inertia)
    and ``D_i⁻¹`` (Alg. 3 line 8; Alg. 1 line 7, Alg. 2 line 6)."""
    return seam.joint_step(
        B, kin.S[i], H_A[i], kin.armature[i], kin.X[i], kin.axis.get(i), i in kin.identity
    )


def fold_into_parent(H_A: list[Matrix], i: int, parent: int, step: JointStep) -> None:
    """``H^A_{π(i)} += ^{π(i)}P_i H^A_i``, in local frames
    ``X_iᵀ (H^A_i − U_i D_i⁻¹ U_iᵀ) X_i``; nothing where π(i) is the world (Alg. 3 lines 9–11;
    Alg. 1 lines 8–10, Alg. 2 lines 7–9)."""
    step.fold_into(H_A, i, parent)
