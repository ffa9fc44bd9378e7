"""``pvosimr.torch.delassus``: G as a PyTorch function, on the library's custom ops
(:mod:`.op`) for CPU tensors, the CUDA kernels (:mod:`.cuda`) for CUDA tensors, or the XLA
route (:mod:`.xla`); the tensors checked."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import pinocchio as pin
import torch

from ..codegen.call import usable_cores
from ..codegen.contract import ROUTES, library_with_gradient, placements_expected, placements_given
from ..kinematics.placements import placement_size
from . import op

__all__ = ["ROUTES", "delassus"]


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
    (..., m, m), float64, the compiled library's ``f(q)`` (bitwise where ``pin.isNormalized``
    accepts q; ``f(N(q))`` at any other non-zero norm of its unit parts,
    :mod:`pvosimr.coordinates`).  ``placements`` with ``placements="input"``: one entry per
    constraint (``pin.SE3`` or a pair) or the placement vector ``p`` (..., n_p) as a tensor,
    its leading axes broadcast against q's, without gradient; checked as a ``pin.SE3`` is.

    Differentiable through ``torch.autograd`` (the generated reverse-mode gradient), and
    traced by ``torch.compile(fullgraph=True)`` (fake kernels).  An eager call on plain
    tensors runs the ops' kernels without the dispatcher's cost.  A q that is not finite,
    beyond the model's range or with a zero unit part, a placement that is not a rigid
    transform, and a G that is not finite raise ``ValueError`` naming the entry and row of
    the input given.  ``TypeError`` for a tensor that is not float64, ``ValueError`` for one on
    a device other than the CPU or a CUDA device.

    ``route``: ``"ffi"``, the above (the ops ``pvosimr::delassus`` and
    ``pvosimr::delassus_vjp`` over the generated library); ``"cuda"``, the same generated C as
    CUDA kernels on CUDA tensors (:mod:`pvosimr.torch.cuda`: float32 or float64, on PyTorch's
    current stream, the same checks and errors, one placement vector for every configuration,
    no ``torch.compile``; needs the extra ``cuda``); ``"xla"``, the algorithm bodies on JAX
    arrays compiled by XLA (:mod:`pvosimr.torch.xla`: tensors through DLPack, on the CPU or a
    CUDA device JAX has, float32 or float64, non-finite entries rather than errors, no
    ``torch.compile``; needs the extra ``jax``, and ``jax[cuda12]`` for CUDA); None (default):
    ``"ffi"`` for CPU tensors and ``"cuda"`` for CUDA tensors, the kernels built at the first
    CUDA call of each dtype.
    """
    given = placements_given(route, placements)
    if route == "xla":
        return _xla(model, cms, algorithm, given)
    if route == "cuda":
        return _cuda(model, cms, algorithm, given, cache_dir)
    f = library_with_gradient(model, cms, algorithm, given, cache_dir)
    if f.m == 0:  # no constraint rows: (..., 0, 0), q still checked

        def empty(q: torch.Tensor, placements=None) -> torch.Tensor:
            _check_tensor(q, "q", f.nq)
            return q.new_zeros((*q.shape[:-1], 0, 0))

        return empty
    handle = op.handle(f, usable_cores() if threads is None else int(threads))
    on_cuda: list[Callable] = []  # the CUDA kernels' route, built at the first CUDA tensor

    def G(q: torch.Tensor, placements=None) -> torch.Tensor:
        if route is None and isinstance(q, torch.Tensor) and q.device.type == "cuda":
            if not on_cuda:
                on_cuda.append(_cuda(model, f.constraint_models, f.algorithm, given, cache_dir, f))
            return on_cuda[0](q, placements)
        _check_tensor(q, "q", f.nq)
        if given and placements is not None and not isinstance(placements, (list, tuple)):
            return op.run(q, _fixed_placements(placements, f.n_p), handle)
        p = f.placement_vector(placements)  # None, or the library's TypeError where it is due
        return op.run(q, None if p is None else torch.from_numpy(p), handle)

    G.__doc__ = f"G(q{', placements' if given else ''}) of {f!r} (pvosimr.torch.delassus)."
    G.compiled = f  # the library's callable: f(q), f.vjp(q, W)
    G.handle = handle  # the ops' last argument
    return G


