"""``pvosimr.jax.delassus(..., route="cuda")`` (pvosimr.jax.cuda) without a GPU: the handler
compiled warning-free against jaxlib's headers, the custom call XLA would run on CUDA (lowered
here for the CUDA platform), the default route and the one-line refusals, and the whole route
run on XLA's CPU with the same handler and a host double of the driver whose launch runs the
kernels' own C.  With a GPU (and a CUDA jaxlib), the route itself against the CPU library."""

from __future__ import annotations

import ctypes
import hashlib
import re
import subprocess

import numpy as np
import pinocchio as pin
import pytest
from _codegen import codegen_or_skip
from _jax import (
    every_kind_of_joint_held,
    far_off_the_sphere,
    on_and_off_the_sphere,
    planar_chain_held,
    tree_with_unit_parts,
)

from pvosimr.codegen.c_source import BAD_Q
from pvosimr.codegen.contract import FAILURE_WORDS
from pvosimr.coordinates import unit_part_spans
from pvosimr.zoo import registry

jax = pytest.importorskip("jax")
pj = pytest.importorskip("pvosimr.jax")
codegen_or_skip()  # CasADi and a C compiler

import jax.numpy as jnp  # noqa: E402

from pvosimr.codegen import compiler as toolchain  # noqa: E402
from pvosimr.jax import cuda, ffi  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SMALL = "bolt"  # a free flyer (a unit quaternion in q), 6 rows, 2,134 CasADi instructions
TOLERANCE = {"float64": 1e-12, "float32": 1e-4}  # of max|G|, max|gradient|


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


@pytest.fixture(scope="module")
def robot():
    return registry.load(SMALL)


def configurations(model, count: int, seed: int) -> np.ndarray:
    """Random ``q`` around the neutral one (within every joint's range)."""
    rng = np.random.default_rng(seed)
    steps = rng.uniform(-1.0, 1.0, (count, model.nv))
    return np.array([pin.integrate(model, pin.neutral(model), v) for v in steps])


