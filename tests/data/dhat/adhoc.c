#include <valgrind/dhat.h>
/* DHAT --mode=ad-hoc workload: weighted events from two call paths. */
__attribute__((noinline)) void hit(int w) { DHAT_AD_HOC_EVENT(w); }
__attribute__((noinline)) void small(void) { hit(1); }
__attribute__((noinline)) void large(void) { hit(10); }
int main(void) { for (int i = 0; i < 30; i++) { small(); if (i % 3 == 0) large(); } return 0; }
