"""pvosimr bench's crossover sweep: the routes agree before they are timed, a wrong G stops the
sweep, the records, the report section and the figure, and where a route starts to win."""

import json

import numpy as np
import pytest

from benchmarks import crossover, figure, report, scaling
from benchmarks.methods import Options
from benchmarks.scaling import Point

pytest.importorskip("matplotlib")

SIZES = {"chain_two_welds": (2, 4)}  # two tiny chains with m = 12


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """Two tiny sizes, one sample each; the generated code built in a fresh folder."""
    cache = tmp_path_factory.mktemp("crossover-cache")
    with crossover.blas_threads(1) as threads:
        points = crossover.time_crossover(
            SIZES, 1, Options(cache_dir=cache), batch=4, progress=False
        )
    return points, threads


@pytest.mark.slow  # builds C libraries of its own
def test_every_route_is_checked_and_timed_per_configuration(swept):
    points, threads = swept
    assert [(p.family, p.size, p.n, p.m) for p in points] == [
        ("chain_two_welds", 2, 2, 12),
        ("chain_two_welds", 4, 4, 12),
    ]
    assert threads  # what was done to numpy's BLAS threads, said
    for p in points:
        timed = set(p.medians_us)
        assert timed | set(p.skipped) == set(crossover.CROSSOVER_METHODS)
        assert not timed & set(p.skipped) and all(p.skipped.values())
        assert set(crossover.DENSE) | {"batch:pv-osimr", "pin-efpa"} <= timed
        assert all(v > 0 for v in p.medians_us.values())
        assert set(p.errors) == timed - {"dense:pin+cholesky"}
        assert max(p.errors.values()) <= crossover.AGREEMENT_TOLERANCE
        assert all(len(p.quartiles_us[k]) == 2 for k in timed)
        if crossover.CODEGEN in timed:
            assert p.build["flags"] == ["-O3"] and p.build["n_instructions"] > 0


def test_a_wrong_route_stops_the_sweep(monkeypatch, tmp_path):
    def wrong(Ms, Js):
        G = Js @ np.linalg.solve(Ms, np.swapaxes(Js, 1, 2))
        G[:, 0, 0] += 1e-6  # one entry off
        return G

    monkeypatch.setattr(crossover, "dense_lu", wrong)
    with pytest.raises(ValueError, match=r"dense:lu disagrees with dense:pin\+cholesky"):
        crossover.time_crossover(
            {"chain_two_welds": (2,)}, 1, Options(codegen=False), batch=2, progress=False
        )


def test_the_agreement_check_reads_the_error():
    G = np.array([[2.0, 1.0], [1.0, 3.0]])
    ok = crossover.check_agreement({"a": G, "b": G + 1e-12}, "a")
    assert ok == {"b": pytest.approx(1e-12 / 3)}
    with pytest.raises(ValueError, match="b disagrees with a"):
        crossover.check_agreement({"a": G, "b": G + 1e-6}, "a")
    with pytest.raises(ValueError, match="nan"):
        crossover.check_agreement({"a": G, "b": G * np.nan}, "a")


def test_the_dense_routes_give_j_minv_jt():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((3, 5, 5))
    M = A @ np.swapaxes(A, 1, 2) + 5 * np.eye(5)
    J = rng.standard_normal((3, 2, 5))
    G = J @ np.linalg.inv(M) @ np.swapaxes(J, 1, 2)
    # The Cholesky route reads the upper triangle only, as pin.crba fills it.
    assert np.allclose(crossover.dense_cholesky(np.triu(M), J), G, rtol=0, atol=1e-12)
    assert np.allclose(crossover.dense_lu(M, J), G, rtol=0, atol=1e-12)


@pytest.mark.slow  # builds C libraries of its own
def test_report_records_and_figure(swept, tmp_path):
    points, threads = swept
    run = {"crossover": points, "crossover_batch": 4, "crossover_blas_threads": threads}
    lines = report._crossover(run)
    md = "\n".join(lines)
    assert "## Crossover" in md and f"BLAS threads: {threads}" in md
    for p in points:
        assert f"| {p.n} | {p.m} | " in md
    assert md.count("| chain_two_welds | ") == sum(
        any(r in p.medians_us for p in points) for r in crossover.RECURSIVE
    )
    data = json.loads(json.dumps(report.jsonable({"cases": [], "scaling": [], "batch_size": 4,
                                                   "crossover": points})))  # fmt: skip
    assert [p["n"] for p in data["crossover"]] == [2, 4]
    assert data["crossover"][0]["medians_us"] == points[0].medians_us
    paths = figure.plot_crossover(points, tmp_path / "crossover")
    assert [p.name for p in paths] == ["crossover.png", "crossover.pdf"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert paths[1].read_bytes()[:5] == b"%PDF-"


def _points(times: dict[int, tuple[float, float]]) -> list:
    return [Point("f", n, n, 12, {"rec": r, "dense": d}) for n, (r, d) in times.items()]


def test_crossover_is_where_the_recursive_route_wins_for_good():
    found = crossover.crossover(_points({10: (4.0, 1.0), 100: (1.0, 4.0)}), "rec", "dense")
    assert found.kind == "between" and found.n == pytest.approx(np.sqrt(10 * 100))
    assert found.text() == "n ≈ 32 (10–100)"
    # Winning at a small size, then losing again, does not count: the last loss does.
    bumpy = {5: (0.5, 1.0), 10: (2.0, 1.0), 20: (1.0, 2.0), 40: (1.0, 3.0)}
    found = crossover.crossover(_points(bumpy), "rec", "dense")
    assert (found.below, found.above) == (10, 20)
    always = crossover.crossover(_points({5: (1.0, 2.0), 9: (1.0, 2.0)}), "rec", "dense")
    assert always.text() == "faster from n = 5 (smallest)"
    never = crossover.crossover(
        _points({5: (3.0, 2.0), 9: (1.0, 2.0), 12: (3.0, 2.0)}), "rec", "dense"
    )
    assert never.text() == "slower up to n = 12"
    assert crossover.crossover(_points({5: (1.0, 2.0)}), "other", "dense").kind == "unmeasured"


def test_sizes_reach_300_and_the_quick_ones_stay_small():
    for family, sizes in crossover.CROSSOVER_SIZES.items():
        ns = [scaling.mechanism(family, s).nv for s in (sizes[0], sizes[-1])]
        assert ns[0] <= 20 and 280 <= ns[1] <= crossover.CODEGEN_LINKS
    quick = crossover.quick_crossover_sizes()
    for family, sizes in quick.items():
        assert 1 <= len(sizes) <= 2
        assert all(
            scaling.mechanism(family, s).nv <= crossover.QUICK_CROSSOVER_LINKS for s in sizes
        )
    robot = scaling.mechanism("chain_two_welds", 6)
    assert (robot.nv, robot.m) == (6, 12)
    assert (
        scaling.mechanism("stem_with_branches", 1).nv,
        scaling.mechanism("stem_with_branches", 1).m,
    ) == (20, 12)
    with pytest.raises(ValueError, match="unknown mechanism"):
        scaling.mechanism("nope", 3)


def test_blas_threads_are_set_inside_the_block_and_restored():
    found = crossover._openblas_setter()
    if found is None:
        pytest.skip("numpy's OpenBLAS not found on this platform")
    get, _ = found
    before = get()
    with crossover.blas_threads(1) as said:
        assert get() == 1 and said == f"1 (OpenBLAS, {before} by default)"
    assert get() == before
