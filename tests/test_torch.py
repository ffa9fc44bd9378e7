"""pvosimr.torch: the custom op against the library itself (bitwise), autograd against f.vjp in
q's coordinates and gradcheck, opcheck of both ops, the refusals (another device, float32,
non-finite q).

The default suite compiles one small library (the sample humanoid, a 6D weld and a 3D point,
placements fixed; the one tests/test_jax.py uses); torch.compile, Atlas and placements as inputs
are in ``-m slow``.
"""

import re

import numpy as np
import pinocchio as pin
import pytest

# PyTorch is imported where a test of this file runs (the fixture below), not when the file is
# collected: every xdist worker collects every file, and the import takes seconds.
torch = None


@pytest.fixture(autouse=True, scope="module")
def _torch():
    global torch
    torch = pytest.importorskip("torch", reason='needs PyTorch: pip install "pvosimr[torch]"')


from _jax import first_part_scaled, import_error_without  # noqa: E402
from _trees import mass_on_the_first_axis  # noqa: E402

from pvosimr.constraints import point, weld  # noqa: E402
from pvosimr.coordinates import tangent_to_coordinates, unit_part_spans  # noqa: E402


def humanoid():
    model = pin.buildSampleModelHumanoid()
    return model, [weld(model, "rleg_effector_body"), point(model, "larm_effector_body")]


def configurations(model, count, seed=0):
    rng = np.random.default_rng(seed)
    return np.stack(
        [
            pin.integrate(model, pin.neutral(model), rng.uniform(-1, 1, model.nv))
            for _ in range(count)
        ]
    )


@pytest.fixture(scope="module")
def humanoid_G():
    import pvosimr.torch

    model, cms = humanoid()
    G = pvosimr.torch.delassus(model, cms)
    return model, G, G.compiled


def test_forward_is_bitwise_the_library_at_any_batch_shape(humanoid_G):
    model, G, f = humanoid_G
    qs = configurations(model, 6)
    assert torch.equal(G(torch.from_numpy(qs[0])), torch.from_numpy(f(qs[0])))
    assert torch.equal(G(torch.from_numpy(qs)), torch.from_numpy(f(qs)))
    nested = G(torch.from_numpy(qs.reshape(2, 3, -1)))
    assert nested.shape == (2, 3, f.m, f.m) and nested.dtype == torch.float64
    loop = np.stack([f(q) for q in qs]).reshape(2, 3, f.m, f.m)
    np.testing.assert_allclose(nested.numpy(), loop, rtol=0, atol=1e-13)


def test_the_same_function_asked_again_reuses_its_op_entry(humanoid_G):
    """The ops' table grows with the distinct libraries, not with the calls of ``delassus``."""
    import pvosimr.torch
    from pvosimr.torch import op

    model, G, _ = humanoid_G
    again = pvosimr.torch.delassus(model, humanoid()[1])
    assert again.handle == G.handle
    size = len(op._functions)
    threads = op._functions[G.handle].threads + 1  # another entry: the same library, run apart
    other = pvosimr.torch.delassus(model, humanoid()[1], threads=threads)
    assert other.handle == size and len(op._functions) == size + 1
    q = torch.from_numpy(configurations(model, 2, seed=3))
    assert torch.equal(again(q), G(q)) and torch.equal(other(q), G(q))


def test_an_eager_call_without_gradient_is_the_op_s_own_result(humanoid_G):
    """One q, no gradient recorded: G skips the dispatcher; the op gives the same bits, and a
    q that needs a gradient (or is off the sphere) goes through the op."""
    model, G, _ = humanoid_G
    q = torch.from_numpy(configurations(model, 1, seed=15)[0])
    direct = G(q)
    assert torch.equal(direct, torch.ops.pvosimr.delassus(q, None, G.handle))
    assert direct.is_contiguous() and direct.grad_fn is None
    with_grad = G(q.clone().requires_grad_())
    assert with_grad.grad_fn is not None and torch.equal(with_grad.detach(), direct)
    with torch.no_grad():
        assert torch.equal(G(q.clone().requires_grad_()), direct)
    (start, length), *_ = unit_part_spans(model)
    off = q.clone()
    off[start : start + length] *= 2.0
    np.testing.assert_allclose(G(off).numpy(), direct.numpy(), rtol=0, atol=1e-13)


