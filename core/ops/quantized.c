/*
 * quantized.c — MXNet's int8 ops (quantize_net_v2's exports, oneDNN
 * build, and the GPU graph's unfused quantized_conv and requantize):
 * attributes, shapes and dtypes.  The arithmetic they stand for is
 * in kernels/params/quantized.h and kernels/cpu/quantized/.
 *
 * A quantized _sg_mkldnn_conv or _sg_mkldnn_fully_connected holds its
 * layer in a nested subgraph; the symbol loader (core/io/symbol-json.c)
 * copies that layer's attributes (Convolution's kernel, BatchNorm's eps,
 * the activations' types) into the node's own, so they are parsed here
 * like any op's.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hybrid.h"
#include "core/op.h"
#include "core/shape-learn.h"
#include "kernels/params/quantized.h"

extern const hy_op_def hy_opdef_convolution;
extern const hy_op_def hy_opdef_pooling;
extern const hy_op_def hy_opdef_flatten;
extern const hy_op_def hy_opdef_concat;
extern const hy_op_def hy_opdef_batch_norm;

static int
three_outputs (const void *params)
{
  return 3;
}

static gboolean
expect_quantized (const hy_dtype *in, int k, const char *what, GError **error)
{
  if (in[k] == HY_DTYPE_INT8 || in[k] == HY_DTYPE_UINT8)
    return TRUE;
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "input '%s' is %s, expected int8 or uint8 (a quantized op's output)",
      what, hy_dtype_name (in[k]));
  return FALSE;
}

/* min and max: one float each, the real range of a quantized value. */
static gboolean
expect_range (const hy_shape *s, const char *what, GError **error)
{
  const hy_shape one = { .ndim = 1, .dims = { 1 } };
  if ((s->ndim >= 0 && hy_shape_numel (s) == 1) || hy_shape_learn (s, &one))
    return TRUE;
  char buf[HY_SHAPE_STRLEN];
  g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
      "input '%s' has shape %s, expected one value (a quantized range)",
      what, hy_shape_format (s, buf, sizeof buf));
  return FALSE;
}

static void
set_range_shapes (hy_shape *out)
{
  out[1] = (hy_shape) { .ndim = 1, .dims = { 1 } };
  out[2] = out[1];
}

static gboolean
parse_calib (GHashTable *attrs, gboolean *calibrated, float *min,
    float *max, GError **error)
{
  gboolean has_min = hy_attr_has (attrs, "min_calib_range")
      && !hy_attr_is_none (attrs, "min_calib_range");
  gboolean has_max = hy_attr_has (attrs, "max_calib_range")
      && !hy_attr_is_none (attrs, "max_calib_range");
  if (has_min != has_max) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "min_calib_range and max_calib_range come together; only %s is set",
        has_min ? "min_calib_range" : "max_calib_range");
    return FALSE;
  }
  *calibrated = has_min;
  if (!has_min)
    return TRUE;
  double lo, hi;
  if (!hy_attr_float (attrs, "min_calib_range", 0, &lo, error)
      || !hy_attr_float (attrs, "max_calib_range", 0, &hi, error))
    return FALSE;
  /* [0, 0] is what MXNet writes for a layer dead on every calibration
   * image; it runs such a net with an infinite scale, and so do the
   * kernels (quantized-common.h) */
  if (!isfinite (lo) || !isfinite (hi)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "calibrated range [%g, %g] is not finite", lo, hi);
    return FALSE;
  }
  *min = (float) lo;
  *max = (float) hi;
  return TRUE;
}

/* ---- _contrib_quantize_v2 ------------------------------------------------ */

static const char *const quantize_inputs[] = { "data", NULL };

/* out_type (auto, int8 by default, or uint8) and the calibrated range of
 * quantize_v2 and requantize, by MXNet's GetQuantizeOutputType: auto is
 * uint8 only for a calibrated range that is not negative. */
static gboolean
parse_out_type (GHashTable *attrs, bool *calibrated, float *min, float *max,
    bool *out_uint8, GError **error)
{
  static const char *const types[] = { "auto", "int8", "uint8", NULL };
  int type;
  gboolean has_range;
  if (!hy_attr_enum (attrs, "out_type", types, 1, &type, error)
      || !parse_calib (attrs, &has_range, min, max, error))
    return FALSE;
  *calibrated = has_range;
  *out_uint8 = type == 2 || (type == 0 && has_range && *min >= 0);
  return TRUE;
}

static gboolean
quantize_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_quantize_params *p = params;
  return parse_out_type (attrs, &p->calibrated, &p->min_calib, &p->max_calib,
      &p->out_uint8, error);
}

static gboolean
quantize_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  out[0] = in[0];
  set_range_shapes (out);
  return TRUE;
}

