/*
 * ordering-common.h — topk, sort and argsort's order of a row, shared by
 * the CPU kernel (kernels/cpu/ordering.c) and the CUDA one
 * (kernels/cuda/ordering.cu), so that both give MXNet's indices on ties
 * from one definition.
 *
 * MXNet 1.9.1 orders a row with libstdc++'s unstable std::sort (k·8 > n)
 * or std::partial_sort, comparing with `<` (ascending) or `>`
 * (descending), and equal values come out in whatever order those leave
 * them.  So this file carries the same algorithms step for step, written
 * afresh over an array of positions: introsort with a median-of-three
 * pivot and a depth limit of 2·⌊log2 n⌋ falling back to heap sort, a
 * final insertion sort over runs of 16, and heap select then heap sort for
 * a partial sort.  libstdc++ recurses into the right part of a partition;
 * here it waits on an explicit stack (a GPU thread has little stack): the
 * parts are disjoint, so the order they are sorted in changes nothing, and
 * pending parts have strictly decreasing depth budgets, so 2·63 + 2
 * entries always suffice.
 *
 * Values are read in place (a row is n values `inner` apart).
 *
 * C11 and CUDA alike: static inline functions in C, host-and-device ones
 * under nvcc.
 */
#ifndef HY_ORDERING_COMMON_H
#define HY_ORDERING_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "hybrid-tensor.h"
#include "kernels/params/ordering.h"

#ifdef __CUDACC__
#define HY_ORDER_HD __host__ __device__ __forceinline__
#else
#define HY_ORDER_HD static inline
#endif

/* A row's length n, the stride `inner` between its values, how many rows,
 * and what to return. */
typedef struct hy_order_args {
  int64_t n, inner, rows, k;
  int ret;                      /* hy_topk_ret */
  bool ascend;
} hy_order_args;

/* On the host only (it reads the shape with hy_shape_numel). */
static inline hy_order_args
hy_order_plan (const hy_ordering_params *p, const hy_shape *x)
{
  hy_order_args a;             /* every field set below */
  const int64_t numel = hy_shape_numel (x);
  a.inner = 1;
  if (p->flatten) {
    a.n = numel;
  } else {
    const int axis = p->axis < 0 ? p->axis + x->ndim : p->axis;
    a.n = x->dims[axis];
    for (int i = axis + 1; i < x->ndim; i++)
      a.inner *= x->dims[i];
  }
  a.rows = a.n > 0 ? numel / a.n : 0;
  a.k = p->k <= 0 ? a.n : p->k;
  a.ret = p->ret_typ;
  a.ascend = p->is_ascend;
  return a;
}

/* One row's values and the comparison MXNet hands the sort. */
typedef struct hy_order_row {
  const float *v;
  int64_t stride;
  bool ascend;
} hy_order_row;

HY_ORDER_HD bool
hy_order_before (const hy_order_row *o, int64_t a, int64_t b)
{
  const float va = o->v[a * o->stride], vb = o->v[b * o->stride];
  return o->ascend ? va < vb : va > vb;
}

HY_ORDER_HD void
hy_order_swap (int64_t *a, int64_t *b)
{
  const int64_t t = *a;
  *a = *b;
  *b = t;
}

/* ---- heaps (max-heap under `before`) ---- */

HY_ORDER_HD void
hy_order_heap_push (const hy_order_row *o, int64_t *f, int64_t hole,
    int64_t top, int64_t value)
{
  int64_t parent = (hole - 1) / 2;
  while (hole > top && hy_order_before (o, f[parent], value)) {
    f[hole] = f[parent];
    hole = parent;
    parent = (hole - 1) / 2;
  }
  f[hole] = value;
}

HY_ORDER_HD void
hy_order_heap_adjust (const hy_order_row *o, int64_t *f, int64_t hole,
    int64_t len, int64_t value)
{
  const int64_t top = hole;
  int64_t child = hole;
  while (child < (len - 1) / 2) {
    child = 2 * (child + 1);
    if (hy_order_before (o, f[child], f[child - 1]))
      child--;
    f[hole] = f[child];
    hole = child;
  }
  if ((len & 1) == 0 && child == (len - 2) / 2) {
    child = 2 * (child + 1);
    f[hole] = f[child - 1];
    hole = child - 1;
  }
  hy_order_heap_push (o, f, hole, top, value);
}

HY_ORDER_HD void
hy_order_heap_make (const hy_order_row *o, int64_t *f, int64_t len)
{
  if (len < 2)
    return;
  for (int64_t parent = (len - 2) / 2;; parent--) {
    hy_order_heap_adjust (o, f, parent, len, f[parent]);
    if (parent == 0)
      return;
  }
}

HY_ORDER_HD void
hy_order_heap_pop (const hy_order_row *o, int64_t *f, int64_t len,
    int64_t *result)
{
  const int64_t value = *result;
  *result = f[0];
  hy_order_heap_adjust (o, f, 0, len, value);
}

/* The first `mid` of [0, len) in order, the rest in no promised order. */
HY_ORDER_HD void
hy_order_partial_sort (const hy_order_row *o, int64_t *f, int64_t mid,
    int64_t len)
{
  hy_order_heap_make (o, f, mid);
  for (int64_t i = mid; i < len; i++)
    if (hy_order_before (o, f[i], f[0]))
      hy_order_heap_pop (o, f, mid, &f[i]);
  for (int64_t m = mid; m > 1; m--)
    hy_order_heap_pop (o, f, m - 1, &f[m - 1]);
}

/* ---- introsort ---- */

