/*
 * qconv-plain.cu — MXNet's unfused _contrib_quantized_conv on CUDA through
 * cuDNN's int8 convolution: int8 data and weights in NHWC, channels
 * padded to multiples of 4, exact int32 sums (qconv-plain.cuh has the
 * layout and why).
 *
 * Set-up (hy_cuda_prepare_quantized_conv_plain), once per call:
 *   - refuse what cuDNN's int8 path cannot take: uint8 data (MXNet's GPU
 *     kernel reads int8 only), tensors past int indexing;
 *   - describe x (INT8, NHWC, Cp), w (INT8, NHWC, OCp × Cp), y (INT32,
 *     NHWC, OCp) and the convolution (INT32 compute, cross-correlation,
 *     MXNet's pad, stride, dilation), and check cuDNN's output size
 *     against the core's;
 *   - the algorithm: implicit precomputed GEMM, the one cuDNN runs the
 *     int8 configuration with, and its workspace;
 *   - pack the weights into a cudaMalloc'd int8 filter, once (they are
 *     uploaded before plans are prepared, as conv.cu's fp16 copy assumes).
 * A run: the range kernel, the data packed into the workspace, cuDNN's
 * sums into the workspace after it, then unpacked into the output.
 */
#include <limits.h>

#include "hybrid.h"
#include "kernels/cuda/convert.cuh"
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/qconv-plain.cuh"

extern "C" {
gboolean hy_cuda_prepare_quantized_conv_plain (hy_cuda_ctx *ctx,
    const void *params, const hy_tensor *const *in, int n_in,
    hy_tensor *const *out, int n_out, void **state, size_t *workspace,
    GError **error);
void hy_cuda_quantized_conv_plain (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_release_quantized_conv_plain (void *state);
}

typedef struct qconv_plain_state {
  const hy_quantized_conv_plain_params *p;      /* first (cuda-kernel.h) */
  bool empty;                   /* nothing to sum: the range only */
  hy_cuda_qconv_geom g;
  cudnnTensorDescriptor_t x, y;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  cudnnConvolutionFwdAlgo_t algo;
  int8_t *w8;                   /* the packed filter */
  size_t cudnn_workspace;       /* cuDNN's, at the workspace's start */
  size_t x8_at, y32_at, scratch;        /* bytes from the start */
} qconv_plain_state;

void
hy_cuda_release_quantized_conv_plain (void *state)
{
  qconv_plain_state *s = (qconv_plain_state *) state;
  if (!s)
    return;
  /* Teardown: nothing to report a failure to. */
  if (s->x)
    cudnnDestroyTensorDescriptor (s->x);
  if (s->y)
    cudnnDestroyTensorDescriptor (s->y);
  if (s->w)
    cudnnDestroyFilterDescriptor (s->w);
  if (s->conv)
    cudnnDestroyConvolutionDescriptor (s->conv);
  if (s->w8)
    cudaFree (s->w8);
  g_free (s);
}

__global__ static void
pack_data_kernel (hy_cuda_qconv_geom g, const float *x, int8_t *x8,
    int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    x8[i] = hy_cuda_qconv_pack_data_at (&g, x, i);
}

__global__ static void
pack_weight_kernel (hy_cuda_qconv_geom g, const float *w, int8_t *w8,
    int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    w8[i] = hy_cuda_qconv_pack_weight_at (&g, w, i);
}

__global__ static void
unpack_kernel (hy_cuda_qconv_geom g, const int32_t *sums, float *y,
    int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = hy_cuda_qconv_unpack_at (&g, sums, i);
}

__global__ static void
range_kernel (const float *min_data, const float *max_data,
    const float *min_weight, const float *max_weight, float *out_min,
    float *out_max)
{
  hy_cuda_qconv_range (min_data, max_data, min_weight, max_weight, out_min,
      out_max);
}

/* The descriptors: NHWC int8 in, int32 out, channels padded. */
static gboolean
describe (hy_cuda_ctx *ctx, qconv_plain_state *s, GError **error)
{
  const hy_conv_params *cp = &s->p->conv;
  const hy_cuda_qconv_geom *g = &s->g;
  HY_CUDNN_TRY (cudnnCreateTensorDescriptor (&s->x), error);
  HY_CUDNN_TRY (cudnnSetTensor4dDescriptor (s->x, CUDNN_TENSOR_NHWC,
          CUDNN_DATA_INT8, (int) g->N, (int) g->Cp, (int) g->H, (int) g->W),
      error);
  HY_CUDNN_TRY (cudnnCreateTensorDescriptor (&s->y), error);
  HY_CUDNN_TRY (cudnnSetTensor4dDescriptor (s->y, CUDNN_TENSOR_NHWC,
          CUDNN_DATA_INT32, (int) g->N, (int) g->OCp, (int) g->OH,
          (int) g->OW), error);
  HY_CUDNN_TRY (cudnnCreateFilterDescriptor (&s->w), error);
  HY_CUDNN_TRY (cudnnSetFilter4dDescriptor (s->w, CUDNN_DATA_INT8,
          CUDNN_TENSOR_NHWC, (int) g->OCp, (int) g->Cp, (int) g->KH,
          (int) g->KW), error);
  HY_CUDNN_TRY (cudnnCreateConvolutionDescriptor (&s->conv), error);
  /* MXNet's Convolution is a cross-correlation (the kernel not flipped) */
  HY_CUDNN_TRY (cudnnSetConvolution2dDescriptor (s->conv, (int) cp->pad[0],
          (int) cp->pad[1], (int) cp->stride[0], (int) cp->stride[1],
          (int) cp->dilate[0], (int) cp->dilate[1], CUDNN_CROSS_CORRELATION,
          CUDNN_DATA_INT32), error);

  int check[4];
  HY_CUDNN_TRY (cudnnGetConvolution2dForwardOutputDim (s->conv, s->x, s->w,
          &check[0], &check[1], &check[2], &check[3]), error);
  const int64_t want[4] = { g->N, g->OCp, g->OH, g->OW };
  for (int i = 0; i < 4; i++)
    if (check[i] != want[i]) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "cuDNN's output size differs from the core's on axis %d (%d, "
          "expected %" G_GINT64_FORMAT ")", i, check[i], (gint64) want[i]);
      return FALSE;
    }

  s->algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  HY_CUDNN_TRY (cudnnGetConvolutionForwardWorkspaceSize (ctx->cudnn, s->x,
          s->w, s->conv, s->y, s->algo, &s->cudnn_workspace), error);
  return TRUE;
}

