/*
 * test-result-labels.c — what a result's labels cost and how long they
 * live (result-pool.c), and which rows of a detection head are
 * detections (decode-detection.c):
 *
 *  - a labels file of hundreds of thousands of lines costs memory in
 *    proportion to its size, a hot reload of `labels` gives the old
 *    labels back, and stopping gives everything back;
 *  - copies of a result's structure, of a region's parameters and of the
 *    bus message keep their labels once the element and its labels are
 *    gone (under ASan a label left pointing into the pool is a
 *    use-after-free);
 *  - a row whose class id is not a whole number in [0, 2^31), or whose
 *    score or a corner is not finite, is no detection: it is in neither
 *    the results nor the region metas.
 */
#include <math.h>
#include <malloc.h>
#include <stdio.h>

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

/* ---- memory ------------------------------------------------------------- */

/* Bytes malloc has handed out and not had back (the heap's chunks in use
 * and the mappings of large ones): unlike RSS, it falls when memory is
 * freed.  ASan's allocator is not malloc's: there it cannot be read. */
static gint64
heap_in_use (void)
{
  struct mallinfo2 mi = mallinfo2 ();
  return (gint64) (mi.uordblks + mi.hblkhd);
}

/* A labels file of n lines "PREFIX-label-NNNNNNN"; returns its path,
 * *size its bytes. */
static gchar *
big_labels (const gchar * prefix, guint n, gint64 * size)
{
  gchar *name = g_strdup_printf ("%s-labels.txt", prefix);
  gchar *path = g_build_filename (tmp_dir, name, NULL);
  g_free (name);
  GString *text = g_string_sized_new ((gsize) n * 20);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (text, "%s-label-%07u\n", prefix, i);
  fail_unless (g_file_set_contents (path, text->str, (gssize) text->len,
          NULL));
  *size = (gint64) text->len;
  g_string_free (text, TRUE);
  return path;
}

/* The quadrants detector at the input size it was made for. */
static GstElement *
quadrants_new (void)
{
  GstElement *e = infer_new ("quadrants");
  g_object_set (e, "input-size", "64x64", NULL);
  return e;
}

/* Pushes n quadrant frames and checks each result's first box: the red
 * quadrant, class 0, named by the first line of the labels running. */
static void
push_quadrants (GstHarness * h, guint n, const gchar * first_label)
{
  for (guint i = 0; i < n; i++) {
    fail_unless_equals_int (gst_harness_push (h, frame_new ("RGB", 64, 48,
                pick_quadrants, i * GST_SECOND / 30)), GST_FLOW_OK);
    GstBuffer *buf = gst_harness_pull (h);
    const GValue *labels = gst_structure_get_value (results_of (buf),
        "labels");
    fail_unless (labels && gst_value_array_get_size (labels) == 3);
    fail_unless_equals_string (g_value_get_string
        (gst_value_array_get_value (labels, 0)), first_label);
    gst_buffer_unref (buf);
  }
}

/* The reload's message, or a failure naming the warning or error. */
static void
wait_labels_reload (GstBus * bus)
{
  for (;;) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
        GST_MESSAGE_ELEMENT | GST_MESSAGE_WARNING | GST_MESSAGE_ERROR);
    fail_unless (msg != NULL, "no reload message in 60 s");
    if (GST_MESSAGE_TYPE (msg) != GST_MESSAGE_ELEMENT) {
      GError *err = NULL;
      gst_message_parse_warning (msg, &err, NULL);
      /* files longer than the detector's classes, on purpose: that they
       * are told about is right, and no refusal */
      gboolean told_length = GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING
          && err && strstr (err->message, "labels but the model has 3 "
          "classes");
      if (!told_length)
        fail ("reload refused: %s", err ? err->message : "(error)");
      g_clear_error (&err);
      gst_message_unref (msg);
      continue;
    }
    gboolean done = gst_message_has_name (msg, "hybridinfer-model-reloaded");
    gst_message_unref (msg);
    if (done)
      return;
  }
}

#define BIG_LABELS 400000

