/*
 * overlay-text.c — text as coverage masks through Pango and Cairo (see
 * overlay-text.h).
 */
#include <string.h>

#include <pango/pangocairo.h>

#include "overlay-text.h"

#define DEFAULT_FONT "Sans"

typedef struct entry {
  char *text;                   /* the key, as asked for */
  GList link;                   /* in the renderer's lru; data: the entry */
  hyg_text_mask mask;
  uint8_t *pixels;
  size_t bytes;
} entry;

struct hyg_text_renderer {
  PangoFontMap *map;
  PangoContext *context;
  PangoLayout *layout;
  char *desc;                   /* the font set last */
  int pixel_size;
  GHashTable *cache;            /* text → entry */
  GQueue lru;                   /* of entries, most recently used first */
  size_t bytes;
  unsigned rendered;
};

static void
entry_free (entry *e)
{
  g_free (e->text);
  g_free (e->pixels);
  g_free (e);
}

static void
cache_clear (hyg_text_renderer *r)
{
  g_hash_table_remove_all (r->cache);
  GList *l;
  while ((l = g_queue_pop_head_link (&r->lru)))
    entry_free (l->data);
  r->bytes = 0;
}

/* Drops the least recently used masks, never the newest, until the cache
 * is within its bounds. */
static void
cache_trim (hyg_text_renderer *r)
{
  while (r->lru.length > 1 && (r->lru.length > HYG_TEXT_CACHE_ENTRIES
          || r->bytes > HYG_TEXT_CACHE_BYTES)) {
    entry *e = g_queue_pop_tail_link (&r->lru)->data;
    g_hash_table_remove (r->cache, e->text);
    r->bytes -= e->bytes;
    entry_free (e);
  }
}

hyg_text_renderer *
hyg_text_renderer_new (void)
{
  hyg_text_renderer *r = g_new0 (hyg_text_renderer, 1);
  r->map = pango_cairo_font_map_new ();
  r->context = pango_font_map_create_context (r->map);
  /* 72 dpi: a size in points is a size in pixels */
  pango_cairo_context_set_resolution (r->context, 72.0);
  cairo_font_options_t *options = cairo_font_options_create ();
  cairo_font_options_set_antialias (options, CAIRO_ANTIALIAS_GRAY);
  pango_cairo_context_set_font_options (r->context, options);
  cairo_font_options_destroy (options);
  r->layout = pango_layout_new (r->context);
  /* a label is one line: a newline in it shows as a glyph */
  pango_layout_set_single_paragraph_mode (r->layout, TRUE);
  r->cache = g_hash_table_new (g_str_hash, g_str_equal);
  g_queue_init (&r->lru);
  hyg_text_renderer_set_font (r, NULL, 10);
  return r;
}

void
hyg_text_renderer_free (hyg_text_renderer *r)
{
  if (!r)
    return;
  cache_clear (r);
  g_hash_table_unref (r->cache);
  g_object_unref (r->layout);
  g_object_unref (r->context);
  g_object_unref (r->map);
  g_free (r->desc);
  g_free (r);
}

void
hyg_text_renderer_set_font (hyg_text_renderer *r, const char *desc,
    int pixel_size)
{
  if (!desc || !*desc)
    desc = DEFAULT_FONT;
  pixel_size = CLAMP (pixel_size, 1, HYG_TEXT_MAX_SIZE);
  if (r->desc && !strcmp (r->desc, desc) && r->pixel_size == pixel_size)
    return;
  g_free (r->desc);
  r->desc = g_strdup (desc);
  r->pixel_size = pixel_size;
  PangoFontDescription *fd = pango_font_description_from_string (desc);
  /* at 72 dpi points and pixels are one */
  int given = pango_font_description_get_set_fields (fd)
      & PANGO_FONT_MASK_SIZE ? pango_font_description_get_size (fd) : 0;
  if (given <= 0)
    pango_font_description_set_absolute_size (fd,
        (double) pixel_size * PANGO_SCALE);
  else if (given > HYG_TEXT_MAX_SIZE * PANGO_SCALE)
    pango_font_description_set_absolute_size (fd,
        (double) HYG_TEXT_MAX_SIZE * PANGO_SCALE);
  pango_layout_set_font_description (r->layout, fd);
  pango_font_description_free (fd);
  cache_clear (r);
}

