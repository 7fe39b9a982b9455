/*
 * cpu-features.c — see cpu-features.h.
 */
#include "kernels/cpu/cpu-features.h"

#include <unistd.h>

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
