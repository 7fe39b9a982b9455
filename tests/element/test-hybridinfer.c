/*
 * test-hybridinfer.c — the hybridinfer element through GstHarness.
 *
 * Caps, every property (defaults, round trips, type errors GObject warns
 * about, semantic errors the element reports on the bus), classification
 * and detection results, the tensor meta and its lifetime (results in
 * reused blocks held in any order), bus messages,
 * interval and batch-size, mode switched while playing (with dumps only
 * for the requested frames), renegotiation, statistics and warnings.
 * Results are checked here for their meaning (a red frame is "red");
 * check_mxnet.py compares the numbers with real MXNet.
 */
#include <math.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "element-util.h"

#if HY_HAS_ASAN
/* The out-of-memory tests ask for more than a machine has.  Under ASan,
 * where an address-space limit cannot be set, a single allocation over
 * 64 GiB fails (returns NULL) however the kernel overcommits, so that
 * nothing that large is ever touched. */
const char *__asan_default_options (void);
const char *
__asan_default_options (void)
{
  return "allocator_may_return_null=1:max_allocation_size_mb=65536";
}
#endif

/* ---- registration and caps ---------------------------------------------- */

GST_START_TEST (test_registered_from_build_tree)
{
  const gchar *dir = g_getenv ("HY_PLUGIN_DIR");
  fail_unless (dir != NULL);
  for (guint i = 0; i < 2; i++) {
    const gchar *name = i ? "hybridoverlay" : "hybridinfer";
    GstElementFactory *f = gst_element_factory_find (name);
    fail_unless (f != NULL, "%s not registered", name);
    GstPlugin *plugin = gst_plugin_feature_get_plugin (GST_PLUGIN_FEATURE (f));
    fail_unless (g_str_has_prefix (gst_plugin_get_filename (plugin), dir),
        "%s comes from %s", name, gst_plugin_get_filename (plugin));
    gst_object_unref (plugin);
    gst_object_unref (f);
  }
}

GST_END_TEST;

static const gchar *all_formats[] = {
  "RGB", "BGR", "RGBx", "BGRx", "xRGB", "xBGR", "RGBA", "BGRA", "NV12",
  "I420", "GRAY8",
};

GST_START_TEST (test_caps_accepts_video_formats)
{
  GstElement *e = infer_new ("colors-shaped");
  GstHarness *h = harness_for (e, NULL);
  GstPad *sink = gst_element_get_static_pad (h->element, "sink");
  for (guint i = 0; i < G_N_ELEMENTS (all_formats); i++) {
    gchar *s = caps_string (all_formats[i], 37, 21);
    GstCaps *caps = gst_caps_from_string (s);
    fail_unless (gst_pad_query_accept_caps (sink, caps), "%s refused", s);
    gst_caps_unref (caps);
    g_free (s);
  }
  GstCaps *yuy2 = gst_caps_from_string ("video/x-raw,format=YUY2,"
      "width=32,height=32,framerate=30/1");
  fail_if (gst_pad_query_accept_caps (sink, yuy2));
  gst_caps_unref (yuy2);
  GstCaps *audio = gst_caps_from_string ("audio/x-raw");
  fail_if (gst_pad_query_accept_caps (sink, audio));
  gst_caps_unref (audio);
  gst_object_unref (sink);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Every format runs, frames leave unchanged, results come with them. */
GST_START_TEST (test_every_format_passes_through)
{
  for (guint i = 0; i < G_N_ELEMENTS (all_formats); i++) {
    GstElement *e = infer_new ("colors-shaped");
    GstHarness *h = harness_for (e, NULL);
    gchar *src = g_strdup_printf ("videotestsrc is-live=true pattern=red ! "
        "capsfilter caps=\"video/x-raw,format=%s,width=45,height=31\"",
        all_formats[i]);
    gst_harness_add_src_parse (h, src, TRUE);
    fail_unless_equals_int (gst_harness_push_from_src (h), GST_FLOW_OK);
    GstBuffer *out = gst_harness_pull (h);
    /* red turns gray once only its luma is left */
    const gchar *expected = strcmp (all_formats[i], "GRAY8") ? "red" : "gray";
    fail_unless_equals_string (top_label (out), expected);
    gst_buffer_unref (out);
    g_free (src);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

GST_START_TEST (test_buffer_data_untouched)
{
  GstElement *e = infer_new ("colors-shaped");
  GstHarness *h = harness_for (e, NULL);
  set_caps (h, "RGBx", 40, 30);
  GstBuffer *in = frame_new ("RGBx", 40, 30, pick_quadrants, 0);
  GstMapInfo map;
  gst_buffer_map (in, &map, GST_MAP_READ);
  gpointer before = g_memdup2 (map.data, map.size);
  gsize size = map.size;
  gst_buffer_unmap (in, &map);
  GstBuffer *out = gst_harness_push_and_pull (h, in);
  gst_buffer_map (out, &map, GST_MAP_READ);
  fail_unless_equals_int (map.size, size);
  fail_unless (memcmp (map.data, before, size) == 0);
  gst_buffer_unmap (out, &map);
  gst_buffer_unref (out);
  g_free (before);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* ---- properties -------------------------------------------------------------- */

GST_START_TEST (test_property_defaults)
{
  GstElement *e = gst_element_factory_make ("hybridinfer", NULL);
  gchar *model, *params, *labels, *device, *dump_dir, *dump_frames,
      *input_name, *input_size;
  gint mode, order, scale, resize, interp, output;
  guint interval, batch, top_k;
  gfloat threshold;
  gboolean post;
  guint64 inferred;
  gdouble mean_latency, last_latency;
  gint64 arena;
  g_object_get (e, "model", &model, "params", &params, "labels", &labels,
      "device", &device, "mode", &mode, "dump-dir", &dump_dir,
      "dump-frames", &dump_frames, "input-name", &input_name,
      "input-size", &input_size, "color-order", &order, "scale", &scale,
      "resize", &resize, "interpolation", &interp, "interval", &interval,
      "batch-size", &batch, "output", &output, "top-k", &top_k,
      "threshold", &threshold, "post-messages", &post,
      "frames-inferred", &inferred, "mean-latency-us", &mean_latency,
      "last-latency-us", &last_latency, "arena-bytes", &arena, NULL);
  fail_unless (model == NULL && params == NULL && labels == NULL);
  fail_unless_equals_string (device, "auto");
  fail_unless (dump_dir == NULL && dump_frames == NULL);
  fail_unless (input_name == NULL && input_size == NULL);
  fail_unless_equals_int (mode, 0);     /* hybrid */
  fail_unless_equals_int (order, 0);    /* rgb */
  fail_unless_equals_int (scale, 0);    /* 0-255 */
  fail_unless_equals_int (resize, 0);   /* stretch */
  fail_unless_equals_int (interp, 0);   /* bilinear */
  fail_unless_equals_int (output, 0);   /* auto */
  fail_unless_equals_int (interval, 1);
  fail_unless_equals_int (batch, 1);
  fail_unless_equals_int (top_k, 1);    /* the best class, not 4 more */
  fail_unless_equals_float (threshold, 0.5f);
  fail_unless (!post);          /* opt-in: an unread bus must not grow */
  fail_unless (inferred == 0 && mean_latency == 0 && last_latency == 0
      && arena == 0);
  GValue mean = G_VALUE_INIT;
  g_value_init (&mean, GST_TYPE_ARRAY);
  g_object_get_property (G_OBJECT (e), "mean", &mean);
  fail_unless_equals_int (gst_value_array_get_size (&mean), 1);
  fail_unless_equals_float (g_value_get_double (gst_value_array_get_value
          (&mean, 0)), 0.0);
  g_value_unset (&mean);
  GValue std = G_VALUE_INIT;
  g_value_init (&std, GST_TYPE_ARRAY);
  g_object_get_property (G_OBJECT (e), "std", &std);
  fail_unless_equals_int (gst_value_array_get_size (&std), 1);
  fail_unless_equals_float (g_value_get_double (gst_value_array_get_value
          (&std, 0)), 1.0);
  g_value_unset (&std);
  gint precision;
  gchar *class_thresholds;
  g_object_get (e, "precision", &precision, "class-thresholds",
      &class_thresholds, NULL);
  fail_unless_equals_int (precision, 0);        /* fp32 */
  fail_unless (class_thresholds == NULL);       /* threshold for all */
  g_free (device);
  gst_object_unref (e);
}

GST_END_TEST;

/* What gst-launch does: each property from text, read back as text. */
GST_START_TEST (test_property_round_trip)
{
  static const struct {
    const gchar *name, *text, *expect;
  } cases[] = {
    {"model", "/x/m-symbol.json", NULL}, {"params", "/x/m-0003.params", NULL},
    {"labels", "/x/l.txt", NULL}, {"device", "cuda:1", NULL},
    {"mode", "imperative", NULL}, {"dump-dir", "/tmp/d", NULL},
    {"dump-frames", "0-9,100", NULL}, {"input-name", "data", NULL},
    {"input-size", "320x240", NULL}, {"color-order", "bgr", NULL},
    {"scale", "0-1", NULL}, {"resize", "letterbox", NULL},
    {"interpolation", "nearest", NULL}, {"interval", "5", NULL},
    {"batch-size", "8", NULL}, {"output", "detection", NULL},
    {"top-k", "3", NULL}, {"threshold", "0.25", NULL},
    {"post-messages", "false", NULL}, {"precision", "fp16", NULL},
    {"shared-engine", "cams", NULL}, {"skip-when-busy", "true", NULL},
    {"class-thresholds", "person=0.6,7=0.4", NULL},
    {"mean", "<0.485,0.456,0.406>", "< (double)0.48499999999999999, "
          "(double)0.45600000000000002, (double)0.40600000000000003 >"},
    {"std", "<58>", "< (double)58 >"},
  };
  GstElement *e = gst_element_factory_make ("hybridinfer", NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    GParamSpec *spec = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
        cases[i].name);
    fail_unless (spec != NULL, "no property %s", cases[i].name);
    fail_unless (g_param_spec_get_blurb (spec)
        && strlen (g_param_spec_get_blurb (spec)) > 10,
        "%s has no description", cases[i].name);
    gst_util_set_object_arg (G_OBJECT (e), cases[i].name, cases[i].text);
    GValue v = G_VALUE_INIT;
    g_value_init (&v, spec->value_type);
    g_object_get_property (G_OBJECT (e), cases[i].name, &v);
    gchar *text;
    if (G_VALUE_HOLDS_STRING (&v))
      text = g_value_dup_string (&v);
    else if (G_VALUE_HOLDS_ENUM (&v))
      text = g_strdup (g_enum_get_value (g_type_class_peek (spec->value_type),
              g_value_get_enum (&v))->value_nick);
    else
      text = gst_value_serialize (&v);
    const gchar *expect = cases[i].expect ? cases[i].expect : cases[i].text;
    if (spec->value_type == G_TYPE_FLOAT) {
      fail_unless_equals_float (g_value_get_float (&v), 0.25f);
    } else {
      fail_unless_equals_string (text, expect);
    }
    g_free (text);
    g_value_unset (&v);
  }
  gst_object_unref (e);
}

GST_END_TEST;

/* Values of the wrong type or range: GObject warns and keeps the value. */
GST_START_TEST (test_property_type_errors)
{
  GstElement *e = gst_element_factory_make ("hybridinfer", NULL);
  guint interval, batch, top_k;
  ASSERT_WARNING (g_object_set (e, "interval", 0u, NULL));
  ASSERT_WARNING (g_object_set (e, "batch-size", 1000u, NULL));
  ASSERT_WARNING (g_object_set (e, "batch-size", 0u, NULL));
  ASSERT_WARNING (g_object_set (e, "top-k", 0u, NULL));
  ASSERT_WARNING (g_object_set (e, "mode", 7, NULL));
  ASSERT_WARNING (g_object_set (e, "frames-inferred", (guint64) 3, NULL));
  ASSERT_WARNING (g_object_set (e, "no-such-property", 1, NULL));
  g_object_get (e, "interval", &interval, "batch-size", &batch, "top-k",
      &top_k, NULL);
  fail_unless_equals_int (interval, 1);
  fail_unless_equals_int (batch, 1);
  fail_unless_equals_int (top_k, 1);
  gst_object_unref (e);

  /* gst-launch warns about a value out of range, as GObject does... */
  GstElement *p = NULL;
  ASSERT_WARNING (p = gst_parse_launch ("fakesrc ! hybridinfer interval=0 ! "
          "fakesink", NULL));
  gst_object_unref (p);
  /* ...and refuses what does not parse */
  static const gchar *bad[] = { "mode=sideways", "scale=0-2", "batch-size=x", "threshold=high", "resize=crop",
    "mean=0.5,0.5",
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    GError *error = NULL;
    gchar *desc = g_strdup_printf ("fakesrc ! hybridinfer %s ! fakesink",
        bad[i]);
    p = gst_parse_launch (desc, &error);
    fail_unless (error != NULL, "'%s' was accepted", bad[i]);
    g_clear_error (&error);
    if (p)
      gst_object_unref (p);
    g_free (desc);
  }
}

GST_END_TEST;

/* Runs `props` on a few frames; returns the error posted, or NULL when
 * the pipeline reached EOS.  An element reports a failure once: the
 * errors hybridinfer posted are counted once the pipeline has stopped
 * streaming (READY keeps the bus; NULL flushes it).  A caps-time error
 * used to be posted twice, as GStreamer sends the sticky caps again with
 * the next buffer. */
static GError *
pipeline_error (const gchar * props, const gchar * caps)
{
  GError *error = NULL;
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=3 ! %s ! "
      "hybridinfer name=h device=cpu %s ! fakesink", caps, props);
  GstElement *p = gst_parse_launch (desc, &error);
  fail_unless (p != NULL && error == NULL, "%s: %s", desc,
      error ? error->message : "");
  g_free (desc);
  gst_element_set_state (p, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND,
      GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  fail_unless (msg != NULL, "neither EOS nor an error");
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gst_message_parse_error (msg, &error, NULL);
    GstElement *h = gst_bin_get_by_name (GST_BIN (p), "h");
    fail_unless (GST_MESSAGE_SRC (msg) == GST_OBJECT (h));
    gst_object_unref (h);
  }
  gst_message_unref (msg);
  /* What matters is that the pipeline is in READY afterwards.  The return
   * value does not say: a pipeline whose preroll failed (a caps-time error
   * posted before it reached PAUSED) is in READY already, and asked for
   * READY again it returns that failed change's FAILURE once more, which
   * made this check fail about once in 25 runs. */
  gst_element_set_state (p, GST_STATE_READY);
  GST_OBJECT_LOCK (p);
  const GstState state = GST_STATE (p);
  GST_OBJECT_UNLOCK (p);
  fail_unless (state == GST_STATE_READY, "%s on %s: the pipeline is in %s, "
      "not READY", props, caps, gst_element_state_get_name (state));
  guint more = 0;
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR))) {
    GstElement *h = gst_bin_get_by_name (GST_BIN (p), "h");
    more += GST_MESSAGE_SRC (msg) == GST_OBJECT (h);
    gst_object_unref (h);
    gst_message_unref (msg);
  }
  fail_unless_equals_int (more, 0);
  /* errors must leave a pipeline that stops cleanly */
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (p);
  return error;
}

