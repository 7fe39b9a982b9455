/*
 * test-engines.c — hybridinfer on an engine: skip-when-busy and
 * shared-engine (gst-plugin/infer-engine.h), in real pipelines.
 *
 * - Results through a shared engine equal those of independent elements,
 *   frame by frame, and name the right colour.
 * - Eight elements on one shared engine hold one copy of the weights,
 *   eight independent ones eight (resident set measured; not under
 *   AddressSanitizer, whose quarantine keeps freed memory resident).
 * - With a model slower than the frame rate and a live source, every frame
 *   reaches a synchronising sink on time (none dropped as late) with
 *   skip-when-busy, frames-skipped counts the frames that were not
 *   inferred, and without skip-when-busy the same pipeline drops frames:
 *   the check can see lateness.
 * - Settings an engine cannot honour are refused with the reason.
 *
 * The heavy models are made here with the block API (random weights:
 * these tests compare the element with itself, not with MXNet, which the
 * element-vs-mxnet tests do) into a temporary directory.
 */
#include <stdio.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "hybrid-block.h"
#include "element-util.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

static gchar *tmp_dir;

/* ---- models ------------------------------------------------------------- */

static hy_value *
sequential_forward (hy_block *self, hy_F *F, hy_value *const *inputs,
    int n_inputs, hy_value *const *params)
{
  return hy_F_call_child (F, self, "body", inputs[0]);
}

/* Exports `body` (initialised, traced at input (1, 3, side, side)) as
 * tmp_dir/NAME; returns the symbol file's path. */
static gchar *
export_model (const gchar * name, hy_block * body, int side)
{
  GError *error = NULL;
  hy_block *net = hy_hybrid_block_new (name, sequential_forward);
  hy_block_register_child (net, "body", body);
  hy_random_seed (7);
  fail_unless (hy_block_initialize (net, hy_init_xavier (), &error), "%s",
      error ? error->message : "");
  hy_block_hybridize (net, HY_HYBRID_DEFAULT);
  hy_shape shape = hy_shape_make (HY_DIMS (1, 3, side, side));
  hy_tensor *x = hy_tensor_new (&shape);
  memset (x->data, 0, hy_shape_numel (&shape) * sizeof (float));
  fail_unless (hy_block_forward (net, x, &error) != NULL, "%s",
      error ? error->message : "");
  gchar *prefix = g_build_filename (tmp_dir, name, NULL);
  fail_unless (hy_block_export (net, prefix, 0, &error), "%s",
      error ? error->message : "");
  hy_tensor_free (x);
  hy_block_free (net);
  gchar *symbol = g_strdup_printf ("%s-symbol.json", prefix);
  g_free (prefix);
  return symbol;
}

/* ~33.6 MB of weights, a cheap forward: dense 8 -> 4096 -> 2048 -> 10. */
#define WIDE_WEIGHT_BYTES ((8.0 * 4096 + 4096.0 * 2048 + 2048 * 10) * 4)

static gchar *
wide_model (void)
{
  hy_dense_opts relu = {.activation = "relu" };
  hy_conv2d_opts pad = {.pad = 1,.activation = "relu" };
  hy_block *body = hy_hybrid_sequential_new ();
  hy_sequential_add (body, hy_conv2d_new (8, 3, &pad));
  hy_sequential_add (body, hy_global_avg_pool2d_new ());
  hy_sequential_add (body, hy_flatten_new ());
  hy_sequential_add (body, hy_dense_new (4096, &relu));
  hy_sequential_add (body, hy_dense_new (2048, &relu));
  hy_sequential_add (body, hy_dense_new (10, NULL));
  return export_model ("wide", body, 32);
}

/* Several GFLOP per 64x64 frame: tens of milliseconds and more on any
 * CPU this runs on, against a frame every 10 ms. */
