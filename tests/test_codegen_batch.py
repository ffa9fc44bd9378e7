"""pvosimr.codegen.build beyond one q: batches over threads, placements as inputs, derivatives.

A batch must give each row's single call, exactly on the scalar path (the same generated code
on the same numbers) and within 1e-13 on vector lanes (tests/test_codegen_simd.py), through
the extension and through ctypes; a bad row is named; ``placements=`` must
give the G of the constraint models rebuilt with those placements; ``derivatives`` must be
the central differences of G along ``pin.integrate``.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from _codegen import FAST, FAST_DERIVATIVES, codegen_or_skip
from _trees import TreeSpec, build_tree, random_placement, random_q

import pvosimr
from pvosimr.reference.truth import rel_err

pytestmark = pytest.mark.slow  # builds C libraries of its own (the generated code of larger trees)

codegen = codegen_or_skip()


#: Central differences of G along ``integrate`` with this step: rounding ~1e-15 |G| / h and
#: truncation h² |G'''| / 6 stay below 1e-8 of max|dG| on these trees.
STEP = 1e-6
DERIVATIVE_TOLERANCE = 1e-6


def _tree(small: bool = False) -> tuple[pin.Model, list]:
    """A free-flyer tree with quaternion and unit-complex joints, a 6D and a 3D contact and a
    3D loop closure between two bodies (12 rows; one constraint with two placements); the
    small one: a spherical root, a unit-complex joint, a 3D contact and the 3D loop (6 rows)."""
    if small:
        spec = TreeSpec(
            [0, 1, 2, 1],
            ["Spherical", "RX", "RUBZ", "RY"],
            [(3, pin.ContactType.CONTACT_3D)],
            armature=True,
            seed=5,
        )
        ends = (2, 4)
    else:
        spec = TreeSpec(
            [0, 1, 2, 3, 1, 5, 6],
            ["FreeFlyer", "RZ", "Spherical", "RX", "RUBY", "RY", "Planar"],
            [(4, pin.ContactType.CONTACT_6D), (7, pin.ContactType.CONTACT_3D)],
            armature=True,
            seed=11,
        )
        ends = (3, 6)
    model, cms = build_tree(spec)
    rng = np.random.default_rng(spec.seed)
    loop = pin.RigidConstraintModel(
        pin.ContactType.CONTACT_3D,
        model,
        ends[0],
        random_placement(rng),
        ends[1],
        random_placement(rng),
        pin.LOCAL_WORLD_ALIGNED,
    )
    return model, [*cms, loop]


@pytest.fixture(scope="module")
def cache(codegen_cache):
    return codegen_cache


@pytest.fixture(scope="module")
def tree():
    return _tree()


@pytest.fixture(scope="module")
def fixed(tree, cache):
    model, cms = tree
    return codegen.compile(model, cms, cache_dir=cache, flags=FAST)


@pytest.fixture(scope="module")
def placed(tree, cache):
    model, cms = tree
    return codegen.compile(model, cms, cache_dir=cache, flags=FAST, placements="input")


@pytest.fixture(scope="module")
def small():
    """dG's C is ~nv times G's: a small tree (nv = 6) keeps its build short."""
    return _tree(small=True)


@pytest.fixture(scope="module")
def with_derivatives(small, cache):
    model, cms = small
    return codegen.compile(
        model, cms, cache_dir=cache, flags=FAST, derivatives=True, derivative_flags=FAST_DERIVATIVES
    )


@pytest.fixture(scope="module")
def placed_derivatives(small, cache):
    model, cms = small
    return codegen.compile(
        model,
        cms,
        cache_dir=cache,
        flags=FAST,
        placements="input",
        derivatives=True,
        derivative_flags=FAST_DERIVATIVES,
    )


@pytest.fixture(scope="module")
def through_ctypes(tree, cache):
    """The fixed-placement function built without Python's headers."""
    model, cms = tree
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(codegen, "python_headers", lambda: None)
        return codegen.compile(model, cms, cache_dir=cache, flags=FAST)


#: A batch row computed on vector lanes (``f.simd_lanes > 0``) against the scalar function's.
SIMD_TOLERANCE = 1e-13


