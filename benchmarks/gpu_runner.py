"""The GPU part of the section GPU, run from a folder that :mod:`.gpu_export` wrote, on a machine
that has JAX and a GPU but none of pvosimr's dependencies (no Pinocchio, CasADi or frax).

:func:`benchmarks.gpu_export.export` copies this file into its folder as ``run.py``;
``python run.py --out OUT`` there:

- compiles each case's generated C (written by :func:`pvosimr.codegen.export`) with the host's C
  compiler and the export's flags, for the batched call on every core of the host;
- deserializes each ``jax.export`` function (``jit(vmap(G))`` and ``jit(vmap(grad ⟨W, G⟩))`` per
  case and dtype, frax's dense route and pvosimr's on frax's G1), checks its output on the GPU
  at the folder's configurations against the output recorded where it was exported, then times
  it at every B of the manifest (median of ``repeats`` blocking calls, per configuration);
- writes ``OUT/gpu_rows.json``, the rows :func:`benchmarks.gpu.markdown` reads
  (``pvosimr bench --sections gpu --device-rows OUT/gpu_rows.json``), again after each
  row, so a run cut short keeps what it measured; ``--cases``, ``--batches`` and
  ``--no-frax`` time part of the folder.

It imports jax, numpy and the standard library only, and nothing of pvosimr.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
#: Largest relative error of a GPU output against the exporting machine's CPU output.
TOLERANCE = {"float64": 1e-12, "float32": 1e-5}


def records(rows: list[dict], run: str) -> list[dict]:
    """The GPU rows as the bench's records (:class:`pvosimr.study.record.Record`'s JSON, written
    out: this file imports nothing of pvosimr; a test checks the fields): seconds per
    configuration of G and its gradient."""
    return [
        {"case": r["case"], "method": f"xla:{key}:B{r['batch']}:{r['dtype']}",
         "quantity": "time per q", "value": r[f"{key}_s"], "unit": "s", "spread": None,
         "run": run}
        for r in rows
        for key in ("G", "grad")
    ]  # fmt: skip


def median_call(call, repeats: int) -> float:
    """Median seconds of the blocking ``call()`` over ``repeats``, after one warm-up."""
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def host_batch(folder: Path):
    """``f(qs) -> Gs`` of the exported C in ``folder``, built here, on every online CPU."""
    spec = json.loads((folder / "export.json").read_text(encoding="utf-8"))
    name, m = spec["name"], spec["m"]
    library = folder / f"lib{name}.so"
    compiler = shlex.split(os.environ.get("CC", "cc"))
    flags = spec["part_flags"]["G"]
    command = [*compiler, *flags, "-shared", str(folder / f"{name}.c"), "-o", str(library)]
    subprocess.run(command, check=True, capture_output=True, text=True)
    entry = getattr(ctypes.CDLL(str(library)), f"{name}_eval_batch")
    entry.restype = ctypes.c_int
    pointer = ctypes.POINTER(ctypes.c_double)
    entry.argtypes = [pointer, ctypes.c_longlong, pointer, pointer, ctypes.c_int,
                      ctypes.POINTER(ctypes.c_longlong)]  # fmt: skip

    def f(qs: np.ndarray) -> np.ndarray:
        qs = np.ascontiguousarray(qs, dtype=np.float64)
        out, bad = np.empty((len(qs), m, m)), ctypes.c_longlong(-1)
        rc = entry(qs.ctypes.data_as(pointer), len(qs), None, out.ctypes.data_as(pointer), 0,
                   ctypes.byref(bad))  # fmt: skip
        if rc != 0:
            raise RuntimeError(f"{name}: code {rc} at row {bad.value}")
        return out

    return f


def relative(a: np.ndarray, b: np.ndarray) -> float:
    error = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
    return error if np.isfinite(error) else float("inf")


class Functions:
    """The folder's exported functions, each deserialized and jitted once."""

    def __init__(self, device) -> None:
        self.device, self._jitted = device, {}

    def __call__(self, name: str):
        if name not in self._jitted:
            import jax
            from jax import export

            exported = export.deserialize(bytearray((HERE / name).read_bytes()))
            self._jitted[name] = jax.jit(exported.call)
        return self._jitted[name]

    def timed(self, name: str, qs: np.ndarray, reference: str, repeats: int) -> tuple[float, float]:
        """Seconds per configuration of ``name`` on ``qs`` (on the device), after its output
        at the first rows was checked against the recorded ``reference``: (seconds, error)."""
        import jax

        f, x = self(name), jax.device_put(qs, self.device)
        expected = np.load(HERE / reference)[: len(qs)]  # qs repeats the reference's rows
        error = relative(np.asarray(f(x)[: len(expected)], dtype=float), expected)
        if not error <= TOLERANCE[qs.dtype.name]:
            raise AssertionError(f"{name} on {self.device}: off the reference by {error:.3g}")
        return median_call(lambda: f(x).block_until_ready(), repeats) / len(qs), error


