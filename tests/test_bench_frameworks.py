"""pvosimr bench, section "JAX and PyTorch": frax's dense G agrees with pvosimr's on the G1 (and
the check fails on a wrong map), the trivial baselines double, the targets' verdicts follow the
numbers, and a tiny run of the section times every method after checking it.

Skipped with the reason where jax, torch or frax is not installed. Everything that imports jax
or torch takes seconds and is marked slow; the default suite checks the verdicts and options.
"""

import contextlib
import io
import json
import platform
import subprocess
import sys

import numpy as np
import pytest

from benchmarks import frameworks, names, targets
from pvosimr.study import cli

CASE = "chain_welded_every_link_n2"  # two links: the one small library of these tests
BATCHES = (1, 3)
METHODS = ("direct:G", "direct:vjp", "jax:G", "jax:grad", "torch:G", "torch:G+backward")


def _need(*modules: str) -> None:
    for module in modules:
        pytest.importorskip(module, reason=f"the section needs {module}")


@pytest.fixture(scope="module")
def g1():
    """frax's G1 with Pinocchio's model of its URDF, 3 configurations, frax's G at them."""
    _need("jax", "frax")
    import jax

    from benchmarks import frax_route

    case = frax_route.load()
    qs = case.random_q(np.random.default_rng(1), 3)
    G = np.stack([np.asarray(jax.jit(case.dense_g)(q)) for q in qs])
    return case, qs, G


@pytest.mark.slow  # jit-compiles frax's G1 (about ten seconds)
def test_frax_dense_g_agrees_with_pvosimr_on_the_g1(g1):
    from benchmarks import frax_route

    case, qs, G = g1
    assert case.m == 12 and case.model.nq == case.robot.nq == 36
    assert frax_route.agreement(case, qs, G) <= frax_route.AGREEMENT_TOLERANCE


@pytest.mark.slow
def test_frax_agreement_fails_on_a_wrong_map(g1, monkeypatch):
    """The check catches each convention: configurations, quaternion order, row frames."""
    from benchmarks import frax_route

    case, qs, G = g1
    assert frax_route.agreement(case, qs, G[::-1]) > 1e-3  # G of other configurations
    swapped = qs.copy()
    swapped[:, 3:7] = qs[:, [4, 5, 6, 3]]  # a quaternion read in Pinocchio's order
    swapped[:, 3:7] /= np.linalg.norm(swapped[:, 3:7], axis=1, keepdims=True)
    assert frax_route.agreement(case, swapped, G) > 1e-3
    monkeypatch.setattr(case, "local", lambda G_frax, q: np.asarray(G_frax))  # world rows
    assert frax_route.agreement(case, qs, G) > 1e-3
    G_nan = G.copy()
    G_nan[0, 0, 0] = np.nan
    monkeypatch.undo()
    assert frax_route.agreement(case, qs, G_nan) == np.inf  # NaN never passes


@pytest.mark.slow  # imports jax and loads frax's G1 (several seconds)
def test_pinocchio_q_maps_frax_layout():
    _need("jax", "frax")
    from benchmarks import frax_route

    case = frax_route.load()
    q = case.random_q(np.random.default_rng(0), 1)[0]
    p = case.pinocchio_q(q)
    assert np.array_equal(p[:3], q[:3]) and np.array_equal(p[3:7], q[[4, 5, 6, 3]])
    name = case.robot.joint_names[case.robot.nv_floating + 4]
    assert p[case.model.joints[case.model.getJointId(name)].idx_q] == q[7 + 4]


@pytest.mark.slow  # imports jax and torch, may build the trivial library
def test_trivial_calls_double():
    _need("jax", "torch")
    import jax

    from benchmarks.frameworks import (
        check,
        check_backward,
        jax_double,
        torch_backward,
        torch_double,
    )

    jax.config.update("jax_enable_x64", True)
    double = jax_double()
    assert check(double) == 0.0
    assert check(torch_double(), "torch") == 0.0
    assert check_backward(*torch_backward()) == 0.0
    assert check(lambda x: x * 2.5) == 4.0  # the check can fail: 0.5 × 8
    x = np.arange(12.0).reshape(3, 4)
    assert np.array_equal(np.asarray(jax.vmap(double)(x)), 2 * x)


