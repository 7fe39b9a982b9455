/*
 * seed-net.c — the hybrid tutorial's Net, written once and run three
 * ways: imperatively, hybridized, and exported then imported back.
 *
 *   conv(6, 5) → relu → maxpool(2) → conv(16, 5) → relu → maxpool(2)
 *   → reshape (0, -1) → dense(120) → relu → dense(84) → relu
 *   → dot (x, fc3_weight, transpose_b)
 *
 * fc3_weight is a raw parameter of the block itself rather than a layer,
 * to show how a forward receives its own parameters.
 *
 * Usage: seed-net [--out DIR]   (writes DIR/seed-net-symbol.json,
 * DIR/seed-net-0001.params and the input/output .npy files)
 */
#include "example-util.h"

static hy_value *
net_forward (hy_block *self, hy_F *F, hy_value *const *inputs, int n_inputs,
    hy_value *const *params)
{
  hy_value *x = inputs[0];
  hy_value *fc3_weight = params[0];

  /* Imperatively this prints numbers; while tracing, "<Symbol data>". */
  g_autofree char *shown = hy_value_to_string (x);
  printf ("forward (%s): x =\n%s\n", hy_F_name (F), shown);

  x = hy_F_call_child (F, self, "pool1",
      hy_F_relu (F, hy_F_call_child (F, self, "conv1", x)));
  x = hy_F_call_child (F, self, "pool2",
      hy_F_relu (F, hy_F_call_child (F, self, "conv2", x)));
  /* 0 copies the batch dimension, -1 infers the rest. */
  x = hy_F_reshape (F, x, HY_DIMS (0, -1));
  x = hy_F_relu (F, hy_F_call_child (F, self, "fc1", x));
  x = hy_F_relu (F, hy_F_call_child (F, self, "fc2", x));
  return hy_F_dot (F, x, fc3_weight, FALSE, TRUE);
}

static hy_block *
net_new (void)
{
  hy_block *net = hy_hybrid_block_new ("net", net_forward);
  hy_block_register_child (net, "conv1", hy_conv2d_new (6, 5, NULL));
  hy_block_register_child (net, "pool1", hy_max_pool2d_new (2, 0, 0));
  hy_block_register_child (net, "conv2", hy_conv2d_new (16, 5, NULL));
  hy_block_register_child (net, "pool2", hy_max_pool2d_new (2, 0, 0));
  /* Dense learns its input size (256 here) at the first forward. */
  hy_block_register_child (net, "fc1", hy_dense_new (120, NULL));
  hy_block_register_child (net, "fc2", hy_dense_new (84, NULL));
  hy_block_add_param (net, "fc3_weight", HY_DIMS (10, 84),
      hy_init_inherit ());
  return net;
}

int
main (int argc, char **argv)
{
  const char *out_dir = example_out_dir (argc, argv);
  hy_random_seed (42);
  hy_block *net = net_new ();
  EXAMPLE_TRY (hy_block_initialize (net, hy_init_xavier (), &error));

  hy_tensor *x = example_random_input (HY_DIMS (16, 1, 28, 28));
  const hy_tensor *y;

  printf ("== imperative: the forward runs on every call ==\n");
  EXAMPLE_TRY (y = hy_block_forward (net, x, &error));
  EXAMPLE_TRY (y = hy_block_forward (net, x, &error));
  hy_tensor *imperative = hy_tensor_copy (y);

  printf ("== hybridized: the forward runs once, to be traced ==\n");
  hy_block_hybridize (net, HY_HYBRID_STATIC_ALLOC | HY_HYBRID_STATIC_SHAPE);
  EXAMPLE_TRY (y = hy_block_forward (net, x, &error));
  EXAMPLE_TRY (y = hy_block_forward (net, x, &error));
  gboolean ok = example_same ("hybridized vs imperative", imperative, y);

  printf ("== export, and import back ==\n");
  g_autofree char *prefix = g_build_filename (out_dir, "seed-net", NULL);
  EXAMPLE_TRY (hy_block_export (net, prefix, 1, &error));
  EXAMPLE_TRY (example_save_io (out_dir, "seed-net", x, y, &error));
  g_autofree char *symbol = g_strconcat (prefix, "-symbol.json", NULL);
  g_autofree char *params = g_strconcat (prefix, "-0001.params", NULL);
  hy_block *net2;
  EXAMPLE_TRY (net2 = hy_block_imports (symbol, params, &error));
  const hy_tensor *y2;
  EXAMPLE_TRY (y2 = hy_block_forward (net2, x, &error));
  ok &= example_same ("imported vs hybridized", y, y2);
  printf ("wrote %s and %s\n", symbol, params);

  hy_block_free (net2);
  hy_block_free (net);
  hy_tensor_free (imperative);
  hy_tensor_free (x);
  return ok ? 0 : 1;
}
