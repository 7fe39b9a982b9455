/*
 * test-model-sidecar.c — `hybridinfer model=…` with no other property:
 * everything else comes from the model's sidecar (PREFIX-model.json,
 * core/include/hybrid-sidecar.h).
 *
 * Real pipelines, as a user types them (gst_parse_launch):
 *   videotestsrc pattern=P ! video/x-raw,format=F,width=W,height=H
 *     ! videoconvert ! hybridinfer model=pipelines/models/patterns-symbol.json
 *     ! fakesink
 * for several patterns, sizes from 320x240 to 1080p and RGB, I420, NV12;
 * every frame's label (its tensor meta) must name the pattern, and no
 * per-frame message is posted (they are opt-in).  Then the precedence (a property the user
 * set wins, even at its default value), an unknown key (one warning) and a
 * bad value (an error naming file, key and value).
 */
#include <glib/gstdio.h>

#include "element-util.h"

#define FRAMES 2

static gchar *
patterns_model (void)
{
  const gchar *src = g_getenv ("HY_SOURCE_DIR");
  fail_unless (src != NULL, "HY_SOURCE_DIR is not set (run from meson)");
  return g_build_filename (src, "pipelines", "models",
      "patterns-symbol.json", NULL);
}

typedef struct {
  GPtrArray *labels;            /* each buffer's top label, in order */
} seen;

static GstPadProbeReturn
collect (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  seen *s = data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstHybridTensorMeta *meta = gst_buffer_get_hybrid_tensor_meta (buf);
  const gchar *label = meta && meta->results
      ? gst_structure_get_string (meta->results, "label") : NULL;
  g_ptr_array_add (s->labels, g_strdup (label ? label : "(none)"));
  return GST_PAD_PROBE_OK;
}

/* Runs `launch` (its hybridinfer named "infer", its sink "sink") to the
 * end.  Returns the buffers' labels; *messages gets the labels of the
 * element's bus messages, *warnings and *error the text of those (NULL
 * when none). */
static GPtrArray *
run_pipeline (const gchar * launch, GPtrArray ** messages, gchar ** warnings,
    gchar ** error_text)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (launch, &error);
  fail_unless (pipeline != NULL, "%s: %s", launch,
      error ? error->message : "?");
  g_clear_error (&error);
  seen s = { g_ptr_array_new_with_free_func (g_free) };
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstPad *pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, collect, &s, NULL);
  gst_object_unref (pad);
  gst_object_unref (sink);

  *messages = g_ptr_array_new_with_free_func (g_free);
  GString *warn = g_string_new (NULL);
  *error_text = NULL;
  GstBus *bus = gst_element_get_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  for (gboolean done = FALSE; !done;) {
    GstMessage *msg = gst_bus_timed_pop (bus, 60 * GST_SECOND);
    fail_unless (msg != NULL, "%s: no EOS within 60 s", launch);
    switch (GST_MESSAGE_TYPE (msg)) {
      case GST_MESSAGE_EOS:
        done = TRUE;
        break;
      case GST_MESSAGE_ERROR:{
        GError *e = NULL;
        gst_message_parse_error (msg, &e, NULL);
        *error_text = g_strdup (e->message);
        g_error_free (e);
        done = TRUE;
        break;
      }
      case GST_MESSAGE_WARNING:{
        GError *e = NULL;
        gst_message_parse_warning (msg, &e, NULL);
        g_string_append_printf (warn, "%s\n", e->message);
        g_error_free (e);
        break;
      }
      case GST_MESSAGE_ELEMENT:
        if (gst_message_has_name (msg, "hybridinfer")) {
          const gchar *label = gst_structure_get_string
              (gst_message_get_structure (msg), "label");
          g_ptr_array_add (*messages, g_strdup (label ? label : "(none)"));
        }
        break;
      default:
        break;
    }
    gst_message_unref (msg);
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  *warnings = warn->len ? g_string_free (warn, FALSE)
      : (g_string_free (warn, TRUE), NULL);
  return s.labels;
}

