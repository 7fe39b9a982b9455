/*
 * layout.c — CPU kernels of shape_array, reverse, stack and
 * broadcast_axis: pure data movement, each output element read from one
 * input element.  reverse and broadcast_axis walk the output in order and
 * step an input offset per axis (negative strides for reversed axes, 0
 * for broadcast ones).
 */
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/shape.h"

void hy_cpu_shape_array (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_reverse (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_stack (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_broadcast_axis (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

void
hy_cpu_shape_array (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  for (int i = 0; i < in[0]->shape.ndim; i++)
    out[0]->data[i] = (float) in[0]->shape.dims[i];
}

/* out (shape `os`) from x: the input offset of output element 0 is
 * `base`, and moving one step along output axis i moves the input offset
 * by step[i]. */
typedef struct gather_job {
  const float *x;
  float *y;
  hy_shape os;
  int64_t base;
  int64_t step[HY_MAX_DIMS];
} gather_job;

static void
gather_rows (void *arg, int64_t begin, int64_t end, int thread)
{
  const gather_job *j = arg;
  const int nd = j->os.ndim;
  const int64_t row = nd > 0 ? j->os.dims[nd - 1] : 1;
  const int64_t last = nd > 0 ? j->step[nd - 1] : 0;
  for (int64_t r = begin; r < end; r++) {
    /* The input offset of row r's first element. */
    int64_t off = j->base, rem = r;
    for (int i = nd - 2; i >= 0; i--) {
      off += (rem % j->os.dims[i]) * j->step[i];
      rem /= j->os.dims[i];
    }
    float *y = j->y + r * row;
    for (int64_t k = 0; k < row; k++)
      y[k] = j->x[off + k * last];
  }
}

static void
gather_run (hy_cpu_ctx *ctx, gather_job *j)
{
  const int nd = j->os.ndim;
  const int64_t n = hy_shape_numel (&j->os);
  if (n == 0)
    return;
  const int64_t row = nd > 0 ? j->os.dims[nd - 1] : 1;
  hy_cpu_parallel_for (ctx, n / row, hy_cpu_grain (row), gather_rows, j);
}

void
hy_cpu_reverse (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_reverse_params *p = params;
  const hy_shape *s = &in[0]->shape;
  const uint32_t mask = hy_axes_mask (p->axes, p->n_axes, s->ndim);
  gather_job j = { .x = in[0]->data, .y = out[0]->data, .os = *s };
  int64_t stride = 1;
  for (int i = s->ndim - 1; i >= 0; i--) {
    if (mask & (1u << i)) {
      j.base += (s->dims[i] - 1) * stride;
      j.step[i] = -stride;
    } else
      j.step[i] = stride;
    stride *= s->dims[i];
  }
  gather_run (ctx, &j);
}

void
hy_cpu_broadcast_axis (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  /* broadcast_axis and broadcast_like alike: the input axes of length 1
   * are the ones repeated (hy_broadcast_axis_params). */
  const hy_shape *s = &in[0]->shape;
  gather_job j = { .x = in[0]->data, .y = out[0]->data,
    .os = out[0]->shape };
  int64_t stride = 1;
  for (int i = s->ndim - 1; i >= 0; i--) {
    j.step[i] = s->dims[i] == 1 ? 0 : stride;
    stride *= s->dims[i];
  }
  gather_run (ctx, &j);
}

typedef struct stack_job {
  const hy_tensor *const *in;
  float *y;
  int n_in;
  int64_t inner;
} stack_job;

/* Item (o, k): input k's o-th block of `inner` floats. */
static void
stack_blocks (void *arg, int64_t begin, int64_t end, int thread)
{
  const stack_job *j = arg;
  for (int64_t b = begin; b < end; b++) {
    const int64_t o = b / j->n_in, k = b % j->n_in;
    memcpy (j->y + b * j->inner, j->in[k]->data + o * j->inner,
        (size_t) j->inner * sizeof (float));
  }
}

void
hy_cpu_stack (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_stack_params *p = params;
  const hy_shape *s = &in[0]->shape;
  int axis = p->axis < 0 ? p->axis + s->ndim + 1 : p->axis;
  int64_t inner = 1, outer = 1;
  for (int i = 0; i < s->ndim; i++) {
    if (i < axis)
      outer *= s->dims[i];
    else
      inner *= s->dims[i];
  }
  if (inner == 0 || outer == 0)
    return;
  stack_job j = { in, out[0]->data, n_in, inner };
  hy_cpu_parallel_for (ctx, outer * n_in, hy_cpu_grain (inner),
      stack_blocks, &j);
}

/* gather_nd: output row j (a slice of X_M*...*X_{N-1} elements) copies the
 * data slice at (indices[0, j], ..., indices[M-1, j]).  An index i of axis
 * size n is valid in [-n, n-1] as a float, as in MXNet 1.9.1's bound check;
 * a negative one gets n added before truncation toward zero (so -0.5 on
 * size 2 reads row 1, as MXNet does).
 *
 * Any other index fails the forward before anything is written, with
 * MXNet's IndexError message and the index it reports: of the first axis
 * that has any, its last bad index.  A NaN index is refused too: MXNet's
 * check lets it through and its kernel then reads outside the data. */
void hy_cpu_gather_nd (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

static void
check_indices (hy_cpu_ctx *ctx, const float *idx, int m, int64_t rows,
    const hy_shape *d)
{
  for (int a = 0; a < m; a++) {
    const float n = (float) d->dims[a];
    for (int64_t r = rows; r-- > 0;) {
      float v = idx[a * rows + r];
      if (!(v >= -n && v <= n - 1.0f))
        hy_cpu_refuse (ctx, "IndexError: index %g is out of bounds for axis "
            "%d with size %" G_GINT64_FORMAT " (indices column %"
            G_GINT64_FORMAT ")", v, a, (gint64) d->dims[a], (gint64) r);
    }
  }
}

void
hy_cpu_gather_nd (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_shape *d = &in[0]->shape, *is = &in[1]->shape;
  const int m = (int) is->dims[0];
  int64_t rows = 1, slice = 1;
  for (int i = 1; i < is->ndim; i++)
    rows *= is->dims[i];
  for (int i = m; i < d->ndim; i++)
    slice *= d->dims[i];
  int64_t strides[HY_MAX_DIMS], st = 1;
  for (int i = d->ndim - 1; i >= 0; i--) {
    strides[i] = st;
    st *= d->dims[i];
  }
  const float *x = in[0]->data, *idx = in[1]->data;
  float *y = out[0]->data;
  check_indices (ctx, idx, m, rows, d);
  for (int64_t r = 0; r < rows; r++) {
    int64_t off = 0;
    for (int a = 0; a < m; a++) {
      float v = idx[a * rows + r];
      if (v < 0.0f)
        v += (float) d->dims[a];
      off += (int64_t) v * strides[a];
    }
    memcpy (y + r * slice, x + off, (size_t) slice * sizeof (float));
  }
}
