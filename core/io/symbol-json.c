/*
 * symbol-json.c — reading and writing MXNet's `prefix-symbol.json`.
 *
 * Reading trusts nothing: every member's JSON type is checked, every input
 * must point at an earlier node (so the graph is topological and acyclic by
 * construction) and every failure is a GError naming the file and node.
 * Writing reproduces MXNet 1.9.1's own layout byte for byte (dmlc's JSON
 * writer: ", " then a newline in multi-line scopes, short arrays inline),
 * so an exported file diffs cleanly against one MXNet wrote; only
 * node_row_ptr may differ, as it counts outputs the way our op table does
 * (MXNet's own count varies with its build, and its loader ignores it).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "hybrid.h"
#include "core/graph.h"
#include "core/io/format-sniff.h"

/* A symbol file larger than this is not a symbol file. */
#define MAX_SYMBOL_BYTES (G_GINT64_CONSTANT (1) << 30)
/* json-glib recurses per nesting level; real files nest about 6 deep
 * (10 with subgraphs), so anything deeper is hostile. */
#define MAX_JSON_DEPTH 128
/* No MXNet op has more outputs than this; larger indices are corrupt. */
#define MAX_OUTPUT_INDEX 4096
#define MXNET_VERSION_WRITTEN 10901

/* ---- reading ------------------------------------------------------------ */

/* Integer JSON values only: 1.0, "1" or true are not node ids. */
static gboolean
json_int (JsonNode *node, gint64 *out)
{
  if (!node || !JSON_NODE_HOLDS_VALUE (node)
      || json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;
  *out = json_node_get_int (node);
  return TRUE;
}

static const char *
json_type_name (JsonNode *node)
{
  if (!node || JSON_NODE_HOLDS_NULL (node))
    return "null";
  if (JSON_NODE_HOLDS_OBJECT (node))
    return "an object";
  if (JSON_NODE_HOLDS_ARRAY (node))
    return "an array";
  GType t = json_node_get_value_type (node);
  if (t == G_TYPE_STRING)
    return "a string";
  if (t == G_TYPE_BOOLEAN)
    return "a boolean";
  return "a number";
}

/* The shortest decimal that reads back as the same double ("1e-05",
 * "0.5"), the spelling Python would have written into a newer file. */
static char *
format_double (double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  for (int precision = 1; precision <= 17; precision++) {
    char fmt[8];
    g_snprintf (fmt, sizeof fmt, "%%.%dg", precision);
    g_ascii_formatd (buf, sizeof buf, fmt, v);
    if (g_ascii_strtod (buf, NULL) == v || isnan (v))
      break;
  }
  return g_strdup (buf);
}

/* Attribute values are strings, but hand-edited and very old files
 * sometimes hold bare numbers or booleans; we take them as the strings
 * they stand for.  NULL for anything else. */
static char *
attr_value_string (JsonNode *value)
{
  if (!value || !JSON_NODE_HOLDS_VALUE (value))
    return NULL;
  GType t = json_node_get_value_type (value);
  if (t == G_TYPE_STRING)
    return g_strdup (json_node_get_string (value));
  if (t == G_TYPE_INT64)
    return g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (value));
  if (t == G_TYPE_DOUBLE)
    return format_double (json_node_get_double (value));
  if (t == G_TYPE_BOOLEAN)
    return g_strdup (json_node_get_boolean (value) ? "True" : "False");
  return NULL;
}

/* Errors while reading one node carry "<file>: node 12 'name': " — the
 * name only once it is known.  Outside any node (heads), index is
 * NO_NODE and messages carry only the file. */
typedef struct node_ctx {
  const char *source;
  guint index;
  const char *name;
} node_ctx;

#define NO_NODE G_MAXUINT

G_GNUC_PRINTF (4, 5) static void
node_error (const node_ctx *ctx, GError **error, int code,
    const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  if (ctx->index == NO_NODE)
    g_set_error (error, HY_ERROR, code, "%s: %s", ctx->source, msg);
  else if (ctx->name)
    g_set_error (error, HY_ERROR, code, "%s: node %u '%s': %s", ctx->source,
        ctx->index, ctx->name, msg);
  else
    g_set_error (error, HY_ERROR, code, "%s: node %u: %s", ctx->source,
        ctx->index, msg);
}

/* Merges one attribute object into attrs; existing keys win, which gives
 * `attrs` and `attr` precedence over the oldest files' `param`. */
static gboolean
merge_attrs (const node_ctx *ctx, JsonObject *node_obj, const char *key,
    GHashTable *attrs, GError **error)
{
  JsonNode *member = json_object_get_member (node_obj, key);
  if (!member || JSON_NODE_HOLDS_NULL (member))
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (member)) {
    node_error (ctx, error, HY_ERROR_FORMAT,
        "\"%s\" must be an object of strings, not %s", key,
        json_type_name (member));
    return FALSE;
  }
  JsonObject *obj = json_node_get_object (member);
  JsonObjectIter iter;
  const char *name;
  JsonNode *value;
  json_object_iter_init (&iter, obj);
  while (json_object_iter_next (&iter, &name, &value)) {
    char *s = attr_value_string (value);
    if (!s) {
      node_error (ctx, error, HY_ERROR_FORMAT,
          "attribute '%s' must be a string, not %s", name,
          json_type_name (value));
      return FALSE;
    }
    if (g_hash_table_contains (attrs, name))
      g_free (s);
    else
      g_hash_table_insert (attrs, g_strdup (name), s);
  }
  return TRUE;
}

