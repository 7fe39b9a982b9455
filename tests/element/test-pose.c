/*
 * test-pose.c — output=pose: keypoint heatmaps (B, K, H, W) read as
 * GluonCV's SimplePose reads them, on the whole frame and (top-down, as
 * GluonCV runs SimplePose on a detector's people) on each region of
 * interest.
 *
 * The "spots" model (make_models.py) has one heatmap per colour channel
 * at half resolution, so on a black frame with a red, a green and a blue
 * square the three keypoints are the squares' top-left corners (the first
 * maximum of each heatmap), with score 1: known from the frame.
 */
#include "element-util.h"

/* Squares of 8x8 on black, corners on even pixels. */
#define SQ 8
static const int spot_x[3] = { 16, 80, 40 }, spot_y[3] = { 16, 32, 64 };

static rgb8
pick_spots (int x, int y, int w, int h)
{
  for (int k = 0; k < 3; k++)
    if (x >= spot_x[k] && x < spot_x[k] + SQ && y >= spot_y[k]
        && y < spot_y[k] + SQ)
      return (rgb8) {
      k == 0 ? 255 : 0, k == 1 ? 255 : 0, k == 2 ? 255 : 0};
  return (rgb8) {
  0, 0, 0};
}

static GstElement *
pose_element (const gchar * input_size)
{
  GstElement *e = infer_new ("spots");
  gst_util_set_object_arg (G_OBJECT (e), "output", "pose");
  g_object_set (e, "input-size", input_size, NULL);
  return e;
}

/* Keypoint k of a "keypoints" field: x, y, score. */
static void
keypoint (const GstStructure * s, guint k, gfloat * x, gfloat * y,
    gfloat * score)
{
  const GValue *a = gst_structure_get_value (s, "keypoints");
  fail_unless (a != NULL && GST_VALUE_HOLDS_ARRAY (a));
  fail_unless (gst_value_array_get_size (a) >= 3 * k + 3);
  *x = g_value_get_float (gst_value_array_get_value (a, 3 * k));
  *y = g_value_get_float (gst_value_array_get_value (a, 3 * k + 1));
  *score = g_value_get_float (gst_value_array_get_value (a, 3 * k + 2));
}

GST_START_TEST (test_whole_frame)
{
  /* the input as the frame (scale 1), and half of it (scale 2) */
  static const gchar *sizes[] = { "128x96", "64x48" };
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++) {
    GstHarness *h = harness_for (pose_element (sizes[i]), NULL);
    set_caps (h, "RGB", 128, 96);
    GstBuffer *out = gst_harness_push_and_pull (h,
        frame_new ("RGB", 128, 96, pick_spots, 0));
    const GstStructure *s = results_of (out);
    fail_unless_equals_string (gst_structure_get_string (s, "type"), "pose");
    gint count;
    fail_unless (gst_structure_get_int (s, "count", &count));
    fail_unless_equals_int (count, 3);
    for (guint k = 0; k < 3; k++) {
      gfloat x, y, score;
      keypoint (s, k, &x, &y, &score);
      fail_unless_equals_float (x, spot_x[k]);
      fail_unless_equals_float (y, spot_y[k]);
      fail_unless_equals_float (score, 1.0f);
    }
    const GValue *labels = gst_structure_get_value (s, "labels");
    fail_unless_equals_string (g_value_get_string (gst_value_array_get_value
            (labels, 1)), "green");
    /* three keypoints are not COCO's seventeen: no skeleton */
    fail_unless_equals_int (gst_value_array_get_size
        (gst_structure_get_value (s, "skeleton")), 0);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* A heatmap with no maximum above 0 (a black frame) puts its keypoint at
 * the picture's corner, score 0, as GluonCV does. */
GST_START_TEST (test_nothing_found)
{
  GstHarness *h = harness_for (pose_element ("64x48"), NULL);
  set_caps (h, "RGB", 128, 96);
  GstBuffer *black = frame_new ("RGB", 128, 96, pick_spots, 0);
  gst_buffer_memset (black, 0, 0, gst_buffer_get_size (black));
  GstBuffer *out = gst_harness_push_and_pull (h, black);
  gfloat x, y, score;
  keypoint (results_of (out), 0, &x, &y, &score);
  fail_unless_equals_float (x, 0);
  fail_unless_equals_float (y, 0);
  fail_unless_equals_float (score, 0);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Top-down: a region around each square, its keypoints in frame pixels. */
GST_START_TEST (test_on_regions)
{
  GstElement *e = pose_element ("24x24");
  gst_util_set_object_arg (G_OBJECT (e), "inference-region", "roi");
  GstHarness *h = harness_for (e, NULL);
  set_caps (h, "RGB", 128, 96);
  GstBuffer *in = frame_new ("RGB", 128, 96, pick_spots, 0);
  for (int k = 0; k < 3; k++)
    gst_buffer_add_video_region_of_interest_meta (in, "person",
        spot_x[k] - 8, spot_y[k] - 8, 24, 24);
  GstBuffer *out = gst_harness_push_and_pull (h, in);
  gpointer state = NULL;
  GstMeta *meta;
  int k = 0;
  while ((meta = gst_buffer_iterate_meta_filtered (out, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstStructure *s = gst_video_region_of_interest_meta_get_param
        ((GstVideoRegionOfInterestMeta *) meta, "hybridinfer");
    fail_unless (s != NULL);
    gfloat x, y, score;
    /* the region's own colour is its strongest keypoint */
    keypoint (s, (guint) k, &x, &y, &score);
    fail_unless_equals_float (x, spot_x[k]);
    fail_unless_equals_float (y, spot_y[k]);
    fail_unless_equals_float (score, 1.0f);
    k++;
  }
  fail_unless_equals_int (k, 3);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
pose_suite (void)
{
  Suite *s = suite_create ("hybridinfer-pose");
  TCase *tc = tcase_create ("pose");
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_whole_frame);
  tcase_add_test (tc, test_nothing_found);
  tcase_add_test (tc, test_on_regions);
  return s;
}

GST_CHECK_MAIN (pose);
