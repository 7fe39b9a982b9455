/*
 * quantize-dequantize.c — _hy_quantize_dequantize: an ONNX QuantizeLinear
 * and the DequantizeLinear reading it, as one float op (the ONNX importer,
 * core/io/onnx-qdq.c, writes it).  Attributes, shapes; the arithmetic is
 * in kernels/params/quantized.h and kernels/cpu/quantized/.
 *
 * Not one of MXNet's ops: MXNet has no per-axis quantization with zero
 * points, which ONNX's QDQ files use.
 */
#include "hybrid.h"
#include "core/op.h"
#include "core/shape-learn.h"
#include "kernels/params/quantized.h"

static const char *const qdq_inputs[] = { "data", "scale", "zero_point",
  NULL };

static gboolean
qdq_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_quantize_dequantize_params *p = params;
  static const char *const types[] = { "int8", "uint8", NULL };
  int type;
  /* ONNX's defaults: axis 1, uint8 when no zero point says otherwise */
  if (!hy_attr_int (attrs, "axis", 1, &p->axis, error)
      || !hy_attr_enum (attrs, "out_type", types, 1, &type, error))
    return FALSE;
  p->out_uint8 = type == 1;
  return TRUE;
}

/* scale and zero_point: one value (the whole tensor), or a 1-D vector of
 * one per index of the data's `axis`. */
static gboolean
qdq_infer (const void *params, const hy_shape *in, int n_in, hy_shape *out,
    int n_out, GError **error)
{
  const hy_quantize_dequantize_params *p = params;
  const hy_shape *data = &in[0];
  static const hy_shape one = { .ndim = 1, .dims = { 1 } };
  char a[HY_SHAPE_STRLEN], b[HY_SHAPE_STRLEN];
  hy_shape_learn (&in[1], &one);
  hy_shape_learn (&in[2], &in[1]);
  if (in[1].ndim < 0 || in[2].ndim < 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "input '%s' has no shape", in[1].ndim < 0 ? "scale" : "zero_point");
    return FALSE;
  }
  if (!hy_shape_equal (&in[1], &in[2])) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "zero_point has shape %s, scale %s: they must be alike",
        hy_shape_format (&in[2], a, sizeof a),
        hy_shape_format (&in[1], b, sizeof b));
    return FALSE;
  }
  gint64 n = hy_shape_numel (&in[1]);
  if (n == 1 && in[1].ndim <= 1) {
    out[0] = *data;
    return TRUE;
  }
  int axis;
  if (in[1].ndim != 1 || !hy_axis_normalize (p->axis, data->ndim, &axis)
      || data->dims[axis] != n) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "scale has shape %s: one value, or one per index of axis %"
        G_GINT64_FORMAT " of data %s, expected",
        hy_shape_format (&in[1], a, sizeof a), p->axis,
        hy_shape_format (data, b, sizeof b));
    return FALSE;
  }
  out[0] = *data;
  return TRUE;
}

const hy_op_def hy_opdef_quantize_dequantize = {
  .params_size = sizeof (hy_quantize_dequantize_params),
  .parse = qdq_parse,
  .input_names = qdq_inputs,
  .infer_shape = qdq_infer,
  .inplace = TRUE,
};