static gchar *
launch_line (const gchar * pattern, const gchar * format, int w, int h,
    const gchar * model, const gchar * extra)
{
  return g_strdup_printf ("videotestsrc pattern=%s num-buffers=%d "
      "! video/x-raw,format=%s,width=%d,height=%d ! videoconvert "
      "! hybridinfer name=infer model=%s%s%s ! fakesink name=sink", pattern,
      FRAMES, format, w, h, model, extra ? " " : "", extra ? extra : "");
}

/* Every (pattern, format) pair once; the sizes cycle so that each format
 * meets each size (3 and 4 are coprime). */
GST_START_TEST (test_model_alone_names_every_pattern)
{
  static const struct {
    const gchar *pattern, *label;
  } patterns[] = {
    {"snow", "snow"}, {"smpte", "smpte"}, {"ball", "ball"},
    {"pinwheel", "pinwheel"}, {"red", "red"}, {"checkers-4", "checkers"},
    {"gamut", "gamut"}, {"smpte75", "smpte75"},
  };
  static const gchar *formats[] = { "RGB", "I420", "NV12" };
  static const int sizes[][2] = {
    {320, 240}, {640, 480}, {1280, 720}, {1920, 1080},
  };
  gchar *model = patterns_model ();
  guint run = 0;
  for (guint p = 0; p < G_N_ELEMENTS (patterns); p++)
    for (guint f = 0; f < G_N_ELEMENTS (formats); f++, run++) {
      const int *size = sizes[run % G_N_ELEMENTS (sizes)];
      gchar *launch = launch_line (patterns[p].pattern, formats[f], size[0],
          size[1], model, NULL);
      GPtrArray *messages;
      gchar *warnings, *error;
      GPtrArray *labels = run_pipeline (launch, &messages, &warnings, &error);
      fail_unless (error == NULL, "%s: %s", launch, error);
      fail_unless_equals_int (labels->len, FRAMES);
      for (guint i = 0; i < labels->len; i++)
        fail_unless_equals_string (g_ptr_array_index (labels, i),
            patterns[p].label);
      /* Per-frame messages are opt-in (post-messages): model= alone posts
       * none, and the labels above came from the buffers. */
      fail_unless_equals_int (messages->len, 0);
      g_ptr_array_unref (labels);
      g_ptr_array_unref (messages);
      g_free (warnings);
      g_free (launch);
    }
  g_free (model);
}

GST_END_TEST;

/* A property the user set wins over the sidecar; "set" is set_property
 * having run, so the element's own default given explicitly counts. */
GST_START_TEST (test_properties_override_sidecar)
{
  gchar *model = patterns_model ();
  gchar *dir = g_dir_make_tmp ("hy-sidecar-XXXXXX", NULL);
  gchar *labels = g_build_filename (dir, "numbers.txt", NULL);
  GString *text = g_string_new (NULL);
  for (int i = 0; i < 21; i++)
    g_string_append_printf (text, "n%d\n", i);
  fail_unless (g_file_set_contents (labels, text->str, -1, NULL));
  g_string_free (text, TRUE);

  /* labels=: the sidecar's labels file is not read. */
  gchar *extra = g_strdup_printf ("labels=%s", labels);
  gchar *launch = launch_line ("snow", "RGB", 320, 240, model, extra);
  GPtrArray *messages;
  gchar *warnings, *error;
  GPtrArray *got = run_pipeline (launch, &messages, &warnings, &error);
  fail_unless (error == NULL, "%s", error);
  fail_unless_equals_string (g_ptr_array_index (got, 0), "n4");  /* snow */
  g_ptr_array_unref (got);
  g_ptr_array_unref (messages);
  g_free (warnings);
  g_free (launch);
  g_free (extra);

  /* scale=0-255, the element's default, set explicitly: the sidecar's
   * 0-1 is not used, so the model sees 255 times its input and the plain
   * fields are no longer told apart. */
  static const gchar *plain[] = { "red", "green", "blue", "white" };
  guint right = 0;
  for (guint i = 0; i < G_N_ELEMENTS (plain); i++) {
    launch = launch_line (plain[i], "RGB", 320, 240, model, "scale=0-255");
    got = run_pipeline (launch, &messages, &warnings, &error);
    fail_unless (error == NULL, "%s", error);
    right += !strcmp (g_ptr_array_index (got, 0), plain[i]);
    g_ptr_array_unref (got);
    g_ptr_array_unref (messages);
    g_free (warnings);
    g_free (launch);
  }
  fail_if (right == G_N_ELEMENTS (plain),
      "scale=0-255 set by the user did not override the sidecar's 0-1");

  g_unlink (labels);
  g_rmdir (dir);
  g_free (labels);
  g_free (dir);
  g_free (model);
}

