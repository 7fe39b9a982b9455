/*
 * gsthybridinfer.c — the hybridinfer element.
 *
 * SECTION:element-hybridinfer
 * @title: hybridinfer
 *
 * Runs every video frame (or every Nth) through an MXNet Gluon export
 * (`prefix-symbol.json` + `prefix-NNNN.params`), hybridized: planned once,
 * one arena, no allocation per forward.  Frames pass through untouched;
 * the results ride on the buffer as a GstHybridTensorMeta (every output
 * head) plus GstVideoRegionOfInterestMeta for detections, and each
 * inferred frame posts a "hybridinfer" element message on the bus.
 *
 * `mode` switches to imperative execution while playing (node by node);
 * with `dump-dir` set, the frames listed in `dump-frames` then get every
 * layer's output written as .npy files, for `hybridinfer diff`.
 *
 * `model`, `params` and `labels` set while playing load the new model on
 * a thread of the element and swap it in between two frames, posting a
 * "hybridinfer-model-reloaded" element message; a model that fails to
 * load is a warning and the old one runs on.  The properties the session
 * is built from refuse a change while running (a warning).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 -m videotestsrc num-buffers=30 ! videoconvert ! \
 *     hybridinfer model=resnet18_v1-symbol.json labels=imagenet.txt \
 *     scale=0-1 mean="<0.485,0.456,0.406>" std="<0.229,0.224,0.225>" ! \
 *     hybridoverlay ! videoconvert ! autovideosink
 * ]|
 *
 * See docs/ELEMENT.md for every property, the message and the meta.
 *
 * This file is the element's table of contents: the class, its vfuncs,
 * and what each hands to the runner (infer-runner.h), which owns what
 * frames run on, with its threads.  The parts, sharing the instance
 * through gsthybridinfer-private.h:
 *  - gsthybridinfer-start.c: start() and stop(), the runner made and freed;
 *  - gsthybridinfer-properties.c: the properties, and changes while started;
 *  - gsthybridinfer-caps.c: caps, the allocation query, latency;
 *  - gsthybridinfer-callbacks.c: what the runner asks of the element;
 *  - gsthybridinfer-settings.c: a frame's settings, one snapshot per frame;
 *  - gsthybridinfer-dump.c: layer dumps that failed.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsthybridinfer-private.h"
#include "gsthybridinfer-enums.h"
#include "video-format.h"

GST_DEBUG_CATEGORY (gst_hybrid_infer_debug);

#define gst_hybrid_infer_parent_class parent_class
G_DEFINE_TYPE (GstHybridInfer, gst_hybrid_infer, GST_TYPE_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE (hybridinfer, "hybridinfer", GST_RANK_NONE,
    GST_TYPE_HYBRID_INFER);

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_HYBRID_VIDEO_CAPS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_HYBRID_VIDEO_CAPS));

static void gst_hybrid_infer_finalize (GObject * object);
static GstStateChangeReturn gst_hybrid_infer_change_state (GstElement *
    element, GstStateChange transition);
static gboolean gst_hybrid_infer_sink_event (GstBaseTransform * trans,
    GstEvent * event);
static gboolean gst_hybrid_infer_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query);
static gboolean gst_hybrid_infer_query (GstBaseTransform * trans,
    GstPadDirection direction, GstQuery * query);
static GstFlowReturn gst_hybrid_infer_transform_ip (GstBaseTransform * trans,
    GstBuffer * buf);
static GstFlowReturn gst_hybrid_infer_generate_output (GstBaseTransform *
    trans, GstBuffer ** outbuf);

static void
gst_hybrid_infer_class_init (GstHybridInferClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->set_property = gst_hybrid_infer_set_property;
  gobject_class->get_property = gst_hybrid_infer_get_property;
  gobject_class->finalize = gst_hybrid_infer_finalize;
  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_hybrid_infer_change_state);

  gst_hybrid_infer_install_properties (gobject_class);

  gst_element_class_set_static_metadata (element_class,
      "Hybrid inference", "Filter/Analyzer/Video",
      "Runs video frames through a hybridized MXNet Gluon model and "
      "attaches the results as metadata", "hybridinfer authors");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);

  trans_class->start = GST_DEBUG_FUNCPTR (gst_hybrid_infer_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_hybrid_infer_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_hybrid_infer_set_caps);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_hybrid_infer_sink_event);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_hybrid_infer_propose_allocation);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_hybrid_infer_query);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_hybrid_infer_transform_ip);
  trans_class->generate_output =
      GST_DEBUG_FUNCPTR (gst_hybrid_infer_generate_output);
  trans_class->passthrough_on_same_caps = FALSE;

  gst_type_mark_as_plugin_api (GST_TYPE_HYBRID_INFER_MODE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_HYBRID_INFER_COLOR_ORDER, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_HYBRID_INFER_SCALE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_HYBRID_INFER_RESIZE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_HYBRID_INFER_INTERPOLATION, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_HYBRID_INFER_OUTPUT, 0);
  GST_DEBUG_CATEGORY_INIT (gst_hybrid_infer_debug, "hybridinfer", 0,
      "hybridinfer element");
}

static void
gst_hybrid_infer_init (GstHybridInfer * self)
{
  gst_hybrid_infer_settings_init (&self->settings);
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), FALSE);
}

static void
gst_hybrid_infer_finalize (GObject * object)
{
  gst_hybrid_infer_settings_clear (&GST_HYBRID_INFER (object)->settings);
  g_free (GST_HYBRID_INFER (object)->dump_failed_dir);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* ---- per frame ---------------------------------------------------------- */

