"""The bench's section "GPU", written to ``gpu.md`` and ``gpu.json`` (:func:`write`):

- **GPU**: the CUDA kernels (:mod:`pvosimr.codegen.cuda`) checked against the CPU library, then
  timed beside the XLA route (:mod:`pvosimr.jax.xla`) and the host's batched C, G and the
  gradient of ⟨W, G⟩ at B ∈ :data:`GPU_BATCHES`, float32 and float64, on :data:`GPU_CASES`;
  frax's dense route beside the XLA route on its G1; all measured by :mod:`.gpu_runner` from
  the folder :mod:`.gpu_export` writes (here where JAX sees a GPU, else ``--device-rows``);
  JAX's CUDA route at B = 1,024 where pvosimr runs on the GPU; the GPU targets as data.
- **The XLA route on the CPU** (:func:`cpu_compile`, with ``--xla-cpu``): Atlas 2×6D's
  ``jit(vmap(G))`` built cold and warm in two fresh processes sharing a persistent cache, then
  timed against the generated C and the FFI route.
- **float32's error on the zoo** (:func:`float32_errors`, with ``--xla-cpu``).

Every table is data (:data:`TABLES`: per column a header, an alignment and its cell of a row),
rendered from the result alone, so the committed ``gpu.json`` renders the committed ``gpu.md``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pvosimr.study.record import table

from .loop import median_seconds
from .names import ATLAS_6D, ATLAS_HANDS_6D, CPU_BATCH, GPU_BATCHES, TOLERANCES
from .record import relative_error, target_lines, within, write_json
from .targets import gpu_targets
from .text import prose

GPU_CASES = (ATLAS_6D, ATLAS_HANDS_6D)
#: The zoo robots whose float32 error is reported (one of each kind, small to large).
FLOAT32_ROBOTS = (
    "double_pendulum", "four_bar", "ur5", "panda", "allegro_left_hand", "solo12", "cassie_leg",
    "shadow_hand", "atlas", "talos", "atlas_shadow_hand",
)  # fmt: skip


def configurations(model, n: int, seed: int) -> np.ndarray:
    """``n`` configurations of ``model``: up to 64 random ones, repeated (the time of a batch
    does not depend on which q it holds)."""
    from pvosimr.zoo.seeded import random_q

    rng = np.random.default_rng(seed)
    base = np.stack([random_q(model, rng) for _ in range(min(n, 64))])
    return np.resize(base, (n, model.nq))


def numpy_error(out: Any, robot, qs: np.ndarray, rows: Sequence[int]) -> float:
    """The largest relative error of ``out``'s ``rows`` against the numpy path at those q."""
    import pvosimr

    data = robot.model.createData()

    def error(r: int) -> float:
        G = pvosimr.compute_delassus(robot.model, data, qs[r], robot.constraints)
        return relative_error(np.asarray(out[r], dtype=float), G)

    return max(map(error, rows))


