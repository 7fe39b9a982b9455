/*
 * layout.c — shape_array, reverse (flip), stack, broadcast_axis
 * (broadcast_axes) and broadcast_like: the tensor plumbing of GluonCV's
 * two-stage detectors, with MXNet 1.9.1's attributes and shape checks.
 */
#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/shape.h"

/* Reads the tuple of axes `key` into axes[]; FALSE + error naming it. */
static gboolean
axes_attr (GHashTable *attrs, const char *key, int *axes, int *n,
    GError **error)
{
  hy_tuple t = { 0 };
  if (!hy_attr_tuple (attrs, key, &t, FALSE, error))
    return FALSE;
  if (t.n > HY_SHAPE_PARAM_MAX) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute '%s' = '%s' has %d entries; at most %d are supported",
        key, hy_attr_string (attrs, key), t.n, HY_SHAPE_PARAM_MAX);
    return FALSE;
  }
  /* MXNet 1.9.1 indexes the shape with these axes as written: a
   * negative one is refused there ("index = -1 must be in range"). */
  for (int i = 0; i < t.n; i++) {
    if (t.v[i] < 0 || t.v[i] >= HY_MAX_DIMS) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute '%s' = '%s': axes must be in [0, %d] (MXNet takes no "
          "negative axes here)", key, hy_attr_string (attrs, key),
          HY_MAX_DIMS - 1);
      return FALSE;
    }
    axes[i] = (int) t.v[i];
  }
  *n = t.n;
  return TRUE;
}

/* Every axis within the input's rank, none twice. */
static gboolean
check_axes (const int *axes, int n, const hy_shape *d, const char *key,
    GError **error)
{
  uint32_t seen = 0;
  char buf[HY_SHAPE_STRLEN];
  for (int i = 0; i < n; i++) {
    int a;
    if (!hy_axis_normalize (axes[i], d->ndim, &a)) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "'%s' entry %d (%d) is outside data of shape %s", key, i, axes[i],
          hy_shape_format (d, buf, sizeof buf));
      return FALSE;
    }
    if (seen & (1u << a)) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "'%s' names axis %d twice (data of shape %s)", key, a,
          hy_shape_format (d, buf, sizeof buf));
      return FALSE;
    }
    seen |= 1u << a;
  }
  return TRUE;
}

/* ---- shape_array -------------------------------------------------------- */

static gboolean
shape_array_parse (GHashTable *attrs, void *params, GError **error)
{
  return TRUE;
}

static gboolean
shape_array_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  out[0] = (hy_shape) { .ndim = 1, .dims = { in[0].ndim } };
  return TRUE;
}

static const char *const data_input[] = { "data", NULL };

/* MXNet's shape_array gives int64. */
static gboolean
shape_array_dtype (void *params, const hy_dtype *in, int n_in,
    hy_dtype *out, int n_out, GError **error)
{
  out[0] = HY_DTYPE_INT64;
  return TRUE;
}

const hy_op_def hy_opdef_shape_array = {
  .params_size = sizeof (hy_shape_array_params),
  .parse = shape_array_parse,
  .input_names = data_input,
  .infer_shape = shape_array_infer,
  .infer_dtype = shape_array_dtype,
};

/* ---- reverse ------------------------------------------------------------ */

static gboolean
reverse_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_reverse_params *p = params;
  return hy_attr_require (attrs, "axis", error)
      && axes_attr (attrs, "axis", p->axes, &p->n_axes, error);
}

static gboolean
reverse_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_reverse_params *p = params;
  if (!check_axes (p->axes, p->n_axes, &in[0], "axis", error))
    return FALSE;
  out[0] = in[0];
  return TRUE;
}

const hy_op_def hy_opdef_reverse = {
  .params_size = sizeof (hy_reverse_params),
  .parse = reverse_parse,
  .input_names = data_input,
  .infer_shape = reverse_infer,
  .infer_dtype = hy_dtype_like_data,
};

/* ---- stack -------------------------------------------------------------- */

static gboolean
stack_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_stack_params *p = params;
  return hy_attr_require (attrs, "num_args", error)
      && hy_attr_int_in (attrs, "num_args", 1, 1, 65536, &p->num_args, error)
      && hy_attr_int_in (attrs, "axis", 0, -HY_MAX_DIMS, HY_MAX_DIMS - 1,
          &p->axis, error);
}

static int
stack_num_inputs (const void *params)
{
  return ((const hy_stack_params *) params)->num_args;
}

static gboolean
stack_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_stack_params *p = params;
  char b0[HY_SHAPE_STRLEN], bk[HY_SHAPE_STRLEN];
  for (int k = 1; k < n_in; k++) {
    if (!hy_shape_equal (&in[k], &in[0])) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "input %d (arg%d) has shape %s but input 0 has shape %s; stack "
          "needs equal shapes", k, k, hy_shape_format (&in[k], bk, sizeof bk),
          hy_shape_format (&in[0], b0, sizeof b0));
      return FALSE;
    }
  }
  int axis;
  if (in[0].ndim + 1 > HY_MAX_DIMS
      || !hy_axis_normalize (p->axis, in[0].ndim + 1, &axis)) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "cannot stack inputs of shape %s along axis %d (at most %d "
        "dimensions)", hy_shape_format (&in[0], b0, sizeof b0), p->axis,
        HY_MAX_DIMS);
    return FALSE;
  }
  hy_shape r = { .ndim = in[0].ndim + 1 };
  for (int i = 0, j = 0; i < r.ndim; i++)
    r.dims[i] = i == axis ? n_in : in[0].dims[j++];
  out[0] = r;
  return TRUE;
}