def _configurations(robot, count: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([robot.q_random(rng) for _ in range(count)])


def _off_sphere(q: np.ndarray) -> np.ndarray:
    """The free flyer's quaternion scaled by 1.3: the same configuration, G(N(q))."""
    q = q.copy()
    q[..., 3:7] *= 1.3
    return q


def test_the_handler_compiles_warning_free_against_jaxlibs_headers(tmp_path):
    """Our C++ at -Wall -Wextra -Werror (jaxlib's headers as system headers: theirs warn)."""
    source = tmp_path / "handler.cc"
    source.write_bytes(ffi.handler_source(cuda.SOURCE))
    compiler = toolchain.find_compiler("c++", needed_by="this test")
    flags = ["-std=c++17", "-O2", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror"]
    command = [*compiler, *flags, "-isystem", jax.ffi.include_dir(), str(source)]
    done = subprocess.run([*command, "-o", str(tmp_path / "h.so")], capture_output=True, text=True)
    assert done.returncode == 0 and not done.stderr, done.stderr
    symbols = ctypes.CDLL(str(tmp_path / "h.so"))
    assert symbols.PvosimrCuda and symbols.PvosimrCudaOnHost


# --------------------------------------------------------------------------- lowered for CUDA


@pytest.fixture
def gpu_stand_in(monkeypatch):
    """JAX's device an NVIDIA GPU as far as the route asks, the kernels 'loaded' at 7."""
    monkeypatch.setattr(cuda, "nvidia_gpu", lambda: True)
    monkeypatch.setattr(
        cuda, "kernel_functions", lambda k: {n: np.array([0, 7], np.int64) for n in k.kernels}
    )
    monkeypatch.setattr(cuda, "driver_functions", lambda: np.arange(1, 5, dtype=np.int64))


_CALL = re.compile(
    r"stablehlo\.custom_call @pvosimr_cuda\((?P<operands>[^)]*)\) \{(?P<attributes>.*?)\} : "
    r"\((?P<types>[^)]*)\) -> \((?P<results>[^)]*)\)"
)


def _calls(f, x) -> list[dict]:
    text = jax.jit(f).trace(x).lower(lowering_platforms=("cuda",)).as_text()
    return [m.groupdict() for m in _CALL.finditer(text)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_lowered_for_cuda_g_is_one_call_on_configurations_fastest(robot, gpu_stand_in, dtype):
    G = pj.delassus(robot.model, robot.constraints, route="cuda")
    t = {"float64": "f64", "float32": "f32"}[dtype]
    nq, m = robot.model.nq, 6
    qs = _configurations(robot, 12).astype(dtype).reshape(3, 4, nq)
    loss = lambda q: jnp.sum(G(q) ** 2)  # noqa: E731
    cases = {  # function, input -> the one call's operands and results
        "G": (G, qs[0, 0], [f"{nq}x1"], [f"{m * m}x1"], 1),
        "vmap": (jax.vmap(jax.vmap(G)), qs, [f"{nq}x12"], [f"{m * m}x12"], 12),
        "batch": (G, qs, [f"{nq}x12"], [f"{m * m}x12"], 12),
        "grad": (jax.grad(loss), qs[0, 0], [f"{nq}x1", f"{m * m}x1"], [f"{nq}x1"], 1),
        "vmap grad": (jax.vmap(jax.grad(loss)), qs[0], [f"{nq}x4", f"{m * m}x4"], [f"{nq}x4"], 4),
    }
    for name, (f, x, operands, results, B) in cases.items():
        calls = _calls(f, x)
        kernels = {"G": 0, "vjp": 0}
        for call in calls:
            kind = "vjp" if call["operands"].count("%") == 2 else "G"
            kernels[kind] += 1
            if kind == ("vjp" if name.endswith("grad") else "G"):
                assert call["types"] == ", ".join(f"tensor<{s}x{t}>" for s in operands), name
                assert call["results"] == f"tensor<{results[0]}x{t}>, tensor<{B}xi32>", name
                # row-major (rows, B): configurations fastest, as the kernels read them
                layouts = ", ".join(["dense<[1, 0]> : tensor<2xindex>"] * len(operands))
                assert f"operand_layouts = [{layouts}]" in call["attributes"], name
                assert "functions = dense<[0, 7]>" in call["attributes"], name
                sizes = f"[{nq}, {m * m if kind == 'vjp' else 0}, {results[0].split('x')[0]}]"
                assert f"sizes = dense<{sizes}>" in call["attributes"], name
        assert kernels == {"G": 1, "vjp": int(name.endswith("grad"))}, name  # G: for G²


def test_cuda_route_takes_fixed_placements_only(robot, gpu_stand_in):
    with pytest.raises(ValueError, match="route='cuda' takes fixed placements only") as caught:
        pj.delassus(robot.model, robot.constraints, placements="input", route="cuda")
    assert "\n" not in str(caught.value)
    G = pj.delassus(robot.model, robot.constraints, route="cuda")
    with pytest.raises(TypeError, match="fixed placements: call G"):
        G(robot.q_random(np.random.default_rng(0)), [None])


# --------------------------------------------------------------------------- the route chosen


def test_default_route_is_cuda_on_an_nvidia_gpu(monkeypatch):
    """ffi on a CPU; cuda on an NVIDIA GPU with the cuda extra; xla on another GPU or
    without the extra."""

    class Device:
        def __init__(self, platform, version, kind):
            self.platform, self.device_kind = platform, kind
            self.client = type("Client", (), {"platform_version": version})()

    def on(backend, device, extra=None):
        monkeypatch.setattr(jax, "default_backend", lambda: backend)
        monkeypatch.setattr(jax, "devices", lambda *a: [device])
        monkeypatch.setattr(cuda, "missing_extra", lambda *m: extra)
        return cuda.default_route()

    nvidia = Device("gpu", "cuda 12080", "NVIDIA H100 80GB HBM3")
    assert on("cpu", Device("cpu", "cpu", "cpu")) == "ffi"
    assert on("gpu", nvidia) == "cuda"
    assert on("gpu", nvidia, extra="cuda.bindings") == "xla"
    assert on("gpu", Device("gpu", "rocm 60000", "AMD Instinct MI300X")) == "xla"


def test_default_route_goes_to_the_cuda_route(robot, monkeypatch):
    chosen = []
    monkeypatch.setattr(cuda, "default_route", lambda: "cuda")
    monkeypatch.setattr(cuda, "delassus_cuda", lambda *a: chosen.append(a) or "G")
    assert pj.delassus(robot.model, robot.constraints) == "G" and len(chosen) == 1


def test_route_cuda_without_a_cuda_device_is_one_line(robot, monkeypatch):
    """JAX's CPU only (as on a machine without a GPU)."""
    monkeypatch.setattr(jax, "devices", lambda *a: jax.local_devices(backend="cpu"))
    assert not cuda.nvidia_gpu()
    with pytest.raises(RuntimeError, match="route='cuda' runs on an NVIDIA GPU") as caught:
        pj.delassus(robot.model, robot.constraints, route="cuda")
    message = str(caught.value)
    assert "\n" not in message and "CUDA jaxlib" in message and "JAX's default device" in message


def test_route_cuda_without_the_extra_is_the_install_line(robot, monkeypatch):
    from pvosimr import extras

    monkeypatch.setattr(cuda, "nvidia_gpu", lambda: True)
    monkeypatch.setattr(extras, "missing_extra", lambda *modules: "cuda.bindings")
    with pytest.raises(ModuleNotFoundError, match=r'pip install "pvosimr\[cuda\]"') as caught:
        pj.delassus(robot.model, robot.constraints, route="cuda")
    assert "\n" not in str(caught.value)


def test_an_unknown_route_names_the_routes(robot):
    with pytest.raises(ValueError, match="route must be one of 'ffi', 'xla', 'cuda', not 'gpu'"):
        pj.delassus(robot.model, robot.constraints, route="gpu")


# --------------------------------------------------------------------------- on XLA's CPU

#: The driver as the handler calls it, on the host: a "CUfunction" points to the host
#: kernel and its arity; the launch checks the grid covers B and runs the kernel's loop.
DOUBLE_C = r"""
#include <string.h>
typedef struct { void* fn; int with_w; } pv_kernel;
typedef void (*pv_g)(const void*, const void*, void*, int*, long long);
typedef void (*pv_w)(const void*, const void*, const void*, void*, int*, long long);
pv_kernel pv_G = {(void*)pvosimr_G, 0}, pv_vjp = {(void*)pvosimr_vjp, 1};
int pv_launches = 0, pv_fail = 0;
int pv_launch(const pv_kernel* k, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
              unsigned by, unsigned bz, unsigned shared, void* stream, void** a, void** extra) {
  const long long B = *(long long*)a[k->with_w ? 5 : 4];
  ++pv_launches;
  if (pv_fail || (long long)gx * bx < B || (long long)(gx - 1) * bx >= B || gy != 1 ||
      gz != 1 || by != 1 || bz != 1 || shared || extra || *(void**)a[1]) return 999;
  (void)stream;
  if (k->with_w) ((pv_w)k->fn)(*(void**)a[0], 0, *(void**)a[2], *(void**)a[3], *(int**)a[4], B);
  else ((pv_g)k->fn)(*(void**)a[0], 0, *(void**)a[2], *(int**)a[3], B);
  return 0;
}
int pv_copy(void* to, unsigned long long from, size_t n, void* s) {
  (void)s;
  memcpy(to, (const void*)from, n);
  return 0;
}
int pv_sync(void* s) { (void)s; return 0; }
int pv_name(int rc, const char** name) { *name = rc == 999 ? "CUDA_ERROR_DOUBLE" : 0; return 0; }
"""


def _address(library: ctypes.CDLL, name: str) -> int:
    return ctypes.cast(getattr(library, name), ctypes.c_void_p).value


@pytest.fixture(scope="module")
def on_host(tmp_path_factory):
    """The route's handler registered for XLA's CPU, and a maker of host doubles per kernel."""
    library = ctypes.CDLL(str(ffi.handler_library(cuda.SOURCE)))
    jax.ffi.register_ffi_target(cuda.TARGET, jax.ffi.pycapsule(library.PvosimrCudaOnHost))
    folder = tmp_path_factory.mktemp("double")
    doubles: dict[str, ctypes.CDLL] = {}

    def double(kernel) -> ctypes.CDLL:
        key = hashlib.sha256(kernel.source.encode()).hexdigest()[:16]
        if key not in doubles:
            source = folder / f"double_{key}.c"
            source.write_text(kernel.source + DOUBLE_C)
            compiler = toolchain.find_compiler("c", needed_by="this test")
            so = source.with_suffix(".so")
            command = [*compiler, "-O1", "-shared", "-fPIC", str(source), "-o", str(so), "-lm"]
            subprocess.run(command, check=True)
            doubles[key] = ctypes.CDLL(str(so))
        return doubles[key]

    return double


@pytest.fixture
def host_route(on_host, monkeypatch):
    """``route="cuda"``'s G of a model with the host double as its driver (GPU 0), the test
    run on JAX's CPU (where a GPU is JAX's default device too)."""
    monkeypatch.setattr(cuda, "nvidia_gpu", lambda: True)
    with jax.default_device(jax.devices("cpu")[0]):
        yield _host_route(on_host, monkeypatch)


def _host_route(on_host, monkeypatch):
    doubles: dict[str, ctypes.CDLL] = {}

    def functions(kernel):
        lib = doubles[kernel.dtype] = on_host(kernel)
        return {n: np.array([_address(lib, n.replace("pvosimr", "pv"))]) for n in kernel.kernels}

    def driver():
        lib = next(iter(doubles.values()))
        return np.array([_address(lib, n) for n in ("pv_launch", "pv_copy", "pv_sync", "pv_name")])

    monkeypatch.setattr(cuda, "kernel_functions", functions)
    monkeypatch.setattr(cuda, "driver_functions", driver)

    def route(model, cms):
        G = pj.delassus(model, cms, route="cuda")
        G.doubles = doubles
        return G

    return route


@pytest.fixture
def G_on_host(robot, host_route):
    return host_route(robot.model, robot.constraints)


def _rel(a, b) -> float:
    return float(np.abs(np.asarray(a) - b).max() / np.abs(b).max())


_TREES = {"planar chain": planar_chain_held, "every kind of joint": every_kind_of_joint_held}


@pytest.mark.slow  # the FFI route's library with its gradient, the kernels' host double, jit
@pytest.mark.parametrize(
    ("tree", "dtype"), [(t, d) for t in _TREES for d in ("float64", "float32")]
)
def test_on_the_host_the_route_is_the_ffi_routes_g_and_gradient(host_route, tree, dtype):
    """Everything but the GPU: normalising, transposing, the handler's arguments and launch
    arithmetic, the status copied back, the gradient's map to q's coordinates (quaternions,
    unit complex pairs, SE(2), SE(3)) on and off the unit sphere, nested vmap, grad; against
    the FFI route (the CPU library, its map checked against numpy's in tests/test_jax.py)."""
    model, cms = _TREES[tree]()
    G_host = host_route(model, cms)
    ffi_route = pj.delassus(model, cms, route="ffi")
    m = ffi_route.compiled.m
    rng = np.random.default_rng(11)
    qs = on_and_off_the_sphere(model, configurations(model, 6, seed=11), rng)
    q32 = qs.astype(dtype)
    qs = q32.astype(np.float64).reshape(2, 3, -1)  # the same q on both routes
    W = rng.standard_normal((2, 3, m, m))
    G = jax.jit(jax.vmap(jax.vmap(G_host)))(qs.astype(dtype))
    assert G.dtype == dtype and G.shape == (2, 3, m, m)
    assert _rel(G, jax.vmap(jax.vmap(ffi_route))(qs)) <= TOLERANCE[dtype]
    launches = ctypes.c_int.in_dll(G_host.doubles[dtype], "pv_launches")
    before = launches.value
    loss = lambda G: lambda q, W: jnp.sum(W * G(q))  # noqa: E731
    gradient = jax.jit(jax.vmap(jax.vmap(jax.grad(loss(G_host)))))(
        qs.astype(dtype), W.astype(dtype)
    ).block_until_ready()  # JAX dispatches asynchronously: the launches are done after this
    # six rows, one launch per kernel: the gradient's, and G's where XLA keeps it
    assert before + 1 <= launches.value <= before + 2
    expected = jax.vmap(jax.vmap(jax.grad(loss(ffi_route))))(qs, W)
    assert gradient.dtype == dtype and _rel(gradient, expected) <= TOLERANCE[dtype]
    assert np.abs(expected[..., list(_unit_rows(model))]).max() > 1e-3  # the map is exercised
    # one W for every row (vmap leaves it unbatched): broadcast to the rows for the kernel
    W0 = W[0, 0]
    shared = jax.vmap(jax.grad(loss(G_host)), in_axes=(0, None))(
        qs[0].astype(dtype), W0.astype(dtype)
    )
    expected = jax.vmap(jax.grad(loss(ffi_route)), in_axes=(0, None))(qs[0], W0)
    assert _rel(shared, expected) <= TOLERANCE[dtype]
    # jacrev: the m·m cotangents of one q, one launch (vmap over W, q broadcast)
    jacobian = jax.jacrev(G_host)(qs[0, 1].astype(dtype))
    assert _rel(jacobian, jax.jacrev(ffi_route)(qs[0, 1])) <= TOLERANCE[dtype]


def _unit_rows(model):
    for start, length in unit_part_spans(model):
        yield from range(start, start + length)


def test_on_the_host_the_kernels_take_q_at_any_norm(host_route):
    """A free flyer and a continuous joint, their unit parts at norms from 0.05 to 20, go to the
    kernels as given (no normalising or mapping in XLA ops around them): G(N(q)) and the
    gradient in q's coordinates are the FFI route's."""
    model, cms = tree_with_unit_parts()
    G_host, ffi_route = host_route(model, cms), pj.delassus(model, cms, route="ffi")
    qs = far_off_the_sphere(model, configurations(model, 6, seed=12))
    W = np.random.default_rng(12).standard_normal((6, ffi_route.compiled.m, ffi_route.compiled.m))
    loss = lambda G: lambda q, W: jnp.sum(W * G(q))  # noqa: E731
    for f, args in ((jax.vmap(G_host), (qs,)), (jax.vmap(jax.grad(loss(G_host))), (qs, W))):
        text = jax.jit(f).lower(*args).as_text()
        assert "custom_call @pvosimr_cuda" in text
        assert not re.search(r"stablehlo\.(r?sqrt|divide)", text)
    assert _rel(jax.vmap(G_host)(qs), jax.vmap(ffi_route)(qs)) <= 1e-12
    gradient = jax.vmap(jax.grad(loss(G_host)))(qs, W)
    expected = jax.vmap(jax.grad(loss(ffi_route)))(qs, W)
    assert _rel(gradient, expected) <= 1e-12
    assert np.abs(expected[..., list(_unit_rows(model))]).max() > 1e-3  # the map is exercised


def test_on_the_host_a_rejected_row_is_named_in_the_cpu_routes_words(robot, G_on_host):
    qs = _configurations(robot, 4)
    qs[2, 0] = np.nan
    with pytest.raises(Exception, match=re.escape(f"pvosimr: at row 2 of the batch: "
                                                  f"{FAILURE_WORDS[BAD_Q]}")):  # fmt: skip
        jax.block_until_ready(jax.jit(G_on_host)(qs))


def test_on_the_host_a_failed_launch_names_the_drivers_error(robot, G_on_host):
    qs = _configurations(robot, 3)
    jax.block_until_ready(G_on_host(qs))  # the double loaded
    fail = ctypes.c_int.in_dll(G_on_host.doubles["float64"], "pv_fail")
    fail.value = 1
    try:
        with pytest.raises(Exception, match="the CUDA driver failed launching the kernel on 3 "
                           "configurations: CUDA_ERROR_DOUBLE"):  # fmt: skip
            jax.block_until_ready(jax.jit(G_on_host)(qs + 0.0))
    finally:
        fail.value = 0


# --------------------------------------------------------------------------- on a GPU


def _cuda_jax() -> bool:
    try:
        return cuda.nvidia_gpu()
    except RuntimeError:
        return False


@pytest.mark.skipif(not _cuda_jax(), reason="no NVIDIA GPU in JAX (a CUDA jaxlib on a GPU)")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_on_the_gpu_the_route_is_the_cpu_librarys_g_and_gradient(dtype):
    """Atlas 2×6D on the GPU against the CPU library (the FFI route on JAX's CPU): G and the
    gradient in q's coordinates, off the unit sphere, under jit and vmap."""
    pytest.importorskip("cuda.bindings")
    robot = registry.load_case("atlas/feet_6d")
    G = pj.delassus(robot.model, robot.constraints, route="cuda")
    ffi_route = pj.delassus(robot.model, robot.constraints, route="ffi")
    qs = _off_sphere(_configurations(robot, 256))
    m = 12
    W = np.random.default_rng(3).standard_normal((256, m, m))
    loss = lambda G: lambda q, W: jnp.sum(W * G(q))  # noqa: E731
    q_gpu, W_gpu = jnp.asarray(qs, dtype), jnp.asarray(W, dtype)
    got = jax.jit(jax.vmap(G))(q_gpu)
    gradient = jax.jit(jax.vmap(jax.grad(loss(G))))(q_gpu, W_gpu)
    assert got.dtype == dtype and got.shape == (256, m, m)
    assert next(iter(got.devices())).platform == "gpu"
    with jax.default_device(jax.devices("cpu")[0]):
        q_cpu = qs if dtype == "float64" else qs.astype(dtype).astype(np.float64)
        expected = np.asarray(jax.vmap(ffi_route)(q_cpu))
        expected_gradient = np.asarray(jax.vmap(jax.grad(loss(ffi_route)))(q_cpu, W))
    assert _rel(got, expected) <= TOLERANCE[dtype]
    assert _rel(gradient, expected_gradient) <= TOLERANCE[dtype]
