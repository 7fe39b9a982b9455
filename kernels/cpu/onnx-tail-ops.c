/*
 * onnx-tail-ops.c — the tail's steps on shapes and elements, with ONNX's
 * semantics on shapes known only now: Transpose, Gather, GatherND, Slice,
 * Squeeze, Unsqueeze, Reshape, Shape, Concat, Where, Expand, Cast, the
 * four arithmetic ops (numpy broadcasting; integer division truncates, as
 * ONNX Runtime's does), Pad (constant), ScatterND (no reduction) and
 * Identity.  Each works out its output's shape first, from its inputs'
 * shapes and from the values of the inputs that set it (axes, pads,
 * targets), then computes the values when tail_out asks for them.
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/onnx-tail.h"

static const hy_tail_step *
step_of (const tail_run *r)
{
  return &r->p->steps[r->step];
}

static tail_value *
need_in (tail_run *r, int k)
{
  tail_value *v = tail_in (r, k);
  if (!v)
    tail_refuse (r, "input %d is required", k);
  return v;
}

static void
strides_of (const hy_shape *s, int64_t *st)
{
  int64_t acc = 1;
  for (int d = s->ndim - 1; d >= 0; d--) {
    st[d] = acc;
    acc *= s->dims[d];
  }
}

static void
unravel (int64_t i, const hy_shape *s, int64_t *coord)
{
  for (int d = s->ndim - 1; d >= 0; d--) {
    int64_t n = MAX (s->dims[d], 1);
    coord[d] = i % n;
    i /= n;
  }
}

static int
axis_of (tail_run *r, int64_t axis, int ndim)
{
  if (axis < -ndim || axis >= ndim)
    tail_refuse (r, "axis %" G_GINT64_FORMAT " is outside rank %d", axis,
        ndim);
  return (int) (axis < 0 ? axis + ndim : axis);
}

static void
check_rank (tail_run *r, int ndim)
{
  if (ndim > HY_MAX_DIMS)
    tail_refuse (r, "the output has %d dimensions, at most %d are supported",
        ndim, HY_MAX_DIMS);
}

/* Dims from values (Reshape's, Expand's targets): sizes, and a product a
 * forward can hold. */
static void
check_dims (tail_run *r, const hy_shape *s)
{
  double numel = 1;
  for (int d = 0; d < s->ndim; d++) {
    if (s->dims[d] < 0 || s->dims[d] > G_MAXINT32)
      tail_refuse (r, "dimension %d = %" G_GINT64_FORMAT " is not a size", d,
          s->dims[d]);
    numel *= (double) s->dims[d];
  }
  if (numel > (double) (1LL << 34))
    tail_refuse (r, "an output of %.0f values is too large", numel);
}

/* Where input `in` of shape `s` is read for output coordinate `c` of a
 * broadcast of rank `ndim`. */
static int64_t
broadcast_offset (const hy_shape *s, const int64_t *c, int ndim)
{
  int64_t off = 0, stride = 1;
  for (int d = s->ndim - 1; d >= 0; d--) {
    int64_t cd = s->dims[d] == 1 ? 0 : c[ndim - s->ndim + d];
    off += cd * stride;
    stride *= s->dims[d];
  }
  return off;
}

static void
broadcast (tail_run *r, const hy_shape *a, const hy_shape *b, hy_shape *out)
{
  int ndim = MAX (a->ndim, b->ndim);
  out->ndim = ndim;
  for (int d = 0; d < ndim; d++) {
    int da = d - (ndim - a->ndim), db = d - (ndim - b->ndim);
    int64_t x = da >= 0 ? a->dims[da] : 1, y = db >= 0 ? b->dims[db] : 1;
    if (x != y && x != 1 && y != 1) {
      char sa[HY_SHAPE_STRLEN], sb[HY_SHAPE_STRLEN];
      tail_refuse (r, "shapes %s and %s do not broadcast",
          hy_shape_format (a, sa, sizeof sa),
          hy_shape_format (b, sb, sizeof sb));
    }
    out->dims[d] = x == 1 ? y : x;
  }
}

