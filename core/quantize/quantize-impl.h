/*
 * quantize-impl.h — the int8 plan of a model, shared by the planner
 * (quantize-plan.c), the calibration (quantizer.c) and the writer
 * (quantize-write.c).  Not public.
 */
#ifndef HY_QUANTIZE_IMPL_H
#define HY_QUANTIZE_IMPL_H

#include "hybrid-quantize.h"
#include "core/graph.h"
#include "core/quantize/calib-stats.h"

typedef enum hy_qkind {
  HY_Q_FP32 = 0,                /* stays as it is */
  HY_Q_CONV,                    /* quantized _sg_mkldnn_conv (a group) */
  HY_Q_FC,                      /* quantized _sg_mkldnn_fully_connected */
  HY_Q_POOL,                    /* _contrib_quantized_pooling */
  HY_Q_FLATTEN,                 /* _contrib_quantized_flatten */
} hy_qkind;

/* One layer of the int8 graph: the fp32 nodes it stands for. */
typedef struct hy_qgroup {
  hy_qkind kind;
  guint members[5];             /* conv, [bn], [add], [act]: in order */
  guint n_members;
  guint last;                   /* members[n_members - 1] */
  gboolean with_bn, with_act, with_sum, with_postsum_act;
  int sum_input;                /* the add's input that is not the chain */
  char *fp32_name;              /* MXNet's name of the fused fp32 node */
} hy_qgroup;

struct hy_quantizer {
  const hy_model *model;
  const hy_graph *graph;
  hy_quantize_options options;
  GPtrArray *groups;            /* hy_qgroup *, in the order they end */
  int *group_of;                /* per node: its group's index, or -1 */
  /* per node output 0: calibrated (only those the int8 graph needs) */
  gboolean *needs_range;
  hy_calib_stats *stats;
  int n_batches;
};

gboolean hy_quantize_plan (hy_quantizer *q, GError **error);
/* An Activation relu: what the int8 layers fuse as their ReLU. */
gboolean hy_quantize_is_relu (const hy_node *n);
/* The nodes whose output 0 group `grp` needs the range of (at most 3). */
guint hy_qgroup_needed_ranges (const hy_graph *g, const hy_qgroup *grp,
    guint needed[3]);
void hy_qgroup_free (gpointer group);

/* The calibrated range of node `node`'s output 0, as quantize_net_v2's
 * th_dict holds it for the options' dtype and mode. */
void hy_quantize_range (const hy_quantizer *q, guint node, float *min,
    float *max);

/* The int8 graph as MXNet's symbol JSON and its params file's bytes
 * (both the caller's). */
void hy_quantize_emit (const hy_quantizer *q, char **symbol_json,
    GBytes **params);
/* The same written to prefix-symbol.json and prefix-0000.params. */
gboolean hy_quantize_write (const hy_quantizer *q, const char *prefix,
    GError **error);

#endif /* HY_QUANTIZE_IMPL_H */