def case_rows(case: dict, batches: list[int], functions: Functions, repeats: int):
    """The section's rows of one case, one at a time: G and gradient per B and dtype, and the
    host's C (None where the host has no C compiler)."""
    q = np.load(HERE / case["q"])
    try:
        c = host_batch(HERE / case["c"])
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"{case['name']}: no batched C on this host ({exc})", file=sys.stderr)
        c = None
    for B in batches:
        qs = np.resize(q, (B, q.shape[1]))
        c_s = None if c is None else median_call(lambda qs=qs: c(qs), 5) / B
        for dtype in ("float64", "float32"):
            x = qs.astype(dtype)
            f = case["functions"][dtype]
            G_s, error = functions.timed(f["G"], x, f["G_reference"], repeats)
            grad_s, _ = functions.timed(f["grad"], x, f["grad_reference"], repeats)
            yield {"case": case["name"], "batch": B, "dtype": dtype, "G_s": G_s,
                   "grad_s": grad_s, "cpu_c_s": c_s, "error": error}  # fmt: skip


def frax_rows(frax: dict, batches: list[int], functions: Functions, repeats: int) -> dict:
    """frax's dense route and pvosimr's on the G1, per B and dtype (the keys of
    :func:`benchmarks.frax_compare.device_rows`)."""
    inputs = {"frax_": np.load(HERE / frax["q_frax"]), "": np.load(HERE / frax["q"])}
    rows = []
    for B in batches:
        for dtype in ("float64", "float32"):
            row: dict = {"batch": B, "dtype": dtype}
            for prefix, q in inputs.items():
                f = frax["functions"][prefix + dtype]
                x = np.resize(q, (B, q.shape[1])).astype(dtype)
                row[prefix + "G_s"], _ = functions.timed(f["G"], x, f["G_reference"], repeats)
                row[prefix + "grad_s"], _ = functions.timed(
                    f["grad"], x, f["grad_reference"], repeats
                )
                row[prefix + "G_dtype"] = f["G_dtype"]
            rows.append(row)
    return {"robot": frax["robot"], "agreement": frax["agreement"], "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="run.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--device", default="gpu", help="the JAX platform to time on")
    parser.add_argument("--cases", nargs="*", help="these of the manifest's cases only")
    parser.add_argument("--batches", nargs="*", type=int, help="these batch sizes only")
    parser.add_argument("--no-frax", action="store_true", help="leave frax's comparison out")
    args = parser.parse_args(argv)
    import jax

    jax.config.update("jax_enable_x64", True)
    manifest = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))
    devices = jax.devices(args.device)
    functions = Functions(devices[0])
    result: dict = {"gpus": [str(d) for d in devices] if args.device == "gpu" else []}
    result["host"] = {"machine": platform.machine(), "cpus": os.cpu_count(),
                      "python": sys.version.split()[0], "jax": jax.__version__,
                      "device": str(devices[0]), "device_kind": devices[0].device_kind}  # fmt: skip
    result["exported"], result["gpu"] = manifest["exported"], []
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "gpu_rows.json"
    batches = args.batches or manifest["batches"]
    for case in manifest["cases"]:
        if args.cases and case["name"] not in args.cases:
            continue
        for row in case_rows(case, batches, functions, args.repeats):
            result["gpu"].append(row)
            result["records"] = records(result["gpu"], str(devices[0]))
            path.write_text(json.dumps(result, indent=1), encoding="utf-8")  # what is done
            print(f"{row['case']} B={row['batch']} {row['dtype']}: G {row['G_s']:.3g} s/q, "
                  f"gradient {row['grad_s']:.3g} s/q", flush=True)  # fmt: skip
    if manifest.get("frax") and not args.no_frax:
        result["frax"] = frax_rows(manifest["frax"], manifest["frax_batches"], functions,
                                   args.repeats)  # fmt: skip
        path.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
