"""pvosimr bench: a tiny run writes the report, its JSON twin and the plot."""

import json

import pytest

from pvosimr.study import bench, cli

pytest.importorskip("matplotlib")


def test_tiny_bench_writes_the_files(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PVOSIMR_CACHE_DIR", str(tmp_path / "cache"))  # codegen builds here
    out = tmp_path / "figures"
    argv = ["bench", "--robots", "chain_welded_every_link_n2", "--repeats", "2"]
    argv += ["--quick-scaling", "--batch-size", "16", "--out", str(out)]
    assert cli.main(argv) == 0

    names = {p.name for p in out.iterdir()}
    assert {"timings.md", "timings.json", "timings.png", "timings.pdf"} <= names
    assert (out / "timings.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "timings.pdf").read_bytes()[:5] == b"%PDF-"

    md = (out / "timings.md").read_text(encoding="utf-8")
    for heading in ("## Machine", "## Targets", "## Time per call", "## Ratio to Pinocchio"):
        assert heading in md
    assert "| ratio pvosimr numpy PV-OSIMr |" in md
    assert "## Time against problem size" in md and "| slope |" in md
    # Atlas is not in this run: the targets say so instead of inventing a verdict.
    assert md.count("not measured (atlas/feet_6d not in this run)") == 3
    # Two dofs and twelve constraint rows: G is singular and the Cholesky route refuses it.
    assert "refused" in md

    data = json.loads((out / "timings.json").read_text(encoding="utf-8"))
    (case,) = data["cases"]
    assert case["name"] == "chain_welded_every_link_n2/all_links_6d" or case["m"] == 12
    timed = case["timings"]
    assert {"numpy:pv-osimr", "pin-efpa", "pin-pv-osimr"} <= set(timed)
    assert "ref:pin-cholesky" in case["skipped"]
    if "codegen:pv-osimr" not in case["skipped"]:
        assert "codegen:pv-osimr" in timed and case["codegen"]["compiled_in_this_run"]
    assert all(t["median_us"] > 0 and t["samples"] >= 2 for t in timed.values())
    # Ratios divide by the faster bare Pinocchio call of this run (which one is faster on a
    # two-link chain is down to timing noise), so that call's own row reads exactly 1.00×.
    divisor = min(bench.PIN, key=lambda k: timed[k]["median_us"])
    assert f"| ratio {bench.LABELS[divisor]} | 1.00× |" in md
    assert {p["family"] for p in data["scaling"]} == set(bench.SCALING_SIZES)
    assert "timings.md" in capsys.readouterr().out


def test_targets_on_a_synthetic_result():
    """The verdicts follow the numbers (no measurement needed to check the arithmetic)."""

    def timing(us):
        return bench.Timing([us * 1e-6] * 3, 1)

    case = bench.CaseResult("atlas/feet_6d", 36, 12)
    case.timings = {
        "pin-efpa": timing(10.0),
        "pin-pv-osimr": timing(12.0),
        "codegen:pv-osimr": timing(4.0),
        "batch:pv-osimr": timing(40.0),
        "numpy:pv-osimr": timing(1500.0),
    }
    result = {"cases": [case], "batch_size": bench.BATCH_SIZE}
    verdicts = [v for _, _, v in bench.targets(result)]
    assert verdicts == ["met", "not met", "not met"]
    case.timings["batch:pv-osimr"] = timing(29.0)
    case.timings["numpy:pv-osimr"] = timing(900.0)
    assert [v for _, _, v in bench.targets(result)] == ["met", "met", "met"]
