/*
 * fuzz-params.c — libFuzzer target: the .params (NDArray list) reader, and
 * the writer on whatever it accepted.
 */
#include <stddef.h>
#include <stdint.h>

#include "hybrid.h"
#include "core/io/params-io.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  GError *error = NULL;
  hy_param_list *list = hy_params_parse (data, size, "fuzz", &error);
  if (!list) {
    g_clear_error (&error);
    return 0;
  }
  GBytes *bytes = hy_params_write (list);
  g_bytes_unref (bytes);
  hy_param_list_free (list);
  return 0;
}
