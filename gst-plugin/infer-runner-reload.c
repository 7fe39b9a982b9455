/*
 * infer-runner-reload.c — hot reload: model, params and labels set while
 * playing load and plan a new session on the runner's loader thread,
 * which swaps it in between two frames; a model that fails to load is a
 * warning and the old one runs on.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "infer-runner-private.h"

static void
reload_clear (GstHybridReload * r)
{
  g_free (r->model);
  g_free (r->params);
  g_free (r->labels);
}

static void
reload_set (GstHybridReload * to, const GstHybridReload * from)
{
  reload_clear (to);
  to->model = g_strdup (from->model);
  to->params = g_strdup (from->params);
  to->labels = g_strdup (from->labels);
  to->mask = from->mask;
}

/* new(): what runs is what the properties said (before the sidecar). */
void
gst_hybrid_runner_reload_init (GstHybridRunner * r,
    const GstHybridInferSettings * settings)
{
  GstHybridReload start = {
    settings->model, settings->params, settings->labels, 0
  };
  reload_set (&r->running, &start);
  reload_set (&r->want, &start);
}

/* The last reference: the runner's, or its loader's when free() ran on
 * the loader. */
void
gst_hybrid_runner_unref (GstHybridRunner * r)
{
  if (!g_atomic_int_dec_and_test (&r->refcount))
    return;
  reload_clear (&r->want);
  reload_clear (&r->running);
  g_mutex_clear (&r->model_lock);
  g_mutex_clear (&r->flush_lock);
  g_cond_clear (&r->flush_cond);
  g_mutex_clear (&r->stats_lock);
  g_mutex_clear (&r->reload_lock);
  g_cond_clear (&r->reload_cond);
  g_free (r);
}

/* The frames of new caps, for the loader to plan the new session for. */
void
gst_hybrid_runner_reload_note_format (GstHybridRunner * r,
    const GstHybridFrameFormat * format)
{
  g_mutex_lock (&r->reload_lock);
  r->frame_format = *format;
  r->frame_known = TRUE;
  r->frame_serial++;
  g_mutex_unlock (&r->reload_lock);
}

/* Loads and plans a session as new() does (the same function), with
 * the settings as they are now but model, params and labels from the
 * request, for the frames of the current caps when there are some.
 * Loader thread, no lock held: this is the slow part, and the streaming
 * thread runs on meanwhile.  NULL + error, with *what saying what was
 * being done. */
static GstHybridSession *
load_session (GstHybridRunner * r, GstHybridInferSettings * copy,
    const GstHybridFrameFormat * format, gchar ** what, GError ** error)
{
  GstHybridSessionConfig config;
  GstHybridSession *session;
  GstHybridEngineClient *client;
  char *note;

  /* never on an engine: the element refuses a reload there */
  if (!gst_hybrid_runner_build_session (r, copy, format, &config,
          &session, &client, &note, what, error))
    return NULL;
  g_warn_if_fail (client == NULL);
  g_clear_pointer (&client, gst_hybrid_engine_leave);
  if (note)
    GST_INFO_OBJECT (r->cb.owner, "%s", note);
  g_free (note);
  return session;
}

/* This thread is not, or no longer, the runner's loader: free() let it
 * go.  reload_lock held. */
static gboolean
loader_quits (GstHybridRunner * r)
{
  return r->reload_thread != g_thread_self ();
}

/* Everything made from the old model goes with it; `session` runs from
 * the next frame.  model_lock held; returns the old session. */
static GstHybridSession *
install_session (GstHybridRunner * r, GstHybridSession * session,
    const GstHybridReload * want)
{
  GstHybridSession *old = r->session;
  r->session = session;
  /* the regions' crop plans and slots were made for the old input */
  if (r->roi)
    gst_hybrid_roi_set_session (r->roi, session);
  /* the frames an interval skips carry the new model's result, not the
   * old one's */
  g_clear_pointer (&r->last, gst_hybrid_result_unref);
  /* the new model may take the caps the old one refused */
  gst_caps_replace (&r->failed_caps, NULL);
  gst_hybrid_runner_set_arena (r, gst_hybrid_session_arena_bytes (session));
  /* the new labels may number the classes otherwise */
  r->thresholds_dirty = TRUE;
  g_mutex_lock (&r->reload_lock);
  reload_set (&r->running, want);
  g_mutex_unlock (&r->reload_lock);
  return old;
}

