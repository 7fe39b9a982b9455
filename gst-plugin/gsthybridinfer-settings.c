/*
 * gsthybridinfer-settings.c — what a frame reads of the properties: one
 * snapshot per frame, taken under the object lock once.  And
 * class-thresholds, part of it: per class, the score it
 * is reported with (property-parse.h), its classes looked up in the
 * running model's labels.  At start a bad value is an error; set while
 * playing, or met by a reload's new labels, it is looked up again by the
 * streaming thread before the next result, and a bad value is a warning
 * (`threshold` alone applies until class-thresholds is set again).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsthybridinfer-private.h"

/* start(), once the model the frames run on is there.  FALSE + error
 * naming the property. */
gboolean
gst_hybrid_infer_start_class_thresholds (GstHybridInfer * self,
    GError ** error)
{
  guint n_labels;
  const char *const *labels =
      gst_hybrid_session_labels (gst_hybrid_infer_running_session (self),
      &n_labels);
  GST_OBJECT_LOCK (self);
  gboolean ok = hyg_class_thresholds_parse (self->settings.class_thresholds,
      labels, n_labels, &self->class_thresholds, error);
  self->class_thresholds_dirty = FALSE;
  GST_OBJECT_UNLOCK (self);
  return ok;
}

/* The class thresholds the next result is read with, NULL for none.
 * Object lock held, by the streaming thread taking its frame's settings:
 * the session it looks labels up in is the one that runs (a reload swaps
 * it under model_lock, which that thread holds on its own model). */
const hyg_class_thresholds *
gst_hybrid_infer_class_thresholds_locked (GstHybridInfer * self,
    GError ** error)
{
  if (self->class_thresholds_dirty) {
    guint n_labels;
    const char *const *labels =
        gst_hybrid_session_labels (gst_hybrid_infer_running_session (self),
        &n_labels);
    self->class_thresholds_dirty = FALSE;
    hyg_class_thresholds_parse (self->settings.class_thresholds, labels,
        n_labels, &self->class_thresholds, error);
  }
  return self->class_thresholds.n ? &self->class_thresholds : NULL;
}

/* A class-thresholds value the running labels refuse (freed). */
void
gst_hybrid_infer_warn_class_thresholds (GstHybridInfer * self,
    GError * error)
{
  GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS, ("%s", error->message),
      ("only threshold applies until class-thresholds is set again"));
  g_error_free (error);
}

/* The settings of one frame, in one take of the object lock: what the
 * frame reads of the properties, the frame duration of the caps, the
 * class-thresholds looked up again when they changed.  Then, the lock let
 * go, what it found to say: a class-thresholds value the labels refuse,
 * and (a changed dump-dir or dump-frames may fail anew, for another
 * reason) the old setting's dump failures summed up. */
void
gst_hybrid_infer_take_frame_settings (GstHybridInfer * self,
    GstHybridFrameSettings * fs)
{
  const GstHybridInferSettings *s = &self->settings;
  GError *error = NULL;
  gboolean rearm;

  GST_OBJECT_LOCK (self);
  fs->interval = s->interval;
  fs->mode = s->mode;
  fs->top_k = s->top_k;
  fs->threshold = s->threshold;
  fs->batch_timeout_ms = s->batch_timeout_ms;
  fs->post_messages = s->post_messages;
  fs->frame_duration = self->frame_duration;
  fs->class_thresholds =
      gst_hybrid_infer_class_thresholds_locked (self, &error);
  rearm = self->dump_rearm;
  self->dump_rearm = FALSE;
  fs->dump_dir = NULL;
  fs->dump_set = NULL;
  if (s->mode == HY_MODE_IMPERATIVE && s->dump_dir && *s->dump_dir) {
    fs->dump_dir = g_strdup (s->dump_dir);
    fs->dump_set = hyg_frame_set_parse (s->dump_frames, NULL);
  }
  GST_OBJECT_UNLOCK (self);
  if (error)
    gst_hybrid_infer_warn_class_thresholds (self, error);
  if (rearm)
    gst_hybrid_infer_sum_up_dump_failures (self);
}

void
gst_hybrid_infer_frame_settings_clear (GstHybridFrameSettings * fs)
{
  g_clear_pointer (&fs->dump_dir, g_free);
  g_clear_pointer (&fs->dump_set, hyg_frame_set_free);
}