static gboolean
has_subgraphs (JsonObject *obj)
{
  JsonNode *sub = json_object_get_member (obj, "subgraphs");
  return sub && !JSON_NODE_HOLDS_NULL (sub) && !(JSON_NODE_HOLDS_ARRAY (sub)
      && json_array_get_length (json_node_get_array (sub)) == 0);
}

/* MXNet's oneDNN pass (optimize_for or hybridize with backend 'MKLDNN')
 * replaces a convolution or a fully connected layer and what follows it
 * (BatchNorm, activation, residual add) by one node that computes exactly
 * its subgraph in fp32: reading those ops in its place loses nothing, and
 * our own passes fuse them again.  A quantized one computes something
 * else (int8 arithmetic), and other subgraph ops (control flow) do not
 * mean their subgraph alone. */
static gboolean
is_onednn_layer (const char *op)
{
  return !strcmp (op, "_sg_mkldnn_conv")
      || !strcmp (op, "_sg_mkldnn_fully_connected");
}

static gboolean
is_quantized (JsonObject *obj)
{
  JsonNode *attrs = json_object_get_member (obj, "attrs");
  if (!attrs || !JSON_NODE_HOLDS_OBJECT (attrs))
    return FALSE;
  JsonNode *q = json_object_get_member (json_node_get_object (attrs),
      "quantized");
  g_autofree char *quantized = q ? attr_value_string (q) : NULL;
  return quantized && (!g_ascii_strcasecmp (quantized, "true")
      || !strcmp (quantized, "1"));
}

static gboolean
subgraph_is_inlined (JsonObject *obj, const char *op)
{
  return is_onednn_layer (op) && !is_quantized (obj);
}

/* A quantized oneDNN layer runs as one op (core/ops/quantized.c), which
 * reads its layer's attributes from the node's own: the Convolution's or
 * FullyConnected's as they are, BatchNorm's eps and fix_gamma, and the
 * activations' types as act_type (before a residual add) and
 * postsum_act_type (after it).  The node's own attributes win. */
static gboolean
merge_subgraph_attrs (const node_ctx *ctx, JsonObject *obj, const char *op,
    GHashTable *attrs, GError **error)
{
  JsonNode *sub = json_object_get_member (obj, "subgraphs");
  JsonArray *subs = JSON_NODE_HOLDS_ARRAY (sub) ? json_node_get_array (sub)
      : NULL;
  JsonNode *first = subs && json_array_get_length (subs) == 1
      ? json_array_get_element (subs, 0) : NULL;
  JsonNode *jnodes = first && JSON_NODE_HOLDS_OBJECT (first)
      ? json_object_get_member (json_node_get_object (first), "nodes") : NULL;
  if (!jnodes || !JSON_NODE_HOLDS_ARRAY (jnodes)) {
    node_error (ctx, error, HY_ERROR_FORMAT,
        "op %s: \"subgraphs\" must be an array of one graph with nodes", op);
    return FALSE;
  }
  JsonArray *nodes = json_node_get_array (jnodes);
  gboolean after_add = FALSE;
  for (guint i = 0; i < json_array_get_length (nodes); i++) {
    JsonNode *jn = json_array_get_element (nodes, i);
    JsonObject *n = JSON_NODE_HOLDS_OBJECT (jn) ? json_node_get_object (jn)
        : NULL;
    JsonNode *jop = n ? json_object_get_member (n, "op") : NULL;
    const char *inner = jop && JSON_NODE_HOLDS_VALUE (jop)
        && json_node_get_value_type (jop) == G_TYPE_STRING
        ? json_node_get_string (jop) : NULL;
    if (!inner) {
      node_error (ctx, error, HY_ERROR_FORMAT,
          "op %s: subgraph node %u has no \"op\" string", op, i);
      return FALSE;
    }
    g_autoptr (GHashTable) inner_attrs = g_hash_table_new_full (g_str_hash,
        g_str_equal, g_free, g_free);
    if (!merge_attrs (ctx, n, "attrs", inner_attrs, error))
      return FALSE;
    const char *act = NULL;
    if (!strcmp (inner, "null"))
      continue;
    if (!strcmp (inner, "Convolution") || !strcmp (inner, "FullyConnected")) {
      GHashTableIter it;
      gpointer k, v;
      g_hash_table_iter_init (&it, inner_attrs);
      while (g_hash_table_iter_next (&it, &k, &v))
        if (!g_hash_table_contains (attrs, k))
          g_hash_table_insert (attrs, g_strdup (k), g_strdup (v));
    } else if (!strcmp (inner, "BatchNorm")) {
      static const char *const keys[] = { "eps", "fix_gamma" };
      for (guint k = 0; k < G_N_ELEMENTS (keys); k++) {
        const char *v = g_hash_table_lookup (inner_attrs, keys[k]);
        if (v && !g_hash_table_contains (attrs, keys[k]))
          g_hash_table_insert (attrs, g_strdup (keys[k]), g_strdup (v));
      }
    } else if (!strcmp (inner, "elemwise_add") || !strcmp (inner, "_Plus")
        || !strcmp (inner, "_plus") || !strcmp (inner, "_add")) {
      after_add = TRUE;
    } else if (!strcmp (inner, "Activation")) {
      act = g_hash_table_lookup (inner_attrs, "act_type");
    } else if (!strcmp (inner, "relu")) {
      act = "relu";
    } else if (!strcmp (inner, "clip")) {
      /* MobileNetV2's ReLU6: MXNet fuses a clip from 0 as oneDNN's
       * bounded ReLU, and only that one. */
      const char *lo = g_hash_table_lookup (inner_attrs, "a_min");
      if (!lo || g_ascii_strtod (lo, NULL) != 0.0) {
        node_error (ctx, error, HY_ERROR_UNSUPPORTED,
            "op %s: its subgraph's clip has a_min %s; a quantized fused "
            "layer runs a clip from 0 only", op, lo ? lo : "not given");
        return FALSE;
      }
      act = "bounded_relu";
    } else {
      node_error (ctx, error, HY_ERROR_UNSUPPORTED,
          "op %s: its subgraph holds op %s, which a quantized fused layer "
          "does not run here", op, inner);
      return FALSE;
    }
    if (act) {
      const char *key = after_add ? "postsum_act_type" : "act_type";
      if (!g_hash_table_contains (attrs, key))
        g_hash_table_insert (attrs, g_strdup (key), g_strdup (act));
    }
  }
  return TRUE;
}

