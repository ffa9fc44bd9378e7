"""The cost model: the operations CasADi would count for an algorithm, estimated without CasADi.

The paper's cost metric (:func:`pvosimr.symbolic.count_operations`) counts the instructions of
the CasADi SX function ``q ↦ G`` with the model's numeric constants folded.  The estimate runs
the very algorithm body on the counting backend (:mod:`pvosimr.backends.counting`: every entry's
structure and the expression graph CasADi would build, then what G reads), on the kinematics
of a symbolic configuration (:mod:`pvosimr.kinematics.structure`).  Two users:
``algorithm="auto"`` (:mod:`pvosimr.choice`) compares the algorithms, PV-OSIMh's rule
(:mod:`pvosimr.algorithms.pv_osimh_plan`) its plans.

A :class:`Counter` builds the kinematics once and counts any number of bodies on them; what a
body adds to the graph is dropped once it is counted, so bodies that share a prefix (the
articulated-body recursion every plan of PV-OSIMh runs) count it once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, TypeVar

import pinocchio as pin

from .backends.counting import CountingBackend, OverBudgetError
from .kinematics.frames import Kinematics
from .kinematics.structure import structure_kinematics
from .topology import Topology

__all__ = ["Body", "Count", "Counter"]

T = TypeVar("T")

#: An algorithm body: ``body(B, topology, kinematics) -> G``.
Body = Callable[[CountingBackend, Topology, Kinematics], Any]


class Count(NamedTuple):
    """A body's estimated count (``operations``: what G reads) and everything it made, read
    or not (``made``)."""

    operations: int
    made: int


class Counter:
    """The counting backend with the kinematics of ``model`` and the constraint structure of
    ``topology``; ``constraint_models`` (the list the topology was built from) gives the
    constraints' placements, whose sparsity the count depends on (generic ones when None)."""

    def __init__(
        self, model: pin.Model, topology: Topology, constraint_models: Iterable | None = None
    ) -> None:
        self.B = CountingBackend()
        self.topology = topology
        self.kin = structure_kinematics(self.B, model, topology, constraint_models)

    def keep(self, prefix: Callable[[CountingBackend, Topology, Kinematics], T]) -> T:
        """``prefix(B, topology, kinematics)``, kept in the graph for every later count (what
        several bodies share: pass its result to them)."""
        return prefix(self.B, self.topology, self.kin)

    def share(self) -> None:
        """From now on, each body reuses what earlier ones made from the same operands, and
        nothing is dropped after a count (:mod:`pvosimr.backends.shared_results`): bodies that share
        most of their work count faster, each count still the body's alone."""
        self.B.graph.share()

    def count(self, body: Body) -> int:
        """The estimated count of ``body``: the operations its G reads
        (:meth:`~pvosimr.backends.counting.CountingBackend.operations`)."""
        counted = self.measure(body)
        assert counted is not None
        return counted.operations

    def measure(self, body: Body, budget: float = math.inf) -> Count | None:
        """The estimated count of ``body`` and everything it made, or None once it makes more
        than ``budget`` operations (the kept prefix included)."""
        graph = self.B.graph
        if graph.shared:
            graph.start_body()  # may stop sharing (then it rewinds to the prefix)
        mark = None if graph.shared else graph.mark()
        graph.budget = budget
        try:
            G = body(self.B, self.topology, self.kin)
            return Count(self.B.operations(G), graph.made)
        except OverBudgetError:
            return None
        finally:
            graph.budget = math.inf
            if mark is not None:
                graph.rewind(mark)
