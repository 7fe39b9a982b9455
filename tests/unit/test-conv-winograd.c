/*
 * test-conv-winograd.c — the F(4×4, 3×3) Winograd convolution
 * (kernels/cpu/conv/conv-winograd.h) against sums taken in double precision
 * here (conv-reference.h):
 *  - maps whose sides are not multiples of 4 (tiles cut by the map's
 *    edge), rows of more than 16 tiles (a tile row in two vectors), down
 *    to a single tile; padding 0, 1 and 2; channel and filter counts off
 *    the kernels' 16- and 48-row tiles; batch 1 to 3;
 *  - the fused epilogue: bias, BatchNorm, residual, ReLU or clip;
 *  - blocks of tile rows that span images, or end inside one;
 *  - on one thread and on two (both ways of sharing blocks out), twice
 *    each (the second time on a workspace sized by the first), bit for
 *    bit the same;
 *  - the input in a buffer of NaNs, so that a lane read past the plane
 *    or the padding shows; the output likewise, so that one left
 *    unwritten shows;
 *  - the convolutions it must leave to other kernels.
 * The tolerance is the conformance suites' (1e-4 of the output's scale):
 * the transforms round differently from a direct sum.
 *
 * HYBRIDINFER_WINOGRAD=1 (set here) makes it take every convolution it
 * can run, not only those the rule says pay.  On a CPU without AVX-512 it
 * never runs: the tests say so and skip.
 */
#include <math.h>
#include <string.h>

#include "hybrid.h"
#include "conv-reference.h"
#include "core/op.h"
#include "kernels/cpu/conv/conv-winograd.h"
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/conv/sgemm-packed.h"
#include "kernels/params/nn.h"

typedef struct wino_case {
  int batch, channels, height, width, filters, pad;
  bool bias, batch_norm, residual;
  hy_fused_act act;
} wino_case;

static const wino_case cases[] = {
  /* ResNet's layers, small */
  { 1, 64, 14, 14, 64, 1, false, false, true, HY_FUSED_ACT_RELU },
  { 2, 32, 28, 28, 48, 1, true, false, false, HY_FUSED_ACT_RELU },
  /* sides off multiples of 4, one tile, a row of 18 tiles */
  { 1, 5, 7, 9, 3, 1, true, true, true, HY_FUSED_ACT_NONE },
  { 1, 3, 3, 3, 2, 0, false, false, false, HY_FUSED_ACT_NONE },
  { 1, 17, 6, 70, 20, 1, true, false, true, HY_FUSED_ACT_CLIP },
  { 3, 40, 11, 13, 50, 2, false, true, false, HY_FUSED_ACT_RELU },
  { 1, 16, 30, 66, 16, 0, true, true, true, HY_FUSED_ACT_RELU },
  { 2, 70, 9, 5, 33, 2, true, false, false, HY_FUSED_ACT_CLIP },
  /* many filters, few channels; and the other way */
  { 1, 4, 20, 20, 200, 1, true, false, false, HY_FUSED_ACT_NONE },
  { 1, 300, 8, 8, 16, 1, false, false, true, HY_FUSED_ACT_RELU },
  /* a 56×56 map at batch 2: blocks of tile rows on each thread */
  { 2, 64, 56, 56, 64, 1, false, true, true, HY_FUSED_ACT_RELU },
  /* blocks across images: on two threads, 6 tile rows cut 5 + 1 (one
   * block ends inside an image); and a large U, all in one block */
  { 3, 16, 7, 7, 16, 1, true, true, true, HY_FUSED_ACT_RELU },
  { 3, 96, 8, 8, 96, 1, true, false, true, HY_FUSED_ACT_RELU },
};

static gboolean
skip_without_kernel (void)
{
  if (hy_packed_gemm_supported ())
    return FALSE;
  g_test_skip ("this CPU has no AVX-512F (or HYBRIDINFER_PACKED_GEMM=0): "
      "the Winograd kernel is never chosen");
  return TRUE;
}

static hy_conv_params
params_of (int kernel, int stride, int dilate, int pad, int filters,
    int groups, bool bias, bool batch_norm, bool residual, hy_fused_act act)
{
  hy_conv_params p = {
    .op = hy_op_lookup ("Convolution")->id, .n_spatial = 2,
    .kernel = { kernel, kernel }, .stride = { stride, stride },
    .dilate = { dilate, dilate }, .pad = { pad, pad },
    .num_filter = filters, .num_group = groups, .no_bias = !bias,
    .fused = {
      .act = act, .alpha = -0.5f, .beta = 0.75f,
      .batch_norm = batch_norm, .residual = residual,
    },
  };
  return p;
}

