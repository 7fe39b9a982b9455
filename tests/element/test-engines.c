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
  /* Slower than a frame interval (10 ms) in every build (the stream is
   * made long enough for a few forwards: test_skip_when_busy); under the
   * sanitizers a forward of the 128-channel model took 0.4 s. */
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

/* Waits up to `seconds` for EOS; returns the first error's text (free
 * it), or NULL. */
static gchar *
run_wait_within (run * r, guint seconds)
{
  GstBus *bus = gst_element_get_bus (r->pipeline);
  gchar *error_text = NULL;
  for (gboolean done = FALSE; !done;) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, seconds * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless (msg != NULL, "no EOS within %u s", seconds);
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

static gchar *
run_wait (run * r)
{
  return run_wait_within (r, 120);
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

/* ---- streams that stop sending: prerolled, paused, stalled --------------- */

/* Every sink saw `frames` frames, each with the result of its own frame. */
static void
check_own_results (run * r, guint frames)
{
  for (guint i = 0; i < r->n_sinks; i++) {
    fail_unless_equals_int (r->seen[i]->len, frames);
    for (guint f = 0; f < frames; f++) {
      seen_result *x = &g_array_index (r->seen[i], seen_result, f);
      fail_unless (x->inferred, "stream %u frame %u: no result of its own",
          i, f);
      fail_unless_equals_uint64 (x->frame, f);
    }
  }
}

/* n branches of videotestsrc on one engine; `src` and `extra` are added
 * to every source and hybridinfer. */
static gchar *
branches_launch (guint n, const gchar * src, const gchar * extra)
{
  gchar *model = model_path ("colors-shaped");
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (s, "videotestsrc %s ! video/x-raw,format=RGB,"
        "width=32,height=32,framerate=30/1 ! hybridinfer name=h%u model=%s "
        "device=cpu %s ! fakesink name=s%u ", src, i, model, extra, i);
  g_free (model);
  return g_string_free (s, FALSE);
}

#define PREROLL_FRAMES 10

/* A sink that has prerolled blocks its stream, which sends nothing more:
 * with batch-timeout=0 and a batch size that does not divide the number
 * of streams, the last partial batch of the first frames waited for the
 * prerolled streams for ever, and the pipeline never reached PLAYING. */
GST_START_TEST (test_shared_preroll_uneven)
{
  const struct {
    guint streams, batch;
  } cases[] = { {3, 2}, {8, 3} };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    gchar *src = g_strdup_printf ("num-buffers=%d", PREROLL_FRAMES);
    gchar *extra = g_strdup_printf ("shared-engine=uneven%u batch-size=%u "
        "batch-timeout=0", c, cases[c].batch);
    gchar *launch = branches_launch (cases[c].streams, src, extra);
    run r;
    run_start (&r, launch, cases[c].streams);
    gchar *error = run_wait_within (&r, 20);
    fail_unless (error == NULL, "%s: %s", launch, error);
    check_own_results (&r, PREROLL_FRAMES);
    run_stop (&r);
    g_free (launch);
    g_free (extra);
    g_free (src);
  }
}

GST_END_TEST;

typedef struct {
  GstElement *pipeline;
  GstState state;
  gint done;
} state_call;

static gpointer
set_state_thread (gpointer data)
{
  state_call *call = data;
  gst_element_set_state (call->pipeline, call->state);
  g_atomic_int_set (&call->done, 1);
  return NULL;
}

/* Sets the state from a thread; FALSE when set_state has not returned
 * within `seconds` (the thread is left behind: the test fails). */
static gboolean
set_state_within (GstElement * pipeline, GstState state, guint seconds)
{
  state_call *call = g_new0 (state_call, 1);
  call->pipeline = pipeline;
  call->state = state;
  GThread *thread = g_thread_new ("set-state", set_state_thread, call);
  gint64 end = g_get_monotonic_time () + seconds * G_TIME_SPAN_SECOND;
  while (!g_atomic_int_get (&call->done) && g_get_monotonic_time () < end)
    g_usleep (10 * 1000);
  if (!g_atomic_int_get (&call->done))
    return FALSE;
  g_thread_join (thread);
  g_free (call);
  return TRUE;
}

/* Frames reaching a sink, counted from its streaming thread. */
static GstPadProbeReturn
count_frame (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  GstHybridTensorMeta *meta =
      gst_buffer_get_hybrid_tensor_meta (GST_PAD_PROBE_INFO_BUFFER (info));
  if (meta && meta->inferred)
    g_atomic_int_inc ((gint *) data);
  return GST_PAD_PROBE_OK;
}

static void
count_frames (GstElement * pipeline, guint n, gint * counts)
{
  for (guint i = 0; i < n; i++) {
    gchar *name = g_strdup_printf ("s%u", i);
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), name);
    GstPad *pad = gst_element_get_static_pad (sink, "sink");
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_frame,
        &counts[i], NULL);
    gst_object_unref (pad);
    gst_object_unref (sink);
    g_free (name);
  }
}

