/*
 * test-segmentation.c — output=segmentation: the first head (B, C, H, W)
 * read as a class per pixel.
 *
 * The "segment" model (make_models.py) scores each 2x2 block as
 * background (a constant) or its dominant colour channel, so on frames of
 * four coloured quadrants (red, green, blue, black) the class map is known
 * from the frame: each quadrant's class, a quarter of the pixels each.
 * Checked: the map (the "class-map" tensor of the meta), the classes
 * present and their coverage, where the map lies over the frame (stretch
 * and letterbox), batches, and the error for a head that is no map.
 */
#include "element-util.h"

#include <unistd.h>

#include <glib/gstdio.h>

static GstHarness *
segment_harness (const gchar * extra_props, int w, int h)
{
  GstElement *e = infer_new ("segment");
  gst_util_set_object_arg (G_OBJECT (e), "output", "segmentation");
  g_object_set (e, "top-k", 4u, NULL);
  if (extra_props) {
    gchar **props = g_strsplit (extra_props, " ", -1);
    for (gchar ** p = props; *p; p++) {
      gchar **kv = g_strsplit (*p, "=", 2);
      gst_util_set_object_arg (G_OBJECT (e), kv[0], kv[1]);
      g_strfreev (kv);
    }
    g_strfreev (props);
  }
  GstHarness *hn = harness_for (e, NULL);
  set_caps (hn, "RGB", w, h);
  return hn;
}

static const GstHybridTensor *
class_map_of (GstBuffer * buf)
{
  GstHybridTensorMeta *meta = gst_buffer_get_hybrid_tensor_meta (buf);
  fail_unless (meta != NULL);
  const GstHybridTensor *map = gst_hybrid_tensor_meta_find_tensor (meta,
      "class-map");
  fail_unless (map != NULL, "no class-map tensor");
  return map;
}

static gfloat
map_at (const GstHybridTensor * map, int u, int v)
{
  return map->data[v * map->dims[2] + u];
}

static gfloat
float_field (const GstStructure * s, const gchar * name)
{
  const GValue *v = gst_structure_get_value (s, name);
  fail_unless (v != NULL && G_VALUE_HOLDS_FLOAT (v), "no float %s", name);
  return g_value_get_float (v);
}

GST_START_TEST (test_quadrants_map)
{
  GstHarness *hn = segment_harness ("input-size=32x24", 64, 48);
  GstBuffer *out = gst_harness_push_and_pull (hn,
      frame_new ("RGB", 64, 48, pick_quadrants, 0));
  const GstHybridTensor *map = class_map_of (out);
  fail_unless_equals_int (map->ndim, 3);
  fail_unless_equals_int (map->dims[1], 12);
  fail_unless_equals_int (map->dims[2], 16);
  /* every map pixel: its quadrant's class (red 1, green 2, blue 3,
   * black: background 0) */
  static const gfloat quadrant_class[] = { 1, 2, 3, 0 };
  for (int v = 0; v < 12; v++)
    for (int u = 0; u < 16; u++) {
      int q = (u >= 8) + 2 * (v >= 6);
      fail_unless_equals_float (map_at (map, u, v), quadrant_class[q]);
    }
  const GstStructure *s = results_of (out);
  fail_unless_equals_string (gst_structure_get_string (s, "type"),
      "segmentation");
  gint width, height;
  fail_unless (gst_structure_get_int (s, "width", &width));
  fail_unless (gst_structure_get_int (s, "height", &height));
  fail_unless_equals_int (width, 16);
  fail_unless_equals_int (height, 12);
  /* the map covers the frame exactly (stretch) */
  fail_unless_equals_float (float_field (s, "map-x"), 0);
  fail_unless_equals_float (float_field (s, "map-y"), 0);
  fail_unless_equals_float (float_field (s, "map-width"), 64);
  fail_unless_equals_float (float_field (s, "map-height"), 48);
  /* four classes, a quarter each; ties by class id */
  const GValue *labels = gst_structure_get_value (s, "labels");
  const GValue *coverage = gst_structure_get_value (s, "coverage");
  fail_unless_equals_int (gst_value_array_get_size (labels), 4);
  static const gchar *order[] = { "background", "red", "green", "blue" };
  for (guint i = 0; i < 4; i++) {
    fail_unless_equals_string (g_value_get_string (gst_value_array_get_value
            (labels, i)), order[i]);
    fail_unless_equals_float (g_value_get_float (gst_value_array_get_value
            (coverage, i)), 0.25f);
  }
  gst_buffer_unref (out);

  /* a red frame: one class, all of it */
  out = gst_harness_push_and_pull (hn, frame_new ("RGB", 64, 48, pick_red,
          1));
  s = results_of (out);
  labels = gst_structure_get_value (s, "labels");
  fail_unless_equals_int (gst_value_array_get_size (labels), 1);
  fail_unless_equals_string (g_value_get_string (gst_value_array_get_value
          (labels, 0)), "red");
  gst_buffer_unref (out);
  gst_harness_teardown (hn);
}

