/*
 * conv.cu — Convolution (NCW, NCHW, NCDHW; groups, depthwise included) on
 * the GPU through cuDNN's convolution API, then the fused epilogue.
 *
 * hy_cuda_prepare_convolution builds the cuDNN descriptors and picks the
 * algorithm once per call site, from cuDNN's heuristics (no trial runs, so
 * planning needs no buffers); the kernel is then one cuDNN call on
 * ctx->stream, plus one epilogue launch when the op carries a bias, a
 * BatchNorm, a residual or an activation cuDNN cannot apply exactly as the
 * CPU does.  1-D convolutions run as 2-D ones over a height of 1.
 *
 * The backend sets ctx->stream on ctx->cudnn once (cudnnSetStream), so the
 * calls here enqueue on that stream and a whole forward can be captured.
 *
 * fp16 (ctx->fp16 when the call is prepared, hy_precision): prepare makes
 * a device fp16 copy of the weight (converted once, on ctx->stream, and
 * waited for: the weight is uploaded before plans are prepared) and
 * describes x, w and y as CUDNN_DATA_HALF with fp32 compute
 * (PSEUDO_HALF_CONFIG) and CUDNN_TENSOR_OP_MATH, so cuDNN may run it on
 * tensor cores, multiplying fp16 and accumulating in fp32.  A run is then
 * three launches: x converted to fp16 into the shared workspace, the
 * convolution into an fp16 output there too, and the epilogue reading
 * that fp16 output and writing y in fp32 (bias, BatchNorm, residual and
 * activation in fp32, as in the fp32 path; never cuDNN's fused
 * bias-activation).  The workspace the call asks for is cuDNN's own plus
 * the fp16 x and y, each piece 256-byte aligned.  Rounding the operands
 * and the raw output to fp16 (11-bit mantissas; raw outputs beyond ±65504
 * become ±inf) puts results about 1e-2 relative from fp32's, not 1e-4.
 */
#include <limits.h>

#include "hybrid.h"
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/convert.cuh"
#include "kernels/cuda/epilogue.cuh"
#include "kernels/params/nn.h"

