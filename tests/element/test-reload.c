/*
 * test-reload.c — model, params and labels set while the element runs
 * (infer-runner-reload.c): the new model takes over between two frames
 * and every frame after the message carries its result; a model that
 * fails to load is a warning and the old one runs on; a reload finishes
 * while a sink holds the stream prerolled; notify comes when the new
 * value runs; an application may stop the pipeline from a sync bus
 * handler on the loader's own message.
 */
#include <unistd.h>

#include <glib/gstdio.h>

#include "element-util.h"

/* Which model made a buffer's result: "colors" or "quadrants", from the
 * name of its first output. */
static const gchar *
model_of (GstBuffer * buf)
{
  GstHybridTensorMeta *meta = gst_buffer_get_hybrid_tensor_meta (buf);
  fail_unless (meta != NULL, "no result on the buffer");
  fail_unless (meta->inferred);
  fail_unless (meta->n_tensors > 0);
  return g_str_has_prefix (meta->tensors[0].name, "colors") ? "colors"
      : g_str_has_prefix (meta->tensors[0].name, "quadrants") ? "quadrants"
      : meta->tensors[0].name;
}

/* Pushes n frames; returns how many of them the old model made (they
 * come first: after a swap every frame has the new model's result).
 * Frames held for a batch come out when it runs. */
static guint
push_frames (GstHarness * h, guint n, const gchar * old_model,
    const gchar * new_model, guint64 * in, guint64 * out)
{
  guint old = 0;
  gboolean seen_new = FALSE;
  for (guint i = 0; i <= n; i++) {
    /* the last round only takes what is ready */
    if (i < n) {
      fail_unless_equals_int (gst_harness_push (h, frame_new ("RGBA", 128,
                  96, pick_quadrants, *in * GST_SECOND / 30)), GST_FLOW_OK);
      (*in)++;
    }
    GstBuffer *buf;
    while ((buf = gst_harness_try_pull (h))) {
      const gchar *m = model_of (buf);
      fail_unless_equals_uint64 (GST_BUFFER_PTS (buf),
          *out * GST_SECOND / 30);
      (*out)++;
      if (!strcmp (m, old_model) && !seen_new)
        old++;
      else if (!strcmp (m, new_model))
        seen_new = TRUE;
      else
        fail ("frame %" G_GUINT64_FORMAT ": %s's result after %s's",
            *out - 1, m, new_model);
      gst_buffer_unref (buf);
    }
  }
  return old;
}

/* 50 swaps while playing, valid and invalid alternating: valid ones
 * alternate between "colors" and "quadrants" (every result tells which
 * model made it), invalid ones between a model with an op the core does
 * not know and a missing file.  Each request is followed by frames while
 * it loads, then by a wait for its message or warning, then by frames
 * that must all have the model that runs. */
