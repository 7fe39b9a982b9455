/*
 * test-publish-kafka.c — hybridpublish to Kafka.  No Kafka broker runs on
 * the test machines: the brokers here are librdkafka's own mock cluster
 * (rdkafka_mock.h: the Kafka protocol served in this process), and a
 * localhost port with nothing listening.
 *
 * - what a consumer reads back from the topic is, message for message
 *   and byte for byte, the lines hybridpublish writes to its file for
 *   the same frames (the real detector and tracker on the ball scene);
 * - brokers that cannot be reached never stall or stop the pipeline:
 *   every frame comes out, in bounded time, with one warning naming the
 *   brokers, every message handed to the producer and none delivered.
 */
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#define FRAMES 40
#define TOPIC "camera1-results"

/* the ball scene through the shipped detector and the tracker, the
 * results to `location` and to Kafka (`kafka`: the publisher's
 * properties) */
static GstElement *
ball_pipeline (const gchar * location, const gchar * kafka)
{
  gchar *model = g_build_filename (g_getenv ("HY_SOURCE_DIR"), "pipelines",
      "models", "ball-symbol.json", NULL);
  gchar *desc = g_strdup_printf ("videotestsrc pattern=ball num-buffers=%d "
      "! video/x-raw,width=320,height=240,framerate=30/1 ! videoconvert "
      "! hybridinfer model=%s ! hybridtrack "
      "! hybridpublish name=publish location=%s %s "
      "! fakesink name=sink signal-handoffs=true", FRAMES, model, location,
      kafka);
  GError *error = NULL;
  GstElement *pipe = gst_parse_launch (desc, &error);
  fail_unless (pipe != NULL, "%s: %s", desc, error ? error->message : "");
  g_free (desc);
  g_free (model);
  return pipe;
}

static void
count_frame (GstElement * sink, GstBuffer * buf, GstPad * pad, gpointer data)
{
  (void) sink;
  (void) buf;
  (void) pad;
  g_atomic_int_inc ((gint *) data);
}

/* Plays to EOS (an error fails); returns the warnings' texts joined. */
static gchar *
play (GstElement * pipe, gint * frames_out, gdouble * seconds)
{
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  g_signal_connect (sink, "handoff", G_CALLBACK (count_frame), frames_out);
  gst_object_unref (sink);
  GString *warnings = g_string_new (NULL);
  GstBus *bus = gst_element_get_bus (pipe);
  gint64 start = g_get_monotonic_time ();
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING)
      != GST_STATE_CHANGE_FAILURE);
  for (;;) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING);
    fail_unless (msg != NULL, "no EOS within 60 s");
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS) {
      gst_message_unref (msg);
      break;
    }
    GError *error = NULL;
    gchar *debug = NULL;
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
      gst_message_parse_error (msg, &error, &debug);
    else
      gst_message_parse_warning (msg, &error, &debug);
    fail_if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR, "%s (%s)",
        error->message, debug);
    g_string_append_printf (warnings, "%s (%s)\n", error->message, debug);
    g_error_free (error);
    g_free (debug);
    gst_message_unref (msg);
  }
  *seconds = (g_get_monotonic_time () - start) / 1e6;
  /* to READY first: the stop's own warnings still reach the bus */
  gst_element_set_state (pipe, GST_STATE_READY);
  GstMessage *msg;
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING))) {
    GError *error = NULL;
    gchar *debug = NULL;
    gst_message_parse_warning (msg, &error, &debug);
    g_string_append_printf (warnings, "%s (%s)\n", error->message, debug);
    g_error_free (error);
    g_free (debug);
    gst_message_unref (msg);
  }
  gst_object_unref (bus);
  return g_string_free (warnings, FALSE);
}

static gchar **
file_lines (const gchar * path)
{
  gchar *text = NULL;
  fail_unless (g_file_get_contents (path, &text, NULL, NULL), "%s", path);
  gchar **lines = g_strsplit (text, "\n", -1);
  g_free (text);
  return lines;
}

static rd_kafka_conf_t *
conf_with (const gchar * first, ...)
{
  rd_kafka_conf_t *conf = rd_kafka_conf_new ();
  char why[256];
  va_list args;
  va_start (args, first);
  for (const gchar * name = first; name; name = va_arg (args, const gchar *)) {
    const gchar *value = va_arg (args, const gchar *);
    fail_unless (rd_kafka_conf_set (conf, name, value, why, sizeof why)
        == RD_KAFKA_CONF_OK, "%s: %s", name, why);
  }
  va_end (args);
  return conf;
}

