"""Pinocchio's own Delassus routines behind pvosimr's signature.

Each reference is ``f(model, data, q, constraint_models) -> G`` (m × m numpy array), with
``constraint_models`` a list, tuple or ``pin.StdVec_RigidConstraintModel`` of LOCAL
CONTACT_3D / CONTACT_6D ``pin.RigidConstraintModel`` between a link and the world, rows in list
order — exactly like :func:`pvosimr.compute_delassus`:

``pin-efpa``
    ``pin.computeDelassusMatrix`` (extended force propagators, bound in ``pin``).
``pin-cholesky``
    ``pin.ContactCholeskyDecomposition``: sparse Cholesky of the KKT matrix, then
    ``getInverseOperationalSpaceInertiaMatrix()``.  It needs ``pin.crba`` with
    ``Convention.WORLD`` (the default LOCAL convention leaves what the decomposition reads
    unset: the result is NaN) and ``RigidConstraintModel.calc`` on every constraint first.
    It factorises the KKT matrix without damping: with linearly dependent constraint rows
    (singular G) a pivot can be exactly zero and the result NaN; it then raises
    ``ValueError``.  When the result is finite it matched the dense truth in every case tried,
    singular G included (the pivots of the constraint block are not used to form G).
``pin-pv-osimr``
    Pinocchio's C++ ``initPvDelassus`` + ``computePvDelassusMatrix``, which ``pin`` does not
    bind, through :mod:`pvosimr.reference.bridge` (compiled on first use against the installed
    ``pin`` wheel; it needs a C++ compiler, nothing else here does).  ``initPvDelassus`` runs
    once per (model, constraint list) — see :func:`cache_info` — on a ``pinocchio::Data`` owned
    by the compiled object, because it records the constraint topology in the Data it is given and
    cannot be rerun on the same Data; the ``data`` argument is therefore not used by this one.

Structures (constraint datas, Cholesky decompositions, PV objects) are cached per
``(id(model), model.njoints, constraints)`` where a constraint is identified by its joint,
type, reference frame and placement (the compiled object holds copies of the constraint
models, so a moved placement is a new entry).

:func:`damped_delassus_inverse_defect` shows why ``pin.computeDampedDelassusMatrixInverse`` is
not a reference from Python: it calls ``computePvDelassusMatrix`` on a Data that
``initPvDelassus`` never prepared.
"""

from __future__ import annotations

# pinocchio first: it loads libpinocchio_default, libboost_python and eigenpy's converters,
# which the compiled module then reuses (by soname / through the Boost.Python registry).
import pinocchio as pin  # isort: skip

import functools
from collections.abc import Callable, Iterable

import numpy as np

from .._lru import LRU
from ..checks import check_configuration
from ..constraints import (
    RowMap,
    as_constraint_list,
    constraint_dim,
    constraint_kind,
    contact_cholesky,
    pinocchio_kind_problem,
    place_constraints,
)
from ..topology import constraint_signature
from . import bridge

__all__ = [
    "REFERENCES",
    "cache_info",
    "clear_cache",
    "damped_delassus_inverse_defect",
    "extension_available",
    "pinocchio_cholesky",
    "pinocchio_efpa",
    "pinocchio_pv_object",
    "pinocchio_pv_osimr",
    "unavailable",
    "unmapped",
]


def extension_available() -> bool:
    """Whether Pinocchio's C++ PV-OSIMr is usable here (its bridge loads, built if needed)."""
    return bridge.status() is None


def unavailable() -> dict[str, str]:
    """The references that cannot run here, each with the reason (only ``pin-pv-osimr`` can be:
    it needs the bridge, which needs a C++ compiler)."""
    why = bridge.status()
    return {} if why is None else {"pin-pv-osimr": why}


# --------------------------------------------------------------------------- cache


class _Entry:
    """What one (model, constraint list) needs across calls."""

    __slots__ = ("cds", "chol", "cholesky_cds", "cms", "m", "model", "pv")

    def __init__(self, model: pin.Model, cms: list[pin.RigidConstraintModel]) -> None:
        self.model = model
        self.cms = pin.StdVec_RigidConstraintModel(cms)  # copies: later edits do not leak in
        self.cds = pin.StdVec_RigidConstraintData([cm.createData() for cm in self.cms])
        self.m = sum(constraint_dim(cm) for cm in self.cms)
        self.chol: pin.ContactCholeskyDecomposition | None = None
        self.cholesky_cds: pin.StdVec_RigidConstraintData | None = None
        self.pv = None  # _pinocchio_pv.PvDelassus, built on first use

    def pv_delassus(self):
        """The compiled PV-OSIMr object (the bridge loads, built if needed); its constructor
        runs ``initPvDelassus``, once per entry."""
        if self.pv is None:
            self.pv = bridge.load().PvDelassus(self.model, self.cms)
        return self.pv


_ENTRIES: LRU[_Entry] = LRU(32)


