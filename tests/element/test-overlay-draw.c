/*
 * test-overlay-draw.c — hybridoverlay's drawing (gst-plugin/overlay-draw.c,
 * overlay-text.c): clipping, box outlines, coverage masks blended on every
 * layout (exact values), and text from Pango: descenders, digits, the
 * cache.
 */
#include <string.h>

#include <glib.h>

#include "gst-plugin/overlay-draw.h"
#include "gst-plugin/overlay-text.h"

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
    static const guint8 full[16 * 16] = {[0 ... 255] = 255 };
    hyg_canvas_blend_mask (&b.c, W - 4, H - 4, full, 16, 16, 16, white);
    hyg_canvas_blend_mask (&b.c, -12, -12, full, 16, 16, 16, white);
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

/* What one pixel holds: R, G, B (packed), or Y, U, V (U, V of its 2x2
 * block; GRAY8: Y only). */
typedef struct {
  int c[3];
} px3;

static px3
read_px (const canvas_buf *b, int x, int y)
{
  int bpp = 1, r, g, bl, a;
  px3 out = { {-1, -1, -1} };
  if (hy_pixel_packed (b->c.layout, &bpp, &r, &g, &bl, &a)) {
    const guint8 *p = b->mem[0] + y * b->c.strides[0] + x * bpp;
    out.c[0] = p[r];
    out.c[1] = p[g];
    out.c[2] = p[bl];
    return out;
  }
  out.c[0] = b->mem[0][y * b->c.strides[0] + x];
  if (b->c.layout == HY_PIXEL_NV12) {
    const guint8 *p = b->mem[1] + (y / 2) * b->c.strides[1] + (x / 2) * 2;
    out.c[1] = p[0];
    out.c[2] = p[1];
  } else if (b->c.layout == HY_PIXEL_I420) {
    out.c[1] = b->mem[1][(y / 2) * b->c.strides[1] + x / 2];
    out.c[2] = b->mem[2][(y / 2) * b->c.strides[2] + x / 2];
  }
  return out;
}

static void
canvas_fill_grey (canvas_buf *b, guint8 v)
{
  for (int i = 0; i < 3; i++)
    if (b->mem[i])
      memset (b->mem[i], v, i == 0 ? (gsize) b->c.strides[0] * H
          : (gsize) b->c.strides[i] * H / 2);
}

static void
assert_px (const canvas_buf *b, int x, int y, int c0, int c1, int c2)
{
  px3 p = read_px (b, x, y);
  int want[3] = { c0, c1, c2 };
  int n = b->c.layout == HY_PIXEL_GRAY8 ? 1 : 3;
  for (int i = 0; i < n; i++)
    if (p.c[i] != want[i])
      g_error ("layout %d at (%d, %d), channel %d: %d, want %d",
          b->c.layout, x, y, i, p.c[i], want[i]);
}

/* Orange (255, 128, 0) over mid grey (100 in every byte) through a mask
 * of 255 (full), 0 (none) and 64 (partial), on every layout.  Each value
 * is mix(dst, src, a) = (dst * (255 - a) + src * a + 127) / 255; orange in
 * BT.601 limited range is Y 146, U 53, V 193. */
