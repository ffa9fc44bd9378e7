"""``route="cuda"``: pvosimr's CUDA kernels (:mod:`pvosimr.codegen.cuda`) inside JAX on an
NVIDIA GPU, launched by an XLA FFI handler on XLA's own stream.

The handler (``pvosimr_cuda_ffi.cc`` beside this module, C++17, no CUDA header) is built and
cached as the CPU route's is (:func:`pvosimr.jax.ffi.handler_library`) and registered for the
CUDA platform.  It launches one kernel per call: its ``CUfunction`` in each GPU's primary
context (the one XLA uses; :meth:`~pvosimr.codegen.cuda.CudaDelassus.functions` loads the
module at the first trace) and the driver's ``cuLaunchKernel``, ``cuMemcpyDtoHAsync_v2``,
``cuStreamSynchronize`` and ``cuGetErrorName`` are attributes of the call.

Around the call, XLA ops on the GPU lay q's batch out for the kernels and G back
(:mod:`pvosimr.codegen.cuda_layout`); the kernels compute ``G(N(q))`` at any non-zero norm of
q's unit parts and the gradient in q's coordinates, as the CPU library does.  ``vmap`` folds
its axis into B (one launch at any nesting).  The gradient is a ``jax.custom_vjp`` whose
backward pass launches the gradient kernel.  Each kernel checks its configurations; the
handler copies the status back and waits for the stream: a rejected row is an error with the
CPU route's words.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import pinocchio as pin

from ..codegen.cuda import BLOCK, CudaDelassus, compile_cuda
from ..codegen.cuda_layout import columns, matrices, rows
from ..extras import missing_extra, require
from . import ffi
from .arrays import checked_inputs

__all__ = [
    "SOURCE",
    "TARGET",
    "default_route",
    "delassus_cuda",
    "driver_functions",
    "kernel_functions",
    "nvidia_gpu",
    "register",
]

#: The name the handler is registered under (platform CUDA).
TARGET = "pvosimr_cuda"
SOURCE = "pvosimr_cuda_ffi.cc"
#: The driver's functions the handler calls, in the order of its ``driver`` attribute.
DRIVER = ("cuLaunchKernel", "cuMemcpyDtoHAsync_v2", "cuStreamSynchronize", "cuGetErrorName")


def nvidia_gpu() -> bool:
    """Whether JAX's default device is an NVIDIA GPU (a CUDA jaxlib)."""
    device = jax.devices()[0]
    if device.platform != "gpu":
        return False
    version = str(getattr(device.client, "platform_version", "")).lower()
    return "cuda" in version or "nvidia" in device.device_kind.lower()


def default_route() -> str:
    """``"cuda"`` where JAX's default device is an NVIDIA GPU and the ``cuda`` extra is
    installed, ``"xla"`` on another GPU (or without the extra), ``"ffi"`` on a CPU."""
    if jax.default_backend() != "gpu":
        return "ffi"
    return "cuda" if nvidia_gpu() and missing_extra("cuda.bindings") is None else "xla"


def register() -> None:
    """Compile (or find in the cache), load and register the handler for CUDA, once."""
    ffi.register(TARGET, SOURCE, "PvosimrCuda", "CUDA")


def driver_functions() -> np.ndarray:
    """The addresses of :data:`DRIVER` in ``libcuda.so.1`` (the driver XLA has loaded)."""
    driver = ctypes.CDLL("libcuda.so.1")
    return np.array(
        [ctypes.cast(getattr(driver, name), ctypes.c_void_p).value for name in DRIVER],
        dtype=np.int64,
    )


def kernel_functions(kernel: CudaDelassus) -> dict[str, np.ndarray]:
    """Each kernel's ``CUfunction`` on every GPU that JAX has, indexed by CUDA device ordinal
    (XLA's, the handler's index; 0 where JAX has no such GPU)."""
    ordinals = [d.local_hardware_id for d in jax.local_devices(backend="gpu")]
    table = {name: np.zeros(max(ordinals) + 1, dtype=np.int64) for name in kernel.kernels}
    for ordinal in ordinals:
        for name, function in kernel.functions(ordinal).items():
            table[name][ordinal] = function
    return table


