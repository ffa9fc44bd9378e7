"""pvosimr.jax: the generated library inside jit, vmap and grad, checked against the library
itself (f(q), f(qs), f.vjp) and against Python loops.

The default suite compiles one small library (the sample humanoid, a 6D weld and a 3D point,
placements fixed; the same one tests/test_torch.py uses); Atlas and placements as inputs are in
``-m slow``.
"""

import os
import re

import numpy as np
import pinocchio as pin
import pytest
from _slow import slow_ones

jax = pytest.importorskip("jax", reason='needs JAX: pip install "pvosimr[jax]"')
import jax.numpy as jnp  # noqa: E402
from _jax import first_part_scaled, fresh_python, import_error_without  # noqa: E402
from _trees import mass_on_the_first_axis  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

from pvosimr.codegen import c_source  # noqa: E402
from pvosimr.codegen.contract import FAILURE_WORDS  # noqa: E402
from pvosimr.constraints import point, weld  # noqa: E402
from pvosimr.coordinates import tangent_to_coordinates, unit_part_spans  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(autouse=True)
def x64():
    """64-bit mode on for each test and restored after it (pvosimr never turns it on)."""
    with jax.enable_x64(True):
        yield


def humanoid():
    model = pin.buildSampleModelHumanoid()
    return model, [weld(model, "rleg_effector_body"), point(model, "larm_effector_body")]


def configurations(model, count, seed=0):
    rng = np.random.default_rng(seed)
    qs = []
    for _ in range(count):
        q = pin.integrate(model, pin.neutral(model), rng.uniform(-1.0, 1.0, model.nv))
        qs.append(q)
    return np.stack(qs)


def _said(row: int, code: int) -> str:
    """The handler's error for ``row`` failing with the library's ``code``, as a pattern."""
    return re.escape(f"pvosimr: at row {row} of the batch: {FAILURE_WORDS[code]}")


@pytest.fixture(scope="module")
def humanoid_G():
    import pvosimr.jax

    model, cms = humanoid()
    with jax.enable_x64(True):
        G = pvosimr.jax.delassus(model, cms)
    return model, G, G.compiled


def weighted_loss(G, W):
    W = jnp.asarray(W)
    return lambda q: jnp.sum(W * G(q))


def test_jit_is_bitwise_the_library(humanoid_G):
    _, G, f = humanoid_G
    qs = configurations(f.model, 9)
    for q in qs[:3]:
        assert np.array_equal(np.asarray(jax.jit(G)(q)), f(q))
        assert np.array_equal(np.asarray(G(q)), f(q))
    # a vmapped call is one batched call: the library's own batch, bit for bit
    assert np.array_equal(np.asarray(jax.jit(jax.vmap(G))(qs)), f(qs))
    assert np.array_equal(np.asarray(jax.jit(G)(qs)), f(qs))  # (..., nq) directly


@pytest.mark.slow  # JAX or PyTorch tracing and compiling: a second or more
def test_vmap_and_nested_vmap_equal_python_loops(humanoid_G):
    model, G, f = humanoid_G
    qs = configurations(model, 6, seed=1).reshape(2, 3, model.nq)
    loop = np.stack([np.stack([f(q) for q in row]) for row in qs])
    nested = np.asarray(jax.jit(jax.vmap(jax.vmap(G)))(qs))
    assert nested.shape == (2, 3, f.m, f.m)
    # one batched call of all six rows (its vector lanes round unlike six single calls)
    assert np.array_equal(nested.reshape(6, f.m, f.m), f(qs.reshape(6, -1)))
    np.testing.assert_allclose(nested, loop, rtol=0, atol=1e-13 * np.abs(loop).max())
    flat = np.asarray(jax.vmap(G)(qs.reshape(6, -1)))
    np.testing.assert_allclose(flat, loop.reshape(6, f.m, f.m), rtol=0, atol=1e-13)
    # vmap over an inner axis of a larger array (in_axes=1), and a batch of one
    swapped = np.asarray(jax.vmap(G, in_axes=1, out_axes=1)(qs.swapaxes(0, 1)))
    np.testing.assert_allclose(swapped.swapaxes(0, 1), loop, rtol=0, atol=1e-13)
    assert np.array_equal(np.asarray(jax.vmap(G)(qs[0, :1]))[0], f(qs[0, 0]))


