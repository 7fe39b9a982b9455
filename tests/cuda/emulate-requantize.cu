/*
 * emulate-requantize.cu — the CUDA _contrib_requantize kernel's element
 * functions (kernels/cuda/requantize.cuh) run on the host as the launches
 * would, and compared with the CPU kernel (kernels/cpu/quantized/
 * requantize.c) bit for bit: the int8 / uint8 steps and both reported
 * range values.
 *
 * Hostile values among random int32 data (held as floats): the int32
 * limits (INT32_MIN's magnitude does not fit MXNet's int32: a negative
 * range), ties at .5 (an input range of 2^31 and an output range of 254 or
 * 510 make the scale exactly 0.5), saturation both ways, signed zeros;
 * calibrated ranges of [0, 0] (inf scale, NaN steps), negative-only, huge
 * and tiny ones; input ranges of 0, inf and NaN; uncalibrated data (the
 * range found by the block reduction, INT32_MIN among it, all zeros, one
 * value, empty).  One line per case; exit 1 on a failure.  No GPU needed
 * (launch.cuh).
 */
#include "kernels/cuda/requantize.cuh"
#include "emulate-harness.h"

static const float specials[] = {
  -2147483648.0f, 2147483520.0f, 1073741824.0f, -1073741824.0f, 16777217.0f,
  1.0f, -1.0f, 3.0f, -3.0f, 255.0f, -255.0f, 257.0f, -257.0f, 509.0f, 511.0f,
  0.0f, -0.0f,
};

/* Equal bits, or both NaN. */
static bool
same (float w, float g)
{
  if (isnan (w) || isnan (g))
    return isnan (w) && isnan (g);
  return memcmp (&w, &g, sizeof w) == 0;
}

static void
compare_and_report (emu *e)
{
  char why[256] = "";
  bool ok = true;
  for (int j = 0; j < e->n_out && ok; j++)
    for (int64_t i = 0; i < numel (e->want[j]) && ok; i++)
      if (!same (e->want[j]->data[i], e->got[j]->data[i])) {
        snprintf (why, sizeof why, "output %d at %" G_GINT64_FORMAT
            ": got %.9g, want %.9g", j, (gint64) i, e->got[j]->data[i],
            e->want[j]->data[i]);
        ok = false;
      }
  emu_report (ok, e->name, ok ? 0.0 : INFINITY, why);
}

/* requantize.cu's launches: the one-block range kernel (its threads'
 * strided folds, then the tree), then the element kernel. */
static void
emulate_requantize (emu *e)
{
  hy_cuda_requantize_args a = hy_cuda_requantize_plan (
      (const hy_requantize_params *) e->params, e->in, e->got);
  const int64_t n = numel (e->in[0]);
  float lo[HY_CUDA_THREADS], hi[HY_CUDA_THREADS];
  for (unsigned t = 0; t < HY_CUDA_THREADS; t++) {
    hy_cuda_requantize_start (&lo[t], &hi[t]);
    if (!a.calibrated)
      for (int64_t i = t; i < n; i += HY_CUDA_THREADS)
        hy_cuda_requantize_fold (&lo[t], &hi[t], a.x[i]);
  }
  for (unsigned half = HY_CUDA_THREADS / 2; half > 0; half /= 2)
    for (unsigned t = 0; t < half; t++)
      hy_cuda_requantize_merge (lo, hi, t, t + half);
  hy_cuda_requantize_finish (&a, lo[0], hi[0]);
  MAP (a, hy_cuda_requantize_at, e->got[0]);
}

/* Integers in [lo, hi] as floats (the nearest float to each, as an int32
 * is held), every fifth one a special value (when specials). */
static void
fill (hy_tensor *t, double lo, double hi, bool with_specials, GRand *rand)
{
  for (int64_t i = 0; i < numel (t); i++) {
    float v = (float) floor (g_rand_double_range (rand, lo, hi + 1.0));
    if (with_specials && i % 5 == 2)
      v = specials[g_rand_int_range (rand, 0, G_N_ELEMENTS (specials))];
    t->data[i] = v;
  }
}

