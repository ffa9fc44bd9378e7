"""pvosimr.torch on CUDA tensors (:mod:`pvosimr.torch.cuda`): the layouts, transposes, status
handling, dtypes and autograd of the CUDA route, run on CPU tensors with the kernels' host build
standing in for the launch (:class:`HostKernels`); on a GPU, the kernels themselves against the
CPU library on Atlas 2×6D.

The default suite compiles the kernels of a small free-flyer tree for the host (float64 and
float32): the humanoid's kinds of coordinates and constraints in seconds; the tree with every
kind of joint is in ``-m slow``.
"""

import ctypes

import numpy as np
import pinocchio as pin
import pytest

torch = pytest.importorskip("torch", reason='needs PyTorch: pip install "pvosimr[torch]"')
pytest.importorskip("casadi", reason='needs CasADi: pip install "pvosimr[symbolic]"')
pytest.importorskip("cuda.bindings", reason='needs the cuda extra: pip install "pvosimr[cuda]"')

from _trees import CONTACT_TYPES, TreeSpec, build_tree  # noqa: E402
from test_torch import configurations  # noqa: E402

import pvosimr.torch.cuda as route  # noqa: E402
from pvosimr.codegen.contract import library_with_gradient  # noqa: E402
from pvosimr.codegen.cuda import compile_cuda  # noqa: E402


class HostKernels:
    """A :class:`~pvosimr.codegen.cuda.CudaDelassus` whose ``launch`` and ``launch_vjp`` call
    the kernels' host build on CPU pointers (the same arguments, the same layouts)."""

    def __init__(self, kernel) -> None:
        self.kernel, self.launches = kernel, 0

    def __getattr__(self, name: str):
        return getattr(self.kernel, name)

    def _call(self, name: str, pointers: list[int], B: int, stream: int) -> None:
        assert stream == 0, "a CPU tensor has no stream"
        function = getattr(self.kernel.host_library(), name)
        function.restype = None
        function.argtypes = [ctypes.c_void_p] * len(pointers) + [ctypes.c_longlong]
        function(*pointers, B)
        self.launches += 1

    def launch(self, qs, out, status, B, stream=0, *, p=0):
        self._call("pvosimr_G", [qs, p, out, status], B, stream)

    def launch_vjp(self, qs, W, out, status, B, stream=0, *, p=0):
        self._call("pvosimr_vjp", [qs, p, W, out, status], B, stream)


@pytest.fixture
def on_the_host(monkeypatch):
    """:data:`pvosimr.torch.cuda.compile_kernels` building :class:`HostKernels`."""
    made = []

    def compile_kernels(*args, **kwargs):
        made.append(HostKernels(compile_cuda(*args, **kwargs)))
        return made[-1]

    monkeypatch.setattr(route, "compile_kernels", compile_kernels)
    return made


def _route(model, cms, given=False):
    f = library_with_gradient(model, cms, "pv-osimr", given)
    return route.cuda_delassus(model, cms, "pv-osimr", given, lambda: f), f


def small_tree():
    """A free flyer (a unit quaternion in q) with two branches of two revolutes, a weld on one
    and a point on the other: the sample humanoid's kinds, its kernels built in seconds."""
    point, weld = CONTACT_TYPES
    return build_tree(TreeSpec([0, 1, 2, 1, 4], ["FreeFlyer", "RX", "RY", "RZ", "RX"],
                               [(3, weld), (5, point)], False, 3))  # fmt: skip


@pytest.fixture(scope="module")
def tree_f():
    model, cms = small_tree()
    return model, cms, library_with_gradient(model, cms, "pv-osimr", False)


def _gradient_check(G, f, qs: np.ndarray, dtype, atol: float) -> None:
    """G and the gradient of ⟨W, G⟩ in q's coordinates against the CPU route's."""
    from pvosimr.codegen.contract import evaluate

    W = np.random.default_rng(1).standard_normal((len(qs), f.m, f.m))
    q = torch.tensor(qs, dtype=dtype, requires_grad=True)
    out = G(q, None)
    assert out.dtype == dtype and out.shape == (len(qs), f.m, f.m)
    truth = evaluate(f, qs)
    np.testing.assert_allclose(out.detach().double().numpy(), truth, rtol=0,
                               atol=atol * np.abs(truth).max())  # fmt: skip
    (out * torch.tensor(W, dtype=dtype)).sum().backward()
    g = evaluate(f, qs, None, W)
    np.testing.assert_allclose(q.grad.double().numpy(), g, rtol=0,
                               atol=atol * np.abs(g).max())  # fmt: skip


