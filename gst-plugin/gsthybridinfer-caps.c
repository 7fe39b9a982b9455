/*
 * gsthybridinfer-caps.c — negotiation: the frames the caps describe
 * planned for the model, the buffers asked of upstream, and the latency
 * that batching adds.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsthybridinfer-private.h"
#include "video-format.h"

/* Batching holds frames for a time that depends on the frame rate: a new
 * rate is a new latency. */
static void
update_frame_duration (GstHybridInfer * self, const GstVideoInfo * info)
{
  GstClockTime duration = GST_VIDEO_INFO_FPS_N (info) > 0
      ? gst_util_uint64_scale_int (GST_SECOND, GST_VIDEO_INFO_FPS_D (info),
      GST_VIDEO_INFO_FPS_N (info)) : 0;
  gboolean changed;
  GST_OBJECT_LOCK (self);
  changed = self->frame_duration != duration
      && self->settings.batch_size > 1;
  self->frame_duration = duration;
  GST_OBJECT_UNLOCK (self);
  if (changed)
    gst_element_post_message (GST_ELEMENT (self),
        gst_message_new_latency (GST_OBJECT (self)));
}

/* What the caps say of the frames; FALSE: caps the element cannot use. */
static gboolean
frame_format_from_caps (GstCaps * caps, GstVideoInfo * info,
    GstHybridFrameFormat * format)
{
  hy_pixel_layout layout;
  gdouble kr = 0.299, kb = 0.114;

  if (!gst_video_info_from_caps (info, caps)
      || !gst_hybrid_layout_for_format (GST_VIDEO_INFO_FORMAT (info),
          &layout))
    return FALSE;
  if (GST_VIDEO_INFO_IS_YUV (info)
      && !gst_video_color_matrix_get_Kr_Kb (info->colorimetry.matrix, &kr,
          &kb)) {
    kr = 0.299;                 /* unknown matrix: BT.601 */
    kb = 0.114;
  }
  *format = (GstHybridFrameFormat) {
    .layout = layout,
    .width = GST_VIDEO_INFO_WIDTH (info),
    .height = GST_VIDEO_INFO_HEIGHT (info),
    .kr = (gfloat) kr,
    .kb = (gfloat) kb,
    .full_range = info->colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255,
  };
  return TRUE;
}

/* The runner plans its model for the frames (and posts why not); caps
 * refused once are refused again without a second error. */
gboolean
gst_hybrid_infer_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);
  GstHybridRunner *runner = self->runner;
  GstVideoInfo info;
  GstHybridFrameFormat format;

  if (gst_hybrid_runner_caps_refused (runner, incaps)) {
    GST_DEBUG_OBJECT (self, "caps already refused, error posted");
    return FALSE;
  }
  if (!frame_format_from_caps (incaps, &info, &format)) {
    GST_ERROR_OBJECT (self, "caps not usable: %" GST_PTR_FORMAT, incaps);
    gst_hybrid_runner_refuse_caps (runner, incaps);
    return FALSE;
  }
  if (!gst_hybrid_runner_set_frame_format (runner, incaps, &info, &format))
    return FALSE;
  update_frame_duration (self, &info);
  GST_DEBUG_OBJECT (self, "frames %" GST_PTR_FORMAT, incaps);
  return TRUE;
}

/* Whether frames wait in the element for a batch of their own stream:
 * its own model at batch-size > 1 on whole frames.  An engine batches
 * across streams and holds no buffer (the frame is converted into its
 * slot and waits, or goes on); regions are batched within their frame.
 * Object lock held. */
static gboolean
holds_frames (const GstHybridInferSettings * s)
{
  return s->batch_size > 1 && !s->shared_engine && !s->skip_when_busy
      && s->inference_region == GST_HYBRID_INFER_REGION_FULL_FRAME;
}

/* propose_allocation, once the parent has asked downstream: what the
 * element needs of upstream's buffers.
 *
 * Frames held for a batch are buffers upstream cannot reuse: ask for that
 * many more than downstream wants, as elements that hold buffers do.
 * Upstream sources with a fixed pool (v4l2src, hardware decoders) may not
 * be able to give them; holding is then also bounded (queue_frame,
 * batch-timeout). */
void
gst_hybrid_infer_propose_buffers (GstHybridInfer * self, GstQuery * query)
{
  guint extra;

  /* Frames are read through GstVideoFrame: any strides and offsets do. */
  if (!gst_query_find_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL))
    gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);

  GST_OBJECT_LOCK (self);
  extra = holds_frames (&self->settings) ? self->settings.batch_size : 0;
  GST_OBJECT_UNLOCK (self);
  if (!extra)
    return;
  if (gst_query_get_n_allocation_pools (query) == 0) {
    GstCaps *caps = NULL;
    GstVideoInfo info;
    gst_query_parse_allocation (query, &caps, NULL);
    if (caps && gst_video_info_from_caps (&info, caps))
      gst_query_add_allocation_pool (query, NULL, (guint) info.size, extra,
          0);
  } else {
    for (guint i = 0; i < gst_query_get_n_allocation_pools (query); i++) {
      GstBufferPool *pool = NULL;
      guint size, min, max;
      gst_query_parse_nth_allocation_pool (query, i, &pool, &size, &min,
          &max);
      min += extra;
      if (max != 0)
        max = MAX (max + extra, min);
      gst_query_set_nth_allocation_pool (query, i, pool, size, min, max);
      if (pool)
        gst_object_unref (pool);
    }
  }
  GST_DEBUG_OBJECT (self, "asked upstream for %u more buffers", extra);
}

/* What waiting for a batch adds to a frame's latency: held for its own
 * batch, up to batch-size - 1 more inferred frames, each `interval`
 * frames apart; on a shared engine (waiting for its result), until the
 * other streams' frames join the batch, which at one rate for all takes
 * up to a frame interval; with skip-when-busy or on regions, nothing.
 * Either way no longer than batch-timeout.  Object lock held. */
static GstClockTime
batch_latency (GstHybridInfer * self)
{
  const GstHybridInferSettings *s = &self->settings;
  GstClockTime held = 0;
  if (holds_frames (s))
    held = (GstClockTime) (s->batch_size - 1) * s->interval
        * self->frame_duration;
  else if (s->shared_engine && !s->skip_when_busy && s->batch_size > 1)
    held = (GstClockTime) s->interval * self->frame_duration;
  if (s->batch_timeout_ms)
    held = MIN (held, s->batch_timeout_ms * GST_MSECOND);
  return held;
}

/* A latency query's answer from upstream, plus what waiting for a batch
 * adds (batch_latency). */
void
gst_hybrid_infer_add_batch_latency (GstHybridInfer * self, GstQuery * query)
{
  GstClockTime held, min, max;
  gboolean live;
  GST_OBJECT_LOCK (self);
  held = batch_latency (self);
  GST_OBJECT_UNLOCK (self);
  gst_query_parse_latency (query, &live, &min, &max);
  if (GST_CLOCK_TIME_IS_VALID (max))
    max += held;
  gst_query_set_latency (query, live, min + held, max);
  GST_DEBUG_OBJECT (self, "batching adds %" GST_TIME_FORMAT,
      GST_TIME_ARGS (held));
}
