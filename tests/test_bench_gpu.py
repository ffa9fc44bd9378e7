"""The bench's section GPU (:mod:`benchmarks.gpu`): the plain statement where no GPU is
present, its tables and target verdicts, frax's comparison, and the way through an export to a
GPU machine without pvosimr (:mod:`~benchmarks.gpu_export`, :mod:`~benchmarks.gpu_runner`):
its dry run (the kernels built for sm_90, every file present) and its run on the CPU device;
the ones that compile kernels or XLA functions or run a runner are slow.  The GPU itself is
checked and timed where a session has one.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("casadi")

from benchmarks import targets  # noqa: E402  (after the skips)


def test_the_bench_section_says_when_no_gpu_is_present(tmp_path):
    from benchmarks import gpu

    result = gpu.run(cpu=False, float32=False)
    md, _ = gpu.write(result, tmp_path)
    text = md.read_text(encoding="utf-8")
    if result["gpus"]:
        pytest.skip(f"a GPU is present: {result['gpus']}")
    assert "No GPU present" in text and "not measured" in text
    assert "| case | B | dtype |" not in text  # no table of invented numbers
    assert "GRiD" in text  # the published figure, quoted as such
    assert "frax's dense route on the GPU: not measured (no GPU present)." in text
    assert [v for _, _, v in targets.gpu_targets(result)] == ["not measured"] * 10


def test_the_committed_gpu_report_renders_from_its_json(tmp_path):
    """figures/gpu.md is what the writer makes of figures/gpu.json, byte for byte (so a report
    is rendered from its measurements alone, and the writer keeps the committed format)."""
    import json
    from pathlib import Path

    from benchmarks import gpu

    figures = Path(__file__).resolve().parents[1] / "figures"
    result = json.loads((figures / "gpu.json").read_text(encoding="utf-8"))
    md, js = gpu.write(result, tmp_path)
    assert md.read_text(encoding="utf-8") == (figures / "gpu.md").read_text(encoding="utf-8")
    assert js.read_text(encoding="utf-8") == (figures / "gpu.json").read_text(encoding="utf-8")


def test_the_bench_section_tables(tmp_path):
    from benchmarks import gpu

    process = {
        "case": "atlas/feet_6d", "batch": 4096, "graph_s": 0.1, "trace_s": 0.5,
        "compile_s": 100.0, "instructions": 8119, "xla_f64_s": 1e-4, "c_t1_s": 2e-6,
        "c_t2_s": 1e-6, "ffi_s": 1.5e-6,
    }  # fmt: skip
    rows = [
        {"case": "x", "batch": 1024, "dtype": "float64", "G_s": 1e-8, "grad_s": 3e-8,
         "cpu_c_s": 1e-6},
        {"case": "x", "batch": 1024, "dtype": "float32", "G_s": 1e-8, "grad_s": 3e-8,
         "cpu_c_s": 1e-6, "cuda_G_s": 2e-9, "cuda_grad_s": 5e-9},
    ]  # fmt: skip
    float32 = [{"robot": "ur5", "nq": 6, "m": 6, "error": 3e-7}]
    cpu = {"cold": process, "warm": {**process, "compile_s": 1.0}, "load": (1.0, 1.0, 1.0)}
    text = gpu.markdown({"gpus": ["cuda:0"], "gpu": rows, "float32": float32, "cpu": cpu})
    assert "| x | 1,024 | float64 | — | — | 0.01 µs | 0.03 µs | 1 µs |" in text
    assert "| x | 1,024 | float32 | 0.002 µs | 0.005 µs | 0.01 µs | 0.03 µs | 1 µs |" in text
    assert "The CUDA kernels: not measured" in text
    assert "frax's dense route on the GPU: not measured (not run)." in text
    assert "| cold (empty cache) | 0.10 s | 0.50 s | 100.00 s | 100.60 s |" in text
    assert "| warm (persistent cache) | 0.10 s | 0.50 s | 1.00 s | 1.60 s |" in text
    assert "| FFI | 1.5 µs |" in text and "| ur5 | 6 | 6 | 3e-07 |" in text


def test_the_gpu_targets_and_frax_table():
    from benchmarks import gpu

    atlas = {"case": "atlas/feet_6d", "batch": 65536, "cpu_c_s": 1e-6}
    rows = [
        {**atlas, "dtype": "float64", "G_s": 0.015e-6, "grad_s": 0.075e-6,
         "cuda_G_s": 0.001e-6, "cuda_grad_s": 0.003e-6},
        {**atlas, "dtype": "float32", "G_s": 0.011e-6, "grad_s": 0.02e-6,
         "cuda_G_s": 0.02e-6, "cuda_grad_s": 0.05e-6},
    ]  # fmt: skip
    frax_rows = [
        {"batch": 1024, "dtype": "float32", "frax_G_s": 2e-6, "frax_grad_s": 9e-6,
         "frax_G_dtype": "float64", "G_s": 0.1e-6, "grad_s": 0.3e-6, "G_dtype": "float32"},
    ]  # fmt: skip
    frax = {"robot": "G1", "agreement": 1e-12, "rows": frax_rows}
    checks = {"atlas/feet_6d": {"float64": {"G": 3e-16, "grad": 2e-15},
                                "float32": {"G": 2e-7, "grad": 1e-6}}}  # fmt: skip
    result = {
        "gpus": ["cuda:0"], "gpu": rows, "frax": frax, "kernel_checks": checks,
        "tolerances": {"float64": 1e-12, "float32": 1e-4}, "jax_cuda": "no such route",
    }  # fmt: skip
    verdicts = targets.gpu_targets(result)
    assert [v for _, _, v in verdicts] == [
        "met", "not met", "not met",  # the XLA route's
        "met", "met", "not met", "met", "met", "met", "not measured",
    ]  # fmt: skip
    assert verdicts[1][1] == "5.00×" and verdicts[3][1] == "float64 2.0e-15, float32 1.0e-06"
    assert verdicts[7][1] == "15.0× as fast" and verdicts[8][1] == "1000.0× as fast"
    assert verdicts[9][1] == "not measured: no such route"
    text = gpu.markdown(result)
    assert "| 1,024 | float32 | 2 µs (float64) | 0.1 µs | 20.0× | 9 µs (float64) | 0.3 µs" in text
    assert "atlas/feet_6d float64: G 3.0e-16, grad 2.0e-15" in text
    rows.pop()
    assert targets.gpu_targets(result)[2][1:] == ("not measured: not in the run", "not measured")
    checks["atlas/feet_6d"]["float32"] = {"error": "off the CPU library by 0.1 (> 0.0001)"}
    failed = ("float32: off the CPU library by 0.1 (> 0.0001)", "not met")
    assert targets.gpu_targets(result)[3][1:] == failed
    frax["rows"] = []
    assert "not timed, the two disagree (1.0e-12)" in gpu.markdown(result)


def test_without_frax_the_gpu_section_says_what_to_install(monkeypatch, tmp_path):
    import pvosimr.extras
    from benchmarks import gpu, gpu_export

    monkeypatch.setattr(pvosimr.extras, "missing_extra", lambda *modules: "frax")
    result = {"gpus": ["cuda:0"], "gpu": [], "frax": gpu_export._frax(tmp_path)}
    hint = 'needs frax: pip install "pvosimr[frax]")'
    assert "frax's dense route on the GPU: not measured (the section GPU" in gpu.markdown(result)
    assert hint in gpu.markdown(result)


def _standalone(folder, *args: str) -> subprocess.CompletedProcess:
    """``run.py`` of ``folder`` in a fresh interpreter where pvosimr and Pinocchio cannot be
    imported (the GPU machine has neither)."""
    blocked = "import sys; sys.modules['pvosimr'] = sys.modules['pinocchio'] = None; "
    run = "import runpy; sys.argv.pop(0); runpy.run_path(sys.argv[0], run_name='__main__')"
    command = [sys.executable, "-c", blocked + run, str(folder / "run.py"), *args]
    return subprocess.run(command, cwd=folder.parent, capture_output=True, text=True)


@pytest.mark.slow  # builds the kernels with NVRTC and ptxas, exports the XLA functions
def test_the_prepared_gpu_run_dry_runs_without_a_gpu(tmp_path, x64):
    """The GPU run's plan without a device: the kernels of every case compiled for sm_90 with
    ptxas's figures, every file the runner reads present, what it would time listed; a missing
    file is refused."""
    pytest.importorskip("cuda.bindings")
    from benchmarks import gpu_export

    folder = tmp_path / "export"
    gpu_export.export(folder, cases=("double_pendulum",), batches=(8, 16), frax_batches=None)
    done = _standalone(folder, "--out", str(tmp_path / "out"), "--dry-run")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "double_pendulum float64: kernels for sm_90, ptx (pvosimr_vjp " in done.stdout
    assert "at B = 8, 16, float64 and float32" in done.stdout
    (folder / "double_pendulum_cuda_float32.cubin").unlink()
    again = _standalone(folder, "--out", str(tmp_path / "out"), "--dry-run")
    assert again.returncode != 0 and "missing double_pendulum_cuda_float32.cubin" in again.stderr


class FakeDriver:
    """The driver API calls the runner makes, on host memory: a module is the kernels' host
    build (``CudaDelassus.host_library``) of the image loaded, a launch calls it with the
    launch's own arguments, read back from its parameter array."""

    class CUresult:
        CUDA_SUCCESS = 0

    CUdevice_attribute = SimpleNamespace(
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR=9,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR=0,
    )

    def __init__(self, images: dict[bytes, object]) -> None:
        self.images, self.buffers, self.launches = images, {}, []

    def __getattr__(self, name: str):  # cuInit, cuCtxSetCurrent, cuEventRecord, ...: success
        return lambda *args: (0, None)

    def CUstream(self, handle):
        return handle

    def cuDeviceGetAttribute(self, attribute, device):
        return 0, attribute

    def cuMemAlloc(self, size):
        import ctypes

        buffer = ctypes.create_string_buffer(size)
        self.buffers[ctypes.addressof(buffer)] = buffer
        return 0, ctypes.addressof(buffer)

    def cuMemcpyHtoD(self, dst, src, size):
        import ctypes

        ctypes.memmove(dst, src, size)
        return (0,)

    def cuMemcpyDtoH(self, dst, src, size):
        return self.cuMemcpyHtoD(dst, src, size)

    def cuModuleLoadData(self, address):
        import ctypes

        found = [lib for data, lib in self.images.items()
                 if ctypes.string_at(address, len(data)) == data]  # fmt: skip
        return 0, found[0]

    def cuModuleGetFunction(self, module, name):
        return 0, (module, name.decode())

    def cuLaunchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        import ctypes

        library, name = function
        count = 5 if name == "pvosimr_G" else 6
        addresses = (ctypes.c_uint64 * count).from_address(params)
        values = [ctypes.c_uint64.from_address(a).value for a in addresses]
        assert gx * bx >= values[-1] > (gx - 1) * bx  # a thread per configuration
        entry = getattr(library, name)
        entry.restype = None
        entry.argtypes = [ctypes.c_void_p] * (count - 1) + [ctypes.c_longlong]
        entry(*values)
        self.launches.append((name, values[-1]))
        return (0,)

    def cuEventElapsedTime(self, start, stop):
        return 0, 1.0


