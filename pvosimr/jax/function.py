"""``pvosimr.jax.delassus``: the generated library as a JAX function, G(q) or G(q, p).

Forward: the library's batch entry point through XLA's FFI (:mod:`.ffi`).  Reverse: a
``jax.custom_vjp`` whose backward pass is the generated gradient library (``⟨W, dG/dε⟩`` in one
reverse-mode pass per row, :meth:`pvosimr.codegen.call.CompiledDelassus.vjp`); dG/dq is never
formed.  The handler itself applies the unit-part rule to q by the library's own C
(:mod:`pvosimr.coordinates`: G is ``G(N(q))``) and maps the tangent gradient to q's coordinates
with the chain rule of ``u/|u|`` (no radial part off the sphere), so a jitted G or gradient is
one call into C, with no gather of q around it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import pinocchio as pin

from ..codegen.contract import ROUTES, library_with_gradient, placements_given
from ..kinematics.placements import check_placement_vector, placement_vector
from . import cuda as cuda_routes
from . import ffi

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
    """The Delassus matrix as a JAX function: ``G(q)``, or ``G(q, placements)`` with
    ``placements="input"``.

    ``q``: float64 of shape (..., nq) in Pinocchio's coordinates, any leading batch shape;
    returns (..., m, m), bitwise the compiled library's ``f(q)`` where ``pin.isNormalized``
    accepts q, ``f(N(q))`` at any other non-zero norm of its unit parts (the unit-part rule,
    :mod:`pvosimr.coordinates`).
    ``placements`` for a function with ``placements="input"``: one entry per constraint (a
    ``pin.SE3``, or a pair), or the placement vector ``p`` (..., n_p) of
    :func:`pvosimr.symbolic.placement_vector` as a float64 array, its leading axes broadcast
    against q's as numpy broadcasts them (no gradient: differentiating with respect to it is
    refused).  A placement is checked as a ``pin.SE3`` is (finite, an orthonormal rotation):
    here, naming its row, constraint and name, where its values are known, else by the
    library when it runs.

    Works under ``jax.jit``, ``jax.vmap`` (any batch shape, nested: one batched call into C on
    ``threads`` threads, default every usable core), ``jax.grad``, ``jax.vjp`` and
    ``jax.jacrev``; forward mode (``jax.jvp``, ``jax.jacfwd``) is refused by JAX with one line
    (a custom VJP).  A q that is not finite, or beyond the model's range, and a G that is not
    finite raise at run time (``XlaRuntimeError`` naming the row), never a wrong matrix.

    ``route``: ``"ffi"`` (the above), ``"xla"`` (:mod:`pvosimr.jax.xla`: the algorithm
    bodies on JAX arrays, compiled by XLA, no C compiler or CasADi; float32 or float64 in q's
    dtype, forward and reverse mode, placements differentiable, non-finite entries rather than
    errors) or ``"cuda"`` (:mod:`pvosimr.jax.cuda`: the generated CUDA kernels on an NVIDIA GPU
    on XLA's stream; float32 or float64 in q's dtype, reverse mode, fixed placements only,
    errors naming the row as here); None (default): ``"cuda"`` where JAX's default device is an
    NVIDIA GPU and the ``cuda`` extra is installed, ``"xla"`` on another GPU, else ``"ffi"``.

    Compiles (or finds in the cache) the library and its gradient library
    (:func:`pvosimr.codegen.compile` with ``vjp=True``) and the FFI handler.  ``TypeError`` at
    call time for a float32 ``q`` (naming JAX's ``jax_enable_x64`` flag).
    """
    given = placements_given(route, placements)
    if route is None:  # the FFI on a CPU, the kernels on an NVIDIA GPU, else XLA
        route = cuda_routes.default_route()
    if route == "xla":
        return _xla(model, cms, algorithm, given)
    if route == "cuda":  # its kernels take one p for every configuration and do not check it
        if given:
            raise ValueError(
                "route='cuda' takes fixed placements only (its kernels would not check a "
                "placement vector p): use placements='fixed', or route='ffi' or 'xla' for "
                "placements as inputs"
            )
        return cuda_routes.delassus_cuda(model, cms, algorithm, cache_dir)
    f = library_with_gradient(model, cms, algorithm, given, cache_dir)
    if f.m == 0:  # no constraint rows: (..., 0, 0)

        def empty(q, placements=None):
            return jnp.zeros((*_float64(q, "q", f.nq).shape[:-1], 0, 0), jnp.float64)

        return empty
    ffi.register()
    delassus_q = _custom_vjp(f, threads)

    def G(q, placements=None):
        q = _float64(q, "q", f.nq)
        p = _placement_vector(f, placements)
        if p is not None and p.ndim > 1:  # numpy's broadcasting of the batch axes
            try:
                shape = np.broadcast_shapes(q.shape[:-1], p.shape[:-1])
            except ValueError:
                raise ValueError(
                    f"the batch axes of q {tuple(q.shape)} and of the placements "
                    f"{tuple(p.shape)} do not broadcast (numpy's rule on the axes before the last)"
                ) from None
            q, p = jnp.broadcast_to(q, (*shape, f.nq)), jnp.broadcast_to(p, (*shape, f.n_p))
        return delassus_q(q, p)

    G.__doc__ = f"G(q{', placements' if given else ''}) of {f!r} (pvosimr.jax.delassus)."
    G.compiled = f  # the library's callable: f(q), f.vjp(q, W)
    return G


def _custom_vjp(f, threads: int | None) -> Callable:
    """``(q, p) ↦ G(N(q))``, with the generated gradient as its VJP (both one handler call)."""
    m = f.m
    g_entry, vjp_entry = ffi.Entry.of(f, "G"), ffi.Entry.of(f, "vjp")

    def evaluate(q, p):
        out = jax.ShapeDtypeStruct((*q.shape[:-1], m, m), jnp.float64)
        inputs = (q,) if p is None else (q, p)
        return ffi.call(g_entry, out, *inputs, has_p=p is not None, threads=threads)

    @jax.custom_vjp
    def delassus_q(q, p):
        return evaluate(q, p)

    def forward(q, p):
        if p is not None and p.perturbed:
            raise TypeError(
                "pvosimr.jax: no gradient with respect to the placements (only q's): wrap "
                "them in jax.lax.stop_gradient"
            )
        p_value = None if p is None else p.value
        return evaluate(q.value, p_value), (q.value, p_value)

    def gradient(q, *p_W):  # p_W: (W,) or (p, W); W (..., m, m), one per row of q
        out = jax.ShapeDtypeStruct(q.shape, jnp.float64)
        return ffi.call(vjp_entry, out, q, *p_W, has_p=len(p_W) == 2, threads=threads)

    shared = _shared_weight(gradient)

    def backward(residuals, W):
        q, p_value = residuals
        if isinstance(W, jax.custom_derivatives.SymbolicZero):
            return jnp.zeros_like(q), None
        p_W = (W,) if p_value is None else (p_value, W)
        if q.ndim == 1:  # one configuration: under vmap, W is often the same for every row
            return shared(q, *p_W), None
        W = jnp.broadcast_to(W, (*q.shape[:-1], m, m))
        return gradient(q, *p_W[:-1], W), None

    delassus_q.defvjp(forward, backward, symbolic_zeros=True)
    return delassus_q


def _shared_weight(gradient: Callable) -> Callable:
    """``gradient(q, [p,] W)`` for a W (m, m) that every row of q (..., nq) shares, with a vmap
    rule that keeps such a W unbatched: the handler then reads the one W for every row rather
    than a (B, m, m) copy that XLA would fill (vmap's "broadcast_all").  A p that is not one
    row is broadcast to q's rows; so is a batched W, which then goes through ``gradient``, one
    W per row."""

    @jax.custom_batching.custom_vmap
    def shared(q, *p_W):
        return gradient(q, *p_W)

    @shared.def_vmap
    def rule(axis_size: int, in_batched: list, q, *p_W):
        if not in_batched[0]:
            q = jnp.broadcast_to(q, (axis_size, *q.shape))
        rows = q.shape[:-1]
        *p, W = p_W
        if p and (in_batched[1] or p[0].ndim > 1):  # one p per row of q
            p = [_rows(p[0], in_batched[1], rows)]
        if in_batched[-1]:
            return gradient(q, *p, _rows(W, True, rows, 2)), True
        return shared(q, *p, W), True

    return shared


def _rows(x, batched: bool, rows: tuple, trailing: int = 1):
    """``x`` (its last ``trailing`` axes the entry; a leading batch axis where ``batched``)
    broadcast to one entry per row of ``rows``."""
    if batched:  # (axis, [inner rows...], entry): the inner rows are a suffix of rows[1:]
        x = x.reshape(x.shape[:1] + (1,) * (len(rows) + trailing - x.ndim) + x.shape[1:])
    return jnp.broadcast_to(x, (*rows, *x.shape[x.ndim - trailing :]))


def _xla(model: pin.Model, cms: Sequence, algorithm: str, given: bool) -> Callable:
    """``route="xla"``: :func:`pvosimr.jax.xla.compile_xla`'s G, placements as entries or
    ``p``; XLA's persistent cache in pvosimr's cache folder unless the caller chose one."""
    from .cache import use_persistent_cache
    from .xla import compile_xla

    use_persistent_cache()
    G_xla = compile_xla(model, cms, algorithm, placements="input" if given else "fixed")

    def G(q, placements=None):
        if given and isinstance(placements, (list, tuple)):
            placements = placement_vector(model, cms, placements)
        return G_xla(q) if not given else G_xla(q, placements)

    G.__doc__ = f"G(q{', placements' if given else ''}) of {G_xla!r} (pvosimr.jax.delassus)."
    G.xla = G_xla
    return G


def _float64(x, name: str, size: int):
    """``x`` as a float64 JAX array with last axis ``size``; TypeError naming the flag."""
    if jax.dtypes.canonicalize_dtype(np.float64) != np.float64:  # the flag, or its context
        raise TypeError(
            "pvosimr.jax computes G in float64 only: turn JAX's 64-bit mode on first, "
            "jax.config.update('jax_enable_x64', True) (pvosimr never changes it)"
        )
    dtype = getattr(x, "dtype", None)
    if dtype is not None and dtype != np.float64:
        raise TypeError(
            f"{name} is {dtype}, and pvosimr.jax computes G in float64 only: pass float64 "
            "(with JAX's 64-bit mode on, jax.config.update('jax_enable_x64', True))"
        )
    x = jnp.asarray(x, dtype=jnp.float64) if dtype is None else jnp.asarray(x)
    if x.ndim == 0 or x.shape[-1] != size:
        raise ValueError(f"{name} must have shape (..., {size}), not {tuple(x.shape)}")
    return x


def _placement_vector(f, placements):
    """``p``: None for fixed placements, from one entry per constraint (a constant) or from an
    array (..., n_p), checked here where its values are known (else by the library when it
    runs: an error naming the row); the library's TypeError where they are missing or not
    expected."""
    if placements is None or isinstance(placements, (list, tuple)) or f.placements == "fixed":
        p = f.placement_vector(placements)
        return None if p is None else jnp.asarray(p)
    p = _float64(placements, "placements", f.n_p)
    if not isinstance(p, jax.core.Tracer):
        check_placement_vector(f.placement_labels, np.asarray(p))
    return p