/* Waits up to `seconds` until every stream has sent `frames` inferred
 * frames; the first stream that has not, or -1. */
static gint
wait_for_frames (const gint * counts, guint n, gint frames, guint seconds)
{
  gint64 end = g_get_monotonic_time () + seconds * G_TIME_SPAN_SECOND;
  for (guint i = 0; i < n; i++) {
    while (g_atomic_int_get (&counts[i]) < frames
        && g_get_monotonic_time () < end)
      g_usleep (10 * 1000);
    if (g_atomic_int_get (&counts[i]) < frames)
      return (gint) i;
  }
  return -1;
}

#define DOWN_STREAMS 8

/* Live streams on an engine whose partial batches never time out, and a
 * batch size that does not divide their number: going to NULL from
 * PLAYING or from PAUSED returns.  It did not: streaming threads waited in
 * the engine for streams whose elements had not gone down yet (nor would
 * they send again: their sinks had prerolled). */
GST_START_TEST (test_shared_live_state_down)
{
  const GstState from[] = { GST_STATE_PLAYING, GST_STATE_PAUSED };
  for (guint c = 0; c < G_N_ELEMENTS (from); c++) {
    gchar *launch = branches_launch (DOWN_STREAMS, "is-live=true",
        "shared-engine=down batch-size=5 batch-timeout=0");
    GstElement *pipeline = gst_parse_launch (launch, NULL);
    fail_unless (pipeline != NULL, "%s", launch);
    gint counts[DOWN_STREAMS] = { 0 };
    count_frames (pipeline, DOWN_STREAMS, counts);
    gst_element_set_state (pipeline, GST_STATE_PLAYING);
    /* streaming threads in the engine when the state changes (frames
     * not flowing is the preroll test's failure: going down is checked
     * first) */
    gint stuck = wait_for_frames (counts, DOWN_STREAMS, 5, 2);
    if (from[c] == GST_STATE_PAUSED)
      fail_unless (set_state_within (pipeline, GST_STATE_PAUSED, 5),
          "set_state(PAUSED) from PLAYING did not return in 5 s");
    fail_unless (set_state_within (pipeline, GST_STATE_NULL, 5),
        "set_state(NULL) from %s did not return in 5 s",
        gst_element_state_get_name (from[c]));
    fail_unless (stuck < 0, "stream %d: fewer than 5 frames in 2 s", stuck);
    gst_object_unref (pipeline);
    g_free (launch);
  }
}

GST_END_TEST;

static void
set_engine (GstElement * e, const gchar * engine)
{
  g_object_set (e, "shared-engine", engine, "batch-size", 2,
      "batch-timeout", 0, NULL);
}

typedef struct {
  GstHarness *h;
  GstBuffer *buf;
  GstFlowReturn ret;
  gint done;
} push_call;