extern "C" {
gboolean hy_cuda_prepare_convolution (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error);
void hy_cuda_convolution (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_release_convolution (void *state);
}

/* The most device scratch an algorithm may ask for: the heuristics' first
 * choices rarely need more, and the workspace is shared by every call. */
#define CONV_WORKSPACE_LIMIT ((size_t) 256 << 20)

typedef struct conv_state {
  const hy_conv_params *p;      /* first: the params (cuda-kernel.h) */
  bool empty;                   /* nothing to compute */
  cudnnTensorDescriptor_t x, y, bias;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  cudnnActivationDescriptor_t act;      /* set when cuDNN runs the epilogue */
  cudnnConvolutionFwdAlgo_t algo;
  size_t workspace;                     /* cuDNN's, at the workspace's start */
  int64_t filters, spatial, numel;      /* of the output */
  /* fp16: the weight's fp16 copy (cudaMalloc'd), the input's numel, and
   * where the fp16 input and output lie in the workspace (bytes from its
   * start); scratch: the whole workspace the call needs. */
  bool fp16;
  __half *w16;
  int64_t x_numel;
  size_t x16_at, y16_at, scratch;
} conv_state;

void
hy_cuda_release_convolution (void *state)
{
  conv_state *s = (conv_state *) state;
  if (!s)
    return;
  /* Teardown: nothing to report a failure to. */
  if (s->x)
    cudnnDestroyTensorDescriptor (s->x);
  if (s->y)
    cudnnDestroyTensorDescriptor (s->y);
  if (s->bias)
    cudnnDestroyTensorDescriptor (s->bias);
  if (s->w)
    cudnnDestroyFilterDescriptor (s->w);
  if (s->conv)
    cudnnDestroyConvolutionDescriptor (s->conv);
  if (s->act)
    cudnnDestroyActivationDescriptor (s->act);
  if (s->w16)
    cudaFree (s->w16);
  g_free (s);
}

/* Packed NC(D)HW strides of dims[0..nb). */
static void
packed_strides (int nb, const int *dims, int *strides)
{
  strides[nb - 1] = 1;
  for (int i = nb - 2; i >= 0; i--)
    strides[i] = strides[i + 1] * dims[i + 1];
}

/* The shape as cuDNN's nb (4 or 5) int dims, a 1-D shape (N, C, W) as
 * (N, C, 1, W).  FALSE when a tensor is too large for int indexing. */
static gboolean
cudnn_dims (const hy_shape *shape, int nb, int *dims, GError **error)
{
  if (hy_shape_numel (shape) > INT_MAX) {
    char buf[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "Convolution: a tensor of shape %s is too large for cuDNN",
        hy_shape_format (shape, buf, sizeof buf));
    return FALSE;
  }
  const int lead = nb - shape->ndim;
  for (int i = 0; i < nb; i++)
    dims[i] = i < 2 ? (int) shape->dims[i]
        : i - 2 < lead ? 1 : (int) shape->dims[i - lead];
  return TRUE;
}

static gboolean
set_tensor (cudnnTensorDescriptor_t *d, cudnnDataType_t type, int nb,
    const int *dims, GError **error)
{
  int strides[5];
  packed_strides (nb, dims, strides);
  HY_CUDNN_TRY (cudnnCreateTensorDescriptor (d), error);
  HY_CUDNN_TRY (cudnnSetTensorNdDescriptor (*d, type, nb, dims, strides),
      error);
  return TRUE;
}

/* The heuristics' best algorithm within the workspace limit; implicit
 * GEMM, which needs no workspace and takes every shape, when none is
 * left.  fp32: only those that run in plain fp32 (see conv_setup), with
 * the descriptor's FMA math.  fp16: any math type but
 * ALLOW_CONVERSION (the data is fp16 already), each tried with the math
 * type the heuristics give it — tensor-op math where tensor cores apply,
 * FMA math where they do not (say, depthwise), both accumulating in fp32
 * (the descriptor's compute type); the descriptor keeps the chosen one. */
static gboolean
choose_algo (hy_cuda_ctx *ctx, conv_state *s, GError **error)
{
  int max = 0, n = 0;
  HY_CUDNN_TRY (cudnnGetConvolutionForwardAlgorithmMaxCount (ctx->cudnn,
          &max), error);
  cudnnConvolutionFwdAlgoPerf_t *perf = g_new0 (cudnnConvolutionFwdAlgoPerf_t,
      max > 0 ? max : 1);
  cudnnStatus_t st = cudnnGetConvolutionForwardAlgorithm_v7 (ctx->cudnn,
      s->x, s->w, s->conv, s->y, max, &n, perf);
  const char *failed = "cudnnGetConvolutionForwardAlgorithm_v7";
  bool chosen = false;
  s->algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < n && !chosen; i++) {
    size_t size = 0;
    if (perf[i].status != CUDNN_STATUS_SUCCESS
        || perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION
        || (!s->fp16 && perf[i].mathType == CUDNN_TENSOR_OP_MATH))
      continue;
    if (s->fp16) {
      st = cudnnSetConvolutionMathType (s->conv, perf[i].mathType);
      failed = "cudnnSetConvolutionMathType";
      if (st != CUDNN_STATUS_SUCCESS)
        break;
    }
    /* The size for the descriptor's math type, which also tells whether
     * the algorithm takes it. */
    if (cudnnGetConvolutionForwardWorkspaceSize (ctx->cudnn, s->x, s->w,
            s->conv, s->y, perf[i].algo, &size) == CUDNN_STATUS_SUCCESS
        && size <= CONV_WORKSPACE_LIMIT) {
      s->algo = perf[i].algo;
      chosen = true;
    }
  }
  g_free (perf);
  if (st != CUDNN_STATUS_SUCCESS) {
    g_set_error (error, HY_ERROR, HY_ERROR_BACKEND, "%s failed: %s", failed,
        cudnnGetErrorString (st));
    return FALSE;
  }
  if (s->fp16 && !chosen)
    HY_CUDNN_TRY (cudnnSetConvolutionMathType (s->conv, CUDNN_TENSOR_OP_MATH),
        error);
  HY_CUDNN_TRY (cudnnGetConvolutionForwardWorkspaceSize (ctx->cudnn, s->x,
          s->w, s->conv, s->y, s->algo, &s->workspace), error);
  return TRUE;
}

