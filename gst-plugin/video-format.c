/*
 * video-format.c — GstVideoFormat to hy_pixel_layout (video-format.h).
 */
#include "video-format.h"

gboolean
gst_hybrid_layout_for_format (GstVideoFormat format, hy_pixel_layout * layout)
{
  static const struct {
    GstVideoFormat format;
    hy_pixel_layout layout;
  } map[] = {
    {GST_VIDEO_FORMAT_RGB, HY_PIXEL_RGB},
    {GST_VIDEO_FORMAT_BGR, HY_PIXEL_BGR},
    {GST_VIDEO_FORMAT_RGBx, HY_PIXEL_RGBX},
    {GST_VIDEO_FORMAT_BGRx, HY_PIXEL_BGRX},
    {GST_VIDEO_FORMAT_xRGB, HY_PIXEL_XRGB},
    {GST_VIDEO_FORMAT_xBGR, HY_PIXEL_XBGR},
    {GST_VIDEO_FORMAT_RGBA, HY_PIXEL_RGBA},
    {GST_VIDEO_FORMAT_BGRA, HY_PIXEL_BGRA},
    {GST_VIDEO_FORMAT_GRAY8, HY_PIXEL_GRAY8},
    {GST_VIDEO_FORMAT_NV12, HY_PIXEL_NV12},
    {GST_VIDEO_FORMAT_I420, HY_PIXEL_I420},
  };
  for (guint i = 0; i < G_N_ELEMENTS (map); i++) {
    if (map[i].format == format) {
      *layout = map[i].layout;
      return TRUE;
    }
  }
  return FALSE;
}
