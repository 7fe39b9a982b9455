/*
 * overlay-draw.c — rectangles and text on raw video (see overlay-draw.h).
 */
#include <string.h>

#include "font5x7.h"
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

int
hyg_canvas_text_width (const char *text, int scale)
{
  int n = (int) strlen (text);
  return n ? (n * HYG_FONT_ADVANCE - 1) * scale : 0;
}

int
hyg_canvas_text_height (int scale)
{
  return HYG_FONT_HEIGHT * scale;
}

void
hyg_canvas_draw_text (const hyg_canvas *c, int x, int y, const char *text,
    int scale, hyg_color color)
{
  for (const char *ch = text; *ch; ch++, x += HYG_FONT_ADVANCE * scale) {
    if (x >= c->width)
      break;
    const uint8_t *rows = hyg_font_glyph (*ch);
    for (int row = 0; row < HYG_FONT_HEIGHT; row++)
      for (int col = 0; col < HYG_FONT_WIDTH; col++)
        if (rows[row] & (1u << (HYG_FONT_WIDTH - 1 - col)))
          hyg_canvas_fill_rect (c, x + col * scale, y + row * scale, scale,
              scale, color);
  }
}

int
hyg_canvas_draw_label (const hyg_canvas *c, int x, int y, const char *text,
    int scale, hyg_color background, hyg_color color)
{
  int w = hyg_canvas_text_width (text, scale) + 2 * scale;
  int h = hyg_canvas_text_height (scale) + 2 * scale;
  hyg_canvas_fill_rect (c, x, y, w, h, background);
  hyg_canvas_draw_text (c, x + scale, y + scale, text, scale, color);
  return h;
}
