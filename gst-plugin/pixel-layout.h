/*
 * pixel-layout.h — the raw video layouts the plugin reads and draws on,
 * named apart from GStreamer so that the pixel code is testable alone.
 */
#ifndef HY_PIXEL_LAYOUT_H
#define HY_PIXEL_LAYOUT_H

typedef enum hy_pixel_layout {
  HY_PIXEL_RGB,
  HY_PIXEL_BGR,
  HY_PIXEL_RGBX,
  HY_PIXEL_BGRX,
  HY_PIXEL_XRGB,
  HY_PIXEL_XBGR,
  HY_PIXEL_RGBA,
  HY_PIXEL_BGRA,
  HY_PIXEL_GRAY8,
  HY_PIXEL_NV12,                /* Y plane, then interleaved U, V at 2x2 */
  HY_PIXEL_I420,                /* Y, U, V planes, chroma at 2x2 */
} hy_pixel_layout;

/* Packed RGB layouts: bytes per pixel and where R, G, B (and alpha, -1
 * when there is none) sit in a pixel.  FALSE for the others. */
static inline int
hy_pixel_packed (hy_pixel_layout layout, int *bpp, int *r, int *g, int *b,
    int *a)
{
  static const signed char packed[][5] = {
    [HY_PIXEL_RGB] = {3, 0, 1, 2, -1},
    [HY_PIXEL_BGR] = {3, 2, 1, 0, -1},
    [HY_PIXEL_RGBX] = {4, 0, 1, 2, -1},
    [HY_PIXEL_BGRX] = {4, 2, 1, 0, -1},
    [HY_PIXEL_XRGB] = {4, 1, 2, 3, -1},
    [HY_PIXEL_XBGR] = {4, 3, 2, 1, -1},
    [HY_PIXEL_RGBA] = {4, 0, 1, 2, 3},
    [HY_PIXEL_BGRA] = {4, 2, 1, 0, 3},
  };
  if ((unsigned) layout > HY_PIXEL_BGRA)
    return 0;
  *bpp = packed[layout][0];
  *r = packed[layout][1];
  *g = packed[layout][2];
  *b = packed[layout][3];
  *a = packed[layout][4];
  return 1;
}

#endif /* HY_PIXEL_LAYOUT_H */
