/*
 * test-ops-nn.c — the nn op families' attribute parsing and shape
 * inference: MXNet 1.9.1's defaults where keys are absent, errors that name
 * the attribute or input at fault, and a few hand-checkable kernel results
 * (numeric agreement with MXNet itself is the conformance runner's job).
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/nn.h"

/* ---- helpers ------------------------------------------------------------- */

/* attrs ("key", "value", …, NULL) → a table the parsers read. */
static GHashTable *
attrs_new (const char *first, ...)
{
  GHashTable *t = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);
  va_list ap;
  va_start (ap, first);
  for (const char *k = first; k; k = va_arg (ap, const char *)) {
    const char *v = va_arg (ap, const char *);
    g_hash_table_insert (t, g_strdup (k), g_strdup (v));
  }
  va_end (ap);
  return t;
}

/* Parses op `name` with attrs (consumed); NULL and *error on failure. */
static void *
parse (const char *name, GHashTable *attrs, GError **error)
{
  const hy_op_info *op = hy_op_lookup (name);
  g_assert_nonnull (op);
  g_assert_nonnull (op->def);
  void *params = hy_op_params_new (op, attrs, error);
  g_hash_table_unref (attrs);
  return params;
}

static void *
parse_ok (const char *name, GHashTable *attrs)
{
  GError *error = NULL;
  void *params = parse (name, attrs, &error);
  g_assert_no_error (error);
  return params;
}

/* Parsing must fail with `code` and a message containing `needle`. */
static void
parse_fails (const char *name, GHashTable *attrs, int code,
    const char *needle)
{
  GError *error = NULL;
  void *params = parse (name, attrs, &error);
  g_assert_null (params);
  g_assert_error (error, HY_ERROR, code);
  if (!strstr (error->message, needle))
    g_error ("message '%s' does not mention '%s'", error->message, needle);
  g_error_free (error);
}

static hy_shape
shape_of (int ndim, ...)
{
  hy_shape s = { .ndim = ndim };
  va_list ap;
  va_start (ap, ndim);
  for (int i = 0; i < ndim; i++)
    s.dims[i] = va_arg (ap, int);
  va_end (ap);
  return s;
}

static gboolean
infer (const char *name, const void *params, const hy_shape *in, int n_in,
    hy_shape *out, GError **error)
{
  const hy_op_info *op = hy_op_lookup (name);
  g_assert_cmpint (hy_op_num_inputs (op, params), ==, n_in);
  return op->def->infer_shape (params, in, n_in, out,
      hy_op_num_outputs (op, params), error);
}

static void
assert_shape (const hy_shape *got, const hy_shape *want)
{
  char g[HY_SHAPE_STRLEN], w[HY_SHAPE_STRLEN];
  if (!hy_shape_equal (got, want))
    g_error ("shape %s, expected %s", hy_shape_format (got, g, sizeof g),
        hy_shape_format (want, w, sizeof w));
}

