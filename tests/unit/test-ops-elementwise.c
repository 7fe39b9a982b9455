/*
 * test-ops-elementwise.c — attribute parsing and shape inference of the
 * elementwise, softmax and reduction ops, and their CPU kernels checked
 * against naive index arithmetic on random data.
 *
 * The expected shapes, defaults and refusals are facts of MXNet 1.9.1's op
 * definitions (checked against it).  Numeric agreement with MXNet itself
 * is the conformance runner's job, so no model outputs are written here.
 */
#include <math.h>
#include <string.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/elementwise.h"

#define SHAPE(...) shape_of ((const int64_t[]) { __VA_ARGS__ }, \
    sizeof ((const int64_t[]) { __VA_ARGS__ }) / sizeof (int64_t))
#define KV(...) ((const char *const[]) { __VA_ARGS__, NULL })
#define NO_ATTRS ((const char *const *) NULL)

static hy_shape
shape_of (const int64_t *dims, size_t n)
{
  return hy_shape_make ((int) n, dims);
}

static GHashTable *
attrs_of (const char *const *kv)
{
  GHashTable *a = g_hash_table_new (g_str_hash, g_str_equal);
  for (int i = 0; kv && kv[i]; i += 2)
    g_hash_table_insert (a, (char *) kv[i], (char *) kv[i + 1]);
  return a;
}

/* Parsed params of `op_name` with attributes kv; NULL + *error on refusal. */
static void *
parse (const char *op_name, const char *const *kv, GError **error)
{
  const hy_op_info *op = hy_op_lookup (op_name);
  g_assert_nonnull (op);
  g_assert_nonnull (op->def);
  g_autoptr (GHashTable) attrs = attrs_of (kv);
  return hy_op_params_new (op, attrs, error);
}

/* Parses and infers the single output for inputs in[0..n_in). */
static gboolean
infer (const char *op_name, const char *const *kv, const hy_shape *in,
    int n_in, hy_shape *out, GError **error)
{
  const hy_op_info *op = hy_op_lookup (op_name);
  g_autofree void *params = parse (op_name, kv, error);
  if (!params)
    return FALSE;
  g_assert_cmpint (hy_op_num_inputs (op, params), ==, n_in);
  g_assert_cmpint (hy_op_num_outputs (op, params), ==, 1);
  return op->def->infer_shape (params, in, n_in, out, 1, error);
}

static void
assert_shape (const hy_shape *got, hy_shape want)
{
  char g[HY_SHAPE_STRLEN], w[HY_SHAPE_STRLEN];
  g_assert_cmpstr (hy_shape_format (got, g, sizeof g), ==,
      hy_shape_format (&want, w, sizeof w));
}

static void
expect_shape_n (const char *op, const char *const *kv, const hy_shape *in,
    int n_in, hy_shape want)
{
  g_autoptr (GError) error = NULL;
  hy_shape out;
  if (!infer (op, kv, in, n_in, &out, &error))
    g_error ("%s: unexpected error: %s", op, error->message);
  assert_shape (&out, want);
}

static void
expect_shape (const char *op, const char *const *kv, hy_shape in,
    hy_shape want)
{
  expect_shape_n (op, kv, &in, 1, want);
}

/* The op must fail (at parse or inference) with `code` and a message
 * containing every needle. */
static void
expect_error (const char *op, const char *const *kv, const hy_shape *in,
    int n_in, int code, const char *needle, const char *needle2)
{
  g_autoptr (GError) error = NULL;
  hy_shape out;
  if (infer (op, kv, in, n_in, &out, &error))
    g_error ("%s: expected an error mentioning \"%s\"", op, needle);
  g_assert_true (error->domain == HY_ERROR);
  g_assert_cmpint (error->code, ==, code);
  if (!strstr (error->message, needle)
      || (needle2 && !strstr (error->message, needle2)))
    g_error ("%s: message \"%s\" lacks \"%s\" or \"%s\"", op,
        error->message, needle, needle2 ? needle2 : "");
}

/* ---- parsing: defaults and refusals ------------------------------------ */

