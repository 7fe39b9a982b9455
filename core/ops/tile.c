/*
 * tile.c — ops that make more data than they read: tile, repeat, and
 * _arange (which reads nothing: its shape comes from attributes alone)
 * with _contrib_arange_like (which reads only its data's shape and
 * dtype).
 */
#include <math.h>
#include <string.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/shape.h"

/* Largest output we agree to make from attributes alone (elements):
 * beyond it a corrupt attribute would only become a failed allocation. */
#define MAX_GENERATED ((int64_t) 1 << 34)

static const char *const data_input[] = { "data", NULL };

static gboolean
too_large (GError **error, const hy_shape *in)
{
  char buf[HY_SHAPE_STRLEN];
  g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
      "the output for input shape %s would be too large",
      hy_shape_format (in, buf, sizeof buf));
  return FALSE;
}

/* ---- tile --------------------------------------------------------------- */

static gboolean
tile_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_tile_params *p = params;
  hy_tuple reps = { 0 };
  if (!hy_attr_require (attrs, "reps", error)
      || !hy_attr_tuple (attrs, "reps", &reps, FALSE, error))
    return FALSE;
  for (int i = 0; i < reps.n; i++) {
    if (reps.v[i] < 1) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'reps' entry %d is %" G_GINT64_FORMAT "; repetition "
          "counts must be positive", i, (gint64) reps.v[i]);
      return FALSE;
    }
    p->reps[i] = reps.v[i];
  }
  p->n_reps = reps.n;
  return TRUE;
}

static gboolean
tile_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_tile_params *p = params;
  const hy_shape *s = &in[0];
  int nd = MAX (s->ndim, p->n_reps);
  if (nd > HY_MAX_DIMS) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "attribute 'reps' has %d entries: the output would have %d "
        "dimensions; at most %d are supported", p->n_reps, nd, HY_MAX_DIMS);
    return FALSE;
  }
  /* Both are right-aligned: missing leading entries count as 1. */
  hy_shape r = { .ndim = nd };
  int64_t numel = 1;
  for (int i = 0; i < nd; i++) {
    int si = s->ndim - nd + i, ri = p->n_reps - nd + i;
    int64_t d = si >= 0 ? s->dims[si] : 1;
    int64_t k = ri >= 0 ? p->reps[ri] : 1;
    if (__builtin_mul_overflow (d, k, &r.dims[i])
        || __builtin_mul_overflow (numel, r.dims[i], &numel)
        || numel > MAX_GENERATED)
      return too_large (error, s);
  }
  out[0] = r;
  return TRUE;
}

const hy_op_def hy_opdef_tile = {
  .params_size = sizeof (hy_tile_params),
  .parse = tile_parse,
  .input_names = data_input,
  .infer_shape = tile_infer,
  .infer_dtype = hy_dtype_like_data,
};

/* ---- repeat ------------------------------------------------------------- */

static gboolean
repeat_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_repeat_params *p = params;
  int64_t axis;
  gboolean axis_none;
  if (!hy_attr_require (attrs, "repeats", error)
      || !hy_attr_int (attrs, "repeats", 1, &p->repeats, error)
      || !hy_attr_opt_int (attrs, "axis", 0, &axis, &axis_none, error))
    return FALSE;
  if (p->repeats < 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'repeats' = %" G_GINT64_FORMAT " is negative",
        (gint64) p->repeats);
    return FALSE;
  }
  /* Absent and "None" both mean: repeat over the flattened input. */
  p->axis_none = axis_none || !hy_attr_has (attrs, "axis");
  if (!p->axis_none && (axis < -HY_MAX_DIMS || axis >= HY_MAX_DIMS)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'axis' = %" G_GINT64_FORMAT " is out of range",
        (gint64) axis);
    return FALSE;
  }
  p->axis = p->axis_none ? 0 : (int) axis;
  return TRUE;
}

