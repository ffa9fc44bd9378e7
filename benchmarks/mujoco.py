"""MuJoCo's route to its Delassus matrix against pvosimr's, on the same MJCF robots.

MuJoCo forms ``efc_AR = J M⁻¹ Jᵀ + diag(efc_R)`` in ``mj_fwdPosition``.  On each robot of
:data:`MUJOCO_ROBOTS`, at configurations with contacts (:func:`points`), every method of
:data:`MUJOCO_LABELS` is checked against MuJoCo's ``efc_AR − diag(efc_R)`` (:func:`check`), then
timed (:mod:`.loop`).  The report's prose (``templates/timings.md``) says what each one does.
"""

from __future__ import annotations

import statistics
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from pvosimr import compute_delassus
from pvosimr.extras import install_hint, missing_extra
from pvosimr.reference.truth import rel_err
from pvosimr.study.progress import progress_bar

from .loop import N_CONFIGS, Method, Timed, time_methods
from .names import TOLERANCES
from .record import within

MUJOCO_ROBOTS = ("mjcf_two_arms_bar", "mjcf_quadruped", "mjcf_shadow_hand", "mjcf_humanoid")
"""The MJCF robots timed by default: closed loops with contacts of every condim, four feet, a
hand holding a block, a humanoid on the floor."""
REFERENCE = "mujoco:fwdPosition"  # the method every ratio divides by
TOLERANCE = TOLERANCES["mujoco"]  # largest rel_err of a timed method against MuJoCo's matrix
MAX_DRAWS = 4  # draws per configuration wanted before giving up on finding contacts
PIECES = ("mj_kinematics", "mj_comPos", "mj_makeM", "mj_factorM", "mj_collision",
          "mj_makeConstraint", "mj_projectConstraint")  # fmt: skip
"""The stages of ``mj_fwdPosition`` that ``efc_AR`` needs, in MuJoCo's order."""

MUJOCO_LABELS = {
    REFERENCE: "MuJoCo mj_fwdPosition (PGS, dense; limits and friction loss off)",
    "mujoco:pieces": "MuJoCo " + " + ".join(p.removeprefix("mj_") for p in PIECES),
    "mujoco:fwdPosition-all-rows": "MuJoCo mj_fwdPosition (PGS, dense; options as in the file)",
    "numpy:pv-osimr": "pvosimr numpy PV-OSIMr",
    "numpy:auto": "pvosimr numpy auto",
}
"""Every method of this section and its name in the report, in the order of the rows."""


class DisagreementError(ValueError):
    """A method's G differs from MuJoCo's by more than :data:`TOLERANCE`."""


class NoRowsError(LookupError):
    """No configuration drawn had constraint rows: nothing to time on that robot."""


class Point(NamedTuple):
    """One configuration and what MuJoCo made of it (the input of every timed call)."""

    q: np.ndarray  # Pinocchio's
    qpos: np.ndarray  # MuJoCo's
    constraints: list  # pvosimr constraints with MuJoCo's rows, in order
    kept: np.ndarray  # those rows in the efc arrays of the copy without limits and friction loss
    kept_all: np.ndarray  # and in those of the copy with the file's options
    G: np.ndarray  # MuJoCo's efc_AR − diag(efc_R) on the kept rows
    nefc_all: int  # rows of the copy with the file's options


@dataclass
class MujocoResult(Timed):
    """One MJCF robot: ``m`` the median of its rows over the configurations, its rows at each
    configuration (and with the file's options), those not mapped; ``errors``: the worst over
    the configurations against MuJoCo's matrix."""

    rows: list[int] = field(default_factory=list)
    rows_all: list[int] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)
    ERRORS = "errors_vs_mujoco"

    def to_json(self) -> dict:
        ref = self.timings.get(REFERENCE)
        return {
            **self.json_head(),
            "m_median": self.m,
            "rows": self.rows,
            "rows_all_median": statistics.median(self.rows_all),
            "rows_all": self.rows_all,
            "left_out": self.left_out,
            "ratios_to_mujoco": {k: ref and t.median / ref.median for k, t in self.timings.items()},
            "errors_vs_mujoco": self.errors,
        }


def known_robot(name: str) -> bool:
    """Whether ``name`` is one of :data:`~pvosimr.zoo.mujoco_robots.MJCF_ROBOTS` or an MJCF
    file (its package or MuJoCo may still be missing)."""
    from pvosimr.zoo.mujoco_robots import MJCF_ROBOTS

    return name in MJCF_ROBOTS or Path(name).is_file()


def _engines(pair) -> tuple[tuple, tuple]:
    """``(mj, d)`` of the copy with limits and friction loss off, and of the one as written."""
    import mujoco

    from pvosimr.reference.mujoco_efc import mujoco_model_for_delassus

    off = mujoco.mjtDisableBit
    mapped = mujoco_model_for_delassus(pair.mj)
    mapped.opt.disableflags |= int(off.mjDSBL_LIMIT) | int(off.mjDSBL_FRICTIONLOSS)
    written = mujoco_model_for_delassus(pair.mj)
    return (mapped, mujoco.MjData(mapped)), (written, mujoco.MjData(written))


def points(robot, n: int, rng: np.random.Generator, engines: tuple) -> tuple[list[Point], Counter]:
    """Up to ``n`` configurations with rows, from at most ``MAX_DRAWS · n`` draws, and the rows
    MuJoCo forms there that pvosimr does not map (limits and friction loss being off)."""
    from pvosimr.reference.mujoco_efc import efc_rows

    (mapped, d), (written, d_all) = engines
    out, left_out = [], Counter()
    for k in range(MAX_DRAWS * n):
        if len(out) == n:
            break
        q = robot.configuration(k, rng)
        rows = efc_rows(robot.pair, q, mapped, d)
        if not rows.kept:
            continue
        every = efc_rows(robot.pair, q, written, d_all)
        left_out.update(rows.left_out)
        kept, kept_all = (np.asarray(r.kept, dtype=int) for r in (rows, every))
        qpos = robot.pair.qpos(q)
        out.append(Point(q, qpos, rows.constraints, kept, kept_all, rows.G, int(d_all.nefc)))
    return out, left_out