/* control_deps change what a node means, and so do subgraphs but those
 * `inlined` (above); we run neither. */
static gboolean
reject_extras (const node_ctx *ctx, JsonObject *obj, const char *op,
    gboolean inlined, GError **error)
{
  if (has_subgraphs (obj) && !inlined) {
    node_error (ctx, error, HY_ERROR_UNSUPPORTED,
        "op %s holds a fused subgraph: the model was exported after "
        "hybridize(backend=...) and cannot be read; export it again from a "
        "plain hybridize()", op);
    return FALSE;
  }
  JsonNode *deps = json_object_get_member (obj, "control_deps");
  if (deps && !JSON_NODE_HOLDS_NULL (deps) && !(JSON_NODE_HOLDS_ARRAY (deps)
          && json_array_get_length (json_node_get_array (deps)) == 0)) {
    node_error (ctx, error, HY_ERROR_UNSUPPORTED,
        "control dependencies (control_deps) are not supported");
    return FALSE;
  }
  return TRUE;
}

static gboolean
get_string_member (const node_ctx *ctx, JsonObject *obj, const char *key,
    const char **out, GError **error)
{
  JsonNode *m = json_object_get_member (obj, key);
  if (!m) {
    node_error (ctx, error, HY_ERROR_FORMAT, "missing \"%s\"", key);
    return FALSE;
  }
  if (!JSON_NODE_HOLDS_VALUE (m)
      || json_node_get_value_type (m) != G_TYPE_STRING) {
    node_error (ctx, error, HY_ERROR_FORMAT, "\"%s\" must be a string, not %s",
        key, json_type_name (m));
    return FALSE;
  }
  *out = json_node_get_string (m);
  return TRUE;
}

/* Where a file's node went in the graph.  Nodes are added in file order,
 * but a fused oneDNN node is replaced by the nodes of its subgraph: its
 * file index then stands for one output of the last of them. */
typedef struct file_ref {
  guint node;                   /* graph index */
  guint index;                  /* the output, when !whole */
  gboolean whole;               /* output k of the file node is output k here */
} file_ref;

/* Reads [node, index] or [node, index, version] into *entry, checking that
 * it names an output of one of the file's nodes parsed so far (`refs`: an
 * input's own node is not among them yet) and translating it to the graph's
 * numbering.  `n_total` is the file's node count, to tell a forward
 * reference from a dangling one; `what` is "input 2" or "head 0". */
