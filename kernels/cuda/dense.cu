/*
 * dense.cu — FullyConnected, dot and batch_dot on the GPU: one cuBLAS
 * SGEMM each (strided-batched for batch_dot), then FullyConnected's fused
 * epilogue (bias included) in one more launch.
 *
 * cuBLAS is column-major and our tensors row-major: a row-major (r, c)
 * matrix is the column-major (c, r) one, its transpose, so C = A·B is
 * computed as Cᵀ = Bᵀ·Aᵀ — the operands swapped, never copied.
 *
 * Prepare works out the product's sizes once (the shapes are final) and
 * puts the cuBLAS handle in CUBLAS_DEFAULT_MATH: plain fp32, no TF32 tensor
 * cores, whose 10-bit mantissas would put results about 1e-3 from the
 * CPU's.  The backend sets ctx->stream on ctx->cublas once
 * (cublasSetStream) and leaves the pointer mode at host: alpha and beta
 * are read when a call is enqueued (or captured), as constants.
 *
 * fp16 (ctx->fp16 when the call is prepared, hy_precision): the product
 * is one cublasGemmEx (cublasGemmStridedBatchedEx for batch_dot) with A
 * and B in fp16 (CUDA_R_16F), C in fp32 (CUDA_R_32F) and
 * CUBLAS_COMPUTE_32F: fp16 products accumulated in fp32, which cuBLAS
 * runs on tensor cores even in CUBLAS_DEFAULT_MATH, since with fp16
 * inputs they lose nothing against its other kernels.  Not
 * CUBLAS_COMPUTE_32F_FAST_16F: that one is for fp32 inputs cuBLAS may
 * round to fp16 itself, and says nothing more for inputs that are fp16
 * already.  The math mode stays CUBLAS_DEFAULT_MATH for the fp32 calls
 * sharing the handle.  FullyConnected's weight, a constant, gets a device
 * fp16 copy at prepare (converted once on ctx->stream and waited for: the
 * weight is uploaded before plans are prepared); activations — the data
 * of FullyConnected, both operands of dot and batch_dot — are converted
 * at every run into the shared workspace (each 256-byte aligned), one
 * launch each, before the product.  C is fp32, so FullyConnected's
 * epilogue is the fp32 one.  The fp16 operands put results about 1e-2
 * relative from fp32's, not 1e-4.
 */
#include <limits.h>

#include "hybrid.h"
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/convert.cuh"
#include "kernels/cuda/epilogue.cuh"
#include "kernels/params/nn.h"