GST_START_TEST (test_model_hot_reload)
{
  const guint batch = 1, swaps = 50;
  gchar *colors = model_path ("colors"), *quadrants = model_path ("quadrants");
  gchar *lrn = model_path ("lrn");
  const gchar *missing = "/nonexistent/missing-symbol.json";
  GstElement *e = gst_element_factory_make ("hybridinfer", NULL);
  g_object_set (e, "model", colors, "device", "cpu", "input-size", "64x64",
      "batch-size", batch, "batch-timeout", 0, NULL);
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  GstHarness *h = gst_harness_new_with_element (e, "sink", "src");
  gst_object_unref (e);         /* the harness holds it */
  set_caps (h, "RGBA", 128, 96);
  const gchar *running = "colors", *running_path = colors;
  guint64 in = 0, out = 0;
  guint warnings = 0, reloads = 0;

  fail_unless_equals_int (push_frames (h, 2 * batch, "colors", "quadrants",
          &in, &out), 2 * batch);
  for (guint i = 0; i < swaps; i++) {
    gboolean valid = i % 2 == 0;
    const gchar *next = !strcmp (running, "colors") ? "quadrants" : "colors";
    const gchar *path = valid ? (!strcmp (next, "colors") ? colors : quadrants)
        : (i % 4 == 1 ? lrn : missing);
    g_object_set (e, "model", path, NULL);
    /* frames while it loads: the old model's, then (a valid one may take
     * over among them) the new one's */
    push_frames (h, 3, running, valid ? next : running, &in, &out);
    gchar *model = NULL, *text = NULL;
    gboolean reloaded = wait_reload (bus, &model, &text);
    const gchar *previous = running;
    if (valid) {
      fail_unless (reloaded, "swap %u to %s: %s", i, path, text);
      fail_unless_equals_string (model, path);
      reloads++;
      running = next;
      running_path = path;
    } else {
      fail_if (reloaded, "swap %u to %s reported as done", i, path);
      fail_unless (strstr (text, i % 4 == 1 ? "LRN" : "missing") != NULL,
          "swap %u: %s", i, text);
      fail_unless (strstr (text, "the running model stays") != NULL, "%s",
          text);
      warnings++;
    }
    g_free (model);
    g_free (text);
    /* the getter says which model runs */
    gchar *now = NULL;
    g_object_get (e, "model", &now, NULL);
    fail_unless_equals_string (now, running_path);
    g_free (now);
    /* every frame after the message, and every frame still held for a
     * batch, has the running model's result */
    push_frames (h, 0, previous, running, &in, &out);
    guint n = 2 * batch;
    fail_unless_equals_int (push_frames (h, n, running, running, &in, &out),
        n);
  }
  fail_unless_equals_int (warnings, swaps / 2);
  fail_unless_equals_int (reloads, swaps - swaps / 2);
  /* nothing more was posted: one warning per bad model, no error */
  fail_unless (gst_bus_pop_filtered (bus,
          GST_MESSAGE_WARNING | GST_MESSAGE_ERROR) == NULL);
  /* no frame lost: all out, in order (push_frames checks timestamps) */
  fail_unless_equals_uint64 (in, out);
  teardown_with_bus (h, bus);
  g_free (colors);
  g_free (quadrants);
  g_free (lrn);
}

GST_END_TEST;

/* A labels file with other names than colors.txt; free with g_free and
 * unlink. */
static gchar *
other_labels (void)
{
  gchar *path = NULL;
  gint fd = g_file_open_tmp ("hybridinfer-labels-XXXXXX.txt", &path, NULL);
  fail_unless (fd >= 0);
  const gchar *names = "k\nw\ng\nR\nG\nB\ny\nc\nm\n";
  fail_unless (write (fd, names, strlen (names)) == (gssize) strlen (names));
  close (fd);
  return path;
}

/* A frame held for a batch when the new session is ready runs first, on
 * the session it was loaded for (the quadrants model does not batch, so
 * here the labels change: the same reload). */
GST_START_TEST (test_model_hot_reload_batched)
{
  GstElement *e = infer_new ("colors");
  g_object_set (e, "batch-size", 2, "batch-timeout", 0, NULL);
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  GstHarness *h = gst_harness_new_with_element (e, "sink", "src");
  gst_object_unref (e);
  set_caps (h, "RGB", 32, 24);
  gchar *path = other_labels ();
  guint64 in = 0, out = 0;
  for (guint swap = 0; swap < 6; swap++) {
    const gchar *before = swap % 2 ? "R" : "red", *after = swap % 2 ? "red"
        : "R";
    /* one frame held, waiting for its batch */
    fail_unless_equals_int (gst_harness_push (h, frame_new ("RGB", 32, 24,
                pick_red, in++)), GST_FLOW_OK);
    fail_unless (gst_harness_try_pull (h) == NULL);
    gchar *labels = labels_path ("colors");
    g_object_set (e, "labels", swap % 2 ? labels : path, NULL);
    g_free (labels);
    gchar *model = NULL, *text = NULL;
    fail_unless (wait_reload (bus, &model, &text), "%s", text);
    g_free (model);
    /* it ran before the swap, as a partial batch */
    GstBuffer *buf = gst_harness_pull (h);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (buf), out++);
    fail_unless_equals_string (top_label (buf), before);
    gst_buffer_unref (buf);
    for (guint i = 0; i < 2; i++)
      fail_unless_equals_int (gst_harness_push (h, frame_new ("RGB", 32, 24,
                  pick_red, in++)), GST_FLOW_OK);
    for (guint i = 0; i < 2; i++) {
      buf = gst_harness_pull (h);
      fail_unless_equals_uint64 (GST_BUFFER_PTS (buf), out++);
      fail_unless_equals_string (top_label (buf), after);
      gst_buffer_unref (buf);
    }
  }
  fail_unless_equals_uint64 (in, out);
  fail_unless (gst_bus_pop_filtered (bus,
          GST_MESSAGE_WARNING | GST_MESSAGE_ERROR) == NULL);
  teardown_with_bus (h, bus);
  g_unlink (path);
  g_free (path);
}

