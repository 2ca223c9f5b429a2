/* A RAJAPerf-shaped program: 6 groups of kernels, each a Caliper region, with run metadata. */
#include <caliper/cali.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double sink;

static void kernel(const char *name, long work) {
  CALI_MARK_BEGIN(name);
  double s = 0;
  for (long i = 0; i < work; ++i) s += (double)i * 1e-9;
  sink += s;
  CALI_MARK_END(name);
}

int main(int argc, char **argv) {
  long scale = argc > 1 ? atol(argv[1]) : 1000;
  const char *variant = argc > 2 ? argv[2] : "Base_Seq";
  const char *slow = argc > 3 ? argv[3] : "";
  static const char *groups[] = {"Algorithm", "Apps", "Basic", "Lcals", "Polybench", "Stream"};
  static const int kernels[] = {4, 12, 14, 11, 13, 5};
  char name[64];
  cali_set_global_string_byname("variant", variant);
  cali_set_global_int_byname("scale", (int)scale);
  CALI_MARK_BEGIN("main");
  for (int g = 0; g < 6; ++g) {
    CALI_MARK_BEGIN(groups[g]);
    for (int k = 0; k < kernels[g]; ++k) {
      snprintf(name, sizeof name, "%s_K%02d", groups[g], k);
      long work = scale * (k + 1);
      if (slow[0] && !strcmp(slow, name)) work = work * 3 / 2;
      kernel(name, work);
    }
    CALI_MARK_END(groups[g]);
  }
  CALI_MARK_END("main");
  printf("%g\n", sink);
  return 0;
}
