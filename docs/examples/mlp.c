/*
 * mlp.c — the Gluon book's 512 → 256 → 128 → 2 MLP as a hybrid sequential
 * container: the same output imperatively and hybridized, then exported.
 *
 * With --bench, times 1000 forwards at batch 1 before and after
 * hybridize, as the Gluon book does, and prints the ratio.  Each figure
 * is the best of 5 rounds of 1000 (other processes only ever add time),
 * the rounds of the two modes alternating; the first hybridized call,
 * which traces and plans, is timed apart.
 * Imperatively every op parses its attributes, infers its shape,
 * allocates its output and runs alone — Gluon's NDArray path; hybridized,
 * the compiled plan runs fused ops in one preplanned arena.
 *
 * Usage: mlp [--out DIR] [--bench]
 */
#include "example-util.h"

#define BENCH_FORWARDS 1000
#define BENCH_ROUNDS 5
#define TEST_FORWARDS 10

static hy_block *
mlp_new (void)
{
  hy_block *net = hy_hybrid_sequential_new ();
  hy_sequential_add (net, hy_dense_new (256,
          &(hy_dense_opts) { .activation = "relu" }));
  hy_sequential_add (net, hy_dense_new (128,
          &(hy_dense_opts) { .activation = "relu" }));
  hy_sequential_add (net, hy_dense_new (2, NULL));
  return net;
}

/* Seconds for n forwards. */
static double
run (hy_block *net, const hy_tensor *x, int n)
{
  gint64 start = g_get_monotonic_time ();
  for (int i = 0; i < n; i++)
    EXAMPLE_TRY (hy_block_forward (net, x, &error));
  return (g_get_monotonic_time () - start) / 1e6;
}

/* Gives `to` the weights of `from` (same architecture). */
static void
copy_params (hy_block *from, hy_block *to)
{
  int n_from, n_to;
  g_autofree hy_parameter **a = hy_block_collect_params (from, &n_from);
  g_autofree hy_parameter **b = hy_block_collect_params (to, &n_to);
  for (int i = 0; i < n_from && i < n_to; i++)
    EXAMPLE_TRY (hy_parameter_set_data (b[i], hy_parameter_data (a[i]),
            &error));
}

int
main (int argc, char **argv)
{
  const char *out_dir = example_out_dir (argc, argv);
  gboolean bench = FALSE;
  for (int i = 1; i < argc; i++)
    bench |= !strcmp (argv[i], "--bench");
  int n = bench ? BENCH_FORWARDS : TEST_FORWARDS;
  int rounds = bench ? BENCH_ROUNDS : 1;

  hy_random_seed (42);
  hy_block *net = mlp_new ();
  EXAMPLE_TRY (hy_block_initialize (net, hy_init_xavier (), &error));
  hy_tensor *x = example_random_input (HY_DIMS (1, 512));

  const hy_tensor *y;
  EXAMPLE_TRY (y = hy_block_forward (net, x, &error));
  hy_tensor *imperative = hy_tensor_copy (y);

  /* A twin with the same weights stays imperative, so that rounds of the
   * two modes can alternate: a busy machine then slows both alike. */
  hy_block *twin = mlp_new ();
  copy_params (net, twin);
  hy_block_hybridize (net, HY_HYBRID_STATIC_ALLOC | HY_HYBRID_STATIC_SHAPE);
  double first = run (net, x, 1);
  double before = G_MAXDOUBLE, after = G_MAXDOUBLE;
  for (int r = 0; r < rounds; r++) {
    before = MIN (before, run (twin, x, n));
    after = MIN (after, run (net, x, n));
  }
  EXAMPLE_TRY (y = hy_block_forward (net, x, &error));
  gboolean ok = example_same ("hybridized vs imperative", imperative, y);

  printf ("%d forwards at batch 1 (best of %d rounds):\n", n, rounds);
  printf ("  before hybridizing: %.4f s (%.1f us per forward)\n", before,
      before / n * 1e6);
  printf ("  after hybridizing:  %.4f s (%.1f us per forward)\n", after,
      after / n * 1e6);
  printf ("  first hybridized call (trace + plan): %.1f us\n", first * 1e6);
  printf ("  speed-up: %.2fx\n", before / after);

  g_autofree char *prefix = g_build_filename (out_dir, "mlp", NULL);
  EXAMPLE_TRY (hy_block_export (net, prefix, 0, &error));
  EXAMPLE_TRY (example_save_io (out_dir, "mlp", x, y, &error));
  printf ("wrote %s-symbol.json and %s-0000.params\n", prefix, prefix);

  hy_block_free (twin);
  hy_block_free (net);
  hy_tensor_free (imperative);
  hy_tensor_free (x);
  return ok ? 0 : 1;
}
