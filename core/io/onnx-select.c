/*
 * onnx-select.c — the ONNX ops that pick and scatter values: ArgMax,
 * ArgMin, Where, Expand, GatherND and ScatterND, each written as the core's
 * existing ops so that no backend needs a kernel for them.  (The
 * comparisons they read are binary ops like Add: onnx-ops.c.)
 *
 * Booleans are the core's floats 0 and 1, as MXNet's comparisons write
 * them (and every value of the core is a float): Where takes any nonzero
 * condition as true.  Integer results (ArgMax's
 * indices) are floats too, exact up to 2^24.
 */
#include <math.h>
#include <string.h>

#include "core/io/onnx-import.h"


/* Tensors the importer builds here (ScatterND's maps, GatherND's batch
 * coordinates) hold one float per element; more than this would be a
 * hostile file, and floats stop counting exactly at 2^24 anyway. */
#define SELECT_MAX_ELEMENTS ((gint64) 1 << 24)

static gboolean
set_out (hy_onnx_importer *imp, hy_entry e)
{
  if (e.node == G_MAXUINT)
    return FALSE;
  hy_onnx_set_output (imp, 0, e);
  return TRUE;
}

/* numpy's broadcast of a and b; FALSE when they do not broadcast. */
static gboolean
broadcast_shapes (const hy_shape *a, const hy_shape *b, hy_shape *out)
{
  const int n = MAX (a->ndim, b->ndim);
  hy_shape o = { .ndim = n };
  for (int i = 0; i < n; i++) {
    gint64 da = i < n - a->ndim ? 1 : a->dims[i - (n - a->ndim)];
    gint64 db = i < n - b->ndim ? 1 : b->dims[i - (n - b->ndim)];
    if (da != db && da != 1 && db != 1)
      return FALSE;
    o.dims[i] = da == 1 ? db : da;
  }
  *out = o;
  return TRUE;
}

static hy_entry
reshape (hy_onnx_importer *imp, hy_entry e, const hy_shape *to,
    GError **error)
{
  g_autofree char *t = hy_onnx_tuple (to->dims, to->ndim);
  return hy_onnx_add_op (imp, "Reshape", &e, 1, error, "shape", t, NULL);
}

/* `e` (shape *s) broadcast to *to, which it broadcasts to: leading axes
 * of 1 added by a Reshape, then broadcast_axis on every axis of 1 that
 * grows. */
static hy_entry
expand_to (hy_onnx_importer *imp, hy_entry e, const hy_shape *s,
    const hy_shape *to, GError **error)
{
  if (hy_shape_equal (s, to))
    return e;
  hy_shape padded = { .ndim = to->ndim };
  const int lead = to->ndim - s->ndim;
  for (int i = 0; i < to->ndim; i++)
    padded.dims[i] = i < lead ? 1 : s->dims[i - lead];
  if (lead > 0) {
    e = reshape (imp, e, &padded, error);
    if (e.node == G_MAXUINT)
      return e;
  }
  gint64 axes[HY_MAX_DIMS], sizes[HY_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < to->ndim; i++)
    if (padded.dims[i] != to->dims[i]) {
      axes[n] = i;
      sizes[n++] = to->dims[i];
    }
  if (!n)
    return e;
  g_autofree char *a = hy_onnx_tuple (axes, n);
  g_autofree char *z = hy_onnx_tuple (sizes, n);
  return hy_onnx_add_op (imp, "broadcast_axis", &e, 1, error, "axis", a,
      "size", z, NULL);
}

/* ---- ArgMax, ArgMin ----------------------------------------------------- */

/* MXNet's argmax/argmin take the first of equal values; ONNX's
 * select_last_index=1 is the first of the reversed axis, counted back. */
