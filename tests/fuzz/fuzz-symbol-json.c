/*
 * fuzz-symbol-json.c — libFuzzer target: the symbol JSON reader, op
 * resolution (attribute parsing) and the writer, on arbitrary bytes.
 */
#include <stddef.h>
#include <stdint.h>

#include "hybrid.h"
#include "core/graph.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  GError *error = NULL;
  hy_graph *g = hy_symbol_json_parse ((const char *) data, size, "fuzz",
      &error);
  if (!g) {
    g_clear_error (&error);
    return 0;
  }
  GPtrArray *unsupported = g_ptr_array_new_with_free_func (g_free);
  if (hy_graph_resolve (g, unsupported, &error)) {
    char *text = hy_symbol_json_write (g, &error);
    g_free (text);
  }
  g_clear_error (&error);
  g_ptr_array_unref (unsupported);
  hy_graph_free (g);
  return 0;
}
