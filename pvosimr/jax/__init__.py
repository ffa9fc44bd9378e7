"""pvosimr's G inside JAX (extra ``jax``): :func:`delassus` returns ``G(q)`` (or ``G(q, p)``)
that runs the generated library under ``jax.jit``, ``jax.vmap`` and ``jax.grad``.  Its modules,
one job each, are in docs/architecture.md.

Importing it without JAX raises ``ModuleNotFoundError`` with the one line that says what to
install.  The FFI route is float64 only, the XLA and CUDA routes float32 or float64; none turns
``jax_enable_x64`` on.
"""

from ..extras import require

require("pvosimr.jax", "jax")

from .function import ROUTES, delassus  # noqa: E402  (after the one-line check)

__all__ = ["ROUTES", "delassus"]
