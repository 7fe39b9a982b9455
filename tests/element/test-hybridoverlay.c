/*
 * test-hybridoverlay.c — hybridoverlay draws what hybridinfer found:
 * outlines where the detection boxes are, labels above them (antialiased
 * text with descenders, secondary results appended), the top classes of a
 * classification, on every format; frames without results leave untouched
 * and unmapped; labels seen before allocate nothing.
 */
#include "alloc-count.h"
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
pixel_of (GstBuffer * buf, const gchar * format, int w, int h, int x, int y)
{
  GstVideoInfo info;
  GstVideoFrame frame;
  gst_video_info_set_format (&info, gst_video_format_from_string (format),
      w, h);
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

static rgb8
pixel_at (GstBuffer * buf, const gchar * format, int x, int y)
{
  return pixel_of (buf, format, W, H, x, y);
}

/* Text pixels: close to the text colour (black), far from the label's
 * background (green) — antialiased edges in between count when they are
 * nearer black. */
static gboolean
is_text (rgb8 c)
{
  return c.r < 96 && c.g < 96 && c.b < 96;
}

static guint
text_pixels (GstBuffer * buf, const gchar * format, int w, int h, int x0,
    int y0, int x1, int y1)
{
  guint n = 0;
  for (int y = MAX (y0, 0); y < MIN (y1, h); y++)
    for (int x = MAX (x0, 0); x < MIN (x1, w); x++)
      n += is_text (pixel_of (buf, format, w, h, x, y));
  return n;
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
  /* a label is text (black) on a green background in the band above the
   * blue box (font-scale 1: a 10-pixel font, a label about 14 high) */
  fail_unless (is_colour (pixel_at (out, "RGBx", 1, H / 2 - 1), 0, 255, 0));
  guint black = text_pixels (out, "RGBx", W, H, 0, H / 2 - 16, W / 2, H / 2);
  fail_unless (black > 20, "%u text pixels", black);
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
  gchar *font;
  g_object_get (o, "line-width", &line, "font-scale", &scale, "font-desc",
      &font, NULL);
  fail_unless_equals_int (line, 3);
  fail_unless_equals_int (scale, 0);
  fail_unless_equals_string (font, "Sans");
  g_free (font);
  g_object_set (o, "font-desc", "Serif Bold 20", NULL);
  g_object_get (o, "font-desc", &font, NULL);
  fail_unless_equals_string (font, "Serif Bold 20");
  g_free (font);
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
  /* a green label block with black text in the corner (font-scale 2: a
   * 20-pixel font), blue elsewhere */
  fail_unless (is_colour (pixel_at (out, "RGB", 2, 2), 0, 255, 0));
  guint black = text_pixels (out, "RGB", W, H, 2, 2, W, 32);
  fail_unless (black > 40, "%u text pixels", black);
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

/* hybridoverlay alone, on frames whose regions of interest the test
 * makes (as a detector and a secondary hybridinfer would). */
#define RW 320
#define RH 120

static GstHarness *
overlay_new (const gchar * props)
{
  gchar *desc = g_strdup_printf ("hybridoverlay %s", props);
  GstHarness *h = gst_harness_new_parse (desc);
  g_free (desc);
  set_caps (h, "RGB", RW, RH);
  return h;
}

static GstVideoRegionOfInterestMeta *
add_roi (GstBuffer * buf, const gchar * label, guint x, guint y, guint w,
    guint h, gdouble confidence)
{
  GstVideoRegionOfInterestMeta *roi =
      gst_buffer_add_video_region_of_interest_meta (buf, label, x, y, w, h);
  if (confidence >= 0)
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("detection", "label", G_TYPE_STRING, label,
            "confidence", G_TYPE_DOUBLE, confidence, NULL));
  return roi;
}

/* How far a label's background reaches right from x0 in row y. */
static int
green_run (GstBuffer * buf, int x0, int y)
{
  int x = x0;
  while (x < RW && is_colour (pixel_of (buf, "RGB", RW, RH, x, y), 0, 255,
          0))
    x++;
  return x - x0;
}

/* The lowest row of text in x0 … x1, y0 … y1; -1 for none. */
static int
lowest_text_row (GstBuffer * buf, int x0, int x1, int y0, int y1)
{
  for (int y = y1 - 1; y >= y0; y--)
    for (int x = x0; x < x1; x++)
      if (is_text (pixel_of (buf, "RGB", RW, RH, x, y)))
        return y;
  return -1;
}

/* A region a secondary hybridinfer classified gets its result after its
 * own label: "car 0.91 · red 0.88" is wider than "car 0.91". */
GST_START_TEST (test_secondary_label)
{
  GstHarness *h = overlay_new ("font-scale=1 line-width=2");
  GstBuffer *in = frame_new ("RGB", RW, RH, pick_white, 0);
  GstVideoRegionOfInterestMeta *roi = add_roi (in, "car", 10, 40, 100, 40,
      0.91);
  gst_video_region_of_interest_meta_add_param (roi,
      gst_structure_new ("hybridinfer", "label", G_TYPE_STRING, "red",
          "score", G_TYPE_FLOAT, 0.88f, NULL));
  add_roi (in, "car", 170, 40, 100, 40, 0.91);
  GstBuffer *out = gst_harness_push_and_pull (h, in);
  /* both labels sit above their boxes; the row just above a box is the
   * label's bottom margin: background only */
  int with = green_run (out, 10, 39), without = green_run (out, 170, 39);
  fail_unless (without > 30, "label %d wide", without);
  fail_unless (with > without + 30, "%d vs %d", with, without);
  fail_unless (text_pixels (out, "RGB", RW, RH, 10 + without, 20,
          10 + with, 40) > 20);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A box at the frame's right edge keeps its label whole inside the
 * frame: shifted left to end at the edge, not cut off there. */
GST_START_TEST (test_label_at_right_edge)
{
  GstHarness *h = overlay_new ("font-scale=1 line-width=2");
  GstBuffer *in = frame_new ("RGB", RW, RH, pick_white, 0);
  add_roi (in, "car", RW - 20, 40, 20, 40, 0.91);
  add_roi (in, "car", 10, 40, 100, 40, 0.91);
  GstBuffer *out = gst_harness_push_and_pull (h, in);
  /* the same label's width where nothing stops it */
  int full = green_run (out, 10, 39);
  fail_unless (full > 30, "label %d wide", full);
  /* at the edge: the background runs from RW - full to the last column */
  fail_unless_equals_int (green_run (out, RW - full, 39), full);
  fail_unless (!is_colour (pixel_of (out, "RGB", RW, RH, RW - full - 1, 39),
          0, 255, 0), "the label reaches further left than its width");
  /* and its text is there, left of the box */
  fail_unless (text_pixels (out, "RGB", RW, RH, RW - full, 20, RW - 20,
          40) > 20);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Descenders: "gg" reaches lower than "aa" in labels of the same height
 * (the 5x7 font had none), and digits render. */
GST_START_TEST (test_descenders)
{
  GstHarness *h = overlay_new ("font-scale=2 draw-boxes=false");
  GstBuffer *in = frame_new ("RGB", RW, RH, pick_white, 0);
  add_roi (in, "aa", 10, 60, 100, 40, -1);
  add_roi (in, "gg", 120, 60, 100, 40, -1);
  add_roi (in, "0.98", 230, 60, 80, 40, -1);
  GstBuffer *out = gst_harness_push_and_pull (h, in);
  /* the labels' backgrounds end at the boxes' top, 60 */
  fail_unless (is_colour (pixel_of (out, "RGB", RW, RH, 10, 59), 0, 255, 0));
  fail_unless (is_colour (pixel_of (out, "RGB", RW, RH, 120, 59), 0, 255,
          0));
  int aa = lowest_text_row (out, 10, 110, 20, 60);
  int gg = lowest_text_row (out, 120, 220, 20, 60);
  fail_unless (aa > 30 && gg > 30, "text rows %d, %d", aa, gg);
  /* a 20-pixel font: g's descender is about 4 pixels */
  fail_unless (gg >= aa + 3, "g reaches row %d, a row %d", gg, aa);
  fail_unless (text_pixels (out, "RGB", RW, RH, 230, 20, RW, 60) > 30);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A bigger font-desc size, a taller label. */
GST_START_TEST (test_font_desc_size)
{
  int heights[2];
  const gchar *props[2] = { "font-scale=1", "font-scale=1 "
        "font-desc=\"Sans Bold 30\""
  };
  for (int i = 0; i < 2; i++) {
    GstHarness *h = overlay_new (props[i]);
    GstBuffer *in = frame_new ("RGB", RW, RH, pick_white, 0);
    add_roi (in, "car", 10, 80, 100, 30, 0.5);
    GstBuffer *out = gst_harness_push_and_pull (h, in);
    int y = 79;
    while (y >= 0 && is_colour (pixel_of (out, "RGB", RW, RH, 10, y), 0, 255,
            0))
      y--;
    heights[i] = 79 - y;
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
  fail_unless (heights[0] >= 12 && heights[0] <= 18, "%d", heights[0]);
  fail_unless (heights[1] >= 36, "%d", heights[1]);
}

GST_END_TEST;

static GstPadProbeReturn
count_from_here (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  hy_alloc_start ();
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
count_to_here (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  *(gint *) data += hy_alloc_stop ();
  return GST_PAD_PROBE_OK;
}

/* The same labels frame after frame: the first frame renders them, later
 * ones allocate nothing at all between the overlay's pads; a new string
 * costs its render. */
GST_START_TEST (test_steady_state_allocates_nothing)
{
  if (!hy_alloc_can_count ())
    return;
  GstHarness *h = overlay_new ("");
  GstElement *o = h->element;
  GstPad *sink = gst_element_get_static_pad (o, "sink");
  GstPad *src = gst_element_get_static_pad (o, "src");
  gint count = 0;
  gst_pad_add_probe (sink, GST_PAD_PROBE_TYPE_BUFFER, count_from_here, NULL,
      NULL);
  gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER, count_to_here, &count,
      NULL);
  for (int i = 0; i < 6; i++) {
    GstBuffer *in = frame_new ("RGB", RW, RH, pick_white, i);
    GstVideoRegionOfInterestMeta *roi = add_roi (in, "car", 10, 40, 100, 40,
        0.91);
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("hybridinfer", "label", G_TYPE_STRING, "red",
            "score", G_TYPE_FLOAT, 0.88f, NULL));
    add_roi (in, "person", 150, 40, 100, 40, i == 5 ? 0.5 : 0.75);
    count = 0;
    gst_buffer_unref (gst_harness_push_and_pull (h, in));
    if (i == 0 || i == 5)
      fail_unless (count > 0, "frame %d: a new label, no render?", i);
    else
      fail_unless_equals_int (count, 0);
  }
  gst_object_unref (sink);
  gst_object_unref (src);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A segmentation's class map, painted at half opacity in VOC's colours
 * (1 red (128, 0, 0), 2 green (0, 128, 0), 3 blue (128, 128, 0)): each
 * quadrant of the "segment" model's answer, the background left alone. */
GST_START_TEST (test_class_map)
{
  gchar *m = model_path ("segment"), *l = labels_path ("segment");
  gchar *desc = g_strdup_printf ("hybridinfer model=%s labels=%s device=cpu "
      "input-size=32x24 output=segmentation ! hybridoverlay name=o "
      "map-alpha=0.5", m, l);
  GstHarness *h = gst_harness_new_parse (desc);
  set_caps (h, "RGB", W, H);
  GstBuffer *out = gst_harness_push_and_pull (h,
      frame_new ("RGB", W, H, pick_quadrants, 0));
  /* mixed as (frame * 127 + class colour * 128 + 127) / 255 */
  fail_unless (is_colour (pixel_at (out, "RGB", 10, 10), 191, 0, 0));
  fail_unless (is_colour (pixel_at (out, "RGB", W - 10, 10), 0, 191, 0));
  fail_unless (is_colour (pixel_at (out, "RGB", 10, H - 10), 64, 64, 127));
  fail_unless (is_colour (pixel_at (out, "RGB", W - 10, H - 10), 0, 0, 0));
  gst_buffer_unref (out);
  /* draw-map=false: the frame as it came */
  GstElement *o = gst_bin_get_by_name (GST_BIN (h->element), "o");
  g_object_set (o, "draw-map", FALSE, NULL);
  out = gst_harness_push_and_pull (h, frame_new ("RGB", W, H, pick_quadrants,
          1));
  fail_unless (is_colour (pixel_at (out, "RGB", 10, 10), 255, 0, 0));
  gst_buffer_unref (out);
  /* no background: the black quadrant is painted too (class 0: black) */
  g_object_set (o, "draw-map", TRUE, "map-background", -1, "map-alpha", 1.0,
      NULL);
  out = gst_harness_push_and_pull (h, frame_new ("RGB", W, H, pick_quadrants,
          2));
  fail_unless (is_colour (pixel_at (out, "RGB", 10, 10), 128, 0, 0));
  fail_unless (is_colour (pixel_at (out, "RGB", W - 10, H - 10), 0, 0, 0));
  gst_buffer_unref (out);
  gst_object_unref (o);
  gst_harness_teardown (h);
  g_free (desc);
  g_free (m);
  g_free (l);
}

GST_END_TEST;

/* Keypoints of a pose result: a square in the box colour on each. */
GST_START_TEST (test_keypoints)
{
  gchar *m = model_path ("spots"), *l = labels_path ("spots");
  gchar *desc = g_strdup_printf ("hybridinfer model=%s labels=%s device=cpu "
      "input-size=%dx%d output=pose ! hybridoverlay line-width=2", m, l, W,
      H);
  GstHarness *h = gst_harness_new_parse (desc);
  set_caps (h, "RGB", W, H);
  /* one red square at (20, 30): keypoint 0 there, the others score 0 */
  GstBuffer *in = frame_new ("RGB", W, H, pick_red, 0);
  gst_buffer_memset (in, 0, 0, gst_buffer_get_size (in));
  GstMapInfo map;
  gst_buffer_map (in, &map, GST_MAP_WRITE);
  for (int y = 30; y < 38; y++)
    for (int x = 20; x < 28; x++)
      map.data[(y * W + x) * 3] = 255;
  gst_buffer_unmap (in, &map);
  GstBuffer *out = gst_harness_push_and_pull (h, in);
  fail_unless (is_colour (pixel_at (out, "RGB", 20, 30), 0, 255, 0));
  fail_unless (is_colour (pixel_at (out, "RGB", 26, 36), 255, 0, 0));
  /* below the threshold (score 0): not drawn at the corner */
  fail_unless (is_colour (pixel_at (out, "RGB", 0, 0), 0, 0, 0));
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  g_free (desc);
  g_free (m);
  g_free (l);
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
  tcase_add_test (tc, test_secondary_label);
  tcase_add_test (tc, test_label_at_right_edge);
  tcase_add_test (tc, test_descenders);
  tcase_add_test (tc, test_font_desc_size);
  tcase_add_test (tc, test_steady_state_allocates_nothing);
  tcase_add_test (tc, test_class_map);
  tcase_add_test (tc, test_keypoints);
  return s;
}

GST_CHECK_MAIN (hybridoverlay);
