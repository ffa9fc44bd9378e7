"""``pvosimr.torch.delassus``: the generated library as a ``torch.library`` custom op.

Two ops on q as given (..., nq): ``pvosimr::delassus``, ``G(N(q))`` with ``N`` normalising the
unit parts (:mod:`pvosimr.coordinates`), and ``pvosimr::delassus_vjp``, the gradient of
``⟨W, G(N(q))⟩`` in q's coordinates: the generated reverse-mode gradient (along
``pin.integrate``) mapped to q's coordinates and divided by each unit part's norm by the
gradient library's own ``pvosimr_to_coordinates`` (the map the JAX handler calls); dG/dq is
never formed.  Each has a fake kernel (so ``torch.compile(fullgraph=True)`` traces them
without a graph break); the first's autograd is the second.  Normalising in the op, in numpy,
keeps a single call at one op's cost.  The ops take an integer ``handle`` into this module's
table of compiled functions.

Eager calls on plain tensors run the ops' kernels without the dispatcher: directly where
autograd records nothing, else through an ``autograd.Function`` whose backward is the second
op's kernel (a Python custom op's dispatch and autograd cost more than the library's call).
Traced calls (``torch.compile``) and subclassed tensors go through the ops.
"""

from __future__ import annotations

import ctypes
import dataclasses
import threading
from collections.abc import Callable, Sequence

import numpy as np
import pinocchio as pin
import torch
from torch.autograd.function import once_differentiable

from ..codegen.call import CompiledDelassus, usable_cores
from ..codegen.front_end import ROUTES, library_with_gradient, placements_given, verdict
from ..coordinates import AS_GIVEN_TOLERANCE as TOL
from ..coordinates import CoordinatePlan, coordinate_plan, unit_part_spans
from ..kinematics.placements import placement_size

__all__ = ["ROUTES", "delassus"]

_lock = threading.Lock()
_functions: list[_Entry] = []
"""The compiled functions the ops can run, by handle."""
_handles: dict[tuple[str, str, int], int] = {}
"""The handle of each (library, gradient library, threads): a function asked for again (the
same model, constraints and options) reuses its entry, so the table grows only with the
distinct libraries a process loads."""


@dataclasses.dataclass
class _Entry:
    """A compiled function and its entry points through ctypes: the batches (for placements
    given as a tensor, which the callable's own API takes as pin.SE3 lists) and the gradient
    library's map to q's coordinates."""

    f: object
    threads: int
    batch: ctypes._CFuncPtr
    batch_vjp: ctypes._CFuncPtr
    coordinates: ctypes._CFuncPtr
    plan: CoordinatePlan
    packed: np.ndarray  # the plan, for the C
    spans: list[tuple[int, int]]

    def normalized(self, q: np.ndarray) -> np.ndarray:
        """``N(q)``: ``q`` with its unit parts normalised (as given within
        :data:`~pvosimr.coordinates.AS_GIVEN_TOLERANCE`: then ``q`` itself, no copy)."""
        if q.ndim == 1:
            if self.unit(q):
                return q
            q = q[None]
        q = q.reshape(-1, q.shape[-1]) if q.ndim > 2 else q
        if all(self._as_given(q[:, rows]) for rows in self.plan.unit.values()):
            return q
        with np.errstate(invalid="ignore", divide="ignore"):  # a zero part: NaN, refused later
            return self.plan.normalize(q, np, _set_numpy)

    @staticmethod
    def _as_given(u: np.ndarray) -> bool:
        """Whether every unit part ``u`` (B, parts, length) is used as given."""
        return bool(np.all(np.abs(np.einsum("bpk,bpk->bp", u, u) - 1.0) <= TOL))

    def to_coordinates(self, q: np.ndarray, q_hat: np.ndarray, g: np.ndarray) -> np.ndarray:
        """The tangent gradients ``g`` (B, nv) at ``q_hat`` = N(q) in q's coordinates (B, nq):
        the library's ``pvosimr_to_coordinates``."""
        q, g = np.ascontiguousarray(q), np.ascontiguousarray(g)
        out = np.empty(q.shape)
        at_q = q.ctypes.data
        at_q_hat = at_q if q_hat is q else np.ascontiguousarray(q_hat).ctypes.data
        self.coordinates(self.packed.ctypes.data, out.size // self.f.nq, at_q, at_q_hat,
                         g.ctypes.data, out.ctypes.data, TOL)  # fmt: skip
        return out

    def unit(self, q: np.ndarray) -> bool:
        """Whether every unit part of the one ``q`` is used as given (a few scalar steps)."""
        for a, n in self.spans:
            u = q[a : a + n]
            if not abs(u.dot(u) - 1.0) <= TOL:
                return False
        return True

    def rows(self, q: np.ndarray, p: np.ndarray | None, W: np.ndarray | None) -> np.ndarray:
        """G (or the gradient, with ``W``: one (m, m) for every row, or (..., m, m)) of the
        rows of ``q`` (..., nq) with one ``p``."""
        f = self.f
        if p is None:  # the callable itself: its single and batched calls, its errors
            if W is None:
                return f(q) if q.ndim == 1 else f(q.reshape(-1, f.nq), threads=self.threads)
            if q.ndim == 1:
                return f.vjp(q, W)
            Ws = W if W.ndim == 2 else W.reshape(-1, f.m, f.m)  # one W, or one per row
            return f.vjp(q.reshape(-1, f.nq), Ws, threads=self.threads)
        qs = np.ascontiguousarray(q.reshape(-1, f.nq))
        p = np.ascontiguousarray(p, dtype=np.float64)
        n_out = f.nv if W is not None else f.m * f.m
        out = np.empty((len(qs), n_out))
        bad = ctypes.c_longlong(-1)
        if W is None:
            rc = self.batch(qs.ctypes.data, len(qs), p.ctypes.data, out.ctypes.data,
                            self.threads, 1, ctypes.byref(bad))  # fmt: skip
        else:
            Ws = np.ascontiguousarray(W.reshape(-1, f.m * f.m), dtype=np.float64)
            stride = 0 if len(Ws) == 1 else f.m * f.m  # one W for every row, or one per row
            rc = self.batch_vjp(qs.ctypes.data, len(qs), p.ctypes.data, Ws.ctypes.data,
                                stride, out.ctypes.data, self.threads, 1,
                                ctypes.byref(bad))  # fmt: skip
        if rc != 0:
            raise ValueError(f"pvosimr.torch: at row {bad.value}: {verdict(rc)}")
        return out if W is not None else out.reshape(len(qs), f.m, f.m)  # G is symmetric


