/*
 * emulate-epilogue.cu — the CUDA fused epilogue's element function
 * (kernels/cuda/epilogue.cuh) run on the host over every element and
 * compared with the CPU's (kernels/cpu/epilogue.h), bit for bit: each
 * activation, with and without bias, BatchNorm and residual, in the
 * convolution layout (one channel per row of each image) and in
 * FullyConnected's (one channel per column).  No GPU needed (launch.cuh).
 *
 * The fp16 precision's pieces too (convert.cuh): the fp32 → fp16 element
 * function and the fp16 load, against a reference rounding written here
 * (to nearest, ties to even; overflow to inf, subnormals, signed zeros,
 * NaN) over every fp16 value, every rounding boundary between two of them
 * and a sweep of fp32 bit patterns; and the epilogue started from an
 * fp16 convolution output, bit for bit against the CPU's epilogue of the
 * same fp16 values.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/epilogue.cuh"
#include "kernels/cuda/elementwise.cuh"
#include "emulate-harness.h"

/* The CPU header is C: restrict, and no vector clones in this C++ file. */
#define restrict __restrict__
#include "kernels/cpu/cpu-features.h"
#undef HY_CPU_VECTOR_CLONES
#define HY_CPU_VECTOR_CLONES
#include "kernels/cpu/epilogue.h"

static unsigned rng = 12345u;

/* Uniform in [-4, 4), with exact zeros of either sign now and then
 * (relu's edge), and NaN and infinities: they must come out of every step
 * of the epilogue as they come out of the CPU's. */
static float
next_value (void)
{
  rng = rng * 1664525u + 1013904223u;
  switch ((rng >> 8) % 61) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    case 2: return NAN;
    case 3: return INFINITY;
    case 4: return -INFINITY;
    default: break;
  }
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

static uint32_t
bits_of (float v)
{
  uint32_t b;
  memcpy (&b, &v, sizeof b);
  return b;
}

static const char *const act_names[] = {
  "none", "relu", "clip", "leaky", "sigmoid", "tanh", "hsigmoid", "hswish",
};

/* One case: the CPU's result against the element function's; returns
 * whether they agree everywhere.  half: the op's output in fp16 (an fp16
 * convolution), which the epilogue loads; the CPU's gets the same values
 * in fp32. */
static bool
run_case (bool conv, hy_fused_act act, bool has_bias, bool has_bn,
    bool has_res, bool half)
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
  __half *y16 = (__half *) malloc (n * sizeof (__half));
  for (int64_t i = 0; i < n; i++) {
    /* Larger values, for fp16's rounding to matter. */
    if (half)
      y[i] *= 1000.0f;
    y16[i] = hy_cuda_half_at (y, i);
    if (half)
      y[i] = __half2float (y16[i]);
  }
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
  float first_got = 0.0f;
  for (int64_t i = 0; i < n; i++) {
    const float got = half ? hy_cuda_epilogue_from (&e, y16, i)
        : hy_cuda_epilogue_from (&e, y, i);
    if (!same (got, want[i])) {
      if (first < 0) {
        first = i;
        first_got = got;
      }
      bad++;
    }
  }
  printf ("%s %-4s %-7s bias=%d bn=%d res=%d%s: ", bad ? "FAIL" : "ok  ",
      conv ? "conv" : "fc", act_names[act], has_bias, has_bn, has_res,
      half ? " from fp16" : "");
  if (bad)
    printf ("%lld of %lld differ, first at %lld: %.9g, want %.9g\n",
        (long long) bad, (long long) n, (long long) first,
        (double) first_got, (double) want[first]);
  else
    printf ("%lld elements\n", (long long) n);
  free (y);
  free (y16);
  free (want);
  free (res);
  free (bias);
  free (bn);
  return bad == 0;
}

/* ---- fp32 <-> fp16 (convert.cuh) ---------------------------------------- */

