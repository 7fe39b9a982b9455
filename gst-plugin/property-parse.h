/*
 * property-parse.h — the text values hybridinfer's properties take.
 *
 * Pure functions (no GStreamer), unit-tested on their own.  Errors are
 * GErrors in the HY_ERROR domain whose message names the property and says
 * what was expected, ready for GST_ELEMENT_ERROR.
 */
#ifndef HY_PROPERTY_PARSE_H
#define HY_PROPERTY_PARSE_H

#include <glib.h>

G_BEGIN_DECLS

/* "WxH" (also "W×H", "WXH"), both at least 1 and at most 16384. */
gboolean hy_parse_size (const char *text, int *width, int *height,
    GError **error);

/* A set of frame numbers: "0-9,100,250-" (ranges inclusive; "N-" open).
 * NULL or "" is every frame. */
typedef struct hy_frame_set hy_frame_set;

hy_frame_set *hy_frame_set_parse (const char *text, GError **error);
gboolean hy_frame_set_contains (const hy_frame_set *set, guint64 frame);
void hy_frame_set_free (hy_frame_set *set);

/* The largest labels file read: ImageNet-21k's 21,841 labels take about
 * 1 MiB, so anything near this is not a labels file. */
#define HY_LABELS_MAX_BYTES ((gsize) 16 << 20)

/* One label per line (trailing blanks and a final newline ignored; empty
 * lines count, so line N is class N).  NULL + error when unreadable, not a
 * regular file or larger than HY_LABELS_MAX_BYTES. */
char **hy_labels_load (const char *path, guint *n_labels, GError **error);

G_END_DECLS
#endif /* HY_PROPERTY_PARSE_H */
