/*
 * overlay-draw.c — rectangles and coverage masks on raw video (see
 * overlay-draw.h).
 */
#include <string.h>

#include "overlay-draw.h"

#define MIN_(a, b) ((a) < (b) ? (a) : (b))
#define MAX_(a, b) ((a) > (b) ? (a) : (b))

/* BT.601, limited range: what untagged SD and most camera YUV use. */
static void
to_yuv (hyg_color c, uint8_t *y, uint8_t *u, uint8_t *v)
{
  *y = (uint8_t) (16.5 + 0.257 * c.r + 0.504 * c.g + 0.098 * c.b);
  *u = (uint8_t) (128.5 - 0.148 * c.r - 0.291 * c.g + 0.439 * c.b);
  *v = (uint8_t) (128.5 + 0.439 * c.r - 0.368 * c.g - 0.071 * c.b);
}

static void
fill_plane (uint8_t *plane, int stride, int x0, int y0, int x1, int y1,
    uint8_t value)
{
  for (int y = y0; y < y1; y++)
    memset (plane + (size_t) y * stride + x0, value, (size_t) (x1 - x0));
}

static void
fill_packed (const hyg_canvas *c, int x0, int y0, int x1, int y1,
    hyg_color color)
{
  int bpp = 0, r = 0, g = 0, b = 0, a = -1;
  hy_pixel_packed (c->layout, &bpp, &r, &g, &b, &a);
  for (int y = y0; y < y1; y++) {
    uint8_t *p = c->planes[0] + (size_t) y * c->strides[0] + x0 * bpp;
    for (int x = x0; x < x1; x++, p += bpp) {
      p[r] = color.r;
      p[g] = color.g;
      p[b] = color.b;
      if (a >= 0)
        p[a] = 255;
    }
  }
}

static void
fill_yuv (const hyg_canvas *c, int x0, int y0, int x1, int y1, hyg_color color)
{
  uint8_t y, u, v;
  to_yuv (color, &y, &u, &v);
  fill_plane (c->planes[0], c->strides[0], x0, y0, x1, y1, y);
  if (c->layout == HY_PIXEL_GRAY8)
    return;
  int cx0 = x0 / 2, cy0 = y0 / 2, cx1 = (x1 + 1) / 2, cy1 = (y1 + 1) / 2;
  if (c->layout == HY_PIXEL_I420) {
    fill_plane (c->planes[1], c->strides[1], cx0, cy0, cx1, cy1, u);
    fill_plane (c->planes[2], c->strides[2], cx0, cy0, cx1, cy1, v);
    return;
  }
  for (int cy = cy0; cy < cy1; cy++) {
    uint8_t *p = c->planes[1] + (size_t) cy * c->strides[1] + 2 * cx0;
    for (int cx = cx0; cx < cx1; cx++, p += 2) {
      p[0] = u;
      p[1] = v;
    }
  }
}

void
hyg_canvas_fill_rect (const hyg_canvas *c, int x, int y, int w, int h,
    hyg_color color)
{
  int x0 = MAX_ (x, 0), y0 = MAX_ (y, 0);
  int x1 = MIN_ (x + w, c->width), y1 = MIN_ (y + h, c->height);
  if (w <= 0 || h <= 0 || x0 >= x1 || y0 >= y1)
    return;
  if (c->layout == HY_PIXEL_GRAY8 || c->layout == HY_PIXEL_NV12
      || c->layout == HY_PIXEL_I420)
    fill_yuv (c, x0, y0, x1, y1, color);
  else
    fill_packed (c, x0, y0, x1, y1, color);
}

void
hyg_canvas_stroke_rect (const hyg_canvas *c, int x, int y, int w, int h,
    int line, hyg_color color)
{
  line = MAX_ (1, MIN_ (line, MIN_ (w, h) / 2 + 1));
  hyg_canvas_fill_rect (c, x, y, w, line, color);
  hyg_canvas_fill_rect (c, x, y + h - line, w, line, color);
  hyg_canvas_fill_rect (c, x, y + line, line, h - 2 * line, color);
  hyg_canvas_fill_rect (c, x + w - line, y + line, line, h - 2 * line, color);
}

