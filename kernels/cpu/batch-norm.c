/*
 * batch-norm.c — BatchNorm at inference on the CPU:
 *   y = (x − mean) · gamma / sqrt(var + eps) + beta   along `axis`,
 * gamma read as 1 under fix_gamma.  The data is walked as (outer, C, inner)
 * so each channel's scale applies to a contiguous run, runs in parallel.
 * y may be x.
 *
 * _contrib_SyncBatchNorm rounds as MXNet's own kernel for it does:
 *   y = gamma / sqrt(var + eps) · x + (beta − gamma · mean / sqrt(var + eps)),
 * which is the same run with a mean of 0.
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/params/nn.h"

void hy_cpu_batch_norm (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* One channel's contiguous run.  No restrict: y may be x (inplace). */
HY_CPU_VECTOR_CLONES static void
normalize_run (float *y, const float *x, int64_t n, float mean, float scale,
    float shift)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = (x[i] - mean) * scale + shift;
}

typedef struct batch_norm_job {
  const float *x, *mean, *scale, *shift;
  float *y;
  int64_t channels, inner;
} batch_norm_job;

/* Runs [begin, end) of (outer · channels). */
static void
normalize_runs (void *arg, int64_t begin, int64_t end, int thread)
{
  const batch_norm_job *j = arg;
  for (int64_t r = begin; r < end; r++) {
    const int64_t c = r % j->channels, base = r * j->inner;
    normalize_run (j->y + base, j->x + base, j->inner, j->mean[c],
        j->scale[c], j->shift[c]);
  }
}

void
hy_cpu_batch_norm (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_batch_norm_params *p = params;
  const hy_shape *xs = &in[0]->shape;
  const int axis = p->axis < 0 ? p->axis + xs->ndim : p->axis;
  const int64_t channels = xs->dims[axis];
  /* no channel, no value: and the workspace for none is NULL */
  if (channels == 0)
    return;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; i++)
    outer *= xs->dims[i];
  for (int i = axis + 1; i < xs->ndim; i++)
    inner *= xs->dims[i];

  const float *gamma = in[1]->data, *beta = in[2]->data;
  const float *mean = in[3]->data, *var = in[4]->data;
  float *scale = hy_cpu_workspace (ctx,
      3 * (size_t) channels * sizeof (float));
  const float *run_mean = mean, *shift = beta;
  if (p->op == HY_OP_SYNC_BATCH_NORM) {
    float *zeros = scale + channels, *sync_shift = zeros + channels;
    for (int64_t c = 0; c < channels; c++) {
      const float slope = p->fix_gamma ? 1.0f : gamma[c];
      const float std = sqrtf (var[c] + p->eps);
      scale[c] = slope / std;
      sync_shift[c] = beta[c] - slope * mean[c] / std;
      zeros[c] = 0.0f;
    }
    run_mean = zeros;
    shift = sync_shift;
  } else {
    for (int64_t c = 0; c < channels; c++) {
      const float inv_std = 1.0f / sqrtf (var[c] + p->eps);
      scale[c] = p->fix_gamma ? inv_std : gamma[c] * inv_std;
    }
  }

  const batch_norm_job j = {
    in[0]->data, run_mean, scale, shift, out[0]->data, channels, inner,
  };
  hy_cpu_parallel_for (ctx, outer * channels, hy_cpu_grain (inner),
      normalize_runs, (void *) &j);

  if (n_out >= 3) {
    /* MXNet's inference "mean" and "var" outputs: the moving mean and the
     * inverse standard deviation. */
    memcpy (out[1]->data, mean, (size_t) channels * sizeof (float));
    for (int64_t c = 0; c < channels; c++)
      out[2]->data[c] = 1.0f / sqrtf (var[c] + p->eps);
  }
}
