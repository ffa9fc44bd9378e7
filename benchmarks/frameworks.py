"""The section "JAX and PyTorch": pvosimr's G inside jit, vmap, grad and torch autograd, against
the direct calls of the same library in the same run (docs/jax-torch.md: what and why).

Per case and batch size B, every method of :data:`METHODS` is built on the same configurations,
checked (G against ``f(qs)``, a gradient against central differences of ``f``, a trivial call
against 2x: a method that disagrees is reported, not timed) and timed as ``<method>:B<B>`` in
the interleaved rounds of :func:`.loop.time_methods`; frax's dense route (:mod:`.frax_route`)
beside pvosimr on frax's G1.  A case's result is its JSON, which the report and targets read.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from pvosimr.extras import install_hint, missing_extra
from pvosimr.study.record import row, table

from . import frax_route
from .derivatives import weights
from .loop import Timing, time_methods, timings_json
from .names import ATLAS_6D, FRAMEWORK_BATCHES, SHADOW_3D, TOLERANCES
from .record import relative_error, target_json, target_lines
from .targets import TRIVIAL_LABELS, framework_targets, median_us
from .text import TEMPLATES, prose, timing_cell

FRAMEWORK_CASES = (ATLAS_6D, SHADOW_3D)
"""The section's cases by default: Atlas 2×6D (the targets' case) and the Shadow hand."""
G_TOLERANCE = TOLERANCES["front-end"]  # max|ΔG| / max(1, max|G|) against f(qs)
GRADIENT_TOLERANCE = TOLERANCES["gradient"]  # max|Δg| / max|g| against central differences
STEP = 1e-6  # h of the central differences on q's coordinates
OUTPUT_PROBE = 20  # jitted calls after a batch's timing whose output addresses are counted
HEADING = "## JAX and PyTorch"
WHO = 'pvosimr bench, section "JAX and PyTorch"'
AGREEMENT_CONFIGS = 8
AGREEMENT_KEY = "frax-vs-pinocchio"
ONE_CALL_FROM = 512
"""From this B on, a sample is one call (frax's batched gradient lasts seconds; the shared
loop's calibration would spend six calls on it before the first sample)."""


def _result(name: str, nv: int, m: int) -> dict:
    """A case of the section as its JSON, filled as it is measured: its timings per
    ``<method>:B<B>``, the reasons some are not timed, the checks' errors, whether each front
    end's G equals ``f(qs)`` bitwise, :func:`output_buffers` per B > 1."""
    fields = ("timings", "skipped", "errors", "bitwise", "output_buffers")
    return {"name": name, "nv": nv, "m": m, **{k: {} for k in fields}}


# ------------------------------------------------------------------- the trivial baselines

N = 8
"""How many numbers the trivial calls double."""
FFI_TARGET, TORCH_OP = "pvosimr_bench_double", "pvosimr_bench::double"
SOURCE = (TEMPLATES / "trivial_ffi.cc").read_text(encoding="utf-8")
"""An XLA FFI handler and a plain C function, both doubling float64 numbers: what JAX or torch
takes to dispatch any foreign function, which the B = 1 targets allow."""
_LOADED: dict[str, Any] = {}


def build(cache: Path | None = None) -> Path:
    """The shared library of :data:`SOURCE`, compiled once per jaxlib and compiler (``-O2
    -std=c++17``, against ``jax.ffi.include_dir()``) into pvosimr's cache folder ``bench/``;
    RuntimeError with the compiler's output when it fails."""
    import jax
    import jax.ffi

    from pvosimr.codegen import compiler as toolchain

    include = jax.ffi.include_dir()
    compiler = toolchain.find_compiler("c++", needed_by="pvosimr bench (trivial FFI call)")
    flags = ["-O2", "-std=c++17", "-shared", "-fPIC", f"-I{include}"]
    key = "\n".join([SOURCE, jax.__version__, include, *compiler, *flags]).encode()
    folder = (cache or toolchain.cache_dir()) / "bench"
    library = folder / f"trivial-{hashlib.sha256(key).hexdigest()[:16]}.so"
    if not library.exists():
        folder.mkdir(parents=True, exist_ok=True)
        source, partial = library.with_suffix(".cc"), library.with_suffix(".so.part")
        source.write_text(SOURCE, encoding="utf-8")
        command = [*compiler, *flags, str(source), "-o", str(partial)]
        toolchain.run_compiler(command, RuntimeError, "building the trivial FFI call")
        partial.replace(library)  # atomic: a concurrent run never loads half a file
    return library


@functools.cache
def _library(cache: Path | None) -> ctypes.CDLL:
    library = ctypes.CDLL(str(build(cache)))
    c = library.pvosimr_bench_double_c
    c.argtypes, c.restype = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64], None
    return library


