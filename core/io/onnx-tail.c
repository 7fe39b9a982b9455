/*
 * onnx-tail.c — an ONNX graph's data-dependent tail as one op.
 *
 * NonZero's and NonMaxSuppression's outputs have lengths only the data
 * decides, and the nodes reading them (directly or through others)
 * compute on those lengths: Shape of an (N, 4) value feeds an Expand, 300
 * minus a count a Pad.  The rest of the importer rewrites each node from
 * its inputs' static shapes, which these have not; so the tail is kept as
 * ONNX nodes instead, the steps of one _hy_onnx_tail op's program (the
 * format: core/ops/onnx-tail.c), which works the shapes out at each
 * forward (kernels/cpu/onnx-tail.c).  Its inputs are the static values it
 * reads; its outputs the graph outputs among its values, at the shapes the
 * file declares, which is all the plan sees (docs/ONNX.md, "Shapes that
 * depend on the data").
 */
#include <string.h>

#include "core/io/onnx-import.h"
#include "core/io/onnx-tensor.h"
#include "kernels/params/onnx-tail.h"

/* A constant of at most this many floats goes into the program; a larger
 * one (YOLOv8's (1, 300, 6) zeros) is read as a weight input. */
#define TAIL_CONST_FLOATS 64

/* A step's input before the op's inputs are counted: a step's index, an
 * op input's as -(i + 2), or -1 for a left-out optional input. */
#define FROM_INPUT(i) (-(i) - 2)

typedef struct tail_step {
  const char *kind;             /* static */
  char type;                    /* 'i' or 'f' */
  int n_in;
  int in[HY_TAIL_MAX_STEP_IN];
  GString *attrs;               /* "-" or comma-separated */
  char *values;                 /* a Const's */
  char *name;
} tail_step;

struct hy_onnx_tail {
  GArray *steps;                /* tail_step */
  GArray *inputs;               /* hy_entry */
  GHashTable *consts;           /* ONNX name -> step + 1 */
  int pool;                     /* constant values so far */
  const Onnx__NodeProto *first; /* names the op */
};

/* What the tail takes, and how many of its inputs it reads. */
static const struct { const char *name; int max_in; } tail_ops[] = {
  { "NonZero", 1 }, { "NonMaxSuppression", 5 }, { "Transpose", 1 },
  { "Gather", 2 }, { "GatherND", 2 }, { "Slice", 5 }, { "Squeeze", 2 },
  { "Unsqueeze", 2 }, { "Reshape", 2 }, { "Shape", 1 },
  { "Concat", HY_TAIL_MAX_STEP_IN }, { "Where", 3 }, { "Expand", 2 },
  { "Cast", 1 }, { "Add", 2 }, { "Sub", 2 }, { "Mul", 2 }, { "Div", 2 },
  { "Pad", 4 }, { "ScatterND", 3 }, { "Identity", 1 },
};

static void
step_clear (tail_step *s)
{
  if (s->attrs)
    g_string_free (s->attrs, TRUE);
  g_free (s->values);
  g_free (s->name);
}

void
hy_onnx_tail_free (hy_onnx_tail *tail)
{
  if (!tail)
    return;
  for (guint i = 0; i < tail->steps->len; i++)
    step_clear (&g_array_index (tail->steps, tail_step, i));
  g_array_unref (tail->steps);
  g_array_unref (tail->inputs);
  g_hash_table_unref (tail->consts);
  g_free (tail);
}

static hy_onnx_value *
lookup (hy_onnx_importer *imp, const char *name)
{
  return name && name[0] ? g_hash_table_lookup (imp->values, name) : NULL;
}

gboolean
hy_onnx_tail_takes (hy_onnx_importer *imp)
{
  const Onnx__NodeProto *node = imp->node;
  if (!strcmp (node->op_type, "NonZero")
      || !strcmp (node->op_type, "NonMaxSuppression"))
    return TRUE;
  if (!imp->tail)
    return FALSE;
  for (size_t k = 0; k < node->n_input; k++) {
    hy_onnx_value *v = lookup (imp, node->input[k]);
    if (v && v->in_tail)
      return TRUE;
  }
  return FALSE;
}

static int
add_step (hy_onnx_tail *tail, tail_step *s)
{
  g_array_append_val (tail->steps, *s);
  return (int) tail->steps->len - 1;
}

/* Names hold no ';' (the program's separator): a node's name is for
 * errors only. */
static char *
clean_name (const char *name)
{
  char *s = g_strdup (name && name[0] ? name : "(unnamed)");
  for (char *c = s; *c; c++)
    if (*c == ';' || *c == '\n')
      *c = '_';
  return s;
}

