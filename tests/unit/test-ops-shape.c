/*
 * test-ops-shape.c — attribute parsing and shape inference of the
 * data-movement ops (Reshape codes, slice bounds, Concat/split checks, …),
 * and their CPU kernels against naive index arithmetic.
 *
 * The expected shapes are facts of MXNet 1.9.1's op definitions (checked
 * against it), not model outputs.
 */
#include <string.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/shape.h"

#define SHAPE(...) shape_of ((const int64_t[]) { __VA_ARGS__ }, \
    sizeof ((const int64_t[]) { __VA_ARGS__ }) / sizeof (int64_t))

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

/* Parses `op` with attributes kv (key, value, …, NULL) and infers its
 * outputs for inputs in[0..n_in).  Returns the output count, or -1 with
 * *error set. */
static int
infer (const char *op_name, const char *const *kv, const hy_shape *in,
    int n_in, hy_shape *out, GError **error)
{
  const hy_op_info *op = hy_op_lookup (op_name);
  g_assert_nonnull (op);
  g_assert_nonnull (op->def);
  g_autoptr (GHashTable) attrs = attrs_of (kv);
  g_autofree void *params = hy_op_params_new (op, attrs, error);
  if (!params)
    return -1;
  g_assert_cmpint (hy_op_num_inputs (op, params), ==, n_in);
  int n_out = hy_op_num_outputs (op, params);
  g_assert_cmpint (n_out, <=, 8);
  if (!op->def->infer_shape (params, in, n_in, out, n_out, error))
    return -1;
  return n_out;
}

static void
assert_shape (const hy_shape *got, hy_shape want)
{
  char g[HY_SHAPE_STRLEN], w[HY_SHAPE_STRLEN];
  g_assert_cmpstr (hy_shape_format (got, g, sizeof g), ==,
      hy_shape_format (&want, w, sizeof w));
}

/* One op, one input: the output shape must be `want`. */
static void
expect_shape (const char *op, const char *const *kv, hy_shape in,
    hy_shape want)
{
  g_autoptr (GError) error = NULL;
  hy_shape out[8];
  int n = infer (op, kv, &in, 1, out, &error);
  if (n < 0)
    g_error ("%s: unexpected error: %s", op, error->message);
  assert_shape (&out[0], want);
}

/* The op must fail (at parse or inference) with a message containing
 * `needle`. */
static void
expect_error (const char *op, const char *const *kv, const hy_shape *in,
    int n_in, const char *needle)
{
  g_autoptr (GError) error = NULL;
  hy_shape out[8];
  int n = infer (op, kv, in, n_in, out, &error);
  if (n >= 0)
    g_error ("%s: expected an error mentioning \"%s\"", op, needle);
  g_assert_true (error->domain == HY_ERROR);
  if (!strstr (error->message, needle))
    g_error ("%s: message \"%s\" lacks \"%s\"", op, error->message, needle);
}

#define KV(...) ((const char *const[]) { __VA_ARGS__, NULL })

/* ---- Reshape ------------------------------------------------------------ */

static void
test_reshape_codes (void)
{
  hy_shape x = SHAPE (2, 3, 4);
  expect_shape ("Reshape", KV ("shape", "(4, 0, 2)"), x, SHAPE (4, 3, 2));
  expect_shape ("Reshape", KV ("shape", "(2, 0, 0)"), x, SHAPE (2, 3, 4));
  expect_shape ("Reshape", KV ("shape", "(6, 1, -1)"), x, SHAPE (6, 1, 4));
  expect_shape ("Reshape", KV ("shape", "(3, -1, 8)"), x, SHAPE (3, 1, 8));
  expect_shape ("Reshape", KV ("shape", "(-1,)"), x, SHAPE (24));
  expect_shape ("reshape", KV ("shape", "(-2,)"), x, SHAPE (2, 3, 4));
  expect_shape ("Reshape", KV ("shape", "(2, -2)"), x, SHAPE (2, 3, 4));
  expect_shape ("Reshape", KV ("shape", "(-2, 1, 1)"), x,
      SHAPE (2, 3, 4, 1, 1));
  expect_shape ("Reshape", KV ("shape", "(-3, 4)"), x, SHAPE (6, 4));
  expect_shape ("Reshape", KV ("shape", "(-3, -3)"), SHAPE (2, 3, 4, 5),
      SHAPE (6, 20));
  expect_shape ("Reshape", KV ("shape", "(0, -3)"), x, SHAPE (2, 12));
  expect_shape ("Reshape", KV ("shape", "(-4, 1, 2, -2)"), x,
      SHAPE (1, 2, 3, 4));
  expect_shape ("Reshape", KV ("shape", "(2, -4, -1, 3, -2)"), x,
      SHAPE (2, 1, 3, 4));
  expect_shape ("Reshape", KV ("shape", "(-4, -1, 1, -2)"), x,
      SHAPE (2, 1, 3, 4));
  expect_shape ("Reshape", KV ("shape", "(0, -4, 3, -1, 0)"),
      SHAPE (2, 12, 5), SHAPE (2, 3, 4, 5));
  expect_shape ("Reshape", KV ("shape", "(-4, 2, -1, -3)"), x,
      SHAPE (2, 1, 12));
  /* -1 and positive sizes consume an input axis, so a later 0 copies the
   * axis after it. */
  expect_shape ("Reshape", KV ("shape", "(0, 0, 0, -1)"), x,
      SHAPE (2, 3, 4, 1));
  /* MXNet stores an inferred size at the -1's index among the codes, not
   * at its output axis: after a -2 that only works when the axis it lands
   * on has length 1. */
  expect_shape ("Reshape", KV ("shape", "(-2, -1)"), SHAPE (2, 1, 3),
      SHAPE (2, 1, 3, 1));
  expect_shape ("Reshape", KV ("shape", "(-1, -2)"), x, SHAPE (2, 3, 4));
  expect_shape ("Reshape", KV ("shape", "(24, 0)"), SHAPE (24, 1),
      SHAPE (24, 1));
  expect_shape ("Reshape", KV ("shape", "(0, -1)"), SHAPE (2, 3, 4, 5),
      SHAPE (2, 60));
  expect_shape ("Reshape", KV ("shape", "[-1, 5]"), SHAPE (2, 3, 4, 5),
      SHAPE (24, 5));
}

