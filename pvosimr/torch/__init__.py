"""pvosimr's G inside PyTorch (extra ``torch``): :func:`delassus` returns ``G(q)`` (or
``G(q, p)``), a ``torch.library`` custom op over the generated library, differentiable through
its reverse-mode gradient and traced by ``torch.compile``.

- :mod:`.front`: :func:`delassus`, the route chosen and the tensors checked;
- :mod:`.op`: the ops ``pvosimr::delassus`` and ``pvosimr::delassus_vjp`` over the library's
  one binding, their fake kernels and autograd;
- :mod:`.cuda`: ``route="cuda"``, the CUDA kernels of :mod:`pvosimr.codegen.cuda` on CUDA
  tensors (float32 or float64), on PyTorch's current stream;
- :mod:`.xla`: ``route="xla"``, the XLA route of :mod:`pvosimr.jax.xla` on tensors through
  DLPack (CUDA tensors, float32).

Importing it without PyTorch raises ``ModuleNotFoundError`` with the one line that says what to
install.  The library's route takes float64 tensors on the CPU; a CUDA tensor goes to the CUDA
kernels.
"""

from ..extras import require

require("pvosimr.torch", "torch")

from .front import delassus  # noqa: E402  (after the one-line check)

__all__ = ["delassus"]
