/*
 * block-f.c — the op namespace F and its values.
 *
 * One generic call, hy_F_invoke, does everything an op needs in both
 * modes: resolve the op by name, parse its attributes, infer its output
 * shapes (which also checks its inputs).  Imperatively it then allocates
 * fresh outputs and runs the CPU kernel at once — Gluon's NDArray path,
 * attribute parsing and all, with no fusion.  While tracing it appends a
 * node to the graph instead.  Shapes are inferred in both modes, so a
 * trace catches shape errors where the forward makes them; they are just
 * not shown to the forward, as a Symbol has none.
 */
#include <stdarg.h>
#include <string.h>

#include "core/block-impl.h"

/* More inputs than any op takes (Concat's num_args is capped lower). */
#define MAX_OP_ARGS 1024
/* Arrays longer than this print with "..." as numpy does. */
#define PRINT_THRESHOLD 1000
#define PRINT_EDGE_ITEMS 3

typedef enum value_kind {
  VALUE_TENSOR,                 /* imperative: computed data */
  VALUE_SYMBOL,                 /* tracing: an output of a graph node */
  VALUE_GROUP,                  /* several values, as a forward's output */
  VALUE_PLACEHOLDER,            /* an input no op reads (a label) */
} value_kind;

struct hy_value {
  hy_F *F;
  value_kind kind;
  hy_shape shape;               /* known in both modes */
  hy_tensor *tensor;            /* TENSOR (and imperative PLACEHOLDER) */
  gboolean owns_tensor;
  hy_entry entry;               /* SYMBOL, and traced PLACEHOLDER */
  hy_value **members;           /* GROUP */
  int n_members;
};

struct hy_F {
  gboolean symbolic;
  hy_backend *backend;          /* imperative: a host-memory backend */
  GPtrArray *values;            /* every value made, freed with F */
  GError *error;                /* the first failure; sticky */
  char *scope;                  /* the innermost block's prefix */
  int depth;                    /* blocks being called, nested */
  /* tracing */
  hy_graph *graph;
  GPtrArray *node_params;       /* per node: its hy_parameter or NULL */
  GHashTable *param_nodes;      /* hy_parameter * → node index + 1 */
  GHashTable *inputs;           /* node indices of data inputs, as keys */
  GHashTable *name_counts;      /* scope + hint → next number */
};

static const hy_tensor no_tensor = { .shape = { .ndim = -1 } };

/* g_memdup2 needs GLib 2.68; the build asks for 2.66. */
static void *
dup_bytes (const void *src, gsize size)
{
  void *dst = g_malloc (size);
  memcpy (dst, src, size);
  return dst;
}

static void
value_free (hy_value *v)
{
  if (v->owns_tensor)
    hy_tensor_free (v->tensor);
  g_free (v->members);
  g_free (v);
}

static hy_F *
F_new (gboolean symbolic)
{
  hy_F *F = g_new0 (hy_F, 1);
  F->symbolic = symbolic;
  F->values = g_ptr_array_new_with_free_func ((GDestroyNotify) value_free);
  F->scope = g_strdup ("");
  return F;
}

hy_F *
hy_F_new_imperative (hy_backend *backend)
{
  hy_F *F = F_new (FALSE);
  F->backend = backend;
  return F;
}

hy_F *
hy_F_new_symbolic (void)
{
  hy_F *F = F_new (TRUE);
  F->graph = hy_graph_new ();
  F->node_params = g_ptr_array_new ();
  F->param_nodes = g_hash_table_new (g_direct_hash, g_direct_equal);
  F->inputs = g_hash_table_new (g_direct_hash, g_direct_equal);
  F->name_counts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      NULL);
  return F;
}

void
hy_F_free (hy_F *F)
{
  if (!F)
    return;
  g_ptr_array_unref (F->values);
  g_clear_error (&F->error);
  g_free (F->scope);
  hy_graph_free (F->graph);
  if (F->symbolic) {
    g_ptr_array_unref (F->node_params);
    g_hash_table_unref (F->param_nodes);
    g_hash_table_unref (F->inputs);
    g_hash_table_unref (F->name_counts);
  }
  g_free (F);
}

