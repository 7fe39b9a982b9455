/*
 * cpu-peak.c — what this CPU can do, for bench's profile: its name, and
 * its measured single-core FMA ceiling (GFLOP/s), against which a layer's
 * GFLOP/s says how close it comes.
 *
 * The ceiling is measured, not looked up: a tight loop of independent
 * fused multiply-adds on the widest vectors the CPU runs (AVX-512, else
 * AVX2), twelve accumulators to cover the FMA latency.  Zen 4 splits
 * 512-bit operations in two and Zen 5 does not; a table would get that
 * wrong, the loop does not.  The multiply-adds are the FMA instruction
 * itself (intrinsics): the build is ISO C, which keeps `a * b + c` a
 * multiply then an add, and that pair runs at the FMA rate on Zen, whose
 * adders are pipes of their own, but at half of it on Intel's cores,
 * where both take the same two ports (a Xeon here read 115 GFLOP/s a
 * core that way, against the ~190 ResNet-18 runs at).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <glib.h>
#include <immintrin.h>

#include "cli.h"

#define ACCUMULATORS 12


static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One body per vector width; the target attribute lets the compiler emit
 * the instructions without building the whole tool for them. */
#define FMA_LOOP(name, vec, lanes, isa, set1, fmadd, add, first) \
  __attribute__ ((target (isa), noinline)) static float \
  name (long iterations, long *flops) \
  { \
    vec acc[ACCUMULATORS]; \
    const vec m = set1 (0.999999f), a = set1 (1e-7f); \
    for (int k = 0; k < ACCUMULATORS; k++) \
      acc[k] = set1 ((float) k); \
    for (long i = 0; i < iterations; i++) \
      for (int k = 0; k < ACCUMULATORS; k++) \
        acc[k] = fmadd (acc[k], m, a); \
    vec sum = set1 (0.0f); \
    for (int k = 0; k < ACCUMULATORS; k++) \
      sum = add (sum, acc[k]); \
    *flops = 2L * lanes * ACCUMULATORS * iterations; \
    return first (sum); \
  }

FMA_LOOP (fma_avx512, __m512, 16, "avx512f", _mm512_set1_ps, _mm512_fmadd_ps,
    _mm512_add_ps, _mm512_cvtss_f32)
FMA_LOOP (fma_avx2, __m256, 8, "avx2,fma", _mm256_set1_ps, _mm256_fmadd_ps,
    _mm256_add_ps, _mm256_cvtss_f32)

double
hy_cli_fma_peak_gflops (const char **isa)
{
  __builtin_cpu_init ();
  gboolean wide = __builtin_cpu_supports ("avx512f");
  if (!wide && !(__builtin_cpu_supports ("avx2")
          && __builtin_cpu_supports ("fma"))) {
    *isa = "none";
    return 0;
  }
  *isa = wide ? "AVX-512" : "AVX2";
  float (*loop) (long, long *) = wide ? fma_avx512 : fma_avx2;
  volatile float sink = 0;
  long flops = 0;
  /* Best of a few short runs: a neighbour's burst costs one of them. */
  double best = 0;
  for (int run = 0; run < 5; run++) {
    double t0 = now_s ();
    sink += loop (2000000, &flops);
    double s = now_s () - t0;
    if (s > 0 && flops / s > best)
      best = flops / s;
  }
  (void) sink;
  return best * 1e-9;
}

char *
hy_cli_cpu_name (void)
{
  g_autofree char *text = NULL;
  if (g_file_get_contents ("/proc/cpuinfo", &text, NULL, NULL)) {
    for (char *line = text; line && *line;) {
      char *end = strchr (line, '\n');
      if (end)
        *end = '\0';
      if (g_str_has_prefix (line, "model name")) {
        const char *colon = strchr (line, ':');
        if (colon)
          return g_strstrip (g_strdup (colon + 1));
      }
      line = end ? end + 1 : NULL;
    }
  }
  return g_strdup ("unknown CPU");
}
