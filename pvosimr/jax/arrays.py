"""The input check of the XLA routes (:mod:`.xla`): float32 or float64 arrays of
the right last axis, no float64 while JAX's x64 mode would round it, and ``p`` exactly where the
function has placements as inputs."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..codegen.contract import placements_expected

__all__ = ["checked_input", "checked_inputs"]


def checked_input(x: Any, name: str, size: int) -> Any:
    """``x`` as a JAX array of shape (..., ``size``), float32 or float64; a ``TypeError`` or
    ``ValueError`` naming ``name`` and what is wrong otherwise (a float64 ``x`` while JAX's x64
    mode is off names the flag)."""
    dtype = np.dtype(x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"{name} must be float32 or float64, not {dtype}")
    if dtype == np.float64 and jax.dtypes.canonicalize_dtype(np.float64) != np.float64:
        raise TypeError(
            f"{name} is float64 but JAX's x64 mode is off (JAX would round it to float32): "
            'call jax.config.update("jax_enable_x64", True) first, or pass float32'
        )
    x = jnp.asarray(x)
    if x.ndim < 1 or x.shape[-1] != size:
        raise ValueError(f"{name} must have shape (..., {size}), not {tuple(x.shape)}")
    return x


def checked_inputs(q: Any, p: Any, placements: str, nq: int, n_p: int) -> tuple[list, tuple]:
    """``[q]`` or ``[q, p]`` checked (:func:`checked_input`) for a function with
    ``placements`` ``"fixed"`` (``G(q)``) or ``"input"`` (``G(q, p)``), and their common batch
    shape; a ``TypeError`` for a missing or unexpected ``p``, or two dtypes."""
    inputs = [checked_input(q, "q", nq)]
    placements_expected(placements == "input", p, "call G(q, p)")
    if p is not None:
        inputs.append(checked_input(p, "p", n_p))
    if inputs[0].dtype != inputs[-1].dtype:
        raise TypeError(f"q is {inputs[0].dtype} but p is {inputs[-1].dtype}: use one dtype")
    return inputs, jnp.broadcast_shapes(*(x.shape[:-1] for x in inputs))
