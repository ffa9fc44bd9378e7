"""``algorithm="auto"``: the algorithm that costs least on the path that runs it, chosen once per
topology and path.

Every entry point that takes ``algorithm=`` accepts ``"auto"`` and names its path; the choice is
made at the first call on a topology (the tree and the constraint structure) and kept with it
(:meth:`~pvosimr.topology.Topology.prepared`), so later calls cost one lookup.  Each path has its
own cost:

- ``"casadi"``: CasADi functions, hence operation counts and generated code
  (:mod:`pvosimr.symbolic`, :mod:`pvosimr.codegen`).  Their cost is the operation count: the
  fewest by the cost model (:mod:`pvosimr.cost`, no CasADi), ties to the first of
  :data:`ALGORITHM_ORDER`.
- ``"numpy"`` (the single call) and ``"batch"`` (stacks of configurations): their cost is the
  time of a call, which the operation count does not predict.  numpy pays for every matrix
  operation a fixed price (dispatch, a small temporary) that outweighs the arithmetic of 6×6
  products, has its own faster steps for common joints, and the batch pays per entry of dense
  stacks, where structural zeros are not free: an algorithm that saves scalar operations by
  more, smaller products (PV-OSIMh carrying rows) can be the slower call.  A model of that
  cost would have to follow numpy's own steps and the machine's caches, so the choice is a
  short timing instead, on the actual model at its neutral configuration, of the call as it
  runs (numpy: the kinematics, then the body; batch: the body on a stack's kinematics made
  once); a first call of each, untimed, prepares what it keeps per topology; then
  :data:`ROUNDS` rounds (per path), each calling the remaining algorithms once in turn, keep each
  algorithm's fastest time (load only adds time: the minimum is the least noisy estimate of
  a call's cost), and after :data:`PRUNE_AFTER` rounds drop those more than :data:`PRUNE`
  times the fastest.  On the batch path the stack holds :data:`TIMING_BATCH` configurations.
  An algorithm whose pivots fail at the neutral configuration is not chosen; if all fail, the
  fewest operations decide.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from functools import partial

import numpy as np
import pinocchio as pin

from .algorithms import SWEEPS, attempt, sweeps_for
from .algorithms.pv_osimh import prepare_plan
from .backends import NUMPY
from .backends.batched import BatchedNumpyBackend, MatrixStack
from .checks import resolve_topology
from .constraints import as_constraint_list
from .cost import Counter
from .kinematics.constants import numeric_constants
from .kinematics.frames import numeric_kinematics
from .kinematics.stacked import batched_kinematics
from .notices import said_if_slow
from .topology import Topology

__all__ = [
    "ALGORITHM_ORDER",
    "AUTO",
    "PATHS",
    "canonical_algorithm",
    "choose_algorithm",
    "fastest_call",
    "fewest_operations",
    "operation_counts",
    "prepare",
    "resolve_algorithm",
]

AUTO = "auto"
"""The algorithm name that asks for :func:`choose_algorithm`."""


def canonical_algorithm(algorithm: str) -> str:
    """``algorithm`` as :data:`pvosimr.ALGORITHMS` spells it, or ``"auto"``: any case, and the
    paper's spellings (``PV-OSIMr``, ``EFPA``, ``LTL-OSIM``; ``_`` for ``-`` as in the function
    names); else ValueError listing every choice."""
    name = algorithm.strip().lower().replace("_", "-") if isinstance(algorithm, str) else None
    if name == AUTO or name in SWEEPS:
        return name
    choices = ", ".join(repr(a) for a in (*SWEEPS, AUTO))
    raise ValueError(
        f"unknown algorithm {algorithm!r}; choose one of {choices} (any case: 'PV-OSIMr' works)"
    )


#: The paths ``"auto"`` chooses for (see the module docstring).
PATHS = ("numpy", "batch", "casadi")

#: The algorithms compared, in the order that breaks ties.
ALGORITHM_ORDER = ("pv-osimh", "pv-osimr", "pv-osim", "efpa", "ltl-osim", "naive")

#: The timing's rounds per path: a numpy call is short, so its minimum needs more samples to
#: stand clear of the load; a stack's call is long and steadier.
ROUNDS = {"numpy": 20, "batch": 5}

#: The rounds before pruning, the pruning factor, the batch's size.
PRUNE_AFTER, PRUNE, TIMING_BATCH = 2, 1.3, 256


def choose_algorithm(
    model: pin.Model,
    constraint_models: Iterable,
    topology: Topology | None = None,
    path: str = "numpy",
) -> str:
    """The algorithm of :data:`pvosimr.ALGORITHMS` that ``"auto"`` runs on ``path`` (one of
    :data:`PATHS`) for ``model`` and the constraint structure of ``constraint_models``: made
    at the first call per topology and path, then kept (see the module docstring).
    ``topology``: the one of ``model`` and this structure that the calls use (the cached one
    when None, as :func:`pvosimr.compute_delassus` takes it)."""
    cms = as_constraint_list(constraint_models, model)
    return _chosen(model, resolve_topology(model, cms, topology), cms, path)


def resolve_algorithm(
    algorithm: str,
    model: pin.Model,
    topology: Topology,
    constraint_models: Iterable,
    path: str = "numpy",
) -> str:
    """The algorithm an entry point on ``path`` runs for ``algorithm``: itself, or for
    ``"auto"`` the one :func:`choose_algorithm` picks; and what that algorithm prepares per
    topology from the constraint models (PV-OSIMh's plan, from the sparsity of their
    placements) made before its first sweep.  ``topology`` is ``model``'s for
    ``constraint_models``, which the caller has normalised (:func:`~pvosimr.constraints.
    as_constraint_list`)."""
    algorithm = canonical_algorithm(algorithm)
    if algorithm == AUTO:
        algorithm = _chosen(model, topology, constraint_models, path)
    prepare(algorithm, model, topology, constraint_models)
    return algorithm


def prepare(algorithm: str, model: pin.Model, topology: Topology, constraint_models) -> None:
    """Make what ``algorithm`` keeps with ``topology`` and reads from the constraint models:
    PV-OSIMh's plan (:func:`~pvosimr.algorithms.pv_osimh.prepare_plan`); nothing for the
    others, whose per-topology state depends on the topology alone."""
    if algorithm == "pv-osimh" and topology.m:
        prepare_plan(topology, model, constraint_models)


def _chosen(model: pin.Model, topology: Topology, cms, path: str) -> str:
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, not {path!r}")
    if topology.m == 0:  # G is 0 × 0 whatever the algorithm
        return ALGORITHM_ORDER[0]
    how = "counting the operations of" if path == "casadi" else "timing"
    notice = f"auto: {how} the six algorithms on this topology ({path} path; once) …"
    choose = fewest_operations if path == "casadi" else partial(fastest_call, path=path)

    def chosen(t: Topology) -> str:
        with said_if_slow(notice):
            return choose(model, t, cms)

    return topology.prepared((AUTO, path), chosen)


def operation_counts(
    model: pin.Model,
    topology: Topology,
    constraint_models: Iterable | None = None,
    algorithms: Iterable[str] = ALGORITHM_ORDER,
) -> dict[str, int]:
    """The estimate of every algorithm of ``algorithms``, on one :class:`~pvosimr.cost.Counter`
    (the kinematics built once); PV-OSIMh's plan prepared first, from the constraint models."""
    bodies = {a: sweeps_for(a) for a in algorithms}
    if topology.m == 0:
        return dict.fromkeys(bodies, 0)
    for a in bodies:
        prepare(a, model, topology, constraint_models)
    counter = Counter(model, topology, constraint_models)
    return {a: counter.count(body) for a, body in bodies.items()}


