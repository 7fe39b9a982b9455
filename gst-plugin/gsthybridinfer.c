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
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/video/video.h>

#include "gsthybridinfer.h"
#include "gsthybridinfer-enums.h"
#include "gsthybridmeta.h"
#include "gsthybridresult.h"
#include "infer-batch.h"
#include "infer-config.h"
#include "infer-engine.h"
#include "infer-roi.h"
#include "infer-session.h"
#include "property-parse.h"
#include "video-format.h"

GST_DEBUG_CATEGORY_STATIC (gst_hybrid_infer_debug);
#define GST_CAT_DEFAULT gst_hybrid_infer_debug

/* ---- properties ------------------------------------------------------------ */

enum
{
  PROP_0,
  PROP_MODEL,
  PROP_PARAMS,
  PROP_LABELS,
  PROP_DEVICE,
  PROP_PRECISION,
  PROP_MODE,
  PROP_DUMP_DIR,
  PROP_DUMP_FRAMES,
  PROP_INPUT_NAME,
  PROP_INPUT_SIZE,
  PROP_COLOR_ORDER,
  PROP_MEAN,
  PROP_STD,
  PROP_SCALE,
  PROP_RESIZE,
  PROP_INTERPOLATION,
  PROP_INTERVAL,
  PROP_BATCH_SIZE,
  PROP_BATCH_TIMEOUT,
  PROP_OUTPUT,
  PROP_OUTPUT_ACTIVATION,
  PROP_TOP_K,
  PROP_THRESHOLD,
  PROP_POST_MESSAGES,
  PROP_SHARED_ENGINE,
  PROP_SKIP_WHEN_BUSY,
  PROP_INFERENCE_REGION,
  PROP_OBJECT_CLASS,
  PROP_FRAMES_INFERRED,
  PROP_FRAMES_SKIPPED,
  PROP_MEAN_LATENCY_US,
  PROP_LAST_LATENCY_US,
  PROP_ARENA_BYTES,
  PROP_DUMP_FAILURES,
};

/* What set_caps gave gst_hybrid_session_set_frame: a session loaded while
 * playing is planned for the same frames. */
typedef struct
{
  hy_pixel_layout layout;
  gint width, height;
  gfloat kr, kb;
  gboolean full_range;
} GstHybridFrameFormat;

struct _GstHybridInfer
{
  GstBaseTransform parent;

  GstHybridInferSettings settings;

  /* of the current caps, for latency queries; object lock */
  GstClockTime frame_duration;

  /* statistics; object lock */
  guint64 frames_inferred;
  guint64 frames_skipped;       /* skip-when-busy: the engine was busy */
  gdouble total_latency_us;
  gdouble last_latency_us;
  gint64 arena_bytes;

  /* runtime state: start() to stop(), streaming thread */
  GstHybridSession *session;    /* the element's own model, or NULL */
  GstHybridEngineClient *client;        /* or an engine's (infer-engine.h) */
  gboolean skip_when_busy;      /* with client: frames do not wait */
  GstHybridRoi *roi;            /* inference-region=roi: the regions */
  GstVideoInfo info;            /* of the current caps */
  GstCaps *failed_caps;         /* caps whose error was posted: GStreamer
                                 * sends sticky caps again with the next
                                 * buffer, and one failure is one error */
  guint64 frame_count;
  GstHybridResult *last;        /* for the frames interval skips */
  GstHybridBatch *batch;        /* frames waiting for their batch */
  /* The pool the last held frame came from and its max-buffers (0:
   * unbounded), compared by address only: a partial batch runs before
   * holding the frames would leave upstream no buffer. */
  GstBufferPool *known_pool;
  guint known_pool_max;
  /* Bounds the wait of a partial batch (batch-timeout): a thread runs it
   * once its oldest frame has waited that long, under the sink pad's
   * stream lock like any chain call.  flush_lock guards the deadline and
   * quit; flush_ret (stream lock) is a timed push's failure, returned by
   * the next frame. */
  GThread *flush_thread;
  GMutex flush_lock;
  GCond flush_cond;
  gint64 flush_deadline;        /* monotonic us; 0: nothing held */
  gboolean flush_quit;
  GstFlowReturn flush_ret;
  gboolean warned_device;
  gboolean warned_dump_frames;
  gboolean ran_hybrid;          /* a hybrid forward ran since start */

  /* Dumps that failed.  The first failure for a dump-dir / dump-frames
   * setting is posted; the rest are counted (an unwritable directory
   * failed every frame, thousands of warnings a second) and summed up in
   * one warning when the setting changes or the element stops.  Object
   * lock. */
  guint64 dump_failures;        /* since start: the property */
  guint64 dump_failures_unposted;       /* since the posted warning */
  gchar *dump_failed_dir;       /* where the posted one failed; NULL:
                                 * none posted for this setting */
  gboolean dump_rearm;          /* the setting changed: sum up, re-arm */

  /* Hot reload.  model, params and labels set while started are a
   * request: a loader thread (started at the first one, joined in stop())
   * loads and plans the new session off the streaming thread, then swaps
   * it in under the sink pad's stream lock, between two frames.  The
   * settings keep the model actually running until then.  Object lock:
   * all of these but the thread's own locals. */
  gboolean started;
  gboolean on_engine;           /* client is set */
  gchar *want_model, *want_params, *want_labels;
  guint want_mask;              /* GstHybridSetFlags set while started */
  guint64 reload_serial;        /* requests made since start */
  guint64 reload_done;          /* the last one the loader finished */
  gboolean reload_quit;
  GThread *reload_thread;
  GCond reload_cond;            /* with the object lock */
  /* The frame format of the current caps, so that the loader plans the
   * new session for it; frame_serial counts caps changes. */
  GstHybridFrameFormat frame_format;
  gboolean frame_known;
  guint64 frame_serial;
};

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

static void gst_hybrid_infer_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_hybrid_infer_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static void gst_hybrid_infer_finalize (GObject * object);
static gboolean gst_hybrid_infer_start (GstBaseTransform * trans);
static gboolean gst_hybrid_infer_stop (GstBaseTransform * trans);
static gboolean gst_hybrid_infer_set_caps (GstBaseTransform * trans,
    GstCaps * incaps, GstCaps * outcaps);
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
static gpointer flush_thread_func (gpointer data);
static GstStateChangeReturn gst_hybrid_infer_change_state (GstElement *
    element, GstStateChange transition);
static gpointer reload_thread_func (gpointer data);

