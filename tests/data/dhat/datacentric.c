/* A block-distributed vector whose rank 0 holds twice the elements of the others (the
 * imbalance a data-centric view should show), a per-rank matrix block and short-lived
 * scratch buffers allocated in a loop. Built plain for DHAT, with -DWITH_CALIPER for Caliper's
 * data tracking (the arrays are tracked under their variable names). argv[1]: sweeps (4). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef WITH_CALIPER
#include <caliper/cali.h>
#include <caliper/cali_datatracker.h>
#else
#define CALI_MARK_BEGIN(name)
#define CALI_MARK_END(name)
#define CALI_DATATRACKER_TRACK(ptr, size)
#define CALI_DATATRACKER_UNTRACK(ptr)
#endif

#define N 8192   /* global elements, before rank 0's extra share */
#define COLS 8

static double *alloc_vector(long n) { return malloc(n * sizeof(double)); }
static double *alloc_matrix_block(long rows) { return calloc(rows * COLS, sizeof(double)); }

static double sweep(double *u, double *m, long n) {
    double s = 0.0;
    for (long i = 0; i < n; i++) {
        for (int j = 0; j < COLS; j++) m[i * COLS + j] += u[i] * (j + 1);
        s += m[i * COLS];
    }
    return s;
}

static double scratch_work(long n) {
    double s = 0.0;
    for (int k = 0; k < 16; k++) {
        double *tmp = malloc(n * sizeof(double));
        CALI_DATATRACKER_TRACK(tmp, n * sizeof(double));
        for (long i = 0; i < n; i++) tmp[i] = (double)(i + k);
        for (long i = 0; i < n; i++) s += tmp[i];
        CALI_DATATRACKER_UNTRACK(tmp);
        free(tmp);
    }
    return s;
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int steps = argc > 1 ? atoi(argv[1]) : 4;
    long n = N / size * (rank == 0 ? 2 : 1);
    CALI_MARK_BEGIN("setup");
    double *u = alloc_vector(n);
    CALI_DATATRACKER_TRACK(u, n * sizeof(double));
    double *m = alloc_matrix_block(n);
    CALI_DATATRACKER_TRACK(m, n * COLS * sizeof(double));
    for (long i = 0; i < n; i++) u[i] = 1.0 / (i + 1);
    double local = 0.0, global = 0.0;
    CALI_MARK_END("setup");
    CALI_MARK_BEGIN("sweep");
    for (int s = 0; s < steps; s++) local += sweep(u, m, n);
    CALI_MARK_END("sweep");
    CALI_MARK_BEGIN("scratch");
    local += scratch_work(n / 4);
    CALI_MARK_END("scratch");
    MPI_Reduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%d ranks: %.6f\n", size, global);
    CALI_DATATRACKER_UNTRACK(u);
    CALI_DATATRACKER_UNTRACK(m);
    free(u);
    free(m);
    MPI_Finalize();
    return 0;
}