static void
infer_fails (const char *name, const void *params, const hy_shape *in,
    int n_in, const char *needle)
{
  GError *error = NULL;
  hy_shape out[3];
  g_assert_false (infer (name, params, in, n_in, out, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_SHAPE);
  if (!strstr (error->message, needle))
    g_error ("message '%s' does not mention '%s'", error->message, needle);
  g_error_free (error);
}

/* Runs op `name`'s CPU kernel on tensors viewing the given arrays. */
static void
run_kernel (const char *name, const void *params, int n_in,
    const hy_shape *in_shapes, float **in_data, const hy_shape *out_shape,
    float *out_data)
{
  const hy_op_info *op = hy_op_lookup (name);
  hy_tensor *in[5], *out;
  for (int i = 0; i < n_in; i++)
    in[i] = hy_tensor_new_view (&in_shapes[i], in_data[i]);
  out = hy_tensor_new_view (out_shape, out_data);
  hy_cpu_ctx ctx = { 0 };
  hy_cpu_kernel_for (op->id) (&ctx, params, (const hy_tensor *const *) in,
      n_in, &out, 1);
  hy_cpu_ctx_clear (&ctx);
  for (int i = 0; i < n_in; i++)
    hy_tensor_free (in[i]);
  hy_tensor_free (out);
}

/* ---- Convolution --------------------------------------------------------- */

static void
test_conv_defaults (void)
{
  hy_conv_params *p = parse_ok ("Convolution",
      attrs_new ("kernel", "(3, 3)", "num_filter", "8", NULL));
  g_assert_cmpint (p->n_spatial, ==, 2);
  g_assert_cmpint (p->stride[0], ==, 1);
  g_assert_cmpint (p->stride[1], ==, 1);
  g_assert_cmpint (p->dilate[1], ==, 1);
  g_assert_cmpint (p->pad[0], ==, 0);
  g_assert_cmpint (p->num_group, ==, 1);
  g_assert_false (p->no_bias);

  hy_shape in[3] = { shape_of (4, 2, 3, 9, 11), shape_of (4, 8, 3, 3, 3),
    shape_of (1, 8) }, out;
  g_assert_true (infer ("Convolution", p, in, 3, &out, NULL));
  hy_shape want = shape_of (4, 2, 8, 7, 9);
  assert_shape (&out, &want);
  g_free (p);

  /* floor((H + 2p − (d(k−1)+1)) / s) + 1 on each axis. */
  p = parse_ok ("Convolution", attrs_new ("kernel", "(3, 3)",
          "num_filter", "4", "stride", "(2, 2)", "pad", "(1, 2)",
          "dilate", "(2, 1)", "no_bias", "True", NULL));
  g_assert_true (p->no_bias);
  hy_shape in2[2] = { shape_of (4, 1, 3, 10, 10), shape_of (4, 4, 3, 3, 3) };
  g_assert_true (infer ("Convolution", p, in2, 2, &out, NULL));
  want = shape_of (4, 1, 4, 4, 6);
  assert_shape (&out, &want);
  g_free (p);
}

static void
test_conv_attr_errors (void)
{
  parse_fails ("Convolution", attrs_new ("num_filter", "8", NULL),
      HY_ERROR_INVALID, "'kernel'");
  parse_fails ("Convolution", attrs_new ("kernel", "(3, 3)", NULL),
      HY_ERROR_INVALID, "'num_filter'");
  parse_fails ("Convolution", attrs_new ("kernel", "(3, x)",
          "num_filter", "8", NULL), HY_ERROR_INVALID, "'kernel'");
  parse_fails ("Convolution", attrs_new ("kernel", "(3, 3)",
          "num_filter", "8", "stride", "(2, 2, 2)", NULL),
      HY_ERROR_INVALID, "'stride'");
  parse_fails ("Convolution", attrs_new ("kernel", "(3, 3)",
          "num_filter", "8", "pad", "(-1, 0)", NULL),
      HY_ERROR_INVALID, "'pad'");
  parse_fails ("Convolution", attrs_new ("kernel", "(3, 3)",
          "num_filter", "8", "num_group", "3", NULL),
      HY_ERROR_INVALID, "'num_group'");
  parse_fails ("Convolution", attrs_new ("kernel", "(3, 3)",
          "num_filter", "8", "layout", "NHWC", NULL),
      HY_ERROR_UNSUPPORTED, "'layout' = 'NHWC'");
  parse_fails ("Convolution", attrs_new ("kernel", "(3, 3)",
          "num_filter", "8", "no_bias", "maybe", NULL),
      HY_ERROR_INVALID, "'no_bias'");

  g_free (parse_ok ("Convolution", attrs_new ("kernel", "(3, 3)",
              "num_filter", "8", "layout", "NCHW", "workspace", "1024",
              "cudnn_tune", "off", NULL)));
}

static void
test_conv_shape_errors (void)
{
  hy_conv_params *p = parse_ok ("Convolution",
      attrs_new ("kernel", "(3, 3)", "num_filter", "8", NULL));
  hy_shape in[3] = { shape_of (4, 1, 3, 9, 9), shape_of (4, 8, 4, 3, 3),
    shape_of (1, 8) };
  infer_fails ("Convolution", p, in, 3, "weight has shape (8, 4, 3, 3); "
      "expected (8, 3, 3, 3)");
  in[1] = shape_of (4, 8, 3, 3, 3);
  in[2] = shape_of (1, 7);
  infer_fails ("Convolution", p, in, 3, "bias");
  in[2] = shape_of (1, 8);
  in[0] = shape_of (3, 3, 9, 9);
  infer_fails ("Convolution", p, in, 3, "4 dimensions");
  in[0] = shape_of (4, 1, 3, 2, 9);
  infer_fails ("Convolution", p, in, 3, "exceeds input size 2");
  /* Found by fuzz-graph: zero channels reached the kernel, which divided
   * by zero sizing its im2col blocks. */
  in[0] = shape_of (4, 1, 0, 9, 9);
  in[1] = shape_of (4, 8, 0, 3, 3);
  infer_fails ("Convolution", p, in, 3, "0 channels");
  g_free (p);

  /* Depthwise: weight (C, 1, kh, kw); channels must divide by groups. */
  p = parse_ok ("Convolution", attrs_new ("kernel", "(3, 3)",
          "num_filter", "6", "num_group", "6", "no_bias", "1", NULL));
  hy_shape dw[2] = { shape_of (4, 1, 6, 5, 5), shape_of (4, 6, 1, 3, 3) };
  hy_shape out;
  g_assert_true (infer ("Convolution", p, dw, 2, &out, NULL));
  dw[0] = shape_of (4, 1, 4, 5, 5);
  infer_fails ("Convolution", p, dw, 2, "num_group");
  g_free (p);
}

/* A 1×1 convolution is a matrix product: out[f][i] = Σc w[f][c]·x[c][i] + b. */
static void
test_conv_pointwise_is_matmul (void)
{
  hy_conv_params *p = parse_ok ("Convolution",
      attrs_new ("kernel", "(1, 1)", "num_filter", "2", NULL));
  float x[] = { 1, 2, 3, 4, /* channel 1 */ 10, 20, 30, 40 };
  float w[] = { 1, 0.5f, /* filter 1 */ -1, 2 };
  float b[] = { 0.25f, -1 };
  float y[8];
  hy_shape shapes[3] = { shape_of (4, 1, 2, 2, 2), shape_of (4, 2, 2, 1, 1),
    shape_of (1, 2) };
  hy_shape oshape = shape_of (4, 1, 2, 2, 2);
  float *data[3] = { x, w, b };
  run_kernel ("Convolution", p, 3, shapes, data, &oshape, y);
  for (int i = 0; i < 4; i++) {
    g_assert_cmpfloat_with_epsilon (y[i], x[i] + 0.5f * x[4 + i] + 0.25f,
        1e-5);
    g_assert_cmpfloat_with_epsilon (y[4 + i], -x[i] + 2 * x[4 + i] - 1, 1e-5);
  }
  g_free (p);
}

/* Depthwise 3×3, pad 1, all-ones weights: each output sums the in-image
 * part of its 3×3 neighbourhood. */
static void
test_conv_depthwise_box_sum (void)
{
  hy_conv_params *p = parse_ok ("Convolution", attrs_new ("kernel", "(3, 3)",
          "num_filter", "2", "num_group", "2", "pad", "(1, 1)",
          "no_bias", "True", NULL));
  float x[18], w[18], y[18];
  for (int i = 0; i < 18; i++) {
    x[i] = (float) (i + 1);
    w[i] = i < 9 ? 1.0f : 2.0f;
  }
  hy_shape shapes[2] = { shape_of (4, 1, 2, 3, 3), shape_of (4, 2, 1, 3, 3) };
  hy_shape oshape = shape_of (4, 1, 2, 3, 3);
  float *data[2] = { x, w };
  run_kernel ("Convolution", p, 2, shapes, data, &oshape, y);
  for (int c = 0; c < 2; c++) {
    for (int r = 0; r < 3; r++) {
      for (int q = 0; q < 3; q++) {
        float want = 0;
        for (int i = r - 1; i <= r + 1; i++)
          for (int j = q - 1; j <= q + 1; j++)
            if (i >= 0 && i < 3 && j >= 0 && j < 3)
              want += x[c * 9 + i * 3 + j];
        want *= c == 0 ? 1.0f : 2.0f;
        g_assert_cmpfloat_with_epsilon (y[c * 9 + r * 3 + q], want, 1e-4);
      }
    }
  }
  g_free (p);
}

/* ---- FullyConnected, dot, batch_dot -------------------------------------- */

static void
test_fc (void)
{
  hy_fc_params *p = parse_ok ("FullyConnected",
      attrs_new ("num_hidden", "10", NULL));
  g_assert_true (p->flatten);
  g_assert_false (p->no_bias);
  hy_shape in[3] = { shape_of (3, 4, 5, 6), shape_of (2, 10, 30),
    shape_of (1, 10) }, out;
  g_assert_true (infer ("FullyConnected", p, in, 3, &out, NULL));
  hy_shape want = shape_of (2, 4, 10);
  assert_shape (&out, &want);
  in[1] = shape_of (2, 10, 6);
  infer_fails ("FullyConnected", p, in, 3, "weight has shape (10, 6); "
      "expected (10, 30)");
  g_free (p);

  p = parse_ok ("FullyConnected", attrs_new ("num_hidden", "10",
          "flatten", "False", "no_bias", "True", NULL));
  g_assert_true (infer ("FullyConnected", p, in, 2, &out, NULL));
  want = shape_of (3, 4, 5, 10);
  assert_shape (&out, &want);
  g_free (p);

  parse_fails ("FullyConnected", attrs_new ("no_bias", "True", NULL),
      HY_ERROR_INVALID, "'num_hidden'");
  parse_fails ("FullyConnected", attrs_new ("num_hidden", "0", NULL),
      HY_ERROR_INVALID, "'num_hidden'");
  parse_fails ("FullyConnected", attrs_new ("num_hidden", "4",
          "flatten", "sometimes", NULL), HY_ERROR_INVALID, "'flatten'");
}

static void
test_fc_kernel (void)
{
  hy_fc_params *p = parse_ok ("FullyConnected",
      attrs_new ("num_hidden", "2", NULL));
  float x[] = { 1, 2, 3, /* row 2 */ -1, 0, 1 };
  float w[] = { 1, 1, 1, /* unit 2 */ 0, 1, -2 };
  float b[] = { 0.5f, 1 };
  float y[4];
  hy_shape shapes[3] = { shape_of (2, 2, 3), shape_of (2, 2, 3),
    shape_of (1, 2) };
  hy_shape oshape = shape_of (2, 2, 2);
  float *data[3] = { x, w, b };
  run_kernel ("FullyConnected", p, 3, shapes, data, &oshape, y);
  const float want[] = { 6.5f, -3, 0.5f, -1 };
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat_with_epsilon (y[i], want[i], 1e-5);
  g_free (p);
}

static void
test_dot_shapes (void)
{
  static const struct {
    const char *op, *ta, *tb;
    hy_shape a, b, want;
  } cases[] = {
    {"dot", "False", "False", {2, {4, 5}}, {2, {5, 6}}, {2, {4, 6}}},
    {"dot", "False", "True", {2, {4, 5}}, {2, {6, 5}}, {2, {4, 6}}},
    {"dot", "True", "False", {2, {5, 4}}, {2, {5, 6}}, {2, {4, 6}}},
    {"dot", "False", "False", {3, {2, 3, 5}}, {3, {5, 4, 2}},
      {4, {2, 3, 4, 2}}},
    {"dot", "True", "False", {3, {2, 5, 3}}, {2, {2, 4}}, {3, {5, 3, 4}}},
    {"dot", "False", "False", {1, {5}}, {1, {5}}, {1, {1}}},
    {"dot", "False", "False", {1, {5}}, {2, {5, 3}}, {1, {3}}},
    {"batch_dot", "False", "False", {3, {3, 4, 5}}, {3, {3, 5, 6}},
      {3, {3, 4, 6}}},
    {"batch_dot", "True", "True", {3, {3, 5, 4}}, {3, {3, 6, 5}},
      {3, {3, 4, 6}}},
  };
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++) {
    hy_dot_params *p = parse_ok (cases[i].op, attrs_new ("transpose_a",
            cases[i].ta, "transpose_b", cases[i].tb, NULL));
    hy_shape in[2] = { cases[i].a, cases[i].b }, out;
    g_assert_true (infer (cases[i].op, p, in, 2, &out, NULL));
    assert_shape (&out, &cases[i].want);
    g_free (p);
  }

  hy_dot_params *p = parse_ok ("dot", attrs_new (NULL, NULL));
  g_assert_false (p->transpose_a);
  g_assert_false (p->transpose_b);
  hy_shape bad[2] = { shape_of (2, 4, 5), shape_of (2, 6, 5) };
  infer_fails ("dot", p, bad, 2, "contracted sizes 5 and 6");
  g_free (p);

  p = parse_ok ("batch_dot", attrs_new (NULL, NULL));
  hy_shape bad3[2] = { shape_of (3, 2, 4, 5), shape_of (3, 3, 5, 6) };
  infer_fails ("batch_dot", p, bad3, 2, "batch axis 0");
  hy_shape bad2[2] = { shape_of (2, 4, 5), shape_of (2, 5, 6) };
  infer_fails ("batch_dot", p, bad2, 2, "rank >= 3");
  g_free (p);

  parse_fails ("dot", attrs_new ("transpose_b", "yes", NULL),
      HY_ERROR_INVALID, "'transpose_b'");
}

