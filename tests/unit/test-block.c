/*
 * test-block.c — the block API (hybrid-block.h): Gluon's names, deferred
 * shapes, imperative vs hybridized runs (and that hybridized forwards do
 * not call the forward function again), the hybridize restrictions as
 * errors with their messages, export/imports, parameter files and the
 * initialisers.
 */
#include <math.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "hybrid-block.h"
#include "hybrid-npy.h"
#include "core/io/params-io.h"

#define TOL 1e-5
/* Against MXNet's own outputs, the project's conformance tolerance. */
#define MXNET_TOL 1e-4

/* ---- helpers ------------------------------------------------------------- */

static hy_tensor *
tensor_of (int ndim, const int64_t *dims, const float *values)
{
  hy_shape s = hy_shape_make (ndim, dims);
  hy_tensor *t = hy_tensor_new (&s);
  memcpy (t->data, values, hy_tensor_nbytes (t));
  return t;
}

static hy_tensor *
random_tensor (int ndim, const int64_t *dims)
{
  hy_shape s = hy_shape_make (ndim, dims);
  hy_tensor *t = hy_tensor_new (&s);
  hy_init normal = hy_init_normal (1.0f);
  g_assert_true (hy_init_fill (&normal, t, NULL));
  return t;
}

static void
assert_close_tol (const hy_tensor *a, const hy_tensor *b, double tol)
{
  g_assert_true (hy_shape_equal (&a->shape, &b->shape));
  double diff = 0, peak = 0;
  for (int64_t i = 0; i < hy_shape_numel (&a->shape); i++) {
    diff = fmax (diff, fabs ((double) a->data[i] - b->data[i]));
    peak = fmax (peak, fabs ((double) a->data[i]));
  }
  g_assert_cmpfloat (diff, <=, tol * fmax (1.0, peak));
}

static void
assert_close (const hy_tensor *a, const hy_tensor *b)
{
  assert_close_tol (a, b, TOL);
}

/* A forward of one input through the block, copied out. */
static hy_tensor *
forward_copy (hy_block *b, const hy_tensor *x)
{
  GError *error = NULL;
  const hy_tensor *y = hy_block_forward (b, x, &error);
  g_assert_no_error (error);
  return hy_tensor_copy (y);
}

/* The message of the error a forward of `b` on x fails with. */
static char *
forward_error (hy_block *b, const hy_tensor *x)
{
  GError *error = NULL;
  const hy_tensor *y = hy_block_forward (b, x, &error);
  g_assert_null (y);
  g_assert_nonnull (error);
  g_assert_true (error->domain == HY_ERROR);
  char *msg = g_strdup (error->message);
  g_error_free (error);
  return msg;
}

static void
assert_contains (const char *text, const char *part)
{
  if (!strstr (text, part))
    g_error ("expected \"%s\" in: %s", part, text);
}

static char *
make_tmp_dir (void)
{
  GError *error = NULL;
  char *dir = g_dir_make_tmp ("hy-block-XXXXXX", &error);
  g_assert_no_error (error);
  return dir;
}

static void
remove_dir (char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d))) {
    g_autofree char *path = g_build_filename (dir, name, NULL);
    g_unlink (path);
  }
  if (d)
    g_dir_close (d);
  g_rmdir (dir);
  g_free (dir);
}

/* ---- a small conv net with every layer ----------------------------------- */

static hy_value *
zoo_forward (hy_block *self, hy_F *F, hy_value *const *in, int n,
    hy_value *const *params)
{
  hy_value *x = hy_F_call_child (F, self, "features", in[0]);
  x = hy_F_call_child (F, self, "pool", x);
  x = hy_F_call_child (F, self, "flatten", x);
  x = hy_F_call_child (F, self, "dropout", x);
  x = hy_F_call_child (F, self, "out", x);
  return hy_F_dot (F, x, params[0], FALSE, TRUE);
}

static hy_block *
zoo_new (void)
{
  hy_block *net = hy_hybrid_block_new ("zoo", zoo_forward);
  hy_block *features = hy_block_register_child (net, "features",
      hy_hybrid_sequential_new ());
  hy_sequential_add (features, hy_conv2d_new (4, 3,
          &(hy_conv2d_opts) { .pad = 1, .activation = "relu" }));
  hy_sequential_add (features, hy_batch_norm_new ());
  hy_sequential_add (features, hy_max_pool2d_new (2, 0, 0));
  hy_sequential_add (features, hy_conv2d_new (6, 3,
          &(hy_conv2d_opts) { .stride = 1 }));
  hy_sequential_add (features, hy_avg_pool2d_new (2, 1, 1));
  hy_block_register_child (net, "pool", hy_global_avg_pool2d_new ());
  hy_block_register_child (net, "flatten", hy_flatten_new ());
  hy_block_register_child (net, "dropout", hy_dropout_new (0.5));
  hy_block_register_child (net, "out", hy_dense_new (5,
          &(hy_dense_opts) { .activation = "tanh" }));
  hy_block_add_param (net, "head", HY_DIMS (3, 5), hy_init_inherit ());
  return net;
}

/* Non-trivial BatchNorm statistics, so folding them is tested. */
static void
perturb_batch_norm (hy_block *net)
{
  hy_block *bn = hy_block_nth_child (hy_block_child (net, "features"), 1);
  for (int i = 0; i < 4; i++) {
    hy_parameter *p = hy_block_param (bn, i);
    hy_tensor *t = hy_tensor_copy (hy_parameter_data (p));
    for (int k = 0; k < 4; k++)
      t->data[k] = (i == 3 ? 0.5f : 0.1f) + 0.2f * (float) k;
    g_assert_true (hy_parameter_set_data (p, t, NULL));
    hy_tensor_free (t);
  }
}