GST_END_TEST;

/* A copy of the pattern model whose sidecar is `sidecar` (NULL: none);
 * returns the symbol file's path. */
static gchar *
model_copy (const gchar * dir, const gchar * sidecar)
{
  gchar *src = patterns_model ();
  gchar *src_dir = g_path_get_dirname (src);
  static const gchar *files[] = { "patterns-symbol.json",
    "patterns-0000.params", "patterns-labels.txt"
  };
  for (guint i = 0; i < G_N_ELEMENTS (files); i++) {
    gchar *from = g_build_filename (src_dir, files[i], NULL);
    gchar *to = g_build_filename (dir, files[i], NULL);
    gchar *data;
    gsize len;
    fail_unless (g_file_get_contents (from, &data, &len, NULL));
    fail_unless (g_file_set_contents (to, data, (gssize) len, NULL));
    g_free (data);
    g_free (from);
    g_free (to);
  }
  gchar *side = g_build_filename (dir, "patterns-model.json", NULL);
  fail_unless (!sidecar || g_file_set_contents (side, sidecar, -1, NULL));
  g_free (side);
  g_free (src_dir);
  g_free (src);
  return g_build_filename (dir, "patterns-symbol.json", NULL);
}

static void
remove_copy (const gchar * dir)
{
  static const gchar *files[] = { "patterns-symbol.json",
    "patterns-0000.params", "patterns-labels.txt", "patterns-model.json"
  };
  for (guint i = 0; i < G_N_ELEMENTS (files); i++) {
    gchar *path = g_build_filename (dir, files[i], NULL);
    g_unlink (path);
    g_free (path);
  }
  g_rmdir (dir);
}

GST_START_TEST (test_sidecar_unknown_key_and_bad_value)
{
  gchar *dir = g_dir_make_tmp ("hy-sidecar-XXXXXX", NULL);
  gchar *model = model_copy (dir, "{\"input_size\": [64, 64], "
      "\"scale\": \"0-1\", \"mean\": [0.5], \"std\": [0.25], "
      "\"labels\": \"patterns-labels.txt\", \"colour_order\": \"rgb\"}");
  gchar *launch = launch_line ("snow", "I420", 640, 480, model,
      "device=cpu");
  GPtrArray *messages;
  gchar *warnings, *error;
  GPtrArray *got = run_pipeline (launch, &messages, &warnings, &error);
  fail_unless (error == NULL, "%s", error);
  fail_unless_equals_string (g_ptr_array_index (got, 0), "snow");
  fail_unless (warnings && strstr (warnings, "\"colour_order\"")
      && strstr (warnings, "patterns-model.json"), "warnings: %s", warnings);
  g_ptr_array_unref (got);
  g_ptr_array_unref (messages);
  g_free (warnings);
  g_free (launch);
  g_free (model);
  remove_copy (dir);
  g_free (dir);

  dir = g_dir_make_tmp ("hy-sidecar-XXXXXX", NULL);
  model = model_copy (dir, "{\"scale\": \"0..1\"}");
  launch = launch_line ("snow", "RGB", 320, 240, model, NULL);
  got = run_pipeline (launch, &messages, &warnings, &error);
  fail_unless (error != NULL, "a bad sidecar value must fail the start");
  fail_unless (strstr (error, "patterns-model.json")
      && strstr (error, "\"scale\"") && strstr (error, "\"0..1\""),
      "error: %s", error);
  fail_unless_equals_int (got->len, 0);
  g_ptr_array_unref (got);
  g_ptr_array_unref (messages);
  g_free (warnings);
  g_free (error);
  g_free (launch);
  g_free (model);
  remove_copy (dir);
  g_free (dir);
}

