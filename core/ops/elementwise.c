/*
 * elementwise.c — attributes and shapes of the elementwise op families:
 * unary math, scalar ops, binary ops (elemwise_* and broadcast_*), add_n,
 * clip, hard_sigmoid, where, Cast and zeros_like/ones_like.
 *
 * Every output has the shape of the data input, except broadcast_*, whose
 * output is the numpy broadcast of both operands.  The split between
 * elemwise_* and broadcast_* is MXNet's and it is strict: elemwise_add of
 * (2, 3) and (1, 3) is an error there, so it is one here too — with a
 * message that points at the broadcast op, since this is the classic way a
 * Gluon block that ran imperatively (where `a + b` broadcasts) fails once
 * hybridized.
 */
#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/elementwise.h"

static const char *const data_input[] = { "data", NULL };

/* The dtype a kernel holds results in: the data's when it is an integer
 * one (MXNet computes in it), else float32 (no change). */
static hy_dtype
int_dtype_of (hy_dtype data)
{
  return hy_dtype_is_integer (data) ? data : HY_DTYPE_FLOAT32;
}

static gboolean
same_shape_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  out[0] = in[0];
  return TRUE;
}

/* Reads a float attribute that MXNet declares without a default. */
static gboolean
required_float (GHashTable *attrs, const char *key, double *out,
    GError **error)
{
  return hy_attr_require (attrs, key, error)
      && hy_attr_float (attrs, key, 0.0, out, error);
}

/* ---- unary math -------------------------------------------------------- */

/* MXNet computes unary math on integer data in its dtype: sqrt of int64 9
 * is 3, of 2 is 1. */
static gboolean
unary_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  hy_unary_params *p = params;
  p->int_dtype = int_dtype_of (in[0]);
  out[0] = in[0];
  return TRUE;
}

const hy_op_def hy_opdef_unary = {
  .params_size = sizeof (hy_unary_params),
  .input_names = data_input,
  .infer_shape = same_shape_infer,
  .infer_dtype = unary_dtype,
  .inplace = TRUE,
};

/* ---- scalar ops -------------------------------------------------------- */

static const struct {
  hy_op_id op;
  hy_binary_fn fn;
  gboolean scalar_first;
} scalar_ops[] = {
  { HY_OP_PLUS_SCALAR, HY_BINARY_ADD, FALSE },
  { HY_OP_MINUS_SCALAR, HY_BINARY_SUB, FALSE },
  { HY_OP_RMINUS_SCALAR, HY_BINARY_SUB, TRUE },
  { HY_OP_MUL_SCALAR, HY_BINARY_MUL, FALSE },
  { HY_OP_DIV_SCALAR, HY_BINARY_DIV, FALSE },
  { HY_OP_RDIV_SCALAR, HY_BINARY_DIV, TRUE },
  { HY_OP_MOD_SCALAR, HY_BINARY_MOD, FALSE },
  { HY_OP_RMOD_SCALAR, HY_BINARY_MOD, TRUE },
  { HY_OP_POWER_SCALAR, HY_BINARY_POWER, FALSE },
  { HY_OP_RPOWER_SCALAR, HY_BINARY_POWER, TRUE },
  { HY_OP_MAXIMUM_SCALAR, HY_BINARY_MAXIMUM, FALSE },
  { HY_OP_MINIMUM_SCALAR, HY_BINARY_MINIMUM, FALSE },
  { HY_OP_EQUAL_SCALAR, HY_BINARY_EQUAL, FALSE },
  { HY_OP_NOT_EQUAL_SCALAR, HY_BINARY_NOT_EQUAL, FALSE },
  { HY_OP_GREATER_SCALAR, HY_BINARY_GREATER, FALSE },
  { HY_OP_GREATER_EQUAL_SCALAR, HY_BINARY_GREATER_EQUAL, FALSE },
  { HY_OP_LESSER_SCALAR, HY_BINARY_LESSER, FALSE },
  { HY_OP_LESSER_EQUAL_SCALAR, HY_BINARY_LESSER_EQUAL, FALSE },
};

static gboolean
scalar_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_scalar_params *p = params;
  double scalar;
  gboolean is_int;
  /* MXNet 1.9.1: scalar defaults to 1 and is_int (new in 1.9) to true. */
  if (!hy_attr_float (attrs, "scalar", 1.0, &scalar, error)
      || !hy_attr_bool (attrs, "is_int", TRUE, &is_int, error))
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (scalar_ops); i++) {
    if (scalar_ops[i].op == p->op) {
      p->fn = scalar_ops[i].fn;
      p->scalar_first = scalar_ops[i].scalar_first;
    }
  }
  p->scalar = (float) scalar;
  p->is_int = is_int;
  return TRUE;
}

