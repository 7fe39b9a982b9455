/*
 * shape.c — ops that keep the bytes and change only the shape (_copy,
 * Dropout, BlockGrad, Flatten, Reshape, expand_dims, squeeze), plus
 * transpose, which moves them.
 *
 * Attribute defaults and shape rules follow MXNet 1.9.1's non-numpy
 * ("legacy") semantics, where arrays have at least one dimension.
 */
#include <string.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/shape.h"

static const char *const data_input[] = { "data", NULL };

/* Product of dims[0..n) into *out; FALSE if it overflows int64. */
static gboolean
checked_product (const int64_t *dims, int n, int64_t *out)
{
  int64_t p = 1;
  for (int i = 0; i < n; i++)
    if (__builtin_mul_overflow (p, dims[i], &p))
      return FALSE;
  *out = p;
  return TRUE;
}

static gboolean
same_shape (const void *params, const hy_shape *in, int n_in, hy_shape *out,
    int n_out, GError **error)
{
  out[0] = in[0];
  return TRUE;
}

/* ---- _copy, Dropout, BlockGrad ------------------------------------------ */

static gboolean
identity_parse (GHashTable *attrs, void *params, GError **error)
{
  const hy_identity_params *p = params;
  if (p->op != HY_OP_DROPOUT)
    return TRUE;

  static const char *const modes[] = { "training", "always", NULL };
  double prob;
  int mode;
  hy_tuple axes = { 0 };
  if (!hy_attr_float (attrs, "p", 0.5, &prob, error)
      || !hy_attr_enum (attrs, "mode", modes, 0, &mode, error)
      || !hy_attr_tuple (attrs, "axes", &axes, FALSE, error))
    return FALSE;
  /* cudnn_off is "boolean or None"; it only picks a training kernel. */
  gboolean ignored;
  if (!hy_attr_is_none (attrs, "cudnn_off")
      && !hy_attr_bool (attrs, "cudnn_off", FALSE, &ignored, error))
    return FALSE;
  if (!(prob >= 0.0 && prob <= 1.0)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'p' = %g is not a probability in [0, 1]", prob);
    return FALSE;
  }
  /* MXNet 1.9.1 keeps dropping at random in inference when mode=always;
   * no deterministic engine can reproduce that, so say so. */
  if (mode == 1 && prob > 0.0) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "attribute 'mode' = 'always' with p = %g drops elements at random "
        "even at inference; only mode 'training' (identity at inference) "
        "is supported", prob);
    return FALSE;
  }
  return TRUE;
}

const hy_op_def hy_opdef_identity = {
  .params_size = sizeof (hy_identity_params),
  .parse = identity_parse,
  .input_names = data_input,
  .infer_shape = same_shape,
  .infer_dtype = hy_dtype_like_data,
  .inplace = TRUE,
};

/* ---- Flatten ------------------------------------------------------------ */

static gboolean
flatten_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  char buf[HY_SHAPE_STRLEN];
  if (in[0].ndim < 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "Flatten needs an input with at least 1 dimension, got shape %s",
        hy_shape_format (&in[0], buf, sizeof buf));
    return FALSE;
  }
  int64_t rest;
  if (!checked_product (in[0].dims + 1, in[0].ndim - 1, &rest)) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "input shape %s is too large", hy_shape_format (&in[0], buf,
            sizeof buf));
    return FALSE;
  }
  int64_t dims[2] = { in[0].dims[0], rest };
  out[0] = hy_shape_make (2, dims);
  return TRUE;
}

const hy_op_def hy_opdef_flatten = {
  .params_size = sizeof (hy_flatten_params),
  .input_names = data_input,
  .infer_shape = flatten_infer,
  .infer_dtype = hy_dtype_like_data,
  .inplace = TRUE,
};

/* ---- Reshape ------------------------------------------------------------ */

/* reshape_like: lhs_begin, lhs_end, rhs_begin, rhs_end, each an integer
 * or None. */
