/*
 * qconv-plain.cuh — the element functions of the CUDA unfused
 * _contrib_quantized_conv (qconv-plain.cu), apart so that
 * tests/cuda/emulate-qconv-plain.cu can run them on the host against the
 * CPU kernel (kernels/cpu/quantized/conv-plain.c), bit for bit.
 *
 * cuDNN's int8 convolution (CUDNN_DATA_INT8 data and filter, INT32
 * output and compute) takes NHWC data and filters whose channel counts
 * are multiples of 4; MXNet's GPU kernel requires them so, here they are
 * padded with zero channels instead, which add nothing to a sum.  So a
 * run is: the data (floats holding int8, NCHW) packed into int8 NHWC of
 * Cp channels; cuDNN's sums into int32 NHWC of OCp channels; those
 * unpacked into the float NCHW output's OC channels.  The weights are
 * packed once, when the call is prepared.  The sums' range is computed
 * on the device from the four range inputs, in the CPU's float steps.
 *
 * Values are read as the CPU kernel reads them: rounded and saturated to
 * int8, NaN as 0 (a hostile params file), the same integers.
 */
#ifndef HY_CUDA_QCONV_PLAIN_CUH
#define HY_CUDA_QCONV_PLAIN_CUH

#include <math.h>
#include <stdint.h>

#include "kernels/cuda/launch.cuh"
#include "kernels/params/quantized.h"

/* n rounded up to a multiple of 4 (cuDNN's int8 channel granule). */
HY_CUDA_HD int64_t
hy_cuda_qconv_pad4 (int64_t n)
{
  return (n + 3) / 4 * 4;
}

/* A held value as an int8, as conv-plain.c reads the weights. */
HY_CUDA_HD int8_t
hy_cuda_qconv_int8 (float v)
{
  if (v != v)
    return 0;
  const float r = rintf (v);
  return (int8_t) (r < -128.0f ? -128.0f : r > 127.0f ? 127.0f : r);
}

/* The geometry every element function needs. */
typedef struct hy_cuda_qconv_geom {
  int64_t N, C, H, W;           /* the data, NCHW */
  int64_t OC, OH, OW;           /* the output, NCHW */
  int64_t KH, KW;
  int64_t Cp, OCp;              /* channels padded to multiples of 4 */
} hy_cuda_qconv_geom;

static inline hy_cuda_qconv_geom
hy_cuda_qconv_geom_of (const hy_shape *x, const hy_shape *w,
    const hy_shape *y)
{
  hy_cuda_qconv_geom g = {
    x->dims[0], x->dims[1], x->dims[2], x->dims[3],
    y->dims[1], y->dims[2], y->dims[3], w->dims[2], w->dims[3],
    hy_cuda_qconv_pad4 (x->dims[1]), hy_cuda_qconv_pad4 (y->dims[1]),
  };
  return g;
}

/* Element i of the packed data, int8 NHWC with Cp channels (N·H·W·Cp of
 * them): x's value at (n, c, h, w), 0 in a padding channel. */
HY_CUDA_HD int8_t
hy_cuda_qconv_pack_data_at (const hy_cuda_qconv_geom *g, const float *x,
    int64_t i)
{
  const int64_t c = i % g->Cp, hw = i / g->Cp % (g->H * g->W),
      n = i / g->Cp / (g->H * g->W);
  if (c >= g->C)
    return 0;
  return hy_cuda_qconv_int8 (x[(n * g->C + c) * g->H * g->W + hw]);
}

/* Element i of the packed filter, int8 (OCp, KH, KW, Cp) — cuDNN's NHWC
 * filter layout — from the (OC, C, KH, KW) weights; 0 in padding. */
HY_CUDA_HD int8_t
hy_cuda_qconv_pack_weight_at (const hy_cuda_qconv_geom *g, const float *w,
    int64_t i)
{
  const int64_t c = i % g->Cp, kw = i / g->Cp % g->KW,
      kh = i / g->Cp / g->KW % g->KH, oc = i / g->Cp / g->KW / g->KH;
  if (c >= g->C || oc >= g->OC)
    return 0;
  return hy_cuda_qconv_int8 (w[((oc * g->C + c) * g->KH + kh) * g->KW + kw]);
}

/* Element i of the NCHW float output (N·OC·OH·OW of them) from cuDNN's
 * int32 NHWC sums of OCp channels. */
HY_CUDA_HD float
hy_cuda_qconv_unpack_at (const hy_cuda_qconv_geom *g, const int32_t *sums,
    int64_t i)
{
  const int64_t ohw = i % (g->OH * g->OW), oc = i / (g->OH * g->OW) % g->OC,
      n = i / (g->OH * g->OW) / g->OC;
  return (float) sums[(n * g->OH * g->OW + ohw) * g->OCp + oc];
}

/* The sums' range, MXNet's QuantizationRangeForS8S8Multiplication in the
 * CPU kernel's float steps: (|data| / 127) · (|weight| / 127) · 2^31. */
HY_CUDA_HD void
hy_cuda_qconv_range (const float *min_data, const float *max_data,
    const float *min_weight, const float *max_weight, float *out_min,
    float *out_max)
{
  const float data_step = fmaxf (fabsf (min_data[0]), fabsf (max_data[0]))
      / 127.0f;
  const float weight_step = fmaxf (fabsf (min_weight[0]),
      fabsf (max_weight[0])) / 127.0f;
  const float range = hy_mul_rn (hy_mul_rn (data_step, weight_step),
      HY_INT32_RANGE);
  out_min[0] = -range;
  out_max[0] = range;
}

#endif /* HY_CUDA_QCONV_PLAIN_CUH */