/* MXNet 1.9.1 on integer data: with is_int (the default) the scalar is
 * converted to the data's dtype (_mul_scalar by 0.5 gives zeros,
 * _div_scalar by 2.5 divides by 2, as integers) and so is the result; with
 * is_int false it computes in floats and gives float64. */
static gboolean
scalar_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  hy_scalar_params *p = params;
  if (hy_dtype_is_integer (in[0]) && !p->is_int) {
    p->int_dtype = HY_DTYPE_FLOAT32;
    out[0] = HY_DTYPE_FLOAT64;
    return TRUE;
  }
  p->int_dtype = int_dtype_of (in[0]);
  out[0] = in[0];
  return TRUE;
}

const hy_op_def hy_opdef_scalar = {
  .params_size = sizeof (hy_scalar_params),
  .parse = scalar_parse,
  .input_names = data_input,
  .infer_shape = same_shape_infer,
  .infer_dtype = scalar_dtype,
  .inplace = TRUE,
};

/* ---- binary ops -------------------------------------------------------- */

/* Each computation exists as an equal-shape op and a broadcasting one. */
static const struct {
  hy_op_id elemwise;
  hy_op_id broadcast;
  hy_binary_fn fn;
} binary_ops[] = {
  { HY_OP_ELEMWISE_ADD, HY_OP_BROADCAST_ADD, HY_BINARY_ADD },
  { HY_OP_ELEMWISE_SUB, HY_OP_BROADCAST_SUB, HY_BINARY_SUB },
  { HY_OP_ELEMWISE_MUL, HY_OP_BROADCAST_MUL, HY_BINARY_MUL },
  { HY_OP_ELEMWISE_DIV, HY_OP_BROADCAST_DIV, HY_BINARY_DIV },
  { HY_OP_ELEMWISE_MAXIMUM, HY_OP_BROADCAST_MAXIMUM, HY_BINARY_MAXIMUM },
  { HY_OP_ELEMWISE_MINIMUM, HY_OP_BROADCAST_MINIMUM, HY_BINARY_MINIMUM },
  { HY_OP_ELEMWISE_POWER, HY_OP_BROADCAST_POWER, HY_BINARY_POWER },
  { HY_OP_ELEMWISE_EQUAL, HY_OP_BROADCAST_EQUAL, HY_BINARY_EQUAL },
  { HY_OP_ELEMWISE_NOT_EQUAL, HY_OP_BROADCAST_NOT_EQUAL,
    HY_BINARY_NOT_EQUAL },
  { HY_OP_ELEMWISE_GREATER, HY_OP_BROADCAST_GREATER, HY_BINARY_GREATER },
  { HY_OP_ELEMWISE_GREATER_EQUAL, HY_OP_BROADCAST_GREATER_EQUAL,
    HY_BINARY_GREATER_EQUAL },
  { HY_OP_ELEMWISE_LESSER, HY_OP_BROADCAST_LESSER, HY_BINARY_LESSER },
  { HY_OP_ELEMWISE_LESSER_EQUAL, HY_OP_BROADCAST_LESSER_EQUAL,
    HY_BINARY_LESSER_EQUAL },
  { HY_OP_ELEMWISE_MOD, HY_OP_BROADCAST_MOD, HY_BINARY_MOD },
};

static gboolean
binary_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_binary_params *p = params;
  for (guint i = 0; i < G_N_ELEMENTS (binary_ops); i++) {
    if (binary_ops[i].elemwise == p->op || binary_ops[i].broadcast == p->op) {
      p->fn = binary_ops[i].fn;
      p->broadcast = binary_ops[i].broadcast == p->op;
    }
  }
  return TRUE;
}

static const char *
broadcast_counterpart (hy_op_id elemwise)
{
  for (guint i = 0; i < G_N_ELEMENTS (binary_ops); i++)
    if (binary_ops[i].elemwise == elemwise)
      return hy_op_info_get (binary_ops[i].broadcast)->name;
  return "broadcast_*";
}