static void
test_scalar_defaults (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree hy_scalar_params *plus = parse ("_plus_scalar", NO_ATTRS,
      &error);
  g_assert_nonnull (plus);
  g_assert_cmpfloat (plus->scalar, ==, 1.0f);     /* MXNet 1.9.1's default */
  g_assert_true (plus->is_int);
  g_assert_cmpint (plus->fn, ==, HY_BINARY_ADD);
  g_assert_false (plus->scalar_first);

  g_autofree hy_scalar_params *rdiv = parse ("_RDivScalar",
      KV ("scalar", "0.5", "is_int", "False"), &error);
  g_assert_nonnull (rdiv);
  g_assert_cmpfloat (rdiv->scalar, ==, 0.5f);
  g_assert_false (rdiv->is_int);
  g_assert_cmpint (rdiv->fn, ==, HY_BINARY_DIV);
  g_assert_true (rdiv->scalar_first);

  hy_shape x = SHAPE (2, 3);
  expect_shape ("_greater_scalar", KV ("scalar", "inf"), x, x);
  expect_error ("_mul_scalar", KV ("scalar", "two"), &x, 1, HY_ERROR_INVALID,
      "'scalar'", "two");
  expect_error ("_mul_scalar", KV ("is_int", "maybe"), &x, 1,
      HY_ERROR_INVALID, "'is_int'", NULL);
}

static void
test_clip_hard_sigmoid (void)
{
  hy_shape x = SHAPE (4, 5);
  expect_shape ("clip", KV ("a_min", "0", "a_max", "6"), x, x);
  expect_error ("clip", KV ("a_max", "6"), &x, 1, HY_ERROR_INVALID,
      "'a_min'", "required");
  expect_error ("clip", KV ("a_min", "0"), &x, 1, HY_ERROR_INVALID,
      "'a_max'", "required");
  expect_error ("clip", KV ("a_min", "0", "a_max", "six"), &x, 1,
      HY_ERROR_INVALID, "'a_max'", "six");

  g_autoptr (GError) error = NULL;
  g_autofree hy_hard_sigmoid_params *hs = parse ("hard_sigmoid", NO_ATTRS,
      &error);
  g_assert_nonnull (hs);
  g_assert_cmpfloat (hs->alpha, ==, 0.2f);
  g_assert_cmpfloat (hs->beta, ==, 0.5f);
  expect_error ("hard_sigmoid", KV ("alpha", "x"), &x, 1, HY_ERROR_INVALID,
      "'alpha'", NULL);
}

static void
test_cast_fill_like (void)
{
  hy_shape x = SHAPE (3);
  expect_shape ("Cast", KV ("dtype", "float16"), x, x);
  expect_shape ("amp_cast", KV ("dtype", "float16"), x, x);
  expect_shape ("cast", KV ("dtype", "'uint8'"), x, x);
  expect_error ("Cast", NO_ATTRS, &x, 1, HY_ERROR_INVALID, "'dtype'",
      "required");
  expect_error ("Cast", KV ("dtype", "float128"), &x, 1, HY_ERROR_INVALID,
      "'dtype'", "float128");
  /* Names we know as dtypes, but MXNet 1.9.1's Cast refuses. */
  expect_error ("Cast", KV ("dtype", "int16"), &x, 1, HY_ERROR_INVALID,
      "'dtype'", "int16");

  g_autoptr (GError) error = NULL;
  g_autofree hy_fill_like_params *ones = parse ("ones_like", NO_ATTRS,
      &error);
  g_autofree hy_fill_like_params *zeros = parse ("zeros_like", NO_ATTRS,
      &error);
  g_assert_cmpfloat (ones->value, ==, 1.0f);
  g_assert_cmpfloat (zeros->value, ==, 0.0f);
  expect_shape ("zeros_like", NO_ATTRS, SHAPE (2, 0, 3), SHAPE (2, 0, 3));
}

static void
test_elementwise_inplace (void)
{
  static const char *const ops[] = { "relu", "_plus_scalar", "elemwise_add",
    "broadcast_mul", "add_n", "clip", "hard_sigmoid", "where", "Cast",
    "ones_like", "softmax" };
  for (size_t i = 0; i < G_N_ELEMENTS (ops); i++)
    g_assert_true (hy_op_lookup (ops[i])->def->inplace);
  g_assert_false (hy_op_lookup ("sum")->def->inplace);
  g_assert_false (hy_op_lookup ("argmax")->def->inplace);
}

/* ---- binary: the hybridize pitfall, and broadcasting ------------------- */

