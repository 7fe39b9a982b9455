/*
 * infer-runner-private.h — what the parts of the runner (infer-runner.h)
 * share: its fields, each with the thread that owns it and the lock that
 * guards it, and the functions one part calls in another.  The calls run
 * one way: infer-runner-dispatch.c, -reload.c, -batch.c, -session.c,
 * -engine.c, -regions.c, -frame.c, -report.c; a file calls only files
 * after it.  The types they share with the element are in
 * frame-settings.h and infer-runner.h, which no .c file stands behind.
 */
#ifndef GST_HYBRID_RUNNER_PRIVATE_H
#define GST_HYBRID_RUNNER_PRIVATE_H

#include "infer-runner.h"
#include "gsthybridresult.h"
#include "infer-batch.h"
#include "infer-engine.h"
#include "infer-roi.h"
#include "infer-session.h"
#include "infer-stats-window.h"

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN (gst_hybrid_runner_debug);
#define GST_CAT_DEFAULT gst_hybrid_runner_debug

/* What a reload asks for: the model, params and labels, and the settings
 * bits they mark (GstHybridSetFlags). */
typedef struct
{
  gchar *model, *params, *labels;
  guint mask;
} GstHybridReload;

struct _GstHybridRunner
{
  /* One for the runner, one for its loader while that runs: free() may
   * run on the loader (a sync bus handler stopping the element on its
   * message), which then leaves holding the last one.  Atomic. */
  gint refcount;
  GstHybridRunnerCallbacks cb;

  /* fixed at new() */
  GstHybridEngineClient *client;        /* on an engine, else NULL */
  gboolean skip_when_busy;      /* with client: frames do not wait */
  guint batch_size;             /* of the config; the same for a reload */

  /* The model and what is made from it change hands under model_lock:
   * the streaming thread and the flush thread hold it while they convert,
   * run and read frames, never while they push downstream; the loader
   * holds it while it swaps sessions.  So a reload can take over while a
   * prerolled sink holds the streaming thread (and the sink pad's stream
   * lock) in a push. */
  GMutex model_lock;
  GstHybridSession *session;    /* the own model; NULL on an engine */
  GstHybridRoi *roi;            /* inference-region=roi: the regions */
  GstHybridResult *last;        /* for the frames interval skips */
  GstHybridBatch *batch;        /* held frames; NULL: none are held */
  GstCaps *failed_caps;         /* caps whose error was posted */
  gint64 arena_seen;            /* arena bytes as last counted */
  gboolean ran_hybrid;          /* a hybrid forward ran */
  /* class-thresholds (the property's text) looked up in the labels of
   * the model that runs: again when the text changes (a frame's
   * settings say so) or a swap brings other labels (`dirty`).  On an
   * engine (no swap, no flush thread) the streaming thread's alone. */
  gchar *thresholds_text;
  hyg_class_thresholds thresholds;
  gboolean thresholds_dirty;

  /* the streaming thread's (or whoever holds the stream lock in its
   * place: the flush thread) */
  guint64 frame_count;
  GstVideoInfo info;            /* of the current caps */
  /* The pool the last held frame came from and its max-buffers (0:
   * unbounded), compared by address only: a partial batch runs before
   * holding the frames would leave upstream no buffer. */
  GstBufferPool *known_pool;
  guint known_pool_max;
  GstFlowReturn flush_ret;      /* a timed push's failure, for the next
                                 * frame to return */

  /* Bounds the wait of a partial batch (batch-timeout): a thread runs it
   * once its oldest frame has waited that long, under the sink pad's
   * stream lock like any chain call.  flush_lock guards the deadline and
   * quit. */
  GThread *flush_thread;
  GMutex flush_lock;
  GCond flush_cond;
  gint64 flush_deadline;        /* monotonic us; 0: nothing held */
  gboolean flush_quit;