/* Puts `session` in place of the running one between two frames, under
 * model_lock.  Frames held for a batch run first, on the model they were
 * converted for, and the flush thread sends them on.  FALSE when the
 * runner is being freed (error unset), or the caps changed and the new
 * session cannot take the new frames (error set); the session is then
 * freed. */
static gboolean
swap_session (GstHybridRunner * r, GstHybridSession * session,
    const GstHybridReload * want, guint64 frame_serial, gchar ** what,
    GError ** error)
{
  GstHybridFrameFormat format;
  gboolean quit, known, caps_changed, held;
  GstHybridSession *old;

  g_mutex_lock (&r->model_lock);
  g_mutex_lock (&r->reload_lock);
  quit = loader_quits (r);
  known = r->frame_known;
  caps_changed = r->frame_serial != frame_serial;
  format = r->frame_format;
  g_mutex_unlock (&r->reload_lock);
  if (quit)
    goto drop;
  /* rare: new caps came while loading; planning for them here is the one
   * time the stream waits on a reload */
  if (known && caps_changed
      && !gst_hybrid_runner_plan_frames (session, &format, error)) {
    *what = g_strdup_printf ("model %s for frames of %dx%d", want->model,
        format.width, format.height);
    goto drop;
  }
  held = gst_hybrid_runner_run_held (r);
  old = install_session (r, session, want);
  g_mutex_unlock (&r->model_lock);
  if (held)
    gst_hybrid_runner_flush_now (r);
  /* results on buffers downstream outlive their session (the pool is
   * closed, not freed) */
  gst_hybrid_session_free (old);
  return TRUE;

drop:
  g_mutex_unlock (&r->model_lock);
  gst_hybrid_session_free (session);
  return FALSE;
}

/* One request: load, then swap unless superseded.  Posts what came of
 * it.  Loader thread, no lock held; returns whether it swapped and, in
 * *superseded, whether a newer request (or free()) made it moot. */
static gboolean
serve_request (GstHybridRunner * r, guint64 serial, guint64 frame_serial,
    const GstHybridFrameFormat * format, const GstHybridReload * want,
    GstHybridInferSettings * copy, gboolean * superseded)
{
  GError *error = NULL;
  gchar *what = NULL;
  gboolean swapped = FALSE;

  GST_INFO_OBJECT (r->cb.owner, "loading model %s", want->model);
  GstHybridSession *session = load_session (r, copy, format, &what, &error);

  g_mutex_lock (&r->reload_lock);
  *superseded = r->reload_serial != serial || loader_quits (r);
  g_mutex_unlock (&r->reload_lock);
  if (*superseded) {
    GST_DEBUG_OBJECT (r->cb.owner, "model %s superseded while loading",
        want->model);
    gst_hybrid_session_free (session);
  } else if (session) {
    swapped = swap_session (r, session, want, frame_serial, &what, &error);
  }
  /* Posting may run a sync bus handler here that stops the element
   * (free() then lets this thread go instead of joining it). */
  if (swapped) {
    GST_INFO_OBJECT (r->cb.owner, "model %s took over", want->model);
    r->cb.model_swapped (r->cb.owner, want->model, want->params,
        want->labels, want->mask);
  } else if (error && !*superseded) {
    gchar *detail = g_strdup_printf ("%s; the running model stays", what);
    runner_post_warning (r, error, detail);
    g_free (detail);
  }
  g_clear_error (&error);
  g_free (what);
  return swapped;
}

/* The settings as they are now, with the request's model, params and
 * labels. */
static void
settings_for (GstHybridRunner * r, const GstHybridReload * want,
    GstHybridInferSettings * copy)
{
  r->cb.snapshot_settings (r->cb.owner, copy);
  g_free (copy->model);
  g_free (copy->params);
  g_free (copy->labels);
  copy->model = g_strdup (want->model);
  copy->params = g_strdup (want->params);
  copy->labels = g_strdup (want->labels);
  copy->set_mask |= want->mask;
}