const char *
hy_F_name (const hy_F *F)
{
  return F->symbolic ? "symbol" : "ndarray";
}

gboolean
hy_F_is_symbolic (const hy_F *F)
{
  return F->symbolic;
}

const GError *
hy_F_error (const hy_F *F)
{
  return F->error;
}

void
hy_F_fail (hy_F *F, GError *error)
{
  if (F->error)
    g_error_free (error);
  else
    F->error = error;
}

void
hy_F_failf (hy_F *F, int code, const char *format, ...)
{
  if (F->error)
    return;
  va_list args;
  va_start (args, format);
  F->error = g_error_new_valist (HY_ERROR, code, format, args);
  va_end (args);
}

gboolean
hy_F_failed (const hy_F *F)
{
  return F->error != NULL;
}

void
hy_F_take_error (hy_F *F, GError **error)
{
  if (F->error)
    g_propagate_error (error, g_steal_pointer (&F->error));
}

/* F keeps its own copy: a block's prefix string may be rebuilt while a
 * forward runs (a block renamed in a forward is odd, not forbidden). */
char *
hy_F_push_scope (hy_F *F, const char *prefix)
{
  char *saved = F->scope;
  F->scope = g_strdup (prefix);
  F->depth++;
  return saved;
}

void
hy_F_pop_scope (hy_F *F, char *saved)
{
  g_free (F->scope);
  F->scope = saved;
  F->depth--;
}

/* ---- making values ------------------------------------------------------ */

static hy_value *
value_new (hy_F *F, value_kind kind, const hy_shape *shape)
{
  hy_value *v = g_new0 (hy_value, 1);
  v->F = F;
  v->kind = kind;
  v->shape = *shape;
  g_ptr_array_add (F->values, v);
  return v;
}

hy_value *
hy_F_wrap (hy_F *F, const hy_tensor *tensor)
{
  hy_value *v = value_new (F, VALUE_TENSOR, &tensor->shape);
  v->tensor = (hy_tensor *) tensor;
  return v;
}

hy_value *
hy_F_adopt (hy_F *F, hy_tensor *tensor)
{
  hy_value *v = hy_F_wrap (F, tensor);
  v->owns_tensor = TRUE;
  return v;
}

static const char *
node_name (const hy_F *F, const hy_value *v)
{
  return hy_graph_node (F->graph, v->entry.node)->name;
}

static hy_value *
add_variable (hy_F *F, hy_node *var, value_kind kind, hy_parameter *param)
{
  guint index = hy_graph_add_node (F->graph, var);
  g_ptr_array_add (F->node_params, param);
  hy_value *v = value_new (F, kind, &var->shapes[0]);
  v->entry = (hy_entry) { index, 0 };
  return v;
}

hy_value *
hy_F_input (hy_F *F, const char *name, const hy_shape *shape)
{
  hy_node *var = hy_node_new_variable (name);
  var->shapes[0] = *shape;
  hy_value *v = add_variable (F, var, VALUE_SYMBOL, NULL);
  g_hash_table_add (F->inputs, GUINT_TO_POINTER (v->entry.node));
  return v;
}

hy_value *
hy_F_placeholder (hy_F *F, const char *name)
{
  hy_shape unknown = { .ndim = -1 };
  if (!F->symbolic) {
    hy_value *v = value_new (F, VALUE_PLACEHOLDER, &unknown);
    v->tensor = (hy_tensor *) &no_tensor;
    return v;
  }
  return add_variable (F, hy_node_new_variable (name), VALUE_PLACEHOLDER,
      NULL);
}

static void
set_attr (GHashTable *attrs, const char *key, const char *value)
{
  g_hash_table_insert (attrs, g_strdup (key), g_strdup (value));
}

/* The attributes Gluon's Parameter.var() gives a parameter's variable. */
static void
describe_parameter (hy_node *var, const hy_parameter *p)
{
  char shape[HY_SHAPE_STRLEN];
  set_attr (var->attrs, "__dtype__", "0");
  set_attr (var->attrs, "__lr_mult__", "1.0");
  set_attr (var->attrs, "__shape__",
      hy_shape_format (&p->shape, shape, sizeof shape));
  set_attr (var->attrs, "__storage_type__", "0");
  set_attr (var->attrs, "__wd_mult__", "1.0");
  if (p->init.kind == HY_INIT_ZEROS)
    set_attr (var->attrs, "__init__", "zeros");
  else if (p->init.kind == HY_INIT_ONES)
    set_attr (var->attrs, "__init__", "ones");
}