/* ---- names --------------------------------------------------------------- */

static void
test_names (void)
{
  hy_block *net = zoo_new ();
  hy_block_set_prefix (net, "zoo9_");
  g_assert_cmpstr (hy_block_prefix (net), ==, "zoo9_");
  hy_block *features = hy_block_child (net, "features");
  g_assert_cmpstr (hy_block_prefix (features), ==, "zoo9_hybridsequential0_");
  g_assert_cmpstr (hy_block_prefix (hy_block_nth_child (features, 3)), ==,
      "zoo9_hybridsequential0_conv1_");
  g_assert_cmpstr (hy_block_prefix (hy_block_nth_child (features, 2)), ==,
      "zoo9_hybridsequential0_pool0_");
  g_assert_cmpstr (hy_block_prefix (hy_block_child (net, "pool")), ==,
      "zoo9_pool0_");
  hy_parameter *w = hy_block_find_param (hy_block_child (net, "out"),
      "weight");
  g_assert_cmpstr (hy_parameter_name (w), ==, "zoo9_dense0_weight");
  g_assert_cmpstr (hy_parameter_name (hy_block_find_param (net, "head")), ==,
      "zoo9_head");
  hy_parameter *gamma = hy_block_param (hy_block_nth_child (features, 1), 0);
  g_assert_cmpstr (hy_parameter_name (gamma), ==,
      "zoo9_hybridsequential0_batchnorm0_gamma");
  int n;
  g_autofree hy_parameter **all = hy_block_collect_params (net, &n);
  /* head; conv w, b; bn ×4; conv w, b; dense w, b */
  g_assert_cmpint (n, ==, 11);

  /* Blocks without a parent count per hint, globally. */
  hy_block *a = hy_dense_new (2, NULL), *b = hy_dense_new (2, NULL);
  int na = atoi (hy_block_prefix (a) + strlen ("dense"));
  int nb = atoi (hy_block_prefix (b) + strlen ("dense"));
  g_assert_cmpint (nb, ==, na + 1);
  hy_block_free (a);
  hy_block_free (b);
  hy_block_free (net);
}

/* ---- imperative and deferred shapes -------------------------------------- */

