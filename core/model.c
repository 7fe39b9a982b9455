/*
 * model.c — a loaded model: the resolved graph with its parameters bound to
 * its variables, and the data inputs the caller must feed.
 */
#include <errno.h>
#include <string.h>

#include <gio/gio.h>

#include "core/model-impl.h"
#include "core/io/file-read.h"
#include "core/io/format-sniff.h"
#include "core/io/onnx-import.h"
#include "hybrid-npy.h"

#define SYMBOL_SUFFIX "-symbol.json"

char *
hy_model_find_params (const char *symbol_path, GError **error)
{
  if (!g_str_has_suffix (symbol_path, SYMBOL_SUFFIX)) {
    g_set_error (error, HY_ERROR, HY_ERROR_MISSING,
        "%s: name does not end in '%s', so no params file can be found "
        "beside it; give the params file explicitly", symbol_path,
        SYMBOL_SUFFIX);
    return NULL;
  }
  g_autofree char *dir = g_path_get_dirname (symbol_path);
  g_autofree char *base = g_path_get_basename (symbol_path);
  base[strlen (base) - strlen (SYMBOL_SUFFIX)] = '\0';

  g_autoptr (GDir) d = g_dir_open (dir, 0, error);
  if (!d)
    return NULL;
  size_t blen = strlen (base);
  int best = -1;
  const char *entry;
  while ((entry = g_dir_read_name (d))) {
    /* prefix-NNNN.params: exactly four digits, as export() writes. */
    if (strncmp (entry, base, blen) || entry[blen] != '-')
      continue;
    const char *num = entry + blen + 1;
    if (strlen (num) != 4 + strlen (".params") || strcmp (num + 4, ".params"))
      continue;
    if (!g_ascii_isdigit (num[0]) || !g_ascii_isdigit (num[1])
        || !g_ascii_isdigit (num[2]) || !g_ascii_isdigit (num[3]))
      continue;
    int epoch = atoi (num);
    if (epoch > best)
      best = epoch;
  }
  if (best < 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_MISSING,
        "%s: no params file '%s-NNNN.params' beside it", symbol_path, base);
    return NULL;
  }
  g_autofree char *name = g_strdup_printf ("%s-%04d.params", base, best);
  return g_build_filename (dir, name, NULL);
}

/* Parameter slots: a variable feeding one of these is a weight, so leaving
 * it unbound is a missing parameter, not a data input. */
static gboolean
is_param_slot (const char *input_name)
{
  static const char *const slots[] = { "weight", "bias", "gamma", "beta",
    "moving_mean", "moving_var",
    /* an int8 dense layer's quantized weights' ranges (in the params) */
    "min_weight", "max_weight", "min_bias", "max_bias", NULL };
  for (int i = 0; slots[i]; i++)
    if (!strcmp (input_name, slots[i]))
      return TRUE;
  return FALSE;
}

/* How variable `v` is used: as an aux state, as a parameter slot, at all. */
static void
variable_usage (const hy_graph *g, guint v, gboolean *aux, gboolean *param,
    gboolean *used, const char **consumer, const char **slot)
{
  *aux = *param = *used = FALSE;
  for (guint i = v + 1; i < hy_graph_n_nodes (g); i++) {
    const hy_node *n = hy_graph_node (g, i);
    if (!n->op)
      continue;
    for (guint k = 0; k < n->n_inputs; k++) {
      if (n->inputs[k].node != v)
        continue;
      int n_in = (int) n->n_inputs;
      static char buf[32];
      const char *name = hy_op_input_name (n->op, n->params, k, buf,
          sizeof buf);
      if ((int) k >= n_in - n->op->def->n_aux)
        *aux = TRUE;
      if (is_param_slot (name))
        *param = TRUE;
      if (k >= 32 || !(n->op->def->unused_inputs & (1u << k)))
        *used = TRUE;
      *consumer = n->name;
      *slot = name;
    }
  }
  for (guint h = 0; h < g->n_heads; h++)
    if (g->heads[h].node == v)
      *used = TRUE;
}

/* __shape__ written by Gluon: 0 marks a dimension deferred to the data. */
static gboolean
declared_shape (const hy_node *var, hy_shape *out, gboolean *complete)
{
  const char *s = hy_attr_string (var->attrs, "__shape__");
  hy_tuple t;
  if (!s || !hy_parse_tuple (s, &t, FALSE) || t.n > HY_MAX_DIMS)
    return FALSE;
  *complete = TRUE;
  out->ndim = t.n;
  for (int i = 0; i < t.n; i++) {
    out->dims[i] = t.v[i];
    if (t.v[i] <= 0)
      *complete = FALSE;
  }
  return TRUE;
}

