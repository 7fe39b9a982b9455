/*
 * gsthybridinfer-batching.c — batch-size > 1 on the element's own model:
 * frames held until their batch is full (or upstream's pool would run
 * dry, or batch-timeout passes, or an event drains them), then run
 * together and sent on in order.  The frames themselves wait in
 * infer-batch.c.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsthybridinfer-private.h"

static void
drop_pending_locked (GstHybridInfer * self)
{
  if (self->batch)
    gst_hybrid_batch_drop (self->batch);
}

void
gst_hybrid_infer_drop_pending (GstHybridInfer * self)
{
  g_mutex_lock (&self->model_lock);
  drop_pending_locked (self);
  g_mutex_unlock (&self->model_lock);
}

/* Runs the batch (full, or partial when draining) and moves every pending
 * frame, results attached, to the ready queue. */
static gboolean
complete_batch (GstHybridInfer * self, const GstHybridFrameSettings * fs)
{
  GstHybridPendingFrame p;
  guint64 first, last;
  if (gst_hybrid_batch_inferred_range (self->batch, &first, &last)
      && !gst_hybrid_infer_run_forward (self, fs, first, last))
    return FALSE;
  while (gst_hybrid_batch_pop_pending (self->batch, &p)) {
    if (p.slot >= 0)
      gst_hybrid_infer_finish_frame (self, fs, p.buffer, p.frame_number,
          p.slot, p.start_us);
    else
      gst_hybrid_infer_carry_last (self, p.buffer);
    gst_hybrid_batch_push_ready (self->batch, p.buffer);
  }
  return TRUE;
}

/* TRUE when the frames held came from a bounded pool that holding one
 * more would leave without a buffer for upstream's next frame and for the
 * one a sink keeps: the batch runs partial now rather than wait for a
 * frame that cannot come (a 3-buffer pool stalled batch-size=4 after 3
 * frames).  The pool's size is read once per pool, not per frame. */
static gboolean
pool_exhausted (GstHybridInfer * self, GstBuffer * buf)
{
  GstBufferPool *pool = buf->pool;
  if (!pool)
    return FALSE;
  if (pool != self->known_pool) {
    GstStructure *config = gst_buffer_pool_get_config (pool);
    guint max = 0;
    gst_buffer_pool_config_get_params (config, NULL, NULL, NULL, &max);
    gst_structure_free (config);
    self->known_pool = pool;
    self->known_pool_max = max;
    GST_DEBUG_OBJECT (self, "frames come from %" GST_PTR_FORMAT " of at "
        "most %u buffers", pool, max);
  }
  return self->known_pool_max != 0
      && gst_hybrid_batch_n_pending (self->batch) + 1 >= self->known_pool_max;
}

/* Arms the timed flush when frames are held and none was armed, from the
 * oldest held frame (batch-timeout `timeout_ms`, 0: none); disarms it
 * when none is held.  Streaming thread. */
void
gst_hybrid_infer_update_flush_deadline (GstHybridInfer * self,
    guint timeout_ms)
{
  gboolean held = gst_hybrid_batch_has_pending (self->batch);
  g_mutex_lock (&self->flush_lock);
  if (!held || !timeout_ms)
    self->flush_deadline = 0;
  else if (!self->flush_deadline) {
    self->flush_deadline = g_get_monotonic_time ()
        + (gint64) timeout_ms * G_TIME_SPAN_MILLISECOND;
    g_cond_signal (&self->flush_cond);
  }
  g_mutex_unlock (&self->flush_lock);
}

static GstFlowReturn
queue_frame (GstHybridInfer * self, const GstHybridFrameSettings * fs,
    GstBuffer * buf)
{
  GstHybridPendingFrame p = {
    .buffer = gst_buffer_make_writable (buf),
    .frame_number = self->frame_count++,
    .slot = -1,
    .start_us = g_get_monotonic_time (),
  };
  if (gst_hybrid_frame_settings_wants (fs, p.frame_number)) {
    p.slot = gst_hybrid_batch_next_slot (self->batch);
    if (!gst_hybrid_infer_load_frame (self, p.buffer, p.slot)) {
      gst_buffer_unref (p.buffer);
      return GST_FLOW_ERROR;
    }
  }
  gst_hybrid_batch_add (self->batch, &p);
  if ((gst_hybrid_batch_is_full (self->batch)
          || pool_exhausted (self, p.buffer)) && !complete_batch (self, fs))
    return GST_FLOW_ERROR;
  gst_hybrid_infer_update_flush_deadline (self, fs->batch_timeout_ms);
  return GST_FLOW_OK;
}

/* generate_output at batch-size > 1: the queued frame waits for its
 * batch; *outbuf is the oldest frame whose batch has run, or NULL. */
