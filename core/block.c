/*
 * block.c — blocks: parameters, children, names, and running a forward
 * imperatively or through a traced, compiled graph.
 *
 * Hybridizing follows Gluon's CachedOp.  The first forward after
 * hy_block_hybridize() calls the forward function once with symbolic
 * values (block-f.c records every op into a graph), and the graph becomes
 * a model and a hybrid-mode executor: the compiled plan.  Later forwards
 * feed the executor and never call the forward function.  The graph does
 * not depend on the input shape, so a new shape only re-plans (the
 * executor caches plans per shape); it does not trace again.
 */
#include <stdlib.h>
#include <string.h>

#include "core/block-impl.h"
#include "core/model-impl.h"

/* ---- names -------------------------------------------------------------- */

G_LOCK_DEFINE_STATIC (root_names);
static GHashTable *root_counts;   /* hint → blocks without parent named */

/* Gluon's global NameManager: "dense0_", "dense1_", … */
static char *
next_root_prefix (const char *hint)
{
  G_LOCK (root_names);
  if (!root_counts)
    root_counts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
        NULL);
  guint n = GPOINTER_TO_UINT (g_hash_table_lookup (root_counts, hint));
  g_hash_table_insert (root_counts, g_strdup (hint), GUINT_TO_POINTER (n + 1));
  G_UNLOCK (root_names);
  return g_strdup_printf ("%s%u_", hint, n);
}

/* Bumped when any block's name may have changed (a prefix set, a child
 * registered): cached names older than it are rebuilt. */
static guint names_generation = 1;

const char *
hy_block_prefix (hy_block *block)
{
  if (block->keeps_names)
    return "";
  if (!block->own_prefix)
    block->own_prefix = next_root_prefix (block->hint);
  if (block->prefix && block->prefix_generation == names_generation)
    return block->prefix;
  char *full = block->parent
      ? g_strconcat (hy_block_prefix (block->parent), block->own_prefix, NULL)
      : g_strdup (block->own_prefix);
  g_free (block->prefix);
  block->prefix = full;
  block->prefix_generation = names_generation;
  return full;
}

void
hy_block_set_prefix (hy_block *block, const char *prefix)
{
  g_free (block->own_prefix);
  block->own_prefix = g_strdup (prefix);
  names_generation++;
}

/* ---- blocks ------------------------------------------------------------- */

static void parameter_free (hy_parameter *p);
static void drop_cache (hy_block *block);

hy_block *
hy_block_new_full (const char *hint, hy_forward_fn forward,
    hy_infer_params_fn infer_params, gboolean hybrid)
{
  hy_block *b = g_new0 (hy_block, 1);
  b->hint = g_strdup (hint ? hint : "block");
  b->forward = forward;
  b->infer_params = infer_params;
  b->hybrid = hybrid;
  b->params = g_ptr_array_new_with_free_func ((GDestroyNotify) parameter_free);
  b->children = g_ptr_array_new_with_free_func ((GDestroyNotify) hy_block_free);
  b->hint_counts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      NULL);
  b->outputs = g_ptr_array_new ();
  b->owned_outputs = g_ptr_array_new_with_free_func (
      (GDestroyNotify) hy_tensor_free);
  return b;
}

hy_block *
hy_hybrid_block_new (const char *hint, hy_forward_fn forward)
{
  return hy_block_new_full (hint, forward, NULL, TRUE);
}

hy_block *
hy_block_new (const char *hint, hy_forward_fn forward)
{
  return hy_block_new_full (hint, forward, NULL, FALSE);
}

static void
clear_outputs (hy_block *block)
{
  g_ptr_array_set_size (block->outputs, 0);
  g_ptr_array_set_size (block->owned_outputs, 0);
}

void
hy_block_free (hy_block *block)
{
  if (!block)
    return;
  drop_cache (block);
  clear_outputs (block);
  g_ptr_array_unref (block->outputs);
  g_ptr_array_unref (block->owned_outputs);
  g_ptr_array_unref (block->children);
  g_ptr_array_unref (block->params);
  g_hash_table_unref (block->hint_counts);
  if (block->user_destroy)
    block->user_destroy (block->user_data);
  hy_backend_free (block->imperative);
  g_free (block->hint);
  g_free (block->own_prefix);
  g_free (block->prefix);
  g_free (block->child_name);
  g_free (block);
}