static gboolean
parse_entry (JsonNode *jn, const hy_graph *graph, GArray *refs, guint n_total,
    hy_entry *entry, const char *what, const node_ctx *ctx, GError **error)
{
  if (!JSON_NODE_HOLDS_ARRAY (jn)) {
    node_error (ctx, error, HY_ERROR_FORMAT,
        "%s must be [node, output, version], not %s", what,
        json_type_name (jn));
    return FALSE;
  }
  JsonArray *arr = json_node_get_array (jn);
  guint len = json_array_get_length (arr);
  if (len < 2 || len > 3) {
    node_error (ctx, error, HY_ERROR_FORMAT,
        "%s must be [node, output, version] or [node, output], not an "
        "array of %u elements", what, len);
    return FALSE;
  }
  gint64 nid, idx;
  if (!json_int (json_array_get_element (arr, 0), &nid)
      || !json_int (json_array_get_element (arr, 1), &idx)) {
    node_error (ctx, error, HY_ERROR_FORMAT,
        "%s must hold integer node and output indices", what);
    return FALSE;
  }
  if (nid < 0 || nid >= (gint64) refs->len) {
    const char *why = nid < 0 ? "is negative"
        : nid >= (gint64) n_total ? "does not exist"
        : ctx->index != NO_NODE && nid == ctx->index ? "is the node itself"
        : "comes later";
    node_error (ctx, error, HY_ERROR_FORMAT,
        "%s refers to node %" G_GINT64_FORMAT ", which %s", what, nid, why);
    return FALSE;
  }
  const file_ref *ref = &g_array_index (refs, file_ref, (guint) nid);
  const hy_node *producer = hy_graph_node (graph, ref->node);
  gboolean one_output = !strcmp (producer->op_name, "null") || !ref->whole;
  if (idx < 0 || idx >= MAX_OUTPUT_INDEX || (one_output && idx != 0)) {
    node_error (ctx, error, HY_ERROR_FORMAT,
        "%s refers to output %" G_GINT64_FORMAT " of node %" G_GINT64_FORMAT
        " '%s', which %s", what, idx, nid, producer->name,
        !ref->whole ? "is a fused subgraph with one output"
        : one_output ? "is a variable with one output"
        : "is not a plausible output index");
    return FALSE;
  }
  entry->node = ref->node;
  entry->index = ref->whole ? (guint) idx : ref->index;
  return TRUE;
}

static hy_node *
node_new_op (const char *name, const char *op_name)
{
  hy_node *n = g_new0 (hy_node, 1);
  n->name = g_strdup (name);
  n->op_name = g_strdup (op_name);
  n->attrs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return n;
}

static gboolean inline_subgraph (hy_graph *graph, JsonObject *obj,
    const node_ctx *ctx, const char *op, hy_entry *outer_inputs,
    guint n_outer, file_ref *out, GError **error);

/* Parses file node `index`; on success its node (or, for a fused oneDNN
 * node, its subgraph's nodes) has been appended to graph->nodes and its
 * place appended to `refs`.  `var_names` is NULL inside a subgraph, whose
 * variables stand for the fused node's inputs. */
static gboolean
parse_node (hy_graph *graph, GArray *refs, JsonNode *jn, guint index,
    guint n_total, GHashTable *var_names, const char *source, GError **error)
{
  node_ctx ctx = { source, index, NULL };
  if (!JSON_NODE_HOLDS_OBJECT (jn)) {
    node_error (&ctx, error, HY_ERROR_FORMAT, "must be an object, not %s",
        json_type_name (jn));
    return FALSE;
  }
  JsonObject *obj = json_node_get_object (jn);
  const char *op, *name;
  if (!get_string_member (&ctx, obj, "op", &op, error)
      || !get_string_member (&ctx, obj, "name", &name, error))
    return FALSE;
  ctx.name = name;
  gboolean fused = has_subgraphs (obj) && var_names
      && subgraph_is_inlined (obj, op);
  gboolean quantized_layer = has_subgraphs (obj) && var_names
      && is_onednn_layer (op) && is_quantized (obj);
  if (!reject_extras (&ctx, obj, op, fused || quantized_layer, error))
    return FALSE;

  JsonNode *inputs = json_object_get_member (obj, "inputs");
  if (!inputs) {
    node_error (&ctx, error, HY_ERROR_FORMAT, "missing \"inputs\"");
    return FALSE;
  }
  if (!JSON_NODE_HOLDS_ARRAY (inputs)) {
    node_error (&ctx, error, HY_ERROR_FORMAT,
        "\"inputs\" must be an array, not %s", json_type_name (inputs));
    return FALSE;
  }
  JsonArray *in_arr = json_node_get_array (inputs);
  guint n_in = json_array_get_length (in_arr);
  gboolean is_var = !strcmp (op, "null");
  if (is_var && n_in > 0) {
    node_error (&ctx, error, HY_ERROR_FORMAT,
        "is a variable (op \"null\") but has %u inputs", n_in);
    return FALSE;
  }
  if (is_var) {
    gpointer other;
    if (g_hash_table_lookup_extended (var_names, name, NULL, &other)) {
      node_error (&ctx, error, HY_ERROR_FORMAT,
          "variable name is already used by node %u; parameters are bound "
          "by name, so variable names must be unique",
          GPOINTER_TO_UINT (other));
      return FALSE;
    }
  }

  hy_node *node = is_var ? hy_node_new_variable (name)
      : node_new_op (name, op);
  node->inputs = g_new0 (hy_entry, MAX (n_in, 1));
  node->n_inputs = n_in;
  for (guint k = 0; k < n_in; k++) {
    char what[32];
    g_snprintf (what, sizeof what, "input %u", k);
    if (!parse_entry (json_array_get_element (in_arr, k), graph, refs,
            n_total, &node->inputs[k], what, &ctx, error)) {
      hy_node_free (node);
      return FALSE;
    }
  }
  if (fused) {
    file_ref ref;
    gboolean ok = inline_subgraph (graph, obj, &ctx, op, node->inputs,
        node->n_inputs, &ref, error);
    hy_node_free (node);
    if (ok)
      g_array_append_val (refs, ref);
    return ok;
  }
  static const char *const attr_keys[] = { "attrs", "attr", "param" };
  for (guint a = 0; a < G_N_ELEMENTS (attr_keys); a++) {
    if (!merge_attrs (&ctx, obj, attr_keys[a], node->attrs, error)) {
      hy_node_free (node);
      return FALSE;
    }
  }
  if (quantized_layer && !merge_subgraph_attrs (&ctx, obj, op, node->attrs,
          error)) {
    hy_node_free (node);
    return FALSE;
  }
  if (is_var)
    g_hash_table_insert (var_names, node->name, GUINT_TO_POINTER (index));
  file_ref ref = { hy_graph_add_node (graph, node), 0, TRUE };
  g_array_append_val (refs, ref);
  return TRUE;
}

