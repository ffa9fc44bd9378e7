"""``pvosimr.torch.delassus`` on CUDA tensors: the kernels of :mod:`pvosimr.codegen.cuda`
(``pvosimr_G`` and ``pvosimr_vjp``) launched on PyTorch's current stream, float32 or float64.

This module only lays tensors out for the kernels and back
(:mod:`pvosimr.codegen.cuda_layout`): the kernels check q, compute ``G(N(q))`` at any non-zero
norm of q's unit parts and the gradient in q's coordinates, as the CPU library does.  Their
status per configuration is read back after each launch, which waits for the stream (a
synchronisation); a rejected batch is the CPU route's error for it
(:func:`~pvosimr.codegen.cuda_layout.reject`).

:data:`compile_kernels` (:func:`pvosimr.codegen.cuda.compile_cuda`) is the one way to the
kernels: a test replaces it with their host build, so that everything here runs on CPU
tensors without a GPU.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterator, Sequence

import pinocchio as pin
import torch
from torch.autograd.function import once_differentiable

from ..codegen.c_source import OK
from ..codegen.cuda import compile_cuda
from ..codegen.cuda_layout import columns, matrices, reject, rows
from ..extras import require
from ..kinematics.placements import check_placement_vector, placement_labels, placement_vector

__all__ = ["DTYPES", "compile_kernels", "cuda_delassus"]

#: The tensor dtypes the kernels compute in, and the name :func:`compile_cuda` takes.
DTYPES = {torch.float64: "float64", torch.float32: "float32"}

#: ``compile_cuda(model, cms, algorithm=, dtype=, vjp=True, placements=, cache_dir=)``: the
#: kernels; a test puts their host build here.
compile_kernels: Callable = compile_cuda


def cuda_delassus(
    model: pin.Model,
    cms: Sequence,
    algorithm: str,
    given: bool,
    library: Callable,
    cache_dir=None,
) -> Callable:
    """``(q, p) ↦ G`` on tensors of one device (``p`` None unless ``given``: the placement
    vector, one for every configuration), differentiable in q; ``library()`` is the CPU
    library (:func:`pvosimr.codegen.contract.library_with_gradient`), used for the errors
    only."""
    require("pvosimr.torch on CUDA tensors", "cuda.bindings")
    labels = placement_labels(model, cms) if given else []

    @functools.cache
    def kernel(dtype: torch.dtype):
        return compile_kernels(model, cms, algorithm=algorithm, dtype=DTYPES[dtype], vjp=True,
                               placements="input" if given else "fixed",
                               cache_dir=cache_dir)  # fmt: skip

    def launch(q: torch.Tensor, p, W=None) -> torch.Tensor:
        """G (m·m, B) or, with W (q's batch, m, m), the gradient in q's coordinates (nq, B)
        at q's rows."""
        out, status = _launch(kernel(q.dtype), q.detach(), p, W)
        if bool(status.ne(OK).any()):  # the one synchronisation of a call
            host = [None if x is None else x.detach().to("cpu", torch.float64).numpy()
                    for x in (q, p, W)]  # fmt: skip
            reject(f"pvosimr.torch on {q.device}, {q.dtype}", status.cpu().numpy(), library(),
                   *host)  # fmt: skip
        return out

    class Delassus(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q: torch.Tensor, p: torch.Tensor | None) -> torch.Tensor:
            ctx.save_for_backward(q, p)
            return matrices(launch(q, p), q.shape[:-1], kernel(q.dtype).m)

        @staticmethod
        @once_differentiable
        def backward(ctx, W: torch.Tensor):
            q, p = ctx.saved_tensors
            return rows(launch(q, p, W.to(q.dtype)), q.shape[:-1]), None

    def G(q: torch.Tensor, p: torch.Tensor | None) -> torch.Tensor:
        if not given:
            return Delassus.apply(q, None)
        vector, shape = placements_of(q, p), q.shape[:-1]
        if isinstance(p, torch.Tensor):  # leading axes of 1 broadcast against q's
            shape = torch.broadcast_shapes(shape, p.shape[:-1])
        out = Delassus.apply(q, vector)
        return out.reshape(*shape, *out.shape[-2:])

    def placements_of(q: torch.Tensor, p) -> torch.Tensor:
        """``p`` as one checked vector of q's device and dtype."""
        if isinstance(p, (list, tuple)):
            return torch.from_numpy(placement_vector(model, cms, p)).to(q.device, q.dtype)
        if math.prod(p.shape[:-1]) != 1:
            raise ValueError(
                "pvosimr.torch on CUDA tensors takes one placement vector for every "
                f"configuration: p has shape {tuple(p.shape)}"
            )
        check_placement_vector(labels, p.detach().to("cpu", torch.float64).numpy())
        return p.reshape(-1).to(q.dtype)

    G.kernel = kernel  # dtype -> the CudaDelassus of that dtype
    return G


def _launch(kernel, q: torch.Tensor, p, W) -> tuple[torch.Tensor, torch.Tensor]:
    """One launch on the B rows of ``q`` (..., nq) (with ``W`` (..., m, m), B matrices, the
    gradient's): the kernel's output (n, B) and its status (B,)."""
    qs = columns(q, kernel.nq).contiguous()
    B = qs.shape[1]
    status = torch.full((B,), -1, dtype=torch.int32, device=q.device)
    pointer = 0 if p is None else p.contiguous().data_ptr()
    with _on(q.device) as stream:
        if W is None:
            out = q.new_empty((kernel.n_out, B))
            kernel.launch(qs.data_ptr(), out.data_ptr(), status.data_ptr(), B, stream, p=pointer)
        else:
            Ws = columns(W, kernel.m * kernel.m).contiguous()
            out = q.new_empty((kernel.nq, B))
            kernel.launch_vjp(qs.data_ptr(), Ws.data_ptr(), out.data_ptr(), status.data_ptr(),
                              B, stream, p=pointer)  # fmt: skip
    return out, status


@contextlib.contextmanager
def _on(device: torch.device) -> Iterator[int]:
    """The device's current stream as an integer (0 on the CPU, where a test runs the host
    build), with that device current."""
    if device.type != "cuda":
        yield 0
        return
    with torch.cuda.device(device):
        yield torch.cuda.current_stream(device).cuda_stream
