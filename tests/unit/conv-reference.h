/*
 * conv-reference.h — what the CPU convolution kernels' unit tests share:
 * seeded operands, and the reference they compare with, a 2-D convolution
 * and its fused epilogue (bias, BatchNorm, residual, activation:
 * epilogue.h's order) summed in double precision.
 */
#ifndef HY_TEST_CONV_REFERENCE_H
#define HY_TEST_CONV_REFERENCE_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "hybrid.h"
#include "kernels/params/nn.h"

/* n values in [-1, 1), the same for the same seed. */
static inline void
conv_fill (float *v, int64_t n, guint32 seed)
{
  GRand *r = g_rand_new_with_seed (seed);
  for (int64_t i = 0; i < n; i++)
    v[i] = (float) g_rand_double_range (r, -1, 1);
  g_rand_free (r);
}

/* The optional operands of a convolution, where they are. */
typedef struct conv_operands {
  const float *bias, *bn, *res;
} conv_operands;

/* Appends to in[*n_in] on, filled, the operands a convolution kernel
 * takes after its data and weight, in its order: the bias (`filters`),
 * BatchNorm's mean, scale and shift (3 × `filters`, a positive scale),
 * the residual (shaped `y`); each only when asked for. */
static inline conv_operands
conv_operands_add (hy_tensor **in, int *n_in, int64_t filters, bool bias,
    bool batch_norm, bool residual, const hy_shape *y)
{
  conv_operands o = { NULL, NULL, NULL };
  if (bias) {
    hy_shape s = { 1, { filters } };
    hy_tensor *t = in[(*n_in)++] = hy_tensor_new (&s);
    conv_fill (t->data, filters, 8);
    o.bias = t->data;
  }
  if (batch_norm) {
    hy_shape s = { 2, { 3, filters } };
    hy_tensor *t = in[(*n_in)++] = hy_tensor_new (&s);
    conv_fill (t->data, 3 * filters, 9);
    for (int64_t f = 0; f < filters; f++)
      t->data[filters + f] += 1.5f;
    o.bn = t->data;
  }
  if (residual) {
    hy_tensor *t = in[(*n_in)++] = hy_tensor_new (y);
    conv_fill (t->data, hy_shape_numel (y), 10);
    o.res = t->data;
  }
  return o;
}

typedef struct conv_reference {
  int batch, channels, height, width, filters;
  int kernel, stride, pad, dilate, groups;
  hy_fused_act act;             /* NONE, RELU or CLIP */
  float alpha, beta;            /* CLIP's bounds */
} conv_reference;

/* y (batch, filters, out_h, out_w) from x and the weights w; bias, bn
 * (mean, scale, shift; filters each) and res (laid out as y) may be
 * NULL. */
static inline void
conv_reference_run (const conv_reference *q, int out_h, int out_w,
    const float *x, const float *w, const float *bias, const float *bn,
    const float *res, float *y)
{
  const int cg = q->channels / q->groups, fg = q->filters / q->groups;
  for (int b = 0; b < q->batch; b++)
    for (int f = 0; f < q->filters; f++)
      for (int oy = 0; oy < out_h; oy++)
        for (int ox = 0; ox < out_w; ox++) {
          const int grp = f / fg;
          double s = bias ? bias[f] : 0.0;
          for (int c = 0; c < cg; c++)
            for (int i = 0; i < q->kernel; i++)
              for (int j = 0; j < q->kernel; j++) {
                const int iy = oy * q->stride - q->pad + i * q->dilate;
                const int ix = ox * q->stride - q->pad + j * q->dilate;
                if (iy < 0 || iy >= q->height || ix < 0 || ix >= q->width)
                  continue;
                s += (double) w[((f * cg + c) * q->kernel + i) * q->kernel
                    + j] * x[((b * q->channels + grp * cg + c) * q->height
                        + iy) * q->width + ix];
              }
          if (bn)
            s = (s - bn[f]) * bn[q->filters + f] + bn[2 * q->filters + f];
          const int64_t o = ((int64_t) (b * q->filters + f) * out_h + oy)
              * out_w + ox;
          if (res)
            s += res[o];
          if (q->act == HY_FUSED_ACT_RELU && s < 0)
            s = 0;
          if (q->act == HY_FUSED_ACT_CLIP)
            s = s > q->beta ? q->beta : s < q->alpha ? q->alpha : s;
          y[o] = (float) s;
        }
}

#endif /* HY_TEST_CONV_REFERENCE_H */
