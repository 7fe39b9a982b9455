/*
 * slice.c — ops that cut tensors apart or join them: slice, slice_axis,
 * slice_like, Concat and SliceChannel (split), with MXNet 1.9.1's bounds
 * rules.
 */
#include <string.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/shape.h"

/* Upper bound on Concat inputs and SliceChannel outputs: the graph loader
 * allocates per output before any shape is known, so a corrupt count must
 * not turn into a huge allocation. */
#define MAX_PARTS 65536

static const char *const data_input[] = { "data", NULL };

static gboolean
axis_error (GError **error, const char *key, int axis, const hy_shape *s)
{
  char buf[HY_SHAPE_STRLEN];
  g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
      "attribute '%s' = %d is out of range for input shape %s", key, axis,
      hy_shape_format (s, buf, sizeof buf));
  return FALSE;
}

/* ---- slice -------------------------------------------------------------- */

static gboolean
slice_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_slice_params *p = params;
  hy_tuple begin = { 0 }, end = { 0 }, step = { 0 };
  if (!hy_attr_require (attrs, "begin", error)
      || !hy_attr_require (attrs, "end", error)
      || !hy_attr_tuple (attrs, "begin", &begin, TRUE, error)
      || !hy_attr_tuple (attrs, "end", &end, TRUE, error)
      || !hy_attr_tuple (attrs, "step", &step, TRUE, error))
    return FALSE;
  if (begin.n != end.n) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attributes 'begin' (%d entries) and 'end' (%d entries) must have "
        "the same length", begin.n, end.n);
    return FALSE;
  }
  if (step.n != 0 && step.n != begin.n) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'step' has %d entries; it must be empty or as long as "
        "'begin' (%d)", step.n, begin.n);
    return FALSE;
  }
  for (int i = 0; i < step.n; i++) {
    if (!(step.none_mask & (1u << i)) && step.v[i] == 0) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'step' entry %d is 0", i);
      return FALSE;
    }
  }
  p->n = begin.n;
  p->n_step = step.n;
  memcpy (p->begin, begin.v, sizeof p->begin);
  memcpy (p->end, end.v, sizeof p->end);
  memcpy (p->step, step.v, sizeof p->step);
  p->begin_none = begin.none_mask;
  p->end_none = end.none_mask;
  p->step_none = step.none_mask;
  return TRUE;
}

static gboolean
slice_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_slice_params *p = params;
  if (p->n > in[0].ndim) {
    char buf[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "attribute 'begin' has %d entries but the input shape %s has only "
        "%d dimensions", p->n, hy_shape_format (&in[0], buf, sizeof buf),
        in[0].ndim);
    return FALSE;
  }
  hy_shape r = in[0];
  for (int i = 0; i < p->n; i++) {
    int64_t first, step;
    hy_slice_resolve (p, i, in[0].dims[i], &first, &step, &r.dims[i]);
  }
  out[0] = r;
  return TRUE;
}

const hy_op_def hy_opdef_slice = {
  .params_size = sizeof (hy_slice_params),
  .parse = slice_parse,
  .input_names = data_input,
  .infer_shape = slice_infer,
  .infer_dtype = hy_dtype_like_data,
};

/* ---- slice_axis --------------------------------------------------------- */

static gboolean
slice_axis_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_slice_axis_params *p = params;
  int64_t begin, end;
  gboolean begin_none, end_none;
  if (!hy_attr_require (attrs, "axis", error)
      || !hy_attr_require (attrs, "begin", error)
      || !hy_attr_require (attrs, "end", error)
      || !hy_attr_int_in (attrs, "axis", 0, -HY_MAX_DIMS, HY_MAX_DIMS - 1,
          &p->axis, error)
      /* MXNet requires an integer begin; None (from the start) costs
       * nothing to accept. */
      || !hy_attr_opt_int (attrs, "begin", 0, &begin, &begin_none, error)
      || !hy_attr_opt_int (attrs, "end", 0, &end, &end_none, error))
    return FALSE;
  p->begin = begin_none ? 0 : begin;
  p->end = end;
  p->end_none = end_none;
  return TRUE;
}