/* Lays out and renders `text` into a new entry. */
static entry *
render (hyg_text_renderer *r, const char *text)
{
  entry *e = g_new0 (entry, 1);
  e->text = g_strdup (text);
  e->link.data = e;
  if (g_utf8_validate (text, -1, NULL)) {
    pango_layout_set_text (r->layout, text, -1);
  } else {
    char *valid = g_utf8_make_valid (text, -1);
    pango_layout_set_text (r->layout, valid, -1);
    g_free (valid);
  }
  PangoRectangle ink, logical;
  pango_layout_get_pixel_extents (r->layout, &ink, &logical);
  int x0 = logical.x, y0 = logical.y;
  int x1 = logical.x + logical.width, y1 = logical.y + logical.height;
  if (ink.width > 0 && ink.height > 0) {
    x0 = MIN (x0, ink.x);
    y0 = MIN (y0, ink.y);
    x1 = MAX (x1, ink.x + ink.width);
    y1 = MAX (y1, ink.y + ink.height);
  }
  hyg_text_mask *m = &e->mask;
  m->width = MIN (logical.width, HYG_TEXT_MAX_WIDTH);
  m->height = logical.height;
  m->baseline = pango_layout_get_baseline (r->layout) / PANGO_SCALE
      - logical.y;
  m->mask_x = x0 - logical.x;
  m->mask_y = y0 - logical.y;
  m->mask_w = MIN (x1 - x0, HYG_TEXT_MAX_WIDTH);
  m->mask_h = y1 - y0;
  if (m->mask_w > 0 && m->mask_h > 0) {
    m->stride = cairo_format_stride_for_width (CAIRO_FORMAT_A8, m->mask_w);
    e->bytes = (size_t) m->stride * m->mask_h;
    e->pixels = g_malloc0 (e->bytes);
    cairo_surface_t *surface = cairo_image_surface_create_for_data
        (e->pixels, CAIRO_FORMAT_A8, m->mask_w, m->mask_h, m->stride);
    cairo_t *cr = cairo_create (surface);
    cairo_translate (cr, -x0, -y0);
    pango_cairo_show_layout (cr, r->layout);
    cairo_destroy (cr);
    cairo_surface_flush (surface);
    cairo_surface_destroy (surface);
  } else {
    m->mask_w = m->mask_h = 0;
  }
  m->coverage = e->pixels;
  e->bytes += sizeof *e + strlen (text) + 1;
  r->rendered++;
  return e;
}

const hyg_text_mask *
hyg_text_render (hyg_text_renderer *r, const char *text)
{
  entry *e = g_hash_table_lookup (r->cache, text);
  if (e) {
    g_queue_unlink (&r->lru, &e->link);
  } else {
    e = render (r, text);
    g_hash_table_insert (r->cache, e->text, e);
    r->bytes += e->bytes;
  }
  g_queue_push_head_link (&r->lru, &e->link);
  cache_trim (r);
  return &e->mask;
}

unsigned
hyg_text_renderer_n_rendered (const hyg_text_renderer *r)
{
  return r->rendered;
}

unsigned
hyg_text_renderer_n_cached (const hyg_text_renderer *r)
{
  return r->lru.length;
}

int
hyg_text_label_margin (const hyg_text_mask *m)
{
  return MAX (1, (m->height + 6) / 12);
}

int
hyg_text_label_height (const hyg_text_mask *m)
{
  return m->height + 2 * hyg_text_label_margin (m);
}

int
hyg_text_label_width (const hyg_text_mask *m)
{
  return m->width + 2 * hyg_text_label_margin (m);
}

int
hyg_text_draw_label (const hyg_canvas *c, const hyg_text_mask *m, int x,
    int y, hyg_color background, hyg_color color)
{
  int margin = hyg_text_label_margin (m);
  int h = m->height + 2 * margin;
  hyg_canvas_fill_rect (c, x, y, hyg_text_label_width (m), h, background);
  hyg_canvas_blend_mask (c, x + margin + m->mask_x, y + margin + m->mask_y,
      m->coverage, m->mask_w, m->mask_h, m->stride, color);
  return h;
}
