/*
 * infer-runner-engine.c — frames on an engine, the runner's side of
 * infer-engine.c: shared-engine (one model for every element that names
 * it, frames batched across them) and skip-when-busy (a private engine;
 * frames go on while it is busy).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "infer-runner-private.h"

/* Joins the engine the settings name (shared-engine), or a private one
 * (skip-when-busy alone): *client. */
gboolean
gst_hybrid_runner_join_engine (const GstHybridInferSettings * copy,
    const GstHybridSessionConfig * config, GstHybridEngineClient ** client,
    char **note, GError ** error)
{
  GstHybridPrep prep;
  if (config->mode != HY_MODE_HYBRID) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "mode=imperative runs "
        "layer by layer on the streaming thread: it cannot run on an engine "
        "(shared-engine, skip-when-busy)");
    return FALSE;
  }
  if (!copy->shared_engine && config->batch > 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "skip-when-busy runs "
        "one frame at a time: batch-size %d needs shared-engine, whose "
        "batches gather frames from several elements", config->batch);
    return FALSE;
  }
  if (!gst_hybrid_prep_from_config (config, &prep, error))
    return FALSE;
  *client = gst_hybrid_engine_join (copy->shared_engine, config, &prep,
      note, error);
  return *client != NULL;
}

/* skip-when-busy: the result of a frame that went on earlier, once the
 * engine has it, becomes the one frames carry. */
static gboolean
take_engine_result (GstHybridRunner * r, gboolean post, gboolean json)
{
  GError *error = NULL;
  GstHybridResult *result =
      gst_hybrid_engine_client_take_result (r->client, &error);
  if (error) {
    gst_hybrid_runner_post_frame_error (r, error, r->frame_count);
    return FALSE;
  }
  if (result) {
    gdouble latency = 0;
    gst_structure_get_double (result->results, "latency-us", &latency);
    /* the frame has gone on: the JSON is made from the result alone */
    gst_hybrid_runner_publish_result (r, NULL, result, latency, post, json);
  }
  return TRUE;
}

/* skip-when-busy: the frame is handed over, or skipped when the engine is
 * busy, and goes on with the newest result. */
static void
hand_over (GstHybridRunner * r, GstBuffer * buf, GstVideoFrame * mapped,
    const uint8_t * planes[3], int strides[3],
    const GstHybridEngineRequest * request)
{
  gboolean taken = gst_hybrid_engine_client_try_submit (r->client,
      planes, strides, request);
  gst_video_frame_unmap (mapped);
  if (!taken)
    gst_hybrid_runner_count_skipped (r);
  gst_hybrid_runner_carry_last (r, buf);
}

/* A frame on an engine: it waits for its result, or (skip-when-busy) it is
 * handed over, or skipped when the engine is busy, and goes on with the
 * newest result.  No lock held: the wait for a batch may be long, and
 * nothing a swap changes is used (there is no swap on an engine). */
GstFlowReturn
gst_hybrid_runner_on_engine_frame (GstHybridRunner * r,
    const GstHybridFrameSettings * fs, GstBuffer * buf, guint64 frame)
{
  GstHybridEngineRequest request = {
    .frame = gst_hybrid_runner_frame_details (fs, buf, frame)
  };
  GstVideoFrame mapped;
  const uint8_t *planes[3];
  int strides[3];
  GError *error = NULL;

  if (r->skip_when_busy && !take_engine_result (r, fs->post_messages,
          fs->message_json))
    return GST_FLOW_ERROR;
  if (!gst_hybrid_frame_settings_wants (fs, frame)) {
    gst_hybrid_runner_carry_last (r, buf);
    return GST_FLOW_OK;
  }
  request.top_k = fs->top_k;
  request.threshold = fs->threshold;
  request.timeout_ms = fs->batch_timeout_ms;
  request.quiet_us = gst_hybrid_runner_quiet_us (fs, buf);
  request.class_thresholds = r->thresholds;  /* by value: n 0 for none */
  if (!gst_hybrid_runner_map_frame (r, buf, &mapped, planes, strides))
    return GST_FLOW_ERROR;
  if (r->skip_when_busy) {
    hand_over (r, buf, &mapped, planes, strides, &request);
    return GST_FLOW_OK;
  }

  gint64 start = g_get_monotonic_time ();
  GstHybridResult *result;
  GstFlowReturn ret = gst_hybrid_engine_client_infer (r->client, planes,
      strides, &request, &result, &error);
  gst_video_frame_unmap (&mapped);
  if (ret == GST_FLOW_FLUSHING)
    return ret;                 /* a flush or a state change: no error */
  if (ret != GST_FLOW_OK) {
    gst_hybrid_runner_post_frame_error (r, error, frame);
    return GST_FLOW_ERROR;
  }
  gst_hybrid_runner_publish_result (r, buf, result,
      (gdouble) (g_get_monotonic_time () - start), fs->post_messages,
      fs->message_json);
  return GST_FLOW_OK;
}
