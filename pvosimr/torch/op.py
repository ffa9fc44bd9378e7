"""``pvosimr.torch.delassus``: the generated library as a ``torch.library`` custom op.

Two ops, ``pvosimr::delassus`` (G) and ``pvosimr::delassus_vjp`` (the generated gradient of
``⟨W, G⟩`` along ``pin.integrate``), each with a fake kernel (so ``torch.compile(fullgraph=True)``
traces them without a graph break); the first's autograd calls the second and maps its tangent
gradient to q's coordinates (:class:`pvosimr.coordinates.CoordinatePlan`); dG/dq is never
formed.  The ops take an integer ``handle`` into this module's table of compiled functions.
The unit parts of q are normalised with torch operations before the op, so autograd removes the
radial part of the gradient off the sphere.
"""

from __future__ import annotations

import ctypes
import dataclasses
import threading
from collections.abc import Callable, Sequence

import numpy as np
import pinocchio as pin
import torch

from ..codegen import compile as compile_library
from ..codegen.call import usable_cores
from ..coordinates import CoordinatePlan, coordinate_plan
from ..kinematics.placements import placement_size

__all__ = ["delassus"]

_lock = threading.Lock()
_functions: list[_Entry] = []
"""The compiled functions the ops can run, by handle."""

_VERDICTS = {
    1: "q is not finite or beyond the model's range (after its quaternions and unit complex "
    "pairs are normalised)",
    2: "G or its gradient is not finite: the mass matrix is singular there or precision was lost",
    3: "the generated function reported a failure",
    4: "no memory for the work arrays",
    5: "the cotangent W is not finite",
}


@dataclasses.dataclass
class _Entry:
    """A compiled function and its batch entry points through ctypes (for placements given
    as a tensor, which the callable's own API takes as pin.SE3 lists)."""

    f: object
    threads: int
    batch: ctypes._CFuncPtr
    batch_vjp: ctypes._CFuncPtr
    numpy_plan: CoordinatePlan
    plan: CoordinatePlan

    def rows(self, q: np.ndarray, p: np.ndarray | None, W: np.ndarray | None) -> np.ndarray:
        """G (or the gradient, with ``W``) of the rows of ``q`` (..., nq) with one ``p``."""
        f = self.f
        if p is None:  # the callable itself: its single and batched calls, its errors
            if W is None:
                return f(q) if q.ndim == 1 else f(q.reshape(-1, f.nq), threads=self.threads)
            if q.ndim == 1:
                return f.vjp(q, W)
            return f.vjp(q.reshape(-1, f.nq), W.reshape(-1, f.m, f.m), threads=self.threads)
        qs = np.ascontiguousarray(q.reshape(-1, f.nq))
        p = np.ascontiguousarray(p, dtype=np.float64)
        n_out = f.nv if W is not None else f.m * f.m
        out = np.empty((len(qs), n_out))
        bad = ctypes.c_longlong(-1)
        if W is None:
            rc = self.batch(qs.ctypes.data, len(qs), p.ctypes.data, out.ctypes.data,
                            self.threads, 1, ctypes.byref(bad))  # fmt: skip
        else:
            Ws = np.ascontiguousarray(W.reshape(len(qs), f.m * f.m), dtype=np.float64)
            rc = self.batch_vjp(qs.ctypes.data, len(qs), p.ctypes.data, Ws.ctypes.data,
                                f.m * f.m, out.ctypes.data, self.threads, 1,
                                ctypes.byref(bad))  # fmt: skip
        if rc != 0:
            raise ValueError(f"pvosimr.torch: at row {bad.value}: {_VERDICTS.get(rc, rc)}")
        return out if W is not None else out.reshape(len(qs), f.m, f.m).swapaxes(-1, -2)


def _batch_function(library, with_w: bool) -> ctypes._CFuncPtr:
    entry = ctypes.CDLL(str(library)).pvosimr_eval_batch
    entry.restype = ctypes.c_int
    weights = [ctypes.c_void_p, ctypes.c_longlong] if with_w else []
    entry.argtypes = [ctypes.c_void_p, ctypes.c_longlong, ctypes.c_void_p, *weights,
                      ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]  # fmt: skip
    return entry


@torch.library.custom_op("pvosimr::delassus", mutates_args=())
def delassus_op(q: torch.Tensor, p: torch.Tensor | None, handle: int) -> torch.Tensor:
    """G (..., m, m) at the normalised ``q`` (..., nq), float64 on the CPU."""
    entry = _functions[handle]
    G = entry.rows(q.detach().numpy(), None if p is None else p.detach().numpy(), None)
    return torch.from_numpy(np.ascontiguousarray(G).reshape(*q.shape[:-1], entry.f.m, entry.f.m))


@delassus_op.register_fake
def _(q: torch.Tensor, p: torch.Tensor | None, handle: int) -> torch.Tensor:
    m = _functions[handle].f.m
    return q.new_empty((*q.shape[:-1], m, m))


@torch.library.custom_op("pvosimr::delassus_vjp", mutates_args=())
def delassus_vjp_op(
    q: torch.Tensor, p: torch.Tensor | None, W: torch.Tensor, handle: int
) -> torch.Tensor:
    """The gradient of ``⟨W, G⟩`` along ``pin.integrate`` (..., nv) at the normalised ``q``."""
    entry = _functions[handle]
    W = W.detach().expand(*q.shape[:-1], entry.f.m, entry.f.m).contiguous().numpy()
    g = entry.rows(q.detach().numpy(), None if p is None else p.detach().numpy(), W)
    return torch.from_numpy(np.ascontiguousarray(g).reshape(*q.shape[:-1], entry.f.nv))