/* ---- data movement ----------------------------------------------------- */

static void
run_transpose (tail_run *r, tail_value *out)
{
  const hy_tail_step *s = step_of (r);
  const tail_value *x = need_in (r, 0);
  int nd = x->shape.ndim, perm[HY_MAX_DIMS];
  bool seen[HY_MAX_DIMS] = { false };
  if (s->n_attr && s->n_attr != nd)
    tail_refuse (r, "perm has %d axes for data of rank %d", s->n_attr, nd);
  hy_shape shape = { .ndim = nd };
  for (int d = 0; d < nd; d++) {
    perm[d] = s->n_attr ? axis_of (r, s->attr[d], nd) : nd - 1 - d;
    if (seen[perm[d]])
      tail_refuse (r, "perm names axis %d twice", perm[d]);
    seen[perm[d]] = true;
    shape.dims[d] = x->shape.dims[perm[d]];
  }
  if (!tail_out (r, out, &shape))
    return;
  int64_t st[HY_MAX_DIMS], c[HY_MAX_DIMS];
  strides_of (&x->shape, st);
  int64_t n = hy_shape_numel (&shape);
  for (int64_t i = 0; i < n; i++) {
    unravel (i, &shape, c);
    int64_t off = 0;
    for (int d = 0; d < nd; d++)
      off += c[d] * st[perm[d]];
    out->data[i] = x->data[off];
  }
}

static int64_t
index_in (tail_run *r, double v, int64_t size)
{
  int64_t i = tail_i64 (v);
  if (i < -size || i >= size)
    tail_refuse (r, "index %" G_GINT64_FORMAT " is out of bounds for an "
        "axis of size %" G_GINT64_FORMAT, i, size);
  return i < 0 ? i + size : i;
}

static void
run_gather (tail_run *r, tail_value *out)
{
  const tail_value *x = need_in (r, 0), *idx = need_in (r, 1);
  int axis = axis_of (r, step_of (r)->attr[0], x->shape.ndim);
  hy_shape shape = { .ndim = x->shape.ndim - 1 + idx->shape.ndim };
  check_rank (r, shape.ndim);
  int o = 0;
  for (int d = 0; d < axis; d++)
    shape.dims[o++] = x->shape.dims[d];
  for (int d = 0; d < idx->shape.ndim; d++)
    shape.dims[o++] = idx->shape.dims[d];
  for (int d = axis + 1; d < x->shape.ndim; d++)
    shape.dims[o++] = x->shape.dims[d];
  if (!tail_out (r, out, &shape))
    return;
  int64_t outer = 1, inner = 1, len = x->shape.dims[axis];
  for (int d = 0; d < axis; d++)
    outer *= x->shape.dims[d];
  for (int d = axis + 1; d < x->shape.ndim; d++)
    inner *= x->shape.dims[d];
  int64_t n_idx = hy_shape_numel (&idx->shape);
  for (int64_t j = 0; j < n_idx; j++)
    index_in (r, idx->data[j], len);    /* refuses before any write */
  for (int64_t a = 0; a < outer; a++)
    for (int64_t j = 0; j < n_idx; j++) {
      int64_t i = index_in (r, idx->data[j], len);
      memcpy (out->data + (a * n_idx + j) * inner,
          x->data + (a * len + i) * inner, sizeof (double) * inner);
    }
}

/* The offset of the row an index tuple of GatherND/ScatterND names. */
static int64_t
tuple_offset (tail_run *r, const double *t, int k, const hy_shape *data,
    const int64_t *st)
{
  int64_t off = 0;
  for (int d = 0; d < k; d++)
    off += index_in (r, t[d], data->dims[d]) * st[d];
  return off;
}

