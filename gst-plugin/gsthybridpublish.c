/*
 * gsthybridpublish.c — hybridpublish: every buffer's results as a line of
 * JSON in a file and an MQTT message (docs/ELEMENT.md, "hybridpublish").
 *
 * A passthrough GstBaseTransform: one object per buffer, built from its
 * tensor meta and regions of interest by publish-json.c.  Each line is
 * flushed as it is written, so a reader following the file sees whole
 * objects only.  With mqtt-host set the same object is also published
 * to an MQTT broker (publish-mqtt.h: never waits for the broker; drops
 * while it is away), and with kafka-brokers to a Kafka topic
 * (publish-kafka.h: never waits either; retries with backoff, a warning
 * on the bus once per outage).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsthybridpublish.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "publish-json.h"
#include "refuse-while-running.h"
#include "publish-mqtt.h"
#include "publish-kafka.h"

GST_DEBUG_CATEGORY_STATIC (gst_hybrid_publish_debug);
#define GST_CAT_DEFAULT gst_hybrid_publish_debug

#define DEFAULT_MQTT_PORT 1883
#define DEFAULT_MQTT_TOPIC "hybridinfer/results"
#define DEFAULT_MQTT_QOS 0
#define DEFAULT_MQTT_QUEUE 100
#define DEFAULT_KAFKA_TOPIC "hybridinfer-results"
#define DEFAULT_KAFKA_QUEUE 1000
/* what a stop gives reachable brokers for the messages still queued */
#define KAFKA_FLUSH_MS 2000

enum
{
  PROP_0,
  PROP_LOCATION,
  PROP_MQTT_HOST,
  PROP_MQTT_PORT,
  PROP_MQTT_TOPIC,
  PROP_MQTT_QOS,
  PROP_MQTT_QUEUE,
  PROP_MQTT_CONNECTED,
  PROP_MQTT_SENT,
  PROP_MQTT_DROPPED,
  PROP_KAFKA_BROKERS,
  PROP_KAFKA_TOPIC,
  PROP_KAFKA_CLIENT_ID,
  PROP_KAFKA_QUEUE,
  PROP_KAFKA_SENT,
  PROP_KAFKA_DELIVERED,
  PROP_KAFKA_DROPPED,
};

struct _GstHybridPublish
{
  GstBaseTransform parent;

  /* under the object lock */
  gchar *location;
  gchar *mqtt_host, *mqtt_topic;
  guint mqtt_port, mqtt_queue;
  gint mqtt_qos;
  guint64 mqtt_sent, mqtt_dropped;      /* copies of the link's counts */
  gchar *kafka_brokers, *kafka_topic, *kafka_client_id;
  guint kafka_queue;
  guint64 kafka_sent, kafka_delivered, kafka_dropped;   /* copies, too */

  /* streaming thread only (and start/stop) */
  FILE *file;
  PublishMqtt *mqtt;
  PublishKafka *kafka;
  gchar *kafka_said;            /* the brokers, for the outage's warning */
  guint64 frame;
  JsonBuilder *builder;
  JsonGenerator *generator;
};