/* Top-level member `key`, which must be an array. */
static JsonArray *
required_array (JsonObject *root, const char *key, const char *source,
    GError **error)
{
  JsonNode *m = json_object_get_member (root, key);
  if (!m) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: missing \"%s\"; this is not an MXNet symbol file", source, key);
    return NULL;
  }
  if (!JSON_NODE_HOLDS_ARRAY (m)) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: \"%s\" must be an array, not %s", source, key,
        json_type_name (m));
    return NULL;
  }
  return json_node_get_array (m);
}

static gboolean
parse_arg_nodes (JsonArray *arr, guint n_nodes, const char *source,
    GError **error)
{
  /* MXNet rebuilds arg_nodes from the nodes; we only check it is sane. */
  for (guint i = 0; i < json_array_get_length (arr); i++) {
    gint64 v;
    if (!json_int (json_array_get_element (arr, i), &v) || v < 0
        || v >= n_nodes) {
      g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
          "%s: arg_nodes entry %u is not the index of a node", source, i);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
parse_heads (hy_graph *graph, GArray *refs, JsonArray *arr,
    const char *source, GError **error)
{
  guint n = json_array_get_length (arr);
  if (n == 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: \"heads\" is empty: the graph has no outputs", source);
    return FALSE;
  }
  graph->heads = g_new0 (hy_entry, n);
  graph->n_heads = n;
  node_ctx ctx = { source, NO_NODE, NULL };
  for (guint h = 0; h < n; h++) {
    char what[32];
    g_snprintf (what, sizeof what, "head %u", h);
    if (!parse_entry (json_array_get_element (arr, h), graph, refs,
            refs->len, &graph->heads[h], what, &ctx, error))
      return FALSE;
  }
  return TRUE;
}

static gboolean
parse_version (hy_graph *graph, JsonObject *root, const char *source,
    GError **error)
{
  JsonNode *attrs = json_object_get_member (root, "attrs");
  if (!attrs || JSON_NODE_HOLDS_NULL (attrs))
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (attrs)) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: top-level \"attrs\" must be an object, not %s", source,
        json_type_name (attrs));
    return FALSE;
  }
  JsonNode *ver = json_object_get_member (json_node_get_object (attrs),
      "mxnet_version");
  if (!ver)
    return TRUE;
  JsonArray *arr = JSON_NODE_HOLDS_ARRAY (ver) ? json_node_get_array (ver)
      : NULL;
  gint64 v;
  if (!arr || json_array_get_length (arr) != 2
      || !json_int (json_array_get_element (arr, 1), &v) || v < 0
      || v > G_MAXINT) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: attrs.mxnet_version must be [\"int\", N] with N >= 0", source);
    return FALSE;
  }
  graph->mxnet_version = (int) v;
  return TRUE;
}

/* Reads a fused oneDNN node as the ops of its subgraph, appended to the
 * graph in its place: the subgraph's variables, in order, are the node's
 * inputs (MXNet lists a subgraph's inputs so), and its one head is the
 * node's output, which *out says where to find. */
