/*
 * test-planner.c — the arena planner on synthetic lifetimes.
 *
 * Small cases pin down the rules (disjoint lifetimes share memory,
 * overlapping ones do not, a step where one buffer is read and another
 * written counts as overlap, sizes round up to 64 bytes).  Random cases
 * then check every pair exhaustively against a brute-force oracle, and the
 * three figures against their definitions.
 */
#include <string.h>

#include <glib.h>

#include "core/planner.h"

#define REQ(size, first, last) ((hy_buffer_request) { size, first, last })

static size_t
rounded (size_t size)
{
  return (size + HY_PLANNER_ALIGN - 1) / HY_PLANNER_ALIGN * HY_PLANNER_ALIGN;
}

/* Checks a placement against the definitions: aligned offsets, no shared
 * byte between buffers alive at a common step, and the three figures. */
static void
check_placement (const hy_buffer_request *req, size_t n,
    const size_t *offsets, const hy_arena_figures *fig)
{
  size_t naive = 0, top = 0, bound = 0;
  for (size_t i = 0; i < n; i++) {
    g_assert_cmpuint (offsets[i] % HY_PLANNER_ALIGN, ==, 0);
    naive += rounded (req[i].size);
    if (req[i].size)
      top = MAX (top, offsets[i] + rounded (req[i].size));
    for (size_t j = i + 1; j < n; j++) {
      if (!req[i].size || !req[j].size)
        continue;
      gboolean together = req[i].first_use <= req[j].last_use
          && req[j].first_use <= req[i].last_use;
      gboolean apart = offsets[i] + req[i].size <= offsets[j]
          || offsets[j] + req[j].size <= offsets[i];
      if (together && !apart)
        g_error ("buffers %zu [%d,%d] @%zu+%zu and %zu [%d,%d] @%zu+%zu "
            "overlap", i, req[i].first_use, req[i].last_use, offsets[i],
            req[i].size, j, req[j].first_use, req[j].last_use, offsets[j],
            req[j].size);
    }
  }
  /* The bound by brute force: every step any buffer covers. */
  int lo = G_MAXINT, hi = G_MININT;
  for (size_t i = 0; i < n; i++) {
    lo = MIN (lo, req[i].first_use);
    hi = MAX (hi, req[i].last_use);
  }
  for (int s = lo; n && s <= hi; s++) {
    size_t live = 0;
    for (size_t i = 0; i < n; i++)
      if (req[i].first_use <= s && s <= req[i].last_use)
        live += rounded (req[i].size);
    bound = MAX (bound, live);
  }
  g_assert_cmpuint (fig->naive_bytes, ==, naive);
  g_assert_cmpuint (fig->arena_bytes, ==, top);
  g_assert_cmpuint (fig->lower_bound_bytes, ==, bound);
  g_assert_cmpuint (hy_planner_lower_bound (req, n), ==, bound);
  g_assert_cmpuint (fig->arena_bytes, >=, fig->lower_bound_bytes);
  g_assert_cmpuint (fig->arena_bytes, <=, fig->naive_bytes);
}

static void
place (const hy_buffer_request *req, size_t n, size_t *offsets,
    hy_arena_figures *fig)
{
  hy_planner_place (req, n, offsets, fig);
  check_placement (req, n, offsets, fig);
}

static void
test_empty (void)
{
  hy_arena_figures fig;
  memset (&fig, 0xff, sizeof fig);
  hy_planner_place (NULL, 0, NULL, &fig);
  g_assert_cmpuint (fig.arena_bytes, ==, 0);
  g_assert_cmpuint (fig.naive_bytes, ==, 0);
  g_assert_cmpuint (fig.lower_bound_bytes, ==, 0);
  g_assert_cmpuint (hy_planner_lower_bound (NULL, 0), ==, 0);
}

static void
test_disjoint_share (void)
{
  const hy_buffer_request req[] = { REQ (1024, 0, 1), REQ (1024, 2, 3) };
  size_t off[2];
  hy_arena_figures fig;
  place (req, 2, off, &fig);
  g_assert_cmpuint (off[0], ==, off[1]);
  g_assert_cmpuint (fig.arena_bytes, ==, 1024);
  g_assert_cmpuint (fig.naive_bytes, ==, 2048);
  g_assert_cmpuint (fig.lower_bound_bytes, ==, 1024);
}

static void
test_overlapping_apart (void)
{
  const hy_buffer_request req[] = { REQ (1024, 0, 2), REQ (512, 1, 3) };
  size_t off[2];
  hy_arena_figures fig;
  place (req, 2, off, &fig);
  g_assert_cmpuint (fig.arena_bytes, ==, 1536);
  g_assert_cmpuint (fig.lower_bound_bytes, ==, 1536);
}

/* A kernel reads its inputs while it writes its output: a buffer last read
 * at step 1 and one first written at step 1 are alive together. */
