#include <string.h>
/* No heap at all: only stack, through a recursion of 4 KiB frames. */
__attribute__((noinline)) int recurse(int d, char *prev) {
  char frame[4096]; memset(frame, d, sizeof frame); frame[0] = prev ? prev[1] : 0;
  return d ? recurse(d - 1, frame) + frame[7] : frame[9];
}
int main(void) { return recurse(60, 0) == 12345; }
