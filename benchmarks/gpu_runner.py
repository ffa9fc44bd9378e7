"""The section GPU's GPU part, run as ``run.py`` from the folder :mod:`.gpu_export` wrote, on a
GPU machine with JAX, ``cuda-bindings`` and numpy but nothing of pvosimr (``machine.py`` beside
it is :mod:`pvosimr.study.machine`, loaded by path).

``python run.py --out OUT`` checks every CUDA kernel on the GPU against the CPU library's output
recorded at export (a kernel that fails is reported, not timed) and every ``jax.export``
function against its output there; then times, per case, B and dtype, the kernels (CUDA events
around each launch), the XLA route and frax's (blocking), interleaved, beside the host's
batched C; and writes ``OUT/gpu_rows.json`` after each row.  ``--dry-run`` checks the folder
and lists what would be timed, touching no device.
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
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROUNDS = 20
#: The rows' keys of the kernels: G, and the gradient of ⟨W, G⟩ where the case has its kernel.
KERNELS = {"G": "pvosimr_G", "grad": "pvosimr_vjp"}


def records(rows: list[dict], run: str) -> list[dict]:
    """The GPU rows as the bench's records (:class:`pvosimr.study.record.Record`'s JSON, written
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


def interleaved(calls: dict[str, Callable[[], float]], rounds: int = ROUNDS) -> dict[str, float]:
    """Median seconds of each call (it returns its own seconds), after one warm-up, over
    ``rounds`` rounds that call each once in turn (the bench's interleaved loop)."""
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for call in calls.values():
        call()
    for _ in range(rounds):
        for name, call in calls.items():
            samples[name].append(call())
    return {name: statistics.median(s) for name, s in samples.items()}


def blocking(call: Callable[[], object]) -> Callable[[], float]:
    def timed() -> float:
        start = time.perf_counter()
        call()
        return time.perf_counter() - start

    return timed


def relative(a: np.ndarray, b: np.ndarray) -> float:
    error = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
    return error if np.isfinite(error) else float("inf")


def host_batch(folder: Path):
    """``f(qs)`` of the exported C in ``folder``, built here, on every online CPU."""
    spec = json.loads((folder / "export.json").read_text(encoding="utf-8"))
    name, m = spec["name"], spec["m"]
    library = folder / f"lib{name}.so"
    command = [*shlex.split(os.environ.get("CC", "cc")), *spec["part_flags"]["G"], "-shared",
               str(folder / f"{name}.c"), "-o", str(library)]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, text=True)
    entry = getattr(ctypes.CDLL(str(library)), f"{name}_eval_batch")
    entry.restype = ctypes.c_int
    p = ctypes.c_void_p
    entry.argtypes = [p, ctypes.c_longlong, p, p, ctypes.c_int, p]

    def f(qs: np.ndarray) -> None:
        out, bad = np.empty((len(qs), m, m)), ctypes.c_longlong(-1)
        rc = entry(qs.ctypes.data, len(qs), None, out.ctypes.data, 0, ctypes.addressof(bad))
        if rc != 0:
            raise RuntimeError(f"{name}: code {rc} at row {bad.value}")

    return f


