/*
 * infer-batch.c — frames waiting for their batch (infer-batch.h).
 */
#include <gst/base/gstqueuearray.h>

#include "infer-batch.h"

struct _GstHybridBatch {
  guint size;
  GstQueueArray *pending;       /* GstHybridPendingFrame, in order */
  GstQueueArray *ready;         /* GstBuffer *, results attached */
  gint filled;                  /* batch slots holding a frame */
};

GstHybridBatch *
gst_hybrid_batch_new (guint size)
{
  GstHybridBatch *b = g_new0 (GstHybridBatch, 1);
  b->size = size;
  b->pending = gst_queue_array_new_for_struct (sizeof (GstHybridPendingFrame),
      2 * size);
  b->ready = gst_queue_array_new (2 * size);
  return b;
}

void
gst_hybrid_batch_drop (GstHybridBatch * b)
{
  while (!gst_queue_array_is_empty (b->pending)) {
    GstHybridPendingFrame *p = gst_queue_array_pop_head_struct (b->pending);
    gst_buffer_unref (p->buffer);
  }
  while (!gst_queue_array_is_empty (b->ready))
    gst_buffer_unref (gst_queue_array_pop_head (b->ready));
  b->filled = 0;
}

void
gst_hybrid_batch_free (GstHybridBatch * b)
{
  if (!b)
    return;
  gst_hybrid_batch_drop (b);
  gst_queue_array_free (b->pending);
  gst_queue_array_free (b->ready);
  g_free (b);
}

gint
gst_hybrid_batch_next_slot (const GstHybridBatch * b)
{
  return b->filled;
}

void
gst_hybrid_batch_add (GstHybridBatch * b, const GstHybridPendingFrame * p)
{
  if (p->slot >= 0)
    b->filled++;
  gst_queue_array_push_tail_struct (b->pending, (gpointer) p);
}

gboolean
gst_hybrid_batch_is_full (const GstHybridBatch * b)
{
  return b->filled == (gint) b->size;
}

gboolean
gst_hybrid_batch_inferred_range (const GstHybridBatch * b, guint64 * first,
    guint64 * last)
{
  guint n = gst_queue_array_get_length (b->pending);
  if (b->filled == 0)
    return FALSE;
  *first = G_MAXUINT64;
  *last = 0;
  for (guint i = 0; i < n; i++) {
    GstHybridPendingFrame *p = gst_queue_array_peek_nth_struct (b->pending,
        i);
    if (p->slot >= 0) {
      *first = MIN (*first, p->frame_number);
      *last = MAX (*last, p->frame_number);
    }
  }
  return TRUE;
}

gboolean
gst_hybrid_batch_pop_pending (GstHybridBatch * b, GstHybridPendingFrame * p)
{
  if (gst_queue_array_is_empty (b->pending)) {
    b->filled = 0;
    return FALSE;
  }
  *p = *(GstHybridPendingFrame *) gst_queue_array_pop_head_struct (b->pending);
  return TRUE;
}

void
gst_hybrid_batch_push_ready (GstHybridBatch * b, GstBuffer * buf)
{
  gst_queue_array_push_tail (b->ready, buf);
}

GstBuffer *
gst_hybrid_batch_pop_ready (GstHybridBatch * b)
{
  return gst_queue_array_is_empty (b->ready) ? NULL
      : gst_queue_array_pop_head (b->ready);
}

gboolean
gst_hybrid_batch_has_ready (const GstHybridBatch * b)
{
  return !gst_queue_array_is_empty (b->ready);
}

gboolean
gst_hybrid_batch_has_pending (const GstHybridBatch * b)
{
  return !gst_queue_array_is_empty (b->pending);
}

guint
gst_hybrid_batch_n_pending (const GstHybridBatch * b)
{
  return gst_queue_array_get_length (b->pending);
}
