"""Mimic joints as joint-space constraints on the relaxed tree.

A mimic joint ``m`` follows a primary joint ``p``: ``θ_m = s q_p + o``, so it adds no degree
of freedom (``pin.Model.nv`` leaves it out, ``nvExtended`` counts it).  Its coupling
``θ̇_m − s q̇_p = 0`` is a constraint on the *relaxed* tree, where ``m`` moves freely; the reduced
Delassus matrix is then the Schur complement of the augmented one (mimic rows ``c``):

    G = J M⁻¹ Jᵀ = G_aa − G_ac G_cc⁻¹ G_ca,    [G_aa G_ac; G_ca G_cc] = [J_r; C] M_r⁻¹ [J_r; C]ᵀ

because ``Φ (Φᵀ M_r Φ)⁻¹ Φᵀ = M_r⁻¹ − M_r⁻¹ Cᵀ (C M_r⁻¹ Cᵀ)⁻¹ C M_r⁻¹`` for the map ``Φ`` from
reduced to relaxed velocities, whose range is the null space of ``C``.

Every mimicable joint is a 1-DoF screw ``S = [v; w]`` (revolute, prismatic, helical), and its
rate is read from the spatial velocities of its two links by a *constant* row:
``θ̇ = Ψ (v_i − X_J X_tree v_π(i))`` with ``Ψ = [0, wᵀ]/|w|²`` (or ``[vᵀ, 0]/|v|²`` without
rotation), and ``Ψ X_J(θ) = Ψ`` because the joint's motion leaves its own axis fixed.  So a
coupling is a sum of constant rows on at most four links — ``Ψ_m`` on ``m``, ``−Ψ_m X_tree(m)``
on its parent, and ``∓s`` times the same for ``p`` — which every algorithm handles as ordinary
one-row end-effectors: with c couplings PV-OSIMr costs O(n + (m + c)²) and the Schur
complement O(m² c + c³).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .backends import Backend, Matrix

__all__ = [
    "MIMIC_JOINTS",
    "MIMIC_UNAVAILABLE",
    "MimicCoupling",
    "has_mimic_joints",
    "mimic_couplings",
    "relaxed_idx_v",
    "relaxed_nv",
    "schur_reduce",
    "screw_axis",
]

# A pin without mimic joints (3.4) has no ``nvExtended``: there the relaxed tree is the tree.
_EXTENDED = hasattr(pin.Model, "nvExtended")

#: Whether pvosimr takes mimic joints from the installed pin: from pin 3.8 on.  pin 3.7 has
#: them, but its ``Model.check(data)`` rejects the data of valid mimic models (its checkData
#: counts a mimic joint's dofs wrongly in ``nvSubtree``), so no Data could be checked.
MIMIC_JOINTS = hasattr(pin, "JointModelMimic") and tuple(
    int(part) for part in pin.__version__.split(".")[:2]
) >= (3, 8)

#: Why a mimic joint is refused where :data:`MIMIC_JOINTS` is False.
MIMIC_UNAVAILABLE = f"mimic joints need pin >= 3.8 (pin {pin.__version__} " + (
    "has none)" if not hasattr(pin, "JointModelMimic") else "rejects their data in Model.check)"
)


def relaxed_nv(model_or_joint: pin.Model | pin.JointModel) -> int:
    """Dofs in the relaxed tree, where mimic joints move on their own: ``nvExtended``."""
    return model_or_joint.nvExtended if _EXTENDED else model_or_joint.nv


def relaxed_idx_v(joint: pin.JointModel) -> int:
    """The joint's first dof in the relaxed tree's velocity vector: ``idx_vExtended``."""
    return joint.idx_vExtended if _EXTENDED else joint.idx_v


def has_mimic_joints(model: pin.Model) -> bool:
    """Whether some joint of ``model`` is a mimic joint (it then has more relaxed dofs)."""
    return relaxed_nv(model) != model.nv


@dataclass(frozen=True, eq=False)
class MimicCoupling:
    """``θ_joint = scaling · q_primary + offset``.

    ``screw`` is the mimic joint's own subspace ``[v; w]`` (6,) in the relaxed tree, ``rows`` the
    (link, 1×6 row) parts whose sum over the links' spatial velocities is ``θ̇_joint − s q̇_primary``.
    """

    joint: int
    primary: int
    scaling: float
    offset: float
    screw: np.ndarray
    rows: tuple[tuple[int, np.ndarray], ...]


def screw_axis(model: pin.Model, i: int) -> np.ndarray:
    """The constant motion subspace ``[v; w]`` (6,) of 1-DoF joint ``i``; for a mimic joint, that
    of the joint it wraps, per unit of its own angle ``θ``.

    A mimic joint's screw is read from its motion, ``log(M_J(θ)) / θ`` at ``θ = 1/2``, not from
    its ``S``: in pin 4.1 the mimic of a helical joint has ``S = s [0; a]`` without the pitch term
    ``s h a``, although its placement does translate (its Jacobian then disagrees with finite
    differences of its own forward kinematics).
    """
    joint, q, theta = model.joints[i], pin.neutral(model), 0.5
    mimic = joint.shortname() == "JointModelMimic"
    if mimic:
        typed = joint.extract()  # the typed model holds scaling and offset
        if typed.scaling == 0.0:
            raise NotImplementedError(
                f"mimic joint {i} ({model.names[i]!r}) has scaling 0: it is a fixed joint; "
                "build the model without it"
            )
        q[joint.idx_q] = (theta - typed.offset) / typed.scaling
    jdata = joint.createData()
    joint.calc(jdata, q)
    return np.asarray(pin.log6(jdata.M).vector) / theta if mimic else np.reshape(jdata.S, -1)


def _rate_row(model: pin.Model, i: int) -> np.ndarray:
    """``Ψ`` (1×6), ``Ψ S_i = 1`` and ``Ψ X_J(θ) = Ψ``: joint ``i``'s rate from link motions."""
    kind = model.joints[i].shortname()
    nv = model.joints[i].nvExtended if kind == "JointModelMimic" else model.joints[i].nv
    S = screw_axis(model, i) if nv == 1 else None
    if S is None or S.size != 6:
        raise NotImplementedError(
            f"joint {i} ({model.names[i]!r}, {kind}) takes part in a mimic coupling; only 1-DoF "
            "revolute, prismatic and helical joints can"
        )
    v, w = S[:3], S[3:]
    if np.any(w):
        if np.linalg.norm(np.cross(v, w)) > 1e-12 * np.linalg.norm(w) * max(1.0, np.linalg.norm(v)):
            raise NotImplementedError(
                f"joint {i} ({model.names[i]!r}) is a screw whose translation is not along its axis"
            )
        return np.concatenate([np.zeros(3), w / (w @ w)])[None, :]
    return np.concatenate([v / (v @ v), np.zeros(3)])[None, :]


