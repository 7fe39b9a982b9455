/*
 * test-plan-split.c — a batch run image by image (core/plan-split.c).
 *
 * On a committed MXNet model of only per-image ops (convolutions,
 * BatchNorm, pooling, a residual add, relu, dense; batch 2) with
 * HYBRIDINFER_BATCH_SPLIT=1, against the same plan run for the batch:
 *  - the split took effect (the arena is one image's) and the outputs are
 *    MXNet's, forward after forward, on one thread and on two;
 *  - the profile lists the per-image plan's calls with the batch's
 *    arithmetic, as the batch plan's does;
 *  - by the rule (no variable set) a model this small is not split: its
 *    activations fit the caches;
 *  - a model with an op that mixes images (LeNet's dot reads its weights
 *    as a second input) is never split, even when asked;
 *  - its first calls only, the rest on the whole batch
 *    (HYBRIDINFER_BATCH_SPLIT_CALLS=k), at every cut the plan takes: the
 *    outputs are MXNet's forward after forward, the profile lists the
 *    same calls with the same arithmetic; on the model with the mixing
 *    op, never past it.
 * The zoo conformance suite runs every batched zoo model that can be split
 * split (conformance-zoo-split, HYBRIDINFER_BATCH_SPLIT=1) against MXNet.
 */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "hybrid.h"
#include "hybrid-npy.h"

typedef struct fixture {
  hy_model *model;
  hy_tensor *input, *mxnet;
} fixture;

static fixture
load (const char *name, gboolean params)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_build_filename (g_getenv ("HY_SOURCE_DIR"),
      "tests", "fixtures", name, NULL);
  g_autofree char *symbol = g_build_filename (dir, "model-symbol.json", NULL);
  g_autofree char *par = g_build_filename (dir, "model-0000.params", NULL);
  g_autofree char *in = g_build_filename (dir, "input0.npy", NULL);
  g_autofree char *out = g_build_filename (dir, "output0.npy", NULL);
  fixture f;
  f.model = hy_model_load (symbol, params ? par : NULL, &error);
  g_assert_no_error (error);
  f.input = hy_npy_load (in, &error);
  g_assert_no_error (error);
  f.mxnet = hy_npy_load (out, &error);
  g_assert_no_error (error);
  return f;
}

static void
fixture_clear (fixture *f)
{
  hy_model_free (f->model);
  hy_tensor_free (f->input);
  hy_tensor_free (f->mxnet);
}

/* A hybrid executor with HYBRIDINFER_BATCH_SPLIT at `split` (NULL: unset),
 * after one forward. */
static hy_executor *
run (const fixture *f, const char *split, int threads)
{
  g_autoptr (GError) error = NULL;
  if (split)
    g_setenv ("HYBRIDINFER_BATCH_SPLIT", split, TRUE);
  else
    g_unsetenv ("HYBRIDINFER_BATCH_SPLIT");
  hy_executor_options o = { .threads = threads, .mode = HY_MODE_HYBRID };
  hy_executor *exec = hy_executor_new_with_options (f->model, &o, &error);
  g_assert_no_error (error);
  g_assert_true (hy_executor_forward (exec,
          (const hy_tensor *const *) &f->input, 1, &error));
  g_assert_no_error (error);
  g_unsetenv ("HYBRIDINFER_BATCH_SPLIT");
  return exec;
}

static gint64
arena_of (const hy_executor *exec)
{
  hy_memory_stats m;
  g_assert_true (hy_executor_memory (exec, &m));
  return m.arena_bytes;
}

static gboolean
image_by_image (const hy_executor *exec)
{
  hy_memory_stats m;
  g_assert_true (hy_executor_memory (exec, &m));
  return m.images_per_run == 1;
}

static gint64
per_image_calls (const hy_executor *exec)
{
  hy_memory_stats m;
  g_assert_true (hy_executor_memory (exec, &m));
  return m.per_image_calls;
}

