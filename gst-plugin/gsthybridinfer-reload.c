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

/* Loads and plans a session as start() does (the same function), with
 * the settings as they are now but model, params and labels from the
 * request, for the frames of the current caps when there are some.
 * Loader thread, no lock held: this is the slow part, and the streaming
 * thread runs on meanwhile.  NULL + error, with *what saying what was
 * being done. */
static GstHybridSession *
load_session (GstHybridInfer * self, GstHybridInferSettings * copy,
    const GstHybridFrameFormat * format, gchar ** what, GError ** error)
{
  GstHybridSessionConfig config;
  GstHybridSession *session;
  GstHybridEngineClient *client;
  char *note;

  /* never on an engine: set_property refuses a reload there */
  if (!gst_hybrid_infer_build_session (self, copy, format, &config,
          &session, &client, &note, what, error))
    return NULL;
  g_warn_if_fail (client == NULL);
  g_clear_pointer (&client, gst_hybrid_engine_leave);
  if (note)
    GST_INFO_OBJECT (self, "%s", note);
  g_free (note);
  return session;
}

/* This thread is not, or no longer, the element's loader: stop() let it
 * go.  Object lock held. */
static gboolean
loader_quits (GstHybridInfer * self)
{
  return self->reload_thread != g_thread_self ();
}

/* Puts `session` in place of the running one between two frames, under
 * model_lock: every piece of state made from the old model goes with it.
 * Frames held for a batch run first, on the model they were converted
 * for, and the flush thread sends them on.  FALSE when the element stopped
 * meanwhile (error unset), or the caps changed and the new session cannot
 * take the new frames (error set); the session is then freed. */
static gboolean
swap_session (GstHybridInfer * self, GstHybridSession * session,
    GstHybridReload * want, guint64 frame_serial, gchar ** what,
    GError ** error)
{
  GstHybridFrameFormat format;
  gboolean quit, known, caps_changed, held;
  GstHybridSession *old;
  GstHybridInferSettings *s = &self->settings;
  gint64 arena;

  g_mutex_lock (&self->model_lock);
  GST_OBJECT_LOCK (self);
  quit = loader_quits (self);
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
  held = gst_hybrid_infer_run_held (self);
  old = self->session;
  self->session = session;
  /* the regions' crop plans and slots were made for the old input */
  if (self->roi)
    gst_hybrid_roi_set_session (self->roi, session);
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
  self->arena_bytes = self->arena_seen = arena;
  /* the new labels may number the classes otherwise */
  self->class_thresholds_dirty = TRUE;
  GST_OBJECT_UNLOCK (self);
  g_mutex_unlock (&self->model_lock);
  if (held)
    gst_hybrid_infer_flush_now (self);
  /* results on buffers downstream outlive their session (the pool is
   * closed, not freed) */
  gst_hybrid_session_free (old);
  return TRUE;

drop:
  g_mutex_unlock (&self->model_lock);
  gst_hybrid_session_free (session);
  return FALSE;
}

/* After a swap: notify for each of model, params and labels whose value
 * changed — at the swap, so that a handler reads the value that runs (and
 * a load that fails notifies nothing) — then the reloaded message, so
 * that an application waiting for it has seen the notifications. */
static void
announce_swap (GstHybridInfer * self, const GstHybridReload * want,
    const GstHybridReload * before)
{
  if (g_strcmp0 (want->model, before->model))
    g_object_notify (G_OBJECT (self), "model");
  if (g_strcmp0 (want->params, before->params))
    g_object_notify (G_OBJECT (self), "params");
  if (g_strcmp0 (want->labels, before->labels))
    g_object_notify (G_OBJECT (self), "labels");
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self),
          gst_structure_new ("hybridinfer-model-reloaded",
              "model", G_TYPE_STRING, want->model,
              "params", G_TYPE_STRING, want->params,
              "labels", G_TYPE_STRING, want->labels, NULL)));
}

