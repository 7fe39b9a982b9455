/*
 * fuzz-element.c — libFuzzer target: the hybridinfer element under
 * GstHarness.
 *
 * The bytes pick a tiny model (tests/element/models, pipelines/models),
 * properties to start with, then a script of events: caps (every format
 * the element takes, 1x1 up to MAX_SIDE), frames (random contents, now and
 * then the wrong size), property changes while running (mode, batch-size,
 * interval, normalisation, input-size, skip-when-busy, shared-engine…),
 * flushes and EOS.  The element may
 * refuse any of it with a flow error or an error message; it may never
 * crash, leak or trip a sanitizer.
 *
 * The plugin is found through GST_PLUGIN_PATH_1_0; when that is not set,
 * the build's own gst-plugin folder and the system plugin folder are used,
 * with a private registry, as tests/element/meson.build sets them.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <gst/gst.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
const char *__lsan_default_options (void);
const char *__lsan_default_suppressions (void);

/* LeakSanitizer settings of the element tests (tests/element/lsan.supp,
 * which says why), built in so that any runner gets them: the slow
 * unwinder sees through GLib, which has no frame pointers; GLib's quark
 * table and interned strings are permanent by design. */
const char *
__lsan_default_options (void)
{
  return "fast_unwind_on_malloc=0";
}

const char *
__lsan_default_suppressions (void)
{
  return "leak:_dl_init\nleak:g_intern_static_string\nleak:g_intern_string\n";
}

#define MAX_SIDE 256            /* frames up to MAX_SIDE x MAX_SIDE */
#define MAX_EVENTS 32

typedef struct src {
  const uint8_t *p;
  size_t n;
} src;

static guint
pick (src *s, guint n)
{
  if (n <= 1 || s->n == 0)
    return 0;
  guint v = s->p[0];
  s->p++;
  s->n--;
  return v % n;
}

static const char *const models[] = {
  HY_ELEMENT_MODELS "/colors-symbol.json",
  HY_ELEMENT_MODELS "/colors-shaped-symbol.json",
  HY_ELEMENT_MODELS "/quadrants-symbol.json",
  HY_ELEMENT_MODELS "/quadrants3-symbol.json",
  HY_ELEMENT_MODELS "/lrn-symbol.json",
  HY_PIPELINE_MODELS "/patterns-symbol.json",
};

static const char *const formats[] = {
  "RGB", "BGR", "RGBx", "BGRx", "xRGB", "xBGR", "RGBA", "BGRA", "NV12",
  "I420", "GRAY8", "YUY2",      /* the last one the element refuses */
};

/* Property changes: a name and the values (as gst-launch writes them) to
 * pick from.  Some are only allowed before start; setting them while
 * running must be refused or deferred, never acted on half-way. */
typedef struct prop {
  const char *name;
  const char *values[8];
} prop;

static const prop props[] = {
  { "mode", { "hybrid", "imperative" } },
  { "batch-size", { "1", "2", "3", "4", "8" } },
  { "interval", { "1", "2", "3", "7" } },
  { "top-k", { "1", "2", "5", "1000" } },
  { "threshold", { "-1", "0", "0.5", "2" } },
  { "post-messages", { "true", "false" } },
  { "mean", { "<0.5>", "<0.485,0.456,0.406>", "<1,2>", "<>", "<-1e30>" } },
  { "std", { "<0.229,0.224,0.225>", "<1e-300>", "<0>", "<1>", "<2,2,2,2>" } },
  { "scale", { "0-255", "0-1" } },
  { "resize", { "stretch", "letterbox" } },
  { "interpolation", { "bilinear", "nearest" } },
  { "color-order", { "rgb", "bgr" } },
  { "output", { "auto", "classification", "detection", "raw" } },
  { "input-size", { "frame", "8x8", "1x1", "32x16", "64x64", "0x0", "abc",
      "3x100000" } },
  { "input-name", { "data", "bogus", "" } },
  { "device", { "cpu", "auto", "cuda:64" } },
  { "precision", { "fp32", "fp16" } },
  { "dump-frames", { "0-9", "", "x" } },
  { "skip-when-busy", { "true", "false" } },
  { "shared-engine", { "fuzz", "" } },
  { "iou-threshold", { "0", "0.45", "1" } },
};

static GstStaticPadTemplate harness_src = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate harness_sink = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void
set_prop (src *s, GstElement *e)
{
  const prop *p = &props[pick (s, G_N_ELEMENTS (props))];
  guint n = 0;
  while (n < G_N_ELEMENTS (p->values) && p->values[n])
    n++;
  gst_util_set_object_arg (G_OBJECT (e), p->name, p->values[pick (s, n)]);
}

static guint32
xorshift (guint32 *state)
{
  guint32 x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *state = x;
}

static GstBuffer *
make_frame (src *s, gsize size, guint32 *rng)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
  GstMapInfo map;
  if (size == 0 || !gst_buffer_map (buf, &map, GST_MAP_WRITE))
    return buf;
  switch (pick (s, 4)) {
    case 0: memset (map.data, 0, size); break;
    case 1: memset (map.data, 0xff, size); break;
    case 2: memset (map.data, pick (s, 256), size); break;
    default:
      for (gsize i = 0; i < size; i++)
        map.data[i] = (guint8) (xorshift (rng) >> 24);
      break;
  }
  gst_buffer_unmap (buf, &map);
  return buf;
}