static GParamSpec *
channel_values_spec (const gchar * name, const gchar * nick,
    const gchar * blurb, gdouble fallback)
{
  return gst_param_spec_array (name, nick, blurb,
      g_param_spec_double ("value", "Value", "One channel's value",
          -G_MAXDOUBLE, G_MAXDOUBLE, fallback,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
}

static void
gst_hybrid_infer_class_init (GstHybridInferClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  const GParamFlags ready = rw | GST_PARAM_MUTABLE_READY;
  const GParamFlags playing = rw | GST_PARAM_MUTABLE_PLAYING;
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  gobject_class->set_property = gst_hybrid_infer_set_property;
  gobject_class->get_property = gst_hybrid_infer_get_property;
  gobject_class->finalize = gst_hybrid_infer_finalize;
  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_hybrid_infer_change_state);

  g_object_class_install_property (gobject_class, PROP_MODEL,
      g_param_spec_string ("model", "Model",
          "The Gluon export's symbol file (prefix-symbol.json); set while "
          "playing, the new model loads in the background and takes over "
          "at a frame boundary", NULL,
          playing));
  g_object_class_install_property (gobject_class, PROP_PARAMS,
      g_param_spec_string ("params", "Parameters",
          "The parameters file (default: the newest prefix-NNNN.params "
          "beside the model)", NULL, playing));
  g_object_class_install_property (gobject_class, PROP_LABELS,
      g_param_spec_string ("labels", "Labels",
          "Text file with one class label per line (line N is class N)",
          NULL, playing));
  g_object_class_install_property (gobject_class, PROP_DEVICE,
      g_param_spec_string ("device", "Device",
          "Where to run: auto (the GPU when one works, else the CPU), "
          "cpu, cuda or cuda:N", DEFAULT_DEVICE, ready));
  g_object_class_install_property (gobject_class, PROP_PRECISION,
      g_param_spec_enum ("precision", "Precision",
          "Arithmetic precision: fp16 runs on a GPU only",
          GST_TYPE_HYBRID_INFER_PRECISION, DEFAULT_PRECISION, ready));
  g_object_class_install_property (gobject_class, PROP_MODE,
      g_param_spec_enum ("mode", "Mode",
          "Execution mode; may change while playing and takes effect at the "
          "next frame", GST_TYPE_HYBRID_INFER_MODE, DEFAULT_MODE, playing));
  g_object_class_install_property (gobject_class, PROP_DUMP_DIR,
      g_param_spec_string ("dump-dir", "Dump directory",
          "In imperative mode, write every layer's output of the frames in "
          "dump-frames to DIR/frame-NNNNNN/ as .npy files", NULL, playing));
  g_object_class_install_property (gobject_class, PROP_DUMP_FRAMES,
      g_param_spec_string ("dump-frames", "Frames to dump",
          "Frame numbers to dump, e.g. \"0-9,100,250-\" (empty: every "
          "frame inferred in imperative mode)", NULL, playing));
  g_object_class_install_property (gobject_class, PROP_INPUT_NAME,
      g_param_spec_string ("input-name", "Input name",
          "The model input the frames feed (default: its only input)", NULL,
          ready));
  g_object_class_install_property (gobject_class, PROP_INPUT_SIZE,
      g_param_spec_string ("input-size", "Input size",
          "Model input WxH, or \"frame\" to follow the video size (default: "
          "the model's __shape__, else 224x224)", NULL, ready));
  g_object_class_install_property (gobject_class, PROP_COLOR_ORDER,
      g_param_spec_enum ("color-order", "Color order",
          "Channel order of the input tensor",
          GST_TYPE_HYBRID_INFER_COLOR_ORDER, DEFAULT_COLOR_ORDER, ready));
  g_object_class_install_property (gobject_class, PROP_MEAN,
      channel_values_spec ("mean", "Mean",
          "Subtracted per tensor channel after scaling, e.g. "
          "\"<0.485,0.456,0.406>\" (one value, or one per channel; "
          "default 0)", 0.0));
  g_object_class_install_property (gobject_class, PROP_STD,
      channel_values_spec ("std", "Standard deviation",
          "Divides each tensor channel after the mean, e.g. "
          "\"<0.229,0.224,0.225>\" (one value, or one per channel; "
          "default 1)", 1.0));
  g_object_class_install_property (gobject_class, PROP_SCALE,
      g_param_spec_enum ("scale", "Scale",
          "Range of pixel values before mean and std",
          GST_TYPE_HYBRID_INFER_SCALE, DEFAULT_SCALE, ready));
  g_object_class_install_property (gobject_class, PROP_RESIZE,
      g_param_spec_enum ("resize", "Resize",
          "How frames are fitted to the input size",
          GST_TYPE_HYBRID_INFER_RESIZE, DEFAULT_RESIZE, ready));
  g_object_class_install_property (gobject_class, PROP_INTERPOLATION,
      g_param_spec_enum ("interpolation", "Interpolation",
          "How the resize samples the frame",
          GST_TYPE_HYBRID_INFER_INTERPOLATION, DEFAULT_INTERPOLATION, ready));
  g_object_class_install_property (gobject_class, PROP_INTERVAL,
      g_param_spec_uint ("interval", "Interval",
          "Infer every Nth frame; the frames between carry the last result",
          1, G_MAXUINT, DEFAULT_INTERVAL, playing));
  g_object_class_install_property (gobject_class, PROP_BATCH_SIZE,
      g_param_spec_uint ("batch-size", "Batch size",
          "Frames per forward; above 1, frames are held until their batch "
          "is full (latency of batch-size inferred frames)", 1,
          MAX_BATCH_SIZE, DEFAULT_BATCH_SIZE, ready));
  g_object_class_install_property (gobject_class, PROP_BATCH_TIMEOUT,
      g_param_spec_uint ("batch-timeout", "Batch timeout",
          "Milliseconds a partial batch waits for more frames before it "
          "runs as it is (0: until full, or an event)", 0, G_MAXUINT,
          DEFAULT_BATCH_TIMEOUT_MS, playing));
  g_object_class_install_property (gobject_class, PROP_OUTPUT,
      g_param_spec_enum ("output", "Output",
          "How the model's outputs are read", GST_TYPE_HYBRID_INFER_OUTPUT,
          DEFAULT_OUTPUT, ready));
  g_object_class_install_property (gobject_class, PROP_OUTPUT_ACTIVATION,
      g_param_spec_enum ("output-activation", "Output activation",
          "What turns classification scores into the ones reported (the "
          "tensor meta keeps the model's values): auto makes them "
          "probabilities, with a softmax unless the model applies one",
          GST_TYPE_HYBRID_INFER_ACTIVATION, DEFAULT_OUTPUT_ACTIVATION,
          ready));
  g_object_class_install_property (gobject_class, PROP_TOP_K,
      g_param_spec_uint ("top-k", "Top k",
          "Classification: how many of the best classes to report", 1,
          MAX_TOP_K, DEFAULT_TOP_K, playing));
  g_object_class_install_property (gobject_class, PROP_THRESHOLD,
      g_param_spec_float ("threshold", "Threshold",
          "Detection: the lowest score a box is reported with", -G_MAXFLOAT,
          G_MAXFLOAT, DEFAULT_THRESHOLD, playing));
  g_object_class_install_property (gobject_class, PROP_POST_MESSAGES,
      g_param_spec_boolean ("post-messages", "Post messages",
          "Post a \"hybridinfer\" element message per inferred frame "
          "(off by default: a bus nobody reads keeps every one; each "
          "buffer carries its result as GstHybridTensorMeta)",
          DEFAULT_POST_MESSAGES, playing));
  g_object_class_install_property (gobject_class, PROP_SHARED_ENGINE,
      g_param_spec_string ("shared-engine", "Shared engine",
          "Run on the engine of this name, shared by every hybridinfer in "
          "the process that names it: one copy of the model, frames from "
          "all of them batched together (up to batch-size, waiting no "
          "longer than batch-timeout).  NULL: the element's own model",
          NULL, ready));
  g_object_class_install_property (gobject_class, PROP_SKIP_WHEN_BUSY,
      g_param_spec_boolean ("skip-when-busy", "Skip when busy",
          "Run the model on its own thread and let frames flow on: a frame "
          "that arrives while it is busy is not inferred (frames-skipped) "
          "and carries the newest result, marked as not its own",
          DEFAULT_SKIP_WHEN_BUSY, ready));
  g_object_class_install_property (gobject_class, PROP_INFERENCE_REGION,
      g_param_spec_enum ("inference-region", "Inference region",
          "What the model sees: the whole frame, or (secondary inference "
          "after a detector) each region of interest, cropped, its result "
          "added to the region's meta", GST_TYPE_HYBRID_INFER_REGION,
          DEFAULT_INFERENCE_REGION, ready));
  g_object_class_install_property (gobject_class, PROP_OBJECT_CLASS,
      g_param_spec_string ("object-class", "Object class",
          "inference-region=roi: the region types to infer on, "
          "comma-separated (e.g. \"car,bus\"; a detector's labels); "
          "NULL: every region", NULL, ready));
  g_object_class_install_property (gobject_class, PROP_FRAMES_INFERRED,
      g_param_spec_uint64 ("frames-inferred", "Frames inferred",
          "Frames run through the model since the element started", 0,
          G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_FRAMES_SKIPPED,
      g_param_spec_uint64 ("frames-skipped", "Frames skipped",
          "skip-when-busy: frames that found the model busy and went on "
          "without a result of their own, since the element started", 0,
          G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_MEAN_LATENCY_US,
      g_param_spec_double ("mean-latency-us", "Mean latency",
          "Mean time from a frame's pre-processing to its result, in "
          "microseconds", 0, G_MAXDOUBLE, 0, ro));
  g_object_class_install_property (gobject_class, PROP_LAST_LATENCY_US,
      g_param_spec_double ("last-latency-us", "Last latency",
          "The last inferred frame's latency, in microseconds", 0,
          G_MAXDOUBLE, 0, ro));
  g_object_class_install_property (gobject_class, PROP_DUMP_FAILURES,
      g_param_spec_uint64 ("dump-failures", "Dump failures",
          "Dumps that could not be written since the element started (only "
          "the first per dump-dir / dump-frames setting posts a warning)", 0,
          G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_ARENA_BYTES,
      g_param_spec_int64 ("arena-bytes", "Arena bytes",
          "Memory of the hybridized plan's arena (0 in imperative mode)", 0,
          G_MAXINT64, 0, ro));

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
  g_mutex_init (&self->flush_lock);
  g_cond_init (&self->flush_cond);
  g_cond_init (&self->reload_cond);
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), FALSE);
}

static void
gst_hybrid_infer_finalize (GObject * object)
{
  gst_hybrid_infer_settings_clear (&GST_HYBRID_INFER (object)->settings);
  g_free (GST_HYBRID_INFER (object)->dump_failed_dir);
  g_mutex_clear (&GST_HYBRID_INFER (object)->flush_lock);
  g_cond_clear (&GST_HYBRID_INFER (object)->flush_cond);
  g_cond_clear (&GST_HYBRID_INFER (object)->reload_cond);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* ---- property access ------------------------------------------------------ */

static void
channel_values_set (GArray * out, const GValue * value)
{
  g_array_set_size (out, 0);
  for (guint i = 0; i < gst_value_array_get_size (value); i++) {
    const GValue *v = gst_value_array_get_value (value, i);
    GValue d = G_VALUE_INIT;
    gdouble x = 0.0;
    g_value_init (&d, G_TYPE_DOUBLE);
    if (g_value_transform (v, &d))
      x = g_value_get_double (&d);
    g_value_unset (&d);
    g_array_append_val (out, x);
  }
}

/* The values, or when none were given the one value that means "none"
 * (mean 0, std 1): what gst-inspect shows as the default, and what gives
 * the same pre-processing when set back. */
static void
channel_values_get (GArray * in, gdouble none, GValue * value)
{
  for (guint i = 0; i < MAX (in->len, 1); i++) {
    GValue d = G_VALUE_INIT;
    g_value_init (&d, G_TYPE_DOUBLE);
    g_value_set_double (&d, in->len ? g_array_index (in, gdouble, i) : none);
    gst_value_array_append_and_take_value (value, &d);
  }
}

/* dump-frames parses when set; start() reports a bad value as an error,
 * and while running a bad value stops dumps until it is fixed. */
static void
set_dump_frames (GstHybridInfer * self, const gchar * text)
{
  GstHybridInferSettings *s = &self->settings;
  g_free (s->dump_frames);
  s->dump_frames = g_strdup (text);
  hyg_frame_set_free (s->dump_set);
  s->dump_set = hyg_frame_set_parse (text, NULL);
  self->warned_dump_frames = FALSE;
  self->dump_rearm = TRUE;
}

/* model, params or labels set while started: the loader thread takes the
 * newest values (a request made while another loads supersedes it).
 * Object lock held. */
static void
request_reload (GstHybridInfer * self, guint prop_id, const GValue * value)
{
  gchar **want = prop_id == PROP_MODEL ? &self->want_model
      : prop_id == PROP_PARAMS ? &self->want_params : &self->want_labels;
  g_free (*want);
  *want = g_value_dup_string (value);
  if (prop_id == PROP_PARAMS)
    self->want_mask |= GST_HYBRID_SET_PARAMS;
  else if (prop_id == PROP_LABELS)
    self->want_mask |= GST_HYBRID_SET_LABELS;
  self->reload_serial++;
  if (!self->reload_thread)
    self->reload_thread = g_thread_new ("hybridinfer-reload",
        reload_thread_func, self);
  else
    g_cond_signal (&self->reload_cond);
}

/* What a started element does with a property: FALSE for the ones that
 * apply from the next frame; TRUE when handled here (a reload request,
 * or a refusal).  Those the session is built from and no reload takes
 * (device, precision, the input and its pre-processing, the output kind:
 * a new model's sidecar gives its own) and batch-size (the batch, the
 * upstream pool and the latency are sized by it) stay as they are: a
 * warning rather than a value the getter would show but nothing uses.
 * Takes and releases the object lock when it returns TRUE. */
static gboolean
set_while_started (GstHybridInfer * self, guint prop_id, GParamSpec * pspec,
    const GValue * value)
{
  if (self->on_engine && (prop_id == PROP_MODEL || prop_id == PROP_PARAMS
          || prop_id == PROP_LABELS || prop_id == PROP_MODE)) {
    GST_OBJECT_UNLOCK (self);
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("%s cannot change while the element runs on an engine "
            "(shared-engine, skip-when-busy): the change is ignored",
            g_param_spec_get_name (pspec)),
        ("an engine runs one model in hybrid mode for all its elements"));
    return TRUE;
  }
  switch (prop_id) {
    case PROP_MODEL:
    case PROP_PARAMS:
    case PROP_LABELS:
      request_reload (self, prop_id, value);
      GST_OBJECT_UNLOCK (self);
      GST_DEBUG_OBJECT (self, "%s set while running: reloading",
          g_param_spec_get_name (pspec));
      return TRUE;
    case PROP_DEVICE:
    case PROP_PRECISION:
    case PROP_INPUT_NAME:
    case PROP_INPUT_SIZE:
    case PROP_COLOR_ORDER:
    case PROP_MEAN:
    case PROP_STD:
    case PROP_SCALE:
    case PROP_RESIZE:
    case PROP_INTERPOLATION:
    case PROP_BATCH_SIZE:
    case PROP_OUTPUT:
    case PROP_OUTPUT_ACTIVATION:
    case PROP_SHARED_ENGINE:
    case PROP_SKIP_WHEN_BUSY:
    case PROP_INFERENCE_REGION:
    case PROP_OBJECT_CLASS:
      /* posting takes the object lock */
      GST_OBJECT_UNLOCK (self);
      GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
          ("%s cannot change while the element runs: the change is ignored",
              g_param_spec_get_name (pspec)),
          ("set it in the NULL or READY state; only model, params and "
              "labels reload while playing"));
      return TRUE;
    default:
      return FALSE;
  }
}

static void
gst_hybrid_infer_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstHybridInfer *self = GST_HYBRID_INFER (object);
  GstHybridInferSettings *s = &self->settings;

  GST_OBJECT_LOCK (self);
  if (self->started && set_while_started (self, prop_id, pspec, value))
    return;
  /* Set by the user: wins over the model's sidecar (infer-config.h). */
  gst_hybrid_infer_settings_mark_set (s, g_param_spec_get_name (pspec));
  switch (prop_id) {
    case PROP_MODEL:
      g_free (s->model);
      s->model = g_value_dup_string (value);
      break;
    case PROP_PARAMS:
      g_free (s->params);
      s->params = g_value_dup_string (value);
      break;
    case PROP_LABELS:
      g_free (s->labels);
      s->labels = g_value_dup_string (value);
      break;
    case PROP_DEVICE:
      g_free (s->device);
      s->device = g_value_dup_string (value);
      break;
    case PROP_PRECISION:
      s->precision = g_value_get_enum (value);
      break;
    case PROP_MODE:
      s->mode = g_value_get_enum (value);
      break;
    case PROP_DUMP_DIR:
      g_free (s->dump_dir);
      s->dump_dir = g_value_dup_string (value);
      self->dump_rearm = TRUE;
      break;
    case PROP_DUMP_FRAMES:
      set_dump_frames (self, g_value_get_string (value));
      break;
    case PROP_INPUT_NAME:
      g_free (s->input_name);
      s->input_name = g_value_dup_string (value);
      break;
    case PROP_INPUT_SIZE:
      g_free (s->input_size);
      s->input_size = g_value_dup_string (value);
      break;
    case PROP_COLOR_ORDER:
      s->color_order = g_value_get_enum (value);
      break;
    case PROP_MEAN:
      channel_values_set (s->mean, value);
      break;
    case PROP_STD:
      channel_values_set (s->std, value);
      break;
    case PROP_SCALE:
      s->scale = g_value_get_enum (value);
      break;
    case PROP_RESIZE:
      s->resize = g_value_get_enum (value);
      break;
    case PROP_INTERPOLATION:
      s->interpolation = g_value_get_enum (value);
      break;
    case PROP_INTERVAL:
      s->interval = g_value_get_uint (value);
      break;
    case PROP_BATCH_SIZE:
      s->batch_size = g_value_get_uint (value);
      break;
    case PROP_BATCH_TIMEOUT:
      s->batch_timeout_ms = g_value_get_uint (value);
      break;
    case PROP_OUTPUT:
      s->output = g_value_get_enum (value);
      break;
    case PROP_OUTPUT_ACTIVATION:
      s->output_activation = g_value_get_enum (value);
      break;
    case PROP_TOP_K:
      s->top_k = g_value_get_uint (value);
      break;
    case PROP_THRESHOLD:
      s->threshold = g_value_get_float (value);
      break;
    case PROP_POST_MESSAGES:
      s->post_messages = g_value_get_boolean (value);
      break;
    case PROP_SHARED_ENGINE:
      g_free (s->shared_engine);
      s->shared_engine = g_value_dup_string (value);
      if (s->shared_engine && !*s->shared_engine)
        g_clear_pointer (&s->shared_engine, g_free);
      break;
    case PROP_SKIP_WHEN_BUSY:
      s->skip_when_busy = g_value_get_boolean (value);
      break;
    case PROP_INFERENCE_REGION:
      s->inference_region = g_value_get_enum (value);
      break;
    case PROP_OBJECT_CLASS:
      g_free (s->object_class);
      s->object_class = g_value_dup_string (value);
      if (s->object_class && !*s->object_class)
        g_clear_pointer (&s->object_class, g_free);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_hybrid_infer_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstHybridInfer *self = GST_HYBRID_INFER (object);
  GstHybridInferSettings *s = &self->settings;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODEL:
      g_value_set_string (value, s->model);
      break;
    case PROP_PARAMS:
      g_value_set_string (value, s->params);
      break;
    case PROP_LABELS:
      g_value_set_string (value, s->labels);
      break;
    case PROP_DEVICE:
      g_value_set_string (value, s->device);
      break;
    case PROP_PRECISION:
      g_value_set_enum (value, s->precision);
      break;
    case PROP_MODE:
      g_value_set_enum (value, s->mode);
      break;
    case PROP_DUMP_DIR:
      g_value_set_string (value, s->dump_dir);
      break;
    case PROP_DUMP_FRAMES:
      g_value_set_string (value, s->dump_frames);
      break;
    case PROP_INPUT_NAME:
      g_value_set_string (value, s->input_name);
      break;
    case PROP_INPUT_SIZE:
      g_value_set_string (value, s->input_size);
      break;
    case PROP_COLOR_ORDER:
      g_value_set_enum (value, s->color_order);
      break;
    case PROP_MEAN:
      channel_values_get (s->mean, 0.0, value);
      break;
    case PROP_STD:
      channel_values_get (s->std, 1.0, value);
      break;
    case PROP_SCALE:
      g_value_set_enum (value, s->scale);
      break;
    case PROP_RESIZE:
      g_value_set_enum (value, s->resize);
      break;
    case PROP_INTERPOLATION:
      g_value_set_enum (value, s->interpolation);
      break;
    case PROP_INTERVAL:
      g_value_set_uint (value, s->interval);
      break;
    case PROP_BATCH_SIZE:
      g_value_set_uint (value, s->batch_size);
      break;
    case PROP_BATCH_TIMEOUT:
      g_value_set_uint (value, s->batch_timeout_ms);
      break;
    case PROP_OUTPUT:
      g_value_set_enum (value, s->output);
      break;
    case PROP_OUTPUT_ACTIVATION:
      g_value_set_enum (value, s->output_activation);
      break;
    case PROP_TOP_K:
      g_value_set_uint (value, s->top_k);
      break;
    case PROP_THRESHOLD:
      g_value_set_float (value, s->threshold);
      break;
    case PROP_POST_MESSAGES:
      g_value_set_boolean (value, s->post_messages);
      break;
    case PROP_SHARED_ENGINE:
      g_value_set_string (value, s->shared_engine);
      break;
    case PROP_SKIP_WHEN_BUSY:
      g_value_set_boolean (value, s->skip_when_busy);
      break;
    case PROP_INFERENCE_REGION:
      g_value_set_enum (value, s->inference_region);
      break;
    case PROP_OBJECT_CLASS:
      g_value_set_string (value, s->object_class);
      break;
    case PROP_FRAMES_INFERRED:
      g_value_set_uint64 (value, self->frames_inferred);
      break;
    case PROP_FRAMES_SKIPPED:
      g_value_set_uint64 (value, self->frames_skipped);
      break;
    case PROP_MEAN_LATENCY_US:
      g_value_set_double (value, self->frames_inferred ?
          self->total_latency_us / self->frames_inferred : 0.0);
      break;
    case PROP_LAST_LATENCY_US:
      g_value_set_double (value, self->last_latency_us);
      break;
    case PROP_ARENA_BYTES:
      g_value_set_int64 (value, self->arena_bytes);
      break;
    case PROP_DUMP_FAILURES:
      g_value_set_uint64 (value, self->dump_failures);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* ---- errors ------------------------------------------------------------------ */

/* Posts `error` (the core's message) in the GStreamer domain that fits;
 * `what` (the debug detail) says what was being done. */
#define post_error(self, error, what) \
  post_error_at (self, GST_MESSAGE_ERROR, error, what, __FILE__, \
      GST_FUNCTION, __LINE__)
/* The same as a warning: a failed reload, the old model runs on. */
#define post_warning(self, error, what) \
  post_error_at (self, GST_MESSAGE_WARNING, error, what, __FILE__, \
      GST_FUNCTION, __LINE__)

static void
post_error_at (GstHybridInfer * self, GstMessageType type,
    const GError * error, const gchar * what, const gchar * file,
    const gchar * function, gint line)
{
  GQuark domain = GST_RESOURCE_ERROR;
  gint code = GST_RESOURCE_ERROR_SETTINGS;
  if (error->domain == HY_ERROR) {
    switch (error->code) {
      case HY_ERROR_IO:
        code = GST_RESOURCE_ERROR_OPEN_READ;
        break;
      case HY_ERROR_FORMAT:
      case HY_ERROR_MISSING:
        code = GST_RESOURCE_ERROR_READ;
        break;
      case HY_ERROR_UNSUPPORTED:
        domain = GST_LIBRARY_ERROR;
        code = GST_LIBRARY_ERROR_FAILED;
        break;
      case HY_ERROR_SHAPE:
        domain = GST_STREAM_ERROR;
        code = GST_STREAM_ERROR_FORMAT;
        break;
      case HY_ERROR_NO_MEMORY:
        code = GST_RESOURCE_ERROR_NO_SPACE_LEFT;
        break;
      default:
        break;
    }
  }
  gst_element_message_full (GST_ELEMENT (self), type, domain,
      code, g_strdup (error->message), g_strdup (what), file, function, line);
}

/* Posts the count of dump failures not posted yet, if any, as one
 * warning. */
static void
sum_up_dump_failures (GstHybridInfer * self)
{
  guint64 unposted, all;
  gchar *dir;
  GST_OBJECT_LOCK (self);
  unposted = self->dump_failures_unposted;
  all = self->dump_failures;
  dir = self->dump_failed_dir;
  self->dump_failures_unposted = 0;
  self->dump_failed_dir = NULL;
  GST_OBJECT_UNLOCK (self);
  if (unposted)
    GST_ELEMENT_WARNING (self, RESOURCE, WRITE,
        ("%" G_GUINT64_FORMAT " more dumps to %s failed after the first "
            "(%" G_GUINT64_FORMAT " since the element started)", unposted,
            dir ? dir : "dump-dir", all), (NULL));
  g_free (dir);
}

/* A changed dump-dir or dump-frames may fail anew, for another reason:
 * sum up the old setting's failures and post the next one again. */
static void
rearm_dump_warning (GstHybridInfer * self)
{
  gboolean rearm;
  GST_OBJECT_LOCK (self);
  rearm = self->dump_rearm;
  self->dump_rearm = FALSE;
  GST_OBJECT_UNLOCK (self);
  if (rearm)
    sum_up_dump_failures (self);
}

/* The first dump failure of a setting is a warning; later ones are
 * counted, for the dump-failures property and a summary. */
static void
report_dump_failure (GstHybridInfer * self, const GError * dump_error,
    guint64 frame)
{
  gboolean first;
  GST_OBJECT_LOCK (self);
  self->dump_failures++;
  first = self->dump_failed_dir == NULL;
  if (first)
    self->dump_failed_dir = g_strdup (self->settings.dump_dir);
  else
    self->dump_failures_unposted++;
  GST_OBJECT_UNLOCK (self);
  if (first)
    GST_ELEMENT_WARNING (self, RESOURCE, WRITE, ("%s", dump_error->message),
        ("dump of frame %" G_GUINT64_FORMAT "; later dump failures are "
            "counted in the dump-failures property, not posted, until "
            "dump-dir or dump-frames changes or the element stops, which "
            "posts their count", frame));
  else
    GST_DEBUG_OBJECT (self, "dump of frame %" G_GUINT64_FORMAT " failed: %s",
        frame, dump_error->message);
}

/* ---- start / stop -------------------------------------------------------- */

/* The session that runs this element's frames: its own, or its
 * engine's (read only what does not change while it runs). */
static const GstHybridSession *
running_session (GstHybridInfer * self)
{
  return self->client ? gst_hybrid_engine_client_session (self->client)
      : self->session;
}

/* Tells about a labels file that does not match the classes, once. */
static void
check_labels (GstHybridInfer * self, const GstHybridSession * session)
{
  guint n_labels;
  gint64 classes;
  if (gst_hybrid_session_labels_mismatch (session, &n_labels, &classes))
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("The labels file has %u labels but the model has %" G_GINT64_FORMAT
            " classes", n_labels, classes), (NULL));
}

/* What "auto" chose, in the log; and, once per element however often it
 * restarts, a warning when it fell back to the CPU from a GPU that is
 * there but could not be used.  A machine with no GPU at all is the
 * normal case of a CPU machine: no warning. */
static void
report_device (GstHybridInfer * self, const char *note)
{
  const char *coretype = hy_blas_suggested_coretype ();
  gboolean on_cpu =
      gst_hybrid_session_device (running_session (self)).kind ==
      HY_DEVICE_CPU;
  if (note && (!on_cpu || hy_device_no_gpu ())) {
    GST_INFO_OBJECT (self, "%s", note);
  } else if (note && !self->warned_device) {
    self->warned_device = TRUE;
    GST_ELEMENT_WARNING (self, LIBRARY, SETTINGS, ("%s", note), (NULL));
  }
  if (coretype && !g_getenv ("OPENBLAS_CORETYPE"))
    GST_INFO_OBJECT (self, "OpenBLAS runs %s kernels; exporting "
        "OPENBLAS_CORETYPE=%s before starting would be faster",
        hy_blas_core_name (), coretype);
}

/* A fallback the session took (the GPU frame path could not be made):
 * the frames still run, more slowly; the session says it once. */
static void
report_session_note (GstHybridInfer * self)
{
  if (!self->session)
    return;                     /* an engine's converts on the CPU */
  char *note = gst_hybrid_session_take_note (self->session);
  if (note)
    GST_WARNING_OBJECT (self, "%s", note);
  g_free (note);
}

/* The settings the user left unset, from PREFIX-model.json beside the
 * model (hybrid-sidecar.h); its unknown keys are a warning, once. */
static gboolean
apply_sidecar (GstHybridInfer * self, GstHybridInferSettings * copy,
    GError ** error)
{
  gchar *path = NULL, *warning = NULL;
  if (!gst_hybrid_infer_settings_apply_sidecar (copy, &path, &warning, error))
    return FALSE;
  if (path)
    GST_INFO_OBJECT (self, "settings the properties leave unset come from "
        "the sidecar %s", path);
  if (warning)
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS, ("%s", warning),
        ("model %s", copy->model));
  g_free (path);
  g_free (warning);
  return TRUE;
}

