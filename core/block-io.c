/*
 * block-io.c — blocks and files: export (Gluon's HybridBlock.export),
 * imports (SymbolBlock.imports) and save/load_parameters.
 *
 * An imported model becomes an ordinary hybrid block whose forward replays
 * the loaded graph through F, node by node.  So it runs imperatively (each
 * op at once, every value inspectable), hybridizes into the same compiled
 * plan as anything else, and can be a child of a block of your own.
 */
#include <string.h>

#include "core/block-impl.h"
#include "core/model-impl.h"

/* ---- export ------------------------------------------------------------- */

gboolean
hy_block_export (hy_block *block, const char *prefix, int epoch,
    GError **error)
{
  if (!block->hybrid || !block->cache) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "block '%s' has no "
        "traced graph to export: %s", hy_block_prefix (block),
        block->hybrid ? "call hy_block_hybridize () and run a forward first, "
        "as Gluon's export asks" : "it is a plain block; only hybrid blocks "
        "can be exported");
    return FALSE;
  }
  /* The model binds views of the parameters: it writes their values now. */
  return hy_model_export (block->cache->model, prefix, epoch, error);
}

/* ---- imports ------------------------------------------------------------ */

typedef struct imported {
  hy_model *model;
  int *slot;                    /* per node: its parameter, or its input,
                                 * index; -1 for other variables */
} imported;

static void
imported_free (imported *im)
{
  hy_model_free (im->model);
  g_free (im->slot);
  g_free (im);
}

/* A node's attributes as the key, value, …, NULL list F takes. */
static const char **
attr_list (GHashTable *attrs)
{
  guint n = attrs ? g_hash_table_size (attrs) : 0;
  const char **list = g_new0 (const char *, 2 * n + 1);
  if (!attrs)
    return list;
  GHashTableIter it;
  gpointer k, v;
  int i = 0;
  g_hash_table_iter_init (&it, attrs);
  while (g_hash_table_iter_next (&it, &k, &v)) {
    list[i++] = k;
    list[i++] = v;
  }
  return list;
}

static hy_value *
imported_forward (hy_block *self, hy_F *F, hy_value *const *inputs,
    int n_inputs, hy_value *const *params)
{
  imported *im = hy_block_get_user_data (self);
  hy_graph *g = im->model->graph;
  if (n_inputs != hy_model_n_inputs (im->model)) {
    hy_F_failf (F, HY_ERROR_INVALID, "the imported model %s takes %d "
        "input(s), %d given", hy_model_symbol_path (im->model),
        hy_model_n_inputs (im->model), n_inputs);
    return NULL;
  }
  guint n = hy_graph_n_nodes (g);
  hy_value ***values = g_new0 (hy_value **, MAX (n, 1));
  for (guint i = 0; i < n && !hy_F_failed (F); i++) {
    hy_node *node = hy_graph_node (g, i);
    values[i] = g_new0 (hy_value *, MAX (node->n_outputs, 1));
    if (!node->op) {
      switch (node->var_kind) {
        case HY_VAR_INPUT:
          values[i][0] = inputs[im->slot[i]];
          break;
        case HY_VAR_ARG:
        case HY_VAR_AUX:
          values[i][0] = params[im->slot[i]];
          break;
        default:
          values[i][0] = hy_F_placeholder (F, node->name);
      }
      continue;
    }
    hy_value **in = g_newa (hy_value *, node->n_inputs + 1);
    for (guint k = 0; k < node->n_inputs; k++)
      in[k] = values[node->inputs[k].node][node->inputs[k].index];
    g_autofree const char **attrs = attr_list (node->attrs);
    hy_F_invoke (F, node->op->name, in, (int) node->n_inputs, attrs,
        node->name, values[i], (int) node->n_outputs);
  }
  hy_value *out = NULL;
  if (!hy_F_failed (F)) {
    hy_value **heads = g_newa (hy_value *, g->n_heads);
    for (guint h = 0; h < g->n_heads; h++)
      heads[h] = values[g->heads[h].node][g->heads[h].index];
    out = g->n_heads == 1 ? heads[0] : hy_F_group (F, heads, (int) g->n_heads);
  }
  for (guint i = 0; i < n; i++)
    g_free (values[i]);
  g_free (values);
  return out;
}

hy_block *
hy_block_imports (const char *symbol_path, const char *params_path,
    GError **error)
{
  hy_model *model = hy_model_load (symbol_path, params_path, error);
  if (!model)
    return NULL;
  hy_block *b = hy_block_new_full ("symbolblock", imported_forward, NULL,
      TRUE);
  b->keeps_names = TRUE;
  imported *im = g_new0 (imported, 1);
  im->model = model;
  hy_graph *g = model->graph;
  im->slot = g_new (int, MAX (hy_graph_n_nodes (g), 1));
  for (guint i = 0; i < hy_graph_n_nodes (g); i++) {
    hy_node *node = hy_graph_node (g, i);
    im->slot[i] = -1;
    if (node->var_kind == HY_VAR_INPUT) {
      im->slot[i] = hy_model_input_index (model, node->name);
    } else if (node->value) {
      im->slot[i] = hy_block_n_params (b);
      hy_parameter *p = hy_block_add_param (b, node->name,
          node->value->shape.ndim, node->value->shape.dims,
          hy_init_inherit ());
      p->data = hy_tensor_copy (node->value);
    }
  }
  hy_block_set_user_data (b, im, (GDestroyNotify) imported_free);
  return b;
}