static gboolean
quantize_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  const hy_quantize_params *p = params;
  if (hy_dtype_is_integer (in[0])) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "input 'data' is %s, expected floating-point data to quantize",
        hy_dtype_name (in[0]));
    return FALSE;
  }
  out[0] = p->out_uint8 ? HY_DTYPE_UINT8 : HY_DTYPE_INT8;
  out[1] = out[2] = HY_DTYPE_FLOAT32;
  return TRUE;
}

const hy_op_def hy_opdef_quantize_v2 = {
  .params_size = sizeof (hy_quantize_params),
  .parse = quantize_parse,
  .input_names = quantize_inputs,
  .num_outputs = three_outputs,
  .infer_shape = quantize_infer,
  .infer_dtype = quantize_dtype,
};

/* ---- _contrib_dequantize ------------------------------------------------- */

static const char *const dequantize_inputs[] = { "data", "min_range",
  "max_range", NULL };

static gboolean
dequantize_parse (GHashTable *attrs, void *params, GError **error)
{
  const char *t = hy_attr_string (attrs, "out_type");
  if (t && strcmp (t, "float32")) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'out_type' is '%s', expected float32 (the only one MXNet "
        "1.9.1 has)", t);
    return FALSE;
  }
  return TRUE;
}

static gboolean
dequantize_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  if (!expect_range (&in[1], "min_range", error)
      || !expect_range (&in[2], "max_range", error))
    return FALSE;
  out[0] = in[0];
  return TRUE;
}

static gboolean
dequantize_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  hy_dequantize_params *p = params;
  if (!expect_quantized (in, 0, "data", error))
    return FALSE;
  p->in_uint8 = in[0] == HY_DTYPE_UINT8;
  out[0] = HY_DTYPE_FLOAT32;
  return TRUE;
}

const hy_op_def hy_opdef_dequantize = {
  .params_size = sizeof (hy_dequantize_params),
  .parse = dequantize_parse,
  .input_names = dequantize_inputs,
  .infer_shape = dequantize_infer,
  .infer_dtype = dequantize_dtype,
};

/* ---- _contrib_requantize ------------------------------------------------ */

static const char *const requantize_inputs[] = { "data", "min_range",
  "max_range", NULL };

static gboolean
requantize_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_requantize_params *p = params;
  return parse_out_type (attrs, &p->calibrated, &p->min_calib, &p->max_calib,
      &p->out_uint8, error);
}

static gboolean
requantize_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  if (!expect_range (&in[1], "min_range", error)
      || !expect_range (&in[2], "max_range", error))
    return FALSE;
  out[0] = in[0];
  set_range_shapes (out);
  return TRUE;
}

static gboolean
requantize_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  const hy_requantize_params *p = params;
  if (in[0] != HY_DTYPE_INT32) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "input 'data' is %s, expected int32 (a quantized convolution's or "
        "fully connected layer's output)", hy_dtype_name (in[0]));
    return FALSE;
  }
  out[0] = p->out_uint8 ? HY_DTYPE_UINT8 : HY_DTYPE_INT8;
  out[1] = out[2] = HY_DTYPE_FLOAT32;
  return TRUE;
}

const hy_op_def hy_opdef_requantize = {
  .params_size = sizeof (hy_requantize_params),
  .parse = requantize_parse,
  .input_names = requantize_inputs,
  .num_outputs = three_outputs,
  .infer_shape = requantize_infer,
  .infer_dtype = requantize_dtype,
};

/* ---- _contrib_quantized_conv (unfused) --------------------------------- */

static const char *const qconv_plain_inputs[] = { "data", "weight",
  "min_data", "max_data", "min_weight", "max_weight", NULL };

static gboolean
qconv_plain_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_quantized_conv_plain_params *p = params;
  p->conv.op = HY_OP_CONVOLUTION;
  if (!hy_opdef_convolution.parse (attrs, &p->conv, error))
    return FALSE;
  if (p->conv.n_spatial != 2) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "attribute 'kernel': a quantized convolution is 2-D (NCHW), as "
        "MXNet's are; this one has %d spatial axes", p->conv.n_spatial);
    return FALSE;
  }
  if (p->conv.num_group != 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "attribute 'num_group' is %" G_GINT64_FORMAT ": a quantized "
        "convolution has one group (MXNet 1.9.1's quantized_conv refuses "
        "others too)", (gint64) p->conv.num_group);
    return FALSE;
  }
  /* MXNet's bias here is int8 of its own range, which its CPU and GPU
   * kernels add in different ways; the nets quantize_net writes for the
   * GPU come without one when the layer has none */
  if (!p->conv.no_bias) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "attribute 'no_bias' is False: a quantized convolution with a bias "
        "is not supported yet (only no_bias=True)");
    return FALSE;
  }
  return TRUE;
}

static gboolean
qconv_plain_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_quantized_conv_plain_params *p = params;
  if (!hy_opdef_convolution.infer_shape (&p->conv, in, 2, out, 1, error))
    return FALSE;
  for (int k = 2; k < 6; k++)
    if (!expect_range (&in[k], qconv_plain_inputs[k], error))
      return FALSE;
  set_range_shapes (out);
  return TRUE;
}

