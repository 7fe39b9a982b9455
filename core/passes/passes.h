/*
 * passes.h — graph passes that turn a loaded graph into the one hybrid mode
 * runs.  Each pass is a small function over a graph whose shapes are
 * already inferred; each keeps the graph's outputs (heads) and shapes
 * valid, so passes compose in any order and can be tested one by one.
 *
 * Passes work on a copy (hy_graph_copy): the model's own graph stays the
 * original, which imperative mode and dumps run.
 */
#ifndef HY_PASSES_H
#define HY_PASSES_H

#include "core/graph.h"

typedef struct hy_pass_stats {
  int identities_dropped;       /* Dropout/_copy/BlockGrad removed */
  int views;                    /* Reshape/Flatten/… that became views */
  int batchnorms_folded;        /* BN folded into the conv/FC epilogue */
  int activations_fused;        /* act/clip/leaky fused into conv/FC */
  int adds_fused;               /* residual elemwise_add fused */
  int nodes_const_folded;       /* computed once at plan time */
  int strides_taken;            /* 1×1 convs computing only what strided
                                 * 1×1 readers read */
} hy_pass_stats;

/* A deep copy: nodes, attrs, params, shapes.  Bound parameter tensors are
 * shared (the model owns them); passes that make new weights add them to
 * `owned` of hy_passes_run. */
hy_graph *hy_graph_copy (const hy_graph *graph);

/* Runs every pass in a sensible order.  New tensors (folded weights,
 * constant-folded values) are appended to `owned` (a GPtrArray with
 * hy_tensor_free as free func), which must outlive the graph. */
gboolean hy_passes_run (hy_graph *graph, GPtrArray *owned,
    hy_pass_stats *stats, GError **error);

/* The passes one by one (for tests; each returns FALSE only on error). */
gboolean hy_pass_drop_identities (hy_graph *graph, hy_pass_stats *stats,
    GError **error);
gboolean hy_pass_fold_batchnorm (hy_graph *graph, GPtrArray *owned,
    hy_pass_stats *stats, GError **error);
gboolean hy_pass_fuse_epilogues (hy_graph *graph, hy_pass_stats *stats,
    GError **error);
gboolean hy_pass_const_fold (hy_graph *graph, GPtrArray *owned,
    hy_pass_stats *stats, GError **error);
gboolean hy_pass_early_stride (hy_graph *graph, hy_pass_stats *stats,
    GError **error);

/* Removes op nodes no head depends on, and renumbers (keeps order). */
void hy_graph_prune (hy_graph *graph);

#endif /* HY_PASSES_H */
