/*
 * emulate-pool.cu — the CUDA Pooling kernel (pool.cu) emulated on the host
 * against the CPU kernel: for each case the op is parsed and its shapes
 * inferred by the core (valid/full/same conventions), random inputs go
 * through hy_cpu_kernel_for, and the CUDA side's host planning plus its
 * element function (pool.cuh) are run over every output index, as the
 * launch would.  No GPU needed (launch.cuh).
 *
 * One line per case; exits 1 if any case failed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <initializer_list>

#include "launch.cuh"
#include "pool.cuh"

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

/* hy_cuda_pooling: one thread per output element. */
static void
emulate (emu *e)
{
  const int64_t n = hy_shape_numel (&e->got[0]->shape);
  if (n == 0)
    return;
  const hy_cuda_pool_args g = hy_cuda_pool_plan (
      (const hy_pool_params *) e->params, &e->in[0]->shape,
      &e->got[0]->shape);
  for (int64_t i = 0; i < n; i++)
    e->got[0]->data[i] = hy_cuda_pool_one (&g, e->in[0]->data, i);
}

static void
run (const char *const *kv, hy_shape in)
{
  emu e;
  if (!emu_setup (&e, "Pooling", kv, &in, 1, -1.0f, 1.0f))
    return;
  emulate (&e);
  emu_finish (&e);
}

/* ---- cases -------------------------------------------------------------- */

static const char *const types[] = { "max", "avg", "sum" };

static void
pool_2d_cases (void)
{
  for (int t = 0; t < 3; t++) {
    const char *pt = types[t];
    run (KV ("pool_type", pt, "kernel", "(2, 2)", "stride", "(2, 2)"),
        S (2, 3, 8, 8));
    run (KV ("pool_type", pt, "kernel", "(3, 3)", "stride", "(2, 2)",
            "pad", "(1, 1)"), S (2, 3, 7, 9));
    run (KV ("pool_type", pt, "kernel", "(3, 3)", "stride", "(1, 1)",
            "pad", "(1, 1)", "count_include_pad", "False"), S (1, 4, 5, 6));
    run (KV ("pool_type", pt, "kernel", "(3, 2)", "stride", "(2, 3)",
            "pad", "(1, 1)", "pooling_convention", "full"), S (2, 2, 9, 10));
    run (KV ("pool_type", pt, "kernel", "(3, 3)", "stride", "(2, 2)",
            "pad", "(1, 1)", "pooling_convention", "full",
            "count_include_pad", "False"), S (1, 3, 8, 8));
    run (KV ("pool_type", pt, "kernel", "(2, 3)", "stride", "(3, 2)",
            "pooling_convention", "valid"), S (3, 2, 11, 7));
    run (KV ("pool_type", pt, "kernel", "(1, 1)", "stride", "(3, 3)",
            "pooling_convention", "full"), S (1, 2, 5, 5));
    run (KV ("pool_type", pt, "kernel", "(7, 7)", "stride", "(1, 1)"),
        S (2, 8, 7, 7));
    run (KV ("pool_type", pt, "kernel", "(3, 3)", "stride", "(2, 2)",
            "pad", "(2, 2)", "count_include_pad", "None"), S (1, 2, 6, 5));
    run (KV ("pool_type", pt, "global_pool", "True"), S (2, 5, 7, 7));
    run (KV ("pool_type", pt, "kernel", "(3, 3)", "global_pool", "True"),
        S (3, 4, 5, 6));
  }
  /* ResNet's stem and a 1x1 spatial map. */
  run (KV ("pool_type", "max", "kernel", "(3, 3)", "stride", "(2, 2)",
          "pad", "(1, 1)"), S (1, 16, 56, 56));
  run (KV ("pool_type", "avg", "kernel", "(1, 1)"), S (2, 3, 1, 1));
}

static void
pool_lp_cases (void)
{
  for (int p = 1; p <= 3; p++) {
    const char *pv = p == 1 ? "1" : p == 2 ? "2" : "3";
    run (KV ("pool_type", "lp", "p_value", pv, "kernel", "(2, 2)",
            "stride", "(2, 2)"), S (2, 3, 6, 6));
    run (KV ("pool_type", "lp", "p_value", pv, "kernel", "(3, 3)",
            "stride", "(2, 2)", "pad", "(1, 1)", "pooling_convention",
            "full"), S (1, 2, 7, 8));
    run (KV ("pool_type", "lp", "p_value", pv, "kernel", "(3,)",
            "stride", "(2,)"), S (2, 3, 9));
    run (KV ("pool_type", "lp", "p_value", pv, "kernel", "(2, 2, 2)"),
        S (1, 2, 4, 4, 4));
    run (KV ("pool_type", "lp", "p_value", pv, "global_pool", "True"),
        S (2, 3, 5, 5));
  }
}

static void
pool_1d_3d_cases (void)
{
  for (int t = 0; t < 3; t++) {
    const char *pt = types[t];
    run (KV ("pool_type", pt, "kernel", "(3,)", "stride", "(2,)"),
        S (2, 3, 11));
    run (KV ("pool_type", pt, "kernel", "(4,)", "stride", "(3,)", "pad",
            "(2,)", "pooling_convention", "full"), S (2, 2, 10));
    run (KV ("pool_type", pt, "kernel", "(3,)", "pad", "(1,)",
            "count_include_pad", "False"), S (1, 3, 7));
    run (KV ("pool_type", pt, "global_pool", "True"), S (2, 4, 9));
    run (KV ("pool_type", pt, "kernel", "(2, 2, 2)", "stride", "(2, 2, 2)"),
        S (2, 2, 4, 6, 6));
    run (KV ("pool_type", pt, "kernel", "(3, 3, 3)", "stride", "(2, 2, 2)",
            "pad", "(1, 1, 1)"), S (1, 2, 5, 6, 7));
    run (KV ("pool_type", pt, "kernel", "(3, 2, 3)", "stride", "(2, 2, 1)",
            "pad", "(1, 0, 1)", "pooling_convention", "full",
            "count_include_pad", "False"), S (1, 3, 6, 5, 4));
    run (KV ("pool_type", pt, "global_pool", "True"), S (2, 3, 3, 4, 5));
  }
  /* 'same': 1-D max pooling only. */
  run (KV ("pool_type", "max", "kernel", "(3,)", "stride", "(2,)",
          "pooling_convention", "same"), S (2, 3, 10));
  run (KV ("pool_type", "max", "kernel", "(4,)", "stride", "(1,)",
          "pooling_convention", "same"), S (1, 2, 7));
  run (KV ("pool_type", "max", "kernel", "(2,)", "stride", "(3,)",
          "pooling_convention", "same"), S (1, 2, 8));
}

int
main (void)
{
  pool_2d_cases ();
  pool_lp_cases ();
  pool_1d_3d_cases ();
  return emu_summary ();
}
