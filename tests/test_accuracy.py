"""The accuracy study (benchmarks.accuracy): its truths, its acceptance numbers, its report.

The default run measures a small plan end to end (every path, both truths, the written
report); the slow run (``pytest -m slow``) the study's ``--quick`` plan, which includes an
80-link spherical chain (cond(M) ≈ 4e6), on which a non-symmetric inverse of ``D_i`` in the
numpy path grows to O(1) relative error: its acceptance assertion catches that.
"""

import json

import numpy as np
import pytest

import pvosimr
from benchmarks import accuracy
from benchmarks.accuracy import cases, measure, report, truths
from pvosimr.reference import truth
from pvosimr.zoo.seeded import random_q

#: A plan of small chains: every path (codegen on the shallowest), both sweeps, in seconds.
SMALL = cases.StudyPlan(
    depths={"Spherical": (2,), "FreeFlyer": (2,)},
    cond_chains=(("Spherical", 4),),
    profiles=("alternating",),
    ratios=(1.0, 1e10),
    codegen_depth=2,
    codegen_cond=(),
    limits=cases.Limits(configurations=2, codegen_instructions=2_300),
)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    out = tmp_path_factory.mktemp("accuracy_small")
    results = measure.run_study(SMALL, progress=False)
    report.write_outputs(results, out, 0.0, "small plan")
    return results, out


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("accuracy")
    results = accuracy.run(out, quick=True, progress=False, command="quick plan")
    return results, out


def _pvosimr_errors(record):
    return {p: e for p, e in record["errors"].items() if not p.startswith("pin-")}


def _check_acceptance(results) -> int:
    """Every pvosimr path within TOL wherever cond(M) ≤ 1e8; the number of errors checked."""
    checked = 0
    for rec in report.case_views(results):
        if rec["cond"] > cases.ACCEPT_COND:
            continue
        for path, err in _pvosimr_errors(rec).items():
            where = f"{rec['family']} n={rec['n']} ratio={rec['ratio']:.0e} {path}"
            assert isinstance(err, float), f"{where}: {err}"  # no raise on a well-posed case
            assert err <= cases.TOL, f"{where}: {err:.2e}"
            checked += 1
    return checked


@pytest.mark.slow  # builds C libraries of its own
def test_small_study_every_path_within_tolerance_and_reported(small):
    results, out = small
    assert _check_acceptance(results) >= 40
    views = report.case_views(results)
    depth = [r for r in views if r["sweep"] == "depth"]
    paths = {p for rec in depth for p in rec["errors"]}
    assert {f"{b}:{a}" for b in ("numpy", "batch", "casadi") for a in cases.ALGORITHMS} <= paths
    assert set(cases.PINOCCHIO) <= paths and any(p.startswith("codegen:") for p in paths)
    assert all(r["reference"] == "dense" and r["wide"] == "decimal" for r in depth)
    payload = json.loads((out / "accuracy.json").read_text())
    assert report.case_views(payload) == views  # every number, as written
    assert {r["quantity"] for r in payload["records"]} >= {"error", "error vs wide", "cond"}
    (limits,) = payload["accuracy_limits"]
    assert limits["pvosimr recursive"]["ratio"] is not None and "at_1e10" in limits
    md = (out / "accuracy.md").read_text()
    for section in ("## Acceptance", "### Spherical chains", "### Spherical, n = 4", "## Summary"):
        assert section in md
    assert (out / "accuracy.png").stat().st_size > 10_000


@pytest.mark.slow
def test_quick_study_every_pvosimr_path_within_tolerance_where_cond_le_1e8(quick):
    results, _ = quick
    assert _check_acceptance(results) >= 80


@pytest.mark.slow
def test_quick_study_covers_the_deep_spherical_chain_on_every_backend(quick):
    results, _ = quick
    depth = [r for r in report.case_views(results) if r["sweep"] == "depth"]
    (deep,) = [r for r in depth if r["family"] == "Spherical" and r["n"] == 80]
    assert deep["reference"] == "dense" and deep["cond"] <= cases.ACCEPT_COND
    for algorithm in cases.RECURSIVE:
        for backend in ("numpy", "batch", "casadi"):
            assert f"{backend}:{algorithm}" in deep["errors"]
    # the double dense truth is itself checked against the extended-precision one
    assert deep["truth_vs_wide"] <= 1e-12
    assert any(p.startswith("codegen:") for r in depth for p in r["errors"])


@pytest.mark.slow
def test_quick_study_writes_its_outputs(quick):
    results, out = quick
    payload = json.loads((out / "accuracy.json").read_text())
    assert payload["cases"] == results["cases"] and len(payload["cases"]) == 7
    assert payload["acceptance"]["Spherical"]["nv"] == 240
    md = (out / "accuracy.md").read_text()
    assert "## Acceptance: worst error where cond(M) ≤ 1e8" in md
    assert "## Summary" in md
    assert (out / "accuracy.png").stat().st_size > 10_000