static void
assert_mxnet (const hy_executor *exec, const hy_tensor *mxnet)
{
  const hy_tensor *y = hy_executor_output (exec, 0);
  g_assert_nonnull (y);
  g_assert_true (hy_shape_equal (&y->shape, &mxnet->shape));
  float scale = 1.0f;
  for (gint64 i = 0; i < hy_shape_numel (&y->shape); i++)
    scale = MAX (scale, fabsf (mxnet->data[i]));
  for (gint64 i = 0; i < hy_shape_numel (&y->shape); i++)
    g_assert_cmpfloat (fabsf (y->data[i] - mxnet->data[i]), <=,
        1e-4f * scale);
}

static void
test_split_matches_batch (void)
{
  fixture f = load ("legacy_attr09", TRUE);
  g_assert_cmpint (f.input->shape.dims[0], ==, 2);
  for (int threads = 1; threads <= 2; threads++) {
    hy_executor *whole = run (&f, "0", threads);
    hy_executor *split = run (&f, "1", threads);
    /* The split took effect, and says so: one image's arena. */
    g_assert_true (image_by_image (split));
    g_assert_false (image_by_image (whole));
    g_assert_cmpint (arena_of (split), <, arena_of (whole));
    assert_mxnet (whole, f.mxnet);
    assert_mxnet (split, f.mxnet);
    /* Again, on the same plan. */
    g_autoptr (GError) error = NULL;
    g_assert_true (hy_executor_forward (split,
            (const hy_tensor *const *) &f.input, 1, &error));
    g_assert_no_error (error);
    assert_mxnet (split, f.mxnet);

    /* The profile: the same layers with the batch's arithmetic. */
    const hy_layer_profile *lw, *ls;
    int nw, ns;
    g_assert_true (hy_executor_profile (whole,
            (const hy_tensor *const *) &f.input, 1, 2, &lw, &nw, &error));
    g_assert_true (hy_executor_profile (split,
            (const hy_tensor *const *) &f.input, 1, 2, &ls, &ns, &error));
    g_assert_no_error (error);
    g_assert_cmpint (ns, ==, nw);
    double flop_whole = 0, flop_split = 0, ms = 0;
    for (int i = 0; i < nw; i++) {
      g_assert_cmpstr (ls[i].node, ==, lw[i].node);
      g_assert_cmpfloat (ls[i].flop, ==, lw[i].flop);
      flop_whole += lw[i].flop;
      flop_split += ls[i].flop;
      ms += ls[i].ms;
    }
    g_assert_cmpfloat (flop_split, >, 0);
    g_assert_cmpfloat (flop_split, ==, flop_whole);
    g_assert_cmpfloat (ms, >, 0);
    assert_mxnet (split, f.mxnet);
    hy_executor_free (whole);
    hy_executor_free (split);
  }
  fixture_clear (&f);
}

static void
test_small_batch_not_split_by_rule (void)
{
  fixture f = load ("legacy_attr09", TRUE);
  hy_executor *whole = run (&f, "0", 1);
  hy_executor *rule = run (&f, NULL, 1);
  g_assert_false (image_by_image (rule));
  g_assert_cmpint (arena_of (rule), ==, arena_of (whole));
  assert_mxnet (rule, f.mxnet);
  hy_executor_free (whole);
  hy_executor_free (rule);
  fixture_clear (&f);
}

static void
test_mixing_op_never_split (void)
{
  fixture f = load ("seed_net", FALSE);
  g_assert_cmpint (f.input->shape.dims[0], >, 1);
  hy_executor *whole = run (&f, "0", 1);
  hy_executor *asked = run (&f, "1", 1);
  g_assert_false (image_by_image (asked));
  g_assert_cmpint (arena_of (asked), ==, arena_of (whole));
  assert_mxnet (asked, f.mxnet);
  hy_executor_free (whole);
  hy_executor_free (asked);
  fixture_clear (&f);
}

/* A hybrid executor with HYBRIDINFER_BATCH_SPLIT_CALLS at k, after one
 * forward. */