static void
test_reshape_reverse (void)
{
  expect_shape ("Reshape", KV ("shape", "(-1, 0)", "reverse", "True"),
      SHAPE (10, 5, 4), SHAPE (50, 4));
  expect_shape ("Reshape", KV ("shape", "(-1, 0)", "reverse", "False"),
      SHAPE (10, 5, 4), SHAPE (40, 5));
  /* Reversed, (0, -1) reads (-1, 0) over (5, 4, 3, 2): the 0 copies the
   * 4, not the 5. */
  expect_shape ("Reshape", KV ("shape", "(0, -1)", "reverse", "1"),
      SHAPE (2, 3, 4, 5), SHAPE (4, 30));
  expect_shape ("Reshape", KV ("shape", "(-1, 0)", "reverse", "1"),
      SHAPE (2, 3, 4, 5), SHAPE (24, 5));
  hy_shape x = SHAPE (2, 3, 4);
  expect_shape ("Reshape", KV ("shape", "(2, -1, 0)", "reverse", "True"), x,
      SHAPE (2, 3, 4));
  expect_shape ("Reshape", KV ("shape", "(-3, 0)", "reverse", "True"), x,
      SHAPE (6, 4));
  expect_shape ("Reshape", KV ("shape", "(0, -3)", "reverse", "True"), x,
      SHAPE (2, 12));
  /* Reversed, -4 reads its two sizes from the reversed list: here it is
   * last, with nothing after it. */
  expect_error ("Reshape", KV ("shape", "(-4, -1, 2, -2)", "reverse", "True"),
      &x, 1, "-4 at position 0 must be followed by the two sizes");
}

static void
test_reshape_legacy_target_shape (void)
{
  hy_shape x = SHAPE (2, 3, 4);
  expect_shape ("Reshape", KV ("target_shape", "(0, 4)"), x, SHAPE (6, 4));
  expect_shape ("Reshape", KV ("target_shape", "(6, 0)"), x, SHAPE (6, 4));
  expect_shape ("Reshape", KV ("shape", "()", "target_shape", "(3, 8)"), x,
      SHAPE (3, 8));
  expect_shape ("Reshape", KV ("target_shape", "(5, 0, 4)",
          "keep_highest", "True"), x, SHAPE (2, 3, 4));
  expect_shape ("Reshape", KV ("target_shape", "(1, 0, 2)",
          "keep_highest", "True"), x, SHAPE (2, 6, 2));
  /* `shape` wins when both are given. */
  expect_shape ("Reshape", KV ("shape", "(-1,)", "target_shape", "(3, 8)"),
      x, SHAPE (24));
  expect_error ("Reshape", KV ("target_shape", "(0, 0)"), &x, 1,
      "more than one 0");
  expect_error ("Reshape", KV ("target_shape", "(3, 9)"), &x, 1,
      "cannot reshape (2, 3, 4) (24 elements) to (3, 9) (27 elements)");
  expect_error ("Reshape", KV ("target_shape", "(-1, 4)"), &x, 1,
      "'target_shape' entry 0 is -1");
}

static void
test_reshape_errors (void)
{
  hy_shape x = SHAPE (2, 3, 4);
  expect_error ("Reshape", KV ("shape", "(5, 5)"), &x, 1,
      "cannot reshape (2, 3, 4) (24 elements) to (5, 5) (25 elements)");
  expect_error ("Reshape", KV ("shape", "(-1, -1)"), &x, 1,
      "more than one -1 (positions 0 and 1)");
  expect_error ("Reshape", KV ("shape", "(-1, 0, -1)"), &x, 1,
      "more than one -1 (positions 0 and 2)");
  expect_error ("Reshape", KV ("shape", "(-2, -1)"), &x, 1,
      "MXNet 1.9.1 stores the size inferred for the -1 at position 1 in "
      "slot 1 of the 4-axis result, not at the -1's own axis, giving "
      "(2, 1, 4, 1)");
  expect_error ("Reshape", KV ("shape", "(-4, 1, 2, -1)"), &x, 1,
      "in slot 3 of the 3-axis result");
  /* A slot past the end loses the store: fine when the -1 stands for 1. */
  expect_shape ("Reshape", KV ("shape", "(0, -2, -1)"), SHAPE (6),
      SHAPE (6, 1));
  expect_error ("Reshape", KV ("shape", "(5, -1)"), &x, 1,
      "cannot infer the -1 size");
  expect_error ("Reshape", KV ("shape", "(0, 0, 0, 0)"), &x, 1,
      "code 0 at position 3 copies an input axis, but the codes before "
      "it used up the input's 3 axes");
  expect_error ("Reshape", KV ("shape", "(-3, -3)"), &x, 1,
      "code -3 at position 1 merges two input axes");
  expect_error ("Reshape", KV ("shape", "(-4, -1, -1, 0, 0)"), &x, 1,
      "cannot both be -1");
  expect_error ("Reshape", KV ("shape", "(-4, 4, 2, 0, 0)"), &x, 1,
      "cannot split input axis 0 of length 2 into 4 x 2");
  expect_error ("Reshape", KV ("shape", "(2, -4, -1, 2, -2)"), &x, 1,
      "cannot split input axis 1 of length 3 into -1 x 2");
  expect_error ("Reshape", KV ("shape", "(2, -4, -1, 0, -2)"), &x, 1,
      "cannot split input axis 1");
  expect_error ("Reshape", KV ("shape", "(0, 0, 0, 1)", "reverse", "1"),
      &x, 1, "code 0 at position 0 copies an input axis, but the codes "
      "before it used up the input's 3 axes (matching from the right)");
  expect_error ("Reshape", KV ("shape", "(-4, 1)"), &x, 1,
      "must be followed by the two sizes");
  expect_error ("Reshape", KV ("shape", "(-5,)"), &x, 1,
      "'shape' entry 0 is -5");
  expect_error ("Reshape", KV ("shape", "(a, b)"), &x, 1,
      "attribute 'shape'");
  expect_error ("Reshape", NULL, &x, 1, "attribute 'shape' is required");
  expect_error ("Reshape", KV ("shape", "(-2, 1, 1, 1, 1)"), &x, 1,
      "would have 7 dimensions");
}