def _key(model: pin.Model, cms: list[pin.RigidConstraintModel]) -> tuple:
    return (
        id(model),
        model.njoints,
        tuple(
            (
                constraint_kind(cm),  # pin 4's models have no type or frame: refused by name
                cm.joint1_id,
                cm.joint2_id,
                getattr(cm, "type", None),
                getattr(cm, "reference_frame", None),
                cm.joint1_placement.homogeneous.tobytes(),
            )
            for cm in cms
        ),
    )


def _entry(model: pin.Model, constraint_models: Iterable) -> _Entry:
    cms = as_constraint_list(constraint_models, model)
    return _ENTRIES.get_or_make(
        _key(model, cms), lambda: _new_entry(model, cms), fresh=lambda entry: entry.model is model
    )


def _new_entry(model: pin.Model, cms: list[pin.RigidConstraintModel]) -> _Entry:
    constraint_signature(model, cms)  # raises on constraints pvosimr cannot handle
    for k, cm in enumerate(cms):  # and on those these routines get silently wrong
        problem = pinocchio_kind_problem(cm)
        if problem:
            label = f"constraint {k}" + (f" ({cm.name!r})" if cm.name else "")
            raise ValueError(f"{label} {problem}")
    return _Entry(model, cms)


def cache_info() -> dict[str, int]:
    """Cache hits/misses, live entries, and how often ``initPvDelassus`` ran in this process."""
    return {
        "hits": _ENTRIES.hits,
        "misses": _ENTRIES.misses,
        "entries": len(_ENTRIES),
        "pv_inits": bridge.load().init_calls() if extension_available() else 0,
    }


def clear_cache() -> None:
    """Forget every cached structure (the statistics are kept)."""
    _ENTRIES.clear()


# --------------------------------------------------------------------------- row maps