#define SETTINGS GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS
#define OPEN_READ GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ
#define READ GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ
#define UNSUPPORTED GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_FAILED
#define SHAPE GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT

GST_START_TEST (test_semantic_errors)
{
  gchar *dir = g_dir_make_tmp ("hy-errors-XXXXXX", NULL);
  gchar *broken = g_build_filename (dir, "broken-symbol.json", NULL);
  g_file_set_contents (broken, "{ \"nodes\": [ {\"op\": ", -1, NULL);
  /* Paths that are not regular files: refused at start, never read
   * (/dev/zero grew without end) or waited on (a FIFO blocked the state
   * change forever). */
  gchar *fifo = g_build_filename (dir, "fifo", NULL);
  fail_unless (mkfifo (fifo, 0600) == 0);
  gchar *colors = model_path ("colors");
  gchar *quadrants = model_path ("quadrants");
  gchar *lrn = model_path ("lrn");
  gchar *colors_labels = labels_path ("colors");
  const gchar *small = "video/x-raw,width=64,height=48";
  struct {
    gchar *props;
    const gchar *caps, *message;
    GQuark domain;
    gint code;
  } cases[] = {
    {g_strdup (""), small, "no model", SETTINGS},
    {g_strdup ("model=/nonexistent/m-symbol.json"), small, "nonexistent",
        OPEN_READ},
    {g_strdup_printf ("model=%s", broken), small, "broken-symbol.json", READ},
    {g_strdup_printf ("model=%s", lrn), small, "LRN", UNSUPPORTED},
    {g_strdup_printf ("model=%s device=tpu", colors), small, "device 'tpu'",
        SETTINGS},
    /* A GPU no machine here has: no CUDA in the build, no driver, or
     * too few GPUs all fail the same way, naming the device. */
    {g_strdup_printf ("model=%s device=cuda:7", colors), small,
        "device cuda:7", UNSUPPORTED},
    {g_strdup_printf ("model=%s device=cpu precision=fp16", colors), small,
        "precision fp16 needs a CUDA device", UNSUPPORTED},
    {g_strdup_printf ("model=%s input-size=0x5", colors), small,
        "input-size '0x5'", SETTINGS},
    {g_strdup_printf ("model=%s input-size=big", colors), small,
        "input-size 'big'", SETTINGS},
    {g_strdup_printf ("model=%s dump-frames=x-3", colors), small,
        "dump-frames 'x-3'", SETTINGS},
    {g_strdup_printf ("model=%s mean=\"<1,2,3,4>\"", colors), small,
        "mean and std", SETTINGS},
    {g_strdup_printf ("model=%s mean=\"<1,2>\"", colors), small,
        "mean has 2 values", SETTINGS},
    {g_strdup_printf ("model=%s std=\"<0>\"", colors), small,
        "std value 0 is 0", SETTINGS},
    /* A std the float pre-processing cannot divide by: 0 as a float,
     * subnormal (1/std overflows) or not finite.  1e-300 passed the start
     * check and failed at caps time, twice. */
    {g_strdup_printf ("model=%s std=\"<1e-300>\"", colors), small,
        "std value 0 is 1e-300", SETTINGS},
    {g_strdup_printf ("model=%s std=\"<1,1e-40,1>\"", colors), small,
        "std value 1 is 1e-40", SETTINGS},
    {g_strdup_printf ("model=%s std=\"<1,1,1e300>\"", colors), small,
        "std value 2 is 1e+300", SETTINGS},
    {g_strdup_printf ("model=%s input-name=image", colors), small,
        "input-name 'image'", SETTINGS},
    /* The output kind's error, naming what the heads are, not the
     * input size's. */
    {g_strdup_printf ("model=%s output=detection", colors), small,
        "output=detection needs", SHAPE},
    {g_strdup_printf ("model=%s output=detection", colors), small,
        "which output=classification reads", SHAPE},
    {g_strdup_printf ("model=%s labels=/nonexistent/l.txt", colors), small,
        "labels file", OPEN_READ},
    {g_strdup ("model=/dev/zero"), small,
        "/dev/zero is a character device: a symbol file", OPEN_READ},
    {g_strdup_printf ("model=%s", fifo), small, "is a FIFO: a symbol file",
        OPEN_READ},
    {g_strdup_printf ("model=%s params=%s", colors, dir), small,
        "is a directory: a params file", OPEN_READ},
    {g_strdup_printf ("model=%s labels=/dev/zero", colors), small,
        "/dev/zero is a character device: a labels file", OPEN_READ},
    {g_strdup_printf ("model=%s labels=%s", colors, fifo), small,
        "is a FIFO: a labels file", OPEN_READ},
    /* sizes the model cannot take: at start, and when caps arrive */
    {g_strdup_printf ("model=%s", quadrants), small, "quadrants_concat0",
        SHAPE},
    {g_strdup_printf ("model=%s input-size=frame", quadrants),
        "video/x-raw,width=100,height=100", "quadrants_concat0", SHAPE},
    /* ... and the error names the property that chose the size */
    {g_strdup_printf ("model=%s input-size=100x100", quadrants), small,
        "input-size 100x100: the model cannot take this input size", SHAPE},
    {g_strdup_printf ("model=%s input-size=frame", quadrants),
          "video/x-raw,width=100,height=100",
        "input-size=frame: the model cannot take 100x100 frames", SHAPE},
    {g_strdup_printf ("model=%s input-size=1x1", colors), small, NULL, 0, 0},
    /* class-thresholds: looked up in the labels at start */
    {g_strdup_printf ("model=%s labels=%s class-thresholds=\"red=0.5,dog=0.5\"",
            colors, colors_labels), small,
        "class-thresholds 'red=0.5,dog=0.5': 'dog' is none of the model's 9 "
          "labels, nor a class id", SETTINGS},
    {g_strdup_printf ("model=%s class-thresholds=\"red=0.5\"", colors), small,
        "'red' is not a class id, and the model has no labels", SETTINGS},
    {g_strdup_printf ("model=%s labels=%s class-thresholds=\"red:0.5\"",
            colors, colors_labels), small,
        "entry 'red:0.5' is not CLASS=SCORE", SETTINGS},
    {g_strdup_printf ("model=%s labels=%s class-thresholds=\"red=1e39\"",
            colors, colors_labels), small,
        "the score of 'red', '1e39', is not a number within float range",
        SETTINGS},
    {g_strdup_printf ("model=%s labels=%s class-thresholds=\"red=0.5,3=1\"",
            colors, colors_labels), small, "class 3 ('3') is given twice",
        SETTINGS},
    {g_strdup_printf ("model=%s labels=%s class-thresholds=\"red=0.5,8=1\"",
            colors, colors_labels), small, NULL, 0, 0},
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    GError *error = pipeline_error (cases[i].props, cases[i].caps);
    if (cases[i].message) {
      fail_unless (error != NULL, "%s: no error", cases[i].props);
      fail_unless (strstr (error->message, cases[i].message) != NULL,
          "%s: error '%s' does not say '%s'", cases[i].props, error->message,
          cases[i].message);
      fail_unless (!strstr (cases[i].props, "output=")
          || !strstr (error->message, "input-size"),
          "%s: error '%s' blames input-size", cases[i].props, error->message);
      fail_unless (error->domain == cases[i].domain
          && error->code == cases[i].code, "%s: error %s %d",
          cases[i].props, g_quark_to_string (error->domain), error->code);
    } else {
      fail_unless (error == NULL, "%s: %s", cases[i].props, error->message);
    }
    g_clear_error (&error);
    g_free (cases[i].props);
  }
  g_unlink (broken);
  g_unlink (fifo);
  g_rmdir (dir);
  g_free (broken);
  g_free (fifo);
  g_free (dir);
  g_free (colors);
  g_free (quadrants);
  g_free (lrn);
  g_free (colors_labels);
}

GST_END_TEST;

/* ---- results ------------------------------------------------------------------ */

GST_START_TEST (test_classification_patterns)
{
  static const gchar *patterns[] = { "red", "green", "blue", "white",
    "black"
  };
  static const gchar *formats[] = { "RGB", "I420", "NV12", "BGRx" };
  static const int sizes[][2] = { {64, 48}, {320, 240}, {17, 9} };
  static const gchar *models[] = { "colors", "colors-shaped" };
  for (guint m = 0; m < G_N_ELEMENTS (models); m++)
    for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
      for (guint s = 0; s < G_N_ELEMENTS (sizes); s++) {
        GstElement *e = infer_new (models[m]);
        g_object_set (e, "interpolation", s % 2, NULL);
        GstHarness *h = harness_for (e, NULL);
        for (guint p = 0; p < G_N_ELEMENTS (patterns); p++) {
          gchar *src = g_strdup_printf ("videotestsrc is-live=true pattern=%s ! "
              "capsfilter caps=\"video/x-raw,format=%s,width=%d,height=%d\"",
              patterns[p], formats[f], sizes[s][0], sizes[s][1]);
          gst_harness_add_src_parse (h, src, TRUE);
          fail_unless_equals_int (gst_harness_push_from_src (h), GST_FLOW_OK);
          GstBuffer *out = gst_harness_pull (h);
          if (strcmp (top_label (out), patterns[p]))
            fail ("%s %s %dx%d %s: recognised as %s", models[m], formats[f],
                sizes[s][0], sizes[s][1], patterns[p], top_label (out));
          gst_buffer_unref (out);
          g_free (src);
        }
        gst_harness_teardown (h);
      }
}

