/*
 * multibox.c — the SSD ops of MXNet's own detection example (the symbol
 * API's legacy SSD): _contrib_MultiBoxPrior makes the anchors of a feature
 * map, _contrib_MultiBoxDetection decodes, thresholds and suppresses the
 * predictions made against them.  Defaults and checks are MXNet 1.9.1's;
 * its CHECKs (some of which it makes only when the op first runs) are
 * errors here, at load.
 *
 * MultiBoxDetection's output holds a row per anchor whatever survives (the
 * rest -1), so plans that contain it keep static shapes.
 */
#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/detection.h"

/* Copies a float tuple into `out` (at most `max` values) as MXNet's floats
 * hold it. */
static gboolean
float_list (GHashTable *attrs, const char *key, const char *def, int min,
    int max, float *out, int *n, GError **error)
{
  hy_float_tuple t;
  if (!hy_attr_float_tuple (attrs, key, def, &t, error))
    return FALSE;
  if (t.n < min || t.n > max) {
    if (min == max)
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute '%s' must hold %d values, not %d", key, min, t.n);
    else
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute '%s' must hold %d to %d values, not %d", key, min, max,
          t.n);
    return FALSE;
  }
  for (int i = 0; i < t.n; i++)
    out[i] = (float) t.v[i];
  if (n)
    *n = t.n;
  return TRUE;
}

/* ---- _contrib_MultiBoxPrior --------------------------------------------- */

static gboolean
multibox_prior_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_multibox_prior_params *p = params;
  gboolean clip;
  if (!float_list (attrs, "sizes", "(1.0,)", 1, HY_MULTIBOX_MAX_LIST,
          p->sizes, &p->n_sizes, error)
      || !float_list (attrs, "ratios", "(1.0,)", 1, HY_MULTIBOX_MAX_LIST,
          p->ratios, &p->n_ratios, error)
      || !hy_attr_bool (attrs, "clip", FALSE, &clip, error)
      || !float_list (attrs, "steps", "(-1.0, -1.0)", 2, 2, p->steps, NULL,
          error)
      || !float_list (attrs, "offsets", "(0.5, 0.5)", 2, 2, p->offsets,
          NULL, error))
    return FALSE;
  p->clip = clip;
  for (int i = 0; i < 2; i++) {
    if (!(p->offsets[i] >= 0.0f && p->offsets[i] <= 1.0f)) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'offsets' = (%g, %g): both must lie in [0, 1]",
          p->offsets[0], p->offsets[1]);
      return FALSE;
    }
  }
  /* One step given and the other automatic (negative) is refused; a zero
   * passes this and then makes both automatic, as in MXNet. */
  if (!(p->steps[0] * p->steps[1] >= 0.0f)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'steps' = (%g, %g): give both steps (y, x) or neither "
        "(-1)", p->steps[0], p->steps[1]);
    return FALSE;
  }
  return TRUE;
}

static gboolean
multibox_prior_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_multibox_prior_params *p = params;
  const hy_shape *d = &in[0];
  char buf[HY_SHAPE_STRLEN];
  if (d->ndim < 4 || d->dims[2] <= 0 || d->dims[3] <= 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data of shape %s must be (batch, channels, height, width) with a "
        "height and a width", hy_shape_format (d, buf, sizeof buf));
    return FALSE;
  }
  int64_t per_position = p->n_sizes + p->n_ratios - 1;
  int64_t positions = d->dims[2] * d->dims[3];
  /* MXNet counts anchors in an int. */
  if (d->dims[2] > G_MAXINT || d->dims[3] > G_MAXINT
      || positions > G_MAXINT / per_position) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data of shape %s gives more anchors than MXNet can count",
        hy_shape_format (d, buf, sizeof buf));
    return FALSE;
  }
  out[0] = (hy_shape) { .ndim = 3,
    .dims = { 1, positions * per_position, 4 } };
  return TRUE;
}

static const char *const multibox_prior_inputs[] = { "data", NULL };

const hy_op_def hy_opdef_multibox_prior = {
  .params_size = sizeof (hy_multibox_prior_params),
  .parse = multibox_prior_parse,
  .input_names = multibox_prior_inputs,
  .infer_shape = multibox_prior_infer,
};

/* ---- _contrib_MultiBoxDetection ----------------------------------------- */

static gboolean
multibox_detection_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_multibox_detection_params *p = params;
  gboolean clip, force;
  double threshold, nms_threshold;
  if (!hy_attr_bool (attrs, "clip", TRUE, &clip, error)
      || !hy_attr_float (attrs, "threshold", 0.01, &threshold, error)
      || !hy_attr_int_in (attrs, "background_id", 0, G_MININT, G_MAXINT,
          &p->background_id, error)
      || !hy_attr_float (attrs, "nms_threshold", 0.5, &nms_threshold, error)
      || !hy_attr_bool (attrs, "force_suppress", FALSE, &force, error)
      || !float_list (attrs, "variances", "(0.1, 0.1, 0.2, 0.2)", 4, 4,
          p->variances, NULL, error)
      || !hy_attr_int_in (attrs, "nms_topk", -1, G_MININT, G_MAXINT,
          &p->nms_topk, error))
    return FALSE;
  p->clip = clip;
  p->force_suppress = force;
  p->threshold = (float) threshold;
  p->nms_threshold = (float) nms_threshold;
  return TRUE;
}

static gboolean
multibox_detection_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_shape *c = &in[0], *l = &in[1], *a = &in[2];
  char cbuf[HY_SHAPE_STRLEN], lbuf[HY_SHAPE_STRLEN], abuf[HY_SHAPE_STRLEN];
  const char *why = NULL;
  if (c->ndim != 3)
    why = "cls_prob must be (batch, classes, anchors)";
  else if (l->ndim != 2)
    why = "loc_pred must be (batch, anchors * 4)";
  else if (a->ndim != 3 || a->dims[2] != 4)
    why = "anchor must be (1, anchors, 4)";
  else if (a->dims[1] <= 0 || a->dims[0] <= 0)
    why = "there must be at least one anchor";
  else if (c->dims[2] != a->dims[1])
    why = "cls_prob and anchor disagree on the number of anchors";
  else if (l->dims[1] != c->dims[2] * 4)
    why = "loc_pred must hold 4 values per anchor";
  /* MXNet does not check this and would read past loc_pred. */
  else if (l->dims[0] < c->dims[0])
    why = "loc_pred has fewer batches than cls_prob";
  else if (a->dims[1] > G_MAXINT / 6)
    why = "more anchors than MXNet can count";
  if (why) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "%s: cls_prob %s, loc_pred %s, anchor %s", why,
        hy_shape_format (c, cbuf, sizeof cbuf),
        hy_shape_format (l, lbuf, sizeof lbuf),
        hy_shape_format (a, abuf, sizeof abuf));
    return FALSE;
  }
  out[0] = (hy_shape) { .ndim = 3, .dims = { c->dims[0], a->dims[1], 6 } };
  return TRUE;
}

static const char *const multibox_detection_inputs[] = { "cls_prob",
  "loc_pred", "anchor", NULL };

const hy_op_def hy_opdef_multibox_detection = {
  .params_size = sizeof (hy_multibox_detection_params),
  .parse = multibox_detection_parse,
  .input_names = multibox_detection_inputs,
  .infer_shape = multibox_detection_infer,
};