/* 400,000 labels (about 8 MB): the element's memory grows by a small
 * multiple of the file (the labels are held by the running model and by
 * its results' pool, each in one block), not with the square of the
 * count; a hot reload to another 400,000 frees the first; stopping frees
 * them all. */
GST_START_TEST (test_big_labels_memory)
{
  gint64 size_a, size_b;
  gchar *a = big_labels ("a", BIG_LABELS, &size_a);
  gchar *b = big_labels ("b", BIG_LABELS, &size_b);
  gchar *small = labels_path ("quadrants");

  /* once, so that what GStreamer and GLib set up for good is not counted */
  GstElement *e = quadrants_new ();
  GstHarness *h = harness_for (e, NULL);
  set_caps (h, "RGB", 64, 48);
  push_quadrants (h, 2, "red");
  gst_harness_teardown (h);
  malloc_trim (0);
  gint64 base = heap_in_use ();

  e = quadrants_new ();
  g_object_set (e, "labels", a, NULL);
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  h = gst_harness_new_with_element (e, "sink", "src");
  gst_object_unref (e);
  set_caps (h, "RGB", 64, 48);
  push_quadrants (h, 3, "a-label-0000000");
  gint64 loaded = heap_in_use () - base;

  g_object_set (e, "labels", b, NULL);
  wait_labels_reload (bus);
  /* the frames after the swap let go of the old model's last result */
  push_quadrants (h, 3, "b-label-0000000");
  gint64 reloaded = heap_in_use () - base;

  gst_bus_set_flushing (bus, TRUE);
  gst_harness_teardown (h);
  gst_object_unref (bus);
  gint64 stopped = heap_in_use () - base;
  g_print ("labels file %" G_GINT64_FORMAT " bytes, %u lines: heap +%"
      G_GINT64_FORMAT " loaded, +%" G_GINT64_FORMAT " after a reload to "
      "another, %+" G_GINT64_FORMAT " stopped\n", size_a, BIG_LABELS, loaded,
      reloaded, stopped);
  if (UNDER_ASAN) {
    g_print ("ASan's allocator: heap use not measured\n");
  } else {
    /* the labels twice (the model's and the pool's), with a pointer
     * each: about 3 times the file */
    fail_unless (loaded < 5 * size_a, "loading %" G_GINT64_FORMAT
        " bytes of labels took %" G_GINT64_FORMAT, size_a, loaded);
    fail_unless (reloaded < loaded + size_b / 2, "a reload kept the old "
        "labels: %" G_GINT64_FORMAT " then %" G_GINT64_FORMAT, loaded,
        reloaded);
    fail_unless (stopped < size_a / 8, "stopped, %" G_GINT64_FORMAT
        " bytes are still held", stopped);
  }
  g_unlink (a);
  g_unlink (b);
  g_free (a);
  g_free (b);
  g_free (small);
}

GST_END_TEST;

/* ---- labels outliving the element --------------------------------------- */

static gchar *
write_labels (const gchar * name, const gchar * text)
{
  gchar *path = g_build_filename (tmp_dir, name, NULL);
  fail_unless (g_file_set_contents (path, text, -1, NULL));
  return path;
}

static const gchar *
array_string (const GstStructure * s, const gchar * field, guint i)
{
  const GValue *v = gst_structure_get_value (s, field);
  fail_unless (v != NULL && gst_value_array_get_size (v) > i, "no %s[%u]",
      field, i);
  return g_value_get_string (gst_value_array_get_value (v, i));
}

/* What an application keeps of a result — a copy of the meta's
 * structure, a region parameter's copy, the bus message — stays valid
 * once the buffer, the element and its labels are gone; a label past the
 * labels file ("class-N", written into the result's own block) too. */