def test_grad_is_the_generated_vjp_in_q_coordinates(humanoid_G):
    model, G, f = humanoid_G
    rng = np.random.default_rng(2)
    grad = jax.jit(jax.grad(lambda q, W: jnp.sum(W * G(q))))  # traced once
    for q in configurations(model, 3, seed=2):
        W = rng.standard_normal((f.m, f.m))
        expected = tangent_to_coordinates(model, q, f.vjp(q, W))
        scale = max(1.0, np.abs(expected).max())
        assert np.abs(np.asarray(grad(q, W)) - expected).max() <= 1e-12 * scale
    # and through jax.vjp with W as the cotangent
    _, pullback = jax.vjp(G, q)
    (g2,) = pullback(jnp.asarray(W))
    assert np.abs(np.asarray(g2) - expected).max() <= 1e-12 * scale


@pytest.mark.slow  # JAX or PyTorch tracing and compiling: a second or more
def test_vmap_of_grad_equals_a_python_loop(humanoid_G):
    model, G, f = humanoid_G
    qs = configurations(model, 5, seed=3)
    Ws = np.random.default_rng(3).standard_normal((5, f.m, f.m))
    grad = jax.grad(lambda q, W: jnp.sum(W * G(q)))
    # one W for every row, then one W per row (vmap over both)
    batched = np.asarray(jax.jit(jax.vmap(grad, in_axes=(0, None)))(qs, Ws[0]))
    loop = np.stack([np.asarray(grad(q, Ws[0])) for q in qs])
    np.testing.assert_allclose(batched, loop, rtol=0, atol=1e-13 * max(1.0, np.abs(loop).max()))
    batched = np.asarray(jax.vmap(grad)(qs, Ws))
    pairs = zip(qs, Ws, strict=True)
    loop = np.stack([tangent_to_coordinates(model, q, f.vjp(q, W)) for q, W in pairs])
    np.testing.assert_allclose(batched, loop, rtol=0, atol=1e-12 * max(1.0, np.abs(loop).max()))


def test_vmap_of_grad_in_every_arrangement_of_q_and_W(humanoid_G):
    """A W that every row shares reaches the handler once; batched W, batched q, nested and
    jacrev's own vmap each give f.vjp's gradient at every (q, W) pair."""
    model, G, f = humanoid_G
    qs = configurations(model, 3, seed=4)
    Ws = np.random.default_rng(4).standard_normal((2, f.m, f.m))
    grad = jax.grad(lambda q, W: jnp.sum(W * G(q)))

    def expected(q, W):
        return tangent_to_coordinates(model, q, f.vjp(q, W))

    def close(got, want):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * max(1.0, np.abs(want).max()))

    table = np.stack([np.stack([expected(q, W) for q in qs]) for W in Ws])  # (W, q, nq)
    # W batched, q not; then q inside (shared W), W outside; then q outside, W inside
    close(np.asarray(jax.jit(jax.vmap(grad, in_axes=(None, 0)))(qs[1], Ws)), table[:, 1])
    inner = jax.vmap(grad, in_axes=(0, None))
    close(np.asarray(jax.jit(jax.vmap(inner, in_axes=(None, 0)))(qs, Ws)), table)
    inner = jax.vmap(grad, in_axes=(None, 0))
    close(np.asarray(jax.jit(jax.vmap(inner, in_axes=(0, None)))(qs, Ws)), table.swapaxes(0, 1))
    # nested q batches sharing one W
    nested = jax.vmap(jax.vmap(grad, in_axes=(0, None)), in_axes=(0, None))
    close(np.asarray(jax.jit(nested)(np.stack([qs, qs[::-1]]), Ws[0])),
          np.stack([table[0], table[0, ::-1]]))  # fmt: skip
    # jacrev (a vmap over the cotangent basis) under vmap: row (i, j) is the gradient of G_ij
    jac = np.asarray(jax.jit(jax.vmap(jax.jacrev(G)))(qs[:2]))
    for k in range(2):
        for i, j in ((0, 0), (1, 4), (f.m - 1, 2)):
            E = np.zeros((f.m, f.m))
            E[i, j] = 1.0
            close(jac[k, i, j], expected(qs[k], E))


def test_check_grads_reverse_mode(humanoid_G):
    model, G, f = humanoid_G
    q = configurations(model, 1, seed=5)[0]
    W = np.random.default_rng(5).standard_normal((f.m, f.m))
    check_grads(weighted_loss(G, W), (q,), order=1, modes=["rev"])
    check_grads(lambda q: G(q)[0, :3], (q,), order=1, modes=["rev"])  # jacrev's rows


