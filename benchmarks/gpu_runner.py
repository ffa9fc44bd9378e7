"""The section GPU's GPU part, run as ``run.py`` from the folder :mod:`.gpu_export` wrote, on a
GPU machine with JAX, ``cuda-bindings`` and numpy but nothing of pvosimr (``machine.py`` beside
it is :mod:`pvosimr.study.machine`, loaded by path).

``python run.py --out OUT`` checks every CUDA kernel on the GPU against the CPU library's output
recorded at export (a kernel that fails is reported, not timed) and every ``jax.export``
function against its output there; then times, per case, B and dtype, the kernels (CUDA events
around each launch) and the XLA route (blocking), interleaved, beside the host's batched C,
then frax's dense route beside the XLA route; it writes ``OUT/gpu_rows.json`` after each row.
``--dry-run`` checks the folder and lists what would be timed, touching no device.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import importlib.util
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROUNDS = 20
DTYPES = ("float64", "float32")
#: The rows' keys of the kernels: G, and the gradient of ⟨W, G⟩ where the case has its kernel.
KERNELS = {"G": "pvosimr_G", "grad": "pvosimr_vjp"}
#: The keys of a manifest's entries that name a file of the folder.
FILE_KEYS = {"q", "W", "c", "G", "grad", "G_reference", "grad_reference"}


def records(rows: list[dict], run: str) -> list[dict]:
    """The GPU rows as the bench's records (:class:`benchmarks.record.Record`'s JSON, written
    out: this file imports nothing of pvosimr; a test checks the fields): seconds per
    configuration of each route's G and gradient."""
    return [
        {"case": r["case"], "method": f"{route}:{key}:B{r['batch']}:{r['dtype']}",
         "quantity": "time per q", "value": r[f"{prefix}{key}_s"], "unit": "s", "spread": None,
         "run": run}
        for r in rows
        for route, prefix in (("xla", ""), ("cuda", "cuda_"))
        for key in ("G", "grad")
        if r.get(f"{prefix}{key}_s") is not None
    ]  # fmt: skip


def interleaved(calls: dict[str, Callable[[], float | None]], rounds: int = ROUNDS) -> dict:
    """Median seconds of each call, after one warm-up, over ``rounds`` rounds that call each
    once in turn (the bench's interleaved loop); a call that returns a number (a kernel's CUDA
    events) gives its own seconds, any other is timed around (it blocks until its result)."""

    def seconds(call: Callable[[], float | None]) -> float:
        start = time.perf_counter()
        own = call()
        return own if isinstance(own, float) else time.perf_counter() - start

    for call in calls.values():
        call()
    samples = [{name: seconds(call) for name, call in calls.items()} for _ in range(rounds)]
    return {name: statistics.median(s[name] for s in samples) for name in calls}


def relative(a: np.ndarray, b: np.ndarray) -> float:
    error = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
    return error if np.isfinite(error) else float("inf")


def load(name: str) -> np.ndarray:
    return np.load(HERE / name)


def repeated(q: np.ndarray, B: int) -> np.ndarray:
    """B configurations: the rows of ``q`` repeated (the time does not depend on which)."""
    return np.resize(q, (B, q.shape[1]))


def host_batch(folder: Path) -> Callable[[np.ndarray], None]:
    """``f(qs)`` of the exported C in ``folder``, built here, on every online CPU."""
    spec = json.loads((folder / "export.json").read_text(encoding="utf-8"))
    name, m = spec["name"], spec["m"]
    library = folder / f"lib{name}.so"
    command = [*shlex.split(os.environ.get("CC", "cc")), *spec["part_flags"]["G"], "-shared",
               str(folder / f"{name}.c"), "-o", str(library)]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, text=True)
    entry = getattr(ctypes.CDLL(str(library)), f"{name}_eval_batch")
    entry.restype, p = ctypes.c_int, ctypes.c_void_p
    entry.argtypes = [p, ctypes.c_longlong, p, p, ctypes.c_int, p]

    def f(qs: np.ndarray) -> None:
        out, bad = np.empty((len(qs), m, m)), ctypes.c_longlong(-1)
        rc = entry(qs.ctypes.data, len(qs), None, out.ctypes.data, 0, ctypes.addressof(bad))
        if rc != 0:
            raise RuntimeError(f"{name}: code {rc} at row {bad.value}")

    return f


@functools.cache
def exported(path: Path) -> Callable:
    """The ``jax.export`` function in ``path``, deserialized and jitted once."""
    import jax
    from jax import export

    return jax.jit(export.deserialize(bytearray(path.read_bytes())).call)


