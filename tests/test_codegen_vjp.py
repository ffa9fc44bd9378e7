"""``f.vjp(q, W)``: the gradient of ⟨W, G⟩ along ``pin.integrate`` (``compile(..., vjp=True)``).

It must be the contraction of ``f.derivatives`` with ``W`` (the same graph, forward mode there,
reverse mode here) and the central differences of the compiled G contracted with ``W``; a
batch must give each row's single call exactly; a bad ``W`` is named.  The tree is a small
free-flyer chain with a ball joint and a unit-complex joint, so the tangent map of ``integrate``
is not the identity.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from _codegen import FAST, FAST_DERIVATIVES, codegen_or_skip
from _trees import TreeSpec, build_tree, random_placement, random_q

codegen = codegen_or_skip()


#: Central differences with this step: truncation h²|G'''|/6 and rounding ~1e-16|G|/h, both
#: far below the tolerance relative to max|g|.
STEP = 1e-6
DIFFERENCE_TOLERANCE = 1e-6
#: The contraction of dG: the same numbers summed in another order.
CONTRACTION_TOLERANCE = 1e-10


def _tree() -> tuple[pin.Model, list]:
    """Free flyer, a revolute, a ball and a unit-complex joint in a chain; a 6D contact on the
    ball's body and a 3D one at the tip (m = 9, nq = 14, nv = 11)."""
    spec = TreeSpec(
        [0, 1, 2, 3],
        ["FreeFlyer", "RX", "Spherical", "RUBZ"],
        [(3, pin.ContactType.CONTACT_6D), (4, pin.ContactType.CONTACT_3D)],
        armature=True,
        seed=3,
    )
    return build_tree(spec)


@pytest.fixture(scope="module")
def cache(codegen_cache):
    return codegen_cache


@pytest.fixture(scope="module")
def f(cache):
    model, cms = _tree()
    return codegen.compile(
        model,
        cms,
        cache_dir=cache,
        flags=FAST,
        derivatives=True,
        derivative_flags=FAST_DERIVATIVES,
        vjp=True,
    )