hy_value *
hy_F_param (hy_F *F, hy_parameter *param, const char *full_name)
{
  if (!F->symbolic)
    return hy_F_wrap (F, param->data);
  gpointer found = g_hash_table_lookup (F->param_nodes, param);
  if (found) {
    guint index = GPOINTER_TO_UINT (found) - 1;
    hy_value *v = value_new (F, VALUE_SYMBOL,
        &hy_graph_node (F->graph, index)->shapes[0]);
    v->entry = (hy_entry) { index, 0 };
    return v;
  }
  hy_node *var = hy_node_new_variable (full_name);
  var->shapes[0] = param->shape;
  describe_parameter (var, param);
  hy_value *v = add_variable (F, var, VALUE_SYMBOL, param);
  g_hash_table_insert (F->param_nodes, param,
      GUINT_TO_POINTER (v->entry.node + 1));
  return v;
}

/* ---- the generic op call ------------------------------------------------- */

/* elemwise_add → broadcast_add, _maximum → broadcast_maximum. */
static char *
broadcast_name (const char *elemwise)
{
  const char *stem = g_str_has_prefix (elemwise, "elemwise_")
      ? elemwise + strlen ("elemwise_") : elemwise + (elemwise[0] == '_');
  return g_strconcat ("broadcast_", stem, NULL);
}

/* Elementwise ops need equal shapes in MXNet, and symbols never broadcast
 * implicitly: code leaning on NDArray's broadcasting `a + b` breaks once
 * hybridized.  Say so, in both modes, before the op's own check. */
static gboolean
check_elemwise_shapes (hy_F *F, const hy_op_info *op,
    hy_value *const *inputs, int n_inputs)
{
  if (strcmp (op->family, "binary") != 0
      || g_str_has_prefix (op->name, "broadcast_") || n_inputs != 2
      || hy_shape_equal (&inputs[0]->shape, &inputs[1]->shape))
    return TRUE;
  char a[HY_SHAPE_STRLEN], b[HY_SHAPE_STRLEN];
  g_autofree char *fix = broadcast_name (op->name);
  hy_F_failf (F, HY_ERROR_SHAPE,
      "F.%s: lhs %s and rhs %s have different shapes, and %s does not "
      "broadcast (hybridize restriction: symbols never broadcast "
      "implicitly, so elementwise ops need equal shapes in both modes).  "
      "Hint: use the broadcast op, %s (hy_F_%s)", op->name,
      hy_shape_format (&inputs[0]->shape, a, sizeof a),
      hy_shape_format (&inputs[1]->shape, b, sizeof b), op->name, fix, fix);
  return FALSE;
}

static gboolean
check_inputs (hy_F *F, const char *op_name, hy_value *const *inputs,
    int n_inputs)
{
  if (n_inputs < 0 || n_inputs > MAX_OP_ARGS) {
    hy_F_failf (F, HY_ERROR_INVALID, "F.%s: %d inputs is not a valid count",
        op_name, n_inputs);
    return FALSE;
  }
  for (int i = 0; i < n_inputs; i++) {
    hy_value *v = inputs[i];
    if (!v) {
      hy_F_failf (F, HY_ERROR_INVALID, "F.%s: input %d is NULL", op_name, i);
      return FALSE;
    }
    if (v->F != F) {
      hy_F_failf (F, HY_ERROR_INVALID, "F.%s: input %d comes from another "
          "forward; values live only as long as the forward that made them",
          op_name, i);
      return FALSE;
    }
    if (v->kind == VALUE_GROUP) {
      hy_F_failf (F, HY_ERROR_INVALID, "F.%s: input %d is a group of %d "
          "values; pick one with hy_value_index", op_name, i, v->n_members);
      return FALSE;
    }
  }
  return TRUE;
}

