/*
 * onnx-write-select.c — the core's ops that compare, pick and broadcast,
 * written as ONNX (opset 13): the comparisons, argmax/argmin, where,
 * reverse, broadcast_axis/broadcast_like, and the quantize-dequantize
 * pair; the inverse of onnx-select.c and onnx-qdq.c.
 *
 * The core keeps every value as float32, so a comparison's 0/1 and an
 * argmax's index are floats there where ONNX gives bool and int64: each
 * such ONNX result is cast to float, and the model written keeps float
 * values between its nodes as the core's graph does.
 */
#include <math.h>

#include "core/io/onnx-write.h"

#ifdef HY_HAVE_ONNX

#include "core/io/onnx-tensor.h"
#include "kernels/params/elementwise.h"
#include "kernels/params/quantized.h"
#include "kernels/params/shape.h"

#define PARAMS HY_ONNX_W_PARAMS

/* ---- comparisons -------------------------------------------------------- */

/* a OP b as float 0/1; not-equal is Not (Equal), which ONNX lacks as
 * one op (and which is true on NaN, as MXNet's is). */
static void
compare (hy_onnx_writer *w, const char *op_type, gboolean negate,
    const char *a, const char *b)
{
  const char *in[2] = { a, b };
  const char *truth = hy_onnx_w_temp (w, "bool");
  hy_onnx_w_node (w, op_type, in, 2, truth);
  if (negate) {
    const char *negated = hy_onnx_w_temp (w, "not");
    hy_onnx_w_node (w, "Not", &truth, 1, negated);
    truth = negated;
  }
  hy_onnx_w_bool_to_float (w, truth, hy_onnx_w_output (w, 0));
}

static gboolean
write_compare (hy_onnx_writer *w, const hy_onnx_write_op *op,
    GError **error)
{
  if (!hy_onnx_w_float_data (w, PARAMS (w, hy_binary_params)->int_dtype,
          error))
    return FALSE;
  compare (w, op->onnx, op->id == HY_OP_ELEMWISE_NOT_EQUAL
      || op->id == HY_OP_BROADCAST_NOT_EQUAL, hy_onnx_w_input (w, 0),
      hy_onnx_w_input (w, 1));
  return TRUE;
}

static gboolean
write_compare_scalar (hy_onnx_writer *w, const hy_onnx_write_op *op,
    GError **error)
{
  const hy_scalar_params *p = PARAMS (w, hy_scalar_params);
  if (!hy_onnx_w_float_data (w, p->int_dtype, error))
    return FALSE;
  hy_shape scalar = { .ndim = 0 };
  const char *x = hy_onnx_w_input (w, 0);
  const char *s = hy_onnx_w_const_floats (w, "scalar", &scalar, &p->scalar);
  compare (w, op->onnx, op->id == HY_OP_NOT_EQUAL_SCALAR,
      p->scalar_first ? s : x, p->scalar_first ? x : s);
  return TRUE;
}

/* ---- argmax, argmin ----------------------------------------------------- */

static const char *
arg_node (hy_onnx_writer *w, const char *op_type, const char *x, int axis,
    gboolean keepdims)
{
  const char *out = hy_onnx_w_temp (w, "index");
  Onnx__NodeProto *n = hy_onnx_w_node (w, op_type, &x, 1, out);
  hy_onnx_w_attr_int (w, n, "axis", axis);
  hy_onnx_w_attr_int (w, n, "keepdims", keepdims);
  return out;
}

/* MXNet's argmax and argmin both give the first NaN of a row that has
 * one, where ONNX Runtime's pass NaN over: the index of the first NaN
 * (the ArgMax of IsNaN) where the row's ReduceMax of IsNaN says it has
 * one, else ONNX's own.  The int64 index. */