static gboolean
setup (hy_cuda_ctx *ctx, qconv_plain_state *s, const hy_tensor *const *in,
    hy_tensor *const *out, GError **error)
{
  if (s->p->data_uint8) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "input 'data' is uint8: cuDNN's int8 convolution (and MXNet's GPU "
        "quantized_conv) reads int8 data only; quantize with "
        "out_type='int8'");
    return FALSE;
  }
  s->g = hy_cuda_qconv_geom_of (&in[0]->shape, &in[1]->shape,
      &out[0]->shape);
  const hy_cuda_qconv_geom *g = &s->g;
  const int64_t x8_n = g->N * g->H * g->W * g->Cp;
  const int64_t w8_n = g->OCp * g->KH * g->KW * g->Cp;
  const int64_t y32_n = g->N * g->OH * g->OW * g->OCp;
  if (hy_shape_numel (&out[0]->shape) == 0) {
    s->empty = true;
    return TRUE;
  }
  if (x8_n > INT_MAX || y32_n > INT_MAX || w8_n > INT_MAX) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "a tensor of %" G_GINT64_FORMAT " elements is too large for cuDNN",
        (gint64) MAX (MAX (x8_n, y32_n), w8_n));
    return FALSE;
  }
  if (!describe (ctx, s, error))
    return FALSE;
  s->x8_at = hy_cuda_scratch_align (s->cudnn_workspace);
  s->y32_at = s->x8_at + hy_cuda_scratch_align ((size_t) x8_n);
  s->scratch = s->y32_at + hy_cuda_scratch_align ((size_t) y32_n
      * sizeof (int32_t));

  HY_CUDA_TRY (cudaMalloc ((void **) &s->w8, (size_t) w8_n), error);
  pack_weight_kernel<<<hy_cuda_blocks (ctx, w8_n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (*g, in[1]->data, s->w8, w8_n);
  HY_CUDA_TRY (cudaGetLastError (), error);
  HY_CUDA_TRY (cudaStreamSynchronize (ctx->stream), error);
  return TRUE;
}

gboolean
hy_cuda_prepare_quantized_conv_plain (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error)
{
  qconv_plain_state *s = g_new0 (qconv_plain_state, 1);
  s->p = (const hy_quantized_conv_plain_params *) params;
  if (!setup (ctx, s, in, out, error)) {
    g_prefix_error (error, "_contrib_quantized_conv on CUDA: ");
    hy_cuda_release_quantized_conv_plain (s);
    return FALSE;
  }
  *state = s;
  *workspace = s->scratch;
  return TRUE;
}

void
hy_cuda_quantized_conv_plain (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const qconv_plain_state *s = (const qconv_plain_state *) params;
  range_kernel<<<1, 1, 0, ctx->stream>>> (in[2]->data, in[3]->data,
      in[4]->data, in[5]->data, out[1]->data, out[2]->data);
  HY_CUDA_CHECK_LAUNCH (ctx);
  if (s->empty)
    return;
  const hy_cuda_qconv_geom g = s->g;
  char *scratch = (char *) ctx->workspace;
  int8_t *x8 = (int8_t *) (scratch + s->x8_at);
  int32_t *y32 = (int32_t *) (scratch + s->y32_at);
  const int64_t x8_n = g.N * g.H * g.W * g.Cp;
  const int64_t y_n = hy_shape_numel (&out[0]->shape);
  pack_data_kernel<<<hy_cuda_blocks (ctx, x8_n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (g, in[0]->data, x8, x8_n);
  HY_CUDA_CHECK_LAUNCH (ctx);
  /* int32 output: alpha and beta are floats (cuDNN's rule for every
   * non-double type) */
  const float one = 1.0f, zero = 0.0f;
  HY_CUDNN_CHECK (ctx, cudnnConvolutionForward (ctx->cudnn, &one, s->x, x8,
          s->w, s->w8, s->conv, s->algo, scratch, s->cudnn_workspace, &zero,
          s->y, y32));
  unpack_kernel<<<hy_cuda_blocks (ctx, y_n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (g, y32, out[0]->data, y_n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