GST_END_TEST;

/* labels set while playing reload too; properties the session is built
 * from refuse a change with a warning and keep their value. */
GST_START_TEST (test_properties_while_playing)
{
  GstElement *e = infer_new ("colors");
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  GstHarness *h = gst_harness_new_with_element (e, "sink", "src");
  gst_object_unref (e);
  set_caps (h, "RGB", 32, 24);
  GstBuffer *out = gst_harness_push_and_pull (h,
      frame_new ("RGB", 32, 24, pick_red, 0));
  fail_unless_equals_string (top_label (out), "red");
  gst_buffer_unref (out);

  static const struct
  {
    const gchar *name, *value;
  } refused[] = {
    {"device", "cuda"}, {"precision", "fp16"}, {"input-name", "x"},
    {"input-size", "8x8"}, {"color-order", "bgr"}, {"mean", "<1>"},
    {"std", "<2>"}, {"scale", "0-1"}, {"resize", "letterbox"},
    {"interpolation", "nearest"}, {"batch-size", "4"},
    {"output", "raw"},
  };
  for (guint i = 0; i < G_N_ELEMENTS (refused); i++) {
    GValue before = G_VALUE_INIT, after = G_VALUE_INIT;
    GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
        refused[i].name);
    g_value_init (&before, pspec->value_type);
    g_value_init (&after, pspec->value_type);
    g_object_get_property (G_OBJECT (e), refused[i].name, &before);
    gst_util_set_object_arg (G_OBJECT (e), refused[i].name, refused[i].value);
    g_object_get_property (G_OBJECT (e), refused[i].name, &after);
    fail_unless (gst_value_compare (&before, &after) == GST_VALUE_EQUAL,
        "%s changed while playing", refused[i].name);
    g_value_unset (&before);
    g_value_unset (&after);
    GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
    fail_unless (msg != NULL, "%s: no warning", refused[i].name);
    GError *err = NULL;
    gst_message_parse_warning (msg, &err, NULL);
    fail_unless (g_str_has_prefix (err->message, refused[i].name), "%s",
        err->message);
    g_error_free (err);
    gst_message_unref (msg);
  }
  /* still the same model, same settings */
  out = gst_harness_push_and_pull (h, frame_new ("RGB", 32, 24, pick_red, 1));
  fail_unless_equals_string (top_label (out), "red");
  gst_buffer_unref (out);

  /* a labels file of other names takes over like a model */
  gchar *path = other_labels ();
  g_object_set (e, "labels", path, NULL);
  gchar *model = NULL, *text = NULL;
  fail_unless (wait_reload (bus, &model, &text), "%s", text);
  g_free (model);
  gchar *now = NULL;
  g_object_get (e, "labels", &now, NULL);
  fail_unless_equals_string (now, path);
  g_free (now);
  out = gst_harness_push_and_pull (h, frame_new ("RGB", 32, 24, pick_red, 2));
  fail_unless_equals_string (top_label (out), "R");
  gst_buffer_unref (out);
  teardown_with_bus (h, bus);
  g_unlink (path);
  g_free (path);
}

GST_END_TEST;


/* A pipeline of the colors model on frames of one colour; `sink` says
 * how the frames end (a synchronising sink prerolls: PAUSED holds the
 * streaming thread in it). */
static GstElement *
colors_pipeline (const gchar * source, const gchar * extra,
    const gchar * sink)
{
  gchar *m = model_path ("colors"), *l = labels_path ("colors");
  gchar *desc = g_strdup_printf ("%s ! video/x-raw,format=RGB,width=32,"
      "height=24,framerate=30/1 ! hybridinfer name=h model=%s labels=%s "
      "device=cpu input-size=32x32 %s ! %s", source, m, l, extra, sink);
  GError *error = NULL;
  GstElement *p = gst_parse_launch (desc, &error);
  fail_unless (p != NULL && error == NULL, "%s", desc);
  g_free (desc);
  g_free (m);
  g_free (l);
  return p;
}