def test_off_the_sphere_G_is_G_of_the_normalised_q_and_has_no_radial_gradient(humanoid_G):
    model, G, f = humanoid_G
    q = configurations(model, 1, seed=6)[0]
    scaled, part = first_part_scaled(model, q, 1.7)
    np.testing.assert_allclose(np.asarray(G(scaled)), f(q), rtol=0, atol=1e-13)
    W = np.random.default_rng(6).standard_normal((f.m, f.m))
    g = np.asarray(jax.grad(weighted_loss(G, W))(scaled))
    assert abs(g[part] @ scaled[part]) <= 1e-12 * np.abs(g).max()  # no radial part
    # the chain rule of u/|u|: the unit sphere's gradient divided by the norm
    at_unit = tangent_to_coordinates(model, q, f.vjp(q, W))
    np.testing.assert_allclose(g[part], at_unit[part] / 1.7, rtol=0, atol=1e-12)
    rest = np.setdiff1d(np.arange(model.nq), np.arange(model.nq)[part])
    np.testing.assert_allclose(g[rest], at_unit[rest], rtol=0, atol=1e-12)


@pytest.mark.parametrize("bad", ["nan", "inf", "zero quaternion"])
def test_non_finite_q_is_a_run_time_error_never_a_matrix(humanoid_G, bad):
    model, G, f = humanoid_G
    qs = configurations(model, 4, seed=7)
    (start, length), *_ = unit_part_spans(model)
    if bad == "zero quaternion":
        qs[2, start : start + length] = 0.0
    else:
        qs[2, -1] = float(bad)
    with pytest.raises(Exception, match=_said(2, c_source.BAD_Q)):
        np.asarray(jax.jit(jax.vmap(G))(qs))
    with pytest.raises(Exception, match=r"q is not finite"):
        np.asarray(jax.jit(G)(qs[2]))
    W = np.ones((f.m, f.m))
    with pytest.raises(Exception, match=r"q is not finite"):
        np.asarray(jax.grad(weighted_loss(G, W))(qs[2]))


@pytest.mark.slow
def test_a_singular_row_is_named_in_the_front_ends_words():
    import pvosimr.jax

    model, cms, qs = mass_on_the_first_axis()  # M singular in row 2 only
    G = pvosimr.jax.delassus(model, cms)
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.vmap(G))(qs[:2])), G.compiled(qs[:2]))
    with pytest.raises(Exception, match=_said(2, c_source.NON_FINITE)):
        np.asarray(jax.jit(jax.vmap(G))(qs))
    with pytest.raises(Exception, match=_said(0, c_source.NON_FINITE)):
        np.asarray(jax.grad(weighted_loss(G, np.ones((3, 3))))(qs[2]))


def test_float32_and_wrong_shapes_are_refused(humanoid_G):
    model, G, _ = humanoid_G
    q = configurations(model, 1)[0]
    with pytest.raises(TypeError, match=r"float32.*float64.*jax_enable_x64"):
        G(q.astype(np.float32))
    with pytest.raises(ValueError, match=rf"shape \(\.\.\., {model.nq}\)"):
        G(q[:-1])


@pytest.mark.slow  # JAX or PyTorch tracing and compiling: a second or more
def test_forward_mode_is_refused_in_one_line(humanoid_G):
    model, G, _ = humanoid_G
    q = configurations(model, 1)[0]
    with pytest.raises(TypeError, match=r"^can't apply forward-mode autodiff \(jvp\)"):
        jax.jvp(G, (q,), (q,))
    with pytest.raises(TypeError, match=r"forward-mode"):
        jax.jacfwd(G)(q)


@pytest.mark.slow  # a fresh interpreter that compiles
def test_without_64_bit_mode_the_error_names_the_flag_and_import_leaves_it_off():
    code = """
import jax, numpy as np, pinocchio as pin
import pvosimr.jax
from pvosimr.constraints import point, weld
assert not jax.config.jax_enable_x64, "pvosimr.jax turned jax_enable_x64 on"
model = pin.buildSampleModelHumanoid()
cms = [weld(model, "rleg_effector_body"), point(model, "larm_effector_body")]
G = pvosimr.jax.delassus(model, cms)
try:
    G(pin.neutral(model))
except TypeError as exc:
    print(exc)
"""
    done = fresh_python(code, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "pvosimr.jax computes G in float64 only: turn JAX's 64-bit mode on first, "
        "jax.config.update('jax_enable_x64', True) (pvosimr never changes it)"
    )


