"""The public numeric entry points, in Pinocchio's calling convention.

``compute_delassus(model, data, q, constraint_models, algorithm=...)`` is a drop-in for
``pin.computeDelassusMatrix(model, data, q, contact_models, contact_datas)``: same inputs (the
very ``RigidConstraintModel`` objects), same rows, same block order.  Inputs are validated here,
once, so that bad input raises instead of producing a silently wrong matrix.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable

import numpy as np
import pinocchio as pin

from .algorithms import SWEEPS, sweeps_for
from .backend import NUMPY
from .constraints import as_constraint_list
from .kinematics import numeric_kinematics
from .topology import Topology, constraint_signature

__all__ = [
    "ALGORITHMS",
    "check_configuration",
    "check_configurations",
    "compute_delassus",
    "efpa",
    "ltl_osim",
    "naive",
    "pv_osim",
    "pv_osimr",
    "topology_for",
]

#: Algorithm names accepted by :func:`compute_delassus`.
ALGORITHMS = tuple(SWEEPS)

_CACHE: OrderedDict[tuple, Topology] = OrderedDict()
_CACHE_SIZE = 32


def topology_for(model: pin.Model, constraint_models: Iterable) -> Topology:
    """The cached :class:`Topology` of ``(model, constraint structure)``, built on first use."""
    signature = constraint_signature(model, constraint_models)
    key = (id(model), model.njoints, signature)
    topo = _CACHE.get(key)
    if topo is None or topo.model is not model:
        topo = Topology(model, constraint_models)
        _CACHE[key] = topo
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return topo


def check_configuration(model: pin.Model, q) -> np.ndarray:
    """``q`` as a float vector of size ``model.nq``, finite and normalized (else ValueError)."""
    q = np.asarray(q, dtype=float)
    if q.ndim == 2 and 1 in q.shape:
        q = q.reshape(-1)
    if q.shape != (model.nq,):
        raise ValueError(
            f"q has shape {q.shape}, expected ({model.nq},) (model.nq of {model.name!r})"
        )
    _check_values(model, q[None, :], single=True)
    return q


#: Joints whose configuration holds a unit quaternion or a unit complex (cos, sin): their
#: (first, stop) in ``q_i``.  The same parts ``pin.isNormalized`` checks, for the joint types
#: pvosimr supports.
_UNIT_PARTS = {
    "JointModelFreeFlyer": (3, 7),
    "JointModelSpherical": (0, 4),
    "JointModelPlanar": (2, 4),
    "JointModelRUBX": (0, 2),
    "JointModelRUBY": (0, 2),
    "JointModelRUBZ": (0, 2),
    "JointModelRevoluteUnboundedUnaligned": (0, 2),
}


def check_configurations(model: pin.Model, qs, tolerance: float = 1e-6) -> np.ndarray:
    """``qs`` as a float array of shape (batch, ``model.nq``), finite and normalized.

    The checks of :func:`check_configuration`, for every row at once; the ValueError names the
    first bad row and its joint.  A quaternion or unit complex part is normalized when its norm
    is within ``tolerance`` of 1, as for ``pin.isNormalized``.
    """
    qs = np.asarray(qs, dtype=float)
    if qs.ndim != 2 or qs.shape[1] != model.nq:
        raise ValueError(
            f"qs has shape {qs.shape}, expected (batch, {model.nq}): one configuration of "
            f"{model.name!r} (nq = {model.nq}) per row"
        )
    _check_values(model, qs, single=False, tolerance=tolerance)
    return qs


def _check_values(model: pin.Model, qs: np.ndarray, single: bool, tolerance: float = 1e-6) -> None:
    """Finite entries and unit quaternion / (cos, sin) parts in every row of ``qs``; the
    ValueError names the first bad entry's joint (and its row, for a batch)."""
    label = "q" if single else "qs"
    bad = np.argwhere(~np.isfinite(qs))
    if bad.size:
        row, index = bad[0]
        where = f"index {index}" if single else f"row {row}, index {index}"
        raise ValueError(f"{label} is not finite at {where} ({_joint_of_q(model, index)})")
    if single and pin.isNormalized(model, qs[0], tolerance):
        return  # the per-call fast path: one C++ call; the loop below only names the culprit
    for i in range(1, model.njoints):
        joint = model.joints[i]
        part = _UNIT_PARTS.get(joint.shortname())
        if part is None:
            continue
        first, stop = joint.idx_q + part[0], joint.idx_q + part[1]
        norms = np.linalg.norm(qs[:, first:stop], axis=1)
        bad = np.flatnonzero(~(np.abs(norms - 1.0) <= tolerance))
        if bad.size:
            what = "quaternion" if stop - first == 4 else "unit complex (cos, sin)"
            row = "" if single else f" row {bad[0]}"
            raise ValueError(
                f"{label}{row} is not normalized: joint {i} {model.names[i]!r} has a {what} "
                f"of norm {norms[bad[0]]:.9g} ≠ 1 (use pinocchio.normalize(model, q))"
            )
    if single:  # pin.isNormalized saw a joint type outside _UNIT_PARTS
        raise ValueError(
            "q is not normalized: a quaternion or unit-complex part has norm ≠ 1 "
            "(use pinocchio.normalize(model, q))"
        )