static gboolean
qconv_plain_dtype (void *params, const hy_dtype *in, int n_in,
    hy_dtype *out, int n_out, GError **error)
{
  hy_quantized_conv_plain_params *p = params;
  if (!expect_quantized (in, 0, "data", error))
    return FALSE;
  /* the weights come from the params file, read as floats like every
   * value: int8 there, which the kernels read saturated to int8 */
  p->data_uint8 = in[0] == HY_DTYPE_UINT8;
  out[0] = HY_DTYPE_INT32;
  out[1] = out[2] = HY_DTYPE_FLOAT32;
  return TRUE;
}

static double
qconv_plain_flops (const void *params, const hy_shape *in, int n_in,
    const hy_shape *out, int n_out)
{
  double k = (double) hy_shape_numel (&in[1]) / (double) in[1].dims[0];
  return 2.0 * k * (double) hy_shape_numel (&out[0]);
}

const hy_op_def hy_opdef_quantized_conv_plain = {
  .params_size = sizeof (hy_quantized_conv_plain_params),
  .parse = qconv_plain_parse,
  .input_names = qconv_plain_inputs,
  .num_outputs = three_outputs,
  .infer_shape = qconv_plain_infer,
  .infer_dtype = qconv_plain_dtype,
  .flops = qconv_plain_flops,
};

/* ---- _contrib_quantized_pooling ------------------------------------------ */

static const char *const qpool_inputs[] = { "data", "min_data", "max_data",
  NULL };

static gboolean
qpool_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_quantized_pool_params *p = params;
  p->pool.op = HY_OP_POOLING;
  if (!hy_opdef_pooling.parse (attrs, &p->pool, error))
    return FALSE;
  if (p->pool.pool_type != HY_POOL_MAX && p->pool.pool_type != HY_POOL_AVG) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "attribute 'pool_type': quantized pooling is max or avg");
    return FALSE;
  }
  return TRUE;
}

static gboolean
qpool_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_quantized_pool_params *p = params;
  if (!expect_range (&in[1], "min_data", error)
      || !expect_range (&in[2], "max_data", error)
      || !hy_opdef_pooling.infer_shape (&p->pool, in, 1, out, 1, error))
    return FALSE;
  set_range_shapes (out);
  return TRUE;
}

static gboolean
qpool_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  if (!expect_quantized (in, 0, "data", error))
    return FALSE;
  out[0] = in[0];
  out[1] = out[2] = HY_DTYPE_FLOAT32;
  return TRUE;
}

/* Pooling also keeps its data's dtype: a max over bytes compares them
 * signed or not. */
static gboolean
qpool_dtype_kept (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  hy_quantized_pool_params *p = params;
  if (!qpool_dtype (params, in, n_in, out, n_out, error))
    return FALSE;
  p->in_uint8 = in[0] == HY_DTYPE_UINT8;
  return TRUE;
}

const hy_op_def hy_opdef_quantized_pooling = {
  .params_size = sizeof (hy_quantized_pool_params),
  .parse = qpool_parse,
  .input_names = qpool_inputs,
  .num_outputs = three_outputs,
  .infer_shape = qpool_infer,
  .infer_dtype = qpool_dtype_kept,
};

/* ---- _contrib_quantized_flatten ------------------------------------------ */

static gboolean
qflatten_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  if (!expect_range (&in[1], "min_data", error)
      || !expect_range (&in[2], "max_data", error)
      || !hy_opdef_flatten.infer_shape (NULL, in, 1, out, 1, error))
    return FALSE;
  set_range_shapes (out);
  return TRUE;
}

const hy_op_def hy_opdef_quantized_flatten = {
  .params_size = sizeof (hy_quantized_flatten_params),
  .input_names = qpool_inputs,
  .num_outputs = three_outputs,
  .infer_shape = qflatten_infer,
  .infer_dtype = qpool_dtype,
};

/* ---- _contrib_quantized_act ---------------------------------------------- */

static gboolean
qact_parse (GHashTable *attrs, void *params, GError **error)
{
  const char *t = hy_attr_string (attrs, "act_type");
  if (!t || strcmp (t, "relu")) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "attribute 'act_type' is %s; a quantized activation is relu (the "
        "only one MXNet 1.9.1 quantizes)", t ? t : "not given");
    return FALSE;
  }
  return TRUE;
}

static gboolean
qact_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  if (!expect_range (&in[1], "min_data", error)
      || !expect_range (&in[2], "max_data", error))
    return FALSE;
  out[0] = in[0];
  set_range_shapes (out);
  return TRUE;
}

