/* Strong-scaling MPI program with Caliper regions: a fixed amount of work split over the
 * ranks. argv[1] names how it is split ("even", or "skewed": rank 0 takes twice its share)
 * and is recorded as the Caliper global "schedule"; without it no schedule is recorded. */
#include <caliper/cali.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

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
    const char *schedule = argc > 1 ? argv[1] : NULL;
    if (schedule)
        cali_set_global_string_byname("schedule", schedule);
    const long total = 60000000L;
    long share = total / size;
    if (schedule && strcmp(schedule, "skewed") == 0 && size > 1)
        share = rank == 0 ? 2 * total / (size + 1) : total / (size + 1);
    CALI_MARK_BEGIN("main");
    CALI_MARK_BEGIN("setup");
    double acc = spin(2000000L);
    CALI_MARK_END("setup");
    for (int it = 0; it < 4; ++it) {
        CALI_MARK_BEGIN("compute");
        acc += spin(share / 4);
        CALI_MARK_END("compute");
        CALI_MARK_BEGIN("exchange");
        double sum = 0.0;
        MPI_Allreduce(&acc, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        CALI_MARK_END("exchange");
    }
    CALI_MARK_END("main");
    if (rank == 0)
        printf("%d ranks, %s, %.6f\n", size, schedule ? schedule : "-", acc);
    MPI_Finalize();
    return 0;
}