def fewest_operations(
    model: pin.Model,
    topology: Topology,
    constraint_models: Iterable | None = None,
    algorithms: Iterable[str] = ALGORITHM_ORDER,
) -> str:
    """The algorithm of ``algorithms`` with the fewest estimated operations; ties go to the
    first in :data:`ALGORITHM_ORDER`."""
    ranked = sorted(algorithms, key=ALGORITHM_ORDER.index)
    counts = operation_counts(model, topology, constraint_models, ranked)
    return min(ranked, key=counts.__getitem__)


def fastest_call(model: pin.Model, topology: Topology, constraint_models, path: str) -> str:
    """The algorithm whose call on ``path`` (``"numpy"`` or ``"batch"``) a short timing finds
    fastest (see the module docstring)."""
    cms = as_constraint_list(constraint_models, model)
    run = (_batch_call if path == "batch" else _numpy_call)(model, topology, cms)
    bodies = {a: sweeps_for(a) for a in ALGORITHM_ORDER}
    for a, body in bodies.items():
        prepare(a, model, topology, cms)
        _timed(run, body)  # the first call makes what the algorithm keeps per topology
    best = dict.fromkeys(bodies, math.inf)
    for r in range(ROUNDS[path]):
        alive = list(bodies)
        for a in alive[r % len(alive) :] + alive[: r % len(alive)]:  # each round's first turns
            best[a] = min(best[a], _timed(run, bodies[a]))
        if r + 1 == PRUNE_AFTER:
            fastest = min(best.values())
            bodies = {a: body for a, body in bodies.items() if best[a] <= PRUNE * fastest}
    if min(best.values()) == math.inf:
        return fewest_operations(model, topology, cms)
    return min(ALGORITHM_ORDER, key=best.__getitem__)


def _timed(run: Callable, body: Callable) -> float:
    """Seconds of one ``run(body)``; infinite where a pivot fails."""
    start = time.perf_counter()
    G = attempt(run, body)
    seconds = time.perf_counter() - start
    return seconds if G is not None and np.isfinite(G).all() else math.inf


def _numpy_call(model: pin.Model, topology: Topology, cms: list) -> Callable:
    """``body ↦ G`` on numpy at the neutral configuration as the single call runs it
    (:func:`pvosimr.evaluate.delassus_at`): the kinematics made afresh, then the body.  Timed
    on kinematics made once, bodies can tie that differ by several percent in a call."""
    data = model.createData()
    constants = numeric_constants(model, topology, cms, data=data)
    q = pin.neutral(model)

    def run(body: Callable) -> np.ndarray:
        return body(NUMPY, topology, numeric_kinematics(model, data, q, topology, cms, constants))

    return run


def _batch_call(model: pin.Model, topology: Topology, cms: list) -> Callable:
    """``body ↦ G`` on a stack of :data:`TIMING_BATCH` neutral configurations, as
    :func:`pvosimr.evaluate.sweep_stack` runs a block."""
    B = BatchedNumpyBackend(TIMING_BATCH)
    kin = batched_kinematics(
        B, model, np.tile(pin.neutral(model), (TIMING_BATCH, 1)), topology, cms
    )

    def run(body: Callable) -> np.ndarray:
        G = body(B, topology, kin)
        return G.a if isinstance(G, MatrixStack) else G

    return run
