"""The section "JAX and PyTorch": pvosimr's G inside jit, vmap, grad and torch autograd, against
the direct calls of the same library in the same run, and against frax's dense route.

Per robot case (default :data:`FRAMEWORK_CASES`) and batch size B (default
:data:`FRAMEWORK_BATCHES`), on the same B configurations, in interleaved rounds
(:func:`benchmarks.loop.time_methods`):

- ``direct:G``: ``f(qs)`` (``f(q)`` at B = 1) of ``codegen.compile(model, cms, vjp=True)``;
  ``direct:vjp``: ``f.vjp(qs, W)``, the gradient of ⟨W, G⟩ (:func:`.derivatives.weights`);
  both on their default threads (:func:`pvosimr.codegen.call.usable_cores`), as the front
  ends' defaults;
- ``jax:G``: ``jit(G)`` at B = 1, ``jit(vmap(G))`` beyond, of ``pvosimr.jax.delassus``;
  ``jax:grad``: ``jit(grad(loss))``, ``jit(vmap(grad(loss)))``, loss = ⟨W, G(q)⟩;
- ``torch:G``: ``pvosimr.torch.delassus`` on a tensor; ``torch:G+backward``: the forward and
  ``backward(W)`` of a tensor that requires its gradient.

At B = 1 the trivial calls of :mod:`.trivial` are timed in the same rounds: ``jax:trivial`` (a
jitted FFI call doubling 8 numbers), ``torch:trivial`` (a custom op doing the same) and
``torch:trivial+backward`` (the same through ``torch.autograd``, forward and backward).  So are
``jax:trivial+direct:G`` and ``jax:trivial+direct:vjp``: the trivial jitted call, then the
direct call.  Less the trivial call alone, they time the direct call in the state JAX's dispatch
leaves the caches in, as a call inside ``jit`` finds them (a large generated function, the
gradient's above all, runs slower there than in a loop of its own).

Before timing, each front end's G is compared with ``f(qs)`` (every row; "bitwise" when equal)
and each gradient with central differences of the direct G at the first configuration, on q's
coordinates with quaternions and unit-complex pairs normalised (``pin.normalize``), the G that
the front ends define off the sphere. A method that disagrees is reported, not timed.  After
each B > 1's timing, :func:`output_buffers` counts the addresses XLA gives ``jit(vmap(G))``'s
output: one buffer reused, or a few in turn, which the ratio at a large B depends on.

On frax's G1 (:mod:`.frax_route`, both feet welded), the same batches time frax's dense
``jit(vmap(J M⁻¹ Jᵀ))`` and its gradient against pvosimr's, after :func:`.frax_route.agreement`
passed. jax, torch and frax are imported here only when the section runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from pvosimr.extras import missing_extra
from pvosimr.study.names import ATLAS_6D, FRAMEWORK_BATCHES, SHADOW_3D, TOLERANCES
from pvosimr.study.record import relative_error

from .derivatives import weights
from .loop import Timed, time_methods

__all__ = [
    "FRAMEWORK_BATCHES",
    "FRAMEWORK_CASES",
    "GRADIENT_TOLERANCE",
    "FrameworkResult",
    "Front",
    "blocking",
    "loss_gradient_fd",
    "output_buffers",
    "time_robot",
]

FRAMEWORK_CASES = (ATLAS_6D, SHADOW_3D)
"""The cases of the section by default (Atlas 2×6D, the targets' case, and the Shadow hand)."""

"""Batch sizes B of the section."""

G_TOLERANCE = TOLERANCES["front-end"]  # max|ΔG| / max(1, max|G|) against f(qs)
GRADIENT_TOLERANCE = TOLERANCES["gradient"]  # max|Δg| / max|g| against central differences
STEP = 1e-6  # h of the central differences on q's coordinates
OUTPUT_PROBE = 20  # jitted calls after a batch's timing whose output addresses are counted


@dataclass
class FrameworkResult(Timed):
    """One robot of the section: its timings per method name ``<method>:B<B>``, the checks."""

    bitwise: dict[str, bool] = field(default_factory=dict)
    # jax:G:B<B> (B > 1): the addresses XLA's output took in OUTPUT_PROBE calls (output_buffers)
    output_buffers: dict[str, int] = field(default_factory=dict)

    def median(self, method: str, B: int) -> float | None:
        """Median seconds per call (a whole batch) of ``method`` at ``B``, if timed."""
        t = self.timings.get(f"{method}:B{B}")
        return None if t is None else t.median

    def to_json(self) -> dict:
        return {
            **self.json_head(),
            "errors": self.errors,
            "bitwise": self.bitwise,
            "output_buffers": self.output_buffers,
        }


def loss_gradient_fd(
    model: pin.Model, G: Callable[[np.ndarray], np.ndarray], q: np.ndarray, W: np.ndarray
) -> np.ndarray:
    """Central differences of ⟨W, G(normalize(q))⟩ in q's coordinates (nq numbers); ``G`` takes
    a (2·nq, nq) batch."""
    steps = np.concatenate([np.eye(model.nq), -np.eye(model.nq)]) * STEP
    qs = np.stack([pin.normalize(model, q + s) for s in steps])
    losses = np.einsum("bij,ij->b", G(qs), W)
    return (losses[: model.nq] - losses[model.nq :]) / (2 * STEP)


class Front:
    """The front ends of one compiled function: jitted and torch callables per B, checked."""

    def __init__(self, model, cms, f, result: FrameworkResult, torch: bool = True) -> None:
        self.model, self.cms, self.f, self.result = model, cms, f, result
        self.W = weights(result.m)
        self.jax_G = self._front("jax")
        # frax's comparison is JAX's alone: torch is not asked for there
        self.torch_G = self._front("torch") if torch else None

    def _front(self, extra: str) -> Callable | None:
        """``pvosimr.<extra>.delassus`` of this case, or None with the reason recorded."""
        if missing_extra(extra) is not None:
            self._skip(extra, f"{extra} is not installed")
            return None
        try:
            front = importlib.import_module(f"pvosimr.{extra}")
        except ImportError as exc:
            self._skip(extra, f"pvosimr.{extra} unavailable ({exc})")
            return None
        return front.delassus(self.model, self.cms)

    def _skip(self, prefix: str, why: str) -> None:
        self.result.skipped.setdefault(prefix, why)

    def methods(self, qs: np.ndarray) -> dict[str, tuple[Callable, list, int]]:
        """The checked methods at B = len(qs), each ``(fn, [input], 1)`` (time per call)."""
        B, f, W = len(qs), self.f, self.W
        x = qs[0] if B == 1 else qs
        out: dict[str, tuple[Callable, list, int]] = {
            f"direct:G:B{B}": (f, [x], 1),
            f"direct:vjp:B{B}": (lambda a: f.vjp(a, W), [x], 1),
        }
        truth = np.asarray(f(x))
        fd = loss_gradient_fd(self.model, f, qs[0], W)
        if self.jax_G is not None:
            out.update(self._jax(B, x, truth, fd))
        if self.torch_G is not None:
            out.update(self._torch(B, x, truth, fd))
        return out

    def _keep(self, name: str, error: float, tolerance: float, method, out: dict) -> None:
        self.result.errors[name] = error
        if error <= tolerance:
            out[name] = method
        else:
            self.result.skipped[name] = f"wrong result (error {error:.1e}), not timed"

    def _jax(self, B: int, x: np.ndarray, truth: np.ndarray, fd: np.ndarray) -> dict:
        import jax
        import jax.numpy as jnp

        G, Wj = self.jax_G, jnp.asarray(self.W)

        def loss(q):
            return jnp.sum(Wj * G(q))

        g, grad = (jax.jit(G), jax.jit(jax.grad(loss)))
        if B > 1:
            g, grad = jax.jit(jax.vmap(G)), jax.jit(jax.vmap(jax.grad(loss)))
        xj = jax.device_put(jnp.asarray(x))
        out: dict = {}
        value = np.asarray(g(xj))
        self.result.bitwise[f"jax:G:B{B}"] = bool(np.array_equal(value, truth))
        error = relative_error(value, truth, 1.0)
        self._keep(f"jax:G:B{B}", error, G_TOLERANCE, (blocking(g), [xj], 1), out)
        first = np.asarray(grad(xj))
        first = first if B == 1 else first[0]
        error = relative_error(first, fd)
        self._keep(f"jax:grad:B{B}", error, GRADIENT_TOLERANCE, (blocking(grad), [xj], 1), out)
        return out

    def _torch(self, B: int, x: np.ndarray, truth: np.ndarray, fd: np.ndarray) -> dict:
        import torch

        G = self.torch_G
        xt = torch.from_numpy(np.ascontiguousarray(x))
        Wt = torch.from_numpy(self.W)
        out: dict = {}
        value = G(xt).numpy()
        self.result.bitwise[f"torch:G:B{B}"] = bool(np.array_equal(value, truth))
        self._keep(
            f"torch:G:B{B}", relative_error(value, truth, 1.0), G_TOLERANCE, (G, [xt], 1), out
        )
        leaf = xt.clone().requires_grad_(True)
        W = Wt.expand(*x.shape[:-1], *Wt.shape)

        def backward(q):
            q.grad = None
            G(q).backward(W)
            return q.grad

        grad = backward(leaf).numpy()
        error = relative_error(grad if B == 1 else grad[0], fd)
        self._keep(f"torch:G+backward:B{B}", error, GRADIENT_TOLERANCE, (backward, [leaf], 1), out)
        return out


def blocking(fn: Callable) -> Callable:
    """``fn`` waiting for its result (jax dispatches asynchronously)."""
    return lambda x: fn(x).block_until_ready()


def output_buffers(fn: Callable, inputs: Sequence, calls: int = OUTPUT_PROBE) -> int:
    """How many addresses the output of ``fn(*inputs)``, a JAX array, takes in ``calls`` calls,
    each result dropped before the next.  XLA may reuse one buffer or hand out a few in turn,
    process by process; a buffer no call has just written is out of the caches at a large B,
    and each store into it waits on memory."""
    return len({fn(*inputs).unsafe_buffer_pointer() for _ in range(calls)})


def _trivial(front: Front, q: np.ndarray, cache) -> dict:
    """The trivial jitted FFI call and torch custom op, checked, as B = 1 methods; and the
    trivial jitted call followed by each direct call at ``q``."""
    from . import trivial

    out: dict = {}
    result, f, W = front.result, front.f, front.W
    if "jax" not in result.skipped:
        import jax.numpy as jnp

        fn = trivial.jax_double(cache)
        error = trivial.check(fn)
        x = jnp.arange(float(trivial.N))
        result.errors["jax:trivial"] = error
        if error == 0.0:
            out["jax:trivial:B1"] = (blocking(fn), [x], 1)
            for name, direct in (("G", f), ("vjp", lambda a: f.vjp(a, W))):
                out[f"jax:trivial+direct:{name}:B1"] = (_after(blocking(fn), x, direct), [q], 1)
    if "torch" not in result.skipped:
        import torch

        fn = trivial.torch_double(cache)
        result.errors["torch:trivial"] = trivial.check(fn, torch.from_numpy)
        if result.errors["torch:trivial"] == 0.0:
            out["torch:trivial:B1"] = (fn, [torch.arange(float(trivial.N), dtype=torch.float64)], 1)
        fn = trivial.torch_double_autograd(cache)
        leaf = torch.arange(float(trivial.N), dtype=torch.float64).requires_grad_(True)
        ones = torch.ones(trivial.N, dtype=torch.float64)

        def backward(x):
            x.grad = None
            fn(x).backward(ones)
            return x.grad

        error = trivial.check(fn, torch.from_numpy)
        result.errors["torch:trivial+backward"] = max(error, float(abs(backward(leaf) - 2).max()))
        if result.errors["torch:trivial+backward"] == 0.0:
            out["torch:trivial+backward:B1"] = (backward, [leaf], 1)
    return out


def _after(first: Callable, x, then: Callable) -> Callable:
    """``first(x)``, then ``then`` on the argument."""

    def both(a):
        first(x)
        return then(a)

    return both


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
