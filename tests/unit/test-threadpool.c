/*
 * test-threadpool.c — the kernels' thread pool (kernels/cpu/threadpool.h)
 * and what the kernels do with it:
 *
 *  - a loop covers every index exactly once, in chunks of the size asked,
 *    for many sizes and thread counts, and hands out valid thread indices;
 *  - loops back to back, with pauses long enough for the workers to fall
 *    asleep in between, never lose or repeat a chunk;
 *  - a loop started inside a loop runs on the calling thread, without
 *    deadlock, keeping that thread's index;
 *  - pools are created and freed many times (AddressSanitizer checks for
 *    leaks), and pools used from two threads at once stay apart;
 *  - the thread count comes from HYBRIDINFER_THREADS, else the CPUs;
 *  - every kernel that splits work over threads gives bit for bit the
 *    output of its serial run, with 2, 3 and 4 threads — except for the
 *    products OpenBLAS computes: the threads split only independent
 *    outputs, but OpenBLAS picks its kernels (small-matrix, edge) by the
 *    shape of each call, so a block may round differently in the last
 *    bit than the whole did.  Those agree within 1e-5.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/threadpool.h"
#include "kernels/params/nn.h"

/* ---- coverage ---------------------------------------------------------- */

typedef struct coverage {
  gint *hits;                   /* per index, atomic */
  gint bad_chunk;               /* a chunk longer than asked, or empty */
  gint bad_thread;
  int64_t chunk;
  int n_threads;
} coverage;

static void
count_hits (void *arg, int64_t begin, int64_t end, int thread)
{
  coverage *c = arg;
  if (end <= begin || end - begin > c->chunk)
    g_atomic_int_set (&c->bad_chunk, 1);
  if (thread < 0 || thread >= c->n_threads)
    g_atomic_int_set (&c->bad_thread, 1);
  for (int64_t i = begin; i < end; i++)
    g_atomic_int_inc (&c->hits[i]);
}

/* One loop over n in chunks of `chunk`: every index once. */
static void
check_loop (hy_threadpool *pool, int64_t n, int64_t chunk)
{
  coverage c = {
    g_new0 (gint, MAX (n, 1)), 0, 0, MAX (chunk, 1),
    hy_threadpool_n_threads (pool),
  };
  /* Chunks grow beyond the pool's cap; a serial run is one chunk of
   * everything. */
  if ((n + c.chunk - 1) / c.chunk > HY_THREADPOOL_MAX_CHUNKS)
    c.chunk = (n + HY_THREADPOOL_MAX_CHUNKS - 1) / HY_THREADPOOL_MAX_CHUNKS;
  if (!pool || (n + c.chunk - 1) / c.chunk < 2)
    c.chunk = MAX (n, 1);
  hy_threadpool_run (pool, n, chunk, count_hits, &c);
  for (int64_t i = 0; i < n; i++)
    if (c.hits[i] != 1)
      g_error ("n %" G_GINT64_FORMAT ", chunk %" G_GINT64_FORMAT ", %d "
          "threads: index %" G_GINT64_FORMAT " ran %d times", n, chunk,
          c.n_threads, i, c.hits[i]);
  g_assert_cmpint (c.bad_chunk, ==, 0);
  g_assert_cmpint (c.bad_thread, ==, 0);
  g_free (c.hits);
}

static void
test_coverage (void)
{
  const int64_t sizes[] = { 0, 1, 2, 3, 7, 16, 63, 64, 65, 1000, 100003 };
  const int threads[] = { 1, 2, 3, 4, 8 };
  for (guint t = 0; t < G_N_ELEMENTS (threads); t++) {
    hy_threadpool *pool = hy_threadpool_new (threads[t]);
    if (threads[t] < 2)
      g_assert_null (pool);
    else
      g_assert_cmpint (hy_threadpool_n_threads (pool), ==, threads[t]);
    for (guint s = 0; s < G_N_ELEMENTS (sizes); s++) {
      const int64_t n = sizes[s];
      const int64_t chunks[] = { 1, 3, (n + threads[t] - 1) / threads[t], n };
      for (guint k = 0; k < G_N_ELEMENTS (chunks); k++)
        check_loop (pool, n, chunks[k]);
    }
    hy_threadpool_free (pool);
  }
}

