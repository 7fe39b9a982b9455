/*
 * gsthybridinfer-start.c — start and stop: the settings snapshot, the
 * runner made from it (infer-runner.h: the model the frames run on, with
 * its threads), then the runner freed again.
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
report_device (GstHybridInfer * self, GstHybridRunner * runner,
    const char *note)
{
  const char *coretype = hy_blas_suggested_coretype ();
  gboolean on_cpu = gst_hybrid_runner_device (runner).kind == HY_DEVICE_CPU;
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

/* The counts of a start begin at nothing.  Object lock held. */
static void
reset_counts_locked (GstHybridInfer * self)
{
  self->dump_failures = 0;
  self->dump_failures_unposted = 0;
  g_clear_pointer (&self->dump_failed_dir, g_free);
  self->dump_rearm = FALSE;
  self->frame_duration = 0;
  self->stopped_stats = (GstHybridRunnerStats) {
  0};
}

gboolean
gst_hybrid_infer_start (GstBaseTransform * trans)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);
  GstHybridInferSettings copy;
  GstHybridRunnerCallbacks cb;
  char *note = NULL;

  /* class-thresholds as it is now goes with the snapshot: the frames
   * carry it again only when it changes */
  GST_OBJECT_LOCK (self);
  gst_hybrid_infer_settings_snapshot (&self->settings, &copy);
  self->class_thresholds_dirty = FALSE;
  reset_counts_locked (self);
  GST_OBJECT_UNLOCK (self);
  gst_hybrid_infer_runner_callbacks (self, &cb);
  GstHybridRunner *runner = gst_hybrid_runner_new (&copy, &cb, &note);
  gst_hybrid_infer_settings_clear (&copy);
  if (!runner)
    return FALSE;               /* posted */
  report_device (self, runner, note);
  g_free (note);
  GST_OBJECT_LOCK (self);
  self->runner = runner;
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

gboolean
gst_hybrid_infer_stop (GstBaseTransform * trans)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);
  gst_hybrid_infer_sum_up_dump_failures (self);
  /* no more reload requests reach it; what it counted stays readable */
  GST_OBJECT_LOCK (self);
  GstHybridRunner *runner = self->runner;
  self->runner = NULL;
  if (runner)
    gst_hybrid_runner_read_stats (runner, &self->stopped_stats);
  GST_OBJECT_UNLOCK (self);
  if (!runner)
    return TRUE;
  /* the flush thread may still count a frame until it is joined */
  GstHybridRunnerStats stats;
  gst_hybrid_runner_free (runner, &stats);
  GST_OBJECT_LOCK (self);
  self->stopped_stats = stats;
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}
