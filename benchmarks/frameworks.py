"""The section "JAX and PyTorch": pvosimr's G inside jit, vmap, grad and torch autograd, against
the direct calls of the same library in the same run (docs/jax-torch.md: what and why).

Per robot case and batch size B, on the same B configurations, in the interleaved rounds of
:func:`.loop.time_methods` (method names ``<method>:B<B>``, time per call of a whole batch):
``direct:G`` and ``direct:vjp`` (``f(qs)`` and ``f.vjp(qs, W)`` of the compiled function, on
its default threads), ``jax:G`` and ``jax:grad`` (``jit(vmap(·))``, or ``jit`` at B = 1, of
``pvosimr.jax.delassus`` and of ``grad ⟨W, G⟩``), ``torch:G`` and ``torch:G+backward``; at
B = 1 also :mod:`.trivial`'s baselines, alone and (``jax:trivial+direct:…``) followed by the
direct call.  Each front end's G is compared first with ``f(qs)`` and its gradient with central
differences of ``f`` (quaternions normalised): a method that disagrees is reported, not timed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from pvosimr.extras import missing_extra

from .derivatives import weights
from .loop import Method, Timed, time_methods
from .names import ATLAS_6D, SHADOW_3D, TOLERANCES
from .record import relative_error

FRAMEWORK_CASES = (ATLAS_6D, SHADOW_3D)
"""The section's cases by default: Atlas 2×6D (the targets' case) and the Shadow hand."""
G_TOLERANCE = TOLERANCES["front-end"]  # max|ΔG| / max(1, max|G|) against f(qs)
GRADIENT_TOLERANCE = TOLERANCES["gradient"]  # max|Δg| / max|g| against central differences
STEP = 1e-6  # h of the central differences on q's coordinates
OUTPUT_PROBE = 20  # jitted calls after a batch's timing whose output addresses are counted


@dataclass
class FrameworkResult(Timed):
    """One robot of the section: its timings per ``<method>:B<B>``, its checks, whether each
    front end's G equals ``f(qs)`` bitwise, and :func:`output_buffers` per B > 1."""

    bitwise: dict[str, bool] = field(default_factory=dict)
    output_buffers: dict[str, int] = field(default_factory=dict)

    def median(self, method: str, B: int) -> float | None:
        """Median seconds per call (a whole batch) of ``method`` at ``B``, if timed."""
        t = self.timings.get(f"{method}:B{B}")
        return None if t is None else t.median

    def keep(self, name: str, error: float, tolerance: float, method: Method, out: dict) -> None:
        """``out[name] = method`` if its check passed; else why it is not timed."""
        self.errors[name] = error
        if error <= tolerance:
            out[name] = method
        else:
            self.skipped[name] = f"wrong result (error {error:.1e}), not timed"

    def to_json(self) -> dict:
        extra = {"bitwise": self.bitwise, "output_buffers": self.output_buffers}
        return {**self.json_head(), "errors": self.errors, **extra}


def blocking(fn: Callable) -> Callable:
    """``fn`` waiting for its result (jax dispatches asynchronously)."""
    return lambda x: fn(x).block_until_ready()


def output_buffers(fn: Callable, inputs: Sequence, calls: int = OUTPUT_PROBE) -> int:
    """How many addresses the output of ``fn(*inputs)``, a JAX array, takes in ``calls`` calls,
    each result dropped before the next (one buffer reused, or a few in turn: a buffer no call
    has just written is out of the caches at a large B)."""
    return len({fn(*inputs).unsafe_buffer_pointer() for _ in range(calls)})


def jitted(G: Callable, W, batched: bool) -> tuple[Callable, Callable]:
    """``jit(G)`` and ``jit(grad(loss))``, loss = ⟨W, G(q)⟩, both under ``vmap`` where
    ``batched`` (pvosimr's front end and frax's dense route alike)."""
    import jax
    import jax.numpy as jnp

    def loss(q):
        return jnp.sum(W * G(q))

    wrap = jax.vmap if batched else (lambda fn: fn)
    return jax.jit(wrap(G)), jax.jit(wrap(jax.grad(loss)))