static void
check (emu_kv kv, hy_shape shape, float in_min, float in_max, double lo,
    double hi, bool with_specials)
{
  static guint32 seed = 1;
  const hy_shape in[3] = { shape, S (1), S (1) };
  emu e;
  emu_data_dtype = HY_DTYPE_INT32;
  const bool ok = emu_open (&e, "_contrib_requantize", kv, in, 3);
  emu_data_dtype = HY_DTYPE_FLOAT32;
  if (!ok)
    return;
  GRand *rand = g_rand_new_with_seed (seed++);
  fill (e.in[0], lo, hi, with_specials, rand);
  g_rand_free (rand);
  e.in[1]->data[0] = in_min;
  e.in[2]->data[0] = in_max;
  const size_t len = strlen (e.name);
  g_snprintf (e.name + len, sizeof e.name - len, " in [%g, %g] data [%g, %g]%s",
      in_min, in_max, lo, hi, with_specials ? " + specials" : "");
  emu_run_cpu (&e);
  emulate_requantize (&e);
  compare_and_report (&e);
  emu_close (&e);
}

int
main (void)
{
  const hy_shape small = S (2, 3, 17), longer = S (1001), one = S (1),
      empty = S (0, 3), odd = S (257);
  const emu_kv calibrated[] = {
    /* with an input range of 2^31, scale exactly 0.5: odd steps tie */
    KV ("min_calib_range", "-254", "max_calib_range", "254"),
    KV ("min_calib_range", "0", "max_calib_range", "510", "out_type",
        "uint8"),
    KV ("min_calib_range", "0", "max_calib_range", "510", "out_type",
        "auto"),
    KV ("min_calib_range", "-254", "max_calib_range", "254", "out_type",
        "uint8"),
    /* a dead layer: inf scale, 0 · inf a NaN */
    KV ("min_calib_range", "0", "max_calib_range", "0"),
    KV ("min_calib_range", "0", "max_calib_range", "0", "out_type", "uint8"),
    KV ("min_calib_range", "-3.25", "max_calib_range", "-1"),
    KV ("min_calib_range", "-0.8", "max_calib_range", "1.1"),
    KV ("min_calib_range", "-1e30", "max_calib_range", "1e30"),
    KV ("min_calib_range", "-1e-30", "max_calib_range", "1e-30"),
  };
  const float in_ranges[][2] = {
    { -2147483648.0f, 2147483648.0f }, { -3.7f, 5.2f }, { 0.0f, 0.0f },
    { -INFINITY, 1.0f }, { NAN, 1.0f }, { -1e-30f, 1e-30f },
  };
  for (size_t k = 0; k < G_N_ELEMENTS (calibrated); k++)
    for (size_t r = 0; r < G_N_ELEMENTS (in_ranges); r++) {
      const float lo = in_ranges[r][0], hi = in_ranges[r][1];
      check (calibrated[k], small, lo, hi, -600, 600, true);
      check (calibrated[k], longer, lo, hi, -2147483648.0, 2147483647.0,
          true);
      check (calibrated[k], one, lo, hi, -5, 5, false);
      check (calibrated[k], empty, lo, hi, -5, 5, false);
    }

  /* Uncalibrated: the range from the data, on the device's reduction. */
  const emu_kv uncalibrated[] = {
    NO_ATTRS, KV ("out_type", "int8"), KV ("out_type", "uint8"),
    KV ("out_type", "auto"),
  };
  for (size_t k = 0; k < G_N_ELEMENTS (uncalibrated); k++)
    for (size_t r = 0; r < G_N_ELEMENTS (in_ranges); r++) {
      const float lo = in_ranges[r][0], hi = in_ranges[r][1];
      check (uncalibrated[k], small, lo, hi, -300000, 500000, false);
      check (uncalibrated[k], longer, lo, hi, -3000, 5000, true);
      check (uncalibrated[k], odd, lo, hi, 0, 70000, false);
      check (uncalibrated[k], odd, lo, hi, -70000, -1, false);
      check (uncalibrated[k], odd, lo, hi, -2147483648.0, 2147483647.0,
          false);
      check (uncalibrated[k], one, lo, hi, -4, 4, false);
      check (uncalibrated[k], empty, lo, hi, -4, 4, false);
      /* all zeros: a real range of 0 found in the data */
      check (uncalibrated[k], small, lo, hi, 0, 0, false);
    }
  return emu_summary ();
}
