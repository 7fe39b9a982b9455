/*
 * test-conv-dnnl.c — oneDNN's convolutions (kernels/cpu/conv/conv-dnnl.h)
 * against conv.c's, on the shapes the zoo models have and the corners
 * around them: every layout the rule may pick (16-channel blocks, nhwc,
 * a plain input of few channels), filter counts that are and are not
 * whole blocks (the classifier's 1000), filter slices per thread, batch
 * above 1, stride, padding, dilation, no bias, and the fused epilogue
 * (BatchNorm, residual, activation) run on the way back to planes.
 *
 * Built only with oneDNN.  Both run on a context with two threads.
 *
 * In bf16 (ctx.bf16) the same cases, and a 1x1 on a large map that only
 * bf16 sends to oneDNN, against conv.c run on copies of the input and
 * weights rounded to bf16 the same way (nearest even): the same products
 * summed in fp32 in another order, so the same 1e-5 tolerance holds and
 * any slip in the bf16 path (a wrong layout, a missed rounding) shows.
 * Skipped, saying so, on a CPU without AVX512_BF16.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/cpu/conv/conv-dnnl.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/params/nn.h"

#define TOL 1e-5                /* of the output's largest magnitude */

typedef struct conv_case {
  int batch, channels, size, filters, kernel, stride, pad, dilate;
  bool bias, batch_norm, residual;
  hy_fused_act act;
} conv_case;

static const conv_case cases[] = {
  /* the first layer: 3 channels, read plain */
  { 1, 3, 32, 64, 7, 2, 3, 1, false, true, false, HY_FUSED_ACT_RELU },
  /* 1x1, wide enough on small maps for oneDNN to take (nhwc) */
  { 1, 256, 16, 512, 1, 2, 0, 1, true, false, false, HY_FUSED_ACT_NONE },
  { 1, 256, 8, 288, 1, 1, 0, 1, false, true, false, HY_FUSED_ACT_CLIP },
  { 1, 272, 7, 248, 1, 1, 0, 1, true, false, true, HY_FUSED_ACT_NONE },
  { 1, 320, 7, 1280, 1, 1, 0, 1, false, true, false, HY_FUSED_ACT_CLIP },
  { 1, 1280, 1, 1000, 1, 1, 0, 1, true, false, false, HY_FUSED_ACT_NONE },
  { 1, 512, 8, 1000, 1, 1, 0, 1, true, false, false, HY_FUSED_ACT_RELU },
  { 1, 416, 7, 160, 1, 1, 0, 1, false, true, false, HY_FUSED_ACT_NONE },
  { 1, 2800, 6, 24, 1, 1, 0, 1, true, false, false, HY_FUSED_ACT_SIGMOID },
  /* spatial kernels: nhwc */
  { 1, 64, 24, 64, 3, 1, 1, 1, false, true, true, HY_FUSED_ACT_RELU },
  { 3, 32, 16, 48, 3, 1, 2, 2, true, false, false, HY_FUSED_ACT_LEAKY },
  { 1, 256, 7, 512, 3, 1, 1, 1, false, true, true, HY_FUSED_ACT_RELU },
  { 2, 48, 9, 80, 3, 2, 1, 1, true, true, true, HY_FUSED_ACT_TANH },
  { 1, 64, 9, 16, 3, 1, 1, 1, true, false, false, HY_FUSED_ACT_NONE },
  { 4, 64, 7, 32, 3, 1, 1, 1, false, false, false, HY_FUSED_ACT_RELU },
  /* bf16 only: a 1x1 on a large map (fp32 leaves it to conv.c) */
  { 2, 64, 28, 256, 1, 1, 0, 1, true, true, true, HY_FUSED_ACT_RELU },
};
/* The last case runs in bf16 only. */
#define N_FP32_CASES (G_N_ELEMENTS (cases) - 1)

/* x rounded to the nearest bf16 (ties to even), as a float. */
static float
round_bf16 (float x)
{
  guint32 u;
  memcpy (&u, &x, sizeof u);
  u = (u + 0x7fffu + (u >> 16 & 1u)) & 0xffff0000u;
  memcpy (&x, &u, sizeof x);
  return x;
}

static void
fill (hy_tensor *t, guint32 seed, float scale, float offset)
{
  GRand *r = g_rand_new_with_seed (seed);
  for (int64_t i = 0; i < hy_shape_numel (&t->shape); i++)
    t->data[i] = offset + scale * (float) g_rand_double_range (r, -1, 1);
  g_rand_free (r);
}