static gboolean
slice_axis_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_slice_axis_params *p = params;
  int axis;
  if (!hy_axis_normalize (p->axis, in[0].ndim, &axis))
    return axis_error (error, "axis", p->axis, &in[0]);
  int64_t len = in[0].dims[axis], begin, end;
  hy_slice_axis_bounds (p, len, &begin, &end);
  hy_shape r = in[0];
  if (len == 0) {
    r.dims[axis] = 0;
  } else if (begin < 0 || end > len || begin >= end) {
    char buf[HY_SHAPE_STRLEN], ebuf[32];
    if (p->end_none)
      g_strlcpy (ebuf, "None", sizeof ebuf);
    else
      g_snprintf (ebuf, sizeof ebuf, "%" G_GINT64_FORMAT, (gint64) p->end);
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "attributes 'begin' = %" G_GINT64_FORMAT " and 'end' = %s select "
        "no valid range of axis %d (length %" G_GINT64_FORMAT ") of input "
        "shape %s; MXNet does not clamp slice_axis bounds",
        (gint64) p->begin, ebuf, axis, (gint64) len,
        hy_shape_format (&in[0], buf, sizeof buf));
    return FALSE;
  } else {
    r.dims[axis] = end - begin;
  }
  out[0] = r;
  return TRUE;
}

const hy_op_def hy_opdef_slice_axis = {
  .params_size = sizeof (hy_slice_axis_params),
  .parse = slice_axis_parse,
  .input_names = data_input,
  .infer_shape = slice_axis_infer,
  .infer_dtype = hy_dtype_like_data,
};

/* ---- slice_like --------------------------------------------------------- */

static gboolean
slice_like_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_slice_like_params *p = params;
  hy_tuple axes = { 0 };
  if (!hy_attr_tuple (attrs, "axes", &axes, FALSE, error))
    return FALSE;
  for (int i = 0; i < axes.n; i++) {
    if (axes.v[i] < -HY_MAX_DIMS || axes.v[i] >= HY_MAX_DIMS) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'axes' entry %d = %" G_GINT64_FORMAT " is out of range",
          i, (gint64) axes.v[i]);
      return FALSE;
    }
    p->axes[i] = (int) axes.v[i];
  }
  p->n_axes = axes.n;
  return TRUE;
}

static gboolean
slice_like_too_long (GError **error, int axis, const hy_shape *d,
    const hy_shape *like)
{
  char dbuf[HY_SHAPE_STRLEN], lbuf[HY_SHAPE_STRLEN];
  g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
      "axis %d of shape_like %s is longer than that of data %s: slice_like "
      "only shortens", axis, hy_shape_format (like, lbuf, sizeof lbuf),
      hy_shape_format (d, dbuf, sizeof dbuf));
  return FALSE;
}

static gboolean
slice_like_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_slice_like_params *p = params;
  const hy_shape *d = &in[0], *like = &in[1];
  char dbuf[HY_SHAPE_STRLEN], lbuf[HY_SHAPE_STRLEN];
  hy_shape r = *d;
  if (p->n_axes == 0) {
    /* Every axis: MXNet wants equal ranks here. */
    if (like->ndim != d->ndim) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "data %s and shape_like %s differ in rank; without 'axes' "
          "slice_like cuts every axis", hy_shape_format (d, dbuf,
              sizeof dbuf), hy_shape_format (like, lbuf, sizeof lbuf));
      return FALSE;
    }
    for (int i = 0; i < d->ndim; i++) {
      if (like->dims[i] > d->dims[i])
        return slice_like_too_long (error, i, d, like);
      r.dims[i] = like->dims[i];
    }
    out[0] = r;
    return TRUE;
  }
  for (int i = 0; i < p->n_axes; i++) {
    int axis = p->axes[i] < 0 ? p->axes[i] + d->ndim : p->axes[i];
    if (axis < 0 || axis >= d->ndim || axis >= like->ndim) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "attribute 'axes' entry %d = %d is out of range for data %s and "
          "shape_like %s", i, p->axes[i], hy_shape_format (d, dbuf,
              sizeof dbuf), hy_shape_format (like, lbuf, sizeof lbuf));
      return FALSE;
    }
    if (like->dims[axis] > d->dims[axis])
      return slice_like_too_long (error, axis, d, like);
    r.dims[axis] = like->dims[axis];
  }
  out[0] = r;
  return TRUE;
}

static const char *const slice_like_inputs[] = { "data", "shape_like",
  NULL };

const hy_op_def hy_opdef_slice_like = {
  .params_size = sizeof (hy_slice_like_params),
  .parse = slice_like_parse,
  .input_names = slice_like_inputs,
  .infer_shape = slice_like_infer,
  .infer_dtype = hy_dtype_like_data,
};

/* ---- Concat ------------------------------------------------------------- */

