/*
 * infer-config.c — hybridinfer's settings and the session configuration
 * made from them (infer-config.h).
 */
#include <string.h>

#include "decoders.h"
#include "hybrid-sidecar.h"
#include "infer-config.h"

void
gst_hybrid_infer_settings_init (GstHybridInferSettings * s)
{
  memset (s, 0, sizeof *s);
  s->device = g_strdup (DEFAULT_DEVICE);
  s->precision = DEFAULT_PRECISION;
  s->qdq = DEFAULT_QDQ;
  s->mode = DEFAULT_MODE;
  s->dump_set = hyg_frame_set_parse (NULL, NULL);
  s->color_order = DEFAULT_COLOR_ORDER;
  s->mean = g_array_new (FALSE, FALSE, sizeof (gdouble));
  s->std = g_array_new (FALSE, FALSE, sizeof (gdouble));
  s->scale = DEFAULT_SCALE;
  s->resize = DEFAULT_RESIZE;
  s->interpolation = DEFAULT_INTERPOLATION;
  s->interval = DEFAULT_INTERVAL;
  s->stats_interval_ms = DEFAULT_STATS_INTERVAL;
  s->batch_size = DEFAULT_BATCH_SIZE;
  s->batch_timeout_ms = DEFAULT_BATCH_TIMEOUT_MS;
  s->output = DEFAULT_OUTPUT;
  s->output_activation = DEFAULT_OUTPUT_ACTIVATION;
  s->top_k = DEFAULT_TOP_K;
  s->threshold = DEFAULT_THRESHOLD;
  s->iou_threshold = DEFAULT_IOU_THRESHOLD;
  s->post_messages = DEFAULT_POST_MESSAGES;
  s->message_json = DEFAULT_MESSAGE_JSON;
  s->skip_when_busy = DEFAULT_SKIP_WHEN_BUSY;
  s->inference_region = DEFAULT_INFERENCE_REGION;
}

void
gst_hybrid_infer_settings_snapshot (const GstHybridInferSettings * s,
    GstHybridInferSettings * copy)
{
  *copy = *s;
  copy->model = g_strdup (s->model);
  copy->params = g_strdup (s->params);
  copy->labels = g_strdup (s->labels);
  copy->device = g_strdup (s->device);
  copy->dump_dir = NULL;
  copy->dump_frames = g_strdup (s->dump_frames);
  copy->dump_set = NULL;
  copy->input_name = g_strdup (s->input_name);
  copy->input_size = g_strdup (s->input_size);
  copy->shared_engine = g_strdup (s->shared_engine);
  copy->object_class = g_strdup (s->object_class);
  copy->class_thresholds = g_strdup (s->class_thresholds);
  copy->mean = g_array_copy (s->mean);
  copy->std = g_array_copy (s->std);
  copy->labels_inline = NULL;
  copy->model_activation = GST_HYBRID_ACTIVATION_AUTO;
  copy->sidecar_scores = 0;
}

void
gst_hybrid_infer_settings_clear (GstHybridInferSettings * copy)
{
  g_free (copy->model);
  g_free (copy->params);
  g_free (copy->labels);
  g_free (copy->device);
  g_free (copy->dump_dir);
  g_free (copy->dump_frames);
  hyg_frame_set_free (copy->dump_set);
  g_free (copy->input_name);
  g_free (copy->input_size);
  g_free (copy->shared_engine);
  g_free (copy->object_class);
  g_free (copy->class_thresholds);
  g_array_unref (copy->mean);
  g_array_unref (copy->std);
  g_free (copy->labels_inline); /* packed: hyg_strv_pack */
}

void
gst_hybrid_infer_settings_mark_set (GstHybridInferSettings * s,
    const gchar * name)
{
  static const struct {
    const gchar *name;
    GstHybridSetFlags flag;
  } props[] = {
    {"params", GST_HYBRID_SET_PARAMS},
    {"labels", GST_HYBRID_SET_LABELS},
    {"input-name", GST_HYBRID_SET_INPUT_NAME},
    {"input-size", GST_HYBRID_SET_INPUT_SIZE},
    {"color-order", GST_HYBRID_SET_COLOR_ORDER},
    {"mean", GST_HYBRID_SET_MEAN},
    {"std", GST_HYBRID_SET_STD},
    {"scale", GST_HYBRID_SET_SCALE},
    {"resize", GST_HYBRID_SET_RESIZE},
    {"interpolation", GST_HYBRID_SET_INTERPOLATION},
    {"output", GST_HYBRID_SET_OUTPUT},
    {"top-k", GST_HYBRID_SET_TOP_K},
    {"threshold", GST_HYBRID_SET_THRESHOLD},
    {"iou-threshold", GST_HYBRID_SET_IOU_THRESHOLD},
  };
  for (guint i = 0; i < G_N_ELEMENTS (props); i++)
    if (!strcmp (name, props[i].name))
      s->set_mask |= props[i].flag;
}

