"""The section "JAX and PyTorch" of ``timings.md``: its run (:mod:`.frameworks` on the robot
cases; :func:`time_frax` on frax's G1), its tables, and its targets
(:func:`.targets.framework_targets`); one line saying what to install where jax or torch is
missing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pvosimr.extras import install_hint, missing_extra
from pvosimr.study.record import row, table

from . import frax_route
from .derivatives import weights
from .frameworks import (
    FRAMEWORK_CASES,
    G_TOLERANCE,
    GRADIENT_TOLERANCE,
    OUTPUT_PROBE,
    FrameworkResult,
    Front,
    blocking,
    jitted,
    time_robot,
)
from .loop import time_methods
from .names import FRAMEWORK_BATCHES
from .record import target_json, target_lines
from .targets import TRIVIAL_LABELS, framework_targets
from .text import prose, timing_cell

HEADING = "## JAX and PyTorch"
WHO = 'pvosimr bench, section "JAX and PyTorch"'

LABELS = {
    "direct:G": "direct f(qs) (f(q) at B = 1)",
    "direct:vjp": "direct f.vjp(qs, W)",
    "jax:G": "jit(G) (B = 1), jit(vmap(G))",
    "jax:grad": "jit(grad(loss)) (B = 1), jit(vmap(grad(loss)))",
    "torch:G": "torch forward",
    "torch:G+backward": "torch forward + backward(W)",
    "jax:trivial": TRIVIAL_LABELS["jax:trivial"],
    "jax:trivial+direct:G": "trivial jitted FFI call, then direct f(q)",
    "jax:trivial+direct:vjp": "trivial jitted FFI call, then direct f.vjp(q, W)",
    "torch:trivial": TRIVIAL_LABELS["torch:trivial"],
    "torch:trivial+backward": "trivial torch autograd.Function, forward + backward (2x of 8)",
    "frax:G": "frax dense J M⁻¹ Jᵀ, jit (B = 1), jit(vmap(·))",
    "frax:grad": "frax dense, jit(grad(loss)) (B = 1), jit(vmap(grad(loss)))",
}
"""The section's methods as the report names them, in the order of its tables."""

BASES = {
    "jax:G": ("direct:G",),
    "torch:G": ("direct:G",),
    "jax:grad": ("direct:vjp",),
    "torch:G+backward": ("direct:G", "direct:vjp"),
}
"""The direct calls each front end's ratio divides by (their sum)."""

AGREEMENT_CONFIGS = 8
AGREEMENT_KEY = "frax-vs-pinocchio"
ONE_CALL_FROM = 512
"""From this B on, a sample is one call (frax's batched gradient lasts seconds; the shared
loop's calibration would spend six calls on it before the first sample)."""


FRAX_ROWS = ("frax:G", "jax:G", "direct:G", "frax:grad", "jax:grad", "direct:vjp")
FRAX_RATIOS = (
    ("G", "frax:G", "jax:G", "direct:G"),
    ("gradient", "frax:grad", "jax:grad", "direct:vjp"),
)
"""frax's table: its rows, and its ratios ``(what, frax's, pvosimr's, pvosimr's without jax)``."""


def time_frameworks(
    cases: Sequence[str] = FRAMEWORK_CASES,
    *,
    batches: Sequence[int] = FRAMEWORK_BATCHES,
    frax_batches: Sequence[int] | None = None,
    repeats: int = 15,
    seed: int = 0,
    cache_dir=None,
) -> dict:
    """The section's run: ``{"cases", "frax", "unavailable", "missing", "settings", ...}``.
    ``frax_batches`` defaults to B = 1 and the largest of ``batches``; empty: no frax."""
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


def time_frax(batches: Sequence[int], repeats: int, seed: int, cache_dir=None) -> FrameworkResult:
    """frax's dense G and gradient (:func:`.frameworks.jitted`) beside pvosimr's direct calls
    and JAX front end on the same configurations of frax's G1, per B, in the same rounds, after
    :func:`.frax_route.agreement` passed (a failed agreement is recorded, nothing is timed)."""
    import jax
    import jax.numpy as jnp

    from pvosimr import codegen

    case = frax_route.load()
    result = FrameworkResult(frax_route.ROBOT, case.model.nv, case.m)
    rng = np.random.default_rng(seed)
    error = frax_route.agreement(case, case.random_q(rng, AGREEMENT_CONFIGS))
    result.errors[AGREEMENT_KEY] = error
    if not error <= frax_route.AGREEMENT_TOLERANCE:
        bound = frax_route.AGREEMENT_TOLERANCE
        why = f"frax's G and pvosimr's disagree (error {error:.1e} > {bound:g}): nothing timed"
        result.skipped["frax"] = why
        return result
    f = codegen.compile(case.model, case.cms, vjp=True, cache_dir=cache_dir)
    front = Front(case.model, case.cms, f, result, torch=False)
    for B in batches:
        qs = case.random_q(rng, B)
        g, grad = jitted(case.dense_g, jnp.asarray(weights(case.m)), B > 1)
        x = jax.device_put(jnp.asarray(qs[0] if B == 1 else qs))
        methods = {
            f"frax:G:B{B}": (blocking(g), [x], 1),
            f"frax:grad:B{B}": (blocking(grad), [x], 1),
        }
        for fn, inputs, _ in methods.values():
            fn(*inputs)  # compiled here, before the rounds
        methods |= front.methods(case.pinocchio_q(qs))
        number = 1 if B >= ONE_CALL_FROM else None  # frax's methods were called once already
        result.timings.update(time_methods(methods, repeats, number))
    return result


