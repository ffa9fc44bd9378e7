"""The section "JAX and PyTorch" of ``timings.md``: its run, its targets and its tables.

:func:`time_frameworks` runs :mod:`.frameworks` on the robot cases and :mod:`.frax_compare` on
frax's G1; :func:`.targets.framework_targets` judges its targets; :func:`lines` writes the
section (one line saying what to install where jax or torch is missing).
"""

from __future__ import annotations

from collections.abc import Sequence

from pvosimr.extras import install_hint, missing_extra
from pvosimr.study.record import row, rule, target_json, target_lines

from . import frax_route
from .frameworks import (
    FRAMEWORK_BATCHES,
    FRAMEWORK_CASES,
    G_TOLERANCE,
    GRADIENT_TOLERANCE,
    OUTPUT_PROBE,
    FrameworkResult,
    time_robot,
)
from .targets import TRIVIAL_LABELS, framework_targets
from .text import prose, timing_cell

__all__ = ["HEADING", "LABELS", "jsonable", "lines", "time_frameworks"]

HEADING = "## JAX and PyTorch"

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
"""The section's methods as the report names them."""

WHO = 'pvosimr bench, section "JAX and PyTorch"'


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

    out: dict = {"batches": list(batches), "cases": [], "unavailable": {}, "frax": None}
    out["threads"] = usable_cores()
    out["missing"] = [m for m in ("jax", "torch") if missing_extra(m) is not None]
    frax_batches = sorted({1, max(batches)}) if frax_batches is None else list(frax_batches)
    out["frax_batches"] = frax_batches
    if "jax" not in out["missing"]:
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
    if frax_batches and "frax" not in out["unavailable"] and "jax" not in out["missing"]:
        from .frax_compare import time_frax

        out["frax"] = time_frax(frax_batches, repeats, seed, cache_dir)
    return out


def _cell(case: FrameworkResult, method: str, B: int, base: str | None) -> str:
    key = f"{method}:B{B}"
    if key not in case.timings:
        why = case.skipped.get(key)
        return "wrong result" if why else "—"
    cell = timing_cell(case.timings[key])
    bases = [case.median(k, B) for k in base or ()]
    if bases and None not in bases:
        cell += f" ({case.median(method, B) / sum(bases):.2f}×)"
    return cell


BASES = {
    "jax:G": ("direct:G",),
    "torch:G": ("direct:G",),
    "jax:grad": ("direct:vjp",),
    "torch:G+backward": ("direct:G", "direct:vjp"),
}
"""The direct calls each front end's ratio divides by (their sum)."""


def _table(case: FrameworkResult, batches: Sequence[int], methods: Sequence[str]) -> list[str]:
    rows = [row("method", [f"B = {B}" for B in batches]), rule("l" + "r" * len(batches))]
    for k in methods:
        if any(f"{k}:B{B}" in case.timings for B in batches):
            rows.append(row(LABELS[k], [_cell(case, k, B, BASES.get(k)) for B in batches]))
    return rows


def _checks(case: FrameworkResult) -> str:
    parts = [f"{k} {e:.1e}" for k, e in case.errors.items()]
    equal = [k for k, same in case.bitwise.items() if same]
    text = "Checks before timing (max relative error): " + (", ".join(parts) or "none") + "."
    if case.bitwise:
        text += f" G bitwise equal to f(qs): {len(equal)} of {len(case.bitwise)} front-end calls."
    skipped = [f"{k}: {why}" for k, why in case.skipped.items()]
    return text + (" Not timed: " + "; ".join(skipped) + "." if skipped else "")


def _buffers(case: FrameworkResult) -> list[str]:
    """The line on XLA's output buffers (:func:`.frameworks.output_buffers`), if probed."""
    if not case.output_buffers:
        return []
    counts = ", ".join(f"{n} at B = {k.rsplit(':B', 1)[1]}" for k, n in case.output_buffers.items())
    return ["", prose("frameworks", "buffers", probe=OUTPUT_PROBE, counts=counts)]


def _frax(result: FrameworkResult | None, batches: Sequence[int]) -> list[str]:
    if result is None:
        return []
    error = result.errors.get("frax-vs-pinocchio")
    lines = [
        "",
        f"### Against frax's dense route: {result.name} (nv {result.nv}, m {result.m})",
        "",
        prose(
            "frameworks",
            "frax",
            error=f"{error:.1e}",
            bound=f"{frax_route.AGREEMENT_TOLERANCE:g}",
        )
        if error is not None
        else "",
        "",
    ]
    if "frax" in result.skipped and not result.timings:
        return [*lines, f"Not timed: {result.skipped['frax']}"]
    methods = ("frax:G", "jax:G", "direct:G", "frax:grad", "jax:grad", "direct:vjp")
    lines += _table(result, batches, methods)
    for what, frax, mine in (("G", "frax:G", "jax:G"), ("gradient", "frax:grad", "jax:grad")):
        if not any(result.median(mine, B) for B in batches):  # no pvosimr.jax: the direct call
            mine = "direct:G" if what == "G" else "direct:vjp"
        cells = [
            f"{result.median(frax, B) / result.median(mine, B):.1f}×"
            if result.median(frax, B) and result.median(mine, B)
            else "—"
            for B in batches
        ]
        lines.append(row(f"**ratio frax ÷ pvosimr ({LABELS[mine]}), {what}**", cells))
    return [*lines, "", _checks(result)]


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
    out += [f"\n{spec}: not available ({why})" for spec, why in section["unavailable"].items()]
    return out


def jsonable(section: dict | None) -> dict | None:
    """The section as plain data, its targets included."""
    if section is None:
        return None
    out = dict(section)
    out["cases"] = [c.to_json() for c in section["cases"]]
    out["frax"] = None if section.get("frax") is None else section["frax"].to_json()
    out["targets"] = target_json(framework_targets(section))
    return out