static gchar *
slow_model (void)
{
  hy_conv2d_opts pad = {.pad = 1,.activation = "relu" };
  hy_block *body = hy_hybrid_sequential_new ();
  /* Slower than a frame interval (10 ms) in every build, yet fast enough
   * that a few forwards finish within the 0.4 s the stream lasts: under
   * the sanitizers a forward of the 128-channel model took 0.4 s. */
  const int channels = UNDER_ASAN ? 64 : 128;
  for (int i = 0; i < 6; i++)
    hy_sequential_add (body, hy_conv2d_new (channels, 3, &pad));
  hy_sequential_add (body, hy_global_avg_pool2d_new ());
  hy_sequential_add (body, hy_flatten_new ());
  hy_sequential_add (body, hy_dense_new (10, NULL));
  return export_model ("slow", body, 64);
}

/* ---- running pipelines ---------------------------------------------------- */

typedef struct {
  guint64 frame;
  gint class_id;
  gfloat score;
  gchar *label;
  gboolean inferred;
} seen_result;

static void
seen_clear (gpointer p)
{
  g_free (((seen_result *) p)->label);
}

/* Every buffer reaching a sink, per sink: its result (class -1: none). */
static GstPadProbeReturn
collect (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  GArray *seen = data;
  GstHybridTensorMeta *meta =
      gst_buffer_get_hybrid_tensor_meta (GST_PAD_PROBE_INFO_BUFFER (info));
  seen_result r = {.class_id = -1 };
  if (meta && meta->results) {
    r.frame = meta->frame_number;
    r.inferred = meta->inferred;
    r.label = g_strdup (gst_structure_get_string (meta->results, "label"));
    gst_structure_get_int (meta->results, "class-id", &r.class_id);
    const GValue *score = gst_structure_get_value (meta->results, "score");
    r.score = score ? g_value_get_float (score) : 0.0f;
  }
  g_array_append_val (seen, r);
  return GST_PAD_PROBE_OK;
}

typedef struct {
  GstElement *pipeline;
  guint n_sinks;
  GArray *seen[8];              /* of seen_result, per sink "sN" */
} run;

static void
run_start (run * r, const gchar * launch, guint n_sinks)
{
  GError *error = NULL;
  r->pipeline = gst_parse_launch (launch, &error);
  fail_unless (r->pipeline != NULL, "%s: %s", launch,
      error ? error->message : "?");
  g_clear_error (&error);
  r->n_sinks = n_sinks;
  for (guint i = 0; i < n_sinks; i++) {
    gchar *name = g_strdup_printf ("s%u", i);
    GstElement *sink = gst_bin_get_by_name (GST_BIN (r->pipeline), name);
    fail_unless (sink != NULL, "no sink %s", name);
    GstPad *pad = gst_element_get_static_pad (sink, "sink");
    r->seen[i] = g_array_new (FALSE, TRUE, sizeof (seen_result));
    g_array_set_clear_func (r->seen[i], seen_clear);
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, collect, r->seen[i],
        NULL);
    gst_object_unref (pad);
    gst_object_unref (sink);
    g_free (name);
  }
  gst_element_set_state (r->pipeline, GST_STATE_PLAYING);
}

/* Waits for EOS; returns the first error's text (free it), or NULL. */
static gchar *
run_wait (run * r)
{
  GstBus *bus = gst_element_get_bus (r->pipeline);
  gchar *error_text = NULL;
  for (gboolean done = FALSE; !done;) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 120 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless (msg != NULL, "no EOS within 120 s");
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
      GError *e = NULL;
      gst_message_parse_error (msg, &e, NULL);
      error_text = g_strdup (e->message);
      g_error_free (e);
    }
    done = TRUE;
    gst_message_unref (msg);
  }
  gst_object_unref (bus);
  return error_text;
}

static void
run_stop (run * r)
{
  gst_element_set_state (r->pipeline, GST_STATE_NULL);
  gst_object_unref (r->pipeline);
  for (guint i = 0; i < r->n_sinks; i++)
    g_array_unref (r->seen[i]);
}

static GstElement *
run_get (run * r, const gchar * name)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (r->pipeline), name);
  fail_unless (e != NULL, "no element %s", name);
  return e;
}

/* ---- results through a shared engine --------------------------------------- */

static const gchar *colours[] = { "red", "green", "blue", "white" };

#define EQ_FRAMES 12

/* Four streams of the colors model, each its own colour; `extra` is added
 * to every hybridinfer. */