static gboolean
reshape_like_parse (GHashTable *attrs, hy_reshape_params *p, GError **error)
{
  static const char *const side[2] = { "lhs", "rhs" };
  for (int k = 0; k < 2; k++) {
    g_autofree char *begin = g_strdup_printf ("%s_begin", side[k]);
    g_autofree char *end = g_strdup_printf ("%s_end", side[k]);
    gboolean begin_none, end_none;
    if (!hy_attr_opt_int (attrs, begin, 0, &p->like_begin[k], &begin_none,
            error)
        || !hy_attr_opt_int (attrs, end, 0, &p->like_end[k], &end_none,
            error))
      return FALSE;
    p->like_begin_none[k] = begin_none || !hy_attr_has (attrs, begin);
    p->like_end_none[k] = end_none || !hy_attr_has (attrs, end);
  }
  return TRUE;
}

/* Side k's range [*begin, *end) on a shape of rank ndim, as MXNet 1.9.1
 * resolves it: negative bounds count from the end, and the range must
 * be a non-empty part of the axes. */
static gboolean
reshape_like_range (const hy_reshape_params *p, int k, const hy_shape *s,
    int *begin, int *end, GError **error)
{
  static const char *const side[2] = { "lhs", "rhs" };
  char buf[HY_SHAPE_STRLEN];
  int64_t b = p->like_begin_none[k] ? 0 : p->like_begin[k];
  int64_t e = p->like_end_none[k] ? s->ndim : p->like_end[k];
  b = b < 0 ? b + s->ndim : b;
  e = e < 0 ? e + s->ndim : e;
  if (b < 0 || e > s->ndim || b >= e) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "%s_begin, %s_end resolve to axes [%" G_GINT64_FORMAT ", %"
        G_GINT64_FORMAT ") of %s %s; they must be a non-empty range of its "
        "axes", side[k], side[k], (gint64) b, (gint64) e, side[k],
        hy_shape_format (s, buf, sizeof buf));
    return FALSE;
  }
  *begin = (int) b;
  *end = (int) e;
  return TRUE;
}

/* lhs's axes before the range, rhs's in its range, lhs's after it: the
 * same element count as lhs. */
static gboolean
reshape_like_infer (const hy_reshape_params *p, const hy_shape *in,
    hy_shape *out, GError **error)
{
  char lbuf[HY_SHAPE_STRLEN], obuf[HY_SHAPE_STRLEN];
  int lb, le, rb, re;
  if (!reshape_like_range (p, 0, &in[0], &lb, &le, error)
      || !reshape_like_range (p, 1, &in[1], &rb, &re, error))
    return FALSE;
  const int ndim = lb + (re - rb) + (in[0].ndim - le);
  if (ndim > HY_MAX_DIMS) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "the result would have %d dimensions, more than the %d supported",
        ndim, HY_MAX_DIMS);
    return FALSE;
  }
  hy_shape o = { .ndim = ndim };
  int n = 0;
  for (int i = 0; i < lb; i++)
    o.dims[n++] = in[0].dims[i];
  for (int i = rb; i < re; i++)
    o.dims[n++] = in[1].dims[i];
  for (int i = le; i < in[0].ndim; i++)
    o.dims[n++] = in[0].dims[i];
  int64_t have, want;
  if (!checked_product (in[0].dims, in[0].ndim, &have)
      || !checked_product (o.dims, o.ndim, &want) || have != want) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "lhs of shape %s cannot become %s: the element counts differ",
        hy_shape_format (&in[0], lbuf, sizeof lbuf),
        hy_shape_format (&o, obuf, sizeof obuf));
    return FALSE;
  }
  *out = o;
  return TRUE;
}

