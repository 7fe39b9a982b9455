/*
 * deform-conv.cuh — _contrib_ModulatedDeformableConvolution (DCNv2) on
 * the GPU (deform-conv.cu), shared with tests/cuda/emulate-deform-conv.cu:
 * the column buffer's element function, the cuBLAS product's geometry and
 * the bias.
 *
 * As the CPU kernel (kernels/cpu/deform-conv.c), per sample: the columns
 * (C, taps, Ho·Wo), each the bilinear sample of its channel at the tap's
 * shifted position times the tap's mask, with MXNet 1.9.1's
 * out-of-bounds rule; then per convolution group weight · columns, here
 * one strided-batched SGEMM over the groups; then the bias.  The float
 * steps of a column element are single-rounded (single-rounded.h) so
 * that the columns are the CPU's bit for bit: nvcc would otherwise fuse
 * the bilinear weights' products and sums into FMAs.  Only the GEMM's
 * summation order differs from the CPU's.
 */
#ifndef HY_CUDA_DEFORM_CONV_CUH
#define HY_CUDA_DEFORM_CONV_CUH

#include <limits.h>
#include <math.h>

#include "kernels/cuda/launch.cuh"
#include "kernels/deform-conv-common.h"
#include "hybrid-tensor.h"
#include "kernels/params/deform-conv.h"

/* What the column kernel needs of one call: the sizes per sample; and
 * how far apart the samples lie in each tensor, and the columns' size,
 * for the launches. */
typedef struct hy_cuda_deform_args {
  int64_t channels, h, w;       /* data (C, H, W) */
  int64_t ho, wo;               /* output plane */
  int64_t kh, kw;
  int64_t stride[2], pad[2], dilate[2];
  int64_t channels_per_dgroup;  /* C / num_deformable_group */
  int64_t x_sample, offset_sample, mask_sample, y_sample;  /* floats */
  int64_t columns;              /* floats of one sample's columns */
} hy_cuda_deform_args;

/* The product of one sample as cuBLAS sees it, column-major: the output
 * (F/g, Ho·Wo) row-major of each group g is the column-major
 * (Ho·Wo, F/g) matrix C = A·B with A the columns (Ho·Wo, K) and B the
 * weight (K, F/g), K = C/g·taps; batch over the groups with those
 * strides (as dense.cu: operands swapped, never copied). */
typedef struct hy_cuda_deform_gemm {
  int m, n, k;
  int lda, ldb, ldc;
  int64_t stride_a, stride_b, stride_c;
  int batch;
} hy_cuda_deform_gemm;

static inline hy_cuda_deform_args
hy_cuda_deform_plan (const hy_deform_conv_params *p, const hy_shape *x,
    const hy_shape *y)
{
  hy_cuda_deform_args a = {};
  a.channels = x->dims[1];
  a.h = x->dims[2];
  a.w = x->dims[3];
  a.ho = y->dims[2];
  a.wo = y->dims[3];
  a.kh = p->kernel[0];
  a.kw = p->kernel[1];
  for (int i = 0; i < 2; i++) {
    a.stride[i] = p->stride[i];
    a.pad[i] = p->pad[i];
    a.dilate[i] = p->dilate[i];
  }
  a.channels_per_dgroup = a.channels / p->num_deformable_group;
  const int64_t plane = a.ho * a.wo, taps = a.kh * a.kw;
  a.x_sample = a.channels * a.h * a.w;
  a.offset_sample = 2 * p->num_deformable_group * taps * plane;
  a.mask_sample = p->num_deformable_group * taps * plane;
  a.y_sample = p->num_filter * plane;
  a.columns = a.channels * taps * plane;
  return a;
}

/* FALSE when a size does not fit cuBLAS's ints. */
static inline bool
hy_cuda_deform_gemm_of (const hy_deform_conv_params *p,
    const hy_cuda_deform_args *a, hy_cuda_deform_gemm *g)
{
  const int64_t plane = a->ho * a->wo;
  const int64_t k = a->channels / p->num_group * a->kh * a->kw;
  const int64_t fg = p->num_filter / p->num_group;
  if (plane > INT_MAX || k > INT_MAX || fg > INT_MAX)
    return false;
  *g = (hy_cuda_deform_gemm) {};
  g->m = (int) plane;
  g->n = (int) fg;
  g->k = (int) k;
  g->lda = g->m;
  g->ldb = g->k;
  g->ldc = g->m;
  g->stride_a = k * plane;
  g->stride_b = fg * k;
  g->stride_c = fg * plane;
  g->batch = (int) p->num_group;
  return true;
}

/* Element i of one sample's columns (C, kh, kw, Ho, Wo); x, offset and
 * mask are that sample's (C, H, W), (dg, taps, 2, Ho, Wo) and
 * (dg, taps, Ho, Wo). */
HY_CUDA_HD float
hy_cuda_deform_column (const hy_cuda_deform_args *a, const float *x,
    const float *offset, const float *mask, int64_t i)
{
  const int64_t plane = a->ho * a->wo, taps = a->kh * a->kw;
  const int64_t at = i % plane, tap = i / plane % taps, c = i / (plane
      * taps);
  const int64_t xo = at % a->wo, yo = at / a->wo;
  const int64_t ky = tap / a->kw, kx = tap % a->kw;
  const int64_t group = c / a->channels_per_dgroup;
  const float *dy = offset + (group * taps + tap) * 2 * plane;
  const float *m = mask + (group * taps + tap) * plane;
  const float h_im = hy_add_rn ((float) (yo * a->stride[0] - a->pad[0]
          + ky * a->dilate[0]), dy[at]);
  const float w_im = hy_add_rn ((float) (xo * a->stride[1] - a->pad[1]
          + kx * a->dilate[1]), dy[plane + at]);
  /* Written so that NaN fails it: no floor of NaN or of a huge value is
   * ever converted. */
  float v = 0;
  if (h_im > -1 && w_im > -1 && h_im < (float) a->h && w_im < (float) a->w)
    v = hy_deform_bilinear (x + c * a->h * a->w, a->h, a->w, h_im,
        w_im);
  return hy_mul_rn (v, m[at]);
}

/* y[i] + bias of i's filter, y being (N, F, plane). */
HY_CUDA_HD float
hy_cuda_deform_biased (float y, const float *bias, int64_t filters,
    int64_t plane, int64_t i)
{
  return hy_add_rn (y, bias[i / plane % filters]);
}

#endif /* HY_CUDA_DEFORM_CONV_CUH */