gboolean
hy_block_is_hybrid (const hy_block *block)
{
  return block->hybrid;
}

void
hy_block_set_user_data (hy_block *block, gpointer data,
    GDestroyNotify destroy)
{
  if (block->user_destroy)
    block->user_destroy (block->user_data);
  block->user_data = data;
  block->user_destroy = destroy;
}

gpointer
hy_block_get_user_data (const hy_block *block)
{
  return block->user_data;
}

hy_block *
hy_block_register_child_prefixed (hy_block *parent, const char *name,
    hy_block *child, const char *own_prefix)
{
  g_return_val_if_fail (parent && child && name, NULL);
  g_return_val_if_fail (child->parent == NULL, NULL);
  g_return_val_if_fail (hy_block_child (parent, name) == NULL, NULL);
  child->parent = parent;
  child->child_name = g_strdup (name);
  g_free (child->own_prefix);
  if (own_prefix) {
    child->own_prefix = g_strdup (own_prefix);
  } else {
    /* Gluon's name_scope: numbered per hint among this parent's. */
    guint n = GPOINTER_TO_UINT (g_hash_table_lookup (parent->hint_counts,
            child->hint));
    g_hash_table_insert (parent->hint_counts, g_strdup (child->hint),
        GUINT_TO_POINTER (n + 1));
    child->own_prefix = g_strdup_printf ("%s%u_", child->hint, n);
  }
  g_ptr_array_add (parent->children, child);
  names_generation++;
  return child;
}

hy_block *
hy_block_register_child (hy_block *parent, const char *name, hy_block *child)
{
  return hy_block_register_child_prefixed (parent, name, child, NULL);
}

hy_block *
hy_block_child (const hy_block *block, const char *name)
{
  for (guint i = 0; i < block->children->len; i++) {
    hy_block *c = g_ptr_array_index (block->children, i);
    if (!strcmp (c->child_name, name))
      return c;
  }
  return NULL;
}

int
hy_block_n_children (const hy_block *block)
{
  return (int) block->children->len;
}

hy_block *
hy_block_nth_child (const hy_block *block, int i)
{
  if (i < 0 || i >= (int) block->children->len)
    return NULL;
  return g_ptr_array_index (block->children, i);
}

/* ---- parameters ---------------------------------------------------------- */

/* Blocks are used from one thread at a time, so a plain counter does. */
static guint64 param_generation = 1;

void
hy_parameters_changed (void)
{
  param_generation++;
}

static guint64
current_generation (void)
{
  return param_generation;
}

static void
parameter_free (hy_parameter *p)
{
  hy_tensor_free (p->data);
  g_free (p->name);
  g_free (p->full_name);
  g_free (p);
}

static gboolean
shape_complete (const hy_shape *s)
{
  for (int i = 0; i < s->ndim; i++)
    if (s->dims[i] <= 0)
      return FALSE;
  return s->ndim >= 0;
}

hy_parameter *
hy_block_add_param (hy_block *block, const char *name, int ndim,
    const int64_t *dims, hy_init init)
{
  g_return_val_if_fail (block && name, NULL);
  g_return_val_if_fail (ndim >= 0 && ndim <= HY_MAX_DIMS, NULL);
  g_return_val_if_fail (hy_block_find_param (block, name) == NULL, NULL);
  hy_parameter *p = g_new0 (hy_parameter, 1);
  p->owner = block;
  p->name = g_strdup (name);
  p->shape = hy_shape_make (ndim, dims);
  p->init = init;
  g_ptr_array_add (block->params, p);
  return p;
}

int
hy_block_n_params (const hy_block *block)
{
  return (int) block->params->len;
}

hy_parameter *
hy_block_param (const hy_block *block, int i)
{
  if (i < 0 || i >= (int) block->params->len)
    return NULL;
  return g_ptr_array_index (block->params, i);
}