static gboolean
reshape_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_reshape_params *p = params;
  if (p->op == HY_OP_RESHAPE_LIKE)
    return reshape_like_parse (attrs, p, error);
  hy_tuple shape = { 0 }, target = { 0 };
  gboolean reverse, keep_highest;
  if (!hy_attr_tuple (attrs, "shape", &shape, FALSE, error)
      || !hy_attr_bool (attrs, "reverse", FALSE, &reverse, error)
      || !hy_attr_tuple (attrs, "target_shape", &target, FALSE, error)
      || !hy_attr_bool (attrs, "keep_highest", FALSE, &keep_highest, error))
    return FALSE;
  p->reverse = reverse;
  p->keep_highest = keep_highest;

  /* Like MXNet, a non-empty `shape` wins over the deprecated one. */
  if (shape.n > 0) {
    for (int i = 0; i < shape.n; i++) {
      if (shape.v[i] < -4) {
        g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
            "attribute 'shape' entry %d is %" G_GINT64_FORMAT "; expected "
            "a size > 0 or one of the codes 0, -1, -2, -3, -4", i,
            (gint64) shape.v[i]);
        return FALSE;
      }
      p->codes[i] = shape.v[i];
    }
    p->n_codes = shape.n;
    return TRUE;
  }
  if (target.n > 0) {
    for (int i = 0; i < target.n; i++) {
      if (target.v[i] < 0) {
        g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
            "attribute 'target_shape' entry %d is %" G_GINT64_FORMAT
            "; expected a size, or 0 for the one inferred size", i,
            (gint64) target.v[i]);
        return FALSE;
      }
      p->codes[i] = target.v[i];
    }
    p->n_codes = target.n;
    p->legacy_target = TRUE;
    return TRUE;
  }
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "attribute 'shape' is required (a tuple of sizes and the codes 0, -1, "
      "-2, -3, -4)");
  return FALSE;
}

/* Applies MXNet's shape codes left to right over src.  dst gets the
 * result with a placeholder 1 for the -1 at infer_at (-1: none).
 * code_pos() maps a code index back to its place in the attribute, for
 * messages. */
typedef struct reshape_walk {
  const int64_t *src;
  int n_src;
  const int64_t *codes;
  int n_codes;
  gboolean reversed;
  int64_t dst[HY_SHAPE_PARAM_MAX + HY_MAX_DIMS];
  int n_dst;
  int infer_at;
  int infer_code;               /* index of the -1 among the codes */
  /* Where MXNet 1.9.1 stores the inferred size: the -1's index among the
   * codes, which is not its output axis once -2 or -4 came before it.
   * Reproduced so that every shape MXNet can run comes out the same. */
  int infer_slot;
} reshape_walk;

static int
code_pos (const reshape_walk *w, int i)
{
  return w->reversed ? w->n_codes - 1 - i : i;
}

/* The input axis that walk position k reads, for messages. */
static int
input_axis (const reshape_walk *w, int k)
{
  return w->reversed ? w->n_src - 1 - k : k;
}

/* A code that needs more input axes than the earlier codes left it. */
static gboolean
out_of_input (const reshape_walk *w, int code_index, const char *what,
    GError **error)
{
  g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
      "'shape' code %" G_GINT64_FORMAT " at position %d %s, but the codes "
      "before it used up the input's %d axes%s",
      (gint64) w->codes[code_index], code_pos (w, code_index), what,
      w->n_src, w->reversed ? " (matching from the right)" : "");
  return FALSE;
}