@pytest.mark.slow  # builds the kernels (NVRTC, ptxas, the host C), exports the XLA functions
def test_the_runner_checks_and_launches_the_kernels_as_exported(tmp_path, monkeypatch, x64):
    """The runner's kernel path on a driver that runs the kernels' host build: the layouts of
    q, W and the outputs, the launch's arguments and the references of the export agree (the
    check passes, a wrong reference is refused), each row times G and the gradient."""
    import cuda.bindings

    from benchmarks import gpu_export, gpu_runner
    from pvosimr import zoo
    from pvosimr.codegen.cuda import compile_cuda

    folder = tmp_path / "export"
    manifest = gpu_export.export(folder, cases=("four_bar",), batches=(5,), frax_batches=None)
    robot = zoo.load_case("four_bar")
    images = {}
    for dtype in ("float64", "float32"):
        kernel = compile_cuda(robot.model, robot.constraints, dtype=dtype, vjp=True)
        images[(folder / f"four_bar_cuda_{dtype}.cubin").read_bytes()] = kernel.host_library()
    driver = FakeDriver(images)
    monkeypatch.setattr(cuda.bindings, "driver", driver, raising=False)
    monkeypatch.setattr(gpu_runner, "HERE", folder)
    import json

    spec = json.loads(manifest.read_text(encoding="utf-8"))
    cuda = gpu_runner.Cuda(spec["block"])
    checks = gpu_runner.check_kernels(spec, spec["cases"], cuda)["four_bar"]
    assert "error" not in checks["float64"] and "error" not in checks["float32"], checks
    assert max(checks["float64"].values()) <= 1e-12 and max(checks["float32"].values()) <= 1e-4
    cpu = jax.devices("cpu")[0]
    rows = list(gpu_runner.case_rows(spec, spec["cases"][0], [5], cpu, cuda,
                                     {"four_bar": checks}, until=0.0))  # fmt: skip
    assert all(r["cuda_G_s"] == r["cuda_grad_s"] == 1e-3 / 5 for r in rows)
    assert all("G_s" not in r for r in rows)  # past the budget: no XLA compile
    assert ("pvosimr_vjp", 5) in driver.launches
    reference = folder / "four_bar_cuda_grad.npy"
    np.save(reference, np.load(reference) * (1 + 1e-9))
    checks = gpu_runner.check_kernels(spec, spec["cases"], cuda)["four_bar"]
    assert checks["float64"]["error"].startswith("off the CPU library by 1e-09")