def _is_single(Gq: np.ndarray, single: np.ndarray, f) -> bool:
    """A batch row against the single call: bit for bit on the scalar path, within
    :data:`SIMD_TOLERANCE` of ``max|G|`` on the vector lanes."""
    if not f.simd_lanes:
        return np.array_equal(Gq, single)
    return float(np.max(np.abs(Gq - single))) <= SIMD_TOLERANCE * float(np.max(np.abs(single)))


def _qs(model: pin.Model, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([random_q(model, rng) for _ in range(count)])


def _random_placements(cms: list, rng: np.random.Generator) -> list:
    """One entry per constraint, a pair for one with a second body."""
    return [
        (random_placement(rng), random_placement(rng)) if cm.joint2_id else random_placement(rng)
        for cm in cms
    ]


def _rebuilt(cms: list, placements: list) -> list:
    out = []
    for cm, entry in zip(cms, placements, strict=True):
        first, second = entry if isinstance(entry, tuple) else (entry, cm.joint2_placement)
        copy = pin.RigidConstraintModel(cm)
        copy.joint1_placement, copy.joint2_placement = first, second
        out.append(copy)
    return out


def _central_differences(model: pin.Model, cms: list, q: np.ndarray) -> np.ndarray:
    """(nv, m, m): (G(q ⊕ h e_k) - G(q ⊕ -h e_k)) / 2h with pvosimr.compute_delassus."""
    data = model.createData()

    def G(dq):
        return pvosimr.compute_delassus(model, data, pin.integrate(model, q, dq), cms)

    steps = STEP * np.eye(model.nv)
    return np.array([(G(e) - G(-e)) / (2 * STEP) for e in steps])


# --------------------------------------------------------------------------- batches


@pytest.mark.parametrize("binding", ["extension", "ctypes"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("count", [1, 3, 64])
def test_a_batch_is_its_single_calls(fixed, through_ctypes, binding, threads, count):
    f = fixed if binding == "extension" else through_ctypes
    if binding == "extension" and f.binding != "extension":
        pytest.skip("no Python headers: the extension is not built")
    assert f.binding == binding
    qs = _qs(f.model, count, seed=count)
    G = f(qs, threads=threads)
    assert G.shape == (count, f.m, f.m) == (count, 12, 12)
    for q, Gq in zip(qs, G, strict=True):
        assert _is_single(Gq, f(q), f)
        assert np.array_equal(f(q), fixed(q))  # the two bindings: the same generated code


def test_a_batch_matches_numpy_and_takes_any_rows(fixed):
    model, cms = fixed.model, fixed.constraint_models
    qs = _qs(model, 5, seed=5)
    G = fixed(qs.tolist())  # default threads
    data = model.createData()
    for q, Gq in zip(qs, G, strict=True):
        assert rel_err(Gq, pvosimr.compute_delassus(model, data, q, cms)) <= 1e-10
    strided = np.repeat(qs, 2, axis=1)[:, ::2]
    assert np.array_equal(fixed(strided, threads=2), G)
    assert fixed(qs[:0]).shape == (0, 12, 12)
    assert np.array_equal(fixed(qs, threads=100), G)  # more threads than rows
    with pytest.raises(ValueError, match="threads"):
        fixed(qs, threads=0)


def _with_bad_rows(model: pin.Model, rows: dict[int, str], count: int = 64) -> np.ndarray:
    qs = _qs(model, count, seed=3)
    for r, kind in rows.items():
        if kind == "nan":
            qs[r, -1] = np.nan
        else:  # the Spherical joint's quaternion, off by 5e-5 in norm
            qs[r, model.joints[3].idx_q] += 1e-2
    return qs


@pytest.mark.parametrize("f_name", ["fixed", "through_ctypes"])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_bad_row_is_named(f_name, threads, request):
    f = request.getfixturevalue(f_name)
    model = f.model
    cases = [
        ({17: "normalized"}, 17, "not normalized"),
        ({40: "nan"}, 40, "not finite"),
        ({50: "nan", 10: "normalized"}, 10, "not normalized"),  # the first, in another chunk
        ({63: "normalized"}, 63, "not normalized"),
    ]
    for rows, first, message in cases:
        qs = _with_bad_rows(model, rows)
        with pytest.raises(ValueError, match=rf"^row {first} of qs: .*{message}") as err:
            f(qs, threads=threads)
        single = pytest.raises(ValueError, match=message)
        with single:
            f(qs[first])
        assert str(err.value) == f"row {first} of qs: {single.excinfo.value}"


def test_a_non_finite_row_is_named(cache):
    model, cms = build_tree(
        TreeSpec([0, 1], ["RZ", "RZ"], [(2, pin.ContactType.CONTACT_6D)], armature=False, seed=3)
    )
    model.inertias[2] = pin.Inertia.Zero()  # M singular at every q: row 0 fails first
    f = codegen.compile(model, cms, cache_dir=cache, flags=FAST)
    for count in (3, 6):  # with vector lanes: in the tail, in a group of lanes
        with pytest.raises(ValueError, match="singular at row 0 of qs"):
            f(_qs(model, count, seed=0), threads=2)


def test_threads_share_nothing(fixed):
    from concurrent.futures import ThreadPoolExecutor

    qs = _qs(fixed.model, 32, seed=9)
    expected = fixed(qs, threads=1)
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda k: fixed(qs, threads=1 + k % 2), range(16)))
    assert all(np.array_equal(G, expected) for G in got)


# --------------------------------------------------------------------------- placements


def test_placements_give_the_rebuilt_constraints_g(placed):
    model, cms = placed.model, placed.constraint_models
    rng = np.random.default_rng(4)
    data = model.createData()
    qs = _qs(model, 3, seed=4)
    for _ in range(3):
        placements = _random_placements(cms, rng)
        moved = _rebuilt(cms, placements)
        G = placed(qs, placements=placements, threads=2)
        for q, Gq in zip(qs, G, strict=True):
            expected = pvosimr.compute_delassus(model, data, q, moved)
            assert rel_err(placed(q, placements=placements), expected) <= 1e-12
            assert _is_single(Gq, placed(q, placements=placements), placed)
    own = [cm.joint1_placement if not cm.joint2_id else (cm.joint1_placement, cm.joint2_placement)
           for cm in cms]  # fmt: skip
    assert rel_err(placed(qs[0], placements=own), pvosimr.compute_delassus(
        model, data, qs[0], cms)) <= 1e-12  # fmt: skip


def test_placements_are_required_exactly_where_they_are_inputs(fixed, placed):
    q = pin.neutral(fixed.model)
    with pytest.raises(TypeError, match="placements='input'"):
        placed(q)
    with pytest.raises(TypeError, match="placements='fixed'"):
        fixed(q, placements=[pin.SE3.Identity()] * 3)
    with pytest.raises(ValueError, match="constraint 2"):  # the loop closure needs a pair
        placed(q, placements=[pin.SE3.Identity()] * 3)
    assert placed.placements == "input" and fixed.placements == "fixed"


def test_a_bad_row_is_named_with_placements(placed):
    cms = placed.constraint_models
    placements = _random_placements(cms, np.random.default_rng(0))
    qs = _with_bad_rows(placed.model, {33: "nan"})
    with pytest.raises(ValueError, match=r"^row 33 of qs: .*not finite"):
        placed(qs, placements=placements, threads=2)


# --------------------------------------------------------------------------- derivatives


def test_derivatives_are_central_differences(with_derivatives, placed_derivatives):
    f = with_derivatives
    model, cms = f.model, f.constraint_models
    qs = _qs(model, 2, seed=6)
    placements = _random_placements(cms, np.random.default_rng(6))
    moved = _rebuilt(cms, placements)
    for q in qs:
        dG = f.derivatives(q)
        assert dG.shape == (model.nv, f.m, f.m) == (6, 6, 6)
        expected = _central_differences(model, cms, q)
        assert np.abs(dG - expected).max() <= DERIVATIVE_TOLERANCE * np.abs(expected).max()
        dG = placed_derivatives.derivatives(q, placements=placements)
        expected = _central_differences(model, moved, q)
        assert np.abs(dG - expected).max() <= DERIVATIVE_TOLERANCE * np.abs(expected).max()
    batch = f.derivatives(qs, threads=2)
    assert batch.shape == (2, model.nv, 6, 6)
    assert all(np.array_equal(b, f.derivatives(q)) for b, q in zip(batch, qs, strict=True))
    batch = placed_derivatives.derivatives(qs, placements=placements, threads=2)
    assert all(
        np.array_equal(b, placed_derivatives.derivatives(q, placements=placements))
        for b, q in zip(batch, qs, strict=True)
    )


def test_derivatives_need_derivatives_true(fixed, with_derivatives):
    with pytest.raises(TypeError, match="derivatives=True"):
        fixed.derivatives(pin.neutral(fixed.model))
    bad = _qs(with_derivatives.model, 8, seed=1)
    bad[5, 0] += 1e-2  # the root's quaternion
    with pytest.raises(ValueError, match=r"^row 5 of qs: .*not normalized"):
        with_derivatives.derivatives(bad)


# --------------------------------------------------------------------------- the cache


def test_each_variant_is_its_own_library(
    with_derivatives, placed_derivatives, small, cache, monkeypatch
):
    f, placed = with_derivatives, placed_derivatives
    libraries = [
        f.library,
        f.derivatives_library.library,
        placed.library,
        placed.derivatives_library.library,
    ]
    assert len(set(libraries)) == len(libraries) and all(p.exists() for p in libraries)
    # The same G library without derivatives, from the cache; another for another binding.
    calls = []
    monkeypatch.setattr(codegen, "_run_compiler", lambda command: calls.append(command))
    model, cms = small
    again = codegen.compile(model, cms, cache_dir=cache, flags=FAST)
    assert again.library == f.library and not again.compiled and calls == []
    assert again.derivatives_library is None
    monkeypatch.setattr(codegen, "python_headers", lambda: None)
    with pytest.raises(FileNotFoundError):  # the stub compiler produced no library
        codegen.compile(model, cms, cache_dir=cache, flags=FAST)
    assert len(calls) == 1 and str(f.source) not in calls[0]


def test_the_first_bad_row_is_named_whatever_the_schedule(fixed):
    """Workers take blocks of rows in turn: a later block may fail first in time."""
    qs = _with_bad_rows(fixed.model, {9: "normalized", 12: "nan", 41: "nan"})
    for _ in range(20):
        with pytest.raises(ValueError, match=r"^row 9 of qs: "):
            fixed(qs, threads=2)
    rows = qs[10:]
    with pytest.raises(ValueError, match=r"^row 2 of qs: .*not finite"):
        fixed(rows, threads=3)


# --------------------------------------------------------------------------- one contract


def _near_unit(model: pin.Model, qs: np.ndarray, factor: float = 1.0 + 5e-7) -> np.ndarray:
    """``qs`` with every unit part scaled by ``factor`` (pin.isNormalized still accepts it)."""
    from pvosimr.coordinates import unit_part_spans

    qs = qs.copy()
    for start, length in unit_part_spans(model):
        qs[..., start : start + length] *= factor
    return qs


def test_the_library_applies_the_unit_part_rule(fixed, through_ctypes):
    """A unit part within 1e-6 of unit norm was used as given by f(q): now G(N(q)) on the
    single call, the batch (a group of vector lanes with such a row goes through the scalar
    rows) and ctypes, as on the numpy route."""
    from pvosimr.coordinates import unit_normalized, unit_part_spans

    model = fixed.model
    qs = _qs(model, 16, seed=50)
    near = _near_unit(model, qs)
    near[::3] = qs[::3]  # some rows as given: lanes and scalar rows mixed
    q_hat = unit_normalized(near, unit_part_spans(model))
    for f in (fixed, through_ctypes):
        assert np.array_equal(f(near[1]), f(q_hat[1]))
        batch, truth = f(near), f(q_hat)
        assert all(_is_single(a, b, f) for a, b in zip(batch, truth, strict=True))
    data = model.createData()
    numpy = pvosimr.compute_delassus(model, data, near[1], fixed.constraint_models)
    assert np.array_equal(
        numpy, pvosimr.compute_delassus(model, data, q_hat[1], fixed.constraint_models)
    )
    assert rel_err(fixed(near[1]), numpy) <= 1e-13


def test_p_as_an_array_broadcasts_as_numpy(placed):
    """``f(qs, p=...)``: the leading axes of q (..., nq) and p (..., n_p) broadcast as numpy
    broadcasts them; each row is the call with that row's placements."""
    model, cms = placed.model, placed.constraint_models
    rng = np.random.default_rng(51)
    entries = [_random_placements(cms, rng) for _ in range(2)]
    ps = np.stack([placed.placement_vector(e) for e in entries])
    qs = _qs(model, 4, seed=51)
    assert np.array_equal(placed(qs[0], p=ps[0]), placed(qs[0], placements=entries[0]))
    for q, p in ((qs[:2], ps[:, None]), (qs.reshape(2, 2, -1), ps[:, None]),
                 (qs.reshape(2, 2, -1), ps), (qs[0], ps), (qs[:2], ps[0])):  # fmt: skip
        out = placed(q, p=p)
        shape = np.broadcast_shapes(q.shape[:-1], p.shape[:-1])
        assert out.shape == (*shape, placed.m, placed.m)
        q_rows = np.broadcast_to(q, (*shape, model.nq)).reshape(-1, model.nq)
        p_rows = np.broadcast_to(p, (*shape, placed.n_p)).reshape(-1, placed.n_p)
        for k, (qk, pk) in enumerate(zip(q_rows, p_rows, strict=True)):
            entry = entries[0] if np.array_equal(pk, ps[0]) else entries[1]
            assert _is_single(out.reshape(-1, placed.m, placed.m)[k], placed(qk, placements=entry),
                              placed)  # fmt: skip
    with pytest.raises(ValueError, match=r"shape mismatch|broadcast"):
        placed(qs.reshape(2, 2, -1), p=np.stack([ps[0]] * 4))
    with pytest.raises(TypeError, match="not both"):
        placed(qs[0], placements=entries[0], p=ps[0])


@pytest.mark.parametrize(
    "bad", ["scaled rotation", "nan", "reflection", "just beyond the tolerance"]
)
def test_a_bad_placement_in_p_is_named_and_the_c_refuses_it_too(placed, bad):
    """p is checked as a pin.SE3 placement is, with the same tolerance constant
    (pvosimr.constraints.ORTHONORMAL_TOLERANCE): by f (naming the row of p, the constraint
    and which placement) and by the generated C itself (the FFI's and the export's check)."""
    from pvosimr.codegen import c_source
    from pvosimr.constraints import ORTHONORMAL_TOLERANCE, check_placement

    model, cms = placed.model, placed.constraint_models
    entries = _random_placements(cms, np.random.default_rng(52))
    ps = np.stack([placed.placement_vector(entries)] * 2)
    block = 12 * (len(placed.placement_labels) - 1)  # the loop closure's joint2_placement
    R = ps[1, block : block + 9].reshape(3, 3).T
    if bad == "scaled rotation":
        R = 2.0 * R
    elif bad == "nan":
        R = np.where(np.eye(3) > 0, np.nan, R)
    elif bad == "reflection":
        R = -R
    else:  # RᵀR − I = 2δ + δ² on the diagonal, just beyond the tolerance
        R = (1.0 + 0.51 * ORTHONORMAL_TOLERANCE) * R
    ps[1, block : block + 9] = R.T.ravel()
    se3 = pin.SE3(R.copy(), ps[1, block + 9 : block + 12].copy())
    assert check_placement(se3)  # the SE3's own check refuses it too
    with pytest.raises(ValueError, match=r"^row 1 of p: constraint 2\b.*: joint2_placement "):
        placed(_qs(model, 2, seed=52), p=ps)
    rc, bad_row, _ = placed._G.rows(_qs(model, 1, seed=52), ps[1], 1, True)
    assert (rc, bad_row) == (c_source.BAD_P, 0)
    R_ok = ps[0, block : block + 9].reshape(3, 3).T * (1.0 + 0.49 * ORTHONORMAL_TOLERANCE)
    ok = ps[0].copy()
    ok[block : block + 9] = R_ok.T.ravel()
    assert not check_placement(pin.SE3(R_ok, ok[block + 9 : block + 12].copy()))
    assert placed(_qs(model, 1, seed=52)[0], p=ok).shape == (placed.m, placed.m)
    assert placed._G.rows(_qs(model, 1, seed=52), ok, 1, True)[0] == c_source.OK
