/*
 * test-hybridoverlay.c — hybridoverlay draws what hybridinfer found:
 * outlines where the detection boxes are, labels above them, the top
 * classes of a classification, on every format; frames without results
 * leave untouched and unmapped.
 */
#include "element-util.h"

#define W 128
#define H 96

static GstHarness *
chain_new (const gchar * model, const gchar * overlay_props)
{
  gchar *m = model_path (model);
  gchar *l = labels_path (g_str_has_prefix (model, "colors") ? "colors"
      : "quadrants");
  gchar *desc = g_strdup_printf ("hybridinfer model=%s labels=%s device=cpu "
      "input-size=64x64 ! hybridoverlay name=o %s", m, l, overlay_props);
  GstHarness *h = gst_harness_new_parse (desc);
  g_free (desc);
  g_free (l);
  g_free (m);
  return h;
}

static rgb8
pixel_at (GstBuffer * buf, const gchar * format, int x, int y)
{
  GstVideoInfo info;
  GstVideoFrame frame;
  gst_video_info_set_format (&info, gst_video_format_from_string (format),
      W, H);
  fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_READ));
  const GstVideoFormatInfo *fi = info.finfo;
  const guint8 *p = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame, 0)
      + y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0)
      + x * GST_VIDEO_FORMAT_INFO_PSTRIDE (fi, 0);
  rgb8 c = { p[GST_VIDEO_FORMAT_INFO_POFFSET (fi, 0)],
    p[GST_VIDEO_FORMAT_INFO_POFFSET (fi, 1)],
    p[GST_VIDEO_FORMAT_INFO_POFFSET (fi, 2)]
  };
  gst_video_frame_unmap (&frame);
  return c;
}

static gboolean
is_colour (rgb8 c, guint8 r, guint8 g, guint8 b)
{
  return c.r == r && c.g == g && c.b == b;
}

