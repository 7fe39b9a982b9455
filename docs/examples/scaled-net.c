/*
 * scaled-net.c — a block whose graph carries fractional attributes
 * (scalars, epsilon, a dropout rate), written by an application
 * that runs in the user's locale, as GStreamer applications do.
 *
 * MXNet reads attribute numbers with a '.' decimal point whatever the
 * locale, so the export must too: under LC_NUMERIC=de_DE.UTF-8 a "0,5"
 * would not load.  tests/conformance/check_block_export.py runs this
 * program under a comma-decimal locale and loads its export in MXNet.
 *
 *   dense(16) → batchnorm(eps 2.5e-5) → ×0.5 → +0.25 → relu
 *   → dropout(0.3) → dense(4)
 *
 * Usage: scaled-net [--out DIR]
 */
#include <locale.h>

#include "example-util.h"

static hy_value *
net_forward (hy_block *self, hy_F *F, hy_value *const *inputs, int n_inputs,
    hy_value *const *params)
{
  hy_value *x = hy_F_call_child (F, self, "fc1", inputs[0]);
  x = hy_F_call_child (F, self, "bn", x);
  x = hy_F_plus_scalar (F, hy_F_mul_scalar (F, x, 0.5), 0.25);
  x = hy_F_call_child (F, self, "drop", hy_F_relu (F, x));
  return hy_F_call_child (F, self, "fc2", x);
}

int
main (int argc, char **argv)
{
  /* The environment's locale, LC_NUMERIC included, as an application
   * gets it (gst-launch-1.0 does the same). */
  setlocale (LC_ALL, "");
  const char *out_dir = example_out_dir (argc, argv);
  hy_random_seed (7);
  hy_block *net = hy_hybrid_block_new ("net", net_forward);
  hy_block_register_child (net, "fc1", hy_dense_new (16, NULL));
  hy_block_register_child (net, "bn",
      hy_batch_norm_new_full (1, 2.5e-5, TRUE, TRUE));
  hy_block_register_child (net, "drop", hy_dropout_new (0.3));
  hy_block_register_child (net, "fc2", hy_dense_new (4, NULL));
  EXAMPLE_TRY (hy_block_initialize (net, hy_init_xavier (), &error));

  hy_tensor *x = example_random_input (HY_DIMS (2, 8));
  const hy_tensor *y;
  hy_block_hybridize (net, HY_HYBRID_STATIC_ALLOC);
  EXAMPLE_TRY (y = hy_block_forward (net, x, &error));
  g_autofree char *prefix = g_build_filename (out_dir, "scaled-net", NULL);
  EXAMPLE_TRY (hy_block_export (net, prefix, 0, &error));
  EXAMPLE_TRY (example_save_io (out_dir, "scaled-net", x, y, &error));
  printf ("wrote %s-symbol.json\n", prefix);
  hy_block_free (net);
  hy_tensor_free (x);
  return 0;
}
