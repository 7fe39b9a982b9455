/*
 * font5x7.h — the overlay's built-in bitmap font (no Cairo, no Pango).
 */
#ifndef GST_HYBRID_FONT5X7_H
#define GST_HYBRID_FONT5X7_H

#include <stdint.h>

#define HYG_FONT_WIDTH 5
#define HYG_FONT_HEIGHT 7
#define HYG_FONT_ADVANCE 6       /* one blank column between glyphs */

/* HYG_FONT_HEIGHT rows for `c`; characters outside printable ASCII draw
 * as '?'.  Row bit (HYG_FONT_WIDTH - 1 - x) is column x. */
const uint8_t *hyg_font_glyph (char c);

#endif /* GST_HYBRID_FONT5X7_H */
