/*
 * gsthybridinfer-frame.c — one frame on the element's own model: mapped,
 * converted into a batch slot, run forward, its result read back,
 * attached to the buffer as metas, posted and kept for the frames the
 * interval skips.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsthybridinfer-private.h"
#include "gsthybridmeta.h"

/* Maps buf's planes for reading (unmap `frame` after); FALSE, the error
 * posted, when it cannot be read. */
gboolean
gst_hybrid_infer_map_frame (GstHybridInfer * self, GstBuffer * buf,
    GstVideoFrame * frame, const uint8_t * planes[3], int strides[3])
{
  gboolean planned = self->client
      ? gst_hybrid_engine_client_has_frame (self->client)
      : gst_hybrid_session_has_frame (self->session);
  if (!planned) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("a buffer arrived before its caps"));
    return FALSE;
  }
  if (!gst_video_frame_map (frame, &self->info, buf, GST_MAP_READ)) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, (NULL),
        ("could not map frame %" G_GUINT64_FORMAT, self->frame_count));
    return FALSE;
  }
  for (guint i = 0; i < 3; i++) {
    gboolean plane = i < GST_VIDEO_FRAME_N_PLANES (frame);
    planes[i] = plane ? GST_VIDEO_FRAME_PLANE_DATA (frame, i) : NULL;
    strides[i] = plane ? GST_VIDEO_FRAME_PLANE_STRIDE (frame, i) : 0;
  }
  return TRUE;
}

gboolean
gst_hybrid_infer_load_frame (GstHybridInfer * self, GstBuffer * buf, gint slot)
{
  GstVideoFrame frame;
  const uint8_t *planes[3];
  int strides[3];
  if (!gst_hybrid_infer_map_frame (self, buf, &frame, planes, strides))
    return FALSE;
  gst_hybrid_session_load (self->session, slot, planes, strides);
  gst_video_frame_unmap (&frame);
  gst_hybrid_infer_report_session_note (self);
  return TRUE;
}

/* Imperative mode keeps every layer's output: far more memory than the
 * hybrid plan.  When a switch to it (from hybrid, while playing) finds no
 * room, the switch is refused: a warning, the mode property back to
 * hybrid, and the batch runs in hybrid mode.  An element started in
 * imperative mode has nothing to fall back to that it was asked for: its
 * failure stays an error. */
static gboolean
refuse_imperative (GstHybridInfer * self, hy_mode mode, GError ** error)
{
  if (mode != HY_MODE_IMPERATIVE || !self->ran_hybrid
      || !g_error_matches (*error, HY_ERROR, HY_ERROR_NO_MEMORY))
    return FALSE;
  GST_ELEMENT_WARNING (self, RESOURCE, NO_SPACE_LEFT,
      ("mode imperative refused, running on in hybrid mode: %s",
          (*error)->message),
      ("imperative mode keeps every layer's output; the hybrid plan "
          "needs %" G_GINT64_FORMAT " bytes of arena",
          self->arena_bytes));
  g_clear_error (error);
  GST_OBJECT_LOCK (self);
  if (self->settings.mode == HY_MODE_IMPERATIVE)
    self->settings.mode = HY_MODE_HYBRID;
  GST_OBJECT_UNLOCK (self);
  g_object_notify (G_OBJECT (self), "mode");
  return TRUE;
}

/* One forward; frames first..last are the ones in the batch. */
gboolean
gst_hybrid_infer_run_forward (GstHybridInfer * self,
    const GstHybridFrameSettings * fs, guint64 first, guint64 last)
{
  hy_mode mode = fs->mode;
  GError *error = NULL, *dump_error = NULL;

  gchar *dump_dir = gst_hybrid_infer_dump_dir_for (self, fs, mode, first,
      last);
  gboolean ok = gst_hybrid_session_forward (self->session, mode, dump_dir,
      &dump_error, &error);
  if (!ok && refuse_imperative (self, mode, &error)) {
    g_clear_pointer (&dump_dir, g_free);
    g_clear_error (&dump_error);
    mode = HY_MODE_HYBRID;
    ok = gst_hybrid_session_forward (self->session, mode, NULL, NULL, &error);
  }
  if (ok && mode == HY_MODE_HYBRID)
    self->ran_hybrid = TRUE;
  if (dump_error) {
    gst_hybrid_infer_report_dump_failure (self, dump_error, first);
    g_error_free (dump_error);
  } else if (dump_dir && ok) {
    GST_INFO_OBJECT (self, "dumped frame %" G_GUINT64_FORMAT " to %s", first,
        dump_dir);
  }
  g_free (dump_dir);
  if (!ok) {
    gchar *what = g_strdup_printf ("forward of frame %" G_GUINT64_FORMAT,
        first);
    post_error (self, error, what);
    g_free (what);
    g_error_free (error);
    return FALSE;
  }
  /* the arena changes with the mode only: the lock when it did */
  gint64 arena = gst_hybrid_session_arena_bytes (self->session);
  if (arena != self->arena_seen) {
    self->arena_seen = arena;
    GST_OBJECT_LOCK (self);
    self->arena_bytes = arena;
    GST_OBJECT_UNLOCK (self);
  }
  return TRUE;
}