static gboolean
reshape_apply_codes (reshape_walk *w, GError **error)
{
  int src = 0;
  w->n_dst = 0;
  w->infer_at = -1;
  w->infer_slot = -1;
  for (int i = 0; i < w->n_codes; i++) {
    int64_t code = w->codes[i];
    int at = code_pos (w, i);
    if (code == 0) {
      if (src >= w->n_src)
        return out_of_input (w, i, "copies an input axis", error);
      w->dst[w->n_dst++] = w->src[src++];
    } else if (code == -1) {
      if (w->infer_at >= 0) {
        g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
            "'shape' has more than one -1 (positions %d and %d); only one "
            "size can be inferred", code_pos (w, w->infer_code), at);
        return FALSE;
      }
      w->infer_at = w->n_dst;
      w->infer_code = i;
      w->infer_slot = i;
      w->dst[w->n_dst++] = 1;
      src++;
    } else if (code == -2) {
      while (src < w->n_src)
        w->dst[w->n_dst++] = w->src[src++];
    } else if (code == -3) {
      if (src + 1 >= w->n_src)
        return out_of_input (w, i, "merges two input axes", error);
      if (__builtin_mul_overflow (w->src[src], w->src[src + 1],
              &w->dst[w->n_dst])) {
        g_set_error (error, HY_ERROR, HY_ERROR_SHAPE, "input is too large");
        return FALSE;
      }
      w->n_dst++;
      src += 2;
    } else if (code == -4) {
      if (i + 2 >= w->n_codes) {
        g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
            "'shape' code -4 at position %d must be followed by the two "
            "sizes to split into%s", at, w->reversed
            ? " (with reverse=True, in the reversed order)" : "");
        return FALSE;
      }
      if (src >= w->n_src)
        return out_of_input (w, i, "splits an input axis", error);
      int64_t d0 = w->src[src++];
      int64_t d1 = w->codes[++i], d2 = w->codes[++i];
      if (d1 == -1 && d2 == -1) {
        g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
            "'shape' code -4 at position %d: the two split sizes cannot "
            "both be -1", at);
        return FALSE;
      }
      if (d1 == -1 && d2 > 0)
        d1 = d0 / d2;
      else if (d2 == -1 && d1 > 0)
        d2 = d0 / d1;
      int64_t prod;
      if (d1 < 0 || d2 < 0 || __builtin_mul_overflow (d1, d2, &prod)
          || prod != d0) {
        g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
            "'shape' code -4 at position %d cannot split input axis %d of "
            "length %" G_GINT64_FORMAT " into %" G_GINT64_FORMAT " x %"
            G_GINT64_FORMAT, at, input_axis (w, src - 1), (gint64) d0,
            (gint64) w->codes[i - 1], (gint64) w->codes[i]);
        return FALSE;
      }
      w->dst[w->n_dst++] = d1;
      w->dst[w->n_dst++] = d2;
    } else {
      w->dst[w->n_dst++] = code;
      src++;
    }
  }
  return TRUE;
}

static void
reverse_dims (int64_t *v, int n)
{
  for (int i = 0, j = n - 1; i < j; i++, j--) {
    int64_t t = v[i];
    v[i] = v[j];
    v[j] = t;
  }
}

