/*
 * test-hybridtrack.c — hybridtrack and hybridpublish as elements: their
 * properties, the regions they rewrite on new and carried results (a
 * result carried as hybridinfer's interval carries it), a flush, the
 * JSON lines with their errors, and hybridoverlay's label of a tracked
 * region.
 */
#include <math.h>
#include <string.h>

#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/hybrid/hybridmeta.h>
#include <gst/video/video.h>
#include <json-glib/json-glib.h>

#define FRAME_CAPS "video/x-raw,format=GRAY8,width=320,height=240,framerate=30/1"

/* A buffer carrying one result: frame `result_frame`'s, inferred or
 * carried, with one region per box (x, y, w, h) of class 0. */
static GstBuffer *
frame_with_boxes (guint64 result_frame, gboolean inferred, const guint * boxes,
    guint n_boxes)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 1, NULL);
  gst_buffer_add_hybrid_tensor_meta_full (buf, result_frame, inferred, 0,
      NULL, NULL, NULL, NULL, NULL);
  for (guint i = 0; i < n_boxes; i++) {
    const guint *b = boxes + 4 * i;
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_add_video_region_of_interest_meta (buf, "ball", b[0], b[1],
        b[2], b[3]);
    roi->id = (gint) i;
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("detection", "label", G_TYPE_STRING, "ball",
            "class-id", G_TYPE_INT, 0, "confidence", G_TYPE_DOUBLE, 0.9,
            NULL));
  }
  return buf;
}

static GstVideoRegionOfInterestMeta *
first_roi (GstBuffer * buf)
{
  return (GstVideoRegionOfInterestMeta *) gst_buffer_get_meta (buf,
      GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE);
}

static gboolean
roi_tracking (GstVideoRegionOfInterestMeta * roi, guint * id,
    gboolean * predicted)
{
  GstStructure *s = gst_video_region_of_interest_meta_get_param (roi,
      "tracking");
  return s && gst_structure_get (s, "track-id", G_TYPE_UINT, id,
      "predicted", G_TYPE_BOOLEAN, predicted, NULL);
}

GST_START_TEST (test_properties)
{
  GstElement *e = gst_element_factory_make ("hybridtrack", NULL);
  guint min_hits, max_age;
  gfloat iou;
  gboolean predict;
  guint64 started;
  g_object_get (e, "min-hits", &min_hits, "max-age", &max_age,
      "iou-threshold", &iou, "predict", &predict, "tracks-started", &started,
      NULL);
  fail_unless_equals_int (min_hits, 3);
  fail_unless_equals_int (max_age, 30);
  fail_unless_equals_float (iou, 0.3f);
  fail_unless (predict);
  fail_unless_equals_uint64 (started, 0);
  g_object_set (e, "min-hits", 1, "max-age", 0, "iou-threshold", 1.0f,
      "predict", FALSE, NULL);
  g_object_get (e, "min-hits", &min_hits, "max-age", &max_age,
      "iou-threshold", &iou, "predict", &predict, NULL);
  fail_unless_equals_int (min_hits, 1);
  fail_unless_equals_int (max_age, 0);
  fail_unless_equals_float (iou, 1.0f);
  fail_unless (!predict);
  /* the ranges GObject refuses values outside of */
  GParamSpecUInt *hits = G_PARAM_SPEC_UINT (g_object_class_find_property
      (G_OBJECT_GET_CLASS (e), "min-hits"));
  fail_unless_equals_int (hits->minimum, 1);
  GParamSpecFloat *thr = G_PARAM_SPEC_FLOAT (g_object_class_find_property
      (G_OBJECT_GET_CLASS (e), "iou-threshold"));
  fail_unless (thr->minimum > 0.0f && thr->maximum == 1.0f);
  gst_object_unref (e);
}

GST_END_TEST;

/* A box moving 3 pixels a frame, detected every third frame: the frames
 * between carry the last result's box, which hybridtrack moves to the
 * prediction once the track is confirmed (three results). */