GST_END_TEST;

static void
check_quadrant_rois (GstBuffer * buf, int w, int h, guint expected)
{
  static const gchar *labels[] = { "red", "green", "blue" };
  guint n = 0;
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) meta;
    GstStructure *det = gst_video_region_of_interest_meta_get_param (roi,
        "detection");
    gdouble confidence;
    gint class_id;
    fail_unless (det != NULL);
    fail_unless (gst_structure_get_double (det, "confidence", &confidence));
    fail_unless (gst_structure_get_int (det, "class-id", &class_id));
    fail_unless (roi->x + roi->w <= (guint) w && roi->y + roi->h <= (guint) h);
    if (n < 3) {
      /* quadrant n: its colour, its place, nearly certain */
      fail_unless_equals_string (g_quark_to_string (roi->roi_type),
          labels[n]);
      fail_unless_equals_int (class_id, (gint) n);
      fail_unless (confidence > 0.99, "confidence %g", confidence);
      fail_unless_equals_int (roi->x, (n % 2) * (w / 2));
      fail_unless_equals_int (roi->y, (n / 2) * (h / 2));
      fail_unless_equals_int (roi->w, w / 2);
      fail_unless_equals_int (roi->h, h / 2);
    } else {
      fail_unless (confidence < 0.01);  /* the black quadrant */
    }
    n++;
  }
  fail_unless_equals_int (n, expected);
}

/* The same boxes from every detection layout: one (B, K, 6) head in
 * input pixels, GluonCV's three heads, and MXNet's MultiBoxDetection head
 * with corners as fractions of the input. */