/* The attribute table, leaving out "name" (which names the node). */
static GHashTable *
attrs_table (const char *const *attrs, const char **name)
{
  GHashTable *t = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);
  for (int i = 0; attrs && attrs[i]; i += 2) {
    const char *value = attrs[i + 1] ? attrs[i + 1] : "";
    if (!strcmp (attrs[i], "name"))
      *name = value;
    else
      set_attr (t, attrs[i], value);
  }
  return t;
}

/* scope + name, or scope + op hint + counter as MXNet's NameManager. */
static char *
make_node_name (hy_F *F, const char *op_name, const char *name)
{
  if (name)
    return g_strconcat (F->scope, name, NULL);
  g_autofree char *hint = g_ascii_strdown (op_name, -1);
  char *key = g_strconcat (F->scope, hint, NULL);
  guint n = GPOINTER_TO_UINT (g_hash_table_lookup (F->name_counts, key));
  char *full = g_strdup_printf ("%s%u", key, n);
  g_hash_table_insert (F->name_counts, key, GUINT_TO_POINTER (n + 1));
  return full;
}

static gboolean
run_imperative (hy_F *F, const hy_op_info *op, const void *params,
    hy_value *const *inputs, int n_inputs,
    const hy_shape *out_shapes, int n_out, hy_value **outputs,
    int max_outputs)
{
  const hy_tensor **in = g_newa (const hy_tensor *, n_inputs + 1);
  hy_tensor **out = g_newa (hy_tensor *, n_out);
  memset (out, 0, sizeof (hy_tensor *) * (size_t) n_out);
  for (int i = 0; i < n_inputs; i++)
    in[i] = inputs[i]->tensor;
  for (int k = 0; k < n_out; k++)
    out[k] = hy_tensor_new (&out_shapes[k]);
  GError *local = NULL;
  if (!hy_backend_run_op (F->backend, op->id, params, in, n_inputs, out,
          n_out, &local)) {
    for (int k = 0; k < n_out; k++)
      hy_tensor_free (out[k]);
    g_prefix_error (&local, "F.%s: ", op->name);
    hy_F_fail (F, local);
    return FALSE;
  }
  for (int k = 0; k < n_out; k++) {
    hy_value *v = hy_F_adopt (F, out[k]);
    if (k < max_outputs)
      outputs[k] = v;
  }
  return TRUE;
}

/* `called` is the op's name as the forward wrote it: MXNet names nodes
 * after it (F.identity gives "identity0", though the op is _copy). */
static void
append_node (hy_F *F, const hy_op_info *op, const char *called,
    GHashTable *attrs, void *params, const char *name,
    hy_value *const *inputs, int n_inputs, const hy_shape *out_shapes,
    int n_out, hy_value **outputs, int max_outputs)
{
  hy_node *node = g_new0 (hy_node, 1);
  node->name = make_node_name (F, called, name);
  node->op_name = g_strdup (op->name);
  node->op = op;
  node->attrs = attrs;
  node->params = params;
  node->n_inputs = (guint) n_inputs;
  node->inputs = g_new0 (hy_entry, MAX (n_inputs, 1));
  for (int i = 0; i < n_inputs; i++)
    node->inputs[i] = inputs[i]->entry;
  node->n_outputs = (guint) n_out;
  node->shapes = dup_bytes (out_shapes, sizeof (hy_shape) * (gsize) n_out);
  guint index = hy_graph_add_node (F->graph, node);
  g_ptr_array_add (F->node_params, NULL);
  for (int k = 0; k < n_out && k < max_outputs; k++) {
    outputs[k] = value_new (F, VALUE_SYMBOL, &out_shapes[k]);
    outputs[k]->entry = (hy_entry) { index, (guint) k };
  }
}

