/* Strong-scaling MPI program with Caliper regions: a fixed amount of work split over the
 * ranks. argv[1] names how it is split ("even", or "skewed": rank 0 takes twice its share)
 * and is recorded as the Caliper global "schedule"; without it no schedule is recorded. */
#include <caliper/cali.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* A linear congruential walk: cheap, and the compiler cannot drop it. */
static unsigned long walk(unsigned long x, long steps)
{
    while (steps-- > 0)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

static long share_of(const char *schedule, long total, int rank, int size)
{
    if (schedule == NULL || strcmp(schedule, "skewed") != 0 || size == 1)
        return total / size;
    return rank == 0 ? 2 * total / (size + 1) : total / (size + 1);
}

int main(int argc, char **argv)
{
    int rank, size;
    const char *schedule = argc > 1 ? argv[1] : NULL;
    unsigned long state = 1, folded = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (schedule != NULL)
        cali_set_global_string_byname("schedule", schedule);
    long share = share_of(schedule, 240000000L, rank, size);

    CALI_MARK_BEGIN("main");
    CALI_MARK_BEGIN("setup");
    state = walk(state + (unsigned long)rank, 8000000L);
    CALI_MARK_END("setup");
    for (int step = 0; step < 4; ++step) {
        CALI_MARK_BEGIN("compute");
        state = walk(state, share / 4);
        CALI_MARK_END("compute");
        CALI_MARK_BEGIN("exchange");
        MPI_Allreduce(&state, &folded, 1, MPI_UNSIGNED_LONG, MPI_BXOR, MPI_COMM_WORLD);
        CALI_MARK_END("exchange");
    }
    CALI_MARK_END("main");
    if (rank == 0)
        printf("%d ranks, %s, %lx\n", size, schedule ? schedule : "-", folded);
    MPI_Finalize();
    return 0;
}