/* Joins the engine the settings name (shared-engine), or a private one
 * (skip-when-busy alone). */
static gboolean
join_engine (GstHybridInfer * self, const GstHybridInferSettings * copy,
    const GstHybridSessionConfig * config, char **note, GError ** error)
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
  self->client = gst_hybrid_engine_join (copy->shared_engine, config, &prep,
      note, error);
  return self->client != NULL;
}

static gboolean
gst_hybrid_infer_start (GstBaseTransform * trans)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);
  GstHybridInferSettings copy;
  GstHybridSessionConfig config;
  GError *error = NULL;
  char *note = NULL;

  GST_OBJECT_LOCK (self);
  gst_hybrid_infer_settings_snapshot (&self->settings, &copy);
  GST_OBJECT_UNLOCK (self);
  if (!apply_sidecar (self, &copy, &error))
    goto sidecar_failed;
  if (!gst_hybrid_infer_settings_to_config (&copy, &config, &error))
    goto config_failed;
  if (copy.inference_region == GST_HYBRID_INFER_REGION_ROI
      && (copy.shared_engine || copy.skip_when_busy)) {
    g_set_error (&error, HY_ERROR, HY_ERROR_INVALID, "inference-region=roi "
        "runs on the element's own model: not with shared-engine or "
        "skip-when-busy");
    goto config_failed;
  }
  if (copy.shared_engine || copy.skip_when_busy) {
    if (!join_engine (self, &copy, &config, &note, &error))
      goto session_failed;
  } else {
    self->session = gst_hybrid_session_new (&config, &note, &error);
    if (!self->session)
      goto session_failed;
  }
  if (copy.inference_region == GST_HYBRID_INFER_REGION_ROI) {
    if (gst_hybrid_session_follows_frame (self->session)) {
      g_set_error (&error, HY_ERROR, HY_ERROR_INVALID, "inference-region="
          "roi needs an input size for its crops: input-size=frame has "
          "none");
      g_clear_pointer (&self->session, gst_hybrid_session_free);
      goto config_failed;
    }
    gchar **classes = copy.object_class
        ? g_strsplit (copy.object_class, ",", -1) : NULL;
    for (gchar ** c = classes; c && *c; c++)
      g_strstrip (*c);
    self->roi = gst_hybrid_roi_new ((const gchar * const *) classes);
    g_strfreev (classes);
  }
  self->skip_when_busy = copy.skip_when_busy;
  gst_hybrid_infer_settings_clear (&copy);
  report_device (self, note);
  g_free (note);
  check_labels (self, running_session (self));

  self->frame_count = 0;
  self->ran_hybrid = FALSE;
  self->known_pool = NULL;
  self->flush_ret = GST_FLOW_OK;
  self->flush_deadline = 0;
  self->flush_quit = FALSE;
  /* An engine batches for its elements, and regions are batched within
   * their frame: the element holds no frames then. */
  if (self->session && !self->roi)
    self->batch = gst_hybrid_batch_new ((guint) config.batch);
  if (self->session && !self->roi && config.batch > 1)
    self->flush_thread = g_thread_new ("hybridinfer-flush",
        flush_thread_func, self);
  GST_OBJECT_LOCK (self);
  self->dump_failures = 0;
  self->dump_failures_unposted = 0;
  g_clear_pointer (&self->dump_failed_dir, g_free);
  self->dump_rearm = FALSE;
  self->frame_duration = 0;
  self->frames_inferred = 0;
  self->frames_skipped = 0;
  self->total_latency_us = 0;
  self->last_latency_us = 0;
  self->arena_bytes = gst_hybrid_session_arena_bytes (running_session (self));
  self->on_engine = self->client != NULL;
  self->frame_known = FALSE;
  self->frame_serial = 0;
  self->want_model = g_strdup (self->settings.model);
  self->want_params = g_strdup (self->settings.params);
  self->want_labels = g_strdup (self->settings.labels);
  self->want_mask = 0;
  self->reload_serial = self->reload_done = 0;
  self->reload_quit = FALSE;
  self->started = TRUE;
  GST_OBJECT_UNLOCK (self);
  return TRUE;

  /* ERRORS */
