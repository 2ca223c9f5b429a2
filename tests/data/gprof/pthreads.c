/* A short pthreads run for gprof: workers and the main thread share small helper
 * functions. gprof splits histogram bins that straddle two functions between them, so the
 * flat profile's self seconds are fractions of samples, printed rounded to 0.01 s. */
#include <pthread.h>
#include <stdio.h>

static volatile double sink;

static double f1(long i) { return (double)(i % 7) * 0.5; }
static double f2(long i) { return (double)(i % 3) + f1(i); }
static double f3(long i) { return (i & 4) ? f2(i) : f1(i + 1); }
static double f4(long i) { return (double)(i % 11) - f3(i); }
static double f5(long i) { return f4(i) * 0.25 + f1(i); }

static double chunk(long n) {
    double acc = 0;
    for (long i = 0; i < n; ++i) acc += f2(i) + f5(i);
    return acc;
}

static double scan(long n) {
    double acc = 0;
    for (long i = 0; i < n; ++i) acc += (i & 1) ? f3(i) : -f4(i + 1);
    return acc;
}

static void *worker(void *arg) {
    long n = (long)arg;
    sink += chunk(n) + scan(n / 2);
    return NULL;
}

int main(void) {
    pthread_t t[2];
    for (long k = 0; k < 2; ++k) pthread_create(&t[k], NULL, worker, (void *)(12000000L * (k + 1)));
    sink += chunk(10000000) + scan(12000000);
    for (int k = 0; k < 2; ++k) pthread_join(t[k], NULL);
    printf("%f\n", sink);
    return 0;
}
