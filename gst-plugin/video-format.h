/*
 * video-format.h — the raw video formats both elements take, and the one
 * map from GstVideoFormat to the pixel layouts of hybrid-frame.h (which
 * the frame plan converts and overlay-draw.h draws on).
 */
#ifndef GST_HYBRID_VIDEO_FORMAT_H
#define GST_HYBRID_VIDEO_FORMAT_H

#include <gst/video/video.h>

#include "hybrid-frame.h"

G_BEGIN_DECLS

/* For pad templates: every format gst_hybrid_layout_for_format knows. */
#define GST_HYBRID_VIDEO_FORMATS \
  "{ RGB, BGR, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, NV12, I420, GRAY8 }"
#define GST_HYBRID_VIDEO_CAPS GST_VIDEO_CAPS_MAKE (GST_HYBRID_VIDEO_FORMATS)

/* FALSE for a format outside GST_HYBRID_VIDEO_FORMATS. */
gboolean gst_hybrid_layout_for_format (GstVideoFormat format,
    hy_pixel_layout * layout);

G_END_DECLS
#endif /* GST_HYBRID_VIDEO_FORMAT_H */