sidecar_failed:
  {
    post_error (self, error, "the model's sidecar");
    g_error_free (error);
    gst_hybrid_infer_settings_clear (&copy);
    return FALSE;
  }
config_failed:
  {
    post_error (self, error, "invalid property value");
    g_error_free (error);
    gst_hybrid_infer_settings_clear (&copy);
    return FALSE;
  }
session_failed:
  {
    gchar *what = g_strdup_printf ("model %s", config.model_path);
    post_error (self, error, what);
    g_free (what);
    g_error_free (error);
    g_free (note);
    gst_hybrid_infer_settings_clear (&copy);
    return FALSE;
  }
}

static void
drop_pending (GstHybridInfer * self)
{
  if (self->batch)
    gst_hybrid_batch_drop (self->batch);
}

static gboolean
gst_hybrid_infer_stop (GstBaseTransform * trans)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);
  GThread *reload_thread;
  sum_up_dump_failures (self);
  /* A load in flight finishes and is dropped; a loader waiting for the
   * stream lock gets it (streaming has stopped), sees quit and leaves. */
  GST_OBJECT_LOCK (self);
  self->started = FALSE;
  self->reload_quit = TRUE;
  reload_thread = self->reload_thread;
  self->reload_thread = NULL;
  g_cond_signal (&self->reload_cond);
  GST_OBJECT_UNLOCK (self);
  if (reload_thread)
    g_thread_join (reload_thread);
  GST_OBJECT_LOCK (self);
  g_clear_pointer (&self->want_model, g_free);
  g_clear_pointer (&self->want_params, g_free);
  g_clear_pointer (&self->want_labels, g_free);
  GST_OBJECT_UNLOCK (self);
  /* Streaming has stopped (the pads are inactive): a timed flush waiting
   * for the stream lock gets it, sees quit and does nothing. */
  if (self->flush_thread) {
    g_mutex_lock (&self->flush_lock);
    self->flush_quit = TRUE;
    g_cond_signal (&self->flush_cond);
    g_mutex_unlock (&self->flush_lock);
    g_thread_join (self->flush_thread);
    self->flush_thread = NULL;
  }
  g_clear_pointer (&self->batch, gst_hybrid_batch_free);
  g_clear_pointer (&self->last, gst_hybrid_result_unref);
  g_clear_pointer (&self->session, gst_hybrid_session_free);
  g_clear_pointer (&self->client, gst_hybrid_engine_leave);
  g_clear_pointer (&self->roi, gst_hybrid_roi_free);
  GST_OBJECT_LOCK (self);
  self->on_engine = FALSE;
  GST_OBJECT_UNLOCK (self);
  gst_caps_replace (&self->failed_caps, NULL);
  return TRUE;
}

