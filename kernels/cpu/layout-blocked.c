/*
 * layout-blocked.c — plain planes to channel blocks and back (see
 * layout-blocked.h).
 *
 * Both ways are transposes of (16, hw) matrices, done a tile of TILE_HW
 * positions at a time: a tile's 16 plain row pieces and its block piece
 * (4 KiB each way) stay in L1 while one side is read with a stride.
 */
#include <string.h>

#include "kernels/cpu/layout-blocked.h"

#define B HY_BLOCKED_CHANNELS
#define TILE_HW 64

HY_CPU_VECTOR_CLONES static void
tile_to_block (float *restrict y, const float *restrict x, int64_t hw,
    int64_t channels, int64_t n)
{
  for (int64_t c = 0; c < channels; c++)
    for (int64_t i = 0; i < n; i++)
      y[i * B + c] = x[c * hw + i];
  for (int64_t c = channels; c < B; c++)
    for (int64_t i = 0; i < n; i++)
      y[i * B + c] = 0.0f;
}

HY_CPU_VECTOR_CLONES static void
tile_to_planes (float *restrict y, const float *restrict x, int64_t hw,
    int64_t channels, int64_t n)
{
  for (int64_t c = 0; c < channels; c++)
    for (int64_t i = 0; i < n; i++)
      y[c * hw + i] = x[i * B + c];
}

void
hy_blocked_from_planes (float *y, const float *x, int64_t channels,
    int64_t hw, int64_t block0, int64_t block1)
{
  for (int64_t b = block0; b < block1; b++) {
    const int64_t c0 = b * B;
    const int64_t nc = channels - c0 < B ? channels - c0 : B;
    float *yb = y + b * hw * B;
    for (int64_t i0 = 0; i0 < hw; i0 += TILE_HW) {
      const int64_t n = hw - i0 < TILE_HW ? hw - i0 : TILE_HW;
      tile_to_block (yb + i0 * B, x + c0 * hw + i0, hw, nc, n);
    }
  }
}

void
hy_blocked_to_planes (float *y, const float *x, int64_t channels,
    int64_t hw, const hy_fused_epilogue *e, const float *res,
    const hy_epilogue_channels *ch)
{
  const bool epilogue = e && hy_epilogue_is_set (e);
  for (int64_t c0 = 0; c0 < channels; c0 += B) {
    const int64_t nc = channels - c0 < B ? channels - c0 : B;
    const float *xb = x + c0 * hw;      /* block c0 / B */
    const hy_epilogue_channels bch = epilogue
        ? hy_epilogue_channels_from (ch, c0) : (hy_epilogue_channels) { 0 };
    for (int64_t i0 = 0; i0 < hw; i0 += TILE_HW) {
      const int64_t n = hw - i0 < TILE_HW ? hw - i0 : TILE_HW;
      float *yt = y + c0 * hw + i0;
      tile_to_planes (yt, xb + i0 * B, hw, nc, n);
      if (epilogue)
        hy_epilogue_rows (e, yt, res ? res + c0 * hw + i0 : NULL, nc, n, hw,
            &bch);
    }
  }
}
