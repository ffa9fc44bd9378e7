"""G through XLA by the algorithm bodies themselves, run on the JAX backend of the seam.

:func:`compile_xla` returns ``G(q)`` (or ``G(q, p)``), a JAX function of ``q``, without CasADi
or a C compiler: the sweep of
:mod:`pvosimr.algorithms` and the joint models of :mod:`pvosimr.kinematics.joints` run on
:class:`~pvosimr.backends.jax.JaxBackend` (one configuration, matrices as JAX arrays), so JAX
traces matrix operations (products of 6×6 blocks, slices, concatenations) rather than one
scalar instruction per operation, and ``jax.vmap`` batches them.  ``jit``, ``vmap``, ``grad``,
``jvp`` and ``jacfwd`` are JAX's own; every operation keeps q's dtype, float32 or float64.

Unit quaternions and unit complex numbers in ``q`` follow the unit-part rule of every route
(:mod:`pvosimr.coordinates`: as given within ``AS_GIVEN_TOLERANCE`` of a unit squared norm, else
divided by their norm) inside the traced function, so G is the model's at any non-zero ``q``;
a gradient has no radial part (the derivative is that of ``u/|u|`` either way).  Nothing raises
inside the traced function, but nothing non-finite vanishes either: a ``q`` or ``p`` with a
non-finite entry, or a zero unit part, gives a G of NaN even where G does not depend on those
coordinates, and a configuration where M is singular gives non-finite entries.  Called eagerly
(its inputs known, not traced), the function checks them as the library's routes do and raises
ValueError naming the entry and row.  Shapes and dtypes are checked when the function is
traced.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pinocchio as pin

from ..extras import require

require("pvosimr.jax.xla", "jax")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from ..algorithms import sweeps_for  # noqa: E402
from ..backends.jax import JaxBackend, JaxMatrix  # noqa: E402
from ..checks import check_configuration_rows  # noqa: E402
from ..choice import canonical_algorithm, resolve_algorithm  # noqa: E402
from ..constraints import as_constraint_list, check_placements  # noqa: E402
from ..coordinates import AS_GIVEN_TOLERANCE, squared_norm, unit_part_spans  # noqa: E402
from ..kinematics.frames import Kinematics, backend_kinematics  # noqa: E402
from ..kinematics.joints import joint_kinematics  # noqa: E402
from ..kinematics.placements import (  # noqa: E402
    check_placement_vector,
    placement_actions,
    placement_labels,
    placement_size,
    placements_are_inputs,
)
from ..notices import announce, said_if_slow  # noqa: E402
from ..topology import Topology  # noqa: E402
from .arrays import checked_inputs  # noqa: E402

__all__ = ["XlaDelassus", "compile_xla", "jax_kinematics"]

#: A trace longer than this (seconds) is followed by a notice: XLA's compile of it, next under
#: ``jax.jit``, takes several times as long (docs/xla.md gives the measured times).
TRACE_NOTICE_SECONDS = 0.2


def _announced(call: Callable) -> Callable:
    """``XlaDelassus.__call__``, saying in one line when the caller waits: under ``jax.jit``,
    while a trace runs long and, after a long one, that XLA's compile comes next; outside it,
    once per function, while a call runs long op by op."""

    @functools.wraps(call)
    def announced(self: XlaDelassus, q: Any, p: Any = None) -> Any:
        what = f"G of model {self.model.name!r} (nq={self.nq}, m={self.m}, {self.algorithm})"
        if not isinstance(jnp.zeros(()), jax.core.Tracer):  # not staged for a compile: eager
            kind = "under grad or vmap " if isinstance(q, jax.core.Tracer) else ""
            if kind in self._ran_eagerly:  # said once: a loop of eager calls is not told again
                return call(self, q, p)
            self._ran_eagerly.add(kind)
            with said_if_slow(
                f"XLA route: running {what} {kind}op by op, outside jax.jit (JAX compiles each "
                "operation at its first use; jax.jit of G or of its gradient compiles it whole) …"
            ):
                return call(self, q, p)
        started = time.perf_counter()
        with said_if_slow(f"XLA route: tracing {what} for jax.jit …"):
            G = call(self, q, p)
        seconds = time.perf_counter() - started
        if seconds >= TRACE_NOTICE_SECONDS:
            announce(
                f"XLA route: traced {what} in {seconds:.1f} s; XLA compiles it next, often ten "
                "times as long (once: later calls of this shape reuse it)"
            )
        return G

    return announced


def jax_kinematics(
    B: JaxBackend,
    model: pin.Model,
    q: Any,
    topology: Topology,
    constraint_models: list,
    p: Any = None,
) -> Kinematics:
    """The :class:`Kinematics` of ``model`` at one configuration ``q`` (a JAX array (nq,)).

    The joint models of :mod:`pvosimr.kinematics.joints` on ``B``; ``p`` (n_p,) makes the
    constraint placements inputs (:mod:`pvosimr.kinematics.placements`).  Constants (inertias,
    armature, ``K``) stay numpy.
    """
    X, S = joint_kinematics(B, model, JaxMatrix(q[:, None]), topology)
    actions = None if p is None else placement_actions(B, topology, JaxMatrix(p[:, None]))
    return backend_kinematics(B, model, X, S, topology, constraint_models, actions)


def normalised(q: Any, spans: Iterable[tuple[int, int]]) -> Any:
    """``N(q)``: ``q`` (..., nq) with each unit part ``(start, length)`` as the unit-part rule
    says (:mod:`pvosimr.coordinates`)."""
    for start, length in spans:
        q = q.at[..., start : start + length].set(_unit(q[..., start : start + length]))
    return q


@jax.custom_jvp
def _unit(u: Any) -> Any:
    """One unit part ``u`` (..., length) under the rule: as given where its squared norm is
    within ``AS_GIVEN_TOLERANCE`` of 1, else ``u/|u|``; its derivative that of ``u/|u|``."""
    squared = squared_norm(u)[..., None]
    return jnp.where(jnp.abs(squared - 1.0) <= AS_GIVEN_TOLERANCE, u, u / jnp.sqrt(squared))


@_unit.defjvp
def _unit_jvp(primals: tuple, tangents: tuple) -> tuple:
    (u,), (t,) = primals, tangents
    norm = jnp.sqrt(squared_norm(u))[..., None]
    n = u / norm
    return _unit(u), (t - n * jnp.sum(n * t, -1, keepdims=True)) / norm


class XlaDelassus:
    """``G(q)`` (or ``G(q, p)`` with placements as inputs) by the algorithm bodies on JAX:
    ``q`` of shape ``(..., nq)`` (``p``: ``(..., n_p)``, broadcast against q's batch) gives
    ``(..., m, m)`` in q's dtype, float32 or float64.  Not jitted: wrap it in ``jax.jit`` (and
    ``vmap``, ``grad``, ``jvp``, ``jacfwd``) as any JAX function.

    Raises (when traced): TypeError for a non-float ``q`` or ``p``, or a float64 one while JAX's
    x64 mode is off; ValueError for a wrong last axis (the message gives the expected size).
    """

    def __init__(
        self,
        model: pin.Model,
        constraint_models: list,
        algorithm: str,
        placements: str,
    ) -> None:
        self.model = model
        self.constraint_models = constraint_models
        self.topology = Topology(model, constraint_models)
        self.m = self.topology.m
        self.nq = int(model.nq)
        self.placements = placements
        self.n_p = placement_size(model, constraint_models) if placements == "input" else 0
        self.algorithm = (
            resolve_algorithm(algorithm, model, self.topology, constraint_models, "batch")
            if self.m
            else algorithm
        )
        self._sweeps = sweeps_for(self.algorithm) if self.m else None
        self._spans = tuple(unit_part_spans(model))
        self._ran_eagerly: set[str] = set()  # a slow eager call's notice, once of each kind

    def __repr__(self) -> str:
        return f"XlaDelassus({self.algorithm}, nq={self.nq}, m={self.m})"

    def single(self, q: Any, p: Any = None) -> Any:
        """G (m, m) at one configuration ``q`` (nq,), normalised here; ``p`` (n_p,) or None."""
        B = JaxBackend(q.dtype)
        q_hat = normalised(q, self._spans)
        kin = jax_kinematics(B, self.model, q_hat, self.topology, self.constraint_models, p)
        G = self._sweeps(B, self.topology, kin)
        G = jnp.asarray(G.a if type(G) is JaxMatrix else G, q.dtype)
        # a non-finite q (or p) never gives a finite G, even where G does not read it
        usable = jnp.all(jnp.isfinite(q_hat))
        if p is not None:
            usable &= jnp.all(jnp.isfinite(p))
        return jnp.where(usable, G, jnp.nan)

    @_announced
    def __call__(self, q: Any, p: Any = None) -> Any:
        inputs, batch = checked_inputs(q, p, self.placements, self.nq, self.n_p)
        self._check_known(*inputs)
        dtype = inputs[0].dtype
        if self.m == 0:  # no constraint rows: an empty G
            return jnp.zeros((*batch, 0, 0), dtype)
        flat = [jnp.broadcast_to(x, (*batch, x.shape[-1])).reshape(-1, x.shape[-1]) for x in inputs]
        if not batch:
            return self.single(*(x[0] for x in flat))
        G = jax.vmap(self.single)(*flat)
        return G.reshape((*batch, self.m, self.m))

    def _check_known(self, q: Any, p: Any = None) -> None:
        """Where the inputs are known (an eager call, not traced): the library's checks, a
        ValueError naming the entry and row (:func:`pvosimr.checks.check_configuration_rows`,
        :func:`pvosimr.kinematics.placements.check_placement_vector`)."""
        if isinstance(q, jax.core.Tracer) or isinstance(p, jax.core.Tracer):
            return
        check_configuration_rows(self.model, np.asarray(q))
        if p is not None:
            labels = placement_labels(self.model, self.constraint_models)
            check_placement_vector(labels, np.asarray(p, dtype=np.float64))


def compile_xla(
    model: pin.Model,
    constraint_models: Iterable,
    algorithm: str = "pv-osimr",
    *,
    placements: str = "fixed",
) -> XlaDelassus:
    """The XLA route's ``G`` for ``model`` and ``constraint_models`` (any of
    :data:`pvosimr.ALGORITHMS`, or ``"auto"``: the batched numpy path's choice;
    ``placements="input"``: ``G(q, p)`` with
    ``p = pvosimr.symbolic.placement_vector(model, constraint_models, placements)``).  No
    CasADi, no C compiler: XLA compiles when the caller's ``jax.jit`` first runs.

    Raises:
        ModuleNotFoundError: JAX is missing (the message names the extra).
        ValueError / NotImplementedError: constraints, joints or an algorithm name pvosimr
            does not support; a fixed placement that is not a rigid transform.
    """
    given = placements_are_inputs(placements)
    algorithm = canonical_algorithm(algorithm)
    cms = as_constraint_list(constraint_models, model)
    if not given:
        check_placements(cms)
    return XlaDelassus(model, cms, algorithm, placements)
