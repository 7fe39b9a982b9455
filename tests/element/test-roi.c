/*
 * test-roi.c — secondary inference on regions of interest
 * (inference-region=roi, gst-plugin/infer-roi.h).
 *
 * Frames of four coloured quadrants (red, green, blue, black) with one
 * region of interest per quadrant: the "colors" classifier, run on each
 * region's crop, must name that quadrant's colour in the "hybridinfer"
 * parameter it adds to the region's meta — in packed RGB and in I420 and
 * NV12 (whose crops start on even pixels), batched or not, and only for
 * the region types object-class names.  Then behind the "quadrants"
 * detector, as a user chains them: each detected box is classified as
 * the colour the detector named it.
 */
#include "element-util.h"

#include <math.h>

/* A frame of pick's colours in `format` (packed RGB, or BT.601 I420 or
 * NV12 from the same colours). */
static GstBuffer *
any_frame_new (const gchar * format, int w, int h, pixel_func pick)
{
  GstVideoFormat f = gst_video_format_from_string (format);
  if (f != GST_VIDEO_FORMAT_I420 && f != GST_VIDEO_FORMAT_NV12)
    return frame_new (format, w, h, pick, 0);
  GstVideoInfo info;
  GstVideoFrame frame;
  fail_unless (gst_video_info_set_format (&info, f, w, h));
  GstBuffer *buf = gst_buffer_new_allocate (NULL, info.size, NULL);
  fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_WRITE));
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      rgb8 c = pick (x, y, w, h);
      double yy = 16 + (0.299 * c.r + 0.587 * c.g + 0.114 * c.b) * 219 / 255;
      double u = 128 + (-0.168736 * c.r - 0.331264 * c.g + 0.5 * c.b)
          * 224 / 255;
      double v = 128 + (0.5 * c.r - 0.418688 * c.g - 0.081312 * c.b)
          * 224 / 255;
      guint8 *py = GST_VIDEO_FRAME_PLANE_DATA (&frame, 0);
      py[y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0) + x] = (guint8) yy;
      if (x % 2 || y % 2)
        continue;
      if (f == GST_VIDEO_FORMAT_I420) {
        guint8 *pu = GST_VIDEO_FRAME_PLANE_DATA (&frame, 1);
        guint8 *pv = GST_VIDEO_FRAME_PLANE_DATA (&frame, 2);
        pu[y / 2 * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 1) + x / 2] =
            (guint8) u;
        pv[y / 2 * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 2) + x / 2] =
            (guint8) v;
      } else {
        guint8 *puv = GST_VIDEO_FRAME_PLANE_DATA (&frame, 1);
        guint8 *p = puv + y / 2 * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 1) + x;
        p[0] = (guint8) u;
        p[1] = (guint8) v;
      }
    }
  gst_video_frame_unmap (&frame);
  return buf;
}

static const gchar *quadrant_colour[] = { "red", "green", "blue", "black" };

/* One region per quadrant of a w x h frame, types "q0" … "q3" (odd
 * corners, so that 4:2:0 crops must round them). */
static void
add_quadrant_rois (GstBuffer * buf, int w, int h)
{
  for (int q = 0; q < 4; q++) {
    gchar *type = g_strdup_printf ("q%d", q);
    guint x = (q % 2) ? w / 2 + 3 : 3, y = (q / 2) ? h / 2 + 3 : 3;
    gst_buffer_add_video_region_of_interest_meta (buf, type, x, y,
        w / 2 - 6, h / 2 - 6);
    g_free (type);
  }
}

/* The label the classifier gave region type `type`, or NULL. */
static const gchar *
roi_label (GstBuffer * buf, const gchar * type)
{
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *m = (GstVideoRegionOfInterestMeta *) meta;
    if (m->roi_type != g_quark_from_string (type))
      continue;
    GstStructure *s = gst_video_region_of_interest_meta_get_param (m,
        "hybridinfer");
    return s ? gst_structure_get_string (s, "label") : NULL;
  }
  fail ("no region %s", type);
  return NULL;
}

