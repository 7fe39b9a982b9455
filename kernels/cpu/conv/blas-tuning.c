/*
 * blas-tuning.c — which OpenBLAS kernel set runs here, and whether another
 * would run faster (the public hy_blas_* calls of hybrid.h).
 */
#include <glib.h>

#include "hybrid.h"
#include "kernels/cpu/cpu-features.h"

/* From OpenBLAS (declared in its cblas.h). */
extern char *openblas_get_corename (void);
extern int openblas_get_num_threads (void) __attribute__ ((weak));

int
hy_blas_n_threads (void)
{
  return openblas_get_num_threads ? openblas_get_num_threads () : 1;
}

const char *
hy_blas_core_name (void)
{
  return openblas_get_corename ();
}

const char *
hy_blas_suggested_coretype (void)
{
  const char *core = openblas_get_corename ();
  if (!core)
    return NULL;
  /* Already on an AVX-512 kernel set: nothing to gain. */
  if (!g_ascii_strcasecmp (core, "skylakex")
      || !g_ascii_strcasecmp (core, "cooperlake")
      || !g_ascii_strcasecmp (core, "sapphirerapids"))
    return NULL;
  /* OpenBLAS 0.3.21 predates Zen 4/5 and files them under Haswell (AVX2),
   * although they run its AVX-512 kernels about twice as fast. */
  const hy_cpu_features *cpu = hy_cpu_features_get ();
  if (cpu->avx512f && cpu->avx512bw && cpu->avx512vl && cpu->avx512dq)
    return "SkylakeX";
  return NULL;
}