extern "C" {
gboolean hy_cuda_prepare_fully_connected (hy_cuda_ctx *ctx,
    const void *params, const hy_tensor *const *in, int n_in,
    hy_tensor *const *out, int n_out, void **state, size_t *workspace,
    GError **error);
void hy_cuda_fully_connected (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_release_fully_connected (void *state);
gboolean hy_cuda_prepare_dot (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error);
void hy_cuda_dot (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_release_dot (void *state);
}

/* A row-major product C (m, n) = A (m, k) · B (k, n), A stored (k, m)
 * when trans_a, B stored (n, k) when trans_b; `batch` of them, one after
 * the other in each tensor. */
typedef struct gemm_state {
  const void *p;                /* first: the params (cuda-kernel.h) */
  bool trans_a, trans_b;
  int m, n, k, batch;
  int64_t numel;                /* of C, all batches */
  /* fp16 (only for a product to compute): B's fp16 copy when B is a
   * constant (cudaMalloc'd; NULL: B converted at every run), the numels
   * of A and B, where their fp16 copies lie in the workspace (bytes from
   * its start) and the workspace the call needs. */
  bool fp16;
  __half *b16;
  int64_t a_numel, b_numel;
  size_t a16_at, b16_at, scratch;
} gemm_state;

static void
gemm_release (void *state)
{
  gemm_state *s = (gemm_state *) state;
  if (!s)
    return;
  if (s->b16)
    cudaFree (s->b16);          /* teardown: nothing to report to */
  g_free (s);
}

/* b_const: B's floats when B is a constant (FullyConnected's weight),
 * which fp16 converts once here; NULL when B may change between runs. */
static gboolean
gemm_prepare (hy_cuda_ctx *ctx, const void *params, const char *op,
    bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
    int64_t batch, const float *b_const, void **state, size_t *workspace,
    GError **error)
{
  /* cuBLAS's sizes are ints. */
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || batch > INT_MAX) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s on CUDA: the product (%" G_GINT64_FORMAT " x %" G_GINT64_FORMAT
        ") · (%" G_GINT64_FORMAT " x %" G_GINT64_FORMAT ") is too large for "
        "cuBLAS", op, m, k, k, n);
    return FALSE;
  }
  HY_CUBLAS_TRY (cublasSetMathMode (ctx->cublas, CUBLAS_DEFAULT_MATH), error);
  gemm_state *s = g_new0 (gemm_state, 1);
  s->p = params;
  s->trans_a = trans_a;
  s->trans_b = trans_b;
  s->m = (int) m;
  s->n = (int) n;
  s->k = (int) k;
  s->batch = (int) batch;
  s->numel = m * n * batch;
  /* An empty product or contraction computes nothing (gemm_run). */
  s->fp16 = ctx->fp16 && s->numel > 0 && k > 0;
  if (s->fp16) {
    s->a_numel = m * k * batch;
    s->b_numel = k * n * batch;
    s->a16_at = 0;
    s->b16_at = hy_cuda_scratch_align ((size_t) s->a_numel
        * sizeof (__half));
    s->scratch = s->b16_at;
    if (!b_const)
      s->scratch += hy_cuda_scratch_align ((size_t) s->b_numel
          * sizeof (__half));
    else if (!hy_cuda_half_copy (ctx, b_const, s->b_numel, &s->b16,
            error)) {
      g_prefix_error (error, "%s on CUDA: ", op);
      gemm_release (s);
      return FALSE;
    }
  }
  *state = s;
  *workspace = s->scratch;
  return TRUE;
}

/* fp16: C = A·B from fp16 copies of A and B (the constant B's made at
 * prepare, the others now, into the workspace), accumulated in fp32. */
