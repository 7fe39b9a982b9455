/*
 * onnx-tail.c — _hy_onnx_tail: an ONNX graph's data-dependent tail as one
 * op (core/io/onnx-tail.c makes it; kernels/cpu/onnx-tail.c runs it).
 * Attributes, parsed into kernels/params/onnx-tail.h:
 *
 *   inputs   how many inputs the op reads (values 0 .. inputs-1)
 *   program  its steps, ';'-separated, each "KIND TYPE INS ATTRS NAME":
 *            KIND the ONNX op (or Const), TYPE i or f (integer or float
 *            values), INS the values it reads, comma-separated (_ for a
 *            left-out optional input; for a Const, its values), ATTRS its
 *            integer attributes (for a Const, its dims), - for none,
 *            NAME the ONNX node's (errors name it)
 *   outputs  the values the op gives, with the shapes the file declares:
 *            "V:D0xD1x…", comma-separated ("V:" a scalar)
 *
 * The shapes the plan sees are the declared ones: only the kernel knows
 * the ones in between, at each forward.  Ours, not MXNet's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/onnx-tail.h"

static const char *const kind_names[] = {
#define HY_TAIL_KIND_NAME(id, name) name,
  HY_TAIL_KINDS (HY_TAIL_KIND_NAME)
#undef HY_TAIL_KIND_NAME
};

/* How many inputs each kind reads: the first `min` are required. */
static const struct { int min, max; } arity[] = {
  [HY_TAIL_CONST] = { 0, 0 }, [HY_TAIL_NONZERO] = { 1, 1 },
  [HY_TAIL_NMS] = { 2, 5 }, [HY_TAIL_TRANSPOSE] = { 1, 1 },
  [HY_TAIL_GATHER] = { 2, 2 }, [HY_TAIL_GATHER_ND] = { 2, 2 },
  [HY_TAIL_SLICE] = { 3, 5 }, [HY_TAIL_SQUEEZE] = { 1, 2 },
  [HY_TAIL_UNSQUEEZE] = { 2, 2 }, [HY_TAIL_RESHAPE] = { 2, 2 },
  [HY_TAIL_SHAPE] = { 1, 1 }, [HY_TAIL_CONCAT] = { 1, HY_TAIL_MAX_STEP_IN },
  [HY_TAIL_WHERE] = { 3, 3 }, [HY_TAIL_EXPAND] = { 2, 2 },
  [HY_TAIL_CAST] = { 1, 1 }, [HY_TAIL_ADD] = { 2, 2 },
  [HY_TAIL_SUB] = { 2, 2 }, [HY_TAIL_MUL] = { 2, 2 }, [HY_TAIL_DIV] = { 2, 2 },
  [HY_TAIL_PAD] = { 2, 4 }, [HY_TAIL_SCATTER_ND] = { 3, 3 },
  [HY_TAIL_IDENTITY] = { 1, 1 },
};

static gboolean
bad (GError **error, int step, const char *fmt, const char *what)
{
  g_autofree char *msg = g_strdup_printf (fmt, what);
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "attribute 'program': step %d: %s", step, msg);
  return FALSE;
}

/* A comma-separated list of numbers ("-": none) into v[0..*n), at most
 * max; '_' reads as -1. */
static gboolean
parse_numbers (const char *s, double *v, int max, int *n)
{
  *n = 0;
  if (!strcmp (s, "-"))
    return TRUE;
  g_auto (GStrv) parts = g_strsplit (s, ",", -1);
  for (int i = 0; parts[i]; i++) {
    if (*n >= max)
      return FALSE;
    if (!strcmp (parts[i], "_")) {
      v[(*n)++] = -1;
      continue;
    }
    char *end;
    double x = g_ascii_strtod (parts[i], &end);
    if (end == parts[i] || *end || x != x)
      return FALSE;
    v[(*n)++] = x;
  }
  return TRUE;
}

static int
kind_of (const char *name)
{
  for (int k = 0; k < HY_TAIL_N_KINDS; k++)
    if (!strcmp (kind_names[k], name))
      return k;
  return -1;
}