GST_START_TEST (test_labels_outlive_element)
{
  /* the quadrants model's classes are 0 red, 1 green, 2 blue: name two */
  gchar *labels = write_labels ("two.txt", "scarlet\nemerald\n");
  GstElement *e = quadrants_new ();
  g_object_set (e, "labels", labels, NULL);
  GstBus *bus = NULL;
  GstHarness *h = harness_for (e, &bus);
  set_caps (h, "RGB", 64, 48);
  fail_unless_equals_int (gst_harness_push (h, frame_new ("RGB", 64, 48,
              pick_quadrants, 0)), GST_FLOW_OK);
  GstBuffer *buf = gst_harness_pull (h);
  GstStructure *results = gst_structure_copy (results_of (buf));
  GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *)
      gst_buffer_get_meta (buf, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE);
  fail_unless (roi != NULL);
  GstStructure *param = gst_structure_copy
      (gst_video_region_of_interest_meta_get_param (roi, "detection"));
  GstMessage *msg = next_result_message (bus);
  fail_unless (msg != NULL);
  gst_buffer_unref (buf);
  teardown_with_bus (h, bus);
  /* the labels file goes too: nothing may still read it */
  g_unlink (labels);

  const gchar *expected[] = { "scarlet", "emerald", "class-2" };
  const GstStructure *posted = gst_message_get_structure (msg);
  for (guint i = 0; i < 3; i++) {
    fail_unless_equals_string (array_string (results, "labels", i),
        expected[i]);
    fail_unless_equals_string (array_string (posted, "labels", i),
        expected[i]);
  }
  fail_unless_equals_string (gst_structure_get_string (param, "label"),
      "scarlet");
  gst_structure_free (results);
  gst_structure_free (param);
  gst_message_unref (msg);
  g_free (labels);
}

GST_END_TEST;

/* ---- rows that are no detection ------------------------------------------- */

/* A head (1, ROWS, 6) of fixed rows [class id, score, x1, y1, x2, y2]
 * (model-input pixels, a 32 x 32 input): two detections among rows that
 * are none. */
#define ROWS 9
#define SIDE 32
static const float bad_rows[ROWS][6] = {
  {0, 0.9f, 2, 2, 10, 10},      /* a detection */
  {3e9f, 0.9f, 2, 2, 10, 10},   /* past a gint: was class -2147483648 */
  {1, 0.9f, NAN, 2, 10, 10},    /* a NaN corner */
  {1, NAN, 2, 2, 10, 10},       /* a NaN score */
  {1, INFINITY, 2, 2, 10, 10},  /* an infinite score */
  {2.5f, 0.9f, 2, 2, 10, 10},   /* not a whole class id */
  {2, 0.9f, 0, 0, INFINITY, 10},        /* an infinite corner */
  {-1, -1, -1, -1, -1, -1},     /* GluonCV's padding */
  /* the largest float below 2^31: a class id, past the labels */
  {2147483520.0f, 0.8f, 16, 16, 30, 30},
};

/* The rows, whatever the picture: rows + 0 * (the first channel's
 * mean), so that the graph reads its input. */
static hy_value *
rows_forward (hy_block * self, hy_F * F, hy_value * const *inputs,
    int n_inputs, hy_value * const *params)
{
  hy_value *mean = hy_F_pooling (F, inputs[0], "avg", 1, 1, 0, TRUE);
  hy_value *first = hy_F_slice_axis (F, mean, 1, 0, 1);
  hy_value *zero = hy_F_mul_scalar (F, hy_F_reshape (F, first,
          HY_DIMS (1, 1, 1)), 0.0);
  return hy_F_broadcast_add (F, params[0], zero);
}

static gchar *
rows_model (void)
{
  GError *error = NULL;
  hy_block *net = hy_hybrid_block_new ("rows", rows_forward);
  hy_parameter *rows = hy_block_add_param (net, "rows",
      HY_DIMS (1, ROWS, 6), hy_init_zeros ());
  fail_unless (hy_block_initialize (net, hy_init_zeros (), &error), "%s",
      error ? error->message : "");
  hy_shape rows_shape = hy_shape_make (HY_DIMS (1, ROWS, 6));
  hy_tensor *values = hy_tensor_new (&rows_shape);
  memcpy (values->data, bad_rows, sizeof bad_rows);
  fail_unless (hy_parameter_set_data (rows, values, &error), "%s",
      error ? error->message : "");
  hy_tensor_free (values);
  hy_block_hybridize (net, HY_HYBRID_DEFAULT);
  hy_shape shape = hy_shape_make (HY_DIMS (1, 3, SIDE, SIDE));
  hy_tensor *x = hy_tensor_new (&shape);
  memset (x->data, 0, hy_shape_numel (&shape) * sizeof (float));
  fail_unless (hy_block_forward (net, x, &error) != NULL, "%s",
      error ? error->message : "");
  gchar *prefix = g_build_filename (tmp_dir, "rows", NULL);
  fail_unless (hy_block_export (net, prefix, 0, &error), "%s",
      error ? error->message : "");
  hy_tensor_free (x);
  hy_block_free (net);
  gchar *symbol = g_strdup_printf ("%s-symbol.json", prefix);
  g_free (prefix);
  return symbol;
}