static void
run_gather_nd (tail_run *r, tail_value *out)
{
  const tail_value *x = need_in (r, 0), *idx = need_in (r, 1);
  int ni = idx->shape.ndim;
  int k = ni > 0 ? (int) idx->shape.dims[ni - 1] : -1;
  if (k < 1 || k > x->shape.ndim)
    tail_refuse (r, "indices of rank %d ending in %d for data of rank %d",
        ni, k, x->shape.ndim);
  hy_shape shape = { .ndim = ni - 1 + x->shape.ndim - k };
  check_rank (r, shape.ndim);
  int o = 0;
  for (int d = 0; d < ni - 1; d++)
    shape.dims[o++] = idx->shape.dims[d];
  for (int d = k; d < x->shape.ndim; d++)
    shape.dims[o++] = x->shape.dims[d];
  if (!tail_out (r, out, &shape))
    return;
  int64_t st[HY_MAX_DIMS], rows = hy_shape_numel (&idx->shape) / k;
  strides_of (&x->shape, st);
  int64_t inner = k < x->shape.ndim ? st[k - 1] : 1;
  for (int64_t j = 0; j < rows; j++)
    tuple_offset (r, idx->data + j * k, k, &x->shape, st);
  for (int64_t j = 0; j < rows; j++)
    memcpy (out->data + j * inner,
        x->data + tuple_offset (r, idx->data + j * k, k, &x->shape, st),
        sizeof (double) * inner);
}

static void
run_scatter_nd (tail_run *r, tail_value *out)
{
  const tail_value *x = need_in (r, 0), *idx = need_in (r, 1),
      *upd = need_in (r, 2);
  int ni = idx->shape.ndim;
  int k = ni > 0 ? (int) idx->shape.dims[ni - 1] : -1;
  if (k < 1 || k > x->shape.ndim)
    tail_refuse (r, "indices of rank %d ending in %d for data of rank %d",
        ni, k, x->shape.ndim);
  hy_shape want = { .ndim = ni - 1 + x->shape.ndim - k };
  int o = 0;
  for (int d = 0; d < ni - 1 && o < HY_MAX_DIMS; d++)
    want.dims[o++] = idx->shape.dims[d];
  for (int d = k; d < x->shape.ndim && o < HY_MAX_DIMS; d++)
    want.dims[o++] = x->shape.dims[d];
  if (want.ndim > HY_MAX_DIMS || !hy_shape_equal (&want, &upd->shape)) {
    char a[HY_SHAPE_STRLEN];
    tail_refuse (r, "updates of shape %s do not fit the indices and data",
        hy_shape_format (&upd->shape, a, sizeof a));
  }
  if (!tail_out (r, out, &x->shape))
    return;
  int64_t st[HY_MAX_DIMS], rows = hy_shape_numel (&idx->shape) / k;
  strides_of (&x->shape, st);
  int64_t inner = k < x->shape.ndim ? st[k - 1] : 1;
  for (int64_t j = 0; j < rows; j++)
    tuple_offset (r, idx->data + j * k, k, &x->shape, st);
  memmove (out->data, x->data, sizeof (double) * hy_shape_numel (&x->shape));
  for (int64_t j = 0; j < rows; j++)
    memcpy (out->data + tuple_offset (r, idx->data + j * k, k, &x->shape,
            st), upd->data + j * inner, sizeof (double) * inner);
}

