"""The generated library as ``torch.library`` custom ops (:func:`pvosimr.torch.delassus` is
their front, :mod:`.front`).

Two ops on q as given (..., nq): ``pvosimr::delassus``, ``G(N(q))`` (the unit-part rule,
:mod:`pvosimr.coordinates`), and ``pvosimr::delassus_vjp``, the gradient of ``⟨W, G(N(q))⟩``
in q's coordinates; dG/dq is never formed.  Both are
:func:`pvosimr.codegen.contract.evaluate` on the library's one binding
(:class:`~pvosimr.codegen.call.CompiledDelassus`): its checks, its messages (the entry and row of
the q given, a placement by its row, constraint and name), its map to q's coordinates.  Each op
has a fake kernel (so ``torch.compile(fullgraph=True)`` traces them without a graph break); the
first's autograd is the second.  The ops take an integer ``handle`` into this module's table of
compiled functions.

Eager calls on plain tensors run the ops' kernels without the dispatcher (:func:`run`):
directly where autograd records nothing, else through an ``autograd.Function`` whose backward
is the second op's kernel (a Python custom op's dispatch and autograd cost more than the
library's call).  Traced calls (``torch.compile``) and subclassed tensors go through the ops.
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import numpy as np
import torch
from torch.autograd.function import once_differentiable

from ..codegen.call import CompiledDelassus
from ..codegen.contract import evaluate

__all__ = ["delassus_op", "delassus_vjp_op", "handle", "run"]


class _Entry(NamedTuple):
    f: CompiledDelassus
    threads: int


_lock = threading.Lock()
_functions: list[_Entry] = []
"""The compiled functions the ops can run, by handle, each with its threads."""
_handles: dict[tuple[str, str, int], int] = {}
"""The handle of each (library, gradient library, threads): a function asked for again (the
same model, constraints and options) reuses its entry, so the table grows only with the
distinct libraries a process loads."""


def _entry(handle: int) -> _Entry:
    """The function and threads of ``handle``; KeyError naming the valid handles."""
    if not 0 <= handle < len(_functions):
        raise KeyError(
            f"pvosimr.torch: no function has handle {handle}: the handles are "
            f"0 to {len(_functions) - 1} (the .handle of a function pvosimr.torch.delassus "
            "returned)"
            if _functions
            else f"pvosimr.torch: no function has handle {handle}: none made yet (call "
            "pvosimr.torch.delassus first)"
        )
    return _functions[handle]


def _numpy(x: torch.Tensor | None) -> np.ndarray | None:
    return None if x is None else x.detach().numpy()


def _delassus(q: torch.Tensor, p: torch.Tensor | None, handle: int) -> torch.Tensor:
    """G(N(q)) (..., m, m) at ``q`` (..., nq), float64 on the CPU."""
    f, threads = _entry(handle)
    return torch.from_numpy(np.ascontiguousarray(evaluate(f, q.numpy(), _numpy(p), None, threads)))


delassus_op = torch.library.custom_op("pvosimr::delassus", _delassus, mutates_args=())


@delassus_op.register_fake
def _(q: torch.Tensor, p: torch.Tensor | None, handle: int) -> torch.Tensor:
    m = _entry(handle)[0].m
    batch = q.shape[:-1] if p is None else torch.broadcast_shapes(q.shape[:-1], p.shape[:-1])
    return q.new_empty((*batch, m, m))


def _delassus_vjp(
    q: torch.Tensor, p: torch.Tensor | None, W: torch.Tensor, handle: int
) -> torch.Tensor:
    """The gradient of ``⟨W, G(N(q))⟩`` in q's coordinates (q's shape)."""
    f, threads = _entry(handle)
    W = W.detach()
    if W.dim() > 2 and W.numel() and not any(W.stride()[:-2]):  # one W expanded: read once
        W = W[(0,) * (W.dim() - 2)]
    g = evaluate(f, q.detach().numpy(), _numpy(p), W.contiguous().numpy(), threads)
    extra = g.ndim - q.dim()  # rows p added: the sum over what q was broadcast to
    g = g.sum(axis=tuple(range(extra))) if extra else g
    summed = tuple(k for k, n in enumerate(q.shape) if n == 1 and g.shape[k] != 1)
    return torch.from_numpy(np.ascontiguousarray(g.sum(axis=summed, keepdims=True)))


delassus_vjp_op = torch.library.custom_op("pvosimr::delassus_vjp", _delassus_vjp, mutates_args=())


@delassus_vjp_op.register_fake
def _(q: torch.Tensor, p: torch.Tensor | None, W: torch.Tensor, handle: int) -> torch.Tensor:
    return q.new_empty(q.shape)


def _setup_context(ctx, inputs, output) -> None:
    q, p, handle = inputs
    ctx.save_for_backward(q, p)
    ctx.handle = handle


def _backward(ctx, grad: torch.Tensor):
    q, p = ctx.saved_tensors
    return delassus_vjp_op(q, p, grad, ctx.handle), None, None


delassus_op.register_autograd(_backward, setup_context=_setup_context)


class _Eager(torch.autograd.Function):
    """The op and its autograd, eager: the same kernels called directly."""

    @staticmethod
    def forward(ctx, q: torch.Tensor, p: torch.Tensor | None, handle: int) -> torch.Tensor:
        # ctx as forward's first argument: a separate setup_context costs torch an
        # inspect.signature per call
        _setup_context(ctx, (q, p, handle), None)
        return _delassus(q.detach(), p, handle)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad: torch.Tensor):
        q, p = ctx.saved_tensors
        return _delassus_vjp(q, p, grad, ctx.handle), None, None


def handle(f: CompiledDelassus, threads: int) -> int:
    """The op's handle of ``f`` run on ``threads`` threads (its entry made at the first ask)."""
    key = (str(f.library), str(f.vjp_library.library), threads)
    with _lock:
        if key not in _handles:
            _functions.append(_Entry(f, threads))
            _handles[key] = len(_functions) - 1
        return _handles[key]


def run(q: torch.Tensor, p: torch.Tensor | None, handle: int) -> torch.Tensor:
    """``pvosimr::delassus(q, p, handle)``: through the op where traced or on a subclassed
    tensor, else its kernels called directly (with autograd where it records)."""
    if type(q) is not torch.Tensor or torch.compiler.is_compiling():
        return delassus_op(q, p, handle)
    recording = q.requires_grad and torch.is_grad_enabled()
    return _Eager.apply(q, p, handle) if recording else _delassus(q, p, handle)
