/*
 * shapes.c — one assignment of input shapes and every node shape it implies.
 *
 * A loaded model is read-only and may be shared by threads; what changes
 * from forward to forward (the input shapes, hence every node's shape)
 * lives here instead, one per executor (XNNPACK's runtime owns its shapes
 * the same way).  The graph copy shares the model's weights, so a
 * hy_shapes costs the node table only.
 */
#include <string.h>

#include "core/model-impl.h"
#include "core/passes/passes.h"

struct hy_shapes {
  const hy_model *model;
  hy_graph *graph;              /* the model's nodes, our shapes */
  hy_shape *inputs;             /* per model input; ndim -1: not given */
  gboolean valid;               /* node shapes follow from `inputs` */
};

hy_shapes *
hy_shapes_new (const hy_model *model)
{
  hy_shapes *s = g_new0 (hy_shapes, 1);
  const int n = hy_model_n_inputs (model);
  s->model = model;
  s->graph = hy_graph_copy (model->graph);
  s->inputs = g_new0 (hy_shape, MAX (n, 1));
  for (int i = 0; i < n; i++)
    s->inputs[i] = hy_model_input_shape (model, i);
  s->valid = model->shapes_valid;
  return s;
}

void
hy_shapes_free (hy_shapes *shapes)
{
  if (!shapes)
    return;
  hy_graph_free (shapes->graph);
  g_free (shapes->inputs);
  g_free (shapes);
}

gboolean
hy_shapes_set_input (hy_shapes *shapes, const char *name,
    const hy_shape *shape, GError **error)
{
  const hy_model *m = shapes->model;
  int i = hy_model_input_index (m, name);
  if (i < 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "%s: the model has no input named '%s'", m->symbol_path, name);
    return FALSE;
  }
  if (shape->ndim < 0 || shape->ndim > HY_MAX_DIMS) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "input '%s': a shape needs 0 to %d dimensions", name, HY_MAX_DIMS);
    return FALSE;
  }
  for (int d = 0; d < shape->ndim; d++) {
    if (shape->dims[d] <= 0) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "input '%s': dimension %d is %" G_GINT64_FORMAT
          ", must be positive", name, d, (gint64) shape->dims[d]);
      return FALSE;
    }
  }
  if (!hy_shape_equal (&shapes->inputs[i], shape)) {
    shapes->inputs[i] = *shape;
    guint node = g_array_index (m->inputs, guint, i);
    hy_graph_node (shapes->graph, node)->shapes[0] = *shape;
    shapes->valid = FALSE;
  }
  return TRUE;
}

hy_shape
hy_shapes_input (const hy_shapes *shapes, int i)
{
  hy_shape none = { .ndim = -1 };
  if (i < 0 || i >= hy_model_n_inputs (shapes->model))
    return none;
  return shapes->inputs[i];
}

gboolean
hy_shapes_infer (hy_shapes *shapes, GError **error)
{
  if (shapes->valid)
    return TRUE;
  const hy_model *m = shapes->model;
  for (int i = 0; i < hy_model_n_inputs (m); i++) {
    if (shapes->inputs[i].ndim < 0) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "%s: input '%s' has no shape: the symbol file declares none (or "
          "leaves a dimension to the data, as 0 or -1 in __shape__) and "
          "none was given", m->symbol_path, hy_model_input_name (m, i));
      return FALSE;
    }
  }
  if (!hy_graph_infer_shapes (shapes->graph, error))
    return FALSE;
  shapes->valid = TRUE;
  return TRUE;
}

gboolean
hy_shapes_inferred (const hy_shapes *shapes)
{
  return shapes->valid;
}

hy_shape
hy_shapes_output (const hy_shapes *shapes, int i)
{
  hy_shape none = { .ndim = -1 };
  const hy_graph *g = shapes->graph;
  if (!shapes->valid || i < 0 || i >= (int) g->n_heads)
    return none;
  const hy_entry *e = &g->heads[i];
  return hy_graph_node (g, e->node)->shapes[e->index];
}

const hy_shape *
hy_shapes_node (const hy_shapes *shapes, int i)
{
  if (i < 0 || i >= (int) hy_graph_n_nodes (shapes->graph))
    return NULL;
  return hy_graph_node (shapes->graph, i)->shapes;
}

const hy_model *
hy_shapes_model (const hy_shapes *shapes)
{
  return shapes->model;
}

hy_graph *
hy_shapes_graph (const hy_shapes *shapes)
{
  return shapes->graph;
}