static void
test_elemwise_needs_equal_shapes (void)
{
  hy_shape in[2] = { SHAPE (2, 3), SHAPE (1, 3) };
  expect_shape_n ("elemwise_add", NO_ATTRS, (hy_shape[]) { SHAPE (2, 3),
      SHAPE (2, 3) }, 2, SHAPE (2, 3));
  /* The message names the op to use instead, whatever alias the file
   * spelled. */
  expect_error ("elemwise_add", NO_ATTRS, in, 2, HY_ERROR_SHAPE,
      "broadcast_add", "(2, 3)");
  expect_error ("_plus", NO_ATTRS, in, 2, HY_ERROR_SHAPE, "broadcast_add",
      "does not broadcast");
  expect_error ("_Mul", NO_ATTRS, in, 2, HY_ERROR_SHAPE, "broadcast_mul",
      NULL);
  expect_error ("_maximum", NO_ATTRS, in, 2, HY_ERROR_SHAPE,
      "broadcast_maximum", NULL);
  expect_error ("_lesser_equal", NO_ATTRS, in, 2, HY_ERROR_SHAPE,
      "broadcast_lesser_equal", NULL);
  /* Equal sizes are not enough. */
  hy_shape transposed[2] = { SHAPE (2, 3), SHAPE (3, 2) };
  expect_error ("elemwise_mul", NO_ATTRS, transposed, 2, HY_ERROR_SHAPE,
      "broadcast_mul", NULL);

  hy_shape a[3] = { SHAPE (4), SHAPE (4), SHAPE (5) };
  expect_error ("add_n", KV ("num_args", "3"), a, 3, HY_ERROR_SHAPE,
      "input 2", "(5,)");
  expect_shape_n ("ElementWiseSum", KV ("num_args", "2"), a, 2, SHAPE (4));
  expect_error ("add_n", NO_ATTRS, a, 0, HY_ERROR_INVALID, "'num_args'",
      NULL);
  expect_error ("add_n", KV ("num_args", "0"), a, 0, HY_ERROR_INVALID,
      "'num_args'", NULL);
}

static void
test_broadcast_shapes (void)
{
  static const struct {
    hy_shape a, b, want;
  } *c, cases[] = {
    { { 4, { 2, 3, 4, 5 } }, { 4, { 1, 3, 1, 1 } }, { 4, { 2, 3, 4, 5 } } },
    { { 4, { 2, 3, 4, 5 } }, { 1, { 5 } }, { 4, { 2, 3, 4, 5 } } },
    { { 2, { 3, 1 } }, { 2, { 1, 4 } }, { 2, { 3, 4 } } },
    { { 1, { 1 } }, { 3, { 2, 3, 4 } }, { 3, { 2, 3, 4 } } },
    { { 3, { 2, 1, 4 } }, { 2, { 3, 1 } }, { 3, { 2, 3, 4 } } },
    { { 0, { 0 } }, { 2, { 2, 2 } }, { 2, { 2, 2 } } },
    { { 6, { 2, 1, 3, 1, 4, 1 } }, { 6, { 1, 5, 1, 2, 1, 3 } },
      { 6, { 2, 5, 3, 2, 4, 3 } } },
  };
  for (c = cases; c < cases + G_N_ELEMENTS (cases); c++) {
    expect_shape_n ("broadcast_add", NO_ATTRS, (hy_shape[]) { c->a, c->b }, 2,
        c->want);
    expect_shape_n ("broadcast_greater", NO_ATTRS,
        (hy_shape[]) { c->b, c->a }, 2, c->want);
  }
  hy_shape bad[2] = { SHAPE (2, 3), SHAPE (4) };
  expect_error ("broadcast_mul", NO_ATTRS, bad, 2, HY_ERROR_SHAPE,
      "do not broadcast", "(2, 3)");
}

static void
test_where_shapes (void)
{
  hy_shape x = SHAPE (3, 4);
  expect_shape_n ("where", NO_ATTRS, (hy_shape[]) { x, x, x }, 3, x);
  /* A 1-D condition picks rows. */
  expect_shape_n ("where", NO_ATTRS, (hy_shape[]) { SHAPE (3), x, x }, 3, x);
  expect_error ("where", NO_ATTRS, (hy_shape[]) { SHAPE (4), x, x }, 3,
      HY_ERROR_SHAPE, "condition (4,)", "first dimension");
  expect_error ("where", NO_ATTRS, (hy_shape[]) { SHAPE (3, 1), x, x }, 3,
      HY_ERROR_SHAPE, "condition (3, 1)", NULL);
  expect_error ("where", NO_ATTRS, (hy_shape[]) { x, x, SHAPE (4, 3) }, 3,
      HY_ERROR_SHAPE, "y (4, 3)", NULL);
}