/* ---- shape-only ops ----------------------------------------------------- */

static void
test_flatten_expand_squeeze (void)
{
  expect_shape ("Flatten", NULL, SHAPE (2, 3, 4, 5), SHAPE (2, 60));
  expect_shape ("flatten", NULL, SHAPE (5), SHAPE (5, 1));
  expect_shape ("expand_dims", KV ("axis", "-1"), SHAPE (2, 3, 4),
      SHAPE (2, 3, 4, 1));
  expect_shape ("expand_dims", KV ("axis", "-4"), SHAPE (2, 3, 4),
      SHAPE (1, 2, 3, 4));
  expect_shape ("expand_dims", KV ("axis", "1"), SHAPE (2, 3, 4),
      SHAPE (2, 1, 3, 4));
  hy_shape x = SHAPE (2, 3, 4);
  expect_error ("expand_dims", KV ("axis", "4"), &x, 1, "must be in [-4, 3]");
  expect_error ("expand_dims", NULL, &x, 1, "attribute 'axis' is required");

  expect_shape ("squeeze", NULL, SHAPE (2, 1, 3, 1), SHAPE (2, 3));
  expect_shape ("squeeze", KV ("axis", "None"), SHAPE (2, 1, 3, 1),
      SHAPE (2, 3));
  expect_shape ("squeeze", KV ("axis", "(-1,)"), SHAPE (2, 1, 3, 1),
      SHAPE (2, 1, 3));
  expect_shape ("squeeze", KV ("axis", "1"), SHAPE (2, 1, 3, 1),
      SHAPE (2, 3, 1));
  expect_shape ("squeeze", NULL, SHAPE (1, 1), SHAPE (1));
  hy_shape y = SHAPE (2, 1, 3, 1);
  expect_error ("squeeze", KV ("axis", "(0,)"), &y, 1,
      "cannot squeeze axis 0");
  expect_error ("squeeze", KV ("axis", "(1, -3)"), &y, 1, "axis 1 twice");
}

static void
test_identity_family (void)
{
  expect_shape ("_copy", NULL, SHAPE (2, 3), SHAPE (2, 3));
  expect_shape ("identity", NULL, SHAPE (2, 3), SHAPE (2, 3));
  expect_shape ("BlockGrad", NULL, SHAPE (2, 3), SHAPE (2, 3));
  expect_shape ("Dropout", KV ("p", "0.2", "mode", "training", "axes", "()",
          "cudnn_off", "None"), SHAPE (2, 3), SHAPE (2, 3));
  expect_shape ("Dropout", KV ("p", "0", "mode", "always"), SHAPE (2, 3),
      SHAPE (2, 3));
  expect_shape ("Dropout", KV ("cudnn_off", "True"), SHAPE (2, 3),
      SHAPE (2, 3));
  hy_shape x = SHAPE (2, 3);
  expect_error ("Dropout", KV ("p", "0.5", "mode", "always"), &x, 1,
      "mode' = 'always'");
  expect_error ("Dropout", KV ("p", "1.5"), &x, 1, "attribute 'p'");
  expect_error ("Dropout", KV ("mode", "sometimes"), &x, 1,
      "attribute 'mode'");
  g_assert_true (hy_op_lookup ("Dropout")->def->inplace);
  g_assert_true (hy_op_lookup ("Reshape")->def->inplace);
  g_assert_false (hy_op_lookup ("transpose")->def->inplace);
}

static void
test_transpose (void)
{
  expect_shape ("transpose", NULL, SHAPE (2, 3, 4), SHAPE (4, 3, 2));
  expect_shape ("transpose", KV ("axes", "()"), SHAPE (2, 3), SHAPE (3, 2));
  expect_shape ("transpose", KV ("axes", "(0, 2, 3, 1)"), SHAPE (2, 3, 4, 5),
      SHAPE (2, 4, 5, 3));
  hy_shape x = SHAPE (2, 3, 4);
  expect_error ("transpose", KV ("axes", "(1, 0)"), &x, 1,
      "'axes' has 2 entries but the input shape (2, 3, 4) has 3");
  expect_error ("transpose", KV ("axes", "(0, 0, 1)"), &x, 1,
      "permutation of 0..2, got axis 0 at position 1 twice");
  expect_error ("transpose", KV ("axes", "(0, 1, 3)"), &x, 1,
      "permutation of 0..2, got axis 3");
  expect_error ("transpose", KV ("axes", "(0, -1, 1)"), &x, 1,
      "'axes' entry 1 is -1");
}