hy_parameter *
hy_block_find_param (const hy_block *block, const char *name)
{
  for (guint i = 0; i < block->params->len; i++) {
    hy_parameter *p = g_ptr_array_index (block->params, i);
    if (!strcmp (p->name, name))
      return p;
  }
  return NULL;
}

static void
collect (hy_block *block, GPtrArray *out)
{
  for (guint i = 0; i < block->params->len; i++)
    g_ptr_array_add (out, g_ptr_array_index (block->params, i));
  for (guint i = 0; i < block->children->len; i++)
    collect (g_ptr_array_index (block->children, i), out);
}

hy_parameter **
hy_block_collect_params (hy_block *block, int *n)
{
  GPtrArray *all = g_ptr_array_new ();
  collect (block, all);
  *n = (int) all->len;
  return (hy_parameter **) g_ptr_array_free (all, FALSE);
}

const char *
hy_parameter_name (hy_parameter *param)
{
  const char *prefix = hy_block_prefix (param->owner);
  if (!param->full_name || !g_str_has_prefix (param->full_name, prefix)
      || strcmp (param->full_name + strlen (prefix), param->name) != 0) {
    g_free (param->full_name);
    param->full_name = g_strconcat (prefix, param->name, NULL);
  }
  return param->full_name;
}

hy_shape
hy_parameter_shape (const hy_parameter *param)
{
  return param->shape;
}

const hy_tensor *
hy_parameter_data (const hy_parameter *param)
{
  return param->data;
}

void
hy_parameter_complete_shape (hy_parameter *param, int ndim,
    const int64_t *dims)
{
  if (param->shape.ndim != ndim)
    return;
  for (int i = 0; i < ndim; i++)
    if (param->shape.dims[i] <= 0 && dims[i] > 0)
      param->shape.dims[i] = dims[i];
}

/* Known dimensions must agree; deferred ones take anything. */
static gboolean
shape_fits (const hy_shape *declared, const hy_shape *given)
{
  if (declared->ndim != given->ndim)
    return FALSE;
  for (int i = 0; i < declared->ndim; i++)
    if (declared->dims[i] > 0 && declared->dims[i] != given->dims[i])
      return FALSE;
  return TRUE;
}

gboolean
hy_parameter_set_data (hy_parameter *param, const hy_tensor *data,
    GError **error)
{
  if (!shape_fits (&param->shape, &data->shape)) {
    char want[HY_SHAPE_STRLEN], got[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE, "parameter '%s' has shape "
        "%s, data of shape %s does not fit it (0 marks a deferred "
        "dimension)", hy_parameter_name (param),
        hy_shape_format (&param->shape, want, sizeof want),
        hy_shape_format (&data->shape, got, sizeof got));
    return FALSE;
  }
  /* Same shape: write in place, so compiled plans that view the data
   * stay valid (they are rebuilt, having folded the old values in). */
  if (param->data && hy_shape_equal (&param->data->shape, &data->shape)) {
    memcpy (param->data->data, data->data, hy_tensor_nbytes (data));
  } else {
    hy_tensor_free (param->data);
    param->data = hy_tensor_copy (data);
  }
  param->shape = data->shape;
  param->init_pending = FALSE;
  hy_parameters_changed ();
  return TRUE;
}

/* MXNet's Initializer picks by name before applying the global rule. */
static hy_init
init_for_name (const char *name, hy_init global)
{
  static const char *const zero_suffixes[] = { "bias", "beta",
    "running_mean", "moving_mean", NULL };
  static const char *const one_suffixes[] = { "gamma", "running_var",
    "moving_var", NULL };
  for (int i = 0; zero_suffixes[i]; i++)
    if (g_str_has_suffix (name, zero_suffixes[i]))
      return hy_init_zeros ();
  for (int i = 0; one_suffixes[i]; i++)
    if (g_str_has_suffix (name, one_suffixes[i]))
      return hy_init_ones ();
  return global;
}