static int
invoke_op (hy_F *F, const char *op_name, hy_value *const *inputs,
    int n_inputs, const char *const *attr_list, const char *name,
    hy_value **outputs, int max_outputs)
{
  if (!check_inputs (F, op_name, inputs, n_inputs))
    return 0;
  const hy_op_info *op = hy_op_lookup (op_name);
  if (!op || !op->def) {
    hy_F_failf (F, HY_ERROR_UNSUPPORTED, "F.%s: %s (see kernels/ops.def "
        "for the ops hybridinfer runs)", op_name,
        op ? "known but not implemented" : "no such op");
    return 0;
  }
  if (!F->symbolic && !F->backend->iface->kernel_for (op->id)) {
    hy_F_failf (F, HY_ERROR_UNSUPPORTED, "F.%s: the %s backend has no "
        "kernel for this op", op->name, F->backend->iface->name);
    return 0;
  }

  GHashTable *attrs = attrs_table (attr_list, &name);
  GError *local = NULL;
  void *params = hy_op_params_new (op, attrs, &local);
  if (!params) {
    g_prefix_error (&local, "F.%s: ", op->name);
    hy_F_fail (F, local);
    g_hash_table_unref (attrs);
    return 0;
  }
  int want = hy_op_num_inputs (op, params);
  int n_out = hy_op_num_outputs (op, params);
  hy_shape *in_shapes = g_newa (hy_shape, n_inputs + 1);
  hy_shape *out_shapes = g_newa (hy_shape, MAX (n_out, 1));
  if (n_out < 1 || n_out > MAX_OP_ARGS) {
    hy_F_failf (F, HY_ERROR_INVALID, "F.%s would have %d outputs", op->name,
        n_out);
    goto fail;
  }
  if (want != n_inputs) {
    hy_F_failf (F, HY_ERROR_INVALID, "F.%s takes %d inputs with these "
        "attributes, %d given", op->name, want, n_inputs);
    goto fail;
  }
  if (!check_elemwise_shapes (F, op, inputs, n_inputs))
    goto fail;
  for (int i = 0; i < n_inputs; i++) {
    in_shapes[i] = inputs[i]->shape;
    gboolean unused = i < 32 && (op->def->unused_inputs & (1u << i));
    if (inputs[i]->kind == VALUE_PLACEHOLDER && !unused) {
      hy_F_failf (F, HY_ERROR_MISSING, "F.%s: input %d has no value, but "
          "the op reads it", op->name, i);
      goto fail;
    }
  }
  for (int k = 0; k < n_out; k++)
    out_shapes[k].ndim = -1;
  if (!op->def->infer_shape (params, in_shapes, n_inputs, out_shapes, n_out,
          &local)) {
    g_prefix_error (&local, "F.%s: ", op->name);
    hy_F_fail (F, local);
    goto fail;
  }

  if (F->symbolic) {
    /* The node owns attrs and params from here. */
    append_node (F, op, op_name, attrs, params, name, inputs, n_inputs,
        out_shapes, n_out, outputs, max_outputs);
    return n_out;
  }
  if (!run_imperative (F, op, params, inputs, n_inputs, out_shapes, n_out,
          outputs, max_outputs))
    goto fail;
  g_free (params);
  g_hash_table_unref (attrs);
  return n_out;

fail:
  g_free (params);
  g_hash_table_unref (attrs);
  return 0;
}

int
hy_F_invoke (hy_F *F, const char *op_name, hy_value *const *inputs,
    int n_inputs, const char *const *attrs, const char *name,
    hy_value **outputs, int max_outputs)
{
  if (F->error)
    return 0;
  int n = invoke_op (F, op_name, inputs, n_inputs, attrs, name, outputs,
      max_outputs);
  /* The caller names the outermost block; say which inner one failed. */
  if (F->error && F->depth > 1)
    g_prefix_error (&F->error, "in block '%s': ", F->scope);
  return n;
}

hy_value *
hy_F_op_array (hy_F *F, const char *op, hy_value *const *inputs,
    int n_inputs, const char *const *attrs)
{
  hy_value *out = NULL;
  return hy_F_invoke (F, op, inputs, n_inputs, attrs, NULL, &out, 1) > 0
      ? out : NULL;
}

hy_value *
hy_F_op (hy_F *F, const char *op, hy_value *const *inputs, int n_inputs,
    ...)
{
  GPtrArray *attrs = g_ptr_array_new ();
  va_list args;
  va_start (args, n_inputs);
  const char *key;
  while ((key = va_arg (args, const char *))) {
    g_ptr_array_add (attrs, (gpointer) key);
    g_ptr_array_add (attrs, va_arg (args, char *));
  }
  va_end (args);
  g_ptr_array_add (attrs, NULL);
  hy_value *out = hy_F_op_array (F, op, inputs, n_inputs,
      (const char *const *) attrs->pdata);
  g_ptr_array_unref (attrs);
  return out;
}

