/*
 * element-util.h — helpers shared by the element tests: where the test
 * models are, frames of known content, and reading results back.
 *
 * The models (tests/element/models, made by make_models.py with MXNet):
 * "colors" classifies a frame's mean colour into black, white, gray, red,
 * green, blue, yellow, cyan, magenta; "quadrants" reports, per image
 * quadrant, its dominant channel (red, green, blue) as a detection box.
 */
#ifndef HY_ELEMENT_UTIL_H
#define HY_ELEMENT_UTIL_H

#include <string.h>

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "gst-plugin/gsthybridmeta.h"

/* HY_HAS_ASAN: 1 under AddressSanitizer (gcc or clang), whose quarantine
 * holds freed memory, so heap figures mean nothing there. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HY_HAS_ASAN 1
#endif
#endif
#if !defined(HY_HAS_ASAN) && defined(__SANITIZE_ADDRESS__)
#define HY_HAS_ASAN 1
#endif
#ifndef HY_HAS_ASAN
#define HY_HAS_ASAN 0
#endif

static inline const gchar *
models_dir (void)
{
  const gchar *dir = g_getenv ("HY_ELEMENT_MODELS");
  fail_unless (dir != NULL, "HY_ELEMENT_MODELS is not set (run from meson)");
  return dir;
}

/* "<models>/<name>-symbol.json"; free with g_free. */
static inline gchar *
model_path (const gchar * name)
{
  gchar *file = g_strdup_printf ("%s-symbol.json", name);
  gchar *path = g_build_filename (models_dir (), file, NULL);
  g_free (file);
  return path;
}

static inline gchar *
labels_path (const gchar * name)
{
  gchar *file = g_strdup_printf ("%s.txt", name);
  gchar *path = g_build_filename (models_dir (), file, NULL);
  g_free (file);
  return path;
}

/* A hybridinfer on `model` (labels of the same name when they exist,
 * "colors" for "colors-shaped"), device=cpu so that no warning is posted
 * unless a test asks for one. */
static inline GstElement *
infer_new (const gchar * model)
{
  GstElement *e = gst_element_factory_make ("hybridinfer", NULL);
  fail_unless (e != NULL, "hybridinfer not found: check GST_PLUGIN_PATH");
  gchar *m = model_path (model);
  gchar *l = labels_path (g_str_has_prefix (model, "colors") ? "colors"
      : g_str_has_prefix (model, "quadrants") ? "quadrants" : model);
  g_object_set (e, "model", m, "device", "cpu", NULL);
  if (g_file_test (l, G_FILE_TEST_EXISTS))
    g_object_set (e, "labels", l, NULL);
  g_free (m);
  g_free (l);
  return e;
}

/* The harness takes a reference and starts the element; its messages go
 * to *bus (unless bus is NULL), a result message per inferred frame
 * included (post-messages, which is off by default). */
static inline GstHarness *
harness_for (GstElement * e, GstBus ** bus)
{
  if (bus) {
    *bus = gst_bus_new ();
    gst_element_set_bus (e, *bus);
    g_object_set (e, "post-messages", TRUE, NULL);
  }
  GstHarness *h = gst_harness_new_with_element (e, "sink", "src");
  gst_object_unref (e);
  return h;
}

/* Pending messages hold references on the element, which holds the bus:
 * flush them so that both go. */
static inline void
teardown_with_bus (GstHarness * h, GstBus * bus)
{
  gst_bus_set_flushing (bus, TRUE);
  gst_harness_teardown (h);
  gst_object_unref (bus);
}

typedef struct {
  guint8 r, g, b;
} rgb8;

/* Fills a packed-RGB frame: pixel colour from `pick` (x, y, w, h). */
typedef rgb8 (*pixel_func) (int x, int y, int w, int h);

