#include <stdlib.h>
#include <string.h>
/* A custom allocator (pool_alloc) over malloc, given to massif with --alloc-fn so its
   callers become the allocation sites; odd sizes so the allocator's extra bytes vary. */
__attribute__((noinline)) void *pool_alloc(size_t n) { void *p = malloc(n + 24); memset(p, 0, n + 24); return p; }
__attribute__((noinline)) void *make_node(int i) { return pool_alloc(40 + (i % 7)); }
__attribute__((noinline)) void *make_blob(int i) { return pool_alloc(3000 + 13 * i); }
__attribute__((noinline)) int recurse(int d, char *prev) {
  char frame[4096]; memset(frame, d, sizeof frame); frame[0] = prev ? prev[1] : 0;
  return d ? recurse(d - 1, frame) + frame[7] : frame[9];
}
int main(void) {
  void *keep[2000];
  for (int i = 0; i < 2000; i++) keep[i] = (i % 10) ? make_node(i) : make_blob(i);
  int s = recurse(40, 0);
  for (int i = 0; i < 2000; i++) free(keep[i]);
  return s == 12345;
}
