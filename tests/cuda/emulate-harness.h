/*
 * emulate-harness.h — what the emulate-*.cu tests share.  Each runs a CUDA
 * kernel's host planning and element functions on the host over every
 * index, as the launch would, and compares the result with the CPU
 * kernel's, on a machine without a GPU (launch.cuh).
 *
 * A case: the op parsed by the core with its attributes (KV (key, value,
 * …)), its output shapes inferred for the input shapes (S (dims…)),
 * random inputs, the CPU kernel's outputs (want) and the emulated ones
 * (got) compared; one line per case.  A test ends with emu_summary (),
 * "N passed, N failed", its exit status 1 if any case failed.
 *
 * Two ways to fill and check a case:
 *  - emu_setup () … emu_finish () (or emu_run ()): uniform inputs from one
 *    generator for the whole run (emu_quantum, emu_nan_every for ties and
 *    NaN); outputs within 1e-5 of their largest value;
 *  - check (): inputs mixed with the test's special values, each case
 *    seeded on its own; every element within 1e-5 of itself; the case run
 *    again with the output on input 0 where the op may run in place.
 *
 * Test-only: everything is static (inline), each test compiles what it
 * uses.
 */
#ifndef HY_EMULATE_HARNESS_H
#define HY_EMULATE_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <initializer_list>

#include <glib.h>

extern "C" {
#include "core/op.h"
#include "kernels/elementwise-common.h"
#include "kernels/cpu/cpu-kernel.h"
}

#define EMU_MAX_IO 48
#define EMU_SENTINEL -7777.25f  /* an output element nobody wrote */

/* ---- counting ----------------------------------------------------------- */

static int emu_passed, emu_failed;

static inline void
emu_count (bool ok)
{
  if (ok)
    emu_passed++;
  else
    emu_failed++;
}

/* One case's line: "ok name (max error …)" or "FAIL …: why". */
static inline void
emu_report (bool ok, const char *name, double worst, const char *why)
{
  printf ("%s %s (max error %.3g)%s%s\n", ok ? "ok" : "FAIL", name, worst,
      why && *why ? ": " : "", why ? why : "");
  emu_count (ok);
}

/* A case that could not be set up: a failure. */
static inline void
emu_fail_setup (const char *name, const char *what)
{
  printf ("FAIL %s: %s\n", name, what);
  emu_count (false);
}

/* The last line; the test's exit status. */
static inline int
emu_summary (void)
{
  printf ("%d passed, %d failed\n", emu_passed, emu_failed);
  return emu_failed ? 1 : 0;
}

/* ---- shapes and attributes ---------------------------------------------- */

static inline hy_shape
emu_shape (std::initializer_list<int64_t> dims)
{
  hy_shape s = {};
  for (int64_t d : dims)
    s.dims[s.ndim++] = d;
  return s;
}
#define S(...) emu_shape ({ __VA_ARGS__ })

/* Attributes as key, value, …, NULL: a value that may be kept in arrays
 * and passed on, and read as the list it holds. */
typedef struct emu_kv {
  const char *s[24];
  operator const char *const * () const { return s; }
} emu_kv;
#define KV(...) (emu_kv { { __VA_ARGS__, NULL } })
#define NO_ATTRS (emu_kv { { NULL } })

static inline int64_t
numel (const hy_tensor *t)
{
  return hy_shape_numel (&t->shape);
}

/* What a kernel's grid-stride loop does, one index after another: o's
 * every element from at (&args, index). */
#define MAP(args, at, o) \
  do { \
    for (int64_t i_ = 0; i_ < numel (o); i_++) \
      (o)->data[i_] = at (&(args), i_); \
  } while (0)

/* ---- one case ----------------------------------------------------------- */

typedef struct emu {
  char name[256];
  const hy_op_info *op;
  void *params;
  int n_in, n_out;
  hy_tensor *in[EMU_MAX_IO];
  hy_tensor *want[EMU_MAX_IO];  /* the CPU kernel's */
  hy_tensor *got[EMU_MAX_IO];   /* the emulated CUDA kernel's */
} emu;