/* ---- caps ---------------------------------------------------------------------- */

static gboolean
set_frame_format (GstHybridSession * session,
    const GstHybridFrameFormat * f, GError ** error)
{
  return gst_hybrid_session_set_frame (session, f->layout, f->width,
      f->height, f->kr, f->kb, f->full_range, error);
}

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

static gboolean
gst_hybrid_infer_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);
  GstVideoInfo info;
  hy_pixel_layout layout;
  gdouble kr = 0.299, kb = 0.114;
  GstHybridFrameFormat format;
  GError *error = NULL;

  if (self->failed_caps && gst_caps_is_equal (incaps, self->failed_caps)) {
    GST_DEBUG_OBJECT (self, "caps already refused, error posted");
    return FALSE;
  }
  if (!gst_video_info_from_caps (&info, incaps)
      || !gst_hybrid_layout_for_format (GST_VIDEO_INFO_FORMAT (&info),
          &layout))
    goto invalid_caps;
  if (GST_VIDEO_INFO_IS_YUV (&info)
      && !gst_video_color_matrix_get_Kr_Kb (info.colorimetry.matrix, &kr,
          &kb)) {
    kr = 0.299;                 /* unknown matrix: BT.601 */
    kb = 0.114;
  }
  format = (GstHybridFrameFormat) {
    .layout = layout,
    .width = GST_VIDEO_INFO_WIDTH (&info),
    .height = GST_VIDEO_INFO_HEIGHT (&info),
    .kr = (gfloat) kr,
    .kb = (gfloat) kb,
    .full_range = info.colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255,
  };
  if (!(self->client
          ? gst_hybrid_engine_client_set_frame (self->client, format.layout,
              format.width, format.height, format.kr, format.kb,
              format.full_range, &error)
          : set_frame_format (self->session, &format, &error)))
    goto plan_failed;
  if (self->roi)
    gst_hybrid_roi_set_frame (self->roi, format.layout, format.kr, format.kb,
        format.full_range);
  report_session_note (self);
  gst_caps_replace (&self->failed_caps, NULL);
  self->known_pool = NULL;      /* a new pool comes with new caps */
  self->info = info;
  update_frame_duration (self, &info);
  GST_OBJECT_LOCK (self);
  self->arena_bytes = gst_hybrid_session_arena_bytes (running_session (self));
  self->frame_format = format;
  self->frame_known = TRUE;
  self->frame_serial++;
  GST_OBJECT_UNLOCK (self);
  GST_DEBUG_OBJECT (self, "frames %" GST_PTR_FORMAT, incaps);
  return TRUE;

  /* ERRORS */
