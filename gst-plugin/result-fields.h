/*
 * result-fields.h — the "hybridinfer" structure's field names and the
 * way results set them: in place, with strings set by pointer, so that a
 * block refilled by a later frame allocates nothing (result-pool.h).
 */
#ifndef GST_HYBRID_RESULT_FIELDS_H
#define GST_HYBRID_RESULT_FIELDS_H

#include <gst/gst.h>

G_BEGIN_DECLS

/* Field names and fixed strings, as quarks and interned strings: setting
 * them costs a lookup, never a copy.  Filled by hyg_names_init.  These
 * are the frame's fields and those several kinds write; a field only one
 * kind writes is named in its decoder (decode.h, its fields). */
typedef struct {
  GQuark hybridinfer, frame_number, timestamp, running_time, latency_us,
      mode, type, label, class_id, score, labels, class_ids, scores, count,
      detection, confidence;
  const gchar *hybrid, *imperative, *empty;
} HygNames;

extern HygNames hyg_names;

/* Once per process; any thread. */
void hyg_names_init (void);

/* The value of field `name` of `s`, made of `type` if it is not. */
GValue *hyg_field (GstStructure * s, GQuark name, GType type);
/* A fixed string (hyg_names, interned for the process): copies of the
 * value share it. */
void hyg_set_interned (GValue * v, const gchar * interned);
/* A string the result pool owns (a label, a raw head's name): set by
 * pointer, and a copy of the value (g_value_copy, gst_structure_copy: a
 * bus message, a region's results, an application's copy) gets a string
 * of its own, so that no copy points into a pool that may be gone. */
void hyg_set_pooled (GValue * v, const gchar * pooled);
/* Makes `array` hold n values of `type` (arrays: of 4 floats), keeping
 * the ones it has; a longer one is replaced, with room for `room`. */
void hyg_array_fit (GValue * array, guint n, GType type, guint room);
GValue *hyg_array_item (const GValue * array, guint i);

G_END_DECLS
#endif /* GST_HYBRID_RESULT_FIELDS_H */