int
hy_F_op_outputs (hy_F *F, const char *op, hy_value *const *inputs,
    int n_inputs, const char *const *attrs, hy_value **outputs,
    int max_outputs)
{
  return hy_F_invoke (F, op, inputs, n_inputs, attrs, NULL, outputs,
      max_outputs);
}

hy_value *
hy_F_group (hy_F *F, hy_value *const *values, int n)
{
  if (F->error || !check_inputs (F, "group", values, n))
    return NULL;
  if (n < 1) {
    hy_F_failf (F, HY_ERROR_INVALID, "F.group: a group needs a value");
    return NULL;
  }
  hy_shape none = { .ndim = -1 };
  hy_value *g = value_new (F, VALUE_GROUP, &none);
  g->members = dup_bytes (values, sizeof (hy_value *) * (gsize) n);
  g->n_members = n;
  return g;
}

/* ---- reading values ------------------------------------------------------ */

gboolean
hy_value_is_symbolic (const hy_value *value)
{
  return value->F->symbolic;
}

const hy_shape *
hy_value_known_shape (const hy_value *value)
{
  return &value->shape;
}

int
hy_value_n_members (const hy_value *value)
{
  return value->kind == VALUE_GROUP ? value->n_members : 1;
}

hy_value *
hy_value_member (const hy_value *value, int i)
{
  return value->kind == VALUE_GROUP ? value->members[i] : (hy_value *) value;
}

hy_tensor *
hy_value_take_tensor (hy_value *value)
{
  if (value->kind != VALUE_TENSOR)
    return NULL;
  if (!value->owns_tensor)
    return hy_tensor_copy (value->tensor);
  value->owns_tensor = FALSE;
  return value->tensor;
}

static const char *
symbol_name (const hy_value *v)
{
  return v->kind == VALUE_GROUP ? "(a group)" : node_name (v->F, v);
}

/* Records a hybridize restriction met while tracing. */
static void
restriction (const hy_value *v, const char *what, const char *gluon,
    const char *hint)
{
  hy_F_failf (v->F, HY_ERROR_UNSUPPORTED, "hybridize restriction: %s of "
      "symbol '%s' cannot be used while tracing (Gluon: %s).  Hint: %s",
      what, symbol_name (v), gluon, hint);
}

gboolean
hy_value_shape (const hy_value *value, hy_shape *out)
{
  if (value->F->symbolic) {
    restriction (value, "the shape", "'Symbol' object has no attribute "
        "'shape'", "a symbol stands for every shape the graph will run "
        "with; use shape-free ops instead: reshape with 0 (copy a "
        "dimension) and -1 (infer one), flatten, broadcast_* ops");
    return FALSE;
  }
  if (value->kind == VALUE_GROUP) {
    hy_F_failf (value->F, HY_ERROR_INVALID, "a group has no single shape; "
        "pick a member with hy_value_index");
    return FALSE;
  }
  *out = value->shape;
  return TRUE;
}

int
hy_value_dtype (const hy_value *value)
{
  if (value->F->symbolic) {
    restriction (value, "the dtype", "'Symbol' object has no attribute "
        "'dtype'", "decide the dtype when you create the block (pass it "
        "in its user data), not from the input");
    return -1;
  }
  return HY_DTYPE_FLOAT32;
}

const hy_tensor *
hy_value_data (const hy_value *value)
{
  if (value->F->symbolic) {
    restriction (value, "the data", "Symbol has no asnumpy()", "a symbol "
        "holds no numbers; inspect values before hybridizing, or read the "
        "forward's output");
    return NULL;
  }
  if (value->kind != VALUE_TENSOR) {
    hy_F_failf (value->F, HY_ERROR_INVALID, "this value holds no single "
        "tensor (a group or a placeholder)");
    return NULL;
  }
  return value->tensor;
}

