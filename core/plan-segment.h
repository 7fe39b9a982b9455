/*
 * plan-segment.h — which values of a plan the backend holds in its own
 * layout between calls (a bf16 segment on the CPU: docs/PRECISION.md,
 * "bf16 segments").
 */
#ifndef HY_PLAN_SEGMENT_H
#define HY_PLAN_SEGMENT_H

#include <stddef.h>

#include "core/graph.h"
#include "kernels/backend-impl.h"

/* What the plan pass needs of the builder: the graph, each node's first
 * value, each value's last reader, and the nodes the planner kept
 * fusable (the second of a pair). */
typedef struct hy_segment_input {
  const hy_graph *graph;
  hy_backend *backend;
  const guint *first_value;     /* per node */
  guint n_values;
  const int *value_last;        /* per value */
  int step_after_all;           /* value_last of a graph output */
  const gboolean *fusable;      /* per node */
} hy_segment_input;

/* Per value, its bytes in the backend's layout, 0 where it stays fp32
 * planes (every value when the backend has no such layout).  A value is
 * held so where its producer can write it so and every reader can read
 * it so: an op node with one output, read by op nodes only (no view, no
 * graph output), none of them part of a pair the backend may fuse (a
 * fused call reads and writes planes).  Freed with g_free. */
size_t *hy_plan_private_values (const hy_segment_input *in);

#endif /* HY_PLAN_SEGMENT_H */
