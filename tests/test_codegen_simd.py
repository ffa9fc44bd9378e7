"""The vector path of pvosimr.codegen.build's batches (:mod:`pvosimr.codegen.simd`).

Rows computed several configurations per instruction must be the scalar generated code's rows
within 1e-13 of max|G|: for any B (groups of lanes and a tail), one or two threads, fixed or
input placements, angles beyond the vector sin/cos's own reduction, on every width of lanes this
CPU has (4: AVX2 and FMA, 8: AVX-512F); the scalar path must be there when asked for
(``simd=False``, ``PVOSIMR_SIMD=0``) and give the single call bit for bit.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from _codegen import FAST, codegen_or_skip
from _trees import TreeSpec, build_tree, random_placement, random_q

codegen = codegen_or_skip()
simd = pytest.importorskip("pvosimr.codegen.simd")


TOLERANCE = 1e-13


FEATURES = simd.cpu_features(tuple(codegen.find_compiler()))
#: The widths of lanes this CPU and compiler have (4: AVX2 and FMA, 8: AVX-512F).
WIDTHS = [n for n in sorted(simd.FEATURES) if simd.lanes(n, FEATURES) == n]

needs_lanes = pytest.mark.skipif(not WIDTHS, reason="no AVX2 and FMA here")
each_width = pytest.mark.parametrize(
    "lanes",
    [
        pytest.param(n, marks=pytest.mark.skipif(n not in WIDTHS, reason=f"no {n} lanes here"))
        for n in sorted(simd.FEATURES)
    ],
)


@pytest.fixture(scope="module")
def cache(codegen_cache):
    return codegen_cache


@pytest.fixture(scope="module")
def tree():
    """A free-flyer chain with revolute, unit-complex and spherical joints, a 6D contact and a
    3D contact (9 rows)."""
    spec = TreeSpec(
        [0, 1, 2, 3, 2],
        ["FreeFlyer", "RZ", "RUBX", "Spherical", "RY"],
        [(4, pin.ContactType.CONTACT_6D), (5, pin.ContactType.CONTACT_3D)],
        armature=True,
        seed=2,
    )
    return build_tree(spec)


@pytest.fixture(scope="module")
def builds(tree, cache):
    """``builds(placements, lanes)``: the G of ``tree`` compiled once per module."""
    model, cms = tree
    done = {}

    def build(placements: str, lanes: int):
        if (placements, lanes) not in done:
            done[placements, lanes] = codegen.compile(
                model, cms, cache_dir=cache, flags=FAST, placements=placements, simd=lanes
            )
        return done[placements, lanes]

    return build


def _qs(model: pin.Model, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([random_q(model, rng) for _ in range(count)])


def _worst(a: np.ndarray, b: np.ndarray) -> float:
    """The largest ``max|A - B| / max|B|`` over the rows."""
    axes = tuple(range(1, a.ndim))
    return float(np.max(np.max(np.abs(a - b), axis=axes) / np.max(np.abs(b), axis=axes)))


@each_width
@pytest.mark.parametrize("placements", ["fixed", "input"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("count", [1, 4, 7, 13, 66])
def test_lanes_give_the_scalar_rows(builds, lanes, placements, threads, count):
    vector, scalar = builds(placements, lanes), builds(placements, 0)
    assert vector.simd_lanes == lanes and scalar.simd_lanes == 0
    assert vector.library != scalar.library
    kwargs = {}
    if placements == "input":
        rng = np.random.default_rng(count)
        kwargs["placements"] = [random_placement(rng) for _ in vector.constraint_models]
    qs = _qs(vector.model, count, seed=count)
    G = vector(qs, threads=threads, **kwargs)
    expected = scalar(qs, threads=1, **kwargs)
    assert G.shape == expected.shape == (count, vector.m, vector.m)
    assert _worst(G, expected) <= TOLERANCE
    # a row's matrix does not depend on the thread count (groups of lanes start at row 0)
    assert np.array_equal(G, vector(qs, threads=3 - threads, **kwargs))
    if count % lanes:  # the tail is the single call's, bit for bit
        tail = count - count % lanes
        assert np.array_equal(G[tail:], np.array([vector(q, **kwargs) for q in qs[tail:]]))


@each_width
def test_lanes_take_any_angle(builds, lanes):
    """Angles beyond the vector sin/cos's reduction (the C library's, lane by lane) and
    within it, negative and positive, in every lane."""
    vector, scalar = builds("fixed", lanes), builds("fixed", 0)
    model = vector.model
    angles = [1e7, -3e6, 2.5e8, -1e12, 0.0, -0.0, np.pi / 4, -3 * np.pi / 4]
    angles += [-np.pi / 2, 3 * np.pi / 2, 5.5, -7.0, 1e-300, 10.0, -1e8, 1e8]
    qs = _qs(model, len(angles), seed=1)
    revolute = [j.idx_q for j in model.joints[1:] if j.shortname() == "JointModelRZ"]
    assert revolute
    for r, angle in enumerate(angles):
        qs[r, revolute[0]] = angle
    assert _worst(vector(qs, threads=1), scalar(qs, threads=1)) <= TOLERANCE


@needs_lanes
def test_the_single_call_runs_on_fused_multiply_adds(builds):
    """With the vector path, the single call is a copy of the function compiled for FMA and
    AVX2 (the plain one where the CPU lacks them): the scalar build's rows to rounding."""
    vector, scalar = builds("fixed", WIDTHS[-1]), builds("fixed", 0)
    assert "pvosimr_native_f" in vector.source.read_text()
    assert "pvosimr_native_f" not in scalar.source.read_text()
    qs = _qs(vector.model, 6, seed=5)
    single = np.array([vector(q) for q in qs])
    assert _worst(single, np.array([scalar(q) for q in qs])) <= TOLERANCE