@pytest.mark.slow  # a fresh interpreter that compiles
def test_without_jax_the_entry_point_says_what_to_install():
    assert import_error_without("jax", "pvosimr.jax") == (
        'ModuleNotFoundError: pvosimr.jax: needs JAX: pip install "pvosimr[jax]"'
    )


@pytest.mark.slow  # a fresh interpreter that compiles
def test_import_pvosimr_imports_neither_jax_nor_torch():
    code = "import sys, pvosimr; print(sorted({'jax', 'jaxlib', 'torch'} & set(sys.modules)))"
    done = fresh_python(code)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr


@pytest.mark.slow
def test_atlas_two_welds(atlas):
    import pvosimr.jax

    model = atlas
    cms = [weld(model, "l_foot"), weld(model, "r_foot")]
    G = pvosimr.jax.delassus(model, cms)
    f = G.compiled
    qs = configurations(model, 16, seed=8)
    assert np.array_equal(np.asarray(jax.jit(G)(qs[0])), f(qs[0]))
    assert np.array_equal(np.asarray(jax.jit(jax.vmap(G))(qs)), f(qs))
    W = np.random.default_rng(8).standard_normal((f.m, f.m))
    grads = np.asarray(jax.jit(jax.vmap(jax.grad(weighted_loss(G, W))))(qs))
    expected = np.stack([tangent_to_coordinates(model, q, f.vjp(q, W)) for q in qs])
    assert np.abs(grads - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max())
    check_grads(weighted_loss(G, W), (qs[0],), order=1, modes=["rev"])


@pytest.mark.slow
def test_placements_as_inputs():
    import pvosimr.jax

    model, cms = humanoid()
    G = pvosimr.jax.delassus(model, cms, placements="input")
    f = G.compiled
    qs = configurations(model, 5, seed=9)
    moved = [pin.SE3(pin.rpy.rpyToMatrix(0.1 * k, 0.2, -0.3), np.array([0.05 * k, 0.0, 0.1]))
             for k in range(1, 3)]  # fmt: skip
    expected = f(qs, placements=moved)
    assert np.array_equal(np.asarray(jax.jit(jax.vmap(lambda q: G(q, moved)))(qs)), expected)
    from pvosimr.symbolic import placement_vector

    p = placement_vector(model, cms, moved)
    own = placement_vector(model, cms, [cm.joint1_placement for cm in cms])
    assert np.array_equal(np.asarray(jax.jit(jax.vmap(G, in_axes=(0, None)))(qs, p)), expected)
    # a different p per row: runs of rows sharing one p, each one call
    ps = np.stack([p, p, own, own, p])
    rows = np.asarray(jax.jit(jax.vmap(G))(qs, ps))
    for k, (q, row_p) in enumerate(zip(qs, ps, strict=True)):
        placements = moved if row_p is p or np.array_equal(row_p, p) else None
        truth = f(q, placements=placements or [cm.joint1_placement for cm in cms])
        assert np.array_equal(rows[k], truth), k
    W = np.random.default_rng(9).standard_normal((f.m, f.m))
    g = np.asarray(jax.grad(lambda q: jnp.sum(W * G(q, p)))(qs[0]))
    np.testing.assert_allclose(
        g, tangent_to_coordinates(model, qs[0], f.vjp(qs[0], W, placements=moved)), atol=1e-12
    )
    # vmap of grad: a p per row, one W for every row (the W the handler reads once)
    grads = np.asarray(jax.jit(jax.vmap(jax.grad(lambda q, p: jnp.sum(W * G(q, p)))))(qs, ps))
    for k, (q, row_p) in enumerate(zip(qs, ps, strict=True)):
        placements = moved if np.array_equal(row_p, p) else [cm.joint1_placement for cm in cms]
        truth = tangent_to_coordinates(model, q, f.vjp(q, W, placements=placements))
        np.testing.assert_allclose(grads[k], truth, rtol=0, atol=1e-12 * np.abs(truth).max())
    with pytest.raises(TypeError, match="no gradient with respect to the placements"):
        jax.grad(lambda p: jnp.sum(G(qs[0], p)))(p)


def test_no_constraint_rows_give_empty_matrices():
    import pvosimr.jax

    model = pin.buildSampleModelHumanoid()
    G = pvosimr.jax.delassus(model, [])
    qs = configurations(model, 3)
    assert jax.vmap(G)(qs).shape == (3, 0, 0) and G(qs[0]).shape == (0, 0)