static gboolean
repeat_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_repeat_params *p = params;
  const hy_shape *s = &in[0];
  int64_t numel = hy_shape_numel (s), total;
  if (__builtin_mul_overflow (numel, p->repeats, &total)
      || total > MAX_GENERATED)
    return too_large (error, s);
  if (p->axis_none) {
    out[0] = hy_shape_make (1, &total);
    return TRUE;
  }
  int axis;
  if (!hy_axis_normalize (p->axis, s->ndim, &axis)) {
    char buf[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "attribute 'axis' = %d is out of range for input shape %s",
        p->axis, hy_shape_format (s, buf, sizeof buf));
    return FALSE;
  }
  hy_shape r = *s;
  r.dims[axis] *= p->repeats;   /* cannot overflow: total did not */
  out[0] = r;
  return TRUE;
}

const hy_op_def hy_opdef_repeat = {
  .params_size = sizeof (hy_repeat_params),
  .parse = repeat_parse,
  .input_names = data_input,
  .infer_shape = repeat_infer,
  .infer_dtype = hy_dtype_like_data,
};

/* ---- _arange ------------------------------------------------------------ */

/* The dtypes MXNet's _arange accepts. */
static gboolean
arange_dtype_ok (int dtype, gboolean *integral)
{
  switch (dtype) {
    case HY_DTYPE_FLOAT32:
    case HY_DTYPE_FLOAT64:
    case HY_DTYPE_FLOAT16:
    case HY_DTYPE_BFLOAT16:
      *integral = FALSE;
      return TRUE;
    case HY_DTYPE_INT32:
    case HY_DTYPE_INT64:
    case HY_DTYPE_INT8:
    case HY_DTYPE_UINT8:
      *integral = TRUE;
      return TRUE;
    default:
      return FALSE;
  }
}

/* _contrib_arange_like: start, step, repeat and an optional axis; MXNet
 * 1.9.1 divides by repeat, so 0 is refused, and a zero step is allowed
 * (every value is start). */
static gboolean
arange_like_parse (GHashTable *attrs, hy_arange_params *p, GError **error)
{
  int64_t axis;
  gboolean axis_none;
  if (!hy_attr_float (attrs, "start", 0.0, &p->start, error)
      || !hy_attr_float (attrs, "step", 1.0, &p->step, error)
      || !hy_attr_int (attrs, "repeat", 1, &p->repeat, error)
      || !hy_attr_opt_int (attrs, "axis", 0, &axis, &axis_none, error))
    return FALSE;
  if (p->repeat < 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'repeat' = %" G_GINT64_FORMAT " must be positive",
        (gint64) p->repeat);
    return FALSE;
  }
  if (!axis_none && (axis < -HY_MAX_DIMS || axis >= HY_MAX_DIMS)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'axis' = '%s' is out of range for tensors of at most %d "
        "dimensions", hy_attr_string (attrs, "axis"), HY_MAX_DIMS);
    return FALSE;
  }
  p->has_axis = !axis_none && hy_attr_has (attrs, "axis");
  p->axis = (int) axis;
  p->dtype = HY_DTYPE_FLOAT32;  /* the data's, from arange_dtype */
  return TRUE;
}