static GstHarness *
roi_harness (const gchar * format, int w, int h, guint batch,
    const gchar * classes)
{
  GstElement *e = infer_new ("colors");
  g_object_set (e, "input-size", "32x32", "batch-size", batch, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "inference-region", "roi");
  if (classes)
    g_object_set (e, "object-class", classes, NULL);
  GstHarness *hn = harness_for (e, NULL);
  set_caps (hn, format, w, h);
  return hn;
}

GST_START_TEST (test_roi_each_region)
{
  static const gchar *formats[] = { "RGB", "BGRx", "I420", "NV12" };
  static const guint batches[] = { 1, 3, 4 };
  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    for (guint b = 0; b < G_N_ELEMENTS (batches); b++) {
      GstHarness *hn = roi_harness (formats[f], 96, 70, batches[b], NULL);
      for (int frame = 0; frame < 2; frame++) {
        GstBuffer *in = any_frame_new (formats[f], 96, 70, pick_quadrants);
        add_quadrant_rois (in, 96, 70);
        GstBuffer *out = gst_harness_push_and_pull (hn, in);
        for (int q = 0; q < 4; q++) {
          gchar *type = g_strdup_printf ("q%d", q);
          const gchar *label = roi_label (out, type);
          fail_unless (label != NULL, "%s batch %u: %s has no result",
              formats[f], batches[b], type);
          fail_unless_equals_string (label, quadrant_colour[q]);
          g_free (type);
        }
        /* the frame itself carries no full-frame result */
        fail_unless (gst_buffer_get_hybrid_tensor_meta (out) == NULL);
        gst_buffer_unref (out);
      }
      guint64 inferred;
      g_object_get (hn->element, "frames-inferred", &inferred, NULL);
      fail_unless_equals_uint64 (inferred, 2);
      gst_harness_teardown (hn);
    }
}

GST_END_TEST;

GST_START_TEST (test_roi_object_class)
{
  GstHarness *hn = roi_harness ("RGB", 96, 70, 2, "q1, q3");
  GstBuffer *in = frame_new ("RGB", 96, 70, pick_quadrants, 0);
  add_quadrant_rois (in, 96, 70);
  GstBuffer *out = gst_harness_push_and_pull (hn, in);
  fail_unless (roi_label (out, "q0") == NULL);
  fail_unless_equals_string (roi_label (out, "q1"), "green");
  fail_unless (roi_label (out, "q2") == NULL);
  fail_unless_equals_string (roi_label (out, "q3"), "black");
  gst_buffer_unref (out);
  /* a frame with no region passes untouched, counted as not inferred */
  out = gst_harness_push_and_pull (hn, frame_new ("RGB", 96, 70, pick_red,
          1));
  fail_unless (gst_buffer_get_hybrid_tensor_meta (out) == NULL);
  gst_buffer_unref (out);
  guint64 inferred;
  g_object_get (hn->element, "frames-inferred", &inferred, NULL);
  fail_unless_equals_uint64 (inferred, 1);
  gst_harness_teardown (hn);
}

GST_END_TEST;

/* An object-class that takes no region is said once on the bus: at once
 * when a region's type differs from it only by case, else after
 * GST_HYBRID_ROI_CLASS_PATIENCE (100) frames with regions, naming the
 * types seen; one that takes a region is never said. */
static gchar *
class_warning (const gchar * classes, guint frames)
{
  GstBus *bus;
  GstElement *e = infer_new ("colors");
  g_object_set (e, "input-size", "32x32", "object-class", classes, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "inference-region", "roi");
  GstHarness *hn = harness_for (e, &bus);
  set_caps (hn, "RGB", 96, 70);
  gchar *text = NULL;
  guint warnings = 0;
  for (guint i = 0; i < frames; i++) {
    GstBuffer *in = frame_new ("RGB", 96, 70, pick_quadrants, i);
    add_quadrant_rois (in, 96, 70);
    gst_buffer_unref (gst_harness_push_and_pull (hn, in));
    GstMessage *msg;
    while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING))) {
      GError *err = NULL;
      gst_message_parse_warning (msg, &err, NULL);
      if (!text)
        text = g_strdup_printf ("%u: %s", i, err->message);
      warnings++;
      g_error_free (err);
      gst_message_unref (msg);
    }
  }
  fail_unless (warnings <= 1, "%u warnings: %s", warnings, text);
  teardown_with_bus (hn, bus);
  return text;
}

