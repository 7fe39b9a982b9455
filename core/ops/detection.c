/*
 * detection.c — the box ops of GluonCV's SSD and YOLOv3 heads:
 * _contrib_box_nms and _contrib_box_decode, with MXNet 1.9.1's defaults
 * and the input checks MXNet makes (its CHECKs become errors here).
 *
 * box_nms's output is as large as its input whatever survives (the rest
 * padded with -1), so plans that contain it keep static shapes.  MXNet
 * gives it a second, hidden output (indices kept for the backward pass)
 * that a graph cannot reference: only the visible one is made.
 */
#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/detection.h"

static const char *const box_formats[] = { "corner", "center", NULL };

/* Attributes that are C ints in MXNet: anything that does not fit one is
 * refused rather than truncated. */
static gboolean
int_attr (GHashTable *attrs, const char *key, int def, int *out,
    GError **error)
{
  return hy_attr_int_in (attrs, key, def, G_MININT, G_MAXINT, out, error);
}

static gboolean
float_attr (GHashTable *attrs, const char *key, double def, float *out,
    GError **error)
{
  double v;
  if (!hy_attr_float (attrs, key, def, &v, error))
    return FALSE;
  *out = (float) v;
  return TRUE;
}

/* ---- _contrib_box_nms --------------------------------------------------- */

static gboolean
box_nms_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_box_nms_params *p = params;
  gboolean force;
  int in_format, out_format;
  if (!float_attr (attrs, "overlap_thresh", 0.5, &p->overlap_thresh, error)
      || !float_attr (attrs, "valid_thresh", 0.0, &p->valid_thresh, error)
      || !int_attr (attrs, "topk", -1, &p->topk, error)
      || !int_attr (attrs, "coord_start", 2, &p->coord_start, error)
      || !int_attr (attrs, "score_index", 1, &p->score_index, error)
      || !int_attr (attrs, "id_index", -1, &p->id_index, error)
      || !int_attr (attrs, "background_id", -1, &p->background_id, error)
      || !hy_attr_bool (attrs, "force_suppress", FALSE, &force, error)
      || !hy_attr_enum (attrs, "in_format", box_formats, HY_BOX_CORNER,
          &in_format, error)
      || !hy_attr_enum (attrs, "out_format", box_formats, HY_BOX_CORNER,
          &out_format, error))
    return FALSE;
  p->force_suppress = force;
  p->in_format = in_format;
  p->out_format = out_format;
  return TRUE;
}

static gboolean
box_nms_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_box_nms_params *p = params;
  const hy_shape *d = &in[0];
  char buf[HY_SHAPE_STRLEN];
  if (d->ndim < 2) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data of shape %s must have at least 2 dimensions (boxes, box "
        "width)", hy_shape_format (d, buf, sizeof buf));
    return FALSE;
  }
  int64_t width = d->dims[d->ndim - 1];
  int64_t need = p->id_index >= 0 ? 6 : 5;
  /* coord_end and the index checks as MXNet makes them, in 64 bits so
   * that a huge coord_start cannot wrap. */
  int64_t coord_end = (int64_t) p->coord_start + 3;
  const char *why = NULL;
  if (width < need)
    why = p->id_index >= 0 ? "rows must hold at least 6 values (id, score "
        "and 4 coordinates)" : "rows must hold at least 5 values (score and "
        "4 coordinates)";
  else if (p->score_index < 0 || p->score_index >= width)
    why = "'score_index' is outside the row";
  else if (p->score_index >= p->coord_start && p->score_index <= coord_end)
    why = "'score_index' falls inside the coordinates";
  else if (p->coord_start < 0 || coord_end >= width)
    why = "'coord_start' + 4 coordinates do not fit in the row";
  else if (p->id_index >= 0 && p->id_index >= width)
    why = "'id_index' is outside the row";
  else if (p->id_index >= 0 && p->id_index >= p->coord_start
      && p->id_index <= coord_end)
    why = "'id_index' falls inside the coordinates";
  else if (p->id_index >= 0 && p->id_index == p->score_index)
    why = "'id_index' and 'score_index' are the same";
  if (why) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "%s: data of shape %s (row width %" G_GINT64_FORMAT "), "
        "coord_start %d, score_index %d, id_index %d", why,
        hy_shape_format (d, buf, sizeof buf), (gint64) width,
        p->coord_start, p->score_index, p->id_index);
    return FALSE;
  }
  out[0] = *d;
  return TRUE;
}

static const char *const box_nms_inputs[] = { "data", NULL };

const hy_op_def hy_opdef_box_nms = {
  .params_size = sizeof (hy_box_nms_params),
  .parse = box_nms_parse,
  .input_names = box_nms_inputs,
  .infer_shape = box_nms_infer,
};

/* ---- _contrib_box_decode ------------------------------------------------ */

static gboolean
box_decode_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_box_decode_params *p = params;
  int format;
  if (!float_attr (attrs, "std0", 1.0, &p->std[0], error)
      || !float_attr (attrs, "std1", 1.0, &p->std[1], error)
      || !float_attr (attrs, "std2", 1.0, &p->std[2], error)
      || !float_attr (attrs, "std3", 1.0, &p->std[3], error)
      || !float_attr (attrs, "clip", -1.0, &p->clip, error)
      || !hy_attr_enum (attrs, "format", box_formats, HY_BOX_CENTER,
          &format, error))
    return FALSE;
  p->format = format;
  return TRUE;
}

static gboolean
box_decode_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_shape *d = &in[0], *a = &in[1];
  char dbuf[HY_SHAPE_STRLEN], abuf[HY_SHAPE_STRLEN];
  if (d->ndim != 3 || d->dims[2] != 4) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data of shape %s must be (batch, boxes, 4)",
        hy_shape_format (d, dbuf, sizeof dbuf));
    return FALSE;
  }
  /* MXNet reads the anchors as (1, boxes, 4) whatever their leading
   * dims: they must hold exactly that many values. */
  if (a->ndim < 3 || a->dims[a->ndim - 1] != 4
      || hy_shape_numel (a) != d->dims[1] * 4) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "anchors of shape %s must be (1, %" G_GINT64_FORMAT ", 4), one "
        "anchor per box of data %s", hy_shape_format (a, abuf, sizeof abuf),
        (gint64) d->dims[1], hy_shape_format (d, dbuf, sizeof dbuf));
    return FALSE;
  }
  out[0] = *d;
  return TRUE;
}

static const char *const box_decode_inputs[] = { "data", "anchors", NULL };

const hy_op_def hy_opdef_box_decode = {
  .params_size = sizeof (hy_box_decode_params),
  .parse = box_decode_parse,
  .input_names = box_decode_inputs,
  .infer_shape = box_decode_infer,
};