def test_autograd_is_the_generated_vjp_in_q_coordinates(humanoid_G):
    model, G, f = humanoid_G
    qs = configurations(model, 4, seed=1)
    W = np.random.default_rng(1).standard_normal((f.m, f.m))
    x = torch.from_numpy(qs).requires_grad_()
    (torch.from_numpy(W) * G(x)).sum().backward()
    expected = np.stack([tangent_to_coordinates(model, q, f.vjp(q, W)) for q in qs])
    assert np.abs(x.grad.numpy() - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max())


def test_backward_of_an_expanded_W_and_of_one_per_row(humanoid_G):
    """backward(W.expand(B, ...)) reads the one W for every row; a W per row, and the same W
    copied to every row, give the same gradients, through the op and the eager path."""
    model, G, f = humanoid_G
    qs = configurations(model, 4, seed=6).reshape(2, 2, -1)
    Ws = np.random.default_rng(6).standard_normal((2, 2, f.m, f.m))
    flat = qs.reshape(4, -1)
    expected = np.stack([tangent_to_coordinates(model, q, f.vjp(q, Ws[0, 0])) for q in flat])
    per_row = np.stack(
        [
            tangent_to_coordinates(model, q, f.vjp(q, W))
            for q, W in zip(flat, Ws.reshape(4, f.m, f.m), strict=True)
        ]
    )
    W0 = torch.from_numpy(Ws[0, 0])
    for W, truth in ((W0.expand(2, 2, f.m, f.m), expected),
                     (W0.expand(2, 2, f.m, f.m).contiguous(), expected),
                     (torch.from_numpy(Ws), per_row)):  # fmt: skip
        for through_op in (False, True):
            x = torch.from_numpy(qs).requires_grad_()
            out = torch.ops.pvosimr.delassus(x, None, G.handle) if through_op else G(x)
            out.backward(W)
            got = x.grad.numpy().reshape(4, -1)
            scale = max(1.0, np.abs(truth).max())
            assert np.abs(got - truth).max() <= 1e-12 * scale, (W.stride(), through_op)
    x = torch.from_numpy(qs[:0]).requires_grad_()  # an empty batch, W expanded to it
    G(x).backward(W0.expand(0, 2, f.m, f.m))
    assert x.grad.shape == (0, 2, model.nq)


def test_gradcheck_in_float64(humanoid_G):
    model, G, _ = humanoid_G
    q = torch.from_numpy(configurations(model, 1, seed=2)[0]).requires_grad_()
    assert torch.autograd.gradcheck(G, (q,))
    qs = torch.from_numpy(configurations(model, 2, seed=3)).requires_grad_()
    assert torch.autograd.gradcheck(lambda x: G(x)[..., 0, :4], (qs,))


@pytest.mark.slow  # JAX or PyTorch tracing and compiling: a second or more
def test_opcheck_both_ops(humanoid_G):
    model, G, f = humanoid_G
    handle = G.handle
    qs = torch.from_numpy(configurations(model, 3, seed=4))
    W = torch.from_numpy(np.random.default_rng(4).standard_normal((3, f.m, f.m)))
    torch.library.opcheck(torch.ops.pvosimr.delassus.default, (qs, None, handle))
    torch.library.opcheck(torch.ops.pvosimr.delassus.default, (qs[0], None, handle))
    torch.library.opcheck(torch.ops.pvosimr.delassus_vjp.default, (qs, None, W, handle))