/* The value of the fp16 number with these bits, decoded by hand. */
static float
ref_half_value (unsigned bits)
{
  const int exp = (bits >> 10) & 31, man = bits & 1023;
  const double v = exp == 0 ? ldexp (man, -24)
      : exp == 31 ? (man ? NAN : INFINITY) : ldexp (1024 + man, exp - 25);
  return (float) (bits & 0x8000 ? -v : v);
}

/* v rounded to fp16, to nearest with ties to even, as a float: ±inf from
 * 65520 (halfway between 65504, the largest fp16, and 2^16) up;
 * multiples of 2^-24 below 2^-14 (subnormals), so ±0 at or below 2^-25;
 * otherwise 11 significant bits.  In double, where v / q and the product
 * back are exact and nearbyint rounds ties to even. */
static float
ref_to_half (float v)
{
  if (isnan (v))
    return v;
  const double a = fabs ((double) v);
  if (a >= 65520.0)
    return copysignf (INFINITY, v);
  int e = 0;
  frexp (a, &e);                /* a = f·2^e, f in [0.5, 1) */
  int lead = a > 0.0 ? e - 1 : -24;
  if (lead < -14)
    lead = -14;
  const double q = ldexp (1.0, lead - 10);
  return copysignf ((float) (nearbyint (a / q) * q), v);
}

/* The device's round trip of v: the conversion kernel's element function,
 * then the epilogue's load. */
static float
round_trip (float v)
{
  const __half h = hy_cuda_half_at (&v, 0);
  return hy_cuda_load_float (&h, 0);
}

/* One conversion case: *bad counts mismatches, the first one printed. */
static void
check_round_trip (float v, int64_t *n, int64_t *bad, const char *what)
{
  const float got = round_trip (v), want = ref_to_half (v);
  (*n)++;
  if (!same (got, want) && (*bad)++ == 0)
    printf ("  %s: %.9g (0x%08x) -> %.9g, want %.9g\n", what, (double) v,
        (unsigned) bits_of (v), (double) got, (double) want);
}

static void
report_conversion (const char *name, int64_t n, int64_t bad)
{
  printf ("%s %s: ", bad ? "FAIL" : "ok  ", name);
  if (bad)
    printf ("%lld of %lld differ\n", (long long) bad, (long long) n);
  else
    printf ("%lld values\n", (long long) n);
  emu_count (bad == 0);
}

/* Every fp16 bit pattern: loaded as the reference decodes it, and back to
 * the same bits (NaN: some NaN). */
static void
check_half_values (void)
{
  int64_t n = 0, bad = 0;
  for (unsigned bits = 0; bits < 0x10000; bits++) {
    const __half h = __ushort_as_half ((unsigned short) bits);
    const float v = hy_cuda_load_float (&h, 0), want = ref_half_value (bits);
    const __half back = hy_cuda_half_at (&v, 0);
    const bool ok = same (v, want) && (isnan (want)
        ? __hisnan (back) : __half_as_ushort (back) == bits);
    n++;
    if (!ok && bad++ == 0)
      printf ("  fp16 0x%04x: %.9g, want %.9g\n", bits, (double) v,
          (double) want);
  }
  report_conversion ("fp16 -> fp32 -> fp16, every fp16 value", n, bad);
}

/* Around every rounding boundary: each finite fp16 value x and the
 * midpoint m between it and the next (the last midpoint, 65520, is where
 * overflow to inf starts), and the floats next to both, of either sign. */
static void
check_boundaries (void)
{
  int64_t n = 0, bad = 0;
  for (unsigned bits = 0; bits <= 0x7bff; bits++) {
    const float x = ref_half_value (bits);
    const float next = bits == 0x7bff ? 65536.0f : ref_half_value (bits + 1);
    const float mid = (float) (((double) x + next) / 2);
    const float tries[] = {
      x, nextafterf (x, INFINITY), nextafterf (x, -INFINITY),
      mid, nextafterf (mid, INFINITY), nextafterf (mid, -INFINITY),
    };
    for (float v : tries) {
      check_round_trip (v, &n, &bad, "boundary");
      check_round_trip (-v, &n, &bad, "boundary");
    }
  }
  report_conversion ("fp32 -> fp16 -> fp32, at every rounding boundary", n,
      bad);
}

