/*
 * deform-conv.cu — _contrib_ModulatedDeformableConvolution (DCNv2) on the
 * GPU, the CPU kernel's way (deform-conv.cuh): per sample one launch
 * filling the column buffer in the shared workspace and one
 * cublasSgemmStridedBatched over the convolution groups into the output;
 * then one launch adding the bias.  The samples reuse one sample's
 * columns, as MXNet does, so the scratch stays C·taps·Ho·Wo floats
 * whatever the batch.
 *
 * fp32 throughout, also when the backend runs convolutions in fp16, and
 * with the handle in CUBLAS_DEFAULT_MATH (no TF32, as dense.cu): the
 * deformable layers of GluonCV's CenterNet are few, and the sampled
 * columns are not a constant that an fp16 copy could be made of once.
 */
#include "hybrid.h"
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/deform-conv.cuh"

extern "C" {
gboolean hy_cuda_prepare_modulated_deform_conv (hy_cuda_ctx *ctx,
    const void *params, const hy_tensor *const *in, int n_in,
    hy_tensor *const *out, int n_out, void **state, size_t *workspace,
    GError **error);
void hy_cuda_modulated_deform_conv (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_release_modulated_deform_conv (void *state);
}

typedef struct deform_state {
  const hy_deform_conv_params *p;       /* first: the params (cuda-kernel.h) */
  bool empty;
  hy_cuda_deform_args a;
  hy_cuda_deform_gemm g;
  int64_t batch;
  int64_t numel;                /* of the output */
} deform_state;

void
hy_cuda_release_modulated_deform_conv (void *state)
{
  g_free (state);
}

gboolean
hy_cuda_prepare_modulated_deform_conv (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error)
{
  HY_CUBLAS_TRY (cublasSetMathMode (ctx->cublas, CUBLAS_DEFAULT_MATH), error);
  deform_state *s = g_new0 (deform_state, 1);
  s->p = (const hy_deform_conv_params *) params;
  const hy_shape *xs = &in[0]->shape, *ys = &out[0]->shape;
  s->numel = hy_shape_numel (ys);
  s->empty = s->numel == 0;
  if (!s->empty) {
    s->a = hy_cuda_deform_plan (s->p, xs, ys);
    if (!hy_cuda_deform_gemm_of (s->p, &s->a, &s->g)) {
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "_contrib_ModulatedDeformableConvolution on CUDA: the product "
          "is too large for cuBLAS's int sizes");
      g_free (s);
      return FALSE;
    }
    s->batch = xs->dims[0];
  }
  *state = s;
  *workspace = s->empty ? 0 : (size_t) s->a.columns * sizeof (float);
  return TRUE;
}

static __global__ void
column_kernel (hy_cuda_deform_args a, const float *__restrict__ x,
    const float *__restrict__ offset, const float *__restrict__ mask,
    float *__restrict__ col, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    col[i] = hy_cuda_deform_column (&a, x, offset, mask, i);
}

static __global__ void
bias_kernel (const float *__restrict__ bias, float *__restrict__ y,
    int64_t filters, int64_t plane, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = hy_cuda_deform_biased (y[i], bias, filters, plane, i);
}

void
hy_cuda_modulated_deform_conv (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const deform_state *s = (const deform_state *) params;
  if (s->empty)
    return;
  const hy_cuda_deform_args *a = &s->a;
  const hy_cuda_deform_gemm *g = &s->g;
  float *col = (float *) ctx->workspace;
  const float *w = in[3]->data;
  float *y = out[0]->data;
  const float one = 1.0f, zero = 0.0f;
  for (int64_t n = 0; n < s->batch; n++) {
    column_kernel<<<hy_cuda_blocks (ctx, a->columns), HY_CUDA_THREADS, 0,
        ctx->stream>>> (*a, in[0]->data + n * a->x_sample,
        in[1]->data + n * a->offset_sample,
        in[2]->data + n * a->mask_sample, col, a->columns);
    HY_CUDA_CHECK_LAUNCH (ctx);
    HY_CUBLAS_CHECK (ctx, cublasSgemmStridedBatched (ctx->cublas,
            CUBLAS_OP_N, CUBLAS_OP_N, g->m, g->n, g->k, &one, col, g->lda,
            g->stride_a, w, g->ldb, g->stride_b, &zero,
            y + n * a->y_sample, g->ldc, g->stride_c, g->batch));
  }
  if (!s->p->no_bias) {
    bias_kernel<<<hy_cuda_blocks (ctx, s->numel), HY_CUDA_THREADS, 0,
        ctx->stream>>> (in[4]->data, y, s->p->num_filter, a->ho * a->wo,
        s->numel);
    HY_CUDA_CHECK_LAUNCH (ctx);
  }
}