@pytest.mark.slow  # exports, runs the runner in a fresh interpreter, builds its C
def test_the_gpu_part_runs_from_an_export_without_pvosimr(tmp_path, x64):
    """gpu_export → run.py (no pvosimr or Pinocchio; here on the CPU device, no kernels) → the
    section with its rows, and frax's comparison: a case of two XLA routes (here the double
    pendulum's twice; frax's own is the next test's) with its rows beside each other; a
    function whose output is off the recorded reference is refused, not timed."""
    import json

    from benchmarks import gpu, gpu_export

    folder, out = tmp_path / "export", tmp_path / "out"
    manifest = gpu_export.export(folder, cases=("double_pendulum",), batches=(8,),
                                 frax_batches=None)  # fmt: skip
    spec = json.loads(manifest.read_text(encoding="utf-8"))
    route = spec["cases"][0]["xla"][""]
    pair = {"name": "G1", "agreement": 1e-13, "xla": {"frax_": route, "": route}, "kernels": {}}
    manifest.write_text(json.dumps({**spec, "frax": pair, "frax_batches": [2]}), "utf-8")
    done = _standalone(folder, "--out", str(out), "--device", "cpu")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads((out / "gpu_rows.json").read_text(encoding="utf-8"))
    assert [(r["batch"], r["dtype"]) for r in rows["gpu"]] == [(8, "float64"), (8, "float32")]
    assert all(r["error"] <= 1e-12 for r in rows["gpu"])
    assert np.isfinite([r[k] for r in rows["gpu"] for k in ("G_s", "grad_s", "cpu_c_s")]).all()
    assert rows["host"]["device"] == "cpu:0" and "cores" in rows["host"]  # machine.describe
    assert [r["batch"] for r in rows["frax"]["rows"]] == [2, 2]
    frax_times = [r[k] for r in rows["frax"]["rows"] for k in ("frax_G_s", "frax_grad_s", "G_s")]
    assert np.isfinite(frax_times).all()
    text = gpu.markdown({**rows, "gpus": ["cuda:0"]})
    assert "| double_pendulum | 8 | float64 | — | — |" in text and "--sections gpu-export" in text
    assert "double_pendulum float64: not measured: no CUDA driver or GPU here" in text
    assert "on G1 beside pvosimr's XLA route, same configurations" in text
    assert "| 2 | float32 |" in text
    reference = folder / "double_pendulum_float64_G_reference.npy"
    wrong = np.load(reference)
    wrong[0, 0, 0] += 1e-6
    np.save(reference, wrong)
    again = _standalone(folder, "--out", str(out), "--device", "cpu")
    assert again.returncode != 0 and "off the reference" in again.stderr


