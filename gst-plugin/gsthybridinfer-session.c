/*
 * gsthybridinfer-session.c — the model the frames run on, made in one
 * place for start() and for the loader of a reload: the sidecar, the
 * configuration, the element's own session or an engine's, planned for
 * the frames; and which session runs.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsthybridinfer-private.h"

/* The session that runs this element's frames: its own, or its
 * engine's (read only what does not change while it runs). */
const GstHybridSession *
gst_hybrid_infer_running_session (GstHybridInfer * self)
{
  return self->client ? gst_hybrid_engine_client_session (self->client)
      : self->session;
}

gboolean
gst_hybrid_infer_set_frame_format (GstHybridSession * session,
    const GstHybridFrameFormat * f, GError ** error)
{
  return gst_hybrid_session_set_frame (session, f->layout, f->width,
      f->height, f->kr, f->kb, f->full_range, error);
}

/* The settings the user left unset, from PREFIX-model.json beside the
 * model (hybrid-sidecar.h); its unknown keys are a warning, once. */
static gboolean
apply_sidecar (GstHybridInfer * self, GstHybridInferSettings * copy,
    GError ** error)
{
  gchar *path = NULL, *warning = NULL;
  if (!gst_hybrid_infer_settings_apply_sidecar (copy, &path, &warning, error))
    return FALSE;
  if (path)
    GST_INFO_OBJECT (self, "settings the properties leave unset come from "
        "the sidecar %s", path);
  if (warning)
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS, ("%s", warning),
        ("model %s", copy->model));
  g_free (path);
  g_free (warning);
  return TRUE;
}

/* The one place a model becomes something frames run on, for start() and
 * for the loader of a reload: the sidecar fills what `copy` leaves unset,
 * then the element's own session is loaded and planned, or (shared-engine,
 * skip-when-busy: *client) an engine joined; regions need an input size
 * for their crops; a session is planned for `format` when frames are
 * known (a reload while playing); the labels are checked against the
 * classes.  *config points into `copy`.  FALSE + error, *what (free it)
 * saying what was being done; *note (free it): a fallback taken. */
gboolean
gst_hybrid_infer_build_session (GstHybridInfer * self,
    GstHybridInferSettings * copy, const GstHybridFrameFormat * format,
    GstHybridSessionConfig * config, GstHybridSession ** session,
    GstHybridEngineClient ** client, char **note, gchar ** what,
    GError ** error)
{
  gboolean on_engine = copy->shared_engine || copy->skip_when_busy;
  gboolean regions = copy->inference_region == GST_HYBRID_INFER_REGION_ROI;

  *session = NULL;
  *client = NULL;
  *note = NULL;
  if (!apply_sidecar (self, copy, error)) {
    *what = g_strdup_printf ("the sidecar of model %s", copy->model);
    return FALSE;
  }
  if (!gst_hybrid_infer_settings_to_config (copy, config, error)) {
    *what = g_strdup_printf ("model %s: invalid property value",
        copy->model);
    return FALSE;
  }
  if (regions && on_engine) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "inference-region=roi "
        "runs on the element's own model: not with shared-engine or "
        "skip-when-busy");
    *what = g_strdup_printf ("model %s: invalid property value",
        copy->model);
    return FALSE;
  }
  if (on_engine) {
    if (!gst_hybrid_infer_join_engine (self, copy, config, client, note,
            error))
      goto model_failed;
  } else if (!(*session = gst_hybrid_session_new (config, note, error))) {
    goto model_failed;
  }
  /* regions are cropped to the input size: a model (or its sidecar) that
   * makes it follow the frame leaves them none */
  if (regions && gst_hybrid_session_follows_frame (*session)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "inference-region="
        "roi needs an input size for its crops: input-size=frame has "
        "none");
    *what = g_strdup_printf ("model %s: invalid property value",
        copy->model);
    goto failed;
  }
  if (format && *session
      && !gst_hybrid_infer_set_frame_format (*session, format, error)) {
    *what = g_strdup_printf ("model %s for frames of %dx%d", copy->model,
        format->width, format->height);
    goto failed;
  }
  gst_hybrid_infer_check_labels (self, *session ? *session
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
