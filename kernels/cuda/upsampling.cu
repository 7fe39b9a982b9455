/*
 * upsampling.cu — CUDA kernels of UpSampling: nearest as one launch per
 * input (upsampling.cuh), bilinear as the Deconvolution MXNet runs for it
 * (deconv.cu), prepared and released through that kernel's own set-up.
 */
#include "hybrid.h"
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/upsampling.cuh"

extern "C" {
gboolean hy_cuda_prepare_upsampling (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error);
void hy_cuda_upsampling (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_release_upsampling (void *state);
gboolean hy_cuda_prepare_deconvolution (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error);
void hy_cuda_deconvolution (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_release_deconvolution (void *state);
}

/* The call's params once prepared: the op's, and bilinear's
 * Deconvolution state. */
typedef struct upsampling_state {
  const hy_upsampling_params *p;
  void *deconv;
} upsampling_state;

extern "C" gboolean
hy_cuda_prepare_upsampling (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error)
{
  upsampling_state *s = g_new0 (upsampling_state, 1);
  s->p = (const hy_upsampling_params *) params;
  *workspace = 0;
  if (s->p->sample_type == HY_UPSAMPLING_BILINEAR
      && !hy_cuda_prepare_deconvolution (ctx, &s->p->deconv, in, n_in, out,
          n_out, &s->deconv, workspace, error)) {
    g_free (s);
    return FALSE;
  }
  *state = s;
  return TRUE;
}

extern "C" void
hy_cuda_release_upsampling (void *state)
{
  upsampling_state *s = (upsampling_state *) state;
  if (!s)
    return;
  if (s->deconv)
    hy_cuda_release_deconvolution (s->deconv);
  g_free (s);
}

static __global__ void
nearest_kernel (hy_cuda_upsampling_args a, const float *__restrict__ x,
    float *__restrict__ y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n) {
    int64_t dst;
    const float v = x[hy_cuda_upsampling_src (&a, i, &dst)];
    y[dst] = a.add ? y[dst] + v : v;
  }
}

extern "C" void
hy_cuda_upsampling (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const upsampling_state *s = (const upsampling_state *) params;
  if (s->p->sample_type == HY_UPSAMPLING_BILINEAR) {
    hy_cuda_deconvolution (ctx, s->deconv, in, n_in, out, n_out);
    return;
  }
  /* Stream order makes each summing launch see the ones before. */
  for (int k = 0; k < n_in; k++) {
    int64_t n;
    const hy_cuda_upsampling_args a = hy_cuda_upsampling_plan (s->p, in, k,
        out[0], &n);
    if (n == 0)
      continue;
    nearest_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
        ctx->stream>>> (a, in[k]->data, out[0]->data, n);
    HY_CUDA_CHECK_LAUNCH (ctx);
  }
}
