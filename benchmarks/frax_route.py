"""The dense route JAX users take today: frax's G = J M⁻¹ Jᵀ on the Unitree G1 it ships, and
the same URDF in Pinocchio with both feet welded (:func:`pvosimr.constraints.weld` at frax's two
foot frames), for :func:`agreement` to check both against each other before anything is timed.

frax (PyPI ``frax``) computes the mass matrix and frame Jacobians in JAX; :meth:`FraxCase.dense_g`
forms ``G = Yᵀ Y``, ``Y = L⁻¹ Jᵀ``, ``L Lᵀ = M``, traceable under jit, vmap and grad.
:class:`FraxCase` maps the conventions: q (frax's quaternion is (w, x, y, z) and its joints in
its own order: :meth:`~FraxCase.pinocchio_q`) and the rows (frax's Jacobians give the feet's
velocities in world axes, pvosimr's LOCAL welds in the foot frames: ``G_local = Aᵀ G_frax A``,
:meth:`~FraxCase.local`); the base velocity's convention does not change G (J T (Tᵀ M T)⁻¹ Tᵀ Jᵀ
= J M⁻¹ Jᵀ for any invertible T).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pinocchio as pin

from pvosimr import compute_delassus, constraints

from .names import TOLERANCES
from .record import relative_error

ROBOT = "Unitree G1 2×6D (frax)"
"""The frax case as the report names it: the G1 of ``frax.load_g1()``, both feet welded."""

AGREEMENT_TOLERANCE = TOLERANCES["frax"]
"""Largest max|ΔG| / max|G| between frax's dense G (in the foot frames) and pvosimr's."""

FEET = ("left_foot", "right_foot")

XLA_FLAGS = (
    "--xla_cpu_multi_thread_eigen=false",
    "--xla_cpu_scheduler_type=CPU_SCHEDULER_TYPE_MEMORY_OPTIMIZED",
)
"""frax's recommended XLA flags on CPU (its README; it warns at import without them)."""


def import_frax() -> tuple[Any, dict[str, str]]:
    """frax, imported with float64 on (and its XLA flags where jax has no backend yet), and
    the settings its import warning looks at: its other advice (an older jax,
    ``OPENBLAS_NUM_THREADS=1`` before numpy loads) cannot apply to a running bench, so the
    warning is silenced and the settings go to the report."""
    import sys

    started = "jax" in sys.modules and _backend_started()
    if not started:
        flags = os.environ.get("XLA_FLAGS", "").split()
        os.environ["XLA_FLAGS"] = " ".join([*flags, *(f for f in XLA_FLAGS if f not in flags)])
        os.environ.setdefault("JAX_ENABLE_X64", "1")
    settings = jax_settings()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import frax
    return frax, settings


def jax_settings() -> dict[str, str]:
    """Turn jax's float64 on (the bench is an application: the library never does) and return
    the settings that the report records."""
    import jax

    jax.config.update("jax_enable_x64", True)
    return {
        "jax": jax.__version__,
        "XLA_FLAGS": os.environ.get("XLA_FLAGS", "") or "(unset)",
        "jax_enable_x64": str(jax.config.jax_enable_x64),
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "(unset)"),
    }


def _backend_started() -> bool:
    """Whether jax has created its CPU client (after which XLA_FLAGS no longer apply)."""
    try:
        from jax._src import xla_bridge

        return bool(xla_bridge._backends)
    except (ImportError, AttributeError):
        return True  # cannot tell: do not touch the environment