/* ---- softmax ----------------------------------------------------------- */

static void
test_softmax_parse (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree hy_softmax_params *sm = parse ("softmax", NO_ATTRS, &error);
  g_assert_cmpint (sm->axis, ==, -1);
  g_assert_cmpfloat (sm->temperature, ==, 1.0f);
  g_assert_false (sm->log || sm->flat);
  g_autofree hy_softmax_params *ls = parse ("log_softmax",
      KV ("axis", "1", "temperature", "None", "dtype", "float64"), &error);
  g_assert_cmpint (ls->axis, ==, 1);
  g_assert_cmpfloat (ls->temperature, ==, 1.0f);
  g_assert_true (ls->log);
  g_autofree hy_softmax_params *t = parse ("softmax",
      KV ("temperature", "2.5"), &error);
  g_assert_cmpfloat (t->temperature, ==, 2.5f);

  /* Which span each variant normalises. */
  g_autofree hy_softmax_params *inst = parse ("SoftmaxActivation", NO_ATTRS,
      &error);
  g_assert_cmpint (inst->axis, ==, -1);
  g_autofree hy_softmax_params *chan = parse ("SoftmaxActivation",
      KV ("mode", "channel"), &error);
  g_assert_cmpint (chan->axis, ==, 1);
  g_autofree hy_softmax_params *out = parse ("SoftmaxOutput", NO_ATTRS,
      &error);
  g_assert_true (out->flat);
  g_autofree hy_softmax_params *multi = parse ("Softmax",
      KV ("multi_output", "True", "preserve_shape", "True"), &error);
  g_assert_false (multi->flat);
  g_assert_cmpint (multi->axis, ==, 1);
  g_autofree hy_softmax_params *keep = parse ("SoftmaxOutput",
      KV ("preserve_shape", "1", "grad_scale", "2"), &error);
  g_assert_false (keep->flat);
  g_assert_cmpint (keep->axis, ==, -1);
  g_assert_no_error (error);
}

static void
test_softmax_shapes (void)
{
  hy_shape x = SHAPE (2, 3, 4);
  expect_shape ("softmax", KV ("axis", "-3"), x, x);
  expect_error ("softmax", KV ("axis", "3"), &x, 1, HY_ERROR_SHAPE,
      "'axis' = 3", "-3 to 2");
  expect_error ("log_softmax", KV ("axis", "one"), &x, 1, HY_ERROR_INVALID,
      "'axis'", NULL);
  expect_error ("softmax", KV ("temperature", "hot"), &x, 1,
      HY_ERROR_INVALID, "'temperature'", NULL);
  expect_error ("softmax", KV ("use_length", "True"), &x, 1,
      HY_ERROR_UNSUPPORTED, "'use_length'", NULL);
  expect_error ("SoftmaxActivation", KV ("mode", "spatial"), &x, 1,
      HY_ERROR_INVALID, "'mode'", "instance|channel");
  expect_error ("SoftmaxActivation", KV ("mode", "channel"),
      (hy_shape[]) { SHAPE (2, 3) }, 1, HY_ERROR_SHAPE, "channel", "(2, 3)");

  /* SoftmaxOutput's label is never read: it may have no shape at all. */
  const hy_op_info *op = hy_op_lookup ("SoftmaxOutput");
  g_assert_cmphex (op->def->unused_inputs, ==, 1u << 1);
  char buf[16];
  g_autoptr (GError) error = NULL;
  g_autofree void *params = parse ("SoftmaxOutput", NO_ATTRS, &error);
  g_assert_cmpstr (hy_op_input_name (op, params, 1, buf, sizeof buf), ==,
      "label");
  hy_shape unknown = { .ndim = -1 };
  expect_shape_n ("SoftmaxOutput", NO_ATTRS, (hy_shape[]) { x, unknown }, 2,
      x);
  expect_error ("SoftmaxOutput", KV ("multi_output", "True"),
      (hy_shape[]) { SHAPE (5), unknown }, 2, HY_ERROR_SHAPE,
      "'multi_output'", "(5,)");
}

/* ---- reductions -------------------------------------------------------- */