/* Results travel as metas: the tensors, and a ROI per detection box.
 * Each meta is one allocation by GStreamer (gst_buffer_add_meta), and a
 * ROI's parameter structure two more (the structure, a list node). */
static void
attach_result (GstBuffer * buf, GstHybridResult * result, gboolean inferred)
{
  gst_buffer_add_hybrid_tensor_meta (buf, result, inferred);
  for (guint i = 0; i < result->n_detections; i++) {
    const GstHybridDetection *d = &result->detections[i];
    /* Round the corners, not the size, so that boxes stay in the frame. */
    guint x = (guint) (d->x + 0.5f), y = (guint) (d->y + 0.5f);
    guint x2 = (guint) (d->x + d->w + 0.5f), y2 = (guint) (d->y + d->h + 0.5f);
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_add_video_region_of_interest_meta (buf, d->label, x, y,
        x2 - x, y2 - y);
    roi->id = (gint) i;
    gst_video_region_of_interest_meta_add_param (roi,
        gst_hybrid_result_detection_param (result, i));
    GstStructure *mask = gst_hybrid_result_mask_param (result, i);
    if (mask)
      gst_video_region_of_interest_meta_add_param (roi, mask);
  }
}

void
gst_hybrid_infer_carry_last (GstHybridInfer * self, GstBuffer * buf)
{
  if (self->last)
    attach_result (buf, self->last, FALSE);
}

/* What a result says of its frame, but the latency. */
GstHybridResultFrame
gst_hybrid_infer_frame_details (GstHybridInfer * self, GstBuffer * buf,
    guint64 frame)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  GstHybridResultFrame details = {
    .frame_number = frame,
    .timestamp = GST_BUFFER_PTS (buf),
    .running_time = GST_CLOCK_TIME_NONE,
  };
  if (trans->segment.format == GST_FORMAT_TIME)
    details.running_time = gst_segment_to_running_time (&trans->segment,
        GST_FORMAT_TIME, details.timestamp);
  return details;
}

/* A new result (taken): attached to `buf` as its own when the frame is
 * still here (NULL: it went on without it, skip-when-busy), posted, kept
 * for the frames after it, and accounted for.  Nothing is allocated here
 * but the meta (and the message when posting); see docs/ELEMENT.md,
 * "Allocations per frame". */
void
gst_hybrid_infer_publish_result (GstHybridInfer * self, GstBuffer * buf,
    GstHybridResult * result, gdouble latency_us, gboolean post)
{
  if (buf)
    attach_result (buf, result, TRUE);
  /* The message owns its structure: a copy (GStreamer's own allocations,
   * see docs/ELEMENT.md). */
  if (post)
    gst_element_post_message (GST_ELEMENT (self),
        gst_message_new_element (GST_OBJECT (self),
            gst_structure_copy (result->results)));
  if (self->last)
    gst_hybrid_result_unref (self->last);
  self->last = result;
  gst_hybrid_infer_count_inferred (self, latency_us);
}

/* The statistics of an inferred frame: the one write a frame makes under
 * the object lock. */
void
gst_hybrid_infer_count_inferred (GstHybridInfer * self, gdouble latency_us)
{
  GST_OBJECT_LOCK (self);
  self->frames_inferred++;
  self->total_latency_us += latency_us;
  self->last_latency_us = latency_us;
  GST_OBJECT_UNLOCK (self);
}

/* Reads batch slot `slot` of the element's own session into a result for
 * `buf` and publishes it. */
void
gst_hybrid_infer_finish_frame (GstHybridInfer * self,
    const GstHybridFrameSettings * fs, GstBuffer * buf, guint64 frame,
    gint slot, gint64 start_us)
{
  GstHybridResultFrame details =
      gst_hybrid_infer_frame_details (self, buf, frame);
  gboolean grew;

  details.latency_us = (gdouble) (g_get_monotonic_time () - start_us);
  GstHybridResult *result = gst_hybrid_session_result (self->session, slot,
      NULL, &details, fs->top_k, fs->threshold, fs->class_thresholds, &grew);
  if (grew)
    GST_DEBUG_OBJECT (self, "every result block held: one more");
  gst_hybrid_infer_publish_result (self, buf, result, details.latency_us,
      fs->post_messages);
}
