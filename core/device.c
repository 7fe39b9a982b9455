/*
 * device.c — device names, which device "auto" means here, and which
 * OpenBLAS kernels this CPU should run.
 */
#include <stdlib.h>
#include <string.h>

#include "hybrid.h"
#include "core/backend.h"
#include "core/cuda-module.h"

/* cuda:N takes N below this: no machine we know of has 64 GPUs, so a
 * larger N is taken for a mistake rather than probed. */
#define HY_MAX_CUDA_DEVICES 64

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
    if (end && *end == '\0' && end != text + 5 && idx >= 0
        && idx < HY_MAX_CUDA_DEVICES) {
      *out = (hy_device) { HY_DEVICE_CUDA, (int) idx };
      return TRUE;
    }
  }
  /* State the range: "cuda:64" must not read as a typo of the syntax. */
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "device '%s' is not one of cpu, cuda, cuda:N (N from 0 to %d), auto",
      text, HY_MAX_CUDA_DEVICES - 1);
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
  if (!strcmp (text, "bf16") || !strcmp (text, "bfloat16")) {
    *out = HY_PRECISION_BF16;
    return TRUE;
  }
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "precision '%s' is not one of fp32, fp16, bf16", text);
  return FALSE;
}

char *
hy_device_unavailable_reason (hy_device device)
{
  if (device.kind == HY_DEVICE_CPU)
    return NULL;
  return hy_cuda_module_unavailable_reason (device.index);
}

gboolean
hy_device_no_gpu (void)
{
  return hy_cuda_module_no_gpu ();
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