static void
run_slice (tail_run *r, tail_value *out)
{
  const tail_value *x = need_in (r, 0);
  int64_t n_starts, n_ends, n_axes = 0, n_steps = 0;
  const double *starts = tail_need (r, 1, &n_starts);
  const double *ends = tail_need (r, 2, &n_ends);
  const double *axes = tail_in (r, 3) ? tail_need (r, 3, &n_axes) : NULL;
  const double *steps = tail_in (r, 4) ? tail_need (r, 4, &n_steps) : NULL;
  int nd = x->shape.ndim;
  if (n_ends != n_starts || (axes && n_axes != n_starts)
      || (steps && n_steps != n_starts) || n_starts > nd)
    tail_refuse (r, "starts, ends, axes and steps must be as long, and no "
        "longer than the data's rank %d", nd);
  int64_t start[HY_MAX_DIMS] = { 0 }, step[HY_MAX_DIMS];
  hy_shape shape = x->shape;
  bool seen[HY_MAX_DIMS] = { false };
  for (int d = 0; d < nd; d++)
    step[d] = 1;
  for (int64_t i = 0; i < n_starts; i++) {
    int a = axis_of (r, axes ? tail_i64 (axes[i]) : i, nd);
    if (seen[a])
      tail_refuse (r, "axis %d is sliced twice", a);
    seen[a] = true;
    int64_t dim = x->shape.dims[a], st = steps ? tail_i64 (steps[i]) : 1;
    int64_t b = tail_i64 (starts[i]), e = tail_i64 (ends[i]);
    if (st == 0 || st == INT64_MIN)
      tail_refuse (r, "step %" G_GINT64_FORMAT " on axis %d", st, a);
    b = b < 0 ? MAX (b, -dim) + dim : b;
    e = e < 0 ? MAX (e, -dim - 1) + dim : e;
    if (st > 0) {
      b = CLAMP (b, 0, dim);
      e = CLAMP (e, 0, dim);
    } else {
      b = CLAMP (b, 0, dim - 1);
      e = CLAMP (e, -1, dim - 1);
    }
    int64_t span = st > 0 ? e - b : b - e, mag = st > 0 ? st : -st;
    /* (span + mag - 1) / mag would overflow with a step near INT64_MAX */
    shape.dims[a] = span > 0 ? (span - 1) / mag + 1 : 0;
    start[a] = b;
    step[a] = st;
  }
  if (!tail_out (r, out, &shape))
    return;
  int64_t st[HY_MAX_DIMS], c[HY_MAX_DIMS];
  strides_of (&x->shape, st);
  int64_t n = hy_shape_numel (&shape);
  for (int64_t i = 0; i < n; i++) {
    unravel (i, &shape, c);
    int64_t off = 0;
    for (int d = 0; d < nd; d++)
      off += (start[d] + c[d] * step[d]) * st[d];
    out->data[i] = x->data[off];
  }
}

static void
copy_values (tail_value *out, const tail_value *x)
{
  memmove (out->data, x->data, sizeof (double) * hy_shape_numel (&x->shape));
}

static void
run_squeeze (tail_run *r, tail_value *out)
{
  const tail_value *x = need_in (r, 0);
  int nd = x->shape.ndim;
  bool drop[HY_MAX_DIMS] = { false };
  if (tail_in (r, 1)) {
    int64_t n;
    const double *axes = tail_need (r, 1, &n);
    for (int64_t i = 0; i < n; i++) {
      int a = axis_of (r, tail_i64 (axes[i]), nd);
      if (x->shape.dims[a] != 1)
        tail_refuse (r, "axis %d has size %" G_GINT64_FORMAT ", not 1", a,
            x->shape.dims[a]);
      drop[a] = true;
    }
  } else
    for (int d = 0; d < nd; d++)
      drop[d] = x->shape.dims[d] == 1;
  hy_shape shape = { .ndim = 0 };
  for (int d = 0; d < nd; d++)
    if (!drop[d])
      shape.dims[shape.ndim++] = x->shape.dims[d];
  if (tail_out (r, out, &shape))
    copy_values (out, x);
}

static void
run_unsqueeze (tail_run *r, tail_value *out)
{
  const tail_value *x = need_in (r, 0);
  int64_t n;
  const double *axes = tail_need (r, 1, &n);
  int nd = x->shape.ndim + (int) MIN (n, HY_MAX_DIMS + 1);
  check_rank (r, nd);
  bool added[HY_MAX_DIMS] = { false };
  for (int64_t i = 0; i < n; i++) {
    int a = axis_of (r, tail_i64 (axes[i]), nd);
    if (added[a])
      tail_refuse (r, "axis %d is given twice", a);
    added[a] = true;
  }
  hy_shape shape = { .ndim = nd };
  for (int d = 0, k = 0; d < nd; d++)
    shape.dims[d] = added[d] ? 1 : x->shape.dims[k++];
  if (tail_out (r, out, &shape))
    copy_values (out, x);
}