static const char *
nan_first_index (hy_onnx_writer *w, const char *op_type, const char *x,
    int axis, gboolean keepdims)
{
  const char *plain = arg_node (w, op_type, x, axis, keepdims);
  const char *is_nan = hy_onnx_w_temp (w, "is_nan");
  hy_onnx_w_node (w, "IsNaN", &x, 1, is_nan);
  const char *nan01 = hy_onnx_w_temp (w, "nan01");
  hy_onnx_w_bool_to_float (w, is_nan, nan01);
  const char *first_nan = arg_node (w, "ArgMax", nan01, axis, keepdims);
  const char *any = hy_onnx_w_temp (w, "any_nan");
  Onnx__NodeProto *r = hy_onnx_w_node (w, "ReduceMax", &nan01, 1, any);
  gint64 axes[1] = { axis };
  hy_onnx_w_attr_ints (w, r, "axes", axes, 1);
  hy_onnx_w_attr_int (w, r, "keepdims", keepdims);
  const char *has_nan = hy_onnx_w_temp (w, "has_nan");
  hy_onnx_w_attr_int (w, hy_onnx_w_node (w, "Cast", &any, 1, has_nan), "to",
      ONNX_BOOL);
  const char *in[3] = { has_nan, first_nan, plain };
  const char *out = hy_onnx_w_temp (w, "index");
  hy_onnx_w_node (w, "Where", in, 3, out);
  return out;
}

/* ONNX's ArgMax takes the first of equal values, as MXNet's does; its
 * int64 index is cast to the core's float.  axis=None (MXNet's index into
 * the flattened data) is the ArgMax of the data reshaped to 1-D. */
static gboolean
write_arg_reduce (hy_onnx_writer *w, const hy_onnx_write_op *op,
    GError **error G_GNUC_UNUSED)
{
  const hy_arg_reduce_params *p = PARAMS (w, hy_arg_reduce_params);
  const hy_shape *data = hy_onnx_w_input_shape (w, 0);
  const char *x = hy_onnx_w_input (w, 0);
  int axis = p->axis < 0 ? p->axis + data->ndim : p->axis;
  gboolean keepdims = p->keepdims;
  int onnx_ndim = keepdims ? data->ndim : data->ndim - 1;
  if (p->flatten) {
    gint64 all = hy_shape_numel (data);
    const char *in[2] = { x, hy_onnx_w_const_ints (w, "flat", &all, 1) };
    x = hy_onnx_w_temp (w, "flat");
    hy_onnx_w_node (w, "Reshape", in, 2, x);
    axis = 0;
    keepdims = TRUE;
    onnx_ndim = 1;
  }
  const char *index = nan_first_index (w, op->onnx, x, axis, keepdims);
  /* ONNX gives a scalar where the core (as MXNet 1.9.1) gives (1,), and
   * the flattened form's (1,) may stand for MXNet's kept dimensions. */
  gboolean reshape = onnx_ndim != hy_onnx_w_out_shape (w)->ndim || p->flatten;
  const char *as_float = reshape ? hy_onnx_w_temp (w, "float")
      : hy_onnx_w_output (w, 0);
  hy_onnx_w_bool_to_float (w, index, as_float);
  if (reshape)
    hy_onnx_w_to_out_shape (w, "Reshape", as_float);
  return TRUE;
}

/* ---- where -------------------------------------------------------------- */

/* ONNX's Where takes a bool condition; the core's is any float, nonzero
 * meaning true (NaN included), which Not (Equal (c, 0)) gives.  MXNet's
 * 1-D condition that picks whole rows is reshaped to (N, 1, ...) for
 * ONNX's broadcast from the right. */
static gboolean
write_where (hy_onnx_writer *w, const hy_onnx_write_op *op G_GNUC_UNUSED,
    GError **error G_GNUC_UNUSED)
{
  const hy_shape *cs = hy_onnx_w_input_shape (w, 0);
  const hy_shape *xs = hy_onnx_w_input_shape (w, 1);
  const char *cond = hy_onnx_w_input (w, 0);
  if (!hy_shape_equal (cs, xs) && cs->ndim == 1) {
    gint64 dims[HY_MAX_DIMS];
    dims[0] = cs->dims[0];
    for (int d = 1; d < xs->ndim; d++)
      dims[d] = 1;
    const char *in[2] = { cond, hy_onnx_w_const_ints (w, "rows", dims,
          xs->ndim) };
    cond = hy_onnx_w_temp (w, "rows");
    hy_onnx_w_node (w, "Reshape", in, 2, cond);
  }
  hy_shape scalar = { .ndim = 0 };
  const float zero = 0.0f;
  const char *eq[2] = { cond, hy_onnx_w_const_floats (w, "zero", &scalar,
        &zero) };
  const char *is_zero = hy_onnx_w_temp (w, "is_zero");
  hy_onnx_w_node (w, "Equal", eq, 2, is_zero);
  const char *truth = hy_onnx_w_temp (w, "nonzero");
  hy_onnx_w_node (w, "Not", &is_zero, 1, truth);
  const char *in[3] = { truth, hy_onnx_w_input (w, 1),
    hy_onnx_w_input (w, 2) };
  hy_onnx_w_node (w, "Where", in, 3, hy_onnx_w_output (w, 0));
  return TRUE;
}