GST_END_TEST;

/* Letterboxed: the map spans the padding too, beyond the frame. */
GST_START_TEST (test_letterbox_mapping)
{
  GstHarness *hn = segment_harness ("input-size=32x32 resize=letterbox", 64,
      48);
  GstBuffer *out = gst_harness_push_and_pull (hn,
      frame_new ("RGB", 64, 48, pick_quadrants, 0));
  const GstStructure *s = results_of (out);
  /* the picture is 32x24 at (0, 4) of the 32x32 input: the map's 32
   * input rows cover 64 frame rows from y = -8 */
  fail_unless_equals_float (float_field (s, "map-x"), 0);
  fail_unless_equals_float (float_field (s, "map-y"), -8);
  fail_unless_equals_float (float_field (s, "map-width"), 64);
  fail_unless_equals_float (float_field (s, "map-height"), 64);
  const GstHybridTensor *map = class_map_of (out);
  /* the padding rows (black) are background; the picture's are not */
  fail_unless_equals_float (map_at (map, 2, 0), 0);
  fail_unless_equals_float (map_at (map, 2, 4), 1);     /* red */
  fail_unless_equals_float (map_at (map, 3, 11), 3);    /* blue */
  fail_unless_equals_float (map_at (map, 12, 11), 0);   /* black */
  fail_unless_equals_float (map_at (map, 2, 15), 0);
  gst_buffer_unref (out);
  gst_harness_teardown (hn);
}

GST_END_TEST;

/* Batched frames each get their own map. */
GST_START_TEST (test_batch)
{
  GstHarness *hn = segment_harness ("input-size=32x24 batch-size=2", 64, 48);
  gst_harness_push (hn, frame_new ("RGB", 64, 48, pick_blue, 0));
  gst_harness_push (hn, frame_new ("RGB", 64, 48, pick_green, 1));
  GstBuffer *a = gst_harness_pull (hn), *b = gst_harness_pull (hn);
  fail_unless_equals_float (map_at (class_map_of (a), 3, 3), 3);
  fail_unless_equals_float (map_at (class_map_of (b), 3, 3), 2);
  gst_buffer_unref (a);
  gst_buffer_unref (b);
  gst_harness_teardown (hn);
}

GST_END_TEST;

/* A classifier's head is no map: refused at start, naming the shapes. */
GST_START_TEST (test_not_a_map)
{
  GstElement *e = infer_new ("colors-shaped");
  gst_util_set_object_arg (G_OBJECT (e), "output", "segmentation");
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  GError *err = NULL;
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, "output=segmentation needs a first "
          "head (B, C, H, W)") != NULL, "%s", err->message);
  g_error_free (err);
  gst_message_unref (msg);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  gst_object_unref (e);
}

GST_END_TEST;

/* A labels file that does not count the map's classes (4 channels, 3
 * labels) would name every pixel's class wrongly: warned at start. */
GST_START_TEST (test_labels_mismatch_warns)
{
  GstBus *bus;
  gchar *path = NULL;
  int fd = g_file_open_tmp ("hy-seg-labels-XXXXXX.txt", &path, NULL);
  close (fd);
  g_file_set_contents (path, "background\nred\ngreen\n", -1, NULL);
  GstElement *e = infer_new ("segment");
  gst_util_set_object_arg (G_OBJECT (e), "output", "segmentation");
  g_object_set (e, "labels", path, NULL);
  GstHarness *h = harness_for (e, &bus);
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL, "no warning for 3 labels on 4 classes");
  GError *err = NULL;
  gst_message_parse_warning (msg, &err, NULL);
  fail_unless (strstr (err->message, "3 labels") != NULL
      && strstr (err->message, "4 classes") != NULL, "%s", err->message);
  g_error_free (err);
  gst_message_unref (msg);
  teardown_with_bus (h, bus);
  g_unlink (path);
  g_free (path);
}

GST_END_TEST;

static Suite *
segmentation_suite (void)
{
  Suite *s = suite_create ("hybridinfer-segmentation");
  TCase *tc = tcase_create ("segmentation");
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_quadrants_map);
  tcase_add_test (tc, test_letterbox_mapping);
  tcase_add_test (tc, test_batch);
  tcase_add_test (tc, test_not_a_map);
  tcase_add_test (tc, test_labels_mismatch_warns);
  return s;
}

GST_CHECK_MAIN (segmentation);