static void
test_blend_every_layout (void)
{
  /* a 4x2 mask at (2, 2): columns 2, 3 full, 4, 5 none — but row 3,
   * column 5 at 64 — so each 2x2 block is wholly one value but one */
  static const guint8 mask[2 * 4] = {
    255, 255, 0, 0,
    255, 255, 0, 64,
  };
  static const guint8 part[2 * 2] = { 64, 64, 64, 64 };
  const hyg_color orange = { 255, 128, 0 };
  for (int l = HY_PIXEL_RGB; l <= HY_PIXEL_I420; l++) {
    canvas_buf b = canvas_new (l);
    canvas_fill_grey (&b, 100);
    hyg_canvas_blend_mask (&b.c, 2, 2, mask, 4, 2, 4, orange);
    hyg_canvas_blend_mask (&b.c, 8, 8, part, 2, 2, 2, orange);
    int bpp = 1, r, g, bl, a;
    if (hy_pixel_packed (l, &bpp, &r, &g, &bl, &a)) {
      assert_px (&b, 2, 2, 255, 128, 0);        /* full */
      assert_px (&b, 3, 3, 255, 128, 0);
      assert_px (&b, 4, 2, 100, 100, 100);      /* none */
      assert_px (&b, 1, 2, 100, 100, 100);      /* outside */
      /* 64: (100 * 191 + 255 * 64 + 127) / 255 = 139, 128 → 107,
       * 0 → 75 */
      assert_px (&b, 5, 3, 139, 107, 75);
      assert_px (&b, 9, 9, 139, 107, 75);
      if (a >= 0) {
        const guint8 *p = b.mem[0] + 2 * b.c.strides[0] + 2 * bpp;
        g_assert_cmpuint (p[a], ==, 255);
        p = b.mem[0] + 3 * b.c.strides[0] + 5 * bpp;
        g_assert_cmpuint (p[a], ==, 139);       /* 100 over by 64 */
      }
    } else {
      /* luma per pixel: 146 full, 100 none, (100 * 191 + 146 * 64 + 127)
       * / 255 = 112 at 64 */
      assert_px (&b, 2, 2, 146, 53, 193);
      assert_px (&b, 3, 3, 146, 53, 193);
      g_assert_cmpint (read_px (&b, 4, 2).c[0], ==, 100);
      g_assert_cmpint (read_px (&b, 5, 3).c[0], ==, 112);
      g_assert_cmpint (read_px (&b, 9, 9).c[0], ==, 112);
      if (l != HY_PIXEL_GRAY8) {
        /* chroma: block (2, 2)-(3, 3) full; (4, 2)-(5, 3) a mean of
         * 64 / 4 = 16: U (100 * 239 + 53 * 16 + 127) / 255 = 97, V 106;
         * block (8, 8) all 64: U 88, V 123; untouched blocks stay 100 */
        assert_px (&b, 2, 2, 146, 53, 193);
        px3 p = read_px (&b, 4, 2);
        g_assert_cmpint (p.c[1], ==, 97);
        g_assert_cmpint (p.c[2], ==, 106);
        p = read_px (&b, 8, 8);
        g_assert_cmpint (p.c[1], ==, 88);
        g_assert_cmpint (p.c[2], ==, 123);
        p = read_px (&b, 0, 0);
        g_assert_cmpint (p.c[1], ==, 100);
        g_assert_cmpint (p.c[2], ==, 100);
      }
    }
    canvas_free (&b);
  }
}

/* A full mask paints exactly what a fill paints (on whole 2x2 blocks: a
 * fill's chroma takes every block it touches, a blend's the blocks' mean
 * coverage). */
static void
test_blend_full_is_fill (void)
{
  static const guint8 full[6 * 4] = {[0 ... 23] = 255 };
  const hyg_color c = { 30, 200, 90 };
  for (int l = HY_PIXEL_RGB; l <= HY_PIXEL_I420; l++) {
    canvas_buf f = canvas_new (l), m = canvas_new (l);
    hyg_canvas_fill_rect (&f.c, 4, 2, 6, 4, c);
    hyg_canvas_blend_mask (&m.c, 4, 2, full, 6, 4, 6, c);
    for (int i = 0; i < 3; i++)
      if (f.mem[i])
        g_assert_cmpmem (f.mem[i], i == 0 ? f.c.strides[0] * H
            : f.c.strides[i] * H / 2, m.mem[i], i == 0 ? m.c.strides[0] * H
            : m.c.strides[i] * H / 2);
    canvas_free (&f);
    canvas_free (&m);
  }
}

/* Coverage at or below row `from` (of the mask) and its largest value. */
static int
coverage_below (const hyg_text_mask *m, int row, int *max)
{
  int sum = 0;
  *max = 0;
  for (int y = MAX (row, 0); y < m->mask_h; y++)
    for (int x = 0; x < m->mask_w; x++) {
      int v = m->coverage[y * m->stride + x];
      sum += v;
      *max = MAX (*max, v);
    }
  return sum;
}

/* Pango's text: descenders below the baseline ("gr"; none for "ab"),
 * digits, antialiasing (partial coverage), sizes, invalid UTF-8. */
