"""Every target of the bench as data, judged by :func:`.record.verdicts` (a row ``(target,
measured, verdict)`` each; a target whose measurement is missing says why):
:func:`timing_targets` (ratios to the faster bare Pinocchio C++ call, dG/dq, the gradient, the
large sweep's slopes; :func:`case_table` on every case), :func:`framework_targets` (the section
"JAX and PyTorch") and :func:`gpu_targets` (the section GPU).
"""

from __future__ import annotations

from .derivatives import REFERENCE, VJP
from .methods import Case, batch_name
from .names import ATLAS_6D, BATCH_SIZE, TARGET_BATCH
from .record import Measured, Row, Target, verdict, verdicts
from .scaling import Point, log_log_slope
from .text import microseconds, slope

ATLAS = "Atlas 2×6D"
PIN_BEST = "Pinocchio's faster C++ call"
EVERY = "*"  # a target's case: every case of the run
LARGE = "large sweep"  # a target's case: the large sweep

CASE_TARGETS: dict[str, tuple[str, float]] = {
    batch_name(BATCH_SIZE, 2): (f"batched generated, B = {BATCH_SIZE}, 2 threads", 0.1),
    batch_name(BATCH_SIZE, 1): (f"batched generated, B = {BATCH_SIZE}, 1 thread", 0.12),
    "codegen:pv-osimr": ("generated, one call", 0.35),
    "numpy:pv-osimr": ("numpy, one call", 60.0),
}
"""Method -> (short name, largest ratio to Pinocchio's faster C++ call that meets the target on
every case)."""


def _pin_ratio(method: str, case: str, bound: float) -> Target:
    name = CASE_TARGETS[method][0]
    where = ATLAS if case == ATLAS_6D else "every case"
    per = " per configuration" if method.startswith("codegen-batch") else ""
    text = f"{name}: ≤ {bound:g} × {PIN_BEST}{per} ({where})"
    return Target(text, case, f"pin-ratio:{method}", bound)


TIMING_TARGETS = (
    _pin_ratio(batch_name(BATCH_SIZE, 2), ATLAS_6D, 0.07),
    _pin_ratio(batch_name(BATCH_SIZE, 1), ATLAS_6D, 0.12),
    _pin_ratio(batch_name(BATCH_SIZE, 2), EVERY, 0.1),
    _pin_ratio("codegen:pv-osimr", EVERY, 0.35),
    _pin_ratio("numpy:pv-osimr", ATLAS_6D, 60.0),
    Target(
        "generated dG/dq (f.derivatives) faster than central differences of Pinocchio's C++ "
        f"computeDelassusMatrix (2·nv calls) ({ATLAS})",
        ATLAS_6D,
        f"ratio:dG:codegen/{REFERENCE}",
        1.0,
        "<",
    ),
    Target(
        f"generated gradient of ⟨W, G⟩ (f.vjp, one row): ≤ 4 × the generated G call ({ATLAS})",
        ATLAS_6D,
        f"ratio:{VJP}/codegen:pv-osimr",
        4.0,
    ),
    Target(
        "generated code on the Fig. 4a chain (large sweep): log-log slope ≤ 1.1 of its "
        "time per call and of its library's size",
        LARGE,
        "slope:codegen:pv-osimr",
        1.1,
    ),
)
"""The eight speed targets of ``timings.md``."""


def ratio(case: Case, method: str) -> float | None:
    """``method``'s median ÷ the faster bare Pinocchio call of the case (None if either is
    missing)."""
    best = case.pin_best()
    if best is None or method not in case.timings:
        return None
    return case.timings[method].median / best[1]


