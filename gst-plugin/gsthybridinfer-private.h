/*
 * gsthybridinfer-private.h — what the parts of the hybridinfer element
 * share: the instance, its property ids, and the functions one part
 * calls in another.  gsthybridinfer.c is the element's table of
 * contents; each gsthybridinfer-*.c is one concern of it.
 */
#ifndef GST_HYBRID_INFER_PRIVATE_H
#define GST_HYBRID_INFER_PRIVATE_H

#include <gst/video/video.h>

#include "gsthybridinfer.h"
#include "gsthybridresult.h"
#include "infer-batch.h"
#include "infer-config.h"
#include "infer-engine.h"
#include "infer-roi.h"
#include "infer-session.h"

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
};

/* What set_caps gave gst_hybrid_session_set_frame: a session loaded while
 * playing is planned for the same frames. */
typedef struct
{
  hy_pixel_layout layout;
  gint width, height;
  gfloat kr, kb;
  gboolean full_range;
} GstHybridFrameFormat;

/* What one frame reads of the properties: taken under the object lock
 * once per frame (gst_hybrid_infer_take_frame_settings) and passed down,
 * never written after.  Nothing in it is allocated but the dump fields,
 * set only in imperative mode with a dump-dir. */
typedef struct
{
  guint interval;
  hy_mode mode;
  guint top_k;
  gfloat threshold;
  guint batch_timeout_ms;
  gboolean post_messages;
  GstClockTime frame_duration;  /* of the current caps; 0: unknown */
  /* resolved against the running model's labels; NULL: none.  Points at
   * the instance's, which only the streaming thread writes. */
  const hyg_class_thresholds *class_thresholds;
  gchar *dump_dir;              /* imperative with a dump-dir, or NULL */
  hyg_frame_set *dump_set;      /* with dump_dir; NULL: does not parse */
} GstHybridFrameSettings;

/* Whether frame number `frame` is one the interval infers. */
static inline gboolean
gst_hybrid_frame_settings_wants (const GstHybridFrameSettings * fs,
    guint64 frame)
{
  return frame % fs->interval == 0;
}

struct _GstHybridInfer
{
  GstBaseTransform parent;

  GstHybridInferSettings settings;

  /* of the current caps, for latency queries; object lock */
  GstClockTime frame_duration;

  /* statistics; object lock */
  guint64 frames_inferred;
  guint64 frames_skipped;       /* skip-when-busy: the engine was busy */
  gdouble total_latency_us;
  gdouble last_latency_us;
  gint64 arena_bytes;
  gint64 arena_seen;            /* arena_bytes as last written; model_lock */

  /* The model and what is made from it (session, roi, last, the frames
   * held for a batch and the ready queue) change hands under
   * model_lock: the streaming thread and the flush thread hold it while
   * they convert, run and read frames, never while they push downstream;
   * the loader holds it while it swaps sessions.  So a reload can take
   * over while a prerolled sink holds the streaming thread (and the sink
   * pad's stream lock) in a push.  Order: the stream lock, model_lock,
   * the object lock. */
  GMutex model_lock;

  /* runtime state: start() to stop(), streaming thread, model_lock */
  GstHybridSession *session;    /* the element's own model, or NULL */
  GstHybridEngineClient *client;        /* or an engine's (infer-engine.h) */
  gboolean skip_when_busy;      /* with client: frames do not wait */
  GstHybridRoi *roi;            /* inference-region=roi: the regions */
  GstVideoInfo info;            /* of the current caps */
  GstCaps *failed_caps;         /* caps whose error was posted: GStreamer
                                 * sends sticky caps again with the next
                                 * buffer, and one failure is one error;
                                 * model_lock (a swap clears it) */
  guint64 frame_count;
  GstHybridResult *last;        /* for the frames interval skips */
  GstHybridBatch *batch;        /* frames waiting for their batch */
  /* The pool the last held frame came from and its max-buffers (0:
   * unbounded), compared by address only: a partial batch runs before
   * holding the frames would leave upstream no buffer. */
  GstBufferPool *known_pool;
  guint known_pool_max;
  /* Bounds the wait of a partial batch (batch-timeout): a thread runs it
   * once its oldest frame has waited that long, under the sink pad's
   * stream lock like any chain call.  flush_lock guards the deadline and
   * quit; flush_ret (stream lock) is a timed push's failure, returned by
   * the next frame. */
  GThread *flush_thread;
  GMutex flush_lock;
  GCond flush_cond;
  gint64 flush_deadline;        /* monotonic us; 0: nothing held */
  gboolean flush_quit;
  GstFlowReturn flush_ret;
  gboolean warned_device;
  gboolean warned_dump_frames;
  gboolean ran_hybrid;          /* a hybrid forward ran since start */

