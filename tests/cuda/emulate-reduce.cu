/*
 * emulate-reduce.cu — the CUDA reductions (reduce.cu: sum, mean, max, min,
 * prod, argmax, argmin) emulated on the host against the CPU kernels: for
 * each case the op is parsed and its shapes inferred by the core, random
 * inputs go through hy_cpu_kernel_for, and the CUDA side's host planning
 * plus its element functions (reduce.cuh) are run over every output index,
 * as the launches would.  No GPU needed (launch.cuh).
 *
 * One line per case; exits 1 if any case failed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <initializer_list>

#include "launch.cuh"
#include "reduce.cuh"

extern "C" {
#include "op.h"
#include "cpu-kernel.h"
}

/* ---- harness (the same in every emulate-*.cu) --------------------------- */

#define MAX_IO 24
#define SENTINEL -7777.25f      /* an output element nobody wrote */

typedef struct emu {
  char name[256];
  const hy_op_info *op;
  void *params;
  int n_in, n_out;
  hy_tensor *in[MAX_IO];
  hy_tensor *want[MAX_IO];      /* the CPU kernel's */
  hy_tensor *got[MAX_IO];       /* the emulated CUDA kernel's */
} emu;

static int n_passed, n_failed;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* For the cases set up next: every nan_every-th input value is NaN (0:
 * none); values are rounded to multiples of quantum (0: not), for ties. */
static int nan_every;
static float quantum;

/* xorshift64*: the same inputs on every run. */
static float
uniform (float lo, float hi)
{
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  const uint64_t r = rng * 0x2545f4914f6cdd1dull;
  return lo + (hi - lo) * (float) ((r >> 40) / 16777216.0);
}

static hy_shape
shape_of (std::initializer_list<int64_t> dims)
{
  hy_shape s = {};
  for (int64_t d : dims)
    s.dims[s.ndim++] = d;
  return s;
}
#define S(...) shape_of ({ __VA_ARGS__ })

static void
fail_setup (const char *name, const char *what)
{
  printf ("FAIL %s: %s\n", name, what);
  n_failed++;
}

/* Parses op with attributes kv (key, value, …, NULL), infers the outputs
 * for the n_in input shapes, fills the inputs with values in [lo, hi) and
 * runs the CPU kernel; got[] starts as SENTINEL.  FALSE (counted as a
 * failure) when the case cannot be set up. */
static bool
emu_setup (emu *e, const char *op_name, const char *const *kv,
    const hy_shape *in, int n_in, float lo, float hi)
{
  memset (e, 0, sizeof *e);
  GString *name = g_string_new (op_name);
  for (int i = 0; kv && kv[i]; i += 2)
    g_string_append_printf (name, " %s=%s", kv[i], kv[i + 1]);
  for (int i = 0; i < n_in && i < 3; i++) {
    char buf[HY_SHAPE_STRLEN];
    g_string_append_printf (name, " %s", hy_shape_format (&in[i], buf,
            sizeof buf));
  }
  if (n_in > 3)
    g_string_append_printf (name, " …(%d inputs)", n_in);
  g_strlcpy (e->name, name->str, sizeof e->name);
  g_string_free (name, TRUE);

  e->op = hy_op_lookup (op_name);
  if (!e->op || !e->op->def) {
    fail_setup (e->name, "unknown op");
    return false;
  }
  GHashTable *attrs = g_hash_table_new (g_str_hash, g_str_equal);
  for (int i = 0; kv && kv[i]; i += 2)
    g_hash_table_insert (attrs, (char *) kv[i], (char *) kv[i + 1]);
  GError *error = NULL;
  e->params = hy_op_params_new (e->op, attrs, &error);
  g_hash_table_unref (attrs);
  hy_shape out[MAX_IO];
  if (e->params) {
    e->n_in = n_in;
    e->n_out = hy_op_num_outputs (e->op, e->params);
    if (hy_op_num_inputs (e->op, e->params) != n_in || e->n_out > MAX_IO) {
      fail_setup (e->name, "wrong number of inputs or outputs");
      g_free (e->params);
      return false;
    }
    e->op->def->infer_shape (e->params, in, n_in, out, e->n_out, &error);
  }
  if (error) {
    fail_setup (e->name, error->message);
    g_error_free (error);
    g_free (e->params);
    return false;
  }

  for (int k = 0; k < n_in; k++) {
    e->in[k] = hy_tensor_new (&in[k]);
    for (int64_t i = 0; i < hy_shape_numel (&in[k]); i++) {
      float v = uniform (lo, hi);
      if (quantum > 0.0f)
        v = roundf (v / quantum) * quantum;
      if (nan_every > 0 && i % nan_every == nan_every - 1)
        v = NAN;
      e->in[k]->data[i] = v;
    }
  }
  for (int j = 0; j < e->n_out; j++) {
    e->want[j] = hy_tensor_new (&out[j]);
    e->got[j] = hy_tensor_new (&out[j]);
    for (int64_t i = 0; i < hy_shape_numel (&out[j]); i++)
      e->got[j]->data[i] = SENTINEL;
  }
  hy_cpu_ctx ctx = {};
  hy_cpu_kernel_for (e->op->id) (&ctx, e->params,
      (const hy_tensor *const *) e->in, n_in, e->want, e->n_out);
  hy_cpu_ctx_clear (&ctx);
  return true;
}