static gboolean
parse_ints (const char *s, int64_t *v, int max, int *n)
{
  double d[HY_TAIL_POOL];
  if (!parse_numbers (s, d, MIN (max, HY_TAIL_POOL), n))
    return FALSE;
  for (int i = 0; i < *n; i++) {
    if (d[i] != floor (d[i]) || fabs (d[i]) > 9.2e18)
      return FALSE;
    v[i] = (int64_t) d[i];
  }
  return TRUE;
}

static gboolean
parse_const (hy_onnx_tail_params *p, hy_tail_step *st, const char *values,
    int step, GError **error)
{
  gint64 numel = 1;
  for (int d = 0; d < st->n_attr; d++) {
    /* each dim at most 4096 and the product at most the pool's before
     * it: no overflow */
    if (st->n_attr > HY_MAX_DIMS || st->attr[d] < 0 || st->attr[d] > 4096
        || numel > HY_TAIL_POOL)
      return bad (error, step, "Const dims '%s' are not a shape of at most 6 "
          "dims and 1024 values", "");
    numel *= st->attr[d];
  }
  int n;
  if (numel > HY_TAIL_POOL - p->n_pool
      || !parse_numbers (values, p->pool + p->n_pool, HY_TAIL_POOL - p->n_pool,
          &n) || n != numel)
    return bad (error, step, "Const values '%s' do not fill its shape (or "
        "the program's constants exceed 1024 values)", values);
  st->pool_at = p->n_pool;
  p->n_pool += n;
  return TRUE;
}

static gboolean
parse_step (hy_onnx_tail_params *p, char *text, int step, GError **error)
{
  char *field[5];
  for (int f = 0; f < 4; f++) {
    field[f] = text;
    char *sp = text ? strchr (text, ' ') : NULL;
    if (!sp)
      return bad (error, step, "'%s': KIND TYPE INS ATTRS NAME expected",
          field[0] ? field[0] : "");
    *sp = '\0';
    text = sp + 1;
  }
  field[4] = text;
  hy_tail_step *st = &p->steps[step];
  st->kind = kind_of (field[0]);
  if (st->kind < 0)
    return bad (error, step, "unknown kind '%s'", field[0]);
  if (strcmp (field[1], "i") && strcmp (field[1], "f"))
    return bad (error, step, "type '%s': i or f expected", field[1]);
  st->is_int = field[1][0] == 'i';
  if (!parse_ints (field[3], st->attr, HY_TAIL_MAX_ATTR, &st->n_attr))
    return bad (error, step, "attributes '%s': at most 8 integers expected",
        field[3]);
  gsize name_len = strlen (field[4]);
  int at = 0;
  while (at < HY_TAIL_NAMES && p->names[at])
    at += (int) strlen (p->names + at) + 1;
  if (name_len == 0 || at + name_len + 1 > HY_TAIL_NAMES - 1)
    return bad (error, step, "name '%s' is empty, or the names are too long",
        field[4]);
  memcpy (p->names + at, field[4], name_len + 1);
  st->name_at = at;
  if (st->kind == HY_TAIL_CONST)
    return parse_const (p, st, field[2], step, error);
  int64_t in[HY_TAIL_MAX_STEP_IN];
  if (!parse_ints (field[2], in, HY_TAIL_MAX_STEP_IN, &st->n_in))
    return bad (error, step, "inputs '%s': at most 8 values expected",
        field[2]);
  if (st->n_in < arity[st->kind].min || st->n_in > arity[st->kind].max)
    return bad (error, step, "%s takes another number of inputs", field[0]);
  for (int k = 0; k < st->n_in; k++) {
    if (in[k] < -1 || in[k] >= hy_tail_step_value (p, step)
        || (in[k] == -1 && k < arity[st->kind].min))
      return bad (error, step, "input '%s' is no value made before it",
          field[2]);
    st->in[k] = (int) in[k];
  }
  if (st->kind == HY_TAIL_TRANSPOSE && st->n_attr > HY_MAX_DIMS)
    return bad (error, step, "%s", "perm is longer than 6 axes");
  return TRUE;
}