static gboolean
concat_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_concat_params *p = params;
  if (!hy_attr_has (attrs, "num_args")) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'num_args' (the number of inputs) is required");
    return FALSE;
  }
  return hy_attr_int_in (attrs, "num_args", 1, 1, MAX_PARTS, &p->num_args,
      error)
      && hy_attr_int_in (attrs, "dim", 1, -HY_MAX_DIMS, HY_MAX_DIMS - 1,
      &p->dim, error);
}

static int
concat_num_inputs (const void *params)
{
  return ((const hy_concat_params *) params)->num_args;
}

static gboolean
concat_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_concat_params *p = params;
  int axis;
  if (!hy_axis_normalize (p->dim, in[0].ndim, &axis))
    return axis_error (error, "dim", p->dim, &in[0]);
  hy_shape r = in[0];
  for (int k = 1; k < n_in; k++) {
    gboolean fits = in[k].ndim == in[0].ndim;
    for (int i = 0; fits && i < in[0].ndim; i++)
      fits = i == axis || in[k].dims[i] == in[0].dims[i];
    if (!fits) {
      char b0[HY_SHAPE_STRLEN], bk[HY_SHAPE_STRLEN];
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "input %d (arg%d) has shape %s but input 0 has shape %s; they "
          "must match except on the concatenated axis %d", k, k,
          hy_shape_format (&in[k], bk, sizeof bk),
          hy_shape_format (&in[0], b0, sizeof b0), axis);
      return FALSE;
    }
    if (__builtin_add_overflow (r.dims[axis], in[k].dims[axis],
            &r.dims[axis])) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE, "concatenated axis %d "
          "is too long", axis);
      return FALSE;
    }
  }
  out[0] = r;
  return TRUE;
}

const hy_op_def hy_opdef_concat = {
  .params_size = sizeof (hy_concat_params),
  .parse = concat_parse,
  .input_names = NULL,
  .num_inputs = concat_num_inputs,
  .infer_shape = concat_infer,
  .infer_dtype = hy_dtype_all_alike,
};

/* ---- SliceChannel (split) ----------------------------------------------- */

static gboolean
split_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_split_params *p = params;
  gboolean squeeze;
  if (!hy_attr_require (attrs, "num_outputs", error)
      || !hy_attr_int_in (attrs, "num_outputs", 1, 1, MAX_PARTS,
          &p->num_outputs, error)
      || !hy_attr_int_in (attrs, "axis", 1, -HY_MAX_DIMS, HY_MAX_DIMS - 1,
          &p->axis, error)
      || !hy_attr_bool (attrs, "squeeze_axis", FALSE, &squeeze, error))
    return FALSE;
  p->squeeze_axis = squeeze;
  return TRUE;
}

static int
split_num_outputs (const void *params)
{
  return ((const hy_split_params *) params)->num_outputs;
}

static gboolean
split_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_split_params *p = params;
  char buf[HY_SHAPE_STRLEN];
  int axis;
  if (!hy_axis_normalize (p->axis, in[0].ndim, &axis))
    return axis_error (error, "axis", p->axis, &in[0]);
  int64_t len = in[0].dims[axis];
  if (len % p->num_outputs != 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "cannot split axis %d of input shape %s (length %" G_GINT64_FORMAT
        ") into num_outputs = %d equal parts", axis,
        hy_shape_format (&in[0], buf, sizeof buf), (gint64) len,
        p->num_outputs);
    return FALSE;
  }
  hy_shape r = in[0];
  if (p->squeeze_axis) {
    if (len != p->num_outputs) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "squeeze_axis needs axis %d of input shape %s to have length "
          "num_outputs = %d", axis, hy_shape_format (&in[0], buf,
              sizeof buf), p->num_outputs);
      return FALSE;
    }
    /* A 1-d input squeezes to scalars, as MXNet does. */
    memmove (&r.dims[axis], &r.dims[axis + 1],
        (size_t) (r.ndim - axis - 1) * sizeof r.dims[0]);
    r.ndim--;
  } else {
    r.dims[axis] = len / p->num_outputs;
  }
  for (int i = 0; i < n_out; i++)
    out[i] = r;
  return TRUE;
}

const hy_op_def hy_opdef_split = {
  .params_size = sizeof (hy_split_params),
  .parse = split_parse,
  .input_names = data_input,
  .num_outputs = split_num_outputs,
  .infer_shape = split_infer,
  .infer_dtype = hy_dtype_like_data,
};
