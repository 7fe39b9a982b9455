/*
 * infer-runner-batch.c — batch-size > 1 on the runner's own model: frames
 * held until their batch is full (or upstream's pool would run dry, or
 * batch-timeout passes, or an event drains them), then run together and
 * sent on in order.  The frames themselves wait in infer-batch.c; the
 * flush thread bounds their wait.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "infer-runner-private.h"

static gpointer flush_thread_func (gpointer data);

/* new(): frames are held on the own model on whole frames (an engine
 * batches for its elements, regions are batched within their frame); the
 * flush thread runs at batch-size > 1. */
void
gst_hybrid_runner_batch_start (GstHybridRunner * r, guint batch)
{
  r->flush_ret = GST_FLOW_OK;
  r->flush_deadline = 0;
  r->flush_quit = FALSE;
  if (!r->session || r->roi)
    return;
  r->batch = gst_hybrid_batch_new (batch);
  if (batch > 1)
    r->flush_thread = g_thread_new ("hybridinfer-flush", flush_thread_func,
        r);
}

/* free(): streaming has stopped (the element's pads are inactive), so a
 * timed flush waiting for the stream lock gets it, sees quit and does
 * nothing. */
void
gst_hybrid_runner_batch_stop (GstHybridRunner * r)
{
  if (r->flush_thread) {
    g_mutex_lock (&r->flush_lock);
    r->flush_quit = TRUE;
    g_cond_signal (&r->flush_cond);
    g_mutex_unlock (&r->flush_lock);
    g_thread_join (r->flush_thread);
    r->flush_thread = NULL;
  }
  g_clear_pointer (&r->batch, gst_hybrid_batch_free);
}

static void
drop_pending_locked (GstHybridRunner * r)
{
  if (r->batch)
    gst_hybrid_batch_drop (r->batch);
}

/* Arms the timed flush when frames are held and none was armed, from the
 * oldest held frame (batch-timeout `timeout_ms`, 0: none); disarms it
 * when none is held.  Stream lock held. */
static void
update_flush_deadline (GstHybridRunner * r, guint timeout_ms)
{
  gboolean held = gst_hybrid_batch_has_pending (r->batch);
  g_mutex_lock (&r->flush_lock);
  if (!held || !timeout_ms)
    r->flush_deadline = 0;
  else if (!r->flush_deadline) {
    r->flush_deadline = g_get_monotonic_time ()
        + (gint64) timeout_ms * G_TIME_SPAN_MILLISECOND;
    g_cond_signal (&r->flush_cond);
  }
  g_mutex_unlock (&r->flush_lock);
}

/* A flush stopped: the frames held are dropped, the timed flush disarmed
 * and its failure forgotten.  Stream lock held. */
void
gst_hybrid_runner_drop_held (GstHybridRunner * r)
{
  g_mutex_lock (&r->model_lock);
  drop_pending_locked (r);
  g_mutex_unlock (&r->model_lock);
  r->flush_ret = GST_FLOW_OK;
  if (r->batch)                 /* nothing held now: disarmed */
    update_flush_deadline (r, 0);
}

/* Runs the batch (full, or partial when draining) and moves every pending
 * frame, results attached, to the ready queue.  model_lock held. */
static gboolean
complete_batch (GstHybridRunner * r, const GstHybridFrameSettings * fs)
{
  GstHybridPendingFrame p;
  guint64 first, last;
  if (gst_hybrid_batch_inferred_range (r->batch, &first, &last)
      && !gst_hybrid_runner_run_forward (r, fs, first, last))
    return FALSE;
  while (gst_hybrid_batch_pop_pending (r->batch, &p)) {
    if (p.slot >= 0)
      gst_hybrid_runner_finish_frame (r, fs, p.buffer, p.frame_number,
          p.slot, p.start_us);
    else
      gst_hybrid_runner_carry_last (r, p.buffer);
    gst_hybrid_batch_push_ready (r->batch, p.buffer);
  }
  return TRUE;
}

/* TRUE when the frames held came from a bounded pool that holding one
 * more would leave without a buffer for upstream's next frame and for the
 * one a sink keeps: the batch runs partial now rather than wait for a
 * frame that cannot come (a 3-buffer pool stalled batch-size=4 after 3
 * frames).  The pool's size is read once per pool, not per frame. */
static gboolean
pool_exhausted (GstHybridRunner * r, GstBuffer * buf)
{
  GstBufferPool *pool = buf->pool;
  if (!pool)
    return FALSE;
  if (pool != r->known_pool) {
    GstStructure *config = gst_buffer_pool_get_config (pool);
    guint max = 0;
    gst_buffer_pool_config_get_params (config, NULL, NULL, NULL, &max);
    gst_structure_free (config);
    r->known_pool = pool;
    r->known_pool_max = max;
    GST_DEBUG_OBJECT (r->cb.owner, "frames come from %" GST_PTR_FORMAT
        " of at most %u buffers", pool, max);
  }
  return r->known_pool_max != 0
      && gst_hybrid_batch_n_pending (r->batch) + 1 >= r->known_pool_max;
}

/* A frame (taken) held for its batch: converted into its slot when the
 * interval infers it; the batch runs when full.  model_lock held. */