  /* statistics: stats_lock; the window is stats-interval's */
  GMutex stats_lock;
  GstHybridRunnerStats stats;
  GstHybridStatsWindow window;

  /* Hot reload: reload_lock guards all of these.  `want` is the newest
   * request, `running` what the model that runs was loaded from; the
   * frame format of the current caps lets the loader plan for them
   * (frame_serial counts caps changes).  The loader of this runner is
   * reload_thread; a loader that is not (free() let it go) leaves at its
   * next look. */
  GMutex reload_lock;
  GCond reload_cond;
  GThread *reload_thread;
  GstHybridReload want, running;
  guint64 reload_serial;        /* requests made */
  guint64 reload_done;          /* the last one the loader finished */
  GstHybridFrameFormat frame_format;
  gboolean frame_known;
  guint64 frame_serial;
};

/* ---- reload (infer-runner-reload.c) ------------------------------------ */

void gst_hybrid_runner_reload_init (GstHybridRunner * r,
    const GstHybridInferSettings * settings);
/* Lets the loader go (joined unless this is it); free()'s first step. */
void gst_hybrid_runner_reload_stop (GstHybridRunner * r);
void gst_hybrid_runner_reload_note_format (GstHybridRunner * r,
    const GstHybridFrameFormat * format);
void gst_hybrid_runner_unref (GstHybridRunner * r);

/* ---- batches (infer-runner-batch.c) ------------------------------------ */

void gst_hybrid_runner_batch_start (GstHybridRunner * r, guint batch);
void gst_hybrid_runner_batch_stop (GstHybridRunner * r);
GstFlowReturn gst_hybrid_runner_queue (GstHybridRunner * r,
    const GstHybridFrameSettings * fs, GstBuffer * buf);
GstFlowReturn gst_hybrid_runner_drain_held (GstHybridRunner * r);
void gst_hybrid_runner_drop_held (GstHybridRunner * r);
gboolean gst_hybrid_runner_run_held (GstHybridRunner * r);
void gst_hybrid_runner_flush_now (GstHybridRunner * r);

/* ---- what frames run on, built in one place (infer-runner-session.c) --- */

gboolean gst_hybrid_runner_build_session (GstHybridRunner * r,
    GstHybridInferSettings * copy, const GstHybridFrameFormat * format,
    GstHybridSessionConfig * config, GstHybridSession ** session,
    GstHybridEngineClient ** client, char **note, gchar ** what,
    GError ** error);
gboolean gst_hybrid_runner_plan_frames (GstHybridSession * session,
    const GstHybridFrameFormat * f, GError ** error);
const GstHybridSession *gst_hybrid_runner_running_session (const
    GstHybridRunner * r);
/* The frame's class-thresholds, looked up again when they changed: a
 * view of `fs` with them.  model_lock held (or on an engine). */
void gst_hybrid_runner_resolve_settings (GstHybridRunner * r,
    const GstHybridFrameSettings * fs, GstHybridFrameSettings * view);
gboolean gst_hybrid_runner_start_thresholds (GstHybridRunner * r,
    const gchar * text, GError ** error);

/* ---- on an engine (infer-runner-engine.c) ------------------------------ */

gboolean gst_hybrid_runner_join_engine (const GstHybridInferSettings * copy,
    const GstHybridSessionConfig * config, GstHybridEngineClient ** client,
    char **note, GError ** error);
GstFlowReturn gst_hybrid_runner_on_engine_frame (GstHybridRunner * r,
    const GstHybridFrameSettings * fs, GstBuffer * buf, guint64 frame);

/* ---- on regions of interest (infer-runner-regions.c) ------------------- */

void gst_hybrid_runner_start_regions (GstHybridRunner * r,
    const gchar * object_class);
GstFlowReturn gst_hybrid_runner_on_regions (GstHybridRunner * r,
    const GstHybridFrameSettings * fs, GstBuffer * buf, guint64 frame);