GstFlowReturn
gst_hybrid_infer_generate_batched (GstHybridInfer * self, GstBuffer ** outbuf)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);

  *outbuf = NULL;
  /* a timed flush's push failed: upstream hears it with this frame */
  if (self->flush_ret != GST_FLOW_OK) {
    GstFlowReturn ret = self->flush_ret;
    self->flush_ret = GST_FLOW_OK;
    return ret;
  }
  GstFlowReturn ret = GST_FLOW_OK;
  g_mutex_lock (&self->model_lock);
  if (trans->queued_buf) {
    GstBuffer *buf = trans->queued_buf;
    GstHybridFrameSettings fs;
    trans->queued_buf = NULL;
    gst_hybrid_infer_take_frame_settings (self, &fs);
    ret = queue_frame (self, &fs, buf);
    gst_hybrid_infer_frame_settings_clear (&fs);
  }
  if (ret == GST_FLOW_OK)
    *outbuf = gst_hybrid_batch_pop_ready (self->batch);
  g_mutex_unlock (&self->model_lock);
  return ret;
}

/* Runs a partial batch and pushes what waited, so that a serialized event
 * (caps, segment, EOS…) stays behind the frames that came before it; also
 * what a reload ran before it took over (gst_hybrid_infer_run_held).
 * Stream lock held; model_lock is taken here, and let go for each push:
 * a sink prerolling on one must not keep a reload waiting. */
GstFlowReturn
gst_hybrid_infer_drain (GstHybridInfer * self)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  GstBuffer *buf;
  GstFlowReturn ret = GST_FLOW_OK;
  GstHybridFrameSettings fs;
  if (!self->batch)
    return GST_FLOW_OK;
  g_mutex_lock (&self->model_lock);
  gst_hybrid_infer_take_frame_settings (self, &fs);
  if (gst_hybrid_batch_has_pending (self->batch)
      && !complete_batch (self, &fs)) {
    drop_pending_locked (self);
    ret = GST_FLOW_ERROR;
    goto done;
  }
  while ((buf = gst_hybrid_batch_pop_ready (self->batch))) {
    g_mutex_unlock (&self->model_lock);
    ret = gst_pad_push (trans->srcpad, buf);
    g_mutex_lock (&self->model_lock);
    if (ret != GST_FLOW_OK) {
      GST_DEBUG_OBJECT (self, "drain push: %s", gst_flow_get_name (ret));
      drop_pending_locked (self);
      break;
    }
  }
done:
  gst_hybrid_infer_update_flush_deadline (self, fs.batch_timeout_ms);
  g_mutex_unlock (&self->model_lock);
  gst_hybrid_infer_frame_settings_clear (&fs);
  return ret;
}

/* A reload about to take over: the frames held for a batch run now, on
 * the model they were converted for, and wait in the ready queue.  TRUE
 * when some do: gst_hybrid_infer_flush_now sends them on.  model_lock
 * held. */
gboolean
gst_hybrid_infer_run_held (GstHybridInfer * self)
{
  GstHybridFrameSettings fs;
  if (!self->batch || !gst_hybrid_batch_has_pending (self->batch))
    return FALSE;
  gst_hybrid_infer_take_frame_settings (self, &fs);
  if (!complete_batch (self, &fs))
    drop_pending_locked (self);       /* the forward posted its error */
  gst_hybrid_infer_frame_settings_clear (&fs);
  return gst_hybrid_batch_has_ready (self->batch);
}

/* The flush thread pushes what is ready as soon as it has the stream
 * lock, whatever batch-timeout says: the loader cannot push itself (a
 * push from outside the streaming thread would overtake frames and
 * events), and with batch-timeout=0 no timer would. */
void
gst_hybrid_infer_flush_now (GstHybridInfer * self)
{
  g_mutex_lock (&self->flush_lock);
  self->flush_deadline = g_get_monotonic_time ();
  g_cond_signal (&self->flush_cond);
  g_mutex_unlock (&self->flush_lock);
}

/* Runs a partial batch whose oldest frame waited batch-timeout.  It takes
 * the sink pad's stream lock, as a chain call holds it: the batch, the
 * session and the source pad are used by one thread at a time. */
gpointer
gst_hybrid_infer_flush_thread_func (gpointer data)
{
  GstHybridInfer *self = data;
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  g_mutex_lock (&self->flush_lock);
  while (!self->flush_quit) {
    gint64 deadline = self->flush_deadline;
    if (!deadline) {
      g_cond_wait (&self->flush_cond, &self->flush_lock);
      continue;
    }
    if (g_get_monotonic_time () < deadline) {
      g_cond_wait_until (&self->flush_cond, &self->flush_lock, deadline);
      continue;
    }
    g_mutex_unlock (&self->flush_lock);
    GST_PAD_STREAM_LOCK (trans->sinkpad);
    g_mutex_lock (&self->flush_lock);
    /* a chain call may have run the batch, or held new frames, since */
    gboolean due = !self->flush_quit && self->flush_deadline != 0
        && g_get_monotonic_time () >= self->flush_deadline;
    g_mutex_unlock (&self->flush_lock);
    if (due) {
      GST_DEBUG_OBJECT (self, "partial batch of %u frames waited "
          "batch-timeout: running it",
          gst_hybrid_batch_n_pending (self->batch));
      GstFlowReturn ret = gst_hybrid_infer_drain (self);
      if (ret != GST_FLOW_OK && ret != GST_FLOW_FLUSHING)
        self->flush_ret = ret;
    }
    GST_PAD_STREAM_UNLOCK (trans->sinkpad);
    g_mutex_lock (&self->flush_lock);
  }
  g_mutex_unlock (&self->flush_lock);
  return NULL;
}