static gboolean
inline_subgraph (hy_graph *graph, JsonObject *obj, const node_ctx *ctx,
    const char *op, hy_entry *outer_inputs, guint n_outer, file_ref *out,
    GError **error)
{
  JsonNode *sub = json_object_get_member (obj, "subgraphs");
  JsonArray *subs = JSON_NODE_HOLDS_ARRAY (sub) ? json_node_get_array (sub)
      : NULL;
  JsonNode *first = subs && json_array_get_length (subs) == 1
      ? json_array_get_element (subs, 0) : NULL;
  if (!first || !JSON_NODE_HOLDS_OBJECT (first)) {
    node_error (ctx, error, HY_ERROR_FORMAT,
        "op %s: \"subgraphs\" must be an array of one graph", op);
    return FALSE;
  }
  JsonObject *sg = json_node_get_object (first);
  g_autofree char *where = g_strdup_printf ("%s: node %u '%s': subgraph",
      ctx->source, ctx->index, ctx->name);
  JsonArray *nodes, *heads;
  if (!(nodes = required_array (sg, "nodes", where, error))
      || !(heads = required_array (sg, "heads", where, error)))
    return FALSE;
  guint n = json_array_get_length (nodes);
  g_autoptr (GArray) refs = g_array_sized_new (FALSE, FALSE,
      sizeof (file_ref), n);
  guint n_vars = 0;
  for (guint i = 0; i < n; i++) {
    JsonNode *jn = json_array_get_element (nodes, i);
    JsonNode *jop = JSON_NODE_HOLDS_OBJECT (jn)
        ? json_object_get_member (json_node_get_object (jn), "op") : NULL;
    gboolean is_var = jop && JSON_NODE_HOLDS_VALUE (jop)
        && json_node_get_value_type (jop) == G_TYPE_STRING
        && !strcmp (json_node_get_string (jop), "null");
    if (!is_var) {
      if (!parse_node (graph, refs, jn, i, n, NULL, where, error))
        return FALSE;
      continue;
    }
    if (n_vars == n_outer) {
      node_error (ctx, error, HY_ERROR_FORMAT, "op %s: its subgraph has more "
          "variables than the node's %u inputs", op, n_outer);
      return FALSE;
    }
    hy_entry e = outer_inputs[n_vars++];
    file_ref ref = { e.node, e.index, FALSE };
    g_array_append_val (refs, ref);
  }
  if (n_vars != n_outer) {
    node_error (ctx, error, HY_ERROR_FORMAT, "op %s: its subgraph has %u "
        "variables for the node's %u inputs", op, n_vars, n_outer);
    return FALSE;
  }
  if (json_array_get_length (heads) != 1) {
    node_error (ctx, error, HY_ERROR_FORMAT, "op %s: its subgraph has %u "
        "outputs; a fused node has one", op, json_array_get_length (heads));
    return FALSE;
  }
  node_ctx head_ctx = { where, NO_NODE, NULL };
  hy_entry head;
  if (!parse_entry (json_array_get_element (heads, 0), graph, refs, n, &head,
          "head 0", &head_ctx, error))
    return FALSE;
  *out = (file_ref) { head.node, head.index, FALSE };
  return TRUE;
}

/* An op node's output count is only known once its op is resolved; until
 * then it is the smallest count every reference to it fits. */
static void
set_output_lower_bounds (hy_graph *graph)
{
  guint n = hy_graph_n_nodes (graph);
  g_autofree guint *need = g_new0 (guint, MAX (n, 1));
  for (guint i = 0; i < n; i++) {
    hy_node *node = hy_graph_node (graph, i);
    for (guint k = 0; k < node->n_inputs; k++)
      need[node->inputs[k].node] = MAX (need[node->inputs[k].node],
          node->inputs[k].index + 1);
  }
  for (guint h = 0; h < graph->n_heads; h++)
    need[graph->heads[h].node] = MAX (need[graph->heads[h].node],
        graph->heads[h].index + 1);
  for (guint i = 0; i < n; i++) {
    hy_node *node = hy_graph_node (graph, i);
    if (!strcmp (node->op_name, "null"))
      continue;
    node->n_outputs = MAX (need[i], 1);
    node->shapes = g_new0 (hy_shape, node->n_outputs);
    for (guint k = 0; k < node->n_outputs; k++)
      node->shapes[k].ndim = -1;
  }
}

static hy_graph *
build_graph (JsonNode *root_node, const char *source, GError **error)
{
  if (!JSON_NODE_HOLDS_OBJECT (root_node)) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: the top level must be an object, not %s; this is not an MXNet "
        "symbol file", source, json_type_name (root_node));
    return NULL;
  }
  JsonObject *root = json_node_get_object (root_node);
  JsonArray *nodes, *arg_nodes, *heads;
  if (!(nodes = required_array (root, "nodes", source, error))
      || !(arg_nodes = required_array (root, "arg_nodes", source, error))
      || !(heads = required_array (root, "heads", source, error)))
    return NULL;
  guint n = json_array_get_length (nodes);
  if (n == 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT, "%s: \"nodes\" is empty",
        source);
    return NULL;
  }

  hy_graph *graph = hy_graph_new ();
  g_autoptr (GHashTable) var_names = g_hash_table_new (g_str_hash,
      g_str_equal);
  g_autoptr (GArray) refs = g_array_sized_new (FALSE, FALSE, sizeof (file_ref),
      n);
  for (guint i = 0; i < n; i++)
    if (!parse_node (graph, refs, json_array_get_element (nodes, i), i, n,
            var_names, source, error))
      goto fail;
  if (!parse_arg_nodes (arg_nodes, n, source, error)
      || !parse_heads (graph, refs, heads, source, error)
      || !parse_version (graph, root, source, error))
    goto fail;
  set_output_lower_bounds (graph);
  return graph;