GST_START_TEST (test_kafka_messages_are_the_file_lines)
{
  char why[256];
  /* the mock cluster lives in a handle of its own */
  rd_kafka_t *owner = rd_kafka_new (RD_KAFKA_PRODUCER,
      conf_with ("log_level", "3", NULL), why, sizeof why);
  fail_unless (owner != NULL, "%s", why);
  rd_kafka_mock_cluster_t *cluster = rd_kafka_mock_cluster_new (owner, 1);
  fail_unless (cluster != NULL);
  fail_unless_equals_int (rd_kafka_mock_topic_create (cluster, TOPIC, 1, 1),
      RD_KAFKA_RESP_ERR_NO_ERROR);
  const gchar *bootstrap = rd_kafka_mock_cluster_bootstraps (cluster);

  gchar *dir = g_dir_make_tmp ("hybridpublish-kafka-XXXXXX", NULL);
  gchar *path = g_build_filename (dir, "results.jsonl", NULL);
  gchar *kafka = g_strdup_printf ("kafka-brokers=%s kafka-topic=" TOPIC
      " kafka-client-id=camera1", bootstrap);
  GstElement *pipe = ball_pipeline (path, kafka);
  g_free (kafka);
  gint frames_out = 0;
  gdouble seconds;
  gchar *warnings = play (pipe, &frames_out, &seconds);
  fail_unless_equals_string (warnings, "");
  g_free (warnings);
  GstElement *publish = gst_bin_get_by_name (GST_BIN (pipe), "publish");
  guint64 sent, delivered, dropped;
  g_object_get (publish, "kafka-sent", &sent, "kafka-delivered", &delivered,
      "kafka-dropped", &dropped, NULL);
  gst_object_unref (publish);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  fail_unless_equals_int (frames_out, FRAMES);
  fail_unless_equals_int (sent, FRAMES);
  fail_unless_equals_int (dropped, 0);

  /* what the topic holds, from its start */
  rd_kafka_t *consumer = rd_kafka_new (RD_KAFKA_CONSUMER,
      conf_with ("bootstrap.servers", bootstrap, "group.id", "check",
          "enable.auto.commit", "false", "log_level", "3", NULL),
      why, sizeof why);
  fail_unless (consumer != NULL, "%s", why);
  rd_kafka_topic_partition_list_t *parts =
      rd_kafka_topic_partition_list_new (1);
  rd_kafka_topic_partition_list_add (parts, TOPIC, 0)->offset =
      RD_KAFKA_OFFSET_BEGINNING;
  fail_unless_equals_int (rd_kafka_assign (consumer, parts),
      RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_topic_partition_list_destroy (parts);
  GPtrArray *got = g_ptr_array_new_with_free_func (g_free);
  gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  while (got->len < FRAMES && g_get_monotonic_time () < end) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll (consumer, 200);
    if (!m)
      continue;
    if (!m->err)
      g_ptr_array_add (got, g_strndup (m->payload, m->len));
    rd_kafka_message_destroy (m);
  }
  rd_kafka_consumer_close (consumer);
  rd_kafka_destroy (consumer);

  gchar **lines = file_lines (path);
  fail_unless_equals_int (g_strv_length (lines), FRAMES + 1);  /* and "" */
  fail_unless_equals_int (got->len, FRAMES);
  fail_unless_equals_int (delivered, FRAMES);
  guint with_objects = 0;
  for (guint f = 0; f < FRAMES; f++) {
    fail_unless_equals_string (g_ptr_array_index (got, f), lines[f]);
    with_objects += strstr (lines[f], "\"label\":\"ball\"") != NULL;
  }
  /* the scene's ball is found: the payloads are not empty frames */
  fail_unless (with_objects >= FRAMES / 2, "%u frames with a ball",
      with_objects);
  g_strfreev (lines);
  g_ptr_array_unref (got);
  rd_kafka_mock_cluster_destroy (cluster);
  rd_kafka_destroy (owner);
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
}

GST_END_TEST;

