/* Small MPI program for the Caliper corpus: annotated regions, unequal work per rank. */
#include <caliper/cali.h>
#include <mpi.h>
#include <stdio.h>

static double work(long n) {
    double s = 0;
    for (long i = 1; i <= n; i++) s += 1.0 / (double)i;
    return s;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CALI_MARK_BEGIN("main");
    double local = 0, total = 0;
    for (int step = 0; step < 3; step++) {
        CALI_MARK_BEGIN("compute");
        local += work(2000000L * (rank + 1));
        CALI_MARK_END("compute");
        CALI_MARK_BEGIN("exchange");
        MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        CALI_MARK_END("exchange");
    }
    CALI_MARK_END("main");
    if (rank == 0) printf("%f\n", total);
    MPI_Finalize();
    return 0;
}