GstFlowReturn
gst_hybrid_runner_queue (GstHybridRunner * r,
    const GstHybridFrameSettings * fs, GstBuffer * buf)
{
  GstHybridPendingFrame p = {
    .buffer = gst_buffer_make_writable (buf),
    .frame_number = r->frame_count++,
    .slot = -1,
    .start_us = g_get_monotonic_time (),
  };
  if (gst_hybrid_frame_settings_wants (fs, p.frame_number)) {
    p.slot = gst_hybrid_batch_next_slot (r->batch);
    if (!gst_hybrid_runner_load_frame (r, p.buffer, p.slot, fs->mode)) {
      gst_buffer_unref (p.buffer);
      return GST_FLOW_ERROR;
    }
  }
  gst_hybrid_batch_add (r->batch, &p);
  if ((gst_hybrid_batch_is_full (r->batch)
          || pool_exhausted (r, p.buffer)) && !complete_batch (r, fs))
    return GST_FLOW_ERROR;
  update_flush_deadline (r, fs->batch_timeout_ms);
  return GST_FLOW_OK;
}

/* Pushes what is ready, model_lock let go for each push: a sink
 * prerolling on one must not keep a reload waiting.  model_lock held. */
static GstFlowReturn
push_ready (GstHybridRunner * r)
{
  GstBuffer *buf;
  GstFlowReturn ret = GST_FLOW_OK;
  while ((buf = gst_hybrid_batch_pop_ready (r->batch))) {
    g_mutex_unlock (&r->model_lock);
    ret = r->cb.push (r->cb.owner, buf);
    g_mutex_lock (&r->model_lock);
    if (ret != GST_FLOW_OK) {
      GST_DEBUG_OBJECT (r->cb.owner, "drain push: %s",
          gst_flow_get_name (ret));
      drop_pending_locked (r);
      break;
    }
  }
  return ret;
}

/* Runs a partial batch and pushes what waited, so that a serialized event
 * (caps, segment, EOS…) stays behind the frames that came before it; also
 * what a reload ran before it took over (gst_hybrid_runner_run_held).
 * Stream lock held; model_lock is taken here. */
GstFlowReturn
gst_hybrid_runner_drain_held (GstHybridRunner * r)
{
  GstFlowReturn ret = GST_FLOW_OK;
  GstHybridFrameSettings fs, view;
  if (!r->batch)
    return GST_FLOW_OK;
  r->cb.take_settings (r->cb.owner, &fs);
  g_mutex_lock (&r->model_lock);
  gst_hybrid_runner_resolve_settings (r, &fs, &view);
  if (gst_hybrid_batch_has_pending (r->batch) && !complete_batch (r, &view)) {
    drop_pending_locked (r);
    ret = GST_FLOW_ERROR;
  } else {
    ret = push_ready (r);
  }
  update_flush_deadline (r, fs.batch_timeout_ms);
  g_mutex_unlock (&r->model_lock);
  gst_hybrid_frame_settings_clear (&fs);
  return ret;
}

/* A reload about to take over: the frames held for a batch run now, on
 * the model they were converted for, and wait in the ready queue.  TRUE
 * when some do: gst_hybrid_runner_flush_now sends them on.  model_lock
 * held. */
gboolean
gst_hybrid_runner_run_held (GstHybridRunner * r)
{
  GstHybridFrameSettings fs, view;
  if (!r->batch || !gst_hybrid_batch_has_pending (r->batch))
    return FALSE;
  r->cb.take_settings (r->cb.owner, &fs);
  gst_hybrid_runner_resolve_settings (r, &fs, &view);
  if (!complete_batch (r, &view))
    drop_pending_locked (r);    /* the forward posted its error */
  gst_hybrid_frame_settings_clear (&fs);
  return gst_hybrid_batch_has_ready (r->batch);
}

/* The flush thread pushes what is ready as soon as it has the stream
 * lock, whatever batch-timeout says: the loader cannot push itself (a
 * push from outside the streaming thread would overtake frames and
 * events), and with batch-timeout=0 no timer would. */
void
gst_hybrid_runner_flush_now (GstHybridRunner * r)
{
  g_mutex_lock (&r->flush_lock);
  r->flush_deadline = g_get_monotonic_time ();
  g_cond_signal (&r->flush_cond);
  g_mutex_unlock (&r->flush_lock);
}

/* The deadline passed: with the stream lock, as a chain call holds it
 * (the batch, the session and the source pad are used by one thread at a
 * time), the partial batch runs unless a chain call ran it meanwhile. */
static void
flush_due (GstHybridRunner * r)
{
  r->cb.lock_stream (r->cb.owner);
  g_mutex_lock (&r->flush_lock);
  gboolean due = !r->flush_quit && r->flush_deadline != 0
      && g_get_monotonic_time () >= r->flush_deadline;
  g_mutex_unlock (&r->flush_lock);
  if (due) {
    GST_DEBUG_OBJECT (r->cb.owner, "partial batch of %u frames waited "
        "batch-timeout: running it", gst_hybrid_batch_n_pending (r->batch));
    GstFlowReturn ret = gst_hybrid_runner_drain_held (r);
    if (ret != GST_FLOW_OK && ret != GST_FLOW_FLUSHING)
      r->flush_ret = ret;
  }
  r->cb.unlock_stream (r->cb.owner);
}

/* Runs a partial batch whose oldest frame waited batch-timeout. */
static gpointer
flush_thread_func (gpointer data)
{
  GstHybridRunner *r = data;
  g_mutex_lock (&r->flush_lock);
  while (!r->flush_quit) {
    gint64 deadline = r->flush_deadline;
    if (!deadline) {
      g_cond_wait (&r->flush_cond, &r->flush_lock);
      continue;
    }
    if (g_get_monotonic_time () < deadline) {
      g_cond_wait_until (&r->flush_cond, &r->flush_lock, deadline);
      continue;
    }
    g_mutex_unlock (&r->flush_lock);
    flush_due (r);
    g_mutex_lock (&r->flush_lock);
  }
  g_mutex_unlock (&r->flush_lock);
  return NULL;
}
