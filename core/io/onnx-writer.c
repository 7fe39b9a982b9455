/*
 * onnx-writer.c — the building blocks the ONNX writer's op table
 * (onnx-write-ops.c, onnx-write-select.c) and its graph (onnx-write.c)
 * share: strings and protos owned by the writer, tensors and constants,
 * the current node's input and output names, nodes and their attributes,
 * and refusals naming the node.  It knows no op and no file.
 */
#include <stdarg.h>
#include <string.h>

#include "core/io/onnx-write.h"
#include "core/io/onnx-tensor.h"
#include "core/model-impl.h"

char *
hy_onnx_w_strdup (hy_onnx_writer *w, const char *s)
{
  char *copy = g_strdup (s);
  g_ptr_array_add (w->owned, copy);
  return copy;
}

gpointer
hy_onnx_w_alloc (hy_onnx_writer *w, gsize size)
{
  gpointer p = g_malloc0 (MAX (size, 1));
  g_ptr_array_add (w->owned, p);
  return p;
}

static const hy_node *
current (hy_onnx_writer *w)
{
  return hy_graph_node (w->graph, w->node);
}

gboolean
hy_onnx_w_refuse (hy_onnx_writer *w, GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *what = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  const hy_node *n = current (w);
  g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
      "%s: node '%s' (%s): %s", w->source, n->name,
      n->op ? n->op->name : n->op_name, what);
  return FALSE;
}

/* ---- tensors ---------------------------------------------------------- */

static Onnx__TensorProto *
new_tensor (hy_onnx_writer *w, const char *name, const gint64 *dims,
    int ndim, int data_type)
{
  Onnx__TensorProto *t = hy_onnx_w_alloc (w, sizeof *t);
  *t = (Onnx__TensorProto) ONNX__TENSOR_PROTO__INIT;
  t->name = hy_onnx_w_strdup (w, name);
  t->n_dims = (size_t) ndim;
  t->dims = hy_onnx_w_alloc (w, MAX (ndim, 1) * sizeof (int64_t));
  for (int d = 0; d < ndim; d++)
    t->dims[d] = dims[d];
  t->has_data_type = TRUE;
  t->data_type = data_type;
  g_ptr_array_add (w->inits, t);
  return t;
}

/* Weight variable `i` of the graph as an initializer, the first time a
 * node reads it: its floats are packed from where they lie. */
void
hy_onnx_w_weight (hy_onnx_writer *w, guint i)
{
  const hy_node *v = hy_graph_node (w->graph, i);
  gpointer key = GUINT_TO_POINTER (i + 1);
  if (!v->value || g_hash_table_contains (w->init_done, key))
    return;
  g_hash_table_add (w->init_done, key);
  const hy_tensor *value = v->value;
  Onnx__TensorProto *t = new_tensor (w, w->names[i][0], value->shape.dims,
      value->shape.ndim, ONNX_FLOAT);
  t->has_raw_data = TRUE;
  t->raw_data.len = (size_t) hy_shape_numel (&value->shape) * sizeof (float);
  t->raw_data.data = (uint8_t *) value->data;
}

const char *
hy_onnx_w_const_floats (hy_onnx_writer *w, const char *what,
    const hy_shape *shape, const float *values)
{
  const char *name = hy_onnx_w_temp (w, what);
  Onnx__TensorProto *t = new_tensor (w, name, shape->dims, shape->ndim,
      ONNX_FLOAT);
  size_t n = (size_t) hy_shape_numel (shape);
  t->n_float_data = n;
  t->float_data = hy_onnx_w_alloc (w, MAX (n, 1) * sizeof (float));
  memcpy (t->float_data, values, n * sizeof (float));
  return name;
}

const char *
hy_onnx_w_const_ints (hy_onnx_writer *w, const char *what,
    const gint64 *values, int count)
{
  const char *name = hy_onnx_w_temp (w, what);
  gint64 dims[1] = { count };
  Onnx__TensorProto *t = new_tensor (w, name, dims, 1, ONNX_INT64);
  t->n_int64_data = (size_t) count;
  t->int64_data = hy_onnx_w_alloc (w, MAX (count, 1) * sizeof (int64_t));
  for (int i = 0; i < count; i++)
    t->int64_data[i] = values[i];
  return name;
}

const char *
hy_onnx_w_const_bytes (hy_onnx_writer *w, const char *what,
    const hy_shape *shape, int data_type, const gint64 *values)
{
  const char *name = hy_onnx_w_temp (w, what);
  Onnx__TensorProto *t = new_tensor (w, name, shape->dims, shape->ndim,
      data_type);
  size_t n = (size_t) hy_shape_numel (shape);
  t->has_raw_data = TRUE;
  t->raw_data.len = n;
  t->raw_data.data = hy_onnx_w_alloc (w, MAX (n, 1));
  for (size_t i = 0; i < n; i++)
    t->raw_data.data[i] = data_type == ONNX_INT8
        ? (uint8_t) (int8_t) values[i] : (uint8_t) values[i];
  return name;
}

/* ---- values ------------------------------------------------------------- */

const char *
hy_onnx_w_input (hy_onnx_writer *w, guint k)
{
  hy_entry e = current (w)->inputs[k];
  hy_onnx_w_weight (w, e.node);
  return w->names[e.node][e.index];
}