static void
test_reduce_shapes (void)
{
  hy_shape x = SHAPE (2, 3, 4, 5);
  expect_shape ("sum", NO_ATTRS, x, SHAPE (1));
  expect_shape ("mean", KV ("axis", "None"), x, SHAPE (1));
  expect_shape ("max", KV ("keepdims", "True"), x, SHAPE (1, 1, 1, 1));
  expect_shape ("sum", KV ("axis", "1"), x, SHAPE (2, 4, 5));
  expect_shape ("min", KV ("axis", "(1,)"), x, SHAPE (2, 4, 5));
  expect_shape ("prod", KV ("axis", "(2, 3)", "keepdims", "1"), x,
      SHAPE (2, 3, 1, 1));
  expect_shape ("sum", KV ("axis", "(-1, 0)"), x, SHAPE (3, 4));
  expect_shape ("sum_axis", KV ("axis", "(0, 1)", "exclude", "True"), x,
      SHAPE (2, 3));
  expect_shape ("max_axis", KV ("axis", "1", "exclude", "True",
          "keepdims", "True"), x, SHAPE (1, 3, 1, 1));
  /* MXNet 1.9.1: () is every axis, with or without exclude; excluding
   * every listed axis reduces none. */
  expect_shape ("sum", KV ("axis", "()"), x, SHAPE (1));
  expect_shape ("sum", KV ("axis", "()", "exclude", "True"), x, SHAPE (1));
  expect_shape ("mean", KV ("axis", "(0, 1, 2, 3)", "exclude", "1"), x, x);
  expect_shape ("sum", KV ("axis", "0"), SHAPE (7), SHAPE (1));

  expect_error ("sum", KV ("axis", "(1, -3)"), &x, 1, HY_ERROR_SHAPE,
      "'axis' = (1, -3)", "same axis twice");
  expect_error ("mean", KV ("axis", "4"), &x, 1, HY_ERROR_SHAPE,
      "'axis' = (4,)", "(2, 3, 4, 5)");
  expect_error ("max", KV ("axis", "(0, 1, 2, 3, 4, 5, 6)"), &x, 1,
      HY_ERROR_INVALID, "'axis'", "at most 6");
  expect_error ("sum", KV ("axis", "(a)"), &x, 1, HY_ERROR_INVALID,
      "'axis'", NULL);
  expect_error ("sum", KV ("keepdims", "yes"), &x, 1, HY_ERROR_INVALID,
      "'keepdims'", NULL);
}

static void
test_arg_reduce_shapes (void)
{
  hy_shape x = SHAPE (2, 3, 4);
  expect_shape ("argmax", NO_ATTRS, x, SHAPE (1));
  expect_shape ("argmin", KV ("axis", "None", "keepdims", "True"), x,
      SHAPE (1, 1, 1));
  expect_shape ("argmax", KV ("axis", "1"), x, SHAPE (2, 4));
  expect_shape ("argmax", KV ("axis", "-1", "keepdims", "True"), x,
      SHAPE (2, 3, 1));
  expect_shape ("argmin", KV ("axis", "0"), SHAPE (5), SHAPE (1));
  expect_error ("argmax", KV ("axis", "3"), &x, 1, HY_ERROR_SHAPE,
      "'axis' = 3", "-3 to 2");
  expect_error ("argmax", KV ("axis", "(1, 2)"), &x, 1, HY_ERROR_INVALID,
      "'axis'", NULL);
}

/* ---- kernels against naive loops --------------------------------------- */

static void
run_kernel (const char *op_name, const char *const *kv, hy_tensor **in,
    int n_in, hy_tensor *out)
{
  g_autoptr (GError) error = NULL;
  const hy_op_info *op = hy_op_lookup (op_name);
  g_autofree void *params = parse (op_name, kv, &error);
  g_assert_no_error (error);
  hy_cpu_kernel_fn fn = hy_cpu_kernel_for (op->id);
  g_assert_nonnull (fn);
  hy_cpu_ctx ctx = { 0 };
  fn (&ctx, params, (const hy_tensor *const *) in, n_in, &out, 1);
  hy_cpu_ctx_clear (&ctx);
}

static hy_tensor *
random_tensor (GRand *rng, hy_shape s)
{
  hy_tensor *t = hy_tensor_new (&s);
  for (int64_t i = 0; i < hy_shape_numel (&s); i++)
    t->data[i] = (float) g_rand_double_range (rng, -4.0, 4.0);
  return t;
}

/* Element `flat` of `out` seen from an operand of shape s (right-aligned,
 * size-1 axes broadcast). */