static void
channels_from (GArray * values, const double *v, int n)
{
  g_array_set_size (values, 0);
  g_array_append_vals (values, v, (guint) n);
}

gboolean
gst_hybrid_infer_settings_apply_sidecar (GstHybridInferSettings * c,
    gchar ** sidecar_path, gchar ** warning, GError ** error)
{
  GError *local = NULL;
  *sidecar_path = NULL;
  *warning = NULL;
  if (!c->model || !*c->model)
    return TRUE;                /* to_config says what is missing */
  g_autoptr (hy_sidecar) sc = hy_sidecar_find (c->model, &local);
  if (!sc) {
    if (!local)
      return TRUE;
    g_propagate_error (error, local);
    return FALSE;
  }
  /* A setting the sidecar has and the user did not set: the sidecar's. */
#define FROM_SIDECAR(field, flag) \
  ((sc->set & (field)) && !(c->set_mask & (flag)))
  if (FROM_SIDECAR (HY_SIDECAR_PARAMS, GST_HYBRID_SET_PARAMS)) {
    g_free (c->params);
    c->params = g_strdup (sc->params_file);
  }
  if (FROM_SIDECAR (HY_SIDECAR_LABELS, GST_HYBRID_SET_LABELS)) {
    g_clear_pointer (&c->labels, g_free);
    if (sc->labels)
      c->labels_inline = hyg_strv_pack ((const char *const *) sc->labels,
          -1);
    else
      c->labels = g_strdup (sc->labels_file);
  }
  if (FROM_SIDECAR (HY_SIDECAR_INPUT_NAME, GST_HYBRID_SET_INPUT_NAME)) {
    g_free (c->input_name);
    c->input_name = g_strdup (sc->input_name);
  }
  if (FROM_SIDECAR (HY_SIDECAR_INPUT_SIZE, GST_HYBRID_SET_INPUT_SIZE)) {
    g_free (c->input_size);
    c->input_size = sc->input_width == HY_SIDECAR_SIZE_FRAME
        ? g_strdup ("frame")
        : g_strdup_printf ("%dx%d", sc->input_width, sc->input_height);
  }
  if (FROM_SIDECAR (HY_SIDECAR_COLOR_ORDER, GST_HYBRID_SET_COLOR_ORDER))
    c->color_order = sc->bgr ? GST_HYBRID_INFER_COLOR_ORDER_BGR
        : GST_HYBRID_INFER_COLOR_ORDER_RGB;
  if (FROM_SIDECAR (HY_SIDECAR_MEAN, GST_HYBRID_SET_MEAN))
    channels_from (c->mean, sc->mean, sc->n_mean);
  if (FROM_SIDECAR (HY_SIDECAR_STD, GST_HYBRID_SET_STD))
    channels_from (c->std, sc->std, sc->n_std);
  if (FROM_SIDECAR (HY_SIDECAR_SCALE, GST_HYBRID_SET_SCALE))
    c->scale = sc->unit_scale ? GST_HYBRID_INFER_SCALE_UNIT
        : GST_HYBRID_INFER_SCALE_BYTE;
  if (FROM_SIDECAR (HY_SIDECAR_RESIZE, GST_HYBRID_SET_RESIZE))
    c->resize = sc->resize;
  if (FROM_SIDECAR (HY_SIDECAR_INTERPOLATION, GST_HYBRID_SET_INTERPOLATION))
    c->interpolation = sc->interpolation;
  if (FROM_SIDECAR (HY_SIDECAR_OUTPUT, GST_HYBRID_SET_OUTPUT))
    c->output = gst_hybrid_output_from_sidecar (sc->output);
  if (FROM_SIDECAR (HY_SIDECAR_IOU_THRESHOLD, GST_HYBRID_SET_IOU_THRESHOLD))
    c->iou_threshold = (gfloat) sc->iou_threshold;
  /* per frame, so kept apart: the properties are read at every frame */
  if (sc->set & HY_SIDECAR_TOP_K) {
    c->sidecar_scores |= GST_HYBRID_SET_TOP_K;
    c->sidecar_top_k = MIN (sc->top_k, MAX_TOP_K);
  }
  if (sc->set & HY_SIDECAR_THRESHOLD) {
    c->sidecar_scores |= GST_HYBRID_SET_THRESHOLD;
    c->sidecar_threshold = (gfloat) sc->threshold;
  }
  /* not a property's value: what output-activation=auto starts from */
  if (sc->set & HY_SIDECAR_ACTIVATION)
    c->model_activation = sc->activation == HY_SIDECAR_ACTIVATION_SOFTMAX
        ? GST_HYBRID_ACTIVATION_SOFTMAX
        : sc->activation == HY_SIDECAR_ACTIVATION_SIGMOID
        ? GST_HYBRID_ACTIVATION_SIGMOID : GST_HYBRID_ACTIVATION_NONE;
#undef FROM_SIDECAR
  if (sc->unknown_keys) {
    g_autofree gchar *keys = g_strjoinv ("\", \"", sc->unknown_keys);
    *warning = g_strdup_printf ("sidecar %s: unknown key(s) \"%s\" ignored "
        "(a typo, or a newer version's key)", sc->path, keys);
  }
  *sidecar_path = g_strdup (sc->path);
  return TRUE;
}