def _relative_rate_rows(model: pin.Model, i: int, sign: float) -> list[tuple[int, np.ndarray]]:
    """``sign · θ̇_i`` as rows on link ``i`` and on its parent (none on the world)."""
    psi = sign * _rate_row(model, i)
    rows = [(i, psi)]
    parent = model.parents[i]
    if parent > 0:
        rows.append((parent, -psi @ model.jointPlacements[i].actionInverse))
    return rows


def mimic_couplings(model: pin.Model) -> tuple[MimicCoupling, ...]:
    """The mimic couplings of ``model`` in joint order, rows on the same link summed."""
    out = []
    for i in range(1, model.njoints):
        if model.joints[i].shortname() != "JointModelMimic":
            continue
        joint = model.joints[i].extract()
        primary = next(
            j
            for j in range(1, model.njoints)
            if model.joints[j].shortname() != "JointModelMimic"
            and model.joints[j].idx_q == joint.idx_q
            and model.joints[j].nq > 0
        )
        parts: dict[int, np.ndarray] = {}
        for link, row in _relative_rate_rows(model, i, 1.0) + _relative_rate_rows(
            model, primary, -joint.scaling
        ):
            parts[link] = parts.get(link, 0.0) + row
        rows = tuple(sorted(parts.items()))
        out.append(
            MimicCoupling(
                i, primary, float(joint.scaling), float(joint.offset), screw_axis(model, i), rows
            )
        )
    return tuple(out)


def schur_reduce(B: Backend, G_swept: Matrix, m: int, T: np.ndarray) -> Matrix:
    """The reduced Delassus matrix from the relaxed tree's: its first ``m`` rows are the
    constraints', the rest the couplings' one-row EEs, summed into coupling rows by ``T``.

    ``G_ac = G_swept[a, e] Tᵀ``, ``G_cc = T G_swept[e, e] Tᵀ`` (symmetric positive definite when
    M is), and ``G = G_aa − G_ac G_cc⁻¹ G_acᵀ``.
    """
    Tc = B.const(T)
    G_ac = G_swept[0:m, m:] @ Tc.T
    G_cc = B.symmetric(Tc @ G_swept[m:, m:] @ Tc.T)
    return B.symmetric_from_upper(G_swept[0:m, 0:m] - G_ac @ (B.inv(G_cc) @ G_ac.T))