/* A frame in place: the runner attaches its result now.  Its settings are
 * taken here, the one time a frame reads the properties. */
static GstFlowReturn
gst_hybrid_infer_transform_ip (GstBaseTransform * trans, GstBuffer * buf)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);
  GstHybridFrameSettings fs;

  gst_hybrid_infer_take_frame_settings (self, &fs);
  GstFlowReturn ret = gst_hybrid_runner_submit (self->runner, &fs, buf);
  gst_hybrid_frame_settings_clear (&fs);
  return ret;
}

/* When the runner holds frames for a batch (batch-size > 1 on the own
 * model), they leave, in order, once their batch has run; otherwise the
 * plain in-place path (transform_ip). */
static GstFlowReturn
gst_hybrid_infer_generate_output (GstBaseTransform * trans,
    GstBuffer ** outbuf)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);
  GstFlowReturn ret = GST_FLOW_OK;

  if (!gst_hybrid_runner_holds_frames (self->runner))
    return GST_BASE_TRANSFORM_CLASS (parent_class)->generate_output (trans,
        outbuf);
  *outbuf = NULL;
  if (trans->queued_buf) {
    GstBuffer *buf = trans->queued_buf;
    GstHybridFrameSettings fs;
    trans->queued_buf = NULL;
    gst_hybrid_infer_take_frame_settings (self, &fs);
    ret = gst_hybrid_runner_submit_held (self->runner, &fs, buf);
    gst_hybrid_frame_settings_clear (&fs);
  }
  if (ret == GST_FLOW_OK)
    *outbuf = gst_hybrid_runner_next_ready (self->runner);
  return ret;
}

/* ---- events, queries, state --------------------------------------------- */

static gboolean
gst_hybrid_infer_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);

  /* Held frames go before a serialized event (EOS too: then an engine's
   * partial batches stop waiting for this stream); a flush starting lets
   * a thread waiting in an engine return, its end drops them.  No runner:
   * the element did not start. */
  switch (self->runner ? GST_EVENT_TYPE (event) : GST_EVENT_UNKNOWN) {
    case GST_EVENT_EOS:
      gst_hybrid_runner_drain (self->runner, TRUE);
      break;
    case GST_EVENT_FLUSH_START:
      gst_hybrid_runner_set_flushing (self->runner, TRUE);
      break;
    case GST_EVENT_FLUSH_STOP:
      gst_hybrid_runner_set_flushing (self->runner, FALSE);
      break;
    case GST_EVENT_UNKNOWN:
      break;
    default:
      if (GST_EVENT_IS_SERIALIZED (event))
        gst_hybrid_runner_drain (self->runner, FALSE);
      break;
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

/* Going down.  Pausing: on an engine, the stream stops counting toward
 * a full batch (a live source sends nothing in PAUSED; its next frame
 * counts it again).  Stopping: before the pads deactivate, which waits
 * for a streaming thread that may be waiting in an engine for a batch,
 * that wait ends (GST_FLOW_FLUSHING); the runner goes in stop().  Both
 * run on the thread that runs start() and stop(). */
static GstStateChangeReturn
gst_hybrid_infer_change_state (GstElement * element,
    GstStateChange transition)
{
  GstHybridInfer *self = GST_HYBRID_INFER (element);
  if (transition == GST_STATE_CHANGE_PLAYING_TO_PAUSED && self->runner)
    gst_hybrid_runner_idle (self->runner);
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY && self->runner)
    gst_hybrid_runner_set_flushing (self->runner, TRUE);
  return GST_ELEMENT_CLASS (parent_class)->change_state (element,
      transition);
}

static gboolean
gst_hybrid_infer_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);

  /* In place, the query goes downstream; when nobody answers there, what
   * this element needs is still worth saying. */
  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->propose_allocation (trans,
          decide_query, query))
    GST_DEBUG_OBJECT (self, "downstream did not answer the allocation query");
  gst_hybrid_infer_propose_buffers (self, query);
  return TRUE;
}

/* Frames waiting for a batch add latency (batch_latency). */
static gboolean
gst_hybrid_infer_query (GstBaseTransform * trans, GstPadDirection direction,
    GstQuery * query)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);
  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction,
          query))
    return FALSE;
  if (direction == GST_PAD_SRC && GST_QUERY_TYPE (query) == GST_QUERY_LATENCY)
    gst_hybrid_infer_add_batch_latency (self, query);
  return TRUE;
}
