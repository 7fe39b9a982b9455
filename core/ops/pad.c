/*
 * pad.c — Pad: attributes and shape inference, as MXNet 1.9.1's
 * (src/operator/pad.cc).
 *
 * `mode` and `pad_width` are required; pad_width holds a (before, after)
 * pair per data axis, so 8 entries for 4-D data and 10 for 5-D, the only
 * ranks MXNet pads, and its first four (batch and channel) must be 0.
 * Reflect needs every pad shorter than its axis, as MXNet's kernel does.
 * A negative pad crops, as in MXNet; an axis cropped away entirely is
 * refused.
 */
#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/shape.h"

static const char *const pad_modes[] = { "constant", "edge", "reflect",
  NULL };

static gboolean
pad_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_pad_params *p = params;
  int mode;
  double value;
  hy_tuple t = { 0 };
  if (!hy_attr_require (attrs, "mode", error)
      || !hy_attr_enum (attrs, "mode", pad_modes, HY_PAD_CONSTANT, &mode,
          error)
      || !hy_attr_require (attrs, "pad_width", error)
      || !hy_attr_tuple (attrs, "pad_width", &t, FALSE, error)
      || !hy_attr_float (attrs, "constant_value", 0.0, &value, error))
    return FALSE;
  if (t.n != 8 && t.n != 10) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'pad_width' = '%s' has %d entries; Pad takes 4-D or 5-D "
        "data, so 8 or 10 (a before and an after per axis)",
        hy_attr_string (attrs, "pad_width"), t.n);
    return FALSE;
  }
  for (int i = 0; i < 4; i++)
    if (t.v[i] != 0) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'pad_width' = '%s' pads the batch or channel axis; "
          "MXNet pads only the axes after them (the first four entries "
          "must be 0)", hy_attr_string (attrs, "pad_width"));
      return FALSE;
    }
  for (int i = 0; i < t.n; i++)
    if (t.v[i] < -G_MAXINT32 || t.v[i] > G_MAXINT32) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'pad_width' = '%s': entry %d is out of range",
          hy_attr_string (attrs, "pad_width"), i);
      return FALSE;
    }
  p->mode = mode;
  p->n_widths = t.n;
  for (int i = 0; i < t.n / 2; i++) {
    p->before[i] = t.v[2 * i];
    p->after[i] = t.v[2 * i + 1];
  }
  p->value = (float) value;
  return TRUE;
}

static const char *const pad_inputs[] = { "data", NULL };

static gboolean
pad_infer (const void *params, const hy_shape *in, int n_in, hy_shape *out,
    int n_out, GError **error)
{
  const hy_pad_params *p = params;
  const int ndim = p->n_widths / 2;
  char buf[HY_SHAPE_STRLEN];
  if (in[0].ndim != ndim) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data has shape %s but pad_width has %d entries, for %d-D data",
        hy_shape_format (&in[0], buf, sizeof buf), p->n_widths, ndim);
    return FALSE;
  }
  hy_shape o = in[0];
  for (int d = 2; d < ndim; d++) {
    const int64_t size = in[0].dims[d];
    if (p->mode == HY_PAD_REFLECT
        && (p->before[d] >= size || p->after[d] >= size)) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "reflect pads of %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT
          " on axis %d of data %s: each must be shorter than the axis",
          (gint64) p->before[d], (gint64) p->after[d], d,
          hy_shape_format (&in[0], buf, sizeof buf));
      return FALSE;
    }
    if (p->mode != HY_PAD_CONSTANT && size == 0
        && (p->before[d] > 0 || p->after[d] > 0)) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "axis %d of data %s is empty: mode '%s' has no edge to pad with",
          d, hy_shape_format (&in[0], buf, sizeof buf),
          pad_modes[p->mode]);
      return FALSE;
    }
    o.dims[d] = size + p->before[d] + p->after[d];
    if (o.dims[d] < 0) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "pads of %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT " crop axis "
          "%d of data %s to less than nothing", (gint64) p->before[d],
          (gint64) p->after[d], d, hy_shape_format (&in[0], buf,
              sizeof buf));
      return FALSE;
    }
  }
  *out = o;
  return TRUE;
}

const hy_op_def hy_opdef_pad = {
  .params_size = sizeof (hy_pad_params),
  .parse = pad_parse,
  .input_names = pad_inputs,
  .infer_shape = pad_infer,
};