static char
const_type (const hy_onnx_value *v)
{
  return v->is_int ? 'i' : 'f';
}

/* A constant as a step of its own, once per ONNX name. */
static int
const_step (hy_onnx_importer *imp, const char *name, const hy_onnx_value *v,
    GError **error)
{
  hy_onnx_tail *tail = imp->tail;
  gpointer known = g_hash_table_lookup (tail->consts, name);
  if (known)
    return GPOINTER_TO_INT (known) - 1;
  gint64 n = hy_shape_numel (&v->shape);
  if (tail->pool + n > HY_TAIL_POOL) {
    hy_onnx_refuse (imp, error, "constant '%s' of %" G_GINT64_FORMAT " values "
        "is too large for the data-dependent tail's program (%d values in "
        "all)", name, n, HY_TAIL_POOL);
    return G_MININT;
  }
  tail->pool += (int) n;
  tail_step s = { .kind = "Const", .type = const_type (v),
    .attrs = g_string_new (NULL), .name = clean_name (name) };
  GString *values = g_string_new (NULL);
  for (gint64 i = 0; i < n; i++) {
    if (v->is_int)
      g_string_append_printf (values, "%s%" G_GINT64_FORMAT, i ? "," : "",
          v->ints[i]);
    else {
      char buf[G_ASCII_DTOSTR_BUF_SIZE];
      g_string_append_printf (values, "%s%s", i ? "," : "",
          g_ascii_dtostr (buf, sizeof buf, v->f[i]));
    }
  }
  s.values = g_string_free (values, FALSE);
  for (int d = 0; d < v->shape.ndim; d++)
    g_string_append_printf (s.attrs, "%s%" G_GINT64_FORMAT, d ? "," : "",
        v->shape.dims[d]);
  int step = add_step (tail, &s);
  g_hash_table_insert (tail->consts, g_strdup (name),
      GINT_TO_POINTER (step + 1));
  return step;
}

/* An op input of the tail, once per graph entry. */
static int
input_of (hy_onnx_tail *tail, hy_entry e)
{
  for (guint i = 0; i < tail->inputs->len; i++) {
    hy_entry *have = &g_array_index (tail->inputs, hy_entry, i);
    if (have->node == e.node && have->index == e.index)
      return FROM_INPUT ((int) i);
  }
  g_array_append_val (tail->inputs, e);
  return FROM_INPUT ((int) tail->inputs->len - 1);
}

/* Input k of the node as the tail reads it; its type into *type.
 * G_MININT with an error. */
static int
tail_input (hy_onnx_importer *imp, guint k, char *type, GError **error)
{
  const char *name = hy_onnx_input_name (imp, k);
  *type = 'f';
  if (!name)
    return -1;
  hy_onnx_value *v = hy_onnx_input (imp, k, error);
  if (!v)
    return G_MININT;
  if (v->in_tail) {
    *type = g_array_index (imp->tail->steps, tail_step, v->tail_step).type;
    return v->tail_step;
  }
  if (v->quantized) {
    hy_onnx_refuse (imp, error, "input '%s' is QuantizeLinear's integers",
        name);
    return G_MININT;
  }
  if (v->is_const && (v->is_int
          || hy_shape_numel (&v->shape) <= TAIL_CONST_FLOATS)) {
    *type = const_type (v);
    return const_step (imp, name, v, error);
  }
  hy_entry e;
  if (!hy_onnx_input_entry (imp, k, &e, error))
    return G_MININT;
  return input_of (imp->tail, e);
}

static int
max_inputs (const char *op)
{
  for (gsize i = 0; i < G_N_ELEMENTS (tail_ops); i++)
    if (!strcmp (tail_ops[i].name, op))
      return tail_ops[i].max_in;
  return -1;
}

static gboolean
refuse_op (hy_onnx_importer *imp, GError **error)
{
  GString *list = g_string_new (NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (tail_ops); i++)
    g_string_append_printf (list, "%s%s", i ? ", " : "", tail_ops[i].name);
  g_autofree char *names = g_string_free (list, FALSE);
  return hy_onnx_refuse (imp, error, "op '%s' is not supported after NonZero "
      "or NonMaxSuppression: it reads a value whose shape depends on the "
      "data, and the part of the graph that does takes only %s", 
      imp->node->op_type, names);
}

