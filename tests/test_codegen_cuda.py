"""The CUDA kernels of G and its gradient (pvosimr.codegen.cuda), checked without a GPU: their
C run on the host against the CPU library, NVRTC's PTX, ptxas's registers and spills."""

import ctypes.util
import subprocess
import sys

import numpy as np
import pinocchio as pin
import pytest
from _codegen import FAST, FAST_DERIVATIVES, codegen_or_skip

from pvosimr.codegen import chunks
from pvosimr.codegen.c_source import BAD_Q, BAD_W, OK
from pvosimr.codegen.contract import evaluate
from pvosimr.zoo import registry

build = codegen_or_skip()
cuda = pytest.importorskip("pvosimr.codegen.cuda")

SMALL = "bolt"  # a free flyer (a unit quaternion in q), 6 rows, 2,134 CasADi instructions
TOLERANCE = {"float64": 1e-12, "float32": 1e-4}  # of max|G|, max|gradient|
#: On the GPU: its own sin and cos, and products and sums fused into one rounding.
GPU_TOLERANCE = {"float64": 1e-11, "float32": 1e-4}


@pytest.fixture(scope="module")
def robot():
    return registry.load(SMALL)


@pytest.fixture(scope="module")
def cpu(robot):
    return build.compile(
        robot.model, robot.constraints, vjp=True, flags=FAST, derivative_flags=FAST_DERIVATIVES
    )


