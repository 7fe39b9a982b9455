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
 * regular file or larger than HYG_LABELS_MAX_BYTES. */
char **hyg_labels_load (const char *path, guint *n_labels, GError **error);

G_END_DECLS
#endif /* GST_HYBRID_PROPERTY_PARSE_H */