G_DEFINE_TYPE (GstHybridPublish, gst_hybrid_publish, GST_TYPE_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE (hybridpublish, "hybridpublish", GST_RANK_NONE,
    GST_TYPE_HYBRID_PUBLISH);

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void
gst_hybrid_publish_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstHybridPublish *self = GST_HYBRID_PUBLISH (object);

  /* Every setting is taken at start: a change while running would not
   * apply, so it is refused aloud rather than kept silently. */
  GST_OBJECT_LOCK (self);
  if (gst_hybrid_refuse_while_running (GST_ELEMENT (self), pspec, NULL))
    return;
  switch (prop_id) {
    case PROP_LOCATION:
      g_free (self->location);
      self->location = g_value_dup_string (value);
      break;
    case PROP_MQTT_HOST:
      g_free (self->mqtt_host);
      self->mqtt_host = g_value_dup_string (value);
      break;
    case PROP_MQTT_PORT:
      self->mqtt_port = g_value_get_uint (value);
      break;
    case PROP_MQTT_TOPIC:
      g_free (self->mqtt_topic);
      self->mqtt_topic = g_value_dup_string (value);
      break;
    case PROP_MQTT_QOS:
      self->mqtt_qos = g_value_get_int (value);
      break;
    case PROP_MQTT_QUEUE:
      self->mqtt_queue = g_value_get_uint (value);
      break;
    case PROP_KAFKA_BROKERS:
      g_free (self->kafka_brokers);
      self->kafka_brokers = g_value_dup_string (value);
      break;
    case PROP_KAFKA_TOPIC:
      g_free (self->kafka_topic);
      self->kafka_topic = g_value_dup_string (value);
      break;
    case PROP_KAFKA_CLIENT_ID:
      g_free (self->kafka_client_id);
      self->kafka_client_id = g_value_dup_string (value);
      break;
    case PROP_KAFKA_QUEUE:
      self->kafka_queue = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_hybrid_publish_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstHybridPublish *self = GST_HYBRID_PUBLISH (object);

  switch (prop_id) {
    case PROP_LOCATION:
      GST_OBJECT_LOCK (self);
      g_value_set_string (value, self->location);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_MQTT_HOST:
      GST_OBJECT_LOCK (self);
      g_value_set_string (value, self->mqtt_host);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_MQTT_PORT:
      GST_OBJECT_LOCK (self);
      g_value_set_uint (value, self->mqtt_port);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_MQTT_TOPIC:
      GST_OBJECT_LOCK (self);
      g_value_set_string (value, self->mqtt_topic);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_MQTT_QOS:
      GST_OBJECT_LOCK (self);
      g_value_set_int (value, self->mqtt_qos);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_MQTT_QUEUE:
      GST_OBJECT_LOCK (self);
      g_value_set_uint (value, self->mqtt_queue);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_MQTT_CONNECTED:
      /* the link lives from start to stop, under the state lock */
      GST_OBJECT_LOCK (self);
      g_value_set_boolean (value, self->mqtt
          && publish_mqtt_connected (self->mqtt));
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_MQTT_SENT:
      GST_OBJECT_LOCK (self);
      g_value_set_uint64 (value, self->mqtt_sent);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_MQTT_DROPPED:
      GST_OBJECT_LOCK (self);
      g_value_set_uint64 (value, self->mqtt_dropped);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_KAFKA_BROKERS:
      GST_OBJECT_LOCK (self);
      g_value_set_string (value, self->kafka_brokers);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_KAFKA_TOPIC:
      GST_OBJECT_LOCK (self);
      g_value_set_string (value, self->kafka_topic);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_KAFKA_CLIENT_ID:
      GST_OBJECT_LOCK (self);
      g_value_set_string (value, self->kafka_client_id);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_KAFKA_QUEUE:
      GST_OBJECT_LOCK (self);
      g_value_set_uint (value, self->kafka_queue);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_KAFKA_SENT:
      GST_OBJECT_LOCK (self);
      g_value_set_uint64 (value, self->kafka_sent);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_KAFKA_DELIVERED:
      GST_OBJECT_LOCK (self);
      g_value_set_uint64 (value, self->kafka_delivered);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_KAFKA_DROPPED:
      GST_OBJECT_LOCK (self);
      g_value_set_uint64 (value, self->kafka_dropped);
      GST_OBJECT_UNLOCK (self);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static gboolean
gst_hybrid_publish_start (GstBaseTransform * trans)
{
  GstHybridPublish *self = GST_HYBRID_PUBLISH (trans);

  GST_OBJECT_LOCK (self);
  gchar *location = g_strdup (self->location);
  gchar *host = g_strdup (self->mqtt_host);
  gchar *topic = g_strdup (self->mqtt_topic);
  guint port = self->mqtt_port, queue = self->mqtt_queue;
  gint qos = self->mqtt_qos;
  gchar *brokers = g_strdup (self->kafka_brokers);
  gchar *kafka_topic = g_strdup (self->kafka_topic);
  gchar *client_id = g_strdup (self->kafka_client_id);
  guint kafka_queue = self->kafka_queue;
  self->mqtt_sent = self->mqtt_dropped = 0;
  self->kafka_sent = self->kafka_delivered = self->kafka_dropped = 0;
  GST_OBJECT_UNLOCK (self);
  gboolean ok = TRUE;
  if ((!location || !*location) && (!host || !*host)
      && (!brokers || !*brokers)) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("Nowhere to send the results"),
        ("none of location, mqtt-host, kafka-brokers is set"));
    ok = FALSE;
  }
  if (ok && location && *location && !(self->file = g_fopen (location, "w"))) {
    int err = errno;
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE,
        ("Could not open %s for writing: %s", location, g_strerror (err)),
        ("location %s", location));
    ok = FALSE;
  }
  if (ok && host && *host) {
    gchar *first_failure = NULL;
    GError *error = NULL;
    self->mqtt = publish_mqtt_new (host, port, topic, qos, queue,
        &first_failure, &error);
    if (!self->mqtt) {
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
          ("MQTT %s:%u, topic %s: %s", host, port, topic ? topic : "",
              error->message), (NULL));
      g_error_free (error);
      ok = FALSE;
    } else if (first_failure) {
      /* The broker may come later: a warning, and the retries go on. */
      GST_ELEMENT_WARNING (self, RESOURCE, OPEN_WRITE,
          ("MQTT broker %s:%u: %s", host, port, first_failure),
          ("retrying after 1 s, 4 s, 9 s... then every 30 s; results are "
              "dropped meanwhile"));
      g_free (first_failure);
    }
  }
  if (ok && brokers && *brokers) {
    GError *error = NULL;
    self->kafka = publish_kafka_new (brokers, kafka_topic, client_id,
        kafka_queue, &error);
    if (!self->kafka) {
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
          ("Kafka %s, topic %s: %s", brokers, kafka_topic ? kafka_topic : "",
              error->message), (NULL));
      g_error_free (error);
      ok = FALSE;
    } else {
      self->kafka_said = g_strdup (brokers);
    }
  }
  g_free (location);
  g_free (host);
  g_free (topic);
  g_free (brokers);
  g_free (kafka_topic);
  g_free (client_id);
  if (!ok) {
    if (self->file)
      fclose (self->file);
    self->file = NULL;
    if (self->mqtt)
      publish_mqtt_free (self->mqtt);
    self->mqtt = NULL;
    return FALSE;
  }
  self->frame = 0;
  self->builder = json_builder_new ();
  self->generator = json_generator_new ();
  return TRUE;
}