/* Thousands of loops in a row, some after a pause longer than the workers
 * spin, so that they go to sleep and must be woken. */
static void
test_back_to_back (void)
{
  hy_threadpool *pool = hy_threadpool_new (4);
  GRand *rand = g_rand_new_with_seed (7);
  for (int r = 0; r < 3000; r++) {
    if (r % 100 == 99)
      g_usleep (300);
    const int64_t n = g_rand_int_range (rand, 1, 200);
    check_loop (pool, n, g_rand_int_range (rand, 1, 20));
  }
  g_rand_free (rand);
  hy_threadpool_free (pool);
}

/* ---- shares ------------------------------------------------------------ */

typedef struct shares_job {
  gint started;                 /* chunks begun */
  gint met;                     /* chunks that saw every chunk begun */
  int n_chunks;
  int thread_of[8];             /* per chunk */
} shares_job;

/* Each chunk waits until every chunk has begun (or 0.2 s), so that no
 * thread can finish its own and take another's: each then runs exactly
 * one.  The wait gives up where a thread never comes: descheduled on a
 * loaded machine, or the pool sent its loops to the caller alone after
 * such waits (threadpool.c, STALL_NS). */
static void
meet_all (void *arg, int64_t begin, int64_t end, int thread)
{
  shares_job *j = arg;
  j->thread_of[begin] = thread;
  g_atomic_int_inc (&j->started);
  const gint64 give_up = g_get_monotonic_time () + 200000;
  /* Yielding: the pool may have more threads than the machine CPUs. */
  while (g_atomic_int_get (&j->started) < j->n_chunks)
    if (g_get_monotonic_time () > give_up)
      return;
    else
      g_thread_yield ();
  g_atomic_int_inc (&j->met);
}

/* A loop of one chunk per thread: where every thread came, thread t ran
 * chunk t, its share (what lets successive loops read their own
 * writes).  Most loops must be such; every chunk runs once in all. */
static void
test_shares (void)
{
  for (int threads = 2; threads <= 3; threads++) {
    hy_threadpool *pool = hy_threadpool_new (threads);
    g_assert_cmpint (hy_threadpool_n_threads (pool), ==, threads);
    int met = 0;
    for (int r = 0; r < 50; r++) {
      shares_job j = { 0, 0, threads, { 0 } };
      for (int c = 0; c < threads; c++)
        j.thread_of[c] = -1;
      hy_threadpool_run (pool, threads, 1, meet_all, &j);
      g_assert_cmpint (j.started, ==, threads);
      /* Each chunk saw all begun: all were in flight at once, each on a
       * thread of its own. */
      if (j.met < threads)
        continue;
      met++;
      for (int c = 0; c < threads; c++)
        g_assert_cmpint (j.thread_of[c], ==, c);
    }
    g_test_message ("%d threads: all came in %d loops of 50", threads, met);
    g_assert_cmpint (met, >=, 10);
    hy_threadpool_free (pool);
  }
}

/* ---- nesting ----------------------------------------------------------- */

typedef struct nested {
  hy_threadpool *pool;
  gint *hits;                   /* per (outer, inner) index */
  gint wrong_thread;
  int64_t inner;
} nested;

typedef struct nested_inner {
  nested *outer;
  int64_t row;
  int thread;                   /* the outer chunk's thread */
} nested_inner;

static void
inner_body (void *arg, int64_t begin, int64_t end, int thread)
{
  nested_inner *in = arg;
  /* Nested loops run whole on the thread that started them. */
  if (thread != in->thread || begin != 0 || end != in->outer->inner
      || !hy_threadpool_in_loop ())
    g_atomic_int_set (&in->outer->wrong_thread, 1);
  for (int64_t i = begin; i < end; i++)
    g_atomic_int_inc (&in->outer->hits[in->row * in->outer->inner + i]);
}

