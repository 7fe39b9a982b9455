/*
 * infer-batch.h — frames held until their batch is full (batch-size > 1):
 * each frame waits in order, with the batch slot it was loaded into (or
 * none, when interval skips it), and leaves once its batch has run.  The
 * queues are sized at start for two batches and allocate nothing while
 * they stay within that.
 */
#ifndef GST_HYBRID_INFER_BATCH_H
#define GST_HYBRID_INFER_BATCH_H

#include <gst/gst.h>

G_BEGIN_DECLS

/* A frame waiting for its batch. */
typedef struct {
  GstBuffer *buffer;
  guint64 frame_number;
  gint slot;                    /* -1: not inferred (interval) */
  gint64 start_us;
} GstHybridPendingFrame;

typedef struct _GstHybridBatch GstHybridBatch;

GstHybridBatch *gst_hybrid_batch_new (guint size);
/* Unrefs every buffer still held. */
void gst_hybrid_batch_free (GstHybridBatch * batch);

/* The slot the next inferred frame goes to; gst_hybrid_batch_add takes
 * it. */
gint gst_hybrid_batch_next_slot (const GstHybridBatch * batch);
/* Queues a frame (taking its buffer); `slot` from next_slot, or -1. */
void gst_hybrid_batch_add (GstHybridBatch * batch,
    const GstHybridPendingFrame * frame);
/* Every slot holds a frame: time to run the batch. */
gboolean gst_hybrid_batch_is_full (const GstHybridBatch * batch);
/* The first and last frame numbers of the frames in slots; FALSE when no
 * slot holds one (nothing to run). */
gboolean gst_hybrid_batch_inferred_range (const GstHybridBatch * batch,
    guint64 * first, guint64 * last);

/* After the batch ran: the waiting frames in order, one by one (FALSE
 * when none is left, and the slots are free again); each goes to the
 * ready queue, results attached, with gst_hybrid_batch_push_ready. */
gboolean gst_hybrid_batch_pop_pending (GstHybridBatch * batch,
    GstHybridPendingFrame * frame);
void gst_hybrid_batch_push_ready (GstHybridBatch * batch, GstBuffer * buf);
/* The next frame to send on, or NULL. */
GstBuffer *gst_hybrid_batch_pop_ready (GstHybridBatch * batch);
gboolean gst_hybrid_batch_has_ready (const GstHybridBatch * batch);
gboolean gst_hybrid_batch_has_pending (const GstHybridBatch * batch);
/* Frames waiting for their batch (inferred or not): buffers held. */
guint gst_hybrid_batch_n_pending (const GstHybridBatch * batch);

/* Drops every frame held, pending or ready (a flush, an error). */
void gst_hybrid_batch_drop (GstHybridBatch * batch);

G_END_DECLS
#endif /* GST_HYBRID_INFER_BATCH_H */
