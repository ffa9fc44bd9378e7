
static double pvosimr_divisor(const casadi_real* u, long long length, double tolerance) {
  double squared = 0.0;
  long long k;
  for (k = 0; k < length; ++k) squared += u[k] * u[k];
  return fabs(squared - 1.0) <= tolerance ? 1.0 : sqrt(squared);
}

CASADI_SYMBOL_EXPORT void pvosimr_to_coordinates(const long long* plan, long long B,
                                                 const casadi_real* qs,
                                                 const casadi_real* q_hats,
                                                 const casadi_real* gs, casadi_real* outs,
                                                 double tolerance) {
  /* plan: nq, nv, then sections of a count and its records: identity (row, column),
     quaternions (x y z w rows, 3 columns), se3 (3 rows, 3 columns, the quaternion's rows),
     complexes (cos and sin rows, a column), se2 (2 rows, 2 columns, the angle's 2 rows),
     unit parts (start, length) */
  static const int width[6] = {2, 7, 10, 3, 6, 2};
  const long long nq = plan[0], nv = plan[1];
  const long long* section[6];
  long long count[6], b, k, i;
  const long long* at = plan + 2;
  for (k = 0; k < 6; ++k) {
    count[k] = *at++;
    section[k] = at;
    at += count[k] * width[k];
  }
  for (b = 0; b < B; ++b) {
    const casadi_real* q = qs + b * nq;
    const casadi_real* q_hat = q_hats + b * nq;
    const casadi_real* g = gs + b * nv;
    casadi_real* out = outs + b * nq;
    const long long* e;
    for (i = 0; i < nq; ++i) out[i] = 0.0;
    for (k = 0, e = section[0]; k < count[0]; ++k, e += 2) out[e[0]] = g[e[1]];
    /* 4 T_Q g = 2 [w 1 + v× ; -v^T] g */
    for (k = 0, e = section[1]; k < count[1]; ++k, e += 7) {
      const double x = q_hat[e[0]], y = q_hat[e[1]], z = q_hat[e[2]], w = q_hat[e[3]];
      const double u = g[e[4]], v = g[e[5]], t = g[e[6]];
      out[e[0]] = 2.0 * (w * u - z * v + y * t);
      out[e[1]] = 2.0 * (z * u + w * v - x * t);
      out[e[2]] = 2.0 * (-y * u + x * v + w * t);
      out[e[3]] = 2.0 * (-x * u - y * v - z * t);
    }
    /* the translation: R(Q) g */
    for (k = 0, e = section[2]; k < count[2]; ++k, e += 10) {
      const double x = q_hat[e[6]], y = q_hat[e[7]], z = q_hat[e[8]], w = q_hat[e[9]];
      const double u = g[e[3]], v = g[e[4]], t = g[e[5]];
      const double xx = 2 * x * x, yy = 2 * y * y, zz = 2 * z * z;
      const double xy = 2 * x * y, xz = 2 * x * z, yz = 2 * y * z;
      const double xw = 2 * x * w, yw = 2 * y * w, zw = 2 * z * w;
      out[e[0]] = (1 - yy - zz) * u + (xy - zw) * v + (xz + yw) * t;
      out[e[1]] = (xy + zw) * u + (1 - xx - zz) * v + (yz - xw) * t;
      out[e[2]] = (xz - yw) * u + (yz + xw) * v + (1 - xx - yy) * t;
    }
    /* (cos, sin) turned: (-sin, cos) g */
    for (k = 0, e = section[3]; k < count[3]; ++k, e += 3) {
      out[e[0]] = -q_hat[e[1]] * g[e[2]];
      out[e[1]] = q_hat[e[0]] * g[e[2]];
    }
    /* the planar translation: R(theta) g */
    for (k = 0, e = section[4]; k < count[4]; ++k, e += 6) {
      const double c = q_hat[e[4]], s = q_hat[e[5]], u = g[e[2]], v = g[e[3]];
      out[e[0]] = c * u - s * v;
      out[e[1]] = s * u + c * v;
    }
    for (k = 0, e = section[5]; k < count[5]; ++k, e += 2) {
      const double d = pvosimr_divisor(q + e[0], e[1], tolerance);
      for (i = 0; i < e[1]; ++i) out[e[0] + i] /= d;
    }
  }
}