static void
test_text_render (void)
{
  hyg_text_renderer *r = hyg_text_renderer_new ();
  hyg_text_renderer_set_font (r, "Sans", 20);
  const hyg_text_mask *m = hyg_text_render (r, "ab");
  int base = m->baseline - m->mask_y;   /* baseline row in the mask */
  g_assert_cmpint (m->height, >=, 20);
  g_assert_cmpint (m->height, <=, 30);
  g_assert_cmpint (base, >, 10);
  int max;
  /* "ab" sits on the baseline: at most a faint row of antialiasing */
  coverage_below (m, base + 1, &max);
  g_assert_cmpint (max, ==, 0);
  m = hyg_text_render (r, "gr");
  base = m->baseline - m->mask_y;
  /* "g" hangs well below it, solidly */
  coverage_below (m, base + 3, &max);
  g_assert_cmpint (max, >=, 200);

  /* "green 0.98": the g's descender, digits' ink, partial coverage */
  m = hyg_text_render (r, "green 0.98");
  base = m->baseline - m->mask_y;
  g_assert_cmpint (coverage_below (m, base + 3, &max), >, 0);
  int partial = 0, full = 0;
  for (int y = 0; y < m->mask_h; y++)
    for (int x = 0; x < m->mask_w; x++) {
      int v = m->coverage[y * m->stride + x];
      partial += v > 0 && v < 255;
      full += v == 255;
    }
  g_assert_cmpint (partial, >, 20);
  g_assert_cmpint (full, >, 20);
  /* the digits' half: ink in the top rows (above x-height) right of the
   * middle, where "0.98" is */
  int digits = 0;
  for (int y = 0; y < base - 10; y++)
    for (int x = m->mask_w * 2 / 3; x < m->mask_w; x++)
      digits += m->coverage[y * m->stride + x] > 128;
  g_assert_cmpint (digits, >, 5);
  int wide = m->width;
  g_assert_cmpint (wide, >, hyg_text_render (r, "green")->width);

  /* a bigger font, a bigger mask; a size in the description wins */
  hyg_text_renderer_set_font (r, "Sans", 40);
  g_assert_cmpint (hyg_text_render (r, "green 0.98")->width, >, wide * 3 / 2);
  hyg_text_renderer_set_font (r, "Sans 20", 40);
  g_assert_cmpint (hyg_text_render (r, "green 0.98")->width, ==, wide);
  /* absurd sizes stop at HYG_TEXT_MAX_SIZE */
  hyg_text_renderer_set_font (r, "Sans 100000", 10);
  m = hyg_text_render (r, "g");
  g_assert_cmpint (m->height, >, HYG_TEXT_MAX_SIZE);
  g_assert_cmpint (m->height, <, HYG_TEXT_MAX_SIZE * 2);
  hyg_text_renderer_set_font (r, "Sans 20", 40);
  /* an empty string has no ink; invalid UTF-8 renders (as U+FFFD) */
  m = hyg_text_render (r, "");
  g_assert_cmpint (m->width, ==, 0);
  m = hyg_text_render (r, "caf\xe9");
  g_assert_cmpint (m->mask_w, >, 0);
  hyg_text_renderer_free (r);
}

/* Strings seen before are not rendered again; the cache stays bounded and
 * a change of font empties it. */
static void
test_text_cache (void)
{
  hyg_text_renderer *r = hyg_text_renderer_new ();
  hyg_text_renderer_set_font (r, NULL, 12);
  const hyg_text_mask *a = hyg_text_render (r, "car 0.91");
  hyg_text_render (r, "person 0.50");
  g_assert_cmpuint (hyg_text_renderer_n_rendered (r), ==, 2);
  for (int i = 0; i < 10; i++) {
    g_assert_true (hyg_text_render (r, "car 0.91") == a);
    hyg_text_render (r, "person 0.50");
  }
  g_assert_cmpuint (hyg_text_renderer_n_rendered (r), ==, 2);
  hyg_text_renderer_set_font (r, "Sans", 12);   /* the same font: kept */
  g_assert_cmpuint (hyg_text_renderer_n_cached (r), ==, 2);
  for (int i = 0; i < 3 * HYG_TEXT_CACHE_ENTRIES; i++) {
    char s[32];
    g_snprintf (s, sizeof s, "object %d", i);
    hyg_text_render (r, s);
    /* the most recent stays */
    hyg_text_render (r, "car 0.91");
  }
  g_assert_cmpuint (hyg_text_renderer_n_cached (r), ==,
      HYG_TEXT_CACHE_ENTRIES);
  guint n = hyg_text_renderer_n_rendered (r);
  hyg_text_render (r, "car 0.91");
  g_assert_cmpuint (hyg_text_renderer_n_rendered (r), ==, n);
  hyg_text_render (r, "object 0");      /* evicted long ago */
  g_assert_cmpuint (hyg_text_renderer_n_rendered (r), ==, n + 1);
  hyg_text_renderer_set_font (r, "Serif", 12);
  g_assert_cmpuint (hyg_text_renderer_n_cached (r), ==, 0);
  hyg_text_renderer_free (r);
}

