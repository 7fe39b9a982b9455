/*
 * publish-json.h — one buffer's results as the JSON object hybridpublish
 * writes (docs/ELEMENT.md, "hybridpublish").
 */
#ifndef GST_HYBRID_PUBLISH_JSON_H
#define GST_HYBRID_PUBLISH_JSON_H

#include <gst/gst.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Resets `builder` and builds the object of `buf`, the element's
 * `frame`-th buffer since it started. */
void gst_hybrid_publish_build_json (JsonBuilder * builder, GstBuffer * buf,
    guint64 frame);

/* The same object as one line of text (free it), with a builder of its
 * own: for hybridinfer's bus messages, which are posted from any element
 * and need no hybridpublish. */
gchar *gst_hybrid_publish_json_string (GstBuffer * buf, guint64 frame);

G_END_DECLS
#endif /* GST_HYBRID_PUBLISH_JSON_H */