@pytest.mark.parametrize("dtype, atol", [("float64", 1e-12), ("float32", 1e-4)])
def test_the_cuda_route_is_the_cpu_route(on_the_host, tree_f, dtype, atol):
    """Every row on the sphere, off it and at a batch of two axes; the gradient in q's
    coordinates."""
    from _jax import on_and_off_the_sphere

    model, cms, f = tree_f
    G = route.cuda_delassus(model, cms, "pv-osimr", False, lambda: f)
    dtype = getattr(torch, dtype)
    qs = configurations(model, 6, seed=3)
    _gradient_check(G, f, qs, dtype, atol)
    assert on_the_host[-1].launches == 2  # G, then the gradient: no launch again
    off = on_and_off_the_sphere(model, qs, np.random.default_rng(2))
    _gradient_check(G, f, off, dtype, atol)
    two_axes = torch.tensor(qs.reshape(2, 3, -1), dtype=dtype)
    assert G(two_axes, None).shape == (2, 3, f.m, f.m)


def test_q_at_any_norm_is_one_launch_of_each_kernel(on_the_host):
    """A free flyer and a continuous joint, their unit parts at norms from 0.05 to 20, go to the
    kernels as given, once each (no launch again after normalising here): G(N(q)) and the
    gradient in q's coordinates are the CPU route's."""
    from _jax import far_off_the_sphere, tree_with_unit_parts

    model, cms = tree_with_unit_parts()
    G, f = _route(model, cms)
    qs = far_off_the_sphere(model, configurations(model, 6, seed=12))
    _gradient_check(G, f, qs, torch.float64, 1e-12)
    assert on_the_host[-1].launches == 2


def test_gradcheck_in_float64(on_the_host, tree_f):
    model, cms, f = tree_f
    G = route.cuda_delassus(model, cms, "pv-osimr", False, lambda: f)
    q = torch.tensor(configurations(model, 2, seed=5), requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: G(x, None)[..., :4, :4], (q,))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_rejected_row_is_the_cpu_routes_error(on_the_host, tree_f, dtype):
    """The kernel's status read back: the CPU route's one-line error naming the row and entry
    (the library runs the batch on the host for it); never a matrix."""
    model, cms, f = tree_f
    G = route.cuda_delassus(model, cms, "pv-osimr", False, lambda: f)
    qs = configurations(model, 4, seed=6)
    qs[2, model.nq - 1] = np.nan
    with pytest.raises(ValueError, match=rf"^row 2 of qs: q is not finite at index {model.nq - 1}"):
        G(torch.tensor(qs, dtype=getattr(torch, dtype)), None)
    zero = configurations(model, 3, seed=7)
    zero[1, 3:7] = 0.0  # the free flyer's quaternion
    with pytest.raises(ValueError, match=r"^row 1 of qs: q has a unit part of norm 0 at index 3"):
        G(torch.tensor(zero, dtype=getattr(torch, dtype)), None)


def test_a_failure_the_library_does_not_share_is_named_by_its_words(on_the_host, tree_f):
    """Where the CPU library accepts the batch (a float32 G lost precision), the kernel's
    code in :data:`~pvosimr.codegen.contract.FAILURE_WORDS`, with the row."""
    from pvosimr.codegen.c_source import NON_FINITE

    model, cms, f = tree_f
    G = route.cuda_delassus(model, cms, "pv-osimr", False, lambda: f)
    q = torch.tensor(configurations(model, 3, seed=8), dtype=torch.float32)
    G(q, None)
    kernel = on_the_host[-1]
    real = kernel.launch

    def non_finite_row_1(qs, out, status, B, stream=0, *, p=0):
        real(qs, out, status, B, stream, p=p)
        ctypes.c_int.from_address(status + 4).value = NON_FINITE  # row 1's status

    kernel.launch = non_finite_row_1
    with pytest.raises(ValueError, match=r"at row 1 of qs: G or its gradient is not finite"):
        G(q, None)