static void
test_swap_axis (void)
{
  expect_shape ("SwapAxis", NULL, SHAPE (2, 3, 4), SHAPE (2, 3, 4));
  expect_shape ("SwapAxis", KV ("dim1", "0", "dim2", "2"), SHAPE (2, 3, 4),
      SHAPE (4, 3, 2));
  expect_shape ("swapaxes", KV ("dim1", "-1", "dim2", "1"), SHAPE (2, 3, 4),
      SHAPE (2, 4, 3));
  hy_shape x = SHAPE (2, 3, 4);
  expect_error ("SwapAxis", KV ("dim1", "3"), &x, 1,
      "'dim1' is 3, out of range for the input shape (2, 3, 4)");
  expect_error ("SwapAxis", KV ("dim2", "-4"), &x, 1,
      "'dim2' is -4, out of range");
  expect_error ("SwapAxis", KV ("dim1", "x"), &x, 1, "'dim1'");
}

/* ---- slice, slice_axis -------------------------------------------------- */

static void
test_slice (void)
{
  hy_shape x = SHAPE (4, 5, 6);
  expect_shape ("slice", KV ("begin", "(1, 0, 2)", "end", "(3, 4, 5)"), x,
      SHAPE (2, 4, 3));
  expect_shape ("slice", KV ("begin", "(1, None, 0)", "end",
          "(3, None, None)"), x, SHAPE (2, 5, 6));
  expect_shape ("crop", KV ("begin", "(-3, 0)", "end", "(-1, -2)"), x,
      SHAPE (2, 3, 6));
  expect_shape ("slice", KV ("begin", "(0, None, 1)", "end",
          "(None, None, None)", "step", "(2, None, 2)"), x, SHAPE (2, 5, 3));
  expect_shape ("slice", KV ("begin", "(None,)", "end", "(None,)", "step",
          "(-1,)"), x, SHAPE (4, 5, 6));
  expect_shape ("slice", KV ("begin", "(3, None, 4)", "end", "(0, None, None)",
          "step", "(-1, 2, -2)"), x, SHAPE (3, 3, 3));
  /* Out-of-range bounds clamp, as in Python. */
  expect_shape ("slice", KV ("begin", "(1, 2)", "end", "(100, 7)"), x,
      SHAPE (3, 3, 6));
  expect_shape ("slice", KV ("begin", "(-10,)", "end", "(2,)"), x,
      SHAPE (2, 5, 6));
  expect_shape ("slice", KV ("begin", "(10,)", "end", "(0,)", "step", "(-1,)"),
      x, SHAPE (3, 5, 6));
  expect_shape ("slice", KV ("begin", "(3,)", "end", "(-10,)", "step", "(-1,)"),
      x, SHAPE (4, 5, 6));
  expect_shape ("slice", KV ("begin", "(None,)", "end", "(None,)", "step",
          "(-3,)"), x, SHAPE (2, 5, 6));
  /* An empty selection is an empty axis, not an error, in MXNet 1.9.1. */
  expect_shape ("slice", KV ("begin", "(3,)", "end", "(1,)"), x,
      SHAPE (0, 5, 6));
  expect_error ("slice", KV ("begin", "(0,)", "end", "(4,)", "step", "(0,)"),
      &x, 1, "'step' entry 0 is 0");
  expect_error ("slice", KV ("begin", "(1,)", "end", "(2, 3)"), &x, 1,
      "must have the same length");
  expect_error ("slice", KV ("begin", "(1, 1)", "end", "(2, 3)", "step",
          "(1,)"), &x, 1, "'step' has 1 entries");
  expect_error ("slice", KV ("begin", "(0, 0, 0, 0)", "end", "(1, 1, 1, 1)"),
      &x, 1, "'begin' has 4 entries but the input shape (4, 5, 6) has only 3");
  expect_error ("slice", KV ("end", "(1,)"), &x, 1,
      "attribute 'begin' is required");
}

static void
test_slice_axis (void)
{
  hy_shape x = SHAPE (4, 5, 6);
  expect_shape ("slice_axis", KV ("axis", "0", "begin", "1", "end", "3"), x,
      SHAPE (2, 5, 6));
  expect_shape ("slice_axis", KV ("axis", "1", "begin", "1", "end", "None"),
      x, SHAPE (4, 4, 6));
  expect_shape ("slice_axis", KV ("axis", "-1", "begin", "-3", "end", "None"),
      x, SHAPE (4, 5, 3));
  expect_shape ("slice_axis", KV ("axis", "2", "begin", "-4", "end", "-1"), x,
      SHAPE (4, 5, 3));
  expect_error ("slice_axis", KV ("axis", "1", "begin", "3", "end", "1"), &x,
      1, "select no valid range of axis 1");
  expect_error ("slice_axis", KV ("axis", "1", "begin", "0", "end", "100"),
      &x, 1, "select no valid range of axis 1 (length 5)");
  expect_error ("slice_axis", KV ("axis", "3", "begin", "0", "end", "1"), &x,
      1, "'axis' = 3 is out of range");
  expect_error ("slice_axis", KV ("axis", "0", "begin", "0"), &x, 1,
      "attribute 'end' is required");
}

/* ---- Concat, SliceChannel ----------------------------------------------- */

