/*
 * test-bus-soak.c — an application that never reads its bus does not grow.
 *
 * 20 000 tiny frames through hybridinfer with the default properties and a
 * pipeline bus nobody reads (as in an application with no bus watch): the
 * resident set must not grow between frame 5 000 (everything warmed up:
 * pools, plans, the registry) and frame 20 000.  Per-frame element
 * messages used to be on by default and piled up on such a bus (~26 MiB
 * over 20 000 frames); they are now opt-in (`post-messages`, docs/ELEMENT.md).
 *
 * Counted in frames, not time: the pipeline runs as fast as it can and the
 * test waits for the last frame, whatever the machine's speed.
 *
 * With HY_SOAK_POST_MESSAGES=1 the same run sets post-messages=true and is
 * expected to fail: the check that this test can see the leak it guards.
 */
#include <stdio.h>
#include <unistd.h>

#include "element-util.h"

#define SOAK_FRAMES 20000
#define SOAK_WARM_FRAME 5000
/* Far below what 15 000 messages hold (~1.7 KiB each, 25 MiB), far above
 * the page-granular noise of malloc's arenas. */
#define SOAK_MAX_GROWTH_KIB 1024

/* AddressSanitizer keeps freed memory in quarantine (up to 256 MiB), so
 * the resident set grows with every allocation there: only the message
 * count is checked under it. */
#if defined(__SANITIZE_ADDRESS__)
#define SOAK_CHECK_RSS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SOAK_CHECK_RSS 0
#endif
#endif
#ifndef SOAK_CHECK_RSS
#define SOAK_CHECK_RSS 1
#endif

typedef struct {
  GMutex lock;
  GCond cond;
  guint frames;
  glong rss_warm_kib, rss_end_kib;
  guint with_meta;
} Soak;

static glong
rss_kib (void)
{
  glong pages_total = 0, pages_resident = 0;
  FILE *f = fopen ("/proc/self/statm", "r");
  fail_unless (f != NULL, "cannot open /proc/self/statm");
  fail_unless (fscanf (f, "%ld %ld", &pages_total, &pages_resident) == 2,
      "cannot parse /proc/self/statm");
  fclose (f);
  return pages_resident * (sysconf (_SC_PAGESIZE) / 1024);
}

/* fakesink's streaming thread, after hybridinfer attached its result. */
static void
on_handoff (GstElement * sink, GstBuffer * buf, GstPad * pad, Soak * s)
{
  gboolean has_meta = gst_buffer_get_hybrid_tensor_meta (buf) != NULL;
  g_mutex_lock (&s->lock);
  s->with_meta += has_meta;
  s->frames++;
  if (s->frames == SOAK_WARM_FRAME)
    s->rss_warm_kib = rss_kib ();
  if (s->frames == SOAK_FRAMES) {
    s->rss_end_kib = rss_kib ();
    g_cond_signal (&s->cond);
  }
  g_mutex_unlock (&s->lock);
}

GST_START_TEST (test_unread_bus_flat_rss)
{
  gboolean messages = g_strcmp0 (g_getenv ("HY_SOAK_POST_MESSAGES"), "1") == 0;
  gchar *model = model_path ("colors");
  /* 16x16 frames into an 8x8 input: the run is pipeline overhead, which
   * is where the messages were. */
  gchar *desc = g_strdup_printf ("videotestsrc pattern=red num-buffers=%d "
      "! video/x-raw,format=RGB,width=16,height=16,framerate=30/1 "
      "! hybridinfer model=%s device=cpu input-size=8x8 %s "
      "! fakesink name=sink sync=false signal-handoffs=true",
      SOAK_FRAMES, model, messages ? "post-messages=true" : "");
  GError *error = NULL;
  GstElement *p = gst_parse_launch (desc, &error);
  fail_unless (p != NULL, "%s: %s", desc, error ? error->message : "?");
  g_free (desc);
  g_free (model);

  Soak s = { 0 };
  g_mutex_init (&s.lock);
  g_cond_init (&s.cond);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), &s);
  gst_object_unref (sink);

  /* Nobody reads the bus from here on: no watch, no pop. */
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING)
      != GST_STATE_CHANGE_FAILURE);
  g_mutex_lock (&s.lock);
  while (s.frames < SOAK_FRAMES)
    g_cond_wait (&s.cond, &s.lock);
  g_mutex_unlock (&s.lock);

  /* Now read it, once, to say what had piled up (before NULL, which
   * flushes the pipeline's bus). */
  GstBus *bus = gst_element_get_bus (p);
  guint element_messages = 0, errors = 0;
  GstMessage *m;
  while ((m = gst_bus_pop (bus))) {
    element_messages += GST_MESSAGE_TYPE (m) == GST_MESSAGE_ELEMENT;
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
      GError *e = NULL;
      gst_message_parse_error (m, &e, NULL);
      g_printerr ("error: %s\n", e->message);
      g_clear_error (&e);
      errors++;
    }
    gst_message_unref (m);
  }
  gst_object_unref (bus);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);

  glong growth = s.rss_end_kib - s.rss_warm_kib;
  g_print ("RSS at frame %d: %ld KiB, at frame %d: %ld KiB (%+ld KiB); "
      "%u element messages had piled up\n", SOAK_WARM_FRAME, s.rss_warm_kib,
      SOAK_FRAMES, s.rss_end_kib, growth, element_messages);
  fail_unless_equals_int (errors, 0);
  fail_unless_equals_int (s.with_meta, SOAK_FRAMES);
  if (!messages)
    fail_unless_equals_int (element_messages, 0);
  fail_unless (!SOAK_CHECK_RSS || growth < SOAK_MAX_GROWTH_KIB,
      "RSS grew by %ld KiB between frames %d and %d with an unread bus "
      "(the limit is %d KiB)", growth, SOAK_WARM_FRAME, SOAK_FRAMES,
      SOAK_MAX_GROWTH_KIB);
  g_mutex_clear (&s.lock);
  g_cond_clear (&s.cond);
}

GST_END_TEST;

static Suite *
bus_soak_suite (void)
{
  Suite *s = suite_create ("hybridinfer-bus-soak");
  TCase *tc = tcase_create ("soak");
  tcase_set_timeout (tc, 0);
  tcase_add_test (tc, test_unread_bus_flat_rss);
  suite_add_tcase (s, tc);
  return s;
}

GST_CHECK_MAIN (bus_soak);
