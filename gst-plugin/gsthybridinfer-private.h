/*
 * gsthybridinfer-private.h — what the parts of the hybridinfer element
 * share: the instance, its property ids, and the functions one part
 * calls in another.  gsthybridinfer.c is the element's table of
 * contents; each gsthybridinfer-*.c is one concern of it.  What frames
 * run on, with its threads, is the runner's (infer-runner.h).
 */
#ifndef GST_HYBRID_INFER_PRIVATE_H
#define GST_HYBRID_INFER_PRIVATE_H

#include <gst/video/video.h>

#include "gsthybridinfer.h"
#include "infer-config.h"
#include "infer-runner.h"

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN (gst_hybrid_infer_debug);
#define GST_CAT_DEFAULT gst_hybrid_infer_debug

enum
{
  PROP_0,
  PROP_MODEL,
  PROP_PARAMS,
  PROP_LABELS,
  PROP_DEVICE,
  PROP_PRECISION,
  PROP_MODE,
  PROP_DUMP_DIR,
  PROP_DUMP_FRAMES,
  PROP_INPUT_NAME,
  PROP_INPUT_SIZE,
  PROP_COLOR_ORDER,
  PROP_MEAN,
  PROP_STD,
  PROP_SCALE,
  PROP_RESIZE,
  PROP_INTERPOLATION,
  PROP_INTERVAL,
  PROP_BATCH_SIZE,
  PROP_BATCH_TIMEOUT,
  PROP_OUTPUT,
  PROP_OUTPUT_ACTIVATION,
  PROP_TOP_K,
  PROP_THRESHOLD,
  PROP_POST_MESSAGES,
  PROP_SHARED_ENGINE,
  PROP_SKIP_WHEN_BUSY,
  PROP_INFERENCE_REGION,
  PROP_OBJECT_CLASS,
  PROP_FRAMES_INFERRED,
  PROP_FRAMES_SKIPPED,
  PROP_MEAN_LATENCY_US,
  PROP_LAST_LATENCY_US,
  PROP_ARENA_BYTES,
  PROP_DUMP_FAILURES,
  PROP_CLASS_THRESHOLDS,
  PROP_STATS_INTERVAL,
  PROP_MESSAGE_JSON,
  PROP_IOU_THRESHOLD,
  PROP_QDQ,
};

struct _GstHybridInfer
{
  GstBaseTransform parent;

  /* Everything below is under the object lock unless it says otherwise.
   * Lock order: the sink pad's stream lock, the runner's model_lock, the
   * object lock (infer-runner.h). */
  GstHybridInferSettings settings;

  /* What the frames run on, start() to stop(): set and cleared under the
   * object lock (set_property reads it there), used by the streaming
   * thread and the state changes without it (start() and stop() run
   * while the pads are inactive). */
  GstHybridRunner *runner;
  /* the runner's statistics as stop() left them, shown until the next
   * start */
  GstHybridRunnerStats stopped_stats;

  /* of the current caps, for latency queries and the frames' settings */
  GstClockTime frame_duration;

  /* class-thresholds was set: the next frame's settings carry it to the
   * runner, which looks it up in the running model's labels */
  gboolean class_thresholds_dirty;

  /* Dumps that failed.  The first failure for a dump-dir / dump-frames
   * setting is posted; the rest are counted (an unwritable directory
   * failed every frame, thousands of warnings a second) and summed up in
   * one warning when the setting changes or the element stops. */
  guint64 dump_failures;        /* since start: the property */
  guint64 dump_failures_unposted;       /* since the posted warning */
  gchar *dump_failed_dir;       /* where the posted one failed; NULL:
                                 * none posted for this setting */
  gboolean dump_rearm;          /* the setting changed: sum up, re-arm */
  gboolean warned_dump_frames;  /* dump-frames does not parse: said */

  /* "auto" fell back to the CPU from a GPU it could not use: said once
   * per element, however often it restarts.  start()'s. */
  gboolean warned_device;
};

/* ---- properties (gsthybridinfer-properties.c) ---------------------------- */

G_GNUC_INTERNAL
void gst_hybrid_infer_install_properties (GObjectClass * gobject_class);
G_GNUC_INTERNAL
void gst_hybrid_infer_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
G_GNUC_INTERNAL
void gst_hybrid_infer_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);

/* ---- start / stop (gsthybridinfer-start.c) ------------------------------- */

G_GNUC_INTERNAL
gboolean gst_hybrid_infer_start (GstBaseTransform * trans);
G_GNUC_INTERNAL
gboolean gst_hybrid_infer_stop (GstBaseTransform * trans);

/* ---- caps, allocation, latency (gsthybridinfer-caps.c) ------------------- */

G_GNUC_INTERNAL
gboolean gst_hybrid_infer_set_caps (GstBaseTransform * trans,
    GstCaps * incaps, GstCaps * outcaps);
G_GNUC_INTERNAL
void gst_hybrid_infer_propose_buffers (GstHybridInfer * self,
    GstQuery * query);
G_GNUC_INTERNAL
void gst_hybrid_infer_add_batch_latency (GstHybridInfer * self,
    GstQuery * query);

/* ---- what the runner asks of the element (gsthybridinfer-callbacks.c) ---- */

G_GNUC_INTERNAL
void gst_hybrid_infer_runner_callbacks (GstHybridInfer * self,
    GstHybridRunnerCallbacks * cb);

/* ---- a frame's settings (gsthybridinfer-settings.c) ---------------------- */

/* The one place a frame takes the object lock to read the properties. */
G_GNUC_INTERNAL
void gst_hybrid_infer_take_frame_settings (GstHybridInfer * self,
    GstHybridFrameSettings * fs);

/* ---- dumps (gsthybridinfer-dump.c) --------------------------------------- */

G_GNUC_INTERNAL
void gst_hybrid_infer_report_dump_failure (GstHybridInfer * self,
    const GError * dump_error, guint64 frame);
G_GNUC_INTERNAL
void gst_hybrid_infer_sum_up_dump_failures (GstHybridInfer * self);

G_END_DECLS
#endif /* GST_HYBRID_INFER_PRIVATE_H */
