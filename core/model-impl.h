/*
 * model-impl.h — the model's insides, shared by model.c, shape-infer.c and
 * the executors.  Not public.
 */
#ifndef HY_MODEL_IMPL_H
#define HY_MODEL_IMPL_H

#include "hybrid.h"
#include "core/graph.h"
#include "core/io/params-io.h"

struct hy_model {
  char *symbol_path;
  char *params_path;            /* NULL when the model has no params file */
  hy_graph *graph;
  hy_param_list *params;        /* owns the tensors bound to variables */
  GArray *inputs;               /* guint node indices of HY_VAR_INPUT vars */
  hy_shape *input_shapes;       /* parallel to inputs: as declared */
  gboolean shapes_valid;        /* node shapes follow from input_shapes */
  gboolean weightless;          /* loaded graph-only: parameters have
                                 * shapes, no values; never runs */
};

/* Read-only once loaded: nothing below writes to a model after
 * hy_model_load returns, so threads may share one.  What changes per
 * forward lives in a hy_shapes (its own copy of the nodes). */

/* The graph whose node shapes `shapes` holds (the model's nodes, shared
 * weights); owned by `shapes`. */
hy_graph *hy_shapes_graph (const hy_shapes *shapes);

/* A model over a resolved graph built in memory (a hybridized block's
 * trace), taking both: variables named in `params` are bound, the rest
 * become inputs, as hy_model_load does.  `source` names it in errors. */
hy_model *hy_model_new_from_graph (hy_graph *graph, hy_param_list *params,
    const char *source, GError **error);

/* Infers every node's output shapes (graph->nodes[i]->shapes) from bound
 * parameter shapes and the given input shapes.  Errors name the node. */
gboolean hy_graph_infer_shapes (hy_graph *graph, GError **error);

/* Infers every value's dtype (core/dtype-infer.c) and records, in the
 * params of ops that compute differently on integers, that their data is
 * integer.  Once per model, at load: errors name the node and op. */
gboolean hy_graph_infer_dtypes (hy_graph *graph, GError **error);

#endif /* HY_MODEL_IMPL_H */
