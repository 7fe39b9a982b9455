/*
 * publish-kafka.c — the Kafka side of hybridpublish (publish-kafka.h).
 *
 * librdkafka's threads connect, reconnect with the backoff set here and
 * write the batches.  No background event callback is set, so the
 * delivery reports and errors wait in the producer until
 * publish_kafka_poll() serves them on the streaming thread: the counts
 * and the outage's reason are that thread's alone, no lock needed.
 */
#include "publish-kafka.h"

#include <string.h>

#include <librdkafka/rdkafka.h>

/* Kafka's own limit on a topic's name, and its characters. */
#define TOPIC_MAX 249
#define TOPIC_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" \
    "0123456789._-"

struct _PublishKafka {
  rd_kafka_t *producer;
  rd_kafka_topic_t *topic;
  guint64 sent, delivered, dropped;
  /* an outage: told once (publish_kafka_poll), until a delivery ends it */
  gboolean in_outage, told;
  gchar *reason;
};

G_DEFINE_QUARK (publish-kafka-error-quark, publish_kafka_error);

static void
on_delivery (rd_kafka_t *rk, const rd_kafka_message_t *message, void *data)
{
  PublishKafka *link = data;
  (void) rk;
  if (message->err) {
    link->dropped++;
    return;
  }
  link->delivered++;
  link->in_outage = link->told = FALSE;
}

static void
on_error (rd_kafka_t *rk, int err, const char *reason, void *data)
{
  PublishKafka *link = data;
  (void) rk;
  (void) err;
  link->in_outage = TRUE;
  if (!link->told && !link->reason)
    link->reason = g_strdup (reason);
}

/* librdkafka's log lines (it retries aloud, from its own threads): at
 * GLib's debug level, the outage itself is told by publish_kafka_poll. */
static void
on_log (const rd_kafka_t *rk, int level, const char *facility,
    const char *line)
{
  (void) rk;
  g_log ("hybridpublish-kafka", G_LOG_LEVEL_DEBUG, "%d %s: %s", level,
      facility, line);
}

static gboolean
topic_valid (const gchar *topic)
{
  gsize n = topic ? strlen (topic) : 0;
  return n > 0 && n <= TOPIC_MAX && strspn (topic, TOPIC_CHARS) == n
      && strcmp (topic, ".") != 0 && strcmp (topic, "..") != 0;
}

static gboolean
set (rd_kafka_conf_t *conf, const char *name, const char *value,
    GError **error)
{
  char why[256];
  if (rd_kafka_conf_set (conf, name, value, why, sizeof why)
      == RD_KAFKA_CONF_OK)
    return TRUE;
  g_set_error (error, PUBLISH_KAFKA_ERROR, 0, "%s=%s: %s", name, value, why);
  return FALSE;
}

static gboolean
configure (rd_kafka_conf_t *conf, const gchar *brokers,
    const gchar *client_id, guint queue_limit, GError **error)
{
  gchar queue[16], timeout[16], first[16], last[16];
  g_snprintf (queue, sizeof queue, "%u", queue_limit);
  g_snprintf (timeout, sizeof timeout, "%d", PUBLISH_KAFKA_MESSAGE_TIMEOUT_MS);
  g_snprintf (first, sizeof first, "%d", PUBLISH_KAFKA_BACKOFF_FIRST_MS);
  g_snprintf (last, sizeof last, "%d", PUBLISH_KAFKA_BACKOFF_LAST_MS);
  return set (conf, "bootstrap.servers", brokers, error)
      && (!client_id || !*client_id
      || set (conf, "client.id", client_id, error))
      && set (conf, "queue.buffering.max.messages", queue, error)
      && set (conf, "message.timeout.ms", timeout, error)
      && set (conf, "reconnect.backoff.ms", first, error)
      && set (conf, "reconnect.backoff.max.ms", last, error);
}

PublishKafka *
publish_kafka_new (const gchar *brokers, const gchar *topic,
    const gchar *client_id, guint queue_limit, GError **error)
{
  if (!brokers || !*brokers) {
    g_set_error (error, PUBLISH_KAFKA_ERROR, 0, "no Kafka broker given");
    return NULL;
  }
  if (!topic_valid (topic)) {
    g_set_error (error, PUBLISH_KAFKA_ERROR, 0, "Kafka topic '%s' is not "
        "a topic name (1 to %d of a-z, A-Z, 0-9, '.', '_', '-')",
        topic ? topic : "", TOPIC_MAX);
    return NULL;
  }
  PublishKafka *link = g_new0 (PublishKafka, 1);
  rd_kafka_conf_t *conf = rd_kafka_conf_new ();
  if (!configure (conf, brokers, client_id, queue_limit, error)) {
    rd_kafka_conf_destroy (conf);
    g_free (link);
    return NULL;
  }
  rd_kafka_conf_set_opaque (conf, link);
  rd_kafka_conf_set_dr_msg_cb (conf, on_delivery);
  rd_kafka_conf_set_error_cb (conf, on_error);
  rd_kafka_conf_set_log_cb (conf, on_log);
  char why[512];
  /* owns conf from here, even when it fails */
  link->producer = rd_kafka_new (RD_KAFKA_PRODUCER, conf, why, sizeof why);
  if (!link->producer) {
    g_set_error (error, PUBLISH_KAFKA_ERROR, 0, "could not make a Kafka "
        "producer: %s", why);
    g_free (link);
    return NULL;
  }
  link->topic = rd_kafka_topic_new (link->producer, topic, NULL);
  if (!link->topic) {
    g_set_error (error, PUBLISH_KAFKA_ERROR, 0, "Kafka topic '%s': %s",
        topic, rd_kafka_err2str (rd_kafka_last_error ()));
    rd_kafka_destroy (link->producer);
    g_free (link);
    return NULL;
  }
  return link;
}

void
publish_kafka_flush (PublishKafka *link, gint flush_ms)
{
  if (!link->in_outage)
    rd_kafka_flush (link->producer, flush_ms);
}

void
publish_kafka_free (PublishKafka *link)
{
  if (!link)
    return;
  rd_kafka_purge (link->producer,
      RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  rd_kafka_poll (link->producer, 0);    /* the purged messages' reports */
  rd_kafka_topic_destroy (link->topic);
  rd_kafka_destroy (link->producer);
  g_free (link->reason);
  g_free (link);
}

gboolean
publish_kafka_send (PublishKafka *link, const gchar *payload, gsize length)
{
  if (rd_kafka_produce (link->topic, RD_KAFKA_PARTITION_UA,
          RD_KAFKA_MSG_F_COPY, (void *) payload, length, NULL, 0,
          NULL) != 0) {
    link->dropped++;
    return FALSE;
  }
  link->sent++;
  return TRUE;
}

gchar *
publish_kafka_poll (PublishKafka *link)
{
  rd_kafka_poll (link->producer, 0);
  if (!link->reason)
    return NULL;
  gchar *reason = link->reason;
  link->reason = NULL;
  link->told = TRUE;
  return reason;
}

guint64
publish_kafka_sent (PublishKafka *link)
{
  return link->sent;
}

guint64
publish_kafka_delivered (PublishKafka *link)
{
  return link->delivered;
}

guint64
publish_kafka_dropped (PublishKafka *link)
{
  return link->dropped;
}
