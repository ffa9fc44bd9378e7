"""What the front ends over the generated library share (:mod:`pvosimr.jax`,
:mod:`pvosimr.torch`): the routes, their options checked, and the library they run."""

from __future__ import annotations

from collections.abc import Iterable

import pinocchio as pin

from .build import compile as compile_library
from .call import CompiledDelassus

__all__ = ["ROUTES", "library_with_gradient", "placements_given"]

#: The ways a front end computes G: the generated library (``"ffi"``: a CPU, float64), or the
#: algorithm bodies on JAX arrays compiled by XLA (``"xla"``, :mod:`pvosimr.jax.seam`).
ROUTES = ("ffi", "xla")


def placements_given(route: str | None, placements: str | None) -> bool:
    """Whether the placements are inputs of G (``placements="input"``), once ``route`` (one
    of :data:`ROUTES`, or None for the front end's default) and ``placements`` (None,
    ``"fixed"`` or ``"input"``) are checked: ``ValueError`` naming the option otherwise."""
    if route not in (None, *ROUTES):
        raise ValueError(f"route must be one of {', '.join(map(repr, ROUTES))}, not {route!r}")
    if placements not in (None, "fixed", "input"):
        raise ValueError(f"placements must be None, 'fixed' or 'input', not {placements!r}")
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