static void
outer_body (void *arg, int64_t begin, int64_t end, int thread)
{
  nested *n = arg;
  for (int64_t r = begin; r < end; r++) {
    nested_inner in = { n, r, thread };
    hy_threadpool_run (n->pool, n->inner, 1, inner_body, &in);
  }
}

static void
test_nesting (void)
{
  hy_threadpool *pool = hy_threadpool_new (3);
  nested n = { pool, g_new0 (gint, 50 * 40), 0, 40 };
  g_assert_false (hy_threadpool_in_loop ());
  hy_threadpool_run (pool, 50, 1, outer_body, &n);
  g_assert_false (hy_threadpool_in_loop ());
  for (int i = 0; i < 50 * 40; i++)
    g_assert_cmpint (n.hits[i], ==, 1);
  g_assert_cmpint (n.wrong_thread, ==, 0);
  g_free (n.hits);

  /* The context's view: one thread inside a loop. */
  hy_cpu_ctx ctx = { 0 };
  g_assert_cmpint (hy_cpu_n_threads (&ctx), ==, 1);
  hy_cpu_ctx_set_threads (&ctx, 3);
  g_assert_cmpint (hy_cpu_n_threads (&ctx), ==, 3);
  hy_cpu_ctx_set_threads (&ctx, 1);
  g_assert_null (ctx.pool);
  g_assert_cmpint (hy_cpu_n_threads (&ctx), ==, 1);
  hy_cpu_ctx_set_threads (&ctx, 2);
  g_assert_cmpint (hy_cpu_n_threads (&ctx), ==, 2);
  hy_cpu_ctx_clear (&ctx);
  g_assert_null (ctx.pool);
  hy_threadpool_free (pool);
}

/* ---- grains ------------------------------------------------------------ */

typedef struct chunk_log {
  gint n_calls;
} chunk_log;

static void
count_calls (void *arg, int64_t begin, int64_t end, int thread)
{
  g_atomic_int_inc (&((chunk_log *) arg)->n_calls);
}

/* hy_cpu_parallel_for cuts min(4 · threads, n / grain) chunks of equal
 * size, rounded up. */
static void
test_grain (void)
{
  hy_cpu_ctx ctx = { 0 };
  hy_cpu_ctx_set_threads (&ctx, 4);
  const struct {
    int64_t n, grain;
    int calls;
  } cases[] = {
    /* 16 chunks of ceil(100 / 16) = 7 items: 15 in fact. */
    { 100, 1, 15 }, { 3, 1, 3 }, { 100, 30, 3 }, { 100, 60, 1 },
    { 100, 1000, 1 }, { 1, 1, 1 }, { 100, 7, 13 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    chunk_log log = { 0 };
    hy_cpu_parallel_for (&ctx, cases[i].n, cases[i].grain, count_calls,
        &log);
    g_assert_cmpint (log.n_calls, ==, cases[i].calls);
  }
  chunk_log log = { 0 };
  hy_cpu_parallel_each (&ctx, 13, count_calls, &log);
  g_assert_cmpint (log.n_calls, ==, 13);
  hy_cpu_ctx_clear (&ctx);
}

/* ---- lifetimes --------------------------------------------------------- */

static void
test_create_destroy (void)
{
  for (int i = 0; i < 200; i++) {
    hy_threadpool *pool = hy_threadpool_new (2 + i % 4);
    if (i % 3)
      check_loop (pool, 100, 7);
    hy_threadpool_free (pool);
  }
  hy_threadpool_free (NULL);
  g_assert_null (hy_threadpool_new (0));
  g_assert_cmpint (hy_threadpool_n_threads (NULL), ==, 1);
  check_loop (NULL, 10, 1);
}

static gpointer
loops_on_own_pool (gpointer data)
{
  hy_threadpool *pool = hy_threadpool_new (3);
  for (int r = 0; r < 500; r++)
    check_loop (pool, 97 + r % 50, 1 + r % 9);
  hy_threadpool_free (pool);
  return NULL;
}

/* Two callers, each with its own pool, at the same time (two pipelines). */
static void
test_two_callers (void)
{
  GThread *a = g_thread_new ("caller-a", loops_on_own_pool, NULL);
  GThread *b = g_thread_new ("caller-b", loops_on_own_pool, NULL);
  g_thread_join (a);
  g_thread_join (b);
}

static void
test_default_threads (void)
{
  const char *saved = g_getenv ("HYBRIDINFER_THREADS");
  char *keep = g_strdup (saved);
  g_setenv ("HYBRIDINFER_THREADS", "3", TRUE);
  g_assert_cmpint (hy_threadpool_default_threads (), ==, 3);
  g_unsetenv ("HYBRIDINFER_THREADS");
  const int cpus = hy_threadpool_default_threads ();
  g_assert_cmpint (cpus, >=, 1);
  /* Anything but a positive number is ignored. */
  const char *bad[] = { "0", "-2", "two", "3x", "" };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    g_setenv ("HYBRIDINFER_THREADS", bad[i], TRUE);
    g_assert_cmpint (hy_threadpool_default_threads (), ==, cpus);
  }
  if (keep)
    g_setenv ("HYBRIDINFER_THREADS", keep, TRUE);
  else
    g_unsetenv ("HYBRIDINFER_THREADS");
  g_free (keep);
}