def _qs(model: pin.Model, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([random_q(model, rng) for _ in range(count)])


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


def _differences(G, model: pin.Model, q: np.ndarray, W: np.ndarray, **kwargs) -> np.ndarray:
    """Σ_ij W_ij (G(q ⊕ h e_k) − G(q ⊕ −h e_k))_ij / 2h for every k, G the compiled call."""
    steps = STEP * np.eye(model.nv)
    plus = G(np.array([pin.integrate(model, q, e) for e in steps]), **kwargs)
    minus = G(np.array([pin.integrate(model, q, -e) for e in steps]), **kwargs)
    return np.einsum("kij,ij->k", (plus - minus) / (2 * STEP), W)


def test_vjp_is_the_contraction_of_derivatives(f):
    model = f.model
    rng = np.random.default_rng(0)
    assert (f.m, model.nv) == (9, 11)
    for q in _qs(model, 4, seed=1):
        W = rng.standard_normal((f.m, f.m))  # not symmetric: taken as given
        g = f.vjp(q, W)
        assert g.shape == (model.nv,) and g.dtype == np.float64
        expected = np.einsum("kij,ij->k", f.derivatives(q), W)
        assert _relative(g, expected) <= CONTRACTION_TOLERANCE
        assert np.array_equal(f.vjp(list(q), W.tolist()), g)  # any sequence, same numbers
        assert np.array_equal(f.vjp(q, np.asfortranarray(W)), g)  # any layout
        # linear in W; G symmetric, so W and its transpose give the same gradient
        assert _relative(f.vjp(q, 2 * W + W.T), 3 * g) <= CONTRACTION_TOLERANCE
        assert _relative(f.vjp(q, np.eye(f.m)), np.trace(f.derivatives(q), axis1=1, axis2=2)) <= (
            CONTRACTION_TOLERANCE
        )


def test_vjp_is_central_differences_of_the_call(f):
    model = f.model
    rng = np.random.default_rng(2)
    for q in _qs(model, 3, seed=3):
        W = rng.standard_normal((f.m, f.m))
        expected = _differences(f, model, q, W)
        assert _relative(f.vjp(q, W), expected) <= DIFFERENCE_TOLERANCE


@pytest.mark.parametrize("threads", [1, 2])
def test_a_batch_is_its_single_calls(f, threads):
    model = f.model
    qs = _qs(model, 5, seed=4)
    rng = np.random.default_rng(5)
    Ws = rng.standard_normal((5, f.m, f.m))
    each = f.vjp(qs, Ws, threads=threads)  # one W per row
    assert each.shape == (5, model.nv)
    assert all(np.array_equal(g, f.vjp(q, W)) for g, q, W in zip(each, qs, Ws, strict=True))
    shared = f.vjp(qs, Ws[0], threads=threads)  # one W for every row
    assert shared.shape == (5, model.nv)
    assert all(np.array_equal(g, f.vjp(q, Ws[0])) for g, q in zip(shared, qs, strict=True))
    assert f.vjp(qs[:0], Ws[0]).shape == (0, model.nv)
    assert f.vjp(qs[:1], Ws[:1]).shape == (1, model.nv)


def test_bad_W_is_named(f):
    model, m = f.model, f.m
    q, qs = _qs(model, 1, seed=6)[0], _qs(model, 4, seed=7)
    W = np.ones((m, m))
    with pytest.raises(
        ValueError, match=r"W must be an \(m, m\) = \(9, 9\) array, not shape \(9, 8\)"
    ):
        f.vjp(q, W[:, :-1])
    with pytest.raises(ValueError, match=r"not shape \(4, 9, 9\)"):  # a stack of W for one q
        f.vjp(q, np.ones((4, m, m)))
    with pytest.raises(ValueError, match=r"for this batch of 4 rows, \(4, 9, 9\), not shape \(3,"):
        f.vjp(qs, np.ones((3, m, m)))
    bad = W.copy()
    bad[2, 5] = np.nan
    with pytest.raises(ValueError, match=r"W is not finite: W\[2, 5\] = nan"):
        f.vjp(q, bad)
    stack = np.ones((4, m, m))
    stack[3, 1, 0] = -np.inf
    with pytest.raises(ValueError, match=r"W is not finite: W\[3, 1, 0\] = -inf"):
        f.vjp(qs, stack)
    with pytest.raises(TypeError, match="W must be real numbers"):
        f.vjp(q, W.astype(complex))
    with pytest.raises(ValueError, match="not normalized"):  # q is checked as for the call
        f.vjp(q + 0.1, W)
    qs[2, 3:7] *= 2  # the root's quaternion
    with pytest.raises(ValueError, match=r"^row 2 of qs: .*not normalized"):
        f.vjp(qs, W)


def test_vjp_needs_vjp_true(f, cache):
    g = codegen.compile(f.model, f.constraint_models, cache_dir=cache, flags=FAST)
    assert g.vjp_library is None and f.vjp_library.flags == FAST_DERIVATIVES
    assert f.vjp_library.library != f.library != f.derivatives_library.library
    with pytest.raises(TypeError, match="vjp=True"):
        g.vjp(pin.neutral(f.model), np.eye(f.m))


@pytest.mark.slow  # builds C libraries of its own
def test_vjp_through_ctypes_and_with_placements(f, cache, monkeypatch):
    """Without Python's headers (ctypes), and with the placements as an input: the same
    gradient, the second one of the constraints placed elsewhere."""
    model, cms = f.model, f.constraint_models
    qs = _qs(model, 3, seed=8)
    rng = np.random.default_rng(9)
    Ws = rng.standard_normal((3, f.m, f.m))
    options = {"cache_dir": cache, "flags": FAST, "derivative_flags": FAST_DERIVATIVES}
    placed = codegen.compile(model, cms, placements="input", vjp=True, **options)
    moved = [random_placement(rng) for _ in cms]
    for q, W in zip(qs, Ws, strict=True):
        expected = _differences(placed, model, q, W, placements=moved)
        assert _relative(placed.vjp(q, W, placements=moved), expected) <= DIFFERENCE_TOLERANCE
    batch = placed.vjp(qs, Ws, placements=moved, threads=2)
    assert np.array_equal(batch[1], placed.vjp(qs[1], Ws[1], placements=moved))
    monkeypatch.setattr(codegen, "python_headers", lambda: None)
    through_ctypes = codegen.compile(model, cms, vjp=True, **options)
    assert through_ctypes.binding == "ctypes"
    assert np.array_equal(through_ctypes.vjp(qs, Ws, threads=2), f.vjp(qs, Ws))
    assert np.array_equal(through_ctypes.vjp(qs, Ws[0]), f.vjp(qs, Ws[0]))
    assert np.array_equal(through_ctypes.vjp(qs[0], Ws[0]), f.vjp(qs[0], Ws[0]))
    with pytest.raises(ValueError, match=r"W is not finite: W\[0, 0\] = nan"):
        through_ctypes.vjp(qs[0], np.full((f.m, f.m), np.nan))


def test_no_constraints_gives_zeros(tmp_path):
    model, _ = build_tree(TreeSpec([0], ["RZ"], [], armature=False, seed=0))
    f = codegen.compile(model, [], cache_dir=tmp_path, vjp=True)
    assert f.vjp(pin.neutral(model), np.zeros((0, 0))).shape == (1,)
    assert f.vjp(np.zeros((3, 1)), np.zeros((0, 0))).shape == (3, 1)
    with pytest.raises(ValueError, match="W must be"):
        f.vjp(pin.neutral(model), np.zeros((1, 1)))