static gboolean
qact_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  /* MXNet declares the output int8 whatever comes in; what its oneDNN
   * kernel makes of uint8 data under that is not reproduced here. */
  if (in[0] != HY_DTYPE_INT8) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "input 'data' is %s; a quantized relu runs on int8 data only here",
        hy_dtype_name (in[0]));
    return FALSE;
  }
  out[0] = HY_DTYPE_INT8;
  out[1] = out[2] = HY_DTYPE_FLOAT32;
  return TRUE;
}

const hy_op_def hy_opdef_quantized_act = {
  .params_size = sizeof (hy_quantized_act_params),
  .parse = qact_parse,
  .input_names = qpool_inputs,
  .num_outputs = three_outputs,
  .infer_shape = qact_infer,
  .infer_dtype = qact_dtype,
};

/* ---- _contrib_quantized_concat ------------------------------------------- */

static gboolean
qconcat_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_quantized_concat_params *p = params;
  p->concat.op = HY_OP_CONCAT;
  if (!hy_opdef_concat.parse (attrs, &p->concat, error))
    return FALSE;
  if (p->concat.num_args > HY_QUANTIZED_CONCAT_MAX_ARGS) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "attribute 'num_args' is %d; a quantized concat takes at most %d "
        "inputs here", p->concat.num_args, HY_QUANTIZED_CONCAT_MAX_ARGS);
    return FALSE;
  }
  return TRUE;
}

/* MXNet's inputs: the data first, then a min and a max for each. */
static int
qconcat_num_inputs (const void *params)
{
  return 3 * ((const hy_quantized_concat_params *) params)->concat.num_args;
}

static gboolean
qconcat_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_quantized_concat_params *p = params;
  int n = p->concat.num_args;
  for (int k = n; k < n_in; k++) {
    char what[32];
    snprintf (what, sizeof what, "arg%d_%s", (k - n) / 2,
        (k - n) % 2 ? "max" : "min");
    if (!expect_range (&in[k], what, error))
      return FALSE;
  }
  if (!hy_opdef_concat.infer_shape (&p->concat, in, n, out, 1, error))
    return FALSE;
  set_range_shapes (out);
  return TRUE;
}

static gboolean
qconcat_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  hy_quantized_concat_params *p = params;
  p->in_uint8 = 0;
  for (int k = 0; k < p->concat.num_args; k++) {
    char what[16];
    snprintf (what, sizeof what, "arg%d", k);
    if (!expect_quantized (in, k, what, error))
      return FALSE;
    if (in[k] == HY_DTYPE_UINT8)
      p->in_uint8 |= UINT64_C (1) << k;
  }
  /* MXNet's ConcatType: int8 as soon as one input is. */
  p->out_uint8 = p->in_uint8 == (p->concat.num_args == 64 ? ~UINT64_C (0)
      : (UINT64_C (1) << p->concat.num_args) - 1);
  out[0] = p->out_uint8 ? HY_DTYPE_UINT8 : HY_DTYPE_INT8;
  out[1] = out[2] = HY_DTYPE_FLOAT32;
  return TRUE;
}

const hy_op_def hy_opdef_quantized_concat = {
  .params_size = sizeof (hy_quantized_concat_params),
  .parse = qconcat_parse,
  .num_inputs = qconcat_num_inputs,
  .num_outputs = three_outputs,
  .infer_shape = qconcat_infer,
  .infer_dtype = qconcat_dtype,
};

/* ---- quantized _sg_mkldnn_conv ------------------------------------------- */

/* The fused activations MXNet's oneDNN pass makes of ResNet-like nets;
 * the loader names them act_type and postsum_act_type. */
static gboolean
parse_relu (GHashTable *attrs, const char *flag, const char *key,
    bool bounded_ok, bool *on, GError **error)
{
  gboolean set;
  if (!hy_attr_bool (attrs, flag, FALSE, &set, error))
    return FALSE;
  *on = set;
  if (!set)
    return TRUE;
  const char *t = hy_attr_string (attrs, key);
  /* A bounded ReLU (ReLU6, the loader's name for a fused clip from 0)
   * without a residual after it is a ReLU here: MXNet's quantized layer
   * drops it and lets the output's uint8 range do the cut-off
   * (mkldnn_conv.cc), so the calibrated max bounds the value, not 6. */
  if (t && bounded_ok && !strcmp (t, "bounded_relu"))
    return TRUE;
  if (!t || strcmp (t, "relu")) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: the fused activation is %s; only relu runs quantized here",
        flag, t ? t : "not given");
    return FALSE;
  }
  return TRUE;
}

static gboolean
require_quantized (GHashTable *attrs, GError **error)
{
  gboolean quantized;
  if (!hy_attr_bool (attrs, "quantized", FALSE, &quantized, error))
    return FALSE;
  if (!quantized) {
    /* fp32 ones never get here: the loader reads their subgraph instead */
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "a fused oneDNN node without its subgraph: only quantized ones are "
        "read as one op");
    return FALSE;
  }
  return TRUE;
}

