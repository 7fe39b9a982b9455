/*
 * deconv.cu — Deconvolution (NCW, NCHW; groups) on the GPU.
 *
 * Without dilation it is cuDNN's convolution data gradient
 * (deconv.cuh): hy_cuda_prepare_deconvolution builds the descriptors and
 * picks the algorithm once per call site from cuDNN's heuristics (no
 * trial runs), and the kernel is one cudnnConvolutionBackwardData on
 * ctx->stream into the shared workspace, plus one launch adding the bias.
 * fp32 throughout, with FMA math as conv.cu chooses it (not TF32), also
 * when the backend runs convolutions in fp16: the deconvolutions of
 * GluonCV's pose and CenterNet heads are few and small.
 *
 * With a dilation above 1 the direct kernel runs instead (deconv.cuh), as
 * MXNet's CPU result differs from cuDNN's there.
 */
#include "hybrid.h"
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/deconv.cuh"

extern "C" {
gboolean hy_cuda_prepare_deconvolution (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error);
void hy_cuda_deconvolution (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_release_deconvolution (void *state);
}

/* The most scratch an algorithm may ask for, as for Convolution. */
#define DECONV_WORKSPACE_LIMIT ((size_t) 256 << 20)

typedef struct deconv_state {
  const hy_deconv_params *p;    /* first: the params (cuda-kernel.h) */
  bool empty;
  hy_cuda_deconv_geometry g;
  hy_cuda_deconv_args direct;   /* g.dilated */
  cudnnTensorDescriptor_t dx, dy;       /* our y, our x */
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  cudnnConvolutionBwdDataAlgo_t algo;
  size_t workspace;
  int64_t numel, spatial;       /* of the output */
} deconv_state;

void
hy_cuda_release_deconvolution (void *state)
{
  deconv_state *s = (deconv_state *) state;
  if (!s)
    return;
  if (s->dx)
    cudnnDestroyTensorDescriptor (s->dx);
  if (s->dy)
    cudnnDestroyTensorDescriptor (s->dy);
  if (s->w)
    cudnnDestroyFilterDescriptor (s->w);
  if (s->conv)
    cudnnDestroyConvolutionDescriptor (s->conv);
  g_free (s);
}

static gboolean
set_tensor (cudnnTensorDescriptor_t *d, const int *dims, GError **error)
{
  HY_CUDNN_TRY (cudnnCreateTensorDescriptor (d), error);
  HY_CUDNN_TRY (cudnnSetTensor4dDescriptor (*d, CUDNN_TENSOR_NCHW,
          CUDNN_DATA_FLOAT, dims[0], dims[1], dims[2], dims[3]), error);
  return TRUE;
}

/* The heuristics' best algorithm that runs in plain fp32 (no tensor-op
 * math) within the limit, as conv.cu chooses; ALGO_0 when none is. */
static gboolean
choose_algo (hy_cuda_ctx *ctx, deconv_state *s, GError **error)
{
  int max = 0, n = 0;
  HY_CUDNN_TRY (cudnnGetConvolutionBackwardDataAlgorithmMaxCount (
          ctx->cudnn, &max), error);
  cudnnConvolutionBwdDataAlgoPerf_t *perf = g_new0 (
      cudnnConvolutionBwdDataAlgoPerf_t, max > 0 ? max : 1);
  const cudnnStatus_t st = cudnnGetConvolutionBackwardDataAlgorithm_v7 (
      ctx->cudnn, s->w, s->dy, s->conv, s->dx, max, &n, perf);
  s->algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
  for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < n; i++) {
    size_t size = 0;
    if (perf[i].status != CUDNN_STATUS_SUCCESS
        || perf[i].mathType == CUDNN_TENSOR_OP_MATH
        || perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
      continue;
    if (cudnnGetConvolutionBackwardDataWorkspaceSize (ctx->cudnn, s->w,
            s->dy, s->conv, s->dx, perf[i].algo, &size)
        == CUDNN_STATUS_SUCCESS && size <= DECONV_WORKSPACE_LIMIT) {
      s->algo = perf[i].algo;
      break;
    }
  }
  g_free (perf);
  if (st != CUDNN_STATUS_SUCCESS) {
    g_set_error (error, HY_ERROR, HY_ERROR_BACKEND,
        "cudnnGetConvolutionBackwardDataAlgorithm_v7 failed: %s",
        cudnnGetErrorString (st));
    return FALSE;
  }
  HY_CUDNN_TRY (cudnnGetConvolutionBackwardDataWorkspaceSize (ctx->cudnn,
          s->w, s->dy, s->conv, s->dx, s->algo, &s->workspace), error);
  return TRUE;
}

static gboolean
deconv_setup (hy_cuda_ctx *ctx, deconv_state *s, const hy_tensor *x,
    const hy_tensor *y, GError **error)
{
  s->numel = hy_shape_numel (&y->shape);
  if (s->numel == 0 || hy_shape_numel (&x->shape) == 0) {
    s->empty = true;
    return TRUE;
  }
  if (!hy_cuda_deconv_geometry_of (s->p, &x->shape, &y->shape, &s->g)) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "a tensor is too large for cuDNN's int indexing");
    return FALSE;
  }
  s->spatial = s->numel / ((int64_t) s->g.y[0] * s->g.y[1]);
  if (s->g.dilated) {
    s->direct = hy_cuda_deconv_plan (s->p, &s->g);
    return TRUE;
  }

  /* The convolution whose data gradient this is: input dx (our y),
   * output dy (our x). */
  if (!set_tensor (&s->dx, s->g.y, error) || !set_tensor (&s->dy, s->g.x,
          error))
    return FALSE;
  HY_CUDNN_TRY (cudnnCreateFilterDescriptor (&s->w), error);
  HY_CUDNN_TRY (cudnnSetFilter4dDescriptor (s->w, CUDNN_DATA_FLOAT,
          CUDNN_TENSOR_NCHW, s->g.w[0], s->g.w[1], s->g.w[2], s->g.w[3]),
      error);
  HY_CUDNN_TRY (cudnnCreateConvolutionDescriptor (&s->conv), error);
  HY_CUDNN_TRY (cudnnSetConvolution2dDescriptor (s->conv, s->g.pad[0],
          s->g.pad[1], s->g.stride[0], s->g.stride[1], s->g.dilate[0],
          s->g.dilate[1], CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
      error);
  HY_CUDNN_TRY (cudnnSetConvolutionGroupCount (s->conv, s->g.groups),
      error);
  /* Plain fp32 FMAs, not TF32 (see conv.cu). */
  HY_CUDNN_TRY (cudnnSetConvolutionMathType (s->conv, CUDNN_FMA_MATH),
      error);

  /* That convolution must give back our input's shape. */
  int check[4];
  HY_CUDNN_TRY (cudnnGetConvolutionNdForwardOutputDim (s->conv, s->dx,
          s->w, 4, check), error);
  for (int i = 0; i < 4; i++) {
    if (check[i] != s->g.x[i]) {
      char buf[HY_SHAPE_STRLEN];
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "cuDNN's convolution of the output maps to %d, not to data %s, "
          "on axis %d", check[i], hy_shape_format (&x->shape, buf,
              sizeof buf), i);
      return FALSE;
    }
  }
  return choose_algo (ctx, s, error);
}