class Xla:
    """The folder's ``jax.export`` functions on one device, each deserialized and jitted once."""

    def __init__(self, device) -> None:
        self.device, self._jitted = device, {}

    def checked(self, name: str, q: np.ndarray, reference: str, tolerance: float):
        """``name`` on the device after its output at ``q`` was checked: (f, error)."""
        import jax
        from jax import export

        if name not in self._jitted:
            exported = export.deserialize(bytearray((HERE / name).read_bytes()))
            self._jitted[name] = jax.jit(exported.call)
        f = self._jitted[name]
        error = relative(np.asarray(f(jax.device_put(q, self.device)), float),
                         np.load(HERE / reference))  # fmt: skip
        if not error <= tolerance:
            raise AssertionError(f"{name} on {self.device}: off the reference by {error:.3g}")
        return f, error

    def timer(self, f, qs: np.ndarray) -> Callable[[], float]:
        import jax

        x = jax.device_put(qs, self.device)
        return blocking(lambda: f(x).block_until_ready())


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
        self.arch = f"sm_{major}{minor}"
        self.start, self.stop = (self.ok(driver.cuEventCreate(0), "cuEventCreate") for _ in "ab")
        self.stream = driver.CUstream(0)

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

    def kernels(self, spec: dict, q: np.ndarray, W: np.ndarray, B: int, check: bool):
        """Timers of G and the gradient at B (q's rows repeated), or, with ``check``, their
        largest errors at q against the CPU library's references."""
        functions = self.functions(spec)
        dtype = np.dtype(spec["dtype"])
        qs = np.ascontiguousarray(np.resize(q, (B, q.shape[1])).T, dtype=dtype)
        ws = np.ascontiguousarray(np.repeat(W.reshape(-1, 1), B, axis=1), dtype=dtype)
        x, w, status = self.array(qs), self.array(ws), self.array(np.full(B, -1, np.int32))
        outs = {k: np.empty((spec["n_out"] if k == "G" else spec["nq"], B), dtype)
                for k in functions}  # fmt: skip
        pointers = {k: self.array(o) for k, o in outs.items()}
        inputs = {"G": [x, 0], "grad": [x, 0, w]}
        calls = {k: functools.partial(self.launch, f, [*inputs[k], pointers[k], status], B)
                 for k, f in functions.items()}  # fmt: skip
        buffers = [x, w, status, *pointers.values()]
        if not check:
            return calls, buffers
        errors = {}
        for key, pointer in pointers.items():
            calls[key]()
            codes = self.read(status, np.empty(B, np.int32))
            if codes.any():
                raise AssertionError(f"{spec['images']['ptx']}: status {codes.max()} on the GPU")
            out = self.read(pointer, outs[key]).T
            errors[key] = relative(out, np.load(HERE / spec[f"{key}_reference"]))
        self.free(buffers)
        return errors

    def free(self, pointers: list[int]) -> None:
        for pointer in pointers:
            self.ok(self.d.cuMemFree(pointer), "cuMemFree")


def machine(device, kind: str) -> dict:
    """The one machine description (``machine.py`` beside this file), with the device."""
    spec = importlib.util.spec_from_file_location("machine", HERE / "machine.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.describe(("jax", "jaxlib", "numpy", "cuda-bindings"), device=str(device),
                           device_kind=kind)  # fmt: skip


def check_kernels(manifest: dict, cases: list[dict], cuda: Cuda | None) -> dict:
    """Every kernel checked on the GPU first: ``{case: {dtype: errors or why not}}``."""
    checks: dict = {}
    for case in cases:
        q, W = np.load(HERE / case["q"]), np.load(HERE / case["W"])
        for dtype, spec in case["kernels"].items():
            tolerance = manifest["tolerances"][dtype]
            try:
                if cuda is None:
                    raise RuntimeError("not measured: no CUDA driver or GPU here")
                result = cuda.kernels(spec, q, W, len(q), check=True)
                if not (worst := max(result.values())) <= tolerance:
                    result["error"] = f"off the CPU library by {worst:.3g} (> {tolerance:g})"
            except (AssertionError, RuntimeError) as exc:
                result = {"error": str(exc)}
            checks.setdefault(case["name"], {})[dtype] = result
            print(f"check {case['name']} {dtype}: {result}", flush=True)
    return checks


def case_rows(manifest, case, batches, xla: Xla, cuda: Cuda | None, checks: dict, until: float):
    """The rows of one case, one (B, dtype) at a time: the kernels and the XLA route
    interleaved (the XLA route, whose compile per shape costs seconds, only until the
    ``time.monotonic()`` of ``until``), beside the host's C (None without a C compiler)."""
    q, W = np.load(HERE / case["q"]), np.load(HERE / case["W"])
    try:
        c = host_batch(HERE / case["c"])
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"{case['name']}: no batched C on this host ({exc})", file=sys.stderr)
        c = None
    for B in batches:
        qs = np.resize(q, (B, q.shape[1]))
        c_s = None if c is None else interleaved({"c": blocking(lambda qs=qs: c(qs))}, 5)["c"]
        for dtype in ("float64", "float32"):
            x, f = qs.astype(dtype), case["functions"][dtype]
            tolerance = manifest["tolerances"][f"xla-{dtype}"]
            calls, error = {}, None
            for key in ("G", "grad") if time.monotonic() < until else ():
                g, error = xla.checked(f[key], q.astype(dtype), f[f"{key}_reference"], tolerance)
                calls[key] = xla.timer(g, x)
            buffers = []
            if cuda is not None and "error" not in checks[case["name"]][dtype]:
                kernel_calls, buffers = cuda.kernels(case["kernels"][dtype], q, W, B, False)
                calls.update({f"cuda_{k}": call for k, call in kernel_calls.items()})
            seconds = interleaved(calls)
            if buffers:
                cuda.free(buffers)
            yield {"case": case["name"], "batch": B, "dtype": dtype, "error": error,
                   **{f"{k}_s": s / B for k, s in seconds.items()},
                   "cpu_c_s": None if c_s is None else c_s / B}  # fmt: skip