static hy_conv_params
params_of (const conv_case *k)
{
  hy_conv_params p = {
    .op = hy_op_lookup ("Convolution")->id,
    .n_spatial = 2,
    .kernel = { k->kernel, k->kernel }, .stride = { k->stride, k->stride },
    .dilate = { k->dilate, k->dilate }, .pad = { k->pad, k->pad },
    .num_filter = k->filters, .num_group = 1, .no_bias = !k->bias,
    .fused = {
      .act = k->act, .alpha = k->act == HY_FUSED_ACT_LEAKY ? 0.1f : 0.0f,
      .beta = 6.0f, .batch_norm = k->batch_norm, .residual = k->residual,
    },
  };
  return p;
}

static void
run_case (const conv_case *k, bool bf16)
{
  const hy_conv_params p = params_of (k);
  const int64_t ext = (int64_t) (k->kernel - 1) * k->dilate + 1;
  const int64_t out = (k->size + 2 * k->pad - ext) / k->stride + 1;
  hy_shape xs = { 4, { k->batch, k->channels, k->size, k->size } };
  hy_shape ws = { 4, { k->filters, k->channels, k->kernel, k->kernel } };
  hy_shape bs = { 1, { k->filters } };
  hy_shape ns = { 2, { 3, k->filters } };
  hy_shape ys = { 4, { k->batch, k->filters, out, out } };
  hy_tensor *in[5];
  int n_in = 0;
  in[n_in++] = hy_tensor_new (&xs);
  fill (in[0], 1, 1.0f, 0.0f);
  in[n_in++] = hy_tensor_new (&ws);
  fill (in[1], 2, 0.2f, 0.0f);
  if (k->bias) {
    in[n_in] = hy_tensor_new (&bs);
    fill (in[n_in++], 3, 0.5f, 0.0f);
  }
  if (k->batch_norm) {
    /* rows mean, scale (positive), shift */
    hy_tensor *bn = in[n_in++] = hy_tensor_new (&ns);
    fill (bn, 4, 0.5f, 0.0f);
    for (int64_t f = 0; f < k->filters; f++)
      bn->data[k->filters + f] = 0.5f + fabsf (bn->data[k->filters + f]);
  }
  if (k->residual) {
    in[n_in] = hy_tensor_new (&ys);
    fill (in[n_in++], 5, 1.0f, 0.0f);
  }
  hy_tensor *want = hy_tensor_new (&ys), *got = hy_tensor_new (&ys);

  hy_cpu_ctx ctx = { 0 };
  hy_cpu_ctx_set_threads (&ctx, 2);
  /* The reference: conv.c, in bf16 on rounded copies of x and w. */
  hy_tensor *ref_in[5];
  memcpy (ref_in, in, sizeof in);
  if (bf16) {
    for (int i = 0; i < 2; i++) {
      ref_in[i] = hy_tensor_new (&in[i]->shape);
      for (int64_t e = 0; e < hy_shape_numel (&in[i]->shape); e++)
        ref_in[i]->data[e] = round_bf16 (in[i]->data[e]);
    }
  }
  hy_cpu_kernel_for (p.op) (&ctx, &p, (const hy_tensor *const *) ref_in,
      n_in, &want, 1);
  if (bf16) {
    hy_tensor_free (ref_in[0]);
    hy_tensor_free (ref_in[1]);
  }
  ctx.bf16 = bf16;
  GError *error = NULL;
  hy_conv_dnnl *conv = hy_conv_dnnl_new (&ctx, &p,
      (const hy_tensor *const *) in, n_in, got, TRUE, &error);
  g_assert_no_error (error);
  g_assert_nonnull (conv);
  g_assert_true (hy_conv_dnnl_is_bf16 (conv) == bf16);
  /* Twice: the second run reuses everything the first one set up. */
  for (int r = 0; r < 2; r++) {
    memset (got->data, 0xff, hy_tensor_nbytes (got));   /* NaN */
    hy_cpu_convolution_dnnl (&ctx, conv, (const hy_tensor *const *) in,
        n_in, &got, 1);
    double diff = 0, ref = 0;
    for (int64_t i = 0; i < hy_shape_numel (&ys); i++) {
      diff = MAX (diff, fabs ((double) got->data[i] - want->data[i]));
      ref = MAX (ref, fabs ((double) want->data[i]));
      if (isnan (got->data[i]))
        g_error ("output %" G_GINT64_FORMAT " was not written", i);
    }
    if (!(diff <= TOL * MAX (1.0, ref)))
      g_error ("max|diff| %g over %g (largest output %g)", diff,
          TOL * MAX (1.0, ref), ref);
  }
  hy_conv_dnnl_free (conv);
  hy_cpu_ctx_clear (&ctx);
  for (int i = 0; i < n_in; i++)
    hy_tensor_free (in[i]);
  hy_tensor_free (want);
  hy_tensor_free (got);
}