/* Parses op_name with attributes kv (key, value, …, NULL; or NULL), infers
 * the outputs for the n_in input shapes and makes the tensors: the inputs
 * for the caller to fill, got[] as EMU_SENTINEL.  FALSE (counted as a
 * failure) when the case cannot be set up. */
/* The dtype of every input of the cases that follow (float32 unless a
 * test sets it): with an integer one, the op's load-time dtype inference
 * runs on the params (as core/dtype-infer.c would), and check () fills
 * the inputs with integers. */
static hy_dtype emu_data_dtype = HY_DTYPE_FLOAT32;

static inline bool
emu_open (emu *e, const char *op_name, const char *const *kv,
    const hy_shape *in, int n_in)
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
  if (emu_data_dtype != HY_DTYPE_FLOAT32)
    g_string_append_printf (name, " on %s", hy_dtype_name (emu_data_dtype));
  g_strlcpy (e->name, name->str, sizeof e->name);
  g_string_free (name, TRUE);

  e->op = hy_op_lookup (op_name);
  if (!e->op || !e->op->def) {
    emu_fail_setup (e->name, "unknown op");
    return false;
  }
  GHashTable *attrs = g_hash_table_new (g_str_hash, g_str_equal);
  for (int i = 0; kv && kv[i]; i += 2)
    g_hash_table_insert (attrs, (char *) kv[i], (char *) kv[i + 1]);
  GError *error = NULL;
  e->params = hy_op_params_new (e->op, attrs, &error);
  g_hash_table_unref (attrs);
  hy_shape out[EMU_MAX_IO];
  if (e->params) {
    e->n_in = n_in;
    e->n_out = hy_op_num_outputs (e->op, e->params);
    if (hy_op_num_inputs (e->op, e->params) != n_in || n_in > EMU_MAX_IO
        || e->n_out > EMU_MAX_IO) {
      emu_fail_setup (e->name, "wrong number of inputs or outputs");
      g_free (e->params);
      return false;
    }
    if (emu_data_dtype != HY_DTYPE_FLOAT32 && e->op->def->infer_dtype) {
      hy_dtype in_types[EMU_MAX_IO], out_types[EMU_MAX_IO];
      for (int k = 0; k < n_in; k++)
        in_types[k] = emu_data_dtype;
      if (!e->op->def->infer_dtype (e->params, in_types, n_in, out_types,
              e->n_out, &error) && !error) {
        emu_fail_setup (e->name, "dtype inference failed");
        g_free (e->params);
        return false;
      }
    }
    if (!error && !e->op->def->infer_shape (e->params, in, n_in, out,
            e->n_out, &error) && !error) {
      emu_fail_setup (e->name, "shape inference failed");
      g_free (e->params);
      return false;
    }
  }
  if (error) {
    emu_fail_setup (e->name, error->message);
    g_error_free (error);
    g_free (e->params);
    return false;
  }

  for (int k = 0; k < n_in; k++)
    e->in[k] = hy_tensor_new (&in[k]);
  for (int j = 0; j < e->n_out; j++) {
    e->want[j] = hy_tensor_new (&out[j]);
    e->got[j] = hy_tensor_new (&out[j]);
    for (int64_t i = 0; i < numel (e->got[j]); i++)
      e->got[j]->data[i] = EMU_SENTINEL;
  }
  return true;
}

/* The CPU kernel on the inputs, into want[]: one thread, no pool. */
static inline void
emu_run_cpu (emu *e)
{
  hy_cpu_ctx ctx = {};
  hy_cpu_kernel_for (e->op->id) (&ctx, e->params,
      (const hy_tensor *const *) e->in, e->n_in, e->want, e->n_out);
  hy_cpu_ctx_clear (&ctx);
}

static inline void
emu_close (emu *e)
{
  for (int k = 0; k < e->n_in; k++)
    hy_tensor_free (e->in[k]);
  for (int j = 0; j < e->n_out; j++) {
    hy_tensor_free (e->want[j]);
    hy_tensor_free (e->got[j]);
  }
  g_free (e->params);
}

