"""Where Pinocchio's Delassus routines are silently wrong, measured case by case for the report.

- ``pin.computeDelassusMatrix`` on world-aligned constraints returns the LOCAL-frame matrix, and
  on a constraint between two bodies it ignores ``joint2``;
- ``pin.computeDampedDelassusMatrixInverse`` called from Python returns ``I/μ``.

The truth is Pinocchio's own definition, independent of pvosimr: ``J M⁻¹ Jᵀ`` with ``J``
stacked from ``pin.getConstraintJacobian`` and ``M`` from ``pin.crba``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pinocchio as pin

from pvosimr import ALGORITHMS, compute_delassus, reference, zoo
from pvosimr.constraints import constraint_dim
from pvosimr.reference.truth import pinocchio_constraint_jacobian, rel_err

from .record import prose

__all__ = [
    "damped_inverse_section",
    "one_body_local",
    "pinocchio_truth",
    "silently_wrong",
    "silently_wrong_case",
    "silently_wrong_section",
]

DAMPED_CASES = (("atlas", "feet_6d"), ("shadow_hand", "fingertips_3d"), ("talos", "feet_6d"))


def damped_inverse_section(seed: int, cases: Sequence[tuple[str, str]] = DAMPED_CASES) -> str:
    """Markdown: the defect of ``pin.computeDampedDelassusMatrixInverse`` called from Python."""
    if "pin-pv-osimr" in reference.unavailable():  # the comparison runs the same C++ correctly
        return prose("validate", "damped-missing")
    mu = 1e-3
    lines = [
        prose("validate", "damped-head", mu=f"{mu:g}"),
        "",
        "| robot / preset | pin from Python | same C++ after `initPvDelassus` (ours) |",
        "|---|---|---|",
    ]
    for name, preset in cases:
        try:
            robot = zoo.load(name, preset)
        except (FileNotFoundError, ModuleNotFoundError) as exc:
            lines.append(f"| {name} / {preset} | skipped: {exc} | |")
            continue
        q = robot.q_random(np.random.default_rng(seed))
        d = reference.damped_delassus_inverse_defect(robot.model, q, robot.constraints, mu=mu)
        lines.append(f"| {name} / {preset} | {d['pin_python']:.1e} | {d['pv_cpp']:.1e} |")
    return "\n".join([*lines, "", prose("validate", "damped-foot")])


# --------------------------------------------------------------------- silently wrong routines

SILENT_MU = 1e-3
"""μ of the damped inverse in :func:`silently_wrong`."""


def pinocchio_truth(model: pin.Model, q: np.ndarray, constraint_models) -> np.ndarray:
    """``J M⁻¹ Jᵀ`` from Pinocchio alone: ``J`` stacked from ``pin.getConstraintJacobian``
    (Pinocchio's own definition of every constraint's rows: LOCAL_WORLD_ALIGNED, two bodies),
    ``M`` from ``pin.crba``; no pvosimr code."""
    J = pinocchio_constraint_jacobian(model, q, constraint_models)
    M = np.triu(pin.crba(model, model.createData(), q))
    M = M + np.triu(M, 1).T
    return J @ np.linalg.solve(M, J.T)


def one_body_local(model: pin.Model, constraint_models) -> list[pin.RigidConstraintModel]:
    """Each constraint on its first body only, in LOCAL: what the silently wrong routines
    compute instead."""
    return [
        pin.RigidConstraintModel(cm.type, model, cm.joint1_id, cm.joint1_placement, pin.LOCAL)
        for cm in constraint_models
    ]


def _kinds(constraint_models) -> str:
    """``1 × 3D two-body LWA, 8 × 3D LWA``: the constraint kinds of a case, counted."""
    counts: dict[str, int] = {}
    for cm in constraint_models:
        frame = "LWA" if cm.reference_frame == pin.ReferenceFrame.LOCAL_WORLD_ALIGNED else "LOCAL"
        kind = f"{constraint_dim(cm)}D{' two-body' if cm.joint2_id else ''} {frame}"
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(f"{n} × {kind}" for kind, n in counts.items())


def _pvosimr_error(robot: zoo.Robot, q: np.ndarray, G_true: np.ndarray) -> float | str:
    """pvosimr's worst algorithm against ``G_true``, or the reason it refused."""
    data = robot.model.createData()
    try:
        return max(
            rel_err(compute_delassus(robot.model, data, q, robot.constraints, algorithm=a), G_true)
            for a in ALGORITHMS
        )
    except (NotImplementedError, ValueError) as exc:
        return f"refused: {exc}"


