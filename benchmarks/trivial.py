"""The B = 1 overhead baselines: a trivial jitted XLA FFI call, a trivial torch custom op, and
the same C through torch's autograd, forward and backward.

Both double 8 float64 numbers in C++: :data:`SOURCE` holds an XLA FFI handler (built with the
C++ compiler against the installed jaxlib's headers, ``jax.ffi.include_dir()``, loaded with
ctypes and registered through ``jax.ffi.pycapsule``) and a plain C function that the torch
custom op calls through ctypes. What JAX or torch takes to dispatch such a call is the cost that
any foreign function pays on top of its own work, and the bench's B = 1 targets allow it.

The library is built once per jaxlib and compiler into pvosimr's cache folder (``bench/``).
jax and torch are imported only by the functions that use them.
"""

from __future__ import annotations

import ctypes
import hashlib
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np

from pvosimr.codegen import compiler as toolchain

__all__ = ["SOURCE", "N", "build", "check", "jax_double", "torch_double", "torch_double_autograd"]

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
"""The C++ of both trivial calls (the handler works on any shape, so it also runs under vmap)."""


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
    done = subprocess.run(
        [*compiler, *flags, str(source), "-o", str(partial)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"building the trivial FFI call failed:\n{done.stderr.strip()}")
    partial.replace(library)  # atomic: a concurrent run never loads half a file
    return library


_LOADED: dict[str, ctypes.CDLL] = {}


def _library(cache: Path | None) -> ctypes.CDLL:
    path = str(build(cache))
    if path not in _LOADED:
        _LOADED[path] = ctypes.CDLL(path)
    return _LOADED[path]


def jax_double(cache: Path | None = None) -> Callable:
    """``jax.jit`` of the FFI call that returns 2x (float64, any shape; works under vmap)."""
    import jax
    import jax.ffi

    library = _library(cache)
    if FFI_TARGET not in _LOADED:
        jax.ffi.register_ffi_target(
            FFI_TARGET, jax.ffi.pycapsule(library.pvosimr_bench_double), platform="cpu"
        )
        _LOADED[FFI_TARGET] = library

    def double(x):
        out = jax.ShapeDtypeStruct(x.shape, x.dtype)
        return jax.ffi.ffi_call(FFI_TARGET, out, vmap_method="broadcast_all")(x)

    return jax.jit(double)


def torch_double(cache: Path | None = None) -> Callable:
    """A ``torch.library`` custom op that returns 2x through ctypes (float64, CPU, contiguous)."""
    import torch

    function = _library(cache).pvosimr_bench_double_c
    function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    function.restype = None
    if TORCH_OP not in _LOADED:

        @torch.library.custom_op(TORCH_OP, mutates_args=(), schema="(Tensor x) -> Tensor")
        def double(x: torch.Tensor) -> torch.Tensor:
            x = x.contiguous()
            out = torch.empty_like(x)
            function(x.data_ptr(), out.data_ptr(), x.numel())
            return out

        @double.register_fake
        def _(x: torch.Tensor) -> torch.Tensor:
            return torch.empty_like(x)

        _LOADED[TORCH_OP] = double  # type: ignore[assignment]
    return _LOADED[TORCH_OP]


def torch_double_autograd(cache: Path | None = None) -> Callable:
    """2x through ctypes as a ``torch.autograd.Function`` (float64, CPU, contiguous), its
    backward 2x of the cotangent the same way: what torch's autograd itself costs a foreign
    function, forward and backward (pvosimr.torch's eager calls with a gradient take this
    route)."""
    import torch

    function = _library(cache).pvosimr_bench_double_c
    function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    function.restype = None

    def double(x: torch.Tensor) -> torch.Tensor:
        x = x.detach().contiguous()
        out = torch.empty_like(x)
        function(x.data_ptr(), out.data_ptr(), x.numel())
        return out

    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x: torch.Tensor) -> torch.Tensor:
            return double(x)

        @staticmethod
        def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
            return double(grad)

    return Double.apply


def check(fn: Callable, wrap: Callable = lambda x: x) -> float:
    """Largest error of ``fn`` (a trivial call, on ``wrap`` of a numpy array) against 2x on
    :data:`N` numbers."""
    x = np.arange(1.0, N + 1.0)
    return float(np.max(np.abs(np.asarray(fn(wrap(x))) - 2.0 * x)))