/* ONNX's Cast `to` as the tail's: 0 a float, 1 an integer, 2 bool. */
static gboolean
cast_kind (hy_onnx_importer *imp, int64_t to, int64_t *kind, GError **error)
{
  switch (to) {
    case 1: case 10: case 11: case 16:
      *kind = 0;
      return TRUE;
    case 2: case 3: case 4: case 5: case 6: case 7: case 12: case 13:
      *kind = 1;
      return TRUE;
    case 9:
      *kind = 2;
      return TRUE;
    default:
      return hy_onnx_refuse (imp, error, "a Cast to type %" G_GINT64_FORMAT
          " is not supported after NonZero (float, integer and bool types "
          "are)", to);
  }
}

/* The node's attributes as the step's, and its output type; FALSE with an
 * error for a form the tail does not take. */
static gboolean
step_attrs (hy_onnx_importer *imp, tail_step *s, GError **error)
{
  const Onnx__NodeProto *node = imp->node;
  const char *op = node->op_type;
  int64_t a[HY_TAIL_MAX_ATTR] = { 0 };
  int n = 0;
  hy_onnx_word word;
  if (!strcmp (op, "Transpose")) {
    const gint64 *perm = hy_onnx_attr_ints (node, "perm", &n);
    if (n > HY_MAX_DIMS)
      return hy_onnx_refuse (imp, error, "perm of %d axes", n);
    for (int i = 0; i < n; i++)
      a[i] = perm[i];
    n = MAX (n, 0);
  } else if (!strcmp (op, "Gather") || !strcmp (op, "Concat")) {
    a[n++] = hy_onnx_attr_int (node, "axis", 0);
  } else if (!strcmp (op, "GatherND")) {
    if (hy_onnx_attr_int (node, "batch_dims", 0) != 0)
      return hy_onnx_refuse (imp, error, "batch_dims is not supported after "
          "NonZero (0 is)");
  } else if (!strcmp (op, "Cast")) {
    if (!cast_kind (imp, hy_onnx_attr_int (node, "to", 1), &a[0], error))
      return FALSE;
    n = 1;
    s->type = a[0] ? 'i' : 'f';
  } else if (!strcmp (op, "NonMaxSuppression")) {
    int64_t cpb = hy_onnx_attr_int (node, "center_point_box", 0);
    if (cpb != 0 && cpb != 1)
      return hy_onnx_refuse (imp, error, "center_point_box %" G_GINT64_FORMAT
          ": 0 or 1 expected", cpb);
    a[n++] = cpb;
  } else if (!strcmp (op, "Reshape")) {
    a[n++] = hy_onnx_attr_int (node, "allowzero", 0) != 0;
  } else if (!strcmp (op, "Shape")) {
    a[n++] = CLAMP (hy_onnx_attr_int (node, "start", 0), -64, 64);
    a[n++] = CLAMP (hy_onnx_attr_int (node, "end", 64), -64, 64);
  } else if (!strcmp (op, "Pad")) {
    if (strcmp (hy_onnx_attr_string (node, "mode", "constant", word),
            "constant"))
      return hy_onnx_refuse (imp, error, "mode '%s' is not supported after "
          "NonZero (constant is)", word);
  } else if (!strcmp (op, "ScatterND")) {
    if (strcmp (hy_onnx_attr_string (node, "reduction", "none", word), "none"))
      return hy_onnx_refuse (imp, error, "reduction '%s' is not supported "
          "after NonZero (none is)", word);
  }
  s->attrs = g_string_new (NULL);
  for (int i = 0; i < n; i++)
    g_string_append_printf (s->attrs, "%s%" G_GINT64_FORMAT, i ? "," : "",
        a[i]);
  return TRUE;
}

/* Squeeze's and Unsqueeze's axes as an attribute (before opset 13): the
 * step reads them as a constant input, as the later opsets give them. */
static gboolean
axes_attr_input (hy_onnx_importer *imp, tail_step *s, GError **error)
{
  int n;
  const gint64 *axes = hy_onnx_attr_ints (imp->node, "axes", &n);
  if (n < 0 || s->n_in != 1)
    return TRUE;
  if (n > HY_MAX_DIMS)
    return hy_onnx_refuse (imp, error, "%d axes", n);
  hy_onnx_value v = { .is_const = TRUE, .is_int = TRUE,
    .shape = { .ndim = 1, .dims = { n } }, .ints = (gint64 *) axes };
  /* named after the node's output, which ONNX keeps unique (a node's own
   * name need not be), since constants are shared by name */
  g_autofree char *name = g_strdup_printf ("%s/axes", imp->node->output[0]);
  int step = const_step (imp, name, &v, error);
  if (step == G_MININT)
    return FALSE;
  s->in[s->n_in++] = step;
  return TRUE;
}