/* dst, or src, or between by coverage a (0 … 255), rounded. */
static inline uint8_t
mix (uint8_t dst, uint8_t src, unsigned a)
{
  return (uint8_t) ((dst * (255u - a) + src * a + 127u) / 255u);
}

static void
blend_packed (const hyg_canvas *c, int x0, int y0, int x1, int y1,
    const uint8_t *mask, int stride, hyg_color color)
{
  int bpp = 0, r = 0, g = 0, b = 0, a = -1;
  hy_pixel_packed (c->layout, &bpp, &r, &g, &b, &a);
  for (int y = y0; y < y1; y++) {
    const uint8_t *m = mask + (size_t) (y - y0) * stride;
    uint8_t *p = c->planes[0] + (size_t) y * c->strides[0] + x0 * bpp;
    for (int x = x0; x < x1; x++, p += bpp, m++) {
      if (!*m)
        continue;
      p[r] = mix (p[r], color.r, *m);
      p[g] = mix (p[g], color.g, *m);
      p[b] = mix (p[b], color.b, *m);
      if (a >= 0)
        p[a] = mix (p[a], 255, *m);
    }
  }
}

/* The mask's rows and columns here are those of the clipped rectangle
 * (x0, y0) … (x1, y1): `mask` points at its (x0, y0). */
static void
blend_yuv (const hyg_canvas *c, int x0, int y0, int x1, int y1,
    const uint8_t *mask, int stride, hyg_color color)
{
  uint8_t ly, u, v;
  to_yuv (color, &ly, &u, &v);
  for (int y = y0; y < y1; y++) {
    const uint8_t *m = mask + (size_t) (y - y0) * stride;
    uint8_t *p = c->planes[0] + (size_t) y * c->strides[0] + x0;
    for (int x = x0; x < x1; x++, p++, m++)
      if (*m)
        *p = mix (*p, ly, *m);
  }
  if (c->layout == HY_PIXEL_GRAY8)
    return;
  for (int cy = y0 / 2; cy < (y1 + 1) / 2; cy++)
    for (int cx = x0 / 2; cx < (x1 + 1) / 2; cx++) {
      /* the block's pixels on the canvas, and their coverage */
      int n = (MIN_ (2 * cx + 2, c->width) - 2 * cx)
          * (MIN_ (2 * cy + 2, c->height) - 2 * cy);
      unsigned sum = 0;
      for (int y = MAX_ (2 * cy, y0); y < MIN_ (2 * cy + 2, y1); y++)
        for (int x = MAX_ (2 * cx, x0); x < MIN_ (2 * cx + 2, x1); x++)
          sum += mask[(size_t) (y - y0) * stride + (x - x0)];
      unsigned a = (sum + (unsigned) n / 2) / (unsigned) n;
      if (!a)
        continue;
      if (c->layout == HY_PIXEL_I420) {
        uint8_t *pu = c->planes[1] + (size_t) cy * c->strides[1] + cx;
        uint8_t *pv = c->planes[2] + (size_t) cy * c->strides[2] + cx;
        *pu = mix (*pu, u, a);
        *pv = mix (*pv, v, a);
      } else {
        uint8_t *p = c->planes[1] + (size_t) cy * c->strides[1] + 2 * cx;
        p[0] = mix (p[0], u, a);
        p[1] = mix (p[1], v, a);
      }
    }
}

void
hyg_canvas_blend_mask (const hyg_canvas *c, int x, int y,
    const uint8_t *mask, int w, int h, int stride, hyg_color color)
{
  int x0 = MAX_ (x, 0), y0 = MAX_ (y, 0);
  int x1 = MIN_ (x + w, c->width), y1 = MIN_ (y + h, c->height);
  if (!mask || w <= 0 || h <= 0 || x0 >= x1 || y0 >= y1)
    return;
  mask += (size_t) (y0 - y) * stride + (x0 - x);
  if (c->layout == HY_PIXEL_GRAY8 || c->layout == HY_PIXEL_NV12
      || c->layout == HY_PIXEL_I420)
    blend_yuv (c, x0, y0, x1, y1, mask, stride, color);
  else
    blend_packed (c, x0, y0, x1, y1, mask, stride, color);
}
