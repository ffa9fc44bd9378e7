
CASADI_SYMBOL_EXPORT void pvosimr_to_coordinates(const long long* plan, long long B,
                                                 const casadi_real* qs,
                                                 const casadi_real* q_hats,
                                                 const casadi_real* gs, casadi_real* outs,
                                                 double tolerance) {
  const long long nq = plan[0], nv = plan[1];
  long long b;
  for (b = 0; b < B; ++b) {
    pvosimr_coordinates_row(plan, qs + b * nq, q_hats + b * nq, gs + b * nv, outs + b * nq, 1,
                            tolerance);
  }
}