def _on_case(case: Case, quantity: str) -> Measured:
    """A ratio on one case: to Pinocchio's faster call, or of one method to another."""
    kind, what = quantity.split(":", 1)
    if kind == "pin-ratio":
        r, best = ratio(case, what), case.pin_best()
        if r is None:
            why = case.skipped.get(what, f"{what} not in this run")
            return Measured(None, f"not measured ({why if best else 'no Pinocchio timing'})")
        ours = microseconds(case.timings[what].median)
        return Measured(r, f"{ours} µs vs {microseconds(best[1])} µs ({best[0]}): {r:.2f}×")
    ours, base = what.split("/")
    absent = next((k for k in (ours, base) if k not in case.timings), None)
    if absent is not None:
        default = (
            "derivatives not timed on this case" if ours == "dG:codegen" else
            f"{absent} not timed on this case"
        )  # fmt: skip
        return Measured(None, f"not measured ({case.skipped.get(absent, default)})")
    a, b = case.timings[ours].median, case.timings[base].median
    return Measured(a / b, f"{microseconds(a)} µs vs {microseconds(b)} µs: {a / b:.2f}×")


def _on_every_case(cases: list[Case], quantity: str) -> Measured:
    """The worst ratio to Pinocchio over the cases (the bound holds on every case)."""
    method = quantity.split(":", 1)[1]
    if not cases:
        return Measured(None, "not measured (no case in this run)")
    ratios = {c.name: ratio(c, method) for c in cases}
    missing = [name for name, r in ratios.items() if r is None]
    if missing:
        return Measured(None, f"not measured on {', '.join(missing)}")
    worst = max(ratios, key=ratios.get)
    within = sum(r <= CASE_TARGETS[method][1] for r in ratios.values())
    shown = f"worst {ratios[worst]:.2f}× ({worst}); {within} of {len(ratios)} cases within"
    return Measured(ratios[worst], shown)


def _on_large(points: list[Point], quantity: str) -> Measured:
    """The larger of the log-log slopes of the time per call and the library's size."""
    method = quantity.split(":", 1)[1]
    built = [p for p in points if "library_bytes" in p.memory.get(method, {})]
    size = slope([p.n for p in built], [p.memory[method]["library_bytes"] for p in built])
    time = log_log_slope(points, method)
    if time is None or size is None:
        why = "not measured (the large sweep with the generated code is not in this run)"
        return Measured(None, why)
    n = [p.n for p in points if method in p.medians_us][-4:]
    shown = f"time {time:.2f}, library {size:.2f} (n = {', '.join(map(str, n))})"
    return Measured(max(time, size), shown)


def timing_targets(run_result: dict) -> list[Row]:
    """The eight speed targets of a bench run: ``(target, measured, verdict)`` each."""
    cases: list[Case] = run_result["cases"]

    def measure(target: Target) -> Measured:
        if target.case == EVERY:
            return _on_every_case(cases, target.quantity)
        if target.case == LARGE:
            return _on_large(run_result.get("large", []), target.quantity)
        case = next((c for c in cases if c.name == target.case), None)
        if case is None:
            return Measured(None, f"not measured ({target.case} not in this run)")
        return _on_case(case, target.quantity)

    return verdicts(TIMING_TARGETS, measure)


def _cell(r: float | None, bound: float, comparison: str = "<=") -> str:
    """``0.08× (met)``: a ratio and its :func:`~.record.verdict` against ``bound``."""
    return "—" if r is None else f"{r:.2f}× ({verdict(r, bound, comparison)})"


def case_table(cases: list[Case]) -> list[tuple[str, list[str]]]:
    """The targets' ratios on every case: ``(row name, one cell per case)``, the bound in the
    row name."""
    rows = [
        (f"{name} ≤ {bound:g}×", [_cell(ratio(c, method), bound) for c in cases])
        for method, (name, bound) in CASE_TARGETS.items()
    ]
    dG = [_on_case(c, f"ratio:dG:codegen/{REFERENCE}").value for c in cases]
    rows.append(
        ("generated dG/dq ÷ central differences of Pinocchio < 1×", [_cell(r, 1, "<") for r in dG])
    )
    return rows


# --------------------------------------------------------------------------- JAX and PyTorch

OVERHEAD_US = 2.0
"""The B = 1 targets' allowance on top of the direct call and the trivial call (µs)."""