static gboolean
binary_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_binary_params *p = params;
  if (p->broadcast)
    return hy_broadcast_shapes (&in[0], &in[1], &out[0], error);
  if (!hy_shape_equal (&in[0], &in[1])) {
    char sa[HY_SHAPE_STRLEN], sb[HY_SHAPE_STRLEN];
    const char *name = hy_op_info_get (p->op)->name;
    const char *fix = broadcast_counterpart (p->op);
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "lhs %s and rhs %s differ, but %s needs equal shapes (it does not "
        "broadcast): use %s, e.g. F.%s(lhs, rhs) in hybrid_forward.  Symbol "
        "arithmetic such as `a + b` is elementwise, so a block that "
        "broadcasts imperatively fails once hybridized",
        hy_shape_format (&in[0], sa, sizeof sa),
        hy_shape_format (&in[1], sb, sizeof sb), name, fix, fix);
    return FALSE;
  }
  out[0] = in[0];
  return TRUE;
}

static const char *const binary_inputs[] = { "lhs", "rhs", NULL };

/* Both operands of one dtype, as MXNet requires; integer ones divide as
 * integers (broadcast_div of int64 -7 by 2 is -3). */
static gboolean
binary_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  hy_binary_params *p = params;
  if (!hy_dtype_check_alike (params, in, 0, 2, error))
    return FALSE;
  p->int_dtype = int_dtype_of (in[0]);
  out[0] = in[0];
  return TRUE;
}

/* In place only when lhs already has the output's shape: a broadcast
 * output can be larger than lhs. */
const hy_op_def hy_opdef_binary = {
  .params_size = sizeof (hy_binary_params),
  .parse = binary_parse,
  .input_names = binary_inputs,
  .infer_shape = binary_infer,
  .infer_dtype = binary_dtype,
  .inplace = TRUE,
};

/* ---- add_n ------------------------------------------------------------- */

static gboolean
add_n_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_add_n_params *p = params;
  int64_t n;
  if (!hy_attr_has (attrs, "num_args")) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'num_args' is required");
    return FALSE;
  }
  if (!hy_attr_int (attrs, "num_args", 0, &n, error))
    return FALSE;
  if (n < 1 || n > 1024) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'num_args' = '%s' must be between 1 and 1024",
        hy_attr_string (attrs, "num_args"));
    return FALSE;
  }
  p->num_args = (int) n;
  return TRUE;
}

static int
add_n_num_inputs (const void *params)
{
  return ((const hy_add_n_params *) params)->num_args;
}

static gboolean
add_n_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  for (int i = 1; i < n_in; i++) {
    if (!hy_shape_equal (&in[0], &in[i])) {
      char s0[HY_SHAPE_STRLEN], si[HY_SHAPE_STRLEN];
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "input 0 %s and input %d %s differ; add_n needs equal shapes "
          "(it does not broadcast)", hy_shape_format (&in[0], s0, sizeof s0),
          i, hy_shape_format (&in[i], si, sizeof si));
      return FALSE;
    }
  }
  out[0] = in[0];
  return TRUE;
}

static gboolean
add_n_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  hy_add_n_params *p = params;
  if (!hy_dtype_all_alike (params, in, n_in, out, n_out, error))
    return FALSE;
  p->int_dtype = int_dtype_of (in[0]);
  return TRUE;
}

const hy_op_def hy_opdef_add_n = {
  .params_size = sizeof (hy_add_n_params),
  .parse = add_n_parse,
  .num_inputs = add_n_num_inputs,
  .infer_shape = add_n_infer,
  .infer_dtype = add_n_dtype,
  .inplace = TRUE,
};

/* ---- clip, hard_sigmoid ------------------------------------------------ */

static gboolean
clip_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_clip_params *p = params;
  double lo, hi;
  if (!required_float (attrs, "a_min", &lo, error)
      || !required_float (attrs, "a_max", &hi, error))
    return FALSE;
  p->a_min = (float) lo;
  p->a_max = (float) hi;
  return TRUE;
}

/* Clamping then truncating gives what MXNet's bounds converted to the
 * integer dtype give. */
static gboolean
clip_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  hy_clip_params *p = params;
  p->int_dtype = int_dtype_of (in[0]);
  out[0] = in[0];
  return TRUE;
}

const hy_op_def hy_opdef_clip = {
  .params_size = sizeof (hy_clip_params),
  .parse = clip_parse,
  .input_names = data_input,
  .infer_shape = same_shape_infer,
  .infer_dtype = clip_dtype,
  .inplace = TRUE,
};