/* Allocates and fills a parameter whose shape is now complete. */
static gboolean
fill_pending (hy_parameter *p, GError **error)
{
  if (!p->data || !hy_shape_equal (&p->data->shape, &p->shape)) {
    hy_tensor_free (p->data);
    p->data = hy_tensor_new (&p->shape);
  }
  if (!hy_init_fill (&p->pending, p->data, error)) {
    g_prefix_error (error, "initialising parameter '%s': ",
        hy_parameter_name (p));
    return FALSE;
  }
  p->init_pending = FALSE;
  hy_parameters_changed ();
  return TRUE;
}

gboolean
hy_block_initialize (hy_block *block, hy_init init, GError **error)
{
  hy_init global = init.kind == HY_INIT_INHERIT ? hy_init_default () : init;
  int n;
  g_autofree hy_parameter **all = hy_block_collect_params (block, &n);
  for (int i = 0; i < n; i++) {
    hy_parameter *p = all[i];
    p->pending = p->init.kind != HY_INIT_INHERIT ? p->init
        : init_for_name (p->name, global);
    p->init_pending = TRUE;
    if (shape_complete (&p->shape) && !fill_pending (p, error))
      return FALSE;
  }
  return TRUE;
}

/* Deferred initialisation: complete the shapes from the inputs, then
 * fill what initialize() left pending. */
static gboolean
prepare_params (hy_F *F, hy_block *block, hy_value *const *inputs,
    int n_inputs)
{
  gboolean deferred = FALSE;
  for (guint i = 0; i < block->params->len; i++) {
    hy_parameter *p = g_ptr_array_index (block->params, i);
    deferred |= !p->data && !shape_complete (&p->shape);
  }
  if (deferred && block->infer_params) {
    hy_shape *shapes = g_newa (hy_shape, n_inputs + 1);
    for (int i = 0; i < n_inputs; i++)
      shapes[i] = *hy_value_known_shape (inputs[i]);
    block->infer_params (block, shapes, n_inputs);
  }
  for (guint i = 0; i < block->params->len; i++) {
    hy_parameter *p = g_ptr_array_index (block->params, i);
    if (p->data)
      continue;
    char buf[HY_SHAPE_STRLEN];
    if (!shape_complete (&p->shape)) {
      hy_F_failf (F, HY_ERROR_SHAPE, "parameter '%s' still has deferred "
          "shape %s at the first forward, and its block cannot infer it: "
          "give the full shape to hy_block_add_param", hy_parameter_name (p),
          hy_shape_format (&p->shape, buf, sizeof buf));
      return FALSE;
    }
    if (!p->init_pending) {
      hy_F_failf (F, HY_ERROR_MISSING, "parameter '%s' has not been "
          "initialised: call hy_block_initialize () or "
          "hy_block_load_parameters () before the first forward",
          hy_parameter_name (p));
      return FALSE;
    }
    GError *local = NULL;
    if (!fill_pending (p, &local)) {
      hy_F_fail (F, local);
      return FALSE;
    }
  }
  return TRUE;
}

/* ---- hybridize ---------------------------------------------------------- */

static void
drop_cache (hy_block *block)
{
  hy_cached_graph *c = block->cache;
  if (!c)
    return;
  hy_executor_free (c->exec);
  hy_model_free (c->model);
  g_free (c->feed_slot);
  g_free (c->feed);
  g_free (c);
  block->cache = NULL;
}

static void
set_hybridized (hy_block *block, gboolean on, hy_hybrid_flags flags,
    hy_device device, hy_backend_maker make, void *make_data)
{
  drop_cache (block);
  block->hybridized = on;
  /* Gluon: static_shape implies static_alloc. */
  block->flags = flags & HY_HYBRID_STATIC_SHAPE
      ? flags | HY_HYBRID_STATIC_ALLOC : flags;
  block->device = device;
  block->make_backend = make;
  block->make_backend_data = make_data;
  for (guint i = 0; i < block->children->len; i++)
    set_hybridized (g_ptr_array_index (block->children, i), on, flags,
        device, make, make_data);
}

static const hy_device cpu_device = { HY_DEVICE_CPU, 0 };

