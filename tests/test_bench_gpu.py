"""The bench's section GPU (:mod:`benchmarks.gpu`): the plain statement where no GPU is
present, its tables and target verdicts, frax's comparison, and the way through an export to a
machine with JAX alone (:mod:`~benchmarks.gpu_export`, :mod:`~benchmarks.
gpu_runner`); the ones that compile XLA functions or run a runner are slow.  The GPU itself is
timed where a session has one.
"""

from __future__ import annotations

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
    assert [v for _, _, v in targets.gpu_targets(result)] == ["not measured"] * 3


def test_the_bench_section_tables(tmp_path):
    from benchmarks import gpu

    process = {
        "case": "atlas/feet_6d", "batch": 4096, "graph_s": 0.1, "trace_s": 0.5,
        "compile_s": 100.0, "instructions": 8119, "xla_f64_s": 1e-4, "c_t1_s": 2e-6,
        "c_t2_s": 1e-6, "ffi_s": 1.5e-6,
    }  # fmt: skip
    rows = [{"case": "x", "batch": 1024, "dtype": "float64", "G_s": 1e-8, "grad_s": 3e-8,
             "cpu_c_s": 1e-6}]  # fmt: skip
    float32 = [{"robot": "ur5", "nq": 6, "m": 6, "error": 3e-7}]
    cpu = {"cold": process, "warm": {**process, "compile_s": 1.0}, "load": (1.0, 1.0, 1.0)}
    text = gpu.markdown({"gpus": ["cuda:0"], "gpu": rows, "float32": float32, "cpu": cpu})
    assert "| x | 1,024 | float64 | 0.01 µs | 0.03 µs | 1 µs |" in text
    assert "frax's dense route on the GPU: not measured (not run)." in text
    assert "| cold (empty cache) | 0.10 s | 0.50 s | 100.00 s | 100.60 s |" in text
    assert "| warm (persistent cache) | 0.10 s | 0.50 s | 1.00 s | 1.60 s |" in text
    assert "| FFI | 1.5 µs |" in text and "| ur5 | 6 | 6 | 3e-07 |" in text


def test_the_gpu_targets_and_frax_table():
    from benchmarks import gpu

    atlas = {"case": "atlas/feet_6d", "batch": 65536, "cpu_c_s": 1e-6}
    rows = [
        {**atlas, "dtype": "float64", "G_s": 0.015e-6, "grad_s": 0.075e-6},
        {**atlas, "dtype": "float32", "G_s": 0.011e-6, "grad_s": 0.02e-6},
    ]
    frax_rows = [
        {"batch": 1024, "dtype": "float32", "frax_G_s": 2e-6, "frax_grad_s": 9e-6,
         "frax_G_dtype": "float64", "G_s": 0.1e-6, "grad_s": 0.3e-6, "G_dtype": "float32"},
    ]  # fmt: skip
    frax = {"robot": "G1", "agreement": 1e-12, "rows": frax_rows}
    result = {"gpus": ["cuda:0"], "gpu": rows, "frax": frax}
    verdicts = targets.gpu_targets(result)
    assert [v for _, _, v in verdicts] == ["met", "not met", "not met"]
    assert verdicts[1][1] == "5.00×"
    text = gpu.markdown(result)
    assert "| 1,024 | float32 | 2 µs (float64) | 0.1 µs | 20.0× | 9 µs (float64) | 0.3 µs" in text
    rows.pop()
    assert targets.gpu_targets(result)[2][1:] == (
        "not measured: no such row in the run",
        "not measured",
    )
    frax["rows"] = []
    assert "not timed, the two disagree (1.0e-12)" in gpu.markdown(result)


def test_without_frax_the_gpu_section_says_what_to_install(monkeypatch):
    import pvosimr.extras
    from benchmarks import gpu

    monkeypatch.setattr(pvosimr.extras, "missing_extra", lambda *modules: "frax")
    result = {"gpus": ["cuda:0"], "gpu": [], "frax": gpu.frax_on_gpu()}
    hint = 'needs frax: pip install "pvosimr[frax]")'
    assert "frax's dense route on the GPU: not measured (the section GPU" in gpu.markdown(result)
    assert hint in gpu.markdown(result)


