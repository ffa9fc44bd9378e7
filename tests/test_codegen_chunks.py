"""Generated code in chunks (pvosimr.codegen.chunks): the same matrices as CasADi's one body."""

import re

import numpy as np
import pytest
from _codegen import FAST, codegen_or_skip
from _trees import TreeSpec, build_tree, random_q

codegen = codegen_or_skip()
chunks = pytest.importorskip("pvosimr.codegen.chunks")
simd = pytest.importorskip("pvosimr.codegen.simd")


import casadi as ca  # noqa: E402
import pinocchio as pin  # noqa: E402


def _tree():
    """A small free-floating tree of varied joints, a branch, 3D and 6D constraints (most of
    CasADi's operations in pvosimr's functions: sin, cos, sqrt, products, quotients)."""
    kinds = ["FreeFlyer", "Spherical", "RX", "PY", "RevoluteUnaligned", "SphericalZYX", "HZ"]
    parents = [0, 1, 2, 3, 2, 5, 6]
    spec = TreeSpec(
        parents,
        kinds,
        [(4, pin.ContactType.CONTACT_6D), (7, pin.ContactType.CONTACT_3D)],
        armature=True,
        seed=11,
    )
    return build_tree(spec)


@pytest.mark.parametrize(
    "chunk", [pytest.param(1, marks=pytest.mark.slow), 7, pytest.param(400, marks=pytest.mark.slow)]
)
def test_chunked_code_equals_the_one_body(codegen_cache, monkeypatch, chunk):
    model, cms = _tree()
    monkeypatch.setattr(chunks, "CHUNKED_FROM", 10**9)
    whole = codegen.compile(model, cms, flags=FAST, cache_dir=codegen_cache)
    monkeypatch.setattr(chunks, "CHUNKED_FROM", 0)
    monkeypatch.setattr(chunks, "CHUNK", chunk)
    again, cms_again = _tree()  # another model object: not the compiled function kept for `model`
    pieces = codegen.compile(again, cms_again, flags=FAST, cache_dir=codegen_cache)
    assert pieces.chunked and not whole.chunked
    assert pieces.library != whole.library
    source = pieces.source.read_text()
    assert source.count("static void pvosimr_run") == -(-pieces.n_instructions // chunk)
    assert "pvosimr_fold_" in source and "pvosimr_extend_" in source  # shared, called
    assert re.search(r"casadi_f\d+\(a, r, 0, w, 0\)", source)
    m = pieces.m
    assert f"for (int j = 0; j < {m}; ++j) for (int i = j + 1; i < {m}; ++i)" in source
    rng = np.random.default_rng(0)
    qs = np.array([random_q(model, rng) for _ in range(5)])
    for q in qs:
        G, G0 = pieces(q), whole(q)
        assert np.abs(G - G0).max() <= 1e-13 * max(1.0, np.abs(G0).max())
    assert np.abs(pieces(qs, threads=2) - whole(qs, threads=2)).max() <= 1e-13 * max(
        1.0, np.abs(whole(qs)).max()
    )


@pytest.mark.slow  # builds C libraries of its own
@pytest.mark.skipif(
    simd.lanes(None, simd.cpu_features(tuple(codegen.find_compiler()))) == 0,
    reason="no AVX2 and FMA here",
)
def test_chunked_code_runs_on_fused_multiply_adds(tmp_path, monkeypatch):
    """Where the CPU has FMA and AVX2, a chunked library holds a copy of its runs and shared
    functions compiled for them, which the single call and a batch's rows run; the plain
    copy (the scalar build, the fallback) gives the same matrices to rounding."""
    model, cms = _tree()
    monkeypatch.setattr(chunks, "CHUNKED_FROM", 0)
    flags = ("-O2",)  # GCC fuses multiply-adds from -O2 on
    native = codegen.compile(model, cms, flags=flags, cache_dir=tmp_path)
    plain = codegen.compile(model, cms, flags=flags, cache_dir=tmp_path, simd=False)
    assert native.chunked and plain.chunked
    source = native.source.read_text()
    assert "pvosimr_native_f(" in source and "pvosimr_native_run0(" in source
    assert re.search(r"pvosimr_native_f\d+\(a, r, 0, w, 0\)", source)
    assert "pvosimr_native_f" not in plain.source.read_text()
    qs = np.array([random_q(model, np.random.default_rng(k)) for k in range(6)])
    G, G0 = np.array([native(q) for q in qs]), plain(qs, threads=1)
    assert np.abs(G - G0).max() <= 1e-13 * np.abs(G0).max()
    assert not np.array_equal(G, G0)  # fused multiply-adds round differently: the copy ran
    assert np.array_equal(native(qs, threads=2), G)  # a batch's rows are the single call's


def test_values_crossing_runs_are_handed_on():
    """A value made in run 0 and read in run 2 goes through a slot; one read in its own run
    stays a local."""
    x = ca.SX.sym("x", 2)
    y = ca.sin(x[0]) * x[1]
    z = y + 1
    f = ca.Function("f", [x], [ca.vertcat(z * z, y)])
    text = chunks.chunked_function(f, chunk=2)
    assert re.search(r"\bs\[0\] = v", text) and "static void pvosimr_run0" in text
    one = chunks.chunked_function(f, chunk=10_000)
    assert not re.search(r"\bs\[", one.split("static int casadi_f0")[0])


def test_calls_take_earlier_results_by_pointer_and_slots_are_reused():
    """A call's argument that is an earlier call's result is passed as a pointer into the
    slots; a slot read for the last time is reused."""
    x, p = ca.SX.sym("x", 3), ca.SX.sym("p", 2)
    kernel = ca.Function("k", [x, p], [ca.sin(x) * p[0] + p[1]], {"never_inline": True})
    y = ca.SX.sym("y", 3)
    z = y
    for a in range(4):
        z = kernel(z, ca.vertcat(a + 0.5, y[0]))
    f = ca.Function("f", [y], [z])
    cg = ca.CodeGenerator("f.c", {"with_header": False})
    cg.add(f)
    source = cg.dump()
    text = chunks.chunked_function(f, source, chunk=3)
    calls = re.findall(
        r"const casadi_real\* a\[\] = \{([^}]*)\}; casadi_real\* r\[\] = \{([^}]*)\}", text
    )
    assert len(calls) == 4
    for (args, _), (_, earlier) in zip(calls[1:], calls[:-1], strict=True):
        assert args.split(", ")[0] == earlier  # the previous result, by pointer
    size = int(re.search(r"casadi_real s\[(\d+)\]", text).group(1))
    assert size < 4 * 3  # four results of 3, not all live at once


def test_an_operation_without_a_c_form_is_named():
    x = ca.SX.sym("x")
    f = ca.Function("f", [x], [ca.erf(x)])
    with pytest.raises(NotImplementedError, match="CasADi operation"):
        chunks.chunked_function(f)
