/*
 * test-soak.c — eight cameras on one shared engine while everything that
 * can go wrong does, at random: sources stall, end and fail; the
 * pipelines change state and caps; each stream's own second model and
 * its labels are reloaded.  Asserted: no crash; no stall past a bound
 * (every stream that plays and sends delivers within STALL_BOUND_S, and
 * all of them reach EOS at the end); every frame that reaches a sink
 * carries the result of its own frame (its colour, from either labels
 * file); heap and file descriptors flat.
 *
 * Each stream is a pipeline of its own, as applications that add and
 * remove cameras build them:
 *
 *   appsrc ! hybridinfer shared-engine=soak ! hybridinfer (own model,
 *   reloaded) ! fakesink
 *
 * HY_SOAK_SECONDS sets the length (default 12: the suite's run; the long
 * form is HY_SOAK_SECONDS=600, docs/ELEMENT.md); HY_SOAK_SEED repeats a
 * run (the seed is printed).
 */
#include <malloc.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "element-util.h"

#define N_STREAMS 8
#define STALL_BOUND_S 3
#define TICK_MS 10

/* colors.txt's classes, their RGB, and the other labels file's names */
static const gchar *names[] = { "black", "white", "gray", "red", "green",
  "blue", "yellow", "cyan", "magenta"
};
static const gchar *other_names[] = { "k", "w", "g", "R", "G", "B", "y", "c",
  "m"
};

static const guint8 rgb[][3] = { {0, 0, 0}, {255, 255, 255}, {128, 128, 128},
{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 0}, {0, 255, 255},
{255, 0, 255}
};

typedef enum
{
  STREAM_PLAYING,
  STREAM_STALLED,               /* sends nothing until stall_until */
  STREAM_PAUSED,
  STREAM_ENDING,                /* EOS sent, waiting for it at the sink */
  STREAM_FAILING,               /* a broken frame sent, waiting for the error */
} StreamState;

typedef struct
{
  guint index;
  GstElement *pipeline;
  GstElement *src, *own;
  GstBus *bus;
  StreamState state;
  gint64 stall_until, since;
  gint width, height;
  guint64 pushed;
  gint64 last_push_us;
  gint64 last_delivery_us;      /* the sink's handoff; checks.lock */
  guint starts;
} Stream;

typedef struct
{
  GMutex lock;
  guint frames;
  gchar *failure;               /* the first wrong frame */
} Checks;

static Checks checks;
static gchar *labels_a, *labels_b, *model_a, *model_b;

static void
check_failed (gchar * what)
{
  g_mutex_lock (&checks.lock);
  if (!checks.failure)
    checks.failure = what;
  else
    g_free (what);
  g_mutex_unlock (&checks.lock);
}

/* At the sink: two results (the engine's, the own model's), each naming
 * the colour of this frame (the buffer's offset), inferred. */
static void
on_handoff (GstElement * sink, GstBuffer * buf, GstPad * pad, Stream * s)
{
  guint colour = (guint) GST_BUFFER_OFFSET (buf);
  gpointer state = NULL;
  GstMeta *meta;
  guint n = 0;
  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_HYBRID_TENSOR_META_API_TYPE))) {
    const GstHybridTensorMeta *m = (const GstHybridTensorMeta *) meta;
    const gchar *label = gst_hybrid_tensor_meta_get_top_label (m, 0);
    n++;
    if (colour >= G_N_ELEMENTS (names) || !label
        || (strcmp (label, names[colour])
            && strcmp (label, other_names[colour])))
      check_failed (g_strdup_printf ("stream %u: a %s frame labelled %s",
              s->index, colour < G_N_ELEMENTS (names) ? names[colour] : "?",
              label ? label : "(none)"));
  }
  if (n != 2)
    check_failed (g_strdup_printf ("stream %u: %u results on a frame "
            "(2 expected)", s->index, n));
  g_mutex_lock (&checks.lock);
  checks.frames++;
  s->last_delivery_us = g_get_monotonic_time ();
  g_mutex_unlock (&checks.lock);
}