/* A label: background with a margin round the text's box, text inside. */
static void
test_label (void)
{
  canvas_buf b = canvas_new (HY_PIXEL_RGBX);
  hyg_text_renderer *r = hyg_text_renderer_new ();
  hyg_text_renderer_set_font (r, NULL, 10);
  const hyg_text_mask *m = hyg_text_render (r, "hi");
  int margin = hyg_text_label_margin (m);
  int h = hyg_text_draw_label (&b.c, m, 0, 0, (hyg_color) {0, 255, 0},
      (hyg_color) {255, 0, 255});
  g_assert_cmpint (h, ==, hyg_text_label_height (m));
  g_assert_cmpint (h, ==, m->height + 2 * margin);
  g_assert_true (painted (&b, 0, 0));   /* background */
  g_assert_true (painted (&b, m->width + 2 * margin - 1, h - 1));
  g_assert_false (painted (&b, m->width + 2 * margin, 0));
  g_assert_false (painted (&b, 0, h));
  /* text: some pixels have red (the text's, not the background's) */
  int text = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < m->width + 2 * margin; x++)
      text += b.mem[0][y * b.c.strides[0] + x * 4] > 0;
  g_assert_cmpint (text, >, 5);
  hyg_text_renderer_free (r);
  canvas_free (&b);
}

/* A line paints its ends and the pixels between, `width` across, nothing
 * else; lines reaching past the canvas are clipped. */
static void
test_line (void)
{
  canvas_buf b = canvas_new (HY_PIXEL_RGB);
  hyg_canvas_draw_line (&b.c, 2, 3, 30, 3, 1, (hyg_color) {255, 0, 0});
  for (int x = 2; x <= 30; x++)
    g_assert_true (painted (&b, x, 3));
  g_assert_false (painted (&b, 1, 3));
  g_assert_false (painted (&b, 31, 3));
  g_assert_false (painted (&b, 10, 2));
  g_assert_false (painted (&b, 10, 4));
  hyg_canvas_draw_line (&b.c, 0, 0, 19, 19, 3, (hyg_color) {0, 255, 0});
  g_assert_true (painted (&b, 10, 10));
  g_assert_true (painted (&b, 11, 10));
  g_assert_false (painted (&b, 15, 10));
  hyg_canvas_draw_line (&b.c, -50, 10, 100, 10, 1, (hyg_color) {1, 1, 1});
  g_assert_true (painted (&b, 0, 10));
  g_assert_true (painted (&b, W - 1, 10));
  canvas_free (&b);
}

/* A class map at full opacity paints what fills of its classes' colours
 * paint, on every layout; the background class and the map's outside are
 * left alone. */
static void
test_class_map_is_fill (void)
{
  static const hy_pixel_layout layouts[] = { HY_PIXEL_RGB, HY_PIXEL_BGRA,
    HY_PIXEL_XRGB, HY_PIXEL_GRAY8, HY_PIXEL_NV12, HY_PIXEL_I420
  };
  /* 4 x 1 map over the canvas's left 32 columns: classes 1, 2, 0, 3 */
  static const float ids[4] = { 1, 2, 0, 3 };
  hyg_color palette[4];
  for (int i = 0; i < 4; i++)
    palette[i] = hyg_class_color (i);
  g_assert_cmpuint (palette[1].r, ==, 128);
  g_assert_cmpuint (palette[3].g, ==, 128);
  hyg_class_map map = {.ids = ids,.w = 4,.h = 1,.x = 0,.y = 0,.width = 32,
    .height = H
  };
  for (guint i = 0; i < G_N_ELEMENTS (layouts); i++) {
    canvas_buf a = canvas_new (layouts[i]), b = canvas_new (layouts[i]);
    canvas_fill_grey (&a, 77);
    canvas_fill_grey (&b, 77);
    hyg_canvas_blend_classes (&a.c, &map, palette, 4, 0, 255);
    hyg_canvas_fill_rect (&b.c, 0, 0, 8, H, palette[1]);
    hyg_canvas_fill_rect (&b.c, 8, 0, 8, H, palette[2]);
    hyg_canvas_fill_rect (&b.c, 24, 0, 8, H, palette[3]);
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        px3 pa = read_px (&a, x, y), pb = read_px (&b, x, y);
        g_assert_cmpmem (&pa, sizeof pa, &pb, sizeof pb);
      }
    canvas_free (&a);
    canvas_free (&b);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/overlay-draw/fill-packed-colour",
      test_fill_packed_colour);
  g_test_add_func ("/overlay-draw/clipping", test_clipping);
  g_test_add_func ("/overlay-draw/stroke", test_stroke);
  g_test_add_func ("/overlay-draw/blend-every-layout",
      test_blend_every_layout);
  g_test_add_func ("/overlay-draw/blend-full-is-fill",
      test_blend_full_is_fill);
  g_test_add_func ("/overlay-draw/text-render", test_text_render);
  g_test_add_func ("/overlay-draw/text-cache", test_text_cache);
  g_test_add_func ("/overlay-draw/yuv-chroma", test_yuv_chroma);
  g_test_add_func ("/overlay-draw/label", test_label);
  g_test_add_func ("/overlay-draw/line", test_line);
  g_test_add_func ("/overlay-draw/class-map-is-fill",
      test_class_map_is_fill);
  return g_test_run ();
}