static gboolean
reshape_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_reshape_params *p = params;
  char ibuf[HY_SHAPE_STRLEN];
  int64_t numel;
  if (p->op == HY_OP_RESHAPE_LIKE)
    return reshape_like_infer (p, in, out, error);
  if (!checked_product (in[0].dims, in[0].ndim, &numel)) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE, "input shape %s is too "
        "large", hy_shape_format (&in[0], ibuf, sizeof ibuf));
    return FALSE;
  }

  int64_t src[HY_MAX_DIMS], codes[HY_SHAPE_PARAM_MAX];
  memcpy (src, in[0].dims, sizeof src);
  memcpy (codes, p->codes, sizeof codes);
  reshape_walk w = { .src = src, .n_src = in[0].ndim, .codes = codes,
    .n_codes = p->n_codes, .reversed = p->reverse && !p->legacy_target };

  if (p->legacy_target) {
    /* Deprecated target_shape: sizes as given, 0 marks the one inferred
     * size; keep_highest keeps the input's first axis. */
    memcpy (w.dst, codes, sizeof codes);
    w.n_dst = p->n_codes;
    w.infer_at = -1;
    w.infer_slot = -1;
    int first = 0;
    if (p->keep_highest && in[0].ndim > 0) {
      w.dst[0] = in[0].dims[0];
      first = 1;
    }
    for (int i = first; i < w.n_dst; i++) {
      if (w.dst[i] != 0)
        continue;
      if (w.infer_at >= 0) {
        g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
            "'target_shape' has more than one 0 (positions %d and %d); only "
            "one size can be inferred", w.infer_at, i);
        return FALSE;
      }
      w.infer_at = w.infer_slot = i;
      w.dst[i] = 1;
    }
  } else {
    if (w.reversed) {
      reverse_dims (src, w.n_src);
      reverse_dims (codes, w.n_codes);
    }
    if (!reshape_apply_codes (&w, error))
      return FALSE;
  }

  int64_t known;
  if (!checked_product (w.dst, w.n_dst, &known)) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE, "the requested shape is "
        "too large");
    return FALSE;
  }
  if (w.infer_at >= 0) {
    if (known == 0 || numel % known != 0) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "cannot infer the -1 size: the input %s has %" G_GINT64_FORMAT
          " elements, which the other sizes (product %" G_GINT64_FORMAT
          ") do not divide", hy_shape_format (&in[0], ibuf, sizeof ibuf),
          (gint64) numel, (gint64) known);
      return FALSE;
    }
    /* Past the end, MXNet's store is lost and the placeholder 1 stays. */
    if (w.infer_slot < w.n_dst)
      w.dst[w.infer_slot] = numel / known;
    if (!checked_product (w.dst, w.n_dst, &known)) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE, "the requested shape "
          "is too large");
      return FALSE;
    }
  }
  if (w.reversed)
    reverse_dims (w.dst, w.n_dst);
  if (w.n_dst > HY_MAX_DIMS) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "the reshaped output would have %d dimensions; at most %d are "
        "supported", w.n_dst, HY_MAX_DIMS);
    return FALSE;
  }
  out[0] = hy_shape_make (w.n_dst, w.dst);
  if (known != numel && w.infer_slot != w.infer_at) {
    char obuf[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "cannot reshape %s: MXNet 1.9.1 stores the size inferred for the -1 "
        "at position %d in slot %d of the %d-axis result, not at the -1's "
        "own axis, giving %s (%" G_GINT64_FORMAT " elements, not %"
        G_GINT64_FORMAT "); this shape does not work in MXNet either",
        hy_shape_format (&in[0], ibuf, sizeof ibuf),
        code_pos (&w, w.infer_code), w.infer_slot, w.n_dst,
        hy_shape_format (&out[0], obuf, sizeof obuf), (gint64) known,
        (gint64) numel);
    return FALSE;
  }
  if (known != numel) {
    char obuf[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "cannot reshape %s (%" G_GINT64_FORMAT " elements) to %s (%"
        G_GINT64_FORMAT " elements)", hy_shape_format (&in[0], ibuf,
            sizeof ibuf), (gint64) numel, hy_shape_format (&out[0], obuf,
            sizeof obuf), (gint64) known);
    return FALSE;
  }
  return TRUE;
}

/* reshape_like reads its second input's shape only. */
static const char *const reshape_inputs[] = { "data", "rhs", NULL };

static int
reshape_num_inputs (const void *params)
{
  return ((const hy_reshape_params *) params)->op == HY_OP_RESHAPE_LIKE
      ? 2 : 1;
}

const hy_op_def hy_opdef_reshape = {
  .params_size = sizeof (hy_reshape_params),
  .parse = reshape_parse,
  .input_names = reshape_inputs,
  .num_inputs = reshape_num_inputs,
  .infer_shape = reshape_infer,
  .infer_dtype = hy_dtype_like_data,
  .inplace = TRUE,
};

/* ---- expand_dims -------------------------------------------------------- */

