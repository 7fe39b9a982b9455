/*
 * gsthybridinfer-start.c — start and stop: the settings snapshot, the
 * model the frames run on (built by gsthybridinfer-session.c: the
 * element's own session, an engine's, or regions on the own session),
 * then everything torn down again.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsthybridinfer-private.h"

/* What "auto" chose, in the log; and, once per element however often it
 * restarts, a warning when it fell back to the CPU from a GPU that is
 * there but could not be used.  A machine with no GPU at all is the
 * normal case of a CPU machine: no warning. */
static void
report_device (GstHybridInfer * self, const char *note)
{
  const char *coretype = hy_blas_suggested_coretype ();
  gboolean on_cpu =
      gst_hybrid_session_device (gst_hybrid_infer_running_session (self)).kind
      == HY_DEVICE_CPU;
  if (note && (!on_cpu || hy_device_no_gpu ())) {
    GST_INFO_OBJECT (self, "%s", note);
  } else if (note && !self->warned_device) {
    self->warned_device = TRUE;
    GST_ELEMENT_WARNING (self, LIBRARY, SETTINGS, ("%s", note), (NULL));
  }
  if (coretype && !g_getenv ("OPENBLAS_CORETYPE"))
    GST_INFO_OBJECT (self, "OpenBLAS runs %s kernels; exporting "
        "OPENBLAS_CORETYPE=%s before starting would be faster",
        hy_blas_core_name (), coretype);
}

gboolean
gst_hybrid_infer_start (GstBaseTransform * trans)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);
  GstHybridInferSettings copy;
  GstHybridSessionConfig config;
  GError *error = NULL;
  char *note = NULL;
  gchar *what = NULL;

  GST_OBJECT_LOCK (self);
  gst_hybrid_infer_settings_snapshot (&self->settings, &copy);
  GST_OBJECT_UNLOCK (self);
  if (!gst_hybrid_infer_build_session (self, &copy, NULL, &config,
          &self->session, &self->client, &note, &what, &error))
    goto build_failed;
  if (copy.inference_region == GST_HYBRID_INFER_REGION_ROI)
    gst_hybrid_infer_start_regions (self, copy.object_class);
  self->skip_when_busy = copy.skip_when_busy;
  gst_hybrid_infer_settings_clear (&copy);
  report_device (self, note);
  g_free (note);
  if (!gst_hybrid_infer_start_class_thresholds (self, &error))
    goto thresholds_failed;

  self->frame_count = 0;
  self->ran_hybrid = FALSE;
  self->known_pool = NULL;
  self->flush_ret = GST_FLOW_OK;
  self->flush_deadline = 0;
  self->flush_quit = FALSE;
  /* An engine batches for its elements, and regions are batched within
   * their frame: the element holds no frames then. */
  if (self->session && !self->roi)
    self->batch = gst_hybrid_batch_new ((guint) config.batch);
  if (self->session && !self->roi && config.batch > 1)
    self->flush_thread = g_thread_new ("hybridinfer-flush",
        gst_hybrid_infer_flush_thread_func, self);
  GST_OBJECT_LOCK (self);
  self->dump_failures = 0;
  self->dump_failures_unposted = 0;
  g_clear_pointer (&self->dump_failed_dir, g_free);
  self->dump_rearm = FALSE;
  self->frame_duration = 0;
  self->frames_inferred = 0;
  self->frames_skipped = 0;
  self->total_latency_us = 0;
  self->last_latency_us = 0;
  self->arena_bytes =
      gst_hybrid_session_arena_bytes (gst_hybrid_infer_running_session (self));
  self->arena_seen = self->arena_bytes;
  self->on_engine = self->client != NULL;
  self->frame_known = FALSE;
  self->frame_serial = 0;
  self->want_model = g_strdup (self->settings.model);
  self->want_params = g_strdup (self->settings.params);
  self->want_labels = g_strdup (self->settings.labels);
  self->want_mask = 0;
  self->reload_serial = self->reload_done = 0;
  self->started = TRUE;
  GST_OBJECT_UNLOCK (self);
  return TRUE;

  /* ERRORS */
build_failed:
  {
    post_error (self, error, what);
    g_error_free (error);
    g_free (what);
    gst_hybrid_infer_settings_clear (&copy);
    return FALSE;
  }
thresholds_failed:
  {
    post_error (self, error, "invalid property value");
    g_error_free (error);
    g_clear_pointer (&self->session, gst_hybrid_session_free);
    g_clear_pointer (&self->client, gst_hybrid_engine_leave);
    g_clear_pointer (&self->roi, gst_hybrid_roi_free);
    return FALSE;
  }
}

gboolean
gst_hybrid_infer_stop (GstBaseTransform * trans)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);
  gst_hybrid_infer_sum_up_dump_failures (self);
  gst_hybrid_infer_reload_stop (self);
  /* Streaming has stopped (the pads are inactive): a timed flush waiting
   * for the stream lock gets it, sees quit and does nothing. */
  if (self->flush_thread) {
    g_mutex_lock (&self->flush_lock);
    self->flush_quit = TRUE;
    g_cond_signal (&self->flush_cond);
    g_mutex_unlock (&self->flush_lock);
    g_thread_join (self->flush_thread);
    self->flush_thread = NULL;
  }
  g_clear_pointer (&self->batch, gst_hybrid_batch_free);
  g_clear_pointer (&self->last, gst_hybrid_result_unref);
  g_clear_pointer (&self->session, gst_hybrid_session_free);
  g_clear_pointer (&self->client, gst_hybrid_engine_leave);
  g_clear_pointer (&self->roi, gst_hybrid_roi_free);
  GST_OBJECT_LOCK (self);
  self->on_engine = FALSE;
  GST_OBJECT_UNLOCK (self);
  gst_caps_replace (&self->failed_caps, NULL);
  return TRUE;
}
