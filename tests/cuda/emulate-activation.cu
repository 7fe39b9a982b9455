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
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "activation.cuh"
#include "batch-norm.cuh"

extern "C" {
#include "op.h"
#include "cpu-kernel.h"
}

#define MAX_IN 48

/* Attributes as key, value, …: the rest of the list stays NULL. */
typedef struct kv_list {
  const char *s[12];
} kv_list;
#define KV(...) (kv_list { { __VA_ARGS__ } })
#define NO_ATTRS (kv_list { { NULL } })

static int n_passed, n_failed;

/* Values at the activations' edges: signed zeros, NaN and infinities,
 * softrelu's switch to the identity at 20, large magnitudes. */
static const float specials[] = {
  0.0f, -0.0f, 1.0f, -1.0f, NAN, INFINITY, -INFINITY, 20.0f, 19.999998f,
  20.000002f, -20.0f, 88.0f, -88.0f, 1e-6f, -1e-6f, 1e10f, -1e10f,
};
#define N_SPECIALS ((int) (sizeof specials / sizeof specials[0]))

typedef struct fill_spec {
  float lo, hi;
  bool specials;                /* every fifth value from specials[] */
} fill_spec;

static const fill_spec WIDE = { -4.0f, 4.0f, true };
static const fill_spec PLAIN = { -4.0f, 4.0f, false };

/* Dimensions up to a -1. */
typedef struct dims_list {
  int64_t d[HY_MAX_DIMS + 1];
} dims_list;
#define SHAPE(...) shape_of (dims_list { { __VA_ARGS__, -1 } })

static hy_shape
shape_of (dims_list dims)
{
  int n = 0;
  while (dims.d[n] >= 0)
    n++;
  return hy_shape_make (n, dims.d);
}

static int64_t
numel (const hy_tensor *t)
{
  return hy_shape_numel (&t->shape);
}

/* ---- the emulated launches --------------------------------------------- */

