/*
 * test-hybridinfer-stress.c — hybridinfer over time: 500 NULL <-> PLAYING
 * cycles and a 10 000-frame run must not grow the heap, and a frame in
 * hybrid mode costs a small, fixed number of allocations (the result's
 * metadata), not one per layer.
 *
 * Heap in use is glibc's mallinfo2 (bytes handed out and not freed):
 * exact where RSS is blurred by the allocator keeping freed pages.  Under
 * a sanitizer, which replaces malloc, the numbers are not measured and
 * LeakSanitizer does the checking.
 */
#include <malloc.h>

#include "alloc-count.h"
#include "element-util.h"

#define CYCLES 500
#define CYCLES_WARM 50
#define CYCLE_GROWTH_LIMIT (256 * 1024)
#define RUN_FRAMES 10000
#define RUN_WARM_FRAMES 1000
#define RUN_GROWTH_LIMIT (128 * 1024)
#define COUNTED_FRAMES 50
/* Per inferred frame: the result block (tensors, detections), its
 * GstStructure and fields, and the meta's place in the buffer. */
#define RESULT_ALLOCATIONS_LIMIT 40

static gint64
heap_in_use (void)
{
#ifdef HY_ALLOC_COUNTING
  struct mallinfo2 m = mallinfo2 ();
  return (gint64) (m.uordblks + m.hblkhd);
#else
  return 0;
#endif
}

static GstElement *
pipeline_new (const gchar * model, guint n_buffers, const gchar * extra)
{
  gchar *m = model_path (model);
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%u pattern=ball "
      "! video/x-raw,format=I420,width=32,height=24 ! hybridinfer name=h "
      "model=%s device=cpu %s ! fakesink name=sink sync=false", n_buffers, m,
      extra);
  GError *error = NULL;
  GstElement *p = gst_parse_launch (desc, &error);
  fail_unless (p != NULL && error == NULL, "%s", desc);
  g_free (desc);
  g_free (m);
  return p;
}

/* Plays until EOS, reading every message as an application would. */
static void
run_to_eos (GstElement * p)
{
  GstBus *bus = gst_element_get_bus (p);
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING)
      != GST_STATE_CHANGE_FAILURE);
  for (;;) {
    GstMessage *msg = gst_bus_timed_pop (bus, 60 * GST_SECOND);
    fail_unless (msg != NULL, "no EOS");
    GstMessageType type = GST_MESSAGE_TYPE (msg);
    if (type == GST_MESSAGE_ERROR) {
      GError *err = NULL;
      gst_message_parse_error (msg, &err, NULL);
      fail ("error: %s", err->message);
    }
    gst_message_unref (msg);
    if (type == GST_MESSAGE_EOS)
      break;
  }
  gst_object_unref (bus);
}

GST_START_TEST (test_state_cycles)
{
  GstElement *p = pipeline_new ("colors-shaped", 3, "");
  gint64 warm = 0;
  for (guint i = 0; i < CYCLES; i++) {
    run_to_eos (p);
    fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    if (i + 1 == CYCLES_WARM)
      warm = heap_in_use ();
  }
  GstElement *h = gst_bin_get_by_name (GST_BIN (p), "h");
  guint64 inferred;
  g_object_get (h, "frames-inferred", &inferred, NULL);
  fail_unless_equals_uint64 (inferred, 3);      /* counts restart */
  gst_object_unref (h);
  gint64 growth = heap_in_use () - warm;
  g_print ("heap growth over the last %d of %d cycles: %" G_GINT64_FORMAT
      " bytes\n", CYCLES - CYCLES_WARM, CYCLES, growth);
  if (hy_alloc_can_count ())
    fail_unless (growth < CYCLE_GROWTH_LIMIT, "heap grew %" G_GINT64_FORMAT
        " bytes over %d cycles", growth, CYCLES - CYCLES_WARM);
  gst_object_unref (p);
}

GST_END_TEST;

typedef struct {
  guint frames;
  gint64 warm, last;
} RunProbe;