static gboolean
qconv_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_quantized_conv_params *p = params;
  gboolean with_bn, with_sum, fix_gamma, calibrated;
  double eps;
  if (!require_quantized (attrs, error))
    return FALSE;
  p->conv.op = HY_OP_CONVOLUTION;
  if (!hy_opdef_convolution.parse (attrs, &p->conv, error)
      || !hy_attr_bool (attrs, "with_bn", FALSE, &with_bn, error)
      || !hy_attr_bool (attrs, "with_sum", FALSE, &with_sum, error)
      || !parse_relu (attrs, "with_act", "act_type", !with_sum,
          &p->with_act, error)
      || !parse_relu (attrs, "with_postsum_act", "postsum_act_type", false,
          &p->with_postsum_act, error)
      || !hy_attr_float (attrs, "eps", 1e-3, &eps, error)
      || !hy_attr_bool (attrs, "fix_gamma", TRUE, &fix_gamma, error)
      || !parse_calib (attrs, &calibrated, &p->min_calib, &p->max_calib,
          error))
    return FALSE;
  if (p->conv.n_spatial != 2) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "a quantized convolution runs on 2-D (NCHW) data only");
    return FALSE;
  }
  if (!calibrated) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "a quantized convolution without min_calib_range/max_calib_range "
        "(int32 output) is not supported: calibrate the model");
    return FALSE;
  }
  p->with_bn = with_bn;
  p->with_sum = with_sum;
  p->bn_eps = eps;
  p->bn_fix_gamma = fix_gamma;
  /* MXNet's IsOutputUInt8: the last activation is a ReLU. */
  p->out_uint8 = (!p->with_sum && p->with_act) || p->with_postsum_act;
  return TRUE;
}

static int
qconv_num_inputs (const void *params)
{
  return hy_quantized_conv_inputs_of (params).count;
}

static const char *
qconv_input_name (const void *params, int i)
{
  hy_quantized_conv_inputs in = hy_quantized_conv_inputs_of (params);
  static const char *const bn[] = { "gamma", "beta", "moving_mean",
    "moving_var" };
  if (i == 0)
    return "data";
  if (i == 1)
    return "weight";
  if (i == in.bias)
    return "bias";
  if (in.bn >= 0 && i >= in.bn && i < in.bn + 4)
    return bn[i - in.bn];
  if (i == in.sum)
    return "sum";
  if (i == in.min_data)
    return "min_data";
  if (i == in.max_data)
    return "max_data";
  if (i == in.min_sum)
    return "min_sum";
  if (i == in.max_sum)
    return "max_sum";
  return NULL;
}

/* A model loaded without its weights (core/shape-learn.h): the fused
 * layer's fp32 weights take the shapes its attributes give them, as
 * Convolution's do.  The checks below then see them known. */
static void
learn_qconv_weights (const hy_quantized_conv_params *p,
    const hy_quantized_conv_inputs *at, const hy_shape *in)
{
  if (in[0].ndim < 2 || p->conv.num_group <= 0)
    return;
  hy_shape w = { .ndim = p->conv.n_spatial + 2,
    .dims = { p->conv.num_filter, in[0].dims[1] / p->conv.num_group } };
  for (int i = 0; i < p->conv.n_spatial; i++)
    w.dims[2 + i] = p->conv.kernel[i];
  hy_shape_learn (&in[1], &w);
  const hy_shape per_filter = { .ndim = 1, .dims = { p->conv.num_filter } };
  if (at->bias >= 0)
    hy_shape_learn (&in[at->bias], &per_filter);
  for (int k = 0; p->with_bn && k < 4; k++)
    hy_shape_learn (&in[at->bn + k], &per_filter);
}

static gboolean
qconv_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_quantized_conv_params *p = params;
  hy_quantized_conv_inputs at = hy_quantized_conv_inputs_of (p);
  learn_qconv_weights (p, &at, in);
  hy_shape conv_in[3] = { in[0], in[1] };
  if (at.bias >= 0)
    conv_in[2] = in[at.bias];
  if (!hy_opdef_convolution.infer_shape (&p->conv, conv_in,
          at.bias >= 0 ? 3 : 2, out, 1, error))
    return FALSE;
  for (int k = 0; p->with_bn && k < 4; k++) {
    const hy_shape *s = &in[at.bn + k];
    if (s->ndim != 1 || s->dims[0] != p->conv.num_filter) {
      char buf[HY_SHAPE_STRLEN];
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "input '%s' has shape %s, expected (%" G_GINT64_FORMAT ",)",
          qconv_input_name (p, at.bn + k), hy_shape_format (s, buf,
              sizeof buf), (gint64) p->conv.num_filter);
      return FALSE;
    }
  }
  if (p->with_sum && !hy_shape_equal (&in[at.sum], &out[0])) {
    char a[HY_SHAPE_STRLEN], b[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "input 'sum' has shape %s, expected the output's %s",
        hy_shape_format (&in[at.sum], a, sizeof a),
        hy_shape_format (&out[0], b, sizeof b));
    return FALSE;
  }
  for (int k = at.min_data; k < at.count; k++)
    if (!expect_range (&in[k], qconv_input_name (p, k), error))
      return FALSE;
  set_range_shapes (out);
  return TRUE;
}

