/*
 * conv_bench.c — k×k convolutions on the packed kernel, their column
 * matrix lowered first (im2col) or built panel by panel inside the
 * product (im2col-panel.h), on ResNet's and MobileNetV2's shapes at
 * batch 1, bias and relu fused, one thread.  The two run alternately,
 * round after round, each timed in CPU time (thread CPU time with one
 * thread, steady on a busy machine; the process's with more, which counts
 * work the threads repeat but not their waiting); it prints the best and
 * the median round per forward, and checks that both give the same
 * output bit for bit.
 *
 * With --winograd first, the three are the packed kernel as the plan
 * would run it (implicit im2col where it can) and Winograd's F(4×4, 3×3)
 * and F(2×2, 3×3) (conv-winograd.h), on the 3×3 stride-1 layers, at the
 * batch given after it; their outputs then differ by the transforms'
 * rounding, and the largest differences are printed relative to the
 * outputs' largest.  With --few-channels first, the two are the packed
 * kernel and the direct kernel of inputs of few channels
 * (conv-few-channels.h), on the first layers.
 *
 *   ninja -C build tests/conv-bench
 *   OPENBLAS_CORETYPE=SkylakeX taskset -c 1 build/tests/conv-bench \
 *     [--winograd batch | --few-channels batch]
 *     [rounds [threads [part of a layer's name]]]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/cpu/conv/conv-few-channels.h"
#include "kernels/cpu/conv/conv-packed.h"
#include "kernels/cpu/conv/conv-winograd.h"
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/nn.h"

typedef struct layer {
  const char *name;
  int channels, size, filters, kernel, stride, pad;
} layer;

static const layer layers[] = {
  { "conv0 7x7/2 3>64 @224", 3, 224, 64, 7, 2, 3 },
  { "MobileNetV2 3x3/2 3>32 @224", 3, 224, 32, 3, 2, 1 },
  { "MobileNetV3 3x3/2 3>16 @224", 3, 224, 16, 3, 2, 1 },
  { "3x3 64 @56", 64, 56, 64, 3, 1, 1 },
  { "3x3/2 64>128 @56", 64, 56, 128, 3, 2, 1 },
  { "3x3 128 @28", 128, 28, 128, 3, 1, 1 },
  { "3x3/2 128>256 @28 (narrow)", 128, 28, 256, 3, 2, 1 },
  { "3x3 256 @14 (narrow)", 256, 14, 256, 3, 1, 1 },
  { "3x3/2 256>512 @14 (narrow)", 256, 14, 512, 3, 2, 1 },
  { "3x3 512 @7 (narrow)", 512, 7, 512, 3, 1, 1 },
  { "3x3 64 @112", 64, 112, 64, 3, 1, 1 },
  /* off ResNet's diagonal: which of channels and map size picks the
   * Winograd form */
  { "3x3 256 @28 (narrow)", 256, 28, 256, 3, 1, 1 },
  { "3x3 128 @14", 128, 14, 128, 3, 1, 1 },
  { "3x3 512 @19 (narrow)", 512, 19, 512, 3, 1, 1 },
  { "3x3 64 @14", 64, 14, 64, 3, 1, 1 },
};

static int threads = 1;

