/* gprof corpus: main built with -pg, its kernel in mixed_kernel.c built without it, so
   gprof samples the kernel's time but records no calls to it. */
#include <stdio.h>

double kernel(long n);

static double driver(int reps) {
    double s = 0;
    for (int i = 0; i < reps; i++) s += kernel(30000000L);
    return s;
}

int main(void) {
    printf("%f\n", driver(6));
    return 0;
}
