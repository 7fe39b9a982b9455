/*
 * publish-mqtt.h — results to an MQTT broker without ever waiting for it
 * (libmosquitto; no GStreamer here).
 *
 * A link owns one MQTT client whose network loop runs on its own thread:
 * publishing only copies the message into the client's queue and returns.
 * While the broker cannot be reached messages are dropped, not queued
 * (a camera's results are worth little late, and a queue would grow
 * without bound), and the client reconnects with libmosquitto's growing
 * backoff: 1 s after the loss, then 4 s, 9 s, 16 s, 25 s, and every 30 s.  At most `queue_limit` messages wait to be sent; past
 * that a message is dropped too.
 */
#ifndef PUBLISH_MQTT_H
#define PUBLISH_MQTT_H

#include <glib.h>

G_BEGIN_DECLS

typedef struct _PublishMqtt PublishMqtt;

#define PUBLISH_MQTT_ERROR (publish_mqtt_error_quark ())
GQuark publish_mqtt_error_quark (void);

/* Starts connecting in the background and returns; NULL and `error`
 * only for what no retry can fix (a bad topic, no thread).  A first
 * attempt that failed at once (a host that does not resolve) is retried
 * all the same; its reason goes to `first_failure` (NULL when none; free
 * it). */
PublishMqtt *publish_mqtt_new (const gchar * host, guint port,
    const gchar * topic, gint qos, guint queue_limit, gchar ** first_failure,
    GError ** error);
/* Disconnects and joins the network thread (never waits for a broker). */
void publish_mqtt_free (PublishMqtt * link);

/* Queues one message; FALSE when it was dropped (not connected, or the
 * queue full). */
gboolean publish_mqtt_send (PublishMqtt * link, const gchar * payload,
    gsize length);

gboolean publish_mqtt_connected (PublishMqtt * link);
guint64 publish_mqtt_sent (PublishMqtt * link);
guint64 publish_mqtt_dropped (PublishMqtt * link);

G_END_DECLS
#endif /* PUBLISH_MQTT_H */
