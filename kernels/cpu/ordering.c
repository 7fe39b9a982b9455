/*
 * ordering.c — CPU kernel of topk, sort and argsort.
 *
 * MXNet 1.9.1 sorts each row's positions by value with libstdc++'s
 * std::sort when k·8 > n and std::partial_sort otherwise, comparing with
 * `<` (ascending) or `>` (descending).  Neither is stable: which of equal
 * values comes first is whatever those two algorithms make of the row.
 * To give the same indices on ties, this file carries the same
 * algorithms step for step (introsort with a median-of-three pivot, a
 * depth limit of 2·floor(log2 n) falling back to heapsort, and a final
 * insertion sort over runs of 16; partial sort as heap select then heap
 * sort), written afresh in C over an array of positions.
 */
#include <string.h>

#include "cpu-kernel.h"
#include "kernels/params/ordering.h"

void hy_cpu_ordering (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef struct order {
  const float *v;               /* the row's values */
  bool ascend;
} order;

/* The comparison MXNet hands the sort: strictly before. */
static inline bool
before (const order *o, int64_t a, int64_t b)
{
  return o->ascend ? o->v[a] < o->v[b] : o->v[a] > o->v[b];
}

static inline void
swap_pos (int64_t *a, int64_t *b)
{
  int64_t t = *a;
  *a = *b;
  *b = t;
}

/* ---- heaps (max-heap under `before`) ---- */

static void
heap_push (const order *o, int64_t *f, int64_t hole, int64_t top,
    int64_t value)
{
  int64_t parent = (hole - 1) / 2;
  while (hole > top && before (o, f[parent], value)) {
    f[hole] = f[parent];
    hole = parent;
    parent = (hole - 1) / 2;
  }
  f[hole] = value;
}

static void
heap_adjust (const order *o, int64_t *f, int64_t hole, int64_t len,
    int64_t value)
{
  const int64_t top = hole;
  int64_t child = hole;
  while (child < (len - 1) / 2) {
    child = 2 * (child + 1);
    if (before (o, f[child], f[child - 1]))
      child--;
    f[hole] = f[child];
    hole = child;
  }
  if ((len & 1) == 0 && child == (len - 2) / 2) {
    child = 2 * (child + 1);
    f[hole] = f[child - 1];
    hole = child - 1;
  }
  heap_push (o, f, hole, top, value);
}

static void
heap_make (const order *o, int64_t *f, int64_t len)
{
  if (len < 2)
    return;
  for (int64_t parent = (len - 2) / 2;; parent--) {
    heap_adjust (o, f, parent, len, f[parent]);
    if (parent == 0)
      return;
  }
}

/* Moves f[0] to *result's place and sinks *result's old value in. */
static void
heap_pop (const order *o, int64_t *f, int64_t len, int64_t *result)
{
  int64_t value = *result;
  *result = f[0];
  heap_adjust (o, f, 0, len, value);
}

/* The first `mid` of [0, len) in order, the rest in no promised order. */
static void
partial_sort (const order *o, int64_t *f, int64_t mid, int64_t len)
{
  heap_make (o, f, mid);
  for (int64_t i = mid; i < len; i++)
    if (before (o, f[i], f[0]))
      heap_pop (o, f, mid, &f[i]);
  for (int64_t n = mid; n > 1; n--)
    heap_pop (o, f, n - 1, &f[n - 1]);
}

/* ---- introsort ---- */

enum { THRESHOLD = 16 };

static void
median_to_first (const order *o, int64_t *r, int64_t *a, int64_t *b,
    int64_t *c)
{
  if (before (o, *a, *b)) {
    if (before (o, *b, *c))
      swap_pos (r, b);
    else if (before (o, *a, *c))
      swap_pos (r, c);
    else
      swap_pos (r, a);
  } else if (before (o, *a, *c)) {
    swap_pos (r, a);
  } else if (before (o, *b, *c)) {
    swap_pos (r, c);
  } else {
    swap_pos (r, b);
  }
}

/* Partitions [lo, hi) around *pivot, which lies outside it (just
 * before); neither scan needs a bound. */
static int64_t *
partition (const order *o, int64_t *lo, int64_t *hi, const int64_t *pivot)
{
  for (;;) {
    while (before (o, *lo, *pivot))
      lo++;
    hi--;
    while (before (o, *pivot, *hi))
      hi--;
    if (!(lo < hi))
      return lo;
    swap_pos (lo, hi);
    lo++;
  }
}

static void
introsort_loop (const order *o, int64_t *first, int64_t *last, int depth)
{
  while (last - first > THRESHOLD) {
    if (depth == 0) {
      partial_sort (o, first, last - first, last - first);
      return;
    }
    depth--;
    int64_t *mid = first + (last - first) / 2;
    median_to_first (o, first, first + 1, mid, last - 1);
    int64_t *cut = partition (o, first + 1, last, first);
    introsort_loop (o, cut, last, depth);
    last = cut;
  }
}

static void
linear_insert (const order *o, int64_t *at)
{
  int64_t value = *at;
  int64_t *prev = at - 1;
  while (before (o, value, *prev)) {
    *at = *prev;
    at = prev;
    prev--;
  }
  *at = value;
}

static void
insertion_sort (const order *o, int64_t *first, int64_t *last)
{
  if (first == last)
    return;
  for (int64_t *i = first + 1; i != last; i++) {
    if (before (o, *i, *first)) {
      int64_t value = *i;
      memmove (first + 1, first, (size_t) (i - first) * sizeof *first);
      *first = value;
    } else {
      linear_insert (o, i);
    }
  }
}

static int
floor_log2 (int64_t n)
{
  int r = 0;
  while (n > 1) {
    n >>= 1;
    r++;
  }
  return r;
}

static void
full_sort (const order *o, int64_t *f, int64_t len)
{
  if (len == 0)
    return;
  introsort_loop (o, f, f + len, 2 * floor_log2 (len));
  if (len > THRESHOLD) {
    insertion_sort (o, f, f + THRESHOLD);
    for (int64_t *i = f + THRESHOLD; i != f + len; i++)
      linear_insert (o, i);
  } else {
    insertion_sort (o, f, f + len);
  }
}

/* ---- the op ---- */

typedef struct order_job {
  const hy_ordering_params *p;
  const float *x;
  float *y0, *y1;
  int64_t n, inner, k;
  char *scratch;                /* per thread: n floats, n positions */
  size_t scratch_stride;
} order_job;

static void
order_rows (void *arg, int64_t begin, int64_t end, int thread)
{
  const order_job *j = arg;
  const hy_ordering_params *p = j->p;
  float *v = (float *) (j->scratch + (size_t) thread * j->scratch_stride);
  int64_t *pos = (int64_t *) (v + ((j->n + 15) & ~(int64_t) 15));
  order o = { .v = v, .ascend = p->is_ascend };
  const int64_t n = j->n, inner = j->inner, k = j->k;
  for (int64_t r = begin; r < end; r++) {
    int64_t outer = r / inner, in = r % inner;
    const float *x = j->x + outer * n * inner + in;
    for (int64_t i = 0; i < n; i++) {
      v[i] = x[i * inner];
      pos[i] = i;
    }
    if (k * 8 > n)
      full_sort (&o, pos, n);
    else
      partial_sort (&o, pos, k, n);
    if (p->ret_typ == HY_TOPK_RET_MASK) {
      float *m = j->y0 + outer * n * inner + in;
      for (int64_t i = 0; i < n; i++)
        m[i * inner] = 0.0f;
      for (int64_t i = 0; i < k; i++)
        m[pos[i] * inner] = 1.0f;
      continue;
    }
    float *y0 = j->y0 + outer * k * inner + in;
    float *y1 = j->y1 ? j->y1 + outer * k * inner + in : NULL;
    for (int64_t i = 0; i < k; i++) {
      switch (p->ret_typ) {
        case HY_TOPK_RET_VALUE:
          y0[i * inner] = v[pos[i]];
          break;
        case HY_TOPK_RET_INDICES:
          y0[i * inner] = (float) pos[i];
          break;
        default:
          y0[i * inner] = v[pos[i]];
          y1[i * inner] = (float) pos[i];
          break;
      }
    }
  }
}

void
hy_cpu_ordering (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_ordering_params *p = params;
  const hy_shape *is = &in[0]->shape;
  int64_t numel = hy_shape_numel (is);
  if (numel == 0)
    return;
  int64_t n, inner = 1;
  if (p->flatten) {
    n = numel;
  } else {
    int axis = p->axis < 0 ? p->axis + is->ndim : p->axis;
    n = is->dims[axis];
    for (int i = axis + 1; i < is->ndim; i++)
      inner *= is->dims[i];
  }
  int64_t rows = numel / n;
  order_job j = {
    .p = p, .x = in[0]->data, .y0 = out[0]->data,
    .y1 = n_out > 1 ? out[1]->data : NULL,
    .n = n, .inner = inner, .k = p->k <= 0 ? n : p->k,
  };
  j.scratch_stride = (size_t) ((n + 15) & ~(int64_t) 15) * sizeof (float)
      + (size_t) n * sizeof (int64_t);
  j.scratch_stride = (j.scratch_stride + 63) & ~(size_t) 63;
  int threads = hy_cpu_n_threads (ctx);
  j.scratch = hy_cpu_workspace (ctx, j.scratch_stride * (size_t) threads);
  hy_cpu_parallel_for (ctx, rows, hy_cpu_grain (n * 8), order_rows, &j);
}