def _timed(us: dict[str, float]) -> dict:
    """A case of the section's JSON with these medians (µs)."""
    timings = {k: {"median_us": v, "p25_us": v, "p75_us": v} for k, v in us.items()}
    return {"name": names.ATLAS_6D, "nv": 36, "m": 12, "timings": timings, "skipped": {}}


def test_targets_follow_the_numbers():
    times = {"direct:G:B4096": 1000.0, "jax:G:B4096": 1140.0, "direct:vjp:B4096": 3000.0}
    times |= {"jax:grad:B4096": 3700.0, "direct:G:B1": 5.0, "jax:trivial:B1": 10.0}
    times |= {"jax:G:B1": 16.5, "direct:vjp:B1": 15.0, "jax:grad:B1": 27.5}
    times |= {"torch:G:B1": 20.0, "torch:trivial:B1": 12.0}
    section = {"cases": [_timed(times)], "batches": [1, 64, 4096]}
    verdicts = [v for _, _, v in targets.framework_targets(section)]
    assert verdicts == ["met", "not met", "met", "not met", "not met"]
    section["cases"][0]["name"] = "other/case"
    rows = targets.framework_targets(section)
    assert all(v == "not met" and "not measured" in m for _, m, v in rows)


def test_the_direct_call_after_the_trivial_one_is_reported_beside_the_bound():
    times = {"direct:vjp:B1": 9.0, "jax:trivial:B1": 10.0, "jax:grad:B1": 24.0}
    section = {"cases": [_timed(times)], "batches": [1]}
    row = targets.framework_targets(section)[3]
    assert row[2] == "not met" and "after the trivial call" not in row[1]
    section["cases"][0]["timings"]["jax:trivial+direct:vjp:B1"] = {"median_us": 22.5}
    row = targets.framework_targets(section)[3]
    assert row[2] == "not met"  # the bound is unchanged
    assert row[1].endswith("(the direct call after the trivial call: 12.5 µs)")


class _Output:
    """A stand-in for a JAX array: its buffer's address."""

    def __init__(self, at: int) -> None:
        self.at = at

    def unsafe_buffer_pointer(self) -> int:
        return self.at


def test_the_addresses_of_xla_s_outputs_are_counted_and_reported():
    turn = iter([64, 128, 192] * 3)
    assert frameworks.output_buffers(lambda x: _Output(next(turn)), [None], calls=9) == 3
    assert frameworks.output_buffers(lambda x: _Output(64), [None]) == 1
    case = _timed({}) | {"errors": {}}
    section = {"cases": [case], "batches": [64, 4096], "missing": [], "unavailable": {}}
    assert "Addresses of XLA's output" not in "\n".join(frameworks.lines(section))
    case["output_buffers"] = {"jax:G:B64": 1, "jax:G:B4096": 3}
    text = "\n".join(frameworks.lines(section))
    probe = frameworks.OUTPUT_PROBE
    assert f"jit(vmap(G)) in {probe} calls right after the timing: 1 at B = 64, 3 at B" in text


