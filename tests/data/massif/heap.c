#include <stdlib.h>
#include <string.h>
/* Small workload for valgrind massif and DHAT: two allocation sites under two callers,
   a peak in the middle, frees after it. */
__attribute__((noinline)) char *grab(size_t n) { char *p = malloc(n); memset(p, 1, n); return p; }
__attribute__((noinline)) char *table(size_t n) { return grab(n * 64); }
__attribute__((noinline)) char *buffer(size_t n) { return grab(n); }
int main(void) {
  char *keep[64];
  for (int i = 0; i < 64; i++) keep[i] = (i % 2) ? table(1000 + i) : buffer(20000 + i * 10);
  for (int i = 0; i < 64; i += 2) free(keep[i]);
  char *late = buffer(100000);
  for (int i = 1; i < 64; i += 2) free(keep[i]);
  free(late);
  return 0;
}