/* The producer's reports, served on this thread; brokers out of reach
 * are a warning once per outage, and the retries go on. */
static void
kafka_poll (GstHybridPublish * self)
{
  gchar *reason = publish_kafka_poll (self->kafka);
  if (reason) {
    GST_ELEMENT_WARNING (self, RESOURCE, OPEN_WRITE,
        ("Kafka brokers %s: %s", self->kafka_said, reason),
        ("retrying with a backoff from %d ms doubling to %d ms; a message "
            "no broker took within %d ms is dropped",
            PUBLISH_KAFKA_BACKOFF_FIRST_MS, PUBLISH_KAFKA_BACKOFF_LAST_MS,
            PUBLISH_KAFKA_MESSAGE_TIMEOUT_MS));
    g_free (reason);
  }
  GST_OBJECT_LOCK (self);
  self->kafka_sent = publish_kafka_sent (self->kafka);
  self->kafka_delivered = publish_kafka_delivered (self->kafka);
  self->kafka_dropped = publish_kafka_dropped (self->kafka);
  GST_OBJECT_UNLOCK (self);
}

static gboolean
gst_hybrid_publish_stop (GstBaseTransform * trans)
{
  GstHybridPublish *self = GST_HYBRID_PUBLISH (trans);
  gboolean ok = TRUE;

  if (self->file && fclose (self->file) != 0) {
    int err = errno;
    GST_ELEMENT_WARNING (self, RESOURCE, CLOSE, (NULL),
        ("closing the results file: %s", g_strerror (err)));
    ok = FALSE;
  }
  self->file = NULL;
  if (self->mqtt) {
    PublishMqtt *mqtt = self->mqtt;
    GST_OBJECT_LOCK (self);
    self->mqtt = NULL;
    GST_OBJECT_UNLOCK (self);
    publish_mqtt_free (mqtt);
  }
  if (self->kafka) {
    /* the last frames' messages delivered and counted, an outage met in
     * them told still */
    publish_kafka_flush (self->kafka, KAFKA_FLUSH_MS);
    kafka_poll (self);
    PublishKafka *kafka = self->kafka;
    GST_OBJECT_LOCK (self);
    self->kafka = NULL;
    GST_OBJECT_UNLOCK (self);
    publish_kafka_free (kafka);
  }
  g_clear_pointer (&self->kafka_said, g_free);
  g_clear_object (&self->builder);
  g_clear_object (&self->generator);
  return ok;
}

