/*
 * layout-blocked.h — one image's channels between the plain layout every
 * tensor of a plan has (C order: a plane of h·w floats per channel) and
 * the channel-blocked ones oneDNN's convolutions read and write: blocks
 * of `block` channels, each an (h·w, block) matrix, block after block.
 * A block of 16 is oneDNN's nChw16c (the channels of the last block past
 * the real ones are zero); one block of all the channels is its nhwc.
 *
 * Convolutions keep plain tensors between layers for now, so a oneDNN
 * convolution (conv-dnnl.c) turns its input into blocks first and its
 * output back after; the way back also runs the fused epilogue
 * (epilogue.h) on each piece while it is in cache, the pass that conv.c
 * runs after its GEMMs.
 */
#ifndef HY_CPU_LAYOUT_BLOCKED_H
#define HY_CPU_LAYOUT_BLOCKED_H

#include <stdint.h>

#include "kernels/cpu/epilogue.h"

/* Positions per piece of work: a tile of 16 channels × this many
 * positions is 4 KiB each way, in L1 while one side is read with a
 * stride. */
#define HY_BLOCKED_TILE 64

/* Positions [hw0, hw1) of `channels` plain planes of `hw` floats at x
 * into the blocked y (the whole image: block b starts at y + b·hw·block);
 * channels past `channels` in the last block become 0. */
void hy_blocked_from_planes (float *y, const float *x, int64_t channels,
    int64_t hw, int64_t block, int64_t hw0, int64_t hw1);

/* The `channels` channels of the blocked x (the last block's padding
 * ignored) into plain planes of `hw` floats at y, then the epilogue `e`
 * on them (NULL or nothing set: none), with res laid out like y (may be
 * NULL) and ch the operands of channel 0 of y. */
void hy_blocked_to_planes (float *y, const float *x, int64_t channels,
    int64_t hw, int64_t block, const hy_fused_epilogue *e, const float *res,
    const hy_epilogue_channels *ch);

/* The same for n positions of x (a run of them: x holds n, not hw) into
 * planes of hw floats at y (and res), where y points at the run's first
 * position in channel 0's plane. */
void hy_blocked_to_planes_part (float *y, const float *x, int64_t channels,
    int64_t n, int64_t hw, int64_t block, const hy_fused_epilogue *e,
    const float *res, const hy_epilogue_channels *ch);

#endif /* HY_CPU_LAYOUT_BLOCKED_H */
