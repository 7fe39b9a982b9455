/*
 * infer-runner-dispatch.c — the runner's lifetime and the frames' way
 * in (infer-runner.h): made and freed, told the frames of the caps,
 * given frames, drained and flushed.
 * Which model a frame goes to is decided here, in one place: the
 * runner's own (infer-runner-frame.c, held for a batch by
 * infer-runner-batch.c), an engine's (infer-runner-engine.c), or the
 * regions of the frame on the own model (infer-runner-regions.c).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "infer-runner-private.h"

GST_DEBUG_CATEGORY (gst_hybrid_runner_debug);

static GstHybridRunner *
runner_alloc (const GstHybridRunnerCallbacks * callbacks)
{
  GstHybridRunner *r = g_new0 (GstHybridRunner, 1);
  static gsize debug_once = 0;
  if (g_once_init_enter (&debug_once)) {
    /* the element's own category (GStreamer returns the one of that
     * name): GST_DEBUG=hybridinfer:N shows the runner's lines too, as it
     * did when they were the element's */
    GST_DEBUG_CATEGORY_INIT (gst_hybrid_runner_debug, "hybridinfer", 0,
        "hybridinfer element");
    g_once_init_leave (&debug_once, 1);
  }
  r->refcount = 1;
  r->cb = *callbacks;
  g_mutex_init (&r->model_lock);
  g_mutex_init (&r->flush_lock);
  g_cond_init (&r->flush_cond);
  g_mutex_init (&r->stats_lock);
  g_mutex_init (&r->reload_lock);
  g_cond_init (&r->reload_cond);
  return r;
}

/* Builds the model, then what frames need of it.  FALSE, posted. */
static gboolean
runner_start (GstHybridRunner * r, GstHybridInferSettings * copy,
    char **note)
{
  GstHybridSessionConfig config;
  GError *error = NULL;
  gchar *what = NULL;
  if (!gst_hybrid_runner_build_session (r, copy, NULL, &config, &r->session,
          &r->client, note, &what, &error)) {
    runner_post_error (r, error, what);
    g_error_free (error);
    g_free (what);
    return FALSE;
  }
  if (copy->inference_region == GST_HYBRID_INFER_REGION_ROI)
    gst_hybrid_runner_start_regions (r, copy->object_class);
  r->skip_when_busy = copy->skip_when_busy;
  if (!gst_hybrid_runner_start_thresholds (r, copy->class_thresholds,
          &error)) {
    runner_post_error (r, error, "invalid property value");
    g_error_free (error);
    return FALSE;
  }
  r->batch_size = (guint) config.batch;
  gst_hybrid_runner_batch_start (r, r->batch_size);
  gst_hybrid_runner_set_arena (r,
      gst_hybrid_session_arena_bytes (gst_hybrid_runner_running_session (r)));
  return TRUE;
}

GstHybridRunner *
gst_hybrid_runner_new (const GstHybridInferSettings * settings,
    const GstHybridRunnerCallbacks * callbacks, char **note)
{
  GstHybridRunner *r = runner_alloc (callbacks);
  GstHybridInferSettings copy;
  *note = NULL;
  gst_hybrid_runner_reload_init (r, settings);
  gst_hybrid_infer_settings_snapshot (settings, &copy);
  gboolean ok = runner_start (r, &copy, note);
  gst_hybrid_infer_settings_clear (&copy);
  if (!ok) {
    g_clear_pointer (note, g_free);
    gst_hybrid_runner_free (r, NULL);
    return NULL;
  }
  return r;
}