GST_START_TEST (test_boxes_and_labels)
{
  GstHarness *h = chain_new ("quadrants", "line-width=2 font-scale=1");
  set_caps (h, "RGBx", W, H);
  GstBuffer *out = gst_harness_push_and_pull (h,
      frame_new ("RGBx", W, H, pick_quadrants, 0));
  /* the green quadrant's box: its left edge, its inside */
  fail_unless (is_colour (pixel_at (out, "RGBx", W / 2, H / 4), 0, 255, 0));
  fail_unless (is_colour (pixel_at (out, "RGBx", W / 2 + 1, H / 4), 0, 255,
          0));
  /* the red quadrant (top-left): outline drawn in green over red */
  fail_unless (is_colour (pixel_at (out, "RGBx", 0, H / 4), 0, 255, 0));
  fail_unless (is_colour (pixel_at (out, "RGBx", 5, H / 4), 255, 0, 0));
  /* the blue quadrant: its top edge sits under its label */
  fail_unless (is_colour (pixel_at (out, "RGBx", W / 4, H / 2 + 1), 0, 255,
          0));
  /* a label is text (black) on a green background somewhere above the
   * blue box: count black dots in that band */
  guint black = 0;
  for (int y = H / 2 - 9; y < H / 2; y++)
    for (int x = 0; x < W / 2; x++)
      black += is_colour (pixel_at (out, "RGBx", x, y), 0, 0, 0);
  fail_unless (black > 20, "%u text dots", black);
  /* the black quadrant scores too low to be drawn */
  fail_unless (is_colour (pixel_at (out, "RGBx", W - 1, H - 1), 0, 0, 0));
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_properties)
{
  GstHarness *h = chain_new ("quadrants", "draw-boxes=false "
      "draw-labels=false");
  set_caps (h, "BGRA", W, H);
  GstBuffer *out = gst_harness_push_and_pull (h,
      frame_new ("BGRA", W, H, pick_quadrants, 0));
  /* nothing drawn: the frame is as it came */
  fail_unless (is_colour (pixel_at (out, "BGRA", 0, H / 4), 255, 0, 0));
  fail_unless (is_colour (pixel_at (out, "BGRA", W / 2, H / 4), 0, 255, 0));
  gst_buffer_unref (out);
  GstElement *o = gst_bin_get_by_name (GST_BIN (h->element), "o");
  g_object_set (o, "draw-boxes", TRUE, "box-color", 0xff0000ffu,
      "line-width", 3u, NULL);
  out = gst_harness_push_and_pull (h, frame_new ("BGRA", W, H,
          pick_quadrants, 1));
  fail_unless (is_colour (pixel_at (out, "BGRA", 2, H / 4), 0, 0, 255));
  fail_unless (is_colour (pixel_at (out, "BGRA", 3, H / 4), 255, 0, 0));
  gst_buffer_unref (out);
  guint line, scale;
  g_object_get (o, "line-width", &line, "font-scale", &scale, NULL);
  fail_unless_equals_int (line, 3);
  fail_unless_equals_int (scale, 0);
  ASSERT_WARNING (g_object_set (o, "line-width", 100u, NULL));
  gst_object_unref (o);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_classes_top_left)
{
  GstHarness *h = chain_new ("colors-shaped", "font-scale=2");
  set_caps (h, "RGB", W, H);
  GstBuffer *out = gst_harness_push_and_pull (h,
      frame_new ("RGB", W, H, pick_blue, 0));
  /* a green label block with black text in the corner, blue elsewhere */
  fail_unless (is_colour (pixel_at (out, "RGB", 2, 2), 0, 255, 0));
  guint black = 0;
  for (int y = 2; y < 20; y++)
    for (int x = 2; x < 60; x++)
      black += is_colour (pixel_at (out, "RGB", x, y), 0, 0, 0);
  fail_unless (black > 40, "%u text dots", black);
  fail_unless (is_colour (pixel_at (out, "RGB", W - 1, H - 1), 0, 0, 255));
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Without results the overlay does not even map the frame. */
GST_START_TEST (test_no_results_untouched)
{
  GstHarness *h = gst_harness_new ("hybridoverlay");
  set_caps (h, "RGB", W, H);
  GstBuffer *in = frame_new ("RGB", W, H, pick_quadrants, 0);
  GstMemory *mem = gst_buffer_peek_memory (in, 0);
  gst_buffer_ref (in);          /* shared: any write would need a copy */
  GstBuffer *out = gst_harness_push_and_pull (h, in);
  fail_unless (gst_buffer_peek_memory (out, 0) == mem);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_every_format)
{
  static const gchar *formats[] = { "RGB", "BGR", "RGBx", "BGRx", "xRGB",
    "xBGR", "RGBA", "BGRA", "NV12", "I420", "GRAY8"
  };
  for (guint i = 0; i < G_N_ELEMENTS (formats); i++) {
    GstHarness *h = chain_new ("quadrants", "");
    gchar *src = g_strdup_printf ("videotestsrc is-live=true pattern=smpte ! "
        "capsfilter caps=\"video/x-raw,format=%s,width=%d,height=%d\"",
        formats[i], W, H);
    gst_harness_add_src_parse (h, src, TRUE);
    fail_unless_equals_int (gst_harness_push_from_src (h), GST_FLOW_OK);
    GstBuffer *out = gst_harness_pull (h);
    fail_unless (gst_buffer_get_meta (out,
            GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE) != NULL);
    gst_buffer_unref (out);
    g_free (src);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

static Suite *
hybridoverlay_suite (void)
{
  Suite *s = suite_create ("hybridoverlay");
  TCase *tc = tcase_create ("general");
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_boxes_and_labels);
  tcase_add_test (tc, test_properties);
  tcase_add_test (tc, test_classes_top_left);
  tcase_add_test (tc, test_no_results_untouched);
  tcase_add_test (tc, test_every_format);
  return s;
}

GST_CHECK_MAIN (hybridoverlay);
