/*
 * softmax.c — softmax, log_softmax, SoftmaxActivation and SoftmaxOutput:
 * attributes and shapes.
 *
 * All four normalise exp(x / temperature) along one span of the input; they
 * differ only in which span, so parse() reduces each to an axis (or to the
 * "everything after the first axis" span of SoftmaxOutput's default):
 *
 *   softmax, log_softmax   `axis` [-1], `temperature` [None = 1]
 *   SoftmaxActivation      mode=instance [default]: the last axis (MXNet
 *                          flattens to (rows, last)); mode=channel: axis 1
 *   SoftmaxOutput          multi_output: axis 1; else preserve_shape: the
 *                          last axis; else the flattened (d0, rest)
 *
 * The output always has the data's shape.  SoftmaxOutput's label only
 * matters for training, so it may be absent and shapeless.
 */
#include <string.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/elementwise.h"

/* An optional float ("None" or absent: *out stays as given). */
static gboolean
optional_float (GHashTable *attrs, const char *key, double *out,
    GError **error)
{
  const char *v = hy_attr_string (attrs, key);
  if (!v)
    return TRUE;
  g_autofree char *s = g_strstrip (g_strdup (v));
  if (strcmp (s, "None") == 0)
    return TRUE;
  return hy_attr_float (attrs, key, *out, out, error);
}

static gboolean
softmax_axis_parse (GHashTable *attrs, hy_softmax_params *p,
    GError **error)
{
  int64_t axis;
  gboolean use_length;
  double temperature = 1.0;
  if (!hy_attr_int (attrs, "axis", -1, &axis, error)
      || !hy_attr_bool (attrs, "use_length", FALSE, &use_length, error)
      || !optional_float (attrs, "temperature", &temperature, error))
    return FALSE;
  if (use_length) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "attribute 'use_length' = True (masking by a length input) is not "
        "supported");
    return FALSE;
  }
  if (axis < -HY_MAX_DIMS || axis >= HY_MAX_DIMS) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'axis' = '%s' is out of range for tensors of at most %d "
        "dimensions", hy_attr_string (attrs, "axis"), HY_MAX_DIMS);
    return FALSE;
  }
  /* A zero temperature is not rejected: MXNet answers NaN, and so do we.
   * `dtype` only picks the output's precision: we compute in float32. */
  p->axis = (int) axis;
  p->temperature = (float) temperature;
  p->log = p->op == HY_OP_LOG_SOFTMAX;
  return TRUE;
}

static gboolean
softmax_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_softmax_params *p = params;
  p->temperature = 1.0f;
  p->axis = -1;

  if (p->op == HY_OP_SOFTMAX || p->op == HY_OP_LOG_SOFTMAX)
    return softmax_axis_parse (attrs, p, error);

  if (p->op == HY_OP_SOFTMAX_ACTIVATION) {
    static const char *const modes[] = { "instance", "channel", NULL };
    int mode;
    if (!hy_attr_enum (attrs, "mode", modes, 0, &mode, error))
      return FALSE;
    p->axis = mode == 0 ? -1 : 1;
    return TRUE;
  }

  /* SoftmaxOutput: the loss-related attributes (grad_scale, ignore_label,
   * use_ignore, normalization, out_grad, smooth_alpha) do not change the
   * forward pass. */
  gboolean multi_output, preserve_shape;
  if (!hy_attr_bool (attrs, "multi_output", FALSE, &multi_output, error)
      || !hy_attr_bool (attrs, "preserve_shape", FALSE, &preserve_shape,
          error))
    return FALSE;
  if (multi_output)
    p->axis = 1;
  else if (preserve_shape)
    p->axis = -1;
  else
    p->flat = TRUE;
  return TRUE;
}

static const char *const softmax_inputs[] = { "data", "label", NULL };

static int
softmax_num_inputs (const void *params)
{
  const hy_softmax_params *p = params;
  return p->op == HY_OP_SOFTMAX_OUTPUT ? 2 : 1;
}

static gboolean
softmax_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_softmax_params *p = params;
  const hy_shape *d = &in[0];
  char buf[HY_SHAPE_STRLEN];
  int axis;

  if (p->op == HY_OP_SOFTMAX_ACTIVATION && p->axis == 1 && d->ndim < 3) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "mode 'channel' needs data of at least 3 dimensions (N, C, …), got "
        "shape %s", hy_shape_format (d, buf, sizeof buf));
    return FALSE;
  }
  if (d->ndim < 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data must have at least 1 dimension, got shape %s",
        hy_shape_format (d, buf, sizeof buf));
    return FALSE;
  }
  if (!p->flat && !hy_axis_normalize (p->axis, d->ndim, &axis)) {
    if (p->op == HY_OP_SOFTMAX_OUTPUT)
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "attribute 'multi_output' needs data of at least 2 dimensions, "
          "got shape %s", hy_shape_format (d, buf, sizeof buf));
    else
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "attribute 'axis' = %d is out of range for data of shape %s "
          "(expected %d to %d)", p->axis, hy_shape_format (d, buf, sizeof buf),
          -d->ndim, d->ndim - 1);
    return FALSE;
  }
  out[0] = *d;
  return TRUE;
}

const hy_op_def hy_opdef_softmax = {
  .params_size = sizeof (hy_softmax_params),
  .parse = softmax_parse,
  .input_names = softmax_inputs,
  .num_inputs = softmax_num_inputs,
  .unused_inputs = 1u << 1,
  .infer_shape = softmax_infer,
  .inplace = TRUE,
};
