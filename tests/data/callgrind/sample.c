/* Small program for the callgrind reader tests: a call DAG (work has two callers),
   direct recursion (fib), mutual recursion (is_even/is_odd) and an inlined helper. */
#include "helper.h"

volatile double sink;

__attribute__((noinline)) static double work(int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += scale(i);
    return s;
}
__attribute__((noinline)) static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__attribute__((noinline)) static int is_odd(int n);
__attribute__((noinline)) static int is_even(int n) { return n == 0 ? 1 : is_odd(n - 1); }
__attribute__((noinline)) static int is_odd(int n) { return n == 0 ? 0 : is_even(n - 1); }
__attribute__((noinline)) static double solve(int n) { return work(n) + fib(10); }
__attribute__((noinline)) static double io(int n) { return work(2 * n); }

int main(void) {
    double t = 0;
    for (int i = 0; i < 3; i++) t += solve(1000);
    t += io(500);
    t += is_even(7);
    sink = t;
    return 0;
}