def test_dense_truth_with_a_shared_data_is_pvosimr_truth():
    model, cms = cases.ChainCase("mixed", 24, seed=3).build()
    q = random_q(model, np.random.default_rng(0))
    G, G_lu, M = truths.dense_truth(model, model.createData(), q, cms)
    assert np.array_equal(G, truth.dense_delassus(model, q, cms))
    assert truth.rel_err(G_lu, G) <= 1e-12
    assert np.array_equal(M, truth.mass_matrix(model, q))


@pytest.mark.parametrize("kind", ["decimal", "longdouble"])
def test_wide_truth_agrees_with_the_dense_truth_on_a_well_conditioned_mixed_chain(kind):
    model, cms = cases.ChainCase("mixed", 24, seed=1).build()
    q = random_q(model, np.random.default_rng(2))
    G_wide, M_wide = truths.wide_truth(model, q, cms, kind)
    assert truth.rel_err(G_wide, truth.dense_delassus(model, q, cms)) <= 1e-12
    assert truth.rel_err(M_wide, truth.mass_matrix(model, q)) <= 1e-13


def test_wide_truth_is_more_precise_than_double():
    """Decimal and longdouble agree far below double rounding on an ill-conditioned chain."""
    model, cms = cases.ChainCase("Spherical", 6, "alternating", 1e12).build()
    q = random_q(model, np.random.default_rng(0))
    dec, M = truths.wide_truth(model, q, cms, "decimal")
    ld, _ = truths.wide_truth(model, q, cms, "longdouble")
    assert np.linalg.cond(M) > 1e12
    assert np.max(np.abs(dec - ld)) <= 1e-6 * np.max(np.abs(dec))


def test_mixed_chains_use_every_supported_joint_type():
    # a mimic joint couples two joints: it is not a link type of a chain (see test_mimic)
    expected = set(pvosimr.SUPPORTED_JOINTS) - {"JointModelMimic"}
    kinds = cases.mixed_kinds()
    assert {f"JointModel{k}" for k in kinds} == expected
    model, _ = cases.ChainCase("mixed", len(kinds)).build()
    assert {model.joints[i].shortname() for i in range(1, model.njoints)} == expected


def test_mass_ratio_knob_drives_cond():
    conds = []
    for ratio in (1.0, 1e6, 1e12):
        model, _ = cases.ChainCase("Spherical", 6, "alternating", ratio).build()
        q = random_q(model, np.random.default_rng(0))
        conds.append(np.linalg.cond(truth.mass_matrix(model, q)))
    assert conds[0] < 1e4 and conds[1] > 1e6 and conds[2] > 1e12
    with pytest.raises(ValueError, match="unknown mass profile 'steep'"):
        cases.mass_scales(4, "steep", 10.0)


def test_recursive_numpy_paths_hold_at_a_mass_ratio_of_1e6():
    model, cms = cases.ChainCase("Spherical", 12, "alternating", 1e6).build()
    q = random_q(model, np.random.default_rng(7))
    wide, M = truths.wide_truth(model, q, cms, "decimal")
    assert np.linalg.cond(M) < 1e9
    data = model.createData()
    for algorithm in cases.RECURSIVE:
        G = pvosimr.compute_delassus(model, data, q, cms, algorithm)
        Gb = pvosimr.compute_delassus_batch(model, q[None], cms, algorithm)[0]
        assert truth.rel_err(G, wide) <= cases.TOL, (algorithm, truth.rel_err(G, wide))
        assert truth.rel_err(Gb, wide) <= cases.TOL, (algorithm, truth.rel_err(Gb, wide))


def test_a_raise_is_kept_beside_the_records_and_reported():
    """A path that raised and a double truth that failed are in the case's description, not
    lost among the numbers: the tables show them, the report lists the path."""
    from benchmarks.record import Record

    case = {"name": "c", "sweep": "cond", "family": "Spherical", "n": 4, "profile": "alternating"}
    case |= {"ratio": 1e16, "nv": 12, "m": 15, "reference": "wide-decimal", "wide": "decimal"}
    case["raised"] = {"dense truth": "raised LinAlgError: M", "numpy:efpa": "raised ValueError"}
    records = [Record("c", "M", "cond", 1e17, ""), Record("c", "batch:efpa", "error", 0.5, "")]
    results = {"cases": [case], "records": [r.to_json() for r in records]}
    (view,) = report.case_views(results)
    assert view["errors"] == {"numpy:efpa": "raised ValueError", "batch:efpa": 0.5}
    assert view["errors_wide"] == {"numpy:efpa": "raised ValueError"}
    assert view["truth_vs_wide"] == view["lu_vs_cholesky"] == "raised LinAlgError: M"
    assert view["cond"] == 1e17 and view["sensitivity"] is None
    assert report.failures([view]) == ["Spherical n=4 ratio=1e+16 numpy:efpa: raised ValueError"]


def test_the_committed_report_is_its_records_written_again():
    """validation/accuracy.md is what the report writer makes of validation/accuracy.json's
    records: every number of the report comes from them."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "validation"
    data = json.loads((folder / "accuracy.json").read_text(encoding="utf-8"))
    written = report.markdown(data, data["seconds"], data["command"])
    assert written == (folder / "accuracy.md").read_text(encoding="utf-8")
