/*
 * infer-runner.h — what the hybridinfer element runs its frames on, as
 * GstVideoConverter is what videoconvert converts with: a plain object,
 * no GstElement in it.  A runner owns the model the frames run on (the
 * element's own session, an engine's client, or regions on the own
 * session), the frames held for a batch and the thread that bounds their
 * wait, the loader thread of a hot reload and the swap, the frame counter,
 * the result the frames an interval skips carry, and the statistics.
 *
 * What only an element can do (push a buffer downstream, take the sink
 * pad's stream lock, post a message, read or change its properties) the
 * runner asks of it through GstHybridRunnerCallbacks: the runner never
 * sees the element's instance.
 *
 * Threads and locks (docs/ARCHITECTURE.md, "The element"): new() and
 * free() run where the element starts and stops, idle() and
 * set_flushing() where its state changes or a flush event arrives,
 * request_swap() and read_stats() on any thread, the rest on the
 * streaming thread; the flush thread and the loader thread are the
 * runner's own.  Lock order: the sink pad's stream lock, model_lock, the
 * element's object lock, then the runner's reload lock; the statistics'
 * and the flush thread's locks are taken last, with nothing taken inside
 * them.
 */
#ifndef GST_HYBRID_RUNNER_H
#define GST_HYBRID_RUNNER_H

#include <gst/video/video.h>

#include "frame-settings.h"
#include "infer-config.h"

G_BEGIN_DECLS

/* What the element asks of the runner, each called with `owner`.  The
 * runner posts every message of its own (errors, warnings, the
 * "hybridinfer" result) through `post`, as gst_element_message_full takes
 * them (text and debug taken; NULL text: the code's default).  The
 * loader thread holds a reference on `owner` while it runs. */
typedef struct
{
  GstObject *owner;
  /* the streaming thread's push downstream (a drain, the flush thread) */
  GstFlowReturn (*push) (GstObject * owner, GstBuffer * buf);
  /* the sink pad's stream lock, taken by the flush thread as a chain
   * call holds it */
  void (*lock_stream) (GstObject * owner);
  void (*unlock_stream) (GstObject * owner);
  void (*post) (GstObject * owner, GstMessageType type, GQuark domain,
      gint code, gchar * text, gchar * debug, const gchar * file,
      const gchar * function, gint line);
  void (*post_message) (GstObject * owner, GstMessage * message);
  /* a frame's settings, when the runner runs frames on its own (a drain,
   * the flush thread, a swap): gst_hybrid_infer_take_frame_settings */
  void (*take_settings) (GstObject * owner, GstHybridFrameSettings * fs);
  /* the properties as they are now, for the loader */
  void (*snapshot_settings) (GstObject * owner,
      GstHybridInferSettings * copy);
  /* mode=imperative found no room: the mode property goes back to
   * hybrid (infer-runner-frame.c says why; docs/ELEMENT.md) */
  void (*mode_refused) (GstObject * owner);
  /* a dump failed (error), or dump-frames does not parse (error NULL) */
  void (*dump_failed) (GstObject * owner, const GError * error,
      guint64 frame);
  /* a reload took over: the properties say the model that runs, notify
   * and post "hybridinfer-model-reloaded".  Loader thread, no lock held. */
  void (*model_swapped) (GstObject * owner, const gchar * model,
      const gchar * params, const gchar * labels, guint set_mask);
} GstHybridRunnerCallbacks;

/* What the element's read-only properties show. */
typedef struct
{
  guint64 frames_inferred;
  guint64 frames_skipped;       /* skip-when-busy: the engine was busy */
  gdouble total_latency_us;
  gdouble last_latency_us;
  gint64 arena_bytes;
} GstHybridRunnerStats;

typedef struct _GstHybridRunner GstHybridRunner;

/* Builds what the frames run on from `settings` (the properties at
 * start; the sidecar fills what they leave unset).  NULL when it cannot,
 * the error posted.  *note (free it): a fallback "auto" took. */
GstHybridRunner *gst_hybrid_runner_new (const GstHybridInferSettings *
    settings, const GstHybridRunnerCallbacks * callbacks, char **note);
/* Stops and joins the runner's threads (the loader is let go when this
 * runs on it), drops the frames held, frees the model; *final_stats:
 * what it counted, all threads done. */
void gst_hybrid_runner_free (GstHybridRunner * runner,
    GstHybridRunnerStats * final_stats);

/* The device the frames run on, and whether that is an engine
 * (shared-engine, skip-when-busy): the model and mode then stay. */
hy_device gst_hybrid_runner_device (const GstHybridRunner * runner);
gboolean gst_hybrid_runner_on_engine (const GstHybridRunner * runner);

/* Caps: caps whose error was already posted (GStreamer sends sticky caps
 * again with the next buffer, and one failure is one error); the frames
 * of new caps (FALSE: refused, the error posted); caps that cannot be
 * used at all. */
gboolean gst_hybrid_runner_caps_refused (GstHybridRunner * runner,
    GstCaps * caps);
gboolean gst_hybrid_runner_set_frame_format (GstHybridRunner * runner,
    GstCaps * caps, const GstVideoInfo * info,
    const GstHybridFrameFormat * format);
void gst_hybrid_runner_refuse_caps (GstHybridRunner * runner,
    GstCaps * caps);

/* Whether frames wait in the runner for a batch (its own model at
 * batch-size > 1 on whole frames): they then go to submit_held, and
 * leave through next_ready and drains; otherwise to submit. */
gboolean gst_hybrid_runner_holds_frames (const GstHybridRunner * runner);
/* A frame in place: its result attached now (or the last one carried). */
GstFlowReturn gst_hybrid_runner_submit (GstHybridRunner * runner,
    const GstHybridFrameSettings * fs, GstBuffer * buf);
/* A frame (taken) held for its batch. */
GstFlowReturn gst_hybrid_runner_submit_held (GstHybridRunner * runner,
    const GstHybridFrameSettings * fs, GstBuffer * buf);
/* The oldest held frame whose batch has run, or NULL. */
GstBuffer *gst_hybrid_runner_next_ready (GstHybridRunner * runner);

/* A serialized event or EOS: held frames run and are pushed first (and
 * on EOS an engine stops waiting for this stream).  Stream lock held. */
GstFlowReturn gst_hybrid_runner_drain (GstHybridRunner * runner,
    gboolean eos);
/* Flushing starts (a thread waiting in an engine returns) or stops (the
 * frames held are dropped). */
void gst_hybrid_runner_set_flushing (GstHybridRunner * runner,
    gboolean flushing);
/* The stream stops counting toward an engine's full batches (paused). */
void gst_hybrid_runner_idle (GstHybridRunner * runner);

/* model, params or labels set while running: the loader loads the newest
 * values and swaps the new model in between two frames (a request made
 * while one loads supersedes it).  Element's object lock held. */
typedef enum
{
  GST_HYBRID_SWAP_MODEL,
  GST_HYBRID_SWAP_PARAMS,
  GST_HYBRID_SWAP_LABELS,
} GstHybridSwapField;

void gst_hybrid_runner_request_swap (GstHybridRunner * runner,
    GstHybridSwapField field, const gchar * value);

void gst_hybrid_runner_read_stats (GstHybridRunner * runner,
    GstHybridRunnerStats * stats);

G_END_DECLS
#endif /* GST_HYBRID_RUNNER_H */