GST_START_TEST (test_detection_meta)
{
  static const struct
  {
    const gchar *name;
    guint heads;
  } models[] = { {"quadrants", 1}, {"quadrants3", 3},
  {"quadrants-multibox", 1}
  };
  for (guint m = 0; m < G_N_ELEMENTS (models); m++) {
    GstElement *e = infer_new (models[m].name);
    g_object_set (e, "input-size", "64x64", NULL);
    GstHarness *h = harness_for (e, NULL);
    set_caps (h, "RGBA", 128, 96);
    GstBuffer *out = gst_harness_push_and_pull (h,
        frame_new ("RGBA", 128, 96, pick_quadrants, 0));
    check_quadrant_rois (out, 128, 96, 3);
    const GstStructure *s = results_of (out);
    fail_unless_equals_string (gst_structure_get_string (s, "type"),
        "detection");
    gint count;
    fail_unless (gst_structure_get_int (s, "count", &count));
    fail_unless_equals_int (count, 3);
    GstHybridTensorMeta *tm = gst_buffer_get_hybrid_tensor_meta (out);
    gboolean three = models[m].heads == 3;
    fail_unless_equals_int (tm->n_tensors, models[m].heads);
    fail_unless_equals_int (tm->tensors[three ? 2 : 0].dims[2],
        three ? 4 : 6);
    gst_buffer_unref (out);

    /* threshold: the black quadrant comes in too */
    g_object_set (h->element, "threshold", 0.0f, NULL);
    out = gst_harness_push_and_pull (h,
        frame_new ("RGBA", 128, 96, pick_quadrants, 1));
    check_quadrant_rois (out, 128, 96, 4);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* Letterboxed, boxes map back through the padding to the frame (in
 * pixels or as fractions of the input alike). */
GST_START_TEST (test_detection_letterbox)
{
  static const gchar *models[] = { "quadrants", "quadrants-multibox" };
  for (guint m = 0; m < G_N_ELEMENTS (models); m++) {
    GstElement *e = infer_new (models[m]);
    g_object_set (e, "input-size", "64x64", NULL);
    gst_util_set_object_arg (G_OBJECT (e), "resize", "letterbox");
    GstHarness *h = harness_for (e, NULL);
    set_caps (h, "RGB", 128, 64);
    GstBuffer *out = gst_harness_push_and_pull (h,
        frame_new ("RGB", 128, 64, pick_red, 0));
    gpointer state = NULL;
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *)
        gst_buffer_iterate_meta_filtered (out, &state,
        GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE);
    /* the top-left quadrant of the tensor is half padding */
    fail_unless (roi != NULL);
    fail_unless_equals_int (roi->x, 0);
    fail_unless_equals_int (roi->y, 0);
    fail_unless_equals_int (roi->w, 64);
    fail_unless_equals_int (roi->h, 32);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* The class ids of buf's regions of interest as a bit set, *n of them,
 * checking that each one's label and detection parameters agree. */
static guint
roi_classes (GstBuffer * buf, guint * n)
{
  static const gchar *labels[] = { "red", "green", "blue" };
  guint seen = 0;
  *n = 0;
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) meta;
    GstStructure *det = gst_video_region_of_interest_meta_get_param (roi,
        "detection");
    gint class_id;
    fail_unless (det && gst_structure_get_int (det, "class-id", &class_id));
    fail_unless (class_id >= 0 && class_id < 3);
    fail_unless_equals_string (g_quark_to_string (roi->roi_type),
        labels[class_id]);
    seen |= 1u << class_id;
    (*n)++;
  }
  return seen;
}

/* What is detected on the next frame of quadrants: the classes as a bit
 * set, plus 16 times the boxes. */
static guint
next_classes (GstHarness * h, guint64 * pts)
{
  guint n;
  GstBuffer *out = gst_harness_push_and_pull (h, frame_new ("RGBA", 128, 96,
          pick_quadrants, (*pts)++));
  guint seen = roi_classes (out, &n) | n << 4;
  gst_buffer_unref (out);
  return seen;
}

/* The warning a bad class-thresholds value posts (one), naming it. */
static void
expect_class_thresholds_warning (GstBus * bus, const gchar * says)
{
  GstMessage *msg = gst_bus_pop_filtered (bus,
      GST_MESSAGE_WARNING | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING,
      "no warning");
  GError *err = NULL;
  gst_message_parse_warning (msg, &err, NULL);
  fail_unless (g_error_matches (err, SETTINGS), "%s %d",
      g_quark_to_string (err->domain), err->code);
  fail_unless (strstr (err->message, "class-thresholds") != NULL
      && strstr (err->message, says) != NULL, "%s", err->message);
  g_error_free (err);
  gst_message_unref (msg);
  fail_unless_equals_int (count_messages (bus,
          GST_MESSAGE_WARNING | GST_MESSAGE_ERROR), 0);
}

/* class-thresholds on the quadrants detector (red, green, blue each
 * scored near 1, the black quadrant as red near 0): a class's own
 * threshold keeps or drops its box whatever `threshold` says; set while
 * playing it applies from the next frame; a bad value is a warning and
 * `threshold` alone applies until a good one.  On the element's own
 * model, and on an engine (the request carries the thresholds to the
 * engine's thread). */
GST_START_TEST (test_detection_class_thresholds)
{
  static const struct {
    const gchar *model, *engine;
  } runs[] = {
    {"quadrants", NULL}, {"quadrants3", NULL},
    {"quadrants3", "class-thresholds-engine"},
  };
  for (guint r = 0; r < G_N_ELEMENTS (runs); r++) {
    GstBus *bus;
    GstElement *e = infer_new (runs[r].model);
    g_object_set (e, "input-size", "64x64", "class-thresholds", "green=1.5",
        NULL);
    if (runs[r].engine)
      g_object_set (e, "shared-engine", runs[r].engine, NULL);
    GstHarness *h = harness_for (e, &bus);
    set_caps (h, "RGBA", 128, 96);
    guint64 pts = 0;
    /* green's own threshold is above any score: red and blue stay */
    fail_unless_equals_int (next_classes (h, &pts), 0x25);
    /* while playing: red (by its id) down to the black quadrant, far
     * below threshold=0.5 */
    g_object_set (h->element, "class-thresholds", " green = 1.5 , 0=0", NULL);
    fail_unless_equals_int (next_classes (h, &pts), 0x35);
    /* and threshold still rules the classes not named */
    g_object_set (h->element, "threshold", 2.0f, NULL);
    fail_unless_equals_int (next_classes (h, &pts), 0x21);
    g_object_set (h->element, "threshold", 0.5f, NULL);
    /* an unknown label: a warning, threshold for every class */
    g_object_set (h->element, "class-thresholds", "green=1.5,dog=0", NULL);
    fail_unless_equals_int (next_classes (h, &pts), 0x37);
    expect_class_thresholds_warning (bus, "'dog' is none of the model's");
    fail_unless_equals_int (next_classes (h, &pts), 0x37);
    fail_unless_equals_int (count_messages (bus, GST_MESSAGE_WARNING), 0);
    /* malformed, then fixed */
    g_object_set (h->element, "class-thresholds", "green=", NULL);
    fail_unless_equals_int (next_classes (h, &pts), 0x37);
    expect_class_thresholds_warning (bus, "is not a number");
    g_object_set (h->element, "class-thresholds", "blue=1.5", NULL);
    fail_unless_equals_int (next_classes (h, &pts), 0x23);
    /* none again */
    g_object_set (h->element, "class-thresholds", "", NULL);
    fail_unless_equals_int (next_classes (h, &pts), 0x37);
    fail_unless_equals_int (count_messages (bus,
            GST_MESSAGE_WARNING | GST_MESSAGE_ERROR), 0);
    teardown_with_bus (h, bus);
  }
}

GST_END_TEST;

/* class-thresholds on a classification: a class with a threshold of its
 * own is among the top-k only when its (reported) score reaches it; the
 * others are as top-k takes them.  When every class is held back there
 * is no best class at all. */
GST_START_TEST (test_classification_class_thresholds)
{
  GstElement *e = infer_new ("colors-shaped");
  g_object_set (e, "top-k", 9u, NULL);
  GstHarness *h = harness_for (e, NULL);
  set_caps (h, "RGB", 32, 24);
  GstBuffer *out = gst_harness_push_and_pull (h,
      frame_new ("RGB", 32, 24, pick_red, 0));
  fail_unless_equals_string (top_label (out), "red");
  gfloat red_score, runner_up_score;
  const GstStructure *s = results_of (out);
  fail_unless (gst_structure_get (s, "score", G_TYPE_FLOAT, &red_score,
          NULL));
  const GValue *labels = gst_structure_get_value (s, "labels");
  fail_unless_equals_int (gst_value_array_get_size (labels), 9);
  gchar *runner_up = g_value_dup_string (gst_value_array_get_value (labels, 1));
  runner_up_score = g_value_get_float (gst_value_array_get_value
      (gst_structure_get_value (s, "scores"), 1));
  fail_unless (red_score > 0.5f && runner_up_score < red_score);
  gst_buffer_unref (out);

  /* red held back by a threshold above its score: the second best leads,
   * eight classes reported */
  gchar *text = g_strdup_printf ("red=%.9g", red_score + 1e-4f);
  g_object_set (h->element, "class-thresholds", text, NULL);
  out = gst_harness_push_and_pull (h, frame_new ("RGB", 32, 24, pick_red, 1));
  fail_unless_equals_string (top_label (out), runner_up);
  s = results_of (out);
  fail_unless_equals_int (gst_value_array_get_size (gst_structure_get_value
          (s, "labels")), 8);
  gst_buffer_unref (out);
  g_free (text);

  /* ... and kept by one it reaches, its score as before */
  text = g_strdup_printf ("red=%.9g", red_score - 1e-4f);
  g_object_set (h->element, "class-thresholds", text, NULL);
  out = gst_harness_push_and_pull (h, frame_new ("RGB", 32, 24, pick_red, 2));
  fail_unless_equals_string (top_label (out), "red");
  gfloat again;
  fail_unless (gst_structure_get (results_of (out), "score", G_TYPE_FLOAT,
          &again, NULL));
  fail_unless_equals_float (again, red_score);
  gst_buffer_unref (out);
  g_free (text);

  /* every class held back: no best class, no classes */
  g_object_set (h->element, "class-thresholds", "black=2,white=2,gray=2,"
      "red=2,green=2,blue=2,yellow=2,cyan=2,magenta=2", NULL);
  out = gst_harness_push_and_pull (h, frame_new ("RGB", 32, 24, pick_red, 3));
  s = results_of (out);
  fail_if (gst_structure_has_field (s, "label"));
  fail_if (gst_structure_has_field (s, "score"));
  fail_unless_equals_int (gst_value_array_get_size (gst_structure_get_value
          (s, "labels")), 0);
  gst_buffer_unref (out);

  /* none: the block is refilled whole again */
  g_object_set (h->element, "class-thresholds", NULL, NULL);
  out = gst_harness_push_and_pull (h, frame_new ("RGB", 32, 24, pick_red, 4));
  fail_unless_equals_string (top_label (out), "red");
  fail_unless_equals_int (gst_value_array_get_size (gst_structure_get_value
          (results_of (out), "labels")), 9);
  gst_buffer_unref (out);
  g_free (runner_up);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_bus_messages)
{
  GstBus *bus;
  GstElement *e = infer_new ("colors-shaped");
  g_object_set (e, "top-k", 3u, NULL);
  GstHarness *h = harness_for (e, &bus);
  set_caps (h, "RGB", 32, 24);
  for (guint i = 0; i < 5; i++)
    gst_buffer_unref (gst_harness_push_and_pull (h,
            frame_new ("RGB", 32, 24, i % 2 ? pick_green : pick_red,
                i * GST_SECOND / 30)));
  for (guint i = 0; i < 5; i++) {
    GstMessage *msg = next_result_message (bus);
    fail_unless (msg != NULL, "message %u missing", i);
    const GstStructure *s = gst_message_get_structure (msg);
    guint64 frame, pts, running_time;
    gdouble latency;
    fail_unless (gst_structure_get_uint64 (s, "frame-number", &frame));
    fail_unless (gst_structure_get_uint64 (s, "timestamp", &pts));
    fail_unless (gst_structure_get_uint64 (s, "running-time", &running_time));
    fail_unless (gst_structure_get_double (s, "latency-us", &latency));
    fail_unless_equals_uint64 (frame, i);
    fail_unless_equals_uint64 (pts, i * GST_SECOND / 30);
    fail_unless_equals_uint64 (running_time, pts);
    fail_unless (latency > 0);
    fail_unless_equals_string (gst_structure_get_string (s, "mode"),
        "hybrid");
    fail_unless_equals_string (gst_structure_get_string (s, "type"),
        "classification");
    fail_unless_equals_string (gst_structure_get_string (s, "label"),
        i % 2 ? "green" : "red");
    const GValue *labels = gst_structure_get_value (s, "labels");
    const GValue *scores = gst_structure_get_value (s, "scores");
    const GValue *ids = gst_structure_get_value (s, "class-ids");
    fail_unless_equals_int (gst_value_array_get_size (labels), 3);
    fail_unless_equals_int (gst_value_array_get_size (ids), 3);
    fail_unless_equals_int (gst_value_array_get_size (scores), 3);
    for (guint k = 1; k < 3; k++)
      fail_unless (g_value_get_float (gst_value_array_get_value (scores,
                  k)) <= g_value_get_float (gst_value_array_get_value (scores,
                  k - 1)));
    gst_message_unref (msg);
  }
  fail_unless (next_result_message (bus) == NULL);

  /* top-k beyond the class count: every class, once */
  g_object_set (h->element, "top-k", 1000u, NULL);
  GstBuffer *out = gst_harness_push_and_pull (h,
      frame_new ("RGB", 32, 24, pick_red, 0));
  const GValue *ids = gst_structure_get_value (results_of (out), "class-ids");
  fail_unless_equals_int (gst_value_array_get_size (ids), 9);
  gint seen = 0;
  for (guint k = 0; k < 9; k++)
    seen |= 1 << g_value_get_int (gst_value_array_get_value (ids, k));
  fail_unless_equals_int (seen, 0x1ff);
  gst_buffer_unref (out);
  gst_message_unref (next_result_message (bus));

  g_object_set (h->element, "post-messages", FALSE, NULL);
  gst_buffer_unref (gst_harness_push_and_pull (h,
          frame_new ("RGB", 32, 24, pick_red, 0)));
  fail_unless (next_result_message (bus) == NULL);
  teardown_with_bus (h, bus);
}

GST_END_TEST;

GST_START_TEST (test_raw_output)
{
  GstBus *bus;
  GstElement *e = infer_new ("colors-shaped");
  g_object_set (e, "output", 3 /* raw */ , NULL);
  GstHarness *h = harness_for (e, &bus);
  set_caps (h, "RGB", 32, 24);
  GstBuffer *out = gst_harness_push_and_pull (h,
      frame_new ("RGB", 32, 24, pick_red, 0));
  const GstStructure *s = results_of (out);
  fail_unless_equals_string (gst_structure_get_string (s, "type"), "raw");
  fail_if (gst_structure_has_field (s, "label"));
  const GValue *outputs = gst_structure_get_value (s, "outputs");
  fail_unless_equals_string (g_value_get_string (gst_value_array_get_value
          (outputs, 0)), "colors_softmax0 (1, 9)");
  gst_buffer_unref (out);
  teardown_with_bus (h, bus);
}

GST_END_TEST;

/* The meta outlives the element: it holds the data, not the element. */
GST_START_TEST (test_tensor_meta_lifetime)
{
  GstElement *e = infer_new ("colors-shaped");
  GstHarness *h = harness_for (e, NULL);
  set_caps (h, "BGR", 32, 24);
  GstBuffer *out = gst_harness_push_and_pull (h,
      frame_new ("BGR", 32, 24, pick_blue, 0));
  GstBuffer *copy = gst_buffer_copy (out);
  gst_buffer_unref (out);
  gst_harness_teardown (h);

  GstHybridTensorMeta *meta = gst_buffer_get_hybrid_tensor_meta (copy);
  fail_unless (meta != NULL);
  fail_unless (meta->inferred);
  fail_unless_equals_uint64 (meta->frame_number, 0);
  fail_unless_equals_int (meta->n_tensors, 1);
  const GstHybridTensor *t = &meta->tensors[0];
  fail_unless_equals_string (t->name, "colors_softmax0");
  fail_unless_equals_int (t->ndim, 2);
  fail_unless (t->dims[0] == 1 && t->dims[1] == 9);
  fail_unless_equals_int (t->n_elements, 9);
  gdouble sum = 0;
  for (gsize i = 0; i < t->n_elements; i++)
    sum += t->data[i];
  fail_unless (fabs (sum - 1.0) < 1e-5, "softmax sums to %g", sum);
  fail_unless (t->data[5] > 0.99);      /* blue */
  fail_unless_equals_string (gst_structure_get_string (meta->results,
          "label"), "blue");
  gst_buffer_unref (copy);
}

GST_END_TEST;

/* The colours test-hybridinfer feeds, as the "colors" model names them. */
static const gchar *colour_names[] = { "black", "white", "gray", "red",
  "green", "blue", "yellow", "cyan", "magenta"
};

/* A buffer's result is its own: its frame, its label, its scores. */
static void
check_colour_result (GstBuffer * buf, guint64 frame, const gchar * label)
{
  GstHybridTensorMeta *meta = gst_buffer_get_hybrid_tensor_meta (buf);
  fail_unless (meta != NULL);
  fail_unless_equals_uint64 (meta->frame_number, frame);
  const GstStructure *s = meta->results;
  guint64 number;
  gint id;
  fail_unless (gst_structure_get_uint64 (s, "frame-number", &number));
  fail_unless_equals_uint64 (number, frame);
  fail_unless_equals_string (gst_structure_get_string (s, "label"), label);
  const GValue *labels = gst_structure_get_value (s, "labels");
  fail_unless_equals_int (gst_value_array_get_size (labels), 1);
  fail_unless_equals_string (g_value_get_string (gst_value_array_get_value
          (labels, 0)), label);
  const GstHybridTensor *t = &meta->tensors[0];
  fail_unless_equals_int (t->n_elements, G_N_ELEMENTS (colour_names));
  guint best = 0;
  for (guint i = 1; i < t->n_elements; i++)
    if (t->data[i] > t->data[best])
      best = i;
  fail_unless_equals_string (colour_names[best], label);
  fail_unless (gst_structure_get_int (s, "class-id", &id));
  fail_unless_equals_int (id, (gint) best);
}

/* Results live in blocks the element refills once nobody holds them: a
 * result held downstream is never refilled, whatever the order buffers
 * are released in, and outlives the element. */
GST_START_TEST (test_tensor_meta_pool)
{
  static const pixel_func picks[] = { pick_red, pick_green, pick_blue,
    pick_white
  };
  static const gchar *labels[] = { "red", "green", "blue", "white" };
  enum { HELD = 12 };
  GstBuffer *held[HELD];
  guint colour[HELD];
  guint64 frame[HELD], next = 0;
  GstElement *e = infer_new ("colors-shaped");
  GstHarness *h = harness_for (e, NULL);
  set_caps (h, "RGB", 32, 24);
  for (guint i = 0; i < HELD; i++) {
    colour[i] = i % 4;
    frame[i] = next++;
    held[i] = gst_harness_push_and_pull (h, frame_new ("RGB", 32, 24,
            picks[colour[i]], frame[i]));
  }
  for (guint i = 0; i < HELD; i++)
    check_colour_result (held[i], frame[i], labels[colour[i]]);

  /* every other one goes, in reverse; later frames refill those blocks */
  for (gint i = HELD - 1; i >= 1; i -= 2)
    gst_buffer_unref (held[i]);
  for (guint i = 1; i < HELD; i += 2) {
    colour[i] = (i + 1) % 4;
    frame[i] = next++;
    held[i] = gst_harness_push_and_pull (h, frame_new ("RGB", 32, 24,
            picks[colour[i]], frame[i]));
  }
  GstBuffer *copy = gst_buffer_copy (held[3]);
  for (guint i = 0; i < HELD; i++)
    check_colour_result (held[i], frame[i], labels[colour[i]]);
  gst_harness_teardown (h);

  /* the element is gone: the results stay, released in any order */
  for (guint i = 0; i < HELD; i += 2) {
    check_colour_result (held[i], frame[i], labels[colour[i]]);
    gst_buffer_unref (held[i]);
  }
  gst_buffer_unref (held[3]);
  check_colour_result (copy, frame[3], labels[colour[3]]);
  for (guint i = 1; i < HELD; i += 2)
    if (i != 3) {
      check_colour_result (held[i], frame[i], labels[colour[i]]);
      gst_buffer_unref (held[i]);
    }
  check_colour_result (copy, frame[3], labels[colour[3]]);
  gst_buffer_unref (copy);
}

GST_END_TEST;

/* A refilled block with more or fewer boxes than its last result: the
 * message's arrays and the regions of interest follow. */
GST_START_TEST (test_detection_count_changes)
{
  static const gfloat thresholds[] = { 0.5f, 0.0f, 0.0f, 0.5f, 0.5f, 0.0f,
    0.5f, 0.0f, 0.5f
  };
  static const gchar *fields[] = { "labels", "class-ids", "scores", "boxes" };
  GstElement *e = infer_new ("quadrants");
  g_object_set (e, "input-size", "64x64", NULL);
  GstHarness *h = harness_for (e, NULL);
  set_caps (h, "RGB", 64, 48);
  GstBuffer *kept = NULL;
  for (guint i = 0; i < G_N_ELEMENTS (thresholds); i++) {
    guint expected = thresholds[i] > 0.0f ? 3 : 4;
    g_object_set (h->element, "threshold", thresholds[i], NULL);
    GstBuffer *out = gst_harness_push_and_pull (h,
        frame_new ("RGB", 64, 48, pick_quadrants, i));
    check_quadrant_rois (out, 64, 48, expected);
    const GstStructure *s = results_of (out);
    gint count;
    fail_unless (gst_structure_get_int (s, "count", &count));
    fail_unless_equals_int (count, expected);
    for (guint f = 0; f < G_N_ELEMENTS (fields); f++)
      fail_unless_equals_int (gst_value_array_get_size
          (gst_structure_get_value (s, fields[f])), expected);
    const GValue *boxes = gst_structure_get_value (s, "boxes");
    for (guint b = 0; b < expected; b++) {
      const GValue *box = gst_value_array_get_value (boxes, b);
      fail_unless_equals_int (gst_value_array_get_size (box), 4);
      /* the quadrant's width: half the frame */
      fail_unless_equals_float (g_value_get_float (gst_value_array_get_value
              (box, 2)), 32.0f);
    }
    fail_unless_equals_string (g_value_get_string (gst_value_array_get_value
            (gst_structure_get_value (s, "labels"), 2)), "blue");
    /* one held now and then: blocks change partners */
    if (i % 3 == 1) {
      if (kept)
        gst_buffer_unref (kept);
      kept = out;
    } else {
      gst_buffer_unref (out);
    }
  }
  check_quadrant_rois (kept, 64, 48, 4);
  gst_buffer_unref (kept);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_interval)
{
  static const guint64 source[] = { 0, 0, 0, 3, 3, 3, 6 };
  GstBus *bus;
  GstElement *e = infer_new ("quadrants");
  g_object_set (e, "input-size", "64x64", "interval", 3u, NULL);
  GstHarness *h = harness_for (e, &bus);
  set_caps (h, "RGB", 64, 48);
  for (guint i = 0; i < G_N_ELEMENTS (source); i++) {
    GstBuffer *out = gst_harness_push_and_pull (h,
        frame_new ("RGB", 64, 48, pick_quadrants, i));
    GstHybridTensorMeta *meta = gst_buffer_get_hybrid_tensor_meta (out);
    fail_unless (meta != NULL, "frame %u has no result", i);
    fail_unless_equals_uint64 (meta->frame_number, source[i]);
    fail_unless_equals_int (meta->inferred, source[i] == i);
    check_quadrant_rois (out, 64, 48, 3);
    gst_buffer_unref (out);
  }
  for (guint i = 0; i < 7; i += 3) {
    GstMessage *msg = next_result_message (bus);
    guint64 frame;
    fail_unless (msg != NULL);
    gst_structure_get_uint64 (gst_message_get_structure (msg),
        "frame-number", &frame);
    fail_unless_equals_uint64 (frame, i);
    gst_message_unref (msg);
  }
  fail_unless (next_result_message (bus) == NULL);
  guint64 inferred;
  g_object_get (h->element, "frames-inferred", &inferred, NULL);
  fail_unless_equals_uint64 (inferred, 3);
  teardown_with_bus (h, bus);
}

GST_END_TEST;

static pixel_func batch_colours[] = { pick_red, pick_green, pick_blue,
  pick_white, pick_green, pick_red
};

static const gchar *batch_labels[] = { "red", "green", "blue", "white",
  "green", "red"
};

GST_START_TEST (test_batch)
{
  GstBus *bus;
  GstElement *e = infer_new ("colors-shaped");
  g_object_set (e, "batch-size", 4u, NULL);
  GstHarness *h = harness_for (e, &bus);
  set_caps (h, "RGB", 32, 24);
  /* holding 3 frames at 30/s adds 100 ms */
  fail_unless_equals_uint64 (gst_harness_query_latency (h),
      3 * gst_util_uint64_scale_int (GST_SECOND, 1, 30));
  /* frames wait until their batch is full */
  for (guint i = 0; i < 3; i++)
    fail_unless_equals_int (gst_harness_push (h, frame_new ("RGB", 32, 24,
                batch_colours[i], i)), GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_buffers_received (h), 0);
  fail_unless_equals_int (gst_harness_push (h, frame_new ("RGB", 32, 24,
              batch_colours[3], 3)), GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_buffers_received (h), 4);
  /* the rest leaves at EOS, a partial batch */
  for (guint i = 4; i < 6; i++)
    gst_harness_push (h, frame_new ("RGB", 32, 24, batch_colours[i], i));
  fail_unless_equals_int (gst_harness_buffers_received (h), 4);
  gst_harness_push_event (h, gst_event_new_eos ());
  fail_unless_equals_int (gst_harness_buffers_received (h), 6);

  for (guint i = 0; i < 6; i++) {
    GstBuffer *out = gst_harness_pull (h);
    GstHybridTensorMeta *meta = gst_buffer_get_hybrid_tensor_meta (out);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (out), i);
    fail_unless_equals_uint64 (meta->frame_number, i);
    fail_unless_equals_int (meta->tensors[0].dims[0], 1);
    fail_unless_equals_int (meta->tensors[0].n_elements, 9);
    fail_unless_equals_string (top_label (out), batch_labels[i]);
    gst_buffer_unref (out);
    GstMessage *msg = next_result_message (bus);
    fail_unless (msg != NULL);
    gst_message_unref (msg);
  }
  /* EOS came after the frames */
  GstEvent *ev;
  gboolean saw_eos = FALSE;
  while ((ev = gst_harness_try_pull_event (h))) {
    saw_eos |= GST_EVENT_TYPE (ev) == GST_EVENT_EOS;
    gst_event_unref (ev);
  }
  fail_unless (saw_eos);
  teardown_with_bus (h, bus);
}