const hy_shape *
hy_onnx_w_input_shape (hy_onnx_writer *w, guint k)
{
  hy_entry e = current (w)->inputs[k];
  return &hy_graph_node (w->graph, e.node)->shapes[e.index];
}

const hy_tensor *
hy_onnx_w_input_value (hy_onnx_writer *w, guint k)
{
  hy_entry e = current (w)->inputs[k];
  const hy_node *v = hy_graph_node (w->graph, e.node);
  return v->op ? NULL : v->value;
}

void
hy_onnx_w_bool_to_float (hy_onnx_writer *w, const char *x,
    const char *output)
{
  hy_onnx_w_attr_int (w, hy_onnx_w_node (w, "Cast", &x, 1, output), "to",
      ONNX_FLOAT);
}

const char *
hy_onnx_w_temp (hy_onnx_writer *w, const char *what)
{
  g_autofree char *s = g_strdup_printf ("%s/%s_%u", current (w)->name, what,
      w->n_made++);
  return hy_onnx_w_strdup (w, s);
}

const char *
hy_onnx_w_output (hy_onnx_writer *w, guint k)
{
  return w->names[w->node][k];
}

/* ---- nodes and attributes --------------------------------------------- */

Onnx__NodeProto *
hy_onnx_w_node (hy_onnx_writer *w, const char *op_type,
    const char *const *inputs, guint n_inputs, const char *output)
{
  Onnx__NodeProto *n = hy_onnx_w_alloc (w, sizeof *n);
  *n = (Onnx__NodeProto) ONNX__NODE_PROTO__INIT;
  n->op_type = (char *) op_type;
  /* Named by its output: unique, as values are, and the node writing a
   * graph node's output then carries that node's name. */
  n->name = (char *) output;
  n->n_input = n_inputs;
  n->input = hy_onnx_w_alloc (w, MAX (n_inputs, 1) * sizeof (char *));
  for (guint i = 0; i < n_inputs; i++)
    n->input[i] = (char *) inputs[i];
  n->n_output = 1;
  n->output = hy_onnx_w_alloc (w, sizeof (char *));
  n->output[0] = (char *) output;
  g_ptr_array_add (w->nodes, n);
  return n;
}

static Onnx__AttributeProto *
new_attr (hy_onnx_writer *w, Onnx__NodeProto *n, const char *name,
    Onnx__AttributeProto__AttributeType type)
{
  Onnx__AttributeProto *a = hy_onnx_w_alloc (w, sizeof *a);
  *a = (Onnx__AttributeProto) ONNX__ATTRIBUTE_PROTO__INIT;
  a->name = (char *) name;
  a->has_type = TRUE;
  a->type = type;
  /* Attributes are few per node: grow the array one at a time. */
  Onnx__AttributeProto **list = hy_onnx_w_alloc (w,
      (n->n_attribute + 1) * sizeof *list);
  if (n->n_attribute)
    memcpy (list, n->attribute, n->n_attribute * sizeof *list);
  list[n->n_attribute++] = a;
  n->attribute = list;
  return a;
}

void
hy_onnx_w_attr_int (hy_onnx_writer *w, Onnx__NodeProto *n, const char *name,
    gint64 v)
{
  Onnx__AttributeProto *a = new_attr (w, n, name,
      ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  a->has_i = TRUE;
  a->i = v;
}

void
hy_onnx_w_attr_float (hy_onnx_writer *w, Onnx__NodeProto *n,
    const char *name, float v)
{
  Onnx__AttributeProto *a = new_attr (w, n, name,
      ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  a->has_f = TRUE;
  a->f = v;
}

void
hy_onnx_w_attr_ints (hy_onnx_writer *w, Onnx__NodeProto *n, const char *name,
    const gint64 *v, int count)
{
  Onnx__AttributeProto *a = new_attr (w, n, name,
      ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  a->n_ints = (size_t) count;
  a->ints = hy_onnx_w_alloc (w, MAX (count, 1) * sizeof (int64_t));
  for (int i = 0; i < count; i++)
    a->ints[i] = v[i];
}

void
hy_onnx_w_attr_string (hy_onnx_writer *w, Onnx__NodeProto *n,
    const char *name, const char *v)
{
  Onnx__AttributeProto *a = new_attr (w, n, name,
      ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  a->has_s = TRUE;
  a->s.data = (uint8_t *) hy_onnx_w_strdup (w, v);
  a->s.len = strlen (v);
}

/* ---- the node being written ------------------------------------------ */

const hy_shape *
hy_onnx_w_out_shape (hy_onnx_writer *w)
{
  return &hy_graph_node (w->graph, w->node)->shapes[0];
}

void
hy_onnx_w_to_out_shape (hy_onnx_writer *w, const char *op_type,
    const char *x)
{
  const hy_shape *s = hy_onnx_w_out_shape (w);
  const char *in[2] = { x, hy_onnx_w_const_ints (w, "shape", s->dims,
        s->ndim) };
  hy_onnx_w_node (w, op_type, in, 2, hy_onnx_w_output (w, 0));
}

gboolean
hy_onnx_w_float_data (hy_onnx_writer *w, hy_dtype int_dtype, GError **error)
{
  if (int_dtype != HY_DTYPE_FLOAT32)
    return hy_onnx_w_refuse (w, error, "integer data: only float32 models "
        "are written");
  return TRUE;
}