void
gst_hybrid_runner_free (GstHybridRunner * r,
    GstHybridRunnerStats * final_stats)
{
  gst_hybrid_runner_reload_stop (r);
  gst_hybrid_runner_batch_stop (r);
  if (final_stats)
    gst_hybrid_runner_read_stats (r, final_stats);
  g_clear_pointer (&r->last, gst_hybrid_result_unref);
  g_clear_pointer (&r->session, gst_hybrid_session_free);
  g_clear_pointer (&r->client, gst_hybrid_engine_leave);
  g_clear_pointer (&r->roi, gst_hybrid_roi_free);
  gst_caps_replace (&r->failed_caps, NULL);
  g_clear_pointer (&r->thresholds_text, g_free);
  gst_hybrid_runner_unref (r);
}

hy_device
gst_hybrid_runner_device (const GstHybridRunner * r)
{
  return gst_hybrid_session_device (gst_hybrid_runner_running_session (r));
}

gboolean
gst_hybrid_runner_on_engine (const GstHybridRunner * r)
{
  return r->client != NULL;
}

/* failed_caps is the model's business too: a swap clears it (the new
 * model may take the caps the old one refused), so it is read and written
 * under model_lock. */
gboolean
gst_hybrid_runner_caps_refused (GstHybridRunner * r, GstCaps * caps)
{
  g_mutex_lock (&r->model_lock);
  gboolean refused = r->failed_caps
      && gst_caps_is_equal (caps, r->failed_caps);
  g_mutex_unlock (&r->model_lock);
  return refused;
}

void
gst_hybrid_runner_refuse_caps (GstHybridRunner * r, GstCaps * caps)
{
  g_mutex_lock (&r->model_lock);
  gst_caps_replace (&r->failed_caps, caps);
  g_mutex_unlock (&r->model_lock);
}

static gboolean
plan_locked (GstHybridRunner * r, const GstHybridFrameFormat * f,
    GError ** error)
{
  if (r->client) {
    if (!gst_hybrid_engine_client_set_frame (r->client, f->layout,
            f->width, f->height, f->kr, f->kb, f->full_range, error))
      return FALSE;
    if (r->roi)
      gst_hybrid_roi_set_frame (r->roi, f->layout, f->kr, f->kb,
          f->full_range);
    return TRUE;
  }
  if (!gst_hybrid_runner_plan_frames (r->session, f, error))
    return FALSE;
  if (r->roi)
    gst_hybrid_roi_set_frame (r->roi, f->layout, f->kr, f->kb,
        f->full_range);
  return TRUE;
}

/* The frames of new caps, planned; a reload takes over before them or
 * after them, with them.  Streaming thread. */
gboolean
gst_hybrid_runner_set_frame_format (GstHybridRunner * r, GstCaps * caps,
    const GstVideoInfo * info, const GstHybridFrameFormat * format)
{
  GError *error = NULL;
  g_mutex_lock (&r->model_lock);
  if (!plan_locked (r, format, &error)) {
    gst_caps_replace (&r->failed_caps, caps);
    g_mutex_unlock (&r->model_lock);
    gchar *what = g_strdup_printf ("frames of %dx%d", format->width,
        format->height);
    runner_post_error (r, error, what);
    g_free (what);
    g_error_free (error);
    return FALSE;
  }
  gst_hybrid_runner_report_session_note (r);
  gst_caps_replace (&r->failed_caps, NULL);
  r->known_pool = NULL;         /* a new pool comes with new caps */
  r->info = *info;
  gst_hybrid_runner_set_arena (r,
      gst_hybrid_session_arena_bytes (gst_hybrid_runner_running_session (r)));
  gst_hybrid_runner_reload_note_format (r, format);
  g_mutex_unlock (&r->model_lock);
  return TRUE;
}

gboolean
gst_hybrid_runner_holds_frames (const GstHybridRunner * r)
{
  return r->batch && r->batch_size > 1;
}

/* A frame on the own model, whole: inferred now, or carrying the last
 * result.  model_lock held. */