GST_END_TEST;

/* ---- batches against a bounded upstream ----------------------------------- */

/* Frames from buffers the source can only have so many of, as from
 * v4l2src or a hardware decoder.  Either a GstBufferPool of `slots`
 * buffers (the element can see its size), or buffers the test counts
 * itself (it cannot: only batch-timeout helps). */
typedef struct {
  GMutex lock;
  GCond cond;
  guint in_use;
  guint results;                /* buffers that reached the sink with one */
  guint frames;                 /* buffers that reached the sink */
} Slots;

static void
slot_release (gpointer data)
{
  Slots *sl = data;
  g_mutex_lock (&sl->lock);
  sl->in_use--;
  g_cond_signal (&sl->cond);
  g_mutex_unlock (&sl->lock);
}

static void
count_handoff (GstElement * sink, GstBuffer * buf, GstPad * pad,
    gpointer data)
{
  Slots *sl = data;
  GstHybridTensorMeta *meta = gst_buffer_get_hybrid_tensor_meta (buf);
  g_mutex_lock (&sl->lock);
  sl->frames++;
  if (meta && !g_strcmp0 (gst_structure_get_string (meta->results, "label"),
          "red"))
    sl->results++;
  g_mutex_unlock (&sl->lock);
}

static void
fill_red (GstBuffer * buf, const GstVideoInfo * info)
{
  GstMapInfo map;
  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  for (gsize i = 0; i + 2 < map.size; i += 3) {
    map.data[i] = 255;
    map.data[i + 1] = map.data[i + 2] = 0;
  }
  gst_buffer_unmap (buf, &map);
}

/* Pushes `n` red frames through appsrc ! hybridinfer `props` ! fakesink
 * from `slots` buffers and runs to EOS; fails when a buffer cannot be had
 * for 10 s (the pipeline stalled). */
static void
run_bounded (const gchar * props, guint n, guint slots, gboolean use_pool,
    gint batch_timeout_ms)
{
  const gchar *caps_str = "video/x-raw,format=RGB,width=32,height=24,"
      "framerate=30/1";
  gchar *m = model_path ("colors");
  gchar *l = labels_path ("colors");
  gchar *desc = g_strdup_printf ("appsrc name=src format=time caps=%s ! "
      "hybridinfer name=h model=%s labels=%s device=cpu %s ! fakesink "
      "name=sink sync=false signal-handoffs=true", caps_str, m, l, props);
  GError *error = NULL;
  GstElement *p = gst_parse_launch (desc, &error);
  fail_unless (p != NULL && error == NULL, "%s: %s", desc,
      error ? error->message : "");
  GstElement *src = gst_bin_get_by_name (GST_BIN (p), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  GstElement *h = gst_bin_get_by_name (GST_BIN (p), "h");
  Slots sl = { 0 };
  g_mutex_init (&sl.lock);
  g_cond_init (&sl.cond);
  g_signal_connect (sink, "handoff", G_CALLBACK (count_handoff), &sl);
  /* batch-timeout exists once the element bounds the wait */
  if (batch_timeout_ms >= 0
      && g_object_class_find_property (G_OBJECT_GET_CLASS (h),
          "batch-timeout"))
    g_object_set (h, "batch-timeout", (guint) batch_timeout_ms, NULL);

  GstCaps *caps = gst_caps_from_string (caps_str);
  GstVideoInfo info;
  fail_unless (gst_video_info_from_caps (&info, caps));
  GstBufferPool *pool = NULL;
  if (use_pool) {
    pool = gst_buffer_pool_new ();
    GstStructure *config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_set_params (config, caps, (guint) info.size, slots,
        slots);
    fail_unless (gst_buffer_pool_set_config (pool, config));
    fail_unless (gst_buffer_pool_set_active (pool, TRUE));
  }
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING)
      != GST_STATE_CHANGE_FAILURE);

  guint pushed = 0;
  for (; pushed < n; pushed++) {
    GstBuffer *buf = NULL;
    gint64 give_up = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
    if (use_pool) {
      GstBufferPoolAcquireParams params = {.flags =
            GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT };
      while (gst_buffer_pool_acquire_buffer (pool, &buf, &params)
          == GST_FLOW_EOS && g_get_monotonic_time () < give_up)
        g_usleep (1000);
    } else {
      g_mutex_lock (&sl.lock);
      while (sl.in_use == slots
          && g_cond_wait_until (&sl.cond, &sl.lock, give_up));
      if (sl.in_use < slots) {
        sl.in_use++;
        gpointer data = g_malloc (info.size);
        buf = gst_buffer_new_wrapped_full (0, data, info.size, 0, info.size,
            data, g_free);
        gst_mini_object_set_qdata (GST_MINI_OBJECT (buf),
            g_quark_from_static_string ("slot"), &sl, slot_release);
      }
      g_mutex_unlock (&sl.lock);
    }
    if (!buf)
      break;
    fill_red (buf, &info);
    GST_BUFFER_PTS (buf) = pushed * GST_SECOND / 30;
    GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
    GstFlowReturn ret;
    g_signal_emit_by_name (src, "push-buffer", buf, &ret);
    gst_buffer_unref (buf);
    fail_unless_equals_int (ret, GST_FLOW_OK);
  }
  GstFlowReturn ret;
  g_signal_emit_by_name (src, "end-of-stream", &ret);
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *msg = pushed == n ? gst_bus_timed_pop_filtered (bus,
      10 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR) : NULL;
  gboolean eos = msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
  if (msg)
    gst_message_unref (msg);
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless (pushed == n, "%s, %u buffers%s: stalled after %u frames "
      "(%u results out)", props, slots, use_pool ? " in a pool" : "",
      pushed, sl.results);
  fail_unless (eos, "%s: no EOS", props);
  fail_unless_equals_int (sl.frames, n);
  fail_unless_equals_int (sl.results, n);
  if (pool) {
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
  }
  gst_caps_unref (caps);
  gst_object_unref (bus);
  gst_object_unref (h);
  gst_object_unref (sink);
  gst_object_unref (src);
  gst_object_unref (p);
  g_mutex_clear (&sl.lock);
  g_cond_clear (&sl.cond);
  g_free (desc);
  g_free (l);
  g_free (m);
}

/* A source with a pool of 3 buffers: batch-size=4 stopped after 3 frames
 * and batch-size=2 interval=2 after 14, silently, as the element held
 * frames waiting for ones upstream had no buffer for.  A pool the element
 * can see runs a partial batch before it would run dry (batch-timeout is
 * off here, to show that alone); frames from buffers it cannot see wait
 * batch-timeout at most. */
GST_START_TEST (test_batch_bounded_upstream)
{
  static const gchar *props[] = { "batch-size=2", "batch-size=4",
    "batch-size=8", "batch-size=2 interval=2", "batch-size=8 interval=3"
  };
  for (guint i = 0; i < G_N_ELEMENTS (props); i++)
    run_bounded (props[i], 24, 3, TRUE, 0);
  for (guint i = 0; i < G_N_ELEMENTS (props); i++)
    run_bounded (props[i], 12, 3, FALSE, 20);
}

GST_END_TEST;

/* Upstream is asked for the buffers a batch holds, on top of what
 * downstream wants. */
