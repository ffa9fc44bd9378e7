"""G on a GPU: CasADi's generated C of G as a CUDA kernel, one configuration per thread.

The kernel's body (:mod:`pvosimr.codegen.cuda_source`) is the function the CPU library is
compiled from
(:func:`pvosimr.codegen.build.generate_source`'s ``generated``: straight-line C on scalar
locals, model constants folded in), each line rewritten one for one (:func:`kernel_body`):
its locals stay locals (registers, spilled by ``ptxas`` where they do not fit), an input is
read where CasADi reads it and an output stored where CasADi writes it.  Configurations lie
fastest in memory: ``qs`` is (nq, B), G (n_out, B) with row ``k`` CasADi's entry ``k`` of the
column-major m × m matrix, the gradient's weights ``Ws`` (m·m, B) and its result (nq, B), so
a warp's 32 threads load and store 32 consecutive numbers (:mod:`pvosimr.codegen.cuda_layout`
lays a front end's arrays out so).  Constraint placements as inputs
(``placements="input"``) are one vector ``p`` for every configuration.

The kernels follow the CPU library's contract (:mod:`pvosimr.codegen.contract`): each thread
checks its ``q`` first (every entry within the model's range, every unit part of non-zero norm),
computes G at ``N(q)`` (the unit-part rule of every route, :mod:`pvosimr.coordinates`) and the
gradient in q's coordinates (the gradient library's own map), checks the weights (finite) and
the result (finite), and writes its code to ``status`` (:data:`pvosimr.codegen.c_source.OK`,
``BAD_Q``, ``BAD_W``, ``NON_FINITE``): a configuration refused for its input is not
computed and its output not written; one whose result is not finite keeps what was computed.

:func:`compile_cuda` returns a :class:`CudaDelassus`: ``source`` (CUDA C, with the kernels
``pvosimr_G`` and, with ``vjp=True``, ``pvosimr_vjp``), ``ptx`` (compiled by NVRTC at first use
for :data:`PTX_TARGET`, cached in ``cuda/`` of pvosimr's cache folder), ``resources(arch)``
(``ptxas -v``'s registers, stack frame and spills per kernel, from the ``nvidia-cuda-nvcc``
wheel's ``ptxas``) and ``host(qs)``: the same source compiled as C by the system compiler
(``__device__`` empty, the kernel a loop over configurations), the check that the kernel's
body is the CPU library's G without a GPU; ``launch`` and ``launch_vjp`` run the kernels on
device pointers and a stream through the driver API (``cuda-bindings``), from a CUBIN that
NVRTC compiles for the GPU.  The ``cuda`` extra installs NVRTC, ptxas and the bindings
(NVIDIA's wheels; no CUDA toolkit, no nvcc).

``python -m pvosimr.codegen.cuda --report FILE`` writes the ptxas figures of the zoo's
robots (:func:`report`).
"""

from __future__ import annotations

import ctypes
import dataclasses
import hashlib
import os
import re
import shlex
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pinocchio as pin

from ..constraints import as_constraint_list
from ..coordinates import coordinate_plan
from ..extras import require
from ..notices import announce
from . import chunks
from . import compiler as toolchain
from .cache import building, cache_folder, install, usable
from .cuda_source import DTYPES, CudaError, kernel_body, kernel_source
from .templating import fill

__all__ = [
    "ARCHITECTURES",
    "DTYPES",
    "PTX_TARGET",
    "CudaDelassus",
    "CudaError",
    "Resources",
    "compile_cuda",
    "kernel_body",
    "kernel_source",
    "ptxas_resources",
    "report",
]

#: The virtual architecture of :attr:`CudaDelassus.ptx` (Ampere and later JIT-compile it).
PTX_TARGET = "compute_80"

#: The GPUs whose ``ptxas`` figures :func:`report` writes: A100, H100/H200, B200.
ARCHITECTURES = ("sm_80", "sm_90", "sm_100")

#: Bumped whenever the kernel's C changes meaning (part of the PTX's cache key).
KERNEL_VERSION = "3"


# --------------------------------------------------------------------------- NVRTC and ptxas


@dataclasses.dataclass(frozen=True)
class Resources:
    """What ``ptxas -v`` says of one kernel on one architecture (bytes per thread)."""

    kernel: str
    arch: str
    registers: int
    stack_frame: int
    spill_stores: int
    spill_loads: int


