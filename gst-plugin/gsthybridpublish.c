/*
 * gsthybridpublish.c — hybridpublish: every buffer's results as a line of
 * JSON in a file (docs/ELEMENT.md, "hybridpublish", for the schema).
 *
 * A passthrough GstBaseTransform: it reads the tensor meta (the frame a
 * result came from, a classification's classes) and the regions of
 * interest (boxes, as hybridtrack left them, with their track ids), and
 * writes one object per buffer.  Each line is flushed as it is written,
 * so a reader following the file sees whole objects only.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsthybridpublish.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>
#include <gst/hybrid/hybridmeta.h>
#include <gst/video/video.h>
#include <json-glib/json-glib.h>

GST_DEBUG_CATEGORY_STATIC (gst_hybrid_publish_debug);
#define GST_CAT_DEFAULT gst_hybrid_publish_debug

enum
{
  PROP_0,
  PROP_LOCATION,
};

struct _GstHybridPublish
{
  GstBaseTransform parent;

  gchar *location;              /* under the object lock */

  /* streaming thread only (and start/stop) */
  FILE *file;
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

  switch (prop_id) {
    case PROP_LOCATION:{
      GstState state;
      GST_OBJECT_LOCK (self);
      state = GST_STATE (self);
      if (state > GST_STATE_READY) {
        GST_OBJECT_UNLOCK (self);
        GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS, (NULL),
            ("location can only change in the NULL or READY state: the "
                "file open stays"));
        break;
      }
      g_free (self->location);
      self->location = g_value_dup_string (value);
      GST_OBJECT_UNLOCK (self);
      break;
    }
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
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
  GST_OBJECT_UNLOCK (self);
  if (!location || !*location) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No file to write the results to"),
        ("the location property is not set"));
    g_free (location);
    return FALSE;
  }
  self->file = g_fopen (location, "w");
  if (!self->file) {
    int err = errno;
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE,
        ("Could not open %s for writing: %s", location, g_strerror (err)),
        ("location %s", location));
    g_free (location);
    return FALSE;
  }
  g_free (location);
  self->frame = 0;
  self->builder = json_builder_new ();
  self->generator = json_generator_new ();
  return TRUE;
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
  g_clear_object (&self->builder);
  g_clear_object (&self->generator);
  return ok;
}

static void
add_classes (JsonBuilder * b, const GstHybridTensorMeta * tm)
{
  guint n = gst_hybrid_tensor_meta_get_n_top (tm);
  if (!n)
    return;
  json_builder_set_member_name (b, "classes");
  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++) {
    const gchar *label = gst_hybrid_tensor_meta_get_top_label (tm, i);
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "label");
    json_builder_add_string_value (b, label ? label : "");
    json_builder_set_member_name (b, "class-id");
    json_builder_add_int_value (b,
        gst_hybrid_tensor_meta_get_top_class_id (tm, i));
    json_builder_set_member_name (b, "score");
    json_builder_add_double_value (b,
        gst_hybrid_tensor_meta_get_top_score (tm, i));
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
}

static void
add_object (JsonBuilder * b, GstVideoRegionOfInterestMeta * roi)
{
  GstStructure *det = gst_video_region_of_interest_meta_get_param (roi,
      "detection");
  GstStructure *tracking = gst_video_region_of_interest_meta_get_param (roi,
      "tracking");
  gint class_id;
  gdouble score;
  guint track_id;
  gboolean predicted = FALSE;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "label");
  json_builder_add_string_value (b,
      roi->roi_type ? g_quark_to_string (roi->roi_type) : "");
  json_builder_set_member_name (b, "class-id");
  if (det && gst_structure_get_int (det, "class-id", &class_id))
    json_builder_add_int_value (b, class_id);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "score");
  if (det && gst_structure_get_double (det, "confidence", &score))
    json_builder_add_double_value (b, score);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "box");
  json_builder_begin_array (b);
  json_builder_add_int_value (b, roi->x);
  json_builder_add_int_value (b, roi->y);
  json_builder_add_int_value (b, roi->w);
  json_builder_add_int_value (b, roi->h);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "track-id");
  if (tracking && gst_structure_get_uint (tracking, "track-id", &track_id))
    json_builder_add_int_value (b, track_id);
  else
    json_builder_add_null_value (b);
  if (tracking)
    gst_structure_get_boolean (tracking, "predicted", &predicted);
  json_builder_set_member_name (b, "predicted");
  json_builder_add_boolean_value (b, predicted);
  json_builder_end_object (b);
}

static void
build_frame (GstHybridPublish * self, GstBuffer * buf)
{
  JsonBuilder *b = self->builder;
  GstHybridTensorMeta *tm = gst_buffer_get_hybrid_tensor_meta (buf);

  json_builder_reset (b);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "frame");
  json_builder_add_int_value (b, (gint64) self->frame);
  json_builder_set_member_name (b, "timestamp");
  if (GST_BUFFER_PTS_IS_VALID (buf))
    json_builder_add_int_value (b, (gint64) GST_BUFFER_PTS (buf));
  else
    json_builder_add_null_value (b);
  if (tm) {
    const gchar *type = gst_hybrid_tensor_meta_get_result_type (tm);
    json_builder_set_member_name (b, "result-frame");
    json_builder_add_int_value (b, (gint64) tm->frame_number);
    json_builder_set_member_name (b, "inferred");
    json_builder_add_boolean_value (b, tm->inferred);
    json_builder_set_member_name (b, "type");
    if (type)
      json_builder_add_string_value (b, type);
    else
      json_builder_add_null_value (b);
    add_classes (b, tm);
  }
  json_builder_set_member_name (b, "objects");
  json_builder_begin_array (b);
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)))
    add_object (b, (GstVideoRegionOfInterestMeta *) meta);
  json_builder_end_array (b);
  json_builder_end_object (b);
}

static GstFlowReturn
gst_hybrid_publish_transform_ip (GstBaseTransform * trans, GstBuffer * buf)
{
  GstHybridPublish *self = GST_HYBRID_PUBLISH (trans);

  build_frame (self, buf);
  JsonNode *root = json_builder_get_root (self->builder);
  json_generator_set_root (self->generator, root);
  gsize length;
  gchar *line = json_generator_to_data (self->generator, &length);
  json_generator_set_root (self->generator, NULL);
  json_node_unref (root);
  self->frame++;

  gboolean ok = fwrite (line, 1, length, self->file) == length
      && fputc ('\n', self->file) != EOF && fflush (self->file) == 0;
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
          "and line (created or truncated at start)", NULL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  gst_element_class_set_static_metadata (element_class,
      "Hybrid results publisher", "Sink/Analyzer/Video",
      "Writes each buffer's results (classes, boxes, track ids, scores) "
      "as JSON lines", "hybridinfer");
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
  /* reads the metas, changes nothing */
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), TRUE);
}