static inline GstBuffer *
frame_new (const gchar * format, int w, int h, pixel_func pick,
    GstClockTime pts)
{
  GstVideoInfo info;
  GstVideoFrame frame;
  fail_unless (gst_video_info_set_format (&info,
          gst_video_format_from_string (format), w, h));
  GstBuffer *buf = gst_buffer_new_allocate (NULL, info.size, NULL);
  fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_WRITE));
  const GstVideoFormatInfo *fi = info.finfo;
  int bpp = GST_VIDEO_FORMAT_INFO_PSTRIDE (fi, 0);
  guint8 *data = GST_VIDEO_FRAME_PLANE_DATA (&frame, 0);
  int stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0);
  fail_unless (GST_VIDEO_FORMAT_INFO_IS_RGB (fi));
  memset (data, 0xff, (gsize) stride * h);      /* x / alpha bytes */
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      rgb8 c = pick (x, y, w, h);
      guint8 *p = data + y * stride + x * bpp;
      p[GST_VIDEO_FORMAT_INFO_POFFSET (fi, 0)] = c.r;
      p[GST_VIDEO_FORMAT_INFO_POFFSET (fi, 1)] = c.g;
      p[GST_VIDEO_FORMAT_INFO_POFFSET (fi, 2)] = c.b;
    }
  gst_video_frame_unmap (&frame);
  GST_BUFFER_PTS (buf) = pts;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  return buf;
}

static inline rgb8
pick_red (int x, int y, int w, int h)
{
  return (rgb8) {
  255, 0, 0};
}

static inline rgb8
pick_green (int x, int y, int w, int h)
{
  return (rgb8) {
  0, 255, 0};
}

static inline rgb8
pick_blue (int x, int y, int w, int h)
{
  return (rgb8) {
  0, 0, 255};
}

static inline rgb8
pick_white (int x, int y, int w, int h)
{
  return (rgb8) {
  255, 255, 255};
}

/* Top-left red, top-right green, bottom-left blue, bottom-right black. */
static inline rgb8
pick_quadrants (int x, int y, int w, int h)
{
  gboolean right = x >= w / 2, bottom = y >= h / 2;
  if (!bottom)
    return right ? (rgb8) {
    0, 255, 0} : (rgb8) {
    255, 0, 0};
  return right ? (rgb8) {
  0, 0, 0} : (rgb8) {
  0, 0, 255};
}

static inline gchar *
caps_string (const gchar * format, int w, int h)
{
  return g_strdup_printf ("video/x-raw,format=%s,width=%d,height=%d,"
      "framerate=30/1", format, w, h);
}

static inline void
set_caps (GstHarness * h, const gchar * format, int w, int hh)
{
  gchar *caps = caps_string (format, w, hh);
  gst_harness_set_src_caps_str (h, caps);
  g_free (caps);
}

static inline const GstStructure *
results_of (GstBuffer * buf)
{
  GstHybridTensorMeta *meta = gst_buffer_get_hybrid_tensor_meta (buf);
  fail_unless (meta != NULL, "no GstHybridTensorMeta on the buffer");
  return meta->results;
}

static inline const gchar *
top_label (GstBuffer * buf)
{
  return gst_structure_get_string (results_of (buf), "label");
}

/* The next element message named "hybridinfer" on `bus`, or NULL. */
static inline GstMessage *
next_result_message (GstBus * bus)
{
  GstMessage *msg;
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT))) {
    if (gst_message_has_name (msg, "hybridinfer"))
      return msg;
    gst_message_unref (msg);
  }
  return NULL;
}

/* Messages of `type` waiting on `bus` (they are dropped). */
static inline guint
count_messages (GstBus * bus, GstMessageType type)
{
  guint n = 0;
  GstMessage *msg;
  while ((msg = gst_bus_pop_filtered (bus, type))) {
    n++;
    gst_message_unref (msg);
  }
  return n;
}

/* The reload's outcome: the "hybridinfer-model-reloaded" message (TRUE,
 * its model in *model) or a warning (FALSE, its text in *text). */
static inline gboolean
wait_reload (GstBus * bus, gchar ** model, gchar ** text)
{
  for (;;) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
        GST_MESSAGE_ELEMENT | GST_MESSAGE_WARNING | GST_MESSAGE_ERROR);
    fail_unless (msg != NULL, "no reload message nor warning in 60 s");
    fail_if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR, "error posted");
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING) {
      GError *err = NULL;
      gchar *debug = NULL;
      gst_message_parse_warning (msg, &err, &debug);
      *text = g_strdup_printf ("%s (%s)", err->message, debug);
      g_error_free (err);
      g_free (debug);
      gst_message_unref (msg);
      return FALSE;
    }
    if (gst_message_has_name (msg, "hybridinfer-model-reloaded")) {
      *model = g_strdup (gst_structure_get_string
          (gst_message_get_structure (msg), "model"));
      gst_message_unref (msg);
      return TRUE;
    }
    gst_message_unref (msg);
  }
}

#endif /* HY_ELEMENT_UTIL_H */