def test_off_the_sphere_has_no_radial_gradient(humanoid_G):
    model, G, f = humanoid_G
    q = configurations(model, 1, seed=5)[0]
    scaled, part = first_part_scaled(model, q, 0.6)
    np.testing.assert_allclose(G(torch.from_numpy(scaled)).numpy(), f(q), rtol=0, atol=1e-13)
    x = torch.from_numpy(scaled).requires_grad_()
    G(x)[0, 0].backward()
    g = x.grad.numpy()
    assert abs(g[part] @ scaled[part]) <= 1e-12 * np.abs(g).max()


@pytest.mark.parametrize("bad", ["nan", "inf", "zero quaternion"])
def test_non_finite_q_raises(humanoid_G, bad):
    model, G, _ = humanoid_G
    qs = configurations(model, 3, seed=6)
    start, length = unit_part_spans(model)[0]
    if bad == "zero quaternion":
        qs[1, start : start + length] = 0.0
        problem = rf"q has a unit part of norm 0 at index {start} \(joint 1 "
    else:
        qs[1, -1] = float(bad)
        problem = rf"q is not finite at index {model.nq - 1} \(joint"
    with pytest.raises(ValueError, match=rf"^row 1 of qs: {problem}"):
        G(torch.from_numpy(qs))
    with pytest.raises(ValueError, match=rf"^{problem}"):
        G(torch.from_numpy(qs[1]))


def test_other_devices_float32_and_shapes_are_refused(humanoid_G):
    model, G, _ = humanoid_G
    q = torch.from_numpy(configurations(model, 1)[0])
    # a tensor on another device (meta stands in for CUDA on a machine without a GPU)
    with pytest.raises(ValueError, match=r"^pvosimr.torch runs on the CPU, or on a CUDA device "):
        G(q.to("meta"))
    with pytest.raises(TypeError, match=r"float64 only: q is torch.float32"):
        G(q.float())
    with pytest.raises(ValueError, match=rf"shape \(\.\.\., {model.nq}\)"):
        G(q[:-1])


@pytest.mark.slow  # a fresh interpreter that compiles
def test_without_torch_the_entry_point_says_what_to_install():
    assert import_error_without("torch", "pvosimr.torch") == (
        'ModuleNotFoundError: pvosimr.torch: needs PyTorch: pip install "pvosimr[torch]"'
    )


@pytest.mark.slow
def test_torch_compile_fullgraph_forward_and_backward(humanoid_G):
    model, G, f = humanoid_G
    qs = configurations(model, 4, seed=7)
    W = torch.from_numpy(np.random.default_rng(7).standard_normal((f.m, f.m)))

    def loss(x):
        return (W * G(x)).sum()

    compiled = torch.compile(loss, fullgraph=True)
    x = torch.from_numpy(qs).requires_grad_()
    value = compiled(x)
    value.backward()
    assert abs(float(value) - float(loss(torch.from_numpy(qs)))) <= 1e-13 * abs(float(value))
    assert torch.equal(
        torch.compile(G, fullgraph=True)(torch.from_numpy(qs)), torch.from_numpy(f(qs))
    )
    expected = np.stack([tangent_to_coordinates(model, q, f.vjp(q, W.numpy())) for q in qs])
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=0, atol=1e-12)
    explained = torch._dynamo.explain(loss)(torch.from_numpy(qs))
    assert explained.graph_break_count == 0


