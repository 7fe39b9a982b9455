/*
 * epilogue.cuh — the fused epilogue of Convolution and FullyConnected on
 * the GPU (hy_fused_epilogue in nn.h):  y = act (bn (y + bias) + residual),
 * one elementwise pass over the output once cuDNN or cuBLAS wrote it.
 *
 * hy_cuda_epilogue_at repeats kernels/cpu/epilogue.h step by step and in
 * its order: the bias (0 when there is none, as the CPU adds), BatchNorm's
 * (v − mean)·scale + shift, the residual, the activation.  nvcc would fuse
 * (v − mean)·scale + shift into one FMA, rounded once where the CPU rounds
 * twice: the _rn intrinsics keep every step rounded on its own, so only
 * expf and tanhf (a few ulp from glibc's) can differ from the CPU.
 *
 * One layout covers both ops: element i belongs to channel
 * (i / spatial) % channels — a convolution's NC(D)HW output with spatial =
 * D·H·W, FullyConnected's (rows, hidden) with spatial = 1.
 *
 * The epilogue reads the op's raw output either in place (fp32) or, for
 * a convolution run in fp16 (hy_precision), from cuDNN's fp16 output in
 * scratch, writing the fp32 y: one element function, the value loaded
 * with hy_cuda_load_float (convert.cuh) for either type, so that fp16
 * only changes what the epilogue starts from.
 */
#ifndef HY_CUDA_EPILOGUE_CUH
#define HY_CUDA_EPILOGUE_CUH

#include <math.h>

#include "kernels/cuda/convert.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/params/nn.h"

typedef struct hy_cuda_epilogue {
  hy_fused_act act;
  float alpha, beta;            /* as in hy_fused_epilogue */
  const float *bias;            /* (channels); NULL: none */
  const float *bn;              /* (3, channels): mean, scale, shift; or NULL */
  const float *res;             /* shaped like y; NULL: none */
  int64_t channels;
  int64_t spatial;              /* consecutive elements of one channel */
} hy_cuda_epilogue;

/* hy_epilogue_hard_sigmoid of epilogue.h: relu6 (v + 3) / 6 as the
 * _plus_scalar, clip and _div_scalar kernels (elementwise.cuh) compute
 * it, a true division like theirs. */
HY_CUDA_HD float
hy_cuda_epilogue_hard_sigmoid (float v)
{
  const float t = hy_add_rn (v, 3.0f);
  return (t > 6.0f ? 6.0f : t < 0.0f ? 0.0f : t) / 6.0f;
}

/* hy_epilogue_act of epilogue.h. */
HY_CUDA_HD float
hy_cuda_epilogue_act (hy_fused_act act, float v, float alpha, float beta)
{
  switch (act) {
    case HY_FUSED_ACT_NONE:
      return v;
    case HY_FUSED_ACT_RELU:     /* NaN passes, as MXNet's relu */
      return !(v <= 0.0f) ? v : 0.0f;
    case HY_FUSED_ACT_CLIP:
      return v > beta ? beta : v < alpha ? alpha : v;
    case HY_FUSED_ACT_LEAKY:
      return v > 0.0f ? v : hy_mul_rn (v, alpha);
    case HY_FUSED_ACT_SIGMOID:
      return 1.0f / hy_add_rn (1.0f, expf (-v));
    case HY_FUSED_ACT_TANH:
      return tanhf (v);
    case HY_FUSED_ACT_HARD_SIGMOID:
      return hy_cuda_epilogue_hard_sigmoid (v);
    case HY_FUSED_ACT_HARD_SWISH:
      return hy_mul_rn (v, hy_cuda_epilogue_hard_sigmoid (v));
  }
  return v;
}

/* The epilogue's value for element i, which holds y. */
HY_CUDA_HD float
hy_cuda_epilogue_at (const hy_cuda_epilogue *e, float y, int64_t i)
{
  const int64_t c = (i / e->spatial) % e->channels;
  float v = hy_add_rn (y, e->bias ? e->bias[c] : 0.0f);
  if (e->bn) {
    const float *b = e->bn;
    const int64_t n = e->channels;
    v = hy_add_rn (hy_mul_rn (hy_sub_rn (v, b[c]),
            b[c + n]), b[c + 2 * n]);
  }
  if (e->res)
    v = hy_add_rn (v, e->res[i]);
  return hy_cuda_epilogue_act (e->act, v, e->alpha, e->beta);
}