static void
test_concat (void)
{
  hy_shape out[8];
  g_autoptr (GError) error = NULL;
  hy_shape a[3] = { SHAPE (2, 3, 4, 4), SHAPE (2, 5, 4, 4), SHAPE (2, 1, 4, 4) };
  g_assert_cmpint (infer ("Concat", KV ("num_args", "3", "dim", "1"), a, 3,
          out, &error), ==, 1);
  assert_shape (&out[0], SHAPE (2, 9, 4, 4));
  hy_shape b[2] = { SHAPE (2, 2, 3), SHAPE (2, 4, 3) };
  g_assert_cmpint (infer ("concat", KV ("num_args", "2"), b, 2, out, &error),
      ==, 1);
  assert_shape (&out[0], SHAPE (2, 6, 3));
  hy_shape c[2] = { SHAPE (2, 3, 4), SHAPE (2, 3, 2) };
  g_assert_cmpint (infer ("Concat", KV ("num_args", "2", "dim", "-1"), c, 2,
          out, &error), ==, 1);
  assert_shape (&out[0], SHAPE (2, 3, 6));

  hy_shape bad[3] = { SHAPE (2, 3, 4), SHAPE (2, 1, 4), SHAPE (2, 3, 5) };
  expect_error ("Concat", KV ("num_args", "3", "dim", "1"), bad, 3,
      "input 2 (arg2) has shape (2, 3, 5) but input 0 has shape (2, 3, 4)");
  hy_shape rank[2] = { SHAPE (2, 3, 4), SHAPE (2, 4) };
  expect_error ("Concat", KV ("num_args", "2", "dim", "1"), rank, 2,
      "input 1 (arg1) has shape (2, 4)");
  expect_error ("Concat", KV ("num_args", "2", "dim", "3"), c, 2,
      "attribute 'dim' = 3 is out of range");
  expect_error ("Concat", KV ("dim", "1"), c, 2,
      "attribute 'num_args' (the number of inputs) is required");
  expect_error ("Concat", KV ("num_args", "0"), c, 0, "'num_args' = 0");
  g_assert_null (hy_op_lookup ("Concat")->def->input_names);
}

static void
test_split (void)
{
  hy_shape out[8];
  g_autoptr (GError) error = NULL;
  hy_shape x = SHAPE (2, 6, 4);
  g_assert_cmpint (infer ("SliceChannel", KV ("num_outputs", "3"), &x, 1, out,
          &error), ==, 3);
  for (int i = 0; i < 3; i++)
    assert_shape (&out[i], SHAPE (2, 2, 4));
  g_assert_cmpint (infer ("split", KV ("num_outputs", "2", "axis", "-1"), &x,
          1, out, &error), ==, 2);
  assert_shape (&out[1], SHAPE (2, 6, 2));
  hy_shape y = SHAPE (2, 3, 4);
  g_assert_cmpint (infer ("SliceChannel", KV ("num_outputs", "3", "axis", "1",
          "squeeze_axis", "True"), &y, 1, out, &error), ==, 3);
  assert_shape (&out[2], SHAPE (2, 4));
  hy_shape v = SHAPE (2);
  g_assert_cmpint (infer ("SliceChannel", KV ("num_outputs", "2", "axis", "0",
          "squeeze_axis", "1"), &v, 1, out, &error), ==, 2);
  g_assert_cmpint (out[0].ndim, ==, 0);

  expect_error ("SliceChannel", KV ("num_outputs", "2"), &y, 1,
      "cannot split axis 1 of input shape (2, 3, 4) (length 3) into "
      "num_outputs = 2 equal parts");
  expect_error ("SliceChannel", KV ("num_outputs", "2", "axis", "2",
          "squeeze_axis", "True"), &y, 1, "squeeze_axis needs axis 2");
  expect_error ("SliceChannel", NULL, &y, 1,
      "attribute 'num_outputs' is required");
  expect_error ("SliceChannel", KV ("num_outputs", "-2"), &y, 1,
      "'num_outputs' = -2");
}

/* ---- tile, repeat, _arange ---------------------------------------------- */

static void
test_tile_repeat (void)
{
  hy_shape x = SHAPE (2, 3, 4);
  expect_shape ("tile", KV ("reps", "(2, 1, 3)"), x, SHAPE (4, 3, 12));
  expect_shape ("tile", KV ("reps", "(2,)"), x, SHAPE (2, 3, 8));
  expect_shape ("tile", KV ("reps", "(2, 1, 1, 3)"), x, SHAPE (2, 2, 3, 12));
  expect_shape ("tile", KV ("reps", "()"), x, SHAPE (2, 3, 4));
  expect_error ("tile", KV ("reps", "(0, 1)"), &x, 1,
      "'reps' entry 0 is 0");
  expect_error ("tile", KV ("reps", "(1, 1, 1, 1, 1, 1, 2)"), &x, 1,
      "7 dimensions");

  expect_shape ("repeat", KV ("repeats", "2"), x, SHAPE (48));
  expect_shape ("repeat", KV ("repeats", "2", "axis", "None"), x, SHAPE (48));
  expect_shape ("repeat", KV ("repeats", "3", "axis", "1"), x,
      SHAPE (2, 9, 4));
  expect_shape ("repeat", KV ("repeats", "2", "axis", "-1"), x,
      SHAPE (2, 3, 8));
  expect_error ("repeat", KV ("repeats", "-1"), &x, 1, "is negative");
  expect_error ("repeat", KV ("repeats", "2", "axis", "3"), &x, 1,
      "'axis' = 3 is out of range");
}