static gboolean
hard_sigmoid_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_hard_sigmoid_params *p = params;
  double alpha, beta;
  if (!hy_attr_float (attrs, "alpha", 0.2, &alpha, error)
      || !hy_attr_float (attrs, "beta", 0.5, &beta, error))
    return FALSE;
  p->alpha = (float) alpha;
  p->beta = (float) beta;
  return TRUE;
}

const hy_op_def hy_opdef_hard_sigmoid = {
  .params_size = sizeof (hy_hard_sigmoid_params),
  .parse = hard_sigmoid_parse,
  .input_names = data_input,
  .infer_shape = same_shape_infer,
  .inplace = TRUE,
};

/* ---- where ------------------------------------------------------------- */

static gboolean
where_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_shape *cond = &in[0], *x = &in[1], *y = &in[2];
  char sc[HY_SHAPE_STRLEN], sx[HY_SHAPE_STRLEN], sy[HY_SHAPE_STRLEN];
  if (!hy_shape_equal (x, y)) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "x %s and y %s must have the same shape",
        hy_shape_format (x, sx, sizeof sx), hy_shape_format (y, sy, sizeof sy));
    return FALSE;
  }
  /* MXNet also takes a 1-D condition that picks whole rows of x/y. */
  gboolean row_pick = cond->ndim == 1 && x->ndim >= 1
      && cond->dims[0] == x->dims[0];
  if (!hy_shape_equal (cond, x) && !row_pick) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "condition %s must have the shape of x %s, or be 1-D with x's first "
        "dimension", hy_shape_format (cond, sc, sizeof sc),
        hy_shape_format (x, sx, sizeof sx));
    return FALSE;
  }
  out[0] = *x;
  return TRUE;
}

static const char *const where_inputs[] = { "condition", "x", "y", NULL };

/* The condition may be of any dtype; x and y of one, the output's. */
static gboolean
where_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  if (!hy_dtype_check_alike (params, in, 1, 2, error))
    return FALSE;
  out[0] = in[1];
  return TRUE;
}

/* In place over the condition only when it has the output's shape. */
const hy_op_def hy_opdef_where = {
  .params_size = sizeof (hy_where_params),
  .input_names = where_inputs,
  .infer_shape = where_infer,
  .infer_dtype = where_dtype,
  .inplace = TRUE,
};

/* ---- Cast -------------------------------------------------------------- */

static gboolean
cast_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_cast_params *p = params;
  int dtype;
  if (!hy_attr_has (attrs, "dtype")) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'dtype' is required");
    return FALSE;
  }
  if (!hy_attr_dtype (attrs, "dtype", HY_DTYPE_FLOAT32, &dtype, error))
    return FALSE;
  switch (dtype) {
    case HY_DTYPE_FLOAT32: case HY_DTYPE_FLOAT64: case HY_DTYPE_FLOAT16:
    case HY_DTYPE_BFLOAT16: case HY_DTYPE_UINT8: case HY_DTYPE_INT8:
    case HY_DTYPE_INT32: case HY_DTYPE_INT64: case HY_DTYPE_BOOL:
      break;
    default:
      /* MXNet 1.9.1's Cast rejects these too. */
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'dtype' = '%s' is not one of float32|float64|float16|"
          "bfloat16|uint8|int8|int32|int64|bool",
          hy_attr_string (attrs, "dtype"));
      return FALSE;
  }
  p->dtype = dtype;
  return TRUE;
}

/* Cast is where most integer data starts. */
static gboolean
cast_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  out[0] = ((const hy_cast_params *) params)->dtype;
  return TRUE;
}

const hy_op_def hy_opdef_cast = {
  .params_size = sizeof (hy_cast_params),
  .parse = cast_parse,
  .input_names = data_input,
  .infer_shape = same_shape_infer,
  .infer_dtype = cast_dtype,
  .inplace = TRUE,
};

/* ---- zeros_like, ones_like --------------------------------------------- */

/* The output has the input's dtype: MXNet 1.9.1 ignores a `dtype`
 * attribute here (ones_like of float32 with dtype int64 is float32). */

static gboolean
fill_like_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_fill_like_params *p = params;
  p->value = p->op == HY_OP_ONES_LIKE ? 1.0f : 0.0f;
  return TRUE;
}

const hy_op_def hy_opdef_fill_like = {
  .params_size = sizeof (hy_fill_like_params),
  .parse = fill_like_parse,
  .input_names = data_input,
  .infer_shape = same_shape_infer,
  .infer_dtype = hy_dtype_like_data,
  .inplace = TRUE,
};