def _loss_gradient_fd(model: pin.Model, G: Callable, q: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Central differences of ⟨W, G(normalize(q))⟩ in q's coordinates; ``G`` takes a batch."""
    steps = np.concatenate([np.eye(model.nq), -np.eye(model.nq)]) * STEP
    losses = np.einsum("bij,ij->b", G(np.stack([pin.normalize(model, q + s) for s in steps])), W)
    return (losses[: model.nq] - losses[model.nq :]) / (2 * STEP)


class Front:
    """The front ends of one compiled function ``f``: its direct calls, jitted and torch
    callables per B, each checked before it is timed."""

    def __init__(self, model, cms, f, result: FrameworkResult, torch: bool = True) -> None:
        self.model, self.f, self.result, self.W = model, f, result, weights(result.m)
        fronts = ("jax", "torch") if torch else ("jax",)
        self.G = {extra: self._front(extra, model, cms) for extra in fronts}

    def _front(self, extra: str, model, cms) -> Callable | None:
        """``pvosimr.<extra>.delassus`` of this case, or None with the reason recorded."""
        why = f"{extra} is not installed" if missing_extra(extra) is not None else None
        if why is None:
            try:
                return importlib.import_module(f"pvosimr.{extra}").delassus(model, cms)
            except ImportError as exc:
                why = f"pvosimr.{extra} unavailable ({exc})"
        self.result.skipped.setdefault(extra, why)
        return None

    def methods(self, qs: np.ndarray) -> dict[str, Method]:
        """The checked methods at B = len(qs), one call each per sample."""
        B, f, W = len(qs), self.f, self.W
        x = qs[0] if B == 1 else qs
        out = {f"direct:G:B{B}": (f, [x], 1), f"direct:vjp:B{B}": (lambda a: f.vjp(a, W), [x], 1)}
        truth, fd = np.asarray(f(x)), _loss_gradient_fd(self.model, f, qs[0], W)
        for extra, add in (("jax", self._jax), ("torch", self._torch)):
            if self.G.get(extra) is not None:
                add(B, x, truth, fd, out)
        return out

    def _check(self, name: str, G: np.ndarray, truth: np.ndarray, method: Method, out) -> None:
        self.result.bitwise[name] = bool(np.array_equal(G, truth))
        self.result.keep(name, relative_error(G, truth, 1.0), G_TOLERANCE, method, out)

    def _check_grad(self, name: str, g: np.ndarray, fd: np.ndarray, method: Method, out) -> None:
        first = g if g.ndim == 1 else g[0]
        self.result.keep(name, relative_error(first, fd), GRADIENT_TOLERANCE, method, out)

    def _jax(self, B: int, x: np.ndarray, truth: np.ndarray, fd: np.ndarray, out: dict) -> None:
        import jax
        import jax.numpy as jnp

        g, grad = jitted(self.G["jax"], jnp.asarray(self.W), B > 1)
        xj = jax.device_put(jnp.asarray(x))
        self._check(f"jax:G:B{B}", np.asarray(g(xj)), truth, (blocking(g), [xj], 1), out)
        self._check_grad(f"jax:grad:B{B}", np.asarray(grad(xj)), fd, (blocking(grad), [xj], 1), out)

    def _torch(self, B: int, x: np.ndarray, truth: np.ndarray, fd: np.ndarray, out: dict) -> None:
        import torch

        G, xt = self.G["torch"], torch.from_numpy(np.ascontiguousarray(x))
        self._check(f"torch:G:B{B}", G(xt).numpy(), truth, (G, [xt], 1), out)
        leaf = xt.clone().requires_grad_(True)
        W = torch.from_numpy(self.W).expand(*x.shape[:-1], *self.W.shape)

        def backward(q):
            q.grad = None
            G(q).backward(W)
            return q.grad

        method = (backward, [leaf], 1)
        self._check_grad(f"torch:G+backward:B{B}", backward(leaf).numpy(), fd, method, out)


def _after(first: Callable, x, then: Callable) -> Callable:
    """``first(x)``, then ``then`` on the argument."""

    def both(a):
        first(x)
        return then(a)

    return both


def _trivial(front: Front, q: np.ndarray, cache) -> dict[str, Method]:
    """:mod:`.trivial`'s calls, checked, as B = 1 methods, and the trivial jitted call followed
    by each direct call at ``q``."""
    from . import trivial

    out: dict[str, Method] = {}
    f, W, keep = front.f, front.W, front.result.keep
    if front.G.get("jax") is not None:
        fn, x = trivial.jax_double(cache), trivial.numbers("jax")
        keep("jax:trivial:B1", trivial.check(fn), 0.0, (blocking(fn), [x], 1), out)
        if "jax:trivial:B1" in out:
            for name, direct in (("G", f), ("vjp", lambda a: f.vjp(a, W))):
                out[f"jax:trivial+direct:{name}:B1"] = (_after(blocking(fn), x, direct), [q], 1)
    if front.G.get("torch") is not None:
        fn, x = trivial.torch_double(cache), trivial.numbers("torch")
        keep("torch:trivial:B1", trivial.check(fn, "torch"), 0.0, (fn, [x], 1), out)
        backward, leaf = trivial.torch_backward(cache)
        error = trivial.check_backward(backward, leaf)
        keep("torch:trivial+backward:B1", error, 0.0, (backward, [leaf], 1), out)
    return out


def time_robot(
    robot, batches: Sequence[int], repeats: int, seed: int, cache_dir=None
) -> FrameworkResult:
    """The section on one zoo robot case (``zoo.load_case``'s result)."""
    from pvosimr import codegen

    result = FrameworkResult(f"{robot.name}/{robot.preset}", robot.model.nv, robot.m)
    f = codegen.compile(robot.model, robot.constraints, vjp=True, cache_dir=cache_dir)
    front = Front(robot.model, robot.constraints, f, result)
    rng = np.random.default_rng(seed)
    for B in batches:
        qs = np.stack([robot.q_random(rng) for _ in range(B)])
        methods = front.methods(qs)
        if B == 1:
            methods.update(_trivial(front, qs[0], cache_dir))
        result.timings.update(time_methods(methods, repeats))
        if B > 1 and f"jax:G:B{B}" in methods:  # the timing's allocator state, just after it
            fn, inputs, _ = methods[f"jax:G:B{B}"]
            result.output_buffers[f"jax:G:B{B}"] = output_buffers(fn, inputs)
    return result
