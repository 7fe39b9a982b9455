/*
 * result-fields.c — the "hybridinfer" structure's fields, set in place
 * (result-fields.h).
 */
#include "result-fields.h"

HygNames hyg_names;

void
hyg_names_init (void)
{
  static gsize done = 0;
  if (!g_once_init_enter (&done))
    return;
  hyg_names.hybridinfer = g_quark_from_static_string ("hybridinfer");
  hyg_names.frame_number = g_quark_from_static_string ("frame-number");
  hyg_names.timestamp = g_quark_from_static_string ("timestamp");
  hyg_names.running_time = g_quark_from_static_string ("running-time");
  hyg_names.latency_us = g_quark_from_static_string ("latency-us");
  hyg_names.mode = g_quark_from_static_string ("mode");
  hyg_names.type = g_quark_from_static_string ("type");
  hyg_names.label = g_quark_from_static_string ("label");
  hyg_names.class_id = g_quark_from_static_string ("class-id");
  hyg_names.score = g_quark_from_static_string ("score");
  hyg_names.labels = g_quark_from_static_string ("labels");
  hyg_names.class_ids = g_quark_from_static_string ("class-ids");
  hyg_names.scores = g_quark_from_static_string ("scores");
  hyg_names.count = g_quark_from_static_string ("count");
  hyg_names.detection = g_quark_from_static_string ("detection");
  hyg_names.confidence = g_quark_from_static_string ("confidence");
  hyg_names.hybrid = g_intern_static_string ("hybrid");
  hyg_names.imperative = g_intern_static_string ("imperative");
  hyg_names.empty = g_intern_static_string ("");
  g_once_init_leave (&done, 1);
}

/* ---- fields set in place ------------------------------------------------- */

/* A block's structure is built by its first result and refilled by every
 * later one: setting a field that exists overwrites its value where it
 * is, and strings are set by pointer, so a refill allocates nothing.
 * Fields first set in the order of docs/ELEMENT.md keep that order. */

GValue *
hyg_field (GstStructure *s, GQuark name, GType type)
{
  GValue *v = (GValue *) gst_structure_id_get_value (s, name);
  if (!v || G_VALUE_TYPE (v) != type) {
    GValue init = G_VALUE_INIT;
    g_value_init (&init, type);
    gst_structure_id_take_value (s, name, &init);
    v = (GValue *) gst_structure_id_get_value (s, name);
  }
  return v;
}

void
hyg_set_interned (GValue *v, const gchar *interned)
{
  g_value_set_interned_string (v, interned);
}

/* GLib copies a static (G_VALUE_NOCOPY_CONTENTS) string with g_strdup and
 * an interned one by pointer: labels are static, not interned, since
 * interning them would keep every label of every labels file ever loaded
 * for the life of the process (GLib's quark table never shrinks, and
 * grows by copying). */
void
hyg_set_pooled (GValue *v, const gchar *pooled)
{
  g_value_set_static_string (v, pooled);
}

/* Makes `array` hold n values of `type` (arrays: of 4 floats), keeping
 * the ones it has.  GStreamer has no way to remove values from an array:
 * a longer one is replaced, with room for `room`. */
void
hyg_array_fit (GValue *array, guint n, GType type, guint room)
{
  guint len = gst_value_array_get_size (array);
  if (len > n) {
    g_value_unset (array);
    gst_value_array_init (array, MAX (n, room));
    len = 0;
  }
  for (; len < n; len++) {
    GValue v = G_VALUE_INIT;
    if (type == GST_TYPE_ARRAY) {
      gst_value_array_init (&v, 4);
      hyg_array_fit (&v, 4, G_TYPE_FLOAT, 4);
    } else {
      g_value_init (&v, type);
      if (type == G_TYPE_STRING)
        hyg_set_interned (&v, hyg_names.empty);
    }
    gst_value_array_append_and_take_value (array, &v);
  }
}

GValue *
hyg_array_item (const GValue *array, guint i)
{
  return (GValue *) gst_value_array_get_value (array, i);
}