static int64_t
operand_index (const hy_shape *s, const hy_shape *out, int64_t flat)
{
  int64_t idx = 0, step = 1;
  for (int i = out->ndim - 1; i >= 0; i--) {
    const int64_t coord = flat % out->dims[i];
    flat /= out->dims[i];
    const int k = s->ndim - out->ndim + i;
    if (k < 0)
      continue;
    if (s->dims[k] != 1)
      idx += coord * step;
    step *= s->dims[k];
  }
  return idx;
}

static void
test_broadcast_kernel (void)
{
  static const struct {
    hy_shape a, b;
  } cases[] = {
    { { 4, { 2, 3, 4, 5 } }, { 4, { 1, 3, 1, 1 } } },
    { { 4, { 2, 3, 4, 5 } }, { 4, { 2, 3, 1, 1 } } },
    { { 4, { 2, 3, 4, 5 } }, { 2, { 4, 1 } } },
    { { 4, { 2, 1, 4, 1 } }, { 4, { 1, 3, 1, 5 } } },
    { { 2, { 3, 1 } }, { 2, { 1, 4 } } },
    { { 1, { 1 } }, { 2, { 2, 3 } } },
    { { 6, { 2, 3, 1, 5, 1, 2 } }, { 6, { 1, 3, 4, 1, 6, 1 } } },
    { { 3, { 1, 1, 1 } }, { 1, { 1 } } },
    { { 3, { 4, 1, 3 } }, { 3, { 4, 2, 3 } } },
  };
  static const char *const ops[] = { "broadcast_sub", "broadcast_div",
    "broadcast_maximum", "broadcast_lesser" };
  GRand *rng = g_rand_new_with_seed (7);
  for (size_t c = 0; c < G_N_ELEMENTS (cases); c++) {
    for (int swap = 0; swap < 2; swap++) {
      const hy_shape *sa = swap ? &cases[c].b : &cases[c].a;
      const hy_shape *sb = swap ? &cases[c].a : &cases[c].b;
      hy_shape so;
      g_assert_true (hy_broadcast_shapes (sa, sb, &so, NULL));
      hy_tensor *a = random_tensor (rng, *sa), *b = random_tensor (rng, *sb);
      hy_tensor *out = hy_tensor_new (&so);
      for (size_t k = 0; k < G_N_ELEMENTS (ops); k++) {
        run_kernel (ops[k], NO_ATTRS, (hy_tensor *[]) { a, b }, 2, out);
        for (int64_t i = 0; i < hy_shape_numel (&so); i++) {
          const float x = a->data[operand_index (sa, &so, i)];
          const float y = b->data[operand_index (sb, &so, i)];
          const float want = k == 0 ? x - y : k == 1 ? x / y
              : k == 2 ? (x > y ? x : y) : (x < y ? 1.0f : 0.0f);
          g_assert_cmpfloat (out->data[i], ==, want);
        }
      }
      hy_tensor_free (a);
      hy_tensor_free (b);
      hy_tensor_free (out);
    }
  }
  g_rand_free (rng);
}

static void
test_binary_in_place (void)
{
  GRand *rng = g_rand_new_with_seed (3);
  hy_tensor *a = random_tensor (rng, SHAPE (2, 3, 4, 5));
  hy_tensor *b = random_tensor (rng, SHAPE (1, 3, 1, 1));
  hy_tensor *ref = hy_tensor_copy (a);
  run_kernel ("broadcast_mul", NO_ATTRS, (hy_tensor *[]) { a, b }, 2, a);
  for (int64_t i = 0; i < 120; i++)
    g_assert_cmpfloat (a->data[i], ==, ref->data[i] * b->data[(i / 20) % 3]);
  hy_tensor_free (a);
  hy_tensor_free (b);
  hy_tensor_free (ref);
  g_rand_free (rng);
}

/* A naive reduction of x over the axes in `mask`: the sum, max and
 * (first) argmax of each output position, in double. */
static void
naive_reduce (const hy_tensor *x, uint32_t mask, double *sum, float *max)
{
  const hy_shape *s = &x->shape;
  int64_t n_out = 1;
  for (int i = 0; i < s->ndim; i++)
    if (!(mask & (1u << i)))
      n_out *= s->dims[i];
  for (int64_t o = 0; o < n_out; o++) {
    sum[o] = 0.0;
    max[o] = -INFINITY;
  }
  for (int64_t flat = 0; flat < hy_shape_numel (s); flat++) {
    int64_t rest = flat, o = 0, step = 1;
    for (int i = s->ndim - 1; i >= 0; i--) {
      const int64_t coord = rest % s->dims[i];
      rest /= s->dims[i];
      if (!(mask & (1u << i))) {
        o += coord * step;
        step *= s->dims[i];
      }
    }
    sum[o] += x->data[flat];
    if (x->data[flat] > max[o])
      max[o] = x->data[flat];
  }
}

