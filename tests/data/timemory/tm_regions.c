/* Small MPI program with timemory regions (C library API). */
#include <mpi.h>
#include <stdio.h>
#include <timemory/library.h>

static double spin(long n)
{
    double s = 0.0;
    for (long i = 1; i <= n; ++i)
        s += 1.0 / ((double)i * (double)i);
    return s;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    timemory_init_library(argc, argv);
    timemory_set_default("wall_clock");
    timemory_push_region("main_loop");
    double acc = 0.0;
    for (int it = 0; it < 3; ++it) {
        timemory_push_region("compute");
        acc += spin(3000000L * (rank + 1));
        timemory_pop_region("compute");
        timemory_push_region("exchange");
        double total = 0.0;
        MPI_Allreduce(&acc, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        timemory_pop_region("exchange");
    }
    timemory_pop_region("main_loop");
    if (rank == 0)
        printf("%.6f\n", acc);
    timemory_finalize_library();
    MPI_Finalize();
    return 0;
}