static gpointer
push_thread (gpointer data)
{
  push_call *call = data;
  call->ret = gst_harness_push (call->h, call->buf);
  g_atomic_int_set (&call->done, 1);
  return NULL;
}

/* A flush wakes a frame waiting in the engine for another stream: the
 * push returns GST_FLOW_FLUSHING at once, rather than the frame's result
 * once the other stream counts as quiet (a second after it started here,
 * having sent nothing) — or never, as it did.  After the flush, frames
 * run again, each with its own result. */
GST_START_TEST (test_shared_flush_wakes)
{
  const gchar *caps = "video/x-raw,format=RGB,width=32,height=32,"
      "framerate=30/1";
  GstElement *e0 = infer_new ("colors-shaped");
  GstElement *e1 = infer_new ("colors-shaped");
  set_engine (e0, "flush");
  set_engine (e1, "flush");
  GstHarness *h0 = harness_for (e0, NULL);
  GstHarness *h1 = harness_for (e1, NULL);
  gst_harness_set_src_caps_str (h0, caps);
  gst_harness_set_src_caps_str (h1, caps);

  push_call *call = g_new0 (push_call, 1);
  call->h = h0;
  call->buf = frame_new ("RGB", 32, 32, pick_red, 0);
  GThread *thread = g_thread_new ("push", push_thread, call);
  g_usleep (100 * 1000);
  gint64 flushed = g_get_monotonic_time ();
  fail_unless (gst_harness_push_event (h0, gst_event_new_flush_start ()));
  while (!g_atomic_int_get (&call->done)
      && g_get_monotonic_time () < flushed + 5 * G_TIME_SPAN_SECOND)
    g_usleep (10 * 1000);
  fail_unless (g_atomic_int_get (&call->done), "FLUSH_START did not end "
      "the wait in 5 s");
  gint64 waited = g_get_monotonic_time () - flushed;
  g_thread_join (thread);
  fail_unless_equals_int (call->ret, GST_FLOW_FLUSHING);
  /* at once, not when the other stream went quiet (0.9 s later) */
  fail_unless (waited < 600 * G_TIME_SPAN_MILLISECOND, "the push returned "
      "%" G_GINT64_FORMAT " ms after FLUSH_START", waited / 1000);
  g_free (call);

  fail_unless (gst_harness_push_event (h0, gst_event_new_flush_stop (TRUE)));
  gst_harness_set_src_caps_str (h0, caps);
  fail_unless_equals_int (gst_harness_push (h0, frame_new ("RGB", 32, 32,
              pick_red, 0)), GST_FLOW_OK);
  GstBuffer *out = gst_harness_pull (h0);
  GstHybridTensorMeta *meta = gst_buffer_get_hybrid_tensor_meta (out);
  fail_unless (meta != NULL && meta->inferred, "no result of its own");
  fail_unless_equals_string (gst_structure_get_string (meta->results,
          "label"), "red");
  gst_buffer_unref (out);
  gst_harness_teardown (h0);
  gst_harness_teardown (h1);
}

GST_END_TEST;

#define STALL_FPS 30

/* Three live cameras on one engine, batch-size 3; one stops sending
 * without an EOS (a valve drops its frames): the other two keep their
 * frame rate.  They froze with batch-timeout=0, and with a timeout got
 * one batch per timeout.  When it sends again, it runs again. */
