/*
 * graph.h — the in-memory form of a symbol file.
 *
 * Nodes are kept in file order, which MXNet writes topologically; the loader
 * rejects any input that points forward, so every walk in index order sees
 * producers before consumers and a cycle cannot exist.
 */
#ifndef HY_GRAPH_H
#define HY_GRAPH_H

#include <glib.h>

#include "hybrid-tensor.h"
#include "core/op.h"

/* One output of one node: MXNet's [node_id, output_index(, version)]. */
typedef struct hy_entry {
  guint node;
  guint index;
} hy_entry;

typedef enum hy_var_kind {
  HY_VAR_NONE = 0,              /* not a variable: an op node */
  HY_VAR_INPUT,                 /* data the caller feeds (no param) */
  HY_VAR_ARG,                   /* a weight found in the params file */
  HY_VAR_AUX,                   /* an auxiliary state (BN moving stats) */
  HY_VAR_UNUSED,                /* unbound, read by nothing at inference */
} hy_var_kind;

typedef struct hy_node {
  char *name;
  char *op_name;                /* as written in the file; "null" = variable */
  const hy_op_info *op;         /* NULL for variables */
  GHashTable *attrs;            /* merged attributes, string → string */
  hy_entry *inputs;
  guint n_inputs;
  void *params;                 /* parsed attrs (op->def->params_size) */
  guint n_outputs;
  hy_shape *shapes;             /* n_outputs inferred shapes */
  hy_var_kind var_kind;         /* variables only */
  hy_tensor *value;             /* variables: the bound parameter, if any */
} hy_node;

typedef struct hy_graph {
  GPtrArray *nodes;             /* hy_node *, owned */
  hy_entry *heads;
  guint n_heads;
  int mxnet_version;            /* attrs.mxnet_version, 0 when absent */
} hy_graph;

hy_graph *hy_graph_new (void);
void hy_graph_free (hy_graph *graph);
static inline hy_node *
hy_graph_node (const hy_graph *graph, guint i)
{
  return (hy_node *) g_ptr_array_index (graph->nodes, i);
}
static inline guint
hy_graph_n_nodes (const hy_graph *graph)
{
  return graph->nodes->len;
}

/* Appends a node (taking ownership) and returns its index. */
guint hy_graph_add_node (hy_graph *graph, hy_node *node);
hy_node *hy_node_new_variable (const char *name);
void hy_node_free (hy_node *node);
/* Index of the node called `name`, or -1. */
int hy_graph_find (const hy_graph *graph, const char *name);

/* Resolves every op node's op by name (aliases included), parses its
 * attributes and checks its input count, creating the auxiliary-state
 * variables that pre-0.9 files leave out.  Errors name the node and op;
 * an unknown op is HY_ERROR_UNSUPPORTED.  When `unsupported` is non-NULL,
 * unknown or unimplemented ops are collected there (as "node (op)" strings)
 * instead of failing, so `inspect` can list them all. */
gboolean hy_graph_resolve (hy_graph *graph, GPtrArray *unsupported,
    GError **error);

/* Resolves one op node built in memory with all its inputs (an importer
 * placing nodes one by one): its op, its parsed attributes, its output
 * count.  Errors say what is wrong, not which node (the caller names it). */
gboolean hy_node_resolve (hy_node *node, GError **error);

/* Parses a symbol file's JSON text into a graph (unresolved; see
 * hy_graph_resolve).  `source` names the file in errors. */
hy_graph *hy_symbol_json_parse (const char *json, gsize length,
    const char *source, GError **error);
hy_graph *hy_symbol_json_load (const char *path, GError **error);
/* Writes the graph as MXNet 1.9.1 does (attrs, 3-element inputs,
 * node_row_ptr, mxnet_version 10901), so real MXNet loads it back. */
char *hy_symbol_json_write (const hy_graph *graph, GError **error);
gboolean hy_symbol_json_save (const hy_graph *graph, const char *path,
    GError **error);

#endif /* HY_GRAPH_H */
