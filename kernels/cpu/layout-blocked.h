/*
 * layout-blocked.h — one image's channels between the plain layout every
 * tensor of a plan has (C order: a plane of h·w floats per channel) and
 * the channel-blocked one oneDNN's AVX-512 convolutions read and write
 * (its nChw16c: blocks of 16 channels, each an (h·w, 16) matrix, the
 * channels of the last block past the real ones zero).
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

/* Channels per block. */
#define HY_BLOCKED_CHANNELS 16

/* Blocks [block0, block1) of `channels` plain planes of `hw` floats at x
 * into the blocked y (the whole image's blocks: block b starts at
 * y + b·hw·16); channels past `channels` in the last block become 0. */
void hy_blocked_from_planes (float *y, const float *x, int64_t channels,
    int64_t hw, int64_t block0, int64_t block1);

/* The `channels` channels of the blocked x (whole blocks, the last one's
 * padding ignored) into plain planes of `hw` floats at y, then the
 * epilogue `e` on them (NULL or nothing set: none), with res laid out
 * like y (may be NULL) and ch the operands of channel 0 of y. */
void hy_blocked_to_planes (float *y, const float *x, int64_t channels,
    int64_t hw, const hy_fused_epilogue *e, const float *res,
    const hy_epilogue_channels *ch);

#endif /* HY_CPU_LAYOUT_BLOCKED_H */