static gboolean
qconv_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  hy_quantized_conv_params *p = params;
  hy_quantized_conv_inputs at = hy_quantized_conv_inputs_of (p);
  if (!expect_quantized (in, 0, "data", error)
      || (p->with_sum && !expect_quantized (in, at.sum, "sum", error)))
    return FALSE;
  for (int k = 1; k < at.count; k++) {
    if (k == at.sum || !hy_dtype_is_integer (in[k]))
      continue;
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "input '%s' is %s, expected float32 (MXNet quantizes the weights "
        "itself)", qconv_input_name (p, k), hy_dtype_name (in[k]));
    return FALSE;
  }
  p->data_uint8 = in[0] == HY_DTYPE_UINT8;
  p->sum_uint8 = p->with_sum && in[at.sum] == HY_DTYPE_UINT8;
  out[0] = p->out_uint8 ? HY_DTYPE_UINT8 : HY_DTYPE_INT8;
  out[1] = out[2] = HY_DTYPE_FLOAT32;
  return TRUE;
}

static double
qconv_flops (const void *params, const hy_shape *in, int n_in,
    const hy_shape *out, int n_out)
{
  double k = (double) hy_shape_numel (&in[1]) / (double) in[1].dims[0];
  return 2.0 * k * (double) hy_shape_numel (&out[0]);
}

const hy_op_def hy_opdef_quantized_conv = {
  .params_size = sizeof (hy_quantized_conv_params),
  .parse = qconv_parse,
  .num_inputs = qconv_num_inputs,
  .input_name = qconv_input_name,
  .num_outputs = three_outputs,
  .infer_shape = qconv_infer,
  .infer_dtype = qconv_dtype,
  .flops = qconv_flops,
};

/* ---- quantized _sg_mkldnn_fully_connected -------------------------------- */

static gboolean
qfc_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_quantized_fc_params *p = params;
  gboolean no_bias, flatten, float_out, eltwise;
  int64_t hidden;
  if (!require_quantized (attrs, error)
      || !hy_attr_require (attrs, "num_hidden", error)
      || !hy_attr_int (attrs, "num_hidden", 0, &hidden, error)
      || !hy_attr_bool (attrs, "no_bias", FALSE, &no_bias, error)
      || !hy_attr_bool (attrs, "flatten", TRUE, &flatten, error)
      || !hy_attr_bool (attrs, "enable_float_output", FALSE, &float_out,
          error)
      || !hy_attr_bool (attrs, "with_eltwise", FALSE, &eltwise, error))
    return FALSE;
  if (!float_out || eltwise) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: only a quantized fully connected layer with float output "
        "(enable_float_output) and no fused activation runs here",
        eltwise ? "with_eltwise" : "enable_float_output");
    return FALSE;
  }
  if (hidden <= 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'num_hidden' must be positive");
    return FALSE;
  }
  p->num_hidden = hidden;
  p->no_bias = no_bias;
  p->flatten = flatten;
  return TRUE;
}

static const char *const qfc_inputs_bias[] = { "data", "weight", "bias",
  "min_data", "max_data", "min_weight", "max_weight", "min_bias",
  "max_bias", NULL };
static const char *const qfc_inputs_no_bias[] = { "data", "weight",
  "min_data", "max_data", "min_weight", "max_weight", NULL };

static int
qfc_num_inputs (const void *params)
{
  const hy_quantized_fc_params *p = params;
  return p->no_bias ? 6 : 9;
}

static const char *
qfc_input_name (const void *params, int i)
{
  const hy_quantized_fc_params *p = params;
  return p->no_bias ? qfc_inputs_no_bias[i] : qfc_inputs_bias[i];
}