def _batch_function(library, with_w: bool) -> ctypes._CFuncPtr:
    entry = ctypes.CDLL(str(library)).pvosimr_eval_batch
    entry.restype = ctypes.c_int
    weights = [ctypes.c_void_p, ctypes.c_longlong] if with_w else []
    entry.argtypes = [ctypes.c_void_p, ctypes.c_longlong, ctypes.c_void_p, *weights,
                      ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]  # fmt: skip
    return entry


def _coordinates_function(library) -> ctypes._CFuncPtr:
    entry = ctypes.CDLL(str(library)).pvosimr_to_coordinates
    entry.restype = None
    entry.argtypes = [ctypes.c_void_p, ctypes.c_longlong, *[ctypes.c_void_p] * 4, ctypes.c_double]
    return entry


def _delassus(q: torch.Tensor, p: torch.Tensor | None, handle: int) -> torch.Tensor:
    """G(N(q)) (..., m, m) at ``q`` (..., nq), float64 on the CPU."""
    entry = _functions[handle]
    q_np = q.detach().numpy()
    if p is None and q_np.ndim == 1 and entry.unit(q_np):  # the single call, at its cost
        return torch.from_numpy(np.ascontiguousarray(entry.f(q_np)))
    q_hat = entry.normalized(q_np)
    G = entry.rows(q_hat, None if p is None else p.detach().numpy(), None)
    return torch.from_numpy(np.ascontiguousarray(G).reshape(*q.shape[:-1], entry.f.m, entry.f.m))


delassus_op = torch.library.custom_op("pvosimr::delassus", _delassus, mutates_args=())


@delassus_op.register_fake
def _(q: torch.Tensor, p: torch.Tensor | None, handle: int) -> torch.Tensor:
    m = _functions[handle].f.m
    return q.new_empty((*q.shape[:-1], m, m))


def _delassus_vjp(
    q: torch.Tensor, p: torch.Tensor | None, W: torch.Tensor, handle: int
) -> torch.Tensor:
    """The gradient of ``⟨W, G(N(q))⟩`` in q's coordinates (..., nq)."""
    entry = _functions[handle]
    W = W.detach()
    if W.dim() > 2 and W.numel() and not any(W.stride()[:-2]):  # one W expanded: read once
        W = W[(0,) * (W.dim() - 2)]
    if W.dim() > 2:
        W = W.expand(*q.shape[:-1], entry.f.m, entry.f.m)
    W = W.contiguous().numpy()
    q_np = q.detach().numpy()
    q_hat = entry.normalized(q_np)
    g = entry.rows(q_hat, None if p is None else p.detach().numpy(), W)
    return torch.from_numpy(entry.to_coordinates(q_np, q_hat, g).reshape(q.shape))


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
        return _delassus(q, p, handle)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad: torch.Tensor):
        q, p = ctx.saved_tensors
        return _delassus_vjp(q, p, grad, ctx.handle), None, None


