typedef __m256d pv_t;
typedef __m256d pv_mask;
static inline pv_t pv_splat(double x) { return _mm256_set1_pd(x); }
static inline pv_t pv_sqrt(pv_t x) { return _mm256_sqrt_pd(x); }
static inline pv_t pv_fabs(pv_t x) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x); }
static inline pv_t pv_floor(pv_t x) { return _mm256_floor_pd(x); }
#define pv_cmp(x, c, op) _mm256_cmp_pd((x), pv_splat(c), (op))
static inline pv_mask pv_or(pv_mask a, pv_mask b) { return _mm256_or_pd(a, b); }
static inline pv_mask pv_xor(pv_mask a, pv_mask b) { return _mm256_xor_pd(a, b); }
static inline pv_t pv_blend(pv_t a, pv_t b, pv_mask m) { return _mm256_blendv_pd(a, b, m); }
static inline pv_t pv_flip(pv_t x, pv_mask m) {
  return _mm256_xor_pd(x, _mm256_and_pd(m, _mm256_set1_pd(-0.0)));
}
static inline int pv_all(pv_mask m) { return _mm256_movemask_pd(m) == 15; }
static inline int pv_nonfinite(pv_t x) {  /* x - x is 0 exactly where x is finite */
  return _mm256_movemask_pd(_mm256_cmp_pd(x - x, pv_splat(0.0), _CMP_NEQ_UQ));
}
static inline void pv_store(double* v, pv_t x) { _mm256_storeu_pd(v, x); }
static inline pv_t pv_load(const double* v) { return _mm256_loadu_pd(v); }
/* a[j] holds entry j of the 4 rows, one per lane: row k's 4 entries to out + k * stride */
static inline void pv_store_rows(const pv_t* a, double* out, long long stride) {
  const __m256d t0 = _mm256_unpacklo_pd(a[0], a[1]), t1 = _mm256_unpackhi_pd(a[0], a[1]);
  const __m256d t2 = _mm256_unpacklo_pd(a[2], a[3]), t3 = _mm256_unpackhi_pd(a[2], a[3]);
  _mm256_storeu_pd(out, _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(out + stride, _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(out + 2 * stride, _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(out + 3 * stride, _mm256_permute2f128_pd(t1, t3, 0x31));
}