def _doubled(cache: Path | None) -> Callable:
    """2x of a float64 CPU tensor by the C function, through ctypes."""
    import torch

    function = _library(cache).pvosimr_bench_double_c

    def doubled(x: torch.Tensor) -> torch.Tensor:
        x = x.detach().contiguous()
        out = torch.empty_like(x)
        function(x.data_ptr(), out.data_ptr(), x.numel())
        return out

    return doubled


def jax_double(cache: Path | None = None) -> Callable:
    """``jax.jit`` of the FFI call that returns 2x (float64, any shape; works under vmap)."""
    import jax
    import jax.ffi

    library = _library(cache)
    if FFI_TARGET not in _LOADED:
        capsule = jax.ffi.pycapsule(library.pvosimr_bench_double)
        _LOADED[FFI_TARGET] = jax.ffi.register_ffi_target(FFI_TARGET, capsule, platform="cpu")

    def double(x):
        out = jax.ShapeDtypeStruct(x.shape, x.dtype)
        return jax.ffi.ffi_call(FFI_TARGET, out, vmap_method="broadcast_all")(x)

    return _LOADED.setdefault("jit", jax.jit(double))  # one jitted function, compiled once


def torch_double(cache: Path | None = None) -> Callable:
    """A ``torch.library`` custom op that returns 2x through ctypes (float64, CPU)."""
    import torch

    if TORCH_OP not in _LOADED:
        doubled = _doubled(cache)
        double = torch.library.custom_op(TORCH_OP, mutates_args=(), schema="(Tensor x) -> Tensor")
        _LOADED[TORCH_OP] = double(lambda x: doubled(x))
        _LOADED[TORCH_OP].register_fake(lambda x: torch.empty_like(x))
    return _LOADED[TORCH_OP]


def torch_backward(cache: Path | None = None) -> tuple[Callable, Any]:
    """2x through ctypes as a ``torch.autograd.Function`` whose backward doubles the cotangent
    the same way (pvosimr.torch's eager calls with a gradient take this route): ``(backward,
    leaf)``, ``backward(leaf)`` the forward and backward of :data:`N` numbers, returning the
    gradient (2 each)."""
    import torch

    doubled = _doubled(cache)

    class Double(torch.autograd.Function):
        forward = staticmethod(lambda ctx, x: doubled(x))
        backward = staticmethod(lambda ctx, grad: doubled(grad))

    leaf, ones = numbers("torch").clone().requires_grad_(True), torch.ones(N, dtype=torch.float64)

    def backward(x: torch.Tensor) -> torch.Tensor:
        x.grad = None
        Double.apply(x).backward(ones)
        return x.grad

    backward.forward = Double.apply  # type: ignore[attr-defined]  # for check_backward
    return backward, leaf


def numbers(kind: str) -> Any:
    """The :data:`N` numbers 1 … N in float64 as a ``"jax"`` or ``"torch"`` array."""
    module = importlib.import_module("jax.numpy" if kind == "jax" else "torch")
    return module.asarray(np.arange(1.0, N + 1.0))


def check(fn: Callable, kind: str = "jax") -> float:
    """Largest error of ``fn`` on :func:`numbers` of ``kind`` against 2x."""
    return float(np.max(np.abs(np.asarray(fn(numbers(kind))) - 2.0 * np.arange(1.0, N + 1.0))))


def check_backward(backward: Callable, leaf: Any) -> float:
    """Largest error of :func:`torch_backward`'s forward (against 2x) and gradient (2)."""
    forward = check(lambda x: backward.forward(x).detach(), "torch")
    return max(forward, float(np.max(np.abs(backward(leaf).numpy() - 2.0))))