static gint
array_int (const GstStructure * s, const gchar * field, guint i)
{
  const GValue *v = gst_structure_get_value (s, field);
  fail_unless (v != NULL && gst_value_array_get_size (v) > i);
  return g_value_get_int (gst_value_array_get_value (v, i));
}

static guint
count_regions (GstBuffer * buf)
{
  guint n = 0;
  gpointer state = NULL;
  while (gst_buffer_iterate_meta_filtered (buf, &state,
          GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    n++;
  return n;
}

GST_START_TEST (test_rows_that_are_no_detection)
{
  gchar *model = rows_model ();
  gchar *labels = write_labels ("rows.txt", "first\n");
  GstElement *e = gst_element_factory_make ("hybridinfer", NULL);
  fail_unless (e != NULL);
  g_object_set (e, "model", model, "labels", labels, "device", "cpu",
      "threshold", 0.5, NULL);
  GstHarness *h = harness_for (e, NULL);
  set_caps (h, "RGB", SIDE, SIDE);
  fail_unless_equals_int (gst_harness_push (h, frame_new ("RGB", SIDE, SIDE,
              pick_red, 0)), GST_FLOW_OK);
  GstBuffer *buf = gst_harness_pull (h);
  const GstStructure *s = results_of (buf);
  gint count = -1;
  fail_unless (gst_structure_get_int (s, "count", &count));
  fail_unless_equals_int (count, 2);
  fail_unless_equals_int (array_int (s, "class-ids", 0), 0);
  fail_unless_equals_string (array_string (s, "labels", 0), "first");
  fail_unless_equals_int (array_int (s, "class-ids", 1), 2147483520);
  fail_unless_equals_string (array_string (s, "labels", 1),
      "class-2147483520");
  /* every box reported is finite and in the frame */
  const GValue *boxes = gst_structure_get_value (s, "boxes");
  for (guint i = 0; i < 2; i++) {
    const GValue *box = gst_value_array_get_value (boxes, i);
    for (guint c = 0; c < 4; c++) {
      gfloat v = g_value_get_float (gst_value_array_get_value (box, c));
      fail_unless (isfinite (v) && v >= 0 && v <= SIDE, "box %u: %g", i, v);
    }
  }
  fail_unless_equals_int (count_regions (buf), 2);
  gst_buffer_unref (buf);
  gst_harness_teardown (h);
  g_unlink (labels);
  g_free (labels);
  g_free (model);
}

GST_END_TEST;

static Suite *
result_labels_suite (void)
{
  Suite *s = suite_create ("result-labels");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_big_labels_memory);
  tcase_add_test (tc, test_labels_outlive_element);
  tcase_add_test (tc, test_rows_that_are_no_detection);
  return s;
}

int
main (int argc, char **argv)
{
  gst_check_init (&argc, &argv);
  tmp_dir = g_dir_make_tmp ("hy-result-labels-XXXXXX", NULL);
  g_assert (tmp_dir != NULL);
  int failed = gst_check_run_suite (result_labels_suite (), "result_labels",
      __FILE__);
  /* the models written there */
  GDir *d = g_dir_open (tmp_dir, 0, NULL);
  const gchar *name;
  while (d && (name = g_dir_read_name (d))) {
    gchar *path = g_build_filename (tmp_dir, name, NULL);
    g_unlink (path);
    g_free (path);
  }
  if (d)
    g_dir_close (d);
  g_rmdir (tmp_dir);
  g_free (tmp_dir);
  return failed;
}
