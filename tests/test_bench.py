"""pvosimr bench: a tiny run writes the report, its JSON twin and the plot, and they agree.

One end-to-end run of ``pvosimr bench`` (a two-link chain with its derivatives, two samples, the
small sizes of both sweeps, MuJoCo's route on the MJCF quadruped) is shared by the tests below;
the compiled C goes to a fresh folder so that it is built in this run, and the bridge to
Pinocchio's C++ comes from the usual cache (built once per pin).
"""

import contextlib
import io
import json
import statistics
from pathlib import Path

import numpy as np
import pytest

import benchmarks as bench
from benchmarks import crossover, derivatives, loop, methods, mujoco, report, scaling, targets, text
from pvosimr import reference
from pvosimr.codegen import compiler as toolchain
from pvosimr.extras import install_hint, missing_extra
from pvosimr.study import cli

pytestmark = pytest.mark.slow  # the bench's tiny plan: eight libraries of generated code

pytest.importorskip("matplotlib")

CASE = "chain_welded_every_link_n2"
MJCF = "mjcf_quadruped"  # the smallest MJCF robot with contacts
MUJOCO_HEADING = "## MuJoCo's route against pvosimr's"
LABELS = bench.labels(16)  # the method names of a run with --batch-size 16
SIZES = [2, 4, 8, 16, 32, 64, 128, 256]
BATCHES = [methods.batch_name(B, t) for B in (1, 16, 64) for t in (1, 2)]
GENERATED = {"codegen-external:pv-osimr", *BATCHES, "dG:codegen", "dG:fd-codegen"}
GENERATED |= {"dG:fd-codegen-batch", derivatives.VJP}  # the methods that need generated code


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The files of one tiny run: ``(folder, markdown, json, stdout)``."""
    tmp = tmp_path_factory.mktemp("bench")
    out = tmp / "figures"
    argv = ["bench", "--robots", CASE, "--repeats", "2", "--quick-scaling"]
    argv += ["--batch-size", "16", "--derivative-robots", CASE, "--out", str(out)]
    argv += ["--mujoco-robots", MJCF]
    # A fresh cache folder through the variable every cache reads, so that a warm cache cannot
    # hide a build; its bridge/ links to the usual one (the bridge is not what is measured here).
    cache, bridge = tmp / "cache", toolchain.cache_dir() / "bridge"
    bridge.mkdir(parents=True, exist_ok=True)
    cache.mkdir()
    (cache / "bridge").symlink_to(bridge, target_is_directory=True)
    stdout = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(stdout):
        mp.setenv("PVOSIMR_CACHE_DIR", str(cache))
        assert cli.main(argv) == 0
    md = (out / "timings.md").read_text(encoding="utf-8")
    data = json.loads((out / "timings.json").read_text(encoding="utf-8"))
    return out, md, data, stdout.getvalue()


def rows(md: str, heading: str, skip: int = 0) -> list[list[str]]:
    """The cells of the markdown table below ``heading`` (after ``skip`` paragraphs), header
    row included."""
    lines = md.split(heading, 1)[1].split("\n\n")[1 + skip].splitlines()
    return [[c.strip() for c in line[1:-1].split("|")] for line in lines if line[:3] != "|--"]


def table(md: str, heading: str, skip: int = 0) -> dict[str, list[str]]:
    """The markdown table below ``heading``: first cell -> the other cells, header row included."""
    return {row[0]: row[1:] for row in rows(md, heading, skip)}


def codegen_possible() -> bool:
    try:
        import casadi  # noqa: F401

        toolchain.find_compiler("c")
    except (ImportError, OSError):
        return False
    return True


def test_the_four_files_and_the_printed_summary(written):
    out, md, data, stdout = written
    paths = [out / f"timings.{ext}" for ext in ("md", "json", "png", "pdf")]
    paths += [out / f"crossover.{ext}" for ext in ("png", "pdf")]
    assert not (out / "gpu.md").exists()  # the section GPU runs when asked
    assert stdout.splitlines()[: len(paths)] == [str(p) for p in paths]
    assert (out / "timings.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "timings.pdf").read_bytes()[:5] == b"%PDF-"
    printed = [f"{t['verdict']:8s} {t['target']}: {t['measured']}" for t in data["targets"]]
    assert stdout.splitlines()[len(paths) :] == printed and len(printed) == 8
    # Atlas is not in this run: its targets say so instead of inventing a verdict.
    atlas = [t for t in data["targets"] if "(Atlas 2×6D)" in t["target"]]
    assert len(atlas) == 5 and all(
        t["measured"] == "not measured (atlas/feet_6d not in this run)"
        and t["verdict"] == "not met"
        for t in atlas
    )
    headings = ["## Machine", "## Targets", "## Time per call", "## Ratio to Pinocchio"]
    headings += ["## Generated C", "## Derivatives dG/dq", MUJOCO_HEADING]
    headings += ["## Time against problem size"]
    headings += ["## Batched and generated paths against size", "## Crossover"]
    if not codegen_possible():
        headings.remove("## Generated C")
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
        expected -= GENERATED
    assert timed | set(skipped) == expected and not timed & set(skipped)
    assert all(why for why in skipped.values())
    not_timed = md.split("Not timed:\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert not_timed == [f"- {case['name']}, {LABELS[k]}: {w}" for k, w in skipped.items()]
    # Two dofs and twelve constraint rows: G is singular and the Cholesky route refuses it.
    assert skipped["ref:pin-cholesky"].startswith("refused")
    assert all(t["median_us"] > 0 and t["samples"] >= 2 for t in case["timings"].values())
    errors = case["errors_vs_numpy_pv_osimr"]
    assert all(errors[k] <= methods.CHECK_TOLERANCE for k in timed if not k.startswith("dG:"))
    dG_errors = case["derivatives"]["errors"]
    assert all(dG_errors[k] <= derivatives.TOLERANCE for k in timed if k.startswith("dG:"))


def test_codegen_is_built_in_this_run_where_it_can_be(written):
    _, md, data, _ = written
    (case,) = data["cases"]
    if not codegen_possible():
        assert case["skipped"]["codegen:pv-osimr"] and not case["codegen"]
        return
    assert "codegen:pv-osimr" in case["timings"]
    g, dG, vjp = case["codegen"], case["derivatives"]["build"], case["derivatives"]["vjp_build"]
    derivative_flags = list(derivatives.DERIVATIVE_FLAGS)
    for facts, flags in ((g, ["-O3"]), (dG, derivative_flags), (vjp, derivative_flags)):
        assert facts["compiled_in_this_run"] and facts["compile_seconds"] > 0
        assert facts["flags"] == flags and facts["n_instructions"] > 0
        assert facts["library_bytes"] > 0 and min(facts["sz_w"], facts["sz_iw"]) >= 0
        assert facts["work_bytes"] == 8 * (facts["sz_w"] + facts["sz_iw"])
    assert dG["n_instructions"] > g["n_instructions"]
    built = rows(md, "## Generated C (codegen)")[1:]
    functions = ["G", "dG/dq", "gradient of ⟨W, G⟩"]
    assert [row[:2] for row in built] == [[case["name"], f] for f in functions]
    for row, facts in zip(built, (g, dG, vjp), strict=True):
        assert row[2] == str(facts["n_instructions"])
        assert row[4:7] == [
            text.byte_size(facts["library_bytes"]),
            text.byte_size(facts["work_bytes"]),
            f"{facts['compile_seconds']:.1f} s",
        ]


def test_batched_generated_code_at_every_size_and_thread_count(written):
    _, md, data, _ = written
    (case,) = data["cases"]
    if "codegen:pv-osimr" not in case["timings"]:
        pytest.skip("no generated code in this run")
    assert set(BATCHES) <= set(case["timings"])
    ratios = table(md, "## Ratio to Pinocchio")
    for k in BATCHES:
        assert case["errors_vs_numpy_pv_osimr"][k] <= methods.CHECK_TOLERANCE
        assert ratios[f"ratio {LABELS[k]}"][0].endswith("×")
    # A sample of B configurations is one call: calls per sample at most those of a single q.
    assert all(
        case["timings"][k]["calls_per_sample"]
        <= case["timings"]["codegen:pv-osimr"]["calls_per_sample"]
        for k in BATCHES
    )


def test_derivatives_are_checked_and_reported(written):
    _, md, data, _ = written
    (case,) = data["cases"]
    facts = case["derivatives"]
    assert facts["step"] == derivatives.STEP and facts["reference"] == derivatives.REFERENCE
    assert derivatives.REFERENCE in case["timings"]
    assert facts["errors"][derivatives.REFERENCE] == 0.0
    section = table(md, "## Derivatives dG/dq", skip=1)
    us = text.microseconds
    for k in derivatives.DERIVATIVE_LABELS:
        if k in case["timings"]:
            t = case["timings"][k]
            cell = (
                f"{us(t['median_us'] * 1e-6)} [{us(t['p25_us'] * 1e-6)}–{us(t['p75_us'] * 1e-6)}]"
            )
            assert section[LABELS[k]] == [cell]
        else:
            assert section[LABELS[k]] == [case["skipped"].get(k, "—")]
    if "codegen:pv-osimr" not in case["timings"]:
        return
    generated = ("dG:codegen", derivatives.VJP, "dG:fd-codegen", "dG:fd-codegen-batch")
    assert set(generated) <= set(case["timings"])
    fd = case["timings"][derivatives.REFERENCE]["median_us"]
    for k in generated:
        (cell,) = section[f"ratio {LABELS[k]} ÷ the central differences of Pinocchio"]
        assert float(cell[:-1]) == pytest.approx(case["timings"][k]["median_us"] / fd, abs=0.006)
    worst = max(facts["errors"][k] for k in case["timings"] if k.startswith("dG:"))
    assert section["largest error of the timed methods"] == [f"{worst:.1e}"]


def test_the_markdown_says_what_the_json_holds(written):
    _, md, data, _ = written
    (case,) = data["cases"]
    us = text.microseconds
    times = table(md, "## Time per call")
    assert times["method"] == [f"{case['name']} (nv 2, m 12)"]
    for k, t in case["timings"].items():
        if k.startswith("dG:"):  # in their own section, see the derivatives' test
            assert LABELS[k] not in times
            continue
        q = [us(t[f"{p}_us"] * 1e-6) for p in ("median", "p25", "p75")]
        assert times[LABELS[k]] == [f"{q[0]} [{q[1]}–{q[2]}]"]
    for k, why in case["skipped"].items():
        assert times[LABELS[k]] == [why]
    found = table(md, "## Targets")
    for target in data["targets"]:
        assert found[target["target"]] == [target["measured"], f"**{target['verdict']}**"]
    # The targets' ratios on the case of the run, below the verdicts.
    per_case = table(md, "## Targets", skip=2)
    medians = {k: t["median_us"] for k, t in case["timings"].items()}
    best = min(medians[k] for k in bench.PIN if k in medians)
    for method, (name, bound) in targets.CASE_TARGETS.items():
        (cell,) = per_case[f"{name} ≤ {bound:g}×"]
        if method in medians:
            r = medians[method] / best
            assert cell == f"{r:.2f}× ({'met' if r <= bound else 'not met'})"
        else:
            assert cell == "—"


def test_ratios_divide_by_the_faster_pinocchio_call_of_the_same_run(written):
    _, md, data, _ = written
    (case,) = data["cases"]
    medians = {k: t["median_us"] for k, t in case["timings"].items() if not k.startswith("dG:")}
    divisor = min((k for k in bench.PIN if k in medians), key=medians.get)
    ratios = table(md, "## Ratio to Pinocchio")
    best = text.microseconds(medians[divisor] * 1e-6)
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
    sizes = scaling.quick_sizes()
    assert all(scaling.links(f, s) <= 16 for f, v in sizes.items() for s in v)
    assert sizes["chain_welded_every_link"] == (2, 4, 8, 16)
    assert [(p["family"], p["size"]) for p in data["scaling"]] == [
        (f, s) for f, v in sizes.items() for s in v
    ]
    methods = set(scaling.SCALING_METHODS)
    if not reference.extension_available():
        methods.discard("pin-pv-osimr")
    for p in data["scaling"]:
        assert p["n"] == scaling.links(p["family"], p["size"]) and set(p["medians_us"]) == methods
    found = table(md, "### chain_welded_every_link")
    assert [n for n in found if n.isdigit()] == ["2", "4", "8", "16"]
    assert len(found["slope"]) == 1 + len(methods)


def test_the_large_sweep_times_and_measures_memory(written):
    _, md, data, _ = written
    points = data["large"]
    assert [(p["family"], p["size"], p["n"]) for p in points] == [
        ("chain_welded_every_k", 2, 4),
        ("chain_welded_every_k", 4, 16),
    ]
    heading = "## Batched and generated paths against size"
    times, memory = table(md, heading, skip=1), table(md, heading, skip=3)
    generated = codegen_possible()
    for p in points:
        expected = set(scaling.LARGE_METHODS)
        if not reference.extension_available():
            expected.discard("pin-pv-osimr")
        if not generated:
            expected -= {k for k in expected if k.startswith("codegen")}
        assert set(p["medians_us"]) == expected and not p["skipped"]
        cells = times[str(p["n"])]
        medians = [text.microseconds(p["medians_us"][k] * 1e-6) for k in scaling.LARGE_METHODS]
        assert cells[1:] == [
            c for c, k in zip(medians, scaling.LARGE_METHODS, strict=True) if k in expected
        ]
        batch = p["memory"]["batch:pv-osimr"]
        assert batch["B"] == scaling.SCALING_BATCH
        # The batch holds B results of m × m doubles at least.
        assert batch["peak_bytes"] >= scaling.SCALING_BATCH * p["m"] ** 2 * 8
        row = memory[str(p["n"])]
        assert row[1:3] == [
            text.byte_size(batch["peak_bytes"]),
            text.byte_size(batch["peak_bytes"] / batch["B"]),
        ]
        if generated:
            g = p["memory"]["codegen:pv-osimr"]
            assert g["flags"] == list(scaling.large_flags(p["n"], ("-O3",)))
            assert g["compile_seconds"] > 0 and g["library_bytes"] > 0
            assert row[4:] == [
                text.byte_size(g["library_bytes"]),
                text.byte_size(g["work_bytes"]),
                str(g["n_instructions"]),
                f"{g['compile_seconds']:.1f} s",
                f"`{' '.join(g['flags'])}`",
            ]


def test_beyond_data_links_the_generated_code_is_checked_against_the_numpy_batch(
    tmp_path, monkeypatch
):
    """Past DATA_LINKS no pin.Data is made: the methods needing one say why, the rest run."""
    monkeypatch.setattr(scaling, "DATA_LINKS", 3)
    options = methods.Options(cache_dir=tmp_path)
    (point,) = scaling.time_large({scaling.LARGE_FAMILY: (2,)}, 1, options, progress=False)
    assert point.n == 4
    for k in ("numpy:pv-osimr", *bench.PIN):
        assert point.skipped[k] == "not run: a pin.Data of this model holds 2.05 kB"
        assert k not in point.medians_us
    assert "batch:pv-osimr" in point.medians_us
    assert point.memory["batch:pv-osimr"]["peak_bytes"] > 0
    if codegen_possible():
        timed = {"codegen:pv-osimr", *(methods.batch_name(64, t) for t in (1, 2))}
        assert timed <= set(point.medians_us)


def test_large_sizes_are_built_with_lower_optimisation():
    assert scaling.large_flags(16, ("-O3", "-march=native")) == ("-O3", "-march=native")
    assert scaling.large_flags(64, ("-O2",)) == ("-O2",)
    assert scaling.large_flags(256, ("-O3",)) == ("-O2",)
    assert scaling.large_flags(961, ("-O3",)) == ("-O2",)
    (sizes,) = scaling.LARGE_SIZES.values()
    assert max(scaling.links(scaling.LARGE_FAMILY, k) for k in sizes) <= 1000
    # Beyond DATA_LINKS a pin.Data would not fit in memory: 28 GB at n = 961.
    assert scaling.data_bytes(961) > 2e10 > 10 * scaling.data_bytes(scaling.DATA_LINKS)


def test_log_log_slope_reads_the_exponent():
    points = [scaling.Point("f", n, n, 6, {"a": 3.0 * n**2, "b": 5.0}) for n in (2, 4, 8)]
    assert scaling.log_log_slope(points, "a") == pytest.approx(2.0)
    assert scaling.log_log_slope(points, "b") == pytest.approx(0.0, abs=1e-12)
    assert scaling.log_log_slope(points[:1], "a") is None
    assert scaling.log_log_slope(points, "c") is None
    # Only the four largest sizes count: a steeper tail gives its own slope.
    tail = [scaling.Point("f", n, n, 6, {"a": n**3 if n >= 32 else n}) for n in SIZES]
    assert scaling.log_log_slope(tail, "a") == pytest.approx(3.0)


def test_targets_on_a_synthetic_result():
    """The verdicts follow the numbers (no measurement needed to check the arithmetic)."""

    def timing_of(us):
        return bench.Timing([us * 1e-6] * 3, 1)

    t1, t2 = (methods.batch_name(methods.BATCH_SIZE, t) for t in (1, 2))
    atlas = bench.Case("atlas/feet_6d", 36, 12)
    atlas.timings = {
        "pin-efpa": timing_of(10.0),
        "pin-pv-osimr": timing_of(12.0),
        t2: timing_of(2.5),  # 0.25×
        t1: timing_of(3.0),  # 0.30×
        "codegen:pv-osimr": timing_of(3.4),  # 0.34×
        "numpy:pv-osimr": timing_of(700.0),  # 70×
        "dG:codegen": timing_of(900.0),
        "dG:fd-pin-efpa": timing_of(800.0),
    }
    other = bench.Case("talos/feet_6d", 38, 12)
    other.timings = {"pin-efpa": timing_of(10.0), "codegen:pv-osimr": timing_of(3.6)}
    result = {"cases": [atlas, other], "batch_size": methods.BATCH_SIZE}
    found = [v for _, _, v in bench.timing_targets(result)]
    assert found == ["not met"] * 8
    assert bench.timing_targets(result)[2][1] == "not measured on talos/feet_6d"
    assert bench.timing_targets(result)[3][1] == "worst 0.36× (talos/feet_6d); 1 of 2 cases within"
    assert bench.timing_targets(result)[6][1].startswith("not measured")
    atlas.timings[t2] = timing_of(0.6)  # 0.06× on Atlas: its bound is 0.07
    atlas.timings[t1] = timing_of(1.1)
    other.timings[t2] = timing_of(0.9)  # 0.09× elsewhere: the bound of every case is 0.1
    other.timings["codegen:pv-osimr"] = timing_of(3.4)
    atlas.timings["numpy:pv-osimr"] = timing_of(600.0)
    atlas.timings["dG:codegen"] = timing_of(100.0)
    atlas.timings[derivatives.VJP] = timing_of(13.6)  # 4.0 generated G calls
    assert [v for _, _, v in bench.timing_targets(result)] == ["met"] * 7 + ["not met"]  # no sweep
    result["large"] = [
        bench.Point("chain_welded_every_k", k, k * k, 6 * k,
                           {"codegen:pv-osimr": 0.1 * (k * k) ** 1.05},
                           {"codegen:pv-osimr": {"library_bytes": 1000 * k * k}})
        for k in (2, 8, 16, 22, 31)
    ]  # fmt: skip
    assert bench.timing_targets(result)[7][2] == "met"
    assert bench.timing_targets(result)[7][1] == "time 1.05, library 1.00 (n = 64, 256, 484, 961)"
    result["large"][-1].medians_us["codegen:pv-osimr"] *= 1.2  # the last point 20% slower
    assert bench.timing_targets(result)[7][2] == "not met"
    atlas.timings[derivatives.VJP] = timing_of(13.7)
    assert [v for _, _, v in bench.timing_targets(result)][6] == "not met"
    atlas.timings[t2] = timing_of(0.8)  # 0.08×: within every case's 0.1, not Atlas's 0.07
    assert [v for _, _, v in bench.timing_targets(result)][:3] == ["not met", "met", "met"]
    # The bound is on the ratio to the faster Pinocchio call: a faster Pinocchio fails them.
    atlas.timings["pin-pv-osimr"] = timing_of(5.0)
    assert [v for _, _, v in bench.timing_targets(result)][:4] == ["not met"] * 4
    # The same ratios on every case, "—" where a case lacks the method.
    per_case = dict(targets.case_table([atlas, other]))
    assert per_case["numpy, one call ≤ 60×"] == ["120.00× (not met)", "—"]
    missing = bench.timing_targets({"cases": [], "batch_size": methods.BATCH_SIZE})
    assert all("not in this run" in m or "no case" in m for _, m, _ in missing)
    assert all(v == "not met" for _, _, v in missing)


def test_mujoco_route_is_checked_timed_and_reported(written):
    _, md, data, _ = written
    if missing_extra("mujoco"):
        assert md.split(MUJOCO_HEADING, 1)[1].split("\n\n")[1] == (
            f"Not run: {install_hint('pvosimr bench', 'mujoco')}"
        )
        assert data["mujoco"] == [] and data["mujoco_skipped"]
        return
    (robot,) = data["mujoco"]
    assert (robot["name"], robot["nv"]) == (MJCF, 18) and not data["mujoco_unavailable"]
    assert len(robot["rows"]) == loop.N_CONFIGS
    # Only configurations with rows are kept; the file's options add rows (limits), never fewer.
    assert all(m > 0 for m in robot["rows"]) and robot["m_median"] == statistics.median(
        robot["rows"]
    )
    assert all(a >= m for a, m in zip(robot["rows_all"], robot["rows"], strict=True))
    assert set(robot["timings"]) == set(mujoco.MUJOCO_LABELS)
    assert all(t["median_us"] > 0 and t["samples"] == 2 for t in robot["timings"].values())
    assert all(0 <= e <= mujoco.TOLERANCE for e in robot["errors_vs_mujoco"].values())
    ratios = robot["ratios_to_mujoco"]
    assert ratios[mujoco.REFERENCE] == 1.0
    reference_us = robot["timings"][mujoco.REFERENCE]["median_us"]
    for k, t in robot["timings"].items():
        assert ratios[k] == pytest.approx(t["median_us"] / reference_us)
    found = table(md, MUJOCO_HEADING, skip=2)
    assert found["method"] == [f"{MJCF} (nv 18, m {robot['m_median']:g})"]
    us = text.microseconds
    for k, label in mujoco.MUJOCO_LABELS.items():
        t = robot["timings"][k]
        q = [us(t[f"{p}_us"] * 1e-6) for p in ("median", "p25", "p75")]
        assert found[label] == [f"{q[0]} [{q[1]}–{q[2]}]"]
        if k != mujoco.REFERENCE:
            assert found[f"ratio {label} ÷ mj_fwdPosition"] == [f"{ratios[k]:.2f}×"]
    worst = max(robot["errors_vs_mujoco"].values())
    assert found["largest error against MuJoCo's matrix"] == [f"{worst:.1e}"]


def _point(G: np.ndarray) -> mujoco.Point:
    zero = np.zeros(0)
    return mujoco.Point(zero, zero, [], np.arange(len(G)), np.arange(len(G)), G, len(G))


def test_the_check_against_mujoco_refuses_a_wrong_matrix():
    G = np.array([[2.0, 0.5], [0.5, 1.0]])
    at = [_point(G), _point(2 * G)]
    exact = {"right": lambda p: p.G.copy(), "rounded": lambda p: p.G * (1 + 1e-12)}
    worst = mujoco.check(exact, at, "toy")
    assert worst["right"] == 0.0 and 0 < worst["rounded"] <= mujoco.TOLERANCE
    # Wrong at the second configuration only: a check of the first alone would miss it.
    late = {"late": lambda p: G if p is at[0] else p.G + 1e-6}
    wrong = r"toy: late .* configuration 1 \(m = 2\): error 2\.5e-07"  # 1e-6 / max|G|
    with pytest.raises(mujoco.DisagreementError, match=wrong):
        mujoco.check(late, at, "toy")
    with pytest.raises(mujoco.DisagreementError, match="error inf"):
        mujoco.check({"short": lambda p: p.G[:1, :1]}, at)
    with pytest.raises(mujoco.DisagreementError, match="error nan"):
        mujoco.check({"nan": lambda p: np.full_like(p.G, np.nan)}, at)


def test_without_mujoco_the_section_is_one_line(monkeypatch):
    monkeypatch.setattr(mujoco, "missing_extra", lambda *modules: "mujoco")
    found, unavailable, skipped = mujoco.time_mujoco([MJCF], repeats=1, progress=False)
    assert (found, unavailable) == ([], {})
    assert (
        skipped
        == install_hint("pvosimr bench", "mujoco")
        == ('pvosimr bench: needs MuJoCo: pip install "pvosimr[mujoco]"')
    )
    run = {"mujoco": found, "mujoco_unavailable": unavailable, "mujoco_skipped": skipped}
    lines = report._mujoco(run)
    assert lines[-1] == f"Not run: {skipped}" and lines[1].startswith(MUJOCO_HEADING)
    # No MJCF robot asked for: no section at all, and MuJoCo is not needed.
    assert mujoco.time_mujoco([], repeats=1) == ([], {}, None)
    assert report._mujoco({"mujoco": [], "mujoco_unavailable": {}, "mujoco_skipped": None}) == []


def test_an_unknown_mjcf_robot_is_a_usage_error(capsys):
    assert cli.main(["bench", "--mujoco-robots", "mjcf_nothing", "--no-scaling"]) == 2
    assert "--mujoco-robots mjcf_nothing: no such MJCF robot or file" in capsys.readouterr().err


def test_the_crossover_sweep_covers_the_small_mechanisms(written):
    out, md, data, _ = written
    quick = crossover.quick_crossover_sizes()
    assert [(p["family"], p["size"]) for p in data["crossover"]] == [
        (f, s) for f, v in quick.items() for s in v
    ]
    assert all(p["n"] <= crossover.QUICK_CROSSOVER_LINKS for p in data["crossover"])
    assert data["crossover_batch"] == crossover.CROSSOVER_BATCH
    for p in data["crossover"]:
        assert max(p["errors"].values()) <= crossover.AGREEMENT_TOLERANCE
        assert set(crossover.DENSE) <= set(p["medians_us"])
    for family in quick:
        assert f"### {family}: " in md
    assert (out / "crossover.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _case_from_json(c: dict, cls=bench.Case):
    """A case of a committed report's JSON, its timings reduced to their medians (all a target
    reads)."""
    case = cls(c["name"], c["nv"], c["m"])
    case.timings = {
        k: bench.Timing([t["median_us"] * 1e-6], t["calls_per_sample"])
        for k, t in c["timings"].items()
    }
    case.skipped = c["skipped"]
    return case


def test_the_committed_reports_keep_their_targets_and_verdicts():
    """The targets as data, judged by the one evaluator, give every committed report's rows
    again: timings.json's eight, the section "JAX and PyTorch"'s five, gpu.md's ten."""
    figures = Path(__file__).resolve().parents[1] / "figures"
    data = json.loads((figures / "timings.json").read_text(encoding="utf-8"))
    run = {
        "cases": [_case_from_json(c) for c in data["cases"]],
        "large": [bench.Point(**p) for p in data["large"]],
    }
    rows = [(t["target"], t["measured"], t["verdict"]) for t in data["targets"]]
    assert targets.timing_targets(run) == rows and len(rows) == 8
    section = json.loads((figures / "jax-torch" / "timings.json").read_text())["frameworks"]
    rows = [(t["target"], t["measured"], t["verdict"]) for t in section["targets"]]
    assert targets.framework_targets(section) == rows
    gpu = json.loads((figures / "gpu.json").read_text(encoding="utf-8"))
    md = (figures / "gpu.md").read_text(encoding="utf-8")
    table = md.split("| target | measured | verdict |\n|---|---|---|\n", 1)[1].split("\n\n")[0]
    rows = [f"| {t} | {m} | **{v}** |" for t, m, v in targets.gpu_targets(gpu)]
    assert rows == table.splitlines()


def test_a_derivative_that_returns_nan_is_not_timed():
    """The check before timing refuses NaN (NaN > tolerance is False: it used to pass)."""
    dG = np.arange(1.0, 9.0).reshape(2, 2, 2)
    candidates = {
        derivatives.REFERENCE: lambda q: dG,
        "dG:codegen": lambda q: dG * (1 + 1e-12),
        "dG:fd-codegen": lambda q: np.full_like(dG, np.nan),
    }
    result = bench.Case("x", 2, 2)
    kept = derivatives.checked(candidates, [np.zeros(2)], result)
    assert set(kept) == {derivatives.REFERENCE, "dG:codegen"}
    assert result.skipped["dG:fd-codegen"] == "wrong result (error inf), not timed"