def _configurations(robot, count: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    return np.array([robot.q_random(rng) for _ in range(count)])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_kernels_c_on_the_host_gives_the_cpu_librarys_g_and_gradient(robot, cpu, dtype):
    """The kernels' own source, compiled as C for this CPU and run over the configurations,
    against the CPU library of the same generated C: G and the gradient of <W, G> in q's
    coordinates."""
    kernel = cuda.compile_cuda(robot.model, robot.constraints, dtype=dtype, vjp=True)
    qs = _configurations(robot, 9)
    if dtype == "float32":  # q as the kernel sees it, normalized in float32
        qs = qs.astype(np.float32).astype(np.float64)
    G, status = kernel.host(qs)
    assert (status == OK).all()
    expected = cpu(qs).reshape(len(qs), -1)
    scale = np.abs(expected).max()
    assert np.abs(G - expected).max() <= TOLERANCE[dtype] * scale
    W = np.random.default_rng(3).standard_normal((len(qs), kernel.m, kernel.m))
    gradient, status = kernel.host(qs, W=W)
    assert (status == OK).all()
    expected = evaluate(cpu, qs, None, W)
    assert np.abs(gradient - expected).max() <= TOLERANCE[dtype] * np.abs(expected).max()


@pytest.mark.parametrize(
    "tree", [pytest.param("atlas", marks=pytest.mark.slow), "free flyer and continuous joint"]
)
def test_the_kernels_follow_the_cpu_contract_at_any_norm(tree):
    """Unit parts (a free flyer's quaternion, a continuous joint's (cos, sin)) at norms from
    0.05 to 20: G(N(q)) and the gradient in q's coordinates, as the CPU library gives them."""
    from _jax import far_off_the_sphere, tree_with_unit_parts

    if tree == "atlas":
        atlas = registry.load("atlas")
        model, cms = atlas.model, atlas.constraints
    else:
        model, cms = tree_with_unit_parts()
    f = build.compile(model, cms, vjp=True, flags=FAST, derivative_flags=FAST_DERIVATIVES)
    kernel = cuda.compile_cuda(model, cms, vjp=True)
    rng = np.random.default_rng(4)
    steps = rng.uniform(-1.0, 1.0, (6, model.nv))
    qs = far_off_the_sphere(model, np.array([pin.integrate(model, pin.neutral(model), v)
                                             for v in steps]))  # fmt: skip
    G, status = kernel.host(qs)
    assert (status == OK).all()
    expected = evaluate(f, qs).reshape(len(qs), -1)
    assert np.abs(G - expected).max() <= 1e-12 * np.abs(expected).max()
    W = rng.standard_normal((len(qs), kernel.m, kernel.m))
    gradient, status = kernel.host(qs, W=W)
    expected = evaluate(f, qs, None, W)
    assert (status == OK).all() and gradient.shape == (len(qs), model.nq)
    assert np.abs(gradient - expected).max() <= 1e-12 * np.abs(expected).max()


def test_a_rejected_configuration_gets_its_status_and_no_g(robot):
    """A q with a unit part of norm 0, beyond the model's range or not finite, and weights that
    are not finite, are named per configuration; the others are computed."""
    kernel = cuda.compile_cuda(robot.model, robot.constraints, vjp=True)
    qs = _configurations(robot, 4)
    qs[1, 3:7] = 0.0  # the free flyer's quaternion
    qs[2, 8] = np.nan
    qs[3, 9] = 1e300
    G, status = kernel.host(qs)  # what the kernel did not write is NaN
    assert status.tolist() == [OK, BAD_Q, BAD_Q, BAD_Q]
    assert np.isfinite(G[0]).all() and np.isnan(G[1:]).all()
    W = np.ones((4, kernel.m, kernel.m))
    W[0, 1, 2] = np.inf
    gradient, status = kernel.host(qs, W=W)
    assert status.tolist() == [BAD_W, BAD_Q, BAD_Q, BAD_Q]
    assert np.isnan(gradient).all()


def test_configurations_lie_fastest_in_memory(robot):
    """Entry i of configuration b at [i * B + b]: G of one configuration does not depend on
    the others beside it, and a configuration's place in the batch is its column."""
    kernel = cuda.compile_cuda(robot.model, robot.constraints)
    qs = _configurations(robot, 5)
    G, _ = kernel.host(qs)
    for b in (0, 3):
        alone, _ = kernel.host(qs[b : b + 1])
        np.testing.assert_array_equal(alone[0], G[b])
    assert (
        "#define PV_Q_0 q[0LL * B]" in kernel.source and "out[(long long)(i) * B]" in kernel.source
    )


def test_a_statement_the_kernel_does_not_know_is_named():
    generated = (
        "/* f:(q[1])->(G[1]) */\nstatic int casadi_f0(const casadi_real** arg) {\n"
        "  casadi_real a0;\n  a0=arg[0]? arg[0][0] : 0;\n  a0=atan2(a0,a0);\n  return 0;\n}\n"
    )
    with pytest.raises(cuda.CudaError, match=r"line 3 of f's generated body .*'a0=atan2"):
        cuda.kernel_body(generated, "f")


def test_a_function_written_in_chunks_is_refused(monkeypatch):
    """Beyond CHUNKED_FROM the CPU library's C is chunks and slots, which the kernel does not
    take (Atlas with two Shadow hands: the gradient's 81,779 instructions)."""
    monkeypatch.setattr(chunks, "CHUNKED_FROM", 100)
    robot = registry.load("four_bar")  # 110 instructions
    beyond = r"has more than 100 CasADi instructions \(pvosimr\.codegen\.chunks\.CHUNKED_FROM\)"
    with pytest.raises(cuda.CudaError, match=beyond):
        cuda.compile_cuda(robot.model, robot.constraints)


def _nvrtc_and_ptxas(robot_name: str, architectures: tuple[str, ...]) -> None:
    """Every kernel (G and gradient, float64 and float32) compiles to PTX with NVRTC, and ptxas
    reports each kernel's registers and spills for each architecture."""
    pytest.importorskip("cuda.bindings")
    robot = registry.load(robot_name)
    for dtype in cuda.DTYPES:
        kernel = cuda.compile_cuda(robot.model, robot.constraints, dtype=dtype, vjp=True)
        assert ".entry pvosimr_G(" in kernel.ptx and ".entry pvosimr_vjp(" in kernel.ptx
        for arch in architectures:
            found = {r.kernel: r for r in kernel.resources(arch)}
            assert set(found) == {"pvosimr_G", "pvosimr_vjp"}
            for r in found.values():
                assert 0 < r.registers <= 255 and r.arch == arch
                assert min(r.stack_frame, r.spill_stores, r.spill_loads) >= 0


def test_nvrtc_compiles_every_kernel_and_ptxas_reports_its_resources():
    _nvrtc_and_ptxas("four_bar", ("sm_80", "sm_90"))  # 110 instructions: a second


def test_the_launch_loads_a_cubin_for_the_device():
    """What the launch hands the driver: NVRTC's CUBIN for the GPU's own architecture."""
    pytest.importorskip("cuda.bindings")
    robot = registry.load("four_bar")
    kernel = cuda.compile_cuda(robot.model, robot.constraints, vjp=True)
    assert kernel.image("sm_90").startswith(b"\x7fELF")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "architectures"),
    # Every architecture on Atlas; the hands' kernels (ptxas: about 25 s each) for the targets'.
    [("atlas", cuda.ARCHITECTURES), ("atlas_shadow_hand", ("sm_90",))],
    ids=["atlas", "atlas_shadow_hand"],
)
def test_nvrtc_and_ptxas_on_the_papers_robots(name, architectures):
    _nvrtc_and_ptxas(name, architectures)