def test_placements_as_inputs_one_vector_for_every_row(on_the_host):
    model, cms = small_tree()
    G, f = _route(model, cms, given=True)
    placements = [pin.SE3.Identity(), pin.SE3(pin.utils.rpyToMatrix(0.1, 0.2, 0.3), np.ones(3))]
    p = f.placement_vector(placements)
    qs = configurations(model, 3, seed=9)
    for given in (placements, torch.from_numpy(p), torch.from_numpy(p[None, None])):
        out = G(torch.from_numpy(qs), given)
        np.testing.assert_allclose(out.reshape(-1, f.m, f.m).numpy(), f(qs, p=p), atol=1e-12)
    assert G(torch.from_numpy(qs), torch.from_numpy(p[None, None])).shape == (1, 3, f.m, f.m)
    with pytest.raises(ValueError, match="one placement vector for every configuration"):
        G(torch.from_numpy(qs), torch.from_numpy(np.stack([p, p])))
    bad = p.copy()
    bad[0] = 2.0  # a rotation that is not one
    with pytest.raises(ValueError, match=r"constraint 0 .*joint1_placement"):
        G(torch.from_numpy(qs), torch.from_numpy(bad))


def test_without_the_cuda_extra_one_line(monkeypatch, tree_f):
    import pvosimr.extras

    model, cms, f = tree_f
    real = pvosimr.extras.missing_extra

    def missing(*modules):
        return "cuda.bindings" if "cuda.bindings" in modules else real(*modules)

    monkeypatch.setattr(pvosimr.extras, "missing_extra", missing)
    with pytest.raises(ModuleNotFoundError, match=r'pip install "pvosimr\[cuda\]"'):
        route.cuda_delassus(model, cms, "pv-osimr", False, lambda: f)


@pytest.mark.slow  # compiles the kernels of a tree with every kind of joint for the host
def test_every_kind_of_unit_coordinates(on_the_host):
    """Quaternions, unit complex pairs, SE(3), SE(2): the tensor map to q's coordinates."""
    from _jax import every_kind_of_joint_held, on_and_off_the_sphere

    model, cms = every_kind_of_joint_held()
    G, f = _route(model, cms)
    qs = configurations(model, 6, seed=10)
    _gradient_check(G, f, on_and_off_the_sphere(model, qs, np.random.default_rng(3)),
                    torch.float64, 1e-12)  # fmt: skip


def _gpu_ready() -> bool:
    return torch.cuda.is_available()


@pytest.mark.skipif(not _gpu_ready(), reason="no CUDA device: runs where a GPU is lent")
@pytest.mark.parametrize("dtype, atol", [("float64", 1e-12), ("float32", 1e-4)])
def test_the_kernels_on_a_gpu_are_the_cpu_library(dtype, atol):
    """Atlas 2×6D: G and the gradient from pvosimr.torch.delassus on CUDA tensors (the kernels
    on PyTorch's stream) against the CPU library."""
    import pvosimr.torch
    from pvosimr import zoo

    robot = zoo.load_case("atlas/feet_6d")
    G = pvosimr.torch.delassus(robot.model, robot.constraints)
    f = G.compiled
    qs = configurations(robot.model, 64, seed=11)
    dtype = getattr(torch, dtype)
    q = torch.tensor(qs, dtype=dtype, device="cuda", requires_grad=True)
    W = torch.randn(64, f.m, f.m, dtype=torch.float64)
    out = G(q)
    (out * W.to("cuda", dtype)).sum().backward()
    from pvosimr.codegen.contract import evaluate

    truth, g = evaluate(f, qs), evaluate(f, qs, None, W.numpy())
    assert np.abs(out.detach().cpu().double().numpy() - truth).max() <= atol * np.abs(truth).max()
    assert np.abs(q.grad.cpu().double().numpy() - g).max() <= atol * np.abs(g).max()
