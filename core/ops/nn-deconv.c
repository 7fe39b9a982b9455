/*
 * nn-deconv.c — Deconvolution (transposed convolution): attributes and
 * shape inference, as MXNet 1.9.1's native (non-cuDNN) operator: 1-D and
 * 2-D kernels, channel-first layouts.
 *
 * Its defaults differ from Convolution's: no_bias is True.  `adj` must be
 * below the stride on every axis; a `target_shape` with a non-zero entry
 * replaces pad and adj by the ones that give that output size
 * (hy_deconv_pads), and must then have an entry per kernel axis.
 */
#include <string.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/nn.h"
#include "core/ops/nn-common.h"

static const char *const deconv_layouts[] = { NULL, "NCW", "NCHW" };

static gboolean
deconv_parse_layout (GHashTable *attrs, int n, GError **error)
{
  const char *v = hy_attr_string (attrs, "layout");
  if (!v)
    return TRUE;
  g_autofree char *layout = g_strstrip (g_strdup (v));
  if (!strcmp (layout, "None") || !strcmp (layout, deconv_layouts[n]))
    return TRUE;
  g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
      "attribute 'layout' = '%s' is not supported for a %d-D kernel; only "
      "%s is", layout, n, deconv_layouts[n]);
  return FALSE;
}

static gboolean
deconv_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_deconv_params *p = params;
  int n = hy_nn_kernel_attr (attrs, p->kernel, error);
  if (n < 0)
    return FALSE;
  if (n == 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'kernel' is required, e.g. kernel='(4, 4)'");
    return FALSE;
  }
  if (n > 2) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "a %d-D kernel ('kernel' = '%s') is not supported: MXNet's own "
        "Deconvolution runs 1-D and 2-D kernels only", n,
        hy_attr_string (attrs, "kernel"));
    return FALSE;
  }
  p->n_spatial = n;
  if (!hy_nn_spatial_attr (attrs, "stride", n, 1, 1, p->stride, error)
      || !hy_nn_spatial_attr (attrs, "dilate", n, 1, 1, p->dilate, error)
      || !hy_nn_spatial_attr (attrs, "pad", n, 0, 0, p->pad, error)
      || !hy_nn_spatial_attr (attrs, "adj", n, 0, 0, p->adj, error))
    return FALSE;

  /* target_shape counts only when some entry is not 0. */
  hy_tuple t = { 0 };
  if (!hy_attr_tuple (attrs, "target_shape", &t, FALSE, error))
    return FALSE;
  for (int i = 0; i < t.n; i++)
    if (t.v[i] != 0)
      p->has_target = true;
  if (p->has_target) {
    if (t.n != n) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'target_shape' = '%s' has %d entries; expected %d like "
          "'kernel'", hy_attr_string (attrs, "target_shape"), t.n, n);
      return FALSE;
    }
    for (int i = 0; i < n; i++) {
      if (t.v[i] < 1 || t.v[i] > HY_NN_MAX_WINDOW) {
        g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
            "attribute 'target_shape' = '%s': entries must be in [1, %d]",
            hy_attr_string (attrs, "target_shape"), HY_NN_MAX_WINDOW);
        return FALSE;
      }
      p->target[i] = t.v[i];
    }
  } else {
    for (int i = 0; i < n; i++) {
      if (p->adj[i] > p->stride[i] - 1) {
        g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
            "attribute 'adj' = '%s' must be smaller than 'stride' on every "
            "axis", hy_attr_string (attrs, "adj"));
        return FALSE;
      }
    }
  }

  if (!hy_nn_filters_attr (attrs, G_MAXUINT32, &p->num_filter, &p->num_group,
          error))
    return FALSE;
  gboolean no_bias;
  if (!hy_attr_bool (attrs, "no_bias", TRUE, &no_bias, error))
    return FALSE;
  p->no_bias = no_bias;
  return deconv_parse_layout (attrs, n, error);
}

static const char *const deconv_inputs[] = { "data", "weight", "bias", NULL };

static int
deconv_num_inputs (const void *params)
{
  const hy_deconv_params *p = params;
  return p->no_bias ? 2 : 3;
}

static gboolean
deconv_infer_shape (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_deconv_params *p = params;
  const int n = p->n_spatial;
  char buf[HY_SHAPE_STRLEN];
  if (in[0].ndim != n + 2) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data must have %d dimensions (%s) for a %d-D kernel, got shape %s",
        n + 2, deconv_layouts[n], n,
        hy_shape_format (&in[0], buf, sizeof buf));
    return FALSE;
  }
  const int64_t channels = in[0].dims[1];
  if (channels == 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data has 0 channels (shape %s); a deconvolution needs at least one",
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
  wshape.dims[0] = channels;
  wshape.dims[1] = p->num_filter / p->num_group;
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
    const int64_t size = in[0].dims[2 + i];
    const int64_t full = p->stride[i] * (size - 1)
        + p->dilate[i] * (p->kernel[i] - 1) + 1;
    int64_t pad, adj;
    if (size < 1) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "data of shape %s is empty on spatial axis %d",
          hy_shape_format (&in[0], buf, sizeof buf), i);
      return FALSE;
    }
    if (p->has_target && p->target[i] > full) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "target_shape entry %" G_GINT64_FORMAT " on spatial axis %d is "
          "longer than the %" G_GINT64_FORMAT " a deconvolution of data %s "
          "can give", (gint64) p->target[i], i, (gint64) full,
          hy_shape_format (&in[0], buf, sizeof buf));
      return FALSE;
    }
    hy_deconv_pads (p, i, size, &pad, &adj);
    if (adj > p->stride[i] - 1) {
      /* MXNet checks the adj that target_shape implies too. */
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "target_shape entry %" G_GINT64_FORMAT " on spatial axis %d needs "
          "adj %" G_GINT64_FORMAT ", which must be smaller than the stride %"
          G_GINT64_FORMAT, (gint64) p->target[i], i, (gint64) adj,
          (gint64) p->stride[i]);
      return FALSE;
    }
    const int64_t len = full - 2 * pad + adj;
    if (len < 1) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "pad %" G_GINT64_FORMAT " leaves no output on spatial axis %d "
          "(data %s, %" G_GINT64_FORMAT " before padding)", (gint64) pad, i,
          hy_shape_format (&in[0], buf, sizeof buf), (gint64) full);
      return FALSE;
    }
    o.dims[2 + i] = len;
  }
  out[0] = o;
  return TRUE;
}

/* Every input element meets every weight of its group's filters once. */
static double
deconv_flops (const void *params, const hy_shape *in, int n_in,
    const hy_shape *out, int n_out)
{
  if (n_in < 2)
    return 0;
  const hy_shape *w = &in[1];
  if (w->ndim < 1 || w->dims[0] <= 0)
    return 0;
  double per_input = (double) hy_shape_numel (w) / (double) w->dims[0];
  return 2.0 * (double) hy_shape_numel (&in[0]) * per_input;
}

const hy_op_def hy_opdef_deconvolution = {
  .params_size = sizeof (hy_deconv_params),
  .parse = deconv_parse,
  .input_names = deconv_inputs,
  .num_inputs = deconv_num_inputs,
  .infer_shape = deconv_infer_shape,
  .flops = deconv_flops,
};