/* ---- a worker that keeps the caller waiting ---------------------------- */

typedef struct straggling {
  gint worker_chunks;           /* chunks run by a worker in this loop */
  gulong worker_sleep_us;       /* how long a worker's chunk takes */
} straggling;

static void
straggle (void *arg, int64_t begin, int64_t end, int thread)
{
  straggling *s = arg;
  if (thread != 0) {
    g_atomic_int_inc (&s->worker_chunks);
    g_usleep (s->worker_sleep_us);  /* as if preempted while holding it */
  } else {
    g_usleep (100);
  }
}

/* Loops of 8 chunks in which the caller's take 0.1 ms and a worker's 5 ms
 * (a neighbour took its CPU): after two such loops the pool runs its loops
 * on the caller alone, still chunk by chunk, and tries its workers again
 * once the solo spell is over. */
static void
test_straggler (void)
{
  hy_threadpool *pool = hy_threadpool_new (2);
  straggling s = { 0, 5000 };
  int loops = 0;
  while (hy_threadpool_solo_spells (pool) == 0 && loops < 50) {
    g_atomic_int_set (&s.worker_chunks, 0);
    check_loop (pool, 8, 1);     /* every index once, chunks as asked */
    hy_threadpool_run (pool, 8, 1, straggle, &s);
    loops++;
  }
  g_assert_cmpuint (hy_threadpool_solo_spells (pool), ==, 1);
  for (int i = 0; i < 20; i++) {
    g_atomic_int_set (&s.worker_chunks, 0);
    hy_threadpool_run (pool, 8, 1, straggle, &s);
    g_assert_cmpint (g_atomic_int_get (&s.worker_chunks), ==, 0);
  }
  check_loop (pool, 1000, 7);
  /* After the spell, workers that keep up get chunks again. */
  g_usleep (300000);
  s.worker_sleep_us = 0;
  int worker_chunks = 0;
  for (int i = 0; i < 50 && worker_chunks == 0; i++) {
    g_atomic_int_set (&s.worker_chunks, 0);
    hy_threadpool_run (pool, 8, 1, straggle, &s);
    worker_chunks = g_atomic_int_get (&s.worker_chunks);
  }
  g_assert_cmpint (worker_chunks, >, 0);
  g_assert_cmpuint (hy_threadpool_solo_spells (pool), ==, 1);
  hy_threadpool_free (pool);
}

/* ---- kernels: threads change no bit ------------------------------------ */

typedef struct kernel_case {
  const char *name;             /* test path */
  const char *op;
  const char *attrs[12];        /* key, value, …, NULL */
  hy_shape in[6];
  int n_in;                     /* data inputs; fused ones are added */
  hy_fused_epilogue fused;      /* Convolution, FullyConnected */
  bool blas;                    /* products by OpenBLAS: see below */
} kernel_case;