static void
test_same_step_overlaps (void)
{
  const hy_buffer_request req[] = { REQ (256, 0, 1), REQ (256, 1, 2) };
  size_t off[2];
  hy_arena_figures fig;
  place (req, 2, off, &fig);
  g_assert_cmpuint (off[0], !=, off[1]);
  g_assert_cmpuint (fig.arena_bytes, ==, 512);
}

static void
test_alignment_and_zero_size (void)
{
  const hy_buffer_request req[] = {
    REQ (1, 0, 5), REQ (65, 0, 5), REQ (0, 0, 5), REQ (100, 3, 4),
  };
  size_t off[4];
  hy_arena_figures fig;
  place (req, 4, off, &fig);
  g_assert_cmpuint (off[2], ==, 0);
  g_assert_cmpuint (fig.naive_bytes, ==, 64 + 128 + 0 + 128);
  g_assert_cmpuint (fig.lower_bound_bytes, ==, 64 + 128 + 128);
  g_assert_cmpuint (fig.arena_bytes, ==, 64 + 128 + 128);
}

/* A chain of layers, each output read by the next only: two buffers'
 * worth of memory, whatever the length. */
static void
test_chain (void)
{
  hy_buffer_request req[50];
  size_t off[50];
  hy_arena_figures fig;
  for (int i = 0; i < 50; i++)
    req[i] = REQ (4096, i, i + 1);
  place (req, 50, off, &fig);
  g_assert_cmpuint (fig.arena_bytes, ==, 2 * 4096);
  g_assert_cmpuint (fig.lower_bound_bytes, ==, 2 * 4096);
  g_assert_cmpuint (fig.naive_bytes, ==, 50 * 4096);
}

/* Residual blocks: a skip buffer lives across the block, the block's
 * intermediates come and go beside it; the planner reaches the bound. */
static void
test_residual_blocks (void)
{
  hy_buffer_request req[64];
  size_t n = 0, off[64];
  hy_arena_figures fig;
  for (int b = 0; b < 8; b++) {
    const int s = b * 4;
    req[n++] = REQ (8192, s, s + 4);            /* block input / skip */
    req[n++] = REQ (8192, s + 1, s + 2);        /* conv 1 */
    req[n++] = REQ (8192, s + 2, s + 3);        /* conv 2 */
    req[n++] = REQ (2048, s + 3, s + 3);        /* an unread side output */
  }
  place (req, n, off, &fig);
  g_assert_cmpuint (fig.arena_bytes, ==, fig.lower_bound_bytes);
}

static void
test_random_exhaustive (void)
{
  GRand *rand = g_rand_new_with_seed (20240607);
  hy_buffer_request req[80];
  size_t off[80];
  double worst = 1.0;
  for (int c = 0; c < 600; c++) {
    const int n = g_rand_int_range (rand, 1, 80);
    const int steps = g_rand_int_range (rand, 1, 120);
    for (int i = 0; i < n; i++) {
      int first = g_rand_int_range (rand, 0, steps);
      /* Mostly short lives, some long: like activations and skips. */
      int len = g_rand_int_range (rand, 0, 100) < 85
          ? g_rand_int_range (rand, 0, 4)
          : g_rand_int_range (rand, 0, steps);
      size_t size = g_rand_int_range (rand, 0, 10) == 0 ? 0
          : (size_t) g_rand_int_range (rand, 1, 1 << 16);
      req[i] = REQ (size, first, first + len);
    }
    hy_arena_figures fig;
    place (req, (size_t) n, off, &fig);
    if (fig.lower_bound_bytes)
      worst = MAX (worst, (double) fig.arena_bytes / fig.lower_bound_bytes);
  }
  g_test_message ("worst arena / lower bound over random cases: %.3f",
      worst);
  g_rand_free (rand);
}

/* A request whose last use comes before its first lives one step. */
static void
test_backwards_lifetime (void)
{
  const hy_buffer_request req[] = { REQ (64, 5, 2), REQ (64, 5, 5) };
  size_t off[2];
  hy_arena_figures fig;
  hy_planner_place (req, 2, off, &fig);
  g_assert_cmpuint (off[0], !=, off[1]);
  g_assert_cmpuint (fig.lower_bound_bytes, ==, 128);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/planner/empty", test_empty);
  g_test_add_func ("/planner/disjoint-lifetimes-share", test_disjoint_share);
  g_test_add_func ("/planner/overlapping-lifetimes-apart",
      test_overlapping_apart);
  g_test_add_func ("/planner/same-step-overlaps", test_same_step_overlaps);
  g_test_add_func ("/planner/alignment-and-zero-size",
      test_alignment_and_zero_size);
  g_test_add_func ("/planner/chain", test_chain);
  g_test_add_func ("/planner/residual-blocks", test_residual_blocks);
  g_test_add_func ("/planner/random-exhaustive", test_random_exhaustive);
  g_test_add_func ("/planner/backwards-lifetime", test_backwards_lifetime);
  return g_test_run ();
}