const hy_op_def hy_opdef_stack = {
  .params_size = sizeof (hy_stack_params),
  .parse = stack_parse,
  .input_names = NULL,
  .num_inputs = stack_num_inputs,
  .infer_shape = stack_infer,
  .infer_dtype = hy_dtype_all_alike,
};

/* ---- broadcast_axis ----------------------------------------------------- */

/* broadcast_like's lhs_axes and rhs_axes: both or neither (MXNet takes
 * the axes only when both are given), of one length, not empty; any
 * integers here, checked against the shapes later. */
static gboolean
broadcast_like_parse (GHashTable *attrs, hy_broadcast_axis_params *p,
    GError **error)
{
  hy_tuple lhs = { 0 }, rhs = { 0 };
  const gboolean has_lhs = hy_attr_has (attrs, "lhs_axes")
      && !hy_attr_is_none (attrs, "lhs_axes");
  const gboolean has_rhs = hy_attr_has (attrs, "rhs_axes")
      && !hy_attr_is_none (attrs, "rhs_axes");
  if ((has_lhs && !hy_attr_tuple (attrs, "lhs_axes", &lhs, FALSE, error))
      || (has_rhs && !hy_attr_tuple (attrs, "rhs_axes", &rhs, FALSE,
              error)))
    return FALSE;
  if (!has_lhs || !has_rhs)
    return TRUE;
  if (lhs.n != rhs.n || lhs.n == 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attributes 'lhs_axes' = '%s' and 'rhs_axes' = '%s' must have the "
        "same, non-zero number of entries",
        hy_attr_string (attrs, "lhs_axes"), hy_attr_string (attrs,
            "rhs_axes"));
    return FALSE;
  }
  for (int i = 0; i < lhs.n; i++) {
    if (lhs.v[i] < -HY_MAX_DIMS || lhs.v[i] >= HY_MAX_DIMS
        || rhs.v[i] < -HY_MAX_DIMS || rhs.v[i] >= HY_MAX_DIMS) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attributes 'lhs_axes' = '%s', 'rhs_axes' = '%s': entry %d is "
          "out of range for tensors of at most %d dimensions",
          hy_attr_string (attrs, "lhs_axes"), hy_attr_string (attrs,
              "rhs_axes"), i, HY_MAX_DIMS);
      return FALSE;
    }
    p->axes[i] = (int) lhs.v[i];
    p->rhs_axes[i] = (int) rhs.v[i];
  }
  p->n_axes = lhs.n;
  return TRUE;
}

/* Without axes: the shapes of one rank, lhs's axes of length 1 or
 * rhs's.  With them: lhs with axis lhs_axes[i] (of length 1) as long as
 * rhs's axis rhs_axes[i], a later pair winning over an earlier one for
 * the same axis, as in MXNet. */
static gboolean
broadcast_like_infer (const hy_broadcast_axis_params *p, const hy_shape *in,
    hy_shape *out, GError **error)
{
  char lbuf[HY_SHAPE_STRLEN], rbuf[HY_SHAPE_STRLEN];
  const hy_shape *l = &in[0], *r = &in[1];
  hy_shape o = *l;
  if (p->n_axes == 0) {
    gboolean ok = l->ndim == r->ndim;
    for (int i = 0; ok && i < l->ndim; i++)
      ok = l->dims[i] == r->dims[i] || l->dims[i] == 1;
    if (!ok) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "lhs of shape %s cannot be broadcast to rhs's %s: the ranks must "
          "match and each lhs axis be 1 long or as long as rhs's",
          hy_shape_format (l, lbuf, sizeof lbuf),
          hy_shape_format (r, rbuf, sizeof rbuf));
      return FALSE;
    }
    *out = *r;
    return TRUE;
  }
  for (int i = 0; i < p->n_axes; i++) {
    int la, ra;
    if (!hy_axis_normalize (p->axes[i], l->ndim, &la)
        || !hy_axis_normalize (p->rhs_axes[i], r->ndim, &ra)) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "axes pair %d (lhs %d, rhs %d) is outside lhs %s or rhs %s", i,
          p->axes[i], p->rhs_axes[i], hy_shape_format (l, lbuf,
              sizeof lbuf), hy_shape_format (r, rbuf, sizeof rbuf));
      return FALSE;
    }
    if (l->dims[la] != 1) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "axis %d of lhs %s has length %" G_GINT64_FORMAT "; an axis in "
          "lhs_axes must have length 1", la, hy_shape_format (l, lbuf,
              sizeof lbuf), (gint64) l->dims[la]);
      return FALSE;
    }
    o.dims[la] = r->dims[ra];
  }
  *out = o;
  return TRUE;
}

