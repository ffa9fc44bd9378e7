"""What the front ends over the generated library share (:mod:`pvosimr.jax`,
:mod:`pvosimr.torch`): the routes, their options checked, and the library they run."""

from __future__ import annotations

from collections.abc import Iterable

import pinocchio as pin

from ..kinematics.placements import PLACEMENTS
from . import c_source as c_text
from .build import compile as compile_library
from .call import CompiledDelassus

__all__ = ["ROUTES", "UNKNOWN", "VERDICTS", "library_with_gradient", "placements_given", "verdict"]

#: The ways a front end computes G: the generated library (``"ffi"``: a CPU, float64), or the
#: algorithm bodies on JAX arrays compiled by XLA (``"xla"``, :mod:`pvosimr.jax.seam`).
ROUTES = ("ffi", "xla")

#: The library's failure codes (:mod:`pvosimr.codegen.c_source`) in the words of the front
#: ends' errors: PyTorch's op reads them here, the XLA handler has them compiled in.
VERDICTS = {
    c_text.BAD_Q: "q is not finite or beyond the model's range",
    c_text.NON_FINITE: "G or its gradient is not finite: the mass matrix is singular there or "
    "precision was lost (pvosimr.compute_delassus at that q says why)",
    c_text.EVAL_FAILED: "the generated function reported a failure",
    c_text.NO_MEMORY: "no memory for the work arrays",
    c_text.BAD_W: "the cotangent W is not finite",
    c_text.BAD_P: "a placement in p is not a rigid transform (not finite, a rotation not "
    "orthonormal within pvosimr.constraints.ORTHONORMAL_TOLERANCE, or a reflection)",
}

UNKNOWN = "unknown failure"  # a code VERDICTS lacks: the words before "(code N)"


def verdict(code: int) -> str:
    """The words of the library's failure ``code`` (:data:`VERDICTS`)."""
    return VERDICTS.get(code, f"{UNKNOWN} (code {code})")


def placements_given(route: str | None, placements: str | None) -> bool:
    """Whether the placements are inputs of G (``placements="input"``), once ``route`` (one
    of :data:`ROUTES`, or None for the front end's default) and ``placements`` (None,
    ``"fixed"`` or ``"input"``) are checked: ``ValueError`` naming the option otherwise."""
    if route not in (None, *ROUTES):
        raise ValueError(f"route must be one of {', '.join(map(repr, ROUTES))}, not {route!r}")
    if placements not in (None, *PLACEMENTS):
        raise ValueError(f"placements must be None or one of {PLACEMENTS}, not {placements!r}")
    return placements == "input"


def library_with_gradient(
    model: pin.Model, cms: Iterable, algorithm: str, given: bool, cache_dir=None
) -> CompiledDelassus:
    """The compiled G (:func:`pvosimr.codegen.compile`) with its gradient library
    (``vjp=True``), placements as inputs where ``given``."""
    placements = "input" if given else "fixed"
    return compile_library(
        model, cms, algorithm, placements=placements, vjp=True, cache_dir=cache_dir
    )
