
/* Whether all n numbers of x are finite, read as integers: a double is infinite or NaN exactly
   where its 11 exponent bits are all ones, and only there does adding one to them carry into
   the sign bit.  Branch-free, two numbers to a 16-byte vector (a width every x86-64 and ARMv8
   CPU has): a large model's output holds tens of thousands of numbers, and a compare and
   branch for each is a visible part of the call. */
#define PVOSIMR_EXPONENT 0x7ff0000000000000ULL
#define PVOSIMR_EXPONENT_ONE 0x0010000000000000ULL
typedef unsigned long long pvosimr_u2 __attribute__((vector_size(16), aligned(8), may_alias));
static int pvosimr_finite(const casadi_real* x, casadi_int n) {
  pvosimr_u2 a = {0, 0}, b = {0, 0};
  unsigned long long t, one = 0;
  casadi_int i, groups = n - n % 4;
  for (i = 0; i < groups; i += 4) {
    a |= (*(const pvosimr_u2*)(x + i) & PVOSIMR_EXPONENT) + PVOSIMR_EXPONENT_ONE;
    b |= (*(const pvosimr_u2*)(x + i + 2) & PVOSIMR_EXPONENT) + PVOSIMR_EXPONENT_ONE;
  }
  for (i = groups; i < n; ++i) {
    __builtin_memcpy(&t, x + i, sizeof t);
    one |= (t & PVOSIMR_EXPONENT) + PVOSIMR_EXPONENT_ONE;
  }
  a |= b;
  return !((a[0] | a[1] | one) >> 63);
}
