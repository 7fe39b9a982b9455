/*
 * emulate-elementwise.cu — the CUDA elementwise kernels' element functions
 * (kernels/cuda/elementwise.cuh) run on the host over every output index
 * and compared with the CPU kernels, on a machine without a GPU.
 *
 * Every op of the families elementwise.cu implements, with attribute
 * variants, broadcasting shapes (size-1 axes, rank differences), odd sizes
 * and special values (NaN, ±inf, ties, float16 limits) among random data.
 * Each case builds the kernel's launch arguments with the same host
 * planning functions the .cu entry points use, runs the element function
 * for every index, in launch order, and again with the output on input 0
 * where the op may run in place.  One line per case; exit 1 on a failure.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "elementwise.cuh"

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

/* Values that exercise the edge cases of MXNet's semantics: signed zeros,
 * rounding ties, NaN and infinities, float16's limits and subnormals,
 * integer-cast wrap-around. */
static const float specials[] = {
  0.0f, -0.0f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 1.0f, -1.0f, 2.0f, NAN,
  INFINITY, -INFINITY, 65504.0f, 65519.0f, 65520.0f, -65520.0f, 1e-6f,
  3e-8f, -6e-5f, 300.7f, -129.6f, 255.5f, 1e10f, -3e9f, 0x1p63f,
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

/* The launches elementwise.cu makes for the op, in stream order. */
static void
emulate (const hy_op_info *op, const void *params, hy_tensor *const *in,
    int n_in, hy_tensor *const *out)
{
  const char *family = op->family;
  hy_tensor *o = out[0];

  if (!strcmp (family, "unary")) {
    hy_cuda_unary_args a = hy_cuda_unary_plan (
        (const hy_unary_params *) params, in[0], o);
    MAP (a, hy_cuda_unary_at, o);
  } else if (!strcmp (family, "scalar")) {
    hy_cuda_scalar_args a = hy_cuda_scalar_plan (
        (const hy_scalar_params *) params, in[0], o);
    MAP (a, hy_cuda_scalar_at, o);
  } else if (!strcmp (family, "binary")) {
    if (numel (o) == 0)
      return;
    hy_cuda_binary_args a = hy_cuda_binary_plan (
        (const hy_binary_params *) params, in[0], in[1], o);
    MAP (a, hy_cuda_binary_at, o);
  } else if (!strcmp (family, "add_n")) {
    if (n_in == 1 && o->data == in[0]->data)
      return;
    for (int l = 0; l < hy_cuda_add_n_launches (n_in); l++) {
      hy_cuda_add_n_args a = hy_cuda_add_n_plan (in, n_in, o, l);
      MAP (a, hy_cuda_add_n_at, o);
    }
  } else if (!strcmp (family, "clip")) {
    hy_cuda_clip_args a = hy_cuda_clip_plan (
        (const hy_clip_params *) params, in[0], o);
    MAP (a, hy_cuda_clip_at, o);
  } else if (!strcmp (family, "hard_sigmoid")) {
    hy_cuda_clip_args a = hy_cuda_hard_sigmoid_plan (
        (const hy_hard_sigmoid_params *) params, in[0], o);
    MAP (a, hy_cuda_hard_sigmoid_at, o);
  } else if (!strcmp (family, "where")) {
    hy_cuda_where_args a = hy_cuda_where_plan (in[0], in[1], in[2], o);
    MAP (a, hy_cuda_where_at, o);
  } else if (!strcmp (family, "cast")) {
    hy_cuda_cast_args a = hy_cuda_cast_plan (
        (const hy_cast_params *) params, in[0], o);
    MAP (a, hy_cuda_cast_at, o);
  } else if (!strcmp (family, "fill_like")) {
    hy_cuda_fill_args a = hy_cuda_fill_like_plan (
        (const hy_fill_like_params *) params, o);
    MAP (a, hy_cuda_fill_at, o);
  } else {
    g_error ("no emulation for family %s", family);
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
      /* where's condition: mostly exact zeros and ones, NaN now and then. */
      if (op->id == HY_OP_WHERE && i == 0)
        v = e % 7 == 3 ? NAN : (float) g_rand_int_range (rand, -1, 2);
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
    emulate (op, params, run_in, n_in, run_out);

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
check_family (const char *family, kv_list kv, int n_in,
    const hy_shape *shapes, fill_spec fill)
{
  for (int id = 0; id < HY_OP_COUNT; id++) {
    const hy_op_info *op = hy_op_info_get ((hy_op_id) id);
    if (!strcmp (op->family, family))
      check (op->name, kv, n_in, shapes, fill);
  }
}

static void
check_unary (void)
{
  const hy_shape odd = SHAPE (3, 5, 7), one = SHAPE (1), longer = SHAPE (1001);
  const fill_spec positive = { 0.01f, 8.0f, false };
  const fill_spec large = { -200.0f, 200.0f, true };
  check_family ("unary", NO_ATTRS, 1, &odd, WIDE);
  check_family ("unary", NO_ATTRS, 1, &longer, positive);
  check_family ("unary", NO_ATTRS, 1, &longer, large);
  check_family ("unary", NO_ATTRS, 1, &one, PLAIN);
}

static void
check_scalar (void)
{
  static const char *const scalars[] = { "2", "-1.5", "0", "0.5", "3" };
  const hy_shape x = SHAPE (4, 33);
  for (size_t s = 0; s < G_N_ELEMENTS (scalars); s++)
    check_family ("scalar", KV ("scalar", scalars[s]), 1, &x, WIDE);
  const hy_shape scalar = SHAPE (1);
  check_family ("scalar", KV ("scalar", "-2", "is_int", "False"), 1, &scalar,
      PLAIN);
}

static void
check_binary (void)
{
  /* elemwise_* (equal shapes; the family also holds broadcast_*, whose
   * equal-shape case is this one too). */
  const hy_shape same[][2] = {
    { SHAPE (5, 7, 3), SHAPE (5, 7, 3) },
    { SHAPE (1), SHAPE (1) },
    { SHAPE (1, 1, 1), SHAPE (1, 1, 1) },
    { SHAPE (2, 1, 9), SHAPE (2, 1, 9) },
  };
  for (size_t k = 0; k < G_N_ELEMENTS (same); k++)
    check_family ("binary", NO_ATTRS, 2, same[k], WIDE);

  /* broadcast_*: size-1 axes on either side, rank differences, axes that
   * merge and axes that do not, a single value on either side. */
  static const char *const ops[] = {
    "broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
    "broadcast_maximum", "broadcast_minimum", "broadcast_power",
    "broadcast_equal", "broadcast_not_equal", "broadcast_greater",
    "broadcast_greater_equal", "broadcast_lesser", "broadcast_lesser_equal",
  };
  const hy_shape shapes[][2] = {
    { SHAPE (2, 3, 4), SHAPE (1) },
    { SHAPE (1), SHAPE (2, 3, 4) },
    { SHAPE (4, 1, 5), SHAPE (3, 1) },
    { SHAPE (2, 1, 3, 1), SHAPE (1, 4, 1, 5) },
    { SHAPE (7), SHAPE (3, 1) },
    { SHAPE (2, 3, 1, 5), SHAPE (3, 4, 1) },
    { SHAPE (1, 1), SHAPE (1, 1, 1) },
    { SHAPE (6, 1, 1), SHAPE (1, 1) },
    { SHAPE (2, 3, 4, 5), SHAPE (1, 3, 1, 1) },
    { SHAPE (2, 3, 4, 5), SHAPE (3, 4, 5) },
    { SHAPE (3, 4, 5), SHAPE (2, 3, 1, 5) },
    { SHAPE (1, 2, 1, 3, 1, 2), SHAPE (2, 1, 3, 1, 2, 1) },
    { SHAPE (5, 1), SHAPE (1, 1, 6) },
  };
  for (size_t s = 0; s < G_N_ELEMENTS (shapes); s++)
    for (size_t k = 0; k < G_N_ELEMENTS (ops); k++)
      check (ops[k], NO_ATTRS, 2, shapes[s], WIDE);
  /* An empty output: nothing to write, nothing read. */
  const hy_shape empty[2] = { SHAPE (0, 3), SHAPE (1, 3) };
  check ("broadcast_add", NO_ATTRS, 2, empty, WIDE);
}

static void
check_add_n (void)
{
  static const int counts[] = { 1, 2, 3, 15, 16, 17, 31, 32, 40 };
  hy_shape shapes[MAX_IN];
  for (int i = 0; i < MAX_IN; i++)
    shapes[i] = SHAPE (3, 11);
  for (size_t k = 0; k < G_N_ELEMENTS (counts); k++) {
    char n[8];
    snprintf (n, sizeof n, "%d", counts[k]);
    check ("add_n", KV ("num_args", n), counts[k], shapes, WIDE);
  }
  check ("ElementWiseSum", KV ("num_args", "2"), 2, shapes, PLAIN);
}

static void
check_clip_hard_sigmoid_fill (void)
{
  const hy_shape x = SHAPE (7, 9);
  check ("clip", KV ("a_min", "-1", "a_max", "1"), 1, &x, WIDE);
  check ("clip", KV ("a_min", "0", "a_max", "6"), 1, &x, WIDE);
  check ("clip", KV ("a_min", "1", "a_max", "-1"), 1, &x, WIDE);
  check ("clip", KV ("a_min", "-0.5", "a_max", "-0.5"), 1, &x, WIDE);
  check ("clip", KV ("a_min", "2", "a_max", "3"), 1, &x, WIDE);
  check ("hard_sigmoid", NO_ATTRS, 1, &x, WIDE);
  check ("hard_sigmoid", KV ("alpha", "0.5", "beta", "0.1"), 1, &x, WIDE);
  check ("hard_sigmoid", KV ("alpha", "-1", "beta", "0.7"), 1, &x, WIDE);
  check ("zeros_like", NO_ATTRS, 1, &x, WIDE);
  check ("ones_like", NO_ATTRS, 1, &x, WIDE);
}

static void
check_where (void)
{
  const hy_shape cases[][3] = {
    { SHAPE (4, 6), SHAPE (4, 6), SHAPE (4, 6) },
    { SHAPE (4), SHAPE (4, 6), SHAPE (4, 6) },
    { SHAPE (5), SHAPE (5), SHAPE (5) },
    { SHAPE (3), SHAPE (3, 2, 5), SHAPE (3, 2, 5) },
    { SHAPE (1), SHAPE (1, 7), SHAPE (1, 7) },
    { SHAPE (2, 3, 5), SHAPE (2, 3, 5), SHAPE (2, 3, 5) },
  };
  for (size_t k = 0; k < G_N_ELEMENTS (cases); k++)
    check ("where", NO_ATTRS, 3, cases[k], WIDE);
}

static void
check_cast (void)
{
  static const char *const dtypes[] = {
    "float16", "bfloat16", "int32", "int64", "uint8", "int8", "bool",
    "float32", "float64",
  };
  const hy_shape x = SHAPE (9, 37);
  const fill_spec ints = { -400.0f, 400.0f, true };
  const fill_spec tiny = { -1e-4f, 1e-4f, true };
  const fill_spec huge = { -7e4f, 7e4f, true };
  for (size_t k = 0; k < G_N_ELEMENTS (dtypes); k++) {
    check ("Cast", KV ("dtype", dtypes[k]), 1, &x, ints);
    check ("Cast", KV ("dtype", dtypes[k]), 1, &x, huge);
  }
  check ("Cast", KV ("dtype", "float16"), 1, &x, tiny);
  check ("amp_cast", KV ("dtype", "float16"), 1, &x, WIDE);
}

int
main (void)
{
  check_unary ();
  check_scalar ();
  check_binary ();
  check_add_n ();
  check_clip_hard_sigmoid_fill ();
  check_where ();
  check_cast ();
  printf ("%d passed, %d failed\n", n_passed, n_failed);
  return n_failed ? 1 : 0;
}