def delassus_cuda(model: pin.Model, cms: Sequence, algorithm: str, cache_dir=None) -> Callable:
    """``G(q)`` on the CUDA route (:func:`pvosimr.jax.delassus` with ``route="cuda"``): q
    float32 or float64 (..., nq), G (..., m, m) in q's dtype, under ``jit``, ``vmap`` and
    ``grad``.  One line where this machine cannot run it: the ``cuda`` extra, or JAX with a
    CUDA device."""
    require("pvosimr.jax (route='cuda')", "cuda.bindings")
    if not nvidia_gpu():
        device = jax.devices()[0]
        raise RuntimeError(
            f"route='cuda' runs on an NVIDIA GPU that JAX uses, and JAX's default device here "
            f"is {device.platform} ({device.device_kind}): it needs a GPU, its driver and a "
            "CUDA jaxlib (pip install \"jax[cuda12]\"); route='xla' or route='ffi' run here"
        )
    register()
    compile_kernels = functools.partial(
        compile_cuda, model, cms, algorithm=algorithm, vjp=True, cache_dir=cache_dir
    )
    float64 = compile_kernels(dtype="float64")  # written now: CasADi's errors (and no rows) here

    @functools.cache
    def kernels(dtype) -> tuple[CudaDelassus, dict[str, np.ndarray], np.ndarray]:
        """``(kernel, its CUfunctions by device, the driver's functions)`` in ``dtype``, loaded
        at first use."""
        name = np.dtype(dtype).name
        kernel = float64 if name == "float64" else compile_kernels(dtype=name)
        return kernel, kernel_functions(kernel), driver_functions()

    nq = model.nq

    def launch(name: str, inputs: list, n_out: int):
        """The handler on ``inputs`` (q's, then W's; each (·, B)): the kernel's (n_out, B)."""
        kernel, functions, driver = kernels(inputs[0].dtype)
        B = inputs[0].shape[1]
        out = (jax.ShapeDtypeStruct((n_out, B), inputs[0].dtype),
               jax.ShapeDtypeStruct((B,), jnp.int32))  # fmt: skip
        n_w = kernel.m * kernel.m if name == "pvosimr_vjp" else 0
        result, _ = jax.ffi.ffi_call(TARGET, out)(
            *inputs,
            functions=functions[name],
            driver=driver,
            sizes=np.array([nq, n_w, n_out], dtype=np.int64),
            block=np.int64(BLOCK),
        )
        return result

    def evaluate(q):
        m = kernels(q.dtype)[0].m
        return matrices(launch("pvosimr_G", [columns(q, nq)], m * m), q.shape[:-1], m)

    def gradient(q, W):
        m, batch = kernels(q.dtype)[0].m, q.shape[:-1]
        weights = columns(jnp.broadcast_to(W, (*batch, m, m)).astype(q.dtype), m * m)
        return rows(launch("pvosimr_vjp", [columns(q, nq), weights], nq), batch)

    evaluate, gradient = _one_launch(evaluate), _one_launch(gradient)

    @jax.custom_vjp
    def delassus_q(q):
        return evaluate(q)

    def forward(q):
        return evaluate(q), q

    def backward(q, W):
        return (gradient(q, W),)

    delassus_q.defvjp(forward, backward)

    def G(q, placements=None):
        (q,), _ = checked_inputs(q, placements, "fixed", nq, 0)
        return delassus_q(q)

    G.__doc__ = f"G(q) of {model.name or 'the model'} on the CUDA route (pvosimr.jax.delassus)."
    G.kernels = kernels
    return G


def _one_launch(fn: Callable) -> Callable:
    """``fn(q, *W)`` (any leading batch shape) with a ``vmap`` rule that folds the mapped axis
    into the batch: one launch however deep the vmaps, an unmapped input broadcast to it."""

    @jax.custom_batching.custom_vmap
    def rows(q, *W):
        return fn(q, *W)

    @rows.def_vmap
    def rule(axis_size: int, in_batched: list, q, *W):
        q, *W = (x if batched else jnp.broadcast_to(x, (axis_size, *x.shape))
                 for x, batched in zip((q, *W), in_batched, strict=True))  # fmt: skip
        return rows(q, *W), True

    return rows
