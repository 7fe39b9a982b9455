/*
 * test-conv-few-channels.c — the direct kernel for inputs of few channels
 * (kernels/cpu/conv/conv-few-channels.h) against sums taken in double
 * precision here (conv-reference.h):
 *  - the first layers it is for: 7×7 stride 2 pad 3 (ResNet), 3×3
 *    stride 2 pad 1 (MobileNet), small;
 *  - odd sizes: rows that end inside a vector, or shorter than one,
 *    tiles that span rows and an image's last tile cut short; filter
 *    counts off the tile's 4; 1 to 4 channels; strides 1 and 2 on each
 *    axis apart; padding 0 to beyond the kernel; batch 1 to 3;
 *  - every epilogue: bias, BatchNorm, residual, and each activation
 *    (those done in registers and sigmoid and tanh, left to epilogue.h);
 *  - on one thread and on two, twice each (the second time on a
 *    workspace sized by the first), bit for bit the same;
 *  - the input in a buffer of NaNs, so that a lane read past the plane
 *    or the padding shows; the output likewise, so that one left
 *    unwritten shows;
 *  - the convolutions it must leave to other kernels.
 *
 * HYBRIDINFER_FEW_CHANNELS=1 (set here) makes it take every convolution
 * it can run, not only those the rule says pay.  On a CPU without
 * AVX-512 it never runs: the tests say so and skip.
 */
#include <math.h>
#include <string.h>

#include "hybrid.h"
#include "conv-reference.h"
#include "core/op.h"
#include "kernels/cpu/conv/conv-few-channels.h"
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/nn.h"

typedef struct few_case {
  int batch, channels, height, width, filters;
  int kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
  bool bias, batch_norm, residual;
  hy_fused_act act;
} few_case;

static const few_case cases[] = {
  /* ResNet's and MobileNet's first layers, on small images */
  { 1, 3, 40, 40, 64, 7, 7, 2, 2, 3, 3, true, true, false,
    HY_FUSED_ACT_RELU },
  { 2, 3, 64, 64, 32, 3, 3, 2, 2, 1, 1, false, true, false,
    HY_FUSED_ACT_CLIP },
  { 1, 3, 34, 34, 16, 3, 3, 2, 2, 1, 1, false, true, false,
    HY_FUSED_ACT_HARD_SWISH },
  /* odd sizes, rows shorter than a vector, filters off the tile */
  { 1, 3, 13, 11, 5, 3, 3, 2, 2, 1, 1, true, false, true,
    HY_FUSED_ACT_NONE },
  { 3, 1, 37, 71, 9, 5, 5, 2, 2, 2, 2, true, true, true,
    HY_FUSED_ACT_RELU },
  { 1, 4, 9, 50, 3, 3, 3, 1, 1, 1, 1, false, false, false,
    HY_FUSED_ACT_LEAKY },
  { 2, 2, 17, 33, 7, 7, 7, 1, 2, 3, 3, true, false, false,
    HY_FUSED_ACT_HARD_SIGMOID },
  { 1, 3, 20, 19, 6, 3, 5, 2, 1, 0, 2, false, true, true,
    HY_FUSED_ACT_SIGMOID },
  { 1, 3, 8, 8, 4, 2, 2, 2, 2, 0, 0, true, false, false,
    HY_FUSED_ACT_TANH },
  /* padding beyond the kernel's reach: rows and columns of zeros only */
  { 1, 2, 6, 7, 8, 3, 3, 2, 2, 4, 5, true, false, true,
    HY_FUSED_ACT_RELU },
  /* 1×1, and 11×11 stride 2 (the largest taken) */
  { 1, 3, 18, 18, 12, 1, 1, 1, 1, 0, 0, true, false, false,
    HY_FUSED_ACT_NONE },
  { 1, 3, 45, 45, 20, 11, 11, 2, 2, 5, 5, false, false, false,
    HY_FUSED_ACT_HARD_SWISH },
};

static gboolean
skip_without_kernel (void)
{
  __builtin_cpu_init ();
  if (__builtin_cpu_supports ("avx512f"))
    return FALSE;
  g_test_skip ("this CPU has no AVX-512F: the few-channel kernel is never "
      "chosen");
  return TRUE;
}

