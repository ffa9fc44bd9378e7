
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
