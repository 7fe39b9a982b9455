/*
 * deform-conv-common.h — the bilinear sample of a modulated deformable
 * convolution, shared by the CPU kernel (kernels/cpu/deform-conv.c) and
 * the CUDA one (kernels/cuda/deform-conv.cuh), so that both sample as
 * MXNet 1.9.1's dmcn_im2col_bilinear does from one definition.
 *
 * Each product and sum is rounded once (single-rounded.h), so that no
 * compiler fuses them into a multiply-add the other backend does not do.
 *
 * C11 and CUDA alike: static inline functions in C, host-and-device ones
 * under nvcc.
 */
#ifndef HY_DEFORM_CONV_COMMON_H
#define HY_DEFORM_CONV_COMMON_H

#include <math.h>
#include <stdint.h>

#include "kernels/single-rounded.h"

#ifdef __CUDACC__
#define HY_DEFORM_HD __host__ __device__ __forceinline__
#else
#define HY_DEFORM_HD static inline
#endif

/* The value of the (height, width) plane at (h, w): the four weights from
 * the fractional parts, corners outside the image 0, summed in this order.
 * The caller has checked -1 < h < height and -1 < w < width. */
HY_DEFORM_HD float
hy_deform_bilinear (const float *plane, int64_t height, int64_t width,
    float h, float w)
{
  const int64_t h_low = (int64_t) floorf (h), w_low = (int64_t) floorf (w);
  const int64_t h_high = h_low + 1, w_high = w_low + 1;
  const float lh = hy_sub_rn (h, (float) h_low);
  const float lw = hy_sub_rn (w, (float) w_low);
  const float hh = hy_sub_rn (1.0f, lh), hw = hy_sub_rn (1.0f, lw);
  float v1 = 0, v2 = 0, v3 = 0, v4 = 0;
  if (h_low >= 0 && w_low >= 0)
    v1 = plane[h_low * width + w_low];
  if (h_low >= 0 && w_high <= width - 1)
    v2 = plane[h_low * width + w_high];
  if (h_high <= height - 1 && w_low >= 0)
    v3 = plane[h_high * width + w_low];
  if (h_high <= height - 1 && w_high <= width - 1)
    v4 = plane[h_high * width + w_high];
  const float w1 = hy_mul_rn (hh, hw), w2 = hy_mul_rn (hh, lw);
  const float w3 = hy_mul_rn (lh, hw), w4 = hy_mul_rn (lh, lw);
  float sum = hy_mul_rn (w1, v1);
  sum = hy_add_rn (sum, hy_mul_rn (w2, v2));
  sum = hy_add_rn (sum, hy_mul_rn (w3, v3));
  return hy_add_rn (sum, hy_mul_rn (w4, v4));
}

#endif /* HY_DEFORM_CONV_COMMON_H */