@dataclass
class FraxCase:
    """frax's G1, the same URDF in Pinocchio with both feet welded, and the maps between them."""

    robot: Any
    model: pin.Model
    cms: list
    joint_q: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        names = self.robot.joint_names[self.robot.nv_floating :]
        self.joint_q = np.array([self.model.joints[self.model.getJointId(n)].idx_q for n in names])

    @property
    def m(self) -> int:
        return sum(map(constraints.constraint_dim, self.cms))

    def random_q(self, rng: np.random.Generator, B: int) -> np.ndarray:
        """(B, nq) frax configurations: a random base pose and joints within their limits."""
        quat = rng.standard_normal((B, 4))
        quat /= np.linalg.norm(quat, axis=1, keepdims=True)
        lo = self.robot.actuated_joint_lower_limits
        hi = self.robot.actuated_joint_upper_limits
        joints = rng.uniform(lo, hi, size=(B, len(lo)))
        return np.concatenate([rng.uniform(-1, 1, (B, 3)), quat, joints], axis=1)

    def pinocchio_q(self, q_frax: np.ndarray) -> np.ndarray:
        """Pinocchio's q of frax's ``q_frax`` (one (nq,) or a (B, nq) stack)."""
        q_frax = np.asarray(q_frax, dtype=float)
        out = np.zeros((*q_frax.shape[:-1], self.model.nq))
        out[..., :3] = q_frax[..., :3]
        out[..., 3:6] = q_frax[..., 4:7]  # (w, x, y, z) -> (x, y, z, w)
        out[..., 6] = q_frax[..., 3]
        out[..., self.joint_q] = q_frax[..., 7:]
        return out

    def local(self, G_frax: np.ndarray, q_frax: np.ndarray) -> np.ndarray:
        """frax's world-aligned G turned to the foot frames' axes: ``Aᵀ G A``."""
        A = np.zeros((self.m, self.m))
        transforms = (self.robot.left_foot_transform, self.robot.right_foot_transform)
        for k, transform in enumerate(transforms):
            R = np.asarray(transform(q_frax))[:3, :3]
            A[6 * k : 6 * k + 3, 6 * k : 6 * k + 3] = R
            A[6 * k + 3 : 6 * k + 6, 6 * k + 3 : 6 * k + 6] = R
        return A.T @ np.asarray(G_frax) @ A

    def dense_g(self, q):
        """frax's G = J M⁻¹ Jᵀ at one frax configuration (traceable: jit, vmap, grad)."""
        import jax
        import jax.numpy as jnp

        M = self.robot.mass_matrix(q)
        J = jnp.concatenate([self.robot.left_foot_jacobian(q), self.robot.right_foot_jacobian(q)])
        L = jnp.linalg.cholesky(M)
        Y = jax.scipy.linalg.solve_triangular(L, J.T, lower=True)
        return Y.T @ Y


def _add_foot(model: pin.Model, name: str, joint: str, offset: np.ndarray) -> None:
    joint_id = model.getJointId(joint)
    if joint_id >= model.njoints:
        raise ValueError(f"frax's G1 URDF has no joint {joint!r} in Pinocchio's model")
    placement = pin.SE3(offset[:3, :3], offset[:3, 3])
    model.addFrame(pin.Frame(name, joint_id, 0, placement, pin.FrameType.OP_FRAME))


def load() -> FraxCase:
    """frax's G1 (quaternion base) and Pinocchio's model of its URDF, both feet welded 6D
    (ModuleNotFoundError without frax)."""
    frax = import_frax()[0]
    from frax.robots import unitree_g1 as g1

    robot = frax.load_g1(floating_base="quaternion")
    model = pin.buildModelFromUrdf(str(g1.fixed_root_urdf), pin.JointModelFreeFlyer())
    _add_foot(model, FEET[0], g1.left_foot_parent_joint_name, g1.left_foot_offset)
    _add_foot(model, FEET[1], g1.right_foot_parent_joint_name, g1.right_foot_offset)
    cms = [constraints.weld(model, name) for name in FEET]
    return FraxCase(robot, model, cms)


def agreement(case: FraxCase, qs_frax: np.ndarray, G_frax: np.ndarray | None = None) -> float:
    """Largest max|ΔG| / max|G| over ``qs_frax`` between frax's dense G (``G_frax``, default
    :meth:`FraxCase.dense_g` under jit) turned to the foot frames and
    :func:`pvosimr.compute_delassus` on Pinocchio's model at the same configurations."""
    if G_frax is None:
        import jax

        G_frax = np.asarray(jax.jit(jax.vmap(case.dense_g))(qs_frax))
    data = case.model.createData()
    worst = 0.0
    for q, G in zip(qs_frax, G_frax, strict=True):
        truth = compute_delassus(case.model, data, case.pinocchio_q(q), case.cms)
        worst = max(worst, relative_error(case.local(G, q), truth))  # NaN gives inf
    return worst