_PTXAS_ENTRY = re.compile(r"Compiling entry function '(\w+)' for '(\w+)'")
_PTXAS_PROPERTIES = re.compile(r"Function properties for (\w+)")
_PTXAS_FRAME = re.compile(
    r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads"
)
_PTXAS_REGISTERS = re.compile(r"Used (\d+) registers")


def _ptxas() -> str:
    """The path of the ``nvidia-cuda-nvcc`` wheel's ``ptxas``."""
    require("pvosimr.codegen.cuda", "cuda.bindings")
    from cuda import pathfinder

    found = pathfinder.find_nvidia_binary_utility("ptxas")
    if found is None:
        raise CudaError('ptxas not found: pip install "pvosimr[cuda]" (nvidia-cuda-nvcc)')
    return found


def ptxas_resources(ptx: str, arch: str, options: Iterable[str] = ()) -> list[Resources]:
    """Each kernel's registers, stack frame and spills when ``ptxas -v`` compiles ``ptx`` for
    ``arch`` (``"sm_90"``, …); ``options`` go to ``ptxas`` too (``"-maxrregcount=128"``)."""
    with tempfile.TemporaryDirectory(prefix="pvosimr-ptxas-") as folder:
        path = Path(folder) / "kernels.ptx"
        path.write_text(ptx)
        command = [_ptxas(), "-v", f"-arch={arch}", *options, str(path), "-o", os.devnull]
        out = subprocess.run(command, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise CudaError(f"ptxas failed:\n  {shlex.join(command)}\n{out.stderr[-4000:]}")
    registers: dict[str, int] = {}
    frames: dict[str, list[int]] = {}
    entry = function = None
    for line in out.stderr.splitlines():
        if (match := _PTXAS_ENTRY.search(line)) is not None:
            entry = match.group(1)
        elif (match := _PTXAS_PROPERTIES.search(line)) is not None:
            function = match.group(1)
        elif (match := _PTXAS_FRAME.search(line)) is not None and function is not None:
            frames[function] = [int(x) for x in match.groups()]
        elif (match := _PTXAS_REGISTERS.search(line)) is not None and entry is not None:
            registers[entry] = int(match.group(1))
    return [
        Resources(name, arch, count, *frames.get(name, (0, 0, 0)))
        for name, count in registers.items()
    ]


def _nvrtc_version() -> str:
    from cuda.bindings import nvrtc

    _, major, minor = nvrtc.nvrtcVersion()
    return f"{major}.{minor}"


def nvrtc_compile(source: str, target: str, name: str = "pvosimr.cu") -> bytes:
    """``source`` compiled by NVRTC: PTX for a virtual ``target`` (``"compute_80"``), a CUBIN
    for a real one (``"sm_90"``); :class:`CudaError` with NVRTC's log when it fails."""
    require("pvosimr.codegen.cuda", "cuda.bindings")
    from cuda.bindings import nvrtc

    cubin = target.startswith("sm_")
    size_of, read = (
        (nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN)
        if cubin
        else (nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX)
    )
    err, program = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    _nvrtc_check(nvrtc, err, "creating the program")
    try:
        options = [f"--gpu-architecture={target}".encode(), b"--std=c++17"]
        (err,) = nvrtc.nvrtcCompileProgram(program, len(options), options)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            _, size = nvrtc.nvrtcGetProgramLogSize(program)
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(program, log)
            text = log.decode(errors="replace").strip()
            raise CudaError(f"NVRTC could not compile {name} for {target}:\n{text[-4000:]}")
        err, size = size_of(program)
        _nvrtc_check(nvrtc, err, "reading the compiled code's size")
        image = b" " * size
        (err,) = read(program, image)
        _nvrtc_check(nvrtc, err, "reading the compiled code")
    finally:
        nvrtc.nvrtcDestroyProgram(program)
    return image


def _nvrtc_check(nvrtc, err, doing: str) -> None:
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise CudaError(f"NVRTC failed {doing}: {err.name}")


# --------------------------------------------------------------------------- the kernels


class CudaDelassus:
    """The CUDA kernels of one model's G (and gradient): :attr:`source`, :attr:`ptx` (NVRTC,
    cached, at first use), :meth:`resources` (``ptxas -v``), :meth:`host` (the same C on the
    CPU) and :meth:`launch` / :meth:`launch_vjp` (on a GPU).  ``nq``, ``nv``, ``m``, ``n_p``
    (numbers in ``p``, 0 for fixed placements), ``n_out`` (m·m), ``dtype``, ``algorithm`` and
    ``kernels`` (their names) describe it."""

    def __init__(self, source: str, sizes: dict, algorithm: str, dtype: str, cache_dir=None):
        self.source, self.algorithm, self.dtype = source, algorithm, dtype
        self.nq, self.nv, self.m = sizes["nq"], sizes["nv"], sizes["m"]
        self.n_p, self.n_out = sizes["n_p"], sizes["n_out"]
        self.kernels = ("pvosimr_G", "pvosimr_vjp") if sizes["vjp"] else ("pvosimr_G",)
        self._cache_dir, self._ptx, self._host = cache_dir, None, None
        self._functions: dict[tuple[int, str], object] = {}  # (context, kernel) -> CUfunction
        self._key = hashlib.sha256(f"{KERNEL_VERSION}\0{source}".encode()).hexdigest()[:24]

    def __repr__(self) -> str:
        return (
            f"CudaDelassus({self.algorithm}, nq={self.nq}, m={self.m}, {self.dtype}, "
            f"kernels={self.kernels})"
        )

    @property
    def ptx(self) -> str:
        """The PTX of :attr:`source` for :data:`PTX_TARGET`, compiled by NVRTC once (cached
        on disk, keyed by the source, NVRTC's version and the target)."""
        if self._ptx is None:
            self._ptx = self.image(PTX_TARGET).rstrip(b"\0").decode()
        return self._ptx

    def image(self, target: str) -> bytes:
        """:attr:`source` compiled by NVRTC for ``target``: PTX for ``"compute_80"``, a CUBIN
        for ``"sm_90"`` (:func:`nvrtc_compile`), once: cached on disk, keyed by the source,
        NVRTC's version and the target."""
        require("pvosimr.codegen.cuda", "cuda.bindings")
        folder = cache_folder("cuda", self._cache_dir, "pvosimr.codegen.compile_cuda")
        key = hashlib.sha256(f"{self._key}\0{_nvrtc_version()}\0{target}".encode())
        suffix = ".cubin" if target.startswith("sm_") else ".ptx"
        entry = folder / f"pvosimr_{self.nq}q_{self.m}m_{key.hexdigest()[:24]}{suffix}"
        with building(entry):
            if not usable(entry):
                announce(
                    f"CUDA: compiling {', '.join(self.kernels)} ({len(self.source) // 1000:,} kB "
                    f"of CUDA C, {self.dtype}) with NVRTC for {target} into {folder} (once: "
                    "later calls load it)"
                )
                image = nvrtc_compile(self.source, target)
                install(entry, lambda tmp: tmp.write_bytes(image))
        return entry.read_bytes()

    def resources(self, arch: str = "sm_90", options: Iterable[str] = ()) -> list[Resources]:
        """Registers, stack frame and spills per thread of each kernel, from ``ptxas -v`` on
        :attr:`ptx` for ``arch`` (:func:`ptxas_resources`)."""
        return ptxas_resources(self.ptx, arch, options)

    def launch(self, qs: int, out: int, status: int, B: int, stream: int = 0, *, p: int = 0):
        """Run ``pvosimr_G`` on the current CUDA context's device (its primary context where
        none is current) on ``stream``, asynchronously: ``qs`` (nq, B), ``out`` (n_out, B) and
        ``status`` (B, int32) are device pointers (integers) to arrays of :attr:`dtype`
        (``status``: int32) laid out as the module docstring says; ``p`` points to the
        ``n_p`` placements where they are inputs.  Loaded at first use from a CUBIN that NVRTC
        compiles for the device (:meth:`image`).  :class:`CudaError` in one line where there
        is no CUDA driver or GPU, or the driver refuses."""
        self._launch("pvosimr_G", [qs, p, out, status], B, stream, p)

    def launch_vjp(
        self, qs: int, W: int, out: int, status: int, B: int, stream: int = 0, *, p: int = 0
    ):
        """Run ``pvosimr_vjp`` as :meth:`launch` runs G: ``W`` (m·m, B) the weights (row
        ``k`` entry ``k`` of each configuration's C-ordered W, as ``f.vjp`` reads it), ``out``
        (nq, B) the gradient of ``⟨W, G(N(q))⟩`` in q's coordinates."""
        if "pvosimr_vjp" not in self.kernels:
            raise ValueError("this CudaDelassus has no gradient: compile_cuda(..., vjp=True)")
        self._launch("pvosimr_vjp", [qs, p, W, out, status], B, stream, p)

    def _launch(self, kernel: str, pointers: list[int], B: int, stream: int, p: int) -> None:
        if isinstance(B, bool) or not isinstance(B, (int, np.integer)) or B < 0:
            raise ValueError(f"B must be a number of configurations >= 0, not {B!r}")
        if self.n_p and not p:
            raise ValueError(
                f"the placements are inputs of this kernel: p must point to its {self.n_p} "
                "numbers on the device"
            )
        driver = _driver()
        function = self._function(driver, kernel)
        if B == 0:
            return
        values = [np.array([int(x)], dtype=np.uint64) for x in pointers]
        values.append(np.array([B], dtype=np.int64))
        params = np.array([v.ctypes.data for v in values], dtype=np.uint64)
        grid = (int(B) + BLOCK - 1) // BLOCK
        (err,) = driver.cuLaunchKernel(
            function, grid, 1, 1, BLOCK, 1, 1, 0, driver.CUstream(int(stream)),
            params.ctypes.data, 0,
        )  # fmt: skip
        _driver_check(driver, err, f"launching {kernel} on {B} configurations")

    def functions(self, device: int) -> dict[str, int]:
        """Each kernel's ``CUfunction`` (its address) in GPU ``device``'s primary context, the
        context that XLA and the CUDA runtime use, its module loaded as :meth:`launch` loads
        it (once per context); for a caller that launches the kernels itself
        (:mod:`pvosimr.jax.cuda`'s handler).  :class:`CudaError` as :meth:`launch` raises it."""
        driver = _driver()
        (err,) = driver.cuCtxPushCurrent(_primary_context(driver, int(device)))
        _driver_check(driver, err, f"making GPU {device}'s primary context current")
        try:
            return {name: int(self._function(driver, name)) for name in self.kernels}
        finally:
            driver.cuCtxPopCurrent()

    def _function(self, driver, kernel: str):
        """``kernel`` in the current context (the device's primary one where none is current),
        its module loaded from a CUBIN for the device once per context."""
        err, context = driver.cuCtxGetCurrent()
        _driver_check(driver, err, "reading the current context")
        if not int(context):
            context = _primary_context(driver, 0)
            (err,) = driver.cuCtxSetCurrent(context)
            _driver_check(driver, err, "making GPU 0's primary context current")
        key = (int(context), kernel)
        if key not in self._functions:
            err, device = driver.cuCtxGetDevice()
            _driver_check(driver, err, "reading the context's device")
            capability = []
            for attribute in ("MAJOR", "MINOR"):
                name = f"CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_{attribute}"
                err, value = driver.cuDeviceGetAttribute(
                    getattr(driver.CUdevice_attribute, name), device
                )
                _driver_check(driver, err, "reading the device's compute capability")
                capability.append(value)
            arch = f"sm_{capability[0]}{capability[1]}"
            try:
                image = self.image(arch)
            except CudaError:  # a GPU newer than NVRTC: the driver compiles the PTX
                image = self.ptx.encode() + b"\0"
            buffer = np.frombuffer(image, dtype=np.uint8)  # alive until the driver has it
            err, module = driver.cuModuleLoadData(buffer.ctypes.data)
            _driver_check(driver, err, f"loading the kernels for {arch}")
            for name in self.kernels:
                err, function = driver.cuModuleGetFunction(module, name.encode())
                _driver_check(driver, err, f"finding {name} in the loaded module")
                self._functions[(int(context), name)] = function
        return self._functions[key]

    def host(self, qs, placements: np.ndarray | None = None, W=None):
        """The kernels' own C run on this CPU, one configuration after the other: ``qs`` (B,
        nq) -> (G (B, n_out), status (B,)); with ``W`` (B, m·m): the gradient (B, nq) in
        place of G.  ``placements``: the ``p`` vector where the placements are inputs."""
        ctype = np.dtype(self.dtype)
        qs = np.ascontiguousarray(np.atleast_2d(qs).T, dtype=ctype)
        B = qs.shape[1]
        if self.n_p and np.shape(placements) != (self.n_p,):
            raise ValueError(
                f"placements must be the {self.n_p} numbers of p "
                "(CompiledDelassus.placement_vector), not "
                f"{'nothing' if placements is None else np.shape(placements)}"
            )
        p = np.ascontiguousarray(np.zeros(1) if placements is None else placements, dtype=ctype)
        status = np.full(B, -1, dtype=np.int32)
        lib = self.host_library()
        ptr = ctypes.c_void_p
        if W is None:
            out = np.full((self.n_out, B), np.nan, dtype=ctype)  # NaN: not written
            args = [qs.ctypes.data, p.ctypes.data, out.ctypes.data]
            function = lib.pvosimr_G
        else:
            if "pvosimr_vjp" not in self.kernels:
                raise ValueError("this CudaDelassus has no gradient: compile_cuda(..., vjp=True)")
            ws = np.ascontiguousarray(np.reshape(W, (B, self.m * self.m)).T, dtype=ctype)
            out = np.full((self.nq, B), np.nan, dtype=ctype)
            args = [qs.ctypes.data, p.ctypes.data, ws.ctypes.data, out.ctypes.data]
            function = lib.pvosimr_vjp
        function.restype = None
        function.argtypes = [ptr] * (len(args) + 1) + [ctypes.c_longlong]
        function(*args, status.ctypes.data, B)
        return out.T, status

    def host_library(self) -> ctypes.CDLL:
        """:attr:`source` compiled as C by the system compiler (cached like the CPU library):
        ``pvosimr_G(qs, p, out, status, B)`` and ``pvosimr_vjp(qs, p, W, out, status, B)``
        take host pointers in the kernels' layout, one configuration after the other (what
        :meth:`host` calls; a test's stand-in for :meth:`launch` on a machine without a
        GPU)."""
        if self._host is None:
            from .build import CompilationError

            compiler = toolchain.find_compiler("c", needed_by="CudaDelassus.host")
            identity = toolchain.compiler_identity(tuple(compiler))
            key = hashlib.sha256(f"{self._key}\0{identity}".encode()).hexdigest()[:24]
            folder = cache_folder("cuda", self._cache_dir, "pvosimr.codegen.compile_cuda")
            entry = folder / f"host_{self.nq}q_{self.m}m_{key}.so"
            c_file = entry.with_suffix(".c")
            with building(entry):
                if not usable(entry):
                    c_file.write_text(self.source)
                    command = [*compiler, "-O1", "-shared", "-fPIC", "-fno-math-errno"]
                    install(
                        entry,
                        lambda tmp: toolchain.run_compiler(
                            [*command, "-o", str(tmp), str(c_file), "-lm"],
                            CompilationError,
                            "compiling the CUDA kernels' C for the host",
                        ),
                    )
            self._host = ctypes.CDLL(str(entry))
        return self._host


#: Threads per block of a launch (a kernel that needs 255 registers a thread still fits
#: two blocks on an SM of 65,536 registers).
BLOCK = 128


def _driver():
    """``cuda.bindings.driver``, initialised; :class:`CudaError` in one line where this
    machine has no CUDA driver or GPU."""
    require("pvosimr.codegen.cuda", "cuda.bindings")
    from cuda.bindings import driver

    try:
        (err,) = driver.cuInit(0)
    except (RuntimeError, OSError) as exc:  # libcuda.so cannot be loaded
        reason = str(exc).split(". ")[0]
        raise CudaError(
            f"no CUDA driver on this machine ({reason}): launching the kernels needs an NVIDIA "
            "GPU and its driver (their source, PTX and host C need neither)"
        ) from None
    _driver_check(driver, err, "initialising the CUDA driver (cuInit)")
    return driver


def _primary_context(driver, device: int):
    """GPU ``device``'s primary context (the one XLA and the CUDA runtime use), retained."""
    err, handle = driver.cuDeviceGet(device)
    _driver_check(driver, err, f"finding GPU {device}")
    err, context = driver.cuDevicePrimaryCtxRetain(handle)
    _driver_check(driver, err, f"retaining GPU {device}'s primary context")
    return context


def _driver_check(driver, err, doing: str) -> None:
    if err != driver.CUresult.CUDA_SUCCESS:
        _, name = driver.cuGetErrorName(err)
        said = name.decode() if isinstance(name, bytes) else str(err)
        raise CudaError(f"the CUDA driver failed {doing}: {said}")


def compile_cuda(
    model: pin.Model,
    constraint_models: Iterable,
    *,
    algorithm: str = "pv-osimr",
    dtype: str = "float64",
    vjp: bool = False,
    placements: str = "fixed",
    cache_dir: str | os.PathLike | None = None,
) -> CudaDelassus:
    """The CUDA kernels of G (and, with ``vjp=True``, of the gradient of ``⟨W, G⟩``) for
    ``model`` and ``constraint_models``, from the same generated C as
    :func:`pvosimr.codegen.compile` (see the module docstring).  ``dtype``: ``"float64"`` or
    ``"float32"``.  Nothing is compiled until :attr:`CudaDelassus.ptx` or
    :meth:`CudaDelassus.host` is asked for.

    Raises:
        ModuleNotFoundError: CasADi is missing (``pip install "pvosimr[symbolic]"``).
        CudaError: a function too large for one body (it is written in chunks on the CPU).
        ValueError / NotImplementedError: an unknown ``dtype``, constraints or joints pvosimr
            does not support.
    """
    from .build import generate_source

    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    cms = as_constraint_list(constraint_models, model)
    infos = []
    for output in ("G", "vjp") if vjp else ("G",):
        _, info = generate_source(model, cms, algorithm, placements=placements, output=output)
        if info["chunked"]:
            raise CudaError(  # info's count is of the outlined function, below the line
                f"{info['fname']} has more than {chunks.CHUNKED_FROM:,} CasADi instructions "
                "(pvosimr.codegen.chunks.CHUNKED_FROM): it is written in chunks, which the "
                "CUDA kernel does not take"
            )
        if info["m"] == 0:
            raise ValueError("the constraints have no rows: G is empty, there is no kernel")
        infos.append(info)
    plan = coordinate_plan(model).packed()
    source = kernel_source(infos[0], infos[1] if vjp else None, dtype, plan)
    return CudaDelassus(source, {**infos[0], "vjp": vjp}, infos[0]["algorithm"], dtype, cache_dir)


# --------------------------------------------------------------------------- the report


def report(robots: Iterable[str], architectures: Iterable[str] = ARCHITECTURES) -> str:
    """Markdown: ``ptxas -v``'s registers, stack frame and spills (bytes per thread) of every
    kernel of each zoo robot in ``robots``, float64 and float32, for each architecture."""
    from ..zoo import registry

    version = subprocess.run([_ptxas(), "--version"], capture_output=True, text=True, check=False)
    release = next((x for x in version.stdout.splitlines() if "release" in x), "ptxas").strip()
    heading = fill("cuda_report.md", release=release, nvrtc=_nvrtc_version(), target=PTX_TARGET)
    rows = heading.splitlines()
    for name in robots:
        robot = registry.load(name)
        for dtype in DTYPES:
            kernel = compile_cuda(robot.model, robot.constraints, dtype=dtype, vjp=True)
            sizes = dict(re.findall(r"---- (pvosimr_\w+): \w+, ([\d,]+) CasADi", kernel.source))
            for arch in architectures:
                for r in sorted(
                    kernel.resources(arch), key=lambda r: kernel.kernels.index(r.kernel)
                ):
                    rows.append(
                        f"| {name} | {dtype} | {r.kernel} | {sizes.get(r.kernel, '?')} | "
                        f"{arch} | {r.registers} | {r.stack_frame} | {r.spill_stores} | "
                        f"{r.spill_loads} |"
                    )
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # pragma: no cover - python -m pvosimr.codegen.cuda --report FILE
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--report", metavar="FILE", required=True)
    parser.add_argument("--robots", nargs="+", default=["atlas", "atlas_shadow_hand"])
    options = parser.parse_args()
    text = report(options.robots)
    Path(options.report).write_text(text)
    print(text, end="")