static gchar *
colours_launch (const gchar * extra)
{
  gchar *model = model_path ("colors");
  gchar *labels = labels_path ("colors");
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < G_N_ELEMENTS (colours); i++)
    g_string_append_printf (s, "videotestsrc pattern=%s num-buffers=%d ! "
        "video/x-raw,format=RGB,width=64,height=48 ! hybridinfer name=h%u "
        "model=%s labels=%s device=cpu %s ! fakesink name=s%u ", colours[i],
        EQ_FRAMES, i, model, labels, extra, i);
  g_free (model);
  g_free (labels);
  return g_string_free (s, FALSE);
}

static void
colours_run (const gchar * extra, run * r)
{
  gchar *launch = colours_launch (extra);
  run_start (r, launch, G_N_ELEMENTS (colours));
  gchar *error = run_wait (r);
  fail_unless (error == NULL, "%s: %s", launch, error);
  g_free (launch);
}

GST_START_TEST (test_shared_results_equal)
{
  run shared, alone;
  colours_run ("shared-engine=colours batch-size=4 batch-timeout=20",
      &shared);
  colours_run ("", &alone);
  for (guint i = 0; i < G_N_ELEMENTS (colours); i++) {
    GArray *a = shared.seen[i], *b = alone.seen[i];
    fail_unless_equals_int (a->len, EQ_FRAMES);
    fail_unless_equals_int (b->len, EQ_FRAMES);
    for (guint f = 0; f < a->len; f++) {
      seen_result *x = &g_array_index (a, seen_result, f);
      seen_result *y = &g_array_index (b, seen_result, f);
      fail_unless (x->inferred && y->inferred, "stream %u frame %u: no "
          "result of its own", i, f);
      fail_unless_equals_uint64 (x->frame, f);
      fail_unless_equals_string (x->label, colours[i]);
      fail_unless_equals_int (x->class_id, y->class_id);
      fail_unless (fabsf (x->score - y->score) <= 1e-5f,
          "stream %u frame %u: score %.7f shared, %.7f alone", i, f,
          x->score, y->score);
    }
    gchar *name = g_strdup_printf ("h%u", i);
    GstElement *h = run_get (&shared, name);
    guint64 inferred;
    g_object_get (h, "frames-inferred", &inferred, NULL);
    fail_unless_equals_uint64 (inferred, EQ_FRAMES);
    gst_object_unref (h);
    g_free (name);
  }
  run_stop (&shared);
  run_stop (&alone);
}

GST_END_TEST;

/* Streams of different lengths on one engine whose partial batches never
 * time out (batch-timeout=0): once the short one ends, the long one's
 * frames run in batches of one instead of waiting for it for ever. */
GST_START_TEST (test_shared_stream_ends_early)
{
  gchar *model = model_path ("colors");
  gchar *launch = g_strdup_printf ("videotestsrc pattern=red num-buffers=3 ! "
      "hybridinfer model=%s device=cpu shared-engine=ends batch-size=2 "
      "batch-timeout=0 ! fakesink name=s0 "
      "videotestsrc pattern=blue num-buffers=20 ! hybridinfer model=%s "
      "device=cpu shared-engine=ends batch-size=2 batch-timeout=0 ! "
      "fakesink name=s1", model, model);
  run r;
  run_start (&r, launch, 2);
  gchar *error = run_wait (&r);
  fail_unless (error == NULL, "%s", error);
  fail_unless_equals_int (r.seen[0]->len, 3);
  fail_unless_equals_int (r.seen[1]->len, 20);
  run_stop (&r);
  g_free (launch);
  g_free (model);
}

GST_END_TEST;

/* ---- one copy of the weights ---------------------------------------------- */

static double
rss_bytes (void)
{
  glong pages_total = 0, pages_resident = 0;
  FILE *f = fopen ("/proc/self/statm", "r");
  fail_unless (f != NULL);
  fail_unless (fscanf (f, "%ld %ld", &pages_total, &pages_resident) == 2);
  fclose (f);
  return (double) pages_resident *sysconf (_SC_PAGESIZE);
}

