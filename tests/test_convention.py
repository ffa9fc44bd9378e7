"""The paper authors' counting convention: turned frames and 6×6 transforms, same G."""

import numpy as np
import pinocchio as pin
import pytest
from _slow import slow_ones

import pvosimr
from pvosimr.zoo import synthetic

ca = pytest.importorskip("casadi")
convention = pytest.importorskip("pvosimr.study.figures.convention")
symbolic = pytest.importorskip("pvosimr.symbolic")

ALGORITHMS = ("pv-osimr", "pv-osim", "efpa")


@pytest.fixture(scope="module")
def stem():
    return synthetic.stem_with_branches(3, 2)


def test_autotree_frames_turn_every_joint_off_the_world_and_nothing_else(stem):
    model = stem.model
    before = [pin.SE3(M) for M in model.jointPlacements]
    turned = convention.autotree_frames(model, 0.7)
    R = pin.utils.rotate("x", 0.7)
    for i in range(1, model.njoints):
        M, T = model.jointPlacements[i], turned.jointPlacements[i]
        expected = M.rotation if model.parents[i] == 0 else M.rotation @ R
        np.testing.assert_allclose(T.rotation, expected, atol=1e-15)
        np.testing.assert_array_equal(T.translation, M.translation)
        assert turned.inertias[i] == model.inertias[i]
        assert turned.joints[i].shortname() == model.joints[i].shortname()
    assert list(turned.parents) == list(model.parents)
    assert all(M == B for M, B in zip(model.jointPlacements, before, strict=True))  # a copy


def test_autotree_frames_reject_a_non_finite_angle(stem):
    with pytest.raises(ValueError, match="finite"):
        convention.autotree_frames(stem.model, float("nan"))


def test_paper_mechanism_keeps_the_constraints(stem):
    paper = convention.paper_mechanism(stem)
    assert paper.name == f"{stem.name}_autotree"
    assert paper.constraints is stem.constraints
    assert paper.m == stem.m
    assert not np.allclose(
        paper.model.jointPlacements[2].rotation, stem.model.jointPlacements[2].rotation
    )