static void
gemm_run_half (hy_cuda_ctx *ctx, const gemm_state *s, const float *a,
    const float *b, float *c, cublasOperation_t op_a, cublasOperation_t op_b,
    int lda, int ldb)
{
  const float one = 1.0f, zero = 0.0f;    /* CUBLAS_COMPUTE_32F: floats */
  char *scratch = (char *) ctx->workspace;
  __half *a16 = (__half *) (scratch + s->a16_at);
  const __half *b16 = s->b16;
  hy_cuda_to_half (ctx, a, a16, s->a_numel);
  if (!b16) {
    __half *t = (__half *) (scratch + s->b16_at);
    hy_cuda_to_half (ctx, b, t, s->b_numel);
    b16 = t;
  }
  if (s->batch == 1)
    HY_CUBLAS_CHECK (ctx, cublasGemmEx (ctx->cublas, op_b, op_a, s->n, s->m,
            s->k, &one, b16, CUDA_R_16F, ldb, a16, CUDA_R_16F, lda, &zero,
            c, CUDA_R_32F, s->n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  else
    HY_CUBLAS_CHECK (ctx, cublasGemmStridedBatchedEx (ctx->cublas, op_b,
            op_a, s->n, s->m, s->k, &one, b16, CUDA_R_16F, ldb,
            (long long) s->k * s->n, a16, CUDA_R_16F, lda,
            (long long) s->m * s->k, &zero, c, CUDA_R_32F, s->n,
            (long long) s->m * s->n, s->batch, CUBLAS_COMPUTE_32F,
            CUBLAS_GEMM_DEFAULT));
}

/* C = A·B for every batch entry, on ctx->stream. */
static void
gemm_run (hy_cuda_ctx *ctx, const gemm_state *s, const float *a,
    const float *b, float *c)
{
  if (s->numel == 0)
    return;
  if (s->k == 0) {
    /* An empty contraction still has an output: zeros. */
    HY_CUDA_CHECK (ctx, cudaMemsetAsync (c, 0,
            (size_t) s->numel * sizeof (float), ctx->stream));
    return;
  }
  const float one = 1.0f, zero = 0.0f;
  /* Cᵀ (n, m) = op (B)ᵀ · op (A)ᵀ, column-major: the row-major storage
   * of each operand read as its transpose. */
  const cublasOperation_t op_a = s->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = s->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int lda = s->trans_a ? s->m : s->k, ldb = s->trans_b ? s->k : s->n;
  if (s->fp16) {
    gemm_run_half (ctx, s, a, b, c, op_a, op_b, lda, ldb);
    return;
  }
  if (s->batch == 1)
    HY_CUBLAS_CHECK (ctx, cublasSgemm (ctx->cublas, op_b, op_a, s->n, s->m,
            s->k, &one, b, ldb, a, lda, &zero, c, s->n));
  else
    HY_CUBLAS_CHECK (ctx, cublasSgemmStridedBatched (ctx->cublas, op_b, op_a,
            s->n, s->m, s->k, &one, b, ldb, (long long) s->k * s->n, a, lda,
            (long long) s->m * s->k, &zero, c, s->n, (long long) s->m * s->n,
            s->batch));
}

gboolean
hy_cuda_prepare_fully_connected (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error)
{
  const hy_fc_params *p = (const hy_fc_params *) params;
  const hy_shape *xs = &in[0]->shape;
  /* As the CPU: both forms are a (rows, k) matrix times Wᵀ. */
  int64_t k = 1;
  if (p->flatten)
    for (int i = 1; i < xs->ndim; i++)
      k *= xs->dims[i];
  else
    k = xs->dims[xs->ndim - 1];
  const int64_t rows = k > 0 ? hy_shape_numel (xs) / k
      : hy_shape_numel (&out[0]->shape) / p->num_hidden;
  return gemm_prepare (ctx, params, "FullyConnected", false, true, rows,
      p->num_hidden, k, 1, in[1]->data, state, workspace, error);
}

void
hy_cuda_fully_connected (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const gemm_state *s = (const gemm_state *) params;
  const hy_fc_params *p = (const hy_fc_params *) s->p;
  float *y = out[0]->data;
  gemm_run (ctx, s, in[0]->data, in[1]->data, y);
  /* Column c of each row is channel c. */
  hy_cuda_epilogue_fused (ctx, &p->fused, p->no_bias, in, n_in,
      p->num_hidden, 1, y, s->numel);
}

void
hy_cuda_release_fully_connected (void *state)
{
  gemm_release (state);
}

gboolean
hy_cuda_prepare_dot (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error)
{
  const hy_dot_params *p = (const hy_dot_params *) params;
  const hy_shape *as = &in[0]->shape, *bs = &in[1]->shape;
  const bool ta = p->transpose_a, tb = p->transpose_b;
  if (p->op == HY_OP_BATCH_DOT) {
    const int nd = as->ndim;
    int64_t batch = 1;
    for (int i = 0; i < nd - 2; i++)
      batch *= as->dims[i];
    return gemm_prepare (ctx, params, "batch_dot", ta, tb,
        as->dims[nd - (ta ? 1 : 2)], bs->dims[nd - (tb ? 2 : 1)],
        as->dims[nd - (ta ? 2 : 1)], batch, NULL, state, workspace, error);
  }
  /* dot: a is (m, k) over all its axes but the contracted one, likewise
   * b (k, n); an empty contraction fills the output with zeros. */
  const int64_t k = as->dims[ta ? 0 : as->ndim - 1];
  const int64_t m = k > 0 ? hy_shape_numel (as) / k : 1;
  const int64_t n = k > 0 ? hy_shape_numel (bs) / k
      : hy_shape_numel (&out[0]->shape);
  return gemm_prepare (ctx, params, "dot", ta, tb, m, n, k, 1, NULL, state,
      workspace, error);
}

void
hy_cuda_dot (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  gemm_run (ctx, (const gemm_state *) params, in[0]->data, in[1]->data,
      out[0]->data);
}

void
hy_cuda_release_dot (void *state)
{
  gemm_release (state);
}