static gboolean
broadcast_axis_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_broadcast_axis_params *p = params;
  if (p->op == HY_OP_BROADCAST_LIKE)
    return broadcast_like_parse (attrs, p, error);
  if (!axes_attr (attrs, "axis", p->axes, &p->n_axes, error))
    return FALSE;
  hy_tuple t = { 0 };
  if (!hy_attr_tuple (attrs, "size", &t, FALSE, error))
    return FALSE;
  if (t.n != p->n_axes) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'size' has %d entries but 'axis' has %d; they must "
        "match", t.n, p->n_axes);
    return FALSE;
  }
  for (int i = 0; i < t.n; i++) {
    if (t.v[i] < 0 || t.v[i] > G_MAXINT32) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'size' = '%s': sizes must be in [0, %d]",
          hy_attr_string (attrs, "size"), G_MAXINT32);
      return FALSE;
    }
    p->size[i] = t.v[i];
  }
  return TRUE;
}

static gboolean
broadcast_axis_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_broadcast_axis_params *p = params;
  char buf[HY_SHAPE_STRLEN];
  if (p->op == HY_OP_BROADCAST_LIKE)
    return broadcast_like_infer (p, in, out, error);
  if (!check_axes (p->axes, p->n_axes, &in[0], "axis", error))
    return FALSE;
  hy_shape r = in[0];
  for (int i = 0; i < p->n_axes; i++) {
    int a;
    hy_axis_normalize (p->axes[i], r.ndim, &a);
    if (in[0].dims[a] != 1) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "axis %d of data %s has length %" G_GINT64_FORMAT "; a broadcast "
          "axis must have length 1", a, hy_shape_format (&in[0], buf,
              sizeof buf), (gint64) in[0].dims[a]);
      return FALSE;
    }
    r.dims[a] = p->size[i];
  }
  out[0] = r;
  return TRUE;
}

/* broadcast_like reads its second input's shape only. */
static const char *const broadcast_inputs[] = { "data", "rhs", NULL };

static int
broadcast_num_inputs (const void *params)
{
  return ((const hy_broadcast_axis_params *) params)->op
      == HY_OP_BROADCAST_LIKE ? 2 : 1;
}

const hy_op_def hy_opdef_broadcast_axis = {
  .params_size = sizeof (hy_broadcast_axis_params),
  .parse = broadcast_axis_parse,
  .input_names = broadcast_inputs,
  .num_inputs = broadcast_num_inputs,
  .infer_shape = broadcast_axis_infer,
  .infer_dtype = hy_dtype_like_data,
};

/* ---- gather_nd ---------------------------------------------------------- */

static gboolean
gather_nd_parse (GHashTable *attrs, void *params, GError **error)
{
  return TRUE;
}

/* data (X_0..X_{N-1}), indices (M, Y_0..Y_{K-1}) -> (Y..., X_M..X_{N-1}),
 * with MXNet 1.9.1's checks: indices of rank >= 2, M <= N. */
static gboolean
gather_nd_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_shape *d = &in[0], *ix = &in[1];
  char sd[HY_SHAPE_STRLEN], si[HY_SHAPE_STRLEN];
  if (ix->ndim < 2) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "indices %s must have at least 2 dimensions (M, Y_0, ...): the "
        "leading axis lists one index per gathered data axis",
        hy_shape_format (ix, si, sizeof si));
    return FALSE;
  }
  if (ix->dims[0] < 1 || ix->dims[0] > d->ndim) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "indices %s index %" G_GINT64_FORMAT " axes, but data %s has %d "
        "(the leading axis of indices must be in [1, data ndim])",
        hy_shape_format (ix, si, sizeof si), ix->dims[0],
        hy_shape_format (d, sd, sizeof sd), d->ndim);
    return FALSE;
  }
  const int m = (int) ix->dims[0];
  const int nd = ix->ndim - 1 + d->ndim - m;
  if (nd > HY_MAX_DIMS) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "output of data %s and indices %s would have %d dimensions; at "
        "most %d are supported", hy_shape_format (d, sd, sizeof sd),
        hy_shape_format (ix, si, sizeof si), nd, HY_MAX_DIMS);
    return FALSE;
  }
  hy_shape o = { .ndim = nd };
  int k = 0;
  for (int i = 1; i < ix->ndim; i++)
    o.dims[k++] = ix->dims[i];
  for (int i = m; i < d->ndim; i++)
    o.dims[k++] = d->dims[i];
  out[0] = o;
  return TRUE;
}

static const char *const gather_nd_inputs[] = { "data", "indices", NULL };

const hy_op_def hy_opdef_gather_nd = {
  .params_size = sizeof (hy_gather_nd_params),
  .parse = gather_nd_parse,
  .input_names = gather_nd_inputs,
  .infer_shape = gather_nd_infer,
  .infer_dtype = hy_dtype_like_data,
};