  /* class-thresholds resolved against the running model's labels: at
   * start, and by the streaming thread before the next result once
   * `dirty` (object lock) says the property changed or a reload brought
   * other labels.  Written by the streaming thread only. */
  hyg_class_thresholds class_thresholds;
  gboolean class_thresholds_dirty;

  /* Dumps that failed.  The first failure for a dump-dir / dump-frames
   * setting is posted; the rest are counted (an unwritable directory
   * failed every frame, thousands of warnings a second) and summed up in
   * one warning when the setting changes or the element stops.  Object
   * lock. */
  guint64 dump_failures;        /* since start: the property */
  guint64 dump_failures_unposted;       /* since the posted warning */
  gchar *dump_failed_dir;       /* where the posted one failed; NULL:
                                 * none posted for this setting */
  gboolean dump_rearm;          /* the setting changed: sum up, re-arm */

  /* Hot reload.  model, params and labels set while started are a
   * request: a loader thread (started at the first one, joined in stop())
   * loads and plans the new session off the streaming thread, then swaps
   * it in under model_lock, between two frames.  The settings keep the
   * model actually running until then.  Object lock: all of these but the
   * thread's own locals. */
  gboolean started;
  gboolean on_engine;           /* client is set */
  gchar *want_model, *want_params, *want_labels;
  guint want_mask;              /* GstHybridSetFlags set while started */
  guint64 reload_serial;        /* requests made since start */
  guint64 reload_done;          /* the last one the loader finished */
  /* The loader of this start; a loader that is not (stop() let it go)
   * leaves at its next look. */
  GThread *reload_thread;
  GCond reload_cond;            /* with the object lock */
  /* The frame format of the current caps, so that the loader plans the
   * new session for it; frame_serial counts caps changes. */
  GstHybridFrameFormat frame_format;
  gboolean frame_known;
  guint64 frame_serial;
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

/* ---- the session, built in one place (gsthybridinfer-session.c) ---------- */

G_GNUC_INTERNAL
const GstHybridSession *gst_hybrid_infer_running_session (GstHybridInfer *
    self);
G_GNUC_INTERNAL
gboolean gst_hybrid_infer_build_session (GstHybridInfer * self,
    GstHybridInferSettings * copy, const GstHybridFrameFormat * format,
    GstHybridSessionConfig * config, GstHybridSession ** session,
    GstHybridEngineClient ** client, char **note, gchar ** what,
    GError ** error);
G_GNUC_INTERNAL
gboolean gst_hybrid_infer_set_frame_format (GstHybridSession * session,
    const GstHybridFrameFormat * f, GError ** error);

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

/* ---- one frame on the own model (gsthybridinfer-frame.c) ----------------- */

G_GNUC_INTERNAL
gboolean gst_hybrid_infer_map_frame (GstHybridInfer * self, GstBuffer * buf,
    GstVideoFrame * frame, const uint8_t * planes[3], int strides[3]);
G_GNUC_INTERNAL
gboolean gst_hybrid_infer_load_frame (GstHybridInfer * self, GstBuffer * buf,
    gint slot);
G_GNUC_INTERNAL
gboolean gst_hybrid_infer_run_forward (GstHybridInfer * self,
    const GstHybridFrameSettings * fs, guint64 first, guint64 last);
G_GNUC_INTERNAL
void gst_hybrid_infer_carry_last (GstHybridInfer * self, GstBuffer * buf);
G_GNUC_INTERNAL
GstHybridResultFrame gst_hybrid_infer_frame_details (GstHybridInfer * self,
    GstBuffer * buf, guint64 frame);
G_GNUC_INTERNAL
void gst_hybrid_infer_publish_result (GstHybridInfer * self, GstBuffer * buf,
    GstHybridResult * result, gdouble latency_us, gboolean post);
G_GNUC_INTERNAL
void gst_hybrid_infer_count_inferred (GstHybridInfer * self,
    gdouble latency_us);
G_GNUC_INTERNAL
void gst_hybrid_infer_finish_frame (GstHybridInfer * self,
    const GstHybridFrameSettings * fs, GstBuffer * buf, guint64 frame,
    gint slot, gint64 start_us);

/* ---- batches (gsthybridinfer-batching.c) --------------------------------- */

G_GNUC_INTERNAL
GstFlowReturn gst_hybrid_infer_generate_batched (GstHybridInfer * self,
    GstBuffer ** outbuf);
G_GNUC_INTERNAL
GstFlowReturn gst_hybrid_infer_drain (GstHybridInfer * self);
G_GNUC_INTERNAL
void gst_hybrid_infer_drop_pending (GstHybridInfer * self);
G_GNUC_INTERNAL
gboolean gst_hybrid_infer_run_held (GstHybridInfer * self);
G_GNUC_INTERNAL
void gst_hybrid_infer_flush_now (GstHybridInfer * self);
G_GNUC_INTERNAL
void gst_hybrid_infer_update_flush_deadline (GstHybridInfer * self,
    guint timeout_ms);
G_GNUC_INTERNAL
gpointer gst_hybrid_infer_flush_thread_func (gpointer data);

/* ---- on an engine (gsthybridinfer-engine.c) ------------------------------ */

G_GNUC_INTERNAL
gboolean gst_hybrid_infer_join_engine (GstHybridInfer * self,
    const GstHybridInferSettings * copy,
    const GstHybridSessionConfig * config, GstHybridEngineClient ** client,
    char **note, GError ** error);
G_GNUC_INTERNAL
GstFlowReturn gst_hybrid_infer_on_engine (GstHybridInfer * self,
    const GstHybridFrameSettings * fs, GstBuffer * buf, guint64 frame);

/* ---- on regions of interest (gsthybridinfer-regions.c) ------------------- */

G_GNUC_INTERNAL
void gst_hybrid_infer_start_regions (GstHybridInfer * self,
    const gchar * object_class);
G_GNUC_INTERNAL
GstFlowReturn gst_hybrid_infer_on_regions (GstHybridInfer * self,
    const GstHybridFrameSettings * fs, GstBuffer * buf, guint64 frame);

/* ---- hot reload (gsthybridinfer-reload.c) -------------------------------- */

G_GNUC_INTERNAL
void gst_hybrid_infer_request_reload (GstHybridInfer * self, guint prop_id,
    const GValue * value);
G_GNUC_INTERNAL
void gst_hybrid_infer_reload_stop (GstHybridInfer * self);

/* ---- a frame's settings, class-thresholds (gsthybridinfer-settings.c) ---- */

/* The one place a frame takes the object lock to read the properties.
 * On the element's own model, model_lock held (class-thresholds are
 * looked up in the labels of the session that runs). */
G_GNUC_INTERNAL
void gst_hybrid_infer_take_frame_settings (GstHybridInfer * self,
    GstHybridFrameSettings * fs);
G_GNUC_INTERNAL
void gst_hybrid_infer_frame_settings_clear (GstHybridFrameSettings * fs);

G_GNUC_INTERNAL
gboolean gst_hybrid_infer_start_class_thresholds (GstHybridInfer * self,
    GError ** error);
/* Object lock held: looks class-thresholds up again when they changed
 * (or a reload brought other labels); *error: a bad value, to post once
 * the lock is let go. */
G_GNUC_INTERNAL
const hyg_class_thresholds
    *gst_hybrid_infer_class_thresholds_locked (GstHybridInfer * self,
    GError ** error);
G_GNUC_INTERNAL
void gst_hybrid_infer_warn_class_thresholds (GstHybridInfer * self,
    GError * error);

/* ---- dumps (gsthybridinfer-dump.c) --------------------------------------- */

G_GNUC_INTERNAL
gchar *gst_hybrid_infer_dump_dir_for (GstHybridInfer * self,
    const GstHybridFrameSettings * fs, hy_mode mode, guint64 first,
    guint64 last);
G_GNUC_INTERNAL
void gst_hybrid_infer_report_dump_failure (GstHybridInfer * self,
    const GError * dump_error, guint64 frame);
G_GNUC_INTERNAL
void gst_hybrid_infer_sum_up_dump_failures (GstHybridInfer * self);

/* ---- errors and notes (gsthybridinfer-report.c) -------------------------- */

/* Posts `error` (the core's message) in the GStreamer domain that fits;
 * `what` (the debug detail) says what was being done. */
#define post_error(self, error, what) \
  gst_hybrid_infer_post_error_at (self, GST_MESSAGE_ERROR, error, what, \
      __FILE__, GST_FUNCTION, __LINE__)
/* The same as a warning: a failed reload, the old model runs on. */
#define post_warning(self, error, what) \
  gst_hybrid_infer_post_error_at (self, GST_MESSAGE_WARNING, error, what, \
      __FILE__, GST_FUNCTION, __LINE__)

G_GNUC_INTERNAL
void gst_hybrid_infer_post_error_at (GstHybridInfer * self,
    GstMessageType type, const GError * error, const gchar * what,
    const gchar * file, const gchar * function, gint line);
G_GNUC_INTERNAL
void gst_hybrid_infer_post_frame_error (GstHybridInfer * self,
    GError * error, guint64 frame);
G_GNUC_INTERNAL
void gst_hybrid_infer_check_labels (GstHybridInfer * self,
    const GstHybridSession * session);
G_GNUC_INTERNAL
void gst_hybrid_infer_report_session_note (GstHybridInfer * self);

G_END_DECLS
#endif /* GST_HYBRID_INFER_PRIVATE_H */
