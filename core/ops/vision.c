/*
 * vision.c — the resampling ops of GluonCV's segmentation heads (FCN,
 * PSPNet, DeepLabV3) and two-stage detectors: _contrib_BilinearResize2D
 * and _contrib_AdaptiveAvgPooling2D, with MXNet 1.9.1's defaults and its
 * shape rules, quirks included (see each infer function).  Where MXNet
 * would read an empty optional or wrap a size, the file is refused.
 */
#include <math.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/vision.h"

/* ---- _contrib_BilinearResize2D ------------------------------------------ */

static const char *const resize_modes[] = {
  "size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down",
  "to_odd_up", NULL,
};

/* An optional float: absent or "None" leaves *has FALSE. */
static gboolean
opt_float_attr (GHashTable *attrs, const char *key, bool *has, float *out,
    GError **error)
{
  *has = false;
  *out = 0.0f;
  if (!hy_attr_has (attrs, key) || hy_attr_is_none (attrs, key))
    return TRUE;
  double v;
  if (!hy_attr_float (attrs, key, 0.0, &v, error))
    return FALSE;
  *has = true;
  *out = (float) v;
  return TRUE;
}

static gboolean
bilinear_resize_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_bilinear_resize_params *p = params;
  int mode;
  gboolean align;
  /* MXNet's range for height and width is [1, 10000]. */
  if (!hy_attr_int_in (attrs, "height", 1, 1, 10000, &p->height, error)
      || !hy_attr_int_in (attrs, "width", 1, 1, 10000, &p->width, error)
      || !opt_float_attr (attrs, "scale_height", &p->has_scale_height,
          &p->scale_height, error)
      || !opt_float_attr (attrs, "scale_width", &p->has_scale_width,
          &p->scale_width, error)
      || !hy_attr_enum (attrs, "mode", resize_modes, HY_RESIZE_SIZE, &mode,
          error)
      || !hy_attr_bool (attrs, "align_corners", TRUE, &align, error))
    return FALSE;
  p->mode = mode;
  p->align_corners = align;
  /* MXNet reads scale_width whenever scale_height is set (mode size) and
   * both in odd_scale: an absent one is an empty optional there. */
  if (p->mode == HY_RESIZE_SIZE && p->has_scale_height
      && !p->has_scale_width) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'scale_height' is set but 'scale_width' is not: mode "
        "'size' scales both axes when scale_height is given");
    return FALSE;
  }
  if (p->mode == HY_RESIZE_ODD_SCALE
      && (!p->has_scale_height || !p->has_scale_width)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "mode 'odd_scale' needs both 'scale_height' and 'scale_width'");
    return FALSE;
  }
  return TRUE;
}

static int
bilinear_resize_num_inputs (const void *params)
{
  const hy_bilinear_resize_params *p = params;
  return p->mode == HY_RESIZE_LIKE ? 2 : 1;
}

/* MXNet keeps the new size in an int16_t: a size past 32767 would wrap
 * there, one below 1 is no image.  Both are refused. */
static gboolean
resize_dim_ok (double v, const char *axis, GError **error)
{
  if (v >= 1 && v <= G_MAXINT16)
    return TRUE;
  g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
      "the output %s would be %.0f; it must be in [1, %d]", axis, v,
      G_MAXINT16);
  return FALSE;
}

static int64_t
to_even (int64_t v, int up)
{
  return v % 2 == 0 ? v : v + (up ? 1 : -1);
}

static int64_t
to_odd (int64_t v, int up)
{
  return v % 2 == 1 ? v : v + (up ? 1 : -1);
}

