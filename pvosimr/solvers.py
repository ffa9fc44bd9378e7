"""pvosimr's ``G`` in Pinocchio 4's constraint solvers, ADMM and PGS (pin ≥ 4.1).

Pinocchio's solvers take a Delassus operator, the free constraint velocity ``g`` and the
constraints as a ``pin.StdVec_ConstraintModel`` of generic ``pin.ConstraintModel`` wrappers
(which carry the sets: a friction cone for a point contact, equality for an anchor)::

    op = pvosimr.DelassusOperator(model, data, q, cms)            # G of the very list cms
    cmodels, cdatas = pvosimr.solvers.pinocchio_constraints(model, data, cms)
    impulses, result = pvosimr.solvers.solve(op.to_pinocchio(), g, cmodels, cdatas, "admm")

Pinocchio's own route builds the operator from its sparse KKT Cholesky instead
(:func:`pinocchio_operator`).  ``cms`` holds pin 4's ``PointContactConstraintModel``,
``PointAnchorConstraintModel`` and ``FrameAnchorConstraintModel``; the legacy
``RigidConstraintModel`` is not a solver constraint in pin 4.1 (no wrapper takes it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pinocchio as pin

__all__ = [
    "ground_contacts",
    "pinocchio_constraints",
    "pinocchio_operator",
    "settings",
    "solve",
]

SOLVERS = ("admm", "pgs")


def _solver_types(solver: str) -> tuple:
    """The solver, settings and result classes of ``solver``, read when used: a pin without the
    solvers (3.x) still imports pvosimr."""
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {list(SOLVERS)}, got {solver!r}")
    if not hasattr(pin, "ADMMConstraintSolver"):
        raise ImportError(f"pin {pin.__version__} has no constraint solvers: they need pin ≥ 4.1")
    prefix = solver.upper()
    return tuple(
        getattr(pin, f"{prefix}{suffix}")
        for suffix in ("ConstraintSolver", "SolverSettings", "SolverResult")
    )


_ANCHOR_OF = {
    pin.ContactType.CONTACT_3D: "PointAnchorConstraintModel",
    pin.ContactType.CONTACT_6D: "FrameAnchorConstraintModel",
}


def _wrap(k: int, cm) -> pin.ConstraintModel:
    if isinstance(cm, pin.ConstraintModel):
        return cm
    if isinstance(cm, pin.RigidConstraintModel):
        raise TypeError(
            f"constraint {k} ({cm.name or 'unnamed'}) is a RigidConstraintModel, which pin 4.1's "
            f"solvers do not take: build pin.{_ANCHOR_OF[cm.type]}(model, joint1_id, "
            "joint1_placement, joint2_id, joint2_placement) (a bilateral constraint) or "
            "pin.PointContactConstraintModel (a frictional contact), and compute G on that list"
        )
    try:
        return pin.ConstraintModel(cm)
    except TypeError:  # Boost.Python's ArgumentError is a TypeError
        raise TypeError(
            f"constraint {k} is a {type(cm).__name__}, which pin.ConstraintModel does not wrap"
        ) from None


def pinocchio_constraints(
    model: pin.Model, data: pin.Data, constraint_models: Iterable
) -> tuple[pin.StdVec_ConstraintModel, pin.StdVec_ConstraintData]:
    """The solvers' ``StdVec_ConstraintModel`` of wrappers and their datas, evaluated (``calc``)
    at ``data``'s joint placements (run ``pin.forwardKinematics`` at ``q`` first).

    The wrappers are copies: build them again after moving a constraint's placement.
    """
    cmodels = pin.StdVec_ConstraintModel()
    for k, cm in enumerate(constraint_models):
        cmodels.append(_wrap(k, cm))
    cdatas = pin.StdVec_ConstraintData()
    for cm in cmodels:
        cd = cm.createData()
        cm.calc(model, data, cd)
        cdatas.append(cd)
    return cmodels, cdatas


def pinocchio_operator(
    model: pin.Model,
    data: pin.Data,
    q,
    cmodels: pin.StdVec_ConstraintModel,
    cdatas: pin.StdVec_ConstraintData,
    mu: float = 0.0,
) -> tuple[pin.DelassusOperatorCholeskyExpression, pin.ConstraintCholeskyDecomposition]:
    """Pinocchio's own route: its KKT Cholesky (``crba`` in the WORLD convention, the
    constraints placed, ``compute`` with damping ``mu``) as the operator of ``G + μI`` its
    solvers take (``DelassusOperator.to_pinocchio(mu)`` is pvosimr's).  Redundant constraints
    (a singular ``G``) need ``mu > 0`` for PGS; ADMM sets its own damping.

    Returns the operator and the decomposition it reads from (keep both alive together).
    """
    pin.crba(model, data, np.asarray(q, dtype=float), pin.Convention.WORLD)
    for cm, cd in zip(cmodels, cdatas, strict=True):
        cm.calc(model, data, cd)
    chol = pin.ConstraintCholeskyDecomposition(model, data, cmodels, cdatas)
    chol.compute(model, data, cmodels, cdatas, mu)
    return chol.getDelassusOperatorCholeskyExpression(), chol


def settings(solver: str = "admm", tolerance: float = 1e-12, max_iterations: int = 10_000):
    """Settings of ``solver`` ("admm" or "pgs") with every stopping tolerance at ``tolerance``.

    A tolerance far below the impulses' scale makes two solves differ by their operators, not
    by where the iterations stopped: what comparing two ``G`` needs.
    """
    out = _solver_types(solver)[1]()
    for name in ("absolute", "relative"):
        setattr(out, f"{name}_feasibility_tol", tolerance)
        setattr(out, f"{name}_complementarity_tol", tolerance)
    out.max_iterations = max_iterations
    return out


def solve(
    delassus,
    g,
    cmodels: pin.StdVec_ConstraintModel,
    cdatas: pin.StdVec_ConstraintData,
    solver: str = "admm",
    solver_settings=None,
) -> tuple[np.ndarray, object]:
    """The constraint impulses of ``solver`` on ``(delassus, g)``, and its result object.

    ``delassus`` is ``DelassusOperator.to_pinocchio()`` or :func:`pinocchio_operator`'s;
    ``g`` the free constraint velocity ``J v_free`` (plus any offset).  A solve that does not
    converge raises, with its iteration count: its impulses would not be the solution.
    """
    kind, default_settings, result_type = _solver_types(solver)
    g = np.asarray(g, dtype=float)
    size = sum(cm.residualSize() for cm in cmodels)
    if g.shape != (size,):
        raise ValueError(f"g has shape {g.shape}, the constraints have {size} rows")
    if solver_settings is None:
        solver_settings = default_settings()
    result = result_type()
    kind(size).solve(delassus, g, cmodels, cdatas, solver_settings, result)
    if not result.converged:
        raise RuntimeError(
            f"{solver} did not converge within max_iterations = {solver_settings.max_iterations}"
            ": raise it, or loosen the tolerances (PGS stalls short of 1e-12 on redundant "
            "contacts; ADMM reaches it)"
        )
    impulses = np.array(result.retrieveConstraintImpulses(), dtype=float)
    if not np.isfinite(impulses).all():  # pin 4.1 reports such a solve as converged
        raise FloatingPointError(
            f"{solver} returned non-finite impulses: the operator is singular (redundant "
            "constraints with no damping; pass mu > 0 to the operator)"
        )
    return impulses, result


def ground_contacts(
    model: pin.Model,
    data: pin.Data,
    points: Sequence[tuple[int, np.ndarray]],
    friction: float,
) -> tuple[list, np.ndarray]:
    """Frictional point contacts of body points with the ground ``z = 0``, and their heights.

    ``points`` are ``(joint_id, point in that joint's frame)``; ``data`` holds the joint
    placements (``pin.forwardKinematics``).  Each contact is a ``PointContactConstraintModel``
    from the body's point to the ground point below it, its frame's z pointing down in the
    world, so its third row is the point's upward velocity (positive: separating) and the
    impulse lies in the friction cone ``‖λ_t‖ ≤ friction·λ_z``.  Build them again at every
    step: the ground point follows the body.
    """
    down = pin.utils.rotate("x", np.pi)
    cms, heights = [], np.zeros(len(points))
    for k, (joint, point) in enumerate(points):
        oMi = data.oMi[joint]
        at = oMi.act(np.asarray(point, dtype=float))
        heights[k] = at[2]
        on_body = pin.SE3(oMi.rotation.T @ down, np.asarray(point, dtype=float))
        ground = pin.SE3(np.eye(3), np.array([at[0], at[1], 0.0]))
        cm = pin.PointContactConstraintModel(model, joint, on_body, 0, ground)
        cm.setFriction(friction)
        cms.append(cm)
    return cms, heights