static void
run_reshape (tail_run *r, tail_value *out)
{
  const tail_value *x = need_in (r, 0);
  int64_t n;
  const double *target = tail_need (r, 1, &n);
  check_rank (r, (int) MIN (n, HY_MAX_DIMS + 1));
  bool allowzero = step_of (r)->attr[0] != 0;
  hy_shape shape = { .ndim = (int) n };
  int infer = -1;
  int64_t known = 1, total = hy_shape_numel (&x->shape);
  for (int d = 0; d < shape.ndim; d++) {
    int64_t t = tail_i64 (target[d]);
    if (t == 0 && !allowzero) {
      if (d >= x->shape.ndim)
        tail_refuse (r, "a 0 at dimension %d copies none of the data's", d);
      t = x->shape.dims[d];
    }
    if (t == -1) {
      if (infer >= 0)
        tail_refuse (r, "more than one -1 in the shape");
      infer = d;
      t = 1;
    } else if (t < 0 || t > G_MAXINT32)
      tail_refuse (r, "dimension %d = %" G_GINT64_FORMAT " is not a size", d,
          t);
    shape.dims[d] = t;
    /* no data holds 2^40 values: refused before the product overflows */
    if (t > 0 && known > ((int64_t) 1 << 40) / t)
      tail_refuse (r, "the shape holds more than 2^40 values");
    known *= t;
  }
  if (infer >= 0)
    shape.dims[infer] = known ? total / known : 0;
  if (hy_shape_numel (&shape) != total || (infer >= 0 && known == 0)) {
    char a[HY_SHAPE_STRLEN], b[HY_SHAPE_STRLEN];
    tail_refuse (r, "data %s cannot be reshaped to %s",
        hy_shape_format (&x->shape, a, sizeof a),
        hy_shape_format (&shape, b, sizeof b));
  }
  if (tail_out (r, out, &shape))
    copy_values (out, x);
}

static void
run_shape (tail_run *r, tail_value *out)
{
  const hy_tail_step *s = step_of (r);
  const tail_value *x = need_in (r, 0);
  int nd = x->shape.ndim;
  int64_t b = s->n_attr > 0 ? s->attr[0] : 0;
  int64_t e = s->n_attr > 1 ? s->attr[1] : nd;
  b = CLAMP (b < 0 ? b + nd : b, 0, nd);
  e = CLAMP (e < 0 ? e + nd : e, 0, nd);
  hy_shape shape = { .ndim = 1, .dims = { MAX (e - b, 0) } };
  /* a dry run knows every shape: Shape's values always */
  out->shape = shape;
  out->data = r->mode == TAIL_REAL ? out->data : out->small;
  out->known = true;
  if (r->mode == TAIL_REAL)
    tail_out (r, out, &shape);
  for (int64_t d = b; d < e; d++)
    out->data[d - b] = (double) x->shape.dims[d];
}

static void
run_concat (tail_run *r, tail_value *out)
{
  const hy_tail_step *s = step_of (r);
  const tail_value *first = need_in (r, 0);
  int nd = first->shape.ndim;
  int axis = axis_of (r, s->attr[0], nd);
  hy_shape shape = first->shape;
  shape.dims[axis] = 0;
  for (int k = 0; k < s->n_in; k++) {
    const tail_value *v = need_in (r, k);
    bool fits = v->shape.ndim == nd;
    for (int d = 0; d < nd && fits; d++)
      fits = d == axis || v->shape.dims[d] == first->shape.dims[d];
    if (!fits) {
      char a[HY_SHAPE_STRLEN], b[HY_SHAPE_STRLEN];
      tail_refuse (r, "input %d of shape %s does not fit input 0's %s on "
          "axis %d", k, hy_shape_format (&v->shape, a, sizeof a),
          hy_shape_format (&first->shape, b, sizeof b), axis);
    }
    shape.dims[axis] += v->shape.dims[axis];
  }
  if (!tail_out (r, out, &shape))
    return;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++)
    outer *= shape.dims[d];
  for (int d = axis + 1; d < nd; d++)
    inner *= shape.dims[d];
  double *dst = out->data;
  for (int64_t a = 0; a < outer; a++)
    for (int k = 0; k < s->n_in; k++) {
      const tail_value *v = tail_in (r, k);
      int64_t n = v->shape.dims[axis] * inner;
      memcpy (dst, v->data + a * n, sizeof (double) * n);
      dst += n;
    }
}