def test_ptxas_output_is_read_per_kernel():
    """The sub-functions' properties (sin's slow path) are not taken for a kernel's."""
    pytest.importorskip("cuda.bindings")
    ptx = cuda.nvrtc_compile(
        'extern "C" __global__ void k(double* x) { x[threadIdx.x] = sin(x[threadIdx.x]); }\n'
        'extern "C" __global__ void j(float* x) { x[threadIdx.x] = 2 * x[threadIdx.x]; }\n',
        cuda.PTX_TARGET,
    )
    found = {r.kernel: r for r in cuda.ptxas_resources(ptx.rstrip(b"\0").decode(), "sm_90")}
    assert set(found) == {"k", "j"} and found["j"].stack_frame == 0


def test_the_report_has_a_row_per_kernel_dtype_and_architecture():
    pytest.importorskip("cuda.bindings")
    text = cuda.report(["four_bar"], ["sm_80", "sm_90"])
    rows = [line for line in text.splitlines() if line.startswith("| four_bar |")]
    assert len(rows) == 2 * 2 * 2 and "| pvosimr_G | 110 | sm_80 |" in rows[0]


def test_without_the_extra_the_ptx_is_one_line(robot):
    """compile_cuda writes the source without NVIDIA's wheels; asking for PTX names the extra."""
    code = (
        "import sys\nsys.modules['cuda.bindings'] = None\n"
        "from pvosimr.zoo import registry\nfrom pvosimr.codegen import compile_cuda\n"
        f"r = registry.load({SMALL!r})\nk = compile_cuda(r.model, r.constraints)\n"
        "assert 'pvosimr_G' in k.source\nk.ptx\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines()[-1] == (
        "ModuleNotFoundError: pvosimr.codegen.cuda: needs NVIDIA's CUDA Python bindings "
        '(NVRTC, ptxas): pip install "pvosimr[cuda]"'
    )


def test_importing_pvosimr_imports_no_cuda_module():
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import pvosimr, pvosimr.codegen.cuda"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    imported = [line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()]
    assert "pvosimr.codegen.cuda" in imported
    assert not [name for name in imported if name.split(".")[0] in {"cuda", "nvidia"}]


def _has_driver() -> bool:
    return ctypes.util.find_library("cuda") is not None


@pytest.mark.skipif(_has_driver(), reason="a CUDA driver is installed here")
def test_launching_without_a_driver_is_one_line(robot):
    kernel = cuda.compile_cuda(robot.model, robot.constraints, vjp=True)
    pytest.importorskip("cuda.bindings")
    for launch in (lambda: kernel.launch(0, 0, 0, 1), lambda: kernel.launch_vjp(0, 0, 0, 0, 1)):
        with pytest.raises(cuda.CudaError) as caught:
            launch()
        message = str(caught.value)
        assert "\n" not in message and message.startswith("no CUDA driver on this machine (")


def test_a_launch_checks_its_arguments_first(robot):
    kernel = cuda.compile_cuda(robot.model, robot.constraints)
    with pytest.raises(ValueError, match="B must be a number of configurations >= 0, not -1"):
        kernel.launch(0, 0, 0, -1)
    with pytest.raises(ValueError, match="no gradient: compile_cuda"):
        kernel.launch_vjp(0, 0, 0, 0, 1)


