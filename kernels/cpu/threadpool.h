/*
 * threadpool.h — a persistent pool of worker threads for the CPU kernels'
 * parallel loops (in the spirit of XNNPACK's pthreadpool).
 *
 * A parallel loop splits its items [0, n) into contiguous chunks, and the
 * chunks into one share per thread: the t-th of T threads (0: the caller)
 * owns the t-th fraction of them, in order, so that a thread runs the
 * same part of every loop and reads, where successive loops split their
 * data alike, what it wrote itself.  Threads claim chunks one at a time,
 * their own first, then those nobody has taken yet from the others'
 * shares, so a worker that is slow to start (asleep, or descheduled on a
 * busy machine) never holds the caller up.
 *
 * A worker that keeps the caller waiting — its CPU taken by another
 * process while it holds a chunk — sends the loops to the caller alone for
 * a quarter of a second, after which the workers are tried again.
 *
 * Workers that run out of work spin a while before they sleep on a futex
 * (tens of microseconds once no loop is running, longer while one is): the
 * many loops of one forward hand work over without a system call, and a
 * pipeline idle between frames burns no CPU.  The pool allocates only when
 * it is created.
 *
 * Loops do not nest: a loop started from inside another one (a kernel
 * calling a kernel from a worker) runs on the calling thread alone.
 */
#ifndef HY_CPU_THREADPOOL_H
#define HY_CPU_THREADPOOL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct hy_threadpool hy_threadpool;

/* Runs items [begin, end).  `thread`, in [0, n_threads), names the thread
 * running them (0: the caller), e.g. to pick its slice of scratch. */
typedef void (*hy_parallel_fn) (void *arg, int64_t begin, int64_t end,
    int thread);

/* A pool of n_threads threads in all (the caller and n_threads − 1
 * workers); NULL when n_threads < 2, or when no worker could start. */
hy_threadpool *hy_threadpool_new (int n_threads);
void hy_threadpool_free (hy_threadpool *pool);

/* The threads a loop on `pool` may use: 1 for NULL. */
int hy_threadpool_n_threads (const hy_threadpool *pool);

/* The most chunks one loop has: beyond, chunks grow. */
#define HY_THREADPOOL_MAX_CHUNKS 65535

/* Runs fn over [0, n) in chunks of `chunk` items (the last one shorter;
 * larger when n would need more than HY_THREADPOOL_MAX_CHUNKS) and returns
 * when every chunk is done.  Serially, as one chunk, when the pool is
 * NULL, there is a single chunk, or the call comes from inside a loop. */
void hy_threadpool_run (hy_threadpool *pool, int64_t n, int64_t chunk,
    hy_parallel_fn fn, void *arg);

/* How often the pool has run its loops on the caller alone for a while,
 * because a worker kept the caller waiting (a busy neighbour took its CPU:
 * see threadpool.c). */
uint64_t hy_threadpool_solo_spells (const hy_threadpool *pool);

/* Whether the calling thread is running a chunk of some loop. */
bool hy_threadpool_in_loop (void);

/* The thread count to use when none is asked for: HYBRIDINFER_THREADS
 * when it holds a positive number, else the CPUs this process may run
 * on. */
int hy_threadpool_default_threads (void);

#endif /* HY_CPU_THREADPOOL_H */