/* ---- save / load parameters --------------------------------------------- */

/* Gluon's _collect_params_with_prefix: "conv1.weight", "0.bias". */
static void
collect_structural (hy_block *block, const char *prefix, GPtrArray *names,
    GPtrArray *params)
{
  for (int i = 0; i < hy_block_n_params (block); i++) {
    hy_parameter *p = hy_block_param (block, i);
    g_ptr_array_add (names, g_strconcat (prefix, p->name, NULL));
    g_ptr_array_add (params, p);
  }
  for (int i = 0; i < hy_block_n_children (block); i++) {
    hy_block *c = hy_block_nth_child (block, i);
    g_autofree char *sub = g_strconcat (prefix, c->child_name, ".", NULL);
    collect_structural (c, sub, names, params);
  }
}

gboolean
hy_block_save_parameters (hy_block *block, const char *path, GError **error)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) params = g_ptr_array_new ();
  collect_structural (block, "", names, params);
  g_autofree hy_param *items = g_new0 (hy_param, MAX (params->len, 1));
  for (guint i = 0; i < params->len; i++) {
    hy_parameter *p = g_ptr_array_index (params, i);
    if (!p->data) {
      g_set_error (error, HY_ERROR, HY_ERROR_MISSING, "%s: parameter '%s' "
          "(%s) has not been initialised, so there is nothing to save",
          path, (char *) g_ptr_array_index (names, i),
          hy_parameter_name (p));
      return FALSE;
    }
    items[i] = (hy_param) {
      .name = g_ptr_array_index (names, i),
      .kind = HY_PARAM_PLAIN,
      .stored_dtype = HY_DTYPE_FLOAT32,
      .tensor = p->data,
    };
  }
  hy_param_list list = { items, params->len };
  return hy_params_save (&list, path, error);
}

/* The file's array for each parameter, by structural name or, for an
 * export's file, by full name; NULL where there is none. */
static const hy_param **
match_arrays (const hy_param_list *file, GPtrArray *names, GPtrArray *params,
    gboolean by_full_name)
{
  const hy_param **found = g_new0 (const hy_param *, MAX (params->len, 1));
  for (guint i = 0; i < params->len; i++) {
    const char *want = by_full_name
        ? hy_parameter_name (g_ptr_array_index (params, i))
        : g_ptr_array_index (names, i);
    for (guint k = 0; k < file->n; k++) {
      const hy_param *a = &file->items[k];
      if ((a->kind == HY_PARAM_PLAIN || by_full_name)
          && !strcmp (a->name, want))
        found[i] = a;
    }
  }
  return found;
}

static guint
count_found (const hy_param **found, guint n)
{
  guint c = 0;
  for (guint i = 0; i < n; i++)
    c += found[i] != NULL;
  return c;
}

gboolean
hy_block_load_parameters (hy_block *block, const char *path, GError **error)
{
  hy_param_list *file = hy_params_load (path, error);
  if (!file)
    return FALSE;
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) params = g_ptr_array_new ();
  collect_structural (block, "", names, params);
  g_autofree const hy_param **found = match_arrays (file, names, params,
      FALSE);
  gboolean by_full_name = FALSE;
  if (count_found (found, params->len) == 0 && file->n > 0) {
    g_free (found);
    found = match_arrays (file, names, params, TRUE);
    by_full_name = TRUE;
  }

  gboolean ok = TRUE;
  for (guint i = 0; i < params->len && ok; i++) {
    if (found[i])
      continue;
    hy_parameter *p = g_ptr_array_index (params, i);
    g_set_error (error, HY_ERROR, HY_ERROR_MISSING, "%s: parameter '%s' "
        "is not in the file (looked for '%s')", path, hy_parameter_name (p),
        by_full_name ? hy_parameter_name (p)
        : (char *) g_ptr_array_index (names, i));
    ok = FALSE;
  }
  for (guint k = 0; k < file->n && ok; k++) {
    gboolean used = FALSE;
    for (guint i = 0; i < params->len && !used; i++)
      used = found[i] == &file->items[k];
    if (!used) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "%s: the file holds "
          "'%s', which is not a parameter of block '%s'", path,
          file->items[k].name, hy_block_prefix (block));
      ok = FALSE;
    }
  }
  for (guint i = 0; i < params->len && ok; i++) {
    ok = hy_parameter_set_data (g_ptr_array_index (params, i),
        found[i]->tensor, error);
    if (!ok)
      g_prefix_error (error, "%s: ", path);
  }
  hy_param_list_free (file);
  return ok;
}
