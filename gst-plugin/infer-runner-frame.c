/*
 * infer-runner-frame.c — one frame on the runner's own model: mapped,
 * converted into a batch slot, run forward, its result read back,
 * attached to the buffer as metas, posted and kept for the frames the
 * interval skips.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "infer-runner-private.h"
#include "gsthybridmeta.h"
#include "publish-json.h"

/* How long a stream with nothing queued still counts toward a full batch
 * on its engine (docs/ELEMENT.md, "When a camera stalls on a shared
 * engine"): two of its intervals between frames to infer, the next one's
 * due time and as much again for a live source's jitter, within
 * QUIET_MIN_US (below it the scheduler's jitter on a loaded machine would
 * split healthy batches) and QUIET_MAX_US (a slow camera, or one of
 * unknown rate, holds the others back no longer than that). */
#define QUIET_MIN_US (20 * G_TIME_SPAN_MILLISECOND)
#define QUIET_MAX_US (1000 * G_TIME_SPAN_MILLISECOND)

/* The bound for this frame's stream on an engine (infer-runner-engine.c,
 * -regions.c), from its frame duration (of the
 * caps, else of the buffer; unknown: the ceiling) times `interval` (only
 * every interval-th frame reaches the engine). */
gint64
gst_hybrid_runner_quiet_us (const GstHybridFrameSettings * fs,
    GstBuffer * buf)
{
  GstClockTime duration = fs->frame_duration;
  if (!duration && GST_BUFFER_DURATION_IS_VALID (buf))
    duration = GST_BUFFER_DURATION (buf);
  if (!duration)
    return QUIET_MAX_US;
  gint64 us = (gint64) (duration / GST_USECOND);
  us *= 2 * (gint64) MAX (fs->interval, 1);
  return CLAMP (us, QUIET_MIN_US, QUIET_MAX_US);
}

/* Maps buf's planes for reading (unmap `frame` after); FALSE, the error
 * posted, when it cannot be read. */