# ----------------------------------------------------------------------------- the methods


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


@dataclass
class Batch:
    """What the builders of :data:`METHODS` share at one B: the compiled ``f``, the front ends,
    ``x`` (one q at B = 1, else the B configurations), the weights W of the loss.  A builder
    returns ``(fn, argument, check)``: "G" or "grad" to check, a trivial call's error, or None
    (a direct call, the truth itself)."""

    f: Any
    fronts: dict[str, Callable]
    x: np.ndarray
    W: np.ndarray
    cache: Any = None

    def direct(self, vjp: bool = False) -> tuple:
        return ((lambda a: self.f.vjp(a, self.W)) if vjp else self.f), self.x, None

    def jax(self, gradient: bool = False) -> tuple:
        import jax
        import jax.numpy as jnp

        g, grad = jitted(self.fronts["jax"], jnp.asarray(self.W), self.x.ndim > 1)
        x = jax.device_put(jnp.asarray(self.x))
        return (blocking(grad), x, "grad") if gradient else (blocking(g), x, "G")

    def torch(self, backward: bool = False) -> tuple:
        import torch

        G, x = self.fronts["torch"], torch.from_numpy(np.ascontiguousarray(self.x))
        W = torch.from_numpy(self.W).expand(*self.x.shape[:-1], *self.W.shape)

        def forward_backward(q):
            q.grad = None
            G(q).backward(W)
            return q.grad

        return (
            (forward_backward, x.clone().requires_grad_(True), "grad") if backward else (G, x, "G")
        )

    def after_trivial(self, direct: tuple) -> tuple:
        """The trivial jitted call, then the direct call (in the caches a JAX dispatch leaves)."""
        trivial, numbers_, (fn, x, _) = blocking(jax_double(self.cache)), numbers("jax"), direct

        def both(a):
            trivial(numbers_)
            return fn(a)

        return both, x, None

    def trivial(self, kind: str) -> tuple:
        fn = jax_double(self.cache) if kind == "jax" else torch_double(self.cache)
        return blocking(fn) if kind == "jax" else fn, numbers(kind), check(fn, kind)

    def trivial_backward(self) -> tuple:
        backward, leaf = torch_backward(self.cache)
        return backward, leaf, check_backward(backward, leaf)


METHODS: dict[str, tuple[str, Callable[[Batch], tuple] | None]] = {
    "direct:G": ("direct f(qs) (f(q) at B = 1)", Batch.direct),
    "direct:vjp": ("direct f.vjp(qs, W)", lambda s: s.direct(True)),
    "jax:G": ("jit(G) (B = 1), jit(vmap(G))", Batch.jax),
    "jax:grad": ("jit(grad(loss)) (B = 1), jit(vmap(grad(loss)))", lambda s: s.jax(True)),
    "torch:G": ("torch forward", Batch.torch),
    "torch:G+backward": ("torch forward + backward(W)", lambda s: s.torch(True)),
    "jax:trivial": (TRIVIAL_LABELS["jax:trivial"], lambda s: s.trivial("jax")),
    "jax:trivial+direct:G": (
        "trivial jitted FFI call, then direct f(q)",
        lambda s: s.after_trivial(s.direct()),
    ),
    "jax:trivial+direct:vjp": (
        "trivial jitted FFI call, then direct f.vjp(q, W)",
        lambda s: s.after_trivial(s.direct(True)),
    ),
    "torch:trivial": (TRIVIAL_LABELS["torch:trivial"], lambda s: s.trivial("torch")),
    "torch:trivial+backward": (
        "trivial torch autograd.Function, forward + backward (2x of 8)",
        Batch.trivial_backward,
    ),
    "frax:G": ("frax dense J M⁻¹ Jᵀ, jit (B = 1), jit(vmap(·))", None),
    "frax:grad": ("frax dense, jit(grad(loss)) (B = 1), jit(vmap(grad(loss)))", None),
}
"""Method -> (its label in the report, its builder), in the order of the rounds and of the
tables.  A method needs its front end (the name's first part); the trivial ones run at B = 1
only, the direct call after the trivial one where that passed; frax's are built on its G1."""


