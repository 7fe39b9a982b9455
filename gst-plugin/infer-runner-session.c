/*
 * infer-runner-session.c — the model the frames run on, made in one place
 * for new() and for the loader of a reload: the sidecar, the
 * configuration, the runner's own session or an engine's, planned for the
 * frames; which session runs; and class-thresholds, looked up in its
 * labels.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "infer-runner-private.h"

/* The session that runs the frames: the runner's own, or its engine's
 * (read only what does not change while it runs).  model_lock held, or
 * on an engine. */
const GstHybridSession *
gst_hybrid_runner_running_session (const GstHybridRunner * r)
{
  return r->client ? gst_hybrid_engine_client_session (r->client)
      : r->session;
}

gboolean
gst_hybrid_runner_plan_frames (GstHybridSession * session,
    const GstHybridFrameFormat * f, GError ** error)
{
  return gst_hybrid_session_set_frame (session, f->layout, f->width,
      f->height, f->kr, f->kb, f->full_range, error);
}

static const gchar *
enum_nick (GType type, gint value)
{
  GEnumValue *v = g_enum_get_value (g_type_class_peek (type), value);
  return v ? v->value_nick : "?";
}

static gchar *
format_values (const GArray * values)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < values->len; i++)
    g_string_append_printf (s, "%s%g", i ? "," : "",
        g_array_index (values, gdouble, i));
  return g_string_free (s, FALSE);
}

/* Without a sidecar every choice is the element's default or a property:
 * said once, so that a first pipeline's wrong answers can be traced to
 * the pre-processing.  Pixels fed as 0..255 to a model trained on
 * normalised ones give confident nonsense, not an error, so that default
 * is a warning unless a property chose it. */
static void
report_defaults (GstHybridRunner * r, const GstHybridInferSettings * copy)
{
  const guint normalisation = GST_HYBRID_SET_MEAN | GST_HYBRID_SET_STD
      | GST_HYBRID_SET_SCALE;
  g_autofree gchar *mean = format_values (copy->mean);
  g_autofree gchar *std = format_values (copy->std);
  GST_INFO_OBJECT (r->cb.owner, "model %s has no sidecar: input-size %s, "
      "color-order %s, scale %s, mean <%s>, std <%s>, output %s, labels %s",
      copy->model, copy->input_size ? copy->input_size : "from the model",
      enum_nick (GST_TYPE_HYBRID_INFER_COLOR_ORDER, copy->color_order),
      enum_nick (GST_TYPE_HYBRID_INFER_SCALE, copy->scale), mean, std,
      enum_nick (GST_TYPE_HYBRID_INFER_OUTPUT, copy->output),
      copy->labels ? copy->labels : "none");
  if (!(copy->set_mask & normalisation))
    RUNNER_MESSAGE (r, WARNING, RESOURCE, SETTINGS,
        ("model %s has no sidecar and none of mean, std, scale is set: "
            "pixels are fed as 0..255; set mean/std/scale or write a "
            "sidecar", copy->model), (NULL));
}

/* The settings the user left unset, from PREFIX-model.json beside the
 * model (hybrid-sidecar.h); its unknown keys are a warning, once. */
static gboolean
apply_sidecar (GstHybridRunner * r, GstHybridInferSettings * copy,
    gboolean * found, GError ** error)
{
  gchar *path = NULL, *warning = NULL;
  if (!gst_hybrid_infer_settings_apply_sidecar (copy, &path, &warning, error))
    return FALSE;
  if (path)
    GST_INFO_OBJECT (r->cb.owner, "settings the properties leave unset come "
        "from the sidecar %s", path);
  *found = path != NULL;
  if (warning)
    RUNNER_MESSAGE (r, WARNING, RESOURCE, SETTINGS, ("%s", warning),
        ("model %s", copy->model));
  g_free (path);
  g_free (warning);
  return TRUE;
}

/* What the settings ask that no model can give. */
static gboolean
check_settings (GstHybridInferSettings * copy, GError ** error)
{
  /* A region's result belongs to that region of that frame: carried to
   * a later frame (what skip-when-busy does with a result) it would
   * label other boxes, so regions always wait for theirs. */
  if (copy->inference_region == GST_HYBRID_INFER_REGION_ROI
      && copy->skip_when_busy) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "inference-region=roi "
        "cannot skip-when-busy: a region's result labels that region of "
        "that frame and cannot be carried to the boxes of a later one "
        "(shared-engine batches regions across streams)");
    return FALSE;
  }
  return TRUE;
}

/* The sidecar fills what `copy` leaves unset, then the configuration is
 * made from it and checked.  FALSE + error, *what saying what failed. */
static gboolean
configure (GstHybridRunner * r, GstHybridInferSettings * copy,
    GstHybridSessionConfig * config, gboolean * sidecar, gchar ** what,
    GError ** error)
{
  if (!apply_sidecar (r, copy, sidecar, error)) {
    *what = g_strdup_printf ("the sidecar of model %s", copy->model);
    return FALSE;
  }
  if (!gst_hybrid_infer_settings_to_config (copy, config, error)
      || !check_settings (copy, error)) {
    *what = g_strdup_printf ("model %s: invalid property value",
        copy->model);
    return FALSE;
  }
  return TRUE;
}

/* What a QDQ file became: its int8 layers, or why it runs in float. */
static void
report_qdq (GstHybridRunner * r, const GstHybridSession * session)
{
  const char *note = gst_hybrid_session_qdq_note (session);
  if (note)
    GST_INFO_OBJECT (r->cb.owner, "%s", note);
}

