/* Small program for the gprof corpus: a function with two callers, direct recursion and a
   mutual recursion cycle (which gprof reports as <cycle 1>). Runs about a second. */
#include <stdio.h>

static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static long is_odd(unsigned n);
static long is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1) + (n % 7 == 0); }
static long is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }

static double work(long n) {
    double s = 0;
    for (long i = 1; i <= n; i++) s += 1.0 / (double)i;
    return s;
}

static double phase_a(void) { return (double)fib(30) + work(40000000); }
static double phase_b(void) {
    double s = 0;
    for (int i = 0; i < 2000; i++) s += (double)is_even(20000 + i);
    return s + work(80000000);
}

int main(void) {
    double r = 0;
    for (int i = 0; i < 2; i++) r += phase_a() + phase_b();
    printf("%f\n", r);
    return 0;
}