static hy_conv_params
params_of (const few_case *q)
{
  hy_conv_params p = {
    .op = hy_op_lookup ("Convolution")->id, .n_spatial = 2,
    .kernel = { q->kernel_h, q->kernel_w },
    .stride = { q->stride_h, q->stride_w },
    .dilate = { 1, 1 }, .pad = { q->pad_h, q->pad_w },
    .num_filter = q->filters, .num_group = 1, .no_bias = !q->bias,
    .fused = {
      .act = q->act, .alpha = q->act == HY_FUSED_ACT_LEAKY ? 0.1f : -0.5f,
      .beta = 0.75f, .batch_norm = q->batch_norm, .residual = q->residual,
    },
  };
  return p;
}

/* conv-reference.h's sum, with kernel, stride and padding per axis and
 * every activation: the epilogue's steps in double, in its order. */
static void
reference (const few_case *q, const hy_fused_epilogue *e, int out_h,
    int out_w, const float *x, const float *w, const conv_operands *ops,
    float *y)
{
  const int kk = q->kernel_h * q->kernel_w;
  for (int b = 0; b < q->batch; b++)
    for (int f = 0; f < q->filters; f++)
      for (int oy = 0; oy < out_h; oy++)
        for (int ox = 0; ox < out_w; ox++) {
          double s = ops->bias ? ops->bias[f] : 0.0;
          for (int c = 0; c < q->channels; c++)
            for (int i = 0; i < q->kernel_h; i++)
              for (int j = 0; j < q->kernel_w; j++) {
                const int iy = oy * q->stride_h - q->pad_h + i;
                const int ix = ox * q->stride_w - q->pad_w + j;
                if (iy < 0 || iy >= q->height || ix < 0 || ix >= q->width)
                  continue;
                s += (double) w[(f * q->channels + c) * kk
                    + i * q->kernel_w + j]
                    * x[((b * q->channels + c) * q->height + iy) * q->width
                        + ix];
              }
          if (ops->bn)
            s = (s - ops->bn[f]) * ops->bn[q->filters + f]
                + ops->bn[2 * q->filters + f];
          const int64_t o = ((int64_t) (b * q->filters + f) * out_h + oy)
              * out_w + ox;
          if (ops->res)
            s += ops->res[o];
          const double hs = fmin (fmax (s + 3, 0), 6) / 6;
          switch (e->act) {
            case HY_FUSED_ACT_NONE:
              break;
            case HY_FUSED_ACT_RELU:
              s = fmax (s, 0);
              break;
            case HY_FUSED_ACT_CLIP:
              s = fmin (fmax (s, e->alpha), e->beta);
              break;
            case HY_FUSED_ACT_LEAKY:
              s = s > 0 ? s : s * e->alpha;
              break;
            case HY_FUSED_ACT_SIGMOID:
              s = 1 / (1 + exp (-s));
              break;
            case HY_FUSED_ACT_TANH:
              s = tanh (s);
              break;
            case HY_FUSED_ACT_HARD_SIGMOID:
              s = hs;
              break;
            case HY_FUSED_ACT_HARD_SWISH:
              s = s * hs;
              break;
          }
          y[o] = (float) s;
        }
}

