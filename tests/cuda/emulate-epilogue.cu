/*
 * emulate-epilogue.cu — the CUDA fused epilogue's element function
 * (kernels/cuda/epilogue.cuh) run on the host over every element and
 * compared with the CPU's (kernels/cpu/epilogue.h), bit for bit: each
 * activation, with and without bias, BatchNorm and residual, in the
 * convolution layout (one channel per row of each image) and in
 * FullyConnected's (one channel per column).  No GPU needed (launch.cuh).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epilogue.cuh"
#include "emulate-harness.h"

/* The CPU header is C: restrict, and no vector clones in this C++ file. */
#define restrict __restrict__
#include "blas.h"
#undef HY_CPU_VECTOR_CLONES
#define HY_CPU_VECTOR_CLONES
#include "epilogue.h"

static unsigned rng = 12345u;

/* Uniform in [-4, 4), with exact zeros now and then (relu's edge). */
static float
next_value (void)
{
  rng = rng * 1664525u + 1013904223u;
  if ((rng >> 8) % 17 == 0)
    return 0.0f;
  return (float) ((rng >> 8) & 0xffff) / 8192.0f - 4.0f;
}

static void
fill (float *v, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    v[i] = next_value ();
}

static bool
same (float a, float b)
{
  return (isnan (a) && isnan (b)) || memcmp (&a, &b, sizeof a) == 0;
}

static const char *const act_names[] = {
  "none", "relu", "clip", "leaky", "sigmoid", "tanh",
};

/* One case: the CPU's result against the element function's; returns
 * whether they agree everywhere. */
static bool
run_case (bool conv, hy_fused_act act, bool has_bias, bool has_bn,
    bool has_res)
{
  /* conv: (batch, channels, spatial); fc: (rows, channels). */
  const int64_t batch = conv ? 2 : 3, channels = conv ? 5 : 11;
  const int64_t spatial = conv ? 7 : 1, n = batch * channels * spatial;
  float *y = (float *) malloc (n * sizeof (float));
  float *want = (float *) malloc (n * sizeof (float));
  float *res = (float *) malloc (n * sizeof (float));
  float *bias = (float *) malloc (channels * sizeof (float));
  float *bn = (float *) malloc (3 * channels * sizeof (float));
  fill (y, n);
  fill (res, n);
  fill (bias, channels);
  fill (bn, 3 * channels);
  memcpy (want, y, n * sizeof (float));

  hy_fused_epilogue fe = { act, -0.5f, 1.5f, has_bn, has_res };
  if (act == HY_FUSED_ACT_LEAKY)
    fe.alpha = 0.1f;
  const hy_epilogue_channels ch = {
    has_bias ? bias : NULL, has_bn ? bn : NULL, channels,
  };
  if (conv) {
    for (int64_t b = 0; b < batch; b++) {
      const int64_t off = b * channels * spatial;
      hy_epilogue_rows (&fe, want + off, has_res ? res + off : NULL,
          channels, spatial, spatial, &ch);
    }
  } else {
    hy_epilogue_columns (&fe, want, has_res ? res : NULL, batch, channels,
        channels, &ch);
  }

  const hy_cuda_epilogue e = {
    act, fe.alpha, fe.beta, has_bias ? bias : NULL, has_bn ? bn : NULL,
    has_res ? res : NULL, channels, spatial,
  };
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n; i++) {
    if (!same (hy_cuda_epilogue_at (&e, y[i], i), want[i])) {
      if (first < 0)
        first = i;
      bad++;
    }
  }
  printf ("%s %-4s %-7s bias=%d bn=%d res=%d: ", bad ? "FAIL" : "ok  ",
      conv ? "conv" : "fc", act_names[act], has_bias, has_bn, has_res);
  if (bad)
    printf ("%lld of %lld differ, first at %lld: %.9g, want %.9g\n",
        (long long) bad, (long long) n, (long long) first,
        (double) hy_cuda_epilogue_at (&e, y[first], first),
        (double) want[first]);
  else
    printf ("%lld elements\n", (long long) n);
  free (y);
  free (want);
  free (res);
  free (bias);
  free (bn);
  return bad == 0;
}

int
main (void)
{
  for (int conv = 0; conv < 2; conv++)
    for (int act = HY_FUSED_ACT_NONE; act <= HY_FUSED_ACT_TANH; act++)
      for (int parts = 0; parts < 8; parts++)
        emu_count (run_case (conv, (hy_fused_act) act, parts & 1, parts & 2,
                parts & 4));
  return emu_summary ();
}