@pytest.mark.slow
def test_atlas_and_placements_as_inputs(atlas):
    import pvosimr.torch

    cms = [weld(atlas, "l_foot"), weld(atlas, "r_foot")]
    G = pvosimr.torch.delassus(atlas, cms)
    f = G.compiled
    qs = configurations(atlas, 8, seed=8)
    assert torch.equal(G(torch.from_numpy(qs)), torch.from_numpy(f(qs)))
    assert torch.autograd.gradcheck(
        lambda x: G(x)[..., :2, :], (torch.from_numpy(qs[:1]).requires_grad_(),)
    )

    model, cms = humanoid()
    G = pvosimr.torch.delassus(model, cms, placements="input")
    f = G.compiled
    qs = configurations(model, 3, seed=9)
    moved = [pin.SE3(pin.rpy.rpyToMatrix(0.1, 0.2, -0.3), np.array([0.05, 0.0, 0.1]))] * 2
    expected = torch.from_numpy(f(qs, placements=moved))
    assert torch.equal(G(torch.from_numpy(qs), moved), expected)
    from pvosimr.symbolic import placement_vector

    p = torch.from_numpy(placement_vector(model, cms, moved))
    assert torch.equal(G(torch.from_numpy(qs), p), expected)
    x = torch.from_numpy(qs[0]).requires_grad_()
    W = np.random.default_rng(9).standard_normal((f.m, f.m))
    (torch.from_numpy(W) * G(x, p)).sum().backward()
    truth = tangent_to_coordinates(model, qs[0], f.vjp(qs[0], W, placements=moved))
    np.testing.assert_allclose(x.grad.numpy(), truth, rtol=0, atol=1e-12)
    xs = torch.from_numpy(qs).requires_grad_()
    G(xs, p).backward(torch.from_numpy(W).expand(3, f.m, f.m))  # one W for every row
    truth = [tangent_to_coordinates(model, q, f.vjp(q, W, placements=moved)) for q in qs]
    np.testing.assert_allclose(xs.grad.numpy(), np.stack(truth), rtol=0, atol=1e-12)
    Ws = np.random.default_rng(10).standard_normal((3, f.m, f.m))  # one W per row
    xs.grad = None
    G(xs, p).backward(torch.from_numpy(Ws))
    truth = [
        tangent_to_coordinates(model, q, f.vjp(q, Wq, placements=moved))
        for q, Wq in zip(qs, Ws, strict=True)
    ]
    np.testing.assert_allclose(xs.grad.numpy(), np.stack(truth), rtol=0, atol=1e-12)
    with pytest.raises(TypeError, match="no gradient with respect to the placements"):
        G(x, p.clone().requires_grad_())
    qs[1, -1] = np.nan  # placements as a tensor: the library's batch called by the op itself
    with pytest.raises(ValueError, match=rf"^row 1 of qs: q is not finite at index {model.nq - 1}"):
        G(torch.from_numpy(qs), p)


@pytest.mark.slow
def test_a_singular_row_is_named_in_the_front_ends_words():
    import pvosimr.torch
    from pvosimr.symbolic import placement_vector

    model, cms, qs = mass_on_the_first_axis()  # M singular in row 2 only
    G = pvosimr.torch.delassus(model, cms, placements="input")
    placements = [cm.joint1_placement for cm in cms]
    p = torch.from_numpy(placement_vector(model, cms, placements))
    expected = G.compiled(qs[:2], placements=placements)
    assert torch.equal(G(torch.from_numpy(qs[:2]), p), torch.from_numpy(expected))
    with pytest.raises(ValueError) as library:  # the library's own words, the row named
        G.compiled(qs, placements=placements)
    assert "the mass matrix is singular at row 2 of qs" in str(library.value)
    with pytest.raises(ValueError, match=f"^{re.escape(str(library.value))}$"):
        G(torch.from_numpy(qs), p)


def test_no_constraint_rows_give_empty_matrices():
    import pvosimr.torch

    model = pin.buildSampleModelHumanoid()
    G = pvosimr.torch.delassus(model, [])
    q = torch.from_numpy(configurations(model, 3))
    assert G(q).shape == (3, 0, 0) and G(q[0]).shape == (0, 0)


@pytest.fixture(scope="module")
def humanoid_xla():
    pytest.importorskip("jax", reason='the XLA route needs JAX: pip install "pvosimr[jax]"')
    import pvosimr.torch

    model, cms = humanoid()
    return pvosimr.torch.delassus(model, cms, route="xla")