static hy_executor *
run_prefix (const fixture *f, int k, int threads)
{
  g_autofree char *calls = g_strdup_printf ("%d", k);
  g_setenv ("HYBRIDINFER_BATCH_SPLIT_CALLS", calls, TRUE);
  hy_executor *exec = run (f, NULL, threads);
  g_unsetenv ("HYBRIDINFER_BATCH_SPLIT_CALLS");
  return exec;
}

/* Tries a cut at every call of `f`'s plan; returns how many the plan took
 * (each checked against MXNet and the batch plan's profile), and in
 * *last the latest. */
static int
try_every_cut (const fixture *f, int threads, int *last)
{
  g_autoptr (GError) error = NULL;
  hy_executor *whole = run (f, "0", threads);
  const hy_layer_profile *lw;
  int nw;
  g_assert_true (hy_executor_profile (whole,
          (const hy_tensor *const *) &f->input, 1, 1, &lw, &nw, &error));
  g_assert_no_error (error);
  int taken = 0;
  *last = 0;
  for (int k = 1; k < nw; k++) {
    hy_executor *cut = run_prefix (f, k, threads);
    if (per_image_calls (cut) == 0) {
      hy_executor_free (cut);
      continue;
    }
    g_assert_cmpint (per_image_calls (cut), ==, k);
    g_assert_false (image_by_image (cut));
    taken++;
    *last = k;
    assert_mxnet (cut, f->mxnet);
    g_assert_true (hy_executor_forward (cut,
            (const hy_tensor *const *) &f->input, 1, &error));
    g_assert_no_error (error);
    assert_mxnet (cut, f->mxnet);
    const hy_layer_profile *lc;
    int nc;
    g_assert_true (hy_executor_profile (cut,
            (const hy_tensor *const *) &f->input, 1, 2, &lc, &nc, &error));
    g_assert_no_error (error);
    g_assert_cmpint (nc, ==, nw);
    for (int i = 0; i < nw; i++) {
      g_assert_cmpstr (lc[i].node, ==, lw[i].node);
      g_assert_cmpfloat (lc[i].flop, ==, lw[i].flop);
      g_assert_cmpfloat (lc[i].ms, >, 0);
    }
    assert_mxnet (cut, f->mxnet);
    hy_executor_free (cut);
  }
  hy_executor_free (whole);
  return taken;
}

static void
test_prefix_matches_batch (void)
{
  fixture f = load ("legacy_attr09", TRUE);
  for (int threads = 1; threads <= 2; threads++) {
    int last;
    const int taken = try_every_cut (&f, threads, &last);
    g_test_message ("%d thread(s): %d cuts taken, the last at call %d",
        threads, taken, last);
    g_assert_cmpint (taken, >=, 3);
  }
  fixture_clear (&f);
}

static void
test_prefix_stops_at_mixing_op (void)
{
  fixture f = load ("seed_net", FALSE);
  g_autoptr (GError) error = NULL;
  hy_executor *whole = run (&f, "0", 1);
  const hy_layer_profile *lw;
  int nw, mixing = -1;
  g_assert_true (hy_executor_profile (whole,
          (const hy_tensor *const *) &f.input, 1, 1, &lw, &nw, &error));
  g_assert_no_error (error);
  for (int i = 0; i < nw && mixing < 0; i++)
    if (!strcmp (lw[i].op, "dot"))
      mixing = i;
  g_assert_cmpint (mixing, >=, 1);
  int last;
  const int taken = try_every_cut (&f, 1, &last);
  g_test_message ("%d cuts taken before the dot at call %d", taken, mixing);
  g_assert_cmpint (taken, >=, 1);
  g_assert_cmpint (last, <=, mixing);
  hy_executor_free (whole);
  fixture_clear (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/plan-split/matches-batch", test_split_matches_batch);
  g_test_add_func ("/plan-split/small-batch-by-rule",
      test_small_batch_not_split_by_rule);
  g_test_add_func ("/plan-split/mixing-op", test_mixing_op_never_split);
  g_test_add_func ("/plan-split/prefix-matches-batch",
      test_prefix_matches_batch);
  g_test_add_func ("/plan-split/prefix-stops-at-mixing-op",
      test_prefix_stops_at_mixing_op);
  return g_test_run ();
}
