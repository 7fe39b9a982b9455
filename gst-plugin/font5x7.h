/*
 * font5x7.h — the overlay's built-in bitmap font (no Cairo, no Pango).
 */
#ifndef HY_FONT5X7_H
#define HY_FONT5X7_H

#include <stdint.h>

#define HY_FONT_WIDTH 5
#define HY_FONT_HEIGHT 7
#define HY_FONT_ADVANCE 6       /* one blank column between glyphs */

/* HY_FONT_HEIGHT rows for `c`; characters outside printable ASCII draw
 * as '?'.  Row bit (HY_FONT_WIDTH - 1 - x) is column x. */
const uint8_t *hy_font_glyph (char c);

#endif /* HY_FONT5X7_H */