/* The resident set eight elements on `model` add while they play. */
static double
growth_of_eight (const gchar * model, const gchar * extra)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < 8; i++)
    g_string_append_printf (s, "videotestsrc num-buffers=4 ! "
        "video/x-raw,width=32,height=32 ! hybridinfer model=%s device=cpu "
        "input-size=32x32 %s ! fakesink name=s%u ", model, extra, i);
  double before = rss_bytes ();
  run r;
  run_start (&r, s->str, 8);
  gchar *error = run_wait (&r);
  fail_unless (error == NULL, "%s: %s", s->str, error);
  /* at EOS every element still holds its session or its engine */
  double grown = rss_bytes () - before;
  for (guint i = 0; i < 8; i++)
    fail_unless_equals_int (r.seen[i]->len, 4);
  run_stop (&r);
  g_string_free (s, TRUE);
  return grown;
}

GST_START_TEST (test_shared_one_copy)
{
  if (UNDER_ASAN) {
    printf ("SKIP shared-one-copy: AddressSanitizer keeps freed memory "
        "resident (the resident set says nothing here)\n");
    return;
  }
  gchar *model = wide_model ();
  /* warm-up: GStreamer's registry, the plugins, the first-use caches */
  growth_of_eight (model, "shared-engine=warm batch-size=8");
  double shared = growth_of_eight (model, "shared-engine=rss batch-size=8");
  double alone = growth_of_eight (model, "");
  printf ("8 elements on a model of %.1f MB of weights: %.1f MB shared, "
      "%.1f MB independent\n", WIDE_WEIGHT_BYTES / 1e6, shared / 1e6,
      alone / 1e6);
  fail_unless (shared < 2 * WIDE_WEIGHT_BYTES, "a shared engine grew by "
      "%.1f MB: more than one copy of %.1f MB", shared / 1e6,
      WIDE_WEIGHT_BYTES / 1e6);
  fail_unless (alone > 6 * WIDE_WEIGHT_BYTES, "independent elements grew "
      "by only %.1f MB: this check cannot tell copies apart", alone / 1e6);
  g_free (model);
}

GST_END_TEST;

/* ---- skip-when-busy ---------------------------------------------------------- */

#define LIVE_FRAMES 40
#define LATE_MS 50

/* A live 100 fps source into a synchronising sink that drops a frame
 * LATE_MS late (a few frames' time: a loaded test machine may hold the
 * streaming thread back that long now and then; a frame that waits for a
 * forward of this model is later than that); returns the sink's rendered and dropped counts and the element's
 * statistics. */
static void
live_run (const gchar * model, gboolean skip, guint64 * rendered,
    guint64 * dropped, guint64 * inferred, guint64 * skipped, GArray ** seen)
{
  gchar *launch = g_strdup_printf ("videotestsrc is-live=true "
      "num-buffers=%d ! video/x-raw,width=64,height=64,framerate=100/1 ! "
      "hybridinfer name=h model=%s device=cpu input-size=64x64 "
      "skip-when-busy=%s ! fakesink name=s0 sync=true qos=true "
      "max-lateness=%d", LIVE_FRAMES, model, skip ? "true" : "false",
      LATE_MS * 1000000);
  run r;
  run_start (&r, launch, 1);
  gchar *error = run_wait (&r);
  fail_unless (error == NULL, "%s: %s", launch, error);
  GstElement *sink = run_get (&r, "s0"), *h = run_get (&r, "h");
  GstStructure *stats;
  g_object_get (sink, "stats", &stats, NULL);
  fail_unless (gst_structure_get_uint64 (stats, "rendered", rendered));
  fail_unless (gst_structure_get_uint64 (stats, "dropped", dropped));
  gst_structure_free (stats);
  g_object_get (h, "frames-inferred", inferred, "frames-skipped", skipped,
      NULL);
  *seen = g_array_ref (r.seen[0]);
  gst_object_unref (sink);
  gst_object_unref (h);
  run_stop (&r);
  g_free (launch);
}