def _set_numpy(a: np.ndarray, index: np.ndarray, values: np.ndarray) -> np.ndarray:
    a = a.copy()
    a[..., index] = values
    return a


def delassus(
    model: pin.Model,
    cms: Sequence,
    algorithm: str = "pv-osimr",
    placements: str | None = None,
    *,
    route: str | None = None,
    threads: int | None = None,
    cache_dir=None,
) -> Callable:
    """The Delassus matrix as a PyTorch function: ``G(q)``, or ``G(q, placements)`` with
    ``placements="input"``.

    ``q``: a float64 CPU tensor of shape (..., nq) in Pinocchio's coordinates; returns
    (..., m, m), float64, the compiled library's ``f(q)`` (bitwise where q's quaternions and
    unit complex pairs are normalised to rounding; ``f(N(q))`` elsewhere,
    :mod:`pvosimr.coordinates`).  ``placements`` with ``placements="input"``: one entry per
    constraint (``pin.SE3`` or a pair) or the placement vector ``p`` (n_p,) as a tensor,
    without gradient.

    Differentiable through ``torch.autograd`` (the generated reverse-mode gradient), and
    traced by ``torch.compile(fullgraph=True)`` (fake kernels).  An eager call on plain
    tensors runs the ops' kernels without the dispatcher's cost (on one q that records no
    gradient: the library's single call itself).  A q that is not finite or beyond the
    model's range, and a G that is not finite, raise ``ValueError`` naming the row.
    ``TypeError`` for a tensor that is not float64, ``ValueError`` for one on a device other
    than the CPU or a CUDA device.

    ``route``: ``"ffi"``, the above (the ops ``pvosimr::delassus`` and
    ``pvosimr::delassus_vjp`` over the generated library); ``"xla"``, the algorithm bodies on
    JAX arrays compiled by XLA (:mod:`pvosimr.torch.xla`: tensors through DLPack, on the CPU
    or a CUDA device JAX has, float32 or float64, non-finite entries rather than errors, no
    ``torch.compile``; needs the extra ``jax``, and ``jax[cuda12]`` for CUDA); None (default):
    ``"ffi"`` for CPU tensors and ``"xla"`` for CUDA tensors, the XLA route built at the first
    CUDA call.
    """
    given = placements_given(route, placements)
    if route == "xla":
        return _xla(model, cms, algorithm, given)
    f = library_with_gradient(model, cms, algorithm, given, cache_dir)
    if f.m == 0:  # no constraint rows: (..., 0, 0), q still checked

        def empty(q: torch.Tensor, placements=None) -> torch.Tensor:
            _check_tensor(q, "q", f.nq)
            return q.new_zeros((*q.shape[:-1], 0, 0))

        return empty
    n_p = placement_size(model, f.constraint_models) if given else 0
    handle = _handle(f, model, usable_cores() if threads is None else int(threads))
    entry = _functions[handle]
    on_cuda: list[Callable] = []  # the XLA route, built at the first CUDA tensor

    def G(q: torch.Tensor, placements=None) -> torch.Tensor:
        if route is None and isinstance(q, torch.Tensor) and q.device.type == "cuda":
            if not on_cuda:
                on_cuda.append(_xla(model, f.constraint_models, f.algorithm, given))
            return on_cuda[0](q, placements)
        _check_tensor(q, "q", f.nq)
        eager = _eager(q)
        if eager and not given and q.ndim == 1 and not _recording(q):
            q_np = q.numpy()
            if entry.unit(q_np):  # the op's own single call
                return torch.from_numpy(np.ascontiguousarray(f(q_np)))
        p = None
        if given:
            p = _placement_tensor(f, placements, n_p)
        elif placements is not None:
            f.placement_vector(placements)  # the library's TypeError: compiled with 'fixed'
        if not eager:
            return delassus_op(q, p, handle)
        return _Eager.apply(q, p, handle) if _recording(q) else _delassus(q, p, handle)

    G.__doc__ = f"G(q{', placements' if given else ''}) of {f!r} (pvosimr.torch.delassus)."
    G.compiled = f  # the library's callable: f(q), f.vjp(q, W)
    G.handle = handle  # the ops' last argument
    return G


