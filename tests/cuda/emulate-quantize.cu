/*
 * emulate-quantize.cu — the CUDA _contrib_quantize_v2 and
 * _contrib_dequantize kernels' element functions (kernels/cuda/
 * quantize.cuh) run on the host as the launches would, and compared with
 * the CPU kernels (kernels/cpu/quantized/quantize.c) bit for bit: the
 * quantized steps, the reported ranges and the dequantized floats.
 *
 * Hostile values among random data: ties at .5 (a range of 127.5 or 255.5
 * makes the scale exactly 1, so x.5 reaches rint as it is), values past
 * saturation both ways, NaN, ±inf, signed zeros; calibrated ranges of
 * [0, 0] (a dead layer: inf scale, NaN steps), negative-only and huge
 * ones; uncalibrated data (the range found by the block reduction, NaN
 * first, all NaN, empty); dequantize at ranges of [0, 0], NaN and inf.
 * One line per case; exit 1 on a failure.  No GPU needed (launch.cuh).
 */
#include "kernels/cuda/quantize.cuh"
#include "emulate-harness.h"

static const float specials[] = {
  0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 126.5f, -126.5f, 127.5f, -127.5f,
  128.5f, -128.5f, 254.5f, 255.5f, 256.5f, 0.0f, -0.0f, NAN, INFINITY,
  -INFINITY, 1e30f, -1e30f, 1e-30f,
};

/* Equal bits, or both NaN (the CPU and device may carry different NaN
 * payloads; only NaN-ness is MXNet's contract). */
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

/* quantize.cu's launches: the one-block range kernel (its threads'
 * strided folds, then the tree), then the element kernel. */
static void
emulate_quantize (emu *e)
{
  hy_cuda_quantize_args a = hy_cuda_quantize_plan (
      (const hy_quantize_params *) e->params, e->in[0], e->got);
  const int64_t n = numel (e->in[0]);
  float lo[HY_CUDA_THREADS], hi[HY_CUDA_THREADS];
  for (unsigned t = 0; t < HY_CUDA_THREADS; t++) {
    lo[t] = hi[t] = NAN;
    if (!a.calibrated)
      for (int64_t i = t; i < n; i += HY_CUDA_THREADS)
        hy_cuda_quantize_fold (&lo[t], &hi[t], a.x[i]);
  }
  for (unsigned half = HY_CUDA_THREADS / 2; half > 0; half /= 2)
    for (unsigned t = 0; t < half; t++)
      hy_cuda_quantize_merge (lo, hi, t, t + half);
  hy_cuda_quantize_finish (&a, n, lo[0], hi[0]);
  MAP (a, hy_cuda_quantize_at, e->got[0]);
}

static void
emulate_dequantize (emu *e)
{
  hy_cuda_dequantize_args a = hy_cuda_dequantize_plan (
      (const hy_dequantize_params *) e->params, e->in, e->got[0]);
  MAP (a, hy_cuda_dequantize_at, e->got[0]);
}

/* Data in [lo, hi), every fifth value a special one (when specials). */
static void
fill (hy_tensor *t, float lo, float hi, bool with_specials, GRand *rand)
{
  for (int64_t i = 0; i < numel (t); i++) {
    float v = (float) g_rand_double_range (rand, lo, hi);
    if (with_specials && i % 5 == 2)
      v = specials[g_rand_int_range (rand, 0, G_N_ELEMENTS (specials))];
    t->data[i] = v;
  }
}

static void
check_quantize (emu_kv kv, hy_shape shape, float lo, float hi,
    bool with_specials, float first)
{
  static guint32 seed = 1;
  emu e;
  emu_data_dtype = HY_DTYPE_FLOAT32;
  if (!emu_open (&e, "_contrib_quantize_v2", kv, &shape, 1))
    return;
  GRand *rand = g_rand_new_with_seed (seed++);
  fill (e.in[0], lo, hi, with_specials, rand);
  g_rand_free (rand);
  if (numel (e.in[0]) > 0 && !isnan (first))
    e.in[0]->data[0] = first;
  emu_run_cpu (&e);
  emulate_quantize (&e);
  compare_and_report (&e);
  emu_close (&e);
}

/* Every value NaN: the CPU's running min and max stay NaN. */
static void
check_quantize_all_nan (void)
{
  const hy_shape shape = S (300);
  emu e;
  emu_data_dtype = HY_DTYPE_FLOAT32;
  if (!emu_open (&e, "_contrib_quantize_v2", NO_ATTRS, &shape, 1))
    return;
  for (int64_t i = 0; i < numel (e.in[0]); i++)
    e.in[0]->data[i] = NAN;
  emu_run_cpu (&e);
  emulate_quantize (&e);
  compare_and_report (&e);
  emu_close (&e);
}

