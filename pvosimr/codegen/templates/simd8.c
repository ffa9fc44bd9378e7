typedef __m512d pv_t;
typedef __mmask8 pv_mask;
static inline pv_t pv_splat(double x) { return _mm512_set1_pd(x); }
static inline pv_t pv_sqrt(pv_t x) { return _mm512_sqrt_pd(x); }
static inline pv_t pv_fabs(pv_t x) { return _mm512_abs_pd(x); }
static inline pv_t pv_floor(pv_t x) { return _mm512_roundscale_pd(x, _MM_FROUND_TO_NEG_INF); }
#define pv_cmp(x, c, op) _mm512_cmp_pd_mask((x), pv_splat(c), (op))
static inline pv_mask pv_or(pv_mask a, pv_mask b) { return (pv_mask)(a | b); }
static inline pv_mask pv_xor(pv_mask a, pv_mask b) { return (pv_mask)(a ^ b); }
static inline pv_t pv_blend(pv_t a, pv_t b, pv_mask m) { return _mm512_mask_blend_pd(m, a, b); }
static inline pv_t pv_flip(pv_t x, pv_mask m) {
  return _mm512_castsi512_pd(_mm512_mask_xor_epi64(_mm512_castpd_si512(x), m,
      _mm512_castpd_si512(x), _mm512_set1_epi64((long long)0x8000000000000000ULL)));
}
static inline int pv_all(pv_mask m) { return m == 0xFF; }
static inline int pv_nonfinite(pv_t x) {  /* x - x is 0 exactly where x is finite */
  return _mm512_cmp_pd_mask(x - x, pv_splat(0.0), _CMP_NEQ_UQ) != 0;
}
static inline void pv_store(double* v, pv_t x) { _mm512_storeu_pd(v, x); }
static inline pv_t pv_load(const double* v) { return _mm512_loadu_pd(v); }
/* a[j] holds entry j of the 8 rows, one per lane: row k's 8 entries to out + k * stride.
   An 8 x 8 transpose: t[2j] and t[2j + 1] pair entries 2j and 2j + 1 of the even and of the
   odd lanes; u[4j..4j + 3] hold entries 4j to 4j + 3 of lanes 0 and 4, 2 and 6, 1 and 5,
   3 and 7; the last shuffles gather the 8 entries of one lane */
static inline void pv_store_rows(const pv_t* a, double* out, long long stride) {
  __m512d t[8], u[8];
  int j;
  for (j = 0; j < 4; ++j) {
    t[2 * j] = _mm512_unpacklo_pd(a[2 * j], a[2 * j + 1]);
    t[2 * j + 1] = _mm512_unpackhi_pd(a[2 * j], a[2 * j + 1]);
  }
  for (j = 0; j < 2; ++j) {
    u[4 * j] = _mm512_shuffle_f64x2(t[4 * j], t[4 * j + 2], 0x88);
    u[4 * j + 1] = _mm512_shuffle_f64x2(t[4 * j], t[4 * j + 2], 0xDD);
    u[4 * j + 2] = _mm512_shuffle_f64x2(t[4 * j + 1], t[4 * j + 3], 0x88);
    u[4 * j + 3] = _mm512_shuffle_f64x2(t[4 * j + 1], t[4 * j + 3], 0xDD);
  }
  _mm512_storeu_pd(out, _mm512_shuffle_f64x2(u[0], u[4], 0x88));
  _mm512_storeu_pd(out + 4 * stride, _mm512_shuffle_f64x2(u[0], u[4], 0xDD));
  _mm512_storeu_pd(out + 2 * stride, _mm512_shuffle_f64x2(u[1], u[5], 0x88));
  _mm512_storeu_pd(out + 6 * stride, _mm512_shuffle_f64x2(u[1], u[5], 0xDD));
  _mm512_storeu_pd(out + stride, _mm512_shuffle_f64x2(u[2], u[6], 0x88));
  _mm512_storeu_pd(out + 5 * stride, _mm512_shuffle_f64x2(u[2], u[6], 0xDD));
  _mm512_storeu_pd(out + 3 * stride, _mm512_shuffle_f64x2(u[3], u[7], 0x88));
  _mm512_storeu_pd(out + 7 * stride, _mm512_shuffle_f64x2(u[3], u[7], 0xDD));
}