@needs_lanes
def test_the_source_has_the_vector_path_only_when_built(builds):
    vector, scalar = builds("fixed", WIDTHS[-1]), builds("fixed", 0)
    assert "pvosimr_simd_rows" in vector.source.read_text()
    assert "pvosimr_simd_rows" not in scalar.source.read_text()
    assert builds("fixed", True).library == vector.library  # the widest by default


def test_the_scalar_path_can_be_forced(tree, cache, monkeypatch):
    model, cms = tree
    forced = codegen.compile(model, cms, cache_dir=cache, flags=FAST, simd=False)
    monkeypatch.setenv(simd.ENV, "0")
    by_env = codegen.compile(model, cms, cache_dir=cache, flags=FAST)
    assert forced.simd_lanes == by_env.simd_lanes == 0
    assert by_env.library == forced.library
    qs = _qs(model, 9, seed=9)
    G = by_env(qs, threads=2)
    assert all(np.array_equal(Gq, by_env(q)) for q, Gq in zip(qs, G, strict=True))
    for said, lanes in (("4", 4), ("8", 8), ("", max(WIDTHS, default=0))):
        monkeypatch.setenv(simd.ENV, said)
        f = codegen.compile(model, cms, cache_dir=cache, flags=FAST)
        assert f.simd_lanes == simd.lanes(lanes, FEATURES)


def test_an_unknown_statement_leaves_the_scalar_path():
    body = (
        "/* f:(q[1])->(G) */\nstatic int casadi_f0(...) {\n  casadi_real a0;\n"
        "  a0=atan2(a0,a0);\n  return 0;\n}\n"
    )
    assert simd.vector_function(body, "f", 1) is None
    good = body.replace("atan2(a0,a0)", "sin(a0)")
    assert "a0=pv_sin(a0);" in simd.vector_function(good, "f", 1)


def test_a_function_with_weights_has_no_lanes(tree):
    """The lanes read q and p only: the gradient's source (a W input) stays scalar, asked for
    lanes or not, rather than reading W where p would be."""
    model, cms = tree
    source, info = codegen.generate_source(model, cms, output="vjp", simd=4)
    assert info["simd_lanes"] == 0 and "pvosimr_simd_rows" not in source