GST_START_TEST (test_batch_allocation_query)
{
  GstElement *e = infer_new ("colors");
  g_object_set (e, "batch-size", 4u, NULL);
  GstHarness *h = harness_for (e, NULL);
  set_caps (h, "RGB", 32, 24);
  GstCaps *caps = gst_caps_from_string ("video/x-raw,format=RGB,width=32,"
      "height=24,framerate=30/1");
  GstQuery *q = gst_query_new_allocation (caps, TRUE);
  fail_unless (gst_pad_peer_query (h->srcpad, q));
  fail_unless (gst_query_get_n_allocation_pools (q) > 0);
  guint size, min, max;
  gst_query_parse_nth_allocation_pool (q, 0, NULL, &size, &min, &max);
  fail_unless (min >= 4, "min-buffers %u", min);
  fail_unless (max == 0 || max >= min);
  fail_unless (gst_query_find_allocation_meta (q, GST_VIDEO_META_API_TYPE,
          NULL));
  gst_query_unref (q);
  gst_caps_unref (caps);
  gst_harness_teardown (h);

  /* An element that holds no frame asks for no more: an engine batches
   * across streams (the frame waits converted in its slot), regions are
   * batched within their frame.  The harness proposes no pool of its own,
   * so one proposed here would be the element's. */
  static const gchar *holds_none[] = { "shared-engine=alloc",
    "skip-when-busy=true batch-size=1", "inference-region=roi"
  };
  for (guint i = 0; i < G_N_ELEMENTS (holds_none); i++) {
    e = infer_new ("colors");
    g_object_set (e, "batch-size", 4u, "input-size", "32x32", NULL);
    gchar **kv = g_strsplit (holds_none[i], " ", -1);
    for (gchar ** p = kv; *p; p++) {
      gchar **pair = g_strsplit (*p, "=", 2);
      gst_util_set_object_arg (G_OBJECT (e), pair[0], pair[1]);
      g_strfreev (pair);
    }
    g_strfreev (kv);
    h = harness_for (e, NULL);
    set_caps (h, "RGB", 32, 24);
    caps = gst_caps_from_string ("video/x-raw,format=RGB,width=32,"
        "height=24,framerate=30/1");
    q = gst_query_new_allocation (caps, TRUE);
    fail_unless (gst_pad_peer_query (h->srcpad, q));
    for (guint p = 0; p < gst_query_get_n_allocation_pools (q); p++) {
      gst_query_parse_nth_allocation_pool (q, p, NULL, NULL, &min, NULL);
      fail_unless (min < 4, "%s: min-buffers %u", holds_none[i], min);
    }
    gst_query_unref (q);
    gst_caps_unref (caps);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* A batch gives each frame what a forward of that frame alone gives. */
GST_START_TEST (test_batch_matches_single)
{
  gfloat single[6][9];
  for (guint b = 1; b <= 3; b += 2) {
    GstElement *e = infer_new ("colors");
    g_object_set (e, "batch-size", b, "interval", 1u, NULL);
    GstHarness *h = harness_for (e, NULL);
    set_caps (h, "RGB", 40, 30);
    for (guint i = 0; i < 6; i++)
      gst_harness_push (h, frame_new ("RGB", 40, 30, i % 3 ? pick_quadrants :
              batch_colours[i], i));
    for (guint i = 0; i < 6; i++) {
      GstBuffer *out = gst_harness_pull (h);
      const GstHybridTensor *t =
          &gst_buffer_get_hybrid_tensor_meta (out)->tensors[0];
      for (guint k = 0; k < 9; k++) {
        if (b == 1)
          single[i][k] = t->data[k];
        else
          fail_unless (fabs (single[i][k] - t->data[k]) < 1e-5,
              "frame %u class %u: %g in a batch, %g alone", i, k,
              t->data[k], single[i][k]);
      }
      gst_buffer_unref (out);
    }
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* ---- mode, dumps, renegotiation, statistics --------------------------------- */

static gboolean
dir_has (const gchar * dir, const gchar * name)
{
  gchar *p = g_build_filename (dir, name, NULL);
  gboolean yes = g_file_test (p, G_FILE_TEST_IS_DIR);
  g_free (p);
  return yes;
}

static guint
count_entries (const gchar * dir)
{
  guint n = 0;
  GDir *d = g_dir_open (dir, 0, NULL);
  if (!d)
    return 0;
  while (g_dir_read_name (d))
    n++;
  g_dir_close (d);
  return n;
}

static void
remove_tree (const gchar * path)
{
  GDir *d = g_dir_open (path, 0, NULL);
  if (d) {
    const gchar *name;
    while ((name = g_dir_read_name (d))) {
      gchar *p = g_build_filename (path, name, NULL);
      remove_tree (p);
      g_free (p);
    }
    g_dir_close (d);
    g_rmdir (path);
  } else {
    g_unlink (path);
  }
}

/* ---- out of memory ------------------------------------------------------------ */

#if !HY_HAS_ASAN                /* the sanitizers' shadow memory forbids a limit */
/* Bounds this process's address space (the soft limit) to what it maps
 * now plus `headroom` bytes, so that an allocation past it fails at once
 * instead of being made: a test of running out of memory never takes the
 * machine's.  Returns the old limit for restore_address_space(). */
static struct rlimit
limit_address_space (gsize headroom)
{
  struct rlimit old, lim;
  gchar *statm = NULL;
  guint64 pages = 0;
  fail_unless (getrlimit (RLIMIT_AS, &old) == 0);
  fail_unless (g_file_get_contents ("/proc/self/statm", &statm, NULL, NULL));
  pages = g_ascii_strtoull (statm, NULL, 10);
  g_free (statm);
  lim = old;
  lim.rlim_cur = (rlim_t) (pages * (guint64) sysconf (_SC_PAGESIZE)
      + headroom);
  fail_unless (setrlimit (RLIMIT_AS, &lim) == 0);
  return old;
}

static void
restore_address_space (struct rlimit old)
{
  fail_unless (setrlimit (RLIMIT_AS, &old) == 0);
}

/* A model whose imperative run keeps N tensors the size of its input
 * where the hybridized plan reuses two: data -> relu x N -> global
 * average -> flatten, (B, 3) scores.  Written to `dir`; free the path. */
static gchar *
relu_chain_model (const gchar * dir, guint n)
{
  GString *j = g_string_new ("{\"nodes\": [{\"op\": \"null\", "
      "\"name\": \"data\", \"inputs\": []}");
  for (guint i = 1; i <= n; i++)
    g_string_append_printf (j, ", {\"op\": \"relu\", \"name\": "
        "\"relu%u\", \"inputs\": [[%u, 0, 0]]}", i, i - 1);
  g_string_append_printf (j, ", {\"op\": \"Pooling\", \"name\": "
      "\"pool\", \"attrs\": {\"global_pool\": \"True\", \"kernel\": "
      "\"(1, 1)\", \"pool_type\": \"avg\"}, \"inputs\": [[%u, 0, 0]]}, "
      "{\"op\": \"Flatten\", \"name\": \"flatten\", \"inputs\": "
      "[[%u, 0, 0]]}], \"arg_nodes\": [0], \"heads\": [[%u, 0, 0]], "
      "\"attrs\": {\"mxnet_version\": [\"int\", 10901]}}", n, n + 1,
      n + 2);
  gchar *path = g_build_filename (dir, "chain-symbol.json", NULL);
  fail_unless (g_file_set_contents (path, j->str, -1, NULL));
  g_string_free (j, TRUE);
  return path;
}
#endif /* !HY_HAS_ASAN */

#define NO_SPACE GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NO_SPACE_LEFT

/* An input tensor no machine has room for is an error at start naming
 * it, not the end of the process (it was g_error(): SIGTRAP).  16384 x
 * 16384 x 3 floats x 256 frames is 824 GB. */
GST_START_TEST (test_out_of_memory_at_start)
{
  gchar *colors = model_path ("colors");
  const gchar *small = "video/x-raw,width=64,height=48";
  struct {
    const gchar *extra, *message;
    gboolean no_memory;
  } cases[] = {
    /* imperative: the element's own input tensor */
    {"mode=imperative", "the input tensor", TRUE},
    /* hybrid: the plan's arena, which the core refuses (the CPU backend
     * reports it as HY_ERROR_BACKEND for now, so the code is not
     * checked: what matters here is an error instead of an abort) */
    {"", "out of memory", FALSE},
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *props = g_strdup_printf ("model=%s input-size=16384x16384 "
        "batch-size=256 %s", colors, cases[i].extra);
#if !HY_HAS_ASAN
    struct rlimit old = limit_address_space ((gsize) 2 << 30);
#endif
    GError *error = pipeline_error (props, small);
#if !HY_HAS_ASAN
    restore_address_space (old);
#endif
    fail_unless (error != NULL, "%s: no error", props);
    fail_unless (strstr (error->message, cases[i].message) != NULL,
        "%s: '%s' does not say '%s'", props, error->message,
        cases[i].message);
    fail_unless (!cases[i].no_memory || g_error_matches (error, NO_SPACE),
        "%s: error %s %d", props, g_quark_to_string (error->domain),
        error->code);
    g_error_free (error);
    g_free (props);
  }
  g_free (colors);
}

GST_END_TEST;

/* Running out of memory while playing.  Switching to imperative mode,
 * which keeps every layer, when there is no room for it is refused with a
 * warning, and the frames go on in hybrid mode (it aborted the process);
 * an element that starts in imperative mode and cannot run its first
 * frame stops with an error.  The address space is bounded (by less than
 * the imperative run needs), which the sanitizers' shadow memory does not
 * allow: without them only. */
GST_START_TEST (test_out_of_memory_while_playing)
{
#if HY_HAS_ASAN
  GST_INFO ("skipped: an address-space limit cannot be set under ASan");
#else
  GstBus *bus;
  gchar *dir = g_dir_make_tmp ("hy-oom-XXXXXX", NULL);
  /* 3 x 512 x 512 floats, 3 MiB a tensor: imperative keeps 32 + the
   * input (over 96 MiB), hybrid about 3 */
  gchar *model = relu_chain_model (dir, 32);
  const gsize headroom = 48 << 20;
  guint64 mode = 0;

  /* hybrid, then switched to imperative */
  GstElement *e = gst_element_factory_make ("hybridinfer", NULL);
  g_object_set (e, "model", model, "device", "cpu", "input-size", "512x512",
      NULL);
  /* chosen, so no warning of guessed normalisation comes before the
   * one this test waits for */
  gst_util_set_object_arg (G_OBJECT (e), "scale", "0-255");
  GstHarness *h = harness_for (e, &bus);
  set_caps (h, "RGB", 64, 48);
  for (guint i = 0; i < 3; i++)
    gst_buffer_unref (gst_harness_push_and_pull (h,
            frame_new ("RGB", 64, 48, pick_red, i)));
  struct rlimit old = limit_address_space (headroom);
  g_object_set (h->element, "mode", 1 /* imperative */ , NULL);
  for (guint i = 3; i < 6; i++) {
    GstBuffer *out = gst_harness_push_and_pull (h,
        frame_new ("RGB", 64, 48, pick_red, i));
    fail_unless (out != NULL, "frame %u", i);
    fail_unless_equals_string (gst_structure_get_string (results_of (out),
            "mode"), "hybrid");
    gst_buffer_unref (out);
  }
  restore_address_space (old);
  g_object_get (h->element, "mode", &mode, NULL);
  fail_unless_equals_int ((gint) mode, 0);
  /* (popping one type drops the others) */
  GstMessage *msg = gst_bus_pop_filtered (bus,
      GST_MESSAGE_WARNING | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING,
      "no warning");
  GError *err = NULL;
  gst_message_parse_warning (msg, &err, NULL);
  fail_unless (g_error_matches (err, NO_SPACE), "%s %d",
      g_quark_to_string (err->domain), err->code);
  fail_unless (strstr (err->message, "imperative") != NULL, "%s",
      err->message);
  fail_unless (strstr (err->message, "out of memory") != NULL, "%s",
      err->message);
  g_error_free (err);
  gst_message_unref (msg);
  /* once: the switch was refused, not retried every frame */
  fail_unless_equals_int (count_messages (bus,
          GST_MESSAGE_WARNING | GST_MESSAGE_ERROR), 0);
  teardown_with_bus (h, bus);

  /* imperative from the start: its first frame cannot run */
  e = gst_element_factory_make ("hybridinfer", NULL);
  g_object_set (e, "model", model, "device", "cpu", "input-size", "512x512",
      "mode", 1, NULL);
  h = harness_for (e, &bus);
  set_caps (h, "RGB", 64, 48);
  old = limit_address_space (headroom);
  fail_unless_equals_int (gst_harness_push (h, frame_new ("RGB", 64, 48,
              pick_red, 0)), GST_FLOW_ERROR);
  restore_address_space (old);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no error");
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (g_error_matches (err, NO_SPACE), "%s %d",
      g_quark_to_string (err->domain), err->code);
  fail_unless (strstr (err->message, "imperative mode") != NULL, "%s",
      err->message);
  g_error_free (err);
  gst_message_unref (msg);
  teardown_with_bus (h, bus);

  g_unlink (model);
  g_rmdir (dir);
  g_free (model);
  g_free (dir);
#endif
}

GST_END_TEST;

GST_START_TEST (test_mode_switch_while_playing)
{
  GstBus *bus;
  gchar *dir = g_dir_make_tmp ("hy-dumps-XXXXXX", NULL);
  GstElement *e = infer_new ("colors-shaped");
  g_object_set (e, "dump-dir", dir, "dump-frames", "1,3-4,7", NULL);
  GstHarness *h = harness_for (e, &bus);
  set_caps (h, "RGB", 32, 24);
  gint64 arena;

  /* frames 0-2 hybrid: nothing dumped, frame 1 included */
  for (guint i = 0; i < 3; i++)
    gst_buffer_unref (gst_harness_push_and_pull (h,
            frame_new ("RGB", 32, 24, pick_red, i)));
  fail_unless_equals_int (count_entries (dir), 0);
  g_object_get (h->element, "arena-bytes", &arena, NULL);
  fail_unless (arena > 0);

  /* switched while playing: from the next frame on */
  g_object_set (h->element, "mode", 1 /* imperative */ , NULL);
  for (guint i = 3; i < 9; i++) {
    GstBuffer *out = gst_harness_push_and_pull (h,
        frame_new ("RGB", 32, 24, pick_red, i));
    fail_unless_equals_string (top_label (out), "red");
    gst_buffer_unref (out);
  }
  fail_unless_equals_int (count_entries (dir), 3);
  fail_unless (dir_has (dir, "frame-000003"));
  fail_unless (dir_has (dir, "frame-000004"));
  fail_unless (dir_has (dir, "frame-000007"));
  gchar *frame3 = g_build_filename (dir, "frame-000003", NULL);
  gchar *index = g_build_filename (frame3, "index.json", NULL);
  fail_unless (g_file_test (index, G_FILE_TEST_EXISTS));
  /* every op node: conv, relu, pool, flatten, dense, softmax + index */
  fail_unless (count_entries (frame3) >= 7, "%u files",
      count_entries (frame3));
  g_object_get (h->element, "arena-bytes", &arena, NULL);
  fail_unless_equals_int64 (arena, 0);

  /* and back */
  g_object_set (h->element, "mode", 0, NULL);
  gst_buffer_unref (gst_harness_push_and_pull (h,
          frame_new ("RGB", 32, 24, pick_red, 9)));
  g_object_get (h->element, "arena-bytes", &arena, NULL);
  fail_unless (arena > 0);

  GstMessage *msg;
  guint n = 0;
  while ((msg = next_result_message (bus))) {
    const gchar *mode = gst_structure_get_string (gst_message_get_structure
        (msg), "mode");
    fail_unless_equals_string (mode, n >= 3 && n < 9 ? "imperative" :
        "hybrid");
    gst_message_unref (msg);
    n++;
  }
  fail_unless_equals_int (n, 10);
  teardown_with_bus (h, bus);
  remove_tree (dir);
  g_free (index);
  g_free (frame3);
  g_free (dir);
}

GST_END_TEST;

/* A bad dump-frames set while playing: one warning, no dumps, no stop. */
GST_START_TEST (test_bad_dump_frames_while_playing)
{
  GstBus *bus;
  gchar *dir = g_dir_make_tmp ("hy-dumps-XXXXXX", NULL);
  GstElement *e = infer_new ("colors-shaped");
  g_object_set (e, "dump-dir", dir, "mode", 1, NULL);
  GstHarness *h = harness_for (e, &bus);
  set_caps (h, "RGB", 32, 24);
  g_object_set (h->element, "dump-frames", "three", NULL);
  for (guint i = 0; i < 3; i++)
    gst_buffer_unref (gst_harness_push_and_pull (h,
            frame_new ("RGB", 32, 24, pick_red, i)));
  fail_unless_equals_int (count_entries (dir), 0);
  fail_unless_equals_int (count_messages (bus, GST_MESSAGE_WARNING), 1);
  g_object_set (h->element, "dump-frames", "3", NULL);
  gst_buffer_unref (gst_harness_push_and_pull (h,
          frame_new ("RGB", 32, 24, pick_red, 3)));
  fail_unless (dir_has (dir, "frame-000003"));
  teardown_with_bus (h, bus);
  remove_tree (dir);
  g_free (dir);
}

GST_END_TEST;

/* A dump that cannot be written: one warning, then a count.  It used to
 * post one warning per frame (4,519 in 3 s).  A file stands in the way of
 * the directory, which fails for root too. */
GST_START_TEST (test_unwritable_dump_dir_warns_once)
{
  GstBus *bus;
  gchar *dir = g_dir_make_tmp ("hy-dumps-XXXXXX", NULL);
  gchar *file = g_build_filename (dir, "file", NULL);
  fail_unless (g_file_set_contents (file, "x", 1, NULL));
  gchar *bad = g_build_filename (file, "dumps", NULL);
  gchar *bad2 = g_build_filename (file, "other", NULL);
  GstElement *e = infer_new ("colors-shaped");
  g_object_set (e, "dump-dir", bad, "mode", 1, NULL);
  GstHarness *h = harness_for (e, &bus);
  set_caps (h, "RGB", 32, 24);
  guint64 failures = 0;
  GstMessage *msg;
  GError *err = NULL;
  gchar *debug = NULL;

  for (guint i = 0; i < 20; i++) {
    GstBuffer *out = gst_harness_push_and_pull (h,
        frame_new ("RGB", 32, 24, pick_red, i));
    fail_unless_equals_string (top_label (out), "red");
    gst_buffer_unref (out);
  }
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  gst_message_parse_warning (msg, &err, &debug);
  fail_unless (err->domain == GST_RESOURCE_ERROR
      && err->code == GST_RESOURCE_ERROR_WRITE);
  fail_unless (strstr (err->message, bad) != NULL, "%s", err->message);
  fail_unless (strstr (debug, "dump-failures") != NULL, "%s", debug);
  g_clear_error (&err);
  g_clear_pointer (&debug, g_free);
  gst_message_unref (msg);
  fail_unless_equals_int (count_messages (bus, GST_MESSAGE_WARNING), 0);
  g_object_get (h->element, "dump-failures", &failures, NULL);
  fail_unless_equals_uint64 (failures, 20);

  /* A new dump-dir: the count so far is summed up, and the new place
   * warns once of its own. */
  g_object_set (h->element, "dump-dir", bad2, NULL);
  for (guint i = 20; i < 23; i++)
    gst_buffer_unref (gst_harness_push_and_pull (h,
            frame_new ("RGB", 32, 24, pick_red, i)));
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  gst_message_parse_warning (msg, &err, NULL);
  fail_unless (strstr (err->message, "19 more dumps") != NULL, "%s",
      err->message);
  fail_unless (strstr (err->message, bad) != NULL, "%s", err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  gst_message_parse_warning (msg, &err, NULL);
  fail_unless (strstr (err->message, bad2) != NULL, "%s", err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  fail_unless_equals_int (count_messages (bus, GST_MESSAGE_WARNING), 0);
  g_object_get (h->element, "dump-failures", &failures, NULL);
  fail_unless_equals_uint64 (failures, 23);
  fail_unless_equals_int (count_messages (bus, GST_MESSAGE_ERROR), 0);

  teardown_with_bus (h, bus);
  remove_tree (dir);
  g_free (bad2);
  g_free (bad);
  g_free (file);
  g_free (dir);
}

GST_END_TEST;

GST_START_TEST (test_renegotiation)
{
  GstElement *e = infer_new ("colors-shaped");
  GstHarness *h = harness_for (e, NULL);
  gint64 arena, arena2;
  set_caps (h, "RGB", 64, 48);
  GstBuffer *out = gst_harness_push_and_pull (h,
      frame_new ("RGB", 64, 48, pick_red, 0));
  fail_unless_equals_string (top_label (out), "red");
  gst_buffer_unref (out);
  g_object_get (h->element, "arena-bytes", &arena, NULL);
  /* a new size and format mid-stream */
  set_caps (h, "BGRx", 100, 50);
  out = gst_harness_push_and_pull (h,
      frame_new ("BGRx", 100, 50, pick_blue, 1));
  fail_unless_equals_string (top_label (out), "blue");
  gst_buffer_unref (out);
  g_object_get (h->element, "arena-bytes", &arena2, NULL);
  fail_unless_equals_int64 (arena, arena2);     /* same input size */
  gst_harness_teardown (h);

  /* the input follows the frame: a new plan per size, kept */
  e = infer_new ("colors");
  g_object_set (e, "input-size", "frame", NULL);
  h = harness_for (e, NULL);
  static const int sizes[][2] = { {32, 32}, {96, 64}, {32, 32}, {96, 64} };
  gint64 seen[4];
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++) {
    set_caps (h, "RGB", sizes[i][0], sizes[i][1]);
    for (guint k = 0; k < 3; k++) {
      out = gst_harness_push_and_pull (h, frame_new ("RGB", sizes[i][0],
              sizes[i][1], k ? pick_green : pick_white, k));
      fail_unless_equals_string (top_label (out), k ? "green" : "white");
      gst_buffer_unref (out);
    }
    g_object_get (h->element, "arena-bytes", &seen[i], NULL);
  }
  fail_unless (seen[1] > seen[0]);
  fail_unless_equals_int64 (seen[2], seen[0]);
  fail_unless_equals_int64 (seen[3], seen[1]);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_statistics)
{
  GstElement *e = infer_new ("colors-shaped");
  GstHarness *h = harness_for (e, NULL);
  set_caps (h, "RGB", 32, 24);
  guint64 inferred;
  gdouble mean, last;
  gint64 arena;
  for (guint i = 0; i < 4; i++)
    gst_buffer_unref (gst_harness_push_and_pull (h,
            frame_new ("RGB", 32, 24, pick_red, i)));
  g_object_get (h->element, "frames-inferred", &inferred, "mean-latency-us",
      &mean, "last-latency-us", &last, "arena-bytes", &arena, NULL);
  fail_unless_equals_uint64 (inferred, 4);
  fail_unless (mean > 0 && last > 0 && arena > 0);
  /* a restart starts counting again */
  gst_harness_teardown (h);
}

GST_END_TEST;

/* stats-interval: a "hybridinfer-stats" element message once the interval
 * has passed, counting the frames of that interval: every frame in,
 * every interval-th inferred, latencies no larger than the slowest frame
 * the element measured. */
static const GstStructure *
next_stats (GstBus * bus, GstMessage ** msg)
{
  while ((*msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT))) {
    const GstStructure *st = gst_message_get_structure (*msg);
    if (gst_structure_has_name (st, "hybridinfer-stats"))
      return st;
    gst_message_unref (*msg);
  }
  return NULL;
}

GST_START_TEST (test_stats_interval)
{
  gchar *model = model_path ("colors");
  GstBus *bus;
  GstElement *e = gst_element_factory_make ("hybridinfer", NULL);
  guint interval;
  g_object_get (e, "stats-interval", &interval, NULL);
  fail_unless_equals_int (interval, 0);
  /* A window of a second: eleven frames of a tiny model fit in it many
   * times over, even under the sanitizers on a loaded machine (100 ms
   * did not, once). */
  g_object_set (e, "model", model, "device", "cpu", "interval", 2,
      "stats-interval", 1000, NULL);
  GstHarness *h = harness_for (e, &bus);
  set_caps (h, "RGB", 64, 48);
  /* the first frame starts the window; 10 more within it; one after the
   * interval closes it */
  gdouble slowest = 0, last;
  for (guint i = 0; i < 11; i++) {
    gst_buffer_unref (gst_harness_push_and_pull (h,
            frame_new ("RGB", 64, 48, pick_red, i)));
    g_object_get (h->element, "last-latency-us", &last, NULL);
    slowest = MAX (slowest, last);
  }
  GstMessage *msg;
  fail_unless (next_stats (bus, &msg) == NULL, "posted before the interval");
  g_usleep (1100 * 1000);
  gst_buffer_unref (gst_harness_push_and_pull (h,
          frame_new ("RGB", 64, 48, pick_red, 11)));
  const GstStructure *st = next_stats (bus, &msg);
  fail_unless (st != NULL, "no hybridinfer-stats message");
  guint64 in, inferred, skipped;
  guint ms;
  gdouble fps_in, fps_inferred, p50, p99;
  fail_unless (gst_structure_get (st, "frames-in", G_TYPE_UINT64, &in,
          "frames-inferred", G_TYPE_UINT64, &inferred, "skipped",
          G_TYPE_UINT64, &skipped, "interval-ms", G_TYPE_UINT, &ms,
          "fps-in", G_TYPE_DOUBLE, &fps_in, "fps-inferred", G_TYPE_DOUBLE,
          &fps_inferred, "latency-p50-us", G_TYPE_DOUBLE, &p50,
          "latency-p99-us", G_TYPE_DOUBLE, &p99, NULL), "%" GST_PTR_FORMAT,
      st);
  /* frames 0 … 10: 0, 2, 4, 6, 8 and 10 inferred (interval 2) */
  fail_unless_equals_int ((gint) in, 11);
  fail_unless_equals_int ((gint) inferred, 6);
  fail_unless_equals_int ((gint) skipped, 0);
  fail_unless (ms >= 1000, "interval %u ms", ms);
  fail_unless (fabs (fps_in - 11 * 1000.0 / ms) < 0.02 * fps_in, "%g fps",
      fps_in);
  fail_unless (fabs (fps_inferred - 6 * 1000.0 / ms) < 0.02 * fps_inferred,
      "%g fps", fps_inferred);
  /* each a bucket's upper edge, at most 9 % above a latency in it */
  fail_unless (p50 > 0 && p50 <= p99, "p50 %g, p99 %g", p50, p99);
  fail_unless (p99 >= slowest && p99 <= slowest * 1.1, "p99 %g, slowest %g",
      p99, slowest);
  gst_message_unref (msg);
  /* off again: no more messages */
  g_object_set (h->element, "stats-interval", 0, NULL);
  g_usleep (120 * 1000);
  for (guint i = 12; i < 14; i++)
    gst_buffer_unref (gst_harness_push_and_pull (h,
            frame_new ("RGB", 64, 48, pick_red, i)));
  fail_unless (next_stats (bus, &msg) == NULL, "posted while off");
  teardown_with_bus (h, bus);
  g_free (model);
}

GST_END_TEST;

/* device=auto: on a machine with no GPU at all (this one, unless a GPU is
 * lent), the CPU is the normal choice and no warning is posted; where a
 * GPU is there, auto uses it.  Either way nothing is posted, however
 * often the element restarts. */
GST_START_TEST (test_device_auto_quiet)
{
  GstBus *bus;
  GstElement *e = infer_new ("colors-shaped");
  g_object_set (e, "device", "auto", NULL);
  gst_object_ref (e);
  GstHarness *h = harness_for (e, &bus);
  for (guint i = 0; i < 3; i++) {
    gst_element_set_state (e, GST_STATE_NULL);
    gst_element_set_state (e, GST_STATE_PLAYING);
  }
  set_caps (h, "RGB", 32, 24);
  GstBuffer *out = gst_harness_push_and_pull (h,
      frame_new ("RGB", 32, 24, pick_red, 0));
  fail_unless_equals_string (top_label (out), "red");
  gst_buffer_unref (out);
  fail_unless_equals_int (count_messages (bus, GST_MESSAGE_WARNING), 0);
  teardown_with_bus (h, bus);
  gst_object_unref (e);
}

GST_END_TEST;

GST_START_TEST (test_labels_mismatch_warns)
{
  GstBus *bus;
  gchar *path = NULL;
  int fd = g_file_open_tmp ("hy-labels-XXXXXX.txt", &path, NULL);
  close (fd);
  g_file_set_contents (path, "a\nb\nc\n", -1, NULL);
  GstElement *e = infer_new ("colors-shaped");
  g_object_set (e, "labels", path, NULL);
  GstHarness *h = harness_for (e, &bus);
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  GError *err = NULL;
  gst_message_parse_warning (msg, &err, NULL);
  fail_unless (strstr (err->message, "3 labels") != NULL, "%s",
      err->message);
  g_error_free (err);
  gst_message_unref (msg);
  /* classes past the labels get a made-up name */
  set_caps (h, "RGB", 32, 24);
  GstBuffer *out = gst_harness_push_and_pull (h,
      frame_new ("RGB", 32, 24, pick_red, 0));
  fail_unless_equals_string (top_label (out), "class-3");
  gst_buffer_unref (out);
  teardown_with_bus (h, bus);
  g_unlink (path);
  g_free (path);
}

GST_END_TEST;

/* Lines in a labels file of the models' directory (made by
 * make_models.py with the classes the models score). */
static guint
label_lines (const gchar * name)
{
  gchar *path = labels_path (name), *text = NULL;
  fail_unless (g_file_get_contents (path, &text, NULL, NULL), "%s", path);
  gchar **lines = g_strsplit (g_strchomp (text), "\n", -1);
  guint n = g_strv_length (lines);
  g_strfreev (lines);
  g_free (text);
  g_free (path);
  return n;
}

/* Runs two frames through `model` with `labels` (NULL: its own); the
 * warnings posted, their texts joined. */
static gchar *
detector_warnings (const gchar * model, const gchar * labels, guint * n)
{
  GstBus *bus;
  GstElement *e = infer_new (model);
  /* the quadrants models declare no input size: theirs */
  gst_util_set_object_arg (G_OBJECT (e), "input-size", "64x64");
  if (labels)
    g_object_set (e, "labels", labels, NULL);
  GstHarness *h = harness_for (e, &bus);
  set_caps (h, "RGB", 64, 64);
  for (int f = 0; f < 2; f++)
    gst_buffer_unref (gst_harness_push_and_pull (h,
            frame_new ("RGB", 64, 64, pick_red, f)));
  GString *text = g_string_new (NULL);
  GstMessage *msg;
  *n = 0;
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING))) {
    GError *err = NULL;
    gst_message_parse_warning (msg, &err, NULL);
    g_string_append_printf (text, "%s\n", err->message);
    g_error_free (err);
    gst_message_unref (msg);
    (*n)++;
  }
  teardown_with_bus (h, bus);
  return g_string_free (text, FALSE);
}

/* A detector's class count is read from its graph (the argmax that makes
 * its ids, MultiBoxDetection's class rows): a labels list of another
 * length is warned about once, naming both counts; its own list is not. */
GST_START_TEST (test_detector_labels_mismatch_warns)
{
  const gchar *models[] = { "quadrants", "quadrants3", "quadrants-multibox" };
  guint classes = label_lines ("quadrants");
  gchar *path = NULL;
  int fd = g_file_open_tmp ("hy-det-labels-XXXXXX.txt", &path, NULL);
  close (fd);
  g_file_set_contents (path, "red\ngreen\n", -1, NULL);
  gchar *want_classes = g_strdup_printf ("model has %u classes", classes);
  for (guint i = 0; i < G_N_ELEMENTS (models); i++) {
    guint n;
    gchar *text = detector_warnings (models[i], NULL, &n);
    fail_unless_equals_int (n, 0);
    g_free (text);
    text = detector_warnings (models[i], path, &n);
    fail_unless_equals_int (n, 1);
    fail_unless (strstr (text, "has 2 labels") != NULL
        && strstr (text, want_classes) != NULL, "%s: %s", models[i], text);
    g_free (text);
  }
  g_free (want_classes);
  g_unlink (path);
  g_free (path);
}

GST_END_TEST;

/* A model that declares its image channels last, (1, 32, 32, 3): refused
 * at start with the layout as the reason, not fed rows as channels (the
 * planner's own error blamed input-size). */
GST_START_TEST (test_nhwc_input_refused)
{
  gchar *dir = g_dir_make_tmp ("hy-nhwc-XXXXXX", NULL);
  gchar *src = model_path ("colors-shaped"), *json = NULL, *params = NULL;
  gchar *src_params = g_build_filename (models_dir (),
      "colors-shaped-0000.params", NULL);
  gsize json_len, params_len;
  fail_unless (g_file_get_contents (src, &json, &json_len, NULL));
  fail_unless (g_file_get_contents (src_params, &params, &params_len, NULL));
  fail_unless (strstr (json, "\"(1, 3, 32, 32)\"") != NULL);
  gchar **parts = g_strsplit (json, "\"(1, 3, 32, 32)\"", 2);
  gchar *nhwc = g_strjoinv ("\"(1, 32, 32, 3)\"", parts);
  gchar *model = g_build_filename (dir, "nhwc-symbol.json", NULL);
  gchar *model_params = g_build_filename (dir, "nhwc-0000.params", NULL);
  fail_unless (g_file_set_contents (model, nhwc, -1, NULL));
  fail_unless (g_file_set_contents (model_params, params, params_len, NULL));

  GstElement *e = gst_element_factory_make ("hybridinfer", NULL);
  g_object_set (e, "model", model, "device", "cpu", NULL);
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  GError *err = NULL;
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, "(1, 32, 32, 3)") != NULL
      && strstr (err->message, "NHWC") != NULL
      && strstr (err->message, "(N, C, H, W)") != NULL, "%s", err->message);
  g_error_free (err);
  gst_message_unref (msg);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  gst_object_unref (e);

  g_unlink (model);
  g_unlink (model_params);
  g_rmdir (dir);
  g_strfreev (parts);
  g_free (nhwc);
  g_free (model);
  g_free (model_params);
  g_free (json);
  g_free (params);
  g_free (src);
  g_free (src_params);
  g_free (dir);
}

