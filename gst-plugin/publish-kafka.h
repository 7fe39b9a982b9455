/*
 * publish-kafka.h — results to Kafka brokers without ever waiting for
 * them (librdkafka; no GStreamer here).
 *
 * A link owns one librdkafka producer: its own threads connect to the
 * brokers, retry with librdkafka's exponential backoff
 * (reconnect.backoff.ms doubling up to reconnect.backoff.max.ms) and
 * write the batches; publishing only copies the message into the
 * producer's queue and returns.  At most `queue_limit` messages wait to
 * be delivered; past that, and for a message no broker took within the
 * message timeout, it is dropped and counted.  The producer's callbacks
 * (delivery reports, errors) run only inside publish_kafka_poll(), on the
 * caller's thread.
 */
#ifndef PUBLISH_KAFKA_H
#define PUBLISH_KAFKA_H

#include <glib.h>

G_BEGIN_DECLS

typedef struct _PublishKafka PublishKafka;

#define PUBLISH_KAFKA_ERROR (publish_kafka_error_quark ())
GQuark publish_kafka_error_quark (void);

/* How long a message may wait for a broker before it is dropped. */
#define PUBLISH_KAFKA_MESSAGE_TIMEOUT_MS 10000
/* The reconnect backoff: the first wait, doubled (with jitter) after
 * each failure up to the last. */
#define PUBLISH_KAFKA_BACKOFF_FIRST_MS 100
#define PUBLISH_KAFKA_BACKOFF_LAST_MS 10000

/* Makes the producer and returns; the brokers are connected in the
 * background.  NULL and `error` only for what no retry can fix (an empty
 * broker list or topic, a setting librdkafka refuses). */
PublishKafka *publish_kafka_new (const gchar * brokers, const gchar * topic,
    const gchar * client_id, guint queue_limit, GError ** error);
/* Gives reachable brokers at most `flush_ms` for what is queued (none
 * while they are away: a stop never waits for them). */
void publish_kafka_flush (PublishKafka * link, gint flush_ms);
/* Drops what is still queued and frees the producer. */
void publish_kafka_free (PublishKafka * link);

/* Queues one message (copied); FALSE when it was dropped (queue full). */
gboolean publish_kafka_send (PublishKafka * link, const gchar * payload,
    gsize length);

/* Runs the producer's callbacks due now (never waits).  Returns, once per
 * outage, why the brokers cannot be reached (free it), NULL otherwise;
 * an outage ends when a message is delivered. */
gchar *publish_kafka_poll (PublishKafka * link);

guint64 publish_kafka_sent (PublishKafka * link);
guint64 publish_kafka_delivered (PublishKafka * link);
guint64 publish_kafka_dropped (PublishKafka * link);

G_END_DECLS
#endif /* PUBLISH_KAFKA_H */