@pytest.mark.slow
def test_the_handler_is_cached_with_its_record_and_a_damaged_one_rebuilt(tmp_path):
    code = """
from pvosimr.jax import ffi
first = ffi.handler_library()
assert ffi.handler_library() == first  # found in the cache: not built again
first.write_bytes(first.read_bytes()[:100])  # cut short, as by a full disk
again = ffi.handler_library()
assert again == first and again.stat().st_size > 100
print(sorted(p.name.split("-")[0] for p in first.parent.iterdir()))
"""
    env = {**os.environ, "PVOSIMR_CACHE_DIR": str(tmp_path)}
    done = fresh_python(code, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("compiling pvosimr's XLA FFI handler") == 2
    assert "is damaged" in done.stderr
    names = done.stdout.strip()
    assert ".so.damaged" in names and ".so.sha256" in names, names


@pytest.mark.parametrize(
    "tree", slow_ones(["every kind of joint", "planar chain", 1, 3], {"every kind of joint", 1})
)
def test_every_kind_of_unit_coordinates_on_and_off_the_sphere(tree):
    """The handler's normalisation and its map of the gradient to q's coordinates (quaternions,
    unit complex pairs, SE(3), SE(2), composites) against the numpy reference
    (:func:`pvosimr.coordinates.tangent_to_coordinates` of ``f.vjp`` at ``N(q)``), in a batch
    whose rows are on the sphere, off it, and normalised to rounding."""
    from _jax import every_kind_of_joint_held, mixed_tree, on_and_off_the_sphere, planar_chain_held

    import pvosimr.jax
    from pvosimr.coordinates import normalized

    trees = {"every kind of joint": every_kind_of_joint_held, "planar chain": planar_chain_held}
    model, cms = trees[tree]() if tree in trees else mixed_tree(tree)
    assert unit_part_spans(model)
    G = pvosimr.jax.delassus(model, cms)
    f = G.compiled
    rng = np.random.default_rng(11)
    qs = on_and_off_the_sphere(model, configurations(model, 6, seed=11), rng)
    Ws = rng.standard_normal((len(qs), f.m, f.m))

    def loss(q, W):
        return jnp.sum(W * G(q))

    Gs = np.asarray(jax.jit(jax.vmap(G))(qs))
    gs = np.asarray(jax.jit(jax.vmap(jax.grad(loss)))(qs, Ws))
    for q, W, G_q, g in zip(qs, Ws, Gs, gs, strict=True):
        q_hat = normalized(model, q)[0]
        np.testing.assert_allclose(G_q, f(q_hat), rtol=0, atol=1e-13 * np.abs(G_q).max())
        truth = tangent_to_coordinates(model, q, f.vjp(q_hat, W))
        np.testing.assert_allclose(g, truth, rtol=0, atol=1e-12 * np.abs(truth).max())


@pytest.fixture(scope="module")
def placed_tree():
    """A small tree whose unit parts G reads (a unit complex), placements as inputs."""
    from _jax import tree_with_unit_parts

    import pvosimr.jax

    model, cms = tree_with_unit_parts()
    with jax.enable_x64(True):
        G = pvosimr.jax.delassus(model, cms, placements="input")
    P = [pin.SE3(pin.rpy.rpyToMatrix(0.1, 0.2, -0.3), np.array([0.05, 0.0, 0.1]))] * len(cms)
    return model, G, P, G.compiled.placement_vector(P)


def test_a_placement_array_is_checked_as_a_pin_se3_is(placed_tree):
    """A rotation block scaled by 2 gave a G off by 3 (relative), no error: now refused by
    name where p is known, and by the library under jit."""
    model, G, P, p = placed_tree
    q = configurations(model, 1, seed=30)[0]
    assert np.array_equal(np.asarray(G(q, p)), G.compiled(q, placements=P))
    scaled = p.copy()
    scaled[:9] *= 2.0
    with pytest.raises(ValueError, match=r"^constraint 0 .*joint1_placement has a rotation that "
                                         r"is not orthonormal"):  # fmt: skip
        G(q, scaled)
    words = re.escape(FAILURE_WORDS[c_source.BAD_P])
    with pytest.raises(Exception, match=rf"pvosimr: at row 0 of the batch: {words}"):
        jax.block_until_ready(jax.jit(G)(q, scaled))
    with pytest.raises(Exception, match=rf"pvosimr: at row 1 of the batch: {words}"):
        jax.block_until_ready(jax.jit(G)(np.stack([q, q]), np.stack([p, scaled])))


def test_placement_rows_broadcast_as_numpy_broadcasts_them(placed_tree):
    """The FFI route paired p's rows with q's flattened rows: (2, 2, nq) with (4, n_p) was
    accepted, (2, nq) with (2, 1, n_p) gave (2, m, m)."""
    model, G, _, p = placed_tree
    f = G.compiled
    qs = configurations(model, 4, seed=31)
    other = f.placement_vector([pin.SE3(pin.rpy.rpyToMatrix(0.3, -0.1, 0.2), np.ones(3))] * 2)
    ps = np.stack([p, other])
    for q_shape, p_rows in (((2, 2), ps), ((2,), ps[:, None]), ((2, 2), ps[:, None])):
        q = qs[: int(np.prod(q_shape))].reshape(*q_shape, -1)
        out = np.asarray(jax.jit(G)(q, p_rows))
        shape = np.broadcast_shapes(q.shape[:-1], p_rows.shape[:-1])
        assert out.shape == (*shape, f.m, f.m)
        np.testing.assert_array_equal(out, f(q, p=p_rows))
    with pytest.raises(ValueError, match="do not broadcast"):
        G(qs.reshape(2, 2, -1), np.stack([p] * 4))
    # the gradient in q sums over the rows p broadcast q to
    W = np.random.default_rng(31).standard_normal((f.m, f.m))
    g = np.asarray(jax.grad(lambda q: jnp.sum(W * G(q, ps)))(qs[0]))
    truth = sum(tangent_to_coordinates(model, qs[0], f.vjp(qs[0], W, p=row)) for row in ps)
    np.testing.assert_allclose(g, truth, rtol=0, atol=1e-12 * np.abs(truth).max())


def _exported_entry(f, q: np.ndarray) -> np.ndarray:
    """G by the generated C's own entry point ``pvosimr_eval`` (the C the standalone export
    reuses, :mod:`pvosimr.codegen.c_source`), called through ctypes with its work arrays."""
    import ctypes

    entry = ctypes.CFUNCTYPE(ctypes.c_int, *[ctypes.c_void_p] * 5, ctypes.c_int)(
        f.entry_point("G", "pvosimr_eval")
    )
    sz_w, sz_iw = f.work_size("G")
    q = np.ascontiguousarray(q, dtype=np.float64)
    out, w, iw = np.zeros(f.m * f.m), np.zeros(max(1, sz_w)), np.zeros(max(1, sz_iw), np.int64)
    assert entry(q.ctypes.data, None, out.ctypes.data, w.ctypes.data, iw.ctypes.data, 1) == 0
    return out.reshape(f.m, f.m)


def test_every_route_applies_one_unit_part_rule():
    """One q whose unit parts have norm 1 + 5e-7 (pin.isNormalized accepts it): numpy, f(q),
    the export's C, the FFI, the torch op and the XLA route all give G(N(q)).  Before, the
    first three used it as given and the others normalised it: G's differed by ~2e-7 here."""
    torch = pytest.importorskip("torch")
    from _jax import tree_with_unit_parts
    from _trees import random_q

    import pvosimr
    import pvosimr.jax
    import pvosimr.torch
    from pvosimr.coordinates import normalized

    model, cms = tree_with_unit_parts()
    q = random_q(model, np.random.default_rng(40))
    for start, length in unit_part_spans(model):
        q[start : start + length] *= 1.0 + 5e-7
    assert pin.isNormalized(model, q, 1e-6)
    G_ffi = pvosimr.jax.delassus(model, cms)
    f = G_ffi.compiled
    routes = {
        "numpy": pvosimr.compute_delassus(model, model.createData(), q, cms),
        "f(q)": f(q),
        "export's C": _exported_entry(f, q),
        "FFI": np.asarray(jax.jit(G_ffi)(q)),
        "torch": pvosimr.torch.delassus(model, cms)(torch.from_numpy(q)).numpy(),
        "XLA": np.asarray(jax.jit(pvosimr.jax.delassus(model, cms, route="xla"))(q)),
    }
    worst = max(
        np.abs(a - b).max() / np.abs(b).max() for a in routes.values() for b in routes.values()
    )
    assert worst <= 1e-13, worst
    # the rule itself: G(N(q)), bit for bit on the library's routes
    q_hat = normalized(model, q)[0]
    for name in ("f(q)", "export's C", "FFI", "torch"):
        assert np.array_equal(routes[name], f(q_hat)), name