@pytest.mark.slow  # JAX or PyTorch tracing and compiling: a second or more
def test_the_xla_route_is_the_library_s_G_and_gradient(humanoid_G, humanoid_xla, x64):
    """route="xla" on CPU tensors (what it does on a CUDA device, through DLPack): G and the
    autograd gradient against the library's route, off the unit sphere too."""
    model, G, f = humanoid_G
    qs = torch.from_numpy(configurations(model, 4, seed=12))
    (start, length), *_ = unit_part_spans(model)
    qs[1, start : start + length] *= 1.6
    W = torch.from_numpy(np.random.default_rng(12).standard_normal((4, f.m, f.m)))
    x = qs.clone().requires_grad_()
    (W * humanoid_xla(x)).sum().backward()
    y = qs.clone().requires_grad_()
    (W * G(y)).sum().backward()
    np.testing.assert_allclose(humanoid_xla(qs).numpy(), G(qs).numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=0, atol=1e-11)
    q = qs[0].clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda x: humanoid_xla(x)[:3, :3], (q,))
    G32 = humanoid_xla(qs.float())  # float32 where the library takes float64 only
    assert G32.dtype == torch.float32
    scale = np.abs(G(qs).numpy()).max()
    assert np.abs(G32.double().numpy() - G(qs).numpy()).max() <= 1e-4 * scale
    with pytest.raises(ValueError, match=r"runs on the CPU, or on a CUDA device"):
        humanoid_xla(qs.to("meta"))


def test_the_xla_route_needs_jax_64_bit_mode_for_float64(humanoid_xla):
    import jax

    model, _ = humanoid()
    q = torch.from_numpy(configurations(model, 1, seed=14)[0])
    with jax.enable_x64(False), pytest.raises(TypeError, match=r"jax_enable_x64', True\)"):
        humanoid_xla(q)


def test_a_cuda_tensor_takes_the_cuda_kernels(humanoid_G):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the default route's CUDA branch runs where a GPU is lent")
    model, G, f = humanoid_G
    q = configurations(model, 2, seed=13)
    np.testing.assert_allclose(G(torch.from_numpy(q).cuda()).cpu().numpy(), f(q), atol=1e-12)
    assert G(torch.from_numpy(q).cuda().float()).dtype == torch.float32  # the float32 kernels


@pytest.mark.slow  # builds C libraries of its own
def test_every_kind_of_unit_coordinates_on_and_off_the_sphere():
    """The library's map of the gradient to q's coordinates, which the ops call (quaternions,
    unit complex pairs, SE(3), SE(2), composites), against the numpy reference in a batch whose
    rows are on the sphere, off it and normalised to rounding, and row by row (the library
    tests/test_jax.py builds for the same tree)."""
    from _jax import every_kind_of_joint_held, on_and_off_the_sphere

    import pvosimr.torch
    from pvosimr.coordinates import normalized

    model, cms = every_kind_of_joint_held()
    G = pvosimr.torch.delassus(model, cms)
    f = G.compiled
    rng = np.random.default_rng(11)
    qs = on_and_off_the_sphere(model, configurations(model, 6, seed=11), rng)
    Ws = rng.standard_normal((len(qs), f.m, f.m))
    x = torch.from_numpy(qs).requires_grad_()
    (torch.from_numpy(Ws) * G(x)).sum().backward()
    for k, (q, W) in enumerate(zip(qs, Ws, strict=True)):
        truth = tangent_to_coordinates(model, q, f.vjp(normalized(model, q)[0], W))
        one = torch.from_numpy(q).requires_grad_()
        (torch.from_numpy(W) * G(one)).sum().backward()
        for g in (x.grad.numpy()[k], one.grad.numpy()):
            np.testing.assert_allclose(g, truth, rtol=0, atol=1e-12 * np.abs(truth).max())