/* Whether cudnnConvolutionBiasActivationForward computes exactly the
 * epilogue: relu (conv + bias), or conv + bias, which cuDNN runs with
 * implicit precomputed GEMM only.  Not with a BatchNorm (cuDNN has none
 * here) nor a residual (cuDNN would add it before the bias, rounding
 * otherwise than the CPU).  Every other activation (clip, leaky, sigmoid,
 * tanh, the hard sigmoid and swish cuDNN has no mode for) runs in the
 * epilogue kernel after cudnnConvolutionForward. */
static bool
cudnn_runs_epilogue (const conv_state *s)
{
  const hy_conv_params *p = s->p;
  const hy_fused_epilogue *e = &p->fused;
  const cudnnConvolutionFwdAlgo_t algo = s->algo;
  /* fp16: the epilogue is also the conversion of the fp16 output. */
  if (s->fp16 || p->no_bias || e->batch_norm || e->residual)
    return false;
  return e->act == HY_FUSED_ACT_RELU || (e->act == HY_FUSED_ACT_NONE
      && algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
}

static gboolean
conv_setup (hy_cuda_ctx *ctx, conv_state *s, const hy_tensor *x,
    const hy_tensor *w, const hy_tensor *y, GError **error)
{
  const hy_conv_params *p = s->p;
  /* The operands' type: compute is fp32 either way (the convolution
   * descriptor's). */
  const cudnnDataType_t type = s->fp16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  const int nb = p->n_spatial == 3 ? 5 : 4, lead = nb - 2 - p->n_spatial;
  int xd[5], yd[5], wd[5], pad[3], stride[3], dilate[3];

  s->filters = p->num_filter;
  s->numel = hy_shape_numel (&y->shape);
  s->spatial = s->numel > 0 ? s->numel / (y->shape.dims[0] * s->filters) : 1;
  if (s->numel == 0) {
    s->empty = true;
    return TRUE;
  }
  if (hy_shape_numel (&x->shape) == 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "Convolution over an empty input is not supported on CUDA");
    return FALSE;
  }
  if (!cudnn_dims (&x->shape, nb, xd, error)
      || !cudnn_dims (&y->shape, nb, yd, error))
    return FALSE;
  wd[0] = (int) p->num_filter;
  wd[1] = (int) (x->shape.dims[1] / p->num_group);
  for (int i = 0; i < nb - 2; i++) {
    const int a = i - lead;     /* axis in the op's spatial tuples */
    wd[2 + i] = a >= 0 ? (int) p->kernel[a] : 1;
    pad[i] = a >= 0 ? (int) p->pad[a] : 0;
    stride[i] = a >= 0 ? (int) p->stride[a] : 1;
    dilate[i] = a >= 0 ? (int) p->dilate[a] : 1;
  }

  if (!set_tensor (&s->x, type, nb, xd, error)
      || !set_tensor (&s->y, type, nb, yd, error))
    return FALSE;
  HY_CUDNN_TRY (cudnnCreateFilterDescriptor (&s->w), error);
  HY_CUDNN_TRY (cudnnSetFilterNdDescriptor (s->w, type, CUDNN_TENSOR_NCHW,
          nb, wd), error);
  HY_CUDNN_TRY (cudnnCreateConvolutionDescriptor (&s->conv), error);
  /* MXNet's Convolution is a cross-correlation (the kernel not flipped). */
  HY_CUDNN_TRY (cudnnSetConvolutionNdDescriptor (s->conv, nb - 2, pad,
          stride, dilate, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT), error);
  HY_CUDNN_TRY (cudnnSetConvolutionGroupCount (s->conv, (int) p->num_group),
      error);
  /* fp32: FMA math, not the default: CUDNN_DEFAULT_MATH lets cuDNN run
   * fp32 convolutions on TF32 tensor cores from sm_80 on, whose 10-bit
   * mantissas put results about 1e-3 from the CPU's; plain fp32 FMAs keep
   * them within 1e-4.  fp16: tensor-op math, fp16 products accumulated in
   * fp32 (no conversion to allow: the data is fp16 already); choose_algo
   * may settle on the math type of the algorithm it picks. */
  HY_CUDNN_TRY (cudnnSetConvolutionMathType (s->conv,
          s->fp16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH), error);

  /* The core inferred the output shape: cuDNN must agree. */
  int check[5];
  HY_CUDNN_TRY (cudnnGetConvolutionNdForwardOutputDim (s->conv, s->x, s->w,
          nb, check), error);
  for (int i = 0; i < nb; i++) {
    if (check[i] != yd[i]) {
      char buf[HY_SHAPE_STRLEN];
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "Convolution: cuDNN's output shape differs from %s on axis %d "
          "(%d)", hy_shape_format (&y->shape, buf, sizeof buf), i, check[i]);
      return FALSE;
    }
  }

  if (!choose_algo (ctx, s, error))
    return FALSE;
  s->scratch = s->workspace;

  if (s->fp16) {
    /* Workspace: cuDNN's, then the fp16 x, then the fp16 y. */
    s->x_numel = hy_shape_numel (&x->shape);
    s->x16_at = hy_cuda_scratch_align (s->workspace);
    s->y16_at = s->x16_at + hy_cuda_scratch_align ((size_t) s->x_numel
        * sizeof (__half));
    s->scratch = s->y16_at + hy_cuda_scratch_align ((size_t) s->numel
        * sizeof (__half));
    if (!hy_cuda_half_copy (ctx, w->data, hy_shape_numel (&w->shape),
            &s->w16, error))
      return FALSE;
  }

  if (cudnn_runs_epilogue (s)) {
    int bd[5] = { 1, wd[0], 1, 1, 1 };
    if (!set_tensor (&s->bias, CUDNN_DATA_FLOAT, nb, bd, error))
      return FALSE;
    HY_CUDNN_TRY (cudnnCreateActivationDescriptor (&s->act), error);
    HY_CUDNN_TRY (cudnnSetActivationDescriptor (s->act,
            p->fused.act == HY_FUSED_ACT_RELU ? CUDNN_ACTIVATION_RELU
            : CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN, 0.0),
        error);
  }
  return TRUE;
}