/* ---- Pooling ------------------------------------------------------------- */

static void
test_pool_defaults (void)
{
  hy_pool_params *p = parse_ok ("Pooling",
      attrs_new ("kernel", "(3, 3)", NULL));
  g_assert_cmpint (p->pool_type, ==, HY_POOL_MAX);
  g_assert_cmpint (p->convention, ==, HY_POOL_VALID);
  g_assert_false (p->global_pool);
  g_assert_true (p->count_include_pad);
  g_assert_cmpint (p->stride[0], ==, 1);
  g_assert_cmpint (p->stride[1], ==, 1);
  g_assert_cmpint (p->pad[0], ==, 0);
  g_assert_cmpint (p->pad[1], ==, 0);
  /* stride 1 by default, not the kernel size */
  hy_shape in = shape_of (4, 2, 3, 7, 8), out;
  g_assert_true (infer ("Pooling", p, &in, 1, &out, NULL));
  hy_shape want = shape_of (4, 2, 3, 5, 6);
  assert_shape (&out, &want);
  g_free (p);

  p = parse_ok ("Pooling", attrs_new ("global_pool", "True",
          "pool_type", "avg", NULL));
  in = shape_of (4, 2, 3, 7, 8);
  g_assert_true (infer ("Pooling", p, &in, 1, &out, NULL));
  want = shape_of (4, 2, 3, 1, 1);
  assert_shape (&out, &want);
  g_free (p);

  p = parse_ok ("Pooling", attrs_new ("kernel", "(2, 2)",
          "count_include_pad", "None", NULL));
  g_assert_true (p->count_include_pad);
  g_free (p);
}