/* MXNet marks a dimension left to the data 0 (legacy files) or -1 (numpy
 * shapes); any other negative size is corrupt, and must be named as such
 * rather than read as "no shape" later. */
static gboolean
check_declared_dims (const hy_node *var, const hy_shape *decl,
    GError **error)
{
  for (int d = 0; d < decl->ndim; d++) {
    if (decl->dims[d] < -1) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "variable '%s': __shape__ '%s' has dimension %d = %" G_GINT64_FORMAT
          ", a negative size (only 0 or -1 may mark a dimension the data "
          "gives)", var->name, hy_attr_string (var->attrs, "__shape__"), d,
          (gint64) decl->dims[d]);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
bind_variables (hy_model *m, gboolean graph_only, GError **error)
{
  hy_graph *g = m->graph;
  m->inputs = g_array_new (FALSE, FALSE, sizeof (guint));
  GArray *shapes = g_array_new (FALSE, FALSE, sizeof (hy_shape));

  for (guint i = 0; i < hy_graph_n_nodes (g); i++) {
    hy_node *v = hy_graph_node (g, i);
    if (v->op || strcmp (v->op_name, "null"))
      continue;
    gboolean aux, param, used;
    const char *consumer = NULL, *slot = NULL;
    variable_usage (g, i, &aux, &param, &used, &consumer, &slot);
    const hy_param *p = m->params ? hy_param_list_find (m->params, v->name)
        : NULL;
    hy_shape decl;
    gboolean complete = FALSE;
    gboolean has_decl = declared_shape (v, &decl, &complete);
    if (has_decl && !check_declared_dims (v, &decl, error)) {
      g_array_unref (shapes);
      return FALSE;
    }

    if (p && p->tensor->shape.ndim < 0) {
      g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
          "parameter '%s' is an empty array in %s", v->name,
          m->params_path);
      g_array_unref (shapes);
      return FALSE;
    }
    if (p) {
      if (has_decl && complete && !hy_shape_equal (&decl, &p->tensor->shape)) {
        char a[HY_SHAPE_STRLEN], b[HY_SHAPE_STRLEN];
        g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
            "parameter '%s': the symbol file declares shape %s but the "
            "params file holds %s", v->name,
            hy_shape_format (&decl, a, sizeof a),
            hy_shape_format (&p->tensor->shape, b, sizeof b));
        g_array_unref (shapes);
        return FALSE;
      }
      v->value = p->tensor;
      v->var_kind = aux ? HY_VAR_AUX : HY_VAR_ARG;
      v->shapes[0] = p->tensor->shape;
    } else if ((aux || (param && used)) && graph_only) {
      /* No weights: the shape the symbol declares, else the one its
       * reader infers (core/shape-learn.h). */
      v->var_kind = aux ? HY_VAR_AUX : HY_VAR_ARG;
      v->shapes[0] = has_decl && complete ? decl : (hy_shape) { .ndim = -1 };
    } else if (aux || (param && used)) {
      g_set_error (error, HY_ERROR, HY_ERROR_MISSING,
          "parameter '%s' (input '%s' of node '%s') is not in %s",
          v->name, slot, consumer,
          m->params_path ? m->params_path : "any params file (none found)");
      g_array_unref (shapes);
      return FALSE;
    } else if (!used) {
      v->var_kind = HY_VAR_UNUSED;
    } else {
      v->var_kind = HY_VAR_INPUT;
      hy_shape s = { .ndim = -1 };
      if (has_decl && complete)
        s = decl;
      v->shapes[0] = s;
      g_array_append_val (m->inputs, i);
      g_array_append_val (shapes, s);
    }
  }
  m->input_shapes = (hy_shape *) g_array_free (shapes, FALSE);
  return TRUE;
}

/* Node shapes for the declared input shapes, when every input declares
 * one: what inspection shows without being given shapes.  A failure is
 * not the load's: it is reported where shapes are asked for (a hy_shapes,
 * an executor), naming the node. */
static void
infer_declared_shapes (hy_model *m)
{
  for (int i = 0; i < hy_model_n_inputs (m); i++)
    if (m->input_shapes[i].ndim < 0)
      return;
  m->shapes_valid = hy_graph_infer_shapes (m->graph, NULL);
}

/* Whether `path` holds an ONNX model, by its first bytes (or its name);
 * FALSE for anything unreadable, which the symbol reader then reports. */
static gboolean
is_onnx (const char *path)
{
  g_autoptr (hy_file) file = hy_file_open (path, "model", NULL);
  char head[32];
  gsize n = file ? MIN (hy_file_size (file), sizeof head) : 0;
  if (!file || !hy_file_read_at (file, head, n, 0, NULL))
    return FALSE;
  return hy_sniff_onnx (head, n, path);
}