def _loss_gradient_fd(model: pin.Model, G: Callable, q: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Central differences of ⟨W, G(normalize(q))⟩ in q's coordinates; ``G`` takes a batch."""
    steps = np.concatenate([np.eye(model.nq), -np.eye(model.nq)]) * STEP
    losses = np.einsum("bij,ij->b", G(np.stack([pin.normalize(model, q + s) for s in steps])), W)
    return (losses[: model.nq] - losses[model.nq :]) / (2 * STEP)


def fronts(model, cms, result: dict, extras=("jax", "torch")) -> dict[str, Callable]:
    """``pvosimr.<extra>.delassus`` of the case per extra; the reason recorded where missing."""
    out = {}
    for extra in extras:
        why = f"{extra} is not installed" if missing_extra(extra) is not None else None
        try:
            if why is None:
                out[extra] = importlib.import_module(f"pvosimr.{extra}").delassus(model, cms)
        except ImportError as exc:
            why = f"pvosimr.{extra} unavailable ({exc})"
        if why is not None:
            result["skipped"].setdefault(extra, why)
    return out


def methods(s: Batch, model, qs, result: dict, trivial: bool = True) -> dict:
    """The methods of :data:`METHODS` at B = len(qs) that passed their check."""
    B, out = len(qs), {}
    truth, fd = np.asarray(s.f(s.x)), _loss_gradient_fd(model, s.f, qs[0], s.W)
    for name, (_, build) in METHODS.items():
        front, key = name.split(":")[0], f"{name}:B{B}"
        skip = "trivial" in name and (B > 1 or not trivial)
        if build is None or skip or front not in ("direct", *s.fronts):
            continue
        if "+direct" in name and "jax:trivial:B1" not in out:
            continue
        fn, x, kind = build(s)
        error = kind  # a trivial call's error against 2x, or None: a direct call
        if kind == "G":
            y = np.asarray(fn(x))
            result["bitwise"][key] = bool(np.array_equal(y, truth))
            error = relative_error(y, truth, 1.0)
        elif kind == "grad":
            y = np.asarray(fn(x))
            error = relative_error(y[0] if y.ndim > 1 else y, fd)
        tolerance = {"G": G_TOLERANCE, "grad": GRADIENT_TOLERANCE}.get(kind, 0.0)
        if error is not None:
            result["errors"][key] = error
        if error is None or error <= tolerance:
            out[key] = (fn, [x], 1)
        else:
            result["skipped"][key] = f"wrong result (error {error:.1e}), not timed"
    return out


def time_robot(robot, batches: Sequence[int], repeats: int, seed: int, cache_dir=None) -> dict:
    """The section on one zoo robot case (``zoo.load_case``'s result), as JSON."""
    from pvosimr import codegen

    result = _result(f"{robot.name}/{robot.preset}", robot.model.nv, robot.m)
    f = codegen.compile(robot.model, robot.constraints, vjp=True, cache_dir=cache_dir)
    front_ends = fronts(robot.model, robot.constraints, result)
    rng = np.random.default_rng(seed)
    for B in batches:
        qs = np.stack([robot.q_random(rng) for _ in range(B)])
        s = Batch(f, front_ends, qs[0] if B == 1 else qs, weights(robot.m), cache_dir)
        timed = methods(s, robot.model, qs, result)
        result["timings"] |= timings_json(time_methods(timed, repeats))
        if B > 1 and f"jax:G:B{B}" in timed:  # the timing's allocator state, just after it
            fn, inputs, _ = timed[f"jax:G:B{B}"]
            result["output_buffers"][f"jax:G:B{B}"] = output_buffers(fn, inputs)
    return result


def time_frax(batches: Sequence[int], repeats: int, seed: int, cache_dir=None) -> dict:
    """frax's dense G and gradient (:func:`jitted`) beside pvosimr's direct calls and JAX front
    end on the same configurations of frax's G1, per B, in the same rounds, after
    :func:`.frax_route.agreement` passed (a failed agreement is recorded, nothing is timed)."""
    import jax
    import jax.numpy as jnp

    from pvosimr import codegen

    case = frax_route.load()
    result = _result(frax_route.ROBOT, case.model.nv, case.m)
    rng = np.random.default_rng(seed)
    error = frax_route.agreement(case, case.random_q(rng, AGREEMENT_CONFIGS))
    result["errors"][AGREEMENT_KEY] = error
    if not error <= (bound := frax_route.AGREEMENT_TOLERANCE):
        why = f"frax's G and pvosimr's disagree (error {error:.1e} > {bound:g}): nothing timed"
        result["skipped"]["frax"] = why
        return result
    f = codegen.compile(case.model, case.cms, vjp=True, cache_dir=cache_dir)
    front_ends, W = fronts(case.model, case.cms, result, ("jax",)), weights(case.m)
    for B in batches:
        qs = case.random_q(rng, B)
        g, grad = jitted(case.dense_g, jnp.asarray(W), B > 1)
        x = jax.device_put(jnp.asarray(qs[0] if B == 1 else qs))
        timed = {f"frax:G:B{B}": (blocking(g), [x], 1), f"frax:grad:B{B}": (blocking(grad), [x], 1)}
        for fn, inputs, _ in timed.values():
            fn(*inputs)  # compiled here, before the rounds
        p = case.pinocchio_q(qs)
        timed |= methods(
            Batch(f, front_ends, p[0] if B == 1 else p, W), case.model, p, result, False
        )
        number = 1 if B >= ONE_CALL_FROM else None  # frax's methods were called once already
        result["timings"] |= timings_json(time_methods(timed, repeats, number))
    return result


def time_frameworks(
    cases: Sequence[str] = FRAMEWORK_CASES,
    *,
    batches: Sequence[int] = FRAMEWORK_BATCHES,
    frax_batches: Sequence[int] | None = None,
    repeats: int = 15,
    seed: int = 0,
    cache_dir=None,
) -> dict:
    """The section's run as JSON: ``{"cases", "frax", "unavailable", "missing", "settings",
    ...}``. ``frax_batches`` defaults to B = 1 and the largest of ``batches``; empty: no frax."""
    from pvosimr import zoo
    from pvosimr.codegen.call import usable_cores

    frax_batches = sorted({1, max(batches)}) if frax_batches is None else list(frax_batches)
    missing = [m for m in ("jax", "torch") if missing_extra(m) is not None]
    out: dict = {"batches": list(batches), "cases": [], "unavailable": {}, "frax": None}
    out |= {"threads": usable_cores(), "missing": missing, "frax_batches": frax_batches}
    if "jax" not in missing:
        out["settings"] = frax_route.jax_settings()  # float64 on
        try:  # first: frax's XLA flags apply only before jax starts its backend
            if frax_batches:
                out["settings"] = frax_route.import_frax()[1]
        except ImportError:
            out["unavailable"]["frax"] = install_hint(f"{WHO}, frax's dense route", "frax")
    for spec in cases:
        try:
            robot = zoo.load_case(spec)
        except (FileNotFoundError, ModuleNotFoundError) as exc:
            out["unavailable"][spec] = str(exc).split(". ")[0]
            continue
        out["cases"].append(time_robot(robot, batches, repeats, seed, cache_dir))
    if frax_batches and "frax" not in out["unavailable"] and "jax" not in missing:
        out["frax"] = time_frax(frax_batches, repeats, seed, cache_dir)
    return out


# ------------------------------------------------------------------------------ the report

BASES = {
    "jax:G": ("direct:G",),
    "torch:G": ("direct:G",),
    "jax:grad": ("direct:vjp",),
    "torch:G+backward": ("direct:G", "direct:vjp"),
}
"""The direct calls each front end's ratio divides by (their sum)."""
FRAX_RATIOS = (
    ("G", "frax:G", "jax:G", "direct:G"),
    ("gradient", "frax:grad", "jax:grad", "direct:vjp"),
)
"""frax's table: its ratios ``(what, frax's, pvosimr's, pvosimr's without jax)``, whose
methods are its rows in this order."""


def _cell(case: dict, method: str, B: int) -> str:
    """``median [p25–p75]`` (µs), with the ratio to the direct calls in brackets."""
    key = f"{method}:B{B}"
    if key not in case["timings"]:
        return "wrong result" if key in case["skipped"] else "—"
    t = case["timings"][key]
    bases = [median_us(case, k, B) for k in BASES.get(method, ())]
    ratio = f" ({t['median_us'] / sum(bases):.2f}×)" if bases and None not in bases else ""
    return timing_cell(Timing.from_json(t)) + ratio


def _table(case: dict, batches: Sequence[int], rows: Sequence[str]) -> list[str]:
    timed = [k for k in rows if any(f"{k}:B{B}" in case["timings"] for B in batches)]
    body = [[METHODS[k][0], *(_cell(case, k, B) for B in batches)] for k in timed]
    return table(["method", *(f"B = {B}" for B in batches)], body)


def _checks(case: dict) -> str:
    parts = ", ".join(f"{k} {e:.1e}" for k, e in case["errors"].items()) or "none"
    text = f"Checks before timing (max relative error): {parts}."
    if bitwise := case.get("bitwise"):
        equal = sum(bitwise.values())
        text += f" G bitwise equal to f(qs): {equal} of {len(bitwise)} front-end calls."
    skipped = "; ".join(f"{k}: {why}" for k, why in case["skipped"].items())
    return text + (f" Not timed: {skipped}." if skipped else "")


def _case(case: dict, batches: Sequence[int]) -> list[str]:
    out = ["", f"### {case['name']} (nv {case['nv']}, m {case['m']})", ""]
    out += [*_table(case, batches, [k for k in METHODS if not k.startswith("frax")]), ""]
    out.append(_checks(case))
    if probed := case.get("output_buffers"):  # XLA's output buffers (:func:`output_buffers`)
        counts = ", ".join(f"{n} at B = {k.rsplit(':B', 1)[1]}" for k, n in probed.items())
        out += ["", prose("frameworks", "buffers", probe=OUTPUT_PROBE, counts=counts)]
    return out


def _frax(result: dict | None, batches: Sequence[int]) -> list[str]:
    if result is None:
        return []
    head = f"### Against frax's dense route: {result['name']} (nv {result['nv']}, m {result['m']})"
    error, bound = result["errors"].get(AGREEMENT_KEY), f"{frax_route.AGREEMENT_TOLERANCE:g}"
    agreement = (
        "" if error is None else prose("frameworks", "frax", error=f"{error:.1e}", bound=bound)
    )
    out = ["", head, "", agreement, ""]
    if "frax" in result["skipped"] and not result["timings"]:
        return [*out, f"Not timed: {result['skipped']['frax']}"]
    out += _table(result, batches, [k for ratio in FRAX_RATIOS for k in ratio[1:]])
    for what, frax, mine, direct in FRAX_RATIOS:
        if not any(median_us(result, mine, B) for B in batches):  # no pvosimr.jax: the direct call
            mine = direct
        times = [(median_us(result, frax, B), median_us(result, mine, B)) for B in batches]
        cells = [f"{a / b:.1f}×" if a and b else "—" for a, b in times]
        out.append(row(f"**ratio frax ÷ pvosimr ({METHODS[mine][0]}), {what}**", cells))
    return [*out, "", _checks(result)]


def lines(section: dict | None) -> list[str]:
    """The section's markdown lines from its JSON (nothing where the run did not ask for it)."""
    if section is None:
        return []
    out = ["", HEADING, "", *(f"Not run: {install_hint(WHO, m)}" for m in section["missing"])]
    tolerances = {
        "g_tolerance": f"{G_TOLERANCE:g}",
        "gradient_tolerance": f"{GRADIENT_TOLERANCE:g}",
    }
    out += [prose("frameworks", "note", **tolerances), ""]
    out.append(prose("frameworks", "threads", threads=section.get("threads")))
    if "settings" in section:
        out += ["", "JAX: " + ", ".join(f"{k} = {v}" for k, v in section["settings"].items())]
    out += ["", *target_lines(framework_targets(section))]
    for case in section["cases"]:
        out += _case(case, section["batches"])
    out += _frax(section.get("frax"), section.get("frax_batches", []))
    return out + [
        f"\n{spec}: not available ({why})" for spec, why in section["unavailable"].items()
    ]


def jsonable(section: dict | None) -> dict | None:
    """The section as plain data, its targets included."""
    if section is None:
        return None
    return section | {"targets": target_json(framework_targets(section))}
