/*
 * gsthybridinfer.h — the hybridinfer element: video frames through a
 * hybridized MXNet Gluon graph, results as metadata and bus messages.
 */
#ifndef GST_HYBRID_INFER_H
#define GST_HYBRID_INFER_H

#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

#define GST_TYPE_HYBRID_INFER (gst_hybrid_infer_get_type ())
G_DECLARE_FINAL_TYPE (GstHybridInfer, gst_hybrid_infer, GST, HYBRID_INFER,
    GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (hybridinfer);

G_END_DECLS
#endif /* GST_HYBRID_INFER_H */