static void
run_interval (gboolean predict)
{
  GstHarness *h = gst_harness_new ("hybridtrack");
  g_object_set (h->element, "predict", predict, NULL);
  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  guint carried[4] = { 0 };
  for (guint f = 0; f < 30; f++) {
    guint truth_x = 10 + 3 * f;
    gboolean inferred = f % 3 == 0;
    if (inferred) {
      carried[0] = truth_x;
      carried[1] = 100;
      carried[2] = 30;
      carried[3] = 30;
    }
    GstBuffer *out = gst_harness_push_and_pull (h,
        frame_with_boxes (f - f % 3, inferred, carried, 1));
    GstVideoRegionOfInterestMeta *roi = first_roi (out);
    guint id = 0;
    gboolean predicted = FALSE;
    gboolean tracked = roi_tracking (roi, &id, &predicted);
    if (f < 6) {
      /* not confirmed yet */
      fail_unless (!tracked);
      fail_unless_equals_int (roi->id, -1);
    } else {
      fail_unless (tracked);
      fail_unless_equals_int (id, 1);
      fail_unless_equals_int (roi->id, 1);
      fail_unless_equals_int (predicted, predict && !inferred);
    }
    if (inferred || f < 6 || !predict) {
      fail_unless_equals_int (roi->x, carried[0]);
    } else if (f >= 12) {
      /* the filter has the speed by then */
      fail_unless (abs ((gint) roi->x - (gint) truth_x) <= 2,
          "frame %u: x %u, the object at %u", f, roi->x, truth_x);
      fail_unless (abs ((gint) roi->w - 30) <= 1);
    }
    gst_buffer_unref (out);
  }
  guint64 started;
  g_object_get (h->element, "tracks-started", &started, NULL);
  fail_unless_equals_uint64 (started, 1);
  gst_harness_teardown (h);
}

GST_START_TEST (test_carried_results_predicted)
{
  run_interval (TRUE);
}

GST_END_TEST;

GST_START_TEST (test_carried_results_left)
{
  run_interval (FALSE);
}

GST_END_TEST;

/* After a flush the old tracks are gone and a new object gets a new id:
 * ids are never reused in a stream. */
