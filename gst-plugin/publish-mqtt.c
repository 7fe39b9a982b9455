/*
 * publish-mqtt.c — the MQTT side of hybridpublish (publish-mqtt.h).
 *
 * libmosquitto's own thread (mosquitto_loop_start) connects, reconnects
 * with the backoff set here, and writes the queued messages; the
 * callbacks below run on it and only move atomics, which the streaming
 * thread reads without a lock.
 */
#include "publish-mqtt.h"

#include <errno.h>

#include <mosquitto.h>

#define RECONNECT_FIRST_S 1
#define RECONNECT_LAST_S 30
#define KEEPALIVE_S 30

struct _PublishMqtt {
  struct mosquitto *client;
  gchar *topic;
  gint qos;
  guint queue_limit;
  gint connected;               /* atomic */
  gint queued;                  /* atomic: published, not yet written */
  guint64 sent, dropped;        /* streaming thread only */
};

static gpointer
library_init (gpointer unused)
{
  (void) unused;
  /* once per process: never cleaned up, other users may share it */
  mosquitto_lib_init ();
  return NULL;
}

static void
on_connect (struct mosquitto *client, void *data, int rc)
{
  PublishMqtt *link = data;
  (void) client;
  g_atomic_int_set (&link->connected, rc == 0);
}

static void
on_disconnect (struct mosquitto *client, void *data, int rc)
{
  PublishMqtt *link = data;
  (void) client;
  (void) rc;
  g_atomic_int_set (&link->connected, FALSE);
  /* what was queued for the lost connection is gone with it */
  g_atomic_int_set (&link->queued, 0);
}

static void
on_publish (struct mosquitto *client, void *data, int mid)
{
  PublishMqtt *link = data;
  (void) client;
  (void) mid;
  if (g_atomic_int_get (&link->queued) > 0)
    g_atomic_int_add (&link->queued, -1);
}

G_DEFINE_QUARK (publish-mqtt-error-quark, publish_mqtt_error);

PublishMqtt *
publish_mqtt_new (const gchar *host, guint port, const gchar *topic,
    gint qos, guint queue_limit, gchar **first_failure, GError **error)
{
  static GOnce once = G_ONCE_INIT;
  g_once (&once, library_init, NULL);

  if (!topic || !*topic || mosquitto_pub_topic_check (topic) != MOSQ_ERR_SUCCESS) {
    g_set_error (error, PUBLISH_MQTT_ERROR, 0,
        "MQTT topic '%s' is not a topic one may publish to (no wildcards "
        "+ or #, not empty)", topic ? topic : "");
    return NULL;
  }
  PublishMqtt *link = g_new0 (PublishMqtt, 1);
  link->topic = g_strdup (topic);
  link->qos = qos;
  link->queue_limit = queue_limit;
  link->client = mosquitto_new (NULL, TRUE, link);
  if (!link->client) {
    g_set_error (error, PUBLISH_MQTT_ERROR, 0,
        "could not make an MQTT client (out of memory)");
    g_free (link->topic);
    g_free (link);
    return NULL;
  }
  mosquitto_connect_callback_set (link->client, on_connect);
  mosquitto_disconnect_callback_set (link->client, on_disconnect);
  mosquitto_publish_callback_set (link->client, on_publish);
  mosquitto_reconnect_delay_set (link->client, RECONNECT_FIRST_S,
      RECONNECT_LAST_S, TRUE);
  /* A broker that is down now is retried by the loop: not an error. */
  int rc = mosquitto_connect_async (link->client, host, (int) port,
      KEEPALIVE_S);
  if (first_failure)
    *first_failure = rc == MOSQ_ERR_SUCCESS ? NULL
        : g_strdup (rc == MOSQ_ERR_ERRNO ? g_strerror (errno)
        : mosquitto_strerror (rc));
  rc = mosquitto_loop_start (link->client);
  if (rc != MOSQ_ERR_SUCCESS) {
    g_set_error (error, PUBLISH_MQTT_ERROR, 0,
        "could not start the MQTT client's thread: %s",
        mosquitto_strerror (rc));
    mosquitto_destroy (link->client);
    g_free (link->topic);
    g_free (link);
    return NULL;
  }
  return link;
}

void
publish_mqtt_free (PublishMqtt *link)
{
  if (!link)
    return;
  mosquitto_disconnect (link->client);
  /* not forced: the loop wakes from a reconnect wait when told to stop */
  mosquitto_loop_stop (link->client, FALSE);
  mosquitto_destroy (link->client);
  g_free (link->topic);
  g_free (link);
}

gboolean
publish_mqtt_send (PublishMqtt *link, const gchar *payload, gsize length)
{
  if (!g_atomic_int_get (&link->connected)
      || (guint) g_atomic_int_get (&link->queued) >= link->queue_limit
      || length > G_MAXINT) {
    link->dropped++;
    return FALSE;
  }
  g_atomic_int_inc (&link->queued);
  int rc = mosquitto_publish (link->client, NULL, link->topic, (int) length,
      payload, link->qos, FALSE);
  if (rc != MOSQ_ERR_SUCCESS) {
    g_atomic_int_add (&link->queued, -1);
    link->dropped++;
    return FALSE;
  }
  link->sent++;
  return TRUE;
}

gboolean
publish_mqtt_connected (PublishMqtt *link)
{
  return g_atomic_int_get (&link->connected);
}

guint64
publish_mqtt_sent (PublishMqtt *link)
{
  return link->sent;
}

guint64
publish_mqtt_dropped (PublishMqtt *link)
{
  return link->dropped;
}