void
hy_block_hybridize (hy_block *block, hy_hybrid_flags flags)
{
  set_hybridized (block, TRUE, flags, cpu_device, NULL, NULL);
}

void
hy_block_hybridize_on (hy_block *block, hy_hybrid_flags flags,
    hy_device device)
{
  set_hybridized (block, TRUE, flags, device, NULL, NULL);
}

void
hy_block_hybridize_with (hy_block *block, hy_hybrid_flags flags,
    hy_backend_maker make, void *data)
{
  set_hybridized (block, TRUE, flags, cpu_device, make, data);
}

void
hy_block_dehybridize (hy_block *block)
{
  set_hybridized (block, FALSE, HY_HYBRID_DEFAULT, cpu_device, NULL, NULL);
}

/* An executor for a traced graph, on the block's device. */
static hy_executor *
new_executor (hy_block *block, const hy_model *model, GError **error)
{
  if (!block->make_backend)
    return hy_executor_new (model, block->device, HY_MODE_HYBRID, error);
  hy_backend *be = block->make_backend (block->make_backend_data, error);
  return be ? hy_executor_new_on (model, be, HY_MODE_HYBRID, error) : NULL;
}

gboolean
hy_block_is_hybridized (const hy_block *block)
{
  return block->hybridized;
}

static hy_param_list *
param_views (GPtrArray *params)
{
  hy_param_list *list = g_new0 (hy_param_list, 1);
  list->n = params->len;
  list->items = g_new0 (hy_param, MAX (params->len, 1));
  for (guint i = 0; i < params->len; i++) {
    hy_parameter *p = g_ptr_array_index (params, i);
    list->items[i] = (hy_param) {
      .name = g_strdup (hy_parameter_name (p)),
      .kind = HY_PARAM_ARG,
      .stored_dtype = HY_DTYPE_FLOAT32,
      .tensor = hy_tensor_new_view (&p->data->shape, p->data->data),
    };
  }
  return list;
}

/* Gluon names a single input "data", several "data0", "data1", … */
static char *
input_name (int i, int n)
{
  return n == 1 ? g_strdup ("data") : g_strdup_printf ("data%d", i);
}

static gboolean
build_cache (hy_block *block, const hy_shape *shapes, int n_inputs,
    GError **error)
{
  drop_cache (block);
  hy_F *F = hy_F_new_symbolic ();
  hy_value **in = g_newa (hy_value *, n_inputs);
  for (int i = 0; i < n_inputs; i++) {
    g_autofree char *name = input_name (i, n_inputs);
    in[i] = hy_F_input (F, name, &shapes[i]);
  }
  hy_value *out = hy_block_call (F, block, in, n_inputs);
  GPtrArray *params = NULL;
  hy_graph *graph = hy_F_finish_trace (F, out, &params, error);
  hy_F_free (F);
  if (!graph) {
    g_prefix_error (error, "hybridize: tracing block '%s': ",
        hy_block_prefix (block));
    return FALSE;
  }

  g_autofree char *source = g_strdup_printf ("hybridized block '%s'",
      hy_block_prefix (block));
  hy_param_list *views = param_views (params);
  g_ptr_array_unref (params);
  hy_model *model = hy_model_new_from_graph (graph, views, source, error);
  if (!model)
    return FALSE;
  hy_executor *exec = new_executor (block, model, error);
  if (!exec) {
    hy_model_free (model);
    return FALSE;
  }

  hy_cached_graph *c = g_new0 (hy_cached_graph, 1);
  c->model = model;
  c->exec = exec;
  c->param_generation = current_generation ();
  c->n_inputs = n_inputs;
  int n_fed = hy_model_n_inputs (model);
  c->feed_slot = g_new0 (int, MAX (n_fed, 1));
  c->feed = g_new0 (const hy_tensor *, MAX (n_fed, 1));
  /* An input the forward never reads is not a model input at all. */
  for (int i = 0; i < n_fed; i++) {
    const char *name = hy_model_input_name (model, i);
    c->feed_slot[i] = n_inputs == 1 ? 0 : atoi (name + strlen ("data"));
  }
  block->cache = c;
  return TRUE;
}

