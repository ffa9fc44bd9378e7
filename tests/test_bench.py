"""pvosimr bench: a tiny run writes the report, its JSON twin and the plot, and they agree.

One end-to-end run of ``pvosimr bench`` (a two-link chain, two samples, the small Fig. 4 sizes)
is shared by the tests below; the compiled C goes to a fresh folder so that it is built in this
run, and the bridge to Pinocchio's C++ comes from the usual cache (built once per pin).
"""

import contextlib
import io
import json

import pytest

from pvosimr import codegen, reference, toolchain
from pvosimr.study import bench, cli
from pvosimr.study.bench import results, timing

pytest.importorskip("matplotlib")

CASE = "chain_welded_every_link_n2"
LABELS = bench.labels(16)  # the method names of a run with --batch-size 16
TARGETS = [t for t, _, _ in bench.targets({"cases": [], "batch_size": bench.BATCH_SIZE})]
SIZES = [2, 4, 8, 16, 32, 64, 128, 256]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The files of one tiny run: ``(folder, markdown, json, stdout)``."""
    tmp = tmp_path_factory.mktemp("bench")
    out = tmp / "figures"
    argv = ["bench", "--robots", CASE, "--repeats", "2", "--quick-scaling"]
    argv += ["--batch-size", "16", "--out", str(out)]
    stdout = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(stdout):
        mp.setattr(codegen, "default_cache_dir", lambda: tmp / "cache")
        assert cli.main(argv) == 0
    md = (out / "timings.md").read_text(encoding="utf-8")
    data = json.loads((out / "timings.json").read_text(encoding="utf-8"))
    return out, md, data, stdout.getvalue()


def table(md: str, heading: str) -> dict[str, list[str]]:
    """The markdown table below ``heading``: first cell -> the other cells, header row included."""
    lines = md.split(heading, 1)[1].split("\n\n")[1].splitlines()
    rows = [[c.strip() for c in line[1:-1].split("|")] for line in lines if line[:3] != "|--"]
    return {row[0]: row[1:] for row in rows}


def codegen_possible() -> bool:
    try:
        import casadi  # noqa: F401

        toolchain.find_compiler("c")
    except (ImportError, OSError):
        return False
    return True


def test_the_four_files_and_the_printed_summary(written):
    out, md, _, stdout = written
    paths = [out / f"timings.{ext}" for ext in ("md", "json", "png", "pdf")]
    assert stdout.splitlines()[:4] == [str(p) for p in paths]
    assert (out / "timings.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "timings.pdf").read_bytes()[:5] == b"%PDF-"
    # Atlas is not in this run: the targets say so instead of inventing a verdict.
    assert stdout.splitlines()[4:] == [
        f"not met  {t}: not measured (atlas/feet_6d not in this run)" for t in TARGETS
    ]
    headings = ["## Machine", "## Targets", "## Time per call", "## Ratio to Pinocchio"]
    headings += ["## Generated C", "## Time against problem size"]
    assert [md.index(h) for h in headings] == sorted(md.index(h) for h in headings)


def test_every_method_has_a_timing_or_a_reason(written):
    _, md, data, _ = written
    (case,) = data["cases"]
    assert (case["name"], case["nv"], case["m"]) == (f"{CASE}/welds_6d", 2, 12)
    timed, skipped = set(case["timings"]), case["skipped"]
    expected = set(LABELS)
    if not reference.extension_available():
        expected -= {"pin-pv-osimr", "ref:pin-pv-osimr"}
    if "codegen:pv-osimr" in skipped:
        expected.discard("codegen-external:pv-osimr")
    assert timed | set(skipped) == expected and not timed & set(skipped)
    assert all(why for why in skipped.values())
    not_timed = md.split("Not timed:\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert not_timed == [f"- {case['name']}, {LABELS[k]}: {w}" for k, w in skipped.items()]
    # Two dofs and twelve constraint rows: G is singular and the Cholesky route refuses it.
    assert skipped["ref:pin-cholesky"].startswith("refused")
    assert all(t["median_us"] > 0 and t["samples"] >= 2 for t in case["timings"].values())
    errors = case["errors_vs_numpy_pv_osimr"]
    assert all(errors[k] <= bench.CHECK_TOLERANCE for k in timed)


def test_codegen_is_built_in_this_run_where_it_can_be(written):
    _, md, data, _ = written
    (case,) = data["cases"]
    if not codegen_possible():
        assert case["skipped"]["codegen:pv-osimr"] and not case["codegen"]
        return
    assert "codegen:pv-osimr" in case["timings"]
    facts = case["codegen"]
    assert facts["compiled_in_this_run"] and facts["compile_seconds"] > 0
    assert facts["flags"] == ["-O3"] and facts["n_instructions"] > 0
    row = table(md, "## Generated C (codegen)")[case["name"]]
    assert row[0] == str(facts["n_instructions"]) and row[2] == f"{facts['compile_seconds']:.1f} s"


def test_the_markdown_says_what_the_json_holds(written):
    _, md, data, _ = written
    (case,) = data["cases"]
    us = results.microseconds
    times = table(md, "## Time per call")
    assert times["method"] == [f"{case['name']} (nv 2, m 12)"]
    for k, t in case["timings"].items():
        q = [us(t[f"{p}_us"] * 1e-6) for p in ("median", "p25", "p75")]
        assert times[LABELS[k]] == [f"{q[0]} [{q[1]}–{q[2]}]"]
    for k, why in case["skipped"].items():
        assert times[LABELS[k]] == [why]
    verdicts = table(md, "## Targets")
    for target in data["targets"]:
        assert verdicts[target["target"]] == [target["measured"], f"**{target['verdict']}**"]


def test_ratios_divide_by_the_faster_pinocchio_call_of_the_same_run(written):
    _, md, data, _ = written
    (case,) = data["cases"]
    medians = {k: t["median_us"] for k, t in case["timings"].items()}
    divisor = min((k for k in bench.PIN if k in medians), key=medians.get)
    ratios = table(md, "## Ratio to Pinocchio")
    best = results.microseconds(medians[divisor] * 1e-6)
    assert ratios["ratio"] == [f"{case['name']} (÷ {divisor}, {best} µs)"]
    for k, median in medians.items():
        (cell,) = ratios[f"ratio {LABELS[k]}"]
        assert cell.endswith("×") and float(cell[:-1]) == pytest.approx(
            median / medians[divisor], abs=0.005 + 1e-9
        )
    assert ratios[f"ratio {LABELS[divisor]}"] == ["1.00×"]
    assert ratios[f"ratio {LABELS['ref:pin-cholesky']}"] == ["refused"]


def test_the_scaling_sweep_covers_the_small_chains(written):
    _, md, data, _ = written
    sizes = timing.quick_sizes()
    assert all(timing.links(f, s) <= 16 for f, v in sizes.items() for s in v)
    assert sizes["chain_welded_every_link"] == (2, 4, 8, 16)
    assert [(p["family"], p["size"]) for p in data["scaling"]] == [
        (f, s) for f, v in sizes.items() for s in v
    ]
    methods = set(timing.SCALING_METHODS)
    if not reference.extension_available():
        methods.discard("pin-pv-osimr")
    for p in data["scaling"]:
        assert p["n"] == timing.links(p["family"], p["size"]) and set(p["medians_us"]) == methods
    rows = table(md, "### chain_welded_every_link")
    assert [n for n in rows if n.isdigit()] == ["2", "4", "8", "16"]
    assert len(rows["slope"]) == 1 + len(methods)


def test_log_log_slope_reads_the_exponent():
    points = [results.ScalingPoint("f", n, n, 6, {"a": 3.0 * n**2, "b": 5.0}) for n in (2, 4, 8)]
    assert results.log_log_slope(points, "a") == pytest.approx(2.0)
    assert results.log_log_slope(points, "b") == pytest.approx(0.0, abs=1e-12)
    assert results.log_log_slope(points[:1], "a") is None
    assert results.log_log_slope(points, "c") is None
    # Only the four largest sizes count: a steeper tail gives its own slope.
    tail = [results.ScalingPoint("f", n, n, 6, {"a": n**3 if n >= 32 else n}) for n in SIZES]
    assert results.log_log_slope(tail, "a") == pytest.approx(3.0)


def test_targets_on_a_synthetic_result():
    """The verdicts follow the numbers (no measurement needed to check the arithmetic)."""

    def timing_of(us):
        return bench.Timing([us * 1e-6] * 3, 1)

    case = bench.CaseResult("atlas/feet_6d", 36, 12)
    case.timings = {
        "pin-efpa": timing_of(10.0),
        "pin-pv-osimr": timing_of(12.0),
        "codegen:pv-osimr": timing_of(4.0),
        "batch:pv-osimr": timing_of(40.0),
        "numpy:pv-osimr": timing_of(1500.0),
    }
    result = {"cases": [case], "batch_size": bench.BATCH_SIZE}
    verdicts = [v for _, _, v in bench.targets(result)]
    assert verdicts == ["met", "not met", "not met"]
    case.timings["batch:pv-osimr"] = timing_of(29.0)
    case.timings["numpy:pv-osimr"] = timing_of(900.0)
    assert [v for _, _, v in bench.targets(result)] == ["met", "met", "met"]
    # A smaller batch than the target's B is reported but cannot meet the target.
    assert bench.targets({**result, "batch_size": 16})[1][2] == "not met"
    missing = bench.targets({"cases": [], "batch_size": bench.BATCH_SIZE})
    assert all("atlas/feet_6d not in this run" in m and v == "not met" for _, m, v in missing)