static double
thread_ms (void)
{
  struct timespec ts;
  clock_gettime (threads > 1 ? CLOCK_PROCESS_CPUTIME_ID
      : CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
cmp_double (const void *a, const void *b)
{
  const double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static void
fill (float *v, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    v[i] = (float) ((i * 7919 % 2001) - 1000) / 1000.0f;
}

/* The largest |a − b| over the largest |b|. */
static double
relative_difference (const hy_tensor *a, const hy_tensor *b)
{
  const int64_t n = hy_tensor_nbytes (a) / sizeof (float);
  const float *x = a->data, *y = b->data;
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < n; i++) {
    diff = fmax (diff, fabs ((double) x[i] - y[i]));
    scale = fmax (scale, fabs ((double) y[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

int
main (int argc, char **argv)
{
  /* Winograd, or the few-channel kernel, against the packed kernel, at a
   * batch. */
  int batch = 1;
  const bool few = argc > 1 && !strcmp (argv[1], "--few-channels");
  const bool winograd = argc > 1 && !strcmp (argv[1], "--winograd");
  if (winograd || few) {
    batch = argc > 2 ? atoi (argv[2]) : 0;
    argc -= 2;
    argv += 2;
  }
  const int rounds = argc > 1 ? atoi (argv[1]) : 10;
  const int per_round = 10;
  threads = argc > 2 ? atoi (argv[2]) : 1;
  if (batch < 1 || rounds < 1 || threads < 1) {
    fprintf (stderr, "usage: conv-bench [--winograd BATCH | --few-channels "
        "BATCH] [ROUNDS [THREADS [LAYER]]], each at least 1\n");
    return 2;
  }
  hy_cpu_ctx ctx = { 0 };
  hy_cpu_ctx_set_threads (&ctx, threads);
  if (winograd)
    printf ("%-30s %9s %9s %9s %9s %9s %9s %8s %8s  %s\n", "layer", "packed",
        "F(4x4)", "F(2x2)", "(median)", "(median)", "(median)", "F(4x4)",
        "F(2x2)", "GFLOP/s packed, largest differences F(4x4), F(2x2)");
  else
    printf ("%-30s %9s %9s %9s %9s %8s  %s\n", "layer",
        few ? "packed" : "im2col", few ? "few-ch" : "implicit", "(median)",
        "(median)", "speed-up", few
        ? "GFLOP/s packed, few-ch, largest difference"
        : "GFLOP/s im2col, implicit");
  for (size_t l = 0; l < sizeof layers / sizeof layers[0]; l++) {
    const layer *q = &layers[l];
    if (argc > 3 && !strstr (q->name, argv[3]))
      continue;
    const int out = (q->size + 2 * q->pad - q->kernel) / q->stride + 1;
    hy_conv_params p = {
      .op = hy_op_lookup ("Convolution")->id, .n_spatial = 2,
      .kernel = { q->kernel, q->kernel }, .stride = { q->stride, q->stride },
      .dilate = { 1, 1 }, .pad = { q->pad, q->pad },
      .num_filter = q->filters, .num_group = 1,
      .fused = { .act = HY_FUSED_ACT_RELU },
    };
    if (few ? q->channels > 4 : winograd && (q->kernel != 3
            || q->stride != 1))
      continue;
    hy_shape xs = { 4, { batch, q->channels, q->size, q->size } };
    hy_shape ws = { 4, { q->filters, q->channels, q->kernel, q->kernel } };
    hy_shape bs = { 1, { q->filters } };
    hy_shape ys = { 4, { batch, q->filters, out, out } };
    hy_tensor *in[3] = {
      hy_tensor_new (&xs), hy_tensor_new (&ws), hy_tensor_new (&bs),
    };
    for (int i = 0; i < 3; i++)
      fill (in[i]->data, hy_tensor_nbytes (in[i]) / sizeof (float));
    hy_tensor *y[3] = {
      hy_tensor_new (&ys), hy_tensor_new (&ys), hy_tensor_new (&ys),
    };
    hy_conv_packed *conv = hy_conv_packed_new (&p,
        (const hy_tensor *const *) in, 3, y[0], TRUE);
    if (!conv) {
      printf ("%-30s not on the packed kernel here\n", q->name);
      continue;
    }
    /* Variant 0 the packed kernel as the plan runs it (implicit im2col
     * where it can), 1 and 2 Winograd's two forms, or 1 the few-channel
     * kernel; or 0 the lowered column matrix and 1 the implicit one. */
    hy_conv_winograd *wino[3] = { NULL };
    if (winograd) {
      for (int v = 1; v <= 2; v++)
        wino[v] = hy_conv_winograd_new_tile (&p,
            (const hy_tensor *const *) in, 3, y[0], TRUE, v == 1 ? 4 : 2);
      if (!wino[1] || !wino[2]) {
        printf ("%-30s not on the Winograd kernel here\n", q->name);
        hy_conv_winograd_free (wino[1]);
        hy_conv_winograd_free (wino[2]);
        hy_conv_packed_free (conv);
        continue;
      }
    }
    hy_conv_few_channels *fc = few ? hy_conv_few_channels_new (&p,
        (const hy_tensor *const *) in, 3, y[0], TRUE) : NULL;
    if (few && !fc) {
      printf ("%-30s not on the few-channel kernel here\n", q->name);
      hy_conv_packed_free (conv);
      continue;
    }
    const bool implicit = hy_conv_packed_set_implicit (conv, true);
    const int variants = winograd ? 3 : few || implicit ? 2 : 1;
    double *t[3];
    for (int v = 0; v < 3; v++)
      t[v] = g_new (double, rounds);
    for (int r = 0; r < rounds; r++) {
      for (int v = 0; v < variants; v++) {
        if (!winograd && !few)
          hy_conv_packed_set_implicit (conv, v == 1);
        hy_cpu_kernel_fn fn = wino[v] ? hy_cpu_convolution_winograd
            : few && v == 1 ? hy_cpu_convolution_few_channels
            : hy_cpu_convolution_packed;
        const void *params = wino[v] ? (const void *) wino[v]
            : few && v == 1 ? (const void *) fc : (const void *) conv;
        fn (&ctx, params, (const hy_tensor *const *) in, 3, &y[v], 1);
        const double t0 = thread_ms ();
        for (int i = 0; i < per_round; i++)
          fn (&ctx, params, (const hy_tensor *const *) in, 3, &y[v], 1);
        t[v][r] = (thread_ms () - t0) / per_round;
      }
    }
    const double gflop = 2.0 * batch * q->filters * q->channels * q->kernel
        * q->kernel * out * out / 1e9;
    for (int v = 0; v < variants; v++)
      qsort (t[v], rounds, sizeof (double), cmp_double);
    if (winograd) {
      printf ("%-30s %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f %7.3fx %7.3fx  "
          "%.0f, %.1e, %.1e\n", q->name, t[0][0], t[1][0], t[2][0],
          t[0][rounds / 2], t[1][rounds / 2], t[2][rounds / 2],
          t[0][0] / t[1][0], t[0][0] / t[2][0], gflop / t[0][0] * 1e3,
          relative_difference (y[1], y[0]), relative_difference (y[2], y[0]));
    } else if (few) {
      printf ("%-30s %9.4f %9.4f %9.4f %9.4f %7.3fx  %.0f, %.0f, %.1e\n",
          q->name, t[0][0], t[1][0], t[0][rounds / 2], t[1][rounds / 2],
          t[0][0] / t[1][0], gflop / t[0][0] * 1e3, gflop / t[1][0] * 1e3,
          relative_difference (y[1], y[0]));
    } else if (implicit) {
      const bool same = !memcmp (y[0]->data, y[1]->data,
          hy_tensor_nbytes (y[0]));
      printf ("%-30s %9.4f %9.4f %9.4f %9.4f %7.3fx  %.0f, %.0f%s\n", q->name,
          t[0][0], t[1][0], t[0][rounds / 2], t[1][rounds / 2],
          t[0][0] / t[1][0], gflop / t[0][0] * 1e3, gflop / t[1][0] * 1e3,
          same ? "" : "  OUTPUTS DIFFER");
      if (!same)
        return 1;
    } else {
      printf ("%-30s %9.4f %9s %9.4f %9s %8s  %.0f\n", q->name, t[0][0], "-",
          t[0][rounds / 2], "-", "-", gflop / t[0][0] * 1e3);
    }
    for (int v = 0; v < 3; v++) {
      g_free (t[v]);
      hy_conv_winograd_free (wino[v]);
      hy_tensor_free (y[v]);
    }
    hy_conv_few_channels_free (fc);
    hy_conv_packed_free (conv);
    for (int i = 0; i < 3; i++)
      hy_tensor_free (in[i]);
  }
  hy_cpu_ctx_clear (&ctx);
  return 0;
}
