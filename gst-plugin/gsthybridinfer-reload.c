/*
 * gsthybridinfer-reload.c — hot reload: model, params and labels set while
 * playing load and plan a new session on a thread of the element, which
 * takes over between two frames; a model that fails to load is a warning
 * and the old one runs on.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsthybridinfer-private.h"

/* What a reload asks for: the model, params and labels as set, and the
 * settings bits they mark. */
typedef struct
{
  gchar *model, *params, *labels;
  guint mask;
} GstHybridReload;

static void
reload_clear (GstHybridReload * r)
{
  g_free (r->model);
  g_free (r->params);
  g_free (r->labels);
}

/* Loads and plans a session as start() does, with the settings as they
 * are now but model, params and labels from the request, for the frames
 * of the current caps when there are some.  Loader thread, no lock held:
 * this is the slow part, and the streaming thread runs on meanwhile.
 * NULL + error, with *what saying what was being done. */
static GstHybridSession *
load_session (GstHybridInfer * self, GstHybridInferSettings * copy,
    const GstHybridFrameFormat * format, gchar ** what, GError ** error)
{
  GstHybridSessionConfig config;
  GstHybridSession *session;
  char *note = NULL;

  if (!gst_hybrid_infer_apply_sidecar (self, copy, error)) {
    *what = g_strdup_printf ("the sidecar of model %s", copy->model);
    return NULL;
  }
  if (!gst_hybrid_infer_settings_to_config (copy, &config, error)) {
    *what = g_strdup_printf ("model %s: invalid property value",
        copy->model);
    return NULL;
  }
  session = gst_hybrid_session_new (&config, &note, error);
  if (!session) {
    *what = g_strdup_printf ("model %s", config.model_path);
    g_free (note);
    return NULL;
  }
  if (note)
    GST_INFO_OBJECT (self, "%s", note);
  g_free (note);
  if (format && !gst_hybrid_infer_set_frame_format (session, format, error)) {
    *what = g_strdup_printf ("model %s for frames of %dx%d", copy->model,
        format->width, format->height);
    gst_hybrid_session_free (session);
    return NULL;
  }
  gst_hybrid_infer_check_labels (self, session);
  return session;
}

/* Puts `session` in place of the running one between two frames: under
 * the sink pad's stream lock, as a chain call holds it.  Frames held for
 * a batch run first, on the model they were loaded for.  FALSE when the
 * element stopped meanwhile (error unset), or the caps changed and the new
 * session cannot take the new frames (error set); the session is then
 * freed. */
static gboolean
swap_session (GstHybridInfer * self, GstHybridSession * session,
    GstHybridReload * want, guint64 frame_serial, gchar ** what,
    GError ** error)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  GstHybridFrameFormat format;
  gboolean quit, known, caps_changed;
  GstHybridSession *old;
  GstHybridInferSettings *s = &self->settings;
  gint64 arena;

  GST_PAD_STREAM_LOCK (trans->sinkpad);
  GST_OBJECT_LOCK (self);
  quit = self->reload_quit;
  known = self->frame_known;
  caps_changed = self->frame_serial != frame_serial;
  format = self->frame_format;
  GST_OBJECT_UNLOCK (self);
  if (quit)
    goto drop;
  /* rare: new caps came while loading; planning for them here is the one
   * time the stream waits on a reload */
  if (known && caps_changed
      && !gst_hybrid_infer_set_frame_format (session, &format, error)) {
    *what = g_strdup_printf ("model %s for frames of %dx%d", want->model,
        format.width, format.height);
    goto drop;
  }
  if (self->batch && gst_hybrid_batch_has_pending (self->batch)) {
    GstFlowReturn ret = gst_hybrid_infer_drain (self);
    if (ret != GST_FLOW_OK && ret != GST_FLOW_FLUSHING)
      self->flush_ret = ret;
  }
  old = self->session;
  self->session = session;
  /* the frames an interval skips carry the new model's result, not the
   * old one's */
  g_clear_pointer (&self->last, gst_hybrid_result_unref);
  gst_caps_replace (&self->failed_caps, NULL);
  arena = gst_hybrid_session_arena_bytes (session);
  GST_OBJECT_LOCK (self);
  g_free (s->model);
  g_free (s->params);
  g_free (s->labels);
  s->model = g_strdup (want->model);
  s->params = g_strdup (want->params);
  s->labels = g_strdup (want->labels);
  s->set_mask |= want->mask;
  self->arena_bytes = arena;
  /* the new labels may number the classes otherwise */
  self->class_thresholds_dirty = TRUE;
  GST_OBJECT_UNLOCK (self);
  GST_PAD_STREAM_UNLOCK (trans->sinkpad);
  /* results on buffers downstream outlive their session (the pool is
   * closed, not freed) */
  gst_hybrid_session_free (old);
  return TRUE;

drop:
  GST_PAD_STREAM_UNLOCK (trans->sinkpad);
  gst_hybrid_session_free (session);
  return FALSE;
}

/* The loader: one request at a time, the newest values.  A request made
 * while one loads supersedes it (its session is dropped unposted), so
 * that `model` and `labels` set together load once. */