GST_END_TEST;

/* Without a sidecar, pixels fed as 0..255 because nothing said otherwise
 * are a warning naming the model; a normalisation property set by hand,
 * even to the default, is a choice and silences it. */
GST_START_TEST (test_no_sidecar_warns_of_unnormalised_pixels)
{
  static const struct {
    const gchar *extra;
    gboolean warns;
  } cases[] = {
    {"device=cpu", TRUE},
    {"device=cpu scale=0-255", FALSE},
    {"device=cpu mean=\"<0.5>\"", FALSE},
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *dir = g_dir_make_tmp ("hy-sidecar-XXXXXX", NULL);
    gchar *model = model_copy (dir, NULL);
    gchar *launch = launch_line ("snow", "RGB", 64, 64, model,
        cases[i].extra);
    GPtrArray *messages;
    gchar *warnings, *error;
    GPtrArray *got = run_pipeline (launch, &messages, &warnings, &error);
    fail_unless (error == NULL, "%s: %s", cases[i].extra, error);
    if (cases[i].warns)
      fail_unless (warnings && strstr (warnings, "patterns-symbol.json has "
              "no sidecar") && strstr (warnings, "pixels are fed as 0..255"),
          "%s: warnings: %s", cases[i].extra, warnings);
    else
      fail_unless (warnings == NULL, "%s: warnings: %s", cases[i].extra,
          warnings);
    g_ptr_array_unref (got);
    g_ptr_array_unref (messages);
    g_free (warnings);
    g_free (launch);
    g_free (model);
    remove_copy (dir);
    g_free (dir);
  }
}

GST_END_TEST;

/* How many classes a frame's result lists, from a copy of the pattern
 * model whose sidecar is `sidecar`, with `top_k` set when not 0. */
static guint
classes_listed (const gchar * sidecar, guint top_k)
{
  gchar *dir = g_dir_make_tmp ("hy-sidecar-XXXXXX", NULL);
  gchar *model = model_copy (dir, sidecar);
  GstElement *e = gst_element_factory_make ("hybridinfer", NULL);
  g_object_set (e, "model", model, "device", "cpu", NULL);
  if (top_k)
    g_object_set (e, "top-k", top_k, NULL);
  GstHarness *h = harness_for (e, NULL);
  set_caps (h, "RGB", 64, 48);
  GstBuffer *out = gst_harness_push_and_pull (h,
      frame_new ("RGB", 64, 48, pick_red, 0));
  const GValue *labels = gst_structure_get_value (results_of (out),
      "labels");
  fail_unless (labels != NULL, "no labels in %" GST_PTR_FORMAT,
      results_of (out));
  guint n = gst_value_array_get_size (labels);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  g_free (model);
  remove_copy (dir);
  g_free (dir);
  return n;
}

/* The sidecar's top_k applies unless the top-k property is set. */
GST_START_TEST (test_sidecar_top_k)
{
  guint dflt;
  GstElement *e = gst_element_factory_make ("hybridinfer", NULL);
  g_object_get (e, "top-k", &dflt, NULL);
  gst_object_unref (e);
  fail_unless (dflt != 2 && dflt != 4, "default top-k %u", dflt);
  fail_unless_equals_int (classes_listed ("{\"scale\": \"0-1\"}", 0), dflt);
  fail_unless_equals_int (classes_listed ("{\"top_k\": 2}", 0), 2);
  fail_unless_equals_int (classes_listed ("{\"top_k\": 2}", 4), 4);
  /* set explicitly to the default: still the property's */
  fail_unless_equals_int (classes_listed ("{\"top_k\": 2}", dflt), dflt);
}

GST_END_TEST;

static Suite *
model_sidecar_suite (void)
{
  Suite *s = suite_create ("model-sidecar");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_model_alone_names_every_pattern);
  tcase_add_test (tc, test_properties_override_sidecar);
  tcase_add_test (tc, test_sidecar_unknown_key_and_bad_value);
  tcase_add_test (tc, test_no_sidecar_warns_of_unnormalised_pixels);
  tcase_add_test (tc, test_sidecar_top_k);
  return s;
}

GST_CHECK_MAIN (model_sidecar);
