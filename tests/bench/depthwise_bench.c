/*
 * depthwise_bench.c — the AVX-512 depthwise kernel
 * (kernels/cpu/conv/depthwise-avx512.c) on MobileNetV2's seventeen 3×3 and
 * MobileNetV3-Large's six 5×5 depthwise layers at batch 1 (ReLU6 fused, as the plan runs them), one thread, in
 * µs and GFLOP/s of thread CPU time (steady on a busy machine), beside
 * the same layers on conv.c's portable row loop as it ran before
 * (a zero-bordered copy of each plane, then its row loop; copied here, as
 * conv.c keeps it static).  Standalone, built by hand (not by meson):
 *
 * (-O3, as the project's release build: at -O2 gcc 12 leaves conv.c's
 * loop scalar.)
 *
 *   gcc -O3 -std=c11 -I . $(pkg-config --cflags glib-2.0) \
 *     tests/bench/depthwise_bench.c kernels/cpu/conv/depthwise-avx512.c \
 *     kernels/cpu/cpu-features.c \
 *     $(pkg-config --libs glib-2.0) -lm -o /tmp/depthwise_bench
 *   taskset -c 1 /tmp/depthwise_bench
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <immintrin.h>

#include "kernels/cpu/conv/depthwise-avx512.h"

/* As cpu-features.h builds conv.c's loops: an AVX-512 clone beside the baseline. */
#define HY_CPU_VECTOR_CLONES \
  __attribute__ ((target_clones ("arch=x86-64-v4", "arch=x86-64-v3", \
          "default")))

typedef struct layer {
  int size, channels, stride, k;
} layer;

/* MobileNetV2 1.0 at 224×224: input map, channels, stride (pad 1). */
static const layer layers[] = {
  { 112, 32, 1 }, { 112, 96, 2 }, { 56, 144, 1 }, { 56, 144, 2 },
  { 28, 192, 1 }, { 28, 192, 1 }, { 28, 192, 2 },
  { 14, 384, 1 }, { 14, 384, 1 }, { 14, 384, 1 }, { 14, 384, 1 },
  { 14, 576, 1 }, { 14, 576, 1 }, { 14, 576, 2 },
  { 7, 960, 1 }, { 7, 960, 1 }, { 7, 960, 1 },
  /* MobileNetV3-Large's 5×5 ones (pad 2; k 0 above reads as 3). */
  { 56, 72, 2, 5 }, { 28, 120, 1, 5 }, { 28, 120, 1, 5 },
  { 14, 672, 2, 5 }, { 7, 960, 1, 5 }, { 7, 960, 1, 5 },
};

static int
kernel_of (const layer *l)
{
  return l->k ? l->k : 3;
}

