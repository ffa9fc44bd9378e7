"""pvosimr's G inside PyTorch (extra ``torch``): :func:`delassus` returns ``G(q)`` (or
``G(q, p)``), a ``torch.library`` custom op over the generated library, differentiable through
its reverse-mode gradient and traced by ``torch.compile``.  Its modules, one job each, are in
docs/architecture.md.

Importing it without PyTorch raises ``ModuleNotFoundError`` with the one line that says what to
install.  The library's route takes float64 tensors on the CPU; a CUDA tensor goes to the CUDA
kernels.
"""

from ..extras import require

require("pvosimr.torch", "torch")

from .front import delassus  # noqa: E402  (after the one-line check)

__all__ = ["delassus"]
