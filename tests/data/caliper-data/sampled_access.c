/* Two tracked arrays, `a` (N doubles) and `b` (4N doubles), read in region `compute`.
 * Without hardware address sampling (libpfm/PEBS), the program reports every 64th address
 * it reads through an attribute of class memoryaddress, `touch.addr`: Caliper's alloc
 * service (CALI_ALLOC_RESOLVE_ADDRESSES) then attributes each such snapshot to the tracked
 * object holding the address, exactly as it does for libpfm samples (alloc.label#touch.addr).
 * Every 200th report points into an untracked buffer, to show unresolved samples. */
#include <stdio.h>
#include <stdlib.h>
#include <caliper/cali.h>
#include <caliper/cali_datatracker.h>

#define N 4096

static cali_id_t touch_attr;

static void touch(const void *p) {
    cali_variant_t v = cali_make_variant_from_uint((unsigned long long)(size_t)p);
    cali_push_snapshot(CALI_SCOPE_PROCESS | CALI_SCOPE_THREAD, 1, &touch_attr, &v);
}

int main(void) {
    cali_init();
    cali_id_t meta = cali_find_attribute("class.memoryaddress");
    cali_variant_t yes = cali_make_variant_from_bool(1);
    touch_attr = cali_create_attribute_with_metadata("touch.addr", CALI_TYPE_ADDR,
        CALI_ATTR_ASVALUE | CALI_ATTR_SKIP_EVENTS, 1, &meta, &yes);

    double *a = malloc(N * sizeof(double));
    double *b = malloc(4 * N * sizeof(double));
    double *scratch = malloc(64 * sizeof(double));
    CALI_DATATRACKER_TRACK(a, N * sizeof(double));
    CALI_DATATRACKER_TRACK(b, 4 * N * sizeof(double));
    for (long i = 0; i < N; i++) a[i] = 1.0 / (i + 1);
    for (long i = 0; i < 4 * N; i++) b[i] = i % 7;
    for (long i = 0; i < 64; i++) scratch[i] = 0.0;

    double s = 0.0;
    long reads = 0;
    CALI_MARK_BEGIN("compute");
    for (int rep = 0; rep < 8; rep++) {
        for (long i = 0; i < N; i++) {
            s += a[i] * b[4 * i] + b[4 * i + 1];
            if (i % 64 == 0) touch(&a[i]);
            if (i % 32 == 0) touch(&b[4 * i]);
            if (++reads % 200 == 0) touch(&scratch[reads % 64]);
        }
    }
    CALI_MARK_END("compute");
    printf("%f\n", s);
    CALI_DATATRACKER_UNTRACK(a);
    CALI_DATATRACKER_UNTRACK(b);
    free(a);
    free(b);
    free(scratch);
    return 0;
}
