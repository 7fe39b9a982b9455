/*
 * fuzz-onnx.c — libFuzzer target: the ONNX reader (protobuf decoding, the
 * initializers, every op's import and the integer folding), then the model
 * built on whatever it accepted (its declared shapes inferred).
 */
#include <stddef.h>
#include <stdint.h>

#include "hybrid.h"
#include "core/model-impl.h"
#include "core/io/onnx-import.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  GError *error = NULL;
  hy_graph *graph = NULL;
  hy_param_list *params = NULL;
  /* No folder: a tensor asking for external data is refused, so the
   * fuzzer never reads files. */
  if (!hy_onnx_parse (data, size, "fuzz", NULL, &graph, &params, &error)) {
    g_clear_error (&error);
    return 0;
  }
  hy_model *model = hy_model_new_from_graph (graph, params, "fuzz", &error);
  if (!model) {
    g_clear_error (&error);
    return 0;
  }
  /* The load inferred the declared shapes; an executor's copy too. */
  hy_shapes_free (hy_shapes_new (model));
  hy_model_free (model);
  return 0;
}