static GstPadProbeReturn
sample_heap (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  RunProbe *probe = data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  fail_unless (gst_buffer_get_hybrid_tensor_meta (buf) != NULL);
  probe->frames++;
  if (probe->frames == RUN_WARM_FRAMES)
    probe->warm = heap_in_use ();
  if (probe->frames == RUN_FRAMES)
    probe->last = heap_in_use ();
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_long_run_flat_memory)
{
  GstElement *p = pipeline_new ("colors-shaped", RUN_FRAMES, "");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  GstPad *pad = gst_element_get_static_pad (sink, "sink");
  RunProbe probe = { 0 };
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, sample_heap, &probe,
      NULL);
  run_to_eos (p);
  fail_unless_equals_int (probe.frames, RUN_FRAMES);
  GstElement *h = gst_bin_get_by_name (GST_BIN (p), "h");
  guint64 inferred;
  g_object_get (h, "frames-inferred", &inferred, NULL);
  fail_unless_equals_uint64 (inferred, RUN_FRAMES);
  gint64 growth = probe.last - probe.warm;
  g_print ("heap growth from frame %d to %d: %" G_GINT64_FORMAT " bytes\n",
      RUN_WARM_FRAMES, RUN_FRAMES, growth);
  if (hy_alloc_can_count ())
    fail_unless (growth < RUN_GROWTH_LIMIT, "heap grew %" G_GINT64_FORMAT
        " bytes from frame %d to %d", growth, RUN_WARM_FRAMES, RUN_FRAMES);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (h);
  gst_object_unref (pad);
  gst_object_unref (sink);
  gst_object_unref (p);
}

GST_END_TEST;

/* Allocations while pushing COUNTED_FRAMES frames, per frame. */
static double
allocations_per_frame (const gchar * model, gint mode, gboolean messages)
{
  GstElement *e = infer_new (model);
  g_object_set (e, "mode", mode, "post-messages", messages, "input-size",
      "64x64", NULL);
  GstHarness *h = harness_for (e, NULL);
  set_caps (h, "RGB", 64, 48);
  GstBuffer *frames[COUNTED_FRAMES];
  for (guint i = 0; i < 5; i++)
    gst_buffer_unref (gst_harness_push_and_pull (h,
            frame_new ("RGB", 64, 48, pick_quadrants, i)));
  for (guint i = 0; i < COUNTED_FRAMES; i++)
    frames[i] = frame_new ("RGB", 64, 48, pick_quadrants, i);
  /* the harness's own output queue is counted too: one node per buffer */
  hy_alloc_start ();
  for (guint i = 0; i < COUNTED_FRAMES; i++)
    gst_harness_push (h, frames[i]);
  int n = hy_alloc_stop ();
  for (guint i = 0; i < COUNTED_FRAMES; i++)
    gst_buffer_unref (gst_harness_pull (h));
  gst_harness_teardown (h);
  return (double) n / COUNTED_FRAMES;
}

GST_START_TEST (test_allocations_per_frame)
{
  if (!hy_alloc_can_count ())
    return;
  /* OpenBLAS's threaded GEMM may allocate its job list per call: one
   * thread keeps the count about our code. */
  g_setenv ("OPENBLAS_NUM_THREADS", "1", TRUE);
  double colors = allocations_per_frame ("colors", 0, FALSE);
  double quadrants = allocations_per_frame ("quadrants", 0, FALSE);
  double imperative = allocations_per_frame ("colors", 1, FALSE);
  double messages = allocations_per_frame ("colors", 0, TRUE);
  g_print ("allocations per frame (hybrid, no messages): colors %.1f, "
      "quadrants %.1f; imperative %.1f; hybrid with messages %.1f\n",
      colors, quadrants, imperative, messages);
  fail_unless (colors <= RESULT_ALLOCATIONS_LIMIT, "%.1f", colors);
  fail_unless (quadrants <= RESULT_ALLOCATIONS_LIMIT, "%.1f", quadrants);
  /* imperative mode allocates every layer's output: the counting sees it */
  fail_unless (imperative > colors + 5, "%.1f vs %.1f", imperative, colors);
}

GST_END_TEST;

static Suite *
hybridinfer_stress_suite (void)
{
  Suite *s = suite_create ("hybridinfer-stress");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_allocations_per_frame);
  tcase_add_test (tc, test_state_cycles);
  tcase_add_test (tc, test_long_run_flat_memory);
  return s;
}

GST_CHECK_MAIN (hybridinfer_stress);