/* Compares got[j] with want[j] for every output: NaN matches NaN, an
 * infinity only itself, a finite value within 1e-5 · max(1, scale), scale
 * |want| of the element (per_element) or the largest finite |want| of the
 * output.  *worst: the largest difference met; why: the first mismatch. */
static inline bool
emu_compare (hy_tensor *const *want, hy_tensor *const *got, int n_out,
    bool per_element, double *worst, char *why, size_t size)
{
  for (int j = 0; j < n_out; j++) {
    const int64_t n = numel (want[j]);
    double ref = 0.0;
    for (int64_t i = 0; i < n && !per_element; i++)
      if (isfinite (want[j]->data[i]))
        ref = fmax (ref, fabs (want[j]->data[i]));
    for (int64_t i = 0; i < n; i++) {
      const double w = want[j]->data[i], g = got[j]->data[i];
      if (isnan (w) && isnan (g))
        continue;
      const double diff = w == g ? 0.0 : fabs (g - w);
      if (!(diff <= 1e-5 * fmax (1.0, per_element ? fabs (w) : ref))) {
        snprintf (why, size, "output %d at %" G_GINT64_FORMAT
            ": got %.9g, want %.9g", j, (gint64) i, g, w);
        *worst = isnan (diff) ? INFINITY : fmax (*worst, diff);
        return false;
      }
      *worst = fmax (*worst, diff);
    }
  }
  return true;
}

/* ---- emu_setup / emu_finish: uniform inputs ----------------------------- */

/* For the cases set up next: every emu_nan_every-th input value is NaN (0:
 * none); values are rounded to multiples of emu_quantum (0: not), for
 * ties. */
static int emu_nan_every;
static float emu_quantum;

/* xorshift64*: the same inputs on every run. */
static uint64_t emu_rng = 0x9e3779b97f4a7c15ull;

static inline float
emu_uniform (float lo, float hi)
{
  emu_rng ^= emu_rng >> 12;
  emu_rng ^= emu_rng << 25;
  emu_rng ^= emu_rng >> 27;
  const uint64_t r = emu_rng * 0x2545f4914f6cdd1dull;
  return lo + (hi - lo) * (float) ((r >> 40) / 16777216.0);
}

/* emu_open, the inputs filled with values in [lo, hi), the CPU kernel
 * run.  FALSE (counted as a failure) when the case cannot be set up. */
static inline bool
emu_setup (emu *e, const char *op_name, const char *const *kv,
    const hy_shape *in, int n_in, float lo, float hi)
{
  if (!emu_open (e, op_name, kv, in, n_in))
    return false;
  for (int k = 0; k < n_in; k++) {
    for (int64_t i = 0; i < numel (e->in[k]); i++) {
      float v = emu_uniform (lo, hi);
      if (emu_quantum > 0.0f)
        v = roundf (v / emu_quantum) * emu_quantum;
      if (emu_nan_every > 0 && i % emu_nan_every == emu_nan_every - 1)
        v = NAN;
      if (hy_dtype_is_integer (emu_data_dtype))
        v = hy_cast_value (emu_data_dtype, v);
      e->in[k]->data[i] = v;
    }
  }
  emu_run_cpu (e);
  return true;
}

/* got[] against want[] (to the largest value of each output), the case's
 * line, the tensors freed. */
static inline void
emu_finish (emu *e)
{
  double worst = 0.0;
  char why[256] = "";
  const bool ok = emu_compare (e->want, e->got, e->n_out, false, &worst,
      why, sizeof why);
  emu_report (ok, e->name, worst, why);
  emu_close (e);
}

/* One case whose emulation fills e->got[] from e->in[]. */
static inline void
emu_run (void (*emulate) (emu *e), const char *op_name,
    const char *const *kv, const hy_shape *in, int n_in, float lo, float hi)
{
  emu e;
  if (!emu_setup (&e, op_name, kv, in, n_in, lo, hi))
    return;
  emulate (&e);
  emu_finish (&e);
}

/* ---- check: special values, per element, in place ----------------------- */