GST_START_TEST (test_shared_stalled_stream)
{
  const guint timeouts[] = { 0, 200 };
  for (guint t = 0; t < G_N_ELEMENTS (timeouts); t++) {
    gchar *model = model_path ("colors-shaped");
    GString *launch = g_string_new (NULL);
    for (guint i = 0; i < 3; i++)
      g_string_append_printf (launch, "videotestsrc is-live=true ! "
          "video/x-raw,format=RGB,width=32,height=32,framerate=%d/1 ! "
          "valve name=v%u ! hybridinfer model=%s device=cpu "
          "shared-engine=stall%u batch-size=3 batch-timeout=%u ! "
          "fakesink name=s%u ", STALL_FPS, i, model, t, timeouts[t], i);
    GstElement *pipeline = gst_parse_launch (launch->str, NULL);
    fail_unless (pipeline != NULL, "%s", launch->str);
    gint counts[3] = { 0 };
    count_frames (pipeline, 3, counts);
    gst_element_set_state (pipeline, GST_STATE_PLAYING);
    gint stuck = wait_for_frames (counts, 3, 5, 10);
    fail_unless (stuck < 0, "stream %d: fewer than 5 frames in 10 s", stuck);

    GstElement *valve = gst_bin_get_by_name (GST_BIN (pipeline), "v0");
    g_object_set (valve, "drop", TRUE, NULL);
    /* one bound for the stalled stream to stop counting */
    g_usleep (200 * 1000);
    gint before[3];
    for (guint i = 0; i < 3; i++)
      before[i] = g_atomic_int_get (&counts[i]);
    g_usleep (G_USEC_PER_SEC);
    for (guint i = 1; i < 3; i++) {
      gint got = g_atomic_int_get (&counts[i]) - before[i];
      printf ("batch-timeout=%u: stream %u ran %d frames in 1 s with stream "
          "0 stalled\n", timeouts[t], i, got);
      fail_unless (got >= STALL_FPS * 7 / 10, "batch-timeout=%u: stream %u "
          "ran %d frames in 1 s at %d fps while another stalled",
          timeouts[t], i, got, STALL_FPS);
    }

    g_object_set (valve, "drop", FALSE, NULL);
    gint back = g_atomic_int_get (&counts[0]);
    fail_unless (wait_for_frames (counts, 1, back + 5, 10) < 0,
        "the stalled stream did not run again");
    fail_unless (set_state_within (pipeline, GST_STATE_NULL, 5));
    gst_object_unref (valve);
    gst_object_unref (pipeline);
    g_string_free (launch, TRUE);
    g_free (model);
  }
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
#define FRAME_S 0.010           /* the source's 100 fps */

/* The fastest of a few forwards of model on one thread, in seconds: what
 * a frame waits for when the element waits for the model. */
static double
forward_seconds (const gchar * symbol)
{
  GError *error = NULL;
  gchar *prefix = g_strndup (symbol,
      strlen (symbol) - strlen ("-symbol.json"));
  gchar *params = g_strdup_printf ("%s-0000.params", prefix);
  hy_model *m = hy_model_load (symbol, params, &error);
  fail_unless (m != NULL, "%s", error ? error->message : "");
  hy_executor_options options = {.device = {HY_DEVICE_CPU, 0},
    .mode = HY_MODE_HYBRID, .threads = 1 };
  hy_executor *exec = hy_executor_new_with_options (m, &options, &error);
  fail_unless (exec != NULL, "%s", error ? error->message : "");
  hy_shape shape = hy_shape_make (HY_DIMS (1, 3, 64, 64));
  hy_tensor *x = hy_tensor_new (&shape);
  memset (x->data, 0, hy_shape_numel (&shape) * sizeof (float));
  double best = G_MAXDOUBLE;
  for (int i = 0; i < 4; i++) {
    const gint64 t0 = g_get_monotonic_time ();
    fail_unless (hy_executor_forward (exec, (const hy_tensor * const *) &x,
            1, &error), "%s", error ? error->message : "");
    if (i > 0)                  /* the first one plans */
      best = MIN (best, (g_get_monotonic_time () - t0) / 1e6);
  }
  hy_tensor_free (x);
  hy_executor_free (exec);
  hy_model_free (m);
  g_free (params);
  g_free (prefix);
  return best;
}

/* A live 100 fps source into a synchronising sink that drops a frame
 * LATE_MS late (a few frames' time: a loaded test machine may hold the
 * streaming thread back that long now and then; a frame that waits for a
 * forward of this model is later than that); returns the sink's rendered and dropped counts and the element's
 * statistics. */
static void
live_run (const gchar * model, gboolean skip, int frames, guint64 * rendered,
    guint64 * dropped, guint64 * inferred, guint64 * skipped, GArray ** seen)
{
  gchar *launch = g_strdup_printf ("videotestsrc is-live=true "
      "num-buffers=%d ! video/x-raw,width=64,height=64,framerate=100/1 ! "
      "hybridinfer name=h model=%s device=cpu input-size=64x64 "
      "skip-when-busy=%s ! fakesink name=s0 sync=true qos=true "
      "max-lateness=%d", frames, model, skip ? "true" : "false",
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

  /* The stream lasts at least six forwards, however slow this build and
   * this machine's load make one (the sanitizers, a busy CI runner): with
   * a fixed length, a slow enough forward finished after the stream and
   * "no result came back" measured the machine, not the element. */
  const double forward_s = forward_seconds (model);
  const int frames = CLAMP ((int) (6 * forward_s / FRAME_S) + 1,
      LIVE_FRAMES, 1000);
  printf ("skip-when-busy: a forward takes %.1f ms: %d frames\n",
      forward_s * 1e3, frames);
  live_run (model, TRUE, frames, &rendered, &dropped, &inferred, &skipped,
      &seen);
  printf ("skip-when-busy: %" G_GUINT64_FORMAT " rendered, %"
      G_GUINT64_FORMAT " dropped late, %" G_GUINT64_FORMAT " inferred, %"
      G_GUINT64_FORMAT " skipped\n", rendered, dropped, inferred, skipped);
  fail_unless_equals_uint64 (dropped, 0);
  fail_unless_equals_uint64 (rendered, frames);
  fail_unless_equals_int (seen->len, frames);
  fail_unless (skipped > 0, "no frame skipped: the model kept up");
  fail_unless (inferred >= 1, "no result came back");
  /* every frame inferred or skipped but the last ones, whose results were
   * still in the engine when the stream ended */
  fail_unless (inferred + skipped <= (guint64) frames
      && inferred + skipped >= (guint64) frames - 2,
      "%" G_GUINT64_FORMAT " inferred + %" G_GUINT64_FORMAT " skipped of %d",
      inferred, skipped, frames);
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
  live_run (model, FALSE, LIVE_FRAMES, &rendered, &dropped, &inferred,
      &skipped, &seen);
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

/* With message-json, skip-when-busy's messages carry `json` as every
 * other result message does, though their frame went on before the
 * result came: the object of the result's own frame (its number, its
 * timestamp, inferred, its boxes). */
GST_START_TEST (test_skip_when_busy_json)
{
  gchar *model = model_path ("quadrants");
  /* live: the engine plans at its first frame, which a free-running
   * source would outrun to its end */
  gchar *launch = g_strdup_printf ("videotestsrc is-live=true "
      "num-buffers=30 ! video/x-raw,width=64,height=64,framerate=30/1 ! videoconvert "
      "! hybridinfer model=%s device=cpu input-size=64x64 "
      "skip-when-busy=true post-messages=true message-json=true "
      "! fakesink", model);
  GstElement *pipe = gst_parse_launch (launch, NULL);
  fail_unless (pipe != NULL, "%s", launch);
  GstBus *bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  guint results = 0;
  for (;;) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT);
    fail_unless (msg != NULL, "no EOS in 60 s");
    fail_if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR, "an error");
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS) {
      gst_message_unref (msg);
      break;
    }
    const GstStructure *s = gst_message_get_structure (msg);
    guint64 frame, timestamp;
    if (gst_structure_has_name (s, "hybridinfer")) {
      const gchar *json = gst_structure_get_string (s, "json");
      fail_unless (gst_structure_get_uint64 (s, "frame-number", &frame));
      fail_unless (json != NULL, "no json in frame %" G_GUINT64_FORMAT
          "'s message", frame);
      fail_unless (gst_structure_get_uint64 (s, "timestamp", &timestamp));
      gchar *head = g_strdup_printf ("{\"frame\":%" G_GUINT64_FORMAT
          ",\"timestamp\":%" G_GUINT64_FORMAT ",\"result-frame\":%"
          G_GUINT64_FORMAT ",\"inferred\":true,\"type\":\"detection\","
          "\"objects\":[{", frame, timestamp, frame);
      fail_unless (g_str_has_prefix (json, head), "%s\nis not\n%s…", json,
          head);
      g_free (head);
      results++;
    }
    gst_message_unref (msg);
  }
  fail_unless (results >= 1, "no result message");
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  g_free (launch);
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

