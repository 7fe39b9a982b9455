/*
 * overlay-text.h — antialiased text for hybridoverlay: strings laid out by
 * Pango and rendered by Cairo into 8-bit coverage masks, which
 * overlay-draw.h blends onto any video layout.
 *
 * A renderer has its own PangoCairo font map and context (one per element:
 * Pango objects are not shared between threads) and keeps the masks of the
 * strings it rendered last, so labels that repeat frame after frame are
 * laid out and rendered once.  Not thread-safe: one streaming thread.
 */
#ifndef GST_HYBRID_OVERLAY_TEXT_H
#define GST_HYBRID_OVERLAY_TEXT_H

#include <stdint.h>

#include "overlay-draw.h"

/* How many masks a renderer keeps, and their bytes at most (the string
 * rendered last is kept whatever its size). */
#define HYG_TEXT_CACHE_ENTRIES 128
#define HYG_TEXT_CACHE_BYTES (4u << 20)
/* Longer lines are cut at this many pixels; larger fonts are this size. */
#define HYG_TEXT_MAX_WIDTH 4096
#define HYG_TEXT_MAX_SIZE 512

typedef struct hyg_text_renderer hyg_text_renderer;

/* One rendered line.  Its logical box (what a label's background holds:
 * the advance by the font's ascent plus descent) is width x height with the
 * baseline `baseline` pixels below its top.  The coverage covers the union
 * of that box and the ink: mask_w x mask_h bytes (`stride` a row), its
 * top-left at (mask_x, mask_y) from the box's top-left (<= 0 where ink
 * overhangs). */
typedef struct hyg_text_mask {
  int width, height, baseline;
  int mask_x, mask_y, mask_w, mask_h, stride;
  const uint8_t *coverage;
} hyg_text_mask;

hyg_text_renderer *hyg_text_renderer_new (void);
void hyg_text_renderer_free (hyg_text_renderer *r);

/* The font: a Pango font description ("Sans", "DejaVu Serif Bold",
 * "Monospace 18"; NULL or "" is "Sans") and the pixel size to use when it
 * gives none (a size it gives is in pixels); sizes stop at
 * HYG_TEXT_MAX_SIZE.  Changing either drops the
 * cached masks; the same font again costs a string comparison. */
void hyg_text_renderer_set_font (hyg_text_renderer *r, const char *desc,
    int pixel_size);

/* `text` (UTF-8; invalid bytes show as U+FFFD) as one line, from the cache
 * or rendered now.  Valid until the next call on the renderer. */
const hyg_text_mask *hyg_text_render (hyg_text_renderer *r, const char *text);

/* Masks rendered since the renderer was made, and masks held now. */
unsigned hyg_text_renderer_n_rendered (const hyg_text_renderer *r);
unsigned hyg_text_renderer_n_cached (const hyg_text_renderer *r);

/* A label: a `background` rectangle holding the text with a margin of
 * hyg_text_label_margin() pixels, the text blended in `color`, its top-left
 * at (x, y).  Returns the label's height (hyg_text_label_height()). */
int hyg_text_label_margin (const hyg_text_mask *m);
int hyg_text_label_height (const hyg_text_mask *m);
int hyg_text_label_width (const hyg_text_mask *m);
int hyg_text_draw_label (const hyg_canvas *c, const hyg_text_mask *m, int x,
    int y, hyg_color background, hyg_color color);

#endif /* GST_HYBRID_OVERLAY_TEXT_H */