#define HY_ORDER_SORT_THRESHOLD 16
#define HY_ORDER_SORT_STACK 128

HY_ORDER_HD void
hy_order_median_to_first (const hy_order_row *o, int64_t *r, int64_t *a,
    int64_t *b, int64_t *c)
{
  if (hy_order_before (o, *a, *b)) {
    if (hy_order_before (o, *b, *c))
      hy_order_swap (r, b);
    else if (hy_order_before (o, *a, *c))
      hy_order_swap (r, c);
    else
      hy_order_swap (r, a);
  } else if (hy_order_before (o, *a, *c)) {
    hy_order_swap (r, a);
  } else if (hy_order_before (o, *b, *c)) {
    hy_order_swap (r, c);
  } else {
    hy_order_swap (r, b);
  }
}

/* Partitions [lo, hi) around *pivot, just before it (unguarded scans). */
HY_ORDER_HD int64_t *
hy_order_partition (const hy_order_row *o, int64_t *lo, int64_t *hi,
    const int64_t *pivot)
{
  for (;;) {
    while (hy_order_before (o, *lo, *pivot))
      lo++;
    hi--;
    while (hy_order_before (o, *pivot, *hi))
      hi--;
    if (!(lo < hi))
      return lo;
    hy_order_swap (lo, hi);
    lo++;
  }
}

HY_ORDER_HD void
hy_order_introsort (const hy_order_row *o, int64_t *first,
    int64_t *last, int depth)
{
  int64_t *lo_stack[HY_ORDER_SORT_STACK], *hi_stack[HY_ORDER_SORT_STACK];
  int depth_stack[HY_ORDER_SORT_STACK];
  int top = 0;
  for (;;) {
    while (last - first > HY_ORDER_SORT_THRESHOLD) {
      if (depth == 0) {
        hy_order_partial_sort (o, first, last - first, last - first);
        break;
      }
      depth--;
      int64_t *mid = first + (last - first) / 2;
      hy_order_median_to_first (o, first, first + 1, mid, last - 1);
      int64_t *cut = hy_order_partition (o, first + 1, last, first);
      /* The right part, for later (the CPU recurses into it first). */
      lo_stack[top] = cut;
      hi_stack[top] = last;
      depth_stack[top] = depth;
      top++;
      last = cut;
    }
    if (top == 0)
      return;
    top--;
    first = lo_stack[top];
    last = hi_stack[top];
    depth = depth_stack[top];
  }
}

HY_ORDER_HD void
hy_order_linear_insert (const hy_order_row *o, int64_t *at)
{
  const int64_t value = *at;
  int64_t *prev = at - 1;
  while (hy_order_before (o, value, *prev)) {
    *at = *prev;
    at = prev;
    prev--;
  }
  *at = value;
}

HY_ORDER_HD void
hy_order_insertion_sort (const hy_order_row *o, int64_t *first,
    int64_t *last)
{
  if (first == last)
    return;
  for (int64_t *i = first + 1; i != last; i++) {
    if (hy_order_before (o, *i, *first)) {
      const int64_t value = *i;
      for (int64_t *m = i; m != first; m--)
        *m = m[-1];
      *first = value;
    } else {
      hy_order_linear_insert (o, i);
    }
  }
}

HY_ORDER_HD void
hy_order_full_sort (const hy_order_row *o, int64_t *f, int64_t len)
{
  if (len == 0)
    return;
  int log2 = 0;
  for (int64_t m = len; m > 1; m >>= 1)
    log2++;
  hy_order_introsort (o, f, f + len, 2 * log2);
  if (len > HY_ORDER_SORT_THRESHOLD) {
    hy_order_insertion_sort (o, f, f + HY_ORDER_SORT_THRESHOLD);
    for (int64_t *i = f + HY_ORDER_SORT_THRESHOLD; i != f + len; i++)
      hy_order_linear_insert (o, i);
  } else {
    hy_order_insertion_sort (o, f, f + len);
  }
}

/* ---- one row ---- */

/* Row r of x into y0 (and y1 for ret_typ both), pos its n positions. */
HY_ORDER_HD void
hy_order_one_row (const hy_order_args *a, const float *x,
    float *y0, float *y1, int64_t *pos, int64_t r)
{
  const int64_t n = a->n, inner = a->inner, k = a->k;
  const int64_t outer = r / inner, in = r % inner;
  hy_order_row o;
  o.v = x + outer * n * inner + in;
  o.stride = inner;
  o.ascend = a->ascend;
  for (int64_t i = 0; i < n; i++)
    pos[i] = i;
  if (k * 8 > n)
    hy_order_full_sort (&o, pos, n);
  else
    hy_order_partial_sort (&o, pos, k, n);
  if (a->ret == HY_TOPK_RET_MASK) {
    float *m = y0 + outer * n * inner + in;
    for (int64_t i = 0; i < n; i++)
      m[i * inner] = 0.0f;
    for (int64_t i = 0; i < k; i++)
      m[pos[i] * inner] = 1.0f;
    return;
  }
  float *v0 = y0 + outer * k * inner + in;
  float *v1 = y1 ? y1 + outer * k * inner + in : NULL;
  for (int64_t i = 0; i < k; i++) {
    const float value = o.v[pos[i] * inner];
    switch (a->ret) {
      case HY_TOPK_RET_VALUE:
        v0[i * inner] = value;
        break;
      case HY_TOPK_RET_INDICES:
        v0[i * inner] = (float) pos[i];
        break;
      default:
        v0[i * inner] = value;
        v1[i * inner] = (float) pos[i];
        break;
    }
  }
}

#endif /* HY_ORDERING_COMMON_H */