static gboolean
expand_dims_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_expand_dims_params *p = params;
  int64_t axis;
  if (!hy_attr_require (attrs, "axis", error)
      || !hy_attr_int (attrs, "axis", 0, &axis, error))
    return FALSE;
  if (axis < -HY_MAX_DIMS - 1 || axis > HY_MAX_DIMS) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'axis' = %" G_GINT64_FORMAT " is out of range",
        (gint64) axis);
    return FALSE;
  }
  p->axis = (int) axis;
  return TRUE;
}

static gboolean
expand_dims_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_expand_dims_params *p = params;
  int nd = in[0].ndim;
  if (nd + 1 > HY_MAX_DIMS) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "expand_dims would give %d dimensions; at most %d are supported",
        nd + 1, HY_MAX_DIMS);
    return FALSE;
  }
  int axis;
  if (!hy_axis_normalize (p->axis, nd + 1, &axis)) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "attribute 'axis' = %d must be in [%d, %d] for an input with %d "
        "dimensions", p->axis, -nd - 1, nd, nd);
    return FALSE;
  }
  hy_shape r = { .ndim = nd + 1 };
  for (int i = 0, j = 0; i < nd + 1; i++)
    r.dims[i] = i == axis ? 1 : in[0].dims[j++];
  out[0] = r;
  return TRUE;
}

const hy_op_def hy_opdef_expand_dims = {
  .params_size = sizeof (hy_expand_dims_params),
  .parse = expand_dims_parse,
  .input_names = data_input,
  .infer_shape = expand_dims_infer,
  .infer_dtype = hy_dtype_like_data,
  .inplace = TRUE,
};

/* ---- squeeze ------------------------------------------------------------ */

static gboolean
squeeze_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_squeeze_params *p = params;
  p->n_axes = -1;
  if (!hy_attr_has (attrs, "axis") || hy_attr_is_none (attrs, "axis"))
    return TRUE;
  hy_tuple axes = { 0 };
  if (!hy_attr_tuple (attrs, "axis", &axes, FALSE, error))
    return FALSE;
  for (int i = 0; i < axes.n; i++) {
    if (axes.v[i] < -HY_MAX_DIMS || axes.v[i] >= HY_MAX_DIMS) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'axis' entry %" G_GINT64_FORMAT " is out of range",
          (gint64) axes.v[i]);
      return FALSE;
    }
    p->axes[i] = (int) axes.v[i];
  }
  p->n_axes = axes.n;
  return TRUE;
}

static gboolean
squeeze_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_squeeze_params *p = params;
  const hy_shape *s = &in[0];
  gboolean drop[HY_MAX_DIMS] = { FALSE };
  if (p->n_axes < 0) {
    for (int i = 0; i < s->ndim; i++)
      drop[i] = s->dims[i] == 1;
  }
  for (int k = 0; k < p->n_axes; k++) {
    int axis;
    char buf[HY_SHAPE_STRLEN];
    if (!hy_axis_normalize (p->axes[k], s->ndim, &axis)) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "attribute 'axis' entry %d is out of range for input shape %s",
          p->axes[k], hy_shape_format (s, buf, sizeof buf));
      return FALSE;
    }
    if (drop[axis]) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'axis' names axis %d twice", axis);
      return FALSE;
    }
    if (s->dims[axis] != 1) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "cannot squeeze axis %d of input shape %s: its length is not 1",
          axis, hy_shape_format (s, buf, sizeof buf));
      return FALSE;
    }
    drop[axis] = TRUE;
  }
  hy_shape r = { .ndim = 0 };
  for (int i = 0; i < s->ndim; i++)
    if (!drop[i])
      r.dims[r.ndim++] = s->dims[i];
  /* MXNet's legacy arrays have at least one axis: all squeezed is (1,). */
  if (r.ndim == 0) {
    r.ndim = 1;
    r.dims[0] = 1;
  }
  out[0] = r;
  return TRUE;
}

