/*
 * passes.c — the order hybrid mode runs the graph passes in.
 *
 * Identities go first, so that a Dropout between a convolution and its
 * BatchNorm or activation hides neither.  Constant folding comes next: a
 * parameter computed by ops becomes a plain bound variable, which BatchNorm
 * folding needs.  BatchNorm folds before the epilogues fuse, since an
 * activation can only move into a convolution once nothing sits between
 * them.  Strides move up once the epilogues are fused: a residual add
 * already inside a convolution is read at the strided positions with it.
 * Pruning last drops every node the rewiring left unread.
 */
#include <string.h>

#include "core/passes/passes.h"

gboolean
hy_passes_run (hy_graph *graph, GPtrArray *owned, hy_pass_stats *stats,
    GError **error)
{
  hy_pass_stats local;
  if (!stats)
    stats = &local;
  memset (stats, 0, sizeof *stats);
  if (!hy_pass_drop_identities (graph, stats, error)
      || !hy_pass_const_fold (graph, owned, stats, error)
      || !hy_pass_fold_batchnorm (graph, owned, stats, error)
      || !hy_pass_fuse_epilogues (graph, stats, error)
      || !hy_pass_early_stride (graph, stats, error))
    return FALSE;
  hy_graph_prune (graph);
  return TRUE;
}
