/*
 * emulate-activation.cu — the CUDA Activation, LeakyReLU and BatchNorm
 * kernels' element functions (kernels/cuda/activation.cuh,
 * batch-norm.cuh) run on the host over every output index and compared
 * with the CPU kernels, on a machine without a GPU.
 *
 * Every act_type, slope and bound variants, every shape prelu's gamma may
 * take, BatchNorm on each axis with and without fix_gamma and with its
 * mean/var outputs, odd sizes and special values (NaN, ±inf, softrelu's
 * switch-over) among random data.  Each case builds the launch arguments
 * with the host planning functions the .cu entry points use, runs the
 * element functions for every index in launch order, and again with the
 * output on input 0.  One line per case; exit 1 on a failure.
 */
#include "kernels/cuda/activation.cuh"
#include "kernels/cuda/batch-norm.cuh"
#include "emulate-harness.h"

/* Values at the activations' edges: signed zeros, NaN and infinities,
 * softrelu's switch to the identity at 20, large magnitudes. */
static const float specials[] = {
  0.0f, -0.0f, 1.0f, -1.0f, NAN, INFINITY, -INFINITY, 20.0f, 19.999998f,
  20.000002f, -20.0f, 88.0f, -88.0f, 1e-6f, -1e-6f, 1e10f, -1e10f,
};
#define N_SPECIALS ((int) (sizeof specials / sizeof specials[0]))

/* ---- the emulated launches --------------------------------------------- */

/* The launches activation.cu and batch-norm.cu make for the op, in
 * stream order. */
static void
emulate (const hy_op_info *op, const void *params, hy_tensor *const *in,
    int n_in, hy_tensor *const *out, int n_out)
{
  hy_tensor *o = out[0];
  const int64_t n = numel (in[0]);

  if (op->id == HY_OP_ACTIVATION) {
    hy_cuda_act_args a = hy_cuda_activation_plan (
        (const hy_activation_params *) params, in[0], o);
    MAP (a, hy_cuda_act_at, o);
  } else if (op->id == HY_OP_LEAKY_RELU) {
    const hy_leaky_relu_params *p = (const hy_leaky_relu_params *) params;
    if (n == 0)
      return;
    if (p->act_type == HY_LEAKY_PRELU) {
      hy_cuda_prelu_args a = hy_cuda_prelu_plan (in[0], in[1], o);
      MAP (a, hy_cuda_prelu_at, o);
      return;
    }
    hy_cuda_act_args a = hy_cuda_leaky_plan (p, in[0], o);
    MAP (a, hy_cuda_act_at, o);
    if ((p->act_type == HY_LEAKY_LEAKY || p->act_type == HY_LEAKY_RRELU)
        && n_out > 1)           /* the cudaMemsetAsync of the mask */
      memset (out[1]->data, 0, (size_t) n * sizeof (float));
  } else if (op->id == HY_OP_BATCH_NORM
      || op->id == HY_OP_SYNC_BATCH_NORM) {
    hy_cuda_batch_norm_args a = hy_cuda_batch_norm_plan (
        (const hy_batch_norm_params *) params, in, o);
    MAP (a, hy_cuda_batch_norm_at, o);
    if (n_out >= 3 && a.channels > 0) {
      /* The cudaMemcpyAsync of the mean, the inverse std kernel. */
      memcpy (out[1]->data, a.mean, (size_t) a.channels * sizeof (float));
      for (int64_t c = 0; c < a.channels; c++)
        out[2]->data[c] = hy_cuda_batch_norm_inv_std (&a, c);
    }
  } else {
    g_error ("no emulation for %s", op->name);
  }
}

/* BatchNorm's moving variance: positive and finite. */
static float
adjust (const hy_op_info *op, int input, int64_t at, float v, GRand *rand)
{
  if ((op->id == HY_OP_BATCH_NORM || op->id == HY_OP_SYNC_BATCH_NORM)
      && input == 4)
    return (float) g_rand_double_range (rand, 0.1, 3.0);
  return v;
}

static const emu_suite suite = { specials, N_SPECIALS, adjust, emulate };

/* ---- the cases --------------------------------------------------------- */

static void
check_activation (void)
{
  static const char *const types[] = {
    "relu", "sigmoid", "tanh", "softrelu", "softsign",
  };
  const hy_shape x = S (2, 3, 17), longer = S (1001), one = S (1);
  const emu_fill around_20 = { 15.0f, 25.0f, false };
  const emu_fill large = { -100.0f, 100.0f, true };
  for (size_t k = 0; k < G_N_ELEMENTS (types); k++) {
    check ("Activation", KV ("act_type", types[k]), 1, &x, WIDE);
    check ("Activation", KV ("act_type", types[k]), 1, &longer, large);
    check ("Activation", KV ("act_type", types[k]), 1, &one, PLAIN);
  }
  check ("Activation", KV ("act_type", "softrelu"), 1, &longer, around_20);
}

