/*
 * qconv-epilogue.cuh — the element function a CUDA quantized convolution
 * applies to each int32 sum its integer product (cuDNN's int8
 * convolution) leaves: the quantized bias, the per-channel scale, ReLU,
 * the residual, ReLU, rounded into int8 or uint8.  Apart so that
 * tests/cuda/emulate-qconv-epilogue.cu checks it on the host, bit for bit,
 * against the CPU's epilogue (kernels/cpu/quantized/qconv.h,
 * hy_qconv_finish), which is MXNet 1.9.1's.
 *
 * Only the epilogue exists on CUDA so far: no kernel launches it yet
 * (the quantized convolution stays HY_OP_CPU in ops.def).  Each step is
 * one float operation in the CPU's order; nvcc must not contract the
 * residual's multiply and add into one FMA, hence the single-rounded
 * helpers (kernels/single-rounded.h).
 */
#ifndef HY_CUDA_QCONV_EPILOGUE_CUH
#define HY_CUDA_QCONV_EPILOGUE_CUH

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernels/cuda/launch.cuh"
#include "kernels/params/quantized.h"

/* What is the same for every output of one call. */
typedef struct hy_cuda_qconv_epilogue {
  const int32_t *bias_q;        /* per output channel */
  const float *scales;          /* per output channel */
  float sum_scale;              /* the residual's steps into the output's */
  bool with_act, with_sum, with_postsum_act, out_uint8, sum_uint8;
} hy_cuda_qconv_epilogue;

static inline hy_cuda_qconv_epilogue
hy_cuda_qconv_epilogue_plan (const hy_quantized_conv_params *p,
    const int32_t *bias_q, const float *scales, float sum_scale)
{
  hy_cuda_qconv_epilogue e = {
    bias_q, scales, sum_scale, p->with_act, p->with_sum,
    p->with_postsum_act, p->out_uint8, p->sum_uint8,
  };
  return e;
}

/* rint, then saturation into int8 or uint8 (oneDNN's store). */
HY_CUDA_HD float
hy_cuda_q_store (float v, bool is_uint8)
{
  const float r = rintf (v);
  const float lo = is_uint8 ? 0.0f : -128.0f, hi = is_uint8 ? 255.0f : 127.0f;
  return r < lo ? lo : r > hi ? hi : r;
}

/* With a residual MXNet runs the convolution in place on the residual's
 * buffer: saturated to the residual's dtype, read back as the output's
 * (hy_qconv_store). */
HY_CUDA_HD float
hy_cuda_qconv_store (const hy_cuda_qconv_epilogue *e, float v)
{
  if (!e->with_sum || e->sum_uint8 == e->out_uint8)
    return hy_cuda_q_store (v, e->out_uint8);
  const float stored = hy_cuda_q_store (v, e->sum_uint8);
  if (e->out_uint8)
    return stored < 0 ? stored + 256.0f : stored;
  return stored > 127 ? stored - 256.0f : stored;
}

/* Output channel oc's value from its int32 sum acc and the residual's
 * step sum (ignored without one). */
HY_CUDA_HD float
hy_cuda_qconv_finish_at (const hy_cuda_qconv_epilogue *e, int64_t oc,
    int32_t acc, float sum)
{
  float v = hy_mul_rn (hy_add_rn ((float) acc, (float) e->bias_q[oc]),
      e->scales[oc]);
  if (e->with_act)
    v = fmaxf (v, 0.0f);
  if (e->with_sum)
    v = hy_add_rn (v, hy_mul_rn (e->sum_scale, sum));
  if (e->with_postsum_act)
    v = fmaxf (v, 0.0f);
  return hy_cuda_qconv_store (e, v);
}

#endif /* HY_CUDA_QCONV_EPILOGUE_CUH */