static void
test_pool_conventions (void)
{
  /* 7 + 2·1 − 3 = 6: valid floor(6/4)+1 = 2, full ceil(6/4)+1 = 3. */
  hy_pool_params *p = parse_ok ("Pooling", attrs_new ("kernel", "(3, 3)",
          "stride", "(4, 4)", "pad", "(1, 1)", NULL));
  hy_shape in = shape_of (4, 1, 1, 7, 7), out;
  g_assert_true (infer ("Pooling", p, &in, 1, &out, NULL));
  g_assert_cmpint (out.dims[2], ==, 2);
  g_free (p);
  p = parse_ok ("Pooling", attrs_new ("kernel", "(3, 3)", "stride", "(4, 4)",
          "pad", "(1, 1)", "pooling_convention", "full", NULL));
  g_assert_true (infer ("Pooling", p, &in, 1, &out, NULL));
  g_assert_cmpint (out.dims[2], ==, 3);
  g_free (p);
}

static void
test_pool_errors (void)
{
  parse_fails ("Pooling", attrs_new ("pool_type", "max", NULL),
      HY_ERROR_INVALID, "'kernel'");
  parse_fails ("Pooling", attrs_new ("kernel", "(2, 2)",
          "pool_type", "median", NULL), HY_ERROR_INVALID, "'pool_type'");
  parse_fails ("Pooling", attrs_new ("kernel", "(2, 2)",
          "pooling_convention", "round", NULL), HY_ERROR_INVALID,
      "'pooling_convention'");
  parse_fails ("Pooling", attrs_new ("kernel", "(2, 2)", "pool_type", "lp",
          NULL), HY_ERROR_INVALID, "'p_value'");
  parse_fails ("Pooling", attrs_new ("kernel", "(2, 2)", "pool_type", "lp",
          "p_value", "4", NULL), HY_ERROR_UNSUPPORTED, "'p_value'");
  parse_fails ("Pooling", attrs_new ("kernel", "(2, 2)", "stride", "(2,)",
          NULL), HY_ERROR_INVALID, "'stride'");
  parse_fails ("Pooling", attrs_new ("kernel", "(2, 2)", "layout", "NHWC",
          NULL), HY_ERROR_UNSUPPORTED, "'layout'");
  parse_fails ("Pooling", attrs_new ("kernel", "(2, 2)",
          "count_include_pad", "2", NULL), HY_ERROR_INVALID,
      "'count_include_pad'");
  parse_fails ("Pooling", attrs_new ("kernel", "(2, 2)",
          "pooling_convention", "same", NULL), HY_ERROR_UNSUPPORTED,
      "'pooling_convention'");

  hy_pool_params *p = parse_ok ("Pooling", attrs_new ("kernel", "(2, 2)",
          NULL));
  hy_shape in = shape_of (3, 1, 3, 8);
  infer_fails ("Pooling", p, &in, 1, "4 dimensions");
  in = shape_of (2, 3, 8);
  infer_fails ("Pooling", p, &in, 1, "3 to 5 dimensions");
  in = shape_of (4, 1, 1, 1, 8);
  infer_fails ("Pooling", p, &in, 1, "exceeds input size 1");
  g_free (p);
}