/* What the kernel's grid-stride loop does, one index after another. */
#define MAP(args, at, o) \
  do { \
    for (int64_t i_ = 0; i_ < numel (o); i_++) \
      (o)->data[i_] = at (&(args), i_); \
  } while (0)

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
  } else if (op->id == HY_OP_BATCH_NORM) {
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

/* ---- one case ---------------------------------------------------------- */

/* Compares got with want: NaN matches NaN, infinities must be equal,
 * finite values within 1e-5 · max(1, |want|).  Returns FALSE with the
 * first mismatch described in msg. */
static gboolean
compare (const hy_tensor *want, const hy_tensor *got, double *max_diff,
    char *msg, size_t size)
{
  for (int64_t e = 0; e < numel (want); e++) {
    const double w = want->data[e], g = got->data[e];
    if (isnan (w) && isnan (g))
      continue;
    const double diff = w == g ? 0.0 : fabs (g - w);
    if (!(diff <= 1e-5 * fmax (1.0, fabs (w)))) {
      snprintf (msg, size, "at %" G_GINT64_FORMAT ": got %.9g, want %.9g",
          (gint64) e, g, w);
      return FALSE;
    }
    *max_diff = fmax (*max_diff, diff);
  }
  return TRUE;
}

static void
report (gboolean ok, const char *label, const char *how, double max_diff,
    const char *msg)
{
  if (ok) {
    n_passed++;
    printf ("ok    %s%s  max|diff| %.3g\n", label, how, max_diff);
  } else {
    n_failed++;
    printf ("FAIL  %s%s  %s\n", label, how, msg);
  }
}

/* Runs `op` with attributes kv on inputs of shapes in[0..n_in) filled
 * per `fill`, on the CPU and emulated, and compares every output. */
static void
check (const char *op_name, kv_list attr_list, int n_in,
    const hy_shape *in_shapes, fill_spec fill)
{
  const hy_op_info *op = hy_op_lookup (op_name);
  g_assert_nonnull (op);
  const char *const *kv = attr_list.s;
  g_autoptr (GHashTable) attrs = g_hash_table_new (g_str_hash, g_str_equal);
  for (int i = 0; kv[i]; i += 2)
    g_hash_table_insert (attrs, (char *) kv[i], (char *) kv[i + 1]);

  /* The label: op, attributes, input shapes. */
  GString *label = g_string_new (op_name);
  for (int i = 0; kv[i]; i += 2)
    g_string_append_printf (label, " %s=%s", kv[i], kv[i + 1]);
  for (int i = 0; i < n_in && i < 3; i++) {
    char s[HY_SHAPE_STRLEN];
    g_string_append_printf (label, " %s",
        hy_shape_format (&in_shapes[i], s, sizeof s));
  }
  if (n_in > 3)
    g_string_append_printf (label, " …×%d", n_in);
  if (fill.lo != WIDE.lo || fill.hi != WIDE.hi)
    g_string_append_printf (label, " in [%g, %g]", fill.lo, fill.hi);

  GError *error = NULL;
  void *params = hy_op_params_new (op, attrs, &error);
  hy_shape out_shapes[4];
  const int n_out = params ? hy_op_num_outputs (op, params) : 0;
  if (!params || hy_op_num_inputs (op, params) != n_in
      || !op->def->infer_shape (params, in_shapes, n_in, out_shapes, n_out,
          &error)) {
    report (FALSE, label->str, "", 0, error ? error->message
        : "wrong input count");
    g_clear_error (&error);
    g_free (params);
    g_string_free (label, TRUE);
    return;
  }

  static guint32 seed = 1;
  GRand *rand = g_rand_new_with_seed (seed++);
  hy_tensor *in[MAX_IN];
  for (int i = 0; i < n_in; i++) {
    in[i] = hy_tensor_new (&in_shapes[i]);
    for (int64_t e = 0; e < numel (in[i]); e++) {
      float v = (float) g_rand_double_range (rand, fill.lo, fill.hi);
      if (fill.specials && e % 5 == 2)
        v = specials[g_rand_int_range (rand, 0, N_SPECIALS)];
      /* BatchNorm's moving variance: positive and finite. */
      if (op->id == HY_OP_BATCH_NORM && i == 4)
        v = (float) g_rand_double_range (rand, 0.1, 3.0);
      in[i]->data[e] = v;
    }
  }
  g_rand_free (rand);

  hy_tensor *want[4] = { NULL }, *got[4] = { NULL };
  for (int i = 0; i < n_out; i++) {
    want[i] = hy_tensor_new (&out_shapes[i]);
    got[i] = hy_tensor_new (&out_shapes[i]);
  }
  hy_cpu_ctx ctx = { NULL, 0, NULL };      /* no pool: one thread */
  hy_cpu_kernel_for (op->id) (&ctx, params, (const hy_tensor *const *) in,
      n_in, want, n_out);
  hy_cpu_ctx_clear (&ctx);

  /* Separate output, then (where allowed) the output on input 0.  The
   * output starts as garbage so that an element never written shows. */
  for (int inplace = 0; inplace < 2; inplace++) {
    if (inplace && !(op->def->inplace && numel (in[0]) == numel (want[0])))
      break;
    hy_tensor *run_in[MAX_IN];
    for (int i = 0; i < n_in; i++)
      run_in[i] = hy_tensor_copy (in[i]);
    for (int i = 0; i < n_out; i++)
      for (int64_t e = 0; e < numel (got[i]); e++)
        got[i]->data[e] = -12345.0f;
    hy_tensor *run_out[4] = { got[0], got[1], got[2], got[3] };
    hy_tensor *alias = NULL;
    if (inplace) {
      alias = hy_tensor_new_view (&want[0]->shape, run_in[0]->data);
      run_out[0] = alias;
    }
    emulate (op, params, run_in, n_in, run_out, n_out);

    gboolean ok = TRUE;
    double max_diff = 0;
    char msg[256] = "";
    for (int i = 0; i < n_out && ok; i++)
      ok = compare (want[i], run_out[i], &max_diff, msg, sizeof msg);
    report (ok, label->str, inplace ? "  (in place)" : "", max_diff, msg);
    if (alias)
      hy_tensor_free (alias);
    for (int i = 0; i < n_in; i++)
      hy_tensor_free (run_in[i]);
  }

  for (int i = 0; i < n_in; i++)
    hy_tensor_free (in[i]);
  for (int i = 0; i < n_out; i++) {
    hy_tensor_free (want[i]);
    hy_tensor_free (got[i]);
  }
  g_free (params);
  g_string_free (label, TRUE);
}

/* ---- the cases --------------------------------------------------------- */

static void
check_activation (void)
{
  static const char *const types[] = {
    "relu", "sigmoid", "tanh", "softrelu", "softsign",
  };
  const hy_shape x = SHAPE (2, 3, 17), longer = SHAPE (1001), one = SHAPE (1);
  const fill_spec around_20 = { 15.0f, 25.0f, false };
  const fill_spec large = { -100.0f, 100.0f, true };
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
  const kv_list variants[] = {
    NO_ATTRS,
    KV ("act_type", "leaky", "slope", "0.1"),
    KV ("act_type", "elu"),
    KV ("act_type", "elu", "slope", "1"),
    KV ("act_type", "selu"),
    KV ("act_type", "gelu"),
    KV ("act_type", "rrelu"),
    KV ("act_type", "rrelu", "lower_bound", "0.1", "upper_bound", "0.3"),
  };
  const hy_shape x = SHAPE (2, 3, 17), longer = SHAPE (1001);
  const fill_spec large = { -30.0f, 30.0f, true };
  for (size_t k = 0; k < G_N_ELEMENTS (variants); k++) {
    check ("LeakyReLU", variants[k], 1, &x, WIDE);
    check ("LeakyReLU", variants[k], 1, &longer, large);
  }

  /* prelu's gamma: per channel on axis 1, on axis 0 where axis 1 does not
   * fit, one shared slope, one per element (gamma shaped like the data,
   * or a vector as long as the data). */
  const hy_shape prelu[][2] = {
    { SHAPE (2, 4, 5), SHAPE (4) },
    { SHAPE (2, 4, 5), SHAPE (1) },
    { SHAPE (2, 4, 5), SHAPE (2, 4, 5) },
    { SHAPE (5, 3), SHAPE (5) },
    { SHAPE (2, 3), SHAPE (3) },
    { SHAPE (1, 4), SHAPE (4) },
    { SHAPE (4), SHAPE (4) },
    { SHAPE (3, 3, 2), SHAPE (3) },
    { SHAPE (2, 6, 3, 3), SHAPE (6) },
    { SHAPE (7), SHAPE (1) },
  };
  for (size_t k = 0; k < G_N_ELEMENTS (prelu); k++)
    check ("LeakyReLU", KV ("act_type", "prelu"), 2, prelu[k], WIDE);
}

/* BatchNorm on data `x` with its channels on `axis` (normalised). */
static void
check_batch_norm_on (hy_shape x, int axis, kv_list kv)
{
  const hy_shape c = SHAPE (x.dims[axis]);
  const hy_shape in[5] = { x, c, c, c, c };
  check ("BatchNorm", kv, 5, in, WIDE);
}

static void
check_batch_norm (void)
{
  const hy_shape nchw = SHAPE (2, 3, 4, 5);
  check_batch_norm_on (nchw, 1, NO_ATTRS);
  check_batch_norm_on (nchw, 1, KV ("fix_gamma", "False"));
  check_batch_norm_on (nchw, 1, KV ("fix_gamma", "False", "eps", "0.001"));
  check_batch_norm_on (nchw, 3, KV ("axis", "-1", "fix_gamma", "False"));
  check_batch_norm_on (nchw, 3, KV ("axis", "3", "fix_gamma", "False"));
  check_batch_norm_on (nchw, 2, KV ("axis", "2", "fix_gamma", "False"));
  check_batch_norm_on (SHAPE (3, 4, 5), 0, KV ("axis", "0",
          "fix_gamma", "False"));
  check_batch_norm_on (SHAPE (6, 7), 1, KV ("fix_gamma", "False"));
  check_batch_norm_on (SHAPE (1, 9, 1, 1), 1, KV ("fix_gamma", "False"));
  check_batch_norm_on (SHAPE (5), 0, KV ("axis", "0", "fix_gamma", "False"));
  check_batch_norm_on (SHAPE (2, 3, 2, 3, 3), 1, KV ("fix_gamma", "False"));
  check_batch_norm_on (nchw, 1, KV ("output_mean_var", "True",
          "fix_gamma", "False"));
  check_batch_norm_on (SHAPE (3, 4, 5), 2, KV ("axis", "-1",
          "output_mean_var", "True"));
}

int
main (void)
{
  check_activation ();
  check_leaky_relu ();
  check_batch_norm ();
  printf ("%d passed, %d failed\n", n_passed, n_failed);
  return n_failed ? 1 : 0;
}