/* A sweep over fp32 bit patterns (every exponent, NaNs, fp32 subnormals),
 * and the values at the edges named. */
static void
check_sweep (void)
{
  int64_t n = 0, bad = 0;
  for (uint64_t b = 0; b <= 0xffffffffull; b += 1021) {
    const uint32_t bits = (uint32_t) b;
    float v;
    memcpy (&v, &bits, sizeof v);
    check_round_trip (v, &n, &bad, "sweep");
  }
  report_conversion ("fp32 -> fp16 -> fp32, a sweep of fp32 bit patterns",
      n, bad);

  const float edges[] = {
    0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.0f, 65519.996f, 65520.0f,
    65536.0f, 1e5f, 3.4e38f, INFINITY, -INFINITY, NAN,
    ldexpf (1.0f, -14),             /* smallest normal fp16 */
    ldexpf (1023.0f, -24),          /* largest subnormal */
    ldexpf (1.0f, -24),             /* smallest subnormal */
    ldexpf (1.0f, -25),             /* tie to 0 */
    nextafterf (ldexpf (1.0f, -25), 1.0f),  /* just above: 2^-24 */
    ldexpf (3.0f, -25),             /* tie to 2·2^-24 (even) */
    ldexpf (5.0f, -25),             /* tie to 2·2^-24 (even) */
    ldexpf (1.0f, -30), 1e-40f,     /* to 0; an fp32 subnormal */
    1.0f + ldexpf (1.0f, -11),      /* tie to 1 (even) */
    1.0f + ldexpf (3.0f, -11),      /* tie to 1 + 2^-9 (even) */
    2049.0f, 2051.0f,               /* ties among integers */
  };
  n = bad = 0;
  for (float v : edges) {
    check_round_trip (v, &n, &bad, "edge");
    check_round_trip (-v, &n, &bad, "edge");
  }
  report_conversion ("fp32 -> fp16 -> fp32, edge values", n, bad);

  /* The reference itself, on a few values worked out by hand. */
  const struct { float v, want; } known[] = {
    { 65519.0f, 65504.0f }, { 65520.0f, INFINITY }, { 1e-40f, 0.0f },
    { ldexpf (1.0f, -25), 0.0f }, { ldexpf (3.0f, -25), ldexpf (1.0f, -23) },
    { 1.0f + ldexpf (1.0f, -11), 1.0f }, { 2049.0f, 2048.0f },
    { 2051.0f, 2052.0f }, { 0.1f, 0.0999755859375f },
  };
  n = bad = 0;
  for (const auto &k : known) {
    n++;
    if (!same (ref_to_half (k.v), k.want) && bad++ == 0)
      printf ("  reference: %.9g -> %.9g, want %.9g\n", (double) k.v,
          (double) ref_to_half (k.v), (double) k.want);
  }
  report_conversion ("the reference rounding, on known values", n, bad);
}

/* The fused relu against MXNet's relu itself, isnan(v) || v > 0 ? v : 0
 * (the CPU comparison above cannot tell if both drift together): NaN
 * passes, ±0 and negatives give +0, +inf stays. */
static void
check_relu_semantics (void)
{
  const float values[] = {
    NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.5f, -1.5f, 1e-45f,
    -1e-45f, 3.4e38f, -3.4e38f,
  };
  int bad = 0;
  for (float v : values) {
    const float want = isnan (v) || v > 0.0f ? v : 0.0f;
    const float gpu = hy_cuda_epilogue_act (HY_FUSED_ACT_RELU, v, 0, 0);
    const float cpu = hy_epilogue_act (HY_FUSED_ACT_RELU, v, 0, 0);
    if (!same (gpu, want) || !same (cpu, want)) {
      if (bad++ == 0)
        printf ("  relu (%g): cuda %g, cpu %g, MXNet %g\n", (double) v,
            (double) gpu, (double) cpu, (double) want);
    }
  }
  emu_report (bad == 0, "fused relu is MXNet's on NaN, infinities and "
      "signed zeros", 0.0, NULL);
}