def _delassus(d, kept: np.ndarray) -> np.ndarray:
    """``efc_AR − diag(efc_R)`` of MuJoCo's data ``d`` on the rows ``kept``."""
    n = d.nefc
    AR = np.asarray(d.efc_AR[: n * n]).reshape(n, n)
    return AR[np.ix_(kept, kept)] - np.diag(np.asarray(d.efc_R)[kept])


def _mujoco_methods(engines: tuple) -> dict[str, tuple[Callable, Callable]]:
    """``name -> (call, G after the call)`` of MuJoCo's three routes."""
    import mujoco

    (mj, d), (mj_all, d_all) = engines
    stages = [getattr(mujoco, p) for p in PIECES]

    def fwd(p: Point) -> None:
        d.qpos[:] = p.qpos
        mujoco.mj_fwdPosition(mj, d)

    def pieces(p: Point) -> None:
        d.qpos[:] = p.qpos
        for stage in stages:
            stage(mj, d)

    def fwd_all(p: Point) -> None:
        d_all.qpos[:] = p.qpos
        mujoco.mj_fwdPosition(mj_all, d_all)

    def after(call: Callable, data, rows: str = "kept") -> tuple[Callable, Callable]:
        return call, lambda p: call(p) or _delassus(data, getattr(p, rows))

    return {
        REFERENCE: after(fwd, d),
        "mujoco:pieces": after(pieces, d),
        "mujoco:fwdPosition-all-rows": after(fwd_all, d_all, "kept_all"),
    }


def _pvosimr_methods(model) -> dict[str, tuple[Callable, Callable]]:
    """``name -> (call, G)`` of pvosimr's numpy calls (their result is G)."""
    data = model.createData()

    def call(algorithm: str) -> Callable[[Point], np.ndarray]:
        return lambda p: compute_delassus(model, data, p.q, p.constraints, algorithm=algorithm)

    return {f"numpy:{a}": (call(a), call(a)) for a in ("pv-osimr", "auto")}


def check(
    results: dict[str, Callable[[Point], np.ndarray]], at: Sequence[Point], robot: str = ""
) -> dict[str, float]:
    """Each method's worst :func:`~pvosimr.reference.truth.rel_err` against MuJoCo's matrix
    over the configurations ``at``; :class:`DisagreementError` where one exceeds :data:`TOLERANCE`
    (a matrix of another shape counts as an infinite error)."""
    worst = {}
    for name, G_of in results.items():
        worst[name] = 0.0
        for k, p in enumerate(at):
            G = np.asarray(G_of(p))
            error = rel_err(G, p.G) if G.shape == p.G.shape else float("inf")
            message = (
                f"{robot}: {name} differs from MuJoCo's efc_AR − diag(efc_R) at "
                f"configuration {k} (m = {len(p.G)}): error {error:.1e} > {TOLERANCE:g}"
            )
            worst[name] = max(worst[name], within(error, TOLERANCE, message, DisagreementError))
    return worst


def time_robot(name: str, *, repeats: int, n: int = N_CONFIGS, seed: int = 0) -> MujocoResult:
    """Check, then time every method of :data:`MUJOCO_LABELS` on one MJCF robot.

    Raises ModuleNotFoundError (MuJoCo, or the package of the model, is missing),
    FileNotFoundError, :class:`NoRowsError` (no configuration with rows in ``MAX_DRAWS · n`` draws)
    and :class:`DisagreementError`.
    """
    from pvosimr.zoo.mujoco_robots import mjcf_robot

    robot = mjcf_robot(name)
    engines = _engines(robot.pair)
    at, left_out = points(robot, n, np.random.default_rng(seed), engines)
    if not at:
        raise NoRowsError(f"no configuration with constraint rows in {MAX_DRAWS * n} draws")
    methods = {**_mujoco_methods(engines), **_pvosimr_methods(robot.model)}
    rows = [len(p.kept) for p in at]
    result = MujocoResult(
        name,
        robot.nv,
        statistics.median(rows),
        rows=rows,
        rows_all=[p.nefc_all for p in at],
        left_out=dict(left_out),
    )
    result.errors = check({k: G for k, (_, G) in methods.items()}, at, name)
    timed: dict[str, Method] = {k: (call, at, 1) for k, (call, _) in methods.items()}
    result.timings = time_methods(timed, repeats)
    return result


def time_mujoco(
    names: Sequence[str], *, repeats: int, seed: int = 0, progress: bool = True
) -> tuple[list[MujocoResult], dict[str, str], str | None]:
    """:func:`time_robot` on each robot: the results, the robots not available (with why), and
    the line naming the extra to install when MuJoCo itself is missing (then nothing is run)."""
    if not names:
        return [], {}, None
    if missing_extra("mujoco"):
        return [], {}, install_hint("pvosimr bench", "mujoco")
    results, unavailable = [], {}
    bar = progress_bar(list(names), desc="MuJoCo robots", disable=not progress, file=sys.stderr)
    for name in bar:
        try:
            results.append(time_robot(name, repeats=repeats, seed=seed))
        except (ModuleNotFoundError, FileNotFoundError, NoRowsError) as exc:  # e.g. a model source
            unavailable[name] = str(exc).split(". ")[0]
    return results, unavailable, None