static char
output_type (const char *op, const tail_step *s, const char *in_type)
{
  if (!strcmp (op, "NonZero") || !strcmp (op, "NonMaxSuppression")
      || !strcmp (op, "Shape"))
    return 'i';
  if (!strcmp (op, "Cast"))
    return s->type;
  if (!strcmp (op, "Add") || !strcmp (op, "Sub") || !strcmp (op, "Mul")
      || !strcmp (op, "Div"))
    return in_type[0] == 'i' && in_type[1] == 'i' ? 'i' : 'f';
  if (!strcmp (op, "Where"))
    return in_type[1];
  return in_type[0];
}

gboolean
hy_onnx_tail_add (hy_onnx_importer *imp, GError **error)
{
  const Onnx__NodeProto *node = imp->node;
  const char *op = node->op_type;
  int max_in = max_inputs (op);
  if (max_in < 0)
    return refuse_op (imp, error);
  if ((int) node->n_input > max_in)
    return hy_onnx_refuse (imp, error, "%zu inputs, at most %d expected",
        node->n_input, max_in);
  for (size_t k = 1; k < node->n_output; k++)
    if (node->output[k] && node->output[k][0])
      return hy_onnx_refuse (imp, error, "a second output is not supported "
          "after NonZero");
  if (!imp->tail) {
    imp->tail = g_new0 (hy_onnx_tail, 1);
    imp->tail->steps = g_array_new (FALSE, TRUE, sizeof (tail_step));
    imp->tail->inputs = g_array_new (FALSE, TRUE, sizeof (hy_entry));
    imp->tail->consts = g_hash_table_new_full (g_str_hash, g_str_equal,
        g_free, NULL);
    imp->tail->first = node;
  }
  if (imp->tail->steps->len + node->n_input + 2 > HY_TAIL_MAX_STEPS)
    return hy_onnx_refuse (imp, error, "the data-dependent tail has more "
        "than %d steps", HY_TAIL_MAX_STEPS);
  tail_step s = { .kind = NULL };
  char in_type[HY_TAIL_MAX_STEP_IN + 1] = { 0 };
  for (guint k = 0; k < node->n_input; k++) {
    s.in[k] = tail_input (imp, k, &in_type[k], error);
    if (s.in[k] == G_MININT)
      return FALSE;
  }
  s.n_in = (int) node->n_input;
  /* a left-out trailing input is left out of the step too */
  while (s.n_in > 0 && s.in[s.n_in - 1] == -1)
    s.n_in--;
  if ((!strcmp (op, "Squeeze") || !strcmp (op, "Unsqueeze"))
      && !axes_attr_input (imp, &s, error))
    return FALSE;
  if (!step_attrs (imp, &s, error)) {
    step_clear (&s);
    return FALSE;
  }
  for (gsize i = 0; i < G_N_ELEMENTS (tail_ops); i++)
    if (!strcmp (tail_ops[i].name, op))
      s.kind = tail_ops[i].name;
  s.type = output_type (op, &s, in_type);
  s.name = clean_name (HY_ONNX_NODE_NAME (imp));
  int step = add_step (imp->tail, &s);
  hy_onnx_value *v = g_new0 (hy_onnx_value, 1);
  v->in_tail = TRUE;
  v->tail_step = step;
  g_hash_table_replace (imp->values, g_strdup (node->output[0]), v);
  return TRUE;
}

/* ---- the op -------------------------------------------------------- */

static int
value_of (const hy_onnx_tail *tail, int in)
{
  return in >= 0 ? (int) tail->inputs->len + in
      : in == -1 ? -1 : -(in + 2);
}

static char *
program_text (const hy_onnx_tail *tail)
{
  GString *t = g_string_new (NULL);
  for (guint i = 0; i < tail->steps->len; i++) {
    const tail_step *s = &g_array_index (tail->steps, tail_step, i);
    g_string_append_printf (t, "%s%s %c ", i ? ";" : "", s->kind, s->type);
    if (s->values)
      g_string_append (t, s->values[0] ? s->values : "-");
    else if (s->n_in == 0)
      g_string_append (t, "-");
    for (int k = 0; !s->values && k < s->n_in; k++) {
      int v = value_of (tail, s->in[k]);
      if (v < 0)
        g_string_append_printf (t, "%s_", k ? "," : "");
      else
        g_string_append_printf (t, "%s%d", k ? "," : "", v);
    }
    g_string_append_printf (t, " %s %s", s->attrs->len ? s->attrs->str : "-",
        s->name);
  }
  return g_string_free (t, FALSE);
}

/* The shape graph output `vi` declares: every dimension a number, as the
 * plan needs. */