/* The epilogue's value for element i of the op's raw output x (float, or
 * __half for an fp16 convolution): what the kernel writes to y[i]. */
template <typename T>
HY_CUDA_HD float
hy_cuda_epilogue_from (const hy_cuda_epilogue *e, const T *x, int64_t i)
{
  return hy_cuda_epilogue_at (e, hy_cuda_load_float (x, i), i);
}

#ifdef __CUDACC__
/* y[i] = the epilogue of x[i]; x may be y (in place, fp32), so neither
 * is __restrict__.  A template, so that files including this header
 * without launching it (the emulation test) do not define a kernel. */
template <typename T>
__global__ void
hy_cuda_epilogue_kernel (hy_cuda_epilogue e, const T *x, float *y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = hy_cuda_epilogue_from (&e, x, i);
}

/* Writes e of the n values of x to the n floats of y, on ctx->stream; x
 * is y (in place) or a separate buffer of the op's raw output. */
template <typename T>
static inline void
hy_cuda_epilogue_run (hy_cuda_ctx *ctx, const hy_cuda_epilogue *e,
    const T *x, float *y, int64_t n)
{
  if (n <= 0)
    return;
  hy_cuda_epilogue_kernel<T> <<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS,
      0, ctx->stream>>> (*e, x, y, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}

/* The epilogue `fused` of a Convolution or FullyConnected (its inputs
 * where nn.h's hy_fused_inputs_of puts them) over its n outputs.
 * Element i is channel (i / spatial) % channels. */
static inline hy_cuda_epilogue
hy_cuda_epilogue_of (const hy_fused_epilogue *fused, bool no_bias,
    const hy_tensor *const *in, int n_in, int64_t channels, int64_t spatial)
{
  const hy_fused_inputs f = hy_fused_inputs_of (no_bias, fused);
  const hy_cuda_epilogue e = {
    fused->act, fused->alpha, fused->beta,
    f.bias < 0 ? NULL : in[f.bias]->data,
    f.bn < 0 ? NULL : in[f.bn]->data,
    f.residual < 0 ? NULL : in[f.residual]->data,
    channels, spatial,
  };
  return e;
}

/* That epilogue on the n output floats y in place, on ctx->stream;
 * nothing when there is nothing to apply. */
static inline void
hy_cuda_epilogue_fused (hy_cuda_ctx *ctx, const hy_fused_epilogue *fused,
    bool no_bias, const hy_tensor *const *in, int n_in, int64_t channels,
    int64_t spatial, float *y, int64_t n)
{
  if (no_bias && !fused->batch_norm && !fused->residual
      && fused->act == HY_FUSED_ACT_NONE)
    return;
  const hy_cuda_epilogue e = hy_cuda_epilogue_of (fused, no_bias, in, n_in,
      channels, spatial);
  hy_cuda_epilogue_run<float> (ctx, &e, y, y, n);
}

/* That epilogue from the op's n fp16 outputs x16 to the n floats of y, on
 * ctx->stream: always a launch, since it is also the conversion back to
 * fp32 (with nothing to apply, just that: x + 0, a −0 turned +0). */
static inline void
hy_cuda_epilogue_fused_half (hy_cuda_ctx *ctx,
    const hy_fused_epilogue *fused, bool no_bias,
    const hy_tensor *const *in, int n_in, int64_t channels, int64_t spatial,
    const __half *x16, float *y, int64_t n)
{
  const hy_cuda_epilogue e = hy_cuda_epilogue_of (fused, no_bias, in, n_in,
      channels, spatial);
  hy_cuda_epilogue_run<__half> (ctx, &e, x16, y, n);
}
#endif

#endif /* HY_CUDA_EPILOGUE_CUH */