invalid_caps:
  {
    GST_ERROR_OBJECT (self, "caps not usable: %" GST_PTR_FORMAT, incaps);
    gst_caps_replace (&self->failed_caps, incaps);
    return FALSE;
  }
plan_failed:
  {
    gchar *what = g_strdup_printf ("frames of %dx%d",
        GST_VIDEO_INFO_WIDTH (&info), GST_VIDEO_INFO_HEIGHT (&info));
    post_error (self, error, what);
    g_free (what);
    g_error_free (error);
    gst_caps_replace (&self->failed_caps, incaps);
    return FALSE;
  }
}

/* Frames held for a batch are buffers upstream cannot reuse: ask for that
 * many more than downstream wants, as elements that hold buffers do.
 * Upstream sources with a fixed pool (v4l2src, hardware decoders) may not
 * be able to give them; holding is then also bounded (queue_frame,
 * batch-timeout). */
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

static gboolean
gst_hybrid_infer_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);
  guint extra;

  /* In place, the query goes downstream; when nobody answers there, what
   * this element needs is still worth saying. */
  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->propose_allocation (trans,
          decide_query, query))
    GST_DEBUG_OBJECT (self, "downstream did not answer the allocation query");
  /* Frames are read through GstVideoFrame: any strides and offsets do. */
  if (!gst_query_find_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL))
    gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);

  GST_OBJECT_LOCK (self);
  extra = holds_frames (&self->settings) ? self->settings.batch_size : 0;
  GST_OBJECT_UNLOCK (self);
  if (!extra)
    return TRUE;
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
  return TRUE;
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

/* Frames waiting for a batch add latency (batch_latency). */
static gboolean
gst_hybrid_infer_query (GstBaseTransform * trans, GstPadDirection direction,
    GstQuery * query)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);
  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction,
          query))
    return FALSE;
  if (direction == GST_PAD_SRC && GST_QUERY_TYPE (query) == GST_QUERY_LATENCY) {
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
  return TRUE;
}

/* ---- per frame ------------------------------------------------------------------ */

static gboolean
wants_inference (GstHybridInfer * self, guint64 frame)
{
  guint interval;
  GST_OBJECT_LOCK (self);
  interval = self->settings.interval;
  GST_OBJECT_UNLOCK (self);
  return frame % interval == 0;
}

/* Maps buf's planes for reading (unmap `frame` after); FALSE, the error
 * posted, when it cannot be read. */
static gboolean
map_frame (GstHybridInfer * self, GstBuffer * buf, GstVideoFrame * frame,
    const uint8_t * planes[3], int strides[3])
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

static gboolean
load_frame (GstHybridInfer * self, GstBuffer * buf, gint slot)
{
  GstVideoFrame frame;
  const uint8_t *planes[3];
  int strides[3];
  if (!map_frame (self, buf, &frame, planes, strides))
    return FALSE;
  gst_hybrid_session_load (self->session, slot, planes, strides);
  gst_video_frame_unmap (&frame);
  report_session_note (self);
  return TRUE;
}