static GstFlowReturn
gst_hybrid_publish_transform_ip (GstBaseTransform * trans, GstBuffer * buf)
{
  GstHybridPublish *self = GST_HYBRID_PUBLISH (trans);

  gst_hybrid_publish_build_json (self->builder, buf, self->frame);
  JsonNode *root = json_builder_get_root (self->builder);
  json_generator_set_root (self->generator, root);
  gsize length;
  gchar *line = json_generator_to_data (self->generator, &length);
  json_generator_set_root (self->generator, NULL);
  json_node_unref (root);
  self->frame++;

  if (self->mqtt) {
    publish_mqtt_send (self->mqtt, line, length);
    GST_OBJECT_LOCK (self);
    self->mqtt_sent = publish_mqtt_sent (self->mqtt);
    self->mqtt_dropped = publish_mqtt_dropped (self->mqtt);
    GST_OBJECT_UNLOCK (self);
  }
  if (self->kafka) {
    publish_kafka_send (self->kafka, line, length);
    kafka_poll (self);
  }
  gboolean ok = !self->file || (fwrite (line, 1, length, self->file) == length
      && fputc ('\n', self->file) != EOF && fflush (self->file) == 0);
  int err = errno;
  g_free (line);
  if (!ok) {
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
        ("Could not write the results: %s", g_strerror (err)),
        ("frame %" G_GUINT64_FORMAT, self->frame - 1));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

static void
gst_hybrid_publish_finalize (GObject * object)
{
  GstHybridPublish *self = GST_HYBRID_PUBLISH (object);
  g_free (self->location);
  g_free (self->mqtt_host);
  g_free (self->mqtt_topic);
  g_free (self->kafka_brokers);
  g_free (self->kafka_topic);
  g_free (self->kafka_client_id);
  G_OBJECT_CLASS (gst_hybrid_publish_parent_class)->finalize (object);
}

static void
gst_hybrid_publish_class_init (GstHybridPublishClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->set_property = gst_hybrid_publish_set_property;
  gobject_class->get_property = gst_hybrid_publish_get_property;
  gobject_class->finalize = gst_hybrid_publish_finalize;

  g_object_class_install_property (gobject_class, PROP_LOCATION,
      g_param_spec_string ("location", "Location",
          "The file the results are written to, one JSON object per buffer "
          "and line (created or truncated at start); NULL: no file", NULL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_MQTT_HOST,
      g_param_spec_string ("mqtt-host", "MQTT host",
          "The MQTT broker the results are also published to; NULL: none",
          NULL, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_MQTT_PORT,
      g_param_spec_uint ("mqtt-port", "MQTT port", "The broker's port",
          1, 65535, DEFAULT_MQTT_PORT, G_PARAM_READWRITE |
          G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_MQTT_TOPIC,
      g_param_spec_string ("mqtt-topic", "MQTT topic",
          "The topic each buffer's object is published to (no wildcards)",
          DEFAULT_MQTT_TOPIC, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_MQTT_QOS,
      g_param_spec_int ("mqtt-qos", "MQTT QoS",
          "MQTT quality of service: 0 at most once, 1 at least once, 2 "
          "exactly once (while connected)", 0, 2, DEFAULT_MQTT_QOS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_MQTT_QUEUE,
      g_param_spec_uint ("mqtt-queue", "MQTT queue",
          "Messages that may wait to be sent; past that they are dropped, "
          "never waited for", 1, 1000000, DEFAULT_MQTT_QUEUE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_MQTT_CONNECTED,
      g_param_spec_boolean ("mqtt-connected", "MQTT connected",
          "Whether the broker is connected now", FALSE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_MQTT_SENT,
      g_param_spec_uint64 ("mqtt-sent", "MQTT sent",
          "Messages handed to the MQTT client since start", 0, G_MAXUINT64,
          0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_MQTT_DROPPED,
      g_param_spec_uint64 ("mqtt-dropped", "MQTT dropped",
          "Messages dropped since start: broker away or queue full", 0,
          G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_KAFKA_BROKERS,
      g_param_spec_string ("kafka-brokers", "Kafka brokers",
          "The Kafka brokers the results are also published to, "
          "host:port,host:port... (bootstrap servers); NULL: none", NULL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_KAFKA_TOPIC,
      g_param_spec_string ("kafka-topic", "Kafka topic",
          "The topic each buffer's object is produced to",
          DEFAULT_KAFKA_TOPIC, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_KAFKA_CLIENT_ID,
      g_param_spec_string ("kafka-client-id", "Kafka client id",
          "The client id the brokers see; NULL: librdkafka's (rdkafka)",
          NULL, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_KAFKA_QUEUE,
      g_param_spec_uint ("kafka-queue", "Kafka queue",
          "Messages that may wait to be delivered; past that they are "
          "dropped, never waited for", 1, 1000000, DEFAULT_KAFKA_QUEUE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_KAFKA_SENT,
      g_param_spec_uint64 ("kafka-sent", "Kafka sent",
          "Messages handed to the Kafka producer since start", 0,
          G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_KAFKA_DELIVERED,
      g_param_spec_uint64 ("kafka-delivered", "Kafka delivered",
          "Messages a broker acknowledged since start", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_KAFKA_DROPPED,
      g_param_spec_uint64 ("kafka-dropped", "Kafka dropped",
          "Messages dropped since start: queue full, or no broker took "
          "them in time", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_set_static_metadata (element_class,
      "Hybrid results publisher", "Sink/Analyzer/Video",
      "Writes each buffer's results (classes, boxes, track ids, scores) "
      "as JSON lines to a file, an MQTT broker and Kafka", "hybridinfer");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);

  trans_class->start = GST_DEBUG_FUNCPTR (gst_hybrid_publish_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_hybrid_publish_stop);
  trans_class->transform_ip =
      GST_DEBUG_FUNCPTR (gst_hybrid_publish_transform_ip);

  GST_DEBUG_CATEGORY_INIT (gst_hybrid_publish_debug, "hybridpublish", 0,
      "hybridinfer's results as JSON");
}

static void
gst_hybrid_publish_init (GstHybridPublish * self)
{
  self->mqtt_port = DEFAULT_MQTT_PORT;
  self->mqtt_topic = g_strdup (DEFAULT_MQTT_TOPIC);
  self->mqtt_qos = DEFAULT_MQTT_QOS;
  self->mqtt_queue = DEFAULT_MQTT_QUEUE;
  self->kafka_topic = g_strdup (DEFAULT_KAFKA_TOPIC);
  self->kafka_queue = DEFAULT_KAFKA_QUEUE;
  /* reads the metas, changes nothing */
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), TRUE);
}