GST_START_TEST (test_roi_object_class_unmatched)
{
  /* case: on the first frame */
  gchar *w = class_warning ("Q1", 3);
  fail_unless (w && g_str_has_prefix (w, "0: ") && strstr (w, "'Q1'")
      && strstr (w, "'q1'") && strstr (w, "case differs"), "%s", w);
  g_free (w);
  /* no such type: after 100 frames, not before, naming the types seen */
  w = class_warning ("person", 99);
  fail_unless (w == NULL, "%s", w);
  w = class_warning ("person", 101);
  fail_unless (w && g_str_has_prefix (w, "99: ") && strstr (w, "'person'")
      && strstr (w, "'q0', 'q1', 'q2', 'q3'"), "%s", w);
  g_free (w);
  /* a class that takes regions: nothing */
  w = class_warning ("person,q2", 101);
  fail_unless (w == NULL, "%s", w);
}

GST_END_TEST;

/* A region partly or wholly outside the frame: clamped, or skipped. */
GST_START_TEST (test_roi_outside_frame)
{
  GstHarness *hn = roi_harness ("I420", 64, 48, 1, NULL);
  GstBuffer *in = any_frame_new ("I420", 64, 48, pick_quadrants);
  gst_buffer_add_video_region_of_interest_meta (in, "edge", 33, 1, 1000,
      20);
  gst_buffer_add_video_region_of_interest_meta (in, "gone", 500, 500, 10,
      10);
  GstBuffer *out = gst_harness_push_and_pull (hn, in);
  fail_unless_equals_string (roi_label (out, "edge"), "green");
  fail_unless (roi_label (out, "gone") == NULL);
  gst_buffer_unref (out);
  gst_harness_teardown (hn);
}

GST_END_TEST;

/* Detector, then classifier on its boxes: each box gets the colour the
 * detector named it. */