#define S(...) { .ndim = sizeof ((int64_t[]) { __VA_ARGS__ }) \
    / sizeof (int64_t), .dims = { __VA_ARGS__ } }

static const kernel_case kernel_cases[] = {
  /* Convolution: blocks of rows per thread, one product split over the
   * filters, pointwise split over columns or images, groups, epilogue. */
  { .name = "conv3x3-row-blocks", .op = "Convolution",
    .attrs = { "kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "32",
      NULL },
    .in = { S (1, 16, 40, 40), S (32, 16, 3, 3), S (32) }, .n_in = 3,
    .blas = true },
  { .name = "conv3x3-split-filters", .op = "Convolution",
    .attrs = { "kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "64",
      NULL },
    .in = { S (1, 64, 7, 7), S (64, 64, 3, 3), S (64) }, .n_in = 3,
    .blas = true },
  { .name = "conv-pointwise-b1", .op = "Convolution",
    .attrs = { "kernel", "(1, 1)", "num_filter", "64", "no_bias", "True",
      NULL },
    .in = { S (1, 32, 20, 20), S (64, 32, 1, 1) }, .n_in = 2, .blas = true },
  { .name = "conv-pointwise-b4", .op = "Convolution",
    .attrs = { "kernel", "(1, 1)", "num_filter", "48", NULL },
    .in = { S (4, 32, 14, 14), S (48, 32, 1, 1), S (48) }, .n_in = 3,
    .blas = true },
  { .name = "conv-groups", .op = "Convolution",
    .attrs = { "kernel", "(3, 3)", "stride", "(2, 2)", "num_filter", "32",
      "num_group", "4", NULL },
    .in = { S (2, 16, 25, 25), S (32, 4, 3, 3), S (32) }, .n_in = 3,
    .blas = true },
  { .name = "conv-epilogue-rows", .op = "Convolution",
    .attrs = { "kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "32",
      NULL },
    .in = { S (1, 16, 40, 40), S (32, 16, 3, 3), S (32) }, .n_in = 3,
    .fused = { HY_FUSED_ACT_RELU, 0, 0, true, true },
    .blas = true },
  { .name = "conv-epilogue-split", .op = "Convolution",
    .attrs = { "kernel", "(1, 1)", "num_filter", "96", "no_bias", "True",
      NULL },
    .in = { S (1, 64, 9, 9), S (96, 64, 1, 1) }, .n_in = 2,
    .fused = { HY_FUSED_ACT_CLIP, 0, 6, true, false },
    .blas = true },
  { .name = "conv-1d", .op = "Convolution",
    .attrs = { "kernel", "(5,)", "pad", "(2,)", "num_filter", "24", NULL },
    .in = { S (3, 16, 300), S (24, 16, 5), S (24) }, .n_in = 3,
    .blas = true },
  /* Depthwise: planes per thread. */
  { .name = "depthwise-3x3", .op = "Convolution",
    .attrs = { "kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "32",
      "num_group", "32", NULL },
    .in = { S (2, 32, 28, 28), S (32, 1, 3, 3), S (32) }, .n_in = 3,
    .fused = { HY_FUSED_ACT_CLIP, 0, 6, true, true } },
  { .name = "depthwise-5x5-s2-mult2", .op = "Convolution",
    .attrs = { "kernel", "(5, 5)", "pad", "(2, 2)", "stride", "(2, 2)",
      "num_filter", "64", "num_group", "32", NULL },
    .in = { S (1, 32, 30, 30), S (64, 1, 5, 5), S (64) }, .n_in = 3 },
  /* Products: a GEMV split over outputs, a GEMM, dot, batch_dot. */
  { .name = "fc-gemv", .op = "FullyConnected",
    .attrs = { "num_hidden", "1000", NULL },
    .in = { S (1, 512), S (1000, 512), S (1000) }, .n_in = 3, .blas = true },
  { .name = "fc-gemm-epilogue", .op = "FullyConnected",
    .attrs = { "num_hidden", "300", NULL },
    .in = { S (64, 256), S (300, 256), S (300) }, .n_in = 3,
    .fused = { HY_FUSED_ACT_LEAKY, 0.1f, 0, true, true },
    .blas = true },
  { .name = "fc-tall", .op = "FullyConnected",
    .attrs = { "num_hidden", "40", "no_bias", "True", NULL },
    .in = { S (700, 128), S (40, 128) }, .n_in = 2, .blas = true },
  { .name = "dot-column", .op = "dot",
    .attrs = { NULL },
    .in = { S (1000, 300), S (300, 1) }, .n_in = 2, .blas = true },
  { .name = "dot-trans-a-column", .op = "dot",
    .attrs = { "transpose_a", "True", NULL },
    .in = { S (300, 1000), S (300, 1) }, .n_in = 2, .blas = true },
  { .name = "dot-row-trans-b", .op = "dot",
    .attrs = { "transpose_b", "True", NULL },
    .in = { S (1, 300), S (1000, 300) }, .n_in = 2, .blas = true },
  { .name = "dot-gemm", .op = "dot",
    .attrs = { NULL },
    .in = { S (130, 200), S (200, 170) }, .n_in = 2, .blas = true },
  { .name = "batch-dot", .op = "batch_dot", .attrs = { NULL },
    .in = { S (8, 32, 64), S (8, 64, 48) }, .n_in = 2, .blas = true },
  /* Planes, runs, rows, ranges. */
  { .name = "pool-max", .op = "Pooling",
    .attrs = { "kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)",
      "pool_type", "max", NULL },
    .in = { S (2, 16, 56, 56) }, .n_in = 1 },
  { .name = "pool-avg", .op = "Pooling",
    .attrs = { "kernel", "(2, 2)", "stride", "(2, 2)", "pool_type", "avg",
      "count_include_pad", "False", NULL },
    .in = { S (2, 32, 31, 31) }, .n_in = 1 },
  { .name = "pool-global", .op = "Pooling",
    .attrs = { "kernel", "(1, 1)", "global_pool", "True", "pool_type", "avg",
      NULL },
    .in = { S (2, 256, 14, 14) }, .n_in = 1 },
  { .name = "pool-lp", .op = "Pooling",
    .attrs = { "kernel", "(3, 3)", "pool_type", "lp", "p_value", "2", NULL },
    .in = { S (1, 32, 40, 40) }, .n_in = 1 },
  { .name = "batch-norm", .op = "BatchNorm", .attrs = { NULL },
    .in = { S (2, 32, 30, 30), S (32), S (32), S (32), S (32) }, .n_in = 5 },
  { .name = "relu", .op = "Activation", .attrs = { "act_type", "relu", NULL },
    .in = { S (1, 64, 40, 40) }, .n_in = 1 },
  { .name = "tanh", .op = "Activation", .attrs = { "act_type", "tanh", NULL },
    .in = { S (1, 64, 40, 40) }, .n_in = 1 },
  { .name = "prelu", .op = "LeakyReLU",
    .attrs = { "act_type", "prelu", NULL },
    .in = { S (2, 32, 30, 30), S (32) }, .n_in = 2 },
  { .name = "elu", .op = "LeakyReLU", .attrs = { "act_type", "elu", NULL },
    .in = { S (2, 32, 30, 30) }, .n_in = 1 },
  { .name = "elemwise-add", .op = "elemwise_add", .attrs = { NULL },
    .in = { S (4, 64, 32, 32), S (4, 64, 32, 32) }, .n_in = 2 },
  { .name = "broadcast-channels", .op = "broadcast_add", .attrs = { NULL },
    .in = { S (4, 64, 32, 32), S (1, 64, 1, 1) }, .n_in = 2 },
  { .name = "broadcast-both", .op = "broadcast_mul", .attrs = { NULL },
    .in = { S (4, 1, 32, 33), S (4, 64, 1, 1) }, .n_in = 2 },
  { .name = "plus-scalar", .op = "_plus_scalar",
    .attrs = { "scalar", "0.5", NULL },
    .in = { S (300, 400) }, .n_in = 1 },
  { .name = "add-n", .op = "add_n", .attrs = { "num_args", "3", NULL },
    .in = { S (300, 400), S (300, 400), S (300, 400) }, .n_in = 3 },
  { .name = "clip", .op = "clip",
    .attrs = { "a_min", "-0.3", "a_max", "0.4", NULL },
    .in = { S (300, 400) }, .n_in = 1 },
  { .name = "where", .op = "where", .attrs = { NULL },
    .in = { S (300, 400), S (300, 400), S (300, 400) }, .n_in = 3 },
  { .name = "cast-float16", .op = "Cast",
    .attrs = { "dtype", "float16", NULL },
    .in = { S (300, 400) }, .n_in = 1 },
  { .name = "sigmoid", .op = "sigmoid",
    .attrs = { NULL },
    .in = { S (300, 400) }, .n_in = 1 },
  { .name = "softmax-rows", .op = "softmax",
    .attrs = { NULL },
    .in = { S (300, 1000) }, .n_in = 1 },
  { .name = "softmax-channels", .op = "softmax",
    .attrs = { "axis", "1", NULL },
    .in = { S (2, 10, 40, 40) }, .n_in = 1 },
  { .name = "log-softmax-channels", .op = "log_softmax",
    .attrs = { "axis", "1", NULL },
    .in = { S (3, 7, 33, 35) }, .n_in = 1 },
  { .name = "concat", .op = "Concat",
    .attrs = { "num_args", "3", "dim", "1", NULL },
    .in = { S (2, 16, 32, 32), S (2, 24, 32, 32),
      S (2, 8, 32, 32) }, .n_in = 3 },
  { .name = "concat-empty-part", .op = "Concat",
    .attrs = { "num_args", "3", "dim", "1", NULL },
    .in = { S (1, 40, 30, 30), S (1, 0, 30, 30),
      S (1, 50, 30, 30) }, .n_in = 3 },
};