/* ---- broadcast_axis, broadcast_like ------------------------------------- */

/* Every axis of length 1 repeated to the output's length: Expand to the
 * inferred (static) shape.  broadcast_like's second input gives only
 * that shape, so nothing reads it. */
static gboolean
write_expand (hy_onnx_writer *w, const hy_onnx_write_op *op G_GNUC_UNUSED,
    GError **error G_GNUC_UNUSED)
{
  hy_onnx_w_to_out_shape (w, "Expand", hy_onnx_w_input (w, 0));
  return TRUE;
}

/* ---- reverse ------------------------------------------------------------ */

/* Each reversed axis as a Slice from its end to before its start by step
 * -1 (ONNX clamps the extremes); ONNX names no Reverse op.  The importer
 * writes ArgMax's select_last_index so. */
static gboolean
write_reverse (hy_onnx_writer *w, const hy_onnx_write_op *op G_GNUC_UNUSED,
    GError **error G_GNUC_UNUSED)
{
  const hy_reverse_params *p = PARAMS (w, hy_reverse_params);
  int ndim = hy_onnx_w_input_shape (w, 0)->ndim;
  uint32_t mask = hy_axes_mask (p->axes, p->n_axes, ndim);
  gint64 starts[HY_MAX_DIMS], ends[HY_MAX_DIMS], axes[HY_MAX_DIMS];
  gint64 steps[HY_MAX_DIMS];
  int n = 0;
  for (int d = 0; d < ndim; d++)
    if (mask & (1u << d)) {
      starts[n] = G_MAXINT64;
      ends[n] = G_MININT64;
      axes[n] = d;
      steps[n++] = -1;
    }
  if (n == 0) {
    const char *x = hy_onnx_w_input (w, 0);
    hy_onnx_w_node (w, "Identity", &x, 1, hy_onnx_w_output (w, 0));
    return TRUE;
  }
  const char *in[5] = { hy_onnx_w_input (w, 0),
    hy_onnx_w_const_ints (w, "starts", starts, n),
    hy_onnx_w_const_ints (w, "ends", ends, n),
    hy_onnx_w_const_ints (w, "axes", axes, n),
    hy_onnx_w_const_ints (w, "steps", steps, n) };
  hy_onnx_w_node (w, "Slice", in, 5, hy_onnx_w_output (w, 0));
  return TRUE;
}

/* ---- _hy_quantize_dequantize -------------------------------------------- */

/* Input k (the scale or the zero point) as constant values, or a refusal:
 * ONNX's QuantizeLinear takes them as initializers of its own types. */
static const hy_tensor *
constant_input (hy_onnx_writer *w, guint k, const char *what,
    GError **error)
{
  const hy_tensor *t = hy_onnx_w_input_value (w, k);
  if (!t)
    hy_onnx_w_refuse (w, error, "the %s is computed, not a weight; "
        "QuantizeLinear is written with constant ones", what);
  return t;
}

/* QuantizeLinear then DequantizeLinear, with the op's scale, zero point
 * (int8 or uint8, as the op saturates to) and axis: what ONNX Runtime
 * computes for them is what the core's op does, rounding included. */