static gboolean
declared_shape (hy_onnx_importer *imp, const Onnx__ValueInfoProto *vi,
    hy_shape *out, GError **error)
{
  const Onnx__TypeProto *tp = vi->type;
  const Onnx__TensorShapeProto *sp = tp && tp->value_case
      == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type
      ? tp->tensor_type->shape : NULL;
  if (!sp || sp->n_dim > HY_MAX_DIMS) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: graph output '%s' comes after NonZero or NonMaxSuppression and "
        "declares no shape of at most %d dimensions: such outputs must "
        "declare a static shape", imp->source, vi->name, HY_MAX_DIMS);
    return FALSE;
  }
  out->ndim = (int) sp->n_dim;
  for (int d = 0; d < out->ndim; d++) {
    const Onnx__TensorShapeProto__Dimension *dim = sp->dim[d];
    if (dim->value_case
        != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
        || dim->dim_value < 0 || dim->dim_value > G_MAXINT32) {
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "%s: graph output '%s' comes after NonZero or NonMaxSuppression "
          "and its dimension %d is symbolic ('%s'): its shape depends on the "
          "data, and such outputs must declare a static shape (a Pad or "
          "Slice to a fixed length before it)", imp->source, vi->name, d,
          dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
          && dim->dim_param ? dim->dim_param : "?");
      return FALSE;
    }
    out->dims[d] = dim->dim_value;
  }
  return TRUE;
}

gboolean
hy_onnx_tail_finish (hy_onnx_importer *imp, const Onnx__GraphProto *g,
    GError **error)
{
  hy_onnx_tail *tail = imp->tail;
  if (!tail)
    return TRUE;
  int out_step[HY_TAIL_MAX_OUTPUTS];
  const char *first_output = NULL;
  GString *outputs = g_string_new (NULL);
  int n_out = 0;
  for (size_t i = 0; i < g->n_output; i++) {
    hy_onnx_value *v = lookup (imp, g->output[i]->name);
    if (!v || !v->in_tail)
      continue;
    gboolean again = FALSE;
    for (int k = 0; k < n_out; k++)
      again = again || out_step[k] == v->tail_step;
    if (again)
      continue;
    hy_shape shape;
    if (n_out == HY_TAIL_MAX_OUTPUTS) {
      g_string_free (outputs, TRUE);
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "%s: more than %d graph outputs come after NonZero or "
          "NonMaxSuppression", imp->source, HY_TAIL_MAX_OUTPUTS);
      return FALSE;
    }
    if (!declared_shape (imp, g->output[i], &shape, error)) {
      g_string_free (outputs, TRUE);
      return FALSE;
    }
    g_string_append_printf (outputs, "%s%d:", n_out ? "," : "",
        value_of (tail, v->tail_step));
    for (int d = 0; d < shape.ndim; d++)
      g_string_append_printf (outputs, "%s%" G_GINT64_FORMAT, d ? "x" : "",
          shape.dims[d]);
    if (n_out == 0)
      first_output = g->output[i]->name;
    out_step[n_out++] = v->tail_step;
  }
  if (n_out == 0) {
    /* nothing the graph gives reads the tail: it computes nothing */
    g_string_free (outputs, TRUE);
    return TRUE;
  }
  g_autofree char *program = program_text (tail);
  g_autofree char *n_inputs = g_strdup_printf ("%u", tail->inputs->len);
  imp->node = tail->first;
  imp->n_made = 0;
  hy_entry e = hy_onnx_add_op (imp, "_hy_onnx_tail",
      (const hy_entry *) tail->inputs->data, tail->inputs->len, error,
      "inputs", n_inputs, "program", program, "outputs", outputs->str, NULL);
  imp->node = NULL;
  g_string_free (outputs, TRUE);
  if (e.node == G_MAXUINT)
    return FALSE;
  /* The op is named after the first graph output it gives, as an unnamed
   * ONNX node is after its output: a reader that knows a head by its
   * output's name (the element's YOLOv8 rows, `output0`) finds it; errors
   * inside name the ONNX node that failed. */
  hy_node *op = hy_graph_node (imp->graph, e.node);
  if (hy_graph_find (imp->graph, first_output) < 0) {
    g_free (op->name);
    op->name = g_strdup (first_output);
  }
  for (size_t i = 0; i < g->n_output; i++) {
    hy_onnx_value *v = lookup (imp, g->output[i]->name);
    for (int k = 0; v && v->in_tail && k < n_out; k++)
      if (out_step[k] == v->tail_step) {
        v->has_entry = TRUE;
        v->entry = (hy_entry) { e.node, k };
      }
  }
  return TRUE;
}