/* max |got − want| ≤ 1e-5 · max(1, max |want|) per output; NaN matches
 * NaN, an infinity only itself. */
static void
emu_finish (emu *e)
{
  double worst = 0.0;
  bool ok = true;
  for (int j = 0; j < e->n_out; j++) {
    double diff = 0.0, ref = 0.0;
    for (int64_t i = 0; i < hy_shape_numel (&e->want[j]->shape); i++) {
      const double w = e->want[j]->data[i], g = e->got[j]->data[i];
      if (isnan (w) || isnan (g) || isinf (w) || isinf (g)) {
        if (!(isnan (w) && isnan (g)) && w != g)
          diff = INFINITY;
        continue;
      }
      diff = fmax (diff, fabs (g - w));
      ref = fmax (ref, fabs (w));
    }
    ok = ok && diff <= 1e-5 * fmax (1.0, ref);
    worst = fmax (worst, diff);
  }
  printf ("%s %s (max error %.3g)\n", ok ? "ok" : "FAIL", e->name, worst);
  if (ok)
    n_passed++;
  else
    n_failed++;
  for (int k = 0; k < e->n_in; k++)
    hy_tensor_free (e->in[k]);
  for (int j = 0; j < e->n_out; j++) {
    hy_tensor_free (e->want[j]);
    hy_tensor_free (e->got[j]);
  }
  g_free (e->params);
}

static int
emu_summary (void)
{
  printf ("%d passed, %d failed\n", n_passed, n_failed);
  return n_failed ? 1 : 0;
}

/* Attributes (key, value, …) for one call: the list lives until the end
 * of the full expression, which holds the call. */
#define KV(...) \
  (std::initializer_list<const char *> { __VA_ARGS__, NULL }.begin ())

/* ---- the CUDA side, emulated -------------------------------------------- */

/* hy_cuda_reduce and hy_cuda_arg_reduce: one thread per output. */
static void
emulate (emu *e)
{
  const hy_tensor *x = e->in[0];
  hy_tensor *y = e->got[0];
  const int64_t n = hy_shape_numel (&y->shape);
  if (n == 0)
    return;
  if (e->op->id == HY_OP_ARGMAX || e->op->id == HY_OP_ARGMIN) {
    const hy_cuda_arg_reduce_args a = hy_cuda_arg_reduce_plan (
        (const hy_arg_reduce_params *) e->params, &x->shape);
    for (int64_t i = 0; i < n; i++)
      y->data[i] = hy_cuda_arg_reduce_one (&a, x->data, i);
    return;
  }
  const hy_cuda_reduce_args r = hy_cuda_reduce_plan (
      (const hy_reduce_params *) e->params, &x->shape);
  for (int64_t i = 0; i < n; i++)
    y->data[i] = hy_cuda_reduce_one (&r, x->data, i);
}