@pytest.mark.slow  # loads frax's G1, compiles its dense G once
def test_frax_is_exported_as_a_case_of_two_routes_that_agree(tmp_path, monkeypatch, x64):
    """frax's G1 as the GPU machine gets it: frax's dense route on frax's q and pvosimr's on
    Pinocchio's, agreeing on the output recorded for frax's route.  (Serializing a route and
    running it from the folder is the double pendulum's above: here each route is only run,
    float64, for its recorded G; serializing the G1's eight functions takes minutes.)"""
    pytest.importorskip("frax")
    from benchmarks import gpu_export

    def run_only(out, stem, G, q, qs, W):
        G_ref = gpu_export._save(out, f"{stem}G", jax.jit(jax.vmap(G))(qs))
        return {"q": q, "float64": {"G_reference": G_ref}, "m": len(W)}

    monkeypatch.setattr(gpu_export, "_route", run_only)
    frax = gpu_export._frax(tmp_path)
    assert frax["agreement"] <= 1e-10 and set(frax["xla"]) == {"frax_", ""}
    q_frax, q = (np.load(tmp_path / frax["xla"][k]["q"]) for k in ("frax_", ""))
    assert len(q_frax) == len(q) == gpu_export.CONFIGS and frax["xla"][""]["m"] == 12