GST_START_TEST (test_flush_forgets_tracks)
{
  GstHarness *h = gst_harness_new ("hybridtrack");
  g_object_set (h->element, "min-hits", 1, NULL);
  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  guint box[4] = { 50, 50, 40, 40 };
  GstBuffer *out = gst_harness_push_and_pull (h, frame_with_boxes (0, TRUE,
          box, 1));
  fail_unless_equals_int (first_roi (out)->id, 1);
  gst_buffer_unref (out);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  out = gst_harness_push_and_pull (h, frame_with_boxes (100, TRUE, box, 1));
  fail_unless_equals_int (first_roi (out)->id, 2);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Regions without a tensor meta (another element's): every frame is a
 * new result, and the class is the region's type. */
GST_START_TEST (test_regions_of_any_element)
{
  GstHarness *h = gst_harness_new ("hybridtrack");
  g_object_set (h->element, "min-hits", 2, NULL);
  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  for (guint f = 0; f < 5; f++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, 1, NULL);
    gst_buffer_add_video_region_of_interest_meta (buf, "face", 20 + f, 20,
        50, 50);
    gst_buffer_add_video_region_of_interest_meta (buf, "plate", 20 + f, 20,
        50, 50);
    GstBuffer *out = gst_harness_push_and_pull (h, buf);
    gpointer state = NULL;
    GstMeta *m;
    gint ids[2], n = 0;
    while ((m = gst_buffer_iterate_meta_filtered (out, &state,
                GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)))
      ids[n++] = ((GstVideoRegionOfInterestMeta *) m)->id;
    fail_unless_equals_int (n, 2);
    if (f == 0) {
      fail_unless_equals_int (ids[0], -1);
    } else {
      /* same place, two types: two tracks */
      fail_unless (ids[0] > 0 && ids[1] > 0 && ids[0] != ids[1]);
    }
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Boxes no detector should give (empty, at the far end of the
 * coordinates, past the frame): tracked or not, never a crash, and a
 * predicted box stays inside the frame. */
GST_START_TEST (test_degenerate_boxes)
{
  GstHarness *h = gst_harness_new ("hybridtrack");
  g_object_set (h->element, "min-hits", 1, NULL);
  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  guint boxes[16] = {
    0, 0, 0, 0,
    G_MAXUINT - 10, G_MAXUINT - 10, 10, 10,
    300, 230, 100, 100,
    5, 5, 1, 1,
  };
  guint n_predicted = 0;
  for (guint f = 0; f < 12; f++) {
    /* the box past the corner moves on: its prediction leaves the frame */
    boxes[8] = 300 + 5 * (f - f % 3);
    GstBuffer *out = gst_harness_push_and_pull (h,
        frame_with_boxes (f - f % 3, f % 3 == 0, boxes, 4));
    gpointer state = NULL;
    GstMeta *m;
    guint n = 0;
    while ((m = gst_buffer_iterate_meta_filtered (out, &state,
                GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
      GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) m;
      guint id;
      gboolean predicted;
      if (roi_tracking (roi, &id, &predicted) && predicted) {
        n_predicted++;
        fail_unless (roi->w >= 1 && roi->h >= 1);
        fail_unless (roi->x + roi->w <= 320 && roi->y + roi->h <= 240,
            "predicted box %u,%u %ux%u past the frame", roi->x, roi->y,
            roi->w, roi->h);
      }
      n++;
    }
    fail_unless_equals_int (n, 4);
    gst_buffer_unref (out);
  }
  fail_unless (n_predicted > 0);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_publish_json_lines)
{
  gchar *dir = g_dir_make_tmp ("hybridpublish-XXXXXX", NULL);
  gchar *path = g_build_filename (dir, "results.jsonl", NULL);
  /* the harness plays at once: the location is set in the description */
  gchar *desc = g_strdup_printf ("hybridtrack min-hits=1 ! "
      "hybridpublish location=%s", path);
  GstHarness *h = gst_harness_new_parse (desc);
  g_free (desc);
  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  guint boxes[8] = { 10, 20, 30, 40, 200, 100, 20, 20 };
  for (guint f = 0; f < 3; f++) {
    GstBuffer *buf = frame_with_boxes (0, f == 0, boxes, 2);
    GST_BUFFER_PTS (buf) = f * 1000;
    gst_buffer_unref (gst_harness_push_and_pull (h, buf));
  }
  gst_harness_teardown (h);

  gchar *text = NULL;
  fail_unless (g_file_get_contents (path, &text, NULL, NULL));
  gchar **lines = g_strsplit (text, "\n", -1);
  fail_unless_equals_int (g_strv_length (lines), 4);   /* and the last "" */
  for (guint f = 0; f < 3; f++) {
    JsonParser *parser = json_parser_new ();
    fail_unless (json_parser_load_from_data (parser, lines[f], -1, NULL));
    JsonObject *o = json_node_get_object (json_parser_get_root (parser));
    fail_unless_equals_int (json_object_get_int_member (o, "frame"), f);
    fail_unless_equals_int (json_object_get_int_member (o, "timestamp"),
        f * 1000);
    fail_unless_equals_int (json_object_get_int_member (o, "result-frame"),
        0);
    fail_unless_equals_int (json_object_get_boolean_member (o, "inferred"),
        f == 0);
    JsonArray *objects = json_object_get_array_member (o, "objects");
    fail_unless_equals_int (json_array_get_length (objects), 2);
    for (guint i = 0; i < 2; i++) {
      JsonObject *obj = json_array_get_object_element (objects, i);
      fail_unless_equals_string (json_object_get_string_member (obj,
              "label"), "ball");
      fail_unless_equals_int (json_object_get_int_member (obj, "class-id"), 0);
      fail_unless_equals_float (json_object_get_double_member (obj, "score"),
          0.9);
      fail_unless_equals_int (json_object_get_int_member (obj, "track-id"),
          i + 1);
      fail_unless_equals_int (json_object_get_boolean_member (obj,
              "predicted"), f > 0);
      JsonArray *box = json_object_get_array_member (obj, "box");
      fail_unless_equals_int (json_array_get_length (box), 4);
      /* standing still: the prediction stays where the box was */
      fail_unless_equals_int (json_array_get_int_element (box, 0),
          boxes[4 * i]);
    }
    g_object_unref (parser);
  }
  g_strfreev (lines);
  g_free (text);
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
}

GST_END_TEST;

/* hybridoverlay's drawing of one region on a black 160x120 RGB frame. */
static GstBuffer *
overlay_region (const gchar * type, guint track_id)
{
  GstHarness *h = gst_harness_new ("hybridoverlay");
  gst_harness_set_src_caps_str (h,
      "video/x-raw,format=RGB,width=160,height=120,framerate=30/1");
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 160 * 120 * 3, NULL);
  gst_buffer_memset (buf, 0, 0, 160 * 120 * 3);
  GstVideoRegionOfInterestMeta *roi =
      gst_buffer_add_video_region_of_interest_meta (buf, type, 40, 50, 60, 40);
  if (track_id)
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("tracking", "track-id", G_TYPE_UINT, track_id,
            "predicted", G_TYPE_BOOLEAN, FALSE, NULL));
  GstBuffer *out = gst_harness_push_and_pull (h, buf);
  gst_harness_teardown (h);
  return out;
}

static gboolean
same_pixels (GstBuffer * a, GstBuffer * b)
{
  GstMapInfo ma, mb;
  fail_unless (gst_buffer_map (a, &ma, GST_MAP_READ));
  fail_unless (gst_buffer_map (b, &mb, GST_MAP_READ));
  gboolean same = ma.size == mb.size && !memcmp (ma.data, mb.data, ma.size);
  gst_buffer_unmap (a, &ma);
  gst_buffer_unmap (b, &mb);
  return same;
}

/* A tracked region's label is its type and "#id": drawn exactly as a
 * region whose type is written so, and unlike the bare type. */
GST_START_TEST (test_overlay_shows_track_id)
{
  GstBuffer *tracked = overlay_region ("ball", 7);
  GstBuffer *written = overlay_region ("ball #7", 0);
  GstBuffer *bare = overlay_region ("ball", 0);
  fail_unless (same_pixels (tracked, written));
  fail_unless (!same_pixels (tracked, bare));
  gst_buffer_unref (tracked);
  gst_buffer_unref (written);
  gst_buffer_unref (bare);
}

GST_END_TEST;

/* A pipeline that must fail to start: the error's text. */
static gchar *
start_error (const gchar * desc)
{
  GstElement *pipeline = gst_parse_launch (desc, NULL);
  fail_unless (pipeline != NULL);
  gst_element_set_state (pipeline, GST_STATE_PAUSED);
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
      GST_MESSAGE_ERROR | GST_MESSAGE_ASYNC_DONE);
  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR);
  GError *error = NULL;
  gchar *debug = NULL;
  gst_message_parse_error (msg, &error, &debug);
  gchar *text = g_strdup_printf ("%s | %s", error->message, debug);
  g_error_free (error);
  g_free (debug);
  gst_message_unref (msg);
  gst_object_unref (bus);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  return text;
}