gboolean
hy_cuda_prepare_convolution (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error)
{
  conv_state *s = g_new0 (conv_state, 1);
  s->p = (const hy_conv_params *) params;
  s->fp16 = ctx->fp16;
  if (!conv_setup (ctx, s, in[0], in[1], out[0], error)) {
    g_prefix_error (error, "Convolution on CUDA: ");
    hy_cuda_release_convolution (s);
    return FALSE;
  }
  *state = s;
  *workspace = s->scratch;
  return TRUE;
}

void
hy_cuda_convolution (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const conv_state *s = (const conv_state *) params;
  const hy_conv_params *p = s->p;
  if (s->empty)
    return;
  /* alpha and beta are floats for fp16 data too (fp32 compute). */
  const float one = 1.0f, zero = 0.0f;
  const hy_fused_inputs f = hy_fused_inputs_of (p->no_bias, &p->fused);
  const float *bias = f.bias < 0 ? NULL : in[f.bias]->data;
  float *y = out[0]->data;

  if (s->fp16) {
    char *scratch = (char *) ctx->workspace;
    __half *x16 = (__half *) (scratch + s->x16_at);
    __half *y16 = (__half *) (scratch + s->y16_at);
    hy_cuda_to_half (ctx, in[0]->data, x16, s->x_numel);
    HY_CUDNN_CHECK (ctx, cudnnConvolutionForward (ctx->cudnn, &one, s->x,
            x16, s->w, s->w16, s->conv, s->algo, scratch, s->workspace,
            &zero, s->y, y16));
    hy_cuda_epilogue_fused_half (ctx, &p->fused, p->no_bias, in, n_in,
        s->filters, s->spatial, y16, y, s->numel);
    return;
  }

  if (s->act) {
    /* y = act (conv (x) + 0·z + bias): z is y itself, unread at 0. */
    HY_CUDNN_CHECK (ctx, cudnnConvolutionBiasActivationForward (ctx->cudnn,
            &one, s->x, in[0]->data, s->w, in[1]->data, s->conv, s->algo,
            ctx->workspace, s->workspace, &zero, s->y, y, s->bias, bias,
            s->act, s->y, y));
    return;
  }
  HY_CUDNN_CHECK (ctx, cudnnConvolutionForward (ctx->cudnn, &one, s->x,
          in[0]->data, s->w, in[1]->data, s->conv, s->algo, ctx->workspace,
          s->workspace, &zero, s->y, y));
  hy_cuda_epilogue_fused (ctx, &p->fused, p->no_bias, in, n_in, s->filters,
      s->spatial, y, s->numel);
}