/* One request: load, then swap unless superseded.  Posts what came of
 * it.  Loader thread, no lock held; returns whether it swapped and, in
 * *superseded, whether a newer request (or stop()) made it moot. */
static gboolean
serve_request (GstHybridInfer * self, guint64 serial, guint64 frame_serial,
    const GstHybridFrameFormat * format, GstHybridReload * want,
    GstHybridInferSettings * copy, gboolean * superseded)
{
  GError *error = NULL;
  gchar *what = NULL;
  gboolean swapped = FALSE;
  GstHybridReload before;

  GST_INFO_OBJECT (self, "loading model %s", want->model);
  GstHybridSession *session = load_session (self, copy, format, &what,
      &error);

  GST_OBJECT_LOCK (self);
  *superseded = self->reload_serial != serial || loader_quits (self);
  before = (GstHybridReload) {
    g_strdup (self->settings.model), g_strdup (self->settings.params),
    g_strdup (self->settings.labels), 0
  };
  GST_OBJECT_UNLOCK (self);
  if (*superseded) {
    GST_DEBUG_OBJECT (self, "model %s superseded while loading",
        want->model);
    gst_hybrid_session_free (session);
  } else if (session) {
    swapped = swap_session (self, session, want, frame_serial, &what,
        &error);
  }
  /* Posting may run a sync bus handler here that stops the element
   * (stop() then lets this thread go instead of joining it). */
  if (swapped) {
    GST_INFO_OBJECT (self, "model %s took over", want->model);
    announce_swap (self, want, &before);
  } else if (error && !*superseded) {
    gchar *detail = g_strdup_printf ("%s; the running model stays", what);
    post_warning (self, error, detail);
    g_free (detail);
  }
  reload_clear (&before);
  g_clear_error (&error);
  g_free (what);
  return swapped;
}

/* The loader: one request at a time, the newest values.  A request made
 * while one loads supersedes it (its session is dropped unposted), so
 * that `model` and `labels` set together load once.  Holds a reference
 * on the element: stop() may let it go (when stop() runs on this thread)
 * rather than join it. */
static gpointer
reload_thread_func (gpointer data)
{
  GstHybridInfer *self = data;

  GST_OBJECT_LOCK (self);
  while (!loader_quits (self)) {
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
    gboolean superseded;
    gboolean swapped = serve_request (self, serial, frame_serial,
        known ? &format : NULL, &want, &copy, &superseded);
    gst_hybrid_infer_settings_clear (&copy);
    reload_clear (&want);

    GST_OBJECT_LOCK (self);
    if (loader_quits (self))
      break;                    /* stop() cleared the requests */
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
  }
  GST_OBJECT_UNLOCK (self);
  gst_object_unref (self);
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
        reload_thread_func, gst_object_ref (self));
  else
    g_cond_broadcast (&self->reload_cond);
}

/* stop(): the element takes no more requests (started); a load in flight
 * finishes and is dropped; the loader leaves at its next look.  It is
 * joined, unless stop() runs on it: an application that sets the
 * pipeline to NULL from a sync bus handler on the loader's own message
 * (a failed reload's warning).  It then leaves once the handler returns,
 * touching nothing of the element's state but its reference. */
void
gst_hybrid_infer_reload_stop (GstHybridInfer * self)
{
  GThread *reload_thread;

  GST_OBJECT_LOCK (self);
  self->started = FALSE;
  reload_thread = self->reload_thread;
  self->reload_thread = NULL;
  g_cond_broadcast (&self->reload_cond);
  g_clear_pointer (&self->want_model, g_free);
  g_clear_pointer (&self->want_params, g_free);
  g_clear_pointer (&self->want_labels, g_free);
  GST_OBJECT_UNLOCK (self);
  if (reload_thread == g_thread_self ())
    g_thread_unref (reload_thread);
  else if (reload_thread)
    g_thread_join (reload_thread);
}
