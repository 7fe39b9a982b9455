/*
 * publish-json.c — one buffer's results as a JSON object (the schema is
 * in docs/ELEMENT.md, "hybridpublish"): the frame, the tensor meta's
 * result (its frame, whether it was inferred, its type, a
 * classification's classes) and every region of interest with its
 * detection, hybridtrack's tracking and a secondary hybridinfer's
 * (inference-region=roi) parameters.
 */
#include "publish-json.h"

#include <gst/hybrid/hybridmeta.h>
#include <gst/video/video.h>

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

/* The size and the i-th value of a GstValueArray (what results hold:
 * `< … >`) or of a GstValueList; 0 for anything else. */
static guint
values_size (const GValue * v)
{
  if (v && GST_VALUE_HOLDS_ARRAY (v))
    return gst_value_array_get_size (v);
  if (v && GST_VALUE_HOLDS_LIST (v))
    return gst_value_list_get_size (v);
  return 0;
}

static const GValue *
values_nth (const GValue * v, guint i)
{
  return GST_VALUE_HOLDS_ARRAY (v) ? gst_value_array_get_value (v, i)
      : gst_value_list_get_value (v, i);
}

/* A classification's top classes from a "hybridinfer" structure's
 * `labels`, `class-ids` and `scores` arrays, best first. */
static void
add_top_classes (JsonBuilder * b, const GstStructure * s)
{
  const GValue *labels = gst_structure_get_value (s, "labels");
  const GValue *ids = gst_structure_get_value (s, "class-ids");
  const GValue *scores = gst_structure_get_value (s, "scores");
  guint n = MIN (values_size (labels), MIN (values_size (ids),
          values_size (scores)));
  json_builder_set_member_name (b, "classes");
  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++) {
    const GValue *label = values_nth (labels, i);
    const GValue *id = values_nth (ids, i);
    const GValue *score = values_nth (scores, i);
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "label");
    json_builder_add_string_value (b, G_VALUE_HOLDS_STRING (label)
        && g_value_get_string (label) ? g_value_get_string (label) : "");
    json_builder_set_member_name (b, "class-id");
    json_builder_add_int_value (b, G_VALUE_HOLDS_INT (id)
        ? g_value_get_int (id) : -1);
    json_builder_set_member_name (b, "score");
    json_builder_add_double_value (b, G_VALUE_HOLDS_FLOAT (score)
        ? g_value_get_float (score) : 0.0);
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
}

/* The region's secondary result ("hybridinfer" parameter of
 * inference-region=roi): its type and, for a classification, the best
 * class and the top classes; null when no secondary model ran on it. */
static void
add_secondary (JsonBuilder * b, GstVideoRegionOfInterestMeta * roi)
{
  GstStructure *s = gst_video_region_of_interest_meta_get_param (roi,
      "hybridinfer");
  const gchar *type = s ? gst_structure_get_string (s, "type") : NULL;
  json_builder_set_member_name (b, "secondary");
  if (!s) {
    json_builder_add_null_value (b);
    return;
  }
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "type");
  if (type)
    json_builder_add_string_value (b, type);
  else
    json_builder_add_null_value (b);
  if (g_strcmp0 (type, "classification") == 0) {
    const gchar *label = gst_structure_get_string (s, "label");
    gint class_id;
    json_builder_set_member_name (b, "label");
    if (label)
      json_builder_add_string_value (b, label);
    else
      json_builder_add_null_value (b);
    json_builder_set_member_name (b, "class-id");
    if (gst_structure_get_int (s, "class-id", &class_id))
      json_builder_add_int_value (b, class_id);
    else
      json_builder_add_null_value (b);
    /* floats in the structure: gst_structure_get_double refuses them */
    const GValue *v = gst_structure_get_value (s, "score");
    json_builder_set_member_name (b, "score");
    if (v && G_VALUE_HOLDS_FLOAT (v))
      json_builder_add_double_value (b, g_value_get_float (v));
    else
      json_builder_add_null_value (b);
    add_top_classes (b, s);
  }
  json_builder_end_object (b);
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
  add_secondary (b, roi);
  json_builder_end_object (b);
}

void
gst_hybrid_publish_build_json (JsonBuilder * b, GstBuffer * buf,
    guint64 frame)
{
  GstHybridTensorMeta *tm = gst_buffer_get_hybrid_tensor_meta (buf);

  json_builder_reset (b);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "frame");
  json_builder_add_int_value (b, (gint64) frame);
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

gchar *
gst_hybrid_publish_json_string (GstBuffer * buf, guint64 frame)
{
  JsonBuilder *b = json_builder_new ();
  JsonGenerator *gen = json_generator_new ();
  gst_hybrid_publish_build_json (b, buf, frame);
  JsonNode *root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  gchar *text = json_generator_to_data (gen, NULL);
  json_node_unref (root);
  g_object_unref (gen);
  g_object_unref (b);
  return text;
}
