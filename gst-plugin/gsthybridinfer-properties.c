/*
 * gsthybridinfer-properties.c — hybridinfer's properties: their specs,
 * set and get, and what a started element does with a change (applies it
 * from the next frame, reloads the model, or refuses it).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsthybridinfer-private.h"
#include "gsthybridinfer-enums.h"
#include "property-parse.h"

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

/* Every property, with what may change while playing
 * (GST_PARAM_MUTABLE_PLAYING: set_while_started lets them through). */
void
gst_hybrid_infer_install_properties (GObjectClass * gobject_class)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  const GParamFlags ready = rw | GST_PARAM_MUTABLE_READY;
  const GParamFlags playing = rw | GST_PARAM_MUTABLE_PLAYING;
  /* model, params and labels notify when their value runs: set while
   * stopped, at once; while playing, when the reload takes over
   * (infer-runner-reload.c), never for one that fails */
  const GParamFlags reloads = playing | G_PARAM_EXPLICIT_NOTIFY;
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  g_object_class_install_property (gobject_class, PROP_MODEL,
      g_param_spec_string ("model", "Model",
          "The model: a Gluon export's symbol file (prefix-symbol.json) "
          "or an ONNX model (prefix.onnx, no params); set while "
          "playing, the new model loads in the background and takes over "
          "at a frame boundary", NULL,
          reloads));
  g_object_class_install_property (gobject_class, PROP_PARAMS,
      g_param_spec_string ("params", "Parameters",
          "The parameters file (default: the newest prefix-NNNN.params "
          "beside the model)", NULL, reloads));
  g_object_class_install_property (gobject_class, PROP_LABELS,
      g_param_spec_string ("labels", "Labels",
          "Text file with one class label per line (line N is class N)",
          NULL, reloads));
  g_object_class_install_property (gobject_class, PROP_DEVICE,
      g_param_spec_string ("device", "Device",
          "Where to run: auto (the GPU when one works, else the CPU), "
          "cpu, cuda or cuda:N", DEFAULT_DEVICE, ready));
  g_object_class_install_property (gobject_class, PROP_PRECISION,
      g_param_spec_enum ("precision", "Precision",
          "Arithmetic precision: fp16 runs on a GPU only",
          GST_TYPE_HYBRID_INFER_PRECISION, DEFAULT_PRECISION, ready));
  g_object_class_install_property (gobject_class, PROP_QDQ,
      g_param_spec_enum ("qdq", "QDQ models",
          "How an ONNX QDQ file (QuantizeLinear/DequantizeLinear around "
          "float ops) runs: on the int8 layers, its scales as their "
          "ranges, or each pair in float as written",
          GST_TYPE_HYBRID_INFER_QDQ, DEFAULT_QDQ, ready));
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
  g_object_class_install_property (gobject_class, PROP_STATS_INTERVAL,
      g_param_spec_uint ("stats-interval", "Stats interval",
          "Post a hybridinfer-stats element message every this many ms "
          "(fps in and inferred, latency p50/p99, skipped frames); 0: off",
          0, G_MAXUINT, DEFAULT_STATS_INTERVAL, playing));
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
  g_object_class_install_property (gobject_class, PROP_IOU_THRESHOLD,
      g_param_spec_float ("iou-threshold", "IoU threshold",
          "Detection heads decoded with NMS (YOLOv8's (B, 4+classes, N)): "
          "a box overlapping a better one of its class by more than this "
          "intersection over union is dropped", 0.0f, 1.0f,
          DEFAULT_IOU_THRESHOLD, ready));
  g_object_class_install_property (gobject_class, PROP_CLASS_THRESHOLDS,
      g_param_spec_string ("class-thresholds", "Class thresholds",
          "Per class, the lowest score it is reported with, overriding "
          "threshold for detections; for a classification, the score a "
          "class must reach to be among the top-k: \"CLASS=SCORE,...\" "
          "with CLASS a label or a class id, e.g. \"person=0.6,car=0.4\"",
          NULL, playing));
  g_object_class_install_property (gobject_class, PROP_POST_MESSAGES,
      g_param_spec_boolean ("post-messages", "Post messages",
          "Post a \"hybridinfer\" element message per inferred frame "
          "(off by default: a bus nobody reads keeps every one; each "
          "buffer carries its result as GstHybridTensorMeta)",
          DEFAULT_POST_MESSAGES, playing));
  g_object_class_install_property (gobject_class, PROP_MESSAGE_JSON,
      g_param_spec_boolean ("message-json", "Message JSON",
          "With post-messages: each message also carries the buffer's "
          "results as hybridpublish's JSON object in its string field "
          "\"json\" (for bindings that cannot read typed lists); costs "
          "json-glib's allocations per message (off by default)",
          DEFAULT_MESSAGE_JSON, playing));
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
}

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
  gboolean model_or_mode = prop_id == PROP_MODEL || prop_id == PROP_PARAMS
      || prop_id == PROP_LABELS || prop_id == PROP_MODE;
  if (model_or_mode && gst_hybrid_runner_on_engine (self->runner)) {
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
      gst_hybrid_runner_request_swap (self->runner,
          prop_id == PROP_MODEL ? GST_HYBRID_SWAP_MODEL
          : prop_id == PROP_PARAMS ? GST_HYBRID_SWAP_PARAMS
          : GST_HYBRID_SWAP_LABELS, g_value_get_string (value));
      GST_OBJECT_UNLOCK (self);
      GST_DEBUG_OBJECT (self, "%s set while running: reloading",
          g_param_spec_get_name (pspec));
      return TRUE;
    case PROP_DEVICE:
    case PROP_PRECISION:
    case PROP_QDQ:
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
    case PROP_IOU_THRESHOLD:
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

void
gst_hybrid_infer_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstHybridInfer *self = GST_HYBRID_INFER (object);
  GstHybridInferSettings *s = &self->settings;

  GST_OBJECT_LOCK (self);
  if (self->runner && set_while_started (self, prop_id, pspec, value))
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
    case PROP_QDQ:
      s->qdq = g_value_get_enum (value);
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
    case PROP_STATS_INTERVAL:
      s->stats_interval_ms = g_value_get_uint (value);
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
    case PROP_IOU_THRESHOLD:
      s->iou_threshold = g_value_get_float (value);
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
    case PROP_MESSAGE_JSON:
      s->message_json = g_value_get_boolean (value);
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
    case PROP_CLASS_THRESHOLDS:
      /* the next frame's settings carry it to the runner, which looks
       * it up in the labels of the model that runs */
      g_free (s->class_thresholds);
      s->class_thresholds = g_value_dup_string (value);
      self->class_thresholds_dirty = TRUE;
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
  if (pspec->flags & G_PARAM_EXPLICIT_NOTIFY)
    g_object_notify_by_pspec (object, pspec);
}