#define SAME_FRAMES 4

/* Runs branches on one engine, each with its own properties; they must
 * start as one engine and infer every frame. */
static void
check_one_engine (const gchar * const *props, guint n)
{
  GString *launch = g_string_new (NULL);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (launch, "videotestsrc num-buffers=%d ! "
        "video/x-raw,format=RGB,width=32,height=32 ! hybridinfer device=cpu "
        "shared-engine=same batch-size=%u %s ! fakesink name=s%u ",
        SAME_FRAMES, n, props[i], i);
  run r;
  run_start (&r, launch->str, n);
  gchar *error = run_wait_within (&r, 20);
  fail_unless (error == NULL, "%s: %s", launch->str, error);
  check_own_results (&r, SAME_FRAMES);
  run_stop (&r);
  g_string_free (launch, TRUE);
}

/* What an engine compares is what its elements resolve to: input-size
 * set to the size the model's default gives, and one file named by other
 * paths (relative, absolute, through a link), are the same engine. */
GST_START_TEST (test_engine_same_resolved)
{
  gchar *shaped = model_path ("colors-shaped");  /* __shape__ 32x32 */
  gchar *explicit_size = g_strdup_printf ("model=%s input-size=32x32",
      shaped);
  gchar *default_size = g_strdup_printf ("model=%s", shaped);
  /* either may make the engine */
  const gchar *sizes[] = { explicit_size, default_size };
  check_one_engine (sizes, 2);
  const gchar *sizes_swapped[] = { default_size, explicit_size };
  check_one_engine (sizes_swapped, 2);

  gchar *link = g_build_filename (tmp_dir, "models-link", NULL);
  fail_unless (symlink (models_dir (), link) == 0);
  gchar *absolute = g_strdup_printf ("model=%s/colors-symbol.json "
      "labels=%s/colors.txt", models_dir (), models_dir ());
  gchar *linked = g_strdup_printf ("model=%s/colors-symbol.json "
      "labels=%s/colors.txt", link, link);
  const gchar *relative = "model=./colors-symbol.json labels=./colors.txt";
  gchar *cwd = g_get_current_dir ();
  fail_unless (g_chdir (models_dir ()) == 0);
  const gchar *paths[] = { absolute, relative, linked };
  check_one_engine (paths, 3);
  fail_unless (g_chdir (cwd) == 0);

  g_free (cwd);
  g_free (absolute);
  g_free (linked);
  g_free (link);
  g_free (explicit_size);
  g_free (default_size);
  g_free (shaped);
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
  tcase_add_test (tc, test_shared_preroll_uneven);
  tcase_add_test (tc, test_shared_live_state_down);
  tcase_add_test (tc, test_shared_flush_wakes);
  tcase_add_test (tc, test_shared_stalled_stream);
  tcase_add_test (tc, test_shared_one_copy);
  tcase_add_test (tc, test_skip_when_busy);
  tcase_add_test (tc, test_skip_when_busy_json);
  tcase_add_test (tc, test_engine_refusals);
  tcase_add_test (tc, test_engine_same_resolved);
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
