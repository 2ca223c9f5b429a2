#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <unistd.h>
static volatile double sink;
__attribute__((noinline)) double leaf(int n) { double s = 0; for (int i = 0; i < n; i++) s += i * 0.5; return s; }
__attribute__((noinline)) double middle(int n) { return leaf(n) + leaf(n / 2); }
__attribute__((noinline)) double other(int n) { return leaf(n / 3); }
static void *worker(void *arg) { long n = (long)arg; for (int k = 0; k < 300; k++) sink += middle(n + (k & 3)); return NULL; }
int main(int argc, char **argv) {
  int procs = argc > 1 ? atoi(argv[1]) : 1;
  for (int p = 1; p < procs; p++) if (fork() == 0) break;
  pthread_t t; pthread_create(&t, NULL, worker, (void *)400000L);
  for (int k = 0; k < 300; k++) sink += middle(300000 + (k & 3)) + other(300000 + (k & 3));
  pthread_join(t, NULL);
  return 0;
}
