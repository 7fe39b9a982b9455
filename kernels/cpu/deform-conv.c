/*
 * deform-conv.c — CPU kernel of _contrib_ModulatedDeformableConvolution
 * (DCNv2).
 *
 * Per sample: the columns first, as MXNet 1.9.1's
 * modulated_deformable_im2col does — for input channel c, tap (i, j) and
 * output position (y, x), data is sampled bilinearly at
 *   (y·s − pad + i·d + Δy, x·s − pad + j·d + Δx)
 * and scaled by the tap's mask, where Δ and the mask are those of c's
 * deformable group, laid out along the channel axis as
 * [group][tap][Δy, Δx] and [group][tap].  A position outside
 * (−1, H) × (−1, W) gives 0, and inside it corners outside the image
 * count as 0 (MXNet's dmcn_im2col_bilinear).  Then one GEMM per
 * convolution group, weight · columns, and the bias.
 */
#include <math.h>

#include "kernels/cpu/conv/blas.h"
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/deform-conv.h"
#include "kernels/deform-conv-common.h"

void hy_cpu_modulated_deform_conv (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef struct im2col_job {
  const hy_deform_conv_params *p;
  const float *x;               /* this sample's (C, H, W) */
  const float *offset;          /* (dg, taps, 2, Ho, Wo) */
  const float *mask;            /* (dg, taps, Ho, Wo) */
  float *col;                   /* (C, taps, Ho·Wo) */
  int64_t h, w, ho, wo, channels_per_group;
} im2col_job;

static void
im2col_channels (void *arg, int64_t begin, int64_t end, int thread)
{
  const im2col_job *j = arg;
  const hy_deform_conv_params *p = j->p;
  const int64_t kh = p->kernel[0], kw = p->kernel[1], taps = kh * kw;
  const int64_t plane = j->ho * j->wo;
  for (int64_t c = begin; c < end; c++) {
    const int64_t group = c / j->channels_per_group;
    const float *x = j->x + c * j->h * j->w;
    const float *offset = j->offset + group * taps * 2 * plane;
    const float *mask = j->mask + group * taps * plane;
    float *col = j->col + c * taps * plane;
    for (int64_t i = 0; i < kh; i++)
      for (int64_t jj = 0; jj < kw; jj++) {
        const int64_t tap = i * kw + jj;
        const float *dy = offset + 2 * tap * plane, *dx = dy + plane;
        const float *m = mask + tap * plane;
        float *out = col + tap * plane;
        for (int64_t y = 0; y < j->ho; y++)
          for (int64_t xo = 0; xo < j->wo; xo++) {
            const int64_t at = y * j->wo + xo;
            const float h_im = (float) (y * p->stride[0] - p->pad[0]
                + i * p->dilate[0]) + dy[at];
            const float w_im = (float) (xo * p->stride[1] - p->pad[1]
                + jj * p->dilate[1]) + dx[at];
            /* Written so that NaN fails it: no floor of NaN or of a
             * huge value is ever converted. */
            float v = 0;
            if (h_im > -1 && w_im > -1 && h_im < (float) j->h
                && w_im < (float) j->w)
              v = hy_deform_bilinear (x, j->h, j->w, h_im, w_im);
            out[at] = v * m[at];
          }
      }
  }
}

void
hy_cpu_modulated_deform_conv (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_deform_conv_params *p = params;
  const hy_shape *xs = &in[0]->shape, *ys = &out[0]->shape;
  if (hy_shape_numel (ys) == 0)
    return;
  const int64_t batch = xs->dims[0], channels = xs->dims[1];
  const int64_t taps = p->kernel[0] * p->kernel[1];
  const int64_t ho = ys->dims[2], wo = ys->dims[3], plane = ho * wo;
  const int64_t groups = p->num_group, cg = channels / groups;
  const int64_t fg = p->num_filter / groups;
  const int64_t dg = p->num_deformable_group;
  float *col = hy_cpu_workspace (ctx,
      (size_t) (channels * taps * plane) * sizeof (float));
  const float *wt = in[3]->data;
  const float *bias = p->no_bias ? NULL : in[4]->data;
  float *y = out[0]->data;
  for (int64_t n = 0; n < batch; n++) {
    im2col_job j = {
      .p = p,
      .x = (const float *) in[0]->data + n * channels * xs->dims[2]
          * xs->dims[3],
      .offset = (const float *) in[1]->data + n * dg * taps * 2 * plane,
      .mask = (const float *) in[2]->data + n * dg * taps * plane,
      .col = col,
      .h = xs->dims[2], .w = xs->dims[3], .ho = ho, .wo = wo,
      .channels_per_group = channels / dg,
    };
    hy_cpu_parallel_for (ctx, channels, hy_cpu_grain (taps * plane * 8),
        im2col_channels, &j);
    float *yn = y + n * p->num_filter * plane;
    for (int64_t gi = 0; gi < groups; gi++)
      hy_sgemm (ctx, false, false, fg, plane, cg * taps,
          wt + gi * fg * cg * taps, col + gi * cg * taps * plane, 0.0f,
          yn + gi * fg * plane);
    if (bias)
      for (int64_t f = 0; f < p->num_filter; f++)
        for (int64_t k = 0; k < plane; k++)
          yn[f * plane + k] += bias[f];
  }
}