GST_START_TEST (test_publish_errors)
{
  gchar *text = start_error ("videotestsrc ! hybridpublish ! fakesink");
  fail_unless (strstr (text, "none of location, mqtt-host, kafka-brokers"),
      "%s", text);
  g_free (text);
  text = start_error ("videotestsrc ! hybridpublish "
      "location=/nonexistent-dir/r.jsonl ! fakesink");
  fail_unless (strstr (text, "/nonexistent-dir/r.jsonl"), "%s", text);
  fail_unless (strstr (text, "No such file"), "%s", text);
  g_free (text);
}

GST_END_TEST;

/* Settings taken at start, set while playing: refused with a warning
 * naming the property, the running value kept (refuse-while-running.c). */
GST_START_TEST (test_publish_refuses_while_running)
{
  gchar *dir = g_dir_make_tmp ("hybridpublish-XXXXXX", NULL);
  gchar *path = g_build_filename (dir, "results.jsonl", NULL);
  gchar *desc = g_strdup_printf ("hybridpublish name=p location=%s", path);
  GstHarness *h = gst_harness_new_parse (desc);
  g_free (desc);
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (h->element, bus);
  gst_harness_set_src_caps_str (h, FRAME_CAPS);
  gst_buffer_unref (gst_harness_push_and_pull (h,
          frame_with_boxes (0, TRUE, NULL, 0)));
  GstElement *p = gst_bin_get_by_name (GST_BIN (h->element), "p");
  g_object_set (p, "location", "/nonexistent-dir/other.jsonl", NULL);
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL, "no warning for a change while playing");
  GError *err = NULL;
  gst_message_parse_warning (msg, &err, NULL);
  fail_unless (strstr (err->message, "location cannot change while the "
          "element runs") != NULL, "%s", err->message);
  g_error_free (err);
  gst_message_unref (msg);
  gchar *location = NULL;
  g_object_get (p, "location", &location, NULL);
  fail_unless_equals_string (location, path);
  g_free (location);
  gst_object_unref (p);
  gst_harness_teardown (h);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
}

GST_END_TEST;

static Suite *
hybridtrack_suite (void)
{
  Suite *s = suite_create ("hybridtrack");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_properties);
  tcase_add_test (tc, test_carried_results_predicted);
  tcase_add_test (tc, test_carried_results_left);
  tcase_add_test (tc, test_flush_forgets_tracks);
  tcase_add_test (tc, test_regions_of_any_element);
  tcase_add_test (tc, test_degenerate_boxes);
  tcase_add_test (tc, test_publish_json_lines);
  tcase_add_test (tc, test_publish_errors);
  tcase_add_test (tc, test_publish_refuses_while_running);
  tcase_add_test (tc, test_overlay_shows_track_id);
  return s;
}

GST_CHECK_MAIN (hybridtrack);
