#if defined(__GNUC__) && !defined(GCC_HASCLASSVISIBILITY)
#define GCC_HASCLASSVISIBILITY  /* CASADI_SYMBOL_EXPORT: visibility("default") */
#endif
