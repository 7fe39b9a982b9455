/*
 * threadpool.c — the CPU kernels' worker threads (see threadpool.h).
 *
 * One 64-bit word publishes the loop in progress: its generation (bumped
 * per loop) and its chunk count.  Each thread has a share of the chunks,
 * a word of its own (generation, next chunk, end): the t-th of T threads
 * owns the t-th fraction of the loop, in order.  A thread claims its own
 * chunks from the front of its share, then the chunks nobody has taken
 * yet from the back of the others', each with a compare-and-swap on the
 * whole word, so a late worker still looking at a finished loop can never
 * claim from it; once a claim succeeds the loop cannot finish before that
 * chunk is done, so the function, its argument and the loop's sizes,
 * written before the loop was published, stay valid while the chunk runs.
 *
 * Why shares: a thread then runs the same part of every loop, so where
 * one layer's loop and the next split their data alike (planes, rows,
 * columns), each thread reads what it wrote itself, from its own cache.
 * A line the other core wrote costs 2.5× a local one here, and at times
 * far more: this project's 2-vCPU machines have spells in which
 * two-thread forwards run 1.4-1.5× slower while one thread's do not.  In
 * those, with chunks taken in turn by whichever thread was free,
 * MobileNetV3-Large's forward on two threads ran 1.09-1.13× slower than
 * with shares; at other times level to 1.03× (docs/PERFORMANCE.md,
 * "Shares of a loop").
 *
 * Sleeping uses a Linux futex on a separate wake counter; a loop is
 * published first and the counter bumped after, and a worker registers as
 * a sleeper before its last look at the loop word, so a wake-up is never
 * lost.  The caller waits for the last chunks the same way, spinning
 * first.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef HY_HAVE_DNNL
#include <omp.h>
#endif

#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>

#include "kernels/cpu/threadpool.h"

/* How long an idle worker spins before it sleeps: once the last loop is
 * finished, longer than the gaps between the loops of one forward and
 * short next to a frame interval; while a loop is still running (the
 * caller busy with its last chunk), longer, since the next loop is a
 * moment away — but bounded, because on a busy machine a spinning worker
 * takes CPU time from the caller.  The caller, waiting for the last
 * chunks, spins for a while too, then sleeps, so that a worker preempted
 * in its chunk can have the CPU back. */
#define WORKER_SPIN_NS 50000
#define WORKER_SPIN_BUSY_NS 500000
#define CALLER_SPIN_NS 200000

/* A busy neighbour (another process, the pipeline's decoder) can take a
 * worker's CPU while it holds a chunk: the caller, done with its own
 * chunks, then waits for the scheduler to give the worker its CPU back —
 * a time slice, milliseconds, in every loop it happens in.  With one core
 * of two taken, that made a 2-thread forward take 1.9x its 1-thread time.
 * So the caller watches for it: a loop in which it waited for others more
 * than STALL_NS and more than STALL_CHUNKS of its own chunks' average time
 * (so the normal wait for a last chunk on a long loop does not count) is a
 * stall; STALLS_TO_SOLO of them within a window of at least STALL_WINDOW
 * loops and STALL_WINDOW_NS send the pool's loops to the caller alone for
 * SOLO_NS, after which it tries its workers again.  Alone, the caller runs
 * at its one thread's speed, whichever CPU the scheduler finds for it.
 * The window is a time as well as a count of loops: the scheduler takes a
 * worker's CPU every few milliseconds, and a network of short layers
 * (MobileNetV2, ~100 loops in 2 ms) ran 64 loops between two of them, so
 * it never went solo (a busy neighbour made its 2-thread forward 1.35-1.57×
 * its 1-thread time, against 0.98-1.03× on the ResNets).  A window of
 * 100 ms, or a stall of 0.5 ms, also caught the quiet machine's own
 * hiccups (its 2-thread forwards then ran at 1-thread speed). */
