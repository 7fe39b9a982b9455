/*
 * im2col-avx512.h — conv.c's lowering of a 2-D input to columns, one
 * kernel tap at a time, with AVX-512 masked loads and stores, the padding
 * from the masks, where that beats conv.c's own rows:
 *  - column stride 2: two masked loads and a permute per 16 columns
 *    instead of a scalar strided loop (ResNet's strided convolutions
 *    8-13 % faster);
 *  - stride 1 on rows of at most 16 outputs (14×14 and 7×7 maps): one
 *    masked load and store per row instead of three calls (memset,
 *    memcpy, memset), 1.6-1.9× faster alone.  On wider rows the calls
 *    won (56-wide rows: 0.146 against 0.254 ms for 64 channels).
 * Measured in docs/PERFORMANCE.md ("Packed weights").
 */
#ifndef HY_CPU_IM2COL_AVX512_H
#define HY_CPU_IM2COL_AVX512_H

#include <stdbool.h>
#include <stdint.h>

/* Whether hy_im2col_tap_2d runs here (AVX-512F) and pays for this column
 * stride and output row width. */
bool hy_im2col_tap_2d_supported (int64_t stride_w, int64_t out_w);

/* Output rows [r0, r1) of one kernel tap of a 2-D convolution with column
 * stride stride_w (1 or 2), into dst (out_w floats per row, rows
 * contiguous): row r, column o reads plane[ih · in_w + o · stride_w +
 * first] with ih = r · stride_h + ih_off, and is 0 where ih or the column
 * falls outside the (in_h, in_w) plane. */
void hy_im2col_tap_2d (float *dst, const float *plane, int64_t in_h,
    int64_t in_w, int64_t out_w, int64_t r0, int64_t r1, int64_t stride_h,
    int64_t ih_off, int64_t stride_w, int64_t first);

#endif /* HY_CPU_IM2COL_AVX512_H */