static gboolean
import_arg_reduce (hy_onnx_importer *imp, const char *core, GError **error)
{
  hy_entry in;
  hy_shape s;
  if (!hy_onnx_input_entry (imp, 0, &in, error)
      || !hy_onnx_input_shape (imp, 0, &s, error))
    return FALSE;
  gint64 axis = hy_onnx_attr_int (imp->node, "axis", 0);
  if (s.ndim < 1 || axis < -s.ndim || axis >= s.ndim)
    return hy_onnx_refuse (imp, error, "axis %" G_GINT64_FORMAT " is outside the "
        "data's %d dimensions", axis, s.ndim);
  if (axis < 0)
    axis += s.ndim;
  if (s.dims[axis] < 1)
    return hy_onnx_refuse (imp, error, "axis %" G_GINT64_FORMAT " is empty",
        axis);
  const gboolean keepdims = hy_onnx_attr_int (imp->node, "keepdims", 1)
      != 0;
  const gboolean last = hy_onnx_attr_int (imp->node, "select_last_index",
      0) != 0;
  g_autofree char *ax = g_strdup_printf ("%" G_GINT64_FORMAT, axis);
  if (last) {
    in = hy_onnx_add_op (imp, "reverse", &in, 1, error, "axis", ax, NULL);
    if (in.node == G_MAXUINT)
      return FALSE;
  }
  hy_entry out = hy_onnx_add_op (imp, core, &in, 1, error, "axis", ax,
      "keepdims", keepdims ? "True" : "False", NULL);
  if (out.node == G_MAXUINT)
    return FALSE;
  if (last) {
    g_autofree char *n1 = g_strdup_printf ("%" G_GINT64_FORMAT,
        s.dims[axis] - 1);
    out = hy_onnx_add_op (imp, "_rminus_scalar", &out, 1, error, "scalar",
        n1, NULL);
  }
  /* A 1-D input reduced without keepdims gives ONNX a scalar, the core
   * (which has no tensor of no dimensions, as MXNet 1.9.1) the shape
   * (1,). */
  return set_out (imp, out);
}

/* ---- Where, Expand ------------------------------------------------------ */

/* The three operands broadcast to one shape first: MXNet's where takes
 * them of one shape. */
static gboolean
import_where (hy_onnx_importer *imp, GError **error)
{
  hy_shape s[3], out;
  hy_entry in[3];
  for (guint k = 0; k < 3; k++)
    if (!hy_onnx_input_shape (imp, k, &s[k], error)
        || !hy_onnx_input_entry (imp, k, &in[k], error))
      return FALSE;
  if (!broadcast_shapes (&s[0], &s[1], &out)
      || !broadcast_shapes (&out, &s[2], &out)) {
    char a[HY_SHAPE_STRLEN], b[HY_SHAPE_STRLEN], c[HY_SHAPE_STRLEN];
    return hy_onnx_refuse (imp, error, "condition %s, X %s and Y %s do not "
        "broadcast to one shape", hy_shape_format (&s[0], a, sizeof a),
        hy_shape_format (&s[1], b, sizeof b),
        hy_shape_format (&s[2], c, sizeof c));
  }
  for (guint k = 0; k < 3; k++) {
    in[k] = expand_to (imp, in[k], &s[k], &out, error);
    if (in[k].node == G_MAXUINT)
      return FALSE;
  }
  return set_out (imp, hy_onnx_add_op (imp, "where", in, 3, error, NULL));
}

/* Expand to a constant shape (numpy's broadcast of the two, so a 1 in
 * the shape keeps the input's length). */
static gboolean
import_expand (hy_onnx_importer *imp, GError **error)
{
  hy_entry in;
  hy_shape s;
  if (!hy_onnx_input_entry (imp, 0, &in, error)
      || !hy_onnx_input_shape (imp, 0, &s, error))
    return FALSE;
  hy_onnx_value *sv = hy_onnx_input_const (imp, 1, error);
  if (!sv)
    return FALSE;
  gint64 n = hy_shape_numel (&sv->shape);
  if (!sv->is_int || sv->shape.ndim != 1 || n > HY_MAX_DIMS)
    return hy_onnx_refuse (imp, error, "the shape must be a 1-D integer tensor of "
        "at most %d values", HY_MAX_DIMS);
  hy_shape target = { .ndim = (int) n };
  for (int i = 0; i < n; i++) {
    if (sv->ints[i] < 0 || sv->ints[i] > G_MAXINT32)
      return hy_onnx_refuse (imp, error, "shape value %" G_GINT64_FORMAT " is not "
          "in [0, %d]", sv->ints[i], G_MAXINT32);
    target.dims[i] = sv->ints[i];
  }
  hy_shape out;
  char a[HY_SHAPE_STRLEN], b[HY_SHAPE_STRLEN];
  if (!broadcast_shapes (&s, &target, &out))
    return hy_onnx_refuse (imp, error, "input %s does not broadcast to %s",
        hy_shape_format (&s, a, sizeof a),
        hy_shape_format (&target, b, sizeof b));
  /* Each factor is at most 2^31: the product is checked as it grows. */
  gint64 numel = 1;
  for (int i = 0; i < out.ndim; i++) {
    numel *= out.dims[i];
    if (numel > ((gint64) 1 << 31))
      return hy_onnx_refuse (imp, error, "output %s has more than %" G_GINT64_FORMAT
          " elements", hy_shape_format (&out, a, sizeof a),
          (gint64) 1 << 31);
  }
  return set_out (imp, expand_to (imp, in, &s, &out, error));
}

