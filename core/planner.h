/*
 * planner.h — packs buffers with known lifetimes into one arena.
 *
 * The planner knows nothing of graphs: it gets n requests {size, first step,
 * last step} and returns an offset for each such that two buffers whose
 * lifetimes intersect never share a byte.  Finding the smallest arena is
 * NP-hard; a few greedy orders are tried (see planner.c) and the best kept.
 */
#ifndef HY_PLANNER_H
#define HY_PLANNER_H

#include <stddef.h>

/* Every offset and every rounded size is a multiple of this, so each buffer
 * starts on a cache line and SIMD loads stay aligned. */
#define HY_PLANNER_ALIGN 64

typedef struct hy_buffer_request {
  size_t size;                  /* bytes; 0 takes no space (offset 0) */
  int first_use;                /* the step that writes it first */
  int last_use;                 /* the last step that reads it (>= first) */
} hy_buffer_request;

/* All three count sizes rounded up to HY_PLANNER_ALIGN. */
typedef struct hy_arena_figures {
  size_t arena_bytes;           /* max over buffers of offset + size */
  size_t naive_bytes;           /* the sum of every size: no reuse at all */
  size_t lower_bound_bytes;     /* max over steps of the bytes live then */
  const char *strategy;         /* the order that won, for reports */
} hy_arena_figures;

/* Fills offsets[0..n) and *figures (may be NULL).  Lifetimes are closed
 * intervals: a buffer read at step s and one first written at s overlap
 * (a kernel reads its inputs while it writes its outputs). */
void hy_planner_place (const hy_buffer_request *requests, size_t n,
    size_t *offsets, hy_arena_figures *figures);

/* The most bytes live at any one step (sizes rounded): no placement can
 * use a smaller arena. */
size_t hy_planner_lower_bound (const hy_buffer_request *requests, size_t n);

#endif /* HY_PLANNER_H */