def _checked(out: Any, robot, qs: np.ndarray) -> float:
    """:func:`numpy_error` on three rows; AssertionError above the XLA route's tolerance (a
    timed method must give the right matrix)."""
    worst = numpy_error(out, robot, qs, (0, len(qs) // 2, len(qs) - 1))
    return within(worst, TOLERANCES["xla"], f"XLA route off the numpy path by {worst:.3g}")


def _xla_process(case: str, batch: int, repeats: int, compare: bool, cache: str) -> dict:
    """In this (fresh) process, with XLA's persistent cache in ``cache``: build, trace, compile
    and time ``jit(vmap(G))`` of ``case``; with ``compare``, time the generated C's batched call
    (1 and 2 threads) and the FFI route beside it."""
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_compilation_cache_dir", cache)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)  # cache quick ones too
    from pvosimr import codegen, zoo
    from pvosimr.jax import delassus
    from pvosimr.jax.xla import compile_xla

    out: dict[str, Any] = {"case": case, "batch": batch}
    start = time.perf_counter()
    robot = zoo.load_case(case)
    G = compile_xla(robot.model, robot.constraints)
    out["graph_s"] = time.perf_counter() - start
    out["cache_dir"] = jax.config.jax_compilation_cache_dir
    qs = configurations(robot.model, batch, 0)
    lowered = jax.jit(jax.vmap(G)).lower(qs)
    out["trace_s"] = time.perf_counter() - start - out["graph_s"]
    compiled = lowered.compile()  # or loaded from the persistent cache
    out["compile_s"] = time.perf_counter() - start - out["graph_s"] - out["trace_s"]
    x = jax.device_put(qs)
    out["xla_f64_error"] = _checked(compiled(x), robot, qs)
    out["xla_f64_s"] = median_seconds(lambda: compiled(x).block_until_ready(), repeats) / batch
    if not compare:
        return out
    f = codegen.compile(robot.model, robot.constraints)
    for t in (1, 2):
        out[f"c_t{t}_s"] = median_seconds(lambda t=t: f(qs, threads=t), repeats) / batch
    try:
        ffi = jax.jit(delassus(robot.model, robot.constraints, route="ffi"))
        _checked(ffi(x), robot, qs)
        out["ffi_s"] = median_seconds(lambda: ffi(x).block_until_ready(), repeats) / batch
    except (ImportError, TypeError) as exc:  # no C++ compiler or jaxlib headers for the FFI
        out["ffi_error"] = f"not measured: {type(exc).__name__}: {exc}"
    return out


def _fresh_process(*args: Any) -> dict:
    """:func:`_xla_process` in a new interpreter, its result read back as JSON."""
    checkout = str(Path(__file__).resolve().parents[1])  # benchmarks/ is not installed
    path = os.pathsep.join(filter(None, (checkout, os.environ.get("PYTHONPATH"))))
    env = {**os.environ, "PVOSIMR_QUIET": "1", "PYTHONPATH": path}
    call = f"import json; from benchmarks.gpu import _xla_process as f; print(json.dumps(f{args}))"
    done = subprocess.run([sys.executable, "-c", call], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{sys.executable} -c {call!r} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def cpu_compile(case: str = ATLAS_6D, batch: int = CPU_BATCH, repeats: int = 10) -> dict:
    """Cold and warm builds of ``jit(vmap(G))`` in two fresh processes sharing a new cache
    folder, and the warm one's times per configuration (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="pvosimr-xla-cache-") as folder:
        cold = _fresh_process(case, batch, repeats, False, folder)
        warm = _fresh_process(case, batch, repeats, True, folder)
    return {"cold": cold, "warm": warm, "load": os.getloadavg()}


def float32_errors(names: Sequence[str] = FLOAT32_ROBOTS, n_q: int = 4) -> list[dict]:
    """Per robot: ``max|G32 − G| / max|G|`` over ``n_q`` configurations, G from the float64
    numpy path, G32 from the XLA route in float32 (run eagerly)."""
    import jax

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
        error = numpy_error(G(qs.astype(np.float32)), robot, qs, range(n_q))
        rows.append({"robot": name, "nq": robot.model.nq, "m": G.m, "error": error})
    return rows


def measured_here(cases: Sequence[str] = GPU_CASES, batches: Sequence[int] = GPU_BATCHES):
    """The GPU part on this machine's GPU: the folder exported and run by its ``run.py`` in a
    fresh interpreter, as on a GPU machine without pvosimr; then JAX's CUDA route at B = 1,024,
    float64, its output checked (or why it was not measured)."""
    import jax

    from pvosimr import zoo
    from pvosimr.jax import delassus

    from .gpu_export import export

    with tempfile.TemporaryDirectory(prefix="pvosimr-gpu-") as folder:
        export(Path(folder), cases, batches)
        subprocess.run([sys.executable, str(Path(folder) / "run.py"), "--out", folder], check=True)
        out = json.loads((Path(folder) / "gpu_rows.json").read_text(encoding="utf-8"))
    robot = zoo.load_case(ATLAS_6D)
    qs = configurations(robot.model, 1024, 0)
    try:
        G = jax.jit(delassus(robot.model, robot.constraints, route="cuda"))
        x = jax.device_put(qs, jax.devices("gpu")[0])
        if {d.platform for d in G(x).devices()} != {"gpu"}:
            return {**out, "jax_cuda": "this pvosimr's JAX route 'cuda' does not run on the GPU"}
    except (ImportError, ValueError, TypeError, RuntimeError) as exc:
        return {**out, "jax_cuda": f"{type(exc).__name__}: {str(exc).splitlines()[0]}"}
    _checked(G(x), robot, qs)
    return {**out, "jax_cuda_call_s": median_seconds(lambda: G(x).block_until_ready(), 50)}


# --------------------------------------------------------------------------- the report


def _us(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1e6:.3g} µs"


def _frax_cell(key: str) -> Callable[[dict], str]:
    """A time of a frax row, with the dtype its route computed G in where it is not q's."""
    route = key.removesuffix("grad").removesuffix("G")  # "frax_" or pvosimr's ""

    def cell(r: dict) -> str:
        dtype = r.get(f"{route}G_dtype", r["dtype"])
        return _us(r[f"{key}_s"]) + ("" if dtype == r["dtype"] else f" ({dtype})")

    return cell


def _steps(r: dict) -> list[str]:
    steps = [r[k] for k in ("graph_s", "trace_s", "compile_s")]
    return [f"{s:.2f} s" for s in (*steps, sum(steps))]


#: Every table of the section: per column a header, an alignment (``l``/``r``) and its cell.
TABLES: dict[str, tuple[tuple[str, str, Callable[[Any], str]], ...]] = {
    "gpu": (
        ("case", "l", lambda r: r["case"]),
        ("B", "r", lambda r: f"{r['batch']:,}"),
        ("dtype", "l", lambda r: r["dtype"]),
        *((head, "r", lambda r, k=k: _us(r.get(f"{k}_s"))) for head, k in (
            ("kernel G", "cuda_G"), ("kernel gradient", "cuda_grad"), ("XLA G", "G"),
            ("XLA gradient", "grad"), ("host's batched C (every core)", "cpu_c"))),
    ),
    "frax": (
        ("B", "r", lambda r: f"{r['batch']:,}"),
        ("q", "l", lambda r: r["dtype"]),
        ("frax G", "r", _frax_cell("frax_G")),
        ("pvosimr G", "r", _frax_cell("G")),
        ("frax ÷ pvosimr", "r", lambda r: f"{r['frax_G_s'] / r['G_s']:.1f}×"),
        ("frax gradient", "r", _frax_cell("frax_grad")),
        ("pvosimr gradient", "r", _frax_cell("grad")),
        ("frax ÷ pvosimr", "r", lambda r: f"{r['frax_grad_s'] / r['grad_s']:.1f}×"),
    ),
    "steps": (
        ("process", "l", lambda r: r[0]),
        *((head, "r", lambda r, i=i: _steps(r[1])[i])
          for i, head in enumerate(("build", "trace", "XLA compile", "total"))),
    ),
    "routes": (("route", "l", lambda r: r[0]), ("per q", "r", lambda r: r[1])),
    "float32": (
        ("robot", "l", lambda r: r["robot"]),
        ("nq", "r", lambda r: str(r.get("nq", ""))),
        ("m", "r", lambda r: str(r.get("m", ""))),
        ("float32 error", "r",
         lambda r: f"skipped: {r['skipped']}" if "skipped" in r else f"{r['error']:.2g}"),
    ),
}  # fmt: skip


def render(name: str, rows: Sequence) -> list[str]:
    """The table ``name`` of :data:`TABLES` over ``rows``."""
    heads, align, cells = zip(*TABLES[name], strict=True)
    return table(heads, [[cell(r) for cell in cells] for r in rows], "".join(align))


def markdown(result: dict) -> str:
    """The section "GPU" and its two CPU parts as markdown."""
    lines = ["## GPU", ""]
    if not result.get("gpus"):
        batches = ", ".join(f"{b:,}" for b in GPU_BATCHES)
        lines += [prose("gpu", "no-gpu", batches=batches), ""]
    else:
        lines += [f"On {', '.join(result['gpus'])}{_elsewhere(result)}.", ""]
        lines += [_checks(result.get("kernel_checks")), ""]
        lines += [prose("gpu", "per-q"), "", *render("gpu", result["gpu"]), ""]
    lines += [*_frax_lines(result), prose("gpu", "grid"), "", *target_lines(gpu_targets(result))]
    lines.append("")
    if cpu := result.get("cpu"):
        cold, warm = cpu["cold"], cpu["warm"]
        lines += ["## The XLA route on this CPU", "", prose("gpu", "cpu", case=cold["case"]), ""]
        steps = [("cold (empty cache)", cold), ("warm (persistent cache)", warm)]
        lines += [*render("steps", steps), "", f"Load average at the end {cpu['load'][0]:.2f}."]
        routes = [("XLA, float64 (`jit(vmap(G))`)", _us(warm["xla_f64_s"]))]
        routes += [(f"generated C, `f(qs, threads={t})`", _us(warm.get(f"c_t{t}_s")))
                   for t in (1, 2)]  # fmt: skip
        routes.append(("FFI", _us(warm["ffi_s"]) if "ffi_s" in warm else warm.get("ffi_error")))
        lines += ["", f"Time per configuration at B = {warm['batch']:,}:", ""]
        lines += [*render("routes", routes), ""]
    if result.get("float32"):
        lines += ["## float32 on the zoo", "", prose("gpu", "float32"), ""]
        lines += [*render("float32", result["float32"]), ""]
    return "\n".join(lines)


def _checks(checks: dict | None) -> str:
    """The kernels' check on the GPU before timing, one clause per case and dtype."""
    if not checks:
        return prose("gpu", "no-kernels")
    said = [
        f"{case} {dtype}: " + (c["error"] if "error" in c else
                               ", ".join(f"{k} {e:.1e}" for k, e in c.items()))
        for case, by_dtype in checks.items()
        for dtype, c in by_dtype.items()
    ]  # fmt: skip
    return prose("gpu", "kernels", checks="; ".join(said))


def _frax_lines(result: dict) -> list[str]:
    """frax's dense route on the GPU beside pvosimr's, or why it was not measured."""
    frax = result.get("frax")
    why = "no GPU present" if not result.get("gpus") else "not run" if frax is None else None
    if why or "unavailable" in frax:
        return [f"frax's dense route on the GPU: not measured ({why or frax['unavailable']}).", ""]
    head = f"frax's dense G = J M⁻¹ Jᵀ on {frax['robot']} beside pvosimr's XLA route"
    if not frax["rows"]:
        return [f"{head}: not timed, the two disagree ({frax['agreement']:.1e}).", ""]
    intro = prose("gpu", "frax", head=head, agreement=f"{frax['agreement']:.1e}")
    return [intro, "", *render("frax", frax["rows"]), ""]


def _elsewhere(result: dict) -> str:
    """Where the GPU rows came from another machine: which, and from what."""
    host, exported = result.get("host"), result.get("exported")
    if not host or not exported:
        return ""
    return " " + prose(
        "gpu", "elsewhere", device_kind=host.get("device_kind", "a GPU"),
        cpus=host.get("cores", host.get("cpus")), host_jax=host["jax"], date=exported["date"],
        exported_jax=exported["jax"],
    )  # fmt: skip


def write(result: dict, out: Path) -> list[Path]:
    """``gpu.md`` and ``gpu.json`` in ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    md, js = out / "gpu.md", out / "gpu.json"
    title = "# G on a GPU: the CUDA kernels and the XLA route; the XLA route's CPU compile, float32"
    md.write_text(f"{title}\n\n{markdown(result)}", "utf-8")
    return [md, write_json(js, result)]


def run(cpu: bool = True, float32: bool = True, device_rows: Path | None = None) -> dict:
    """Every part this machine can run (see the module docstring); with ``device_rows``, the
    GPU part is the one :mod:`.gpu_runner` measured on another machine (its ``gpu_rows.json``,
    from the folder :mod:`.gpu_export` wrote)."""
    from pvosimr.extras import require

    from .environment import machine

    require("pvosimr bench: the section GPU", "jax", "casadi")
    import jax

    try:
        gpus = [str(d) for d in jax.devices("gpu")]
    except RuntimeError:  # no GPU, or no JAX CUDA plugin
        gpus = []
    result: dict[str, Any] = {"machine": machine(), "gpus": gpus}
    if device_rows is not None:
        result.update(json.loads(Path(device_rows).read_text(encoding="utf-8")))
    elif gpus:
        result.update(measured_here())
    if cpu:
        result["cpu"] = cpu_compile()
    if float32:
        result["float32"] = float32_errors()
    return result
