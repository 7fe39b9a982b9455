/*
 * property-parse.h — the text values hybridinfer's properties take.
 *
 * Pure functions (no GStreamer), unit-tested on their own.  Errors are
 * GErrors in the HY_ERROR domain whose message names the property and says
 * what was expected, ready for GST_ELEMENT_ERROR.
 */
#ifndef GST_HYBRID_PROPERTY_PARSE_H
#define GST_HYBRID_PROPERTY_PARSE_H

#include <glib.h>

G_BEGIN_DECLS

/* "WxH" (also "W×H", "WXH"), both at least 1 and at most 16384. */
gboolean hyg_parse_size (const char *text, int *width, int *height,
    GError **error);

/* A set of frame numbers: "0-9,100,250-" (ranges inclusive; "N-" open).
 * NULL or "" is every frame. */
typedef struct hyg_frame_set hyg_frame_set;

hyg_frame_set *hyg_frame_set_parse (const char *text, GError **error);
gboolean hyg_frame_set_contains (const hyg_frame_set *set, guint64 frame);
void hyg_frame_set_free (hyg_frame_set *set);

/* The largest labels file read: ImageNet-21k's 21,841 labels take about
 * 1 MiB, so anything near this is not a labels file. */
#define HYG_LABELS_MAX_BYTES ((gsize) 16 << 20)

/* One label per line (trailing blanks and a final newline ignored; empty
 * lines count, so line N is class N).  NULL + error when unreadable, not a
 * regular file or larger than HYG_LABELS_MAX_BYTES.  Packed
 * (hyg_strv_pack): free with g_free, not g_strfreev. */
char **hyg_labels_load (const char *path, guint *n_labels, GError **error);

/* A copy of the first n strings of `strv` (n < 0: all of it) as one
 * allocation, NULL-terminated: the pointers, then the text.  Free with
 * g_free.  A million labels are then one block, not a million. */
char **hyg_strv_pack (const char *const *strv, gssize n);

/* class-thresholds: per class, the lowest score reported, overriding
 * `threshold`.  The text is "CLASS=SCORE,…" where CLASS is one of the
 * model's labels or, when no label is that text, a class id ("person=0.6,
 * car=0.4,7=0.3"); NULL or "" is none.  Fixed-size so that a frame's
 * request carries it by value and nothing is allocated per frame. */
#define HYG_CLASS_THRESHOLDS_MAX 256

typedef struct hyg_class_thresholds {
  guint n;
  int class_ids[HYG_CLASS_THRESHOLDS_MAX];
  float thresholds[HYG_CLASS_THRESHOLDS_MAX];
} hyg_class_thresholds;

/* Parses `text` and looks its classes up in `labels` (n_labels of them;
 * NULL: the model has none, classes are ids).  FALSE + error naming the
 * property and the entry when an entry is malformed, its class unknown
 * or named twice, or its score not a finite float; *out is then empty. */
gboolean hyg_class_thresholds_parse (const char *text,
    const char *const *labels, guint n_labels, hyg_class_thresholds *out,
    GError **error);

/* Class `class_id`'s threshold: its own, else `fallback`.  `t` may be
 * NULL (none). */
static inline float
hyg_class_threshold (const hyg_class_thresholds *t, int class_id,
    float fallback)
{
  for (guint i = 0; t && i < t->n; i++)
    if (t->class_ids[i] == class_id)
      return t->thresholds[i];
  return fallback;
}

G_END_DECLS
#endif /* GST_HYBRID_PROPERTY_PARSE_H */
