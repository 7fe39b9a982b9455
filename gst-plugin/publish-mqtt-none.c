/*
 * publish-mqtt-none.c — publish-mqtt.h in a build without libmosquitto:
 * asking for a broker fails at start with the reason, files still work.
 */
#include "publish-mqtt.h"

G_DEFINE_QUARK (publish-mqtt-error-quark, publish_mqtt_error);

PublishMqtt *
publish_mqtt_new (const gchar *host, guint port, const gchar *topic,
    gint qos, guint queue_limit, gchar **first_failure, GError **error)
{
  (void) host;
  (void) port;
  (void) topic;
  (void) qos;
  (void) queue_limit;
  if (first_failure)
    *first_failure = NULL;
  g_set_error (error, PUBLISH_MQTT_ERROR, 0, "this build has no MQTT: "
      "libmosquitto-dev was not installed when it was configured");
  return NULL;
}

void
publish_mqtt_free (PublishMqtt *link)
{
  (void) link;
}

gboolean
publish_mqtt_send (PublishMqtt *link, const gchar *payload, gsize length)
{
  (void) link;
  (void) payload;
  (void) length;
  return FALSE;
}

gboolean
publish_mqtt_connected (PublishMqtt *link)
{
  (void) link;
  return FALSE;
}

guint64
publish_mqtt_sent (PublishMqtt *link)
{
  (void) link;
  return 0;
}

guint64
publish_mqtt_dropped (PublishMqtt *link)
{
  (void) link;
  return 0;
}