def _gpu() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return torch.cuda.is_available()


@pytest.mark.skipif(not _gpu(), reason="no CUDA device: the kernels are checked where one is lent")
def test_the_gpu_run_checks_and_times_the_kernels_on_a_gpu(tmp_path, x64):
    """On a GPU: every kernel of Atlas 2×6D within 1e-12 (float64) and 1e-4 (float32) of the
    CPU library, then timed beside the XLA route."""
    import json

    from benchmarks import gpu_export

    folder, out = tmp_path / "export", tmp_path / "out"
    gpu_export.export(folder, cases=("atlas/feet_6d",), batches=(1024,), frax_batches=None)
    done = _standalone(folder, "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads((out / "gpu_rows.json").read_text(encoding="utf-8"))
    checks = rows["kernel_checks"]["atlas/feet_6d"]
    assert max(checks["float64"].values()) <= 1e-12 and max(checks["float32"].values()) <= 1e-4
    assert all(r["cuda_G_s"] > 0 and r["cuda_grad_s"] > 0 for r in rows["gpu"])


def test_the_standalone_runner_writes_the_bench_record():
    """run.py imports nothing of pvosimr: its records are the bench's, every field written."""
    from dataclasses import asdict

    from benchmarks import gpu_runner, record

    row = {"case": "x", "batch": 8, "dtype": "float64", "G_s": 1e-8, "grad_s": 3e-8,
           "cuda_G_s": 1e-9, "cuda_grad_s": None}  # fmt: skip
    records = gpu_runner.records([row], "cpu:0")
    assert [asdict(record.Record(**r)) for r in records] == records
    assert records[1]["value"] == 3e-8 and records[1]["run"] == "cpu:0"
    methods = ["xla:G:B8:float64", "xla:grad:B8:float64", "cuda:G:B8:float64"]
    assert [r["method"] for r in records] == methods