static void
test_arange (void)
{
  hy_shape out[1];
  g_autoptr (GError) error = NULL;
  g_assert_cmpint (infer ("_arange", KV ("start", "0", "stop", "10"), NULL,
          0, out, &error), ==, 1);
  assert_shape (&out[0], SHAPE (10));
  g_assert_cmpint (infer ("_arange", KV ("start", "5", "stop", "None"), NULL,
          0, out, &error), ==, 1);
  assert_shape (&out[0], SHAPE (5));
  g_assert_cmpint (infer ("_arange", KV ("start", "2", "stop", "11", "step",
          "3"), NULL, 0, out, &error), ==, 1);
  assert_shape (&out[0], SHAPE (3));
  g_assert_cmpint (infer ("_arange", KV ("start", "4", "stop", "-2", "step",
          "-1.5"), NULL, 0, out, &error), ==, 1);
  assert_shape (&out[0], SHAPE (4));
  g_assert_cmpint (infer ("_arange", KV ("start", "0", "stop", "4", "repeat",
          "2", "dtype", "int32"), NULL, 0, out, &error), ==, 1);
  assert_shape (&out[0], SHAPE (8));
  expect_error ("_arange", KV ("start", "5", "stop", "1"), NULL, 0,
      "empty range");
  expect_error ("_arange", KV ("start", "0", "stop", "4", "step", "0"), NULL,
      0, "'step' = 0");
  expect_error ("_arange", KV ("start", "0", "infer_range", "True"), NULL, 0,
      "'infer_range'");
  expect_error ("_arange", KV ("start", "0", "stop", "3", "dtype", "bool"),
      NULL, 0, "attribute 'dtype'");
  expect_error ("_arange", KV ("stop", "3"), NULL, 0,
      "attribute 'start' is required");
}

/* ---- kernels ------------------------------------------------------------ */

/* Runs op on inputs of the given shapes (element i of input k holds
 * 1000 * k + i, so every value says where it came from) and returns the
 * outputs; frees the inputs. */
static int
run_kernel (const char *op_name, const char *const *kv, const hy_shape *in,
    int n_in, hy_tensor **in_t, hy_tensor **out_t)
{
  const hy_op_info *op = hy_op_lookup (op_name);
  g_autoptr (GHashTable) attrs = attrs_of (kv);
  g_autoptr (GError) error = NULL;
  g_autofree void *params = hy_op_params_new (op, attrs, &error);
  g_assert_no_error (error);
  int n_out = hy_op_num_outputs (op, params);
  hy_shape out_s[8];
  g_assert_true (op->def->infer_shape (params, in, n_in, out_s, n_out,
          &error));
  for (int k = 0; k < n_in; k++) {
    in_t[k] = hy_tensor_new (&in[k]);
    for (int64_t i = 0; i < hy_shape_numel (&in[k]); i++)
      in_t[k]->data[i] = (float) (1000 * k + i);
  }
  for (int j = 0; j < n_out; j++)
    out_t[j] = hy_tensor_new (&out_s[j]);
  hy_cpu_kernel_fn fn = hy_cpu_kernel_for (op->id);
  g_assert_nonnull (fn);
  hy_cpu_ctx ctx = { 0 };
  fn (&ctx, params, (const hy_tensor *const *) in_t, n_in, out_t, n_out);
  hy_cpu_ctx_clear (&ctx);
  return n_out;
}

static void
free_tensors (hy_tensor **t, int n)
{
  for (int i = 0; i < n; i++)
    hy_tensor_free (t[i]);
}

static void
unravel (int64_t flat, const hy_shape *s, int64_t *idx)
{
  for (int i = s->ndim - 1; i >= 0; i--) {
    idx[i] = flat % s->dims[i];
    flat /= s->dims[i];
  }
}

static int64_t
ravel (const int64_t *idx, const hy_shape *s)
{
  int64_t flat = 0;
  for (int i = 0; i < s->ndim; i++)
    flat = flat * s->dims[i] + idx[i];
  return flat;
}

static void
check_transpose (hy_shape in, const char *axes_attr, const int *axes)
{
  hy_tensor *x[1], *y[1];
  run_kernel ("transpose", axes_attr ? KV ("axes", axes_attr) : NULL, &in, 1,
      x, y);
  int64_t oi[HY_MAX_DIMS], ii[HY_MAX_DIMS];
  for (int64_t f = 0; f < hy_shape_numel (&y[0]->shape); f++) {
    unravel (f, &y[0]->shape, oi);
    for (int i = 0; i < in.ndim; i++)
      ii[axes ? axes[i] : in.ndim - 1 - i] = oi[i];
    g_assert_cmpfloat (y[0]->data[f], ==, x[0]->data[ravel (ii, &in)]);
  }
  free_tensors (x, 1);
  free_tensors (y, 1);
}

static void
test_transpose_kernel (void)
{
  check_transpose (SHAPE (2, 3, 4), NULL, NULL);
  check_transpose (SHAPE (67, 131), "(1, 0)", (int[]) { 1, 0 });
  check_transpose (SHAPE (2, 3, 4, 5), "(0, 2, 3, 1)",
      (int[]) { 0, 2, 3, 1 });
  check_transpose (SHAPE (2, 3, 4, 5), "(0, 3, 1, 2)",
      (int[]) { 0, 3, 1, 2 });
  check_transpose (SHAPE (2, 3, 4), "(1, 0, 2)", (int[]) { 1, 0, 2 });
  check_transpose (SHAPE (2, 3, 4), "(0, 1, 2)", (int[]) { 0, 1, 2 });
  check_transpose (SHAPE (3, 1, 4, 1, 5), "(4, 1, 0, 3, 2)",
      (int[]) { 4, 1, 0, 3, 2 });
  check_transpose (SHAPE (2, 3, 2, 3, 2, 3), "(5, 3, 1, 4, 2, 0)",
      (int[]) { 5, 3, 1, 4, 2, 0 });
  check_transpose (SHAPE (3, 4, 5), "(2, 0, 1)", (int[]) { 2, 0, 1 });
  check_transpose (SHAPE (40, 3, 37), "(2, 1, 0)", (int[]) { 2, 1, 0 });

  /* Every permutation of a 4-d shape large enough for whole tiles and
   * ragged edges, with and without a length-1 axis. */
  static const int64_t dims[2][4] = { { 9, 10, 17, 3 }, { 9, 1, 17, 12 } };
  for (int d = 0; d < 2; d++) {
    for (int code = 0; code < 256; code++) {
      int axes[4];
      guint seen = 0;
      for (int i = 0; i < 4; i++) {
        axes[i] = (code >> (2 * i)) & 3;
        seen |= 1u << axes[i];
      }
      if (seen != 15)
        continue;
      char attr[32];
      g_snprintf (attr, sizeof attr, "(%d, %d, %d, %d)", axes[0], axes[1],
          axes[2], axes[3]);
      check_transpose (hy_shape_make (4, dims[d]), attr, axes);
    }
  }
}