/* ---- one frame on the own model (infer-runner-frame.c) ----------------- */

/* How long the stream of this frame still counts toward a full batch on
 * an engine with nothing queued (docs/ELEMENT.md, "When a camera
 * stalls"). */
gint64 gst_hybrid_runner_quiet_us (const GstHybridFrameSettings * fs,
    GstBuffer * buf);
gboolean gst_hybrid_runner_map_frame (GstHybridRunner * r, GstBuffer * buf,
    GstVideoFrame * frame, const uint8_t * planes[3], int strides[3]);
/* The frame into batch slot `slot` for a forward in `mode`
 * (gst_hybrid_session_load). */
gboolean gst_hybrid_runner_load_frame (GstHybridRunner * r, GstBuffer * buf,
    gint slot, hy_mode mode);
gboolean gst_hybrid_runner_run_forward (GstHybridRunner * r,
    const GstHybridFrameSettings * fs, guint64 first, guint64 last);
void gst_hybrid_runner_carry_last (GstHybridRunner * r, GstBuffer * buf);
GstHybridResultFrame gst_hybrid_runner_frame_details (const
    GstHybridFrameSettings * fs, GstBuffer * buf, guint64 frame);
GstStructure *gst_hybrid_runner_message_structure (const GstStructure *
    results, GstBuffer * buf, guint64 frame);
/* post: a message; json (with post): with the `json` field */
void gst_hybrid_runner_publish_result (GstHybridRunner * r, GstBuffer * buf,
    GstHybridResult * result, gdouble latency_us, gboolean post,
    gboolean json);
void gst_hybrid_runner_finish_frame (GstHybridRunner * r,
    const GstHybridFrameSettings * fs, GstBuffer * buf, guint64 frame,
    gint slot, gint64 start_us);

/* ---- statistics, errors and notes (infer-runner-report.c) -------------- */

void gst_hybrid_runner_count_inferred (GstHybridRunner * r,
    gdouble latency_us);
void gst_hybrid_runner_count_skipped (GstHybridRunner * r);
void gst_hybrid_runner_count_frame_in (GstHybridRunner * r,
    const GstHybridFrameSettings * fs);
void gst_hybrid_runner_set_arena (GstHybridRunner * r, gint64 bytes);

/* Posts `error` (the core's message) in the GStreamer domain that fits;
 * `what` (the debug detail) says what was being done. */
#define runner_post_error(r, error, what) \
  gst_hybrid_runner_post_error_at (r, GST_MESSAGE_ERROR, error, what, \
      __FILE__, GST_FUNCTION, __LINE__)
/* The same as a warning: a failed reload, the old model runs on. */
#define runner_post_warning(r, error, what) \
  gst_hybrid_runner_post_error_at (r, GST_MESSAGE_WARNING, error, what, \
      __FILE__, GST_FUNCTION, __LINE__)
/* GST_ELEMENT_ERROR / GST_ELEMENT_WARNING, through the element. */
#define RUNNER_MESSAGE(r, type, domain, code, text, debug) \
  (r)->cb.post ((r)->cb.owner, GST_MESSAGE_ ## type, GST_ ## domain ## \
      _ERROR, GST_ ## domain ## _ERROR_ ## code, _gst_element_error_printf \
      text, _gst_element_error_printf debug, __FILE__, GST_FUNCTION, __LINE__)

void gst_hybrid_runner_post_error_at (GstHybridRunner * r,
    GstMessageType type, const GError * error, const gchar * what,
    const gchar * file, const gchar * function, gint line);
void gst_hybrid_runner_post_frame_error (GstHybridRunner * r,
    GError * error, guint64 frame);
void gst_hybrid_runner_check_labels (GstHybridRunner * r,
    const GstHybridSession * session);
void gst_hybrid_runner_report_session_note (GstHybridRunner * r);

G_END_DECLS
#endif /* GST_HYBRID_RUNNER_PRIVATE_H */