static void
test_case (gconstpointer data)
{
  run_case (data, false);
}

static void
test_case_bf16 (gconstpointer data)
{
  if (!hy_cpu_features_get ()->avx512_bf16) {
    g_test_skip ("this CPU has no AVX512_BF16");
    return;
  }
  run_case (data, true);
}

/* What oneDNN does not take stays with conv.c: no error, no set-up. */
static void
test_declined (void)
{
  /* 64 -> 64, 3x3, no bias, BatchNorm, residual: 4 inputs */
  conv_case k = cases[9];
  g_assert_cmpint (k.kernel, ==, 3);
  hy_conv_params p = params_of (&k);
  p.num_group = 2;
  hy_shape xs = { 4, { 1, 64, 8, 8 } }, ws = { 4, { 64, 32, 3, 3 } };
  hy_shape ns = { 2, { 3, 64 } }, ys = { 4, { 1, 64, 8, 8 } };
  hy_tensor *in[4] = { hy_tensor_new (&xs), hy_tensor_new (&ws),
    hy_tensor_new (&ns), hy_tensor_new (&ys) };
  hy_tensor *y = hy_tensor_new (&ys);
  hy_cpu_ctx ctx = { 0 };
  GError *error = NULL;
  g_assert_null (hy_conv_dnnl_new (&ctx, &p, (const hy_tensor *const *) in,
          4, y, TRUE, &error));
  g_assert_no_error (error);
  /* Weights that are not constant cannot be reordered at set-up. */
  p.num_group = 1;
  in[1]->shape.dims[1] = 64;
  g_assert_null (hy_conv_dnnl_new (&ctx, &p, (const hy_tensor *const *) in,
          4, y, FALSE, &error));
  g_assert_no_error (error);
  /* 1x1 convolutions that conv.c's GEMM runs as fast without the
   * transposes: narrow ones, and any on a large map. */
  const conv_case pointwise[] = {
    { 1, 96, 14, 576, 1, 1, 0, 1, false, false, false, HY_FUSED_ACT_NONE },
    { 1, 512, 28, 128, 1, 1, 0, 1, false, false, false, HY_FUSED_ACT_NONE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (pointwise); i++) {
    const conv_case *q = &pointwise[i];
    p = params_of (q);
    hy_shape x1 = { 4, { 1, q->channels, q->size, q->size } };
    hy_shape w1 = { 4, { q->filters, q->channels, 1, 1 } };
    hy_shape y1 = { 4, { 1, q->filters, q->size, q->size } };
    hy_tensor *in1[2] = { hy_tensor_new (&x1), hy_tensor_new (&w1) };
    hy_tensor *out1 = hy_tensor_new (&y1);
    g_assert_null (hy_conv_dnnl_new (&ctx, &p,
            (const hy_tensor *const *) in1, 2, out1, TRUE, &error));
    g_assert_no_error (error);
    hy_tensor_free (in1[0]);
    hy_tensor_free (in1[1]);
    hy_tensor_free (out1);
  }
  for (int i = 0; i < 4; i++)
    hy_tensor_free (in[i]);
  hy_tensor_free (y);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    const conv_case *k = &cases[i];
    for (int bf16 = i < N_FP32_CASES ? 0 : 1; bf16 < 2; bf16++) {
      g_autofree char *name = g_strdup_printf ("/conv-dnnl/%sb%d-c%d-s%d-"
          "f%d-k%d-st%d-p%d-d%d%s%s%s-act%d", bf16 ? "bf16/" : "",
          k->batch, k->channels, k->size, k->filters, k->kernel, k->stride,
          k->pad, k->dilate, k->bias ? "-bias" : "",
          k->batch_norm ? "-bn" : "", k->residual ? "-res" : "",
          (int) k->act);
      g_test_add_data_func (name, k, bf16 ? test_case_bf16 : test_case);
    }
  }
  g_test_add_func ("/conv-dnnl/declined", test_declined);
  return g_test_run ();
}