/* After a request: a failed one is forgotten (the next one starts from
 * the model running, not from the one that failed).  reload_lock held. */
static void
finish_request (GstHybridRunner * r, guint64 serial, gboolean swapped,
    gboolean superseded)
{
  r->reload_done = MAX (r->reload_done, serial);
  if (!swapped && !superseded && r->reload_serial == serial)
    reload_set (&r->want, &r->running);
  else if (swapped && r->reload_serial == serial)
    r->want.mask = 0;
}

/* The loader: one request at a time, the newest values.  A request made
 * while one loads supersedes it (its session is dropped unposted), so
 * that `model` and `labels` set together load once.  Holds a reference
 * on the runner and on the element: free() may let it go (when free()
 * runs on this thread) rather than join it. */
static gpointer
reload_thread_func (gpointer data)
{
  GstHybridRunner *r = data;
  GstObject *owner = r->cb.owner;

  g_mutex_lock (&r->reload_lock);
  while (!loader_quits (r)) {
    if (r->reload_serial == r->reload_done) {
      g_cond_wait (&r->reload_cond, &r->reload_lock);
      continue;
    }
    guint64 serial = r->reload_serial;
    guint64 frame_serial = r->frame_serial;
    GstHybridFrameFormat format = r->frame_format;
    gboolean known = r->frame_known;
    GstHybridReload want = { NULL, NULL, NULL, 0 };
    reload_set (&want, &r->want);
    g_mutex_unlock (&r->reload_lock);

    GstHybridInferSettings copy;
    gboolean superseded;
    settings_for (r, &want, &copy);
    gboolean swapped = serve_request (r, serial, frame_serial,
        known ? &format : NULL, &want, &copy, &superseded);
    gst_hybrid_infer_settings_clear (&copy);
    reload_clear (&want);

    g_mutex_lock (&r->reload_lock);
    if (loader_quits (r))
      break;                    /* free() let it go */
    finish_request (r, serial, swapped, superseded);
  }
  g_mutex_unlock (&r->reload_lock);
  gst_hybrid_runner_unref (r);
  gst_object_unref (owner);
  return NULL;
}

void
gst_hybrid_runner_request_swap (GstHybridRunner * r,
    GstHybridSwapField field, const gchar * value)
{
  g_mutex_lock (&r->reload_lock);
  gchar **want = field == GST_HYBRID_SWAP_MODEL ? &r->want.model
      : field == GST_HYBRID_SWAP_PARAMS ? &r->want.params : &r->want.labels;
  g_free (*want);
  *want = g_strdup (value);
  if (field == GST_HYBRID_SWAP_PARAMS)
    r->want.mask |= GST_HYBRID_SET_PARAMS;
  else if (field == GST_HYBRID_SWAP_LABELS)
    r->want.mask |= GST_HYBRID_SET_LABELS;
  r->reload_serial++;
  if (!r->reload_thread) {
    g_atomic_int_inc (&r->refcount);
    gst_object_ref (r->cb.owner);
    r->reload_thread = g_thread_new ("hybridinfer-reload",
        reload_thread_func, r);
  } else {
    g_cond_broadcast (&r->reload_cond);
  }
  g_mutex_unlock (&r->reload_lock);
}

/* free(): no more requests are served; a load in flight finishes and is
 * dropped; the loader leaves at its next look.  It is joined, unless
 * free() runs on it: an application that sets the pipeline to NULL from
 * a sync bus handler on the loader's own message (a failed reload's
 * warning).  It then leaves once the handler returns, touching nothing of
 * the runner but its reload fields and its reference. */
void
gst_hybrid_runner_reload_stop (GstHybridRunner * r)
{
  g_mutex_lock (&r->reload_lock);
  GThread *reload_thread = r->reload_thread;
  r->reload_thread = NULL;
  g_cond_broadcast (&r->reload_cond);
  g_mutex_unlock (&r->reload_lock);
  if (reload_thread == g_thread_self ())
    g_thread_unref (reload_thread);
  else if (reload_thread)
    g_thread_join (reload_thread);
}