TRIVIAL_LABELS = {
    "jax:trivial": "trivial jitted FFI call (2x of 8 numbers)",
    "torch:trivial": "trivial torch custom op (2x of 8 numbers)",
}


def _framework_targets(B: int | None) -> tuple[Target, ...]:
    """The five targets of the section "JAX and PyTorch", the ratios read at batch ``B``."""
    at = f"at B = {B or 'its largest'}"

    def direct_ratio(what: str, method: str, base: str, bound: float) -> Target:
        text = f"{what} {at} ≤ {bound:g}× the direct call ({ATLAS})"
        return Target(text, ATLAS_6D, f"ratio:{method}/{base}", bound)

    def overhead(what: str, method: str, base: str, trivial: str) -> Target:
        text = (
            f"{what} at B = 1 ≤ direct + {TRIVIAL_LABELS[trivial]} + {OVERHEAD_US:g} µs ({ATLAS})"
        )
        return Target(text, ATLAS_6D, f"overhead:{method}/{base}/{trivial}", OVERHEAD_US)

    return (
        direct_ratio("jit(vmap(G))", "jax:G", "direct:G", 1.15),
        direct_ratio("jit(vmap(grad(loss)))", "jax:grad", "direct:vjp", 1.2),
        overhead("jit(G)", "jax:G", "direct:G", "jax:trivial"),
        overhead("jit(grad(loss))", "jax:grad", "direct:vjp", "jax:trivial"),
        overhead("torch eager forward", "torch:G", "direct:G", "torch:trivial"),
    )


def median_us(case: dict, method: str, B: int) -> float | None:
    """The median µs per call (a whole batch) of ``method`` at ``B`` in a case's JSON of the
    section "JAX and PyTorch"."""
    t = case["timings"].get(f"{method}:B{B}")
    return None if t is None else t["median_us"]


def _front_end(case: dict | None, quantity: str, B: int | None) -> Measured:
    """A front end's ratio to the direct call at ``B``, or its overhead over direct + trivial
    at B = 1 (µs)."""
    kind, keys = quantity.split(":", 1)
    method, base, *trivial = keys.split("/")
    at = 1 if trivial else B
    if at is None:
        return Measured(None, "not measured: no B > 1 in the run")
    if case is None:
        return Measured(None, f"not measured: no {ATLAS_6D} in the run")
    times_us = [median_us(case, k, at) for k in (method, base, *trivial)]
    if None in times_us:
        skipped = case["skipped"]
        why = skipped.get(f"{method}:B{at}") or skipped.get(method.split(":")[0])
        default = "B = 1 not in the run" if trivial else "not in the run"
        return Measured(None, f"not measured: {why or default}")
    times = [t * 1e-6 for t in times_us]  # seconds
    if kind == "ratio":
        a, b = times
        return Measured(a / b, f"{a / b:.2f}× ({microseconds(a)} vs {microseconds(b)} µs)")
    t, d, z = times
    bound = d + z + OVERHEAD_US * 1e-6
    terms = " + ".join([microseconds(d), microseconds(z), f"{OVERHEAD_US:g}"])
    shown = f"{microseconds(t)} µs; bound {terms} µs = {microseconds(bound)} µs"
    after = median_us(case, f"{trivial[0]}+{base}", 1)
    if after is not None:  # the direct call in the caches JAX's dispatch leaves
        shown += f" (the direct call after the trivial call: {microseconds(after * 1e-6 - z)} µs)"
    return Measured((t - d - z) * 1e6, shown)


def framework_targets(section: dict) -> list[Row]:
    """The five timing targets of the section "JAX and PyTorch" (its JSON): ``(target,
    measured, verdict)``, the ratios at the largest B of the run."""
    case = next((c for c in section["cases"] if c["name"] == ATLAS_6D), None)
    B = max((b for b in section["batches"] if b > 1), default=None)
    return verdicts(_framework_targets(B), lambda t: _front_end(case, t.quantity, B))


