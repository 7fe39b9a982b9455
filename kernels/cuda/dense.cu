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
 */
#include <limits.h>

#include "hybrid.h"
#include "cuda-kernel.h"
#include "epilogue.cuh"
#include "nn.h"

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
} gemm_state;

static gboolean
gemm_prepare (hy_cuda_ctx *ctx, const void *params, const char *op,
    bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
    int64_t batch, void **state, size_t *workspace, GError **error)
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
  *state = s;
  *workspace = 0;
  return TRUE;
}

static void
gemm_release (void *state)
{
  g_free (state);
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
      p->num_hidden, k, 1, state, workspace, error);
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
        as->dims[nd - (ta ? 2 : 1)], batch, state, workspace, error);
  }
  /* dot: a is (m, k) over all its axes but the contracted one, likewise
   * b (k, n); an empty contraction fills the output with zeros. */
  const int64_t k = as->dims[ta ? 0 : as->ndim - 1];
  const int64_t m = k > 0 ? hy_shape_numel (as) / k : 1;
  const int64_t n = k > 0 ? hy_shape_numel (bs) / k
      : hy_shape_numel (&out[0]->shape);
  return gemm_prepare (ctx, params, "dot", ta, tb, m, n, k, 1, state,
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
