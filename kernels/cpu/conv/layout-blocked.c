/*
 * layout-blocked.c — plain planes to channel blocks and back (see
 * layout-blocked.h).
 *
 * Both ways are transposes, done a tile of (up to) 16 channels ×
 * HY_BLOCKED_TILE positions at a time.  The inner loop runs over a
 * position's 16 channels: the blocked side is read or written 64
 * contiguous bytes at a time, and the plain side as 16 sequential
 * streams.  (Inner loops along the planes instead were 3x slower into
 * blocks, and 10-30x slower to or from nhwc blocks of 256-1024 channels,
 * whose kilobyte strides land every access of a tile in the same few
 * cache sets.)
 */
#include "kernels/cpu/conv/layout-blocked.h"

#define TILE_C 16

/* A tile: nc ≤ TILE_C channels of n positions, the rest of the tile's
 * channels up to pad_to zero. */
HY_CPU_VECTOR_CLONES static void
tile_to_block (float *restrict y, int64_t block, const float *restrict x,
    int64_t hw, int64_t nc, int64_t pad_to, int64_t n)
{
  if (nc == TILE_C) {           /* a constant count gcc unrolls */
    for (int64_t i = 0; i < n; i++)
      for (int64_t c = 0; c < TILE_C; c++)
        y[i * block + c] = x[c * hw + i];
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    for (int64_t c = 0; c < nc; c++)
      y[i * block + c] = x[c * hw + i];
    for (int64_t c = nc; c < pad_to; c++)
      y[i * block + c] = 0.0f;
  }
}

HY_CPU_VECTOR_CLONES static void
tile_to_planes (float *restrict y, int64_t hw, const float *restrict x,
    int64_t block, int64_t nc, int64_t n)
{
  if (nc == TILE_C) {
    for (int64_t i = 0; i < n; i++)
      for (int64_t c = 0; c < TILE_C; c++)
        y[c * hw + i] = x[i * block + c];
    return;
  }
  for (int64_t i = 0; i < n; i++)
    for (int64_t c = 0; c < nc; c++)
      y[c * hw + i] = x[i * block + c];
}

void
hy_blocked_from_planes (float *y, const float *x, int64_t channels,
    int64_t hw, int64_t block, int64_t hw0, int64_t hw1)
{
  const int64_t blocks = (channels + block - 1) / block;
  for (int64_t b = 0; b < blocks; b++) {
    float *yb = y + b * hw * block;
    for (int64_t i0 = hw0; i0 < hw1; i0 += HY_BLOCKED_TILE) {
      const int64_t n = hw1 - i0 < HY_BLOCKED_TILE ? hw1 - i0
          : HY_BLOCKED_TILE;
      for (int64_t c0 = 0; c0 < block; c0 += TILE_C) {
        const int64_t first = b * block + c0;
        const int64_t left = channels - first;
        const int64_t nc = left <= 0 ? 0 : left < TILE_C ? left : TILE_C;
        const int64_t tile = block - c0 < TILE_C ? block - c0 : TILE_C;
        tile_to_block (yb + i0 * block + c0, block, x + first * hw + i0, hw,
            nc < tile ? nc : tile, tile, n);
      }
    }
  }
}

void
hy_blocked_to_planes (float *y, const float *x, int64_t channels,
    int64_t hw, int64_t block, const hy_fused_epilogue *e, const float *res,
    const hy_epilogue_channels *ch)
{
  hy_blocked_to_planes_part (y, x, channels, hw, hw, block, e, res, ch);
}

void
hy_blocked_to_planes_part (float *y, const float *x, int64_t channels,
    int64_t n, int64_t hw, int64_t block, const hy_fused_epilogue *e,
    const float *res, const hy_epilogue_channels *ch)
{
  const bool epilogue = e && hy_epilogue_is_set (e);
  for (int64_t c0 = 0; c0 < channels; c0 += TILE_C) {
    const int64_t nc = channels - c0 < TILE_C ? channels - c0 : TILE_C;
    /* Channel c0's block and its place in it (tiles never straddle a
     * block: block is 16 or holds every channel). */
    const float *xb = x + c0 / block * block * n + c0 % block;
    const hy_epilogue_channels tch = epilogue
        ? hy_epilogue_channels_from (ch, c0) : (hy_epilogue_channels) { 0 };
    for (int64_t i0 = 0; i0 < n; i0 += HY_BLOCKED_TILE) {
      const int64_t m = n - i0 < HY_BLOCKED_TILE ? n - i0
          : HY_BLOCKED_TILE;
      float *yt = y + c0 * hw + i0;
      tile_to_planes (yt, hw, xb + i0 * block, block, nc, m);
      if (epilogue)
        hy_epilogue_rows (e, yt, res ? res + c0 * hw + i0 : NULL, nc, m, hw,
            &tch);
    }
  }
}