static void
run (const char *op, const char *const *kv, hy_shape in)
{
  emu e;
  /* Products of many values in [-1, 1] underflow to nothing to compare. */
  const float range = strcmp (op, "prod") == 0 ? 1.6f : 1.0f;
  if (!emu_setup (&e, op, kv, &in, 1, -range, range))
    return;
  emulate (&e);
  emu_finish (&e);
}

/* ---- cases -------------------------------------------------------------- */

static const char *const reducers[] = {
  "sum", "mean", "max", "min", "prod",
};

/* Every reducer over every axis set worth telling apart. */
static void
reduce_cases (void)
{
  for (size_t r = 0; r < G_N_ELEMENTS (reducers); r++) {
    const char *op = reducers[r];
    run (op, NULL, S (7));
    run (op, NULL, S (3, 5, 4));
    run (op, KV ("axis", "()"), S (3, 4));
    run (op, KV ("axis", "0"), S (9));
    run (op, KV ("axis", "0"), S (6, 5));
    run (op, KV ("axis", "1"), S (6, 5));
    run (op, KV ("axis", "-1"), S (2, 3, 37));
    run (op, KV ("axis", "1", "keepdims", "True"), S (2, 3, 4));
    run (op, KV ("axis", "(0, 2)"), S (3, 4, 5));
    run (op, KV ("axis", "(1, 3)"), S (2, 3, 4, 5));
    run (op, KV ("axis", "(0, 2, 4)", "keepdims", "1"), S (2, 3, 4, 3, 2));
    run (op, KV ("axis", "(-1, -2)"), S (2, 3, 7, 7));
    run (op, KV ("axis", "(2, 3)", "keepdims", "True"), S (1, 8, 5, 5));
    run (op, KV ("axis", "1", "exclude", "True"), S (2, 3, 4));
    run (op, KV ("axis", "(0, 3)", "exclude", "True"), S (2, 3, 4, 5));
    run (op, KV ("axis", "1"), S (4, 1, 5));
    run (op, KV ("axis", "(0, 2)"), S (1, 3, 1, 2));
    run (op, KV ("axis", "1"), S (2, 0, 3));
    run (op, KV ("axis", "-1"), S (3, 1000));
  }
  run ("sum_axis", KV ("axis", "1"), S (4, 6));
  run ("max_axis", KV ("axis", "0"), S (4, 6));
  run ("min_axis", KV ("axis", "(0, 1)"), S (4, 6, 2));
  run ("mean", KV ("axis", "(1, 2, 3, 4, 5)"), S (2, 2, 3, 2, 3, 2));

  /* NaN propagates through max and min (and sums). */
  nan_every = 7;
  run ("max", KV ("axis", "1"), S (5, 9));
  run ("min", KV ("axis", "0"), S (9, 5));
  run ("sum", KV ("axis", "-1"), S (4, 20));
  nan_every = 0;
}

static void
arg_reduce_cases (void)
{
  static const char *const ops[] = { "argmax", "argmin" };
  for (int k = 0; k < 2; k++) {
    const char *op = ops[k];
    run (op, NULL, S (11));
    run (op, NULL, S (3, 4, 5));
    run (op, KV ("axis", "None"), S (3, 7));
    run (op, KV ("axis", "0"), S (6, 5));
    run (op, KV ("axis", "1"), S (6, 5));
    run (op, KV ("axis", "-1"), S (2, 3, 1000));
    run (op, KV ("axis", "1", "keepdims", "True"), S (2, 9, 4));
    run (op, KV ("axis", "2"), S (2, 3, 4, 5, 2));
    run (op, KV ("axis", "1"), S (3, 1, 4));
    /* Ties: the first extreme wins. */
    quantum = 0.5f;
    run (op, KV ("axis", "1"), S (4, 30));
    run (op, KV ("axis", "0"), S (30, 4));
    quantum = 0.0f;
    /* The first NaN wins. */
    nan_every = 5;
    run (op, KV ("axis", "-1"), S (4, 12));
    run (op, KV ("axis", "0"), S (12, 4));
    nan_every = 0;
  }
}

int
main (void)
{
  reduce_cases ();
  arg_reduce_cases ();
  return emu_summary ();
}