static gboolean
bilinear_resize_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_bilinear_resize_params *p = params;
  const hy_shape *d = &in[0];
  char buf[HY_SHAPE_STRLEN];
  if (d->ndim != 4) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data of shape %s must be 4-D (NCHW)",
        hy_shape_format (d, buf, sizeof buf));
    return FALSE;
  }
  int64_t h = d->dims[2], w = d->dims[3];
  double nh, nw;
  switch (p->mode) {
    case HY_RESIZE_SIZE:
      /* As MXNet: with scale_height, both axes scale (the product in
       * float, truncated toward zero); scale_width alone is ignored. */
      if (p->has_scale_height) {
        nh = truncf (p->scale_height * (float) h);
        nw = truncf (p->scale_width * (float) w);
      } else {
        nh = p->height;
        nw = p->width;
      }
      break;
    case HY_RESIZE_ODD_SCALE:
      /* An odd size keeps both ends: (size - 1)·scale + 1. */
      nh = h % 2 == 0 ? truncf ((float) h * p->scale_height)
          : truncf ((float) (h - 1) * p->scale_height) + 1;
      nw = w % 2 == 0 ? truncf ((float) w * p->scale_width)
          : truncf ((float) (w - 1) * p->scale_width) + 1;
      break;
    case HY_RESIZE_LIKE:
      if (in[1].ndim != 4) {
        g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
            "like of shape %s must be 4-D (NCHW): mode 'like' takes its "
            "height and width", hy_shape_format (&in[1], buf, sizeof buf));
        return FALSE;
      }
      nh = in[1].dims[2];
      nw = in[1].dims[3];
      break;
    case HY_RESIZE_TO_EVEN_DOWN:
    case HY_RESIZE_TO_EVEN_UP:
      nh = to_even (h, p->mode == HY_RESIZE_TO_EVEN_UP);
      nw = to_even (w, p->mode == HY_RESIZE_TO_EVEN_UP);
      break;
    default:
      nh = to_odd (h, p->mode == HY_RESIZE_TO_ODD_UP);
      nw = to_odd (w, p->mode == HY_RESIZE_TO_ODD_UP);
      break;
  }
  if (!resize_dim_ok (nh, "height", error)
      || !resize_dim_ok (nw, "width", error))
    return FALSE;
  /* Every output pixel reads data's pixels: with none (a zero height or
   * width) and planes to fill, MXNet reads outside the data (it crashes
   * in both its modes).  No planes: an empty output, as MXNet gives. */
  if ((h == 0 || w == 0) && d->dims[0] * d->dims[1] > 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data of shape %s has no pixels to resize into a %.0f x %.0f output",
        hy_shape_format (d, buf, sizeof buf), nh, nw);
    return FALSE;
  }
  out[0] = *d;
  out[0].dims[2] = (int64_t) nh;
  out[0].dims[3] = (int64_t) nw;
  return TRUE;
}

static const char *const bilinear_resize_inputs[] = { "data", "like", NULL };

const hy_op_def hy_opdef_bilinear_resize = {
  .params_size = sizeof (hy_bilinear_resize_params),
  .parse = bilinear_resize_parse,
  .input_names = bilinear_resize_inputs,
  .num_inputs = bilinear_resize_num_inputs,
  .infer_shape = bilinear_resize_infer,
};

/* ---- _contrib_AdaptiveAvgPooling2D -------------------------------------- */

static gboolean
adaptive_avg_pool_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_adaptive_avg_pool_params *p = params;
  hy_tuple t = { 0 };
  if (!hy_attr_tuple (attrs, "output_size", &t, FALSE, error))
    return FALSE;
  /* MXNet: () is 1×1, (s,) is s×s, (h, w); a longer tuple is 1×1 too. */
  p->out_h = p->out_w = 1;
  if (t.n == 1)
    p->out_h = p->out_w = t.v[0];
  else if (t.n == 2) {
    p->out_h = t.v[0];
    p->out_w = t.v[1];
  }
  if (p->out_h < 1 || p->out_w < 1 || p->out_h > G_MAXINT32
      || p->out_w > G_MAXINT32) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'output_size' = '%s': sizes must be in [1, %d]",
        hy_attr_string (attrs, "output_size"), G_MAXINT32);
    return FALSE;
  }
  return TRUE;
}

