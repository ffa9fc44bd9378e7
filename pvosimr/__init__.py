"""pvosimr: the Delassus matrix (inverse operational-space inertia) of rigid-body trees.

PV-OSIMr (O(n + m²)), PV-OSIM, EFPA, LTL-OSIM and the naive method on Pinocchio models, with
Pinocchio's calling convention::

    G = pvosimr.compute_delassus(model, data, q, constraint_models, algorithm="pv-osimr")
    Gs = pvosimr.compute_delassus_batch(model, qs, constraint_models)  # qs: batch × nq
"""

from . import constraints
from ._moved import install as _install_moved_names
from .batch import compute_delassus_batch
from .delassus import (
    ALGORITHMS,
    compute_delassus,
    efpa,
    ltl_osim,
    naive,
    pv_osim,
    pv_osimr,
    topology_for,
)
from .topology import SUPPORTED_JOINTS, Topology

__version__ = "0.1.0"

_install_moved_names()

__all__ = [
    "ALGORITHMS",
    "SUPPORTED_JOINTS",
    "Topology",
    "compute_delassus",
    "compute_delassus_batch",
    "constraints",
    "efpa",
    "ltl_osim",
    "naive",
    "pv_osim",
    "pv_osimr",
    "topology_for",
]


def __getattr__(name: str):
    # Optional parts load on first use: they need CasADi (the symbolic extra); codegen also a
    # C compiler.
    import importlib

    if name == "codegen":
        return importlib.import_module(f"{__name__}.{name}")
    if name == "count_operations":
        return importlib.import_module(f"{__name__}.symbolic").count_operations
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