/* Runs the compiled graph, tracing first when there is none. */
static gboolean
run_cached (hy_block *block, const hy_tensor *const *inputs, int n_inputs,
    GError **error)
{
  if (!block->cache || block->cache->n_inputs != n_inputs) {
    hy_shape *shapes = g_newa (hy_shape, n_inputs);
    for (int i = 0; i < n_inputs; i++)
      shapes[i] = inputs[i]->shape;
    if (!build_cache (block, shapes, n_inputs, error))
      return FALSE;
  }
  hy_cached_graph *c = block->cache;
  if (c->param_generation != current_generation ()) {
    /* Plans fold parameters in: rebuild them from the new values. */
    hy_executor_free (c->exec);
    c->exec = new_executor (block, c->model, error);
    if (!c->exec) {
      drop_cache (block);
      return FALSE;
    }
    c->param_generation = current_generation ();
  }
  int n_fed = hy_model_n_inputs (c->model);
  for (int i = 0; i < n_fed; i++)
    c->feed[i] = inputs[c->feed_slot[i]];
  return hy_executor_forward (c->exec, c->feed, n_fed, error);
}

/* ---- calling blocks ------------------------------------------------------ */

/* A hybridized block called imperatively by a plain parent: its compiled
 * graph runs, and its outputs are copied into the parent's forward (the
 * executor's own are overwritten by its next run). */
static hy_value *
call_cached (hy_F *F, hy_block *block, hy_value *const *inputs, int n_inputs)
{
  const hy_tensor **tensors = g_newa (const hy_tensor *, n_inputs);
  for (int i = 0; i < n_inputs; i++) {
    tensors[i] = hy_value_data (inputs[i]);
    if (!tensors[i])
      return NULL;
  }
  GError *local = NULL;
  if (!run_cached (block, tensors, n_inputs, &local)) {
    hy_F_fail (F, local);
    return NULL;
  }
  hy_executor *exec = block->cache->exec;
  int n_out = hy_executor_n_outputs (exec);
  hy_value **outs = g_newa (hy_value *, n_out);
  for (int h = 0; h < n_out; h++)
    outs[h] = hy_F_adopt (F, hy_tensor_copy (hy_executor_output (exec, h)));
  return n_out == 1 ? outs[0] : hy_F_group (F, outs, n_out);
}

hy_value *
hy_block_call (hy_F *F, hy_block *block, hy_value *const *inputs,
    int n_inputs)
{
  if (hy_F_failed (F))
    return NULL;
  if (!block) {
    hy_F_failf (F, HY_ERROR_INVALID, "called a NULL block (a misspelt "
        "child name?)");
    return NULL;
  }
  for (int i = 0; i < n_inputs; i++) {
    if (!inputs[i]) {
      hy_F_failf (F, HY_ERROR_INVALID, "block '%s': input %d is NULL",
          hy_block_prefix (block), i);
      return NULL;
    }
  }
  if (hy_F_is_symbolic (F) && !block->hybrid) {
    hy_F_failf (F, HY_ERROR_INVALID, "block '%s' is a plain block, called "
        "while tracing a hybrid block: every block a hybrid block calls "
        "must be hybrid too (use hy_hybrid_sequential_new, not "
        "hy_sequential_new, and hy_hybrid_block_new for your own)",
        hy_block_prefix (block));
    return NULL;
  }
  if (!hy_F_is_symbolic (F) && block->hybrid && block->hybridized)
    return call_cached (F, block, inputs, n_inputs);

  if (!prepare_params (F, block, inputs, n_inputs))
    return NULL;
  int n_params = (int) block->params->len;
  hy_value **params = g_newa (hy_value *, n_params + 1);
  for (int i = 0; i < n_params; i++) {
    hy_parameter *param = g_ptr_array_index (block->params, i);
    params[i] = hy_F_param (F, param, hy_parameter_name (param));
  }
  char *saved = hy_F_push_scope (F, hy_block_prefix (block));
  hy_value *out = block->forward (block, F, inputs, n_inputs, params);
  hy_F_pop_scope (F, saved);
  if (!out && !hy_F_failed (F))
    hy_F_failf (F, HY_ERROR_INVALID, "the forward of block '%s' returned "
        "NULL without an error", hy_block_prefix (block));
  return hy_F_failed (F) ? NULL : out;
}