def unmapped(constraint_models: Iterable) -> tuple[list, np.ndarray | None]:
    """The models under the row maps of ``constraint_models`` (:func:`pvosimr.constraints.rows`)
    and the block-diagonal map ``A`` of all their rows (None when no constraint is a row map):
    the rows are ``A J`` of the models', so ``G = A G_models Aᵀ``."""
    cms = list(constraint_models)
    if not any(isinstance(cm, RowMap) for cm in cms):
        return cms, None
    pairs = [_unmap(cm) for cm in cms]
    blocks = [A for _, A in pairs]
    A = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)))
    r = c = 0
    for b in blocks:
        A[r : r + b.shape[0], c : c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return [cm for cm, _ in pairs], A


def _unmap(cm) -> tuple[object, np.ndarray]:
    if not isinstance(cm, RowMap):
        return cm, np.eye(constraint_dim(cm))
    inner, B = _unmap(cm.model)
    M = np.eye(B.shape[0])[list(cm.selection)] if cm.matrix is None else np.asarray(cm.matrix)
    return inner, M @ B


def _through_row_maps(reference: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """``reference`` on a list with row maps: Pinocchio's G of the models under them, mapped
    (``A G Aᵀ``, :func:`unmapped`); the models themselves are checked as usual."""

    @functools.wraps(reference)
    def mapped(model: pin.Model, data: pin.Data, q, constraint_models: Iterable) -> np.ndarray:
        models, A = unmapped(constraint_models)
        if A is None:
            return reference(model, data, q, models)
        try:
            G = reference(model, data, q, models)
        except ValueError as exc:
            raise ValueError(
                f"{exc} (said of the constraints under the row maps, whose G Pinocchio forms)"
            ) from exc
        return A @ G @ A.T

    return mapped


# --------------------------------------------------------------------------- references


@_through_row_maps
def pinocchio_efpa(model: pin.Model, data: pin.Data, q, constraint_models: Iterable) -> np.ndarray:
    """``pin.computeDelassusMatrix(model, data, q, cms, cds, 0.0)`` (EFPA-style, inertial frame)."""
    entry = _entry(model, constraint_models)
    if entry.m == 0:
        return np.zeros((0, 0))
    q = check_configuration(model, q)
    return np.asarray(pin.computeDelassusMatrix(model, data, q, entry.cms, entry.cds, 0.0))


@_through_row_maps
def pinocchio_cholesky(
    model: pin.Model, data: pin.Data, q, constraint_models: Iterable
) -> np.ndarray:
    """``ContactCholeskyDecomposition(...).getInverseOperationalSpaceInertiaMatrix()``.

    Order matters: ``pin.crba(..., Convention.WORLD)`` (placements and the mass matrix),
    ``cm.calc`` on every constraint (its placement in the world), then ``chol.compute``.
    """
    entry = _entry(model, constraint_models)
    if entry.m == 0:
        return np.zeros((0, 0))
    q = check_configuration(model, q)
    if entry.chol is None:
        entry.cholesky_cds = pin.StdVec_RigidConstraintData([cm.createData() for cm in entry.cms])
        entry.chol = contact_cholesky(model, data, entry.cms, entry.cholesky_cds)
    cds = entry.cholesky_cds
    pin.crba(model, data, q, pin.Convention.WORLD)
    place_constraints(model, data, entry.cms, cds)
    entry.chol.compute(model, data, entry.cms, cds, 0.0)
    G = np.asarray(entry.chol.getInverseOperationalSpaceInertiaMatrix())
    if not np.isfinite(G).all():
        raise ValueError(
            "pin-cholesky: the KKT factorisation hit a zero pivot (non-finite Delassus matrix). "
            "The undamped Cholesky route needs linearly independent constraint rows: here "
            "G = J M⁻¹ Jᵀ is singular (redundant constraints, e.g. more rows than the dofs "
            "that move them)."
        )
    return G


def pinocchio_pv_object(model: pin.Model, constraint_models: Iterable):
    """The cached C++ object on which ``initPvDelassus`` ran, for timing ``compute(model, q)``
    (which checks only the size of ``q``) without the Python around it."""
    return _entry(model, constraint_models).pv_delassus()


@_through_row_maps
def pinocchio_pv_osimr(
    model: pin.Model, data: pin.Data, q, constraint_models: Iterable
) -> np.ndarray:
    """Pinocchio's C++ ``computePvDelassusMatrix`` after a one-off ``initPvDelassus``.

    ``data`` is accepted for the common signature but not used: the compiled object computes
    in its own ``pinocchio::Data``, the one ``initPvDelassus`` prepared.  Bad constraints or
    ``q`` raise as for the other references; then, where the bridge cannot be built here (no
    C++ compiler, no Eigen headers, ...), :class:`pvosimr.reference.bridge.BridgeUnavailableError`
    (an ``ImportError``) says why and how to get it.
    """
    entry = _entry(model, constraint_models)
    q = check_configuration(model, q)
    if entry.m == 0:
        return np.zeros((0, 0))
    return entry.pv_delassus().compute(model, q)


#: The references, by name: each is ``f(model, data, q, constraint_models) -> G``.
REFERENCES: dict[str, Callable[..., np.ndarray]] = {
    "pin-efpa": pinocchio_efpa,
    "pin-pv-osimr": pinocchio_pv_osimr,
    "pin-cholesky": pinocchio_cholesky,
}


# --------------------------------------------------------------------------- damped inverse


def damped_delassus_inverse_defect(
    model: pin.Model, q, constraint_models: Iterable, mu: float = 1e-3
) -> dict:
    """How far ``pin.computeDampedDelassusMatrixInverse`` is from ``(G + mu I)⁻¹``.

    The reference is ``inv(G_dense + mu I)`` with ``G_dense = J M⁻¹ Jᵀ``
    (:func:`pvosimr.reference.truth.dense_delassus`).  Errors are
    :func:`pvosimr.reference.truth.rel_err` (``max|A − B| / max(1, max|B|)``).  Keys:

    ``pin_python``
        ``pin.computeDampedDelassusMatrixInverse(model, data, q, cms, cds, mu)`` from Python.
        Its C++ body calls ``computePvDelassusMatrix`` on a Data that ``initPvDelassus`` never
        prepared (it is not bound), so the result is wrong.
    ``pv_cpp``
        The same C++ ``computeDampedDelassusMatrixInverse`` (PV route), on the Data our compiled
        object initialised with ``initPvDelassus``.
    ``pv_numpy``
        ``inv(G_pv + mu I)`` with ``G_pv`` from :func:`pinocchio_pv_osimr`.

    ``pin_python`` is NaN (with ``pin_python_skipped`` saying why) when two constraints sit on
    the same joint: on an unprepared Data, Pinocchio's ``findGreatestCommonAncestor`` (see
    ``delassus.hxx``) then returns the index ``size_t(-1)``, which is used to index a vector —
    undefined behaviour, so it is not called.
    """
    from .truth import dense_delassus, rel_err

    cms = as_constraint_list(constraint_models, model)
    q = check_configuration(model, q)
    entry = _entry(model, cms)
    pv = entry.pv_delassus()
    if mu <= 0:
        raise ValueError("mu must be positive")
    g_dense = dense_delassus(model, q, cms)
    m = g_dense.shape[0]
    if m == 0:
        return {"mu": float(mu), "m": 0, "pin_python": 0.0, "pv_cpp": 0.0, "pv_numpy": 0.0}
    reference = np.linalg.inv(g_dense + mu * np.eye(m))
    out: dict = {"mu": float(mu), "m": m}

    joints = [cm.joint1_id for cm in cms]
    if len(set(joints)) < len(joints):
        out["pin_python"] = float("nan")
        out["pin_python_skipped"] = "two constraints on one joint: index underflow (UB)"
    else:
        data = model.createData()
        cds = pin.StdVec_RigidConstraintData([cm.createData() for cm in entry.cms])
        pin_inv = pin.computeDampedDelassusMatrixInverse(model, data, q, entry.cms, cds, mu)
        out["pin_python"] = rel_err(np.asarray(pin_inv), reference)
    out["pv_cpp"] = rel_err(pv.damped_inverse(model, q, mu), reference)
    g_pv = pinocchio_pv_osimr(model, None, q, cms)
    out["pv_numpy"] = rel_err(np.linalg.inv(g_pv + mu * np.eye(m)), reference)
    return out