/* Max pooling never picks the padding: an all-negative map stays negative.
 * Average pooling divides by the padded window, or by the in-image part
 * with count_include_pad=False. */
static void
test_pool_padding_kernel (void)
{
  float x[4] = { -1, -2, -3, -4 }, y[4];
  hy_shape xs = shape_of (4, 1, 1, 2, 2), ys = shape_of (4, 1, 1, 2, 2);
  float *data[1] = { x };

  hy_pool_params *p = parse_ok ("Pooling", attrs_new ("kernel", "(2, 2)",
          "pad", "(1, 1)", "stride", "(2, 2)", NULL));
  run_kernel ("Pooling", p, 1, &xs, data, &ys, y);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat (y[i], ==, x[i]);
  g_free (p);

  p = parse_ok ("Pooling", attrs_new ("kernel", "(2, 2)", "pad", "(1, 1)",
          "stride", "(2, 2)", "pool_type", "avg", NULL));
  run_kernel ("Pooling", p, 1, &xs, data, &ys, y);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat_with_epsilon (y[i], x[i] / 4, 1e-6);
  g_free (p);

  p = parse_ok ("Pooling", attrs_new ("kernel", "(2, 2)", "pad", "(1, 1)",
          "stride", "(2, 2)", "pool_type", "avg",
          "count_include_pad", "False", NULL));
  run_kernel ("Pooling", p, 1, &xs, data, &ys, y);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat_with_epsilon (y[i], x[i], 1e-6);
  g_free (p);
}