/* The directory for this forward's dump, or NULL for none. */
static gchar *
dump_dir_for (GstHybridInfer * self, hy_mode mode, guint64 first,
    guint64 last)
{
  GstHybridInferSettings *s = &self->settings;
  gchar *dir = NULL;
  gboolean bad_frames = FALSE;
  rearm_dump_warning (self);
  GST_OBJECT_LOCK (self);
  if (mode == HY_MODE_IMPERATIVE && s->dump_dir && *s->dump_dir) {
    if (!s->dump_set) {
      bad_frames = !self->warned_dump_frames;
      self->warned_dump_frames = TRUE;
    } else {
      for (guint64 f = first; f <= last && !dir; f++)
        if (hyg_frame_set_contains (s->dump_set, f)) {
          gchar *name = g_strdup_printf ("frame-%06" G_GUINT64_FORMAT, f);
          dir = g_build_filename (s->dump_dir, name, NULL);
          g_free (name);
        }
    }
  }
  GST_OBJECT_UNLOCK (self);
  if (bad_frames)
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("dump-frames is not a list of frames and ranges: no dumps"), (NULL));
  return dir;
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
static gboolean
run_forward (GstHybridInfer * self, guint64 first, guint64 last)
{
  hy_mode mode;
  GError *error = NULL, *dump_error = NULL;
  GST_OBJECT_LOCK (self);
  mode = self->settings.mode;
  GST_OBJECT_UNLOCK (self);

  gchar *dump_dir = dump_dir_for (self, mode, first, last);
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
    report_dump_failure (self, dump_error, first);
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
  gint64 arena = gst_hybrid_session_arena_bytes (self->session);
  GST_OBJECT_LOCK (self);
  self->arena_bytes = arena;
  GST_OBJECT_UNLOCK (self);
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

static void
carry_last (GstHybridInfer * self, GstBuffer * buf)
{
  if (self->last)
    attach_result (buf, self->last, FALSE);
}

/* What a result says of its frame, but the latency. */
static GstHybridResultFrame
frame_details (GstHybridInfer * self, GstBuffer * buf, guint64 frame)
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
static void
publish_result (GstHybridInfer * self, GstBuffer * buf,
    GstHybridResult * result, gdouble latency_us)
{
  gboolean post;
  GST_OBJECT_LOCK (self);
  post = self->settings.post_messages;
  GST_OBJECT_UNLOCK (self);

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

  GST_OBJECT_LOCK (self);
  self->frames_inferred++;
  self->total_latency_us += latency_us;
  self->last_latency_us = latency_us;
  GST_OBJECT_UNLOCK (self);
}

/* Reads batch slot `slot` of the element's own session into a result for
 * `buf` and publishes it. */
static void
finish_frame (GstHybridInfer * self, GstBuffer * buf, guint64 frame,
    gint slot, gint64 start_us)
{
  GstHybridResultFrame details = frame_details (self, buf, frame);
  guint top_k;
  gfloat threshold;
  gboolean grew;

  details.latency_us = (gdouble) (g_get_monotonic_time () - start_us);
  GST_OBJECT_LOCK (self);
  top_k = self->settings.top_k;
  threshold = self->settings.threshold;
  GST_OBJECT_UNLOCK (self);

  GstHybridResult *result = gst_hybrid_session_result (self->session, slot,
      NULL, &details, top_k, threshold, &grew);
  if (grew)
    GST_DEBUG_OBJECT (self, "every result block held: one more");
  publish_result (self, buf, result, details.latency_us);
}

/* A forward that failed: the error, posted (and freed). */
static void
post_frame_error (GstHybridInfer * self, GError * error, guint64 frame)
{
  gchar *what = g_strdup_printf ("forward of frame %" G_GUINT64_FORMAT,
      frame);
  post_error (self, error, what);
  g_free (what);
  g_error_free (error);
}

/* ---- on regions of interest ------------------------------------------------ */

/* inference-region=roi: every region of the frame the classes take runs
 * through the model, its result added to its meta (infer-roi.h). */
static GstFlowReturn
infer_regions (GstHybridInfer * self, GstBuffer * buf, guint64 frame)
{
  GstHybridRoiFrame f = {.details = frame_details (self, buf, frame) };
  GstVideoFrame mapped;
  GError *error = NULL;
  guint n_done;
  if (!gst_buffer_get_meta (buf, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    return GST_FLOW_OK;         /* nothing to look at: not even mapped */
  if (!map_frame (self, buf, &mapped, f.planes, f.strides))
    return GST_FLOW_ERROR;
  f.width = GST_VIDEO_FRAME_WIDTH (&mapped);
  f.height = GST_VIDEO_FRAME_HEIGHT (&mapped);
  GST_OBJECT_LOCK (self);
  f.top_k = self->settings.top_k;
  f.threshold = self->settings.threshold;
  f.mode = self->settings.mode;
  GST_OBJECT_UNLOCK (self);
  gint64 start = g_get_monotonic_time ();
  gboolean ok = gst_hybrid_roi_infer (self->roi, self->session, buf, &f,
      &n_done, &error);
  gst_video_frame_unmap (&mapped);
  if (!ok) {
    post_frame_error (self, error, frame);
    return GST_FLOW_ERROR;
  }
  if (n_done) {
    gdouble latency = (gdouble) (g_get_monotonic_time () - start);
    GST_OBJECT_LOCK (self);
    self->frames_inferred++;
    self->total_latency_us += latency;
    self->last_latency_us = latency;
    GST_OBJECT_UNLOCK (self);
  }
  return GST_FLOW_OK;
}

/* ---- on an engine ---------------------------------------------------------- */

/* skip-when-busy: the result of a frame that went on earlier, once the
 * engine has it, becomes the one frames carry. */
static gboolean
take_engine_result (GstHybridInfer * self)
{
  GError *error = NULL;
  GstHybridResult *result =
      gst_hybrid_engine_client_take_result (self->client, &error);
  if (error) {
    post_frame_error (self, error, self->frame_count);
    return FALSE;
  }
  if (result) {
    gdouble latency = 0;
    gst_structure_get_double (result->results, "latency-us", &latency);
    publish_result (self, NULL, result, latency);
  }
  return TRUE;
}

/* A frame on an engine: it waits for its result, or (skip-when-busy) it is
 * handed over, or skipped when the engine is busy, and goes on with the
 * newest result. */
static GstFlowReturn
infer_on_engine (GstHybridInfer * self, GstBuffer * buf, guint64 frame,
    gboolean wanted)
{
  GstHybridEngineRequest request = {.frame = frame_details (self, buf, frame) };
  GstVideoFrame mapped;
  const uint8_t *planes[3];
  int strides[3];
  GError *error = NULL;

  if (self->skip_when_busy && !take_engine_result (self))
    return GST_FLOW_ERROR;
  if (!wanted) {
    carry_last (self, buf);
    return GST_FLOW_OK;
  }
  GST_OBJECT_LOCK (self);
  request.top_k = self->settings.top_k;
  request.threshold = self->settings.threshold;
  request.timeout_ms = self->settings.batch_timeout_ms;
  GST_OBJECT_UNLOCK (self);
  if (!map_frame (self, buf, &mapped, planes, strides))
    return GST_FLOW_ERROR;

  if (self->skip_when_busy) {
    gboolean taken = gst_hybrid_engine_client_try_submit (self->client,
        planes, strides, &request);
    gst_video_frame_unmap (&mapped);
    if (!taken) {
      GST_OBJECT_LOCK (self);
      self->frames_skipped++;
      GST_OBJECT_UNLOCK (self);
    }
    carry_last (self, buf);
    return GST_FLOW_OK;
  }

  gint64 start = g_get_monotonic_time ();
  GstHybridResult *result = gst_hybrid_engine_client_infer (self->client,
      planes, strides, &request, &error);
  gst_video_frame_unmap (&mapped);
  if (!result) {
    post_frame_error (self, error, frame);
    return GST_FLOW_ERROR;
  }
  publish_result (self, buf, result,
      (gdouble) (g_get_monotonic_time () - start));
  return GST_FLOW_OK;
}

static GstFlowReturn
gst_hybrid_infer_transform_ip (GstBaseTransform * trans, GstBuffer * buf)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);
  guint64 frame = self->frame_count++;

  if (self->client)
    return infer_on_engine (self, buf, frame, wants_inference (self, frame));
  if (self->roi)
    return wants_inference (self, frame) ? infer_regions (self, buf, frame)
        : GST_FLOW_OK;
  if (!wants_inference (self, frame)) {
    carry_last (self, buf);
    return GST_FLOW_OK;
  }
  gint64 start = g_get_monotonic_time ();
  if (!load_frame (self, buf, 0) || !run_forward (self, frame, frame))
    return GST_FLOW_ERROR;
  finish_frame (self, buf, frame, 0, start);
  return GST_FLOW_OK;
}

/* ---- batches ------------------------------------------------------------------- */

/* Runs the batch (full, or partial when draining) and moves every pending
 * frame, results attached, to the ready queue. */
static gboolean
complete_batch (GstHybridInfer * self)
{
  GstHybridPendingFrame p;
  guint64 first, last;
  if (gst_hybrid_batch_inferred_range (self->batch, &first, &last)
      && !run_forward (self, first, last))
    return FALSE;
  while (gst_hybrid_batch_pop_pending (self->batch, &p)) {
    if (p.slot >= 0)
      finish_frame (self, p.buffer, p.frame_number, p.slot, p.start_us);
    else
      carry_last (self, p.buffer);
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
 * oldest held frame; disarms it when none is held.  Streaming thread. */
static void
update_flush_deadline (GstHybridInfer * self)
{
  gboolean held = gst_hybrid_batch_has_pending (self->batch);
  guint timeout_ms;
  GST_OBJECT_LOCK (self);
  timeout_ms = self->settings.batch_timeout_ms;
  GST_OBJECT_UNLOCK (self);
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
queue_frame (GstHybridInfer * self, GstBuffer * buf)
{
  GstHybridPendingFrame p = {
    .buffer = gst_buffer_make_writable (buf),
    .frame_number = self->frame_count++,
    .slot = -1,
    .start_us = g_get_monotonic_time (),
  };
  if (wants_inference (self, p.frame_number)) {
    p.slot = gst_hybrid_batch_next_slot (self->batch);
    if (!load_frame (self, p.buffer, p.slot)) {
      gst_buffer_unref (p.buffer);
      return GST_FLOW_ERROR;
    }
  }
  gst_hybrid_batch_add (self->batch, &p);
  if ((gst_hybrid_batch_is_full (self->batch)
          || pool_exhausted (self, p.buffer)) && !complete_batch (self))
    return GST_FLOW_ERROR;
  update_flush_deadline (self);
  return GST_FLOW_OK;
}

/* Batch size 1 is the plain in-place path (transform_ip); above 1 frames
 * wait in `pending` and leave, in order, once their batch has run. */
static GstFlowReturn
gst_hybrid_infer_generate_output (GstBaseTransform * trans,
    GstBuffer ** outbuf)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);

  if (!self->session || self->roi
      || gst_hybrid_session_batch (self->session) == 1)
    return GST_BASE_TRANSFORM_CLASS (parent_class)->generate_output (trans,
        outbuf);
  *outbuf = NULL;
  /* a timed flush's push failed: upstream hears it with this frame */
  if (self->flush_ret != GST_FLOW_OK) {
    GstFlowReturn ret = self->flush_ret;
    self->flush_ret = GST_FLOW_OK;
    return ret;
  }
  if (trans->queued_buf) {
    GstBuffer *buf = trans->queued_buf;
    trans->queued_buf = NULL;
    GstFlowReturn ret = queue_frame (self, buf);
    if (ret != GST_FLOW_OK)
      return ret;
  }
  *outbuf = gst_hybrid_batch_pop_ready (self->batch);
  return GST_FLOW_OK;
}

/* Runs a partial batch and pushes what waited, so that a serialized event
 * (caps, segment, EOS…) stays behind the frames that came before it. */
static GstFlowReturn
drain (GstHybridInfer * self)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  GstBuffer *buf;
  GstFlowReturn ret = GST_FLOW_OK;
  if (!self->batch || !gst_hybrid_batch_has_pending (self->batch))
    return GST_FLOW_OK;
  if (!complete_batch (self)) {
    drop_pending (self);
    ret = GST_FLOW_ERROR;
    goto done;
  }
  while ((buf = gst_hybrid_batch_pop_ready (self->batch))) {
    ret = gst_pad_push (trans->srcpad, buf);
    if (ret != GST_FLOW_OK) {
      GST_DEBUG_OBJECT (self, "drain push: %s", gst_flow_get_name (ret));
      drop_pending (self);
      break;
    }
  }
done:
  update_flush_deadline (self);
  return ret;
}

/* Runs a partial batch whose oldest frame waited batch-timeout.  It takes
 * the sink pad's stream lock, as a chain call holds it: the batch, the
 * session and the source pad are used by one thread at a time. */
static gpointer
flush_thread_func (gpointer data)
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
      GstFlowReturn ret = drain (self);
      if (ret != GST_FLOW_OK && ret != GST_FLOW_FLUSHING)
        self->flush_ret = ret;
    }
    GST_PAD_STREAM_UNLOCK (trans->sinkpad);
    g_mutex_lock (&self->flush_lock);
  }
  g_mutex_unlock (&self->flush_lock);
  return NULL;
}

/* ---- hot reload ---------------------------------------------------------- */