@pytest.mark.skipif(not _has_driver(), reason="no CUDA driver: no GPU to launch on")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_on_the_gpu_the_kernels_give_the_cpu_librarys_g_and_gradient(robot, cpu, dtype):
    """The launch path end to end: device arrays, one launch of each kernel on a stream."""
    pytest.importorskip("cuda.bindings")
    from cuda.bindings import driver

    kernel = cuda.compile_cuda(robot.model, robot.constraints, dtype=dtype, vjp=True)
    B = 1000
    qs = _configurations(robot, B)
    if dtype == "float32":  # q as the kernel sees it, normalized in float32
        qs = qs.astype(np.float32).astype(np.float64)
    W = np.random.default_rng(3).standard_normal((B, kernel.m, kernel.m))
    host = {
        "qs": np.ascontiguousarray(qs.T, dtype=dtype),
        "W": np.ascontiguousarray(W.reshape(B, -1).T, dtype=dtype),
        "G": np.zeros((kernel.n_out, B), dtype=dtype),
        "gradient": np.zeros((kernel.nq, B), dtype=dtype),
        "status": np.full(B, -1, dtype=np.int32),
        "status_vjp": np.full(B, -1, dtype=np.int32),
    }
    cuda._driver()
    kernel.launch(0, 0, 0, 0)  # the context and the module
    device = {}
    for name, array in host.items():
        err, device[name] = driver.cuMemAlloc(array.nbytes)
        assert err == driver.CUresult.CUDA_SUCCESS
        (err,) = driver.cuMemcpyHtoD(device[name], array.ctypes.data, array.nbytes)
        assert err == driver.CUresult.CUDA_SUCCESS
    err, stream = driver.cuStreamCreate(0)
    d = {name: int(pointer) for name, pointer in device.items()}
    kernel.launch(d["qs"], d["G"], d["status"], B, int(stream))
    kernel.launch_vjp(d["qs"], d["W"], d["gradient"], d["status_vjp"], B, int(stream))
    (err,) = driver.cuStreamSynchronize(stream)
    assert err == driver.CUresult.CUDA_SUCCESS
    for name, array in host.items():
        (err,) = driver.cuMemcpyDtoH(array.ctypes.data, device[name], array.nbytes)
        assert err == driver.CUresult.CUDA_SUCCESS
        driver.cuMemFree(device[name])
    assert (host["status"] == OK).all() and (host["status_vjp"] == OK).all()
    expected = cpu(qs).reshape(B, -1)
    error = np.abs(host["G"].T - expected).max() / np.abs(expected).max()
    assert error <= GPU_TOLERANCE[dtype]
    expected = evaluate(cpu, qs, None, W)
    error = np.abs(host["gradient"].T - expected).max() / np.abs(expected).max()
    assert error <= GPU_TOLERANCE[dtype]


def test_placements_as_inputs_on_the_host(robot):
    """``placements="input"``: one p for every configuration, for G and the gradient (whose
    CasADi function then reads q, p and W)."""
    options = {"placements": "input", "flags": FAST, "derivative_flags": FAST_DERIVATIVES}
    placed = build.compile(robot.model, robot.constraints, vjp=True, **options)
    kernel = cuda.compile_cuda(robot.model, robot.constraints, vjp=True, placements="input")
    assert kernel.n_p > 0
    rng = np.random.default_rng(5)
    turns, shifts = rng.standard_normal((2, len(robot.constraints), 3))
    moved = [pin.SE3(pin.exp3(w), t) for w, t in zip(turns, shifts, strict=True)]
    p = placed.placement_vector(moved)
    qs = _configurations(robot, 4)
    G, status = kernel.host(qs, placements=p)
    expected = placed(qs, placements=moved).reshape(len(qs), -1)
    assert (status == OK).all()
    assert np.abs(G - expected).max() <= TOLERANCE["float64"] * np.abs(expected).max()
    W = rng.standard_normal((len(qs), kernel.m, kernel.m))
    gradient, status = kernel.host(qs, placements=p, W=W)
    expected = evaluate(placed, qs, p, W)
    assert (status == OK).all()
    assert np.abs(gradient - expected).max() <= TOLERANCE["float64"] * np.abs(expected).max()
    with pytest.raises(ValueError, match="p must point to its"):
        kernel.launch(0, 0, 0, 1)
    with pytest.raises(ValueError, match=f"placements must be the {kernel.n_p} numbers of p"):
        kernel.host(qs)


def test_the_kernels_apply_the_unit_part_rule_of_every_route():
    """Spherical and ellipsoid joints, whose unit quaternions G reads: a q with its unit parts at
    norm 1 + 5e-7 (accepted, within pin.isNormalized's 1e-6) gives the CPU library's G at that
    q, which is G at the normalised q; a kernel that used the parts as given is 1e-7 off."""
    from pvosimr.coordinates import unit_part_spans

    shoulders = registry.load("ellipsoid_shoulders")
    model, cms = shoulders.model, shoulders.constraints
    kernel = cuda.compile_cuda(model, cms)
    cpu = build.compile(model, cms, flags=FAST)
    qs = _configurations(shoulders, 4)
    off = qs.copy()
    for start, length in unit_part_spans(model):
        off[:, start : start + length] *= 1 + 5e-7
    G, status = kernel.host(off)
    assert (status == OK).all()
    expected = cpu(qs).reshape(len(qs), -1)
    assert np.abs(cpu(off).reshape(len(qs), -1) - expected).max() <= 1e-13 * np.abs(expected).max()
    assert np.abs(G - expected).max() <= TOLERANCE["float64"] * np.abs(expected).max()