static gboolean
qfc_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_quantized_fc_params *p = params;
  const hy_shape *d = &in[0];
  if (d->ndim < 2 || (!p->flatten && d->ndim != 2)) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "input 'data' must be (batch, features...) here");
    return FALSE;
  }
  int64_t features = hy_shape_numel (d) / d->dims[0];
  const hy_shape *w = &in[1];
  /* weights not loaded (core/shape-learn.h): as the attributes give them */
  const hy_shape want_w = { .ndim = 2, .dims = { p->num_hidden, features } };
  const hy_shape want_b = { .ndim = 1, .dims = { p->num_hidden } };
  hy_shape_learn (w, &want_w);
  if (!p->no_bias)
    hy_shape_learn (&in[2], &want_b);
  if (w->ndim != 2 || w->dims[0] != p->num_hidden || w->dims[1] != features) {
    char buf[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "input 'weight' has shape %s, expected (%" G_GINT64_FORMAT ", %"
        G_GINT64_FORMAT ")", hy_shape_format (w, buf, sizeof buf),
        (gint64) p->num_hidden, (gint64) features);
    return FALSE;
  }
  if (!p->no_bias && hy_shape_numel (&in[2]) != p->num_hidden) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "input 'bias' must hold num_hidden (%" G_GINT64_FORMAT ") values",
        (gint64) p->num_hidden);
    return FALSE;
  }
  for (int k = p->no_bias ? 2 : 3; k < n_in; k++)
    if (!expect_range (&in[k], qfc_input_name (p, k), error))
      return FALSE;
  out[0] = (hy_shape) { .ndim = 2, .dims = { d->dims[0], p->num_hidden } };
  return TRUE;
}

static gboolean
qfc_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  hy_quantized_fc_params *p = params;
  if (!expect_quantized (in, 0, "data", error))
    return FALSE;
  /* The weight and bias are int8 in the params file, read as float32
   * holding their integers: what they hold is checked by the kernel's
   * arithmetic, not by a dtype here. */
  p->data_uint8 = in[0] == HY_DTYPE_UINT8;
  out[0] = HY_DTYPE_FLOAT32;
  return TRUE;
}

static double
qfc_flops (const void *params, const hy_shape *in, int n_in,
    const hy_shape *out, int n_out)
{
  return 2.0 * (double) hy_shape_numel (&in[1]) * (double) in[0].dims[0];
}

const hy_op_def hy_opdef_quantized_fc = {
  .params_size = sizeof (hy_quantized_fc_params),
  .parse = qfc_parse,
  .num_inputs = qfc_num_inputs,
  .input_name = qfc_input_name,
  .infer_shape = qfc_infer,
  .infer_dtype = qfc_dtype,
  .flops = qfc_flops,
};

/* ---- _contrib_quantized_batch_norm --------------------------------------- */

static const char *const qbn_inputs[] = { "data", "gamma", "beta",
  "moving_mean", "moving_var", "min_data", "max_data", NULL };

static gboolean
qbn_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_quantized_batch_norm_params *p = params;
  gboolean calibrated;
  p->bn.op = HY_OP_BATCH_NORM;
  if (!hy_opdef_batch_norm.parse (attrs, &p->bn, error)
      || !hy_attr_float (attrs, "eps", 1e-3, &p->eps, error)
      || !parse_calib (attrs, &calibrated, &p->min_calib, &p->max_calib,
          error))
    return FALSE;
  if (!calibrated) {
    /* MXNet itself stops here: its quantized BatchNorm has no int32 form */
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "a quantized BatchNorm needs min_calib_range and max_calib_range "
        "(MXNet runs none without): calibrate the model");
    return FALSE;
  }
  if (p->bn.output_mean_var) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'output_mean_var': a quantized BatchNorm gives its value "
        "and range only");
    return FALSE;
  }
  return TRUE;
}

static gboolean
qbn_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_quantized_batch_norm_params *p = params;
  if (!expect_range (&in[5], "min_data", error)
      || !expect_range (&in[6], "max_data", error)
      || !hy_opdef_batch_norm.infer_shape (&p->bn, in, 5, out, 1, error))
    return FALSE;
  set_range_shapes (out);
  return TRUE;
}

static gboolean
qbn_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  hy_quantized_batch_norm_params *p = params;
  if (!expect_quantized (in, 0, "data", error))
    return FALSE;
  for (int k = 1; k < 5; k++) {
    if (!hy_dtype_is_integer (in[k]))
      continue;
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "input '%s' is %s, expected float32", qbn_inputs[k],
        hy_dtype_name (in[k]));
    return FALSE;
  }
  p->in_uint8 = in[0] == HY_DTYPE_UINT8;
  out[0] = HY_DTYPE_INT8;
  out[1] = out[2] = HY_DTYPE_FLOAT32;
  return TRUE;
}

const hy_op_def hy_opdef_quantized_batch_norm = {
  .params_size = sizeof (hy_quantized_batch_norm_params),
  .parse = qbn_parse,
  .input_names = qbn_inputs,
  .num_outputs = three_outputs,
  .infer_shape = qbn_infer,
  .infer_dtype = qbn_dtype,
};

/* ---- _contrib_quantized_elemwise_mul ------------------------------------- */

static const char *const qmul_inputs[] = { "lhs", "rhs", "lhs_min",
  "lhs_max", "rhs_min", "rhs_max", NULL };

static gboolean
qmul_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_quantized_elemwise_mul_params *p = params;
  gboolean float_output, calibrated;
  if (!hy_attr_bool (attrs, "enable_float_output", FALSE, &float_output,
          error)
      || !parse_calib (attrs, &calibrated, &p->min_calib, &p->max_calib,
          error))
    return FALSE;
  if (!float_output && !calibrated) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "a quantized elemwise_mul without min_calib_range/max_calib_range "
        "(int32 output) is not supported: calibrate the model");
    return FALSE;
  }
  p->float_output = float_output;
  return TRUE;
}