def _cell(case: FrameworkResult, method: str, B: int) -> str:
    """``median [p25–p75]`` (µs), with the ratio to the direct calls in brackets."""
    key = f"{method}:B{B}"
    if key not in case.timings:
        return "wrong result" if key in case.skipped else "—"
    bases = [case.median(k, B) for k in BASES.get(method, ())]
    ratio = f" ({case.median(method, B) / sum(bases):.2f}×)" if bases and None not in bases else ""
    return timing_cell(case.timings[key]) + ratio


def _table(case: FrameworkResult, batches: Sequence[int], methods: Sequence[str]) -> list[str]:
    timed = [k for k in methods if any(f"{k}:B{B}" in case.timings for B in batches)]
    rows = [[LABELS[k], *(_cell(case, k, B) for B in batches)] for k in timed]
    return table(["method", *(f"B = {B}" for B in batches)], rows)


def _checks(case: FrameworkResult) -> str:
    parts = ", ".join(f"{k} {e:.1e}" for k, e in case.errors.items()) or "none"
    text = f"Checks before timing (max relative error): {parts}."
    if case.bitwise:
        equal = sum(case.bitwise.values())
        text += f" G bitwise equal to f(qs): {equal} of {len(case.bitwise)} front-end calls."
    skipped = "; ".join(f"{k}: {why}" for k, why in case.skipped.items())
    return text + (f" Not timed: {skipped}." if skipped else "")


def _buffers(case: FrameworkResult) -> list[str]:
    """The line on XLA's output buffers (:func:`.frameworks.output_buffers`), if probed."""
    if not case.output_buffers:
        return []
    counts = ", ".join(f"{n} at B = {k.rsplit(':B', 1)[1]}" for k, n in case.output_buffers.items())
    return ["", prose("frameworks", "buffers", probe=OUTPUT_PROBE, counts=counts)]


def _frax(result: FrameworkResult | None, batches: Sequence[int]) -> list[str]:
    if result is None:
        return []
    out = ["", f"### Against frax's dense route: {result.name} (nv {result.nv}, m {result.m})", ""]
    error = result.errors.get(AGREEMENT_KEY)
    bound = f"{frax_route.AGREEMENT_TOLERANCE:g}"
    out += [
        prose("frameworks", "frax", error=f"{error:.1e}", bound=bound) if error is not None else "",
        "",
    ]
    if "frax" in result.skipped and not result.timings:
        return [*out, f"Not timed: {result.skipped['frax']}"]
    out += _table(result, batches, FRAX_ROWS)
    for what, frax, mine, direct in FRAX_RATIOS:
        if not any(result.median(mine, B) for B in batches):  # no pvosimr.jax: the direct call
            mine = direct
        times = [(result.median(frax, B), result.median(mine, B)) for B in batches]
        cells = [f"{a / b:.1f}×" if a and b else "—" for a, b in times]
        out.append(row(f"**ratio frax ÷ pvosimr ({LABELS[mine]}), {what}**", cells))
    return [*out, "", _checks(result)]


def lines(section: dict | None) -> list[str]:
    """The section's markdown lines (nothing where the run did not ask for it)."""
    if section is None:
        return []
    out = ["", HEADING, ""]
    out += [f"Not run: {install_hint(WHO, m)}" for m in section["missing"]]
    tolerances = {
        "g_tolerance": f"{G_TOLERANCE:g}",
        "gradient_tolerance": f"{GRADIENT_TOLERANCE:g}",
    }
    out += [prose("frameworks", "note", **tolerances), ""]
    out.append(prose("frameworks", "threads", threads=section.get("threads")))
    if "settings" in section:
        out += ["", "JAX: " + ", ".join(f"{k} = {v}" for k, v in section["settings"].items())]
    out += ["", *target_lines(framework_targets(section))]
    methods = [k for k in LABELS if not k.startswith("frax")]
    for case in section["cases"]:
        out += ["", f"### {case.name} (nv {case.nv}, m {case.m})", ""]
        out += [*_table(case, section["batches"], methods), "", _checks(case), *_buffers(case)]
    out += _frax(section.get("frax"), section.get("frax_batches", []))
    return out + [
        f"\n{spec}: not available ({why})" for spec, why in section["unavailable"].items()
    ]


def jsonable(section: dict | None) -> dict | None:
    """The section as plain data, its targets included."""
    if section is None:
        return None
    frax = section.get("frax")
    out = {**section, "cases": [c.to_json() for c in section["cases"]]}
    out["frax"] = None if frax is None else frax.to_json()
    return out | {"targets": target_json(framework_targets(section))}
