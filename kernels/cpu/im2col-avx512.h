/*
 * im2col-avx512.h — conv.c's lowering of a 2-D input to columns at
 * column stride 2, one kernel tap at a time, with AVX-512: two masked
 * loads and a permute per 16 columns instead of a scalar strided loop,
 * the padding from the masks.  (ResNet's strided convolutions 3-9 %
 * faster on the packed GEMM; at stride 1, memcpy and memset, which
 * conv.c uses there, were as fast or faster: docs/PERFORMANCE.md.)
 */
#ifndef HY_CPU_IM2COL_AVX512_H
#define HY_CPU_IM2COL_AVX512_H

#include <stdbool.h>
#include <stdint.h>

/* Whether hy_im2col_tap_2d runs here (AVX-512F) for this column stride
 * (2 only). */
bool hy_im2col_tap_2d_supported (int64_t stride_w);

/* Output rows [r0, r1) of one kernel tap of a 2-D convolution with
 * column stride 2, into dst (out_w floats per row, rows contiguous): row
 * r, column o reads plane[ih · in_w + 2·o + first] with ih = r · stride_h
 * + ih_off, and is 0 where ih or the column falls outside the (in_h,
 * in_w) plane. */
void hy_im2col_tap_2d (float *dst, const float *plane, int64_t in_h,
    int64_t in_w, int64_t out_w, int64_t r0, int64_t r1, int64_t stride_h,
    int64_t ih_off, int64_t first);

#endif /* HY_CPU_IM2COL_AVX512_H */
