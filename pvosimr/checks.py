"""Input checks and the explanation of a failure, shared by every numeric entry point.

Bad input raises here, once, naming the body, joint, row or entry at fault, instead of
producing a silently wrong matrix: the model's numbers (:func:`check_model`, cached), a
configuration or a batch of them (:func:`check_configuration`, :func:`check_configurations`),
and the topology a caller passes (:func:`resolve_topology`).  Where the sweeps fail on valid
input, :func:`undefined_error` says whether M is singular or the recursion lost its precision.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ._lru import LRU
from .algorithms.articulated import fold_into_parent, joint_step
from .backends import NumpyBackend
from .constraints import as_constraint_list, check_placement
from .coordinates import squared_norm, unit_normalized, unit_part_spans
from .kinematics.frames import numeric_kinematics
from .kinematics.joints import unit_parts
from .mimic import MIMIC_JOINTS, MIMIC_UNAVAILABLE, has_mimic_joints
from .topology import Topology, constraint_signature, structure_key

__all__ = [
    "NORMALIZED_TOLERANCE",
    "ModelCheck",
    "UndefinedError",
    "check_configuration",
    "check_configuration_rows",
    "check_configurations",
    "check_data",
    "check_model",
    "resolve_topology",
    "row_name",
    "topology_for",
    "undefined_error",
]

#: ``|‖part‖ − 1|`` allowed for a quaternion or unit complex part of ``q``: the precision
#: passed to ``pin.isNormalized`` (and checked by the compiled functions of :mod:`.codegen`).
NORMALIZED_TOLERANCE = 1e-6

_CACHE_SIZE = 32
_TOPOLOGIES: LRU[Topology] = LRU(_CACHE_SIZE)


def topology_for(model: pin.Model, constraint_models: Iterable) -> Topology:
    """The cached :class:`Topology` of ``(model, constraint structure)``, built on first use.

    Keyed by the constraints' :func:`~pvosimr.topology.structure_key`: a list seen before (on
    this model) was validated then, an edited one is validated and gets its own entry."""
    return _cached_topology(model, as_constraint_list(constraint_models, model))


def _cached_topology(model: pin.Model, cms: list) -> Topology:
    return _TOPOLOGIES.get_or_make(
        (id(model), model.njoints, structure_key(cms)),
        lambda: Topology(model, cms),
        fresh=lambda topo: topo.model is model,
    )


# --------------------------------------------------------------------------- the model


#: The largest ``m L² + ΣI`` (total mass × squared extent of the tree, plus its rotational
#: inertias) accepted: the sweeps form products of that size (``X_iᵀ H X_i`` carries an inertia
#: across a translation ``p`` as ``m |p|²``), and float64 overflows at 1.8e308; the factor
#: 1e8 left over covers the sums of up to 36 such terms in a 6×6 product.
_EXTENT_LIMIT = 1e300
_FLOAT_MAX = float(np.finfo(float).max)


@dataclass(frozen=True)
class ModelCheck:
    """A model that passed :func:`check_model`: a copy to compare it with on the next call, and
    the largest ``|q_k|`` the sweeps can take without overflowing (per entry of ``q``)."""

    snapshot: pin.Model
    q_bound: np.ndarray
    spans: tuple[tuple[int, int], ...] = ()  # the unit parts of q (coordinates.unit_part_spans)


_CHECKED: LRU[ModelCheck] = LRU(_CACHE_SIZE)


def check_model(model: pin.Model) -> ModelCheck:
    """Validate the numbers of ``model`` once; ValueError naming the body or joint otherwise.

    Every body ``model.inertias[i]`` must be finite, of mass ≥ 0 and with a rotational inertia
    about its centre of mass that is positive semi-definite; every ``model.jointPlacements[i]``
    finite with an orthonormal, right-handed rotation; ``model.armature`` finite and ≥ 0.
    The result is cached by ``id(model)`` together with a copy of the model: the next call
    costs one C++ ``model == copy``, which sees any edit made in
    between (``model.inertias[i] = ...``, ``model.armature = ...``) and validates again.
    """
    return _CHECKED.get_or_make(
        id(model), lambda: _checked(model), fresh=lambda checked: model == checked.snapshot
    )


def _checked(model: pin.Model) -> ModelCheck:
    _check_bodies(model)
    _check_joint_placements(model)
    _check_armature(model)
    return ModelCheck(model.copy(), _q_bound(model), tuple(unit_part_spans(model)))


def _body(model: pin.Model, i: int) -> str:
    return f"model.inertias[{i}] (the body of joint {i} {model.names[i]!r})"


def _check_bodies(model: pin.Model) -> None:
    for i in range(1, model.njoints):
        inertia = model.inertias[i]
        mass, lever, rotational = inertia.mass, inertia.lever, inertia.inertia
        for name, value in (("mass", mass), ("centre of mass", lever), ("inertia", rotational)):
            if not np.isfinite(value).all():
                raise ValueError(f"{_body(model, i)} has a non-finite {name}: {value}")
        if mass < 0:
            raise ValueError(f"{_body(model, i)} has a negative mass ({mass:g} kg)")
        eig = np.linalg.eigvalsh(rotational)
        # Pinocchio stores the inertia about the joint frame and subtracts m c cᵀ to give this
        # one: its rounding is relative to m |c|², not to the (possibly zero) inertia itself.
        if eig[0] < -1e-12 * max(eig[-1], mass * float(lever @ lever)):
            raise ValueError(
                f"{_body(model, i)} has a rotational inertia about its centre of mass that is "
                f"not positive semi-definite (eigenvalues {np.array2string(eig, precision=3)})"
            )


def _check_joint_placements(model: pin.Model) -> None:
    for i in range(1, model.njoints):
        problem = check_placement(model.jointPlacements[i])
        if problem:
            raise ValueError(f"model.jointPlacements[{i}] (joint {i} {model.names[i]!r}) {problem}")


def _check_armature(model: pin.Model) -> None:
    armature = np.asarray(model.armature, dtype=float)
    bad = np.flatnonzero(~(np.isfinite(armature) & (armature >= 0)))
    if bad.size:
        k = int(bad[0])
        what = "negative" if np.isfinite(armature[k]) else "not finite"
        raise ValueError(
            f"model.armature[{k}] = {armature[k]:g} is {what} ({_joint_of(model, k, 'v')})"
        )


def _q_bound(model: pin.Model) -> np.ndarray:
    """The largest ``|q_k|`` for which ``m_tot (L₀ + n_q max|q_k|)² + ΣI ≤`` the extent limit.

    ``L₀`` bounds the tree's extent from its joint placements and centres of mass, ``n_q max|q_k|``
    what ``q`` adds to it (a translation moves the subtree beyond it by ``q_k``).  Angles get
    the same bound: one of 1e140 rad has no meaning left in float64 either.
    """
    mass = sum(model.inertias[i].mass for i in range(1, model.njoints))
    inertia = sum(float(np.trace(model.inertias[i].inertia)) for i in range(1, model.njoints))
    extent = sum(
        float(np.linalg.norm(model.jointPlacements[i].translation))
        + float(np.linalg.norm(model.inertias[i].lever))
        for i in range(1, model.njoints)
    )
    own = mass * extent**2 + inertia
    if not own <= _EXTENT_LIMIT:
        raise ValueError(
            f"the model's masses and lengths are out of float64 range: total mass "
            f"{mass:.3g} kg, extent {extent:.3g} m, m L² ≈ {own:.3g} (limit {_EXTENT_LIMIT:g})"
        )
    if mass == 0:
        return np.full(model.nq, _FLOAT_MAX)
    bound = (math.sqrt((_EXTENT_LIMIT - inertia) / mass) - extent) / max(model.nq, 1)
    return np.full(model.nq, min(bound, _FLOAT_MAX))


def _joint_of(model: pin.Model, index: int, vector: str) -> str:
    """The joint that owns entry ``index`` of a configuration (``vector="q"``) or velocity
    (``"v"``) vector: ``"joint 3 'elbow'"``."""
    for i in range(1, model.njoints):
        joint = model.joints[i]
        first, size = getattr(joint, f"idx_{vector}"), getattr(joint, f"n{vector}")
        if first <= index < first + size:
            return f"joint {i} {model.names[i]!r}"
    return "no joint"


# --------------------------------------------------------------------------- configurations


def check_configuration(model: pin.Model, q, checked: ModelCheck | None = None) -> np.ndarray:
    """``q`` as a float vector of shape ``(model.nq,)``: real, finite, within the range the
    sweeps can take without overflowing, and normalized (else TypeError / ValueError naming the
    entry and its joint); returned as ``N(q)``, the unit-part rule of every route
    (:mod:`pvosimr.coordinates`).  A single configuration is 1-D: a (1, nq) row is refused as a
    (2, nq) stack is, naming the batch entry points.  Checks ``model`` first (:func:`check_model`)
    unless given its ``checked`` result."""
    checked = check_model(model) if checked is None else checked
    q = _as_real(model, q, "q")
    if q.shape != (model.nq,):
        raise ValueError(
            f"q has shape {q.shape}, expected ({model.nq},) (model.nq of {model.name!r}): a "
            "single configuration is 1-D; a batch of shape (B, nq) goes to "
            "pvosimr.compute_delassus_batch or a compiled f(qs)"
        )
    _check_values(model, checked, q[None, :], single=True)
    return unit_normalized(q, checked.spans)


def check_configurations(
    model: pin.Model, qs, tolerance: float = NORMALIZED_TOLERANCE
) -> np.ndarray:
    """``qs`` as a float array of shape (batch, ``model.nq``), real, finite, in range and
    normalized; returned as ``N(qs)`` (the unit-part rule, :mod:`pvosimr.coordinates`).

    The checks of :func:`check_configuration`, for every row at once; the error names the
    first bad row and its joint.  A quaternion or unit complex part is normalized when its norm
    is within ``tolerance`` of 1, as for ``pin.isNormalized``.
    """
    checked = check_model(model)
    qs = _as_real(model, qs, "qs")
    if qs.ndim != 2 or qs.shape[1] != model.nq:
        raise ValueError(
            f"qs has shape {qs.shape}, expected (batch, {model.nq}): one configuration of "
            f"{model.name!r} (nq = {model.nq}) per row"
        )
    _check_values(model, checked, qs, single=False, tolerance=tolerance)
    return unit_normalized(qs, checked.spans)


def check_configuration_rows(model: pin.Model, q) -> np.ndarray:
    """``q`` (..., nq) as the front ends over the generated library take it (``G(N(q))``, any
    non-zero norm of a unit part): real, finite and in range as :func:`check_configuration`
    requires, every unit part non-zero; returned as ``N(q)``, float64 (..., nq).  The errors name
    the entry of the ``q`` given (and, for rows, ``"row r of qs: "``), not of ``N(q)``."""
    checked = check_model(model)
    single = np.ndim(q) == 1
    a = _as_real(model, q, "q" if single else "qs")
    if a.ndim == 0 or a.shape[-1] != model.nq:
        raise ValueError(f"q must have shape (..., {model.nq}), not {a.shape}")
    rows = a.reshape(-1, model.nq)
    usable = (np.abs(rows) <= checked.q_bound).all(-1)  # False for NaN and ±inf too
    for start, length in checked.spans:
        usable &= squared_norm(rows[:, start : start + length]) > 0.0
    if not usable.all():
        r = int(np.flatnonzero(~usable)[0])
        try:
            _check_any_norm(model, checked, rows[r])
        except ValueError as exc:
            if single:
                raise
            raise ValueError(f"row {row_name(a.shape[:-1], r)} of qs: {exc}") from None
    return unit_normalized(a, checked.spans)


def _check_any_norm(model: pin.Model, checked: ModelCheck, q: np.ndarray) -> None:
    """:func:`check_configuration`'s checks of one ``q`` but for the norms, which need only be
    non-zero."""
    _check_values(model, checked, q[None], single=True, tolerance=math.inf)
    for start, length in checked.spans:
        if not squared_norm(q[start : start + length]) > 0.0:
            raise ValueError(
                f"q has a unit part of norm 0 at index {start} ({_joint_of(model, start, 'q')}): "
                "G(N(q)) divides each quaternion and unit complex (cos, sin) by its norm"
            )


def row_name(shape: tuple[int, ...], r: int) -> str:
    """Row ``r`` of a batch of leading ``shape``: ``3``, or ``(1, 0)`` for several axes."""
    if len(shape) <= 1:
        return str(r)
    return str(tuple(int(i) for i in np.unravel_index(r, shape)))


def _as_real(model: pin.Model, q, label: str) -> np.ndarray:
    """``q`` as a float64 array, or TypeError naming the first entry that is not a real number
    (complex, string, bool, any other object): numpy would drop an imaginary part with a
    warning and parse strings, silently."""
    a = np.asarray(q)
    if a.dtype.kind == "f" or a.dtype.kind in "iu":
        return a if a.dtype == np.float64 else a.astype(float)
    if a.dtype.kind == "O":
        flat = a.reshape(-1)
        bad = [
            k
            for k, x in enumerate(flat)
            if not isinstance(x, numbers.Real) or isinstance(x, (bool, np.bool_))
        ]
        if not bad:
            return a.astype(float)
        where, value = _where(model, a.shape, bad[0], label), flat[bad[0]]
        raise TypeError(
            f"{label} must be real numbers: {where} is {value!r} (a {type(value).__name__})"
        )
    if a.dtype.kind == "c":
        imaginary = np.flatnonzero(a.imag.reshape(-1))
        if imaginary.size:
            where, value = _where(model, a.shape, int(imaginary[0]), label), a.flat[imaginary[0]]
            raise TypeError(
                f"{label} must be real numbers, not {a.dtype}: {where} is {value} "
                "(the imaginary part would be dropped)"
            )
        raise TypeError(
            f"{label} must be real numbers, not {a.dtype} (every imaginary part is zero: "
            f"pass {label}.real)"
        )
    first = f": {_where(model, a.shape, 0, label)} is {a.flat[0]!r}" if a.size else ""
    raise TypeError(f"{label} must be real numbers, not {a.dtype}{first}")


def _where(model: pin.Model, shape: tuple, flat_index: int, label: str) -> str:
    """``index k (joint ...)`` or ``row r, index k (joint ...)`` of an entry of q or qs."""
    if len(shape) == 2 and label == "qs":
        row, index = divmod(flat_index, shape[1])
        return f"row {row}, index {index} ({_joint_of(model, index, 'q')})"
    index = flat_index % shape[-1] if shape else 0
    return f"index {index} ({_joint_of(model, index, 'q')})"


def _check_values(
    model: pin.Model,
    checked: ModelCheck,
    qs: np.ndarray,
    single: bool,
    tolerance: float = NORMALIZED_TOLERANCE,
) -> None:
    """Finite entries within :func:`check_model`'s bound and unit quaternion / (cos, sin)
    parts in every row of ``qs``; the ValueError names the first bad entry's joint (and its
    row, for a batch)."""
    label = "q" if single else "qs"
    inside = np.abs(qs) <= checked.q_bound  # False for NaN and ±inf too: one pass for both
    if not inside.all():
        row, index = np.argwhere(~inside)[0]
        where = f"index {index}" if single else f"row {row}, index {index}"
        joint = _joint_of(model, index, "q")
        if not np.isfinite(qs[row, index]):
            raise ValueError(f"{label} is not finite at {where} ({joint})")
        raise ValueError(
            f"{label} is out of range at {where} ({joint}): |{qs[row, index]:.3g}| > "
            f"{checked.q_bound[index]:.3g}, beyond which the inertias the recursion carries "
            f"across the tree (mass × squared distance) overflow float64"
        )
    if single and pin.isNormalized(model, qs[0], tolerance):
        return  # the per-call fast path: one C++ call; the loop below only names the culprit
    for i in range(1, model.njoints):
        joint = model.joints[i]
        for start, stop in unit_parts(joint):
            first, stop = joint.idx_q + start, joint.idx_q + stop
            norms = np.linalg.norm(qs[:, first:stop], axis=1)
            bad = np.flatnonzero(~(np.abs(norms - 1.0) <= tolerance))
            if bad.size:
                what = "quaternion" if stop - first == 4 else "unit complex (cos, sin)"
                row = "" if single else f" row {bad[0]}"
                raise ValueError(
                    f"{label}{row} is not normalized: joint {i} {model.names[i]!r} has a "
                    f"{what} of norm {norms[bad[0]]:.9g} ≠ 1 (use pinocchio.normalize(model, q))"
                )
    if single:  # pin.isNormalized saw a part that unit_parts does not know
        raise ValueError(
            "q is not normalized: a quaternion or unit-complex part has norm ≠ 1 "
            "(use pinocchio.normalize(model, q))"
        )


def resolve_topology(model: pin.Model, cms: list, topology: Topology | None) -> Topology:
    """``topology`` checked against ``(model, cms)``, or the cached one when it is None;
    ``cms`` as :func:`~pvosimr.constraints.as_constraint_list` returns it."""
    if topology is None:
        return _cached_topology(model, cms)
    if not topology.is_for(model, constraint_signature(model, cms)):
        raise ValueError("topology was built for another model or constraint structure")
    return topology


def check_data(model: pin.Model, data: pin.Data) -> None:
    """TypeError or ValueError unless ``data`` is a ``pin.Data`` created from ``model``."""
    if not isinstance(data, pin.Data):
        raise TypeError(f"data is a {type(data).__name__}, expected pinocchio.Data")
    if not model.check(data):
        if has_mimic_joints(model) and not MIMIC_JOINTS:
            raise NotImplementedError(f"the model has mimic joints: {MIMIC_UNAVAILABLE}")
        raise ValueError("data was not created from this model (use model.createData())")


# --------------------------------------------------------------------------- failures


class UndefinedError(ValueError):
    """G could not be computed at a configuration: ``what`` happened, ``why`` (the message
    is ``f"{what} at this q{why}"``; a batch puts its row in place of "this q")."""

    def __init__(self, what: str, why: str) -> None:
        super().__init__(f"{what} at this q{why}")
        self.what, self.why = what, why


def undefined_error(
    algorithm: str, model: pin.Model, q: np.ndarray, topology: Topology, cms
) -> UndefinedError:
    """Why the sweeps failed at ``q``, decided with the dense truth (error path only).

    ``M`` from ``pin.crba`` is factored leaves first (``M = Lᵀ L``, the order of the
    articulated-body recursion, whose pivots ``D_i`` are exactly those of this factorization in
    exact arithmetic).  M is singular when that fails or a pivot is within rounding
    (``n_v ε``) of its diagonal entry; otherwise M is positive definite and it is the
    recursion that lost its precision: the message names the joint whose ``D_i`` (in the
    numpy recursion) is furthest from positive definite, and cond(M).
    """
    data = model.createData()
    from .reference.truth import mass_matrix  # the reference layer imports this module

    M = mass_matrix(model, q, data)
    if not np.isfinite(M).all():
        return UndefinedError(
            "the mass matrix overflows float64", " (pin.crba is not finite): q is out of range"
        )
    singular, undefined = "the mass matrix is singular", ", G = J M⁻¹ Jᵀ is undefined"
    try:
        L = np.linalg.cholesky(M[::-1, ::-1])
    except np.linalg.LinAlgError:
        return UndefinedError(
            singular,
            f"{undefined} (pin.crba's M is not positive definite){_massless_joints(model)}",
        )
    ratio = (np.diag(L)[::-1] ** 2) / np.diag(M)
    k = int(np.argmin(ratio))
    if ratio[k] <= model.nv * np.finfo(float).eps:
        return UndefinedError(
            singular,
            f"{undefined} (the pivot of {_joint_of(model, k, 'v')} in pin.crba's M is "
            f"{ratio[k]:.1e} of its diagonal: positive only by rounding){_massless_joints(model)}",
        )
    joint, worst = _worst_pivot(model, data, q, topology, cms)
    return UndefinedError(
        f"the {algorithm} sweeps lost their precision",
        f": M is positive definite (pin.crba + Cholesky, cond(M) ≈ {np.linalg.cond(M):.1e}), "
        f"not singular, but the recursion's pivots are not in float64; the least positive "
        f"definite is the articulated inertia D_i of joint {joint} {model.names[joint]!r} "
        f"(λmin/λmax = {worst:.1e}): masses or inertias spanning too many orders of magnitude",
    )


class _PivotProbe(NumpyBackend):
    """The numpy backend, noting each ``D_i`` it inverts (a pseudo-inverse keeps it going)."""

    def __init__(self) -> None:
        self.pivots: list[np.ndarray] = []

    def inv(self, a: np.ndarray) -> np.ndarray:
        self.pivots.append(a)
        with np.errstate(all="ignore"):
            return np.linalg.pinv(0.5 * (a + a.T)) if np.isfinite(a).all() else a * np.nan


def _worst_pivot(model, data, q, topology: Topology, cms) -> tuple[int, float]:
    """The joint whose ``D_i`` has the smallest ``λmin/λmax`` in the numpy recursion."""
    probe = _PivotProbe()
    kin = numeric_kinematics(model, data, q, topology, cms)
    H_A = list(kin.H)
    with np.errstate(all="ignore"):
        for i in reversed(topology.links):
            fold_into_parent(H_A, i, topology.parent[i], joint_step(probe, kin, H_A, i))
    ratios = []
    for D in probe.pivots:
        if not np.isfinite(D).all():
            ratios.append(-np.inf)
            continue
        eig = np.linalg.eigvalsh(0.5 * (D + D.T))
        ratios.append(eig[0] / eig[-1] if eig[-1] > 0 else -np.inf)
    k = int(np.argmin(ratios))
    return list(reversed(topology.links))[k], float(ratios[k])


def _massless_joints(model: pin.Model) -> str:
    """Name the joints that move no inertia at all: they make M singular in every configuration."""
    inert = [
        model.inertias[i].mass > 0 or model.inertias[i].inertia.any() for i in range(model.njoints)
    ]
    for i in reversed(range(1, model.njoints)):
        if inert[i]:
            inert[model.parents[i]] = True
    dead = [
        model.names[i]
        for i in range(1, model.njoints)
        if not inert[i]
        and not np.any(
            model.armature[model.joints[i].idx_v : model.joints[i].idx_v + model.joints[i].nv]
        )
    ]
    if not dead:
        return ""
    return f": joints {', '.join(map(repr, dead))} move no mass, inertia or armature"
