/*
 * overlay-draw.c — rectangles and coverage masks on raw video (see
 * overlay-draw.h).
 */
#include <string.h>

#include <glib.h>

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

void
hyg_canvas_draw_line (const hyg_canvas *c, int x0, int y0, int x1, int y1,
    int width, hyg_color color)
{
  /* one square per step of the longer axis (Bresenham's walk) */
  int dx = x1 > x0 ? x1 - x0 : x0 - x1, sx = x0 < x1 ? 1 : -1;
  int dy = y1 > y0 ? y0 - y1 : y1 - y0, sy = y0 < y1 ? 1 : -1;
  int err = dx + dy, half = width / 2;
  width = MAX_ (width, 1);
  for (;;) {
    hyg_canvas_fill_rect (c, x0 - half, y0 - half, width, width, color);
    if (x0 == x1 && y0 == y1)
      break;
    int e2 = 2 * err;
    if (e2 >= dy) {
      err += dy;
      x0 += sx;
    }
    if (e2 <= dx) {
      err += dx;
      y0 += sy;
    }
  }
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

/* ---- class maps ---------------------------------------------------------- */

hyg_color
hyg_class_color (int id)
{
  /* VOC: the bits of the id, spread over the high bits of R, G, B */
  hyg_color c = { 0, 0, 0 };
  for (int shift = 7; id > 0 && shift >= 0; shift--, id >>= 3) {
    c.r |= (uint8_t) (((id >> 0) & 1) << shift);
    c.g |= (uint8_t) (((id >> 1) & 1) << shift);
    c.b |= (uint8_t) (((id >> 2) & 1) << shift);
  }
  return c;
}

/* The map column of canvas column x, or -1 outside the map. */
static inline int
map_u (const hyg_class_map *m, int x)
{
  float u = (x + 0.5f - m->x) * (float) m->w / m->width;
  return u >= 0 && u < m->w ? (int) u : -1;
}

static inline int
map_v (const hyg_class_map *m, int y)
{
  float v = (y + 0.5f - m->y) * (float) m->h / m->height;
  return v >= 0 && v < m->h ? (int) v : -1;
}

/* The class at canvas (x, y), or -1 outside the map or when skipped. */
static inline int
class_at (const hyg_class_map *m, int x, int y, int skip)
{
  int u = map_u (m, x), v = map_v (m, y);
  if (u < 0 || v < 0)
    return -1;
  float f = m->ids[(size_t) v * m->w + u];
  int id = f >= 0 ? (int) f : -1;
  return id == skip ? -1 : id;
}

void
hyg_canvas_blend_classes (const hyg_canvas *c, const hyg_class_map *map,
    const hyg_color *palette, int n_palette, int skip, unsigned alpha)
{
  if (!map->ids || map->w <= 0 || map->h <= 0 || !(map->width > 0)
      || !(map->height > 0) || n_palette <= 0 || !alpha)
    return;
  alpha = MIN_ (alpha, 255u);
  gboolean yuv = c->layout == HY_PIXEL_GRAY8 || c->layout == HY_PIXEL_NV12
      || c->layout == HY_PIXEL_I420;
  int bpp = 0, r = 0, g = 0, b = 0, a = -1;
  if (!yuv)
    hy_pixel_packed (c->layout, &bpp, &r, &g, &b, &a);
  for (int y = 0; y < c->height; y++) {
    if (map_v (map, y) < 0)
      continue;
    uint8_t *row = c->planes[0] + (size_t) y * c->strides[0];
    for (int x = 0; x < c->width; x++) {
      int id = class_at (map, x, y, skip);
      if (id < 0)
        continue;
      hyg_color k = palette[id % n_palette];
      if (yuv) {
        uint8_t ly, u, v;
        to_yuv (k, &ly, &u, &v);
        row[x] = mix (row[x], ly, alpha);
        continue;
      }
      uint8_t *p = row + (size_t) x * bpp;
      p[r] = mix (p[r], k.r, alpha);
      p[g] = mix (p[g], k.g, alpha);
      p[b] = mix (p[b], k.b, alpha);
      if (a >= 0)
        p[a] = mix (p[a], 255, alpha);
    }
  }
  if (!yuv || c->layout == HY_PIXEL_GRAY8)
    return;
  for (int cy = 0; cy < (c->height + 1) / 2; cy++)
    for (int cx = 0; cx < (c->width + 1) / 2; cx++) {
      int id = class_at (map, 2 * cx, 2 * cy, skip);
      if (id < 0)
        continue;
      uint8_t ly, u, v;
      to_yuv (palette[id % n_palette], &ly, &u, &v);
      uint8_t *pu, *pv;
      if (c->layout == HY_PIXEL_I420) {
        pu = c->planes[1] + (size_t) cy * c->strides[1] + cx;
        pv = c->planes[2] + (size_t) cy * c->strides[2] + cx;
      } else {
        pu = c->planes[1] + (size_t) cy * c->strides[1] + 2 * cx;
        pv = pu + 1;
      }
      *pu = mix (*pu, u, alpha);
      *pv = mix (*pv, v, alpha);
    }
}