static void
run_where (tail_run *r, tail_value *out)
{
  const tail_value *c = need_in (r, 0), *x = need_in (r, 1),
      *y = need_in (r, 2);
  hy_shape cx, shape;
  broadcast (r, &c->shape, &x->shape, &cx);
  broadcast (r, &cx, &y->shape, &shape);
  if (!tail_out (r, out, &shape))
    return;
  int64_t n = hy_shape_numel (&shape), co[HY_MAX_DIMS];
  for (int64_t i = 0; i < n; i++) {
    unravel (i, &shape, co);
    bool pick_x = c->data[broadcast_offset (&c->shape, co, shape.ndim)] != 0;
    const tail_value *v = pick_x ? x : y;
    out->data[i] = v->data[broadcast_offset (&v->shape, co, shape.ndim)];
  }
}

static void
run_expand (tail_run *r, tail_value *out)
{
  const tail_value *x = need_in (r, 0);
  int64_t n;
  const double *target = tail_need (r, 1, &n);
  check_rank (r, (int) MIN (n, HY_MAX_DIMS + 1));
  hy_shape t = { .ndim = (int) n }, shape;
  for (int d = 0; d < t.ndim; d++)
    t.dims[d] = tail_i64 (target[d]);
  check_dims (r, &t);
  broadcast (r, &x->shape, &t, &shape);
  check_dims (r, &shape);
  if (!tail_out (r, out, &shape))
    return;
  int64_t total = hy_shape_numel (&shape), co[HY_MAX_DIMS];
  for (int64_t i = 0; i < total; i++) {
    unravel (i, &shape, co);
    out->data[i] = x->data[broadcast_offset (&x->shape, co, shape.ndim)];
  }
}

static void
run_pad (tail_run *r, tail_value *out)
{
  const tail_value *x = need_in (r, 0);
  int nd = x->shape.ndim;
  int64_t n_pads, n_axes = nd, n_value = 0;
  const double *pads = tail_need (r, 1, &n_pads);
  const double *axes = tail_in (r, 3) ? tail_need (r, 3, &n_axes) : NULL;
  const tail_value *value = tail_in (r, 2);
  if (value)
    n_value = hy_shape_numel (&value->shape);
  if (n_axes > nd || n_pads != 2 * n_axes)
    tail_refuse (r, "%" G_GINT64_FORMAT " pads for %" G_GINT64_FORMAT
        " axes of data of rank %d", n_pads, n_axes, nd);
  int64_t before[HY_MAX_DIMS] = { 0 };
  hy_shape shape = x->shape;
  for (int64_t i = 0; i < n_axes; i++) {
    int a = axis_of (r, axes ? tail_i64 (axes[i]) : i, nd);
    int64_t b = tail_i64 (pads[i]), e = tail_i64 (pads[i + n_axes]);
    if (b < -G_MAXINT32 || b > G_MAXINT32 || e < -G_MAXINT32 || e > G_MAXINT32)
      tail_refuse (r, "pads %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT " are "
          "not sizes", b, e);
    before[a] = b;
    shape.dims[a] = x->shape.dims[a] + b + e;
  }
  check_dims (r, &shape);
  if (!tail_out (r, out, &shape))
    return;
  double fill = value && n_value > 0 && value->known ? value->data[0] : 0;
  int64_t st[HY_MAX_DIMS], c[HY_MAX_DIMS], total = hy_shape_numel (&shape);
  strides_of (&x->shape, st);
  for (int64_t i = 0; i < total; i++) {
    unravel (i, &shape, c);
    int64_t off = 0;
    bool inside = true;
    for (int d = 0; d < nd && inside; d++) {
      int64_t cd = c[d] - before[d];
      inside = cd >= 0 && cd < x->shape.dims[d];
      off += cd * st[d];
    }
    out->data[i] = inside ? x->data[off] : fill;
  }
}

/* ---- elementwise ------------------------------------------------------- */