/* What a reload asks for: the model, params and labels as set, and the
 * settings bits they mark. */
typedef struct
{
  gchar *model, *params, *labels;
  guint mask;
} GstHybridReload;

static void
reload_clear (GstHybridReload * r)
{
  g_free (r->model);
  g_free (r->params);
  g_free (r->labels);
}

/* Loads and plans a session as start() does, with the settings as they
 * are now but model, params and labels from the request, for the frames
 * of the current caps when there are some.  Loader thread, no lock held:
 * this is the slow part, and the streaming thread runs on meanwhile.
 * NULL + error, with *what saying what was being done. */
static GstHybridSession *
load_session (GstHybridInfer * self, GstHybridInferSettings * copy,
    const GstHybridFrameFormat * format, gchar ** what, GError ** error)
{
  GstHybridSessionConfig config;
  GstHybridSession *session;
  char *note = NULL;

  if (!apply_sidecar (self, copy, error)) {
    *what = g_strdup_printf ("the sidecar of model %s", copy->model);
    return NULL;
  }
  if (!gst_hybrid_infer_settings_to_config (copy, &config, error)) {
    *what = g_strdup_printf ("model %s: invalid property value",
        copy->model);
    return NULL;
  }
  session = gst_hybrid_session_new (&config, &note, error);
  if (!session) {
    *what = g_strdup_printf ("model %s", config.model_path);
    g_free (note);
    return NULL;
  }
  if (note)
    GST_INFO_OBJECT (self, "%s", note);
  g_free (note);
  if (format && !set_frame_format (session, format, error)) {
    *what = g_strdup_printf ("model %s for frames of %dx%d", copy->model,
        format->width, format->height);
    gst_hybrid_session_free (session);
    return NULL;
  }
  check_labels (self, session);
  return session;
}

/* Puts `session` in place of the running one between two frames: under
 * the sink pad's stream lock, as a chain call holds it.  Frames held for
 * a batch run first, on the model they were loaded for.  FALSE when the
 * element stopped meanwhile (error unset), or the caps changed and the new
 * session cannot take the new frames (error set); the session is then
 * freed. */
static gboolean
swap_session (GstHybridInfer * self, GstHybridSession * session,
    GstHybridReload * want, guint64 frame_serial, gchar ** what,
    GError ** error)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  GstHybridFrameFormat format;
  gboolean quit, known, caps_changed;
  GstHybridSession *old;
  GstHybridInferSettings *s = &self->settings;
  gint64 arena;

  GST_PAD_STREAM_LOCK (trans->sinkpad);
  GST_OBJECT_LOCK (self);
  quit = self->reload_quit;
  known = self->frame_known;
  caps_changed = self->frame_serial != frame_serial;
  format = self->frame_format;
  GST_OBJECT_UNLOCK (self);
  if (quit)
    goto drop;
  /* rare: new caps came while loading; planning for them here is the one
   * time the stream waits on a reload */
  if (known && caps_changed && !set_frame_format (session, &format, error)) {
    *what = g_strdup_printf ("model %s for frames of %dx%d", want->model,
        format.width, format.height);
    goto drop;
  }
  if (self->batch && gst_hybrid_batch_has_pending (self->batch)) {
    GstFlowReturn ret = drain (self);
    if (ret != GST_FLOW_OK && ret != GST_FLOW_FLUSHING)
      self->flush_ret = ret;
  }
  old = self->session;
  self->session = session;
  /* the frames an interval skips carry the new model's result, not the
   * old one's */
  g_clear_pointer (&self->last, gst_hybrid_result_unref);
  gst_caps_replace (&self->failed_caps, NULL);
  arena = gst_hybrid_session_arena_bytes (session);
  GST_OBJECT_LOCK (self);
  g_free (s->model);
  g_free (s->params);
  g_free (s->labels);
  s->model = g_strdup (want->model);
  s->params = g_strdup (want->params);
  s->labels = g_strdup (want->labels);
  s->set_mask |= want->mask;
  self->arena_bytes = arena;
  GST_OBJECT_UNLOCK (self);
  GST_PAD_STREAM_UNLOCK (trans->sinkpad);
  /* results on buffers downstream outlive their session (the pool is
   * closed, not freed) */
  gst_hybrid_session_free (old);
  return TRUE;

drop:
  GST_PAD_STREAM_UNLOCK (trans->sinkpad);
  gst_hybrid_session_free (session);
  return FALSE;
}

/* The loader: one request at a time, the newest values.  A request made
 * while one loads supersedes it (its session is dropped unposted), so
 * that `model` and `labels` set together load once. */
static gpointer
reload_thread_func (gpointer data)
{
  GstHybridInfer *self = data;

  GST_OBJECT_LOCK (self);
  while (!self->reload_quit) {
    if (self->reload_serial == self->reload_done) {
      g_cond_wait (&self->reload_cond, GST_OBJECT_GET_LOCK (self));
      continue;
    }
    guint64 serial = self->reload_serial;
    guint64 frame_serial = self->frame_serial;
    GstHybridFrameFormat format = self->frame_format;
    gboolean known = self->frame_known;
    GstHybridReload want = {
      g_strdup (self->want_model), g_strdup (self->want_params),
      g_strdup (self->want_labels), self->want_mask
    };
    GstHybridInferSettings copy;
    gst_hybrid_infer_settings_snapshot (&self->settings, &copy);
    GST_OBJECT_UNLOCK (self);

    g_free (copy.model);
    g_free (copy.params);
    g_free (copy.labels);
    copy.model = g_strdup (want.model);
    copy.params = g_strdup (want.params);
    copy.labels = g_strdup (want.labels);
    copy.set_mask |= want.mask;
    GError *error = NULL;
    gchar *what = NULL;
    gboolean swapped = FALSE, superseded;
    GST_INFO_OBJECT (self, "loading model %s", want.model);
    GstHybridSession *session = load_session (self, &copy,
        known ? &format : NULL, &what, &error);
    gst_hybrid_infer_settings_clear (&copy);

    GST_OBJECT_LOCK (self);
    superseded = self->reload_serial != serial || self->reload_quit;
    GST_OBJECT_UNLOCK (self);
    if (superseded) {
      GST_DEBUG_OBJECT (self, "model %s superseded while loading",
          want.model);
      gst_hybrid_session_free (session);
    } else if (session) {
      swapped = swap_session (self, session, &want, frame_serial, &what,
          &error);
    }
    if (swapped) {
      GST_INFO_OBJECT (self, "model %s took over", want.model);
      gst_element_post_message (GST_ELEMENT (self),
          gst_message_new_element (GST_OBJECT (self),
              gst_structure_new ("hybridinfer-model-reloaded",
                  "model", G_TYPE_STRING, want.model,
                  "params", G_TYPE_STRING, want.params,
                  "labels", G_TYPE_STRING, want.labels, NULL)));
      g_object_notify (G_OBJECT (self), "model");
    } else if (error && !superseded) {
      gchar *detail = g_strdup_printf ("%s; the running model stays", what);
      post_warning (self, error, detail);
      g_free (detail);
    }
    g_clear_error (&error);
    g_free (what);

    GST_OBJECT_LOCK (self);
    self->reload_done = MAX (self->reload_done, serial);
    /* a failed request is forgotten: the next one starts from the
     * model running, not from the one that failed */
    if (!swapped && !superseded && self->reload_serial == serial) {
      g_free (self->want_model);
      g_free (self->want_params);
      g_free (self->want_labels);
      self->want_model = g_strdup (self->settings.model);
      self->want_params = g_strdup (self->settings.params);
      self->want_labels = g_strdup (self->settings.labels);
      self->want_mask = 0;
    } else if (swapped && self->reload_serial == serial) {
      self->want_mask = 0;
    }
    reload_clear (&want);
  }
  GST_OBJECT_UNLOCK (self);
  return NULL;
}

/* Going down: an element on a shared engine stops counting as a stream
 * that will send frames, before its pads deactivate (which waits for a
 * streaming thread that may be waiting for its batch). */
static GstStateChangeReturn
gst_hybrid_infer_change_state (GstElement * element,
    GstStateChange transition)
{
  GstHybridInfer *self = GST_HYBRID_INFER (element);
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY && self->client)
    gst_hybrid_engine_client_idle (self->client);
  return GST_ELEMENT_CLASS (parent_class)->change_state (element,
      transition);
}

static gboolean
gst_hybrid_infer_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  GstHybridInfer *self = GST_HYBRID_INFER (trans);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_EOS:
      /* the engine's partial batches stop waiting for this stream */
      if (self->client)
        gst_hybrid_engine_client_idle (self->client);
      drain (self);
      break;
    case GST_EVENT_FLUSH_STOP:
      drop_pending (self);
      self->flush_ret = GST_FLOW_OK;
      if (self->batch)
        update_flush_deadline (self);
      break;
    default:
      if (GST_EVENT_IS_SERIALIZED (event))
        drain (self);
      break;
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}