def _joint_of_q(model: pin.Model, index: int) -> str:
    for i in range(1, model.njoints):
        j = model.joints[i]
        if j.idx_q <= index < j.idx_q + j.nq:
            return f"joint {i} {model.names[i]!r}"
    return "no joint"


def resolve_topology(model: pin.Model, cms, topology: Topology | None) -> Topology:
    """``topology`` checked against ``(model, cms)``, or the cached one when it is None."""
    if topology is None:
        return topology_for(model, cms)
    if not topology.is_for(model, constraint_signature(model, cms)):
        raise ValueError("topology was built for another model or constraint structure")
    return topology


def _check_data(model: pin.Model, data: pin.Data) -> None:
    if not isinstance(data, pin.Data):
        raise TypeError(f"data is a {type(data).__name__}, expected pinocchio.Data")
    if not model.check(data):
        raise ValueError("data was not created from this model (use model.createData())")


def _evaluate(
    algorithm: str,
    model: pin.Model,
    data: pin.Data,
    q,
    constraint_models: Iterable,
    topology: Topology | None,
) -> np.ndarray:
    sweeps = sweeps_for(algorithm)
    _check_data(model, data)
    q = check_configuration(model, q)
    cms = as_constraint_list(constraint_models)
    topology = resolve_topology(model, cms, topology)
    if topology.m == 0:
        return np.zeros((0, 0))
    kin = numeric_kinematics(model, data, q, topology, cms)
    try:
        with np.errstate(all="ignore"):  # a singular M shows up as non-finite G, checked below
            G = sweeps(NUMPY, topology, kin)
    except np.linalg.LinAlgError:
        G = np.full((topology.m, topology.m), np.nan)
    if not np.isfinite(G).all():
        raise ValueError(
            f"the mass matrix is singular at this q, G = J M⁻¹ Jᵀ is undefined{_why(model)}"
        )
    return G


def _why(model: pin.Model) -> str:
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


def compute_delassus(
    model: pin.Model,
    data: pin.Data,
    q,
    constraint_models: Iterable,
    algorithm: str = "pv-osimr",
    topology: Topology | None = None,
) -> np.ndarray:
    """The Delassus matrix ``G = J M⁻¹ Jᵀ`` (m × m, symmetric) at configuration ``q``.

    Same semantics and block order as ``pin.computeDelassusMatrix``: constraint ``k`` of
    ``constraint_models`` (``pin.RigidConstraintModel``, CONTACT_3D or CONTACT_6D, reference
    frame LOCAL, any ``joint1_placement``) owns rows ``offsets[k] : offsets[k] + m_k``; 6D rows
    are the linear then angular velocity of the constraint frame, 3D rows its linear velocity.

    ``algorithm`` is one of :data:`ALGORITHMS`.  ``topology`` (a :class:`Topology` of this
    model and constraint structure) is cached transparently when not given.
    """
    return _evaluate(algorithm, model, data, q, constraint_models, topology)


def _named(algorithm: str, doc: str) -> Callable[..., np.ndarray]:
    def run(model, data, q, constraint_models, topology: Topology | None = None) -> np.ndarray:
        return _evaluate(algorithm, model, data, q, constraint_models, topology)

    run.__name__ = run.__qualname__ = algorithm.replace("-", "_")
    run.__doc__ = f"{doc}\n\nSame signature and semantics as :func:`compute_delassus`."
    return run


pv_osimr = _named("pv-osimr", "The Delassus matrix by PV-OSIMr, O(n + m²) (paper Algorithm 3).")
pv_osim = _named("pv-osim", "The Delassus matrix by PV-OSIM, O(n + m²d) (paper Algorithm 1).")
efpa = _named("efpa", "The Delassus matrix by EFPA, O(n + md + m²) (paper Algorithm 2).")
ltl_osim = _named("ltl-osim", "The Delassus matrix by LTL-OSIM, O(nd² + m²d + md²) (Featherstone).")
naive = _named("naive", "The Delassus matrix as dense J M⁻¹ Jᵀ via Cholesky, O(n³ + m²n).")