typedef struct emu_fill {
  float lo, hi;
  bool specials;                /* every fifth value from the specials */
} emu_fill;

static const emu_fill WIDE = { -4.0f, 4.0f, true };
static const emu_fill PLAIN = { -4.0f, 4.0f, false };

/* What a test checking with check () brings. */
typedef struct emu_suite {
  const float *specials;        /* the values at its kernels' edges */
  int n_specials;
  /* The value of input `input`'s element `at` instead of v, drawn from
   * rand if need be (NULL: v). */
  float (*adjust) (const hy_op_info *op, int input, int64_t at, float v,
      GRand *rand);
  /* The launches the .cu files make for the op, in stream order; out[0]
   * may be in[0]'s storage. */
  void (*emulate) (const hy_op_info *op, const void *params,
      hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
} emu_suite;

/* The suite of a test checking with check (): set before the first. */
static const emu_suite *emu_checking;

/* Runs op_name with attributes kv on inputs of shapes in_shapes[0..n_in)
 * filled per `fill`, on the CPU and emulated (emu_checking), and compares
 * every output, element by element; then again with the output on input 0
 * where the op may run in place. */
static inline void
check (const char *op_name, const char *const *kv, int n_in,
    const hy_shape *in_shapes, emu_fill fill)
{
  const emu_suite *suite = emu_checking;
  emu e;
  if (!emu_open (&e, op_name, kv, in_shapes, n_in))
    return;
  if (fill.lo != WIDE.lo || fill.hi != WIDE.hi) {
    const size_t len = strlen (e.name);
    g_snprintf (e.name + len, sizeof e.name - len, " in [%g, %g]", fill.lo,
        fill.hi);
  }

  static guint32 seed = 1;
  GRand *rand = g_rand_new_with_seed (seed++);
  for (int k = 0; k < n_in; k++) {
    for (int64_t i = 0; i < numel (e.in[k]); i++) {
      float v = (float) g_rand_double_range (rand, fill.lo, fill.hi);
      if (fill.specials && i % 5 == 2)
        v = suite->specials[g_rand_int_range (rand, 0, suite->n_specials)];
      if (suite->adjust)
        v = suite->adjust (e.op, k, i, v, rand);
      if (hy_dtype_is_integer (emu_data_dtype))
        v = hy_cast_value (emu_data_dtype, v);
      e.in[k]->data[i] = v;
    }
  }
  g_rand_free (rand);
  emu_run_cpu (&e);

  /* Separate output, then (where allowed) the output on input 0.  The
   * output starts as EMU_SENTINEL so that an element never written
   * shows. */
  for (int inplace = 0; inplace < 2; inplace++) {
    if (inplace && !(e.op->def->inplace
            && numel (e.in[0]) == numel (e.want[0])))
      break;
    hy_tensor *run_in[EMU_MAX_IO];
    for (int k = 0; k < n_in; k++)
      run_in[k] = hy_tensor_copy (e.in[k]);
    hy_tensor *run_out[EMU_MAX_IO];
    for (int j = 0; j < e.n_out; j++) {
      run_out[j] = e.got[j];
      for (int64_t i = 0; i < numel (e.got[j]); i++)
        e.got[j]->data[i] = EMU_SENTINEL;
    }
    hy_tensor *alias = NULL;
    if (inplace) {
      alias = hy_tensor_new_view (&e.want[0]->shape, run_in[0]->data);
      run_out[0] = alias;
    }
    suite->emulate (e.op, e.params, run_in, n_in, run_out, e.n_out);

    double worst = 0.0;
    char why[256] = "", name[sizeof e.name + 16];
    const bool ok = emu_compare (e.want, run_out, e.n_out, true, &worst,
        why, sizeof why);
    g_snprintf (name, sizeof name, "%s%s", e.name,
        inplace ? " (in place)" : "");
    emu_report (ok, name, worst, why);
    if (alias)
      hy_tensor_free (alias);
    for (int k = 0; k < n_in; k++)
      hy_tensor_free (run_in[k]);
  }
  emu_close (&e);
}

#endif /* HY_EMULATE_HARNESS_H */