GST_START_TEST (test_skip_when_busy)
{
  gchar *model = slow_model ();
  guint64 rendered, dropped, inferred, skipped;
  GArray *seen;

  live_run (model, TRUE, &rendered, &dropped, &inferred, &skipped, &seen);
  printf ("skip-when-busy: %" G_GUINT64_FORMAT " rendered, %"
      G_GUINT64_FORMAT " dropped late, %" G_GUINT64_FORMAT " inferred, %"
      G_GUINT64_FORMAT " skipped\n", rendered, dropped, inferred, skipped);
  fail_unless_equals_uint64 (dropped, 0);
  fail_unless_equals_uint64 (rendered, LIVE_FRAMES);
  fail_unless_equals_int (seen->len, LIVE_FRAMES);
  fail_unless (skipped > 0, "no frame skipped: the model kept up");
  fail_unless (inferred >= 1, "no result came back");
  /* every frame inferred or skipped but the last ones, whose results were
   * still in the engine when the stream ended */
  fail_unless (inferred + skipped <= LIVE_FRAMES
      && inferred + skipped >= LIVE_FRAMES - 2,
      "%" G_GUINT64_FORMAT " inferred + %" G_GUINT64_FORMAT " skipped of %d",
      inferred, skipped, LIVE_FRAMES);
  /* a result is carried by later frames, never as their own */
  guint with_result = 0;
  for (guint i = 0; i < seen->len; i++) {
    seen_result *r = &g_array_index (seen, seen_result, i);
    if (r->class_id < 0)
      continue;
    with_result++;
    fail_if (r->inferred, "frame %u carries a result marked as its own", i);
    fail_unless (r->frame < i, "frame %u carries the result of frame %"
        G_GUINT64_FORMAT, i, r->frame);
  }
  fail_unless (with_result > 0, "no frame carried a result");
  g_array_unref (seen);

  /* the control: waiting for every forward, frames come out late */
  live_run (model, FALSE, &rendered, &dropped, &inferred, &skipped, &seen);
  printf ("waiting: %" G_GUINT64_FORMAT " rendered, %" G_GUINT64_FORMAT
      " dropped late\n", rendered, dropped);
  fail_unless (dropped >= LIVE_FRAMES / 2, "only %" G_GUINT64_FORMAT
      " frames late without skip-when-busy: the model is not slow enough "
      "on this machine for this test", dropped);
  fail_unless_equals_uint64 (skipped, 0);
  g_array_unref (seen);
  g_free (model);
}

GST_END_TEST;

/* ---- what an engine refuses ------------------------------------------------- */

static gchar *
error_of (const gchar * launch)
{
  run r;
  run_start (&r, launch, 0);
  gchar *error = run_wait (&r);
  run_stop (&r);
  return error;
}

GST_START_TEST (test_engine_refusals)
{
  gchar *model = model_path ("colors");
  struct {
    const gchar *props, *second, *expect;
  } cases[] = {
    {"skip-when-busy=true mode=imperative", NULL, "mode=imperative"},
    {"skip-when-busy=true batch-size=2", NULL, "batch-size 2 needs "
          "shared-engine"},
    {"shared-engine=x input-size=frame", NULL, "input-size=frame"},
    {"shared-engine=y batch-size=2", "shared-engine=y batch-size=4",
        "another batch-size"},
    {"shared-engine=z input-size=32x32", "shared-engine=z input-size=16x16",
        "another input-size"},
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    GString *launch = g_string_new (NULL);
    for (guint b = 0; b < (cases[i].second ? 2 : 1); b++)
      g_string_append_printf (launch, "videotestsrc num-buffers=2 ! "
          "hybridinfer model=%s device=cpu %s ! fakesink ", model,
          b ? cases[i].second : cases[i].props);
    gchar *error = error_of (launch->str);
    fail_unless (error != NULL, "%s: no error", launch->str);
    fail_unless (strstr (error, cases[i].expect) != NULL,
        "%s: error '%s' does not say '%s'", launch->str, error,
        cases[i].expect);
    g_free (error);
    g_string_free (launch, TRUE);
  }
  g_free (model);
}

GST_END_TEST;

/* mode, model and the engine settings cannot change on an engine while it
 * plays: a warning, and the property keeps its value. */