/* An ONNX file carries graph and weights together. */
static hy_model *
onnx_model_load (const char *path, const char *params_path, GError **error)
{
  if (params_path) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "%s is an ONNX model, which holds its weights: give no params "
        "file (%s)", path, params_path);
    return NULL;
  }
  hy_graph *graph;
  hy_param_list *params;
  if (!hy_onnx_load (path, &graph, &params, error))
    return NULL;
  return hy_model_new_from_graph (graph, params, path, error);
}

static hy_model *
model_load (const char *symbol_path, const char *params_path,
    GPtrArray *unsupported, gboolean graph_only, GError **error)
{
  if (is_onnx (symbol_path)) {
    if (graph_only) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "%s is an ONNX model, which holds its weights: load it whole",
          symbol_path);
      return NULL;
    }
    return onnx_model_load (symbol_path, params_path, error);
  }
  hy_model *m = g_new0 (hy_model, 1);
  m->symbol_path = g_strdup (symbol_path);
  m->graph = hy_symbol_json_load (symbol_path, error);
  if (!m->graph)
    goto fail;
  if (!hy_graph_resolve (m->graph, unsupported, error)) {
    g_prefix_error (error, "%s: ", symbol_path);
    goto fail;
  }
  m->weightless = graph_only;   /* no params file is looked for or read */
  if (params_path && !graph_only) {
    m->params_path = g_strdup (params_path);
  } else if (!graph_only) {
    GError *local = NULL;
    m->params_path = hy_model_find_params (symbol_path, &local);
    /* No params file is fine for a weightless graph; bind_variables
     * reports any parameter that then turns out to be missing. */
    g_clear_error (&local);
  }
  if (m->params_path) {
    m->params = hy_params_load (m->params_path, error);
    if (!m->params)
      goto fail;
  }
  if (!bind_variables (m, graph_only, error)
      || !hy_graph_infer_dtypes (m->graph, error)) {
    g_prefix_error (error, "%s: ", symbol_path);
    goto fail;
  }
  infer_declared_shapes (m);
  return m;

fail:
  hy_model_free (m);
  return NULL;
}

hy_model *
hy_model_load (const char *symbol_path, const char *params_path,
    GError **error)
{
  return model_load (symbol_path, params_path, NULL, FALSE, error);
}

hy_model *
hy_model_new_from_graph (hy_graph *graph, hy_param_list *params,
    const char *source, GError **error)
{
  hy_model *m = g_new0 (hy_model, 1);
  m->symbol_path = g_strdup (source);
  m->graph = graph;
  m->params = params;
  if (!bind_variables (m, FALSE, error)
      || !hy_graph_infer_dtypes (m->graph, error)) {
    g_prefix_error (error, "%s: ", source);
    hy_model_free (m);
    return NULL;
  }
  infer_declared_shapes (m);
  return m;
}

static hy_model *
load_for_inspection (const char *symbol_path, const char *params_path,
    gboolean graph_only, char ***unsupported, GError **error)
{
  GPtrArray *list = g_ptr_array_new ();
  hy_model *m = model_load (symbol_path, params_path, list, graph_only,
      error);
  if (m && list->len > 0) {
    g_ptr_array_add (list, NULL);
    *unsupported = (char **) g_ptr_array_free (list, FALSE);
  } else {
    *unsupported = NULL;
    g_ptr_array_set_free_func (list, g_free);
    g_ptr_array_unref (list);
  }
  return m;
}

hy_model *
hy_model_load_for_inspection (const char *symbol_path,
    const char *params_path, char ***unsupported, GError **error)
{
  return load_for_inspection (symbol_path, params_path, FALSE, unsupported,
      error);
}

hy_model *
hy_model_load_graph_only (const char *symbol_path, char ***unsupported,
    GError **error)
{
  return load_for_inspection (symbol_path, NULL, TRUE, unsupported, error);
}

gboolean
hy_model_is_weightless (const hy_model *model)
{
  return model->weightless;
}

void
hy_model_free (hy_model *model)
{
  if (!model)
    return;
  hy_graph_free (model->graph);
  hy_param_list_free (model->params);
  if (model->inputs)
    g_array_unref (model->inputs);
  g_free (model->input_shapes);
  g_free (model->symbol_path);
  g_free (model->params_path);
  g_free (model);
}

const char *
hy_model_symbol_path (const hy_model *model)
{
  return model->symbol_path;
}

const char *
hy_model_params_path (const hy_model *model)
{
  return model->params_path;
}

int
hy_model_n_inputs (const hy_model *model)
{
  return (int) model->inputs->len;
}

static hy_node *
input_node (const hy_model *model, int i)
{
  return hy_graph_node (model->graph, g_array_index (model->inputs, guint, i));
}

