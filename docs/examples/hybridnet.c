/*
 * hybridnet.c — what hybridize does to a forward function's side effects.
 *
 * HybridNet's forward prints F, its input and its hidden layer.  Before
 * hybridize the forward runs on every call, so it prints every time, with
 * numbers.  After hybridize the first call runs it once with symbols to
 * trace the graph (it prints "<Symbol …>"), and later calls run the
 * compiled graph without it: nothing is printed.  The program counts the
 * calls and fails unless that is what happened.
 *
 * Usage: hybridnet [--out DIR]
 */
#include "example-util.h"

static int forward_calls;

static hy_value *
hybridnet_forward (hy_block *self, hy_F *F, hy_value *const *inputs,
    int n_inputs, hy_value *const *params)
{
  forward_calls++;
  hy_value *x = inputs[0];
  g_autofree char *x_text = hy_value_to_string (x);
  printf ("F: %s\nx: %s\n", hy_F_name (F), x_text);
  x = hy_F_relu (F, hy_F_call_child (F, self, "hidden", x));
  g_autofree char *hidden_text = hy_value_to_string (x);
  printf ("hidden: %s\n", hidden_text);
  return hy_F_call_child (F, self, "output", x);
}

/* Runs `calls` forwards and returns how many times the forward ran. */
static int
forwards (hy_block *net, const hy_tensor *x, int calls,
    const hy_tensor **last)
{
  int before = forward_calls;
  for (int i = 0; i < calls; i++) {
    printf ("-- net(x) --\n");
    EXAMPLE_TRY (*last = hy_block_forward (net, x, &error));
  }
  return forward_calls - before;
}

int
main (int argc, char **argv)
{
  const char *out_dir = example_out_dir (argc, argv);
  hy_random_seed (42);
  hy_block *net = hy_hybrid_block_new ("hybridnet", hybridnet_forward);
  hy_block_register_child (net, "hidden", hy_dense_new (10, NULL));
  hy_block_register_child (net, "output", hy_dense_new (2, NULL));
  EXAMPLE_TRY (hy_block_initialize (net, hy_init_xavier (), &error));
  hy_tensor *x = example_random_input (HY_DIMS (1, 4));

  const hy_tensor *y;
  printf ("== before hybridize ==\n");
  int imperative_runs = forwards (net, x, 2, &y);
  hy_tensor *imperative = hy_tensor_copy (y);

  printf ("== after hybridize ==\n");
  hy_block_hybridize (net, HY_HYBRID_DEFAULT);
  int hybrid_runs = forwards (net, x, 2, &y);

  printf ("the forward ran %d times in 2 calls before hybridize, %d time(s) "
      "in 2 calls after\n", imperative_runs, hybrid_runs);
  gboolean ok = imperative_runs == 2 && hybrid_runs == 1;
  ok &= example_same ("hybridized vs imperative", imperative, y);

  g_autofree char *prefix = g_build_filename (out_dir, "hybridnet", NULL);
  EXAMPLE_TRY (hy_block_export (net, prefix, 0, &error));
  EXAMPLE_TRY (example_save_io (out_dir, "hybridnet", x, y, &error));

  hy_block_free (net);
  hy_tensor_free (imperative);
  hy_tensor_free (x);
  return ok ? 0 : 1;
}
