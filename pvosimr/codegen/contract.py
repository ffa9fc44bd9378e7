"""What the front ends over the generated library share (:mod:`pvosimr.jax`,
:mod:`pvosimr.torch`): the routes, their options checked, the library they run, and its call on
their terms (:func:`evaluate`: ``G(N(q))`` at any non-zero norm of q's unit parts, and its
gradient in q's coordinates), through the library's one binding
(:class:`~pvosimr.codegen.call.CompiledDelassus`)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pinocchio as pin

from ..checks import NORMALIZED_TOLERANCE, check_configuration_rows
from ..coordinates import unit_normalized
from ..kinematics.placements import PLACEMENTS
from . import c_source as c_text
from .build import compile as compile_library
from .call import CompiledDelassus

__all__ = [
    "FAILURE_WORDS",
    "ROUTES",
    "UNKNOWN",
    "evaluate",
    "library_with_gradient",
    "placements_expected",
    "placements_given",
]

#: The ways a front end computes G: the generated library (``"ffi"``: a CPU, float64), the
#: algorithm bodies on JAX arrays compiled by XLA (``"xla"``, :mod:`pvosimr.jax.xla`), or the
#: same generated C as CUDA kernels (``"cuda"``, :mod:`pvosimr.jax.cuda` and
#: :mod:`pvosimr.torch.cuda`: an NVIDIA GPU, float32 or float64).
ROUTES = ("ffi", "xla", "cuda")

#: The library's failure codes (:mod:`pvosimr.codegen.c_source`) in the words of the front
#: ends' errors, compiled into the XLA handler (:mod:`pvosimr.jax.ffi`).
FAILURE_WORDS = {
    c_text.BAD_Q: "q is not finite or beyond the model's range",
    c_text.NON_FINITE: "G or its gradient is not finite: the mass matrix is singular there or "
    "precision was lost (pvosimr.compute_delassus at that q says why)",
    c_text.EVAL_FAILED: "the generated function reported a failure",
    c_text.NO_MEMORY: "no memory for the work arrays",
    c_text.BAD_W: "the cotangent W is not finite",
    c_text.BAD_P: "a placement in p is not a rigid transform (not finite, a rotation not "
    "orthonormal within pvosimr.constraints.ORTHONORMAL_TOLERANCE, or a reflection)",
}

UNKNOWN = "unknown failure"  # a code FAILURE_WORDS lacks: the words before "(code N)"


def placements_given(
    route: str | None, placements: str | None, routes: tuple[str, ...] = ROUTES
) -> bool:
    """Whether the placements are inputs of G (``placements="input"``), once ``route`` (one
    of the front end's ``routes``, or None for its default) and ``placements`` (None,
    ``"fixed"`` or ``"input"``) are checked: ``ValueError`` naming the option otherwise."""
    if route not in (None, *routes):
        raise ValueError(f"route must be one of {', '.join(map(repr, routes))}, not {route!r}")
    if placements not in (None, *PLACEMENTS):
        raise ValueError(f"placements must be None or one of {PLACEMENTS}, not {placements!r}")
    return placements == "input"


def placements_expected(given: bool, placements, how: str = "pass placements=[...]") -> None:
    """The ``TypeError`` of a call without ``placements`` of a function that takes them
    (``given``; ``how`` says how to pass them), or with them of one that does not."""
    if given and placements is None:
        raise TypeError(f"this function has placements as inputs: {how}")
    if not given and placements is not None:
        raise TypeError("this function has fixed placements: call G(q)")


def library_with_gradient(
    model: pin.Model, cms: Iterable, algorithm: str, given: bool, cache_dir=None
) -> CompiledDelassus:
    """The compiled G (:func:`pvosimr.codegen.compile`) with its gradient library
    (``vjp=True``), placements as inputs where ``given``."""
    placements = "input" if given else "fixed"
    return compile_library(
        model, cms, algorithm, placements=placements, vjp=True, cache_dir=cache_dir
    )


def evaluate(
    f: CompiledDelassus,
    q: np.ndarray,
    p: np.ndarray | None = None,
    W: np.ndarray | None = None,
    threads: int | None = None,
) -> np.ndarray:
    """``G(N(q))`` (..., m, m) at float64 ``q`` (..., nq) whose unit parts have any non-zero
    norm, ``p`` (..., n_p) broadcast against it (:meth:`CompiledDelassus.__call__`); with ``W``
    (m, m, or one per row), the gradient of ``⟨W, G(N(q))⟩`` in q's coordinates (..., nq)
    (:func:`pvosimr.coordinates.tangent_to_coordinates`).

    A ``q`` that ``pin.isNormalized`` accepts goes to the library as given (which applies the
    unit-part rule itself); any other is checked and normalised here first.  Either way the
    errors name the entry and row of the ``q`` given, a placement by its row of ``p``, its
    constraint and name.
    """
    spans = f.unit_spans
    q_hat = q if _normalized(q, spans) else check_configuration_rows(f.model, q)
    kwargs = {"threads": threads} if p is None else {"threads": threads, "p": p}
    if W is None:
        return f(q_hat, **kwargs)
    g = f.vjp(q_hat, W, **kwargs)
    if q_hat is q:
        q_hat = unit_normalized(q, spans)
    return f.to_coordinates(np.broadcast_to(q, (*g.shape[:-1], f.nq)),
                            np.broadcast_to(q_hat, (*g.shape[:-1], f.nq)), g)  # fmt: skip


def _normalized(q: np.ndarray, spans) -> bool:
    """Whether every unit part of every row of ``q`` has a norm within ``pin.isNormalized``'s
    tolerance of 1 (False for a non-finite one)."""
    if q.ndim == 1:  # a few scalar steps: the single call's cost
        for start, length in spans:
            u = q[start : start + length]
            if not abs(math.sqrt(u.dot(u)) - 1.0) < NORMALIZED_TOLERANCE:
                return False
        return True
    low, high = (1.0 - NORMALIZED_TOLERANCE) ** 2, (1.0 + NORMALIZED_TOLERANCE) ** 2
    for start, length in spans:
        u = q[..., start : start + length]
        squared = np.einsum("...i,...i->...", u, u)
        if not ((squared > low) & (squared < high)).all():  # False for NaN too
            return False
    return True
