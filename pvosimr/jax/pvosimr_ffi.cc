// XLA FFI handler (typed FFI, C++17) around a pvosimr library's batch entry point.
//
// One handler serves every library: the address of the library's pvosimr_eval_batch is an
// attribute (`entry`), so a call is one batched call into C on the library's own threads.
// Inputs: q (..., nq); with has_p, the placements p (..., n_p); with a weight input, W last:
// (m, m) for every row, or (..., m, m) with q's leading dimensions (vmap's "broadcast_all"
// gives every input the batch's; pvosimr.jax passes a W that every row shares once).  Runs of
// rows sharing one p become one call (the C takes one p for all its rows).
// `plan` is pvosimr.coordinates.CoordinatePlan.packed(): where q's unit parts and each
// joint's coordinates are.  q's unit parts follow the unit-part rule first, by the library's
// own pvosimr_normalize (address `normalize`; in a copy, q as given when no part changes):
// G is G(N(q)), at any non-zero norm.
// Output: G (..., m, m); with W, the gradient of <W, G(N(q))> in q's coordinates (..., nq):
// the library's tangent gradient mapped by T (T^T T)^-1 at N(q), each unit part's rows divided
// by its norm (coordinates.tangent_to_coordinates, the chain rule of u/|u|), by the gradient
// library's own pvosimr_to_coordinates, whose address is the attribute `coordinates`.
// A failing row is an error naming the row and the words of the library's failure code: never a wrong output.
// `failure_words(code)`, the words of the library's failure codes, is written by pvosimr/jax/ffi.py
// from pvosimr.codegen.contract.FAILURE_WORDS and put before this text when the handler is built.
#include <cstdint>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

using Batch = int (*)(const double*, long long, const double*, double*, int, int, long long*);
using Single = int (*)(const double*, const double*, double*, double*, long long*, int);
using SingleW = int (*)(const double*, const double*, const double*, double*, double*, long long*,
                        int);
using BatchW = int (*)(const double*, long long, const double*, const double*, long long, double*,
                       int, int, long long*);
using Coordinates = void (*)(const long long*, long long, const double*, const double*,
                             const double*, double*, double);
using Normalize = int (*)(const double*, long long, double*);

int64_t last_dim(ffi::AnyBuffer::Dimensions dims) { return dims.size() ? dims.back() : 1; }

// A reader of CoordinatePlan.packed(): sections of a count and that many fixed-size records.
// The handler itself reads nq, nv and the unit parts; the whole plan goes to the library's map.
struct Section {
  const int64_t* at = nullptr;
  int64_t count = 0;
};

struct Plan {
  int64_t nq = 0, nv = 0;
  Section identity, quaternions, se3, complexes, se2, units;  // records of 2, 7, 10, 3, 6, 2

  static Plan read(ffi::Span<const int64_t> packed) {
    Plan plan;
    const int64_t* at = packed.begin();
    plan.nq = *at++;
    plan.nv = *at++;
    for (auto [section, width] : {std::pair{&plan.identity, 2}, {&plan.quaternions, 7},
                                  {&plan.se3, 10}, {&plan.complexes, 3}, {&plan.se2, 6},
                                  {&plan.units, 2}}) {
      section->count = *at++;
      section->at = at;
      at += section->count * width;
    }
    return plan;
  }
};

// Work arrays of this thread for single rows, grown to the largest library's sizes.
struct Work {
  std::vector<double> w, tangent;
  std::vector<long long> iw;
};
Work& thread_work(int64_t sz_w, int64_t sz_iw, int64_t nv) {
  thread_local Work work;
  if (static_cast<int64_t>(work.w.size()) < sz_w) work.w.resize(sz_w);
  if (static_cast<int64_t>(work.iw.size()) < sz_iw) work.iw.resize(sz_iw);
  if (static_cast<int64_t>(work.tangent.size()) < nv) work.tangent.resize(nv);
  return work;
}

