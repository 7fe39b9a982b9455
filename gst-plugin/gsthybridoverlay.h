/*
 * gsthybridoverlay.h — the hybridoverlay element: draws hybridinfer's
 * results (boxes, labels, scores, top classes) onto the video.
 */
#ifndef GST_HYBRID_OVERLAY_H
#define GST_HYBRID_OVERLAY_H

#include <gst/video/gstvideofilter.h>

G_BEGIN_DECLS

#define GST_TYPE_HYBRID_OVERLAY (gst_hybrid_overlay_get_type ())
G_DECLARE_FINAL_TYPE (GstHybridOverlay, gst_hybrid_overlay, GST,
    HYBRID_OVERLAY, GstVideoFilter)

GST_ELEMENT_REGISTER_DECLARE (hybridoverlay);

G_END_DECLS
#endif /* GST_HYBRID_OVERLAY_H */