/* The one place a model becomes something frames run on, for new() and
 * for the loader of a reload: the sidecar fills what `copy` leaves unset,
 * then the runner's own session is loaded and planned, or (shared-engine,
 * skip-when-busy: *client) an engine joined; regions need an input size
 * for their crops; a session is planned for `format` when frames are
 * known (a reload while playing); the labels are checked against the
 * classes.  *config points into `copy`.  FALSE + error, *what (free it)
 * saying what was being done; *note (free it): a fallback taken. */
gboolean
gst_hybrid_runner_build_session (GstHybridRunner * r,
    GstHybridInferSettings * copy, const GstHybridFrameFormat * format,
    GstHybridSessionConfig * config, GstHybridSession ** session,
    GstHybridEngineClient ** client, char **note, gchar ** what,
    GError ** error)
{
  gboolean on_engine = copy->shared_engine || copy->skip_when_busy;
  gboolean regions = copy->inference_region == GST_HYBRID_INFER_REGION_ROI;
  gboolean sidecar = FALSE;

  *session = NULL;
  *client = NULL;
  *note = NULL;
  if (!configure (r, copy, config, &sidecar, what, error))
    return FALSE;
  if (on_engine) {
    if (!gst_hybrid_runner_join_engine (copy, config, client, note, error))
      goto model_failed;
  } else if (!(*session = gst_hybrid_session_new (config, note, error))) {
    goto model_failed;
  }
  report_qdq (r, *session ? *session
      : gst_hybrid_engine_client_session (*client));
  /* once the model loads: a missing file's error says enough */
  if (!sidecar)
    report_defaults (r, copy);
  /* regions are cropped to the input size: a model (or its sidecar) that
   * makes it follow the frame leaves them none */
  if (regions && gst_hybrid_session_follows_frame (*session ? *session
          : gst_hybrid_engine_client_session (*client))) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "inference-region="
        "roi needs an input size for its crops: input-size=frame has "
        "none");
    *what = g_strdup_printf ("model %s: invalid property value",
        copy->model);
    goto failed;
  }
  if (format && *session
      && !gst_hybrid_runner_plan_frames (*session, format, error)) {
    *what = g_strdup_printf ("model %s for frames of %dx%d", copy->model,
        format->width, format->height);
    goto failed;
  }
  gst_hybrid_runner_check_labels (r, *session ? *session
      : gst_hybrid_engine_client_session (*client));
  return TRUE;

model_failed:
  *what = g_strdup_printf ("model %s", config->model_path);
failed:
  g_clear_pointer (session, gst_hybrid_session_free);
  g_clear_pointer (client, gst_hybrid_engine_leave);
  g_clear_pointer (note, g_free);
  return FALSE;
}

void
gst_hybrid_frame_settings_clear (GstHybridFrameSettings * fs)
{
  g_clear_pointer (&fs->class_thresholds_text, g_free);
  g_clear_pointer (&fs->dump_dir, g_free);
  g_clear_pointer (&fs->dump_set, hyg_frame_set_free);
}

/* Looks r->thresholds_text up in the running model's labels. */
static gboolean
parse_thresholds (GstHybridRunner * r, GError ** error)
{
  guint n_labels;
  const char *const *labels =
      gst_hybrid_session_labels (gst_hybrid_runner_running_session (r),
      &n_labels);
  r->thresholds_dirty = FALSE;
  return hyg_class_thresholds_parse (r->thresholds_text, labels, n_labels,
      &r->thresholds, error);
}

/* new(), once the model the frames run on is there.  FALSE + error
 * naming the property. */
gboolean
gst_hybrid_runner_start_thresholds (GstHybridRunner * r, const gchar * text,
    GError ** error)
{
  r->thresholds_text = g_strdup (text);
  return parse_thresholds (r, error);
}

/* Set while playing, or met by a reload's new labels, class-thresholds
 * are looked up again before the next result, and a bad value is a
 * warning (`threshold` alone applies until class-thresholds is set
 * again).  `view` is `fs` with them; it owns nothing. */
void
gst_hybrid_runner_resolve_settings (GstHybridRunner * r,
    const GstHybridFrameSettings * fs, GstHybridFrameSettings * view)
{
  GError *error = NULL;
  if (fs->class_thresholds_changed) {
    g_free (r->thresholds_text);
    r->thresholds_text = g_strdup (fs->class_thresholds_text);
    r->thresholds_dirty = TRUE;
  }
  if (r->thresholds_dirty && !parse_thresholds (r, &error)) {
    RUNNER_MESSAGE (r, WARNING, RESOURCE, SETTINGS, ("%s", error->message),
        ("only threshold applies until class-thresholds is set again"));
    g_error_free (error);
  }
  *view = *fs;
  view->class_thresholds = r->thresholds.n ? &r->thresholds : NULL;
  /* the running model's sidecar, where the property was not set */
  guint top_k;
  gfloat threshold;
  guint from_sidecar =
      gst_hybrid_session_sidecar_scores (gst_hybrid_runner_running_session
      (r), &top_k, &threshold) & ~fs->scores_set;
  if (from_sidecar & GST_HYBRID_SET_TOP_K)
    view->top_k = top_k;
  if (from_sidecar & GST_HYBRID_SET_THRESHOLD)
    view->threshold = threshold;
}