GST_START_TEST (test_engine_refuses_changes_while_playing)
{
  gchar *model = model_path ("colors");
  gchar *launch = g_strdup_printf ("videotestsrc is-live=true "
      "num-buffers=30 ! video/x-raw,framerate=100/1 ! hybridinfer name=h "
      "model=%s device=cpu shared-engine=live ! fakesink name=s0", model);
  run r;
  run_start (&r, launch, 1);
  GstElement *h = run_get (&r, "h");
  GstBus *bus = gst_element_get_bus (r.pipeline);
  gst_element_get_state (r.pipeline, NULL, NULL, GST_CLOCK_TIME_NONE);
  const gchar *props[] = { "mode", "shared-engine", "model" };
  for (guint i = 0; i < G_N_ELEMENTS (props); i++) {
    gchar *after = NULL;
    if (i == 0)
      gst_util_set_object_arg (G_OBJECT (h), "mode", "imperative");
    else
      g_object_set (h, props[i], "other", NULL);
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
        GST_MESSAGE_WARNING);
    fail_unless (msg != NULL, "%s: no warning", props[i]);
    GError *e = NULL;
    gst_message_parse_warning (msg, &e, NULL);
    fail_unless (strstr (e->message, props[i]) != NULL, "%s", e->message);
    g_error_free (e);
    gst_message_unref (msg);
    if (i > 0) {
      g_object_get (h, props[i], &after, NULL);
      fail_if (g_strcmp0 (after, "other") == 0, "%s took the new value",
          props[i]);
    }
    g_free (after);
  }
  gchar *mode = NULL;
  GEnumValue *v;
  GValue value = G_VALUE_INIT;
  g_value_init (&value, G_PARAM_SPEC_VALUE_TYPE (g_object_class_find_property
          (G_OBJECT_GET_CLASS (h), "mode")));
  g_object_get_property (G_OBJECT (h), "mode", &value);
  v = g_enum_get_value (g_type_class_peek (G_VALUE_TYPE (&value)),
      g_value_get_enum (&value));
  mode = g_strdup (v->value_nick);
  fail_unless_equals_string (mode, "hybrid");
  g_free (mode);
  g_value_unset (&value);
  gchar *error = run_wait (&r);
  fail_unless (error == NULL, "%s", error);
  gst_object_unref (bus);
  gst_object_unref (h);
  run_stop (&r);
  g_free (launch);
  g_free (model);
}

GST_END_TEST;

static Suite *
engines_suite (void)
{
  Suite *s = suite_create ("hybridinfer-engines");
  TCase *tc = tcase_create ("engines");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_shared_results_equal);
  tcase_add_test (tc, test_shared_stream_ends_early);
  tcase_add_test (tc, test_shared_one_copy);
  tcase_add_test (tc, test_skip_when_busy);
  tcase_add_test (tc, test_engine_refusals);
  tcase_add_test (tc, test_engine_refuses_changes_while_playing);
  return s;
}

int
main (int argc, char **argv)
{
  /* The model takes one core and leaves the other to the frames, as a
   * live pipeline on this 2-core machine should be set up: with both
   * cores busy in a forward, the streaming thread waits for the
   * scheduler, and under a loaded test run "on time" would measure the
   * machine's load instead of the element (docs/ELEMENT.md,
   * skip-when-busy). */
  g_setenv ("HYBRIDINFER_THREADS", "1", TRUE);
  /* skip-when-busy needs a model slower than a frame interval: its 3×3
   * layers keep the packed kernel, which they were sized for (Winograd's
   * 2.5× would leave them on the edge of the interval). */
  g_setenv ("HYBRIDINFER_WINOGRAD", "0", TRUE);
  gst_check_init (&argc, &argv);
  tmp_dir = g_dir_make_tmp ("hybridinfer-engines-XXXXXX", NULL);
  g_assert (tmp_dir != NULL);
  int failed = gst_check_run_suite (engines_suite (), "hybridinfer-engines",
      __FILE__);
  gchar *rm = g_strdup_printf ("rm -rf '%s'", tmp_dir);
  if (system (rm) != 0)
    g_printerr ("could not remove %s\n", tmp_dir);
  g_free (rm);
  g_free (tmp_dir);
  return failed;
}