def frax_rows(frax: dict, batches: list[int], xla: Xla, tolerances: dict) -> dict:
    """frax's dense route and pvosimr's XLA route on the G1, per B and dtype, interleaved."""
    inputs = {"frax_": np.load(HERE / frax["q_frax"]), "": np.load(HERE / frax["q"])}
    rows = []
    for B in batches:
        for dtype in ("float64", "float32"):
            row: dict = {"batch": B, "dtype": dtype}
            calls = {}
            for prefix, q in inputs.items():
                f = frax["functions"][prefix + dtype]
                x = np.resize(q, (B, q.shape[1])).astype(dtype)
                for key in ("G", "grad"):
                    g, _ = xla.checked(f[key], q.astype(dtype), f[f"{key}_reference"],
                                       tolerances[f"xla-{dtype}"])  # fmt: skip
                    calls[f"{prefix}{key}_s"] = xla.timer(g, x)
                row[prefix + "G_dtype"] = f["G_dtype"]
            rows.append({**row, **{k: s / B for k, s in interleaved(calls).items()}})
    return {"robot": frax["robot"], "agreement": frax["agreement"], "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="run.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--device", default="gpu", help="the JAX platform to time on")
    parser.add_argument("--cases", nargs="*", help="these of the manifest's cases only")
    parser.add_argument("--batches", nargs="*", type=int, help="these batch sizes only")
    parser.add_argument("--no-frax", action="store_true", help="leave frax's comparison out")
    parser.add_argument("--dry-run", action="store_true", help="list what would be timed")
    parser.add_argument("--budget", type=float, default=360.0,
                        help="seconds after which no XLA function or frax is compiled")  # fmt: skip
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
    xla = Xla(devices[0])
    result = {
        "gpus": [str(d) for d in devices] if args.device == "gpu" else [],
        "host": machine(devices[0], devices[0].device_kind),
        "exported": manifest["exported"],
        "tolerances": manifest["tolerances"],
        "jax_cuda": "JAX's CUDA route is timed where pvosimr runs on the GPU machine",
        "kernel_checks": check_kernels(manifest, cases, cuda),
        "gpu": [],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "gpu_rows.json"
    for case in cases:
        for row in case_rows(manifest, case, batches, xla, cuda, result["kernel_checks"], until):
            result["gpu"].append(row)
            result["records"] = records(result["gpu"], str(devices[0]))
            path.write_text(json.dumps(result, indent=1), encoding="utf-8")  # what is done
            print(json.dumps(row), flush=True)
    frax = manifest.get("frax")
    if frax and time.monotonic() > until:
        result["frax"] = {"unavailable": f"past the run's --budget of {args.budget:g} s"}
    elif frax and "unavailable" in frax:
        result["frax"] = frax
    elif frax and not args.no_frax:
        result["frax"] = frax_rows(manifest["frax"], manifest["frax_batches"], xla,
                                   manifest["tolerances"])  # fmt: skip
        path.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(path)
    return 0


def dry_run(manifest: dict, cases: list[dict], batches: list[int]) -> int:
    """Every file the run reads present; what it would check and time, printed."""
    for case in cases:
        names = [case["q"], case["W"], case["c"]]
        for dtype, spec in case["kernels"].items():
            keys = [k for k, name in KERNELS.items() if name in spec["kernels"]]
            names += [*spec["images"].values(), *(spec[f"{k}_reference"] for k in keys)]
            names += [v for k, v in case["functions"][dtype].items() if k != "G_dtype"]
            usage = ", ".join(f"{r['kernel']} {r['registers']} registers, {r['spill_loads']} B "
                              "spill loads" for r in spec["resources"])  # fmt: skip
            print(f"{case['name']} {dtype}: kernels for {', '.join(spec['images'])} ({usage})")
        missing = [n for n in names if not (HERE / n).exists()]
        if missing:
            raise FileNotFoundError(f"{case['name']}: missing {', '.join(missing)}")
        at = ", ".join(map(str, batches))
        print(f"{case['name']}: check the kernels, then time them, the XLA route and the "
              f"host's C at B = {at}, float64 and float32")  # fmt: skip
    frax = manifest.get("frax") or {"unavailable": "not exported"}
    print("frax:", frax.get("unavailable", "its dense route beside pvosimr's XLA route"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
