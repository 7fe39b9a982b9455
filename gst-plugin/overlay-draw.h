/*
 * overlay-draw.h — filled rectangles, box outlines and coverage masks
 * (antialiased text, overlay-text.h) on a mapped video frame, for
 * hybridoverlay.
 *
 * Two clipped operations serve every layout (packed RGB, GRAY8, NV12,
 * I420): a rectangle fill and a mask blend.  On 4:2:0 frames the chroma of
 * a rectangle covers the 2x2 blocks it touches; colours become YUV with
 * BT.601 limited range.
 */
#ifndef GST_HYBRID_OVERLAY_DRAW_H
#define GST_HYBRID_OVERLAY_DRAW_H

#include <stdint.h>

#include "hybrid-frame.h"

typedef struct hyg_canvas {
  hy_pixel_layout layout;
  int width, height;
  uint8_t *planes[3];
  int strides[3];
} hyg_canvas;

typedef struct hyg_color {
  uint8_t r, g, b;
} hyg_color;

/* Clipped to the canvas; nothing happens for w or h <= 0. */
void hyg_canvas_fill_rect (const hyg_canvas *c, int x, int y, int w, int h,
    hyg_color color);
/* The outline of (x, y, w, h), `line` pixels wide, inside the box. */
void hyg_canvas_stroke_rect (const hyg_canvas *c, int x, int y, int w, int h,
    int line, hyg_color color);

/* A line from (x0, y0) to (x1, y1), `width` pixels across (squares of
 * that side stepped along it), clipped to the canvas. */
void hyg_canvas_draw_line (const hyg_canvas *c, int x0, int y0, int x1,
    int y1, int width, hyg_color color);

/* `color` over the canvas, weighted by an 8-bit coverage mask (w x h,
 * `stride` bytes a row) whose top-left is at (x, y): coverage 0 leaves a
 * pixel as it is, 255 paints it (alpha, where there is one, becomes 255),
 * values between mix the two, rounded.  Clipped to the canvas.  Luma and
 * packed pixels blend one by one; 4:2:0 chroma once per 2x2 block, with
 * the mean coverage of the block's pixels on the canvas (outside the mask
 * counting as 0). */
void hyg_canvas_blend_mask (const hyg_canvas *c, int x, int y,
    const uint8_t *mask, int w, int h, int stride, hyg_color color);

/* Where a class map (w x h class ids, row-major, as floats) lies: over
 * the canvas rectangle (x, y) … (x + width, y + height), which may reach
 * past the canvas (letterboxing). */
typedef struct hyg_class_map {
  const float *ids;
  int w, h;
  float x, y, width, height;
} hyg_class_map;

/* Each canvas pixel under the map takes its map pixel's class colour
 * (nearest sampling), palette[id % n_palette], mixed in with opacity
 * `alpha` (0 … 255); class `skip` (a background; -1: none) and negative
 * ids are left as they are.  4:2:0 chroma once per 2x2 block, from the
 * class of its top-left pixel. */
void hyg_canvas_blend_classes (const hyg_canvas *c, const hyg_class_map *map,
    const hyg_color *palette, int n_palette, int skip, unsigned alpha);

/* The colour of class `id`: Pascal VOC's palette (class 1 dark red, 2 dark
 * green, 3 olive, …; 0 black), which GluonCV's examples draw with too. */
hyg_color hyg_class_color (int id);

#endif /* GST_HYBRID_OVERLAY_DRAW_H */
