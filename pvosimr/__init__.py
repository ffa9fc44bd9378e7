"""pvosimr: the Delassus matrix (inverse operational-space inertia) of rigid-body trees.

PV-OSIMr (O(n + m²)), PV-OSIM, EFPA, LTL-OSIM, the naive method and PV-OSIMh (a hybrid of
PV-OSIM and PV-OSIMr, never costlier than either) on Pinocchio models, with Pinocchio's calling
convention::

    G = pvosimr.compute_delassus(model, data, q, constraint_models, algorithm="pv-osimr")
    G = pvosimr.compute_delassus(model, data, q, constraint_models, algorithm="auto")
    Gs = pvosimr.compute_delassus_batch(model, qs, constraint_models)  # qs: batch × nq
    pvosimr.damped_delassus_inverse(model, data, q, constraint_models, mu)  # (G + μI)⁻¹
"""

from . import constraints
from .choice import choose_algorithm
from .damped import DelassusOperator, damped_delassus_inverse, effective_model, lanczos_bounds
from .delassus import *  # noqa: F403  (the entry points, one list: delassus.__all__)
from .delassus import __all__ as _entry_points
from .evaluate import compute_delassus_batch
from .topology import SUPPORTED_JOINTS, Topology

__version__ = "0.1.0"

__all__ = [
    *_entry_points,
    "DelassusOperator",
    "SUPPORTED_JOINTS",
    "Topology",
    "choose_algorithm",
    "compute_delassus_batch",
    "constraints",
    "damped_delassus_inverse",
    "effective_model",
    "lanczos_bounds",
]


def __getattr__(name: str):
    # Optional parts load on first use: they need CasADi (the symbolic extra); codegen also a
    # C compiler; solvers pin ≥ 4.1.
    import importlib

    if name in ("codegen", "solvers"):  # solvers: pin ≥ 4.1's ADMM and PGS
        return importlib.import_module(f"{__name__}.{name}")
    if name == "count_operations":
        return importlib.import_module(f"{__name__}.symbolic").count_operations
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