static gboolean
parse_outputs (hy_onnx_tail_params *p, const char *text, GError **error)
{
  g_auto (GStrv) outs = g_strsplit (text, ",", -1);
  int n_values = hy_tail_step_value (p, p->n_steps);
  for (int k = 0; outs[k]; k++) {
    char *colon = strchr (outs[k], ':');
    char *end;
    long v = strtol (outs[k], &end, 10);
    if (k >= HY_TAIL_MAX_OUTPUTS || !colon || end != colon || v < 0
        || v >= n_values) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "attribute 'outputs': "
          "'%s': VALUE:D0xD1… of a value of the program expected (at most "
          "%d)", outs[k], HY_TAIL_MAX_OUTPUTS);
      return FALSE;
    }
    hy_shape *s = &p->out_shape[k];
    s->ndim = 0;
    g_auto (GStrv) dims = g_strsplit (colon + 1, "x", -1);
    for (int d = 0; colon[1] && dims[d]; d++) {
      gint64 x = g_ascii_strtoll (dims[d], &end, 10);
      if (d >= HY_MAX_DIMS || end == dims[d] || *end || x < 0
          || x > G_MAXINT32) {
        g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "attribute "
            "'outputs': '%s' is not a shape of at most %d sizes", colon + 1,
            HY_MAX_DIMS);
        return FALSE;
      }
      s->dims[s->ndim++] = x;
    }
    p->out_value[k] = (int) v;
    p->n_outputs = k + 1;
  }
  if (p->n_outputs == 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'outputs' names no value");
    return FALSE;
  }
  return TRUE;
}

static gboolean
tail_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_onnx_tail_params *p = params;
  int n_inputs;
  if (!hy_attr_int_in (attrs, "inputs", 0, 0, HY_TAIL_MAX_INPUTS, &n_inputs,
          error)
      || !hy_attr_require (attrs, "program", error)
      || !hy_attr_require (attrs, "outputs", error))
    return FALSE;
  p->n_inputs = n_inputs;
  g_auto (GStrv) steps = g_strsplit (hy_attr_string (attrs, "program"), ";",
      -1);
  for (int s = 0; steps[s]; s++) {
    if (!steps[s][0] && !steps[s + 1])
      break;                    /* a trailing ';' */
    if (s >= HY_TAIL_MAX_STEPS) {
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "attribute 'program': more than %d steps", HY_TAIL_MAX_STEPS);
      return FALSE;
    }
    p->n_steps = s + 1;
    if (!parse_step (p, steps[s], s, error))
      return FALSE;
  }
  return parse_outputs (p, hy_attr_string (attrs, "outputs"), error);
}

static int
tail_num_inputs (const void *params)
{
  return ((const hy_onnx_tail_params *) params)->n_inputs;
}

static int
tail_num_outputs (const void *params)
{
  return ((const hy_onnx_tail_params *) params)->n_outputs;
}

/* The outputs' shapes are the declared ones; the inputs only need shapes
 * (the kernel checks what each step reads against what it needs). */
static gboolean
tail_infer (const void *params, const hy_shape *in, int n_in, hy_shape *out,
    int n_out, GError **error)
{
  const hy_onnx_tail_params *p = params;
  for (int i = 0; i < n_in; i++)
    if (in[i].ndim < 0) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE, "input %d has no shape",
          i);
      return FALSE;
    }
  for (int k = 0; k < n_out && k < p->n_outputs; k++)
    out[k] = p->out_shape[k];
  return TRUE;
}

/* Any input dtype (the tail reads indices and booleans as numbers); the
 * outputs are float32, as the core holds every value. */
static gboolean
tail_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  for (int k = 0; k < n_out; k++)
    out[k] = HY_DTYPE_FLOAT32;
  return TRUE;
}

const hy_op_def hy_opdef_onnx_tail = {
  .params_size = sizeof (hy_onnx_tail_params),
  .parse = tail_parse,
  .num_inputs = tail_num_inputs,
  .num_outputs = tail_num_outputs,
  .infer_shape = tail_infer,
  .infer_dtype = tail_dtype,
};
