/*
 * test-overlay-draw.c — hybridoverlay's drawing (gst-plugin/overlay-draw.c):
 * clipping, box outlines, text, and the same picture on every layout.
 */
#include <string.h>

#include <glib.h>

#include "gst-plugin/font5x7.h"
#include "gst-plugin/overlay-draw.h"

#define W 40
#define H 20

typedef struct canvas_buf {
  hyg_canvas c;
  guint8 *mem[3];
} canvas_buf;

static canvas_buf
canvas_new (hy_pixel_layout layout)
{
  canvas_buf b = {.c = {.layout = layout,.width = W,.height = H } };
  int bpp = 1, r, g, bl, a;
  hy_pixel_packed (layout, &bpp, &r, &g, &bl, &a);
  b.c.strides[0] = W * bpp + 4;
  b.mem[0] = g_malloc0 ((gsize) b.c.strides[0] * H);
  if (layout == HY_PIXEL_NV12) {
    b.c.strides[1] = W;
    b.mem[1] = g_malloc0 ((gsize) W * H / 2);
  } else if (layout == HY_PIXEL_I420) {
    b.c.strides[1] = b.c.strides[2] = W / 2;
    b.mem[1] = g_malloc0 ((gsize) W / 2 * H / 2);
    b.mem[2] = g_malloc0 ((gsize) W / 2 * H / 2);
  }
  for (int i = 0; i < 3; i++)
    b.c.planes[i] = b.mem[i];
  return b;
}

static void
canvas_free (canvas_buf *b)
{
  for (int i = 0; i < 3; i++)
    g_free (b->mem[i]);
}

/* Whether pixel (x, y) was painted (luma or any colour byte set). */
static gboolean
painted (const canvas_buf *b, int x, int y)
{
  int bpp = 1, r, g, bl, a;
  if (!hy_pixel_packed (b->c.layout, &bpp, &r, &g, &bl, &a))
    return b->mem[0][y * b->c.strides[0] + x] != 0;
  const guint8 *p = b->mem[0] + y * b->c.strides[0] + x * bpp;
  return p[r] || p[g] || p[bl];
}

static void
test_fill_packed_colour (void)
{
  canvas_buf b = canvas_new (HY_PIXEL_BGRA);
  hyg_canvas_fill_rect (&b.c, 2, 3, 4, 5, (hyg_color) {10, 20, 30});
  const guint8 *p = b.mem[0] + 3 * b.c.strides[0] + 2 * 4;
  g_assert_cmpuint (p[0], ==, 30);
  g_assert_cmpuint (p[1], ==, 20);
  g_assert_cmpuint (p[2], ==, 10);
  g_assert_cmpuint (p[3], ==, 255);
  g_assert_false (painted (&b, 1, 3));
  g_assert_false (painted (&b, 6, 3));
  g_assert_true (painted (&b, 5, 7));
  g_assert_false (painted (&b, 5, 8));
  canvas_free (&b);
}

/* Rectangles hanging over any edge are clipped, never written outside. */
static void
test_clipping (void)
{
  for (int l = HY_PIXEL_RGB; l <= HY_PIXEL_I420; l++) {
    canvas_buf b = canvas_new (l);
    hyg_color white = { 255, 255, 255 };
    hyg_canvas_fill_rect (&b.c, -10, -10, 15, 15, white);
    hyg_canvas_fill_rect (&b.c, W - 3, H - 3, 100, 100, white);
    hyg_canvas_fill_rect (&b.c, W, 0, 5, 5, white);
    hyg_canvas_fill_rect (&b.c, 0, 0, 0, 5, white);
    hyg_canvas_stroke_rect (&b.c, -5, -5, W + 10, H + 10, 3, white);
    hyg_canvas_draw_text (&b.c, W - 4, H - 4, "W", 3, white);
    g_assert_true (painted (&b, 0, 0));
    g_assert_true (painted (&b, 4, 4));
    g_assert_true (painted (&b, W - 1, H - 1));
    /* the padding at the end of each packed row stays untouched */
    int bpp = 1, r, g, bl, a;
    if (hy_pixel_packed (l, &bpp, &r, &g, &bl, &a))
      for (int y = 0; y < H; y++)
        for (int x = W * bpp; x < b.c.strides[0]; x++)
          g_assert_cmpuint (b.mem[0][y * b.c.strides[0] + x], ==, 0);
    canvas_free (&b);
  }
}

