/* Small pthread program for the callgrind/gprof corpus: two callers of one function,
   direct and mutual recursion, worker threads. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static int is_odd(unsigned n);
static int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }
static int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }

static double work(int n) {
    double s = 0;
    for (int i = 1; i <= n; i++) s += 1.0 / i;
    return s;
}

static long phase_a(int n) { return fib(n) + (long)work(20000); }
static long phase_b(int n) { return is_even(n) + (long)work(50000); }

static void *worker(void *arg) {
    long id = (long)arg;
    long r = 0;
    for (int i = 0; i < 3; i++) r += phase_a(18 + (int)id) + phase_b(1000 + i);
    return (void *)r;
}

int main(int argc, char **argv) {
    int nthreads = argc > 1 ? atoi(argv[1]) : 2;
    pthread_t t[8];
    long r = phase_a(20) + phase_b(3001);
    for (long i = 0; i < nthreads && i < 8; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (long i = 0; i < nthreads && i < 8; i++) {
        void *out;
        pthread_join(t[i], &out);
        r += (long)out;
    }
    printf("%ld\n", r);
    return 0;
}