static gboolean
adaptive_avg_pool_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_adaptive_avg_pool_params *p = params;
  char buf[HY_SHAPE_STRLEN];
  if (in[0].ndim != 4) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data of shape %s must be 4-D (NCHW)",
        hy_shape_format (&in[0], buf, sizeof buf));
    return FALSE;
  }
  out[0] = in[0];
  out[0].dims[2] = p->out_h;
  out[0].dims[3] = p->out_w;
  return TRUE;
}

static const char *const adaptive_avg_pool_inputs[] = { "data", NULL };

const hy_op_def hy_opdef_adaptive_avg_pool = {
  .params_size = sizeof (hy_adaptive_avg_pool_params),
  .parse = adaptive_avg_pool_parse,
  .input_names = adaptive_avg_pool_inputs,
  .infer_shape = adaptive_avg_pool_infer,
};

/* ---- _contrib_ROIAlign -------------------------------------------------- */

static gboolean
roi_align_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_roi_align_params *p = params;
  hy_tuple t = { 0 };
  double scale;
  gboolean ps, aligned;
  if (!hy_attr_require (attrs, "pooled_size", error)
      || !hy_attr_tuple (attrs, "pooled_size", &t, FALSE, error))
    return FALSE;
  if (t.n != 2 || t.v[0] < 1 || t.v[1] < 1 || t.v[0] > 65536
      || t.v[1] > 65536) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'pooled_size' = '%s' must be two sizes (h, w) in [1, "
        "65536]", hy_attr_string (attrs, "pooled_size"));
    return FALSE;
  }
  p->pooled_h = t.v[0];
  p->pooled_w = t.v[1];
  if (!hy_attr_require (attrs, "spatial_scale", error)
      || !hy_attr_float (attrs, "spatial_scale", 0.0, &scale, error)
      || !hy_attr_int_in (attrs, "sample_ratio", -1, G_MININT, 65536,
          &p->sample_ratio, error)
      || !hy_attr_bool (attrs, "position_sensitive", FALSE, &ps, error)
      || !hy_attr_bool (attrs, "aligned", FALSE, &aligned, error))
    return FALSE;
  /* MXNet's range for spatial_scale. */
  if (!(scale >= 0.0 && scale <= 1.0)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'spatial_scale' = '%s' must be in [0, 1]",
        hy_attr_string (attrs, "spatial_scale"));
    return FALSE;
  }
  p->spatial_scale = (float) scale;
  p->position_sensitive = ps;
  p->aligned = aligned;
  return TRUE;
}

static gboolean
roi_align_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_roi_align_params *p = params;
  const hy_shape *d = &in[0], *r = &in[1];
  char dbuf[HY_SHAPE_STRLEN], rbuf[HY_SHAPE_STRLEN];
  if (d->ndim != 4) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data of shape %s must be 4-D (NCHW)",
        hy_shape_format (d, dbuf, sizeof dbuf));
    return FALSE;
  }
  if (r->ndim != 2 || r->dims[1] != 5) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "rois of shape %s must be (rois, 5): batch index, x1, y1, x2, y2",
        hy_shape_format (r, rbuf, sizeof rbuf));
    return FALSE;
  }
  int64_t c = d->dims[1];
  if (p->position_sensitive) {
    int64_t bins = p->pooled_h * p->pooled_w;
    if (c % bins != 0) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "data of shape %s: with position_sensitive the channels must be "
          "a multiple of pooled_size's %" G_GINT64_FORMAT " bins",
          hy_shape_format (d, dbuf, sizeof dbuf), (gint64) bins);
      return FALSE;
    }
    c /= bins;
  }
  out[0] = (hy_shape) { .ndim = 4,
    .dims = { r->dims[0], c, p->pooled_h, p->pooled_w } };
  return TRUE;
}

static const char *const roi_align_inputs[] = { "data", "rois", NULL };

const hy_op_def hy_opdef_roi_align = {
  .params_size = sizeof (hy_roi_align_params),
  .parse = roi_align_parse,
  .input_names = roi_align_inputs,
  .infer_shape = roi_align_infer,
};
