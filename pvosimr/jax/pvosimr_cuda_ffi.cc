// XLA FFI handler (typed FFI, C++17) that launches one of pvosimr's CUDA kernels
// (pvosimr.codegen.cuda: pvosimr_G or pvosimr_vjp) on XLA's stream.
//
// No CUDA header: the driver's opaque types are declared below and the driver's functions
// are attributes (`driver`: the addresses of cuLaunchKernel, cuMemcpyDtoHAsync_v2,
// cuStreamSynchronize and cuGetErrorName), as is the kernel (`functions`: its CUfunction in
// each GPU's primary context, by device ordinal; pvosimr/jax/cuda.py loads the module).
// Inputs: qs (nq, B), configurations fastest in memory; for the gradient, the weights
// (m·m, B) too.  Outputs: the kernel's (n_out, B) and its status (B,) int32.  `sizes` is
// (nq, n_w, n_out), n_w 0 for G.  The kernel checks each configuration; the handler copies
// the status back (after the kernel, on the stream) and turns the first nonzero one into an
// error naming the row and the words of its code: never a wrong output.
// `failure_words(code)`, the words of the failure codes, is written by pvosimr/jax/ffi.py from
// pvosimr.codegen.contract.FAILURE_WORDS and put before this text when the handler is built.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

typedef struct CUstream_st* cudaStream_t;  // CUstream, the same type
typedef struct CUfunc_st* CUfunction;

