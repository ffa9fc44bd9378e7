"""The B = 1 overhead baselines: a trivial jitted XLA FFI call, a trivial torch custom op, and
the same C through torch's autograd, forward and backward: what JAX or torch takes to dispatch
any foreign function, which the bench's B = 1 targets allow.

:data:`SOURCE` (C++) holds an XLA FFI handler and a plain C function, both doubling float64
numbers; it is built once per jaxlib and compiler against ``jax.ffi.include_dir()`` into
pvosimr's cache folder (``bench/``) and loaded with ctypes.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pvosimr.codegen import compiler as toolchain

N = 8
"""How many numbers the trivial calls double."""

FFI_TARGET = "pvosimr_bench_double"
TORCH_OP = "pvosimr_bench::double"

SOURCE = r"""
#include <cstdint>
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

static ffi::Error Double(ffi::Buffer<ffi::F64> x, ffi::ResultBuffer<ffi::F64> y) {
  const double* in = x.typed_data();
  double* out = y->typed_data();
  for (size_t k = 0, n = x.element_count(); k < n; ++k) out[k] = 2.0 * in[k];
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(pvosimr_bench_double, Double,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F64>>()
                                  .Ret<ffi::Buffer<ffi::F64>>());

extern "C" void pvosimr_bench_double_c(const double* in, double* out, int64_t n) {
  for (int64_t k = 0; k < n; ++k) out[k] = 2.0 * in[k];
}
"""


def build(cache: Path | None = None) -> Path:
    """The shared library of :data:`SOURCE`, compiled on first use (``-O2 -std=c++17``) against
    ``jax.ffi.include_dir()``; RuntimeError with the compiler's output when it fails."""
    import jax
    import jax.ffi

    include = jax.ffi.include_dir()
    compiler = toolchain.find_compiler("c++", needed_by="pvosimr bench (trivial FFI call)")
    flags = ["-O2", "-std=c++17", "-shared", "-fPIC", f"-I{include}"]
    key = "\n".join([SOURCE, jax.__version__, include, *compiler, *flags]).encode()
    folder = (cache or toolchain.cache_dir()) / "bench"
    library = folder / f"trivial-{hashlib.sha256(key).hexdigest()[:16]}.so"
    if library.exists():
        return library
    folder.mkdir(parents=True, exist_ok=True)
    source = library.with_suffix(".cc")
    source.write_text(SOURCE, encoding="utf-8")
    partial = library.with_suffix(".so.part")
    command = [*compiler, *flags, str(source), "-o", str(partial)]
    toolchain.run_compiler(command, RuntimeError, "building the trivial FFI call")
    partial.replace(library)  # atomic: a concurrent run never loads half a file
    return library


_LOADED: dict[str, ctypes.CDLL] = {}


def _library(cache: Path | None) -> ctypes.CDLL:
    path = str(build(cache))
    if path not in _LOADED:
        _LOADED[path] = ctypes.CDLL(path)
    return _LOADED[path]


def _c_double(cache: Path | None) -> Callable:
    """The C function ``(in, out, n)`` through ctypes."""
    function = _library(cache).pvosimr_bench_double_c
    function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    function.restype = None
    return function


def jax_double(cache: Path | None = None) -> Callable:
    """``jax.jit`` of the FFI call that returns 2x (float64, any shape; works under vmap)."""
    import jax
    import jax.ffi

    library = _library(cache)
    if FFI_TARGET not in _LOADED:
        capsule = jax.ffi.pycapsule(library.pvosimr_bench_double)
        jax.ffi.register_ffi_target(FFI_TARGET, capsule, platform="cpu")
        _LOADED[FFI_TARGET] = library

    def double(x):
        out = jax.ShapeDtypeStruct(x.shape, x.dtype)
        return jax.ffi.ffi_call(FFI_TARGET, out, vmap_method="broadcast_all")(x)

    return jax.jit(double)


def _doubled(function: Callable, x: Any) -> Any:
    """2x of a float64 CPU tensor by the C function."""
    import torch

    x = x.detach().contiguous()
    out = torch.empty_like(x)
    function(x.data_ptr(), out.data_ptr(), x.numel())
    return out


def torch_double(cache: Path | None = None) -> Callable:
    """A ``torch.library`` custom op that returns 2x through ctypes (float64, CPU)."""
    import torch

    function = _c_double(cache)
    if TORCH_OP not in _LOADED:

        @torch.library.custom_op(TORCH_OP, mutates_args=(), schema="(Tensor x) -> Tensor")
        def double(x: torch.Tensor) -> torch.Tensor:
            return _doubled(function, x)

        @double.register_fake
        def _(x: torch.Tensor) -> torch.Tensor:
            return torch.empty_like(x)

        _LOADED[TORCH_OP] = double  # type: ignore[assignment]
    return _LOADED[TORCH_OP]


def torch_backward(cache: Path | None = None) -> tuple[Callable, Any]:
    """2x through ctypes as a ``torch.autograd.Function`` whose backward doubles the cotangent
    the same way (pvosimr.torch's eager calls with a gradient take this route): ``(backward,
    leaf)``, ``backward(leaf)`` the forward and backward of :data:`N` numbers, returning the
    gradient (2 each)."""
    import torch

    function = _c_double(cache)

    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x: torch.Tensor) -> torch.Tensor:
            return _doubled(function, x)

        @staticmethod
        def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
            return _doubled(function, grad)

    leaf, ones = numbers("torch").clone().requires_grad_(True), torch.ones(N, dtype=torch.float64)

    def backward(x: torch.Tensor) -> torch.Tensor:
        x.grad = None
        Double.apply(x).backward(ones)
        return x.grad

    backward.forward = Double.apply  # type: ignore[attr-defined]  # for check_backward
    return backward, leaf


def numbers(kind: str) -> Any:
    """The :data:`N` numbers 1 … N in float64 as a ``"jax"`` or ``"torch"`` array."""
    module = importlib.import_module("jax.numpy" if kind == "jax" else "torch")
    return module.asarray(np.arange(1.0, N + 1.0))


def check(fn: Callable, kind: str = "jax") -> float:
    """Largest error of ``fn`` on :func:`numbers` of ``kind`` against 2x."""
    return float(np.max(np.abs(np.asarray(fn(numbers(kind))) - 2.0 * np.arange(1.0, N + 1.0))))


def check_backward(backward: Callable, leaf: Any) -> float:
    """Largest error of :func:`torch_backward`'s forward (against 2x) and gradient (2)."""
    forward = check(lambda x: backward.forward(x).detach(), "torch")
    return max(forward, float(np.max(np.abs(backward(leaf).numpy() - 2.0))))