static double
thread_seconds (void)
{
  struct timespec t;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* conv.c's portable 3×3 row (before this kernel), with ReLU6 after. */
HY_CPU_VECTOR_CLONES static void
portable_row (float *restrict out, const float *restrict r0,
    const float *restrict r1, const float *restrict r2,
    const float *restrict w, float bias, int64_t ow, int64_t stride)
{
  if (stride == 1) {
    for (int64_t o = 0; o < ow; o++)
      out[o] = bias + w[0] * r0[o] + w[1] * r0[o + 1] + w[2] * r0[o + 2]
          + w[3] * r1[o] + w[4] * r1[o + 1] + w[5] * r1[o + 2]
          + w[6] * r2[o] + w[7] * r2[o + 1] + w[8] * r2[o + 2];
  } else {
    for (int64_t o = 0; o < ow; o++) {
      const int64_t i = 2 * o;
      out[o] = bias + w[0] * r0[i] + w[1] * r0[i + 1] + w[2] * r0[i + 2]
          + w[3] * r1[i] + w[4] * r1[i + 1] + w[5] * r1[i + 2]
          + w[6] * r2[i] + w[7] * r2[i + 1] + w[8] * r2[i + 2];
    }
  }
}

/* conv.c's portable row for other kernels (depthwise_row, without
 * dilation): one multiply-add pass per tap along the row. */
HY_CPU_VECTOR_CLONES static void
portable_row_k (float *restrict out, const float *restrict padded,
    int64_t pw, int k, const float *restrict w, float bias, int64_t ow,
    int64_t stride, int64_t r)
{
  for (int64_t o = 0; o < ow; o++)
    out[o] = bias;
  for (int i = 0; i < k; i++) {
    const float *in = padded + (r * stride + i) * pw;
    for (int j = 0; j < k; j++) {
      const float t = w[i * k + j];
      if (stride == 1) {
        for (int64_t o = 0; o < ow; o++)
          out[o] += t * in[o + j];
      } else {
        for (int64_t o = 0; o < ow; o++)
          out[o] += t * in[o * stride + j];
      }
    }
  }
}

HY_CPU_VECTOR_CLONES static void
relu6 (float *y, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = y[i] > 6.0f ? 6.0f : y[i] < 0.0f ? 0.0f : y[i];
}

static void
portable_layer (const layer *l, const float *x, const float *w,
    const float *b, float *y, float *padded)
{
  const int k = kernel_of (l);
  const int64_t s = l->size, pw = s + k - 1, o = (s - 1) / l->stride + 1;
  memset (padded, 0, (size_t) (pw * pw) * sizeof (float));
  for (int64_t c = 0; c < l->channels; c++) {
    for (int64_t r = 0; r < s; r++)
      memcpy (padded + (r + k / 2) * pw + k / 2, x + (c * s + r) * s,
          (size_t) s * sizeof (float));
    float *yc = y + c * o * o;
    for (int64_t r = 0; r < o; r++) {
      const float *r0 = padded + r * l->stride * pw;
      if (k == 3)
        portable_row (yc + r * o, r0, r0 + pw, r0 + 2 * pw, w + 9 * c, b[c],
            o, l->stride);
      else
        portable_row_k (yc + r * o, padded, pw, k, w + k * k * c, b[c], o,
            l->stride, r);
    }
    relu6 (yc, o * o);
  }
}

static void
kernel_layer (const layer *l, const float *x, const float *w, const float *b,
    float *y)
{
  const int k = kernel_of (l);
  const int64_t s = l->size, o = (s - 1) / l->stride + 1;
  hy_depthwise g = {
    .kernel = k, .in_h = s, .in_w = s, .out_h = o, .out_w = o,
    .stride_h = l->stride, .stride_w = l->stride, .pad_h = k / 2,
    .pad_w = k / 2,
  };
  hy_depthwise_epilogue e = {
    .act = HY_FUSED_ACT_CLIP, .alpha = 0.0f, .beta = 6.0f,
  };
  for (int64_t c = 0; c < l->channels; c++)
    hy_depthwise_plane (&g, y + c * o * o, x + c * s * s, w + k * k * c,
        b[c], &e);
}

/* This core's FMA ceiling right now (24 independent chains of AVX-512
 * multiply-adds), to read the figures against on a shared machine. */
__attribute__ ((target ("avx512f"))) static double
fma_ceiling (void)
{
  __m512 acc[24];
  const __m512 a = _mm512_set1_ps (0.999f), b = _mm512_set1_ps (1e-3f);
  for (int i = 0; i < 24; i++)
    acc[i] = _mm512_set1_ps ((float) i);
  const long iters = 2000000;
  const double t0 = thread_seconds ();
  for (long it = 0; it < iters; it++)
#pragma GCC unroll 24
    for (int i = 0; i < 24; i++)
      acc[i] = _mm512_fmadd_ps (acc[i], a, b);
  const double t = thread_seconds () - t0;
  float sink = 0;
  for (int i = 0; i < 24; i++)
    sink += _mm512_reduce_add_ps (acc[i]);
  return (sink == 12345.0f ? 0 : 1) * 2.0 * 16 * 24 * iters / t * 1e-9;
}

int
main (void)
{
  hy_depthwise probe = {
    .kernel = 3, .in_h = 8, .in_w = 8, .out_h = 8, .out_w = 8,
    .stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1,
  };
  if (!hy_depthwise_supported (&probe)) {
    printf ("this CPU has no AVX-512F (or HYBRIDINFER_DEPTHWISE=0)\n");
    return 0;
  }
  printf ("FMA ceiling now: %.0f GFLOP/s\n", fma_ceiling ());
  double total_old = 0, total_new = 0, total_old5 = 0, total_new5 = 0;
  printf ("%-18s %10s %10s %8s %8s %7s\n", "layer", "old us", "new us",
      "old GF/s", "new GF/s", "speedup");
  for (size_t i = 0; i < sizeof layers / sizeof *layers; i++) {
    const layer *l = &layers[i];
    const int k = kernel_of (l);
    const int64_t s = l->size, o = (s - 1) / l->stride + 1;
    const int64_t in_n = l->channels * s * s, out_n = l->channels * o * o;
    float *x = malloc (in_n * sizeof (float));
    float *w = malloc (k * k * l->channels * sizeof (float));
    float *b = malloc (l->channels * sizeof (float));
    float *y = malloc (out_n * sizeof (float));
    float *y2 = malloc (out_n * sizeof (float));
    float *padded = malloc ((s + k - 1) * (s + k - 1) * sizeof (float));
    for (int64_t e = 0; e < in_n; e++)
      x[e] = (float) ((e * 7919) % 1000) / 250.0f - 2.0f;
    for (int64_t e = 0; e < k * k * l->channels; e++)
      w[e] = (float) ((e * 104729) % 1000) / 1000.0f - 0.5f;
    for (int64_t e = 0; e < l->channels; e++)
      b[e] = 0.01f * (float) (e % 17);
    double best_old = 1e9, best_new = 1e9;
    const int reps = 50;
    for (int round = 0; round < 5; round++) {
      double t0 = thread_seconds ();
      for (int r = 0; r < reps; r++)
        portable_layer (l, x, w, b, y, padded);
      double t1 = thread_seconds ();
      for (int r = 0; r < reps; r++)
        kernel_layer (l, x, w, b, y2);
      double t2 = thread_seconds ();
      best_old = fmin (best_old, (t1 - t0) / reps);
      best_new = fmin (best_new, (t2 - t1) / reps);
    }
    double diff = 0;
    for (int64_t e = 0; e < out_n; e++)
      diff = fmax (diff, fabs ((double) y[e] - y2[e]));
    const double flop = 2.0 * k * k * out_n;
    char name[32];
    snprintf (name, sizeof name, "%dx%d c%d s%d k%d", l->size, l->size,
        l->channels, l->stride, k);
    printf ("%-18s %10.1f %10.1f %8.1f %8.1f %6.2fx  (max diff %.1e)\n",
        name, best_old * 1e6, best_new * 1e6, flop / best_old * 1e-9,
        flop / best_new * 1e-9, best_old / best_new, diff);
    if (k == 3) {
      total_old += best_old;
      total_new += best_new;
    } else {
      total_old5 += best_old;
      total_new5 += best_new;
    }
    free (x);
    free (w);
    free (b);
    free (y);
    free (y2);
    free (padded);
  }
  printf ("%-18s %10.1f %10.1f %26.2fx\n", "all 17 3x3", total_old * 1e6,
      total_new * 1e6, total_old / total_new);
  printf ("%-18s %10.1f %10.1f %26.2fx\n", "all 6 5x5", total_old5 * 1e6,
      total_new5 * 1e6, total_old5 / total_new5);
  printf ("FMA ceiling now: %.0f GFLOP/s\n", fma_ceiling ());
  return 0;
}