const char *
hy_model_input_name (const hy_model *model, int i)
{
  if (i < 0 || i >= hy_model_n_inputs (model))
    return NULL;
  return input_node (model, i)->name;
}

hy_shape
hy_model_input_shape (const hy_model *model, int i)
{
  hy_shape none = { .ndim = -1 };
  if (i < 0 || i >= hy_model_n_inputs (model))
    return none;
  return model->input_shapes[i];
}

int
hy_model_input_index (const hy_model *model, const char *name)
{
  for (int i = 0; i < hy_model_n_inputs (model); i++)
    if (!strcmp (input_node (model, i)->name, name))
      return i;
  return -1;
}

int
hy_model_n_outputs (const hy_model *model)
{
  return (int) model->graph->n_heads;
}

hy_shape
hy_model_output_shape (const hy_model *model, int i)
{
  hy_shape none = { .ndim = -1 };
  if (!model->shapes_valid || i < 0 || i >= hy_model_n_outputs (model))
    return none;
  const hy_entry *e = &model->graph->heads[i];
  return hy_graph_node (model->graph, e->node)->shapes[e->index];
}

const char *
hy_model_output_name (const hy_model *model, int i)
{
  if (i < 0 || i >= hy_model_n_outputs (model))
    return NULL;
  return hy_graph_node (model->graph, model->graph->heads[i].node)->name;
}

gint64
hy_model_param_count (const hy_model *model)
{
  gint64 n = 0;
  for (guint i = 0; i < hy_graph_n_nodes (model->graph); i++) {
    const hy_node *v = hy_graph_node (model->graph, i);
    if (v->value)
      n += hy_shape_numel (&v->value->shape);
  }
  return n;
}

gint64
hy_model_param_bytes (const hy_model *model)
{
  return hy_model_param_count (model) * (gint64) sizeof (float);
}

int
hy_model_n_nodes (const hy_model *model)
{
  return (int) hy_graph_n_nodes (model->graph);
}

static const char *
kind_name (const hy_node *n)
{
  switch (n->var_kind) {
    case HY_VAR_INPUT: return "input";
    case HY_VAR_ARG: return "param";
    case HY_VAR_AUX: return "aux";
    case HY_VAR_UNUSED: return "unused";
    case HY_VAR_NONE: break;
  }
  return "op";
}

gboolean
hy_model_node (const hy_model *model, int i, hy_node_desc *out)
{
  if (i < 0 || i >= hy_model_n_nodes (model))
    return FALSE;
  const hy_node *n = hy_graph_node (model->graph, i);
  gboolean variable = !strcmp (n->op_name, "null");
  out->name = n->name;
  out->op = n->op ? n->op->name : n->op_name;
  out->kind = variable ? kind_name (n) : "op";
  out->supported = variable || n->op != NULL;
  out->n_inputs = (int) n->n_inputs;
  out->n_outputs = (int) n->n_outputs;
  out->shapes = n->shapes;
  return TRUE;
}

const char *
hy_model_node_input (const hy_model *model, int i, int k, int *output_index)
{
  if (i < 0 || i >= hy_model_n_nodes (model))
    return NULL;
  const hy_node *n = hy_graph_node (model->graph, i);
  if (k < 0 || k >= (int) n->n_inputs)
    return NULL;
  if (output_index)
    *output_index = (int) n->inputs[k].index;
  return hy_graph_node (model->graph, n->inputs[k].node)->name;
}

gboolean
hy_model_export (const hy_model *model, const char *prefix, int epoch,
    GError **error)
{
  if (epoch < 0 || epoch > 9999) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "epoch %d is outside 0..9999", epoch);
    return FALSE;
  }
  g_autofree char *sym = g_strdup_printf ("%s-symbol.json", prefix);
  g_autofree char *par = g_strdup_printf ("%s-%04d.params", prefix, epoch);
  if (!hy_symbol_json_save (model->graph, sym, error))
    return FALSE;

  /* Only what the graph binds, with export()'s arg:/aux: keys. */
  GArray *items = g_array_new (FALSE, TRUE, sizeof (hy_param));
  for (guint i = 0; i < hy_graph_n_nodes (model->graph); i++) {
    const hy_node *v = hy_graph_node (model->graph, i);
    if (!v->value)
      continue;
    hy_param p = {
      .name = v->name,
      .kind = v->var_kind == HY_VAR_AUX ? HY_PARAM_AUX : HY_PARAM_ARG,
      .stored_dtype = HY_DTYPE_FLOAT32,
      .tensor = v->value,
    };
    g_array_append_val (items, p);
  }
  hy_param_list list = { (hy_param *) items->data, items->len };
  gboolean ok = hy_params_save (&list, par, error);
  g_array_unref (items);
  return ok;
}
