/*
 * ordering.c — topk, sort and argsort with MXNet 1.9.1's attributes,
 * defaults and shape rules (src/operator/tensor/ordering_op-inl.h).
 *
 * All three are one family: sort is topk with k = 0 and ret_typ value,
 * argsort the same with ret_typ indices.  `axis` None flattens the input
 * to one row; an absent axis is -1 (unlike argmax, whose default is
 * None).  k <= 0 takes the whole axis; a k past the axis length is
 * refused, as MXNet refuses it.
 *
 * Index outputs are floats here (MXNet's dtype float32).  The other index
 * dtypes give the same values as long as every index of the axis fits:
 * uint8 up to 255, float16 up to 2048, the rest up to 2^24 (what float32
 * holds exactly).  A longer axis is refused at shape inference: MXNet
 * 1.9.1 documents an error there but in fact wraps uint8 indices (700
 * elements give 700 mod 256) and rounds float16 ones, and our float32
 * output could not keep int32/int64/float64 indices past 2^24.
 */
#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/ordering.h"

static const char *const data_input[] = { "data", NULL };

static const char *const ret_types[] = {
  "value", "indices", "mask", "both", NULL,
};

static gboolean
ordering_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_ordering_params *p = params;
  int64_t axis = -1, k = 0;
  gboolean ascend = TRUE, ok = TRUE;
  int ret = HY_TOPK_RET_VALUE;
  int dtype = HY_DTYPE_FLOAT32;

  /* Absent is -1; only an explicit None flattens. */
  p->flatten = hy_attr_is_none (attrs, "axis");
  if (!p->flatten && !hy_attr_int (attrs, "axis", -1, &axis, error))
    return FALSE;
  if (!p->flatten && (axis < -HY_MAX_DIMS || axis >= HY_MAX_DIMS)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'axis' = %" G_GINT64_FORMAT " is out of range for tensors "
        "of at most %d dimensions", (gint64) axis, HY_MAX_DIMS);
    return FALSE;
  }
  p->axis = p->flatten ? 0 : (int) axis;

  /* topk returns the largest by default; sort and argsort ascend. */
  if (p->op == HY_OP_TOPK)
    ok = hy_attr_int (attrs, "k", 1, &k, error)
        && hy_attr_enum (attrs, "ret_typ", ret_types, HY_TOPK_RET_INDICES,
            &ret, error)
        && hy_attr_bool (attrs, "is_ascend", FALSE, &ascend, error);
  if (p->op == HY_OP_SORT || p->op == HY_OP_ARGSORT)
    ok = hy_attr_bool (attrs, "is_ascend", TRUE, &ascend, error);
  if (p->op == HY_OP_TOPK || p->op == HY_OP_ARGSORT)
    ok = ok && hy_attr_dtype (attrs, "dtype", HY_DTYPE_FLOAT32, &dtype, error);
  if (!ok)
    return FALSE;
  if (p->op == HY_OP_ARGSORT)
    ret = HY_TOPK_RET_INDICES;
  switch (dtype) {
    case HY_DTYPE_FLOAT32: case HY_DTYPE_FLOAT64: case HY_DTYPE_FLOAT16:
    case HY_DTYPE_INT32: case HY_DTYPE_INT64: case HY_DTYPE_UINT8:
      break;
    default:
      /* MXNet 1.9.1 offers these six only. */
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'dtype' = '%s' is not one of uint8|int32|int64|"
          "float16|float32|float64", hy_attr_string (attrs, "dtype"));
      return FALSE;
  }
  p->k = k;
  p->ret_typ = ret;
  p->is_ascend = ascend;
  p->dtype = dtype;
  return TRUE;
}

static int
ordering_num_outputs (const void *params)
{
  const hy_ordering_params *p = params;
  return p->ret_typ == HY_TOPK_RET_BOTH ? 2 : 1;
}

/* The largest index `dtype` holds exactly, as MXNet's MaxIntegerValue,
 * capped at what our float32 output holds exactly. */
static int64_t
max_index (int dtype)
{
  int64_t f32 = (int64_t) 1 << 24;
  switch (dtype) {
    case HY_DTYPE_UINT8: return 255;
    case HY_DTYPE_FLOAT16: return 2048;
    default: return f32;
  }
}

static const char *
dtype_name (int dtype)
{
  switch (dtype) {
    case HY_DTYPE_UINT8: return "uint8";
    case HY_DTYPE_FLOAT16: return "float16";
    case HY_DTYPE_INT32: return "int32";
    case HY_DTYPE_INT64: return "int64";
    case HY_DTYPE_FLOAT64: return "float64";
    default: return "float32";
  }
}

static gboolean
ordering_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_ordering_params *p = params;
  const hy_shape *d = &in[0];
  char buf[HY_SHAPE_STRLEN];
  int axis = 0;
  int64_t n;
  if (p->flatten) {
    n = hy_shape_numel (d);
  } else {
    if (!hy_axis_normalize (p->axis, d->ndim, &axis)) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "attribute 'axis' = %d is out of range for input shape %s "
          "(expected %d to %d)", p->axis, hy_shape_format (d, buf, sizeof buf),
          -d->ndim, d->ndim - 1);
      return FALSE;
    }
    n = d->dims[axis];
  }
  int64_t k = p->k <= 0 ? n : p->k;
  if (k < 1 || k > n) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "k = %" G_GINT64_FORMAT " must be in [1, %" G_GINT64_FORMAT "], the "
        "length of the sorted axis of input shape %s", (gint64) k, (gint64) n,
        hy_shape_format (d, buf, sizeof buf));
    return FALSE;
  }
  if ((p->ret_typ == HY_TOPK_RET_INDICES || p->ret_typ == HY_TOPK_RET_BOTH)
      && n > max_index (p->dtype)) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "the sorted axis of input shape %s has %" G_GINT64_FORMAT " elements, "
        "but indices of dtype '%s' are exact (and float32 output holds them) "
        "only for axes of up to %" G_GINT64_FORMAT " elements",
        hy_shape_format (d, buf, sizeof buf), (gint64) n,
        dtype_name (p->dtype), (gint64) max_index (p->dtype));
    return FALSE;
  }
  hy_shape o = *d;
  if (p->ret_typ != HY_TOPK_RET_MASK) {
    if (p->flatten) {
      o.ndim = 1;
      o.dims[0] = k;
    } else {
      o.dims[axis] = k;
    }
  }
  for (int i = 0; i < n_out; i++)
    out[i] = o;
  return TRUE;
}

/* Values and masks keep the data's dtype; indices take `dtype`. */
static gboolean
ordering_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  const hy_ordering_params *p = params;
  const gboolean indices = p->ret_typ == HY_TOPK_RET_INDICES;
  out[0] = indices ? (hy_dtype) p->dtype : in[0];
  if (n_out > 1)
    out[1] = p->dtype;          /* ret_typ both: values, then indices */
  return TRUE;
}

const hy_op_def hy_opdef_ordering = {
  .params_size = sizeof (hy_ordering_params),
  .parse = ordering_parse,
  .input_names = data_input,
  .num_outputs = ordering_num_outputs,
  .infer_shape = ordering_infer,
  .infer_dtype = ordering_dtype,
};
