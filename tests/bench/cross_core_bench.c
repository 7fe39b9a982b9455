/*
 * cross_core_bench.c — what reading a value another core has just written
 * costs next to reading one this core wrote: the price of a layer split
 * over threads differently from the layer before it (docs/PERFORMANCE.md,
 * "Issue 11 on the Xeon, continued").
 *
 * Two threads, pinned to the first two CPUs this process may use, share a
 * buffer.  Each round both write their own half, meet at a barrier, then
 * read a half — their own (local) or the other's (remote), one float per
 * cache line in four independent streams, as fast as the loads go — and
 * meet again.  Printed: the reading phase's time per round and its rate,
 * for buffers sized like a network's activations.  Built by meson (not a
 * test):
 *
 *   ninja -C build tests/cross-core-bench && build/tests/cross-core-bench
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUNDS 200
#define LINE_FLOATS 16

typedef struct shared {
  float *buf;
  size_t half;                  /* floats per thread's half */
  bool remote;
  atomic_int arrived;
  int cpus[2];
  double read_s[2];
} shared;

/* Where the sums go, so that the loads stay. */
static volatile float sink;

typedef struct worker {
  shared *s;
  int index;
} worker;

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Both threads' `generation`-th arrival. */
static void
barrier (shared *s, int generation)
{
  atomic_fetch_add (&s->arrived, 1);
  while (atomic_load (&s->arrived) < 2 * generation)
    ;
}

static void *
run (void *arg)
{
  worker *w = arg;
  shared *s = w->s;
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (s->cpus[w->index], &set);
  pthread_setaffinity_np (pthread_self (), sizeof set, &set);
  int generation = 0;
  double read_s = 0;
  float sum = 0;
  for (int round = 0; round < ROUNDS; round++) {
    float *mine = s->buf + (size_t) w->index * s->half;
    for (size_t i = 0; i < s->half; i++)
      mine[i] = (float) (i + (size_t) round);
    barrier (s, ++generation);
    const int from = s->remote ? 1 - w->index : w->index;
    const float *src = s->buf + (size_t) from * s->half;
    const double t0 = now_s ();
    float a = 0, b = 0, c = 0, d = 0;
    for (size_t i = 0; i + 4 * LINE_FLOATS <= s->half; i += 4 * LINE_FLOATS) {
      a += src[i];
      b += src[i + LINE_FLOATS];
      c += src[i + 2 * LINE_FLOATS];
      d += src[i + 3 * LINE_FLOATS];
    }
    read_s += now_s () - t0;
    sum += a + b + c + d;
    barrier (s, ++generation);
  }
  s->read_s[w->index] = read_s / ROUNDS;
  sink += sum;
  return NULL;
}

static double
measure (shared *s, size_t bytes, bool remote)
{
  s->half = bytes / sizeof (float) / 2;
  s->remote = remote;
  atomic_store (&s->arrived, 0);
  worker w[2] = { { s, 0 }, { s, 1 } };
  pthread_t threads[2];
  for (int t = 0; t < 2; t++)
    pthread_create (&threads[t], NULL, run, &w[t]);
  for (int t = 0; t < 2; t++)
    pthread_join (threads[t], NULL);
  return (s->read_s[0] + s->read_s[1]) / 2;
}

int
main (void)
{
  shared s = { 0 };
  cpu_set_t set;
  if (sched_getaffinity (0, sizeof set, &set) != 0 || CPU_COUNT (&set) < 2) {
    printf ("cross-core-bench: needs two CPUs\n");
    return 0;
  }
  for (int cpu = 0, found = 0; found < 2; cpu++)
    if (CPU_ISSET (cpu, &set))
      s.cpus[found++] = cpu;
  const size_t sizes[] = { 300 << 10, 800 << 10, 1600 << 10, 3200 << 10 };
  s.buf = aligned_alloc (64, sizes[3]);
  if (!s.buf)
    return 1;
  printf ("CPUs %d and %d; each thread reads half the buffer\n"
      "buffer      local (us, GB/s)    remote (us, GB/s)   remote/local\n",
      s.cpus[0], s.cpus[1]);
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    const double local = measure (&s, sizes[i], false);
    const double remote = measure (&s, sizes[i], true);
    const double half = sizes[i] / 2.0;
    printf ("%5zu KiB   %8.1f %6.1f      %8.1f %6.1f        %.1fx\n",
        sizes[i] >> 10, local * 1e6, half / local * 1e-9, remote * 1e6,
        half / remote * 1e-9, remote / local);
  }
  free (s.buf);
  return 0;
}
