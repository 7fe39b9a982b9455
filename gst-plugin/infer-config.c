/*
 * infer-config.c — hybridinfer's settings and the session configuration
 * made from them (infer-config.h).
 */
#include <string.h>

#include "infer-config.h"

void
gst_hybrid_infer_settings_init (GstHybridInferSettings * s)
{
  memset (s, 0, sizeof *s);
  s->device = g_strdup (DEFAULT_DEVICE);
  s->precision = g_strdup (DEFAULT_PRECISION);
  s->mode = DEFAULT_MODE;
  s->dump_set = hyg_frame_set_parse (NULL, NULL);
  s->color_order = DEFAULT_COLOR_ORDER;
  s->mean = g_array_new (FALSE, FALSE, sizeof (gdouble));
  s->std = g_array_new (FALSE, FALSE, sizeof (gdouble));
  s->scale = DEFAULT_SCALE;
  s->resize = DEFAULT_RESIZE;
  s->interpolation = DEFAULT_INTERPOLATION;
  s->interval = DEFAULT_INTERVAL;
  s->batch_size = DEFAULT_BATCH_SIZE;
  s->batch_timeout_ms = DEFAULT_BATCH_TIMEOUT_MS;
  s->output = DEFAULT_OUTPUT;
  s->top_k = DEFAULT_TOP_K;
  s->threshold = DEFAULT_THRESHOLD;
  s->post_messages = DEFAULT_POST_MESSAGES;
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
  copy->precision = g_strdup (s->precision);
  copy->dump_dir = NULL;
  copy->dump_frames = g_strdup (s->dump_frames);
  copy->dump_set = NULL;
  copy->input_name = g_strdup (s->input_name);
  copy->input_size = g_strdup (s->input_size);
  copy->mean = g_array_copy (s->mean);
  copy->std = g_array_copy (s->std);
}

void
gst_hybrid_infer_settings_clear (GstHybridInferSettings * copy)
{
  g_free (copy->model);
  g_free (copy->params);
  g_free (copy->labels);
  g_free (copy->device);
  g_free (copy->precision);
  g_free (copy->dump_dir);
  g_free (copy->dump_frames);
  hyg_frame_set_free (copy->dump_set);
  g_free (copy->input_name);
  g_free (copy->input_size);
  g_array_unref (copy->mean);
  g_array_unref (copy->std);
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
  c->device = copy->device ? copy->device : DEFAULT_DEVICE;
  if (!hy_precision_parse (copy->precision ? copy->precision
          : DEFAULT_PRECISION, &c->precision, error))
    return FALSE;
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

