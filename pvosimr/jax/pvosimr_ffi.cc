// XLA FFI handler (typed FFI, C++17) around a pvosimr library's batch entry point.
//
// One handler serves every library: the address of the library's pvosimr_eval_batch is an
// attribute (`entry`), so a call is one batched call into C on the library's own threads.
// Inputs: q (..., nq); with has_p, the placements p (..., n_p); with a weight input, W
// (..., m, m) last, with q's leading dimensions (vmap's "broadcast_all" gives every input the
// batch's); runs of rows sharing one p become one call (the C takes one p for all its rows).
// Output: G (..., m, m) or the gradient (..., nv), written as the library writes it.
// A failing row is an error naming the row and the library's verdict: never a wrong output.
#include <cstdint>
#include <cstring>
#include <string>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

using Batch = int (*)(const double*, long long, const double*, double*, int, int, long long*);
using BatchW = int (*)(const double*, long long, const double*, const double*, long long, double*,
                       int, int, long long*);

// The codes of pvosimr/codegen/c_source.py.
const char* verdict(int rc) {
  switch (rc) {
    case 1:
      return "q is not finite or beyond the model's range (after its quaternions and unit "
             "complex pairs are normalised)";
    case 2:
      return "G or its gradient is not finite: the mass matrix is singular there or precision "
             "was lost (pvosimr.compute_delassus at that q says why)";
    case 3:
      return "the generated function reported a failure";
    case 4:
      return "no memory for the work arrays";
    case 5:
      return "the cotangent W is not finite";
    default:
      return "unknown failure";
  }
}

int64_t last_dim(ffi::AnyBuffer::Dimensions dims) { return dims.size() ? dims.back() : 1; }

ffi::Error Eval(ffi::RemainingArgs args, ffi::Result<ffi::AnyBuffer> out, int64_t entry,
                int64_t has_p, int64_t threads) {
  auto q = args.get<ffi::AnyBuffer>(0);
  if (q.has_error()) return q.error();
  const size_t n_args = args.size();
  const bool with_w = n_args == static_cast<size_t>(2 + has_p);
  const int64_t nq = last_dim(q->dimensions());
  const int64_t B = nq ? static_cast<int64_t>(q->element_count()) / nq : 0;
  const double* qs = static_cast<const double*>(q->untyped_data());
  const double* p = nullptr;
  int64_t n_p = 0, p_rows = 1;
  if (has_p) {
    auto pb = args.get<ffi::AnyBuffer>(1);
    if (pb.has_error()) return pb.error();
    p = static_cast<const double*>(pb->untyped_data());
    n_p = last_dim(pb->dimensions());
    p_rows = n_p ? static_cast<int64_t>(pb->element_count()) / n_p : 1;
  }
  const double* W = nullptr;
  int64_t n_w = 0;
  if (with_w) {  // one W per row of q (vmap broadcasts every input to the batch)
    auto wb = args.get<ffi::AnyBuffer>(n_args - 1);
    if (wb.has_error()) return wb.error();
    W = static_cast<const double*>(wb->untyped_data());
    n_w = B ? static_cast<int64_t>(wb->element_count()) / B : 0;
  }
  double* o = static_cast<double*>(out->untyped_data());
  const int64_t n_out = B ? static_cast<int64_t>(out->element_count()) / B : 0;
  if (B == 0) return ffi::Error::Success();
  if (p_rows != 1 && p_rows != B) {
    return ffi::Error::InvalidArgument("pvosimr: placements must have one row or one per q");
  }
  int64_t start = 0;
  while (start < B) {
    // The run of rows from `start` that share one p.
    int64_t stop = B;
    const double* p_row = p_rows == 1 ? p : p + start * n_p;
    if (p_rows != 1) {
      stop = start + 1;
      while (stop < B && std::memcmp(p + stop * n_p, p_row, sizeof(double) * n_p) == 0) ++stop;
    }
    long long bad = -1;
    int rc;
    if (with_w) {
      rc = reinterpret_cast<BatchW>(entry)(qs + start * nq, stop - start, p_row,
                                           W + start * n_w, n_w, o + start * n_out,
                                           static_cast<int>(threads), 1, &bad);
    } else {
      rc = reinterpret_cast<Batch>(entry)(qs + start * nq, stop - start, p_row,
                                          o + start * n_out, static_cast<int>(threads), 1, &bad);
    }
    if (rc != 0) {
      return ffi::Error::InvalidArgument("pvosimr: at row " + std::to_string(start + bad) +
                                         " of the batch: " + verdict(rc));
    }
    start = stop;
  }
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(PvosimrEval, Eval,
                              ffi::Ffi::Bind()
                                  .RemainingArgs()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<int64_t>("entry")
                                  .Attr<int64_t>("has_p")
                                  .Attr<int64_t>("threads"));
