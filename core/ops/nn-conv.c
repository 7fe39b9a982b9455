/*
 * nn-conv.c — Convolution: attributes and shape inference.
 *
 * MXNet 1.9.1 semantics: `kernel` and `num_filter` are required; stride
 * and dilate default to 1 and pad to 0 on every kernel axis; weight is
 * (num_filter, C / num_group, k...); bias (num_filter,) unless no_bias.
 * Only channel-first layouts run here.
 */
#include <string.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/nn.h"
#include "core/ops/nn-common.h"

static const char *const layout_for_rank[HY_NN_MAX_SPATIAL + 1] = {
  NULL, "NCW", "NCHW", "NCDHW",
};

static gboolean
parse_layout (GHashTable *attrs, int n_spatial, GError **error)
{
  const char *v = hy_attr_string (attrs, "layout");
  if (!v)
    return TRUE;
  g_autofree char *layout = g_strstrip (g_strdup (v));
  if (!strcmp (layout, "None") || !strcmp (layout, layout_for_rank[n_spatial]))
    return TRUE;
  static const char *const channel_last[] = { "NWC", "NHWC", "NDHWC", NULL };
  static const char *const channel_first[] = { "NCW", "NCHW", "NCDHW", NULL };
  if (g_strv_contains (channel_last, layout)) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "attribute 'layout' = '%s' is not supported; only channel-first "
        "layouts (NCW, NCHW, NCDHW) are", layout);
    return FALSE;
  }
  if (g_strv_contains (channel_first, layout)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'layout' = '%s' does not match the %d-D kernel "
        "(expected %s)", layout, n_spatial, layout_for_rank[n_spatial]);
    return FALSE;
  }
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "attribute 'layout' = '%s' is not one of None|NCW|NCHW|NCDHW", layout);
  return FALSE;
}

static gboolean
conv_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_conv_params *p = params;

  int n = hy_nn_kernel_attr (attrs, p->kernel, error);
  if (n < 0)
    return FALSE;
  if (n == 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'kernel' is required, e.g. kernel='(3, 3)'");
    return FALSE;
  }
  p->n_spatial = n;

  if (!hy_nn_spatial_attr (attrs, "stride", n, 1, 1, p->stride, error)
      || !hy_nn_spatial_attr (attrs, "dilate", n, 1, 1, p->dilate, error)
      || !hy_nn_spatial_attr (attrs, "pad", n, 0, 0, p->pad, error))
    return FALSE;

  if (!hy_attr_has (attrs, "num_filter")) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'num_filter' is required");
    return FALSE;
  }
  int64_t num_filter, num_group;
  if (!hy_attr_int (attrs, "num_filter", 0, &num_filter, error)
      || !hy_attr_int (attrs, "num_group", 1, &num_group, error))
    return FALSE;
  if (num_filter < 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'num_filter' = '%s' must be positive",
        hy_attr_string (attrs, "num_filter"));
    return FALSE;
  }
  if (num_group < 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'num_group' = '%s' must be positive",
        hy_attr_string (attrs, "num_group"));
    return FALSE;
  }
  if (num_filter % num_group != 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'num_filter' = %" G_GINT64_FORMAT " is not divisible by "
        "'num_group' = %" G_GINT64_FORMAT, (gint64) num_filter,
        (gint64) num_group);
    return FALSE;
  }
  p->num_filter = num_filter;
  p->num_group = num_group;

  gboolean no_bias;
  if (!hy_attr_bool (attrs, "no_bias", FALSE, &no_bias, error))
    return FALSE;
  p->no_bias = no_bias;
  p->fused = (hy_fused_epilogue) { .act = HY_FUSED_ACT_NONE };

  return parse_layout (attrs, n, error);
}

/* The last two only after the fusion passes (hy_fused_epilogue), and
 * then each comes right after the last input present before it. */
static const char *const conv_inputs[] = {
  "data", "weight", "bias", "batch_norm", "residual", NULL,
};

static int
conv_num_inputs (const void *params)
{
  const hy_conv_params *p = params;
  return hy_fused_inputs_of (p->no_bias, &p->fused).n;
}

static gboolean
conv_infer_shape (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_conv_params *p = params;
  const int n = p->n_spatial;
  char buf[HY_SHAPE_STRLEN];

  if (in[0].ndim != n + 2) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data must have %d dimensions (%s) for a %d-D kernel, got shape %s",
        n + 2, layout_for_rank[n], n,
        hy_shape_format (&in[0], buf, sizeof buf));
    return FALSE;
  }
  const int64_t channels = in[0].dims[1];
  /* Zero input channels would leave the kernel an empty reduction (and a
   * division by zero when it sizes its im2col blocks): refuse it here. */
  if (channels == 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data has 0 channels (shape %s); a convolution needs at least one",
        hy_shape_format (&in[0], buf, sizeof buf));
    return FALSE;
  }
  if (channels % p->num_group != 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data has %" G_GINT64_FORMAT " channels, not divisible by "
        "num_group = %" G_GINT64_FORMAT, (gint64) channels,
        (gint64) p->num_group);
    return FALSE;
  }

  hy_shape wshape = { .ndim = n + 2 };
  wshape.dims[0] = p->num_filter;
  wshape.dims[1] = channels / p->num_group;
  for (int i = 0; i < n; i++)
    wshape.dims[2 + i] = p->kernel[i];
  if (!hy_nn_expect_shape (&in[1], &wshape, "weight", error))
    return FALSE;
  if (!p->no_bias) {
    hy_shape bshape = { .ndim = 1, .dims = { p->num_filter } };
    if (!hy_nn_expect_shape (&in[2], &bshape, "bias", error))
      return FALSE;
  }

  hy_shape o = { .ndim = n + 2 };
  o.dims[0] = in[0].dims[0];
  o.dims[1] = p->num_filter;
  for (int i = 0; i < n; i++) {
    const int64_t extent = p->dilate[i] * (p->kernel[i] - 1) + 1;
    const int64_t size = in[0].dims[2 + i];
    if (!hy_nn_window_fits (size, p->pad[i], extent, i, error))
      return FALSE;
    o.dims[2 + i] = (size + 2 * p->pad[i] - extent) / p->stride[i] + 1;
  }
  const hy_fused_inputs f = hy_fused_inputs_of (p->no_bias, &p->fused);
  if (f.bn >= 0) {
    hy_shape bn = { .ndim = 2, .dims = { 3, p->num_filter } };
    if (!hy_nn_expect_shape (&in[f.bn], &bn,
            "fused batch_norm (mean, scale, shift)", error))
      return FALSE;
  }
  if (f.residual >= 0
      && !hy_nn_expect_shape (&in[f.residual], &o, "residual", error))
    return FALSE;
  out[0] = o;
  return TRUE;
}

/* Each output element is one multiply-add per weight of its filter:
 * weight (F, C/g, k...) holds F filters. */
static double
conv_flops (const void *params, const hy_shape *in, int n_in,
    const hy_shape *out, int n_out)
{
  const hy_shape *w = &in[1];
  if (n_in < 2 || w->ndim < 1 || w->dims[0] <= 0)
    return 0;
  double per_output = (double) hy_shape_numel (w) / (double) w->dims[0];
  return 2.0 * (double) hy_shape_numel (&out[0]) * per_output;
}

const hy_op_def hy_opdef_convolution = {
  .params_size = sizeof (hy_conv_params),
  .parse = conv_parse,
  .input_names = conv_inputs,
  .num_inputs = conv_num_inputs,
  .infer_shape = conv_infer_shape,
  .flops = conv_flops,
};
