"""The input check of the XLA routes (:mod:`.seam`, :mod:`.xla`): float32 or float64 arrays of
the right last axis, and no float64 while JAX's x64 mode would round it."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["checked_input"]


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