fail:
  hy_graph_free (graph);
  return NULL;
}

hy_graph *
hy_symbol_json_parse (const char *json, gsize length, const char *source,
    GError **error)
{
  if (!source)
    source = "<symbol>";
  if ((guint64) length > (guint64) MAX_SYMBOL_BYTES) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: %" G_GSIZE_FORMAT " bytes is too large for a symbol file "
        "(the limit is 1 GiB)", source, length);
    return NULL;
  }
  /* Before the JSON reader, whose complaint about these files would name
   * neither what they are nor what to give instead. */
  if (!hy_symbol_sniff_foreign (json, length, source, error))
    return NULL;
  if (!hy_json_check_nesting (json, length, MAX_JSON_DEPTH, source, NULL,
          error))
    return NULL;
  g_autoptr (JsonParser) parser = json_parser_new_immutable ();
  GError *local = NULL;
  if (!json_parser_load_from_data (parser, json, (gssize) length, &local)) {
    hy_json_set_parse_error (error, source, local);
    g_error_free (local);
    return NULL;
  }
  JsonNode *root = json_parser_get_root (parser);
  if (!root) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT, "%s: the file is empty",
        source);
    return NULL;
  }
  return build_graph (root, source, error);
}

hy_graph *
hy_symbol_json_load (const char *path, GError **error)
{
  /* Bounded and regular files only: /dev/zero or a FIFO named as a model
   * must fail here, not exhaust memory or block. */
  g_autofree char *text = NULL;
  gsize len;
  if (!hy_file_read_bounded (path, "symbol file", MAX_SYMBOL_BYTES, &text,
          &len, error))
    return NULL;
  return hy_symbol_json_parse (text, len, path, error);
}

/* ---- writing ------------------------------------------------------------ */

/* Mirrors dmlc's JSONWriter: each scope is inline or multi-line; items are
 * separated by ", " and, in multi-line scopes, a newline indented two
 * spaces per open scope. */
#define WRITER_MAX_DEPTH 8

typedef struct json_writer {
  GString *s;
  int depth;
  gboolean multi[WRITER_MAX_DEPTH];
  guint count[WRITER_MAX_DEPTH];
} json_writer;

static void
w_newline (json_writer *w)
{
  if (w->depth == 0 || w->multi[w->depth - 1]) {
    g_string_append_c (w->s, '\n');
    for (int i = 0; i < w->depth; i++)
      g_string_append (w->s, "  ");
  }
}

static void
w_begin (json_writer *w, char open, gboolean multi)
{
  g_string_append_c (w->s, open);
  g_assert (w->depth < WRITER_MAX_DEPTH);
  w->multi[w->depth] = multi;
  w->count[w->depth] = 0;
  w->depth++;
}

static void
w_end (json_writer *w, char close)
{
  w->depth--;
  if (w->multi[w->depth] && w->count[w->depth] > 0)
    w_newline (w);
  g_string_append_c (w->s, close);
}

static void
w_item (json_writer *w)
{
  if (w->count[w->depth - 1]++ > 0)
    g_string_append (w->s, ", ");
  w_newline (w);
}

/* MXNet escapes these five; other control characters (which MXNet would
 * write raw, producing invalid JSON) become \u00XX. */
static void
w_string (json_writer *w, const char *str)
{
  g_string_append_c (w->s, '"');
  for (const char *p = str; *p; p++) {
    switch (*p) {
      case '"': g_string_append (w->s, "\\\""); break;
      case '\\': g_string_append (w->s, "\\\\"); break;
      case '\n': g_string_append (w->s, "\\n"); break;
      case '\r': g_string_append (w->s, "\\r"); break;
      case '\t': g_string_append (w->s, "\\t"); break;
      default:
        if ((guchar) *p < 0x20)
          g_string_append_printf (w->s, "\\u%04x", (guchar) *p);
        else
          g_string_append_c (w->s, *p);
    }
  }
  g_string_append_c (w->s, '"');
}

static void
w_key (json_writer *w, const char *key)
{
  w_item (w);
  w_string (w, key);
  g_string_append (w->s, ": ");
}

static void
w_uint_item (json_writer *w, guint64 v)
{
  w_item (w);
  g_string_append_printf (w->s, "%" G_GUINT64_FORMAT, v);
}

/* dmlc writes vectors of more than ten items one per line. */
static gboolean
long_list (guint n)
{
  return n > 10;
}

static void
w_entry (json_writer *w, hy_entry e, guint version)
{
  w_item (w);
  g_string_append_printf (w->s, "[%u, %u, %u]", e.node, e.index, version);
}

static gboolean
is_variable (const hy_node *node)
{
  return !node->op && !strcmp (node->op_name, "null");
}

