/* Small threaded program with timemory regions (C library API), no MPI. */
#include <pthread.h>
#include <stdio.h>
#include <timemory/library.h>

static double spin(long n)
{
    double s = 0.0;
    for (long i = 1; i <= n; ++i)
        s += 1.0 / ((double)i * (double)i);
    return s;
}

static void *worker(void *arg)
{
    long n = (long)arg;
    timemory_push_region("worker");
    double s = spin(n);
    timemory_pop_region("worker");
    return (void *)(long)(s > 0);
}

int main(int argc, char **argv)
{
    timemory_init_library(argc, argv);
    timemory_set_default("wall_clock");
    timemory_push_region("main");
    timemory_push_region("setup");
    double acc = spin(2000000L);
    timemory_pop_region("setup");
    pthread_t t[2];
    for (long i = 0; i < 2; ++i)
        pthread_create(&t[i], NULL, worker, (void *)(4000000L * (i + 1)));
    for (int i = 0; i < 2; ++i)
        pthread_join(t[i], NULL);
    timemory_push_region("solve");
    for (int it = 0; it < 3; ++it) {
        timemory_push_region("step");
        acc += spin(1500000L);
        timemory_pop_region("step");
    }
    timemory_pop_region("solve");
    timemory_pop_region("main");
    printf("%.6f\n", acc);
    timemory_finalize_library();
    return 0;
}