static GstFlowReturn
own_frame (GstHybridRunner * r, const GstHybridFrameSettings * fs,
    GstBuffer * buf, guint64 frame)
{
  if (!gst_hybrid_frame_settings_wants (fs, frame)) {
    gst_hybrid_runner_carry_last (r, buf);
    return GST_FLOW_OK;
  }
  gint64 start = g_get_monotonic_time ();
  if (!gst_hybrid_runner_load_frame (r, buf, 0, fs->mode)
      || !gst_hybrid_runner_run_forward (r, fs, frame, frame))
    return GST_FLOW_ERROR;
  gst_hybrid_runner_finish_frame (r, fs, buf, frame, 0, start);
  return GST_FLOW_OK;
}

GstFlowReturn
gst_hybrid_runner_submit (GstHybridRunner * r,
    const GstHybridFrameSettings * fs, GstBuffer * buf)
{
  guint64 frame = r->frame_count++;
  GstHybridFrameSettings view;
  GstFlowReturn ret;

  gst_hybrid_runner_count_frame_in (r, fs);
  /* an engine's wait for its batch holds no lock: nothing a swap
   * changes is used there (no swap runs on an engine) */
  if (r->client) {
    gst_hybrid_runner_resolve_settings (r, fs, &view);
    if (r->roi)
      return gst_hybrid_frame_settings_wants (&view, frame)
          ? gst_hybrid_runner_on_regions (r, &view, buf, frame) : GST_FLOW_OK;
    return gst_hybrid_runner_on_engine_frame (r, &view, buf, frame);
  }
  /* on the own model under model_lock, so that a reload takes over
   * before or after, never during */
  g_mutex_lock (&r->model_lock);
  gst_hybrid_runner_resolve_settings (r, fs, &view);
  if (r->roi)
    ret = gst_hybrid_frame_settings_wants (&view, frame)
        ? gst_hybrid_runner_on_regions (r, &view, buf, frame) : GST_FLOW_OK;
  else
    ret = own_frame (r, &view, buf, frame);
  g_mutex_unlock (&r->model_lock);
  return ret;
}

GstFlowReturn
gst_hybrid_runner_submit_held (GstHybridRunner * r,
    const GstHybridFrameSettings * fs, GstBuffer * buf)
{
  GstHybridFrameSettings view;
  GstFlowReturn ret = r->flush_ret;

  gst_hybrid_runner_count_frame_in (r, fs);  g_mutex_lock (&r->model_lock);
  /* (a changed class-thresholds is taken in whatever becomes of the
   * frame) */
  gst_hybrid_runner_resolve_settings (r, fs, &view);
  if (ret == GST_FLOW_OK) {
    ret = gst_hybrid_runner_queue (r, &view, buf);
  } else {
    /* a timed flush's push failed: upstream hears it with this frame */
    r->flush_ret = GST_FLOW_OK;
    gst_buffer_unref (buf);
  }
  g_mutex_unlock (&r->model_lock);
  return ret;
}

GstBuffer *
gst_hybrid_runner_next_ready (GstHybridRunner * r)
{
  g_mutex_lock (&r->model_lock);
  GstBuffer *buf = gst_hybrid_batch_pop_ready (r->batch);
  g_mutex_unlock (&r->model_lock);
  return buf;
}

GstFlowReturn
gst_hybrid_runner_drain (GstHybridRunner * r, gboolean eos)
{
  /* the engine's partial batches stop waiting for this stream */
  if (eos && r->client)
    gst_hybrid_engine_client_idle (r->client);
  return gst_hybrid_runner_drain_held (r);
}

void
gst_hybrid_runner_set_flushing (GstHybridRunner * r, gboolean flushing)
{
  /* the streaming thread may wait in the engine for a batch that waits
   * for other streams: it returns at once (flushing) */
  if (r->client)
    gst_hybrid_engine_client_set_flushing (r->client, flushing);
  if (!flushing)
    gst_hybrid_runner_drop_held (r);
}

void
gst_hybrid_runner_idle (GstHybridRunner * r)
{
  if (r->client)
    gst_hybrid_engine_client_idle (r->client);
}