namespace {

using Launch = int (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, cudaStream_t, void**, void**);
using CopyToHost = int (*)(void*, unsigned long long, size_t, cudaStream_t);
using Synchronize = int (*)(cudaStream_t);
using ErrorName = int (*)(int, const char**);

struct Driver {
  Launch launch;
  CopyToHost copy_to_host;
  Synchronize synchronize;
  ErrorName error_name;
};

ffi::Error driver_error(const Driver& driver, int rc, const std::string& doing) {
  const char* name = nullptr;
  if (driver.error_name(rc, &name) != 0 || name == nullptr) name = "an unknown error";
  return ffi::Error::Internal("pvosimr: the CUDA driver failed " + doing + ": " + name);
}

bool is_float(ffi::DataType type) {
  return type == ffi::DataType::F32 || type == ffi::DataType::F64;
}

// Whether `buffer` is (rows, B) of `type`.
bool has_shape(const ffi::AnyBuffer& buffer, int64_t rows, int64_t B, ffi::DataType type) {
  const auto dims = buffer.dimensions();
  return buffer.element_type() == type && dims.size() == 2 && dims[0] == rows && dims[1] == B;
}

ffi::Error Run(cudaStream_t stream, int32_t device, ffi::RemainingArgs args,
               ffi::Result<ffi::AnyBuffer> out, ffi::Result<ffi::Buffer<ffi::S32>> status,
               ffi::Span<const int64_t> functions, ffi::Span<const int64_t> driver_at,
               ffi::Span<const int64_t> sizes, int64_t block) {
  if (driver_at.size() != 4 || sizes.size() != 3 || block <= 0) {
    return ffi::Error::InvalidArgument("pvosimr: malformed attributes of the CUDA handler");
  }
  const Driver driver{reinterpret_cast<Launch>(driver_at[0]),
                      reinterpret_cast<CopyToHost>(driver_at[1]),
                      reinterpret_cast<Synchronize>(driver_at[2]),
                      reinterpret_cast<ErrorName>(driver_at[3])};
  const int64_t nq = sizes[0], n_w = sizes[1], n_out = sizes[2];
  const size_t n_args = n_w ? 2 : 1;
  if (args.size() != n_args) {
    return ffi::Error::InvalidArgument("pvosimr: the CUDA kernel takes " +
                                       std::to_string(n_args) + " inputs, not " +
                                       std::to_string(args.size()));
  }
  auto q = args.get<ffi::AnyBuffer>(0);
  if (q.has_error()) return q.error();
  const ffi::DataType type = q->element_type();
  const int64_t B = status->element_count();
  if (!is_float(type) || !has_shape(*q, nq, B, type) || !has_shape(*out, n_out, B, type)) {
    return ffi::Error::InvalidArgument(
        "pvosimr: the CUDA kernel takes q (nq, B) and gives (n_out, B), float32 or float64");
  }
  void* w = nullptr;
  if (n_w) {
    auto wb = args.get<ffi::AnyBuffer>(1);
    if (wb.has_error()) return wb.error();
    if (!has_shape(*wb, n_w, B, type)) {
      return ffi::Error::InvalidArgument("pvosimr: the weights must be (m·m, B), as q's dtype");
    }
    w = wb->untyped_data();
  }
  if (B == 0) return ffi::Error::Success();
  if (device < 0 || static_cast<size_t>(device) >= functions.size() || !functions[device]) {
    return ffi::Error::Internal("pvosimr: the CUDA kernel is not loaded on GPU " +
                                          std::to_string(device));
  }
  const CUfunction function = reinterpret_cast<CUfunction>(functions[device]);
  // The kernel's parameters: qs, p (none: the placements are fixed), [ws,] outs, status, B.
  void* qs = q->untyped_data();
  void* p = nullptr;
  void* outs = out->untyped_data();
  void* codes = status->typed_data();
  long long rows = B;
  std::vector<void*> params{&qs, &p};
  if (n_w) params.push_back(&w);
  params.insert(params.end(), {&outs, &codes, &rows});
  const int64_t grid = (B + block - 1) / block;
  int rc = driver.launch(function, static_cast<unsigned>(grid), 1, 1,
                         static_cast<unsigned>(block), 1, 1, 0, stream, params.data(), nullptr);
  if (rc != 0) {
    return driver_error(driver, rc, "launching the kernel on " + std::to_string(B) +
                                        " configurations");
  }
  // The status back to the host, after the kernel on the same stream.
  std::vector<int32_t> host(B);
  rc = driver.copy_to_host(host.data(), reinterpret_cast<unsigned long long>(codes),
                           sizeof(int32_t) * B, stream);
  if (rc != 0) return driver_error(driver, rc, "copying the kernel's status to the host");
  rc = driver.synchronize(stream);
  if (rc != 0) return driver_error(driver, rc, "waiting for the kernel");
  for (int64_t b = 0; b < B; ++b) {
    if (host[b] != 0) {
      return ffi::Error::InvalidArgument("pvosimr: at row " + std::to_string(b) +
                                         " of the batch: " + failure_words(host[b]));
    }
  }
  return ffi::Error::Success();
}

ffi::Error OnStream(cudaStream_t stream, int32_t device, ffi::RemainingArgs args,
                    ffi::Result<ffi::AnyBuffer> out, ffi::Result<ffi::Buffer<ffi::S32>> status,
                    ffi::Span<const int64_t> functions, ffi::Span<const int64_t> driver,
                    ffi::Span<const int64_t> sizes, int64_t block) {
  return Run(stream, device, args, out, status, functions, driver, sizes, block);
}

// The same handler without a stream or a device (null, GPU 0), to be registered for XLA's CPU:
// how the tests run its argument handling with a host double of the driver.
ffi::Error OnHost(ffi::RemainingArgs args, ffi::Result<ffi::AnyBuffer> out,
                  ffi::Result<ffi::Buffer<ffi::S32>> status, ffi::Span<const int64_t> functions,
                  ffi::Span<const int64_t> driver, ffi::Span<const int64_t> sizes,
                  int64_t block) {
  return Run(nullptr, 0, args, out, status, functions, driver, sizes, block);
}

// The operands and attributes both handlers take, after the stream's context where it has one.
template <typename Binding>
auto Operands(Binding binding) {
  return std::move(binding)
      .RemainingArgs()
      .template Ret<ffi::AnyBuffer>()
      .template Ret<ffi::Buffer<ffi::S32>>()
      .template Attr<ffi::Span<const int64_t>>("functions")
      .template Attr<ffi::Span<const int64_t>>("driver")
      .template Attr<ffi::Span<const int64_t>>("sizes")
      .template Attr<int64_t>("block");
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(PvosimrCuda, OnStream,
                              Operands(ffi::Ffi::Bind()
                                           .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                           .Ctx<ffi::DeviceOrdinal>()));

XLA_FFI_DEFINE_HANDLER_SYMBOL(PvosimrCudaOnHost, OnHost, Operands(ffi::Ffi::Bind()));