static int
compare_keys (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* Attributes in byte order of their keys, as MXNet's std::map keeps them. */
static void
w_attrs (json_writer *w, GHashTable *attrs)
{
  guint n = 0;
  g_autofree gpointer keys = attrs
      ? g_hash_table_get_keys_as_array (attrs, &n) : NULL;
  if (n == 0)
    return;
  qsort (keys, n, sizeof (char *), compare_keys);
  w_key (w, "attrs");
  w_begin (w, '{', n > 1);
  for (guint i = 0; i < n; i++) {
    const char *k = ((const char **) keys)[i];
    w_key (w, k);
    w_string (w, g_hash_table_lookup (attrs, k));
  }
  w_end (w, '}');
}

/* MXNet marks an auxiliary state's entry with version 1: the op mutates
 * the variable once.  Every other entry is version 0. */
static guint
input_version (const hy_node *node, guint k)
{
  if (!node->op || !node->op->def || node->op->def->n_aux <= 0)
    return 0;
  return k + (guint) node->op->def->n_aux >= node->n_inputs ? 1 : 0;
}

static void
w_node (json_writer *w, const hy_node *node)
{
  w_item (w);
  w_begin (w, '{', TRUE);
  w_key (w, "op");
  w_string (w, node->op ? node->op->name : node->op_name);
  w_key (w, "name");
  w_string (w, node->name);
  w_attrs (w, node->attrs);
  w_key (w, "inputs");
  w_begin (w, '[', long_list (node->n_inputs));
  for (guint k = 0; k < node->n_inputs; k++)
    w_entry (w, node->inputs[k], input_version (node, k));
  w_end (w, ']');
  w_end (w, '}');
}

static gboolean
check_writable (const hy_graph *graph, GError **error)
{
  guint n = hy_graph_n_nodes (graph);
  for (guint i = 0; i < n; i++) {
    const hy_node *node = hy_graph_node (graph, i);
    /* The reader folded the layer's subgraph into the node's attributes;
     * MXNet cannot read the node without it. */
    if (is_onednn_layer (node->op_name)) {
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "node %u '%s': op %s (a quantized oneDNN layer) cannot be written: "
          "MXNet reads it only with its subgraph, which is not kept; export "
          "the fp32 model and quantize it with MXNet", i, node->name,
          node->op_name);
      return FALSE;
    }
    for (guint k = 0; k < node->n_inputs; k++) {
      if (node->inputs[k].node >= i) {
        g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
            "node %u '%s': input %u refers to node %u, which does not come "
            "before it", i, node->name, k, node->inputs[k].node);
        return FALSE;
      }
    }
  }
  for (guint h = 0; h < graph->n_heads; h++) {
    if (graph->heads[h].node >= n) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "head %u refers to node %u, which does not exist", h,
          graph->heads[h].node);
      return FALSE;
    }
  }
  return TRUE;
}

char *
hy_symbol_json_write (const hy_graph *graph, GError **error)
{
  if (!check_writable (graph, error))
    return NULL;
  guint n = hy_graph_n_nodes (graph);
  json_writer w = { .s = g_string_new (NULL) };

  w_begin (&w, '{', TRUE);
  w_key (&w, "nodes");
  w_begin (&w, '[', TRUE);
  for (guint i = 0; i < n; i++)
    w_node (&w, hy_graph_node (graph, i));
  w_end (&w, ']');

  guint n_vars = 0;
  for (guint i = 0; i < n; i++)
    n_vars += is_variable (hy_graph_node (graph, i));
  w_key (&w, "arg_nodes");
  w_begin (&w, '[', long_list (n_vars));
  for (guint i = 0; i < n; i++)
    if (is_variable (hy_graph_node (graph, i)))
      w_uint_item (&w, i);
  w_end (&w, ']');

  /* Output counts as we know them; MXNet's loader ignores this array. */
  w_key (&w, "node_row_ptr");
  w_begin (&w, '[', long_list (n + 1));
  guint64 row = 0;
  w_uint_item (&w, row);
  for (guint i = 0; i < n; i++) {
    const hy_node *node = hy_graph_node (graph, i);
    row += is_variable (node) ? 1 : MAX (node->n_outputs, 1);
    w_uint_item (&w, row);
  }
  w_end (&w, ']');

  w_key (&w, "heads");
  w_begin (&w, '[', long_list (graph->n_heads));
  for (guint h = 0; h < graph->n_heads; h++)
    w_entry (&w, graph->heads[h], 0);
  w_end (&w, ']');

  w_key (&w, "attrs");
  w_begin (&w, '{', FALSE);
  w_key (&w, "mxnet_version");
  g_string_append_printf (w.s, "[\"int\", %d]", MXNET_VERSION_WRITTEN);
  w_end (&w, '}');
  w_end (&w, '}');
  return g_string_free (w.s, FALSE);
}

gboolean
hy_symbol_json_save (const hy_graph *graph, const char *path,
    GError **error)
{
  g_autofree char *text = hy_symbol_json_write (graph, error);
  if (!text) {
    g_prefix_error (error, "%s: ", path);
    return FALSE;
  }
  GError *local = NULL;
  if (!g_file_set_contents (path, text, (gssize) strlen (text), &local)) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: cannot write: %s", path,
        local->message);
    g_error_free (local);
    return FALSE;
  }
  return TRUE;
}