static void
test_reduce_kernel (void)
{
  static const struct {
    const char *axis;
    uint32_t mask;              /* over (2, 3, 4, 5, 2) */
  } cases[] = {
    { "1", 0x2 }, { "4", 0x10 }, { "(0, 2, 4)", 0x15 }, { "(1, 3)", 0xa },
    { "(2, 3)", 0xc }, { "None", 0x1f }, { "(0, 1, 2, 3)", 0xf },
  };
  GRand *rng = g_rand_new_with_seed (11);
  hy_tensor *x = random_tensor (rng, SHAPE (2, 3, 4, 5, 2));
  for (size_t c = 0; c < G_N_ELEMENTS (cases); c++) {
    hy_shape so;
    g_autoptr (GError) error = NULL;
    g_assert_true (infer ("sum", KV ("axis", cases[c].axis), &x->shape, 1,
            &so, &error));
    const int64_t n = hy_shape_numel (&so);
    double *sum = g_new (double, n);
    float *max = g_new (float, n);
    naive_reduce (x, cases[c].mask, sum, max);
    int64_t count = hy_shape_numel (&x->shape) / n;

    hy_tensor *out = hy_tensor_new (&so);
    run_kernel ("sum", KV ("axis", cases[c].axis), &x, 1, out);
    for (int64_t i = 0; i < n; i++)
      g_assert_cmpfloat_with_epsilon (out->data[i], sum[i], 1e-4);
    run_kernel ("mean", KV ("axis", cases[c].axis), &x, 1, out);
    for (int64_t i = 0; i < n; i++)
      g_assert_cmpfloat_with_epsilon (out->data[i], sum[i] / count, 1e-5);
    run_kernel ("max", KV ("axis", cases[c].axis), &x, 1, out);
    for (int64_t i = 0; i < n; i++)
      g_assert_cmpfloat (out->data[i], ==, max[i]);
    hy_tensor_free (out);
    g_free (sum);
    g_free (max);
  }
  hy_tensor_free (x);
  g_rand_free (rng);
}

static void
test_arg_reduce_kernel (void)
{
  GRand *rng = g_rand_new_with_seed (5);
  hy_tensor *x = random_tensor (rng, SHAPE (3, 4, 5));
  /* Ties and NaN: the first extreme wins, and NaN beats every number. */
  x->data[1 * 5 + 2] = 9.0f;            /* (0, 1, 2) */
  x->data[3 * 5 + 2] = 9.0f;            /* (0, 3, 2) */
  x->data[20 + 2 * 5 + 4] = NAN;        /* (1, 2, 4) */
  hy_shape so = SHAPE (3, 5);
  hy_tensor *out = hy_tensor_new (&so);
  run_kernel ("argmax", KV ("axis", "1"), &x, 1, out);
  for (int a = 0; a < 3; a++) {
    for (int c = 0; c < 5; c++) {
      int best = 0;
      for (int b = 1; b < 4; b++) {
        const float v = x->data[a * 20 + b * 5 + c];
        const float m = x->data[a * 20 + best * 5 + c];
        if (!isnan (m) && (isnan (v) || v > m))
          best = b;
      }
      g_assert_cmpfloat (out->data[a * 5 + c], ==, (float) best);
    }
  }
  g_assert_cmpfloat (out->data[2], ==, 1.0f);
  g_assert_cmpfloat (out->data[5 + 4], ==, 2.0f);
  hy_tensor_free (out);
  hy_tensor_free (x);
  g_rand_free (rng);
}

/* Softmax along every axis: each span sums to 1, log_softmax is its log,
 * and the result does not depend on whether it runs in place. */
