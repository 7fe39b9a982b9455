/*
 * upsampling.c — CPU kernel of UpSampling.
 *
 * Nearest: output pixel (y, x) of an input repeated f times is the input's
 * (y / f, x / f), f being the output's height over the input's (the same
 * on both axes, as shape inference checked).  With several inputs the
 * planes are concatenated along the channels, or summed in input order
 * (MXNet assigns the first, then adds each next: the same float sums).
 * Bilinear is MXNet's Deconvolution with the weight given, so it runs the
 * Deconvolution kernel on the params the op definition derived.
 */
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/nn.h"

void hy_cpu_upsampling (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_deconvolution (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef struct nearest_job {
  const hy_tensor *const *in;
  int n_in;
  bool sum;
  float *y;
  int64_t channels, oh, ow;     /* the output's */
} nearest_job;

/* Adds (or writes) input plane x of size ih×iw repeated to oh×ow. */
static void
repeat_plane (const float *x, int64_t ih, int64_t iw, float *y, int64_t oh,
    int64_t ow, bool add)
{
  const int64_t f = oh / ih;
  for (int64_t r = 0; r < oh; r++) {
    const float *row = x + (r / f) * iw;
    float *dst = y + r * ow;
    if (add)
      for (int64_t c = 0; c < ow; c++)
        dst[c] += row[c / f];
    else
      for (int64_t c = 0; c < ow; c++)
        dst[c] = row[c / f];
  }
}

static void
nearest_planes (void *arg, int64_t begin, int64_t end, int thread)
{
  const nearest_job *j = arg;
  const int64_t plane = j->oh * j->ow;
  for (int64_t p = begin; p < end; p++) {
    const int64_t n = p / j->channels, c = p % j->channels;
    float *y = j->y + p * plane;
    int64_t first = 0;          /* concat: input i's first channel */
    for (int i = 0; i < j->n_in; i++) {
      const hy_shape *s = &j->in[i]->shape;
      const int64_t ch = s->dims[1], ih = s->dims[2], iw = s->dims[3];
      const int64_t ic = j->sum ? c : c - first;
      first += ch;
      if (ic < 0 || ic >= ch)
        continue;
      const float *x = j->in[i]->data + (n * ch + ic) * ih * iw;
      repeat_plane (x, ih, iw, y, j->oh, j->ow, j->sum && i > 0);
      if (!j->sum)
        break;
    }
  }
}

void
hy_cpu_upsampling (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_upsampling_params *p = params;
  if (p->sample_type == HY_UPSAMPLING_BILINEAR) {
    hy_cpu_deconvolution (ctx, &p->deconv, in, n_in, out, n_out);
    return;
  }
  const hy_shape *ys = &out[0]->shape;
  nearest_job j = {
    .in = in, .n_in = n_in, .sum = p->sum, .y = out[0]->data,
    .channels = ys->dims[1], .oh = ys->dims[2], .ow = ys->dims[3],
  };
  const int64_t planes = ys->dims[0] * ys->dims[1];
  const int64_t reads = p->sum ? n_in : 1;     /* input planes an output's */
  hy_cpu_parallel_for (ctx, planes, hy_cpu_grain (j.oh * j.ow * reads),
      nearest_planes, &j);
}
