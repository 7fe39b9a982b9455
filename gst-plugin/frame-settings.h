/*
 * frame-settings.h — what the element hands its runner about frames: the
 * format its caps describe, and one frame's snapshot of the properties.
 * The element fills both; the runner's files read them.  It has no file
 * of its own behind it, so every part of the runner points here and none
 * back (gst_hybrid_frame_settings_clear is the runner's, in
 * infer-runner-session.c, where a snapshot's looked-up parts are made).
 */
#ifndef GST_HYBRID_FRAME_SETTINGS_H
#define GST_HYBRID_FRAME_SETTINGS_H

#include <gst/gst.h>

#include "infer-config.h"

G_BEGIN_DECLS

/* The frames the caps describe: a session loaded while playing is planned
 * for the same frames. */
typedef struct
{
  hy_pixel_layout layout;
  gint width, height;
  gfloat kr, kb;
  gboolean full_range;
} GstHybridFrameFormat;

/* What one frame reads of the properties: taken under the element's
 * object lock once per frame (gst_hybrid_infer_take_frame_settings) and
 * passed down, never written after.  Nothing in it is allocated but the
 * dump fields, set only in imperative mode with a dump-dir, and
 * class_thresholds_text, set only when the property changed. */
typedef struct
{
  guint interval;
  guint stats_interval_ms;      /* 0: off */
  hy_mode mode;
  guint top_k;
  gfloat threshold;
  /* GST_HYBRID_SET_TOP_K / _THRESHOLD when the property was set: it wins
   * over the sidecar's value */
  guint scores_set;
  guint batch_timeout_ms;
  gboolean post_messages;
  gboolean message_json;        /* with post_messages: the `json` field */
  GstClockTime frame_duration;  /* of the current caps; 0: unknown */
  /* the sink pad's segment, for results' running times: read by whoever
   * holds the stream lock (the streaming thread, the flush thread) */
  const GstSegment *segment;
  /* class-thresholds set since the last snapshot: the runner looks the
   * new value (NULL: none) up in the running model's labels */
  gboolean class_thresholds_changed;
  gchar *class_thresholds_text;
  /* filled by the runner, never by the element: class-thresholds as
   * looked up in the labels of the model that runs; NULL: none */
  const hyg_class_thresholds *class_thresholds;
  gchar *dump_dir;              /* imperative with a dump-dir, or NULL */
  hyg_frame_set *dump_set;      /* with dump_dir; NULL: does not parse */
} GstHybridFrameSettings;

void gst_hybrid_frame_settings_clear (GstHybridFrameSettings * fs);

/* Whether frame number `frame` is one the interval infers. */
static inline gboolean
gst_hybrid_frame_settings_wants (const GstHybridFrameSettings * fs,
    guint64 frame)
{
  return frame % fs->interval == 0;
}

G_END_DECLS
#endif /* GST_HYBRID_FRAME_SETTINGS_H */