@delassus_vjp_op.register_fake
def _(q: torch.Tensor, p: torch.Tensor | None, W: torch.Tensor, handle: int) -> torch.Tensor:
    return q.new_empty((*q.shape[:-1], _functions[handle].f.nv))


def _setup_context(ctx, inputs, output) -> None:
    q, p, handle = inputs
    ctx.save_for_backward(q, p)
    ctx.handle = handle


def _backward(ctx, grad: torch.Tensor):
    q, p = ctx.saved_tensors
    g = delassus_vjp_op(q, p, grad, ctx.handle)
    # Index tensors made here: a backward traced by torch.compile may not capture real tensors.
    plan = _torch_plan(_functions[ctx.handle].numpy_plan)
    return plan.to_coordinates(q, g, torch, _set, _zeros), None, None


delassus_op.register_autograd(_backward, setup_context=_setup_context)


def _set(a: torch.Tensor, index, values: torch.Tensor) -> torch.Tensor:
    a = a.clone()
    a[..., index] = values
    return a


def _zeros(shape: tuple[int, ...]) -> torch.Tensor:
    return torch.zeros(shape, dtype=torch.float64)


def _torch_plan(plan: CoordinatePlan) -> CoordinatePlan:
    """``plan`` with its index arrays as torch tensors (constants of a compiled graph)."""

    def convert(value):
        if isinstance(value, np.ndarray):
            return torch.tensor(value.tolist(), dtype=torch.int64).reshape(value.shape)
        if isinstance(value, tuple):
            return tuple(convert(v) for v in value)
        if isinstance(value, dict):
            return {k: convert(v) for k, v in value.items()}
        return value

    fields = {f.name: convert(getattr(plan, f.name)) for f in dataclasses.fields(plan)}
    return CoordinatePlan(**fields)


def delassus(
    model: pin.Model,
    cms: Sequence,
    algorithm: str = "pv-osimr",
    placements: str | None = None,
    *,
    threads: int | None = None,
    cache_dir=None,
) -> Callable:
    """The Delassus matrix as a PyTorch function: ``G(q)``, or ``G(q, placements)`` with
    ``placements="input"``.

    ``q``: a float64 CPU tensor of shape (..., nq) in Pinocchio's coordinates; returns
    (..., m, m), float64, the compiled library's ``f(q)`` (bitwise where q's quaternions and
    unit complex pairs are normalised to rounding; ``f(N(q))`` elsewhere,
    :mod:`pvosimr.coordinates`).  ``placements`` with ``placements="input"``: one entry per
    constraint (``pin.SE3`` or a pair) or the placement vector ``p`` (n_p,) as a float64
    tensor, without gradient.

    Differentiable through ``torch.autograd`` (the generated reverse-mode gradient), and
    traced by ``torch.compile(fullgraph=True)`` (fake kernels).  A q that is not finite or
    beyond the model's range, and a G that is not finite, raise ``ValueError`` naming the row.
    ``TypeError`` for a tensor that is not float64, ``ValueError`` for one that is not on the
    CPU (CUDA is not supported).
    """
    if placements not in (None, "fixed", "input"):
        raise ValueError(f"placements must be None, 'fixed' or 'input', not {placements!r}")
    given = placements == "input"
    f = compile_library(
        model, cms, algorithm, placements="input" if given else "fixed", vjp=True,
        cache_dir=cache_dir,
    )  # fmt: skip
    if f.m == 0:
        raise ValueError("pvosimr.torch.delassus: no constraint rows (m = 0)")
    n_p = placement_size(model, f.constraint_models) if given else 0
    entry = _Entry(
        f,
        usable_cores() if threads is None else int(threads),
        _batch_function(f.library, False),
        _batch_function(f.vjp_library.library, True),
        coordinate_plan(model),
        _torch_plan(coordinate_plan(model)),
    )
    with _lock:
        _functions.append(entry)
        handle = len(_functions) - 1
    plan = entry.plan

    def G(q: torch.Tensor, placements=None) -> torch.Tensor:
        _check_tensor(q, "q", f.nq)
        p = None
        if given:
            p = _placement_tensor(f, placements, n_p)
        elif placements is not None:
            f.placement_vector(placements)  # the library's TypeError: compiled with 'fixed'
        return delassus_op(plan.normalize(q, torch, _set), p, handle)

    G.__doc__ = f"G(q{', placements' if given else ''}) of {f!r} (pvosimr.torch.delassus)."
    G.compiled = f  # the library's callable: f(q), f.vjp(q, W)
    G.handle = handle  # the ops' last argument
    return G


def _check_tensor(x, name: str, size: int) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, not {type(x).__name__}")
    if x.device.type != "cpu":
        raise ValueError(
            f"pvosimr.torch runs on the CPU only: {name} is on {x.device}; pass {name}.cpu()"
        )
    if x.dtype != torch.float64:
        raise TypeError(f"pvosimr.torch computes in float64 only: {name} is {x.dtype}")
    if x.ndim == 0 or x.shape[-1] != size:
        raise ValueError(f"{name} must have shape (..., {size}), not {tuple(x.shape)}")


def _placement_tensor(f, placements, n_p: int) -> torch.Tensor:
    if placements is None:
        f.placement_vector(None)  # the library's TypeError: pass placements=[...]
    if isinstance(placements, (list, tuple)):
        return torch.from_numpy(f.placement_vector(placements))
    _check_tensor(placements, "placements", n_p)
    if placements.ndim != 1:
        raise ValueError(f"placements must be one vector of {n_p} numbers for every q")
    if placements.requires_grad:
        raise TypeError(
            "pvosimr.torch: no gradient with respect to the placements (only q's): pass "
            "placements.detach()"
        )
    return placements
