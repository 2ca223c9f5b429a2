/* Two pthreads and the main thread, each in its own Caliper regions. */
#include <caliper/cali.h>
#include <pthread.h>
#include <stdio.h>

static volatile double sink;

static double spin(long n)
{
    double s = 0.0;
    for (long i = 1; i <= n; ++i)
        s += 1.0 / ((double)i * (double)i);
    return s;
}

static void *worker(void *arg)
{
    long k = (long)arg;
    CALI_MARK_BEGIN("worker");
    for (int it = 0; it < 3; ++it) {
        CALI_MARK_BEGIN("work");
        sink += spin(3000000L * k);
        CALI_MARK_END("work");
    }
    CALI_MARK_END("worker");
    return NULL;
}

int main(void)
{
    CALI_MARK_BEGIN("main_region");
    pthread_t t[2];
    for (long k = 0; k < 2; ++k)
        pthread_create(&t[k], NULL, worker, (void *)(k + 1));
    CALI_MARK_BEGIN("main_work");
    double acc = spin(5000000L);
    CALI_MARK_END("main_work");
    for (int k = 0; k < 2; ++k)
        pthread_join(t[k], NULL);
    CALI_MARK_END("main_region");
    printf("%.6f\n", acc);
    return 0;
}