/* ---- BatchNorm ----------------------------------------------------------- */

static void
test_bn_defaults (void)
{
  const hy_op_info *op = hy_op_lookup ("BatchNorm");
  hy_batch_norm_params *p = parse_ok ("BatchNorm", attrs_new (NULL, NULL));
  /* MXNet's own defaults, not Gluon's: eps 1e-3 and gamma ignored. */
  g_assert_cmpfloat_with_epsilon (p->eps, 1e-3, 1e-9);
  g_assert_true (p->fix_gamma);
  g_assert_cmpint (p->axis, ==, 1);
  g_assert_false (p->output_mean_var);
  g_assert_cmpint (hy_op_num_inputs (op, p), ==, 5);
  g_assert_cmpint (hy_op_num_outputs (op, p), ==, 1);
  g_assert_cmpint (op->def->n_aux, ==, 2);
  g_assert_true (op->def->inplace);
  char buf[16];
  g_assert_cmpstr (hy_op_input_name (op, p, 3, buf, sizeof buf), ==,
      "moving_mean");
  g_assert_cmpstr (hy_op_input_name (op, p, 4, buf, sizeof buf), ==,
      "moving_var");
  g_free (p);

  p = parse_ok ("BatchNorm", attrs_new ("eps", "1e-05", "fix_gamma", "False",
          "axis", "-1", "output_mean_var", "True", "momentum", "0.9", NULL));
  g_assert_cmpfloat_with_epsilon (p->eps, 1e-5, 1e-10);
  g_assert_false (p->fix_gamma);
  g_assert_cmpint (hy_op_num_outputs (op, p), ==, 3);
  hy_shape c = shape_of (1, 5);
  hy_shape in[5] = { shape_of (3, 2, 3, 5), c, c, c, c }, out[3];
  g_assert_true (infer ("BatchNorm", p, in, 5, out, NULL));
  assert_shape (&out[0], &in[0]);
  assert_shape (&out[1], &c);
  assert_shape (&out[2], &c);
  g_free (p);
}

