/*
 * cpu-features.c — see cpu-features.h.
 */
#include "kernels/cpu/cpu-features.h"

#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include <glib.h>

static hy_cpu_features
detect (void)
{
  hy_cpu_features f = { 0 };
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init ();
  f.avx512f = __builtin_cpu_supports ("avx512f");
  f.avx512bw = __builtin_cpu_supports ("avx512bw");
  f.avx512vl = __builtin_cpu_supports ("avx512vl");
  f.avx512dq = __builtin_cpu_supports ("avx512dq");
  f.avx512vbmi = __builtin_cpu_supports ("avx512vbmi");
#endif
#if defined(__x86_64__) && defined(__GNUC__)
  /* CPUID leaf 7: sub-leaf 1's EAX bit 5 is AVX512_BF16, sub-leaf 0's EDX
   * bit 22 AMX-BF16.  HYBRIDINFER_NO_BF16=1 hides both, so that the
   * refusal on CPUs without them can be tried on one that has them. */
  unsigned a, b, c, d;
  const char *hide = g_getenv ("HYBRIDINFER_NO_BF16");
  if ((!hide || strcmp (hide, "1") != 0) && __get_cpuid_max (0, NULL) >= 7) {
    __cpuid_count (7, 1, a, b, c, d);
    f.avx512_bf16 = f.avx512f && (a >> 5 & 1);
    __cpuid_count (7, 0, a, b, c, d);
    f.amx_bf16 = d >> 22 & 1;
  }
#endif
#ifdef _SC_LEVEL3_CACHE_SIZE
  const long l3 = sysconf (_SC_LEVEL3_CACHE_SIZE);
  f.l3_bytes = l3 > 0 ? l3 : 0;
#endif
  return f;
}

const hy_cpu_features *
hy_cpu_features_get (void)
{
  static gsize once = 0;
  static hy_cpu_features features;
  if (g_once_init_enter (&once)) {
    features = detect ();
    g_once_init_leave (&once, 1);
  }
  return &features;
}