static gpointer
reload_thread_func (gpointer data)
{
  GstHybridInfer *self = data;

  GST_OBJECT_LOCK (self);
  while (!self->reload_quit) {
    if (self->reload_serial == self->reload_done) {
      g_cond_wait (&self->reload_cond, GST_OBJECT_GET_LOCK (self));
      continue;
    }
    guint64 serial = self->reload_serial;
    guint64 frame_serial = self->frame_serial;
    GstHybridFrameFormat format = self->frame_format;
    gboolean known = self->frame_known;
    GstHybridReload want = {
      g_strdup (self->want_model), g_strdup (self->want_params),
      g_strdup (self->want_labels), self->want_mask
    };
    GstHybridInferSettings copy;
    gst_hybrid_infer_settings_snapshot (&self->settings, &copy);
    GST_OBJECT_UNLOCK (self);

    g_free (copy.model);
    g_free (copy.params);
    g_free (copy.labels);
    copy.model = g_strdup (want.model);
    copy.params = g_strdup (want.params);
    copy.labels = g_strdup (want.labels);
    copy.set_mask |= want.mask;
    GError *error = NULL;
    gchar *what = NULL;
    gboolean swapped = FALSE, superseded;
    GST_INFO_OBJECT (self, "loading model %s", want.model);
    GstHybridSession *session = load_session (self, &copy,
        known ? &format : NULL, &what, &error);
    gst_hybrid_infer_settings_clear (&copy);

    GST_OBJECT_LOCK (self);
    superseded = self->reload_serial != serial || self->reload_quit;
    GST_OBJECT_UNLOCK (self);
    if (superseded) {
      GST_DEBUG_OBJECT (self, "model %s superseded while loading",
          want.model);
      gst_hybrid_session_free (session);
    } else if (session) {
      swapped = swap_session (self, session, &want, frame_serial, &what,
          &error);
    }
    if (swapped) {
      GST_INFO_OBJECT (self, "model %s took over", want.model);
      gst_element_post_message (GST_ELEMENT (self),
          gst_message_new_element (GST_OBJECT (self),
              gst_structure_new ("hybridinfer-model-reloaded",
                  "model", G_TYPE_STRING, want.model,
                  "params", G_TYPE_STRING, want.params,
                  "labels", G_TYPE_STRING, want.labels, NULL)));
      g_object_notify (G_OBJECT (self), "model");
    } else if (error && !superseded) {
      gchar *detail = g_strdup_printf ("%s; the running model stays", what);
      post_warning (self, error, detail);
      g_free (detail);
    }
    g_clear_error (&error);
    g_free (what);

    GST_OBJECT_LOCK (self);
    self->reload_done = MAX (self->reload_done, serial);
    /* a failed request is forgotten: the next one starts from the
     * model running, not from the one that failed */
    if (!swapped && !superseded && self->reload_serial == serial) {
      g_free (self->want_model);
      g_free (self->want_params);
      g_free (self->want_labels);
      self->want_model = g_strdup (self->settings.model);
      self->want_params = g_strdup (self->settings.params);
      self->want_labels = g_strdup (self->settings.labels);
      self->want_mask = 0;
    } else if (swapped && self->reload_serial == serial) {
      self->want_mask = 0;
    }
    reload_clear (&want);
  }
  GST_OBJECT_UNLOCK (self);
  return NULL;
}

/* model, params or labels set while started: the loader thread takes the
 * newest values (a request made while another loads supersedes it).
 * Object lock held. */
void
gst_hybrid_infer_request_reload (GstHybridInfer * self, guint prop_id,
    const GValue * value)
{
  gchar **want = prop_id == PROP_MODEL ? &self->want_model
      : prop_id == PROP_PARAMS ? &self->want_params : &self->want_labels;
  g_free (*want);
  *want = g_value_dup_string (value);
  if (prop_id == PROP_PARAMS)
    self->want_mask |= GST_HYBRID_SET_PARAMS;
  else if (prop_id == PROP_LABELS)
    self->want_mask |= GST_HYBRID_SET_LABELS;
  self->reload_serial++;
  if (!self->reload_thread)
    self->reload_thread = g_thread_new ("hybridinfer-reload",
        reload_thread_func, self);
  else
    g_cond_signal (&self->reload_cond);
}

/* stop(): the element takes no more requests (started); a load in flight
 * finishes and is dropped; a loader waiting for the stream lock gets it
 * (streaming has stopped), sees quit and leaves. */
void
gst_hybrid_infer_reload_stop (GstHybridInfer * self)
{
  GThread *reload_thread;

  GST_OBJECT_LOCK (self);
  self->started = FALSE;
  self->reload_quit = TRUE;
  reload_thread = self->reload_thread;
  self->reload_thread = NULL;
  g_cond_signal (&self->reload_cond);
  GST_OBJECT_UNLOCK (self);
  if (reload_thread)
    g_thread_join (reload_thread);
  GST_OBJECT_LOCK (self);
  g_clear_pointer (&self->want_model, g_free);
  g_clear_pointer (&self->want_params, g_free);
  g_clear_pointer (&self->want_labels, g_free);
  GST_OBJECT_UNLOCK (self);
}