static void
test_bn_errors (void)
{
  parse_fails ("BatchNorm", attrs_new ("eps", "tiny", NULL),
      HY_ERROR_INVALID, "'eps'");
  parse_fails ("BatchNorm", attrs_new ("fix_gamma", "perhaps", NULL),
      HY_ERROR_INVALID, "'fix_gamma'");
  parse_fails ("BatchNorm", attrs_new ("axis", "one", NULL),
      HY_ERROR_INVALID, "'axis'");

  hy_batch_norm_params *p = parse_ok ("BatchNorm", attrs_new (NULL, NULL));
  hy_shape c = shape_of (1, 4);
  hy_shape in[5] = { shape_of (4, 2, 4, 3, 3), c, c, c, shape_of (1, 3) };
  infer_fails ("BatchNorm", p, in, 5, "moving_var has shape (3,); "
      "expected (4,)");
  g_free (p);

  p = parse_ok ("BatchNorm", attrs_new ("axis", "4", NULL));
  in[4] = c;
  infer_fails ("BatchNorm", p, in, 5, "'axis'");
  g_free (p);
}

/* fix_gamma ignores gamma; otherwise y = (x − mean)/sqrt(var + eps)·γ + β. */
static void
test_bn_kernel (void)
{
  float x[4] = { 1, 2, 3, 4 }, gamma[2] = { 2, 3 }, beta[2] = { 0.5f, -1 };
  float mean[2] = { 1, 2 }, var[2] = { 3, 0 }, y[4];
  hy_shape xs = shape_of (3, 1, 2, 2), c = shape_of (1, 2);
  hy_shape shapes[5] = { xs, c, c, c, c };
  float *data[5] = { x, gamma, beta, mean, var };

  hy_batch_norm_params *p = parse_ok ("BatchNorm",
      attrs_new ("eps", "1", NULL));
  run_kernel ("BatchNorm", p, 5, shapes, data, &xs, y);
  /* channel 0: (x − 1)/2 + 0.5; channel 1: (x − 2)/1 − 1 */
  const float fixed[] = { 0.5f, 1, 0, 1 };
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat_with_epsilon (y[i], fixed[i], 1e-6);
  g_free (p);

  p = parse_ok ("BatchNorm", attrs_new ("eps", "1", "fix_gamma", "False",
          NULL));
  run_kernel ("BatchNorm", p, 5, shapes, data, &xs, y);
  const float scaled[] = { 0.5f, 1.5f, 2, 5 };
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat_with_epsilon (y[i], scaled[i], 1e-6);
  g_free (p);
}

/* ---- Activation, LeakyReLU ----------------------------------------------- */