static void
test_case (gconstpointer data)
{
  if (skip_without_kernel ())
    return;
  const few_case *q = data;
  const int out_h = (q->height + 2 * q->pad_h - q->kernel_h) / q->stride_h
      + 1;
  const int out_w = (q->width + 2 * q->pad_w - q->kernel_w) / q->stride_w
      + 1;
  const hy_conv_params p = params_of (q);
  hy_shape xs = { 4, { q->batch, q->channels, q->height, q->width } };
  hy_shape ws = { 4, { q->filters, q->channels, q->kernel_h, q->kernel_w } };
  hy_shape ys = { 4, { q->batch, q->filters, out_h, out_w } };
  const int64_t x_floats = hy_shape_numel (&xs);
  const int64_t y_floats = hy_shape_numel (&ys);

  /* The input between two vectors' worth of NaNs. */
  float *x_buf = g_new (float, x_floats + 32);
  memset (x_buf, 0xff, (size_t) (x_floats + 32) * sizeof (float));
  hy_tensor x = { .shape = xs, .data = x_buf + 16 };
  conv_fill (x.data, x_floats, 6);
  hy_tensor *in[5] = { &x };
  int n_in = 1;
  in[n_in] = hy_tensor_new (&ws);
  conv_fill (in[n_in++]->data, hy_shape_numel (&ws), 7);
  const conv_operands ops = conv_operands_add (in, &n_in, q->filters,
      q->bias, q->batch_norm, q->residual, &ys);

  float *want = g_new (float, y_floats);
  reference (q, &p.fused, out_h, out_w, x.data, in[1]->data, &ops, want);
  double scale = 1.0;
  for (int64_t i = 0; i < y_floats; i++)
    scale = fmax (scale, fabs (want[i]));
  /* A direct sum in float of at most a few hundred products. */
  const double tol = 1e-5 * scale;

  hy_tensor *got = hy_tensor_new (&ys);
  hy_conv_few_channels *conv = hy_conv_few_channels_new (&p,
      (const hy_tensor *const *) in, n_in, got, TRUE);
  g_assert_nonnull (conv);
  /* Weights that may change between forwards are never laid out. */
  g_assert_null (hy_conv_few_channels_new (&p,
          (const hy_tensor *const *) in, n_in, got, FALSE));

  hy_cpu_ctx ctx[2] = { { 0 }, { 0 } };
  hy_cpu_ctx_set_threads (&ctx[1], 2);
  float *first = g_new (float, y_floats);
  double worst = 0;
  for (int run = 0; run < 4; run++) {
    memset (got->data, 0xff, hy_tensor_nbytes (got));     /* NaN */
    hy_cpu_convolution_few_channels (&ctx[run % 2], conv,
        (const hy_tensor *const *) in, n_in, &got, 1);
    for (int64_t i = 0; i < y_floats; i++) {
      const double d = fabs ((double) got->data[i] - want[i]);
      if (!(d <= tol))
        g_error ("%d thread(s): output %" G_GINT64_FORMAT ": %g, want %g "
            "(tolerance %g)", run % 2 + 1, i, got->data[i], want[i], tol);
      worst = fmax (worst, d);
    }
    if (run == 0)
      memcpy (first, got->data, hy_tensor_nbytes (got));
    g_assert_cmpmem (first, hy_tensor_nbytes (got), got->data,
        hy_tensor_nbytes (got));
  }
  g_test_message ("largest difference %.2e of an output scale %.2f", worst,
      scale);

  g_free (first);
  hy_cpu_ctx_clear (&ctx[0]);
  hy_cpu_ctx_clear (&ctx[1]);
  hy_conv_few_channels_free (conv);
  for (int i = 1; i < n_in; i++)
    hy_tensor_free (in[i]);
  g_free (x_buf);
  hy_tensor_free (got);
  g_free (want);
}

/* What it leaves to the other kernels, even when told to take all. */
static void
test_refuses (void)
{
  if (skip_without_kernel ())
    return;
  static const struct {
    int kernel, stride, dilate, pad, groups;
  } others[] = {
    { 3, 3, 1, 1, 1 },          /* stride 3 */
    { 3, 1, 2, 2, 1 },          /* dilated */
    { 3, 1, 1, 1, 2 },          /* grouped */
    { 13, 1, 1, 6, 1 },         /* beyond 11×11 */
  };
  for (guint i = 0; i < G_N_ELEMENTS (others); i++) {
    const int k = others[i].kernel, s = others[i].stride;
    const int ext = (k - 1) * others[i].dilate + 1;
    const int out = (16 + 2 * others[i].pad - ext) / s + 1;
    const few_case q = {
      1, 4, 16, 16, 8, k, k, s, s, others[i].pad, others[i].pad,
      false, false, false, HY_FUSED_ACT_NONE,
    };
    hy_conv_params p = params_of (&q);
    p.dilate[0] = p.dilate[1] = others[i].dilate;
    p.num_group = others[i].groups;
    hy_shape xs = { 4, { 1, 4, 16, 16 } };
    hy_shape ws = { 4, { 8, 4 / others[i].groups, k, k } };
    hy_shape ys = { 4, { 1, 8, out, out } };
    hy_tensor *in[2] = { hy_tensor_new (&xs), hy_tensor_new (&ws) };
    hy_tensor *y = hy_tensor_new (&ys);
    g_assert_null (hy_conv_few_channels_new (&p,
            (const hy_tensor *const *) in, 2, y, TRUE));
    hy_tensor_free (in[0]);
    hy_tensor_free (in[1]);
    hy_tensor_free (y);
  }
}

int
main (int argc, char **argv)
{
  g_setenv ("HYBRIDINFER_FEW_CHANNELS", "1", TRUE);
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree char *name = g_strdup_printf ("/conv-few-channels/case/%u",
        i);
    g_test_add_data_func (name, &cases[i], test_case);
  }
  g_test_add_func ("/conv-few-channels/refuses", test_refuses);
  return g_test_run ();
}
