"""The bench's section "GPU": the XLA route (:mod:`pvosimr.jax.xla`) timed, and its float32 error.

Three parts, written to ``gpu.md`` and ``gpu.json`` (:func:`write`):

- **GPU.** Where JAX sees a GPU: time per configuration of ``jit(vmap(G))`` and of the gradient
  of ⟨W, G⟩ at B ∈ :data:`GPU_BATCHES`, float64 and float32, on :data:`GPU_CASES`, beside the
  CPU batched C (``f(qs, threads=<cores>)``) on the same host; frax's dense route on its G1
  beside pvosimr's on the same GPU at B ∈ :data:`FRAX_BATCHES`
  (:func:`.frax_compare.device_rows`); GRiD's published batched M⁻¹ (quoted from
  ``templates/gpu.md``, not measured); and the GPU targets (:func:`.targets.gpu_targets`)
  judged on these numbers.  Where none is present, the section says so.
- **The XLA route on the CPU** (:func:`cpu_compile`): ``jit(vmap(G))`` of Atlas 2×6D built in a
  fresh process with an empty persistent cache (cold), then in a second fresh process with the
  cache the first wrote (warm): building the function, tracing and XLA's compile, timed apart; then
  the time per configuration at B = :data:`CPU_BATCH` against the generated C's batched call
  ``f(qs)`` (1 and 2 threads) and the FFI route where this pvosimr has one, in the warm process.
- **float32's error on the zoo** (:func:`float32_errors`): ``max|G32 − G| / max|G|`` against
  the float64 numpy path, run eagerly (no XLA compile).

``pvosimr bench --sections gpu`` runs the GPU part (with ``--xla-cpu`` the other two, minutes on
a small machine; with ``--device-rows`` the GPU part measured elsewhere).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pvosimr.study.names import (
    ATLAS_6D,
    ATLAS_HANDS_6D,
    CPU_BATCH,
    FRAX_BATCHES,
    GPU_BATCHES,
    TOLERANCES,
)
from pvosimr.study.record import relative_error, target_lines, write_json

from .loop import median_seconds
from .targets import gpu_targets
from .text import prose

__all__ = [
    "CPU_BATCH",
    "CPU_CASE",
    "FRAX_BATCHES",
    "GPU_BATCHES",
    "GPU_CASES",
    "compiled_batch",
    "configurations",
    "cpu_compile",
    "float32_errors",
    "gpu_devices",
    "gpu_timings",
    "markdown",
    "worker",
    "write",
]

CPU_CASE = ATLAS_6D
GPU_CASES = (ATLAS_6D, ATLAS_HANDS_6D)
#: The zoo robots whose float32 error is reported (one of each kind, small to large).
FLOAT32_ROBOTS = (
    "double_pendulum", "four_bar", "ur5", "panda", "allegro_left_hand", "solo12", "cassie_leg",
    "shadow_hand", "atlas", "talos", "atlas_shadow_hand",
)  # fmt: skip


def compiled_batch(G, qs: np.ndarray):
    """``jit(vmap(G))`` traced and compiled for ``qs``, and the seconds of each step
    (``trace_s``, ``compile_s``: XLA's compile, or its load from the persistent cache)."""
    import jax

    start = time.perf_counter()
    lowered = jax.jit(jax.vmap(G)).lower(qs)
    traced = time.perf_counter()
    compiled = lowered.compile()
    return compiled, {"trace_s": traced - start, "compile_s": time.perf_counter() - traced}


def configurations(model, n: int, seed: int) -> np.ndarray:
    """``n`` configurations of ``model``: up to 64 random ones, repeated (the time of a batch
    does not depend on which q it holds)."""
    from pvosimr.zoo.seeded import random_q

    rng = np.random.default_rng(seed)
    base = np.stack([random_q(model, rng) for _ in range(min(n, 64))])
    return np.resize(base, (n, model.nq))  # repeated rows: the time does not depend on q


def _checked(out: Any, robot, qs: np.ndarray, tolerance: float) -> float:
    """The largest relative error of three rows of ``out`` against the numpy path; raises
    AssertionError above ``tolerance`` (a timed method must give the right matrix)."""
    import pvosimr

    data = robot.model.createData()
    worst = 0.0
    for row in (0, len(qs) // 2, len(qs) - 1):
        G = pvosimr.compute_delassus(robot.model, data, qs[row], robot.constraints)
        worst = max(worst, relative_error(out[row], G))
    if not worst <= tolerance:
        raise AssertionError(f"XLA route off the numpy path by {worst:.3g} (> {tolerance})")
    return worst


# --------------------------------------------------------------------------- one process


def _xla_process(case: str, batch: int, repeats: int, compare: bool, cache: str) -> dict:
    """In this (fresh) process, with XLA's persistent cache in ``cache``: build, trace, compile
    and time ``jit(vmap(G))`` of ``case``; with ``compare``, time the generated C's batched call
    and the FFI route beside it."""
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_compilation_cache_dir", cache)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)  # cache quick ones too
    from pvosimr import zoo
    from pvosimr.jax.xla import compile_xla

    out: dict[str, Any] = {"case": case, "batch": batch}
    start = time.perf_counter()
    robot = zoo.load_case(case)
    G = compile_xla(robot.model, robot.constraints)
    out["graph_s"] = time.perf_counter() - start
    out["cache_dir"] = jax.config.jax_compilation_cache_dir
    qs = configurations(robot.model, batch, 0)
    compiled, seconds = compiled_batch(G, qs)
    out.update(seconds)
    x = jax.device_put(qs)
    out["xla_f64_error"] = _checked(compiled(x), robot, qs, TOLERANCES["xla"])
    out["xla_f64_s"] = median_seconds(lambda: compiled(x).block_until_ready(), repeats) / batch
    if compare:
        out.update(_compare(robot, qs, repeats))
    return out


def _compare(robot, qs: np.ndarray, repeats: int) -> dict:
    """The generated C's batched call (1 and 2 threads) and the FFI route, per configuration."""
    out: dict[str, Any] = {}
    batch = len(qs)
    try:
        from pvosimr import codegen

        f = codegen.compile(robot.model, robot.constraints)
        for threads in (1, 2):
            out[f"c_t{threads}_s"] = (
                median_seconds(lambda t=threads: f(qs, threads=t), repeats) / batch
            )
    except (OSError, ModuleNotFoundError) as exc:
        out["c_error"] = str(exc)
    try:
        import jax

        from pvosimr.jax import delassus  # the FFI route, where this pvosimr has one

        ffi = jax.jit(delassus(robot.model, robot.constraints, route="ffi"))
        x = jax.device_put(qs)
        _checked(ffi(x), robot, qs, TOLERANCES["xla"])
        out["ffi_s"] = median_seconds(lambda: ffi(x).block_until_ready(), repeats) / batch
    except (ImportError, TypeError) as exc:
        out["ffi_error"] = f"not measured: {type(exc).__name__}: {exc}"
    return out


def worker(case: str, batch: str, repeats: str, compare: str, cache: str) -> None:
    """:func:`_xla_process` with its arguments as text, its result printed as JSON (what
    :func:`_fresh_process` runs in a new interpreter)."""
    print(json.dumps(_xla_process(case, int(batch), int(repeats), compare == "1", cache)))


def _fresh_process(*args: str) -> dict:
    """:func:`_xla_process` in a new interpreter."""
    checkout = str(Path(__file__).resolve().parents[1])  # benchmarks/ is not installed
    path = os.pathsep.join(filter(None, (checkout, os.environ.get("PYTHONPATH"))))
    env = {**os.environ, "PVOSIMR_QUIET": "1", "PYTHONPATH": path}
    call = f"from benchmarks.gpu import worker; worker(*{list(args)!r})"
    command = [sys.executable, "-c", call]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def cpu_compile(case: str = CPU_CASE, batch: int = CPU_BATCH, repeats: int = 10) -> dict:
    """Cold and warm builds of ``jit(vmap(G))`` in two fresh processes sharing a new cache
    folder, and the warm one's times per configuration (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="pvosimr-xla-cache-") as folder:
        args = (case, str(batch), str(repeats))
        cold = _fresh_process(*args, "0", folder)
        warm = _fresh_process(*args, "1", folder)
    return {"cold": cold, "warm": warm, "load": os.getloadavg()}


# --------------------------------------------------------------------------- float32


def float32_errors(names: Sequence[str] = FLOAT32_ROBOTS, n_q: int = 4) -> list[dict]:
    """Per robot: ``max|G32 − G| / max|G|`` over ``n_q`` configurations, G from the float64
    numpy path, G32 from the XLA route in float32 (run eagerly)."""
    import jax

    import pvosimr
    from pvosimr import zoo
    from pvosimr.jax.xla import compile_xla

    jax.config.update("jax_enable_x64", True)
    rows = []
    for name in names:
        try:
            robot = zoo.load_case(name)
        except (ValueError, FileNotFoundError, ModuleNotFoundError) as exc:
            rows.append({"robot": name, "skipped": str(exc).splitlines()[0]})
            continue
        G = compile_xla(robot.model, robot.constraints)
        qs = configurations(robot.model, n_q, 1)
        out = np.asarray(G(qs.astype(np.float32)), dtype=float)
        data = robot.model.createData()
        errors = []
        for q, G32 in zip(qs, out, strict=True):
            truth = pvosimr.compute_delassus(robot.model, data, q, robot.constraints)
            errors.append(relative_error(G32, truth))
        rows.append({"robot": name, "nq": robot.model.nq, "m": G.m, "error": max(errors)})
    return rows


# --------------------------------------------------------------------------- the GPU


def gpu_devices() -> list[str]:
    """The GPUs JAX sees (empty without one, or without JAX's CUDA plugin)."""
    import jax

    try:
        return [str(d) for d in jax.devices("gpu")]
    except RuntimeError:
        return []


def gpu_timings(
    cases: Sequence[str] = GPU_CASES,
    batches: Sequence[int] = GPU_BATCHES,
    repeats: int = 20,
    device: Any = None,
) -> list[dict]:
    """Per case, dtype and B: G and the gradient of ⟨W, G⟩ per configuration on ``device``
    (default: JAX's first GPU), and the CPU batched C on the same host (float64, every core)."""
    import jax

    from pvosimr import codegen, zoo
    from pvosimr.jax.xla import compile_xla

    jax.config.update("jax_enable_x64", True)
    device = jax.devices("gpu")[0] if device is None else device
    rows = []
    for case in cases:
        robot = zoo.load_case(case)
        G = compile_xla(robot.model, robot.constraints)
        f = codegen.compile(robot.model, robot.constraints)
        for batch in batches:
            qs = configurations(robot.model, batch, 0)
            c_s = median_seconds(functools.partial(f, qs, threads=os.cpu_count()), 5) / batch
            for dtype in (np.float64, np.float32):
                row = _gpu_row(G, robot, qs.astype(dtype), repeats, device)
                rows.append({"case": case, "batch": batch, **row, "cpu_c_s": c_s})
    return rows


def _gpu_row(G, robot, qs: np.ndarray, repeats: int, device: Any) -> dict:
    """``jit(vmap(G))`` and ``jit(vmap(grad ⟨W, G⟩))`` on ``device``, per configuration."""
    import jax
    import jax.numpy as jnp

    W = np.random.default_rng(0).normal(size=(G.m, G.m)).astype(qs.dtype)
    x, w = jax.device_put(qs, device), jax.device_put(W, device)
    g = jax.jit(jax.vmap(G))
    grad = jax.jit(jax.vmap(jax.grad(lambda q: jnp.sum(w * G(q)))))
    if qs.dtype == np.float64:
        _checked(g(x), robot, qs, TOLERANCES["xla"])
    batch = len(qs)
    return {
        "dtype": qs.dtype.name,
        "G_s": median_seconds(lambda: g(x).block_until_ready(), repeats) / batch,
        "grad_s": median_seconds(lambda: grad(x).block_until_ready(), repeats) / batch,
    }


def frax_on_gpu(batches: Sequence[int] = FRAX_BATCHES, repeats: int = 20, device: Any = None):
    """frax's dense route beside pvosimr's on its G1 (:func:`.frax_compare.device_rows`), on
    ``device`` (default: JAX's first GPU): ``{"agreement", "rows"}``, or ``{"unavailable"}``
    saying why not (frax not installed)."""
    import jax

    from pvosimr.extras import install_hint, missing_extra

    if missing_extra("frax") is not None:
        return {"unavailable": install_hint("the section GPU, frax's dense route", "frax")}
    from .frax_compare import device_rows
    from .frax_route import ROBOT

    device = jax.devices("gpu")[0] if device is None else device
    agreement, rows = device_rows(batches, repeats, device)
    return {"robot": ROBOT, "agreement": agreement, "rows": rows}


# --------------------------------------------------------------------------- the report


def _us(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1e6:.3g} µs"


def markdown(result: dict) -> str:
    """The section "GPU" and its two CPU parts as markdown."""
    lines = ["## GPU", ""]
    if not result.get("gpus"):
        batches = ", ".join(f"{b:,}" for b in GPU_BATCHES)
        lines += [prose("gpu", "no-gpu", batches=batches), ""]
    else:
        lines += [f"On {', '.join(result['gpus'])}{_elsewhere(result)}.", ""]
        lines += ["| case | B | dtype | G per q | gradient per q | CPU batched C per q |"]
        lines += ["|---|---:|---|---:|---:|---:|"]
        for r in result["gpu"]:
            lines.append(
                f"| {r['case']} | {r['batch']:,} | {r['dtype']} | {_us(r['G_s'])} | "
                f"{_us(r['grad_s'])} | {_us(r['cpu_c_s'])} |"
            )
        lines.append("")
    lines += _frax_lines(result)
    lines += [prose("gpu", "grid"), "", *target_lines(gpu_targets(result))]
    lines.append("")
    cpu = result.get("cpu")
    if cpu:
        cold, warm = cpu["cold"], cpu["warm"]
        lines += ["## The XLA route on this CPU", ""]
        lines += [prose("gpu", "cpu", case=cold["case"]), ""]
        lines += [
            "| process | build | trace | XLA compile | total |",
            "|---|---:|---:|---:|---:|",
        ]
        for label, r in (("cold (empty cache)", cold), ("warm (persistent cache)", warm)):
            total = r["graph_s"] + r["trace_s"] + r["compile_s"]
            lines.append(
                f"| {label} | {r['graph_s']:.2f} s | {r['trace_s']:.2f} s | "
                f"{r['compile_s']:.2f} s | {total:.2f} s |"
            )
        lines += ["", f"Load average at the end {cpu['load'][0]:.2f}.", ""]
        lines += [f"Time per configuration at B = {warm['batch']:,}:", ""]
        lines += ["| route | per q |", "|---|---:|"]
        lines.append(f"| XLA, float64 (`jit(vmap(G))`) | {_us(warm['xla_f64_s'])} |")
        for t in (1, 2):
            lines.append(f"| generated C, `f(qs, threads={t})` | {_us(warm.get(f'c_t{t}_s'))} |")
        lines.append(
            f"| FFI | {_us(warm['ffi_s']) if 'ffi_s' in warm else warm.get('ffi_error')} |"
        )
        lines.append("")
    if result.get("float32"):
        lines += ["## float32 on the zoo", "", prose("gpu", "float32"), ""]
        lines += ["| robot | nq | m | float32 error |", "|---|---:|---:|---:|"]
        for r in result["float32"]:
            if "skipped" in r:
                lines.append(f"| {r['robot']} | | | skipped: {r['skipped']} |")
            else:
                lines.append(f"| {r['robot']} | {r['nq']} | {r['m']} | {r['error']:.2g} |")
        lines.append("")
    return "\n".join(lines)


def _frax_lines(result: dict) -> list[str]:
    """frax's dense route on the GPU beside pvosimr's, or why it was not measured."""
    frax = result.get("frax")
    if not result.get("gpus"):
        return ["frax's dense route on the GPU: not measured (no GPU present).", ""]
    if frax is None or "unavailable" in frax:
        why = "not run" if frax is None else frax["unavailable"]
        return [f"frax's dense route on the GPU: not measured ({why}).", ""]
    head = f"frax's dense G = J M⁻¹ Jᵀ on {frax['robot']} beside pvosimr's XLA route"
    if not frax["rows"]:
        return [f"{head}: not timed, the two disagree ({frax['agreement']:.1e}).", ""]
    lines = [
        prose("gpu", "frax", head=head, agreement=f"{frax['agreement']:.1e}"),
        "",
        "| B | q | frax G | pvosimr G | frax ÷ pvosimr | frax gradient | pvosimr gradient |"
        " frax ÷ pvosimr |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in frax["rows"]:
        lines.append(
            f"| {r['batch']:,} | {r['dtype']} | {_frax_cell(r, 'frax_G_s')} | "
            f"{_frax_cell(r, 'G_s')} | {r['frax_G_s'] / r['G_s']:.1f}× | "
            f"{_frax_cell(r, 'frax_grad_s')} | {_frax_cell(r, 'grad_s')} | "
            f"{r['frax_grad_s'] / r['grad_s']:.1f}× |"
        )
    return [*lines, ""]


def _elsewhere(result: dict) -> str:
    """Where the GPU rows came from another machine: which, and from what."""
    host, exported = result.get("host"), result.get("exported")
    if not host or not exported:
        return ""
    return " " + prose(
        "gpu",
        "elsewhere",
        device_kind=host.get("device_kind", "a GPU"),
        cpus=host["cpus"],
        host_jax=host["jax"],
        date=exported["date"],
        exported_jax=exported["jax"],
    )


def _frax_cell(row: dict, key: str) -> str:
    """A time of a frax row, with the dtype its route computed G in where it is not q's."""
    route = key.removesuffix("grad_s").removesuffix("G_s")  # "frax_" or pvosimr's ""
    dtype = row.get(f"{route}G_dtype", row["dtype"])
    return _us(row[key]) + ("" if dtype == row["dtype"] else f" ({dtype})")


def write(result: dict, out: Path) -> list[Path]:
    """``gpu.md`` and ``gpu.json`` in ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    md, js = out / "gpu.md", out / "gpu.json"
    md.write_text("# The XLA route: GPU, CPU compile, float32\n\n" + markdown(result), "utf-8")
    return [md, write_json(js, result)]


def run(cpu: bool = True, float32: bool = True, device_rows: Path | None = None) -> dict:
    """Every part this machine can run (see the module docstring); with ``device_rows``, the
    GPU part is the one :mod:`.gpu_runner` measured on another machine (its ``gpu_rows.json``,
    from the functions :mod:`.gpu_export` wrote)."""
    from pvosimr.extras import require

    from .environment import machine

    require("pvosimr bench: the section GPU", "jax", "casadi")
    result: dict[str, Any] = {"machine": machine(), "gpus": gpu_devices()}
    if device_rows is not None:
        measured = json.loads(Path(device_rows).read_text(encoding="utf-8"))
        result.update({k: measured[k] for k in DEVICE_KEYS if k in measured})
    elif result["gpus"]:
        result["gpu"] = gpu_timings()
        result["frax"] = frax_on_gpu()
    if cpu:
        result["cpu"] = cpu_compile()
    if float32:
        result["float32"] = float32_errors()
    return result


#: What :func:`run` takes from :mod:`.gpu_runner`'s ``gpu_rows.json``.
DEVICE_KEYS = ("gpus", "gpu", "frax", "host", "exported", "records")