/* A localhost port nothing listens on: bound, then closed. */
static guint
closed_port (void)
{
  int fd = socket (AF_INET, SOCK_STREAM, 0);
  fail_unless (fd >= 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
    .sin_addr.s_addr = htonl (INADDR_LOOPBACK)
  };
  socklen_t n = sizeof a;
  fail_unless (bind (fd, (struct sockaddr *) &a, sizeof a) == 0);
  fail_unless (getsockname (fd, (struct sockaddr *) &a, &n) == 0);
  close (fd);
  return ntohs (a.sin_port);
}

GST_START_TEST (test_kafka_unreachable_never_stalls)
{
  gchar *dir = g_dir_make_tmp ("hybridpublish-kafka-XXXXXX", NULL);
  gchar *path = g_build_filename (dir, "results.jsonl", NULL);
  gchar *brokers = g_strdup_printf ("127.0.0.1:%u", closed_port ());
  gchar *kafka = g_strdup_printf ("kafka-brokers=%s kafka-topic=" TOPIC,
      brokers);
  GstElement *pipe = ball_pipeline (path, kafka);
  g_free (kafka);
  gint frames_out = 0;
  gdouble seconds;
  gchar *warnings = play (pipe, &frames_out, &seconds);
  GstElement *publish = gst_bin_get_by_name (GST_BIN (pipe), "publish");
  guint64 sent, delivered;
  g_object_get (publish, "kafka-sent", &sent, "kafka-delivered", &delivered,
      NULL);
  gst_object_unref (publish);
  gint64 stop_start = g_get_monotonic_time ();
  gst_element_set_state (pipe, GST_STATE_NULL);
  gdouble stop_seconds = (g_get_monotonic_time () - stop_start) / 1e6;
  gst_object_unref (pipe);

  g_printerr ("unreachable brokers: %d frames in %.2f s, stop %.2f s\n",
      FRAMES, seconds, stop_seconds);
  fail_unless_equals_int (frames_out, FRAMES);
  gchar **lines = file_lines (path);
  fail_unless_equals_int (g_strv_length (lines), FRAMES + 1);
  g_strfreev (lines);
  fail_unless_equals_int (sent, FRAMES);
  fail_unless_equals_int (delivered, 0);
  /* 40 frames of the detector take about 2 s on a loaded 2-core machine;
   * a producer that waited for the broker would take its 10 s message
   * timeout per frame */
  fail_unless (seconds < 20.0, "%.1f s for %d frames", seconds, FRAMES);
  fail_unless (stop_seconds < 5.0, "the stop took %.1f s", stop_seconds);
  gchar *needle = g_strdup_printf ("Kafka brokers %s", brokers);
  const gchar *first = strstr (warnings, needle);
  fail_unless (first != NULL, "no warning naming %s in:\n%s", brokers,
      warnings);
  fail_unless (strstr (first + 1, needle) == NULL, "warned twice:\n%s",
      warnings);
  fail_unless (strstr (warnings, "retrying with a backoff") != NULL, "%s",
      warnings);
  g_free (needle);
  g_free (warnings);
  g_free (brokers);
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
}

GST_END_TEST;

/* A broker that hangs up on every connection: each attempt is an
 * accepted connection, timed. */
typedef struct {
  int fd;
  GArray *times;                /* gint64, monotonic us */
  gint stop;
} HangUp;

static gpointer
hang_up (gpointer data)
{
  HangUp *b = data;
  while (!g_atomic_int_get (&b->stop)) {
    int c = accept (b->fd, NULL, NULL);
    if (c < 0)
      continue;
    gint64 now = g_get_monotonic_time ();
    g_array_append_val (b->times, now);
    close (c);
  }
  return NULL;
}

/* The producer retries a broker that will not talk, with waits that grow
 * (librdkafka's backoff from 100 ms doubling, with jitter), not in a
 * tight loop, while the frames go on. */
