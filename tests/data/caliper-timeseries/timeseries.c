#include <caliper/cali.h>
#include <stdlib.h>
#include <string.h>
/* A main loop of 200 iterations (compute, then an allocation that grows with the
   iteration), annotated for Caliper's loop monitor, so that Spot's timeseries option takes
   snapshots of the loop every 20 iterations. */
static double work(int n) { double s = 0; for (int i = 0; i < n; i++) s += i * 1e-9; return s; }
int main(void) {
  double s = 0;
  char *blocks[200];
  CALI_MARK_BEGIN("setup");
  s += work(2000000);
  CALI_MARK_END("setup");
  CALI_MARK_LOOP_BEGIN(mainloop, "mainloop");
  for (int i = 0; i < 200; i++) {
    CALI_MARK_ITERATION_BEGIN(mainloop, i);
    CALI_MARK_BEGIN("compute");
    s += work(200000 + 1000 * i);
    CALI_MARK_END("compute");
    CALI_MARK_BEGIN("grow");
    blocks[i] = malloc(4096 * (i + 1));
    memset(blocks[i], 1, 4096 * (i + 1));
    CALI_MARK_END("grow");
    CALI_MARK_ITERATION_END(mainloop);
  }
  CALI_MARK_LOOP_END(mainloop);
  for (int i = 0; i < 200; i++) free(blocks[i]);
  return s < 0;
}
