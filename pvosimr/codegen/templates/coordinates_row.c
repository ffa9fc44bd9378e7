
/* The tangent gradient g (nv numbers) of one configuration in q's coordinates (nq numbers):
   T (T^T T)^-1 g at q_hat = N(q), each unit part's rows then divided by that part's norm in q
   (1 where its squared norm is within tolerance of 1).  Entry i of q and out at [i * stride],
   of q_hat and g at [i] (q_hat is read at the unit parts only).  plan: nq, nv, then sections
   of a count and its records: identity (row, column), quaternions (x y z w rows, 3 columns),
   se3 (3 rows, 3 columns, the quaternion's rows), complexes (cos and sin rows, a column), se2
   (2 rows, 2 columns, the angle's 2 rows), unit parts (start, length).  Also a CUDA kernel's
   (pvosimr.codegen.cuda_source, PVOSIMR_DEVICE __device__): one map for every route. */
#ifndef PVOSIMR_DEVICE
#define PVOSIMR_DEVICE
#endif
static PVOSIMR_DEVICE void pvosimr_coordinates_row(const long long* plan, const casadi_real* q,
                                                   const casadi_real* q_hat,
                                                   const casadi_real* g, casadi_real* out,
                                                   long long stride, double tolerance) {
  const int width[6] = {2, 7, 10, 3, 6, 2};
  const long long nq = plan[0];
  const long long* section[6];
  long long count[6], k, i;
  const long long* at = plan + 2;
  const long long* e;
  for (k = 0; k < 6; ++k) {
    count[k] = *at++;
    section[k] = at;
    at += count[k] * width[k];
  }
#define PV_AT(i) out[(i) * stride]
  for (i = 0; i < nq; ++i) PV_AT(i) = 0.0;
  for (k = 0, e = section[0]; k < count[0]; ++k, e += 2) PV_AT(e[0]) = g[e[1]];
  /* 4 T_Q g = 2 [w 1 + v× ; -v^T] g */
  for (k = 0, e = section[1]; k < count[1]; ++k, e += 7) {
    const double x = q_hat[e[0]], y = q_hat[e[1]], z = q_hat[e[2]], w = q_hat[e[3]];
    const double u = g[e[4]], v = g[e[5]], t = g[e[6]];
    PV_AT(e[0]) = 2.0 * (w * u - z * v + y * t);
    PV_AT(e[1]) = 2.0 * (z * u + w * v - x * t);
    PV_AT(e[2]) = 2.0 * (-y * u + x * v + w * t);
    PV_AT(e[3]) = 2.0 * (-x * u - y * v - z * t);
  }
  /* the translation: R(Q) g */
  for (k = 0, e = section[2]; k < count[2]; ++k, e += 10) {
    const double x = q_hat[e[6]], y = q_hat[e[7]], z = q_hat[e[8]], w = q_hat[e[9]];
    const double u = g[e[3]], v = g[e[4]], t = g[e[5]];
    const double xx = 2 * x * x, yy = 2 * y * y, zz = 2 * z * z;
    const double xy = 2 * x * y, xz = 2 * x * z, yz = 2 * y * z;
    const double xw = 2 * x * w, yw = 2 * y * w, zw = 2 * z * w;
    PV_AT(e[0]) = (1 - yy - zz) * u + (xy - zw) * v + (xz + yw) * t;
    PV_AT(e[1]) = (xy + zw) * u + (1 - xx - zz) * v + (yz - xw) * t;
    PV_AT(e[2]) = (xz - yw) * u + (yz + xw) * v + (1 - xx - yy) * t;
  }
  /* (cos, sin) turned: (-sin, cos) g */
  for (k = 0, e = section[3]; k < count[3]; ++k, e += 3) {
    PV_AT(e[0]) = -q_hat[e[1]] * g[e[2]];
    PV_AT(e[1]) = q_hat[e[0]] * g[e[2]];
  }
  /* the planar translation: R(theta) g */
  for (k = 0, e = section[4]; k < count[4]; ++k, e += 6) {
    const double c = q_hat[e[4]], s = q_hat[e[5]], u = g[e[2]], v = g[e[3]];
    PV_AT(e[0]) = c * u - s * v;
    PV_AT(e[1]) = s * u + c * v;
  }
  /* each unit part's rows divided by its norm in q, its squared norm summed in index order */
  for (k = 0, e = section[5]; k < count[5]; ++k, e += 2) {
    double squared = 0.0, d;
    for (i = e[0]; i < e[0] + e[1]; ++i) squared += (double)q[i * stride] * q[i * stride];
    d = fabs(squared - 1.0) <= tolerance ? 1.0 : sqrt(squared);
    for (i = e[0]; i < e[0] + e[1]; ++i) PV_AT(i) /= d;
  }
#undef PV_AT
}
