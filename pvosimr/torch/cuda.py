"""``pvosimr.torch.delassus`` on CUDA tensors: the kernels of :mod:`pvosimr.codegen.cuda`
(``pvosimr_G`` and ``pvosimr_vjp``) launched on PyTorch's current stream, float32 or float64.

This module only maps tensors to the kernels' layout and back: q (..., nq) becomes ``qs`` (nq,
B), G comes back from (m·m, B) (row ``k`` entry ``k`` of the column-major m × m matrix), the
cotangent W goes in as (m·m, B) and the tangent gradient comes back as (nv, B), mapped to q's
coordinates here (:func:`to_coordinates`, the map of the library's ``pvosimr_to_coordinates``
on tensors).  The kernels check q and apply the unit-part rule (:mod:`pvosimr.coordinates`);
their status per configuration is read back after each launch, which waits for the stream
(a synchronisation).  A configuration the kernel rejects because a unit part is off the sphere
beyond ``pin.isNormalized``'s tolerance is normalised here and launched again (G(N(q)), as on
the CPU); any other failure is the CPU route's error for the same batch (the library run on a
float64 copy of it, which names the entry and row), or, where the library accepts the batch
(float32 lost precision), one line with the row and the words of
:data:`pvosimr.codegen.contract.FAILURE_WORDS`.

:data:`compile_kernels` (:func:`pvosimr.codegen.cuda.compile_cuda`) is the one way to the
kernels: a test replaces it with their host build, so that everything here runs on CPU
tensors without a GPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pinocchio as pin
import torch
from torch.autograd.function import once_differentiable

from ..checks import row_name
from ..codegen.c_source import BAD_Q, OK
from ..codegen.contract import FAILURE_WORDS, UNKNOWN, evaluate
from ..codegen.cuda import compile_cuda
from ..coordinates import AS_GIVEN_TOLERANCE, CoordinatePlan, coordinate_plan, squared_norm
from ..extras import require
from ..kinematics.placements import check_placement_vector, placement_labels, placement_vector

__all__ = ["DTYPES", "compile_kernels", "cuda_delassus", "normalize", "to_coordinates"]

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
    plan = coordinate_plan(model)
    labels = placement_labels(model, cms) if given else []
    kernels: dict[str, object] = {}

    def kernel(dtype: torch.dtype):
        name = DTYPES[dtype]
        if name not in kernels:
            placements = "input" if given else "fixed"
            kernels[name] = compile_kernels(model, cms, algorithm=algorithm, dtype=name,
                                            vjp=True, placements=placements,
                                            cache_dir=cache_dir)  # fmt: skip
        return kernels[name]

    def failed(code: int, row: int, q: torch.Tensor, p, W=None):
        """The CPU route's error for this batch, else one line with the kernel's code."""
        host = q.detach().to("cpu", torch.float64).numpy()
        p_host = None if p is None else p.detach().to("cpu", torch.float64).numpy()
        W_host = None if W is None else W.detach().to("cpu", torch.float64).numpy()
        evaluate(library(), host, p_host, W_host)  # raises where the library fails too
        words = FAILURE_WORDS.get(code, f"{UNKNOWN} (code {code})")
        raise ValueError(
            f"pvosimr.torch on {q.device}, {q.dtype}: at row {row_name(q.shape[:-1], row)} "
            f"of qs: {words}"
        )

    def launch(q: torch.Tensor, p, W=None) -> torch.Tensor:
        """G (B, m·m) or, with W (q's batch, m, m), the tangent gradient (B, nv) at q's rows;
        N(q) launched again where the kernel says a unit part is off the sphere."""
        k, rows = kernel(q.dtype), q.detach().reshape(-1, model.nq)
        out, status = _launch(k, rows, p, W)
        codes = status.ne(OK)
        if bool(codes.any()):  # the one synchronisation of a call
            if bool(status.eq(BAD_Q).any()):
                rows = normalize(plan, rows)
                out, status = _launch(k, rows, p, W)
                codes = status.ne(OK)
            if bool(codes.any()):
                r = int(codes.nonzero()[0, 0])
                failed(int(status[r]), r, q, p, W)
        return out

    class Delassus(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q: torch.Tensor, p: torch.Tensor | None) -> torch.Tensor:
            ctx.save_for_backward(q, p)
            m = kernel(q.dtype).m
            G = launch(q, p).reshape(-1, m, m).transpose(-1, -2)  # column-major entries
            return G.reshape(*q.shape[:-1], m, m)

        @staticmethod
        @once_differentiable
        def backward(ctx, W: torch.Tensor):
            q, p = ctx.saved_tensors
            rows = q.detach().reshape(-1, model.nq)
            g = launch(q, p, W.to(q.dtype))
            g_q = to_coordinates(plan, rows, normalize(plan, rows), g)
            return g_q.reshape(q.shape), None

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


def _launch(kernel, rows: torch.Tensor, p, W) -> tuple[torch.Tensor, torch.Tensor]:
    """One launch on ``rows`` (B, nq) (with ``W`` (..., m, m), B matrices, the gradient's):
    the output (B, n) and the status (B,)."""
    B = rows.shape[0]
    qs = rows.T.contiguous()
    status = torch.full((B,), -1, dtype=torch.int32, device=rows.device)
    pointer = 0 if p is None else p.contiguous().data_ptr()
    with _On(rows.device) as stream:
        if W is None:
            out = rows.new_empty((kernel.n_out, B))
            kernel.launch(qs.data_ptr(), out.data_ptr(), status.data_ptr(), B, stream, p=pointer)
        else:
            Ws = W.reshape(B, -1).T.contiguous()  # row k: entry k of each C-ordered W
            out = rows.new_empty((kernel.nv, B))
            kernel.launch_vjp(qs.data_ptr(), Ws.data_ptr(), out.data_ptr(), status.data_ptr(),
                              B, stream, p=pointer)  # fmt: skip
    return out.T, status


class _On:
    """The device's current stream as an integer (0 on the CPU, where a test runs the host
    build), with that device current."""

    def __init__(self, device: torch.device) -> None:
        self.device, self.guard = device, None

    def __enter__(self) -> int:
        if self.device.type != "cuda":
            return 0
        self.guard = torch.cuda.device(self.device)
        self.guard.__enter__()
        return torch.cuda.current_stream(self.device).cuda_stream

    def __exit__(self, *exc) -> None:
        if self.guard is not None:
            self.guard.__exit__(*exc)


def normalize(plan: CoordinatePlan, rows: torch.Tensor) -> torch.Tensor:
    """``N(q)`` of tensor rows (B, nq) (:meth:`CoordinatePlan.normalize`)."""

    def set_(a: torch.Tensor, index, values: torch.Tensor) -> torch.Tensor:
        a = a.clone()
        a[..., torch.as_tensor(index, device=a.device)] = values
        return a

    return plan.normalize(rows, torch, set_)


def to_coordinates(
    plan: CoordinatePlan, q: torch.Tensor, q_hat: torch.Tensor, g: torch.Tensor
) -> torch.Tensor:
    """The tangent gradient ``g`` (B, nv) at ``q_hat = N(q)`` in q's coordinates (B, nq):
    ``T (Tᵀ T)⁻¹ g`` at ``q_hat``, each unit part's rows divided by its norm in ``q``
    (:func:`pvosimr.coordinates.tangent_to_coordinates`, on tensors)."""

    def at(a: torch.Tensor, index) -> torch.Tensor:
        return a[:, torch.as_tensor(np.asarray(index), device=a.device)]

    out = g.new_zeros((g.shape[0], plan.nq))
    rows, columns = plan.identity
    out[:, torch.as_tensor(rows, device=g.device)] = at(g, columns)
    rows, columns = plan.quaternions  # 2 [w 1 + v× ; -vᵀ] g
    if len(rows):
        x, y, z, w = (at(q_hat, rows[:, k]) for k in range(4))
        u, v, t = (at(g, columns[:, k]) for k in range(3))
        for k, value in enumerate(
            (w * u - z * v + y * t, z * u + w * v - x * t, -y * u + x * v + w * t,
             -x * u - y * v - z * t)
        ):  # fmt: skip
            out[:, torch.as_tensor(rows[:, k], device=g.device)] = 2 * value
    rows, columns, quaternion = plan.se3  # the translation: R(Q) g
    if len(rows):
        x, y, z, w = (at(q_hat, quaternion[:, k]) for k in range(4))
        u, v, t = (at(g, columns[:, k]) for k in range(3))
        R = (
            (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
            (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
            (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)),
        )
        for k, (a, b, c) in enumerate(R):
            out[:, torch.as_tensor(rows[:, k], device=g.device)] = a * u + b * v + c * t
    rows, columns = plan.complexes  # (cos, sin) turned: (-sin, cos) g
    if len(rows):
        t = at(g, columns)
        out[:, torch.as_tensor(rows[:, 0], device=g.device)] = -at(q_hat, rows[:, 1]) * t
        out[:, torch.as_tensor(rows[:, 1], device=g.device)] = at(q_hat, rows[:, 0]) * t
    rows, columns, angle = plan.se2  # the planar translation: R(θ) g
    if len(rows):
        c, s = at(q_hat, angle[:, 0]), at(q_hat, angle[:, 1])
        u, v = at(g, columns[:, 0]), at(g, columns[:, 1])
        out[:, torch.as_tensor(rows[:, 0], device=g.device)] = c * u - s * v
        out[:, torch.as_tensor(rows[:, 1], device=g.device)] = s * u + c * v
    for table in plan.unit.values():  # each unit part divided by its norm in q
        index = torch.as_tensor(table, device=g.device)
        squared = squared_norm(q[:, index])
        divisor = torch.where((squared - 1).abs() <= AS_GIVEN_TOLERANCE, 1.0, squared.sqrt())
        out[:, index] = out[:, index] / divisor[..., None]
    return out
