/*
 * pointwise_bench.c — the packed kernel's pointwise (1×1) convolutions
 * of MobileNetV2 and ResNet-50 at batch 1, ReLU6 fused, as the plan runs
 * them (hy_cpu_convolution_packed: the same split over the pool's
 * threads), on one thread and on two, data warm: how far each product
 * alone scales on the second thread, to hold against the same layers in
 * a forward's profile (docs/PERFORMANCE.md, "Issue 11 on a Xeon").
 * Wall clock, best of 5 rounds of 200 calls.  Built by meson (not a
 * test):
 *
 *   ninja -C build tests/pointwise-bench && build/tests/pointwise-bench
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/cpu/conv/conv-packed.h"
#include "kernels/cpu/cpu-kernel.h"

/* Input channels, filters, map side. */
static const int shapes[][3] = {
  { 32, 192, 28 }, { 192, 32, 28 }, { 64, 384, 14 }, { 384, 64, 14 },
  { 96, 576, 14 }, { 576, 96, 14 }, { 160, 960, 7 }, { 960, 160, 7 },
  { 24, 144, 56 }, { 144, 24, 56 }, { 256, 64, 56 }, { 64, 256, 56 },
};

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void
fill (hy_tensor *t, int period)
{
  for (int64_t i = 0; i < hy_shape_numel (&t->shape); i++)
    t->data[i] = (float) (i % period) * 0.1f;
}

int
main (void)
{
  hy_cpu_ctx ctx[2] = { { 0 }, { 0 } };
  hy_cpu_ctx_set_threads (&ctx[1], 2);
  printf ("product            1 thread (us, GFLOP/s)   2 threads           "
      "speed-up\n");
  for (size_t s = 0; s < G_N_ELEMENTS (shapes); s++) {
    const int c = shapes[s][0], f = shapes[s][1], h = shapes[s][2];
    const hy_conv_params p = {
      .op = hy_op_lookup ("Convolution")->id, .n_spatial = 2,
      .kernel = { 1, 1 }, .stride = { 1, 1 }, .dilate = { 1, 1 },
      .num_filter = f, .num_group = 1,
      .fused = { .act = HY_FUSED_ACT_CLIP, .alpha = 0.0f, .beta = 6.0f },
    };
    hy_shape xs = { 4, { 1, c, h, h } }, ws = { 4, { f, c, 1, 1 } };
    hy_shape bs = { 1, { f } }, ys = { 4, { 1, f, h, h } };
    hy_tensor *x = hy_tensor_new (&xs), *w = hy_tensor_new (&ws);
    hy_tensor *b = hy_tensor_new (&bs), *y = hy_tensor_new (&ys);
    fill (x, 7);
    fill (w, 5);
    fill (b, 3);
    const hy_tensor *in[3] = { x, w, b };
    hy_conv_packed *conv = hy_conv_packed_new (&p, in, 3, y, TRUE);
    if (!conv) {
      printf ("%4d>%-4d @%-3d  the packed kernel does not run here\n", c, f,
          h);
      continue;
    }
    double best[2];
    for (int t = 0; t < 2; t++) {
      best[t] = 1e9;
      for (int round = 0; round < 5; round++) {
        const int calls = 200;
        const double t0 = now_s ();
        for (int i = 0; i < calls; i++)
          hy_cpu_convolution_packed (&ctx[t], conv, in, 3, &y, 1);
        const double per = (now_s () - t0) / calls;
        best[t] = per < best[t] ? per : best[t];
      }
    }
    const double flop = 2.0 * c * f * h * h;
    printf ("%4d>%-4d @%-3d    %8.1f %6.0f        %8.1f %6.0f      %.2fx\n",
        c, f, h, best[0] * 1e6, flop / best[0] * 1e-9, best[1] * 1e6,
        flop / best[1] * 1e-9, best[0] / best[1]);
    hy_conv_packed_free (conv);
    hy_tensor_free (x);
    hy_tensor_free (w);
    hy_tensor_free (b);
    hy_tensor_free (y);
  }
  hy_cpu_ctx_clear (&ctx[0]);
  hy_cpu_ctx_clear (&ctx[1]);
  return 0;
}