static int
qmul_num_outputs (const void *params)
{
  return ((const hy_quantized_elemwise_mul_params *) params)->float_output
      ? 1 : 3;
}

static gboolean
qmul_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_quantized_elemwise_mul_params *p = params;
  for (int k = 2; k < 6; k++)
    if (!expect_range (&in[k], qmul_inputs[k], error))
      return FALSE;
  if (!hy_shape_equal (&in[0], &in[1])) {
    char a[HY_SHAPE_STRLEN], b[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "inputs 'lhs' %s and 'rhs' %s differ; a quantized elemwise_mul "
        "does not broadcast", hy_shape_format (&in[0], a, sizeof a),
        hy_shape_format (&in[1], b, sizeof b));
    return FALSE;
  }
  out[0] = in[0];
  if (!p->float_output)
    set_range_shapes (out);
  return TRUE;
}

static gboolean
qmul_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  const hy_quantized_elemwise_mul_params *p = params;
  for (int k = 0; k < 2; k++) {
    if (in[k] == HY_DTYPE_INT8)
      continue;
    /* MXNet 1.9.1 logs an error and reads such bytes as int8 anyway, so
     * its own outputs are wrong there (MobileNetV3 quantized with
     * quantized_dtype auto or uint8): quantize it with int8 instead. */
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "input '%s' is %s; a quantized elemwise_mul multiplies int8 values "
        "only (MXNet 1.9.1 misreads any other: quantize with "
        "quantized_dtype='int8')", qmul_inputs[k], hy_dtype_name (in[k]));
    return FALSE;
  }
  out[0] = p->float_output ? HY_DTYPE_FLOAT32 : HY_DTYPE_INT8;
  for (int k = 1; k < n_out; k++)
    out[k] = HY_DTYPE_FLOAT32;
  return TRUE;
}

const hy_op_def hy_opdef_quantized_elemwise_mul = {
  .params_size = sizeof (hy_quantized_elemwise_mul_params),
  .parse = qmul_parse,
  .input_names = qmul_inputs,
  .num_outputs = qmul_num_outputs,
  .infer_shape = qmul_infer,
  .infer_dtype = qmul_dtype,
};

/* ---- _contrib_quantized_elemwise_add ------------------------------------- */

static const char *const qadd_inputs[] = { "lhs", "rhs", "lhs_min",
  "lhs_max", "rhs_min", "rhs_max", NULL };

static gboolean
qadd_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_quantized_elemwise_add_params *p = params;
  gboolean calibrated;
  if (!parse_calib (attrs, &calibrated, &p->min_calib, &p->max_calib, error))
    return FALSE;
  if (!calibrated) {
    /* MXNet then writes an int32 sum of range ±(max|lhs| + max|rhs|),
     * which no op here reads */
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "a quantized elemwise_add without min_calib_range/max_calib_range "
        "(int32 output) is not supported: calibrate the model");
    return FALSE;
  }
  return TRUE;
}

static gboolean
qadd_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  for (int k = 2; k < 6; k++)
    if (!expect_range (&in[k], qadd_inputs[k], error))
      return FALSE;
  if (!hy_shape_equal (&in[0], &in[1])) {
    char a[HY_SHAPE_STRLEN], b[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "inputs 'lhs' %s and 'rhs' %s differ; a quantized elemwise_add "
        "does not broadcast", hy_shape_format (&in[0], a, sizeof a),
        hy_shape_format (&in[1], b, sizeof b));
    return FALSE;
  }
  out[0] = in[0];
  set_range_shapes (out);
  return TRUE;
}

static gboolean
qadd_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  hy_quantized_elemwise_add_params *p = params;
  if (!expect_quantized (in, 0, "lhs", error)
      || !expect_quantized (in, 1, "rhs", error))
    return FALSE;
  p->lhs_uint8 = in[0] == HY_DTYPE_UINT8;
  p->rhs_uint8 = in[1] == HY_DTYPE_UINT8;
  /* MXNet: the inputs' dtype when they agree, int8 when they do not */
  out[0] = p->lhs_uint8 && p->rhs_uint8 ? HY_DTYPE_UINT8 : HY_DTYPE_INT8;
  out[1] = out[2] = HY_DTYPE_FLOAT32;
  return TRUE;
}

const hy_op_def hy_opdef_quantized_elemwise_add = {
  .params_size = sizeof (hy_quantized_elemwise_add_params),
  .parse = qadd_parse,
  .input_names = qadd_inputs,
  .num_outputs = three_outputs,
  .infer_shape = qadd_infer,
  .infer_dtype = qadd_dtype,
};
