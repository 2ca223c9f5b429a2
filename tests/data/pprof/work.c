/* CPU-bound work for gperftools' CPU profiler: recursion and two callers of one kernel. */
#include <stdio.h>

static double kernel(long n) {
    double s = 0.0;
    for (long i = 0; i < n; i++) s += (double)(i % 7) * 0.5;
    return s;
}

static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static double solve(void) { return kernel(600000000); }

static double io(void) { return kernel(300000000); }

int main(void) {
    double t = 0.0;
    for (int r = 0; r < 2; r++) {
        t += solve() + io();
        t += (double)fib(34);
    }
    printf("%g\n", t);
    return 0;
}