hy_value *
hy_value_index (hy_value *value, int i)
{
  hy_F *F = value->F;
  if (F->error)
    return NULL;
  if (value->kind == VALUE_GROUP) {
    if (i < 0 || i >= value->n_members) {
      hy_F_failf (F, HY_ERROR_INVALID, "index %d is outside the group's %d "
          "members", i, value->n_members);
      return NULL;
    }
    return value->members[i];
  }
  if (F->symbolic) {
    restriction (value, "[] slicing", "Symbol only support integer index "
        "to fetch i-th output, so x[0] would silently pick output 0 instead "
        "of slicing", "slice with an op, hy_F_slice_axis (F, x, 0, i, i + 1) "
        "or the slice op, and reshape if the axis must go");
    return NULL;
  }
  const hy_tensor *t = value->tensor;
  if (value->kind != VALUE_TENSOR || t->shape.ndim < 1
      || i < 0 || i >= t->shape.dims[0]) {
    char buf[HY_SHAPE_STRLEN];
    hy_F_failf (F, HY_ERROR_INVALID, "index %d is out of range for shape %s",
        i, hy_shape_format (&value->shape, buf, sizeof buf));
    return NULL;
  }
  /* MXNet 1.x drops the axis, but keeps at least one dimension. */
  hy_shape s = { .ndim = MAX (t->shape.ndim - 1, 1), .dims = { 1 } };
  for (int d = 1; d < t->shape.ndim; d++)
    s.dims[d - 1] = t->shape.dims[d];
  hy_tensor *row = hy_tensor_new (&s);
  int64_t n = hy_shape_numel (&s);
  memcpy (row->data, t->data + (int64_t) i * n, (size_t) n * sizeof (float));
  return hy_F_adopt (F, row);
}

gboolean
hy_value_set_item (hy_value *value, int i, float v)
{
  hy_F *F = value->F;
  if (F->error)
    return FALSE;
  if (F->symbolic) {
    restriction (value, "item assignment", "'Symbol' object does not "
        "support item assignment", "compute the new value with ops instead, "
        "e.g. the where op with a mask input, or broadcast_mul by a mask");
    return FALSE;
  }
  if (value->kind != VALUE_TENSOR || value->shape.ndim < 1
      || i < 0 || i >= value->shape.dims[0]) {
    char buf[HY_SHAPE_STRLEN];
    hy_F_failf (F, HY_ERROR_INVALID, "index %d is out of range for shape %s",
        i, hy_shape_format (&value->shape, buf, sizeof buf));
    return FALSE;
  }
  /* Copy on write: never change a caller's input or a parameter. */
  if (!value->owns_tensor) {
    value->tensor = hy_tensor_copy (value->tensor);
    value->owns_tensor = TRUE;
  }
  int64_t row = hy_shape_numel (&value->shape) / value->shape.dims[0];
  float *p = value->tensor->data + (int64_t) i * row;
  for (int64_t k = 0; k < row; k++)
    p[k] = v;
  return TRUE;
}

/* ---- printing ------------------------------------------------------------ */

static void
print_axis (GString *s, const float *data, const hy_shape *shape, int axis,
    gboolean summarize, int indent)
{
  int64_t n = shape->dims[axis];
  int64_t stride = 1;
  for (int d = axis + 1; d < shape->ndim; d++)
    stride *= shape->dims[d];
  g_string_append_c (s, '[');
  for (int64_t i = 0; i < n; i++) {
    if (summarize && n > 2 * PRINT_EDGE_ITEMS && i == PRINT_EDGE_ITEMS) {
      if (axis < shape->ndim - 1) {
        g_string_append_c (s, '\n');
        for (int k = 0; k < indent + 1; k++)
          g_string_append_c (s, ' ');
      }
      g_string_append (s, axis < shape->ndim - 1 ? "..." : " ...");
      i = n - PRINT_EDGE_ITEMS - 1;
      continue;
    }
    if (axis == shape->ndim - 1) {
      g_string_append_printf (s, "%s%.8g", i ? " " : "", data[i]);
    } else {
      if (i) {
        g_string_append_c (s, '\n');
        for (int k = 0; k < indent + 1; k++)
          g_string_append_c (s, ' ');
      }
      print_axis (s, data + i * stride, shape, axis + 1, summarize,
          indent + 1);
    }
  }
  g_string_append_c (s, ']');
}