def checked_xla(device, function: dict, q: np.ndarray, qs: np.ndarray, tolerance: float):
    """Timers of an exported route's G and gradient on ``device`` at ``qs``, each checked first
    at ``q`` against its output at export (raises AssertionError off it); and the larger error."""
    import jax

    timers, worst = {}, 0.0
    for key in ("G", "grad"):
        f = exported(HERE / function[key])
        out = np.asarray(f(jax.device_put(q, device)), float)
        error = relative(out, load(function[f"{key}_reference"]))
        if not error <= tolerance:
            raise AssertionError(f"{function[key]} on {device}: off the reference by {error:.3g}")
        x = jax.device_put(qs, device)
        timers[key], worst = lambda f=f, x=x: f(x).block_until_ready(), max(worst, error)
    return timers, worst


class Cuda:
    """The kernels on GPU 0 through the driver API (``cuda.bindings``): modules loaded from
    the folder's CUBIN for the device, else its PTX; buffers, launches and events."""

    def __init__(self, block: int) -> None:
        from cuda.bindings import driver

        self.d, self.block = driver, block
        self.ok(driver.cuInit(0), "cuInit")
        device = self.ok(driver.cuDeviceGet(0), "cuDeviceGet")
        context = self.ok(driver.cuDevicePrimaryCtxRetain(device), "retaining the context")
        self.ok(driver.cuCtxSetCurrent(context), "cuCtxSetCurrent")
        attribute = driver.CUdevice_attribute
        major, minor = (
            self.ok(driver.cuDeviceGetAttribute(getattr(attribute, a), device), a)
            for a in ("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR",
                      "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR")
        )  # fmt: skip
        self.arch, self.stream = f"sm_{major}{minor}", driver.CUstream(0)
        self.start, self.stop = (self.ok(driver.cuEventCreate(0), "cuEventCreate") for _ in "ab")

    def ok(self, result, doing: str):
        err, *value = result if isinstance(result, tuple) else (result,)
        if err != self.d.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"the CUDA driver failed {doing}: {err.name}")
        return value[0] if len(value) == 1 else value

    def functions(self, spec: dict) -> dict:
        """The kernels (by :data:`KERNELS`' keys) of the CUBIN for this device, else of the
        PTX (which needs a driver as new as the NVRTC that wrote it)."""
        images = [spec["images"][k] for k in (self.arch, "ptx") if k in spec["images"]]
        for image in images:
            data = np.frombuffer((HERE / image).read_bytes() + b"\0", dtype=np.uint8)
            err, module = self.d.cuModuleLoadData(data.ctypes.data)
            if err == self.d.CUresult.CUDA_SUCCESS:
                return {key: self.ok(self.d.cuModuleGetFunction(module, name.encode()), name)
                        for key, name in KERNELS.items() if name in spec["kernels"]}  # fmt: skip
            print(f"{image}: the driver refused it ({err.name})", file=sys.stderr)
        raise RuntimeError(f"no image the driver loads for {self.arch}: {', '.join(images)}")

    def array(self, host: np.ndarray) -> int:
        pointer = self.ok(self.d.cuMemAlloc(max(host.nbytes, 1)), "cuMemAlloc")
        self.ok(self.d.cuMemcpyHtoD(pointer, host.ctypes.data, host.nbytes), "cuMemcpyHtoD")
        return pointer

    def read(self, pointer: int, host: np.ndarray) -> np.ndarray:
        self.ok(self.d.cuMemcpyDtoH(host.ctypes.data, pointer, host.nbytes), "cuMemcpyDtoH")
        return host

    def free(self, pointers: list[int]) -> None:
        for pointer in pointers:
            self.ok(self.d.cuMemFree(pointer), "cuMemFree")

    def launch(self, function, pointers: list[int], B: int) -> float:
        """One launch on B configurations (as ``CudaDelassus.launch`` launches), its seconds
        between two CUDA events."""
        values = [np.array([int(x)], dtype=np.uint64) for x in pointers]
        values.append(np.array([B], dtype=np.int64))
        params = np.array([v.ctypes.data for v in values], dtype=np.uint64)
        grid = (B + self.block - 1) // self.block
        self.ok(self.d.cuEventRecord(self.start, self.stream), "cuEventRecord")
        self.ok(self.d.cuLaunchKernel(function, grid, 1, 1, self.block, 1, 1, 0, self.stream,
                                      params.ctypes.data, 0), "cuLaunchKernel")  # fmt: skip
        self.ok(self.d.cuEventRecord(self.stop, self.stream), "cuEventRecord")
        self.ok(self.d.cuEventSynchronize(self.stop), "cuEventSynchronize")
        return self.ok(self.d.cuEventElapsedTime(self.start, self.stop), "elapsed") / 1e3

    def kernels(self, spec: dict, q: np.ndarray, W: np.ndarray, B: int):
        """Launchers of G and the gradient at B (q's rows repeated, configurations fastest),
        their outputs (device pointer, host array) and every buffer to free."""
        dtype = np.dtype(spec["dtype"])
        qs = np.ascontiguousarray(repeated(q, B).T, dtype=dtype)
        ws = np.ascontiguousarray(np.repeat(W.reshape(-1, 1), B, axis=1), dtype=dtype)
        x, w, status = self.array(qs), self.array(ws), self.array(np.full(B, -1, np.int32))
        outs, calls = {}, {}
        for key, f in self.functions(spec).items():
            host = np.empty((spec["n_out"] if key == "G" else spec["nq"], B), dtype)
            outs[key] = (self.array(host), host)
            inputs = [x, 0] if key == "G" else [x, 0, w]
            calls[key] = functools.partial(self.launch, f, [*inputs, outs[key][0], status], B)
        return calls, outs, [x, w, status, *(p for p, _ in outs.values())]

    def check(self, spec: dict, q: np.ndarray, W: np.ndarray) -> dict[str, float]:
        """The kernels' largest errors at ``q`` against the CPU library's outputs."""
        calls, outs, buffers = self.kernels(spec, q, W, len(q))
        errors = {}
        for key, call in calls.items():
            call()
            if (codes := self.read(buffers[2], np.empty(len(q), np.int32))).any():
                raise AssertionError(f"{spec['images']['ptx']}: status {codes.max()} on the GPU")
            errors[key] = relative(self.read(*outs[key]).T, load(spec[f"{key}_reference"]))
        self.free(buffers)
        return errors