@pytest.mark.slow  # frax's G1 and pvosimr's XLA route compiled in both dtypes (about a minute)
def test_frax_beside_pvosimr_runs_on_any_device(x64):
    """The GPU part's frax comparison, on the CPU device at B = 2: both routes' G checked
    on the device before timing, every time finite, frax's float32 computed in its float64."""
    pytest.importorskip("frax")
    from benchmarks import gpu

    out = gpu.frax_on_gpu((2,), repeats=1, device=jax.devices("cpu")[0])
    assert out["agreement"] <= 1e-10
    assert [(r["batch"], r["dtype"], r["G_dtype"]) for r in out["rows"]] == [
        (2, "float64", "float64"), (2, "float32", "float32")
    ]  # fmt: skip
    times = [r[k] for r in out["rows"] for k in ("G_s", "grad_s", "frax_G_s", "frax_grad_s")]
    assert np.isfinite(times).all()


@pytest.mark.slow  # compiles the double pendulum's C and its XLA functions
def test_the_gpu_timings_run_on_any_device(x64):
    """The GPU part's code, on the CPU device with the smallest robot: G checked against the
    numpy path, every row's times finite (the GPU itself: where a session has one)."""
    from benchmarks import gpu

    rows = gpu.gpu_timings(("double_pendulum",), (16,), repeats=1, device=jax.devices("cpu")[0])
    assert [(r["batch"], r["dtype"]) for r in rows] == [(16, "float64"), (16, "float32")]
    assert all(np.isfinite([r["G_s"], r["grad_s"], r["cpu_c_s"]]).all() for r in rows)


@pytest.mark.slow  # exports, runs the runner in a fresh interpreter, builds its C
def test_the_gpu_part_runs_from_an_export_with_jax_alone(tmp_path, x64):
    """gpu_export → run.py (jax and numpy only, here on the CPU device) → the section with its
    rows; a function whose output is off the recorded reference is refused, not timed."""
    import json
    import subprocess
    import sys

    from benchmarks import gpu, gpu_export

    folder = tmp_path / "export"
    gpu_export.export(folder, cases=("double_pendulum",), batches=(8,), frax_batches=None)
    run = [sys.executable, str(folder / "run.py"), "--out", str(tmp_path / "out"),
           "--device", "cpu", "--repeats", "1"]  # fmt: skip
    blocked = "import sys; sys.modules['pvosimr'] = sys.modules['pinocchio'] = None; "
    script = (
        blocked + "import runpy; sys.argv.pop(0); runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    done = subprocess.run([sys.executable, "-c", script, *run[1:]], cwd=tmp_path,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]  # neither pvosimr nor pinocchio imported
    rows = json.loads((tmp_path / "out" / "gpu_rows.json").read_text(encoding="utf-8"))
    assert [(r["batch"], r["dtype"]) for r in rows["gpu"]] == [(8, "float64"), (8, "float32")]
    assert all(r["error"] <= 1e-12 for r in rows["gpu"])
    result = {**{k: rows[k] for k in gpu.DEVICE_KEYS if k in rows}, "gpus": ["cuda:0"]}
    text = gpu.markdown(result)
    assert "| double_pendulum | 8 | float64 |" in text and "--sections gpu-export" in text
    reference = folder / "double_pendulum_float64_G_reference.npy"
    wrong = np.load(reference)
    wrong[0, 0, 0] += 1e-6
    np.save(reference, wrong)
    again = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode != 0 and "off the reference" in again.stderr


def test_the_standalone_runner_writes_the_bench_record():
    """run.py imports nothing of pvosimr: its records are the bench's, every field written."""
    from dataclasses import asdict

    from benchmarks import gpu_runner
    from pvosimr.study import record

    row = {"case": "x", "batch": 8, "dtype": "float64", "G_s": 1e-8, "grad_s": 3e-8}
    records = gpu_runner.records([row], "cpu:0")
    assert [asdict(record.Record(**r)) for r in records] == records
    assert records[1]["value"] == 3e-8 and records[1]["run"] == "cpu:0"