static GHashTable *
case_attrs (const kernel_case *kc)
{
  GHashTable *t = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);
  for (int i = 0; kc->attrs[i]; i += 2)
    g_hash_table_insert (t, g_strdup (kc->attrs[i]),
        g_strdup (kc->attrs[i + 1]));
  return t;
}

/* The case's outputs with ctx, from the same inputs every time. */
static GPtrArray *
run_case (const kernel_case *kc, hy_cpu_ctx *ctx)
{
  const hy_op_info *op = hy_op_lookup (kc->op);
  g_assert_nonnull (op);
  g_autoptr (GError) error = NULL;
  g_autoptr (GHashTable) attrs = case_attrs (kc);
  void *params = hy_op_params_new (op, attrs, &error);
  g_assert_no_error (error);

  /* Fused parts are set the way the passes set them: one more input
   * each (the BatchNorm's rows, then the residual). */
  hy_shape in_shapes[8];
  int n_in = kc->n_in;
  memcpy (in_shapes, kc->in, sizeof kc->in);
  hy_fused_epilogue *fused = NULL;
  if (op->id == HY_OP_CONVOLUTION)
    fused = &((hy_conv_params *) params)->fused;
  else if (op->id == HY_OP_FULLY_CONNECTED)
    fused = &((hy_fc_params *) params)->fused;
  hy_shape out_shapes[4];
  if (fused) {
    *fused = kc->fused;
    fused->residual = false;    /* its shape is the output's: infer first */
    fused->batch_norm = false;
    g_assert_true (op->def->infer_shape (params, in_shapes, n_in, out_shapes,
            1, &error));
    const int64_t channels = op->id == HY_OP_CONVOLUTION
        ? out_shapes[0].dims[1] : out_shapes[0].dims[out_shapes[0].ndim - 1];
    *fused = kc->fused;
    if (fused->batch_norm)
      in_shapes[n_in++] = (hy_shape) { .ndim = 2, .dims = { 3, channels } };
    if (fused->residual)
      in_shapes[n_in++] = out_shapes[0];
  }
  g_assert_cmpint (hy_op_num_inputs (op, params), ==, n_in);
  const int n_out = hy_op_num_outputs (op, params);
  g_assert_true (op->def->infer_shape (params, in_shapes, n_in, out_shapes,
          n_out, &error));
  g_assert_no_error (error);

  GRand *rand = g_rand_new_with_seed (42);
  hy_tensor *in[8];
  for (int i = 0; i < n_in; i++) {
    in[i] = hy_tensor_new (&in_shapes[i]);
    for (int64_t e = 0; e < hy_shape_numel (&in_shapes[i]); e++) {
      float v = (float) g_rand_double_range (rand, -1.0, 1.0);
      /* BatchNorm's variance, and a fused BatchNorm's scale row. */
      if (op->id == HY_OP_BATCH_NORM && i == 4)
        v = fabsf (v) + 0.1f;
      in[i]->data[e] = v;
    }
  }
  g_rand_free (rand);
  GPtrArray *outs = g_ptr_array_new_with_free_func (
      (GDestroyNotify) hy_tensor_free);
  for (int i = 0; i < n_out; i++)
    g_ptr_array_add (outs, hy_tensor_new (&out_shapes[i]));

  hy_cpu_kernel_for (op->id) (ctx, params, (const hy_tensor *const *) in,
      n_in, (hy_tensor *const *) outs->pdata, n_out);
  for (int i = 0; i < n_in; i++)
    hy_tensor_free (in[i]);
  g_free (params);
  return outs;
}

