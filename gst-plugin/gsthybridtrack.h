/*
 * gsthybridtrack.h — the hybridtrack element: gives the detection boxes
 * on each buffer (GstVideoRegionOfInterestMeta) stable track ids, and
 * moves them along their tracks on frames the detector skipped.
 */
#ifndef GST_HYBRID_TRACK_H
#define GST_HYBRID_TRACK_H

#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

#define GST_TYPE_HYBRID_TRACK (gst_hybrid_track_get_type ())
G_DECLARE_FINAL_TYPE (GstHybridTrack, gst_hybrid_track, GST, HYBRID_TRACK,
    GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (hybridtrack);

G_END_DECLS
#endif /* GST_HYBRID_TRACK_H */