static gboolean
write_quantize_dequantize (hy_onnx_writer *w,
    const hy_onnx_write_op *op G_GNUC_UNUSED, GError **error)
{
  const hy_quantize_dequantize_params *p =
      PARAMS (w, hy_quantize_dequantize_params);
  const hy_tensor *scale = constant_input (w, 1, "scale", error);
  if (!scale)
    return FALSE;
  const hy_tensor *zero = constant_input (w, 2, "zero point", error);
  if (!zero)
    return FALSE;
  gint64 n = hy_shape_numel (&scale->shape);
  if (n < 1 || n > G_MAXINT32 || hy_shape_numel (&zero->shape) != n)
    return hy_onnx_w_refuse (w, error, "the scale has %" G_GINT64_FORMAT
        " values and the zero point %" G_GINT64_FORMAT "; one each or one "
        "per index of the axis are written", n,
        hy_shape_numel (&zero->shape));
  const int lo = p->out_uint8 ? 0 : -128, hi = p->out_uint8 ? 255 : 127;
  g_autofree gint64 *zp = g_new (gint64, n);
  for (gint64 i = 0; i < n; i++) {
    float z = zero->data[i];
    if (!(z >= lo && z <= hi) || z != floorf (z))
      return hy_onnx_w_refuse (w, error, "zero point %g is not an integer "
          "in [%d, %d]", (double) z, lo, hi);
    zp[i] = (gint64) z;
  }
  /* Per tensor: scalars (ONNX reads a 1-D scale as per axis). */
  hy_shape qshape = { .ndim = n > 1, .dims = { n } };
  const char *q_in[3] = { hy_onnx_w_input (w, 0),
    hy_onnx_w_const_floats (w, "scale", &qshape, scale->data),
    hy_onnx_w_const_bytes (w, "zero_point", &qshape,
        p->out_uint8 ? ONNX_UINT8 : ONNX_INT8, zp) };
  const char *quantized = hy_onnx_w_temp (w, "quantized");
  Onnx__NodeProto *qn = hy_onnx_w_node (w, "QuantizeLinear", q_in, 3,
      quantized);
  const char *dq_in[3] = { quantized, q_in[1], q_in[2] };
  Onnx__NodeProto *dqn = hy_onnx_w_node (w, "DequantizeLinear", dq_in, 3,
      hy_onnx_w_output (w, 0));
  if (n > 1) {
    int ndim = hy_onnx_w_input_shape (w, 0)->ndim;
    gint64 axis = p->axis < 0 ? p->axis + ndim : p->axis;
    hy_onnx_w_attr_int (w, qn, "axis", axis);
    hy_onnx_w_attr_int (w, dqn, "axis", axis);
  }
  return TRUE;
}

const hy_onnx_write_op hy_onnx_write_select_ops[] = {
  { HY_OP_QUANTIZE_DEQUANTIZE, write_quantize_dequantize, "QuantizeLinear" },
  { HY_OP_EQUAL_SCALAR, write_compare_scalar, "Equal" },
  { HY_OP_NOT_EQUAL_SCALAR, write_compare_scalar, "Equal" },
  { HY_OP_GREATER_SCALAR, write_compare_scalar, "Greater" },
  { HY_OP_GREATER_EQUAL_SCALAR, write_compare_scalar, "GreaterOrEqual" },
  { HY_OP_LESSER_SCALAR, write_compare_scalar, "Less" },
  { HY_OP_LESSER_EQUAL_SCALAR, write_compare_scalar, "LessOrEqual" },
  { HY_OP_ELEMWISE_EQUAL, write_compare, "Equal" },
  { HY_OP_ELEMWISE_NOT_EQUAL, write_compare, "Equal" },
  { HY_OP_ELEMWISE_GREATER, write_compare, "Greater" },
  { HY_OP_ELEMWISE_GREATER_EQUAL, write_compare, "GreaterOrEqual" },
  { HY_OP_ELEMWISE_LESSER, write_compare, "Less" },
  { HY_OP_ELEMWISE_LESSER_EQUAL, write_compare, "LessOrEqual" },
  { HY_OP_BROADCAST_EQUAL, write_compare, "Equal" },
  { HY_OP_BROADCAST_NOT_EQUAL, write_compare, "Equal" },
  { HY_OP_BROADCAST_GREATER, write_compare, "Greater" },
  { HY_OP_BROADCAST_GREATER_EQUAL, write_compare, "GreaterOrEqual" },
  { HY_OP_BROADCAST_LESSER, write_compare, "Less" },
  { HY_OP_BROADCAST_LESSER_EQUAL, write_compare, "LessOrEqual" },
  { HY_OP_WHERE, write_where, "Where" },
  { HY_OP_ARGMAX, write_arg_reduce, "ArgMax" },
  { HY_OP_ARGMIN, write_arg_reduce, "ArgMin" },
  { HY_OP_REVERSE, write_reverse, "Slice" },
  { HY_OP_BROADCAST_AXIS, write_expand, "Expand" },
  { HY_OP_BROADCAST_LIKE, write_expand, "Expand" },
};

const gsize hy_onnx_write_n_select_ops =
    G_N_ELEMENTS (hy_onnx_write_select_ops);

#endif /* HY_HAVE_ONNX */