static void
test_stroke (void)
{
  canvas_buf b = canvas_new (HY_PIXEL_RGB);
  hyg_canvas_stroke_rect (&b.c, 5, 5, 10, 8, 2, (hyg_color) {255, 0, 0});
  g_assert_true (painted (&b, 5, 5));
  g_assert_true (painted (&b, 6, 6));
  g_assert_false (painted (&b, 7, 7));   /* inside */
  g_assert_true (painted (&b, 14, 12));
  g_assert_false (painted (&b, 15, 12));
  g_assert_false (painted (&b, 10, 9));
  canvas_free (&b);
}

/* Text lands dot for dot where the font says, on every layout. */
static void
test_text (void)
{
  for (int l = HY_PIXEL_RGB; l <= HY_PIXEL_I420; l++) {
    canvas_buf b = canvas_new (l);
    hyg_canvas_draw_text (&b.c, 1, 2, "A1", 2, (hyg_color) {255, 255, 255});
    for (int k = 0; k < 2; k++) {
      const guint8 *rows = hyg_font_glyph ("A1"[k]);
      for (int row = 0; row < HYG_FONT_HEIGHT; row++)
        for (int col = 0; col < HYG_FONT_WIDTH; col++) {
          gboolean on = (rows[row] & (1 << (HYG_FONT_WIDTH - 1 - col))) != 0;
          int x = 1 + k * HYG_FONT_ADVANCE * 2 + col * 2, y = 2 + row * 2;
          g_assert_cmpint (painted (&b, x, y), ==, on);
          g_assert_cmpint (painted (&b, x + 1, y + 1), ==, on);
        }
    }
    canvas_free (&b);
  }
  g_assert_cmpint (hyg_canvas_text_width ("ab", 3), ==, 11 * 3);
  g_assert_cmpint (hyg_canvas_text_width ("", 3), ==, 0);
  g_assert_cmpint (hyg_canvas_text_height (2), ==, 14);
  /* Bytes outside printable ASCII draw as '?'. */
  g_assert_true (hyg_font_glyph ('\x01') == hyg_font_glyph ('?'));
  g_assert_true (hyg_font_glyph ('\xe9') == hyg_font_glyph ('?'));
}

/* 4:2:0 chroma covers the 2x2 blocks a rectangle touches. */
static void
test_yuv_chroma (void)
{
  canvas_buf b = canvas_new (HY_PIXEL_I420);
  hyg_canvas_fill_rect (&b.c, 3, 3, 2, 2, (hyg_color) {255, 0, 0});
  g_assert_cmpuint (b.mem[0][3 * b.c.strides[0] + 3], ==, 82);
  g_assert_cmpuint (b.mem[2][1 * b.c.strides[2] + 1], ==, 240);
  g_assert_cmpuint (b.mem[2][2 * b.c.strides[2] + 2], ==, 240);
  g_assert_cmpuint (b.mem[2][0], ==, 0);
  canvas_free (&b);

  b = canvas_new (HY_PIXEL_NV12);
  hyg_canvas_fill_rect (&b.c, 0, 0, 2, 2, (hyg_color) {0, 0, 255});
  g_assert_cmpuint (b.mem[1][0], ==, 240);       /* U */
  g_assert_cmpuint (b.mem[1][1], ==, 110);       /* V */
  g_assert_cmpuint (b.mem[1][2], ==, 0);
  canvas_free (&b);
}

static void
test_label (void)
{
  canvas_buf b = canvas_new (HY_PIXEL_RGBX);
  int h = hyg_canvas_draw_label (&b.c, 0, 0, "hi", 1, (hyg_color) {0, 255, 0},
      (hyg_color) {0, 0, 0});
  g_assert_cmpint (h, ==, HYG_FONT_HEIGHT + 2);
  g_assert_true (painted (&b, 0, 0));   /* background */
  g_assert_true (painted (&b, 12, 8));
  g_assert_false (painted (&b, 13, 0));
  canvas_free (&b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/overlay-draw/fill-packed-colour",
      test_fill_packed_colour);
  g_test_add_func ("/overlay-draw/clipping", test_clipping);
  g_test_add_func ("/overlay-draw/stroke", test_stroke);
  g_test_add_func ("/overlay-draw/text", test_text);
  g_test_add_func ("/overlay-draw/yuv-chroma", test_yuv_chroma);
  g_test_add_func ("/overlay-draw/label", test_label);
  return g_test_run ();
}
