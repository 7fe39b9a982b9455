/*
 * overlay-draw.h — filled rectangles, box outlines and bitmap text on a
 * mapped video frame, for hybridoverlay.
 *
 * Everything is built from one clipped rectangle fill, so every layout
 * (packed RGB, GRAY8, NV12, I420) needs only that.  On 4:2:0 frames the
 * chroma of a rectangle covers the 2x2 blocks it touches.
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

/* Text in the 5x7 font, each font pixel drawn `scale` x `scale`. */
int hyg_canvas_text_width (const char *text, int scale);
int hyg_canvas_text_height (int scale);
void hyg_canvas_draw_text (const hyg_canvas *c, int x, int y, const char *text,
    int scale, hyg_color color);
/* Text on a filled background with a margin of `scale` pixels; returns the
 * height of the label. */
int hyg_canvas_draw_label (const hyg_canvas *c, int x, int y, const char *text,
    int scale, hyg_color background, hyg_color color);

#endif /* GST_HYBRID_OVERLAY_DRAW_H */