/* ---- GatherND ----------------------------------------------------------- */

/* ONNX's indices (..., k) list a data position in their last axis; MXNet's
 * gather_nd wants it in the first.  batch_dims b: the first b axes of data
 * and indices go together, which gather_nd is told by b more leading
 * index rows holding each position's batch coordinates (a constant). */
static gboolean
import_gather_nd (hy_onnx_importer *imp, GError **error)
{
  hy_entry data, idx;
  hy_shape s, is;
  if (!hy_onnx_input_entry (imp, 0, &data, error)
      || !hy_onnx_input_shape (imp, 0, &s, error)
      || !hy_onnx_input_shape (imp, 1, &is, error))
    return FALSE;
  const gint64 b = hy_onnx_attr_int (imp->node, "batch_dims", 0);
  const int q = is.ndim, r = s.ndim;
  char sd[HY_SHAPE_STRLEN], si[HY_SHAPE_STRLEN];
  if (q < 1 || r < 1 || b < 0 || b >= MIN (q, r))
    return hy_onnx_refuse (imp, error, "batch_dims %" G_GINT64_FORMAT " with data "
        "%s and indices %s: both need more dimensions than batch_dims",
        b, hy_shape_format (&s, sd, sizeof sd),
        hy_shape_format (&is, si, sizeof si));
  const gint64 k = is.dims[q - 1];
  if (k < 1 || k > r - b)
    return hy_onnx_refuse (imp, error, "indices %s pick %" G_GINT64_FORMAT " axes "
        "of data %s; 1 to %" G_GINT64_FORMAT " are possible",
        hy_shape_format (&is, si, sizeof si), k,
        hy_shape_format (&s, sd, sizeof sd), r - b);
  for (int d = 0; d < b; d++)
    if (s.dims[d] != is.dims[d])
      return hy_onnx_refuse (imp, error, "batch axis %d differs: data %s, indices "
          "%s", d, hy_shape_format (&s, sd, sizeof sd),
          hy_shape_format (&is, si, sizeof si));
  /* gather_nd's index tensor (b + k, I_0 .. I_{q-2}), or (k, 1) */
  const int out_ndim = q - 1 + r - (int) (b + k);
  if (out_ndim > HY_MAX_DIMS || MAX (q, 2) > HY_MAX_DIMS)
    return hy_onnx_refuse (imp, error, "data %s and indices %s: at most %d "
        "dimensions are supported", hy_shape_format (&s, sd, sizeof sd),
        hy_shape_format (&is, si, sizeof si), HY_MAX_DIMS);
  hy_onnx_value *iv = hy_onnx_input (imp, 1, error);
  if (!iv)
    return FALSE;
  if (iv->is_const) {
    /* Checked here for an error naming the node, not at the forward. */
    const gint64 numel = hy_shape_numel (&iv->shape);
    for (gint64 i = 0; i < numel; i++) {
      const double v = iv->is_int ? (double) iv->ints[i] : iv->f[i];
      const gint64 n = s.dims[b + i % k];
      if (!(v >= -n && v < n) || v != floor (v))
        return hy_onnx_refuse (imp, error, "index %g is outside [-%" G_GINT64_FORMAT
            ", %" G_GINT64_FORMAT "] (data axis %" G_GINT64_FORMAT ")", v, n,
            n - 1, b + i % k);
    }
  }
  if (!hy_onnx_input_entry (imp, 1, &idx, error))
    return FALSE;
  hy_shape lead = { .ndim = MAX (q, 2) };
  lead.dims[0] = k;
  for (int d = 0; d < q - 1; d++)
    lead.dims[1 + d] = is.dims[d];
  if (q == 1) {
    lead.dims[1] = 1;
    idx = reshape (imp, idx, &lead, error);
  } else {
    gint64 perm[HY_MAX_DIMS];
    perm[0] = q - 1;
    for (int d = 0; d < q - 1; d++)
      perm[1 + d] = d;
    g_autofree char *t = hy_onnx_tuple (perm, q);
    idx = hy_onnx_add_op (imp, "transpose", &idx, 1, error, "axes", t, NULL);
  }
  if (idx.node == G_MAXUINT)
    return FALSE;
  if (b > 0) {
    /* row j of the coordinates: each position's index along axis j */
    hy_shape cs = lead;
    cs.dims[0] = b;
    const gint64 per_row = hy_shape_numel (&lead) / k;
    if (per_row > SELECT_MAX_ELEMENTS / b)
      return hy_onnx_refuse (imp, error, "indices %s: more than %" G_GINT64_FORMAT
          " batch coordinates", hy_shape_format (&is, si, sizeof si),
          SELECT_MAX_ELEMENTS);
    float *f = g_new (float, MAX (b * per_row, 1));
    for (gint64 j = 0; j < b && per_row > 0; j++) {
      gint64 inner = per_row;
      for (int d = 0; d <= j; d++)
        inner /= is.dims[d];
      for (gint64 p = 0; p < per_row; p++)
        f[j * per_row + p] = (float) ((p / inner) % is.dims[j]);
    }
    hy_entry parts[2] = { hy_onnx_add_weight (imp, "gather_nd_batch", &cs, f),
      idx };
    idx = hy_onnx_add_op (imp, "Concat", parts, 2, error, "dim", "0",
        "num_args", "2", NULL);
    if (idx.node == G_MAXUINT)
      return FALSE;
  }
  hy_entry pair[2] = { data, idx };
  hy_entry out = hy_onnx_add_op (imp, "gather_nd", pair, 2, error, NULL);
  if (out.node != G_MAXUINT && q == 1 && out_ndim > 0) {
    /* gather_nd kept the (1,) of the index's extra axis (kept too where
     * ONNX's result is a scalar: the core has no tensor of no
     * dimensions) */
    hy_shape os = { .ndim = out_ndim };
    for (int d = 0; d < out_ndim; d++)
      os.dims[d] = s.dims[b + k + d];
    out = reshape (imp, out, &os, error);
  }
  return set_out (imp, out);
}