/* The fused hard sigmoid and hard swish against the unfused chain they
 * replace, run with the CUDA kernels' own element functions
 * (elementwise.cuh): _plus_scalar 3, clip [0, 6], _div_scalar 6, then
 * elemwise_mul (v, that); the CPU's epilogue too.  Bit for bit over the
 * special values, every float step of 2^-10 in [-8, 8] (the clip's
 * edges at -3 and 3 inside) and a sweep of bit patterns. */
static void
check_hard_semantics (void)
{
  int64_t n = 0, bad = 0;
  unsigned bits = 0x9e3779b9u;
  for (int64_t k = -12; k < 16384 + 4096; k++) {
    float v;
    if (k < 0) {
      static const float specials[] = {
        NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 3.0f, -3.0f, 1e-45f,
        -1e-45f, 3.4e38f, -3.4e38f,
      };
      v = specials[k + 12];
    } else if (k < 16384) {
      v = (float) (k - 8192) / 1024.0f;
    } else {
      bits = bits * 1664525u + 1013904223u;
      memcpy (&v, &bits, sizeof v);
    }
    const float t = hy_cuda_binary_op (HY_BINARY_ADD, v, 3.0f);
    const float hs = hy_cuda_binary_op (HY_BINARY_DIV,
        hy_cuda_clamp (t, 0.0f, 6.0f), 6.0f);
    const float sw = hy_cuda_binary_op (HY_BINARY_MUL, v, hs);
    const float got[4] = {
      hy_cuda_epilogue_act (HY_FUSED_ACT_HARD_SIGMOID, v, 0, 0),
      hy_epilogue_act (HY_FUSED_ACT_HARD_SIGMOID, v, 0, 0),
      hy_cuda_epilogue_act (HY_FUSED_ACT_HARD_SWISH, v, 0, 0),
      hy_epilogue_act (HY_FUSED_ACT_HARD_SWISH, v, 0, 0),
    };
    const float want[4] = { hs, hs, sw, sw };
    for (int j = 0; j < 4; j++) {
      n++;
      if (!same (got[j], want[j]) && bad++ == 0)
        printf ("  %s (%.9g), %s: %.9g, want %.9g\n",
            j < 2 ? "hard sigmoid" : "hard swish", (double) v,
            j % 2 ? "cpu" : "cuda", (double) got[j], (double) want[j]);
    }
  }
  char what[96];
  snprintf (what, sizeof what, "fused hard sigmoid and swish are the "
      "unfused chain's (%lld values)", (long long) n);
  emu_report (bad == 0, what, 0.0, NULL);
}

int
main (void)
{
  check_relu_semantics ();
  check_hard_semantics ();
  for (int conv = 0; conv < 2; conv++)
    for (int act = HY_FUSED_ACT_NONE; act <= HY_FUSED_ACT_HARD_SWISH; act++)
      for (int parts = 0; parts < 8; parts++)
        emu_count (run_case (conv, (hy_fused_act) act, parts & 1, parts & 2,
                parts & 4, false));
  /* fp16: only convolutions take the epilogue from an fp16 output. */
  for (int act = HY_FUSED_ACT_NONE; act <= HY_FUSED_ACT_HARD_SWISH; act++)
    for (int parts = 0; parts < 8; parts++)
      emu_count (run_case (true, (hy_fused_act) act, parts & 1, parts & 2,
              parts & 4, true));
  check_half_values ();
  check_boundaries ();
  check_sweep ();
  return emu_summary ();
}