gboolean
hy_cuda_prepare_deconvolution (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error)
{
  deconv_state *s = g_new0 (deconv_state, 1);
  s->p = (const hy_deconv_params *) params;
  if (!deconv_setup (ctx, s, in[0], out[0], error)) {
    g_prefix_error (error, "Deconvolution on CUDA: ");
    hy_cuda_release_deconvolution (s);
    return FALSE;
  }
  *state = s;
  *workspace = s->workspace;
  return TRUE;
}

static __global__ void
direct_kernel (hy_cuda_deconv_args a, const float *__restrict__ x,
    const float *__restrict__ w, const float *__restrict__ bias,
    float *__restrict__ y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = hy_cuda_deconv_one (&a, x, w, bias, i);
}

static __global__ void
bias_kernel (const float *__restrict__ bias, float *__restrict__ y,
    int64_t filters, int64_t spatial, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = hy_cuda_deconv_biased (y[i], bias, filters, spatial, i);
}

void
hy_cuda_deconvolution (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const deconv_state *s = (const deconv_state *) params;
  if (s->empty)
    return;
  const float *bias = s->p->no_bias ? NULL : in[2]->data;
  float *y = out[0]->data;
  const unsigned blocks = hy_cuda_blocks (ctx, s->numel);
  if (s->g.dilated) {
    direct_kernel<<<blocks, HY_CUDA_THREADS, 0, ctx->stream>>> (s->direct,
        in[0]->data, in[1]->data, bias, y, s->numel);
    HY_CUDA_CHECK_LAUNCH (ctx);
    return;
  }
  const float one = 1.0f, zero = 0.0f;
  HY_CUDNN_CHECK (ctx, cudnnConvolutionBackwardData (ctx->cudnn, &one, s->w,
          in[1]->data, s->dy, in[0]->data, s->conv, s->algo, ctx->workspace,
          s->workspace, &zero, s->dx, y));
  if (bias) {
    bias_kernel<<<blocks, HY_CUDA_THREADS, 0, ctx->stream>>> (bias, y,
        s->g.y[1], s->spatial, s->numel);
    HY_CUDA_CHECK_LAUNCH (ctx);
  }
}