/* ---- ScatterND ---------------------------------------------------------- */

/* ScatterND with constant indices: which update lands on each output
 * element is known at load, so the output is a gather of the updates by
 * a constant map, picked by a constant mask where updates land and from
 * data elsewhere (later updates win over earlier ones for one element, as
 * in ONNX Runtime).  Updates that cover the output in order are the
 * output as they are. */
static gboolean
import_scatter_nd (hy_onnx_importer *imp, GError **error)
{
  hy_onnx_word buf;
  const char *reduction = hy_onnx_attr_string (imp->node, "reduction",
      "none", buf);
  if (strcmp (reduction, "none"))
    return hy_onnx_refuse (imp, error, "reduction '%s' is not supported (only "
        "none)", reduction);
  hy_shape s, us;
  if (!hy_onnx_input_shape (imp, 0, &s, error)
      || !hy_onnx_input_shape (imp, 2, &us, error))
    return FALSE;
  hy_onnx_value *iv = hy_onnx_input_const (imp, 1, error);
  if (!iv)
    return FALSE;
  const hy_shape *is = &iv->shape;
  char sd[HY_SHAPE_STRLEN], si[HY_SHAPE_STRLEN], su[HY_SHAPE_STRLEN];
  char sw[HY_SHAPE_STRLEN];
  const gint64 k = is->ndim ? is->dims[is->ndim - 1] : 0;
  hy_shape want = { .ndim = is->ndim - 1 + s.ndim - (int) k };
  if (is->ndim < 1 || k < 1 || k > s.ndim || want.ndim > HY_MAX_DIMS)
    return hy_onnx_refuse (imp, error, "indices %s do not index data %s (their "
        "last axis must be in [1, %d])", hy_shape_format (is, si, sizeof si),
        hy_shape_format (&s, sd, sizeof sd), s.ndim);
  for (int d = 0; d < is->ndim - 1; d++)
    want.dims[d] = is->dims[d];
  for (int d = (int) k; d < s.ndim; d++)
    want.dims[is->ndim - 1 + d - k] = s.dims[d];
  if (!hy_shape_equal (&us, &want))
    return hy_onnx_refuse (imp, error, "updates %s must have the shape %s of "
        "indices %s and data %s", hy_shape_format (&us, su, sizeof su),
        hy_shape_format (&want, sw, sizeof sw),
        hy_shape_format (is, si, sizeof si),
        hy_shape_format (&s, sd, sizeof sd));
  const gint64 total = hy_shape_numel (&s);
  if (total > SELECT_MAX_ELEMENTS
      || hy_shape_numel (&us) > SELECT_MAX_ELEMENTS)
    return hy_onnx_refuse (imp, error, "data %s and updates %s: more than %"
        G_GINT64_FORMAT " elements", hy_shape_format (&s, sd, sizeof sd),
        hy_shape_format (&us, su, sizeof su), SELECT_MAX_ELEMENTS);
  const gint64 n_up = hy_shape_numel (is) / k;
  gint64 slice = 1;
  for (int d = (int) k; d < s.ndim; d++)
    slice *= s.dims[d];
  if (n_up == 0 || slice == 0) {
    hy_entry data;
    return hy_onnx_input_entry (imp, 0, &data, error) && set_out (imp, data);
  }
  g_autofree gint64 *map = g_new (gint64, total);
  for (gint64 o = 0; o < total; o++)
    map[o] = -1;
  for (gint64 u = 0; u < n_up; u++) {
    gint64 at = 0;
    for (gint64 j = 0; j < k; j++) {
      const double v = iv->is_int ? (double) iv->ints[u * k + j]
          : iv->f[u * k + j];
      const gint64 n = s.dims[j];
      if (!(v >= -n && v < n) || v != floor (v))
        return hy_onnx_refuse (imp, error, "index %g is outside [-%" G_GINT64_FORMAT
            ", %" G_GINT64_FORMAT "] (data axis %" G_GINT64_FORMAT ")", v, n,
            n - 1, j);
      at = at * n + (v < 0 ? (gint64) v + n : (gint64) v);
    }
    for (gint64 e = 0; e < slice; e++)
      map[at * slice + e] = u * slice + e;
  }
  gboolean full = TRUE, in_order = n_up * slice == total;
  for (gint64 o = 0; o < total; o++) {
    full = full && map[o] >= 0;
    in_order = in_order && map[o] == o;
  }
  hy_entry up;
  if (!hy_onnx_input_entry (imp, 2, &up, error))
    return FALSE;
  if (in_order)
    return set_out (imp, reshape (imp, up, &s, error));
  hy_shape flat = { .ndim = 1, .dims = { n_up * slice } };
  up = reshape (imp, up, &flat, error);
  if (up.node == G_MAXUINT)
    return FALSE;
  float *fm = g_new (float, total);
  for (gint64 o = 0; o < total; o++)
    fm[o] = (float) MAX (map[o], 0);
  hy_shape ms = { .ndim = 2, .dims = { 1, total } };
  hy_entry pair[2] = { up, hy_onnx_add_weight (imp, "scatter_nd_map", &ms,
        fm) };
  hy_entry picked = hy_onnx_add_op (imp, "gather_nd", pair, 2, error, NULL);
  if (picked.node == G_MAXUINT)
    return FALSE;
  picked = reshape (imp, picked, &s, error);
  if (picked.node == G_MAXUINT || full)
    return set_out (imp, picked);
  float *mask = g_new (float, total);
  for (gint64 o = 0; o < total; o++)
    mask[o] = map[o] >= 0;
  hy_entry three[3] = { hy_onnx_add_weight (imp, "scatter_nd_mask", &s,
        mask), picked, HY_ONNX_BAD_ENTRY };
  if (!hy_onnx_input_entry (imp, 0, &three[2], error))
    return FALSE;
  return set_out (imp, hy_onnx_add_op (imp, "where", three, 3, error,
          NULL));
}

gboolean
hy_onnx_import_select (hy_onnx_importer *imp, const char *onnx,
    const char *core, GError **error)
{
  if (!strcmp (onnx, "ArgMax") || !strcmp (onnx, "ArgMin"))
    return import_arg_reduce (imp, core, error);
  if (!strcmp (onnx, "Where"))
    return import_where (imp, error);
  if (!strcmp (onnx, "Expand"))
    return import_expand (imp, error);
  if (!strcmp (onnx, "GatherND"))
    return import_gather_nd (imp, error);
  return import_scatter_nd (imp, error);  /* the table's last one here */
}