char *
hy_value_to_string (const hy_value *value)
{
  if (value->kind == VALUE_GROUP) {
    GString *s = g_string_new ("<Symbol group [");
    for (int i = 0; i < value->n_members; i++) {
      const hy_value *m = value->members[i];
      g_string_append_printf (s, "%s%s", i ? ", " : "",
          m->F->symbolic ? node_name (m->F, m) : "NDArray");
    }
    g_string_append (s, "]>");
    return g_string_free (s, FALSE);
  }
  if (value->F->symbolic)
    return g_strdup_printf ("<Symbol %s>", node_name (value->F, value));
  if (value->kind == VALUE_PLACEHOLDER)
    return g_strdup ("<NDArray (none)>");

  const hy_tensor *t = value->tensor;
  GString *s = g_string_new (NULL);
  if (t->shape.ndim == 0)
    g_string_append_printf (s, "%.8g", t->data[0]);
  else
    print_axis (s, t->data, &t->shape, 0,
        hy_shape_numel (&t->shape) > PRINT_THRESHOLD, 0);
  g_string_append (s, "\n<NDArray ");
  for (int d = 0; d < t->shape.ndim; d++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, d ? "x" : "",
        (gint64) t->shape.dims[d]);
  g_string_append (s, " @cpu(0)>");
  return g_string_free (s, FALSE);
}

/* ---- ending a trace ------------------------------------------------------ */

hy_graph *
hy_F_finish_trace (hy_F *F, hy_value *output, GPtrArray **params,
    GError **error)
{
  if (!F->error && !output)
    hy_F_failf (F, HY_ERROR_INVALID, "the forward returned NULL without "
        "an error");
  if (F->error) {
    hy_F_take_error (F, error);
    return NULL;
  }
  hy_graph *g = F->graph;
  guint n = hy_graph_n_nodes (g);
  int n_heads = hy_value_n_members (output);
  g->n_heads = (guint) n_heads;
  g->heads = g_new0 (hy_entry, n_heads);
  for (int h = 0; h < n_heads; h++) {
    hy_value *m = hy_value_member (output, h);
    if (m->F != F || m->kind == VALUE_GROUP) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "output %d of the "
          "forward is %s", h, m->F != F ? "a value of another forward"
          : "a group inside a group");
      return NULL;
    }
    g->heads[h] = m->entry;
  }

  /* Keep what the heads need, and every data input (an export without
   * its 'data' would not load with the input names the caller expects). */
  g_autofree gboolean *keep = g_new0 (gboolean, MAX (n, 1));
  for (int h = 0; h < n_heads; h++)
    keep[g->heads[h].node] = TRUE;
  for (guint i = n; i-- > 0;) {
    hy_node *node = hy_graph_node (g, i);
    if (g_hash_table_contains (F->inputs, GUINT_TO_POINTER (i)))
      keep[i] = TRUE;
    if (keep[i])
      for (guint k = 0; k < node->n_inputs; k++)
        keep[node->inputs[k].node] = TRUE;
  }
  g_autofree guint *remap = g_new0 (guint, MAX (n, 1));
  GPtrArray *kept = g_ptr_array_new_with_free_func (
      (GDestroyNotify) hy_node_free);
  *params = g_ptr_array_new ();
  for (guint i = 0; i < n; i++) {
    hy_node *node = hy_graph_node (g, i);
    if (!keep[i]) {
      hy_node_free (node);
      continue;
    }
    for (guint k = 0; k < node->n_inputs; k++)
      node->inputs[k].node = remap[node->inputs[k].node];
    remap[i] = kept->len;
    g_ptr_array_add (kept, node);
    hy_parameter *p = g_ptr_array_index (F->node_params, i);
    if (p)
      g_ptr_array_add (*params, p);
  }
  for (int h = 0; h < n_heads; h++)
    g->heads[h].node = remap[g->heads[h].node];
  g_ptr_array_set_free_func (g->nodes, NULL);
  g_ptr_array_unref (g->nodes);
  g->nodes = kept;
  F->graph = NULL;
  return g;
}