#define STALL_NS 1000000
#define STALL_CHUNKS 3
#define STALLS_TO_SOLO 2
#define STALL_WINDOW 64
#define STALL_WINDOW_NS 10000000
#define SOLO_NS 250000000

/* The loop word: generation | chunk count; a share's: generation | next
 * chunk | end. */
#define CHUNK_BITS 16
#define MAX_CHUNKS HY_THREADPOOL_MAX_CHUNKS
_Static_assert (MAX_CHUNKS < 1 << CHUNK_BITS, "chunk fields overflow");
#define MAX_THREADS 256

#define CACHE_LINE 64

static inline uint64_t
loop_word (uint32_t gen, uint32_t n_chunks)
{
  return (uint64_t) gen << 32 | n_chunks;
}

static inline uint64_t
share_word (uint32_t gen, uint32_t next, uint32_t end)
{
  return (uint64_t) gen << 32 | (uint64_t) next << CHUNK_BITS | end;
}

static inline uint32_t
word_gen (uint64_t w)
{
  return (uint32_t) (w >> 32);
}

static inline uint32_t
word_chunks (uint64_t w)
{
  return w & MAX_CHUNKS;
}

static inline uint32_t
share_next (uint64_t w)
{
  return (w >> CHUNK_BITS) & MAX_CHUNKS;
}

static inline uint32_t
share_end (uint64_t w)
{
  return w & MAX_CHUNKS;
}

/* A thread's share of the loop in progress, on a cache line of its own. */
typedef struct share {
  _Alignas (CACHE_LINE) _Atomic uint64_t word;
} share;

typedef struct worker {
  pthread_t thread;
  hy_threadpool *pool;
  int index;
} worker;

struct hy_threadpool {
  /* Written by the caller before it publishes a loop. */
  hy_parallel_fn fn;
  void *arg;
  int64_t n, chunk;
  uint32_t n_chunks;
  int n_threads;
  worker *workers;              /* n_threads − 1 */
  share *shares;                /* n_threads */

  /* The caller's own bookkeeping of stalls (see STALL_NS). */
  int64_t solo_until;           /* now_ns () before which loops run alone */
  int stalls;                   /* within the current window */
  int window_loops;             /* loops since `stalls` began counting */
  int64_t window_start;         /* and when */
  uint64_t solo_spells;         /* how often the pool went solo */

  _Alignas (CACHE_LINE) _Atomic uint64_t loop;
  _Alignas (CACHE_LINE) _Atomic uint32_t done;   /* chunks finished */
  _Atomic int caller_asleep;
  _Alignas (CACHE_LINE) _Atomic uint32_t wake;   /* futex: bumped per loop */
  _Atomic int sleepers;
  _Atomic bool stop;
  _Atomic uint32_t ready;       /* futex: workers through their start-up */
};

/* The thread index while running a chunk (workers: always), else -1. */
static _Thread_local int current_thread = -1;

static inline void
cpu_relax (void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause ();
#elif defined(__aarch64__)
  __asm__ __volatile__ ("yield");
#endif
}