static void
test_dense_imperative (void)
{
  hy_block *dense = hy_dense_new (2, NULL);
  hy_parameter *w = hy_block_find_param (dense, "weight");
  hy_shape s = hy_parameter_shape (w);
  g_assert_cmpint (s.ndim, ==, 2);
  g_assert_cmpint (s.dims[1], ==, 0);          /* deferred */
  g_assert_true (hy_block_initialize (dense, hy_init_xavier (), NULL));
  g_assert_null (hy_parameter_data (w));       /* still deferred */

  const float xv[] = { 1, 2, 3, -1, 0, 1 };
  hy_tensor *x = tensor_of (HY_DIMS (2, 3), xv);
  hy_tensor *y = forward_copy (dense, x);
  s = hy_parameter_shape (w);
  g_assert_cmpint (s.dims[1], ==, 3);          /* learnt from the input */

  const float wv[] = { 1, 0, -1, 0.5f, 0.5f, 0.5f }, bv[] = { 0.25f, -1 };
  hy_tensor *wt = tensor_of (HY_DIMS (2, 3), wv);
  hy_tensor *bt = tensor_of (HY_DIMS (2), bv);
  g_assert_true (hy_parameter_set_data (w, wt, NULL));
  g_assert_true (hy_parameter_set_data (hy_block_find_param (dense, "bias"),
          bt, NULL));
  hy_tensor_free (y);
  y = forward_copy (dense, x);
  const float want[] = { 1 - 3 + 0.25f, 3 - 1, -1 - 1 + 0.25f, 0 - 1 };
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat_with_epsilon (y->data[i], want[i], 1e-6);

  /* A mismatching shape is refused with the parameter's name. */
  GError *error = NULL;
  g_assert_false (hy_parameter_set_data (w, bt, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_SHAPE);
  assert_contains (error->message, "_weight");
  g_clear_error (&error);

  hy_tensor_free (wt);
  hy_tensor_free (bt);
  hy_tensor_free (x);
  hy_tensor_free (y);
  hy_block_free (dense);
}

static void
test_uninitialised (void)
{
  hy_block *dense = hy_dense_new (2, NULL);
  hy_tensor *x = random_tensor (HY_DIMS (1, 3));
  g_autofree char *msg = forward_error (dense, x);
  assert_contains (msg, "has not been initialised");
  assert_contains (msg, "hy_block_initialize");
  hy_tensor_free (x);
  hy_block_free (dense);
}

/* ---- hybridize ----------------------------------------------------------- */

static int counted_calls;

static hy_value *
counting_forward (hy_block *self, hy_F *F, hy_value *const *in, int n,
    hy_value *const *params)
{
  counted_calls++;
  hy_value *h = hy_F_relu (F, hy_F_call_child (F, self, "hidden", in[0]));
  return hy_F_call_child (F, self, "output", h);
}

static hy_block *
counting_new (void)
{
  hy_block *net = hy_hybrid_block_new ("counting", counting_forward);
  hy_block_register_child (net, "hidden", hy_dense_new (8, NULL));
  hy_block_register_child (net, "output", hy_dense_new (3, NULL));
  g_assert_true (hy_block_initialize (net, hy_init_xavier (), NULL));
  return net;
}

static void
test_hybridize_calls_forward_once (void)
{
  hy_block *net = counting_new ();
  hy_tensor *x = random_tensor (HY_DIMS (2, 5));
  counted_calls = 0;
  hy_tensor *imperative = forward_copy (net, x);
  hy_tensor_free (forward_copy (net, x));
  g_assert_cmpint (counted_calls, ==, 2);

  hy_block_hybridize (net, HY_HYBRID_STATIC_ALLOC | HY_HYBRID_STATIC_SHAPE);
  g_assert_true (hy_block_is_hybridized (net));
  for (int i = 0; i < 3; i++) {
    hy_tensor *y = forward_copy (net, x);
    assert_close (imperative, y);
    hy_tensor_free (y);
  }
  g_assert_cmpint (counted_calls, ==, 3);

  /* A new batch size re-plans, without tracing again. */
  hy_tensor *x3 = random_tensor (HY_DIMS (3, 5));
  hy_tensor *hybrid3 = forward_copy (net, x3);
  g_assert_cmpint (counted_calls, ==, 3);
  g_assert_cmpint (hybrid3->shape.dims[0], ==, 3);
  hy_block_dehybridize (net);
  hy_tensor *imperative3 = forward_copy (net, x3);
  g_assert_cmpint (counted_calls, ==, 4);
  assert_close (imperative3, hybrid3);

  /* hybridize() again drops the traced graph: the next forward traces. */
  hy_block_hybridize (net, HY_HYBRID_DEFAULT);
  hy_tensor_free (forward_copy (net, x));
  hy_tensor_free (forward_copy (net, x));
  g_assert_cmpint (counted_calls, ==, 5);

  hy_tensor_free (imperative);
  hy_tensor_free (imperative3);
  hy_tensor_free (hybrid3);
  hy_tensor_free (x3);
  hy_tensor_free (x);
  hy_block_free (net);
}

static void
test_parameters_changed_after_hybridize (void)
{
  hy_block *net = counting_new ();
  hy_tensor *x = random_tensor (HY_DIMS (1, 5));
  hy_block_hybridize (net, HY_HYBRID_STATIC_ALLOC);
  hy_tensor *before = forward_copy (net, x);
  /* New weights reach the compiled plan. */
  g_assert_true (hy_block_initialize (net, hy_init_uniform (0.5f), NULL));
  hy_tensor *hybrid = forward_copy (net, x);
  hy_block_dehybridize (net);
  hy_tensor *imperative = forward_copy (net, x);
  assert_close (imperative, hybrid);
  g_assert_true (fabs (before->data[0] - hybrid->data[0]) > 1e-6);
  hy_tensor_free (before);
  hy_tensor_free (hybrid);
  hy_tensor_free (imperative);
  hy_tensor_free (x);
  hy_block_free (net);
}

static void
test_zoo_modes (void)
{
  hy_random_seed (7);
  hy_block *net = zoo_new ();
  g_assert_true (hy_block_initialize (net, hy_init_xavier (), NULL));
  hy_tensor *x = random_tensor (HY_DIMS (2, 3, 9, 9));
  hy_tensor_free (forward_copy (net, x));      /* completes the shapes */
  perturb_batch_norm (net);
  hy_tensor *imperative = forward_copy (net, x);
  g_assert_cmpint (imperative->shape.ndim, ==, 2);
  g_assert_cmpint (imperative->shape.dims[1], ==, 3);
  hy_block_hybridize (net, HY_HYBRID_STATIC_ALLOC | HY_HYBRID_STATIC_SHAPE);
  hy_tensor *hybrid = forward_copy (net, x);
  assert_close (imperative, hybrid);
  hy_tensor_free (imperative);
  hy_tensor_free (hybrid);
  hy_tensor_free (x);
  hy_block_free (net);
}

/* A plain Sequential hybridizes its hybrid children one by one. */
static void
test_plain_parent (void)
{
  hy_block *seq = hy_sequential_new ();
  hy_sequential_add (seq, counting_new ());
  hy_sequential_add (seq, hy_dense_new (2, NULL));
  g_assert_true (hy_block_initialize (seq, hy_init_xavier (), NULL));
  hy_tensor *x = random_tensor (HY_DIMS (1, 5));
  counted_calls = 0;
  hy_tensor *imperative = forward_copy (seq, x);
  hy_block_hybridize (seq, HY_HYBRID_DEFAULT);
  hy_tensor *a = forward_copy (seq, x);
  hy_tensor *b = forward_copy (seq, x);
  g_assert_cmpint (counted_calls, ==, 2);      /* 1 imperative + 1 trace */
  assert_close (imperative, a);
  assert_close (imperative, b);
  /* Only hybrid blocks export. */
  GError *error = NULL;
  g_assert_false (hy_block_export (seq, "unused", 0, &error));
  assert_contains (error->message, "plain block");
  g_clear_error (&error);
  hy_tensor_free (imperative);
  hy_tensor_free (a);
  hy_tensor_free (b);
  hy_tensor_free (x);
  hy_block_free (seq);
}

static hy_value *
two_outputs_forward (hy_block *self, hy_F *F, hy_value *const *in, int n,
    hy_value *const *params)
{
  hy_value *out[2] = { hy_F_relu (F, in[0]),
    hy_F_mul_scalar (F, in[0], 2.0) };
  return hy_F_group (F, out, 2);
}

static void
test_group_outputs (void)
{
  hy_block *net = hy_hybrid_block_new ("two", two_outputs_forward);
  const float xv[] = { -1, 2 };
  hy_tensor *x = tensor_of (HY_DIMS (1, 2), xv);
  for (int mode = 0; mode < 2; mode++) {
    if (mode)
      hy_block_hybridize (net, HY_HYBRID_DEFAULT);
    g_assert_nonnull (hy_block_forward (net, x, NULL));
    g_assert_cmpint (hy_block_n_outputs (net), ==, 2);
    g_assert_cmpfloat (hy_block_output (net, 0)->data[0], ==, 0);
    g_assert_cmpfloat (hy_block_output (net, 1)->data[1], ==, 4);
  }
  hy_tensor_free (x);
  hy_block_free (net);
}

/* Every typed wrapper, in one forward: the same in both modes. */
static hy_value *
wrappers_forward (hy_block *self, hy_F *F, hy_value *const *in, int n,
    hy_value *const *p)
{
  hy_value *x = hy_F_convolution (F, in[0], p[0], p[1], 4, 3, 1, 1);
  x = hy_F_batch_norm (F, x, p[2], p[3], p[4], p[5], 1e-5, 1);
  x = hy_F_activation (F, x, "relu");
  x = hy_F_pooling (F, x, "max", 2, 2, 0, FALSE);
  hy_value *g = hy_F_pooling (F, x, "avg", 0, 0, 0, TRUE);
  hy_value *halves[2] = { hy_F_slice_axis (F, x, 1, 0, 2),
    hy_F_slice_axis (F, x, 1, 2, 4) };
  x = hy_F_concat (F, halves, 2, 1);
  x = hy_F_broadcast_mul (F, x, g);
  x = hy_F_elemwise_sub (F, hy_F_sigmoid (F, x), hy_F_tanh (F, x));
  x = hy_F_elemwise_mul (F, hy_F_exp (F, x), hy_F_identity (F, x));
  x = hy_F_elemwise_div (F, hy_F_plus_scalar (F, x, 3.0),
      hy_F_plus_scalar (F, x, 2.5));
  x = hy_F_flatten (F, x);
  x = hy_F_fully_connected (F, x, p[6], NULL, 5, TRUE);
  x = hy_F_broadcast_sub (F, x, hy_F_broadcast_div (F, x,
          hy_F_mul_scalar (F, x, 4.0)));
  x = hy_F_broadcast_add (F, x, hy_F_elemwise_add (F, x, x));
  return hy_F_softmax (F, x, -1);
}

static void
test_typed_wrappers (void)
{
  hy_random_seed (9);
  hy_block *b = hy_hybrid_block_new ("wrappers", wrappers_forward);
  hy_block_add_param (b, "conv_weight", HY_DIMS (4, 2, 3, 3),
      hy_init_inherit ());
  hy_block_add_param (b, "conv_bias", HY_DIMS (4), hy_init_inherit ());
  hy_block_add_param (b, "gamma", HY_DIMS (4), hy_init_inherit ());
  hy_block_add_param (b, "beta", HY_DIMS (4), hy_init_inherit ());
  hy_block_add_param (b, "running_mean", HY_DIMS (4), hy_init_inherit ());
  hy_block_add_param (b, "running_var", HY_DIMS (4), hy_init_inherit ());
  hy_block_add_param (b, "fc_weight", HY_DIMS (5, 36), hy_init_inherit ());
  g_assert_true (hy_block_initialize (b, hy_init_xavier (), NULL));
  hy_tensor *x = random_tensor (HY_DIMS (2, 2, 6, 6));
  hy_tensor *imperative = forward_copy (b, x);
  g_assert_cmpint (imperative->shape.dims[1], ==, 5);
  float sum = 0;
  for (int i = 0; i < 5; i++)
    sum += imperative->data[i];
  g_assert_cmpfloat_with_epsilon (sum, 1.0f, 1e-5);
  hy_block_hybridize (b, HY_HYBRID_DEFAULT);
  hy_tensor *hybrid = forward_copy (b, x);
  assert_close (imperative, hybrid);
  hy_tensor_free (imperative);
  hy_tensor_free (hybrid);
  hy_tensor_free (x);
  hy_block_free (b);
}

/* ---- the hybridize restrictions ------------------------------------------ */

typedef enum restriction {
  READ_SHAPE, READ_DTYPE, READ_DATA, SET_ITEM, INDEX, ELEMWISE,
} restriction;

static hy_value *
restricted_forward (hy_block *self, hy_F *F, hy_value *const *in, int n,
    hy_value *const *params)
{
  restriction *r = hy_block_get_user_data (self);
  hy_value *x = in[0];
  hy_shape s;
  switch (*r) {
    case READ_SHAPE:
      if (!hy_value_shape (x, &s))
        return NULL;
      return hy_F_mul_scalar (F, x, (double) s.dims[0]);
    case READ_DTYPE:
      return hy_value_dtype (x) < 0 ? NULL : hy_F_relu (F, x);
    case READ_DATA:
      return hy_value_data (x) ? hy_F_relu (F, x) : NULL;
    case SET_ITEM:
      x = hy_F_relu (F, x);
      return hy_value_set_item (x, 0, 2.0f) ? x : NULL;
    case INDEX:
      return hy_value_index (x, 0);
    case ELEMWISE:
      /* x is (2, 3), params[0] is (1, 3): needs broadcasting. */
      return hy_F_elemwise_add (F, x, params[0]);
  }
  return NULL;
}

static hy_block *
restricted_new (restriction r)
{
  hy_block *b = hy_hybrid_block_new ("restricted", restricted_forward);
  restriction *cfg = g_new (restriction, 1);
  *cfg = r;
  hy_block_set_user_data (b, cfg, g_free);
  if (r == ELEMWISE)
    hy_block_add_param (b, "offset", HY_DIMS (1, 3), hy_init_ones ());
  g_assert_true (hy_block_initialize (b, hy_init_inherit (), NULL));
  return b;
}

/* Imperatively the forward works; traced it fails with a message naming
 * the restriction, the symbol and a hint. */
static void
check_restriction (restriction r, const char *what, const char *hint)
{
  hy_block *b = restricted_new (r);
  const float xv[] = { 1, -2, 3, -4, 5, -6 };
  hy_tensor *x = tensor_of (HY_DIMS (2, 3), xv);
  GError *error = NULL;
  const hy_tensor *y = hy_block_forward (b, x, &error);
  g_assert_no_error (error);
  g_assert_nonnull (y);
  hy_block_hybridize (b, HY_HYBRID_DEFAULT);
  g_autofree char *msg = forward_error (b, x);
  assert_contains (msg, "hybridize: tracing block 'restricted");
  assert_contains (msg, "hybridize restriction: ");
  assert_contains (msg, what);
  assert_contains (msg, "symbol 'data'");
  assert_contains (msg, "Hint: ");
  assert_contains (msg, hint);
  hy_tensor_free (x);
  hy_block_free (b);
}

static void
test_restriction_shape (void)
{
  check_restriction (READ_SHAPE, "the shape", "reshape with 0");
}

static void
test_restriction_dtype (void)
{
  check_restriction (READ_DTYPE, "the dtype", "when you create the block");
}

static void
test_restriction_data (void)
{
  check_restriction (READ_DATA, "the data", "asnumpy");
}

static void
test_restriction_set_item (void)
{
  /* The traced value is relu's output, not 'data'. */
  hy_block *b = restricted_new (SET_ITEM);
  const float xv[] = { 1, -2, 3, -4, 5, -6 };
  hy_tensor *x = tensor_of (HY_DIMS (2, 3), xv);
  const hy_tensor *y = hy_block_forward (b, x, NULL);
  g_assert_nonnull (y);
  g_assert_cmpfloat (y->data[0], ==, 2);       /* row 0 set to 2 */
  g_assert_cmpfloat (y->data[2], ==, 2);
  g_assert_cmpfloat (y->data[3], ==, 0);       /* relu (-4) */
  g_assert_cmpfloat (x->data[0], ==, 1);       /* the input is untouched */
  hy_block_hybridize (b, HY_HYBRID_DEFAULT);
  g_autofree char *msg = forward_error (b, x);
  assert_contains (msg, "hybridize restriction: item assignment");
  assert_contains (msg, "does not support item assignment");
  assert_contains (msg, "Hint: compute the new value with ops");
  hy_tensor_free (x);
  hy_block_free (b);
}

static void
test_restriction_index (void)
{
  check_restriction (INDEX, "[] slicing", "hy_F_slice_axis");
  /* Imperatively x[0] is the first row, the axis dropped. */
  hy_block *b = restricted_new (INDEX);
  const float xv[] = { 1, -2, 3, -4, 5, -6 };
  hy_tensor *x = tensor_of (HY_DIMS (2, 3), xv);
  const hy_tensor *y = hy_block_forward (b, x, NULL);
  g_assert_cmpint (y->shape.ndim, ==, 1);
  g_assert_cmpint (y->shape.dims[0], ==, 3);
  g_assert_cmpfloat (y->data[1], ==, -2);
  hy_tensor_free (x);
  hy_block_free (b);
}

static void
test_restriction_elemwise (void)
{
  hy_block *b = restricted_new (ELEMWISE);
  const float xv[] = { 1, -2, 3, -4, 5, -6 };
  hy_tensor *x = tensor_of (HY_DIMS (2, 3), xv);
  /* MXNet's elemwise_add needs equal shapes imperatively too. */
  for (int mode = 0; mode < 2; mode++) {
    if (mode)
      hy_block_hybridize (b, HY_HYBRID_DEFAULT);
    g_autofree char *msg = forward_error (b, x);
    assert_contains (msg, "F.elemwise_add: lhs (2, 3) and rhs (1, 3)");
    assert_contains (msg, "hybridize restriction");
    assert_contains (msg, "Hint: use the broadcast op, broadcast_add "
        "(hy_F_broadcast_add)");
  }
  hy_tensor_free (x);
  hy_block_free (b);
}

static hy_value *
broadcasting_forward (hy_block *self, hy_F *F, hy_value *const *in, int n,
    hy_value *const *params)
{
  return hy_F_broadcast_add (F, in[0], params[0]);
}

static void
test_broadcast_is_the_fix (void)
{
  hy_block *b = hy_hybrid_block_new ("fixed", broadcasting_forward);
  hy_block_add_param (b, "offset", HY_DIMS (1, 3), hy_init_ones ());
  g_assert_true (hy_block_initialize (b, hy_init_inherit (), NULL));
  const float xv[] = { 1, -2, 3, -4, 5, -6 };
  hy_tensor *x = tensor_of (HY_DIMS (2, 3), xv);
  hy_tensor *imperative = forward_copy (b, x);
  g_assert_cmpfloat (imperative->data[3], ==, -3);
  hy_block_hybridize (b, HY_HYBRID_DEFAULT);
  hy_tensor *hybrid = forward_copy (b, x);
  assert_close (imperative, hybrid);
  hy_tensor_free (imperative);
  hy_tensor_free (hybrid);
  hy_tensor_free (x);
  hy_block_free (b);
}

static hy_value *
calls_plain_forward (hy_block *self, hy_F *F, hy_value *const *in, int n,
    hy_value *const *params)
{
  return hy_F_call_child (F, self, "body", in[0]);
}

static void
test_plain_child_of_hybrid (void)
{
  hy_block *net = hy_hybrid_block_new ("outer", calls_plain_forward);
  hy_block *body = hy_block_register_child (net, "body", hy_sequential_new ());
  hy_sequential_add (body, hy_dense_new (2, NULL));
  g_assert_true (hy_block_initialize (net, hy_init_xavier (), NULL));
  hy_tensor *x = random_tensor (HY_DIMS (1, 3));
  hy_tensor_free (forward_copy (net, x));       /* imperative: fine */
  hy_block_hybridize (net, HY_HYBRID_DEFAULT);
  g_autofree char *msg = forward_error (net, x);
  assert_contains (msg, "is a plain block, called while tracing");
  assert_contains (msg, "hy_hybrid_sequential_new");
  hy_tensor_free (x);
  hy_block_free (net);
}

static hy_value *
printing_forward (hy_block *self, hy_F *F, hy_value *const *in, int n,
    hy_value *const *params)
{
  char **seen = hy_block_get_user_data (self);
  g_free (*seen);
  *seen = hy_value_to_string (in[0]);
  return hy_F_relu (F, in[0]);
}

static void
test_print (void)
{
  char *seen = NULL;
  hy_block *b = hy_hybrid_block_new ("printing", printing_forward);
  hy_block_set_user_data (b, &seen, NULL);
  const float xv[] = { 0.5f, -1, 2, 3 };
  hy_tensor *x = tensor_of (HY_DIMS (1, 4), xv);
  g_assert_nonnull (hy_block_forward (b, x, NULL));
  g_assert_cmpstr (seen, ==, "[[0.5 -1 2 3]]\n<NDArray 1x4 @cpu(0)>");
  hy_block_hybridize (b, HY_HYBRID_DEFAULT);
  g_assert_nonnull (hy_block_forward (b, x, NULL));
  g_assert_cmpstr (seen, ==, "<Symbol data>");
  g_free (seen);
  hy_tensor_free (x);
  hy_block_free (b);
}

/* ---- files --------------------------------------------------------------- */

static void
test_export_imports (void)
{
  hy_random_seed (11);
  char *dir = make_tmp_dir ();
  g_autofree char *prefix = g_build_filename (dir, "zoo", NULL);
  hy_block *net = zoo_new ();
  g_assert_true (hy_block_initialize (net, hy_init_xavier (), NULL));
  hy_tensor *x = random_tensor (HY_DIMS (1, 3, 8, 8));

  GError *error = NULL;
  g_assert_false (hy_block_export (net, prefix, 0, &error));
  assert_contains (error->message, "call hy_block_hybridize () and run a "
      "forward first");
  g_clear_error (&error);

  hy_block_hybridize (net, HY_HYBRID_DEFAULT);
  hy_tensor *ours = forward_copy (net, x);
  perturb_batch_norm (net);
  hy_tensor_free (ours);
  ours = forward_copy (net, x);
  g_assert_true (hy_block_export (net, prefix, 3, &error));
  g_assert_no_error (error);

  g_autofree char *sym = g_strconcat (prefix, "-symbol.json", NULL);
  g_autofree char *par = g_strconcat (prefix, "-0003.params", NULL);
  g_autofree char *json = NULL;
  g_assert_true (g_file_get_contents (sym, &json, NULL, NULL));
  assert_contains (json, "\"name\": \"data\"");
  assert_contains (json, "_dense0_fwd");
  assert_contains (json, "_dense0_tanh_fwd");
  assert_contains (json, "_batchnorm0_running_var");
  assert_contains (json, "_dropout0_fwd");
  hy_param_list *list = hy_params_load (par, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (list->n, ==, 11);
  guint aux = 0;
  for (guint i = 0; i < list->n; i++)
    aux += list->items[i].kind == HY_PARAM_AUX;
  g_assert_cmpuint (aux, ==, 2);
  hy_param_list_free (list);

  /* imports: the core loader as a block, in both modes. */
  hy_block *back = hy_block_imports (sym, NULL, &error);
  g_assert_no_error (error);
  hy_tensor *imported = forward_copy (back, x);
  assert_close (ours, imported);
  hy_block_hybridize (back, HY_HYBRID_STATIC_ALLOC);
  hy_tensor *imported_hybrid = forward_copy (back, x);
  assert_close (ours, imported_hybrid);

  hy_tensor_free (imported);
  hy_tensor_free (imported_hybrid);
  hy_tensor_free (ours);
  hy_tensor_free (x);
  hy_block_free (back);
  hy_block_free (net);
  remove_dir (dir);
}

static hy_value *
wrapper_forward (hy_block *self, hy_F *F, hy_value *const *in, int n,
    hy_value *const *params)
{
  return hy_F_call_child (F, self, "inner", in[0]);
}

/* The committed MXNet fixtures through hy_block_imports: imperatively,
 * hybridized, and traced as the child of a block of our own. */
static void
test_imports_fixtures (void)
{
  const char *root = g_getenv ("HY_SOURCE_DIR");
  if (!root) {
    g_test_skip ("HY_SOURCE_DIR is not set");
    return;
  }
  static const char *const cases[] = { "seed_net", "seed_mlp",
    "seed_hybridnet", "legacy_convbn", "legacy_attr09", NULL };
  for (int c = 0; cases[c]; c++) {
    g_autofree char *dir = g_build_filename (root, "tests", "fixtures",
        cases[c], NULL);
    g_autofree char *sym = g_build_filename (dir, "model-symbol.json", NULL);
    g_autofree char *in = g_build_filename (dir, "input0.npy", NULL);
    g_autofree char *out = g_build_filename (dir, "output0.npy", NULL);
    GError *error = NULL;
    hy_tensor *x = hy_npy_load (in, &error);
    g_assert_no_error (error);
    hy_tensor *want = hy_npy_load (out, &error);
    g_assert_no_error (error);

    hy_block *net = hy_block_imports (sym, NULL, &error);
    g_assert_no_error (error);
    hy_tensor *imperative = forward_copy (net, x);
    assert_close_tol (want, imperative, MXNET_TOL);
    hy_block_hybridize (net, HY_HYBRID_STATIC_ALLOC);
    hy_tensor *hybrid = forward_copy (net, x);
    assert_close_tol (want, hybrid, MXNET_TOL);

    hy_block *wrapper = hy_hybrid_block_new ("wrapper", wrapper_forward);
    hy_block_register_child (wrapper, "inner",
        hy_block_imports (sym, NULL, NULL));
    hy_block_hybridize (wrapper, HY_HYBRID_DEFAULT);
    hy_tensor *wrapped = forward_copy (wrapper, x);
    assert_close_tol (want, wrapped, MXNET_TOL);

    hy_tensor_free (wrapped);
    hy_tensor_free (hybrid);
    hy_tensor_free (imperative);
    hy_tensor_free (want);
    hy_tensor_free (x);
    hy_block_free (wrapper);
    hy_block_free (net);
  }
}

static void
test_save_load_parameters (void)
{
  hy_random_seed (3);
  char *dir = make_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "zoo.params", NULL);
  hy_block *net = zoo_new ();
  g_assert_true (hy_block_initialize (net, hy_init_xavier (), NULL));
  hy_tensor *x = random_tensor (HY_DIMS (1, 3, 8, 8));
  hy_tensor *ours = forward_copy (net, x);
  GError *error = NULL;
  g_assert_true (hy_block_save_parameters (net, path, &error));
  g_assert_no_error (error);

  hy_param_list *list = hy_params_load (path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (hy_param_list_find (list, "head"));
  g_assert_nonnull (hy_param_list_find (list, "features.0.weight"));
  g_assert_nonnull (hy_param_list_find (list, "features.1.running_mean"));
  g_assert_nonnull (hy_param_list_find (list, "out.bias"));
  g_assert_true (list->items[0].kind == HY_PARAM_PLAIN);
  hy_param_list_free (list);

  /* A fresh net (different global names) takes them by structure, its
   * deferred shapes from the file. */
  hy_block *fresh = zoo_new ();
  g_assert_true (hy_block_load_parameters (fresh, path, &error));
  g_assert_no_error (error);
  hy_tensor *loaded = forward_copy (fresh, x);
  assert_close (ours, loaded);

  /* Missing and extra arrays are errors naming them. */
  hy_block *other = hy_hybrid_sequential_new ();
  hy_sequential_add (other, hy_dense_new (2, NULL));
  g_assert_false (hy_block_load_parameters (other, path, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_MISSING);
  assert_contains (error->message, "is not in the file");
  g_clear_error (&error);
  hy_block *bigger = zoo_new ();
  hy_block_add_param (bigger, "extra", HY_DIMS (2), hy_init_zeros ());
  g_assert_false (hy_block_load_parameters (bigger, path, &error));
  assert_contains (error->message, "extra");
  g_clear_error (&error);

  hy_tensor_free (ours);
  hy_tensor_free (loaded);
  hy_tensor_free (x);
  hy_block_free (net);
  hy_block_free (fresh);
  hy_block_free (other);
  hy_block_free (bigger);
  remove_dir (dir);
}

/* An export's params file (full names, arg:/aux:) loads too. */
static void
test_load_export_params (void)
{
  char *dir = make_tmp_dir ();
  g_autofree char *prefix = g_build_filename (dir, "m", NULL);
  hy_block *net = counting_new ();
  hy_block_set_prefix (net, "same_");
  hy_tensor *x = random_tensor (HY_DIMS (1, 5));
  hy_block_hybridize (net, HY_HYBRID_DEFAULT);
  hy_tensor *ours = forward_copy (net, x);
  g_assert_true (hy_block_export (net, prefix, 0, NULL));

  hy_block *twin = hy_hybrid_block_new ("counting", counting_forward);
  hy_block_set_prefix (twin, "same_");
  hy_block_register_child (twin, "hidden", hy_dense_new (8, NULL));
  hy_block_register_child (twin, "output", hy_dense_new (3, NULL));
  g_autofree char *par = g_strconcat (prefix, "-0000.params", NULL);
  GError *error = NULL;
  g_assert_true (hy_block_load_parameters (twin, par, &error));
  g_assert_no_error (error);
  hy_tensor *loaded = forward_copy (twin, x);
  assert_close (ours, loaded);
  hy_tensor_free (ours);
  hy_tensor_free (loaded);
  hy_tensor_free (x);
  hy_block_free (net);
  hy_block_free (twin);
  remove_dir (dir);
}

/* ---- initialisers -------------------------------------------------------- */

static void
test_initialisers (void)
{
  hy_shape s = { 2, { 64, 32 } };
  hy_tensor *t = hy_tensor_new (&s);
  int64_t n = hy_shape_numel (&s);

  hy_init init = hy_init_constant (0.25f);
  g_assert_true (hy_init_fill (&init, t, NULL));
  g_assert_cmpfloat (t->data[n - 1], ==, 0.25f);

  init = hy_init_uniform (0.07f);
  g_assert_true (hy_init_fill (&init, t, NULL));
  float lo = 1, hi = -1;
  for (int64_t i = 0; i < n; i++) {
    lo = MIN (lo, t->data[i]);
    hi = MAX (hi, t->data[i]);
  }
  g_assert_cmpfloat (lo, >=, -0.07f);
  g_assert_cmpfloat (hi, <=, 0.07f);
  g_assert_cmpfloat (hi - lo, >, 0.1f);

  init = hy_init_normal (2.0f);
  g_assert_true (hy_init_fill (&init, t, NULL));
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < n; i++) {
    sum += t->data[i];
    sq += (double) t->data[i] * t->data[i];
  }
  double mean = sum / n, sd = sqrt (sq / n - mean * mean);
  g_assert_cmpfloat (fabs (mean), <, 0.15);
  g_assert_cmpfloat (fabs (sd - 2.0), <, 0.15);

  /* Xavier, MXNet's defaults: U(±sqrt(3 / ((in + out) / 2))). */
  init = hy_init_xavier ();
  g_assert_true (hy_init_fill (&init, t, NULL));
  double bound = sqrt (3.0 / ((32 + 64) / 2.0));
  double peak = 0;
  for (int64_t i = 0; i < n; i++)
    peak = fmax (peak, fabs (t->data[i]));
  g_assert_cmpfloat (peak, <=, bound);
  g_assert_cmpfloat (peak, >, 0.9 * bound);

  /* The same seed, the same numbers. */
  hy_tensor *u = hy_tensor_new (&s);
  hy_random_seed (5);
  g_assert_true (hy_init_fill (&init, t, NULL));
  hy_random_seed (5);
  g_assert_true (hy_init_fill (&init, u, NULL));
  g_assert_cmpmem (t->data, hy_tensor_nbytes (t), u->data,
      hy_tensor_nbytes (u));

  GError *error = NULL;
  hy_shape v = { 1, { 4 } };
  hy_tensor *vec = hy_tensor_new (&v);
  g_assert_false (hy_init_fill (&init, vec, &error));
  assert_contains (error->message, "at least 2 dimensions");
  g_clear_error (&error);

  /* By name: biases zeros whatever the global initialiser. */
  hy_block *dense = hy_dense_new (3, &(hy_dense_opts) { .in_units = 4 });
  g_assert_true (hy_block_initialize (dense, hy_init_constant (7), NULL));
  g_assert_cmpfloat (hy_parameter_data (hy_block_param (dense, 0))->data[0],
      ==, 7);
  g_assert_cmpfloat (hy_parameter_data (hy_block_param (dense, 1))->data[0],
      ==, 0);
  hy_block_free (dense);

  hy_tensor_free (vec);
  hy_tensor_free (t);
  hy_tensor_free (u);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/block/names", test_names);
  g_test_add_func ("/block/dense-imperative", test_dense_imperative);
  g_test_add_func ("/block/uninitialised", test_uninitialised);
  g_test_add_func ("/block/hybridize/calls-forward-once",
      test_hybridize_calls_forward_once);
  g_test_add_func ("/block/hybridize/parameters-changed",
      test_parameters_changed_after_hybridize);
  g_test_add_func ("/block/hybridize/every-layer", test_zoo_modes);
  g_test_add_func ("/block/hybridize/plain-parent", test_plain_parent);
  g_test_add_func ("/block/hybridize/group-outputs", test_group_outputs);
  g_test_add_func ("/block/typed-wrappers", test_typed_wrappers);
  g_test_add_func ("/block/restriction/shape", test_restriction_shape);
  g_test_add_func ("/block/restriction/dtype", test_restriction_dtype);
  g_test_add_func ("/block/restriction/data", test_restriction_data);
  g_test_add_func ("/block/restriction/set-item", test_restriction_set_item);
  g_test_add_func ("/block/restriction/index", test_restriction_index);
  g_test_add_func ("/block/restriction/elemwise", test_restriction_elemwise);
  g_test_add_func ("/block/restriction/broadcast-is-the-fix",
      test_broadcast_is_the_fix);
  g_test_add_func ("/block/restriction/plain-child",
      test_plain_child_of_hybrid);
  g_test_add_func ("/block/print", test_print);
  g_test_add_func ("/block/export-imports", test_export_imports);
  g_test_add_func ("/block/imports-fixtures", test_imports_fixtures);
  g_test_add_func ("/block/save-load-parameters", test_save_load_parameters);
  g_test_add_func ("/block/load-export-params", test_load_export_params);
  g_test_add_func ("/block/initialisers", test_initialisers);
  return g_test_run ();
}