GST_START_TEST (test_roi_behind_detector)
{
  gchar *det = model_path ("quadrants"), *det_labels =
      labels_path ("quadrants");
  gchar *cls = model_path ("colors"), *cls_labels = labels_path ("colors");
  gchar *launch = g_strdup_printf ("hybridinfer model=%s labels=%s "
      "device=cpu input-size=64x64 threshold=0.6 ! hybridinfer model=%s "
      "labels=%s device=cpu input-size=32x32 inference-region=roi "
      "batch-size=2", det, det_labels, cls, cls_labels);
  GstHarness *hn = gst_harness_new_parse (launch);
  set_caps (hn, "RGBA", 128, 96);
  GstBuffer *out = gst_harness_push_and_pull (hn,
      frame_new ("RGBA", 128, 96, pick_quadrants, 0));
  gpointer state = NULL;
  GstMeta *meta;
  guint n = 0;
  while ((meta = gst_buffer_iterate_meta_filtered (out, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *m = (GstVideoRegionOfInterestMeta *) meta;
    GstStructure *s = gst_video_region_of_interest_meta_get_param (m,
        "hybridinfer");
    fail_unless (s != NULL, "box %u was not classified", n);
    fail_unless_equals_string (gst_structure_get_string (s, "label"),
        g_quark_to_string (m->roi_type));
    /* the detector's own parameter is still there */
    fail_unless (gst_video_region_of_interest_meta_get_param (m,
            "detection") != NULL);
    n++;
  }
  fail_unless_equals_int (n, 3);
  gst_buffer_unref (out);
  gst_harness_teardown (hn);
  g_free (launch);
  g_free (det);
  g_free (det_labels);
  g_free (cls);
  g_free (cls_labels);
}

GST_END_TEST;

/* A reload swaps the model under the regions: their crop plans and slots
 * are made again for the new input.  The colors model runs at 224x224
 * (no input-size, no __shape__), colors-shaped at its own 32x32: crops
 * planned for the larger input wrote past the smaller one's (heap
 * corruption), and the other way round gave wrong results.  Each region
 * must keep its colour through swaps both ways, batched and not. */
GST_START_TEST (test_roi_reload_other_input_size)
{
  static const guint batches[] = { 1, 3 };
  gchar *big = model_path ("colors"), *small = model_path ("colors-shaped");
  for (guint b = 0; b < G_N_ELEMENTS (batches); b++) {
    GstElement *e = infer_new ("colors");
    g_object_set (e, "batch-size", batches[b], NULL);
    gst_util_set_object_arg (G_OBJECT (e), "inference-region", "roi");
    GstBus *bus;
    GstHarness *hn = harness_for (e, &bus);
    set_caps (hn, "I420", 96, 70);
    for (guint swap = 0; swap < 5; swap++) {
      for (int frame = 0; frame < 2; frame++) {
        GstBuffer *in = any_frame_new ("I420", 96, 70, pick_quadrants);
        add_quadrant_rois (in, 96, 70);
        GstBuffer *out = gst_harness_push_and_pull (hn, in);
        for (int q = 0; q < 4; q++) {
          gchar *type = g_strdup_printf ("q%d", q);
          const gchar *label = roi_label (out, type);
          fail_unless (label != NULL, "batch %u swap %u: %s has no result",
              batches[b], swap, type);
          fail_unless_equals_string (label, quadrant_colour[q]);
          g_free (type);
        }
        gst_buffer_unref (out);
      }
      if (swap == 4)
        break;
      const gchar *next = swap % 2 ? big : small;
      g_object_set (hn->element, "model", next, NULL);
      gchar *model = NULL, *text = NULL;
      fail_unless (wait_reload (bus, &model, &text), "%s", text);
      fail_unless_equals_string (model, next);
      g_free (model);
      /* the per-frame result messages are not looked at here */
      count_messages (bus, GST_MESSAGE_ELEMENT);
    }
    teardown_with_bus (hn, bus);
  }
  g_free (big);
  g_free (small);
}

GST_END_TEST;

/* A region of no width or no height is skipped in every format: in 4:2:0
 * its corner used to be rounded down first, which gave it a pixel of its
 * neighbour's and a result. */
GST_START_TEST (test_roi_empty_regions_skipped)
{
  static const gchar *formats[] = { "RGB", "I420", "NV12" };
  for (guint f = 0; f < G_N_ELEMENTS (formats); f++) {
    GstHarness *hn = roi_harness (formats[f], 64, 48, 1, NULL);
    GstBuffer *in = any_frame_new (formats[f], 64, 48, pick_quadrants);
    gst_buffer_add_video_region_of_interest_meta (in, "no-width", 33, 5, 0,
        10);
    gst_buffer_add_video_region_of_interest_meta (in, "no-height", 5, 27,
        10, 0);
    GstBuffer *out = gst_harness_push_and_pull (hn, in);
    fail_unless (roi_label (out, "no-width") == NULL, "%s", formats[f]);
    fail_unless (roi_label (out, "no-height") == NULL, "%s", formats[f]);
    gst_buffer_unref (out);
    guint64 inferred;
    g_object_get (hn->element, "frames-inferred", &inferred, NULL);
    fail_unless_equals_uint64 (inferred, 0);
    gst_harness_teardown (hn);
  }
}

GST_END_TEST;

/* The C accessors (libgsthybridmeta: the typelib's) read each region's
 * secondary result by index, the same structure as the meta's parameter;
 * a region no model ran on has none.  post-messages posts the frame's
 * regions: one message of type "regions" with their JSON objects. */
GST_START_TEST (test_roi_accessors_and_messages)
{
  GstBus *bus;
  GstElement *e = infer_new ("colors");
  g_object_set (e, "input-size", "32x32", "object-class", "q0,q1,q2",
      "post-messages", TRUE, "message-json", TRUE, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "inference-region", "roi");
  GstHarness *hn = harness_for (e, &bus);
  set_caps (hn, "RGB", 96, 70);
  GstBuffer *in = any_frame_new ("RGB", 96, 70, pick_quadrants);
  add_quadrant_rois (in, 96, 70);
  GstBuffer *out = gst_harness_push_and_pull (hn, in);

  fail_unless_equals_int (gst_buffer_get_n_hybrid_regions (out), 4);
  for (guint q = 0; q < 3; q++) {
    gchar *type = g_strdup_printf ("q%u", q);
    gfloat score = -1;
    const gchar *label = gst_buffer_get_hybrid_region_label (out, q, &score);
    fail_unless (label != NULL, "region %u has no label", q);
    fail_unless_equals_string (label, roi_label (out, type));
    fail_unless_equals_string (label, quadrant_colour[q]);
    const GstStructure *s = gst_buffer_get_hybrid_region_result (out, q);
    const GValue *v = gst_structure_get_value (s, "score");
    fail_unless (v && G_VALUE_HOLDS_FLOAT (v));
    fail_unless_equals_float (score, g_value_get_float (v));
    g_free (type);
  }
  /* q3 is not of object-class; past the last region there is none */
  gfloat score = 0;
  fail_unless (gst_buffer_get_hybrid_region_result (out, 3) == NULL);
  fail_unless (gst_buffer_get_hybrid_region_label (out, 3, &score) == NULL);
  fail_unless (isnan (score));
  fail_unless (gst_buffer_get_hybrid_region_result (out, 4) == NULL);

  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
  fail_unless (msg != NULL, "no message for the frame's regions");
  const GstStructure *ms = gst_message_get_structure (msg);
  fail_unless (gst_structure_has_name (ms, "hybridinfer"));
  fail_unless_equals_string (gst_structure_get_string (ms, "type"),
      "regions");
  gint count = 0;
  fail_unless (gst_structure_get_int (ms, "count", &count));
  fail_unless_equals_int (count, 3);
  const gchar *json = gst_structure_get_string (ms, "json");
  fail_unless (json != NULL);
  for (guint q = 0; q < 3; q++) {
    gchar *want = g_strdup_printf ("\"secondary\":{\"type\":"
        "\"classification\",\"label\":\"%s\"", quadrant_colour[q]);
    fail_unless (strstr (json, want) != NULL, "%s not in %s", want, json);
    g_free (want);
  }
  fail_unless (strstr (json, "\"label\":\"q3\"") != NULL
      && strstr (json, "\"secondary\":null") != NULL, "%s", json);
  gst_message_unref (msg);
  gst_buffer_unref (out);
  teardown_with_bus (hn, bus);
}

GST_END_TEST;

/* Two streams, each a quadrants detector and the colors classifier on its
 * boxes, the classifiers on one shared engine (batch-size 2): crops of
 * both streams share its batches, and every box of every frame gets the
 * label of its own crop, as on an element's own model. */
#define SHARED_STREAMS 2
#define SHARED_FRAMES 4

typedef struct {
  GstHarness *h;
  guint classified, boxes;
  gchar *wrong;
} SharedStream;

static gpointer
shared_stream_run (gpointer data)
{
  SharedStream *st = data;
  for (guint f = 0; f < SHARED_FRAMES; f++) {
    GstBuffer *out = gst_harness_push_and_pull (st->h,
        frame_new ("RGBA", 128, 96, pick_quadrants, f));
    gpointer state = NULL;
    GstMeta *meta;
    while ((meta = gst_buffer_iterate_meta_filtered (out, &state,
                GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
      GstVideoRegionOfInterestMeta *m = (GstVideoRegionOfInterestMeta *) meta;
      GstStructure *s = gst_video_region_of_interest_meta_get_param (m,
          "hybridinfer");
      st->boxes++;
      if (!s)
        continue;
      st->classified++;
      if (!st->wrong && g_strcmp0 (gst_structure_get_string (s, "label"),
              g_quark_to_string (m->roi_type)) != 0)
        st->wrong = g_strdup_printf ("frame %u: box %s labelled %s", f,
            g_quark_to_string (m->roi_type),
            gst_structure_get_string (s, "label"));
    }
    gst_buffer_unref (out);
  }
  return NULL;
}

GST_START_TEST (test_roi_shared_engine)
{
  gchar *det = model_path ("quadrants"), *det_labels =
      labels_path ("quadrants");
  gchar *cls = model_path ("colors"), *cls_labels = labels_path ("colors");
  gchar *launch = g_strdup_printf ("hybridinfer model=%s labels=%s "
      "device=cpu input-size=64x64 threshold=0.6 ! hybridinfer model=%s "
      "labels=%s device=cpu input-size=32x32 inference-region=roi "
      "shared-engine=roi-shared batch-size=2", det, det_labels, cls,
      cls_labels);
  SharedStream streams[SHARED_STREAMS] = { 0 };
  GThread *threads[SHARED_STREAMS];
  for (guint i = 0; i < SHARED_STREAMS; i++) {
    streams[i].h = gst_harness_new_parse (launch);
    set_caps (streams[i].h, "RGBA", 128, 96);
  }
  for (guint i = 0; i < SHARED_STREAMS; i++)
    threads[i] = g_thread_new ("stream", shared_stream_run, &streams[i]);
  for (guint i = 0; i < SHARED_STREAMS; i++) {
    g_thread_join (threads[i]);
    fail_unless (streams[i].wrong == NULL, "stream %u: %s", i,
        streams[i].wrong);
    /* the detector's three coloured quadrants on every frame */
    fail_unless_equals_int (streams[i].boxes, 3 * SHARED_FRAMES);
    fail_unless_equals_int (streams[i].classified, 3 * SHARED_FRAMES);
    guint64 inferred;
    GstElement *cls_element = NULL;
    GstIterator *it = gst_bin_iterate_elements (GST_BIN (streams[i].h->element));
    GValue v = G_VALUE_INIT;
    while (gst_iterator_next (it, &v) == GST_ITERATOR_OK) {
      GstElement *e = g_value_get_object (&v);
      gchar *region = NULL;
      g_object_get (e, "shared-engine", &region, NULL);
      if (region)
        cls_element = e;
      g_free (region);
      if (cls_element) {
        g_object_get (cls_element, "frames-inferred", &inferred, NULL);
        fail_unless_equals_uint64 (inferred, SHARED_FRAMES);
      }
      g_value_reset (&v);
      cls_element = NULL;
    }
    g_value_unset (&v);
    gst_iterator_free (it);
  }
  for (guint i = 0; i < SHARED_STREAMS; i++)
    gst_harness_teardown (streams[i].h);
  g_free (launch);
  g_free (det);
  g_free (det_labels);
  g_free (cls);
  g_free (cls_labels);
}

GST_END_TEST;

/* skip-when-busy would carry a region's result to the boxes of a later
 * frame: refused at start with that reason. */
GST_START_TEST (test_roi_skip_when_busy_refused)
{
  GstElement *e = infer_new ("colors");
  g_object_set (e, "input-size", "32x32", "skip-when-busy", TRUE, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "inference-region", "roi");
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  GError *err = NULL;
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, "cannot skip-when-busy") != NULL
      && strstr (err->message, "later one") != NULL, "%s", err->message);
  g_error_free (err);
  gst_message_unref (msg);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  gst_object_unref (e);
}

GST_END_TEST;

static Suite *
roi_suite (void)
{
  Suite *s = suite_create ("hybridinfer-roi");
  TCase *tc = tcase_create ("roi");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_roi_each_region);
  tcase_add_test (tc, test_roi_object_class);
  tcase_add_test (tc, test_roi_object_class_unmatched);
  tcase_add_test (tc, test_roi_outside_frame);
  tcase_add_test (tc, test_roi_behind_detector);
  tcase_add_test (tc, test_roi_reload_other_input_size);
  tcase_add_test (tc, test_roi_empty_regions_skipped);
  tcase_add_test (tc, test_roi_accessors_and_messages);
  tcase_add_test (tc, test_roi_shared_engine);
  tcase_add_test (tc, test_roi_skip_when_busy_refused);
  return s;
}

GST_CHECK_MAIN (roi);