gboolean
gst_hybrid_runner_map_frame (GstHybridRunner * r, GstBuffer * buf,
    GstVideoFrame * frame, const uint8_t * planes[3], int strides[3])
{
  gboolean planned = r->client
      ? gst_hybrid_engine_client_has_frame (r->client)
      : gst_hybrid_session_has_frame (r->session);
  if (!planned) {
    RUNNER_MESSAGE (r, ERROR, CORE, NEGOTIATION, (NULL),
        ("a buffer arrived before its caps"));
    return FALSE;
  }
  if (!gst_video_frame_map (frame, &r->info, buf, GST_MAP_READ)) {
    RUNNER_MESSAGE (r, ERROR, STREAM, FAILED, (NULL),
        ("could not map frame %" G_GUINT64_FORMAT, r->frame_count));
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
gst_hybrid_runner_load_frame (GstHybridRunner * r, GstBuffer * buf,
    gint slot, hy_mode mode)
{
  GstVideoFrame frame;
  const uint8_t *planes[3];
  int strides[3];
  if (!gst_hybrid_runner_map_frame (r, buf, &frame, planes, strides))
    return FALSE;
  if (gst_hybrid_session_load (r->session, slot, mode, planes, strides))
    GST_LOG_OBJECT (r->cb.owner, "frame quantized straight into the "
        "model's int8 input, slot %d", slot);
  gst_video_frame_unmap (&frame);
  gst_hybrid_runner_report_session_note (r);
  return TRUE;
}

/* Imperative mode keeps every layer's output: far more memory than the
 * hybrid plan.  When a switch to it (from hybrid, while playing) finds no
 * room, the switch is refused: a warning, the mode property back to
 * hybrid, and the batch runs in hybrid mode.  A runner started in
 * imperative mode has nothing to fall back to that it was asked for: its
 * failure stays an error. */
static gboolean
refuse_imperative (GstHybridRunner * r, hy_mode mode, GError ** error)
{
  if (mode != HY_MODE_IMPERATIVE || !r->ran_hybrid
      || !g_error_matches (*error, HY_ERROR, HY_ERROR_NO_MEMORY))
    return FALSE;
  RUNNER_MESSAGE (r, WARNING, RESOURCE, NO_SPACE_LEFT,
      ("mode imperative refused, running on in hybrid mode: %s",
          (*error)->message),
      ("imperative mode keeps every layer's output; the hybrid plan "
          "needs %" G_GINT64_FORMAT " bytes of arena", r->arena_seen));
  g_clear_error (error);
  r->cb.mode_refused (r->cb.owner);
  return TRUE;
}

/* The directory for this forward's dump, or NULL for none; a dump-frames
 * that does not parse is the element's to report. */
static gchar *
dump_dir_for (GstHybridRunner * r, const GstHybridFrameSettings * fs,
    hy_mode mode, guint64 first, guint64 last)
{
  if (mode != HY_MODE_IMPERATIVE || !fs->dump_dir)
    return NULL;
  if (!fs->dump_set) {
    r->cb.dump_failed (r->cb.owner, NULL, first);
    return NULL;
  }
  for (guint64 f = first; f <= last; f++)
    if (hyg_frame_set_contains (fs->dump_set, f)) {
      gchar *name = g_strdup_printf ("frame-%06" G_GUINT64_FORMAT, f);
      gchar *dir = g_build_filename (fs->dump_dir, name, NULL);
      g_free (name);
      return dir;
    }
  return NULL;
}

/* One forward; frames first..last are the ones in the batch. */
gboolean
gst_hybrid_runner_run_forward (GstHybridRunner * r,
    const GstHybridFrameSettings * fs, guint64 first, guint64 last)
{
  hy_mode mode = fs->mode;
  GError *error = NULL, *dump_error = NULL;

  gchar *dump_dir = dump_dir_for (r, fs, mode, first, last);
  gboolean ok = gst_hybrid_session_forward (r->session, mode, dump_dir,
      &dump_error, &error);
  if (!ok && refuse_imperative (r, mode, &error)) {
    g_clear_pointer (&dump_dir, g_free);
    g_clear_error (&dump_error);
    mode = HY_MODE_HYBRID;
    ok = gst_hybrid_session_forward (r->session, mode, NULL, NULL, &error);
  }
  if (ok && mode == HY_MODE_HYBRID)
    r->ran_hybrid = TRUE;
  if (dump_error) {
    r->cb.dump_failed (r->cb.owner, dump_error, first);
    g_error_free (dump_error);
  } else if (dump_dir && ok) {
    GST_INFO_OBJECT (r->cb.owner, "dumped frame %" G_GUINT64_FORMAT " to %s",
        first, dump_dir);
  }
  g_free (dump_dir);
  if (!ok) {
    gst_hybrid_runner_post_frame_error (r, error, first);
    return FALSE;
  }
  /* the arena changes with the mode */
  gst_hybrid_runner_set_arena (r, gst_hybrid_session_arena_bytes (r->session));
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
gst_hybrid_runner_carry_last (GstHybridRunner * r, GstBuffer * buf)
{
  if (r->last)
    attach_result (buf, r->last, FALSE);
}

/* What a result says of its frame, but the latency: its running time in
 * the segment the frame's settings carry. */
GstHybridResultFrame
gst_hybrid_runner_frame_details (const GstHybridFrameSettings * fs,
    GstBuffer * buf, guint64 frame)
{
  GstHybridResultFrame details = {
    .frame_number = frame,
    .timestamp = GST_BUFFER_PTS (buf),
    .running_time = GST_CLOCK_TIME_NONE,
  };
  if (fs->segment && fs->segment->format == GST_FORMAT_TIME)
    details.running_time = gst_segment_to_running_time (fs->segment,
        GST_FORMAT_TIME, details.timestamp);
  return details;
}

/* A bus message's structure: `results` and, given the buffer,
 * the buffer's results as the JSON object hybridpublish writes, in the
 * string field `json`: bindings that cannot read GStreamer's typed lists
 * (python3-gi) read one string and parse it. */
GstStructure *
gst_hybrid_runner_message_structure (const GstStructure * results,
    GstBuffer * buf, guint64 frame)
{
  GstStructure *s = gst_structure_copy (results);
  if (buf) {
    gchar *json = gst_hybrid_publish_json_string (buf, frame);
    gst_structure_set (s, "json", G_TYPE_STRING, json, NULL);
    g_free (json);
  }
  return s;
}

/* skip-when-busy: the frame a result was computed on has gone on before
 * the result came.  A buffer without memory in its place, with its
 * timestamp and the result attached as that frame would have carried it,
 * gives the message's `json` the object every other message has (the
 * frame's regions from upstream elements are not in it: they went on
 * with the frame). */
static GstBuffer *
stand_in_frame (GstHybridResult * result)
{
  GstBuffer *buf = gst_buffer_new ();
  guint64 timestamp;
  if (gst_structure_get_uint64 (result->results, "timestamp", &timestamp))
    GST_BUFFER_PTS (buf) = timestamp;
  attach_result (buf, result, TRUE);
  return buf;
}

/* A new result (taken): attached to `buf` as its own when the frame is
 * still here (NULL: it went on without it, skip-when-busy), posted, kept
 * for the frames after it, and accounted for.  Nothing is allocated here
 * but the meta (and the message when posting); see docs/ELEMENT.md,
 * "Allocations per frame". */
void
gst_hybrid_runner_publish_result (GstHybridRunner * r, GstBuffer * buf,
    GstHybridResult * result, gdouble latency_us, gboolean post,
    gboolean json)
{
  if (buf)
    attach_result (buf, result, TRUE);
  /* The message owns its structure: a copy (GStreamer's own allocations,
   * see docs/ELEMENT.md). */
  if (post) {
    GstBuffer *stand_in = json && !buf ? stand_in_frame (result) : NULL;
    r->cb.post_message (r->cb.owner,
        gst_message_new_element (r->cb.owner,
            gst_hybrid_runner_message_structure (result->results,
                json ? (buf ? buf : stand_in) : NULL,
                result->frame_number)));
    if (stand_in)
      gst_buffer_unref (stand_in);
  }
  if (r->last)
    gst_hybrid_result_unref (r->last);
  r->last = result;
  gst_hybrid_runner_count_inferred (r, latency_us);
}

/* Reads batch slot `slot` of the runner's own session into a result for
 * `buf` and publishes it. */
void
gst_hybrid_runner_finish_frame (GstHybridRunner * r,
    const GstHybridFrameSettings * fs, GstBuffer * buf, guint64 frame,
    gint slot, gint64 start_us)
{
  GstHybridResultFrame details =
      gst_hybrid_runner_frame_details (fs, buf, frame);
  gboolean grew;

  details.latency_us = (gdouble) (g_get_monotonic_time () - start_us);
  GstHybridResult *result = gst_hybrid_session_result (r->session, slot,
      NULL, &details, fs->top_k, fs->threshold, fs->class_thresholds, &grew);
  if (grew)
    GST_DEBUG_OBJECT (r->cb.owner, "every result block held: one more");
  gst_hybrid_runner_publish_result (r, buf, result, details.latency_us,
      fs->post_messages, fs->message_json);
}