gboolean
gst_hybrid_infer_settings_to_config (const GstHybridInferSettings * copy,
    GstHybridSessionConfig * c, GError ** error)
{
  memset (c, 0, sizeof *c);
  if (!copy->model || !*copy->model) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "no model: set the 'model' property to a prefix-symbol.json file");
    return FALSE;
  }
  if (copy->mean->len > MAX_CHANNEL_VALUES
      || copy->std->len > MAX_CHANNEL_VALUES) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "mean and std take 1 to %d values (got %u and %u)",
        MAX_CHANNEL_VALUES, copy->mean->len, copy->std->len);
    return FALSE;
  }
  hyg_frame_set *frames = hyg_frame_set_parse (copy->dump_frames, error);
  if (!frames)
    return FALSE;
  hyg_frame_set_free (frames);
  c->model_path = copy->model;
  c->params_path = copy->params && *copy->params ? copy->params : NULL;
  c->labels_path = copy->labels && *copy->labels ? copy->labels : NULL;
  c->labels = (const char *const *) copy->labels_inline;
  c->device = copy->device ? copy->device : DEFAULT_DEVICE;
  c->precision = copy->precision;
  c->qdq = copy->qdq;
  c->activation = copy->output_activation;
  c->model_activation = copy->model_activation;
  c->sidecar_scores = copy->sidecar_scores;
  c->sidecar_top_k = copy->sidecar_top_k;
  c->sidecar_threshold = copy->sidecar_threshold;
  c->mode = copy->mode;
  c->input_name = copy->input_name && *copy->input_name
      ? copy->input_name : NULL;
  c->input_width = c->input_height = GST_HYBRID_SESSION_SIZE_FROM_MODEL;
  if (copy->input_size && !g_ascii_strcasecmp (copy->input_size, "frame"))
    c->input_width = c->input_height = GST_HYBRID_SESSION_SIZE_FROM_FRAME;
  else if (copy->input_size && *copy->input_size
      && !hyg_parse_size (copy->input_size, &c->input_width,
          &c->input_height, error))
    return FALSE;
  c->batch = (int) copy->batch_size;
  c->output = copy->output;
  c->iou_threshold = copy->iou_threshold;
  c->bgr = copy->color_order == GST_HYBRID_INFER_COLOR_ORDER_BGR;
  c->resize = copy->resize;
  c->interpolation = copy->interpolation;
  c->scale = copy->scale == GST_HYBRID_INFER_SCALE_UNIT ? 1.0f / 255.0f : 1.0f;
  c->mean = (const double *) copy->mean->data;
  c->n_mean = (int) copy->mean->len;
  c->std = (const double *) copy->std->data;
  c->n_std = (int) copy->std->len;
  return TRUE;
}