GST_START_TEST (test_kafka_retries_with_backoff)
{
  HangUp b = {.fd = socket (AF_INET, SOCK_STREAM, 0),
    .times = g_array_new (FALSE, FALSE, sizeof (gint64))
  };
  struct sockaddr_in a = {.sin_family = AF_INET,
    .sin_addr.s_addr = htonl (INADDR_LOOPBACK)
  };
  socklen_t n = sizeof a;
  fail_unless (bind (b.fd, (struct sockaddr *) &a, sizeof a) == 0);
  fail_unless (getsockname (b.fd, (struct sockaddr *) &a, &n) == 0);
  fail_unless (listen (b.fd, 16) == 0);
  /* accept wakes every 100 ms to see whether to stop */
  struct timeval wake = {.tv_usec = 100000 };
  setsockopt (b.fd, SOL_SOCKET, SO_RCVTIMEO, &wake, sizeof wake);
  GThread *thread = g_thread_new ("hang-up", hang_up, &b);

  gchar *dir = g_dir_make_tmp ("hybridpublish-kafka-XXXXXX", NULL);
  gchar *path = g_build_filename (dir, "results.jsonl", NULL);
  gchar *kafka = g_strdup_printf ("kafka-brokers=127.0.0.1:%u "
      "kafka-topic=" TOPIC, ntohs (a.sin_port));
  gchar *model = g_build_filename (g_getenv ("HY_SOURCE_DIR"), "pipelines",
      "models", "ball-symbol.json", NULL);
  /* live: 7 s of frames, for four attempts or more to be seen (at 0,
   * about 0.3, 1, 3.5 s measured: the jitter moves each wait) */
  gchar *desc = g_strdup_printf ("videotestsrc is-live=true pattern=ball "
      "num-buffers=210 ! video/x-raw,width=160,height=120,framerate=30/1 "
      "! videoconvert ! hybridinfer model=%s ! hybridpublish name=publish "
      "location=%s %s ! fakesink name=sink signal-handoffs=true", model,
      path, kafka);
  GstElement *pipe = gst_parse_launch (desc, NULL);
  fail_unless (pipe != NULL);
  gint frames_out = 0;
  gdouble seconds;
  gchar *warnings = play (pipe, &frames_out, &seconds);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  g_atomic_int_set (&b.stop, 1);
  g_thread_join (thread);
  close (b.fd);

  GString *gaps = g_string_new (NULL);
  for (guint i = 1; i < b.times->len; i++)
    g_string_append_printf (gaps, " %.0f",
        (g_array_index (b.times, gint64, i)
            - g_array_index (b.times, gint64, i - 1)) / 1e3);
  g_printerr ("hang-up broker: %u attempts in %.1f s, gaps (ms):%s\n",
      b.times->len, seconds, gaps->str);
  fail_unless_equals_int (frames_out, 210);
  fail_unless (b.times->len >= 4, "%u attempts:%s", b.times->len,
      gaps->str);
  /* a tight loop would make hundreds; the waits double to 10 s */
  fail_unless (b.times->len <= 20, "%u attempts:%s", b.times->len,
      gaps->str);
  gint64 first = g_array_index (b.times, gint64, 1)
      - g_array_index (b.times, gint64, 0);
  gint64 last = g_array_index (b.times, gint64, b.times->len - 1)
      - g_array_index (b.times, gint64, b.times->len - 2);
  /* three doublings or more apart, past what the jitter can undo */
  fail_unless (last >= 2 * first, "the waits do not grow:%s", gaps->str);
  fail_unless (strstr (warnings, "Kafka brokers") != NULL, "%s", warnings);
  g_string_free (gaps, TRUE);
  g_array_unref (b.times);
  g_free (warnings);
  g_free (desc);
  g_free (model);
  g_free (kafka);
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
}

GST_END_TEST;

/* Settings no retry can fix fail the start, naming them. */
GST_START_TEST (test_kafka_bad_topic_fails_start)
{
  GstElement *pipe = gst_parse_launch ("videotestsrc num-buffers=1 "
      "! hybridpublish kafka-brokers=127.0.0.1:1 kafka-topic=a/b "
      "! fakesink", NULL);
  GstBus *bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
      GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  GError *error = NULL;
  gst_message_parse_error (msg, &error, NULL);
  fail_unless (strstr (error->message, "'a/b'") != NULL, "%s",
      error->message);
  g_error_free (error);
  gst_message_unref (msg);
  gst_object_unref (bus);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
}

GST_END_TEST;

static Suite *
publish_kafka_suite (void)
{
  Suite *s = suite_create ("publish-kafka");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_kafka_messages_are_the_file_lines);
  tcase_add_test (tc, test_kafka_unreachable_never_stalls);
  tcase_add_test (tc, test_kafka_retries_with_backoff);
  tcase_add_test (tc, test_kafka_bad_topic_fails_start);
  return s;
}

GST_CHECK_MAIN (publish_kafka);
