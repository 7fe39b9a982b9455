/*
 * test-profile.c — the per-layer profile of a hybridized forward
 * (hy_executor_profile; bench --profile prints it).
 *
 * On the tutorial's LeNet (seed_net, batch 4): one entry per call of the
 * plan, the products' arithmetic as counted by hand from the layer shapes,
 * outputs still MXNet's after profiling, and imperative mode refused with
 * the reason.
 */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "hybrid.h"
#include "hybrid-npy.h"

static char *
fixture_path (const char *file)
{
  return g_build_filename (g_getenv ("HY_SOURCE_DIR"), "tests", "fixtures",
      "seed_net", file, NULL);
}

static const hy_layer_profile *
find_layer (const hy_layer_profile *layers, int n, const char *node)
{
  for (int i = 0; i < n; i++)
    if (!strcmp (layers[i].node, node))
      return &layers[i];
  return NULL;
}

static void
test_lenet_profile (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *symbol = fixture_path ("model-symbol.json");
  g_autofree char *input_path = fixture_path ("input0.npy");
  g_autofree char *output_path = fixture_path ("output0.npy");
  hy_model *model = hy_model_load (symbol, NULL, &error);
  g_assert_no_error (error);
  hy_tensor *x = hy_npy_load (input_path, &error);
  hy_tensor *mxnet = hy_npy_load (output_path, &error);
  g_assert_no_error (error);
  hy_executor_options o = { .threads = 1 };
  hy_executor *exec = hy_executor_new_with_options (model, &o, &error);
  g_assert_no_error (error);

  const hy_layer_profile *layers;
  int n = 0;
  g_assert_true (hy_executor_profile (exec, (const hy_tensor *const *) &x, 1,
          3, &layers, &n, &error));
  g_assert_no_error (error);
  /* Five products (two convolutions with their relu fused, two dense, the
   * dot), two poolings, the reshape is a view: at least 7 calls. */
  g_assert_cmpint (n, >=, 7);
  double total_ms = 0;
  for (int i = 0; i < n; i++) {
    g_assert_nonnull (layers[i].node);
    g_assert_nonnull (layers[i].op);
    g_assert_cmpfloat (layers[i].ms, >=, 0);
    total_ms += layers[i].ms;
  }
  g_assert_cmpfloat (total_ms, >, 0);

  /* 2 × outputs × multiply-adds per output, batch 4. */
  struct { const char *node; double flop; } products[] = {
    { "seednet0_conv0_fwd", 2.0 * 4 * 6 * 24 * 24 * (1 * 5 * 5) },
    { "seednet0_conv1_fwd", 2.0 * 4 * 16 * 8 * 8 * (6 * 5 * 5) },
    { "seednet0_dense0_fwd", 2.0 * 4 * 120 * 256 },
    { "seednet0_dense1_fwd", 2.0 * 4 * 84 * 120 },
    { "seednet0_dot0", 2.0 * 4 * 10 * 84 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (products); i++) {
    const hy_layer_profile *l = find_layer (layers, n, products[i].node);
    g_assert_nonnull (l);
    g_assert_cmpfloat (l->flop, ==, products[i].flop);
  }
  const hy_layer_profile *pool = find_layer (layers, n, "seednet0_pool0_fwd");
  g_assert_nonnull (pool);
  g_assert_cmpfloat (pool->flop, ==, 0);

  /* Profiling ran the real forward: the output is MXNet's. */
  const hy_tensor *y = hy_executor_output (exec, 0);
  g_assert_nonnull (y);
  for (gint64 i = 0; i < hy_shape_numel (&y->shape); i++)
    g_assert_cmpfloat (fabsf (y->data[i] - mxnet->data[i]), <=,
        1e-4f * MAX (1.0f, fabsf (mxnet->data[i])));

  /* Imperative mode has no plan to profile. */
  g_assert_true (hy_executor_set_mode (exec, HY_MODE_IMPERATIVE, &error));
  g_assert_false (hy_executor_profile (exec, (const hy_tensor *const *) &x,
          1, 1, &layers, &n, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "imperative"));

  hy_executor_free (exec);
  hy_tensor_free (x);
  hy_tensor_free (mxnet);
  hy_model_free (model);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/profile/lenet", test_lenet_profile);
  return g_test_run ();
}
