/* Inlined into its callers, so callgrind writes fi=/fe= lines for it. */
static inline __attribute__((always_inline)) double scale(double x) { return x * 0.5 + 1.0; }