# --------------------------------------------------------------------------- GPU


def _on_gpu(text: str, quantity: str, bound: float, batch: int = TARGET_BATCH) -> Target:
    """A GPU target on Atlas 2×6D at ``batch``: ``quantity`` is ``"key:dtype"`` (a row's
    ``key_s``) or ``"a/b:dtype"`` (the ratio of two), or a key of the run itself."""
    return Target(f"{text} ({ATLAS}, B = {batch:,})", ATLAS_6D, quantity, bound,
                  missing="not measured")  # fmt: skip


GPU_TARGETS = (
    _on_gpu("G, float64, ≤ 0.02 µs per q", "G:float64", 0.02e-6),
    _on_gpu("its gradient ≤ 4× G, float64", "grad/G:float64", 4.0),
    _on_gpu("G, float32, ≤ 0.01 µs per q", "G:float32", 0.01e-6),
    _on_gpu("the CUDA kernels agree with the CPU library before timing", "kernel_checks", 1.0),
    _on_gpu("CUDA kernel: G, float64, ≤ 0.02 µs per q", "cuda_G:float64", 0.02e-6),
    _on_gpu("CUDA kernel: G, float32, ≤ 0.01 µs per q", "cuda_G:float32", 0.01e-6),
    _on_gpu("CUDA kernel: its gradient ≤ 4× G, float64", "cuda_grad/cuda_G:float64", 4.0),
    _on_gpu("CUDA kernel: G ≥ 10× as fast as the XLA route's, float64", "cuda_G/G:float64", 0.1),
    _on_gpu("CUDA kernel: G ≥ 5× as fast as the host's batched C", "cuda_G/cpu_c:float64", 0.2),
    _on_gpu("one call from JAX ≤ 50 µs end to end, float64", "jax_cuda_call", 50e-6, batch=1024),
)
"""The GPU targets (the first three the XLA route's, then the CUDA kernels')."""


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.3g} µs"


def gpu_targets(result: dict) -> list[Row]:
    """The GPU targets, ``(target, measured, verdict)`` (``not measured`` where the run has no
    row or reading of the target)."""
    rows = {(r["case"], r["batch"], r["dtype"]): r for r in result.get("gpu", ())}
    why = "no GPU present" if not result.get("gpus") else "not in the run"

    def measure(target: Target) -> Measured:
        if target.quantity == "kernel_checks":
            return _agreement(result, target.case)
        if target.quantity == "jax_cuda_call":
            seconds = result.get("jax_cuda_call_s")
            shown = _us(seconds) if seconds else f"not measured: {result.get('jax_cuda', why)}"
            return Measured(seconds, shown)
        quantity, dtype = target.quantity.split(":")
        row = rows.get((target.case, TARGET_BATCH, dtype), {})
        keys = [f"{k}_s" for k in quantity.split("/")]
        if any(row.get(k) is None for k in keys):
            return Measured(None, f"not measured: {why}")
        if len(keys) == 1:
            return Measured(row[keys[0]], _us(row[keys[0]]))
        r = row[keys[0]] / row[keys[1]]
        return Measured(r, f"{r:.2f}×" if target.bound >= 1 else f"{1 / r:.1f}× as fast")

    return verdicts(GPU_TARGETS, measure)


def _agreement(result: dict, case: str) -> Measured:
    """The largest error of the case's kernels on the GPU over its tolerance (≤ 1: agreed)."""
    checks = result.get("kernel_checks", {}).get(case)
    if not checks:
        return Measured(None, "not measured: no CUDA kernel checked in the run")
    failed = [f"{dtype}: {c['error']}" for dtype, c in checks.items() if "error" in c]
    if failed:
        return Measured(float("inf"), "; ".join(failed))
    worst = {d: max(c.values()) for d, c in checks.items()}
    ratio = max(worst[d] / result["tolerances"][d] for d in worst)
    return Measured(ratio, ", ".join(f"{d} {e:.1e}" for d, e in worst.items()))