const hy_op_def hy_opdef_squeeze = {
  .params_size = sizeof (hy_squeeze_params),
  .parse = squeeze_parse,
  .input_names = data_input,
  .infer_shape = squeeze_infer,
  .infer_dtype = hy_dtype_like_data,
  .inplace = TRUE,
};

/* ---- transpose ---------------------------------------------------------- */

/* SwapAxis: dim1 and dim2 (default 0 both: the identity), kept as written
 * until the rank is known. */
static gboolean
swap_axis_parse (hy_transpose_params *p, GHashTable *attrs, GError **error)
{
  int64_t dims[2];
  if (!hy_attr_int (attrs, "dim1", 0, &dims[0], error)
      || !hy_attr_int (attrs, "dim2", 0, &dims[1], error))
    return FALSE;
  for (int i = 0; i < 2; i++) {
    if (dims[i] < -HY_MAX_DIMS || dims[i] >= HY_MAX_DIMS) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'dim%d' is %" G_GINT64_FORMAT "; expected an axis",
          i + 1, (gint64) dims[i]);
      return FALSE;
    }
    p->axes[i] = (int) dims[i];
  }
  return TRUE;
}

static gboolean
transpose_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_transpose_params *p = params;
  if (p->op == HY_OP_SWAP_AXIS)
    return swap_axis_parse (p, attrs, error);
  hy_tuple axes = { 0 };
  if (!hy_attr_tuple (attrs, "axes", &axes, FALSE, error))
    return FALSE;
  for (int i = 0; i < axes.n; i++) {
    /* MXNet 1.9.1 rejects negative axes too. */
    if (axes.v[i] < 0 || axes.v[i] >= HY_MAX_DIMS) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'axes' entry %d is %" G_GINT64_FORMAT "; expected an "
          "axis in [0, ndim)", i, (gint64) axes.v[i]);
      return FALSE;
    }
    p->axes[i] = (int) axes.v[i];
  }
  p->n_axes = axes.n;
  return TRUE;
}

static gboolean
transpose_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_transpose_params *p = params;
  const hy_shape *s = &in[0];
  char buf[HY_SHAPE_STRLEN];
  hy_shape r = { .ndim = s->ndim };
  if (p->op == HY_OP_SWAP_AXIS) {
    for (int i = 0; i < 2; i++) {
      int axis;
      if (!hy_axis_normalize (p->axes[i], s->ndim, &axis)) {
        g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
            "attribute 'dim%d' is %d, out of range for the input shape %s",
            i + 1, p->axes[i], hy_shape_format (s, buf, sizeof buf));
        return FALSE;
      }
    }
  }
  if (p->n_axes == 0) {
    int axes[HY_MAX_DIMS];
    hy_transpose_axes (p, s->ndim, axes);
    for (int i = 0; i < s->ndim; i++)
      r.dims[i] = s->dims[axes[i]];
    out[0] = r;
    return TRUE;
  }
  if (p->n_axes != s->ndim) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "attribute 'axes' has %d entries but the input shape %s has %d "
        "dimensions", p->n_axes, hy_shape_format (s, buf, sizeof buf),
        s->ndim);
    return FALSE;
  }
  guint seen = 0;
  for (int i = 0; i < s->ndim; i++) {
    int a = p->axes[i];
    if (a >= s->ndim || (seen & (1u << a))) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "attribute 'axes' must be a permutation of 0..%d, got axis %d at "
          "position %d%s", s->ndim - 1, a, i, a < s->ndim ? " twice" : "");
      return FALSE;
    }
    seen |= 1u << a;
    r.dims[i] = s->dims[a];
  }
  out[0] = r;
  return TRUE;
}

const hy_op_def hy_opdef_transpose = {
  .params_size = sizeof (hy_transpose_params),
  .parse = transpose_parse,
  .input_names = data_input,
  .infer_shape = transpose_infer,
  .infer_dtype = hy_dtype_like_data,
};