static void
test_case (gconstpointer data)
{
  if (skip_without_kernel ())
    return;
  const wino_case *q = data;
  const int out_h = q->height + 2 * q->pad - 2;
  const int out_w = q->width + 2 * q->pad - 2;
  const hy_conv_params p = params_of (3, 1, 1, q->pad, q->filters, 1,
      q->bias, q->batch_norm, q->residual, q->act);
  hy_shape xs = { 4, { q->batch, q->channels, q->height, q->width } };
  hy_shape ws = { 4, { q->filters, q->channels, 3, 3 } };
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

  const conv_reference r = {
    .batch = q->batch, .channels = q->channels, .height = q->height,
    .width = q->width, .filters = q->filters, .kernel = 3, .stride = 1,
    .pad = q->pad, .dilate = 1, .groups = 1, .act = q->act,
    .alpha = p.fused.alpha, .beta = p.fused.beta,
  };
  float *want = g_new (float, y_floats);
  conv_reference_run (&r, out_h, out_w, x.data, in[1]->data, ops.bias,
      ops.bn, ops.res, want);
  double scale = 1.0;
  for (int64_t i = 0; i < y_floats; i++)
    scale = fmax (scale, fabs (want[i]));
  const double tol = 1e-4 * scale;

  hy_tensor *got = hy_tensor_new (&ys);
  float *first = g_new (float, y_floats);
  for (int tile = 4; tile >= 2; tile -= 2) {
  hy_conv_winograd *conv = hy_conv_winograd_new_tile (&p,
      (const hy_tensor *const *) in, n_in, got, TRUE, tile);
  g_assert_nonnull (conv);
  /* Weights that may change between forwards are never transformed. */
  g_assert_null (hy_conv_winograd_new_tile (&p,
          (const hy_tensor *const *) in, n_in, got, FALSE, tile));

  hy_cpu_ctx ctx[2] = { { 0 }, { 0 } };
  hy_cpu_ctx_set_threads (&ctx[1], 2);
  double worst = 0;
  for (int run = 0; run < 4; run++) {
    memset (got->data, 0xff, hy_tensor_nbytes (got));     /* NaN */
    hy_cpu_convolution_winograd (&ctx[run % 2], conv,
        (const hy_tensor *const *) in, n_in, &got, 1);
    for (int64_t i = 0; i < y_floats; i++) {
      const double d = fabs ((double) got->data[i] - want[i]);
      if (!(d <= tol))
        g_error ("F(%dx%d), %d thread(s): output %" G_GINT64_FORMAT
            ": %g, want %g (tolerance %g)", tile, tile, run % 2 + 1, i,
            got->data[i], want[i], tol);
      worst = fmax (worst, d);
    }
    if (run == 0)
      memcpy (first, got->data, hy_tensor_nbytes (got));
    g_assert_cmpmem (first, hy_tensor_nbytes (got), got->data,
        hy_tensor_nbytes (got));
  }
  g_test_message ("F(%dx%d): largest difference %.2e of an output scale "
      "%.2f", tile, tile, worst, scale);
  hy_cpu_ctx_clear (&ctx[0]);
  hy_cpu_ctx_clear (&ctx[1]);
  hy_conv_winograd_free (conv);
  }

  g_free (first);
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
    { 3, 2, 1, 1, 1 },          /* strided */
    { 3, 1, 2, 2, 1 },          /* dilated */
    { 3, 1, 1, 1, 2 },          /* grouped */
    { 5, 1, 1, 2, 1 },          /* 5×5 */
    { 1, 1, 1, 0, 1 },          /* pointwise */
    { 3, 1, 1, 3, 1 },          /* padding beyond a tile's reach */
  };
  for (guint i = 0; i < G_N_ELEMENTS (others); i++) {
    const int k = others[i].kernel, s = others[i].stride;
    const int ext = (k - 1) * others[i].dilate + 1;
    const int out = (16 + 2 * others[i].pad - ext) / s + 1;
    const hy_conv_params p = params_of (k, s, others[i].dilate,
        others[i].pad, 8, others[i].groups, false, false, false,
        HY_FUSED_ACT_NONE);
    hy_shape xs = { 4, { 1, 8, 16, 16 } };
    hy_shape ws = { 4, { 8, 8 / others[i].groups, k, k } };
    hy_shape ys = { 4, { 1, 8, out, out } };
    hy_tensor *in[2] = { hy_tensor_new (&xs), hy_tensor_new (&ws) };
    hy_tensor *y = hy_tensor_new (&ys);
    g_assert_null (hy_conv_winograd_new (&p, (const hy_tensor *const *) in,
            2, y, TRUE));
    hy_tensor_free (in[0]);
    hy_tensor_free (in[1]);
    hy_tensor_free (y);
  }
}

int
main (int argc, char **argv)
{
  g_setenv ("HYBRIDINFER_WINOGRAD", "1", TRUE);
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree char *name = g_strdup_printf ("/conv-winograd/case/%u", i);
    g_test_add_data_func (name, &cases[i], test_case);
  }
  g_test_add_func ("/conv-winograd/refuses", test_refuses);
  return g_test_run ();
}