def _eager(q: torch.Tensor) -> bool:
    """Whether a call on ``q`` may skip the ops' dispatch: an eager call (not traced by
    ``torch.compile``) on a plain tensor.  Tracing, fake and other subclassed tensors go
    through the ops."""
    return type(q) is torch.Tensor and not torch.compiler.is_compiling()


def _recording(q: torch.Tensor) -> bool:
    """Whether autograd records a call on ``q``."""
    return q.requires_grad and torch.is_grad_enabled()


def _handle(f: CompiledDelassus, model: pin.Model, threads: int) -> int:
    """The op's handle of ``f`` run on ``threads`` threads (its entry made at the first ask)."""
    key = (str(f.library), str(f.vjp_library.library), threads)
    with _lock:
        if key not in _handles:
            plan = coordinate_plan(model)
            _functions.append(
                _Entry(
                    f,
                    threads,
                    _batch_function(f.library, False),
                    _batch_function(f.vjp_library.library, True),
                    _coordinates_function(f.vjp_library.library),
                    plan,
                    plan.packed(),
                    unit_part_spans(model),
                )
            )
            _handles[key] = len(_functions) - 1
        return _handles[key]


def _xla(model: pin.Model, cms: Sequence, algorithm: str, given: bool) -> Callable:
    """``route="xla"``: :func:`.xla.xla_delassus` with the checks of tensors and placements."""
    from ..constraints import as_constraint_list
    from ..kinematics.placements import placement_vector
    from .xla import xla_delassus

    cms = as_constraint_list(cms, model)
    G_xla = xla_delassus(model, cms, algorithm, given)
    n_p = placement_size(model, cms) if given else 0

    def G(q: torch.Tensor, placements=None) -> torch.Tensor:
        _check_tensor(q, "q", model.nq, _XLA_DEVICES, _XLA_DTYPES)
        p = None
        if given:
            if placements is None:
                raise TypeError("this function has placements as inputs: pass placements=[...]")
            if isinstance(placements, (list, tuple)):
                placements = torch.from_numpy(placement_vector(model, cms, placements))
                placements = placements.to(q.device, q.dtype)
            p = _fixed_placements(placements, n_p, _XLA_DEVICES, _XLA_DTYPES)
        elif placements is not None:
            raise TypeError("this function has fixed placements: call G(q)")
        return G_xla(q, p)

    G.__doc__ = f"G(q{', placements' if given else ''}) of {G_xla.seam!r} (pvosimr.torch.delassus)."
    G.seam = G_xla.seam
    return G


_LIBRARY_DEVICES, _LIBRARY_DTYPES = ("cpu",), (torch.float64,)
_XLA_DEVICES, _XLA_DTYPES = ("cpu", "cuda"), (torch.float32, torch.float64)


def _check_tensor(
    x,
    name: str,
    size: int,
    devices: tuple[str, ...] = _LIBRARY_DEVICES,
    dtypes: tuple[torch.dtype, ...] = _LIBRARY_DTYPES,
) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, not {type(x).__name__}")
    if x.device.type not in devices:
        raise ValueError(
            f"pvosimr.torch runs on the CPU, or on a CUDA device through route='xla': {name} "
            f"is on {x.device}"
        )
    if x.dtype not in dtypes:
        kinds = " or ".join(str(d).removeprefix("torch.") for d in dtypes)
        also = "" if len(dtypes) > 1 else " (route='xla' computes in float32 too)"
        raise TypeError(f"pvosimr.torch computes in {kinds} only: {name} is {x.dtype}{also}")
    if x.ndim == 0 or x.shape[-1] != size:
        raise ValueError(f"{name} must have shape (..., {size}), not {tuple(x.shape)}")


def _placement_tensor(f, placements, n_p: int) -> torch.Tensor:
    if placements is None:
        f.placement_vector(None)  # the library's TypeError: pass placements=[...]
    if isinstance(placements, (list, tuple)):
        return torch.from_numpy(f.placement_vector(placements))
    return _fixed_placements(placements, n_p)


def _fixed_placements(
    placements: torch.Tensor,
    n_p: int,
    devices: tuple[str, ...] = _LIBRARY_DEVICES,
    dtypes: tuple[torch.dtype, ...] = _LIBRARY_DTYPES,
) -> torch.Tensor:
    """The placement vector ``p`` (n_p,) for every q, checked, without gradient."""
    _check_tensor(placements, "placements", n_p, devices, dtypes)
    if placements.ndim != 1:
        raise ValueError(f"placements must be one vector of {n_p} numbers for every q")
    if placements.requires_grad:
        raise TypeError(
            "pvosimr.torch: no gradient with respect to the placements (only q's): pass "
            "placements.detach()"
        )
    return placements
