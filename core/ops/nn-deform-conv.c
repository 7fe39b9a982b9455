/*
 * nn-deform-conv.c — _contrib_ModulatedDeformableConvolution (DCNv2):
 * attributes and shape inference, as MXNet 1.9.1's
 * (src/operator/contrib/modulated_deformable_convolution-inl.h).
 *
 * Convolution's attributes plus num_deformable_group; MXNet runs only
 * 2-D kernels on NCHW data.  `workspace` sizes MXNet's own scratch and
 * means nothing here.  The offset and mask inputs carry a (dy, dx) pair
 * and a scale per deformable group and tap at every output position, so
 * their shapes follow from the output's.
 */
#include <string.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/deform-conv.h"
#include "core/ops/nn-common.h"

static gboolean
deform_conv_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_deform_conv_params *p = params;
  int64_t kernel[HY_NN_MAX_SPATIAL];
  int n = hy_nn_kernel_attr (attrs, kernel, error);
  if (n < 0)
    return FALSE;
  if (n != 2) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'kernel' is required with 2 entries, e.g. "
        "kernel='(3, 3)': MXNet's deformable convolution is 2-D only");
    return FALSE;
  }
  p->kernel[0] = kernel[0];
  p->kernel[1] = kernel[1];
  if (!hy_nn_spatial_attr (attrs, "stride", 2, 1, 1, p->stride, error)
      || !hy_nn_spatial_attr (attrs, "dilate", 2, 1, 1, p->dilate, error)
      || !hy_nn_spatial_attr (attrs, "pad", 2, 0, 0, p->pad, error))
    return FALSE;
  if (!hy_nn_filters_attr (attrs, G_MAXINT32, &p->num_filter, &p->num_group,
          error)
      || !hy_nn_count_attr (attrs, "num_deformable_group", 1, G_MAXINT32,
          &p->num_deformable_group, error))
    return FALSE;
  gboolean no_bias;
  if (!hy_attr_bool (attrs, "no_bias", FALSE, &no_bias, error))
    return FALSE;
  p->no_bias = no_bias;

  const char *layout = hy_attr_string (attrs, "layout");
  if (layout && strcmp (layout, "None") && strcmp (layout, "NCHW")) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "attribute 'layout' = '%s' is not supported; MXNet's deformable "
        "convolution runs NCHW only", layout);
    return FALSE;
  }
  return TRUE;
}

static const char *const deform_conv_inputs[] = {
  "data", "offset", "mask", "weight", "bias", NULL,
};

static int
deform_conv_num_inputs (const void *params)
{
  const hy_deform_conv_params *p = params;
  return p->no_bias ? 4 : 5;
}

static gboolean
deform_conv_infer_shape (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_deform_conv_params *p = params;
  char buf[HY_SHAPE_STRLEN];

  if (in[0].ndim != 4) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data must have 4 dimensions (NCHW), got shape %s",
        hy_shape_format (&in[0], buf, sizeof buf));
    return FALSE;
  }
  const int64_t channels = in[0].dims[1];
  if (channels == 0 || channels % p->num_group != 0
      || channels % p->num_deformable_group != 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data has %" G_GINT64_FORMAT " channels (shape %s); it needs a "
        "positive multiple of num_group = %" G_GINT64_FORMAT " and of "
        "num_deformable_group = %" G_GINT64_FORMAT, (gint64) channels,
        hy_shape_format (&in[0], buf, sizeof buf), (gint64) p->num_group,
        (gint64) p->num_deformable_group);
    return FALSE;
  }

  hy_shape o = { .ndim = 4, .dims = { in[0].dims[0], p->num_filter } };
  for (int i = 0; i < 2; i++) {
    const int64_t extent = p->dilate[i] * (p->kernel[i] - 1) + 1;
    const int64_t size = in[0].dims[2 + i];
    if (!hy_nn_window_fits (size, p->pad[i], extent, i, error))
      return FALSE;
    o.dims[2 + i] = (size + 2 * p->pad[i] - extent) / p->stride[i] + 1;
  }

  /* Kernel entries are bounded by HY_NN_MAX_WINDOW, so taps fits; the
   * channel counts below must too. */
  const int64_t taps = p->kernel[0] * p->kernel[1];
  if (taps > G_MAXINT32 / (2 * p->num_deformable_group)) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "kernel %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " with "
        "num_deformable_group = %" G_GINT64_FORMAT " needs more offset "
        "channels than a tensor holds", (gint64) p->kernel[0],
        (gint64) p->kernel[1], (gint64) p->num_deformable_group);
    return FALSE;
  }
  hy_shape offset = o, mask = o;
  offset.dims[1] = 2 * p->num_deformable_group * taps;
  mask.dims[1] = p->num_deformable_group * taps;
  if (!hy_nn_expect_shape (&in[1], &offset, "offset", error)
      || !hy_nn_expect_shape (&in[2], &mask, "mask", error))
    return FALSE;
  hy_shape w = { .ndim = 4, .dims = { p->num_filter,
      channels / p->num_group, p->kernel[0], p->kernel[1] } };
  if (!hy_nn_expect_shape (&in[3], &w, "weight", error))
    return FALSE;
  if (!p->no_bias) {
    hy_shape b = { .ndim = 1, .dims = { p->num_filter } };
    if (!hy_nn_expect_shape (&in[4], &b, "bias", error))
      return FALSE;
  }
  out[0] = o;
  return TRUE;
}

/* As a convolution: one multiply-add per weight of the filter per
 * output, the bilinear sampling not counted. */
static double
deform_conv_flops (const void *params, const hy_shape *in, int n_in,
    const hy_shape *out, int n_out)
{
  const hy_shape *w = &in[3];
  if (n_in < 4 || w->ndim < 1 || w->dims[0] <= 0)
    return 0;
  double per_output = (double) hy_shape_numel (w) / (double) w->dims[0];
  return 2.0 * (double) hy_shape_numel (&out[0]) * per_output;
}

const hy_op_def hy_opdef_modulated_deform_conv = {
  .params_size = sizeof (hy_deform_conv_params),
  .parse = deform_conv_parse,
  .input_names = deform_conv_inputs,
  .num_inputs = deform_conv_num_inputs,
  .infer_shape = deform_conv_infer_shape,
  .flops = deform_conv_flops,
};
