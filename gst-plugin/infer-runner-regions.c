/*
 * infer-runner-regions.c — inference-region=roi, the runner's side of
 * infer-roi.c: secondary inference on each region of interest a detector
 * put on the frame, cropped, its result added to the region's meta.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "infer-runner-private.h"

/* inference-region=roi, at new(), on a session with an input size
 * (gst_hybrid_runner_build_session checks it): object-class
 * (comma-separated, NULL: every region) says which regions. */
void
gst_hybrid_runner_start_regions (GstHybridRunner * r,
    const gchar * object_class)
{
  gchar **classes = object_class ? g_strsplit (object_class, ",", -1)
      : NULL;
  for (gchar ** c = classes; c && *c; c++)
    g_strstrip (*c);
  r->roi = gst_hybrid_roi_new ((const gchar * const *) classes);
  if (r->client)
    gst_hybrid_roi_set_engine (r->roi, r->client);
  else
    gst_hybrid_roi_set_session (r->roi, r->session);
  g_strfreev (classes);
}

/* post-messages on regions: one message per frame with regions inferred,
 * named "hybridinfer" like a frame's, of type "regions": the frame's
 * fields, how many regions ran, and in `json` the frame's objects with
 * each one's secondary result (hybridpublish's object), since the results
 * themselves are on the regions' metas, one structure each. */
static void
post_regions (GstHybridRunner * r, GstBuffer * buf,
    const GstHybridResultFrame * details, guint n_done, gdouble latency_us,
    gboolean json)
{
  GstStructure *s = gst_structure_new ("hybridinfer",
      "frame-number", G_TYPE_UINT64, details->frame_number,
      "timestamp", G_TYPE_UINT64, details->timestamp,
      "running-time", G_TYPE_UINT64, details->running_time,
      "latency-us", G_TYPE_DOUBLE, latency_us,
      "type", G_TYPE_STRING, "regions",
      "count", G_TYPE_INT, (gint) n_done, NULL);
  GstStructure *with_json = gst_hybrid_runner_message_structure (s,
      json ? buf : NULL, details->frame_number);
  gst_structure_free (s);
  r->cb.post_message (r->cb.owner,
      gst_message_new_element (r->cb.owner, with_json));
}

/* inference-region=roi: every region of the frame the classes take runs
 * through the model, its result added to its meta (infer-roi.h), and
 * with post-messages the frame's regions posted.  model_lock held on the
 * own model; none on an engine (no swap runs there). */
GstFlowReturn
gst_hybrid_runner_on_regions (GstHybridRunner * r,
    const GstHybridFrameSettings * fs, GstBuffer * buf, guint64 frame)
{
  GstHybridRoiFrame f = {
    .details = gst_hybrid_runner_frame_details (fs, buf, frame)
  };
  GstVideoFrame mapped;
  GError *error = NULL;
  guint n_done;
  if (!gst_buffer_get_meta (buf, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    return GST_FLOW_OK;         /* nothing to look at: not even mapped */
  /* a misspelt object-class infers nothing and fails nothing: said once */
  gchar *unmatched = gst_hybrid_roi_check_classes (r->roi, buf);
  if (unmatched) {
    RUNNER_MESSAGE (r, WARNING, RESOURCE, SETTINGS, ("%s", unmatched),
        (NULL));
    g_free (unmatched);
  }
  if (!gst_hybrid_runner_map_frame (r, buf, &mapped, f.planes, f.strides))
    return GST_FLOW_ERROR;
  f.width = GST_VIDEO_FRAME_WIDTH (&mapped);
  f.height = GST_VIDEO_FRAME_HEIGHT (&mapped);
  f.top_k = fs->top_k;
  f.threshold = fs->threshold;
  f.mode = fs->mode;
  f.class_thresholds = fs->class_thresholds;
  gint64 start = g_get_monotonic_time ();
  GstFlowReturn ret;
  if (r->client) {
    /* as a whole frame on the engine: its timeout and quiet bound */
    GstHybridEngineRequest base = {
      .frame = f.details,.top_k = f.top_k,.threshold = f.threshold,
      .class_thresholds = r->thresholds,.timeout_ms = fs->batch_timeout_ms,
      .quiet_us = gst_hybrid_runner_quiet_us (fs, buf),
    };
    ret = gst_hybrid_roi_infer_on_engine (r->roi, buf, &f, &base, &n_done,
        &error);
  } else {
    ret = gst_hybrid_roi_infer (r->roi, r->session, buf, &f, &n_done,
        &error) ? GST_FLOW_OK : GST_FLOW_ERROR;
  }
  gst_video_frame_unmap (&mapped);
  if (ret == GST_FLOW_FLUSHING)
    return ret;                 /* a flush or a state change: no error */
  if (ret != GST_FLOW_OK) {
    gst_hybrid_runner_post_frame_error (r, error, frame);
    return GST_FLOW_ERROR;
  }
  if (n_done) {
    gdouble latency_us = (gdouble) (g_get_monotonic_time () - start);
    gst_hybrid_runner_count_inferred (r, latency_us);
    if (fs->post_messages)
      post_regions (r, buf, &f.details, n_done, latency_us,
          fs->message_json);
  }
  return GST_FLOW_OK;
}