/* max|got − want| ≤ 1e-5 · max(1, max|want|) */
static void
assert_close (const hy_tensor *want, const hy_tensor *got, const char *name,
    int threads)
{
  double diff = 0, ref = 0;
  for (int64_t e = 0; e < hy_shape_numel (&want->shape); e++) {
    diff = MAX (diff, fabs ((double) got->data[e] - want->data[e]));
    ref = MAX (ref, fabs ((double) want->data[e]));
  }
  if (!(diff <= 1e-5 * MAX (1.0, ref)))
    g_error ("%s: max|diff| %g with %d threads", name, diff, threads);
}

static void
test_kernel_bits (gconstpointer data)
{
  const kernel_case *kc = data;
  hy_cpu_ctx serial = { 0 };
  GPtrArray *want = run_case (kc, &serial);
  hy_cpu_ctx_clear (&serial);
  for (int threads = 2; threads <= 4; threads++) {
    hy_cpu_ctx ctx = { 0 };
    hy_cpu_ctx_set_threads (&ctx, threads);
    /* Twice: the second run reuses a workspace sized by the first. */
    for (int run = 0; run < 2; run++) {
      GPtrArray *got = run_case (kc, &ctx);
      g_assert_cmpuint (got->len, ==, want->len);
      for (guint i = 0; i < want->len; i++) {
        const hy_tensor *w = want->pdata[i], *g = got->pdata[i];
        if (kc->blas)
          assert_close (w, g, kc->name, threads);
        else if (memcmp (w->data, g->data, hy_tensor_nbytes (w)))
          g_error ("%s: output %u differs with %d threads", kc->name, i,
              threads);
      }
      g_ptr_array_unref (got);
    }
    hy_cpu_ctx_clear (&ctx);
  }
  g_ptr_array_unref (want);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/threadpool/coverage", test_coverage);
  g_test_add_func ("/threadpool/back-to-back", test_back_to_back);
  g_test_add_func ("/threadpool/shares", test_shares);
  g_test_add_func ("/threadpool/nesting", test_nesting);
  g_test_add_func ("/threadpool/grain", test_grain);
  g_test_add_func ("/threadpool/create-destroy", test_create_destroy);
  g_test_add_func ("/threadpool/two-callers", test_two_callers);
  g_test_add_func ("/threadpool/default-threads", test_default_threads);
  g_test_add_func ("/threadpool/straggler", test_straggler);
  for (guint i = 0; i < G_N_ELEMENTS (kernel_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/threadpool/kernel-bits/%s",
        kernel_cases[i].name);
    g_test_add_data_func (path, &kernel_cases[i], test_kernel_bits);
  }
  return g_test_run ();
}