static GstElement *
element_named (GstElement * pipeline, const gchar * name)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (pipeline), name);
  fail_unless (e != NULL);
  gst_object_unref (e);         /* the pipeline keeps it */
  return e;
}

/* Prerolled in PAUSED the sink holds the streaming thread, inside the
 * element's chain, until PLAYING: a reload requested then finishes before
 * PLAYING (an application that waits for the message before resuming
 * used to wait for ever), with and without frames held for a batch. */
GST_START_TEST (test_reload_while_prerolled)
{
  static const gchar *extras[] = { "", "batch-size=2 batch-timeout=0" };
  for (guint i = 0; i < G_N_ELEMENTS (extras); i++) {
    GstElement *p = colors_pipeline ("videotestsrc pattern=red", extras[i],
        "fakesink sync=true");
    GstBus *bus = gst_element_get_bus (p);
    fail_unless_equals_int (gst_element_set_state (p, GST_STATE_PAUSED),
        GST_STATE_CHANGE_ASYNC);
    fail_unless_equals_int (gst_element_get_state (p, NULL, NULL,
            30 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);
    gchar *shaped = model_path ("colors-shaped");
    g_object_set (element_named (p, "h"), "model", shaped, NULL);
    gchar *model = NULL, *text = NULL;
    fail_unless (wait_reload (bus, &model, &text), "%s: %s", extras[i],
        text);
    fail_unless_equals_string (model, shaped);
    g_free (model);
    /* and the frames go on on it */
    fail_unless (gst_element_set_state (p, GST_STATE_PLAYING)
        != GST_STATE_CHANGE_FAILURE);
    fail_unless_equals_int (gst_element_get_state (p, NULL, NULL,
            30 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);
    fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    g_free (shaped);
    gst_object_unref (bus);
    gst_object_unref (p);
  }
}

GST_END_TEST;

typedef struct
{
  guint count;
  gchar *value;                 /* the getter's, in the handler */
} Notified;

static void
on_notify_model (GObject * e, GParamSpec * pspec, Notified * n)
{
  n->count++;
  g_free (n->value);
  g_object_get (e, "model", &n->value, NULL);
}

/* notify::model says the model changed when it runs: set while stopped,
 * at once; set while playing, when the reload takes over (the getter in
 * the handler gives the new model), and not at all for a load that
 * fails. */
GST_START_TEST (test_notify_when_model_runs)
{
  GstElement *e = infer_new ("colors");
  Notified n = { 0, NULL };
  g_signal_connect (e, "notify::model", G_CALLBACK (on_notify_model), &n);
  gchar *colors = model_path ("colors"), *quadrants = model_path ("quadrants");
  /* no labels: colors.txt would not count quadrants' classes, and its
   * warning is not what this test is about */
  g_object_set (e, "model", colors, "input-size", "64x64", "labels", "",
      NULL);
  fail_unless_equals_int (n.count, 1);
  fail_unless_equals_string (n.value, colors);
  GstBus *bus;
  GstHarness *h = harness_for (e, &bus);
  set_caps (h, "RGB", 32, 24);
  gst_buffer_unref (gst_harness_push_and_pull (h, frame_new ("RGB", 32, 24,
              pick_red, 0)));

  g_object_set (e, "model", "/nonexistent/missing-symbol.json", NULL);
  gchar *model = NULL, *text = NULL;
  fail_if (wait_reload (bus, &model, &text), "a missing model reloaded");
  g_free (text);
  fail_unless_equals_int (n.count, 1);

  g_object_set (e, "model", quadrants, NULL);
  fail_unless (wait_reload (bus, &model, &text), "%s", text);
  fail_unless_equals_int (n.count, 2);
  fail_unless_equals_string (n.value, quadrants);
  g_free (model);
  teardown_with_bus (h, bus);
  g_free (n.value);
  g_free (colors);
  g_free (quadrants);
}

GST_END_TEST;

typedef struct
{
  GstElement *pipeline;
  GMutex lock;
  GCond cond;
  GstStateChangeReturn stopped;
  gboolean done;
  gboolean element_gone;
} StopOnWarning;

/* The element's last reference dropped: its loader has left. */
static void
element_finalized (gpointer data, GObject * where_the_element_was)
{
  StopOnWarning *s = data;
  g_mutex_lock (&s->lock);
  s->element_gone = TRUE;
  g_cond_signal (&s->cond);
  g_mutex_unlock (&s->lock);
}

/* On the element's warning, from the thread that posts it: the pipeline
 * to NULL, as an application that reacts to failures at once does. */
static GstBusSyncReply
stop_on_warning (GstBus * bus, GstMessage * msg, gpointer data)
{
  StopOnWarning *s = data;
  if (GST_MESSAGE_TYPE (msg) != GST_MESSAGE_WARNING)
    return GST_BUS_PASS;
  GstStateChangeReturn ret = gst_element_set_state (s->pipeline,
      GST_STATE_NULL);
  g_mutex_lock (&s->lock);
  s->stopped = ret;
  s->done = TRUE;
  g_cond_signal (&s->cond);
  g_mutex_unlock (&s->lock);
  return GST_BUS_PASS;
}

/* The failed reload's warning is posted by the loader thread; stopping
 * the element from a sync handler there must not make it join itself
 * (GLib aborts: "Resource deadlock avoided"). */
GST_START_TEST (test_stop_from_sync_handler)
{
  StopOnWarning s = { 0 };
  g_mutex_init (&s.lock);
  g_cond_init (&s.cond);
  s.pipeline = colors_pipeline ("videotestsrc is-live=true pattern=red", "",
      "fakesink sync=false");
  GstBus *bus = gst_element_get_bus (s.pipeline);
  gst_bus_set_sync_handler (bus, stop_on_warning, &s, NULL);
  fail_unless (gst_element_set_state (s.pipeline, GST_STATE_PLAYING)
      != GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_element_get_state (s.pipeline, NULL, NULL,
          30 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);
  g_object_set (element_named (s.pipeline, "h"), "model",
      "/nonexistent/missing-symbol.json", NULL);
  gint64 until = g_get_monotonic_time () + 30 * G_TIME_SPAN_SECOND;
  g_mutex_lock (&s.lock);
  while (!s.done && g_cond_wait_until (&s.cond, &s.lock, until));
  g_mutex_unlock (&s.lock);
  fail_unless (s.done, "no warning in 30 s");
  fail_unless_equals_int (s.stopped, GST_STATE_CHANGE_SUCCESS);
  GstState state;
  gst_element_get_state (s.pipeline, &state, NULL, 0);
  fail_unless_equals_int (state, GST_STATE_NULL);
  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  /* The loader holds the element until the handler has returned and its
   * warning is posted: the element goes when the loader leaves, which
   * the test waits for (ending first would report both as leaked). */
  g_object_weak_ref (G_OBJECT (element_named (s.pipeline, "h")),
      element_finalized, &s);
  gst_object_unref (s.pipeline);
  until = g_get_monotonic_time () + 30 * G_TIME_SPAN_SECOND;
  g_mutex_lock (&s.lock);
  while (!s.element_gone && g_cond_wait_until (&s.cond, &s.lock, until));
  g_mutex_unlock (&s.lock);
  fail_unless (s.element_gone, "the loader kept the element 30 s after NULL");
  g_mutex_clear (&s.lock);
  g_cond_clear (&s.cond);
}

GST_END_TEST;

static Suite *
reload_suite (void)
{
  Suite *s = suite_create ("hybridinfer-reload");
  TCase *tc = tcase_create ("hot-reload");
  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_model_hot_reload);
  tcase_add_test (tc, test_model_hot_reload_batched);
  tcase_add_test (tc, test_properties_while_playing);
  tcase_add_test (tc, test_reload_while_prerolled);
  tcase_add_test (tc, test_notify_when_model_runs);
  tcase_add_test (tc, test_stop_from_sync_handler);
  return s;
}

GST_CHECK_MAIN (reload);