static void
stream_build (Stream * s)
{
  gchar *desc = g_strdup_printf ("appsrc name=src is-live=true format=time "
      "max-buffers=8 leaky-type=downstream ! hybridinfer shared-engine=soak "
      "model=%s labels=%s device=cpu input-size=32x32 batch-size=8 "
      "batch-timeout=0 ! hybridinfer name=own model=%s labels=%s "
      "device=cpu input-size=32x32 ! fakesink name=sink sync=false "
      "signal-handoffs=true", model_a, labels_a, model_a, labels_a);
  GError *error = NULL;
  s->pipeline = gst_parse_launch (desc, &error);
  fail_unless (s->pipeline != NULL && error == NULL, "%s", desc);
  g_free (desc);
  s->src = gst_bin_get_by_name (GST_BIN (s->pipeline), "src");
  s->own = gst_bin_get_by_name (GST_BIN (s->pipeline), "own");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (s->pipeline), "sink");
  g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), s);
  gst_object_unref (sink);
  s->bus = gst_element_get_bus (s->pipeline);
}

static void
stream_free (Stream * s)
{
  fail_unless_equals_int (gst_element_set_state (s->pipeline,
          GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  gst_bus_set_flushing (s->bus, TRUE);
  gst_object_unref (s->bus);
  gst_object_unref (s->src);
  gst_object_unref (s->own);
  gst_object_unref (s->pipeline);
}

static void
set_frame_size (Stream * s, gint w, gint h)
{
  s->width = w;
  s->height = h;
  GstCaps *caps = gst_caps_new_simple ("video/x-raw", "format",
      G_TYPE_STRING, "RGB", "width", G_TYPE_INT, w, "height", G_TYPE_INT, h,
      "framerate", GST_TYPE_FRACTION, 100, 1, NULL);
  g_object_set (s->src, "caps", caps, NULL);
  gst_caps_unref (caps);
}

static void
stream_start (Stream * s, GRand * rand)
{
  set_frame_size (s, 32, 24);
  s->state = STREAM_PLAYING;
  s->since = g_get_monotonic_time ();
  s->last_push_us = 0;
  s->starts++;
  fail_if (gst_element_set_state (s->pipeline, GST_STATE_PLAYING)
      == GST_STATE_CHANGE_FAILURE, "stream %u did not start", s->index);
}

static void
end_of_stream (Stream * s)
{
  GstFlowReturn ret;
  g_signal_emit_by_name (s->src, "end-of-stream", &ret);
}

/* One solid frame of a random colour, its colour in the offset; `broken`:
 * too short for the caps, which the element refuses with an error. */
static void
push_frame (Stream * s, GRand * rand, gboolean broken)
{
  guint colour = (guint) g_rand_int_range (rand, 0, G_N_ELEMENTS (names));
  gsize size = (gsize) GST_ROUND_UP_4 (s->width * 3) * s->height;
  GstBuffer *buf = gst_buffer_new_allocate (NULL, broken ? 7 : size, NULL);
  GstMapInfo map;
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (gsize i = 0; i + 2 < map.size; i += 3)
    memcpy (map.data + i, rgb[colour], 3);
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_OFFSET (buf) = colour;
  GST_BUFFER_PTS (buf) = s->pushed * GST_SECOND / 100;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 100;
  s->pushed++;
  s->last_push_us = g_get_monotonic_time ();
  GstFlowReturn ret;
  /* appsrc's action signal: no link against gstreamer-app needed */
  g_signal_emit_by_name (s->src, "push-buffer", buf, &ret);
  gst_buffer_unref (buf);
}

/* What the stream's bus says: EOS and errors end the stream's run (the
 * application starts it again); warnings are failed reloads, which the
 * soak does not make. */
static void
read_bus (Stream * s, GRand * rand)
{
  GstMessage *msg;
  while ((msg = gst_bus_pop_filtered (s->bus, GST_MESSAGE_EOS
              | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING))) {
    GstMessageType type = GST_MESSAGE_TYPE (msg);
    if (type == GST_MESSAGE_WARNING) {
      GError *err = NULL;
      gst_message_parse_warning (msg, &err, NULL);
      check_failed (g_strdup_printf ("stream %u: warning %s", s->index,
              err->message));
      g_error_free (err);
    } else if (type == GST_MESSAGE_ERROR && s->state != STREAM_FAILING) {
      GError *err = NULL;
      gst_message_parse_error (msg, &err, NULL);
      check_failed (g_strdup_printf ("stream %u: unexpected error %s",
              s->index, err->message));
      g_error_free (err);
    }
    gst_message_unref (msg);
    if (type != GST_MESSAGE_WARNING) {
      fail_unless_equals_int (gst_element_set_state (s->pipeline,
              GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
      stream_start (s, rand);
    }
  }
}

/* One random event, now and then. */
static void
random_event (Stream * s, GRand * rand)
{
  gint64 now = g_get_monotonic_time ();
  switch (g_rand_int_range (rand, 0, 8)) {
    case 0:                    /* a camera that hangs for a while */
      s->state = STREAM_STALLED;
      s->stall_until = now + g_rand_int_range (rand, 100, 6000) * 1000;
      break;
    case 1:                    /* it ends */
      s->state = STREAM_ENDING;
      end_of_stream (s);
      break;
    case 2:                    /* it breaks */
      s->state = STREAM_FAILING;
      push_frame (s, rand, TRUE);
      break;
    case 3:
      s->state = STREAM_PAUSED;
      gst_element_set_state (s->pipeline, GST_STATE_PAUSED);
      break;
    case 4:                    /* new caps */
      set_frame_size (s, g_rand_boolean (rand) ? 48 : 32,
          g_rand_boolean (rand) ? 36 : 24);
      break;
    case 5:
      g_object_set (s->own, "model", g_rand_boolean (rand) ? model_a
          : model_b, NULL);
      break;
    case 6:
      g_object_set (s->own, "labels", g_rand_boolean (rand) ? labels_a
          : labels_b, NULL);
      break;
    default:                   /* a restart */
      fail_unless_equals_int (gst_element_set_state (s->pipeline,
              GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
      stream_start (s, rand);
      break;
  }
  s->since = now;
}

/* A stream that plays and sends must deliver within the bound. */
static void
check_not_stalled (Stream * s)
{
  gint64 now = g_get_monotonic_time ();
  if (s->state != STREAM_PLAYING || now - s->since < STALL_BOUND_S
      * G_TIME_SPAN_SECOND)
    return;
  g_mutex_lock (&checks.lock);
  gint64 last = s->last_delivery_us;
  g_mutex_unlock (&checks.lock);
  fail_unless (now - last < STALL_BOUND_S * G_TIME_SPAN_SECOND,
      "stream %u played for %" G_GINT64_FORMAT " ms and delivered nothing in "
      "the last %d s", s->index, (now - s->since) / 1000, STALL_BOUND_S);
}

static void
step (Stream * s, GRand * rand)
{
  gint64 now = g_get_monotonic_time ();
  read_bus (s, rand);
  switch (s->state) {
    case STREAM_STALLED:
      if (now >= s->stall_until) {
        s->state = STREAM_PLAYING;
        s->since = now;
      }
      return;
    case STREAM_PAUSED:
      if (now - s->since > 300 * 1000) {
        s->state = STREAM_PLAYING;
        s->since = now;
        gst_element_set_state (s->pipeline, GST_STATE_PLAYING);
      }
      return;
    case STREAM_ENDING:
    case STREAM_FAILING:
      /* read_bus starts it again; a stream that never says is a stall */
      fail_unless (now - s->since < STALL_BOUND_S * G_TIME_SPAN_SECOND,
          "stream %u: no %s in %d s", s->index, s->state == STREAM_ENDING
          ? "EOS" : "error", STALL_BOUND_S);
      return;
    case STREAM_PLAYING:
      push_frame (s, rand, FALSE);
      if (g_rand_int_range (rand, 0, 150) == 0)
        random_event (s, rand);
      check_not_stalled (s);
      return;
  }
}

static gint64
heap_in_use (void)
{
#if HY_HAS_ASAN
  return 0;                     /* LeakSanitizer checks at exit instead */
#else
  malloc_trim (0);
  return (gint64) mallinfo2 ().uordblks;
#endif
}

static guint
open_fds (void)
{
  GDir *dir = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;
  fail_unless (dir != NULL);
  while (g_dir_read_name (dir))
    n++;
  g_dir_close (dir);
  return n;
}

/* A labels file with other names for colors.txt's classes. */
static gchar *
write_other_labels (void)
{
  gchar *path = NULL;
  gint fd = g_file_open_tmp ("hybridinfer-soak-XXXXXX.txt", &path, NULL);
  fail_unless (fd >= 0);
  GString *text = g_string_new (NULL);
  for (guint i = 0; i < G_N_ELEMENTS (other_names); i++)
    g_string_append_printf (text, "%s\n", other_names[i]);
  fail_unless (write (fd, text->str, text->len) == (gssize) text->len);
  close (fd);
  g_string_free (text, TRUE);
  return path;
}

/* Runs every stream for `seconds` of random events, then ends them all
 * and waits (bounded) for each EOS. */
static void
soak (Stream * streams, GRand * rand, guint seconds)
{
  gint64 until = g_get_monotonic_time () + seconds * G_TIME_SPAN_SECOND;
  while (g_get_monotonic_time () < until) {
    for (guint i = 0; i < N_STREAMS; i++)
      step (&streams[i], rand);
    g_mutex_lock (&checks.lock);
    gchar *failure = g_strdup (checks.failure);
    g_mutex_unlock (&checks.lock);
    fail_if (failure != NULL, "%s", failure);
    g_usleep (TICK_MS * 1000);
  }
}

GST_START_TEST (test_soak_eight_streams_one_engine)
{
  const gchar *env = g_getenv ("HY_SOAK_SECONDS");
  guint seconds = env ? (guint) g_ascii_strtoull (env, NULL, 10) : 12;
  const gchar *seed_env = g_getenv ("HY_SOAK_SEED");
  guint32 seed = seed_env ? (guint32) g_ascii_strtoull (seed_env, NULL, 10)
      : (guint32) g_get_real_time ();
  g_print ("soak: %u s, HY_SOAK_SEED=%u\n", seconds, seed);
  GRand *rand = g_rand_new_with_seed (seed);
  g_mutex_init (&checks.lock);
  model_a = model_path ("colors");
  model_b = model_path ("colors-shaped");
  labels_a = labels_path ("colors");
  labels_b = write_other_labels ();

  Stream streams[N_STREAMS] = { 0 };
  for (guint i = 0; i < N_STREAMS; i++) {
    streams[i].index = i;
    stream_build (&streams[i]);
    stream_start (&streams[i], rand);
  }
  /* warm: every stream's model loaded, the engine's batches sized */
  soak (streams, rand, 2);
  gint64 heap0 = heap_in_use ();
  guint fds0 = open_fds ();
  soak (streams, rand, seconds);

  /* the end: every stream starts afresh, sends a few frames and ends;
   * each EOS within the bound */
  for (guint i = 0; i < N_STREAMS; i++) {
    Stream *s = &streams[i];
    fail_unless_equals_int (gst_element_set_state (s->pipeline,
            GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
    gst_bus_set_flushing (s->bus, TRUE);        /* an old EOS or error */
    gst_bus_set_flushing (s->bus, FALSE);
    stream_start (s, rand);
    for (guint f = 0; f < 3; f++)
      push_frame (s, rand, FALSE);
    end_of_stream (s);
  }
  for (guint i = 0; i < N_STREAMS; i++) {
    GstMessage *msg = gst_bus_timed_pop_filtered (streams[i].bus,
        STALL_BOUND_S * GST_SECOND, GST_MESSAGE_EOS);
    fail_unless (msg != NULL, "stream %u: no EOS in %d s", i, STALL_BOUND_S);
    gst_message_unref (msg);
  }
  g_print ("soak: %u frames checked\n", checks.frames);
  fail_unless (checks.frames > 0);
  fail_if (checks.failure != NULL, "%s", checks.failure);

  /* flat: what the run added beyond the warm state (the streams still
   * exist, stopped) */
  for (guint i = 0; i < N_STREAMS; i++)
    fail_unless_equals_int (gst_element_set_state (streams[i].pipeline,
            GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  gint64 heap1 = heap_in_use ();
  guint fds1 = open_fds ();
  g_print ("soak: heap %+" G_GINT64_FORMAT " bytes, fds %u -> %u\n",
      heap1 - heap0, fds0, fds1);
  fail_unless (fds1 <= fds0, "file descriptors grew: %u -> %u", fds0, fds1);
  fail_unless (heap1 - heap0 < 4 * 1024 * 1024, "heap grew by %"
      G_GINT64_FORMAT " bytes", heap1 - heap0);

  for (guint i = 0; i < N_STREAMS; i++)
    stream_free (&streams[i]);
  g_unlink (labels_b);
  g_free (labels_a);
  g_free (labels_b);
  g_free (model_a);
  g_free (model_b);
  g_rand_free (rand);
  g_mutex_clear (&checks.lock);
}

GST_END_TEST;

static Suite *
soak_suite (void)
{
  Suite *s = suite_create ("hybridinfer-soak");
  TCase *tc = tcase_create ("soak");
  /* the long form sets its own length; the bound covers it */
  tcase_set_timeout (tc, 120 + (g_getenv ("HY_SOAK_SECONDS")
          ? (gint) g_ascii_strtoll (g_getenv ("HY_SOAK_SECONDS"), NULL,
              10) : 0));
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_soak_eight_streams_one_engine);
  return s;
}

GST_CHECK_MAIN (soak);