def test_missing_extras_are_named_in_one_line(monkeypatch):
    monkeypatch.setattr(frameworks, "missing_extra", lambda m: m)
    section = frameworks.time_frameworks([], batches=BATCHES, repeats=1)
    assert section["missing"] == ["jax", "torch"] and section["frax"] is None
    text = "\n".join(frameworks.lines(section))
    assert 'pip install "pvosimr[jax]"' in text and 'pip install "pvosimr[torch]"' in text


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One tiny run of the section alone through the command line: (markdown, json)."""
    _need("jax", "torch", "matplotlib")
    out = tmp_path_factory.mktemp("frameworks")
    argv = ["bench", "--sections", "frameworks", "--frameworks-robots", CASE, "--no-frax"]
    argv += ["--frameworks-batches", *map(str, BATCHES), "--repeats", "1", "--out", str(out)]
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main(argv) == 0
    assert sorted(p.name for p in out.iterdir()) == ["timings.json", "timings.md"]  # no plot
    md = (out / "timings.md").read_text(encoding="utf-8")
    return md, json.loads((out / "timings.json").read_text(encoding="utf-8"))


@pytest.mark.slow  # imports jax and torch, builds the two-link chain's G and gradient
def test_section_times_every_method_after_checking_it(run):
    md, data = run
    section = data["frameworks"]
    (case,) = section["cases"]
    expected = {f"{k}:B{B}" for k in METHODS for B in BATCHES}
    expected |= {"jax:trivial:B1", "torch:trivial:B1", "torch:trivial+backward:B1"}
    expected |= {"jax:trivial+direct:G:B1", "jax:trivial+direct:vjp:B1"}
    assert set(case["timings"]) == expected, case["skipped"]
    for name, error in case["errors"].items():
        bound = frameworks.G_TOLERANCE if ":G:" in name else frameworks.GRADIENT_TOLERANCE
        assert error <= bound, name
    assert case["bitwise"] and all(case["bitwise"].values())  # the same library
    probed = case["output_buffers"]  # XLA's output addresses, probed at B > 1 only
    assert list(probed) == ["jax:G:B3"] and 1 <= probed["jax:G:B3"] <= frameworks.OUTPUT_PROBE
    assert frameworks.HEADING in md and "## Targets" not in md  # the section alone
    assert len(section["targets"]) == 5


def test_the_committed_section_is_its_json_written_again():
    """figures/jax-torch/timings.md's section "JAX and PyTorch" is what the writer makes of
    timings.json's section: every table, check, line and target comes from the JSON."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "figures" / "jax-torch"
    section = json.loads((folder / "timings.json").read_text(encoding="utf-8"))["frameworks"]
    committed = (folder / "timings.md").read_text(encoding="utf-8")
    written = "\n".join(frameworks.lines(section)) + "\n"
    assert committed.endswith(written) and written.startswith(f"\n{frameworks.HEADING}\n")
    assert frameworks.jsonable(section)["targets"] == section["targets"]


def test_section_runs_on_its_cases_only():
    """By default the section takes the run's cases among its own: none here."""
    import benchmarks as bench

    parser = bench.build_parser()
    args = parser.parse_args(["--robots", CASE])
    assert bench.frameworks_options(args, [CASE]) is None
    args = parser.parse_args(["--robots", CASE, "--frameworks-robots", CASE, "--no-frax"])
    assert bench.frameworks_options(args, [CASE]) == {
        "cases": (CASE,),
        "batches": names.FRAMEWORK_BATCHES,
        "frax_batches": (),
    }


_FAULTS_OF_A_SECOND_BUFFER = """
import resource, sys
import numpy as np
if sys.argv[1] == "kept":
    from benchmarks.environment import keep_freed_memory
    print(keep_freed_memory())
def faults_of_a_fresh_buffer():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    a = np.empty(1 << 20)  # 8 MiB, written whole
    a.fill(1.0)
    del a
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
faults_of_a_fresh_buffer()
print(faults_of_a_fresh_buffer())
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_the_bench_process_keeps_the_memory_it_frees():
    """A second 8 MiB buffer is written without page faults once the bench keeps freed memory;
    without it glibc hands the first back, and the second pays hundreds."""
    runs = {}
    for how in ("kept", "default"):
        done = subprocess.run(
            [sys.executable, "-c", _FAULTS_OF_A_SECOND_BUFFER, how],
            capture_output=True, text=True, check=True, timeout=120,
        )  # fmt: skip
        runs[how] = done.stdout.split("\n")
    assert runs["kept"][0].startswith("kept by the process")
    assert int(runs["kept"][1]) < 10 and int(runs["default"][0]) > 100