def machine(device) -> dict:
    """The one machine description (``machine.py`` beside this file), with the device."""
    spec = importlib.util.spec_from_file_location("machine", HERE / "machine.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.describe(("jax", "jaxlib", "numpy", "cuda-bindings"), device=str(device),
                           device_kind=device.device_kind)  # fmt: skip


def check_kernels(manifest: dict, cases: list[dict], cuda: Cuda | None) -> dict:
    """Every kernel checked on the GPU first: ``{case: {dtype: errors or why not}}``."""
    checks: dict = {}
    for case in cases:
        for dtype, spec in case["kernels"].items():
            tolerance = manifest["tolerances"][dtype]
            try:
                if cuda is None:
                    raise RuntimeError("not measured: no CUDA driver or GPU here")
                result = cuda.check(spec, load(case["q"]), load(case["W"]))
                if not (worst := max(result.values())) <= tolerance:
                    result["error"] = f"off the CPU library by {worst:.3g} (> {tolerance:g})"
            except (AssertionError, RuntimeError) as exc:
                result = {"error": str(exc)}
            checks.setdefault(case["name"], {})[dtype] = result
            print(f"check {case['name']} {dtype}: {result}", flush=True)
    return checks


def case_rows(manifest: dict, case: dict, batches, device, cuda: Cuda | None, checks: dict,
              until: float) -> Iterator[dict]:  # fmt: skip
    """The rows of one case, one (B, dtype) at a time: its XLA routes (``case["xla"]``, by
    the prefix of their keys; compiled per shape for seconds, so only until the
    ``time.monotonic()`` of ``until``) and its checked kernels interleaved, beside the host's
    C (None without a C compiler or where the case has none)."""
    c = None
    try:
        c = case.get("c") and host_batch(HERE / case["c"])
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"{case['name']}: no batched C on this host ({exc})", file=sys.stderr)
    for B in batches:
        qs = repeated(load(case["q"]), B) if c else None
        c_s = interleaved({"c": lambda qs=qs: c(qs)}, 5)["c"] / B if c else None
        for dtype in DTYPES:
            calls, row = {}, {"case": case["name"], "batch": B, "dtype": dtype, "error": None}
            tolerance = manifest["tolerances"][f"xla-{dtype}"]
            for prefix, route in case["xla"].items() if time.monotonic() < until else ():
                q = load(route["q"]).astype(dtype)
                timers, error = checked_xla(device, route[dtype], q, repeated(q, B), tolerance)
                calls.update({prefix + k: t for k, t in timers.items()})
                row["error"] = max(row["error"] or 0.0, error)
                if route[dtype]["G_dtype"] != dtype:
                    row[f"{prefix}G_dtype"] = route[dtype]["G_dtype"]
            buffers = []
            if cuda is not None and "error" not in checks[case["name"]][dtype]:
                W = load(case["W"])
                kernels, _, buffers = cuda.kernels(case["kernels"][dtype], load(case["q"]), W, B)
                calls.update({f"cuda_{k}": call for k, call in kernels.items()})
            seconds = interleaved(calls)
            if buffers:
                cuda.free(buffers)
            yield {**row, **{f"{k}_s": s / B for k, s in seconds.items()}, "cpu_c_s": c_s}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="run.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--device", default="gpu", help="the JAX platform to time on")
    parser.add_argument("--cases", nargs="*", help="these of the manifest's cases only")
    parser.add_argument("--batches", nargs="*", type=int, help="these batch sizes only")
    parser.add_argument("--dry-run", action="store_true", help="list what would be timed")
    parser.add_argument("--budget", type=float, default=360.0,
                        help="seconds after which no XLA function is compiled")  # fmt: skip
    args = parser.parse_args(argv)
    manifest = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))
    cases = [c for c in manifest["cases"] if not args.cases or c["name"] in args.cases]
    batches = args.batches or manifest["batches"]
    if args.dry_run:
        return dry_run(manifest, cases, batches)
    until = time.monotonic() + args.budget
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # the kernels' buffers too
    import jax

    jax.config.update("jax_enable_x64", True)
    devices = jax.devices(args.device)
    try:
        cuda = Cuda(manifest["block"])
    except (ImportError, OSError, RuntimeError) as exc:
        print(f"no CUDA kernels timed: {exc}", file=sys.stderr)
        cuda = None
    result = {
        "gpus": [str(d) for d in devices] if args.device == "gpu" else [],
        "host": machine(devices[0]),
        "exported": manifest["exported"],
        "tolerances": manifest["tolerances"],
        "jax_cuda": "JAX's CUDA route is timed where pvosimr runs on the GPU machine",
        "kernel_checks": check_kernels(manifest, cases, cuda),
        "gpu": [],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "gpu_rows.json"
    for case in cases:
        for row in case_rows(manifest, case, batches, devices[0], cuda, result["kernel_checks"],
                             until):  # fmt: skip
            result["gpu"].append(row)
            result["records"] = records(result["gpu"], str(devices[0]))
            path.write_text(json.dumps(result, indent=1), encoding="utf-8")  # what is done
            print(json.dumps(row), flush=True)
    frax = manifest.get("frax")
    if frax and "unavailable" not in frax and time.monotonic() > until:
        frax = {"unavailable": f"past the run's --budget of {args.budget:g} s"}
    elif frax and "unavailable" not in frax:
        rows = case_rows(manifest, frax, manifest["frax_batches"], devices[0], None, {}, np.inf)
        frax = {"robot": frax["name"], "agreement": frax["agreement"], "rows": list(rows)}
    result["frax"] = frax
    path.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(path)
    return 0


def files(entry: dict) -> Iterator[str]:
    """Every file a manifest entry names: under :data:`FILE_KEYS` and its images."""
    for key, value in entry.items():
        if isinstance(value, dict):
            yield from value.values() if key == "images" else files(value)
        elif key in FILE_KEYS and value is not None:
            yield value


def dry_run(manifest: dict, cases: list[dict], batches: list[int]) -> int:
    """Every file the run reads present; what it would check and time, printed."""
    for case in cases:
        for dtype, spec in case["kernels"].items():
            usage = ", ".join(f"{r['kernel']} {r['registers']} registers, {r['spill_loads']} B "
                              "spill loads" for r in spec["resources"])  # fmt: skip
            print(f"{case['name']} {dtype}: kernels for {', '.join(spec['images'])} ({usage})")
        missing = [n for n in files(case) if not (HERE / n).exists()]
        if missing:
            raise FileNotFoundError(f"{case['name']}: missing {', '.join(missing)}")
        print(f"{case['name']}: check the kernels, then time them, the XLA route and the "
              f"host's C at B = {', '.join(map(str, batches))}, float64 and float32")  # fmt: skip
    frax = manifest.get("frax") or {"unavailable": "not exported"}
    print("frax:", frax.get("unavailable", "its dense route beside pvosimr's XLA route"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
