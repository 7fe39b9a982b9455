/*
 * gsthybridinfer-settings.c — what a frame reads of the properties: one
 * snapshot per frame, taken under the object lock once, handed to the
 * runner.  class-thresholds travels in it only when it changed: the
 * runner looks it up in the labels of the model that runs
 * (infer-runner-session.c).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsthybridinfer-private.h"

/* The settings of one frame, in one take of the object lock: what the
 * frame reads of the properties, the frame duration of the caps, the
 * sink pad's segment, and class-thresholds when it changed.  Then, the
 * lock let go, (a changed dump-dir or dump-frames may fail anew, for
 * another reason) the old setting's dump failures summed up.  The
 * streaming thread, or whoever holds the stream lock in its place (the
 * flush thread; the loader at a swap, which reads no segment it does not
 * hold either way). */
void
gst_hybrid_infer_take_frame_settings (GstHybridInfer * self,
    GstHybridFrameSettings * fs)
{
  const GstHybridInferSettings *s = &self->settings;
  gboolean rearm;

  GST_OBJECT_LOCK (self);
  *fs = (GstHybridFrameSettings) {
    .interval = s->interval,
    .stats_interval_ms = s->stats_interval_ms,
    .mode = s->mode,
    .top_k = s->top_k,
    .threshold = s->threshold,
    .scores_set = s->set_mask & (GST_HYBRID_SET_TOP_K
        | GST_HYBRID_SET_THRESHOLD),
    .batch_timeout_ms = s->batch_timeout_ms,
    .post_messages = s->post_messages,
    .message_json = s->message_json,
    .frame_duration = self->frame_duration,
    .segment = &GST_BASE_TRANSFORM (self)->segment,
    .class_thresholds_changed = self->class_thresholds_dirty,
  };
  if (self->class_thresholds_dirty)
    fs->class_thresholds_text = g_strdup (s->class_thresholds);
  self->class_thresholds_dirty = FALSE;
  rearm = self->dump_rearm;
  self->dump_rearm = FALSE;
  if (s->mode == HY_MODE_IMPERATIVE && s->dump_dir && *s->dump_dir) {
    fs->dump_dir = g_strdup (s->dump_dir);
    fs->dump_set = hyg_frame_set_parse (s->dump_frames, NULL);
  }
  GST_OBJECT_UNLOCK (self);
  if (rearm)
    gst_hybrid_infer_sum_up_dump_failures (self);
}
