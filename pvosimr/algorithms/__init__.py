"""One module per algorithm; each body ``*_sweeps(B, topology, kinematics)`` runs on any backend."""

from collections.abc import Callable

import numpy as np

from ..backends import Backend, Matrix
from ..combination import combine
from ..kinematics.frames import Kinematics
from ..mimic import schur_reduce
from ..topology import Topology
from .efpa import efpa_sweeps
from .ltl_osim import ltl_osim_sweeps
from .naive import naive_sweeps
from .pv_osim import pv_osim_sweeps
from .pv_osimh import pv_osimh_sweeps
from .pv_osimr import pv_osimr_sweeps

#: Algorithm name → its backend-independent body.
SWEEPS = {
    "pv-osimr": pv_osimr_sweeps,
    "pv-osim": pv_osim_sweeps,
    "pv-osimh": pv_osimh_sweeps,
    "efpa": efpa_sweeps,
    "ltl-osim": ltl_osim_sweeps,
    "naive": naive_sweeps,
}


def sweeps_for(algorithm: str):
    """The body of the algorithm named ``algorithm`` (``ValueError`` naming the choices), run on
    the relaxed tree and reduced to the model's own dofs where it has mimic joints, on the
    constraints' one-body EEs and combined into their rows (:mod:`pvosimr.combination`) where some
    constraint is between two bodies or world-aligned."""
    try:
        sweeps = SWEEPS[algorithm]
    except KeyError:
        raise ValueError(
            f"unknown algorithm {algorithm!r}; choose one of {tuple(SWEEPS)}"
        ) from None

    def run(B: Backend, topo: Topology, kin: Kinematics) -> Matrix:
        G = sweeps(B, topo, kin)
        if topo.couplings:
            G = schur_reduce(B, G, topo.m_virtual, topo.coupling_matrix)
        return combine(B, topo, kin, G) if topo.combined else G

    run.__name__ = sweeps.__name__
    return run


def attempt(run: Callable[..., Matrix], *args) -> Matrix | None:
    """``run(*args)``, numpy's floating-point warnings silenced, or None where it raised
    ``LinAlgError``: a pivot ``D_i`` that is not positive definite (one that does not raise
    shows up as non-finite entries instead)."""
    try:
        with np.errstate(all="ignore"):
            return run(*args)
    except np.linalg.LinAlgError:
        return None


__all__ = ["SWEEPS", "attempt", "sweeps_for", *(f.__name__ for f in SWEEPS.values())]