@pytest.mark.parametrize("algorithm", slow_ones(ALGORITHMS, {"efpa"}))
def test_dense_transforms_compute_the_same_delassus_matrix(stem, algorithm):
    robot = convention.paper_mechanism(stem)
    turned, cms = robot.model, robot.constraints
    paper = convention.paper_delassus_function(turned, cms, algorithm)
    ours = symbolic.delassus_function(turned, cms, algorithm)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = robot.q_random(rng)
        truth = pvosimr.compute_delassus(turned, turned.createData(), q, cms, "naive")
        np.testing.assert_allclose(np.array(paper(q)), truth, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(np.array(paper(q)), np.array(ours(q)), rtol=1e-9, atol=1e-9)


@pytest.mark.slow  # seconds of numpy or CasADi work
def test_each_half_of_the_convention_adds_arithmetic():
    robot = synthetic.stem_with_branches(4, 2)
    cms = robot.constraints
    turned = convention.autotree_frames(robot.model)
    for algorithm in ALGORITHMS:
        ours = symbolic.count_operations(robot.model, cms, algorithm)
        dense = convention.paper_count_operations(robot.model, cms, algorithm)
        spatial = symbolic.count_operations(turned, cms, algorithm)
        paper = convention.paper_count_operations(turned, cms, algorithm)
        assert ours < dense < paper, algorithm
        assert ours < spatial < paper, algorithm


# ---------------------------------------------------------------------------------------------
# ``pvosimr figures --convention``: the option, the cache key and the claims.md section.

runner = pytest.importorskip("pvosimr.study.figures.runner")
claims = pytest.importorskip("pvosimr.study.figures.claims")
count = pytest.importorskip("pvosimr.study.count")


def test_the_parser_takes_both_conventions_and_defaults_to_ours():
    parser = runner.build_parser()
    assert parser.parse_args([]).convention == "pvosimr"
    assert parser.parse_args(["--convention", "paper"]).convention == "paper"
    assert parser.parse_args([]).out is None  # main picks the convention's folder
    assert runner.DEFAULT_OUT["pvosimr"] != runner.DEFAULT_OUT["paper"]
    with pytest.raises(SystemExit):
        parser.parse_args(["--convention", "spatial_v2"])


def test_the_cache_key_of_our_convention_is_model_algorithm_source(stem):
    model, cms = stem.model, stem.constraints
    ours = count.cache_key(model, cms, "efpa", "pvosimr")
    assert ours == f"{count.model_digest(model, cms)}:efpa:{count.source_digest()}"
    paper = count.cache_key(model, cms, "efpa", "paper")
    assert paper.startswith(f"{ours}:paper:") and paper != ours
    with pytest.raises(ValueError, match="convention"):
        count.cache_key(model, cms, "efpa", "spatial_v2")


@pytest.mark.slow  # seconds (measured)
def test_the_cache_counts_each_convention_apart(stem):
    cache = count.CountCache(None)
    model, cms = stem.model, stem.constraints
    ours = cache.count(model, cms, "pv-osim")
    paper = cache.count(model, cms, "pv-osim", "paper")
    assert (cache.hits, cache.misses) == (0, 2)
    assert ours == symbolic.count_operations(model, cms, "pv-osim")
    assert paper == convention.paper_count_operations(model, cms, "pv-osim") != ours
    assert cache.count(model, cms, "pv-osim", "paper") == paper and cache.hits == 1


def test_the_paper_convention_turns_the_synthetic_mechanisms_only():
    ours = runner.sweeps(runner.QUICK)
    paper = runner.sweeps(runner.QUICK, "paper")
    assert [(c.figure, c.panel, c.x) for c in ours] == [(c.figure, c.panel, c.x) for c in paper]
    synthetic_case = next(i for i, c in enumerate(ours) if c.figure == "fig4")
    assert paper[synthetic_case].build().name == f"{ours[synthetic_case].build().name}_autotree"
    assert convention.synthetic_mechanism(synthetic.stem_with_branches(1, 1), "pvosimr").name == (
        synthetic.stem_with_branches(1, 1).name
    )
    with pytest.raises(ValueError, match="convention"):
        convention.synthetic_mechanism(synthetic.stem_with_branches(1, 1), "spatial_v2")


@pytest.mark.slow  # seconds of numpy or CasADi work
def test_scale_counts_are_the_four_variants_of_the_stem():
    scale = runner.scale_counts(count.CountCache(None), stem=1, branches=(1,), progress=False)
    robot = synthetic.stem_with_branches(1, 1)
    turned = convention.autotree_frames(robot.model)
    cms = robot.constraints
    for a in claims.PAPER_THREE:
        assert scale[1, "pvosimr", a] == symbolic.count_operations(robot.model, cms, a)
        assert scale[1, "turned frames only", a] == symbolic.count_operations(turned, cms, a)
        assert scale[1, "6×6 only", a] == convention.paper_count_operations(robot.model, cms, a)
        assert scale[1, "paper", a] == convention.paper_count_operations(turned, cms, a)
    assert len(scale) == len(convention.VARIANTS) * len(claims.PAPER_THREE)


def _scale_rows(factor: dict[str, int]) -> dict[tuple[int, str, str], int]:
    """Counts of b = 1 and 10 whose variants are ``factor`` times the pvosimr count."""
    base = {"pv-osimr": 1000, "pv-osim": 1100, "efpa": 1500}
    return {
        (b, v, a): b * n * f for b in (1, 10) for v, f in factor.items() for a, n in base.items()
    }


def test_the_scale_section_tabulates_the_given_counts():
    variants = tuple(convention.VARIANTS)
    rows = _scale_rows(dict(zip(variants, (1, 3, 2, 5), strict=True)))
    lines = claims.scale_section(rows, variants)
    assert lines[0] == "## Why our counts are below the paper's axes"
    table = [line for line in lines if line.startswith("| 1") or line.startswith("| 10")]
    assert len(table) == 6
    assert table[0] == (
        f"| 1 | pv-osimr | 1,000 | 3,000 | 2,000 | 5,000 | 5.00 | "
        f"{claims.PAPER_FIG3_TOP_TICK[1]:,} |"
    )
    assert table[1].endswith("| 5.00 |  |")  # the tick once per panel
    text = "\n".join(lines)
    assert "multiplies our counts by 3.00." in text and "on the turned frames ×1.67" in text
    for name in ("autoTree.m", "long_tree.m", "OSIM_fb.m", "LOSIM.m", "EFP.m", "SX.eye(3)"):
        assert name in text


def test_the_section_is_in_claims_md_only_with_scale_counts():
    meta = {
        "mode": "full",
        "convention": "pvosimr",
        "seconds": 1.0,
        "cache": "",
        "python": "3",
        "csv": "figures/opcounts.csv",
    }
    variants = tuple(convention.VARIANTS)
    rows = _scale_rows(dict.fromkeys(variants, 1))
    heading = "## Why our counts are below the paper's axes"
    assert heading in claims.report([], meta, rows, variants)
    assert heading not in claims.report([], meta)
    paper = claims.report([], {**meta, "convention": "paper"})
    assert "`pvosimr figures --convention paper`" in paper and "autoTree" in paper