static void
drain (GstHarness *h, GstBus *bus)
{
  GstBuffer *b;
  while ((b = gst_harness_try_pull (h)))
    gst_buffer_unref (b);
  GstEvent *ev;
  while ((ev = gst_harness_try_pull_upstream_event (h)))
    gst_event_unref (ev);
  GstMessage *m;
  while ((m = gst_bus_pop (bus)))
    gst_message_unref (m);
}

/* Sticky events in the order GStreamer wants: stream-start, caps, then a
 * segment (again after each flush). */
static void
push_segment (GstHarness *h)
{
  GstSegment segment;
  gst_segment_init (&segment, GST_FORMAT_TIME);
  gst_harness_push_event (h, gst_event_new_segment (&segment));
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  /* The build's plugin and the system's core plugins, a private registry,
   * scanned in-process (the scanner helper is not built with the
   * sanitizers), unless the caller said otherwise. */
  g_setenv ("GST_PLUGIN_SYSTEM_PATH_1_0", "", FALSE);
  g_setenv ("GST_PLUGIN_PATH_1_0", HY_PLUGIN_DIR ":" HY_SYSTEM_PLUGINS,
      FALSE);
  g_setenv ("GST_REGISTRY_1_0", HY_FUZZ_BUILD_DIR "/registry-fuzz.bin",
      FALSE);
  g_setenv ("GST_REGISTRY_FORK", "no", FALSE);
  gst_init (argc, argv);
  GstElementFactory *f = gst_element_factory_find ("hybridinfer");
  if (!f) {
    g_printerr ("hybridinfer not found on GST_PLUGIN_PATH_1_0=%s\n",
        g_getenv ("GST_PLUGIN_PATH_1_0"));
    abort ();
  }
  /* Load the plugin (and the core library) now, so that libFuzzer sees
   * their coverage counters from the start. */
  gst_object_unref (gst_element_factory_create (f, NULL));
  gst_object_unref (f);
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  src s = { data, size };
  guint32 rng = 0x2545f491u ^ (guint32) size;

  GstElement *e = gst_element_factory_make ("hybridinfer", NULL);
  g_object_set (e, "model", models[pick (&s, G_N_ELEMENTS (models))],
      "device", "cpu", NULL);
  for (guint i = pick (&s, 4); i > 0; i--)
    set_prop (&s, e);
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (e, bus);

  /* The harness asserts that the element starts; refusing to start (a bad
   * property) is a fine outcome here, so start it first. */
  GstHarness *h = NULL;
  if (gst_element_set_state (e, GST_STATE_PAUSED)
      == GST_STATE_CHANGE_FAILURE) {
    gst_element_set_state (e, GST_STATE_NULL);
    gst_object_unref (e);
    goto out;
  }
  h = gst_harness_new_empty ();
  gst_harness_add_element_full (h, e, &harness_src, "sink", &harness_sink,
      "src");
  gst_object_unref (e);
  gst_harness_push_event (h, gst_event_new_stream_start ("fuzz"));
  gboolean have_caps = FALSE;

  GstVideoInfo info;
  gst_video_info_init (&info);
  GstClockTime pts = 0;
  for (guint ev = 0; ev < MAX_EVENTS && s.n > 0; ev++) {
    switch (pick (&s, 10)) {
      case 0: {                 /* new caps */
        const char *fmt = formats[pick (&s, G_N_ELEMENTS (formats))];
        int w = 1 + pick (&s, pick (&s, 8) == 0 ? MAX_SIDE : 48);
        int h_ = 1 + pick (&s, pick (&s, 8) == 0 ? MAX_SIDE : 48);
        GstCaps *caps = gst_caps_new_simple ("video/x-raw",
            "format", G_TYPE_STRING, fmt, "width", G_TYPE_INT, w,
            "height", G_TYPE_INT, h_, "framerate", GST_TYPE_FRACTION, 30, 1,
            NULL);
        if (!gst_video_info_from_caps (&info, caps))
          gst_video_info_init (&info);
        gst_harness_push_event (h, gst_event_new_caps (caps));
        if (!have_caps)
          push_segment (h);
        have_caps = TRUE;
        break;
      }
      case 1: case 2: case 3: case 4: {   /* a frame */
        if (!have_caps)         /* GStreamer's own contract, not ours */
          break;
        gsize n = GST_VIDEO_INFO_SIZE (&info) ? GST_VIDEO_INFO_SIZE (&info)
            : 3 * 16 * 16;
        GstBuffer *buf = make_frame (&s, n, &rng);
        GST_BUFFER_PTS (buf) = pts;
        GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
        pts += GST_SECOND / 30;
        gst_harness_push (h, buf);
        break;
      }
      case 5: {                 /* a frame of the wrong size */
        if (!have_caps)
          break;
        gsize n = pick (&s, 64) * (1 + pick (&s, 64));
        gst_harness_push (h, make_frame (&s, n, &rng));
        break;
      }
      case 6: case 7:
        set_prop (&s, e);
        break;
      case 8:                   /* flush */
        gst_harness_push_event (h, gst_event_new_flush_start ());
        gst_harness_push_event (h, gst_event_new_flush_stop (TRUE));
        if (have_caps)
          push_segment (h);
        break;
      default:
        gst_harness_push_event (h, gst_event_new_eos ());
        break;
    }
    drain (h, bus);
  }
  gst_harness_push_event (h, gst_event_new_eos ());

  drain (h, bus);
  gst_harness_teardown (h);

out:
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  return 0;
}
