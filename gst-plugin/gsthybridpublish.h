/*
 * gsthybridpublish.h — the hybridpublish element: each buffer's results
 * (classes, boxes with their track ids) as one JSON object per line.
 */
#ifndef GST_HYBRID_PUBLISH_H
#define GST_HYBRID_PUBLISH_H

#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

#define GST_TYPE_HYBRID_PUBLISH (gst_hybrid_publish_get_type ())
G_DECLARE_FINAL_TYPE (GstHybridPublish, gst_hybrid_publish, GST,
    HYBRID_PUBLISH, GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (hybridpublish);

G_END_DECLS
#endif /* GST_HYBRID_PUBLISH_H */