static void
check_leaky_relu (void)
{
  const emu_kv variants[] = {
    NO_ATTRS,
    KV ("act_type", "leaky", "slope", "0.1"),
    KV ("act_type", "elu"),
    KV ("act_type", "elu", "slope", "1"),
    KV ("act_type", "selu"),
    KV ("act_type", "gelu"),
    KV ("act_type", "rrelu"),
    KV ("act_type", "rrelu", "lower_bound", "0.1", "upper_bound", "0.3"),
  };
  const hy_shape x = S (2, 3, 17), longer = S (1001);
  const emu_fill large = { -30.0f, 30.0f, true };
  for (size_t k = 0; k < G_N_ELEMENTS (variants); k++) {
    check ("LeakyReLU", variants[k], 1, &x, WIDE);
    check ("LeakyReLU", variants[k], 1, &longer, large);
  }

  /* prelu's gamma: per channel on axis 1, on axis 0 where axis 1 does not
   * fit, one shared slope, one per element (gamma shaped like the data,
   * or a vector as long as the data). */
  const hy_shape prelu[][2] = {
    { S (2, 4, 5), S (4) },
    { S (2, 4, 5), S (1) },
    { S (2, 4, 5), S (2, 4, 5) },
    { S (5, 3), S (5) },
    { S (2, 3), S (3) },
    { S (1, 4), S (4) },
    { S (4), S (4) },
    { S (3, 3, 2), S (3) },
    { S (2, 6, 3, 3), S (6) },
    { S (7), S (1) },
  };
  for (size_t k = 0; k < G_N_ELEMENTS (prelu); k++)
    check ("LeakyReLU", KV ("act_type", "prelu"), 2, prelu[k], WIDE);
}

/* BatchNorm on data `x` with its channels on `axis` (normalised). */
static void
check_batch_norm_on (hy_shape x, int axis, emu_kv kv)
{
  const hy_shape c = S (x.dims[axis]);
  const hy_shape in[5] = { x, c, c, c, c };
  check ("BatchNorm", kv, 5, in, WIDE);
}

static void
check_batch_norm (void)
{
  const hy_shape nchw = S (2, 3, 4, 5);
  check_batch_norm_on (nchw, 1, NO_ATTRS);
  check_batch_norm_on (nchw, 1, KV ("fix_gamma", "False"));
  check_batch_norm_on (nchw, 1, KV ("fix_gamma", "False", "eps", "0.001"));
  check_batch_norm_on (nchw, 3, KV ("axis", "-1", "fix_gamma", "False"));
  check_batch_norm_on (nchw, 3, KV ("axis", "3", "fix_gamma", "False"));
  check_batch_norm_on (nchw, 2, KV ("axis", "2", "fix_gamma", "False"));
  check_batch_norm_on (S (3, 4, 5), 0, KV ("axis", "0",
          "fix_gamma", "False"));
  check_batch_norm_on (S (6, 7), 1, KV ("fix_gamma", "False"));
  check_batch_norm_on (S (1, 9, 1, 1), 1, KV ("fix_gamma", "False"));
  check_batch_norm_on (S (5), 0, KV ("axis", "0", "fix_gamma", "False"));
  check_batch_norm_on (S (2, 3, 2, 3, 3), 1, KV ("fix_gamma", "False"));
  check_batch_norm_on (nchw, 1, KV ("output_mean_var", "True",
          "fix_gamma", "False"));
  check_batch_norm_on (S (3, 4, 5), 2, KV ("axis", "-1",
          "output_mean_var", "True"));
  /* _contrib_SyncBatchNorm: axis 1, its own order of operations. */
  const hy_shape c3 = S (3);
  const hy_shape sync_in[5] = { nchw, c3, c3, c3, c3 };
  check ("_contrib_SyncBatchNorm", KV ("key", "bn"), 5, sync_in, WIDE);
  check ("_contrib_SyncBatchNorm", KV ("key", "bn", "fix_gamma", "False",
          "eps", "1e-5"), 5, sync_in, WIDE);
}

/* Activation's relu against MXNet's relu itself, isnan(x) || x > 0 ? x : 0
 * (the CPU comparison cannot tell if both drift together): NaN passes,
 * ±0 and negatives give +0. */
static void
check_relu_semantics (void)
{
  int bad = 0;
  for (int k = 0; k < N_SPECIALS; k++) {
    const float v = specials[k];
    const float want = isnan (v) || v > 0.0f ? v : 0.0f;
    const float got = hy_cuda_activation_op (HY_ACT_RELU, v);
    if (!(isnan (got) && isnan (want))
        && (got != want || signbit (got) != signbit (want))) {
      if (bad++ == 0)
        printf ("  relu (%g) = %g, MXNet %g\n", (double) v, (double) got,
            (double) want);
    }
  }
  emu_report (bad == 0, "Activation relu is MXNet's on NaN, infinities "
      "and signed zeros", 0.0, NULL);
}

int
main (void)
{
  emu_checking = &suite;
  check_relu_semantics ();
  check_activation ();
  check_leaky_relu ();
  check_batch_norm ();
  return emu_summary ();
}