static void
test_activation (void)
{
  parse_fails ("Activation", attrs_new (NULL, NULL), HY_ERROR_INVALID,
      "'act_type'");
  parse_fails ("Activation", attrs_new ("act_type", "swish", NULL),
      HY_ERROR_INVALID, "'act_type' = 'swish'");
  hy_activation_params *p = parse_ok ("Activation",
      attrs_new ("act_type", "softrelu", NULL));
  g_assert_cmpint (p->act_type, ==, HY_ACT_SOFTRELU);
  g_assert_true (hy_op_lookup ("Activation")->def->inplace);

  float x[4] = { -30, 0, 1, 30 }, y[4];
  hy_shape s = shape_of (1, 4);
  float *data[1] = { x };
  run_kernel ("Activation", p, 1, &s, data, &s, y);
  g_assert_cmpfloat_with_epsilon (y[1], logf (2), 1e-6);
  g_assert_cmpfloat (y[3], ==, 30);     /* linear above 20 */
  g_assert_cmpfloat (y[0], >=, 0);
  g_free (p);
}

static void
test_leaky_relu (void)
{
  const hy_op_info *op = hy_op_lookup ("LeakyReLU");
  hy_leaky_relu_params *p = parse_ok ("LeakyReLU", attrs_new (NULL, NULL));
  g_assert_cmpint (p->act_type, ==, HY_LEAKY_LEAKY);
  g_assert_cmpfloat_with_epsilon (p->slope, 0.25, 1e-7);
  g_assert_cmpint (hy_op_num_inputs (op, p), ==, 1);
  g_free (p);

  p = parse_ok ("LeakyReLU", attrs_new ("act_type", "rrelu", NULL));
  g_assert_cmpfloat_with_epsilon (p->slope, (0.125 + 0.334) / 2, 1e-7);
  g_free (p);

  p = parse_ok ("LeakyReLU", attrs_new ("act_type", "prelu", NULL));
  g_assert_cmpint (hy_op_num_inputs (op, p), ==, 2);
  hy_shape in[2] = { shape_of (4, 2, 3, 4, 4), shape_of (1, 3) }, out;
  g_assert_true (infer ("LeakyReLU", p, in, 2, &out, NULL));
  in[1] = shape_of (1, 1);
  g_assert_true (infer ("LeakyReLU", p, in, 2, &out, NULL));
  in[1] = shape_of (1, 5);
  infer_fails ("LeakyReLU", p, in, 2, "gamma has shape (5,)");
  g_free (p);

  parse_fails ("LeakyReLU", attrs_new ("act_type", "swish", NULL),
      HY_ERROR_INVALID, "'act_type'");
  parse_fails ("LeakyReLU", attrs_new ("slope", "steep", NULL),
      HY_ERROR_INVALID, "'slope'");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ops-nn/conv/defaults", test_conv_defaults);
  g_test_add_func ("/ops-nn/conv/attr-errors", test_conv_attr_errors);
  g_test_add_func ("/ops-nn/conv/shape-errors", test_conv_shape_errors);
  g_test_add_func ("/ops-nn/conv/pointwise-is-matmul",
      test_conv_pointwise_is_matmul);
  g_test_add_func ("/ops-nn/conv/depthwise-box-sum",
      test_conv_depthwise_box_sum);
  g_test_add_func ("/ops-nn/fc/shapes", test_fc);
  g_test_add_func ("/ops-nn/fc/kernel", test_fc_kernel);
  g_test_add_func ("/ops-nn/dot/shapes", test_dot_shapes);
  g_test_add_func ("/ops-nn/pool/defaults", test_pool_defaults);
  g_test_add_func ("/ops-nn/pool/conventions", test_pool_conventions);
  g_test_add_func ("/ops-nn/pool/errors", test_pool_errors);
  g_test_add_func ("/ops-nn/pool/padding", test_pool_padding_kernel);
  g_test_add_func ("/ops-nn/batch-norm/defaults", test_bn_defaults);
  g_test_add_func ("/ops-nn/batch-norm/errors", test_bn_errors);
  g_test_add_func ("/ops-nn/batch-norm/kernel", test_bn_kernel);
  g_test_add_func ("/ops-nn/activation", test_activation);
  g_test_add_func ("/ops-nn/leaky-relu", test_leaky_relu);
  return g_test_run ();
}
