#include <pinocchio/multibody.hpp>
#include <pinocchio/algorithm/delassus.hpp>
#include <pinocchio/serialization.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <dlfcn.h>
#include "@NAME@.h"

using namespace pinocchio;
typedef int (*eval_t)(const double*, const double*, double*, double*, long long*, int);
static double w[@UP@_SZ_W], w2[@UP@_SZ_W];
static long long iw[@UP@_SZ_IW], iw2[@UP@_SZ_IW];

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* argv: model.txt qs.bin B libpython python_library rounds seconds_per_round */
int main(int argc, char** argv) {
  if (argc < 8) return 9;
  Model model;
  model.loadFromText(argv[1]);
  Data data(model);
  std::vector<RigidConstraintModel> cms;
@CONSTRAINTS@
  std::vector<RigidConstraintData> cds;
  for (const auto& c : cms) cds.push_back(RigidConstraintData(c));
  const long B = std::atol(argv[3]);
  std::vector<double> qs(B * @UP@_NQ);
  FILE* f = std::fopen(argv[2], "rb");
  if (!f || std::fread(qs.data(), sizeof(double), qs.size(), f) != qs.size()) return 8;
  std::fclose(f);
  if (!dlopen(argv[4], RTLD_NOW | RTLD_GLOBAL)) { std::printf("error %s\n", dlerror()); return 7; }
  void* lib = dlopen(argv[5], RTLD_NOW | RTLD_LOCAL);
  eval_t py = lib ? (eval_t)dlsym(lib, "pvosimr_eval") : nullptr;
  if (!py) { std::printf("error %s\n", dlerror()); return 6; }
  const int rounds = std::atoi(argv[6]);
  const double budget = std::atof(argv[7]);
  Eigen::MatrixXd D(@UP@_M, @UP@_M), G(@UP@_M, @UP@_M), P(@UP@_M, @UP@_M);
  double worst = 0;
  long same = 0;
  for (long b = 0; b < B; ++b) {
    Eigen::Map<const Eigen::VectorXd> q(qs.data() + b * @UP@_NQ, @UP@_NQ);
    D.setZero();
    computeDelassusMatrix(model, data, q, cms, cds, D, 0.0);
    /* it fills the upper triangle: the lower is its mirror (what pin's Python binding does) */
    D.triangularView<Eigen::StrictlyLower>() = D.transpose();
    if (@NAME@_eval(q.data(), nullptr, G.data(), w, iw) != 0) return 5;
    if (py(q.data(), nullptr, P.data(), w2, iw2, 1) != 0) return 4;
    worst = std::max(worst, (G - D).cwiseAbs().maxCoeff() / std::max(1.0, D.cwiseAbs().maxCoeff()));
    same += std::equal(G.data(), G.data() + G.size(), P.data());
  }
  std::printf("agreement %.3e\nbitwise %ld %ld\n", worst, same, B);
  std::vector<double> t[3];
  volatile double sink = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < 3; ++k) {
      const int method = (k + r) % 3;  /* the order rotates: no method always runs first */
      long calls = 0;
      const double start = now();
      double stop;
      do {
        for (long b = 0; b < B; ++b) {
          const double* q = qs.data() + b * @UP@_NQ;
          if (method == 0) @NAME@_eval(q, nullptr, G.data(), w, iw);
          else if (method == 1) py(q, nullptr, G.data(), w2, iw2, 1);
          else computeDelassusMatrix(model, data, Eigen::Map<const Eigen::VectorXd>(q, @UP@_NQ),
                                     cms, cds, D, 0.0);
          sink += method == 2 ? D(0, 0) : G(0, 0);
        }
        calls += B;
        stop = now();
      } while (stop - start < budget);
      t[method].push_back((stop - start) / calls * 1e9);
    }
  }
  const char* names[3] = {"exported", "python_library", "pinocchio"};
  for (int k = 0; k < 3; ++k) {
    std::sort(t[k].begin(), t[k].end());
    std::printf("%s %.1f %.1f %.1f\n", names[k], t[k][t[k].size() / 2], t[k].front(),
                t[k].back());
  }
  return 0;
}
