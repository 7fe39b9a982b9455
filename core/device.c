/*
 * device.c — device names, which device "auto" means here, and which
 * OpenBLAS kernels this CPU should run.
 */
#include <stdlib.h>
#include <string.h>

#include "hybrid.h"
#include "backend.h"

gboolean
hy_device_parse (const char *text, hy_device *out, GError **error)
{
  if (!strcmp (text, "cpu")) {
    *out = (hy_device) { HY_DEVICE_CPU, 0 };
    return TRUE;
  }
  if (!strcmp (text, "cuda") || !strcmp (text, "gpu")) {
    *out = (hy_device) { HY_DEVICE_CUDA, 0 };
    return TRUE;
  }
  if (g_str_has_prefix (text, "cuda:")) {
    char *end = NULL;
    long idx = strtol (text + 5, &end, 10);
    if (end && *end == '\0' && end != text + 5 && idx >= 0 && idx < 64) {
      *out = (hy_device) { HY_DEVICE_CUDA, (int) idx };
      return TRUE;
    }
  }
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "device '%s' is not one of cpu, cuda, cuda:N, auto", text);
  return FALSE;
}

gboolean
hy_precision_parse (const char *text, hy_precision *out, GError **error)
{
  if (!strcmp (text, "fp32") || !strcmp (text, "float32")) {
    *out = HY_PRECISION_FP32;
    return TRUE;
  }
  if (!strcmp (text, "fp16") || !strcmp (text, "float16")) {
    *out = HY_PRECISION_FP16;
    return TRUE;
  }
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "precision '%s' is not one of fp32, fp16", text);
  return FALSE;
}

char *
hy_device_unavailable_reason (hy_device device)
{
  if (device.kind == HY_DEVICE_CPU)
    return NULL;
  if (!hy_cuda_unavailable_reason)
    return g_strdup ("this build has no CUDA backend");
  return hy_cuda_unavailable_reason (device.index);
}

gboolean
hy_device_resolve_auto (const char *text, hy_device *out, char **note,
    GError **error)
{
  *note = NULL;
  if (strcmp (text, "auto"))
    return hy_device_parse (text, out, error);
  /* The first GPU when one works; otherwise the CPU, saying why. */
  char *why = hy_device_unavailable_reason ((hy_device) { HY_DEVICE_CUDA, 0 });
  if (!why) {
    *out = (hy_device) { HY_DEVICE_CUDA, 0 };
    *note = g_strdup ("device auto: using cuda:0");
    return TRUE;
  }
  *out = (hy_device) { HY_DEVICE_CPU, 0 };
  *note = g_strdup_printf ("device auto: %s, using the CPU", why);
  g_free (why);
  return TRUE;
}

/* From OpenBLAS (declared in its cblas.h, which we keep out of core). */
extern char *openblas_get_corename (void);

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
  __builtin_cpu_init ();
  /* OpenBLAS 0.3.21 predates Zen 4/5 and files them under Haswell (AVX2),
   * although they run its AVX-512 kernels about twice as fast. */
  if (__builtin_cpu_supports ("avx512f") && __builtin_cpu_supports ("avx512bw")
      && __builtin_cpu_supports ("avx512vl") && __builtin_cpu_supports ("avx512dq"))
    return "SkylakeX";
  return NULL;
}
