#if defined(__x86_64__) || defined(__SSE2__)
#include <xmmintrin.h>
/* Subnormal numbers flushed to zero (FTZ and DAZ) while the function runs, the caller's mode
   restored after: on long chains the coupling between far-apart constraints underflows, and
   x86 computes on subnormal numbers many times slower.  An entry changes by less than the
   smallest normal double, 2.2e-308. */
#define PVOSIMR_FLUSH_BEGIN const unsigned int pvosimr_csr = _mm_getcsr(); \
  _mm_setcsr(pvosimr_csr | 0x8040u);
#define PVOSIMR_FLUSH_END _mm_setcsr(pvosimr_csr);
#else
#define PVOSIMR_FLUSH_BEGIN
#define PVOSIMR_FLUSH_END
#endif