static gboolean
arange_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_arange_params *p = params;
  if (p->op == HY_OP_ARANGE_LIKE)
    return arange_like_parse (attrs, p, error);
  double stop = 0.0;
  gboolean stop_none = !hy_attr_has (attrs, "stop"), infer_range, integral;
  if (!stop_none) {
    g_autofree char *v = g_strstrip (g_strdup (hy_attr_string (attrs,
                "stop")));
    stop_none = strcmp (v, "None") == 0;
  }
  if (!hy_attr_require (attrs, "start", error)
      || !hy_attr_float (attrs, "start", 0.0, &p->start, error)
      || (!stop_none && !hy_attr_float (attrs, "stop", 0.0, &stop, error))
      || !hy_attr_float (attrs, "step", 1.0, &p->step, error)
      || !hy_attr_int (attrs, "repeat", 1, &p->repeat, error)
      || !hy_attr_bool (attrs, "infer_range", FALSE, &infer_range, error)
      || !hy_attr_dtype (attrs, "dtype", HY_DTYPE_FLOAT32, &p->dtype, error))
    return FALSE;
  if (infer_range) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "attribute 'infer_range' = True (stop taken from the consumer's "
        "shape) is not supported; give 'stop' explicitly");
    return FALSE;
  }
  if (!arange_dtype_ok (p->dtype, &integral)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'dtype' = '%s' is not one of float32|float64|float16|"
        "bfloat16|int32|int64|int8|uint8", hy_attr_string (attrs, "dtype"));
    return FALSE;
  }
  p->integral = integral;
  /* arange(n) is range(0, n), as in Python. */
  if (stop_none) {
    stop = p->start;
    p->start = 0.0;
  }
  p->stop = stop;
  if (p->repeat < 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'repeat' = %" G_GINT64_FORMAT " must be positive",
        (gint64) p->repeat);
    return FALSE;
  }
  if (p->step == 0.0 || isnan (p->step)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'step' = %g must be non-zero", p->step);
    return FALSE;
  }
  if (p->step > 0 ? !(p->start < p->stop) : !(p->start > p->stop)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attributes (start, stop, step) = (%g, %g, %g) give an empty range",
        p->start, p->stop, p->step);
    return FALSE;
  }
  /* An integral arange computes in 64-bit integers: its bounds must be
   * integers that fit (the kernel converts them). */
  const double int_limit = 9.2e18;
  if (p->integral && !(fabs (p->start) < int_limit && fabs (p->stop)
          < int_limit && fabs (p->step) < int_limit)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attributes (start, stop, step) = (%g, %g, %g) do not fit the "
        "integer dtype '%s'", p->start, p->stop, p->step,
        hy_attr_string (attrs, "dtype"));
    return FALSE;
  }
  double n = ceil ((p->stop - p->start) / p->step) * (double) p->repeat;
  if (!(n <= (double) MAX_GENERATED)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attributes (start, stop, step, repeat) = (%g, %g, %g, %"
        G_GINT64_FORMAT ") give too many elements", p->start, p->stop,
        p->step, (gint64) p->repeat);
    return FALSE;
  }
  return TRUE;
}

static gboolean
arange_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_arange_params *p = params;
  if (p->op == HY_OP_ARANGE_LIKE) {
    char buf[HY_SHAPE_STRLEN];
    int axis;
    if (!p->has_axis) {
      out[0] = in[0];
      return TRUE;
    }
    if (!hy_axis_normalize (p->axis, in[0].ndim, &axis)) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "attribute 'axis' = %d is out of range for data of shape %s",
          p->axis, hy_shape_format (&in[0], buf, sizeof buf));
      return FALSE;
    }
    out[0] = hy_shape_make (1, &in[0].dims[axis]);
    return TRUE;
  }
  /* MXNet sizes the output in double precision, like this. */
  int64_t n = (int64_t) (ceil ((p->stop - p->start) / p->step)
      * (double) p->repeat);
  out[0] = hy_shape_make (1, &n);
  return TRUE;
}

static int
arange_num_inputs (const void *params)
{
  return ((const hy_arange_params *) params)->op == HY_OP_ARANGE_LIKE;
}

/* _arange's dtype is its attribute; arange_like's is its data's, which
 * decides whether start and step are truncated first (as MXNet computes
 * in the output's dtype). */
static gboolean
arange_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  hy_arange_params *p = params;
  if (p->op == HY_OP_ARANGE_LIKE) {
    const double int_limit = 9.2e18;
    p->dtype = in[0];
    p->integral = hy_dtype_is_integer (in[0]);
    if (p->integral && !(fabs (p->start) < int_limit
            && fabs (p->step) < int_limit)) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attributes (start, step) = (%g, %g) do not fit the data's "
          "integer dtype", p->start, p->step);
      return FALSE;
    }
  }
  out[0] = p->dtype;
  return TRUE;
}

const hy_op_def hy_opdef_arange = {
  .params_size = sizeof (hy_arange_params),
  .parse = arange_parse,
  .input_names = data_input,
  .num_inputs = arange_num_inputs,
  .infer_shape = arange_infer,
  .infer_dtype = arange_dtype,
};