@pytest.fixture(scope="module")
def placed_tree():
    """A small tree whose unit parts G reads (a unit complex) and placements as inputs."""
    from _jax import tree_with_unit_parts

    import pvosimr.torch

    model, cms = tree_with_unit_parts()
    G = pvosimr.torch.delassus(model, cms, placements="input")
    P = [pin.SE3(pin.rpy.rpyToMatrix(0.1, 0.2, -0.3), np.array([0.05, 0.0, 0.1]))] * len(cms)
    return model, G, P, G.compiled.placement_vector(P)


def test_a_placement_tensor_is_checked_as_a_pin_se3_is(placed_tree):
    """A rotation block scaled by 2 gave a G off by 3 (relative), no error; a NaN in p was
    reported as a singular mass matrix."""
    model, G, P, p = placed_tree
    q = torch.from_numpy(configurations(model, 2, seed=20))
    assert torch.equal(G(q, torch.from_numpy(p)), G(q, P))
    scaled = p.copy()
    scaled[:9] *= 2.0
    with pytest.raises(ValueError, match=r"^constraint 0 .*joint1_placement has a rotation that "
                                         r"is not orthonormal"):  # fmt: skip
        G(q, torch.from_numpy(scaled))
    rows = np.stack([p, p])
    rows[1, 12 + 4] = np.nan
    with pytest.raises(ValueError, match=r"^row 1 of p: constraint 1 .*joint1_placement is not "
                                         r"finite"):  # fmt: skip
        G(q, torch.from_numpy(rows))


def test_placement_rows_broadcast_as_numpy_and_the_gradient_sums_over_them(placed_tree):
    model, G, P, _ = placed_tree
    f = G.compiled
    qs = configurations(model, 2, seed=21)
    Ps = [P, [pin.SE3(pin.rpy.rpyToMatrix(0.3, -0.1, 0.2), np.array([0.0, 0.1, 0.0]))] * 2]
    ps = np.stack([f.placement_vector(Pk) for Pk in Ps])
    out = G(torch.from_numpy(qs), torch.from_numpy(ps[:, None]))  # (2, nq) with (2, 1, n_p)
    expected = np.stack([[f(q, placements=Pk) for q in qs] for Pk in Ps])
    assert out.shape == (2, 2, f.m, f.m)
    np.testing.assert_array_equal(out.numpy(), expected)
    x = torch.from_numpy(qs).requires_grad_()
    G(x, torch.from_numpy(ps[:, None])).sum().backward()
    W = np.ones((f.m, f.m))
    truth = np.stack([sum(tangent_to_coordinates(model, q, f.vjp(q, W, placements=Pk))
                          for Pk in Ps) for q in qs])  # fmt: skip
    np.testing.assert_allclose(x.grad.numpy(), truth, rtol=0, atol=1e-12)


def test_messages_name_the_q_given_and_the_raw_op_s_handles(placed_tree):
    """A NaN at index 8 (in a unit complex, normalised first) was named at index 7; a zero
    quaternion of a single q was "row 0 of qs: not finite"; an unknown handle an IndexError."""
    model, G, P, _ = placed_tree
    qs = configurations(model, 2, seed=22)
    qs[:, 7:9] *= 3.0  # the unit complex off the sphere: normalised before the library
    qs[1, 8] = np.nan
    with pytest.raises(ValueError, match=r"^row 1 of qs: q is not finite at index 8 \(joint 2"):
        G(torch.from_numpy(qs), P)
    q = qs[0].copy()
    q[3:7] = 0.0
    with pytest.raises(ValueError, match=r"^q has a unit part of norm 0 at index 3 \(joint 1"):
        G(torch.from_numpy(q), P)
    with pytest.raises(KeyError, match=r"no function has handle 9999: the handles are 0 to "):
        torch.ops.pvosimr.delassus(torch.from_numpy(qs[0]), None, 9999)