static double
cast_value (double v, int64_t to)
{
  if (to == 1)
    return (double) tail_i64 (v);
  if (to == 2)
    return v != 0;
  return (double) (float) v;
}

static void
run_cast (tail_run *r, tail_value *out)
{
  const tail_value *x = need_in (r, 0);
  if (!tail_out (r, out, &x->shape))
    return;
  int64_t to = step_of (r)->attr[0], n = hy_shape_numel (&x->shape);
  for (int64_t i = 0; i < n; i++)
    out->data[i] = cast_value (x->data[i], to);
}

/* Integer arithmetic as int64 wraps (through uint64: no overflow in C);
 * division truncates, and by zero fails as ONNX Runtime's does. */
static double
int_op (tail_run *r, int kind, int64_t a, int64_t b)
{
  switch (kind) {
    case HY_TAIL_ADD:
      return (double) (int64_t) ((uint64_t) a + (uint64_t) b);
    case HY_TAIL_SUB:
      return (double) (int64_t) ((uint64_t) a - (uint64_t) b);
    case HY_TAIL_MUL:
      return (double) (int64_t) ((uint64_t) a * (uint64_t) b);
    default:
      if (b == 0)
        tail_refuse (r, "integer division by zero");
      if (a == INT64_MIN && b == -1)
        return (double) INT64_MIN;
      return (double) (a / b);
  }
}

static double
float_op (int kind, float a, float b)
{
  switch (kind) {
    case HY_TAIL_ADD:
      return a + b;
    case HY_TAIL_SUB:
      return a - b;
    case HY_TAIL_MUL:
      return a * b;
    default:
      return a / b;
  }
}

static void
run_binary (tail_run *r, tail_value *out)
{
  const hy_tail_step *s = step_of (r);
  const tail_value *a = need_in (r, 0), *b = need_in (r, 1);
  hy_shape shape;
  broadcast (r, &a->shape, &b->shape, &shape);
  if (!tail_out (r, out, &shape))
    return;
  int64_t n = hy_shape_numel (&shape), co[HY_MAX_DIMS];
  for (int64_t i = 0; i < n; i++) {
    unravel (i, &shape, co);
    double x = a->data[broadcast_offset (&a->shape, co, shape.ndim)];
    double y = b->data[broadcast_offset (&b->shape, co, shape.ndim)];
    out->data[i] = s->is_int ? int_op (r, s->kind, tail_i64 (x),
        tail_i64 (y)) : float_op (s->kind, (float) x, (float) y);
  }
}

static void
run_identity (tail_run *r, tail_value *out)
{
  const tail_value *x = need_in (r, 0);
  if (tail_out (r, out, &x->shape))
    copy_values (out, x);
}

void
tail_shape_step (tail_run *r, tail_value *out)
{
  switch (step_of (r)->kind) {
    case HY_TAIL_TRANSPOSE: run_transpose (r, out); break;
    case HY_TAIL_GATHER: run_gather (r, out); break;
    case HY_TAIL_GATHER_ND: run_gather_nd (r, out); break;
    case HY_TAIL_SCATTER_ND: run_scatter_nd (r, out); break;
    case HY_TAIL_SLICE: run_slice (r, out); break;
    case HY_TAIL_SQUEEZE: run_squeeze (r, out); break;
    case HY_TAIL_UNSQUEEZE: run_unsqueeze (r, out); break;
    case HY_TAIL_RESHAPE: run_reshape (r, out); break;
    case HY_TAIL_SHAPE: run_shape (r, out); break;
    case HY_TAIL_CONCAT: run_concat (r, out); break;
    case HY_TAIL_WHERE: run_where (r, out); break;
    case HY_TAIL_EXPAND: run_expand (r, out); break;
    case HY_TAIL_CAST: run_cast (r, out); break;
    case HY_TAIL_ADD:
    case HY_TAIL_SUB:
    case HY_TAIL_MUL:
    case HY_TAIL_DIV: run_binary (r, out); break;
    case HY_TAIL_PAD: run_pad (r, out); break;
    default: run_identity (r, out); break;
  }
}
