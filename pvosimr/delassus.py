"""The public numeric entry points, in Pinocchio's calling convention.

``compute_delassus(model, data, q, constraint_models, algorithm=...)`` is a drop-in for
``pin.computeDelassusMatrix(model, data, q, contact_models, contact_datas)``: same inputs (the
very ``RigidConstraintModel`` objects), same rows, same block order.  Inputs are validated
(:mod:`pvosimr.checks`), once, so that bad input raises instead of producing a silently wrong
matrix; the evaluation itself is :func:`pvosimr.evaluate.delassus_at`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import pinocchio as pin

from .algorithms import SWEEPS
from .checks import (
    check_configuration,
    check_data,
    check_model,
    resolve_topology,
    topology_for,
)
from .choice import canonical_algorithm, resolve_algorithm
from .constraints import as_constraint_list, check_placements
from .evaluate import delassus_at
from .topology import Topology

#: What ``pvosimr`` exports from here: the entry points and the topology cache.
__all__ = [
    "ALGORITHMS",
    "compute_delassus",
    "efpa",
    "ltl_osim",
    "naive",
    "pv_osim",
    "pv_osimh",
    "pv_osimr",
    "topology_for",
]

#: Algorithm names accepted by :func:`compute_delassus`.
ALGORITHMS = tuple(SWEEPS)


def compute_delassus(
    model: pin.Model,
    data: pin.Data,
    q,
    constraint_models: Iterable,
    algorithm: str = "pv-osimr",
    topology: Topology | None = None,
) -> np.ndarray:
    """The Delassus matrix ``G = J M⁻¹ Jᵀ`` (m × m, symmetric) at configuration ``q``.

    Same block order as ``pin.computeDelassusMatrix``: constraint ``k`` of
    ``constraint_models`` (``pin.RigidConstraintModel``, CONTACT_3D or CONTACT_6D) owns rows
    ``constraint_offsets[k] : constraint_offsets[k] + m_k``, the rows of Pinocchio's
    ``getConstraintJacobian``: 6D rows are the linear then angular velocity of the constraint
    frame, 3D rows its linear velocity, in that frame (LOCAL) or in world axes
    (LOCAL_WORLD_ALIGNED), relative to ``joint2``'s frame for a constraint between two bodies
    (:mod:`pvosimr.constraints`).  Pin 4's ``FrameAnchorConstraintModel``,
    ``PointAnchorConstraintModel`` and ``PointContactConstraintModel`` may stand in the same list,
    with the rows ``getConstraintJacobian`` gives them.  ``pin.computeDelassusMatrix`` itself reads
    LOCAL_WORLD_ALIGNED as LOCAL and ignores ``joint2`` (pin 4.1).

    ``algorithm`` is one of :data:`ALGORITHMS`, or ``"auto"`` for the one whose numpy call is
    fastest on this model and constraint structure, chosen at the first call
    (:mod:`pvosimr.choice`).  ``topology``
    (a :class:`Topology` of this model and constraint structure) is cached transparently when
    not given.
    """
    algorithm = canonical_algorithm(algorithm)  # an unknown name fails first
    check_data(model, data)
    checked = check_model(model)
    q = check_configuration(model, q, checked)
    cms = as_constraint_list(constraint_models, model)
    check_placements(cms)
    topology = resolve_topology(model, cms, topology)
    if topology.m == 0:
        return np.zeros((0, 0))
    algorithm = resolve_algorithm(algorithm, model, topology, cms)
    return delassus_at(algorithm, model, data, q, topology, cms, checked)


def _named(algorithm: str, doc: str) -> Callable[..., np.ndarray]:
    def run(model, data, q, constraint_models, topology: Topology | None = None) -> np.ndarray:
        return compute_delassus(model, data, q, constraint_models, algorithm, topology)

    run.__name__ = run.__qualname__ = algorithm.replace("-", "_")
    run.__doc__ = f"{doc}\n\nSame signature and semantics as :func:`compute_delassus`."
    return run


pv_osimr = _named("pv-osimr", "The Delassus matrix by PV-OSIMr, O(n + m²) (paper Algorithm 3).")
pv_osim = _named("pv-osim", "The Delassus matrix by PV-OSIM, O(n + m²d) (paper Algorithm 1).")
pv_osimh = _named(
    "pv-osimh",
    "The Delassus matrix by PV-OSIMh, PV-OSIM or PV-OSIMr at each branching link, whichever "
    "costs fewer operations (never more than either).",
)
efpa = _named("efpa", "The Delassus matrix by EFPA, O(n + md + m²) (paper Algorithm 2).")
ltl_osim = _named("ltl-osim", "The Delassus matrix by LTL-OSIM, O(nd² + m²d + md²) (Featherstone).")
naive = _named("naive", "The Delassus matrix as dense J M⁻¹ Jᵀ via Cholesky, O(n³ + m²n).")