/* The naive slice: output element j of each axis reads input index
 * first + j * step (the bounds rule itself is checked by test_slice). */
static void
check_slice (hy_shape in, const char *begin, const char *end,
    const char *step)
{
  const char *const *kv = step ? KV ("begin", begin, "end", end, "step",
      step) : KV ("begin", begin, "end", end);
  hy_tensor *x[1], *y[1];
  run_kernel ("slice", kv, &in, 1, x, y);
  g_autoptr (GHashTable) attrs = attrs_of (kv);
  g_autofree hy_slice_params *p = hy_op_params_new (hy_op_lookup ("slice"),
      attrs, NULL);
  int64_t oi[HY_MAX_DIMS], ii[HY_MAX_DIMS];
  for (int64_t f = 0; f < hy_shape_numel (&y[0]->shape); f++) {
    unravel (f, &y[0]->shape, oi);
    for (int i = 0; i < in.ndim; i++) {
      int64_t first, st, n;
      hy_slice_resolve (p, i, in.dims[i], &first, &st, &n);
      ii[i] = first + oi[i] * st;
    }
    g_assert_cmpfloat (y[0]->data[f], ==, x[0]->data[ravel (ii, &in)]);
  }
  free_tensors (x, 1);
  free_tensors (y, 1);
}

static void
test_slice_kernels (void)
{
  hy_shape x = SHAPE (4, 5, 6);
  check_slice (x, "(1, 0, 2)", "(3, 4, 5)", NULL);
  check_slice (x, "(1, None, 0)", "(3, None, None)", NULL);
  check_slice (x, "(-3, 0)", "(-1, -2)", NULL);
  check_slice (x, "(0, None, 1)", "(None, None, None)", "(2, None, 2)");
  check_slice (x, "(None,)", "(None,)", "(-1,)");
  check_slice (x, "(3, None, 4)", "(0, None, None)", "(-1, 2, -2)");
  check_slice (x, "(1, 2)", "(100, 7)", NULL);
  check_slice (x, "(None, None, None)", "(None, None, None)", NULL);
  check_slice (x, "(0, 1)", "(4, 3)", NULL);
  check_slice (x, "(None, None)", "(None, None)", "(1, -2)");
  check_slice (x, "(3,)", "(1,)", NULL);

  hy_tensor *in_t[1], *out_t[1];
  hy_shape s = SHAPE (4, 5, 6);
  run_kernel ("slice_axis", KV ("axis", "-2", "begin", "-4", "end", "4"), &s,
      1, in_t, out_t);
  int64_t oi[3];
  for (int64_t f = 0; f < hy_shape_numel (&out_t[0]->shape); f++) {
    unravel (f, &out_t[0]->shape, oi);
    oi[1] += 1;
    g_assert_cmpfloat (out_t[0]->data[f], ==, in_t[0]->data[ravel (oi, &s)]);
  }
  free_tensors (in_t, 1);
  free_tensors (out_t, 1);
}

static void
test_concat_split_kernels (void)
{
  static const char *const dims[] = { "0", "1", "2", "-1" };
  for (int d = 0; d < 4; d++) {
    int axis = d == 3 ? 2 : d;
    hy_shape in[3];
    for (int k = 0; k < 3; k++) {
      in[k] = SHAPE (2, 3, 4);
      in[k].dims[axis] = k + 1;
    }
    hy_tensor *x[3], *y[1];
    run_kernel ("Concat", KV ("num_args", "3", "dim", dims[d]), in, 3, x, y);
    int64_t oi[3];
    for (int64_t f = 0; f < hy_shape_numel (&y[0]->shape); f++) {
      unravel (f, &y[0]->shape, oi);
      int k = 0;
      while (oi[axis] >= in[k].dims[axis])
        oi[axis] -= in[k++].dims[axis];
      g_assert_cmpfloat (y[0]->data[f], ==, x[k]->data[ravel (oi, &in[k])]);
    }
    free_tensors (x, 3);
    free_tensors (y, 1);
  }

  for (int axis = 0; axis < 3; axis++) {
    hy_shape s = SHAPE (6, 6, 6);
    char ax[8];
    g_snprintf (ax, sizeof ax, "%d", axis);
    hy_tensor *x[1], *y[3];
    g_assert_cmpint (run_kernel ("SliceChannel", KV ("num_outputs", "3",
                "axis", ax), &s, 1, x, y), ==, 3);
    int64_t oi[3];
    for (int j = 0; j < 3; j++) {
      for (int64_t f = 0; f < hy_shape_numel (&y[j]->shape); f++) {
        unravel (f, &y[j]->shape, oi);
        oi[axis] += 2 * j;
        g_assert_cmpfloat (y[j]->data[f], ==, x[0]->data[ravel (oi, &s)]);
      }
    }
    free_tensors (x, 1);
    free_tensors (y, 3);
  }
}