GST_END_TEST;

static Suite *
hybridinfer_suite (void)
{
  Suite *s = suite_create ("hybridinfer");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_registered_from_build_tree);
  tcase_add_test (tc, test_caps_accepts_video_formats);
  tcase_add_test (tc, test_every_format_passes_through);
  tcase_add_test (tc, test_buffer_data_untouched);
  tcase_add_test (tc, test_property_defaults);
  tcase_add_test (tc, test_property_round_trip);
  tcase_add_test (tc, test_property_type_errors);
  tcase_add_test (tc, test_semantic_errors);
  tcase_add_test (tc, test_classification_patterns);
  tcase_add_test (tc, test_detection_meta);
  tcase_add_test (tc, test_detection_letterbox);
  tcase_add_test (tc, test_detection_class_thresholds);
  tcase_add_test (tc, test_classification_class_thresholds);
  tcase_add_test (tc, test_bus_messages);
  tcase_add_test (tc, test_raw_output);
  tcase_add_test (tc, test_tensor_meta_lifetime);
  tcase_add_test (tc, test_tensor_meta_pool);
  tcase_add_test (tc, test_detection_count_changes);
  tcase_add_test (tc, test_interval);
  tcase_add_test (tc, test_batch);
  tcase_add_test (tc, test_batch_matches_single);
  tcase_add_test (tc, test_batch_bounded_upstream);
  tcase_add_test (tc, test_batch_allocation_query);
  tcase_add_test (tc, test_mode_switch_while_playing);
  tcase_add_test (tc, test_out_of_memory_at_start);
  tcase_add_test (tc, test_out_of_memory_while_playing);
  tcase_add_test (tc, test_bad_dump_frames_while_playing);
  tcase_add_test (tc, test_unwritable_dump_dir_warns_once);
  tcase_add_test (tc, test_renegotiation);
  tcase_add_test (tc, test_statistics);
  tcase_add_test (tc, test_device_auto_quiet);
  tcase_add_test (tc, test_stats_interval);
  tcase_add_test (tc, test_labels_mismatch_warns);
  tcase_add_test (tc, test_detector_labels_mismatch_warns);
  tcase_add_test (tc, test_nhwc_input_refused);
  return s;
}

GST_CHECK_MAIN (hybridinfer);
