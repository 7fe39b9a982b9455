/*
 * fuzz-npy.c — libFuzzer target: the .npy reader, and the writer on
 * whatever it accepted.
 */
#include <stddef.h>
#include <stdint.h>

#include "hybrid.h"
#include "hybrid-npy.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  GError *error = NULL;
  hy_tensor *t = hy_npy_parse (data, size, "fuzz", &error);
  if (!t) {
    g_clear_error (&error);
    return 0;
  }
  GBytes *bytes = hy_npy_write (t);
  g_bytes_unref (bytes);
  hy_tensor_free (t);
  return 0;
}