/* Monotonic nanoseconds: a vDSO read, not a system call. */
static int64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
futex_wait (_Atomic uint32_t *addr, uint32_t expected)
{
  syscall (SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void
futex_wake (_Atomic uint32_t *addr, int count)
{
  syscall (SYS_futex, addr, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

#define CLAIM_EMPTY (-1)         /* the share has no chunk left */
#define CLAIM_STALE (-2)         /* loop `gen` is over */

/* Claims a chunk of loop `gen` from share sh: its first (the owner) or
 * its last (another thread); returns the chunk's index. */
static int64_t
claim (share *sh, uint32_t gen, bool first)
{
  uint64_t w = atomic_load_explicit (&sh->word, memory_order_acquire);
  for (;;) {
    if (word_gen (w) != gen)
      return CLAIM_STALE;
    const uint32_t next = share_next (w), end = share_end (w);
    if (next >= end)
      return CLAIM_EMPTY;
    const uint64_t claimed = first ? w + ((uint64_t) 1 << CHUNK_BITS)
        : w - 1;
    if (atomic_compare_exchange_weak_explicit (&sh->word, &w, claimed,
            memory_order_acquire, memory_order_acquire))
      return first ? next : end - 1;
    /* w now holds the current word */
  }
}

/* Claims and runs chunks of loop `gen` until none is left: its own
 * share's in order, then the others' from their ends.  Returns how many
 * it ran. */
static int
run_chunks (hy_threadpool *pool, uint32_t gen, int thread)
{
  int ran = 0;
  const int n_threads = pool->n_threads;
  for (int v = 0; v < n_threads; v++) {
    share *sh = &pool->shares[(thread + v) % n_threads];
    for (;;) {
      const int64_t c = claim (sh, gen, v == 0);
      if (c == CLAIM_STALE)
        return ran;
      if (c == CLAIM_EMPTY)
        break;
      const int64_t begin = c * pool->chunk;
      const int64_t end = begin + pool->chunk < pool->n
          ? begin + pool->chunk : pool->n;
      pool->fn (pool->arg, begin, end, thread);
      ran++;
      if (atomic_fetch_add (&pool->done, 1) + 1 == pool->n_chunks
          && atomic_load (&pool->caller_asleep))
        futex_wake (&pool->done, 1);
    }
  }
  return ran;
}

/* Waits until a loop other than `gen` (of n_chunks chunks) is published,
 * or the pool stops; returns its word. */
static uint64_t
wait_for_loop (hy_threadpool *pool, uint32_t gen, uint32_t n_chunks)
{
  const int64_t start = now_ns ();
  int64_t idle_since = 0;       /* 0: loop `gen` still running */
  for (unsigned spin = 0;; spin++) {
    uint64_t w = atomic_load_explicit (&pool->loop, memory_order_acquire);
    if (word_gen (w) != gen || atomic_load_explicit (&pool->stop,
            memory_order_relaxed))
      return w;
    cpu_relax ();
    if (spin % 64 != 63)
      continue;
    const int64_t t = now_ns ();
    if (!idle_since && atomic_load_explicit (&pool->done,
            memory_order_relaxed) >= n_chunks)
      idle_since = t;
    if (idle_since ? t - idle_since > WORKER_SPIN_NS
        : t - start > WORKER_SPIN_BUSY_NS)
      break;
  }
  for (;;) {
    const uint32_t seen = atomic_load (&pool->wake);
    atomic_fetch_add (&pool->sleepers, 1);
    uint64_t w = atomic_load (&pool->loop);
    if (word_gen (w) == gen && !atomic_load (&pool->stop))
      futex_wait (&pool->wake, seen);
    atomic_fetch_sub (&pool->sleepers, 1);
    w = atomic_load (&pool->loop);
    if (word_gen (w) != gen || atomic_load (&pool->stop))
      return w;
  }
}

static void *
worker_main (void *data)
{
  worker *self = data;
  hy_threadpool *pool = self->pool;
  /* The word the pool starts with, not the current one: a loop published
   * before this thread first ran is still one to join (its share waits
   * for it, or for another thread to take it). */
  uint64_t w = loop_word (0, 0);
  current_thread = self->index;
#ifdef HY_HAVE_DNNL
  /* The oneDNN kernels set this thread's OpenMP thread count around each
   * call (conv/conv-dnnl.c says why); libgomp allocates a thread's own
   * copy of its settings the first time, which would land in whichever
   * forward first gives this thread such work.  Done here, at start-up
   * (which hy_threadpool_new waits for), with the count unchanged. */
  omp_set_num_threads (omp_get_max_threads ());
#endif
  atomic_fetch_add (&pool->ready, 1);
  futex_wake (&pool->ready, 1);
  for (;;) {
    w = wait_for_loop (pool, word_gen (w), word_chunks (w));
    if (atomic_load (&pool->stop))
      return NULL;
    run_chunks (pool, word_gen (w), self->index);
  }
}

static void
wake_workers (hy_threadpool *pool)
{
  atomic_fetch_add (&pool->wake, 1);
  if (atomic_load (&pool->sleepers) > 0)
    futex_wake (&pool->wake, INT_MAX);
}

static void
stop_workers (hy_threadpool *pool, int n_started)
{
  atomic_store (&pool->stop, true);
  wake_workers (pool);
  for (int i = 0; i < n_started; i++)
    pthread_join (pool->workers[i].thread, NULL);
}

hy_threadpool *
hy_threadpool_new (int n_threads)
{
  if (n_threads < 2)
    return NULL;
  if (n_threads > MAX_THREADS)
    n_threads = MAX_THREADS;
  hy_threadpool *pool = aligned_alloc (CACHE_LINE,
      (sizeof *pool + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE);
  worker *workers = calloc ((size_t) n_threads - 1, sizeof *workers);
  share *shares = aligned_alloc (CACHE_LINE, (size_t) n_threads
      * sizeof *shares);
  if (!pool || !workers || !shares) {
    free (pool);
    free (workers);
    free (shares);
    return NULL;
  }
  memset (pool, 0, sizeof *pool);
  pool->workers = workers;
  pool->shares = shares;
  for (int t = 0; t < n_threads; t++)
    atomic_init (&shares[t].word, 0);
  atomic_init (&pool->loop, 0);
  atomic_init (&pool->done, 0);
  atomic_init (&pool->caller_asleep, 0);
  atomic_init (&pool->wake, 0);
  atomic_init (&pool->sleepers, 0);
  atomic_init (&pool->stop, false);
  atomic_init (&pool->ready, 0);

  int started = 0;
  for (int i = 0; i < n_threads - 1; i++) {
    workers[started] = (worker) { .pool = pool, .index = started + 1 };
    if (pthread_create (&workers[started].thread, NULL, worker_main,
            &workers[started]) != 0)
      break;                    /* run with the threads we have */
    pthread_setname_np (workers[started].thread, "hy-worker");
    started++;
  }
  if (started == 0) {
    free (workers);
    free (shares);
    free (pool);
    return NULL;
  }
  /* A worker's first run may come late on a loaded machine; what its
   * start-up allocates belongs to the pool's creation, not to a forward
   * that happens to run when it is first scheduled. */
  for (uint32_t r; (r = atomic_load (&pool->ready)) < (uint32_t) started;)
    futex_wait (&pool->ready, r);
  pool->n_threads = started + 1;
  return pool;
}

void
hy_threadpool_free (hy_threadpool *pool)
{
  if (!pool)
    return;
  stop_workers (pool, pool->n_threads - 1);
  free (pool->workers);
  free (pool->shares);
  free (pool);
}

uint64_t
hy_threadpool_solo_spells (const hy_threadpool *pool)
{
  return pool ? pool->solo_spells : 0;
}

int
hy_threadpool_n_threads (const hy_threadpool *pool)
{
  return pool ? pool->n_threads : 1;
}

bool
hy_threadpool_in_loop (void)
{
  return current_thread >= 0;
}

/* After a parallel loop: counts it as a stall if the caller waited for
 * the others much longer than its own chunks took (see STALL_NS). */
static void
watch_for_stalls (hy_threadpool *pool, int64_t start, int64_t own_done,
    int own_chunks)
{
  const int64_t waited = now_ns () - own_done;
  const int64_t per_chunk = own_chunks > 0
      ? (own_done - start) / own_chunks : 0;
  const int64_t now = own_done + waited;
  if (++pool->window_loops > STALL_WINDOW
      && now - pool->window_start > STALL_WINDOW_NS) {
    pool->stalls = 0;
    pool->window_loops = 0;
    pool->window_start = now;
  }
  if (waited > STALL_NS && waited > STALL_CHUNKS * per_chunk)
    pool->stalls++;
  if (pool->stalls >= STALLS_TO_SOLO) {
    pool->solo_until = now + SOLO_NS;
    pool->solo_spells++;
    pool->stalls = 0;
    pool->window_loops = 0;
    pool->window_start = now;
  }
}

/* Waits for the chunks other threads claimed: spins, then sleeps until
 * the thread finishing the last one wakes it. */
static void
wait_for_done (hy_threadpool *pool, uint32_t n_chunks)
{
  const int64_t start = now_ns ();
  for (unsigned spin = 0;; spin++) {
    if (atomic_load_explicit (&pool->done, memory_order_acquire) == n_chunks)
      return;
    cpu_relax ();
    if (spin % 64 == 63 && now_ns () - start > CALLER_SPIN_NS)
      break;
  }
  atomic_store (&pool->caller_asleep, 1);
  for (;;) {
    const uint32_t d = atomic_load (&pool->done);
    if (d == n_chunks)
      break;
    futex_wait (&pool->done, d);
  }
  atomic_store (&pool->caller_asleep, 0);
}

void
hy_threadpool_run (hy_threadpool *pool, int64_t n, int64_t chunk,
    hy_parallel_fn fn, void *arg)
{
  if (n <= 0)
    return;
  if (chunk < 1)
    chunk = 1;
  if ((n + chunk - 1) / chunk > MAX_CHUNKS)
    chunk = (n + MAX_CHUNKS - 1) / MAX_CHUNKS;
  const uint32_t n_chunks = (uint32_t) ((n + chunk - 1) / chunk);
  if (!pool || n_chunks < 2 || current_thread >= 0) {
    fn (arg, 0, n, current_thread >= 0 ? current_thread : 0);
    return;
  }

  const int64_t start = now_ns ();
  current_thread = 0;
  if (start < pool->solo_until) {
    /* The same chunks, so that a kernel sizing its scratch per chunk
     * still may; the workers sleep. */
    for (int64_t begin = 0; begin < n; begin += chunk)
      fn (arg, begin, begin + chunk < n ? begin + chunk : n, 0);
    current_thread = -1;
    return;
  }

  pool->fn = fn;
  pool->arg = arg;
  pool->n = n;
  pool->chunk = chunk;
  pool->n_chunks = n_chunks;
  atomic_store_explicit (&pool->done, 0, memory_order_relaxed);
  const uint32_t gen = word_gen (atomic_load_explicit (&pool->loop,
          memory_order_relaxed)) + 1;
  /* Thread t's share: chunks [⌈t·n/T⌉, ⌈(t + 1)·n/T⌉), the caller's first
   * where there are fewer chunks than threads. */
  const int64_t threads = pool->n_threads;
  for (int64_t t = 0; t < threads; t++)
    atomic_store_explicit (&pool->shares[t].word, share_word (gen,
            (uint32_t) ((t * n_chunks + threads - 1) / threads),
            (uint32_t) (((t + 1) * n_chunks + threads - 1) / threads)),
        memory_order_relaxed);
  /* Published after the shares: a worker that sees the new generation
   * here sees its share. */
  atomic_store (&pool->loop, loop_word (gen, n_chunks));
  wake_workers (pool);

  const int ran = run_chunks (pool, gen, 0);
  const int64_t own_done = now_ns ();
  wait_for_done (pool, n_chunks);
  current_thread = -1;
  watch_for_stalls (pool, start, own_done, ran);
}

int
hy_threadpool_default_threads (void)
{
  const char *env = getenv ("HYBRIDINFER_THREADS");
  if (env && *env) {
    char *end;
    errno = 0;
    long v = strtol (env, &end, 10);
    if (!errno && !*end && v > 0)
      return v > MAX_THREADS ? MAX_THREADS : (int) v;
  }
  cpu_set_t set;
  if (sched_getaffinity (0, sizeof set, &set) == 0 && CPU_COUNT (&set) > 0)
    return CPU_COUNT (&set);
  long online = sysconf (_SC_NPROCESSORS_ONLN);
  return online > 0 ? (int) (online > MAX_THREADS ? MAX_THREADS : online) : 1;
}