static void
check_tile (hy_shape in, const char *reps_attr)
{
  hy_tensor *x[1], *y[1];
  run_kernel ("tile", KV ("reps", reps_attr), &in, 1, x, y);
  const hy_shape *os = &y[0]->shape;
  int64_t oi[HY_MAX_DIMS], ii[HY_MAX_DIMS];
  for (int64_t f = 0; f < hy_shape_numel (os); f++) {
    unravel (f, os, oi);
    for (int i = 0; i < in.ndim; i++)
      ii[i] = oi[os->ndim - in.ndim + i] % in.dims[i];
    g_assert_cmpfloat (y[0]->data[f], ==, x[0]->data[ravel (ii, &in)]);
  }
  free_tensors (x, 1);
  free_tensors (y, 1);
}

static void
check_repeat (hy_shape in, const char *repeats, const char *axis_attr,
    int axis)
{
  hy_tensor *x[1], *y[1];
  int64_t r = g_ascii_strtoll (repeats, NULL, 10);
  run_kernel ("repeat", axis_attr ? KV ("repeats", repeats, "axis",
          axis_attr) : KV ("repeats", repeats), &in, 1, x, y);
  int64_t oi[HY_MAX_DIMS];
  for (int64_t f = 0; f < hy_shape_numel (&y[0]->shape); f++) {
    if (axis < 0) {
      g_assert_cmpfloat (y[0]->data[f], ==, x[0]->data[f / r]);
      continue;
    }
    unravel (f, &y[0]->shape, oi);
    oi[axis] /= r;
    g_assert_cmpfloat (y[0]->data[f], ==, x[0]->data[ravel (oi, &in)]);
  }
  free_tensors (x, 1);
  free_tensors (y, 1);
}

static void
test_tile_repeat_kernels (void)
{
  check_tile (SHAPE (2, 3, 4), "(2, 1, 3)");
  check_tile (SHAPE (2, 3, 4), "(2,)");
  check_tile (SHAPE (2, 3, 4), "(2, 1, 1, 2)");
  check_tile (SHAPE (2, 3, 1), "(3, 2, 5)");
  check_tile (SHAPE (5), "()");
  check_repeat (SHAPE (2, 3, 4), "2", NULL, -1);
  check_repeat (SHAPE (2, 3, 4), "3", "1", 1);
  check_repeat (SHAPE (2, 3, 4), "2", "-1", 2);
  check_repeat (SHAPE (2, 3, 4), "2", "0", 0);
}

static void
check_arange (const char *const *kv, double start, double step, int repeat)
{
  hy_tensor *y[1];
  run_kernel ("_arange", kv, NULL, 0, NULL, y);
  for (int64_t i = 0; i < hy_shape_numel (&y[0]->shape); i++)
    g_assert_cmpfloat_with_epsilon (y[0]->data[i],
        start + (double) (i / repeat) * step, 1e-5);
  free_tensors (y, 1);
}

static void
test_arange_kernel (void)
{
  check_arange (KV ("start", "0", "stop", "10"), 0, 1, 1);
  check_arange (KV ("start", "5"), 0, 1, 1);
  check_arange (KV ("start", "2", "stop", "11", "step", "3"), 2, 3, 1);
  check_arange (KV ("start", "4", "stop", "-2", "step", "-1.5"), 4, -1.5, 1);
  check_arange (KV ("start", "0", "stop", "4", "repeat", "2"), 0, 1, 2);
  check_arange (KV ("start", "1", "stop", "2", "step", "0.3"), 1, 0.3, 1);
  /* Integer dtypes truncate start and step first: (0.5, 4, 1.5) -> 0, 1, 2. */
  check_arange (KV ("start", "0.5", "stop", "4", "step", "1.5", "dtype",
          "int32"), 0, 1, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ops-shape/reshape/codes", test_reshape_codes);
  g_test_add_func ("/ops-shape/reshape/reverse", test_reshape_reverse);
  g_test_add_func ("/ops-shape/reshape/target-shape",
      test_reshape_legacy_target_shape);
  g_test_add_func ("/ops-shape/reshape/errors", test_reshape_errors);
  g_test_add_func ("/ops-shape/flatten-expand-squeeze",
      test_flatten_expand_squeeze);
  g_test_add_func ("/ops-shape/identity", test_identity_family);
  g_test_add_func ("/ops-shape/transpose", test_transpose);
  g_test_add_func ("/ops-shape/swap-axis", test_swap_axis);
  g_test_add_func ("/ops-shape/slice", test_slice);
  g_test_add_func ("/ops-shape/slice-axis", test_slice_axis);
  g_test_add_func ("/ops-shape/concat", test_concat);
  g_test_add_func ("/ops-shape/split", test_split);
  g_test_add_func ("/ops-shape/tile-repeat", test_tile_repeat);
  g_test_add_func ("/ops-shape/arange", test_arange);
  g_test_add_func ("/ops-shape/kernels/transpose", test_transpose_kernel);
  g_test_add_func ("/ops-shape/kernels/slice", test_slice_kernels);
  g_test_add_func ("/ops-shape/kernels/concat-split",
      test_concat_split_kernels);
  g_test_add_func ("/ops-shape/kernels/tile-repeat", test_tile_repeat_kernels);
  g_test_add_func ("/ops-shape/kernels/arange", test_arange_kernel);
  return g_test_run ();
}