static void
test_softmax_kernel (void)
{
  GRand *rng = g_rand_new_with_seed (13);
  hy_tensor *x = random_tensor (rng, SHAPE (2, 3, 4));
  hy_tensor *out = hy_tensor_new (&x->shape);
  hy_tensor *log_out = hy_tensor_new (&x->shape);
  static const char *const axes[] = { "0", "1", "2" };
  const int64_t stride[] = { 12, 4, 1 }, size[] = { 2, 3, 4 };
  for (int k = 0; k < 3; k++) {
    run_kernel ("softmax", KV ("axis", axes[k]), &x, 1, out);
    run_kernel ("log_softmax", KV ("axis", axes[k]), &x, 1, log_out);
    for (int64_t i = 0; i < 24; i++) {
      if ((i / stride[k]) % size[k] != 0)
        continue;               /* i starts a span */
      double total = 0.0;
      for (int64_t j = 0; j < size[k]; j++)
        total += out->data[i + j * stride[k]];
      g_assert_cmpfloat_with_epsilon (total, 1.0, 1e-6);
    }
    for (int64_t i = 0; i < 24; i++)
      g_assert_cmpfloat_with_epsilon (log_out->data[i], logf (out->data[i]),
          1e-5);
    hy_tensor *copy = hy_tensor_copy (x);
    run_kernel ("softmax", KV ("axis", axes[k]), &copy, 1, copy);
    g_assert_cmpmem (copy->data, 24 * sizeof (float), out->data,
        24 * sizeof (float));
    hy_tensor_free (copy);
  }
  hy_tensor_free (x);
  hy_tensor_free (out);
  hy_tensor_free (log_out);
  g_rand_free (rng);
}

/* Cast to float16 must round exactly as a real half-precision store. */
static void
test_cast_float16_kernel (void)
{
#ifdef __FLT16_MAX__
  GRand *rng = g_rand_new_with_seed (17);
  hy_shape s = SHAPE (4096);
  hy_tensor *x = hy_tensor_new (&s), *out = hy_tensor_new (&s);
  for (int i = 0; i < 4096; i++) {
    /* Magnitudes from subnormal half to past its overflow. */
    const double mag = exp2 (g_rand_double_range (rng, -27.0, 17.0));
    x->data[i] = (float) (g_rand_boolean (rng) ? mag : -mag);
  }
  const float edges[] = { 65504.0f, 65519.0f, 65520.0f, 2049.0f, 2051.0f,
    0x1p-24f, 0x1p-25f, 0x1.8p-25f, 0x1p-14f, 0x1.ffcp-15f, 0.0f, -0.0f };
  memcpy (x->data, edges, sizeof edges);
  run_kernel ("Cast", KV ("dtype", "float16"), &x, 1, out);
  for (int i = 0; i < 4096; i++)
    g_assert_cmpfloat (out->data[i], ==, (float) (_Float16) x->data[i]);
  hy_tensor_free (x);
  hy_tensor_free (out);
  g_rand_free (rng);
#else
  g_test_skip ("the compiler has no _Float16 to compare with");
#endif
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ops-elementwise/scalar/defaults", test_scalar_defaults);
  g_test_add_func ("/ops-elementwise/clip-hard-sigmoid",
      test_clip_hard_sigmoid);
  g_test_add_func ("/ops-elementwise/cast-fill-like", test_cast_fill_like);
  g_test_add_func ("/ops-elementwise/inplace", test_elementwise_inplace);
  g_test_add_func ("/ops-elementwise/binary/elemwise-needs-equal-shapes",
      test_elemwise_needs_equal_shapes);
  g_test_add_func ("/ops-elementwise/binary/broadcast-shapes",
      test_broadcast_shapes);
  g_test_add_func ("/ops-elementwise/where", test_where_shapes);
  g_test_add_func ("/ops-elementwise/softmax/parse", test_softmax_parse);
  g_test_add_func ("/ops-elementwise/softmax/shapes", test_softmax_shapes);
  g_test_add_func ("/ops-elementwise/reduce/shapes", test_reduce_shapes);
  g_test_add_func ("/ops-elementwise/arg-reduce/shapes",
      test_arg_reduce_shapes);
  g_test_add_func ("/ops-elementwise/kernel/broadcast",
      test_broadcast_kernel);
  g_test_add_func ("/ops-elementwise/kernel/binary-in-place",
      test_binary_in_place);
  g_test_add_func ("/ops-elementwise/kernel/reduce", test_reduce_kernel);
  g_test_add_func ("/ops-elementwise/kernel/arg-reduce",
      test_arg_reduce_kernel);
  g_test_add_func ("/ops-elementwise/kernel/softmax", test_softmax_kernel);
  g_test_add_func ("/ops-elementwise/kernel/cast-float16",
      test_cast_float16_kernel);
  return g_test_run ();
}