hy_value *
hy_F_call_n (hy_F *F, hy_block *block, hy_value *const *inputs, int n_inputs)
{
  return hy_block_call (F, block, inputs, n_inputs);
}

hy_value *
hy_F_call (hy_F *F, hy_block *block, hy_value *x)
{
  return hy_block_call (F, block, &x, 1);
}

hy_value *
hy_F_call_child (hy_F *F, hy_block *self, const char *child, hy_value *x)
{
  hy_block *c = hy_block_child (self, child);
  if (!c && !hy_F_failed (F)) {
    hy_F_failf (F, HY_ERROR_INVALID, "block '%s' has no child '%s'",
        hy_block_prefix (self), child);
    return NULL;
  }
  return hy_block_call (F, c, &x, 1);
}

/* ---- forward ------------------------------------------------------------ */

static const hy_tensor *
forward_imperative (hy_block *block, const hy_tensor *const *inputs,
    int n_inputs, GError **error)
{
  if (!block->imperative
      && !(block->imperative = hy_backend_new (cpu_device, 0, error)))
    return NULL;
  hy_F *F = hy_F_new_imperative (block->imperative);
  hy_value **in = g_newa (hy_value *, n_inputs);
  for (int i = 0; i < n_inputs; i++)
    in[i] = hy_F_wrap (F, inputs[i]);
  hy_value *out = hy_block_call (F, block, in, n_inputs);
  for (int h = 0; out && !hy_F_failed (F) && h < hy_value_n_members (out);
      h++) {
    hy_tensor *t = hy_value_take_tensor (hy_value_member (out, h));
    if (!t) {
      hy_F_failf (F, HY_ERROR_INVALID, "output %d of block '%s' holds no "
          "tensor", h, hy_block_prefix (block));
      break;
    }
    g_ptr_array_add (block->owned_outputs, t);
    g_ptr_array_add (block->outputs, t);
  }
  gboolean ok = !hy_F_failed (F);
  hy_F_take_error (F, error);
  hy_F_free (F);
  if (!ok) {
    clear_outputs (block);
    return NULL;
  }
  return g_ptr_array_index (block->outputs, 0);
}

const hy_tensor *
hy_block_forward_n (hy_block *block, const hy_tensor *const *inputs,
    int n_inputs, GError **error)
{
  clear_outputs (block);
  if (n_inputs < 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "block '%s': a forward "
        "needs at least one input", hy_block_prefix (block));
    return NULL;
  }
  for (int i = 0; i < n_inputs; i++) {
    if (!inputs[i] || inputs[i]->shape.ndim < 0) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "block '%s': input %d "
          "is %s", hy_block_prefix (block), i,
          inputs[i] ? "a tensor without a shape" : "NULL");
      return NULL;
    }
  }
  if (!(block->hybrid && block->hybridized))
    return forward_imperative (block, inputs, n_inputs, error);

  if (!run_cached (block, inputs, n_inputs, error))
    return NULL;
  hy_executor *exec = block->cache->exec;
  for (int h = 0; h < hy_executor_n_outputs (exec); h++)
    g_ptr_array_add (block->outputs, (gpointer) hy_executor_output (exec, h));
  return g_ptr_array_index (block->outputs, 0);
}

const hy_tensor *
hy_block_forward (hy_block *block, const hy_tensor *input, GError **error)
{
  return hy_block_forward_n (block, &input, 1, error);
}

int
hy_block_n_outputs (const hy_block *block)
{
  return (int) block->outputs->len;
}

const hy_tensor *
hy_block_output (const hy_block *block, int i)
{
  if (i < 0 || i >= (int) block->outputs->len)
    return NULL;
  return g_ptr_array_index (block->outputs, i);
}