static void
check_dequantize (hy_dtype dtype, hy_shape shape, float min, float max)
{
  static guint32 seed = 100;
  const hy_shape in[3] = { shape, S (1), S (1) };
  emu e;
  emu_data_dtype = dtype;
  const bool ok = emu_open (&e, "_contrib_dequantize", NO_ATTRS, in, 3);
  emu_data_dtype = HY_DTYPE_FLOAT32;
  if (!ok)
    return;
  GRand *rand = g_rand_new_with_seed (seed++);
  const bool u8 = dtype == HY_DTYPE_UINT8;
  for (int64_t i = 0; i < numel (e.in[0]); i++)
    e.in[0]->data[i] = (float) g_rand_int_range (rand, u8 ? 0 : -128,
        u8 ? 256 : 128);
  g_rand_free (rand);
  e.in[1]->data[0] = min;
  e.in[2]->data[0] = max;
  const size_t len = strlen (e.name);
  g_snprintf (e.name + len, sizeof e.name - len, " range [%g, %g]", min,
      max);
  emu_run_cpu (&e);
  emulate_dequantize (&e);
  compare_and_report (&e);
  emu_close (&e);
}

int
main (void)
{
  const hy_shape small = S (2, 3, 17), longer = S (1001), one = S (1),
      empty = S (0, 3), odd = S (257);
  const emu_kv calibrated[] = {
    /* scale exactly 1: the specials' .5 ties reach rint unchanged */
    KV ("min_calib_range", "-127.5", "max_calib_range", "127.5"),
    KV ("min_calib_range", "0", "max_calib_range", "255.5"),
    KV ("min_calib_range", "0", "max_calib_range", "255.5",
        "out_type", "int8"),
    KV ("min_calib_range", "-127.5", "max_calib_range", "127.5",
        "out_type", "uint8"),
    /* a dead layer: inf scale, 0 · inf a NaN */
    KV ("min_calib_range", "0", "max_calib_range", "0"),
    KV ("min_calib_range", "0", "max_calib_range", "0", "out_type", "int8"),
    KV ("min_calib_range", "-3.25", "max_calib_range", "-1"),
    KV ("min_calib_range", "-0.0123", "max_calib_range", "2.5"),
    KV ("min_calib_range", "-1e30", "max_calib_range", "1e30"),
    KV ("min_calib_range", "-1e-30", "max_calib_range", "1e-30"),
  };
  for (size_t k = 0; k < G_N_ELEMENTS (calibrated); k++) {
    check_quantize (calibrated[k], small, -300.0f, 300.0f, true, NAN);
    check_quantize (calibrated[k], longer, -4.0f, 4.0f, true, NAN);
    check_quantize (calibrated[k], one, -4.0f, 4.0f, false, NAN);
    check_quantize (calibrated[k], empty, -4.0f, 4.0f, false, NAN);
  }

  /* Uncalibrated: the range from the data, on the device's reduction. */
  const emu_kv uncalibrated[] = {
    NO_ATTRS, KV ("out_type", "int8"), KV ("out_type", "uint8"),
  };
  for (size_t k = 0; k < G_N_ELEMENTS (uncalibrated); k++) {
    check_quantize (uncalibrated[k], small, -3.0f, 5.0f, false, NAN);
    check_quantize (uncalibrated[k], longer, -3.0f, 5.0f, true, NAN);
    check_quantize (uncalibrated[k], odd, 0.0f, 2.0f, false, NAN);
    check_quantize (uncalibrated[k], odd, -2.0f, -1.0f, false, NAN);
    check_quantize (uncalibrated[k], one, -4.0f, 4.0f, false, NAN);
    check_quantize (uncalibrated[k], empty, -4.0f, 4.0f, false, NAN);
    /* all zeros: range [0, 0] found in the data */
    check_quantize (uncalibrated[k], small, 0.0f, 0.0f, false, NAN);
  }
  check_quantize_all_nan ();

  const hy_dtype types[] = { HY_DTYPE_INT8, HY_DTYPE_UINT8 };
  const float ranges[][2] = {
    { -1.0f, 1.0f }, { -127.5f, 127.5f }, { 0.0f, 255.5f }, { 0.0f, 0.0f },
    { -0.0f, 0.0f }, { -3.7f, 0.25f }, { 0.0f, 6.1f }, { NAN, 1.0f },
    { -INFINITY, 1.0f }, { -1e30f, 1e30f }, { -1e-38f, 1e-38f },
  };
  for (size_t k = 0; k < G_N_ELEMENTS (types); k++)
    for (size_t r = 0; r < G_N_ELEMENTS (ranges); r++) {
      check_dequantize (types[k], small, ranges[r][0], ranges[r][1]);
      check_dequantize (types[k], longer, ranges[r][0], ranges[r][1]);
    }
  check_dequantize (HY_DTYPE_INT8, empty, -1.0f, 1.0f);
  return emu_summary ();
}
