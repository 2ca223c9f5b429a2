/* Small MPI program with Caliper regions and work outside every region. */
#include <caliper/cali.h>
#include <mpi.h>
#include <stdio.h>

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
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CALI_MARK_BEGIN("setup");
    double acc = spin(2000000L);
    CALI_MARK_END("setup");
    acc += spin(20000000L);                /* outside every region */
    CALI_MARK_BEGIN("main_loop");
    for (int it = 0; it < 3; ++it) {
        CALI_MARK_BEGIN("compute");
        acc += spin(6000000L * (rank + 1));
        CALI_MARK_END("compute");
        CALI_MARK_BEGIN("exchange");
        double total = 0.0;
        MPI_Allreduce(&acc, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        CALI_MARK_END("exchange");
    }
    CALI_MARK_END("main_loop");
    acc += spin(10000000L);                /* outside every region */
    CALI_MARK_BEGIN("finish");
    acc += spin(1000000L);
    CALI_MARK_END("finish");
    if (rank == 0)
        printf("%d ranks, %.6f\n", size, acc);
    MPI_Finalize();
    return 0;
}