def _xla(model: pin.Model, cms: Sequence, algorithm: str, given: bool) -> Callable:
    """``route="xla"``: :func:`.xla.xla_delassus` with the checks of tensors and placements."""
    from ..constraints import as_constraint_list
    from ..kinematics.placements import placement_vector
    from .xla import xla_delassus

    cms = as_constraint_list(cms, model)
    G_xla = xla_delassus(model, cms, algorithm, given)
    n_p = placement_size(model, cms) if given else 0

    def G(q: torch.Tensor, placements=None) -> torch.Tensor:
        _check_tensor(q, "q", model.nq, "xla")
        placements_expected(given, placements)
        if isinstance(placements, (list, tuple)):
            placements = torch.from_numpy(placement_vector(model, cms, placements))
            placements = placements.to(q.device, q.dtype)
        if given:
            placements = _fixed_placements(placements, n_p, "xla")
        return G_xla(q, placements)

    inputs = "q, placements" if given else "q"
    G.__doc__ = f"G({inputs}) of {G_xla.jax_G!r} (pvosimr.torch.delassus)."
    G.jax_G = G_xla.jax_G
    return G


def _cuda(
    model: pin.Model, cms: Sequence, algorithm: str, given: bool, cache_dir, f=None
) -> Callable:
    """``route="cuda"``: :func:`.cuda.cuda_delassus` with the checks of tensors and placements
    (``f``, the CPU library for the errors, compiled at the first error where not given)."""
    from ..constraints import as_constraint_list
    from .cuda import cuda_delassus

    cms = as_constraint_list(cms, model)
    cpu_library = functools.cache(
        lambda: f or library_with_gradient(model, cms, algorithm, given, cache_dir)
    )
    G_cuda = cuda_delassus(model, cms, algorithm, given, cpu_library, cache_dir)
    n_p = placement_size(model, cms) if given else 0

    def G(q: torch.Tensor, placements=None) -> torch.Tensor:
        _check_tensor(q, "q", model.nq, "cuda")
        placements_expected(given, placements)
        if isinstance(placements, torch.Tensor):
            placements = _fixed_placements(placements, n_p, "cuda")
            if placements.device != q.device:
                raise ValueError(f"placements is on {placements.device}, q on {q.device}")
        return G_cuda(q, placements)

    G.__doc__ = f"G(q{', placements' if given else ''}) on CUDA tensors (pvosimr.torch.delassus)."
    G.kernel = G_cuda.kernel
    return G


#: The devices of each route's tensors; the library's (``"ffi"``) takes float64, the others
#: float32 too.
_DEVICES = {"ffi": ("cpu",), "cuda": ("cuda",), "xla": ("cpu", "cuda")}


def _check_tensor(x, name: str, size: int, route: str = "ffi") -> None:
    devices = _DEVICES[route]
    dtypes = (torch.float64,) if route == "ffi" else (torch.float32, torch.float64)
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, not {type(x).__name__}")
    if x.device.type not in devices:
        raise ValueError(
            f"pvosimr.torch runs on the CPU, or on a CUDA device (route='cuda' or 'xla'): {name} "
            f"is on {x.device}, and this route takes {' or '.join(devices)} tensors"
        )
    if x.dtype not in dtypes:
        kinds = " or ".join(str(d).removeprefix("torch.") for d in dtypes)
        also = "" if len(dtypes) > 1 else " (CUDA tensors and route='xla' take float32 too)"
        raise TypeError(f"pvosimr.torch computes in {kinds} only: {name} is {x.dtype}{also}")
    if x.ndim == 0 or x.shape[-1] != size:
        raise ValueError(f"{name} must have shape (..., {size}), not {tuple(x.shape)}")


def _fixed_placements(placements: torch.Tensor, n_p: int, route: str = "ffi") -> torch.Tensor:
    """The placement vectors ``p`` (..., n_p), checked, without gradient."""
    _check_tensor(placements, "placements", n_p, route)
    if placements.requires_grad:
        raise TypeError(
            "pvosimr.torch: no gradient with respect to the placements (only q's): pass "
            "placements.detach()"
        )
    return placements
