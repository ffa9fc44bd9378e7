"""``algorithm="auto"``: the algorithm that costs the fewest operations for a model and its
constraint structure, chosen without CasADi by the cost model of :mod:`pvosimr.cost`.

The choice is made once per topology (the cost model caches it) and names one of
:data:`pvosimr.ALGORITHMS`; every entry point that takes ``algorithm=`` accepts ``"auto"``.
"""

from __future__ import annotations

from collections.abc import Iterable

import pinocchio as pin

from .algorithms import SWEEPS
from .constraints import as_constraint_list
from .cost import cheapest
from .topology import Topology

__all__ = ["AUTO", "choose_algorithm", "resolve_algorithm"]

AUTO = "auto"
"""The algorithm name that asks for :func:`choose_algorithm`."""


def choose_algorithm(
    model: pin.Model, constraint_models: Iterable, topology: Topology | None = None
) -> str:
    """The algorithm of :data:`pvosimr.ALGORITHMS` with the fewest estimated operations."""
    cms = as_constraint_list(constraint_models)
    topology = Topology(model, cms) if topology is None else topology
    return cheapest(model, topology, constraint_models=cms)


def resolve_algorithm(
    algorithm: str, model: pin.Model, topology: Topology, constraint_models: Iterable
) -> str:
    """``algorithm`` itself, or for ``"auto"`` the one :func:`choose_algorithm` picks."""
    if algorithm != AUTO:
        return algorithm
    chosen = choose_algorithm(model, constraint_models, topology)
    assert chosen in SWEEPS, chosen
    return chosen