ffi::Error Eval(ffi::RemainingArgs args, ffi::Result<ffi::AnyBuffer> out, int64_t entry,
                int64_t has_p, int64_t threads, ffi::Span<const int64_t> packed,
                double tolerance, int64_t single, ffi::Span<const int64_t> work_size,
                int64_t coordinates, int64_t normalize) {
  const Plan plan = Plan::read(packed);
  auto q = args.get<ffi::AnyBuffer>(0);
  if (q.has_error()) return q.error();
  const size_t n_args = args.size();
  const bool with_w = n_args == static_cast<size_t>(2 + has_p);
  const int64_t nq = last_dim(q->dimensions());
  if (nq != plan.nq) return ffi::Error::InvalidArgument("pvosimr: q's last axis is not nq");
  const int64_t B = nq ? static_cast<int64_t>(q->element_count()) / nq : 0;
  const double* given = static_cast<const double*>(q->untyped_data());
  // N(q) by the library's own pvosimr_normalize (the one rule): q itself where no part changed
  std::vector<double> copy(B * nq);
  const double* qs =
      B && reinterpret_cast<Normalize>(normalize)(given, B, copy.data()) ? copy.data() : given;
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
  int64_t w_stride = 0;  // 0: one W (m, m) for every row; else one W per row of q
  if (with_w) {
    auto wb = args.get<ffi::AnyBuffer>(n_args - 1);
    if (wb.has_error()) return wb.error();
    W = static_cast<const double*>(wb->untyped_data());
    const auto dims = wb->dimensions();
    const int64_t n_w = dims.size() < 2 ? 0 : dims[dims.size() - 1] * dims[dims.size() - 2];
    const int64_t w_rows = n_w ? static_cast<int64_t>(wb->element_count()) / n_w : 0;
    if (w_rows != 1 && w_rows != B) {
      return ffi::Error::InvalidArgument("pvosimr: W must be one (m, m) or one per q");
    }
    w_stride = w_rows == 1 ? 0 : n_w;
  }
  if (with_w && coordinates == 0) {
    return ffi::Error::InvalidArgument("pvosimr: a W input needs a gradient library's entry");
  }
  if (B == 0) return ffi::Error::Success();
  // The library's output: G in place, or the tangent gradient (B, nv) mapped below.  One row
  // (and one p) goes through the single entry point with this thread's work arrays.
  const bool one = B == 1 && single != 0;
  Work& work = one ? thread_work(work_size[0], work_size[1], with_w ? plan.nv : 0)
                   : thread_work(0, 0, 0);  // a batch: the library's own work arrays
  std::vector<double> tangent(with_w && !one ? B * plan.nv : 0);
  double* o = !with_w ? static_cast<double*>(out->untyped_data())
                      : (one ? work.tangent.data() : tangent.data());
  const int64_t n_out = with_w ? plan.nv : static_cast<int64_t>(out->element_count()) / B;
  if (p_rows != 1 && p_rows != B) {
    return ffi::Error::InvalidArgument("pvosimr: placements must have one row or one per q");
  }
  if (one) {
    const int rc = with_w ? reinterpret_cast<SingleW>(single)(qs, p, W, o, work.w.data(),
                                                              work.iw.data(), 1)
                          : reinterpret_cast<Single>(single)(qs, p, o, work.w.data(),
                                                             work.iw.data(), 1);
    if (rc != 0) {
      return ffi::Error::InvalidArgument(std::string("pvosimr: at row 0 of the batch: ") +
                                         failure_words(rc));
    }
    if (with_w) {
      reinterpret_cast<Coordinates>(coordinates)(
          reinterpret_cast<const long long*>(packed.begin()), 1, given, qs, o,
          static_cast<double*>(out->untyped_data()), tolerance);
    }
    return ffi::Error::Success();
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
                                           W + start * w_stride, w_stride, o + start * n_out,
                                           static_cast<int>(threads), 1, &bad);
    } else {
      rc = reinterpret_cast<Batch>(entry)(qs + start * nq, stop - start, p_row,
                                          o + start * n_out, static_cast<int>(threads), 1, &bad);
    }
    if (rc != 0) {
      return ffi::Error::InvalidArgument("pvosimr: at row " + std::to_string(start + bad) +
                                         " of the batch: " + failure_words(rc));
    }
    start = stop;
  }
  if (with_w) {
    reinterpret_cast<Coordinates>(coordinates)(
        reinterpret_cast<const long long*>(packed.begin()), B, given, qs, o,
        static_cast<double*>(out->untyped_data()), tolerance);
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
                                  .Attr<int64_t>("threads")
                                  .Attr<ffi::Span<const int64_t>>("plan")
                                  .Attr<double>("tolerance")
                                  .Attr<int64_t>("single")
                                  .Attr<ffi::Span<const int64_t>>("work_size")
                                  .Attr<int64_t>("coordinates")
                                  .Attr<int64_t>("normalize"));
