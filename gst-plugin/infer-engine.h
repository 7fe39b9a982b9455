/*
 * infer-engine.h — a session run on its own thread, for one element or
 * for many.
 *
 * Two features need the forward off the streaming thread:
 *
 * - skip-when-busy: a live stream's frames flow on while the model works
 *   on an earlier one; a frame that finds the engine busy is not inferred
 *   (frames-skipped) and carries the newest result;
 * - shared-engine=NAME: every element in the process naming the same
 *   engine uses one loaded model (one copy of the weights) and one
 *   scheduler, which gathers frames from all of them into batches of
 *   batch-size and routes each result back to the element it came from.
 *
 * An element joins an engine as a client.  A client brings its own
 * pre-processing and frame plan (its caps), converts its frames into a
 * slot of the engine's input on its own thread, and has at most one frame
 * in the engine at a time.  The engine runs a batch as soon as every slot
 * is taken, or every client whose stream flows has a frame in it, or the
 * oldest frame in it has waited batch-timeout; it decodes every result on its thread (the
 * outputs are then free for the next batch) and hands each client its
 * own.  The steady state allocates nothing but what the session's result
 * pool does (nothing once it has enough blocks).
 *
 * A stream flows while its frames keep coming: a client counts toward a
 * full batch from a frame it hands over until its request's quiet_us after
 * that frame (or its result) with nothing queued.  A stream that stopped
 * without saying so — a prerolled sink blocking its thread, a camera that
 * hangs — then stops holding the others' batches back, and counts again
 * with its next frame.  A client set flushing counts for nothing and its
 * waits end at once: state changes and flushes never wait for a batch.
 */
#ifndef GST_HYBRID_INFER_ENGINE_H
#define GST_HYBRID_INFER_ENGINE_H

#include <gst/gst.h>

#include "infer-session.h"

G_BEGIN_DECLS

typedef struct _GstHybridEngineClient GstHybridEngineClient;

/* A frame's request: what its result describes and how it is read, and
 * how long a partial batch may wait for it. */
typedef struct {
  GstHybridResultFrame frame;   /* the latency is filled in */
  guint top_k;
  gfloat threshold;
  /* by value: a frame handed over (skip-when-busy) is decoded after the
   * element has gone on, perhaps to other class thresholds */
  hyg_class_thresholds class_thresholds;
  guint timeout_ms;             /* batch-timeout; 0: until full */
  /* How long after this frame (or its result) the stream still counts
   * as flowing with nothing queued: a partial batch waits that long for
   * its next frame, no longer.  Its frame interval with a margin. */
  gint64 quiet_us;
  /* The plan the frame is converted and its result read with: a crop's
   * (inference-region=roi: its size, the client's pre-processing), kept
   * alive by the caller until the result is back.  NULL: the client's
   * plan for its caps. */
  const hy_frame_plan *plan;
} GstHybridEngineRequest;

/* Joins engine `name` (NULL: a private engine of this client alone),
 * making it from `config` when no element uses it yet; an engine that
 * exists must have been made for the same model, params, labels, device,
 * precision, input and batch size, or the join fails naming the
 * difference.  Compared as resolved: files by identity (another path to
 * the same file is the same file), the input size as the model's default
 * gives it when unset.  `prep` is this client's pre-processing.
 * *device_note: as gst_hybrid_session_new gives it (only to the client
 * that made the engine). */
GstHybridEngineClient *gst_hybrid_engine_join (const char *name,
    const GstHybridSessionConfig * config, const GstHybridPrep * prep,
    char **device_note, GError ** error);
/* Waits for the client's frame in flight, if any, then leaves; the last
 * client stops the engine and frees its session. */
void gst_hybrid_engine_leave (GstHybridEngineClient * client);

/* The client's stream has stopped flowing (EOS, pausing): partial
 * batches no longer wait for its frames.  Its next frame makes it active
 * again. */
void gst_hybrid_engine_client_idle (GstHybridEngineClient * client);

/* Flushing (a flush, or the element going down): partial batches do not
 * wait for the client's frames, a batch holding its frame runs now, and
 * its thread's waits in gst_hybrid_engine_client_infer end with
 * GST_FLOW_FLUSHING.  Until it is set back to FALSE. */
void gst_hybrid_engine_client_set_flushing (GstHybridEngineClient * client,
    gboolean flushing);

/* The client's frame format (its caps): makes its frame plan. */
gboolean gst_hybrid_engine_client_set_frame (GstHybridEngineClient * client,
    hy_pixel_layout layout, int width, int height, float yuv_kr,
    float yuv_kb, bool yuv_full_range, GError ** error);
gboolean gst_hybrid_engine_client_has_frame (const GstHybridEngineClient *
    client);

/* Runs a frame through the engine and waits for its result (*result: a
 * reference, the caller owns it).  GST_FLOW_ERROR + error when the
 * forward failed; GST_FLOW_FLUSHING, without a result, when the client is
 * flushing or is set flushing while it waits (a frame already in a batch
 * runs with it, its result dropped by the client's next frame). */
GstFlowReturn gst_hybrid_engine_client_infer (GstHybridEngineClient *
    client, const uint8_t * const planes[3], const int strides[3],
    const GstHybridEngineRequest * request, GstHybridResult ** result,
    GError ** error);

/* Waits until a frame a flush left in a batch (infer returned
 * GST_FLOW_FLUSHING) has run, so that what its request points to (a
 * crop's plan) may go; FALSE while the client is flushing (it may still
 * be in flight).  TRUE at once with nothing in flight. */
gboolean gst_hybrid_engine_client_settle (GstHybridEngineClient * client);
/* Hands a frame to the engine without waiting; FALSE when the engine is
 * busy (this client's previous frame is still in it, or a batch is
 * running), and the frame is not taken. */
gboolean gst_hybrid_engine_client_try_submit (GstHybridEngineClient *
    client, const uint8_t * const planes[3], const int strides[3],
    const GstHybridEngineRequest * request);
/* The result of the frame try_submit handed over, once it is ready (a
 * reference: the caller owns it); NULL when none is ready.  NULL + error
 * when its forward failed. */
GstHybridResult *gst_hybrid_engine_client_take_result (GstHybridEngineClient
    * client, GError ** error);

/* The client's pre-processing: crops' plans (inference-region=roi) are
 * made with it for the engine's session. */
const GstHybridPrep *gst_hybrid_engine_client_prep (const
    GstHybridEngineClient * client);
/* The engine's session, for what does not change while it runs: its
 * device, batch and arena.  Read it only between joining and leaving. */
const GstHybridSession *gst_hybrid_engine_client_session (const
    GstHybridEngineClient * client);

/* Engines alive in this process (for tests). */
guint gst_hybrid_engine_count (void);

G_END_DECLS
#endif /* GST_HYBRID_INFER_ENGINE_H */