def _damped_from_python(robot: zoo.Robot, q: np.ndarray, mu: float) -> np.ndarray | str:
    """``pin.computeDampedDelassusMatrixInverse`` from Python, or why it is not called."""
    cms = robot.constraints
    if any(cm.reference_frame != pin.LOCAL for cm in cms):
        return "not called (LWA: its PV-OSIMr asserts)"
    joints = [cm.joint1_id for cm in cms]
    if len(set(joints)) < len(joints):
        return "not called (two constraints on one joint: UB)"
    cds = [cm.createData() for cm in cms]
    inverse = pin.computeDampedDelassusMatrixInverse(
        robot.model, robot.model.createData(), q, cms, cds, mu
    )
    return np.asarray(inverse)


def silently_wrong_case(robot: zoo.Robot, q: np.ndarray, mu: float = SILENT_MU) -> dict:
    """Pinocchio's Delassus routines and pvosimr against :func:`pinocchio_truth` on one case.

    Errors are :func:`rel_err`.  ``pin_efpa``: ``pin.computeDelassusMatrix``; ``pin_efpa_is``:
    its distance to the one-body LOCAL matrix (:func:`one_body_local`); ``pvosimr``: the worst
    algorithm (or the refusal); ``pin_damped`` and ``pin_damped_is_identity``: the damped
    inverse from Python against ``(G + μI)⁻¹`` and against ``I/μ`` (or why not called);
    ``pvosimr_damped``: ``inv(G_pvosimr + μI)`` (pvosimr's PV-OSIMr) against ``(G + μI)⁻¹``.
    """
    model, cms = robot.model, robot.constraints
    G_true = pinocchio_truth(model, q, cms)
    cds = [cm.createData() for cm in cms]
    G_pin = np.array(pin.computeDelassusMatrix(model, model.createData(), q, cms, cds, 0.0))
    damped_true = np.linalg.inv(G_true + mu * np.eye(robot.m))
    out = {
        "case": f"{robot.name}/{robot.preset}",
        "nv": robot.nv,
        "m": robot.m,
        "kinds": _kinds(cms),
        "pin_efpa": rel_err(G_pin, G_true),
        "pin_efpa_is": rel_err(G_pin, pinocchio_truth(model, q, one_body_local(model, cms))),
        "pvosimr": _pvosimr_error(robot, q, G_true),
    }
    damped = _damped_from_python(robot, q, mu)
    if isinstance(damped, str):
        out["pin_damped"], out["pin_damped_is_identity"] = damped, None
    else:
        out["pin_damped"] = rel_err(damped, damped_true)
        out["pin_damped_is_identity"] = rel_err(damped, np.eye(robot.m) / mu)
    if not isinstance(out["pvosimr"], str):
        G_pv = compute_delassus(model, model.createData(), q, cms, algorithm="pv-osimr")
        out["pvosimr_damped"] = rel_err(np.linalg.inv(G_pv + mu * np.eye(robot.m)), damped_true)
    return out


def silently_wrong(seed: int, cases: Iterable[zoo.Robot]) -> list[dict]:
    """:func:`silently_wrong_case` on every case (a robot with one preset), one random
    configuration each (``default_rng([seed, k])``)."""
    return [
        silently_wrong_case(robot, robot.q_random(np.random.default_rng([seed, k])))
        for k, robot in enumerate(cases)
    ]


def _num(value: float | str | None) -> str:
    if value is None:
        return "—"
    return value if isinstance(value, str) else f"{value:.1e}"


def silently_wrong_section(cases: list[dict]) -> list[str]:
    """Markdown for :func:`silently_wrong`'s cases."""
    head = (
        "| case | nv | m | constraints | `computeDelassusMatrix` | its distance to the one-body "
        "LOCAL matrix | pvosimr (worst algorithm) | damped inverse from Python | its distance "
        "to I/μ | pvosimr `inv(G + μI)` |"
    )
    lines = [
        *prose("validate", "silent-head", mu=f"{SILENT_MU:g}").splitlines(),
        "",
        head,
        "|" + "---|" * (head.count("|") - 1),
    ]
    for c in cases:
        cells = [c["case"], str(c["nv"]), str(c["m"]), c["kinds"]]
        cells += [_num(c.get(k)) for k in ("pin_efpa", "pin_efpa_is", "pvosimr")]
        cells += [
            _num(c.get(k)) for k in ("pin_damped", "pin_damped_is_identity", "pvosimr_damped")
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, "", prose("validate", "silent-foot")]