void
gst_hybrid_infer_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstHybridInfer *self = GST_HYBRID_INFER (object);
  GstHybridInferSettings *s = &self->settings;
  GstHybridRunnerStats stats;

  GST_OBJECT_LOCK (self);
  if (self->runner)
    gst_hybrid_runner_read_stats (self->runner, &stats);
  else
    stats = self->stopped_stats;
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
    case PROP_QDQ:
      g_value_set_enum (value, s->qdq);
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
    case PROP_STATS_INTERVAL:
      g_value_set_uint (value, s->stats_interval_ms);
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
    case PROP_IOU_THRESHOLD:
      g_value_set_float (value, s->iou_threshold);
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
    case PROP_MESSAGE_JSON:
      g_value_set_boolean (value, s->message_json);
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
    case PROP_CLASS_THRESHOLDS:
      g_value_set_string (value, s->class_thresholds);
      break;
    case PROP_FRAMES_INFERRED:
      g_value_set_uint64 (value, stats.frames_inferred);
      break;
    case PROP_FRAMES_SKIPPED:
      g_value_set_uint64 (value, stats.frames_skipped);
      break;
    case PROP_MEAN_LATENCY_US:
      g_value_set_double (value, stats.frames_inferred ?
          stats.total_latency_us / stats.frames_inferred : 0.0);
      break;
    case PROP_LAST_LATENCY_US:
      g_value_set_double (value, stats.last_latency_us);
      break;
    case PROP_ARENA_BYTES:
      g_value_set_int64 (value, stats.arena_bytes);
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
