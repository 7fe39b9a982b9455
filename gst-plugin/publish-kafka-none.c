/*
 * publish-kafka-none.c — publish-kafka.h in a build without librdkafka:
 * asking for brokers fails at start with the reason, files still work.
 */
#include "publish-kafka.h"

G_DEFINE_QUARK (publish-kafka-error-quark, publish_kafka_error);

PublishKafka *
publish_kafka_new (const gchar *brokers, const gchar *topic,
    const gchar *client_id, guint queue_limit, GError **error)
{
  (void) brokers;
  (void) topic;
  (void) client_id;
  (void) queue_limit;
  g_set_error (error, PUBLISH_KAFKA_ERROR, 0, "this build has no Kafka: "
      "librdkafka-dev was not installed when it was configured");
  return NULL;
}

void
publish_kafka_flush (PublishKafka *link, gint flush_ms)
{
  (void) link;
  (void) flush_ms;
}

void
publish_kafka_free (PublishKafka *link)
{
  (void) link;
}

gboolean
publish_kafka_send (PublishKafka *link, const gchar *payload, gsize length)
{
  (void) link;
  (void) payload;
  (void) length;
  return FALSE;
}

gchar *
publish_kafka_poll (PublishKafka *link)
{
  (void) link;
  return NULL;
}

guint64
publish_kafka_sent (PublishKafka *link)
{
  (void) link;
  return 0;
}

guint64
publish_kafka_delivered (PublishKafka *link)
{
  (void) link;
  return 0;
}

guint64
publish_kafka_dropped (PublishKafka *link)
{
  (void) link;
  return 0;
}
