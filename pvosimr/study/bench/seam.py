"""Two ways to run G through XLA without a C compiler, on the CPU: timed side by side.

- **emitter** (:func:`pvosimr.jax.xla.compile_xla`): CasADi's scalar instruction graph replayed
  as one JAX operation per instruction;
- **seam** (:func:`pvosimr.jax.seam.compile_seam`): the algorithm bodies themselves on the JAX
  backend of the seam, matrix operations batched by ``vmap``; its joint transforms dense 6×6
  (``seam-dense``) or block-wise (``seam-chain``).

For each route and dtype, ``jit(vmap(G))`` of :data:`CASE` is built in a fresh process with an
empty persistent compilation cache (cold), then in a second fresh process reading the cache the
first wrote (warm): graph, tracing and XLA's compile timed apart, then the time per
configuration at B = :data:`BATCH` in the warm process, checked against the numpy path.  The
generated C's batched call ``f(qs)`` (1 and 2 threads) is timed in the same run.

``python -m pvosimr.study.bench.seam --out DIR [--routes seam-chain,emitter]`` writes
``seam.md`` and ``seam.json``.
"""

from __future__ import annotations

import argparse
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

from ..options import REPORT_DIR
from .gpu import compiled_batch, median_call

__all__ = ["BATCH", "CASE", "ROUTES", "main", "markdown", "measure"]

CASE = "atlas/feet_6d"
BATCH = 4096
ROUTES = ("seam-chain", "seam-dense", "emitter")


def _error(out: Any, robot, qs: np.ndarray) -> float:
    """Largest relative error of three rows of ``out`` against the numpy path."""
    import pvosimr

    data = robot.model.createData()
    worst = 0.0
    for row in (0, len(qs) // 2, len(qs) - 1):
        G = pvosimr.compute_delassus(robot.model, data, qs[row], robot.constraints)
        worst = max(worst, float(np.abs(np.asarray(out[row], float) - G).max() / np.abs(G).max()))
    return worst


def _build(route: str, robot) -> Any:
    if route == "emitter":
        from pvosimr.jax.xla import compile_xla

        return compile_xla(robot.model, robot.constraints)
    from pvosimr.jax.seam import compile_seam

    return compile_seam(robot.model, robot.constraints, transforms=route.removeprefix("seam-"))


def _worker(route: str, dtype: str, batch: int, repeats: int, cache: str, time_c: bool) -> dict:
    """In this fresh process: build, trace, compile and time ``jit(vmap(G))``."""
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_compilation_cache_dir", cache)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    from pvosimr import zoo
    from pvosimr.zoo.seeded import random_q

    out: dict[str, Any] = {"route": route, "dtype": dtype, "batch": batch}
    robot = zoo.load_case(CASE)
    start = time.perf_counter()
    G = _build(route, robot)
    out["graph_s"] = time.perf_counter() - start
    rng = np.random.default_rng(0)
    base = np.stack([random_q(robot.model, rng) for _ in range(64)])
    qs = np.resize(base, (batch, robot.model.nq)).astype(dtype)
    compiled, seconds = compiled_batch(G, qs)
    out.update(seconds)
    x = jax.device_put(qs)
    out["error"] = _error(compiled(x), robot, qs)
    out["run_s"] = median_call(lambda: compiled(x).block_until_ready(), repeats) / batch
    if time_c:
        from pvosimr import codegen

        f = codegen.compile(robot.model, robot.constraints)
        q64 = qs.astype(np.float64)
        for threads in (1, 2):
            call = functools.partial(f, q64, threads=threads)
            out[f"c_t{threads}_s"] = median_call(call, repeats) / batch
    return out


def _fresh(*args: str) -> dict:
    command = [sys.executable, "-m", "pvosimr.study.bench.seam", "--worker", *args]
    env = {**os.environ, "PVOSIMR_QUIET": "1"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(routes: Sequence[str], dtypes: Sequence[str], batch: int, repeats: int) -> dict:
    """Cold then warm fresh processes per route and dtype (one new cache folder each)."""
    rows = []
    for route in routes:
        for k, dtype in enumerate(dtypes):
            with tempfile.TemporaryDirectory(prefix="pvosimr-seam-cache-") as folder:
                common = (route, dtype, str(batch), str(repeats), folder)
                cold = _fresh(*common, "0")
                time_c = route == routes[0] and k == 0
                warm = _fresh(*common, "1" if time_c else "0")
            rows.append({"cold": cold, "warm": warm, "load": os.getloadavg()})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return {"case": CASE, "batch": batch, "rows": rows}


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs"


def markdown(result: dict) -> str:
    """The tables of :func:`measure`'s result."""
    lines = [
        f"# XLA without a C compiler: the emitter against the seam ({result['case']}, CPU)",
        "",
        "`jit(vmap(G))`, fresh processes: cold = empty persistent cache, warm = the cache the "
        f"cold process wrote; time per configuration at B = {result['batch']:,} (warm process). "
        "Load average (1, 5, 15 min) after each pair.",
        "",
        "| route | dtype | graph | trace | compile cold | compile warm | per config | error "
        "| load |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    timed_c = []
    for row in result["rows"]:
        cold, warm = row["cold"], row["warm"]
        if "c_t1_s" in warm:
            timed_c.append(warm)
        load = ", ".join(f"{x:.1f}" for x in row["load"])
        lines.append(
            f"| {cold['route']} | {cold['dtype']} | {cold['graph_s']:.2f} s | "
            f"{cold['trace_s']:.2f} s | {cold['compile_s']:.2f} s | {warm['compile_s']:.2f} s | "
            f"{_fmt(warm['run_s'])} | {warm['error']:.1e} | {load} |"
        )
    lines.append("")
    for warm in timed_c:
        lines.append(
            f"Generated C, `f(qs)` float64, same batch, in the {warm['route']} process: "
            f"{_fmt(warm['c_t1_s'])} (1 thread), {_fmt(warm['c_t2_s'])} (2 threads) per "
            "configuration."
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=6, metavar="ARG")
    parser.add_argument("--out", type=Path, default=REPORT_DIR / "figures")
    parser.add_argument("--routes", default=",".join(ROUTES))
    parser.add_argument("--dtypes", default="float64,float32")
    parser.add_argument("--batch", type=int, default=BATCH)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    if args.worker:
        route, dtype, batch, repeats, cache, time_c = args.worker
        print(json.dumps(_worker(route, dtype, int(batch), int(repeats), cache, time_c == "1")))
        return 0
    result = measure(args.routes.split(","), args.dtypes.split(","), args.batch, args.repeats)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "seam.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    (args.out / "seam.md").write_text(markdown(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
