/*
 * shape.c — CPU kernels of the shape-only ops and transpose.
 *
 * _copy, Dropout, BlockGrad, Flatten, Reshape, expand_dims and squeeze keep
 * the bytes in order: a copy when the output has its own buffer, nothing
 * when the planner ran them in place.
 *
 * transpose first simplifies the permutation (dropping length-1 axes and
 * merging output axes that stay adjacent in the input), so common layouts
 * reduce to a memcpy of runs or a batch of 2-D transposes.
 */
#include <stdbool.h>
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/shape.h"

/* Referenced weakly by cpu-backend.c through ops.def; declared here so the
 * definitions have prototypes. */
void hy_cpu_identity (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_flatten (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_reshape (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_expand_dims (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_squeeze (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_transpose (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

static void
copy_bytes (const hy_tensor *src, hy_tensor *dst)
{
  int64_t n = hy_shape_numel (&dst->shape);
  if (dst->data != src->data && n > 0)
    memcpy (dst->data, src->data, (size_t) n * sizeof (float));
}

void
hy_cpu_identity (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  copy_bytes (in[0], out[0]);
}

void
hy_cpu_flatten (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  copy_bytes (in[0], out[0]);
}

void
hy_cpu_reshape (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  copy_bytes (in[0], out[0]);
}

void
hy_cpu_expand_dims (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  copy_bytes (in[0], out[0]);
}

void
hy_cpu_squeeze (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  copy_bytes (in[0], out[0]);
}

/* ---- transpose ---------------------------------------------------------- */

/* The output walked in order: output axis i has length dims[i] and moves
 * stride[i] elements through the input. */
typedef struct strided_walk {
  int nd;
  int64_t dims[HY_MAX_DIMS];
  int64_t stride[HY_MAX_DIMS];
} strided_walk;

static strided_walk
transpose_walk (const hy_shape *in, const int *axes)
{
  int64_t in_stride[HY_MAX_DIMS];
  int64_t s = 1;
  for (int a = in->ndim - 1; a >= 0; a--) {
    in_stride[a] = s;
    s *= in->dims[a];
  }
  strided_walk w = { 0 };
  for (int i = 0; i < in->ndim; i++) {
    int a = axes[i];
    if (in->dims[a] == 1)
      continue;                 /* a length-1 axis moves nothing */
    /* Merge with the previous output axis when the pair is contiguous in
     * the input, e.g. NCHW -> NHWC becomes (N, C, HW) -> (N, HW, C). */
    if (w.nd > 0 && w.stride[w.nd - 1] == in->dims[a] * in_stride[a]) {
      w.dims[w.nd - 1] *= in->dims[a];
      w.stride[w.nd - 1] = in_stride[a];
      continue;
    }
    w.dims[w.nd] = in->dims[a];
    w.stride[w.nd] = in_stride[a];
    w.nd++;
  }
  return w;
}

/* dst[r * dst_stride + c] = src[c * src_stride + r] for r < rows,
 * c < cols.  Cache-sized blocks of 8 x 8 tiles: a tile is read as 8 short
 * contiguous rows and written as 8, which keeps both sides streaming where
 * a plain tiled loop touches one element per cache line (and thrashes on
 * power-of-two strides). */
static void
transpose_2d (float *restrict dst, int64_t dst_stride,
    const float *restrict src, int64_t src_stride, int64_t rows,
    int64_t cols)
{
  enum { BLOCK = 64, TILE = 8 };
  if (rows < TILE || cols < TILE) {
    /* Too thin for tiles (e.g. 3 channels): one pass, writes in order. */
    for (int64_t r = 0; r < rows; r++)
      for (int64_t c = 0; c < cols; c++)
        dst[r * dst_stride + c] = src[c * src_stride + r];
    return;
  }
  for (int64_t r0 = 0; r0 < rows; r0 += BLOCK) {
    int64_t r1 = r0 + BLOCK < rows ? r0 + BLOCK : rows;
    for (int64_t c0 = 0; c0 < cols; c0 += BLOCK) {
      int64_t c1 = c0 + BLOCK < cols ? c0 + BLOCK : cols;
      for (int64_t rb = r0; rb < r1; rb += TILE) {
        for (int64_t cb = c0; cb < c1; cb += TILE) {
          const float *s = src + cb * src_stride + rb;
          float *d = dst + rb * dst_stride + cb;
          if (rb + TILE <= r1 && cb + TILE <= c1) {
            float tile[TILE][TILE];
            for (int i = 0; i < TILE; i++)
              for (int j = 0; j < TILE; j++)
                tile[j][i] = s[i * src_stride + j];
            for (int j = 0; j < TILE; j++)
              for (int i = 0; i < TILE; i++)
                d[j * dst_stride + i] = tile[j][i];
            continue;
          }
          int64_t nr = r1 - rb < TILE ? r1 - rb : TILE;
          int64_t nc = c1 - cb < TILE ? c1 - cb : TILE;
          for (int64_t j = 0; j < nr; j++)
            for (int64_t i = 0; i < nc; i++)
              d[j * dst_stride + i] = s[i * src_stride + j];
        }
      }
    }
  }
}

/* An odometer over some output axes that moves the matching input and
 * output offsets together. */
typedef struct axis_loop {
  int n;
  int64_t dims[HY_MAX_DIMS];
  int64_t in_step[HY_MAX_DIMS];
  int64_t out_step[HY_MAX_DIMS];
  int64_t idx[HY_MAX_DIMS];
  int64_t in_off, out_off;
} axis_loop;

static void
loop_add_axis (axis_loop *l, int64_t dim, int64_t in_step, int64_t out_step)
{
  l->dims[l->n] = dim;
  l->in_step[l->n] = in_step;
  l->out_step[l->n] = out_step;
  l->idx[l->n] = 0;
  l->n++;
}

/* Moves to the next position; FALSE after the last one. */
static bool
loop_next (axis_loop *l)
{
  for (int k = l->n - 1; k >= 0; k--) {
    l->in_off += l->in_step[k];
    l->out_off += l->out_step[k];
    if (++l->idx[k] < l->dims[k])
      return true;
    l->in_off -= l->in_step[k] * l->dims[k];
    l->out_off -= l->out_step[k] * l->dims[k];
    l->idx[k] = 0;
  }
  return false;
}

void
hy_cpu_transpose (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_transpose_params *p = params;
  const hy_shape *s = &in[0]->shape;
  const float *src = in[0]->data;
  float *dst = out[0]->data;
  int64_t numel = hy_shape_numel (s);
  if (numel == 0)
    return;

  int axes[HY_MAX_DIMS];
  hy_transpose_axes (p, s->ndim, axes);
  strided_walk w = transpose_walk (s, axes);
  if (w.nd == 0 || (w.nd == 1 && w.stride[0] == 1)) {
    memcpy (dst, src, (size_t) numel * sizeof (float));
    return;
  }

  int last = w.nd - 1;
  int64_t out_stride[HY_MAX_DIMS];
  out_stride[last] = 1;
  for (int i = last - 1; i >= 0; i--)
    out_stride[i] = out_stride[i + 1] * w.dims[i + 1];

  axis_loop loop = { 0 };
  if (w.stride[last] == 1) {
    /* The innermost axis stays innermost: whole runs are contiguous. */
    for (int i = 0; i < last; i++)
      loop_add_axis (&loop, w.dims[i], w.stride[i], out_stride[i]);
    size_t run = (size_t) w.dims[last] * sizeof (float);
    do
      memcpy (dst + loop.out_off, src + loop.in_off, run);
    while (loop_next (&loop));
    return;
  }

  /* Otherwise some output axis q reads the input's innermost (stride 1)
   * axis: each (q, last) plane is a 2-D transpose, e.g. NCHW -> NHWC is
   * one per image. */
  int q = 0;
  while (w.stride[q] != 1)
    q++;
  for (int i = 0; i < last; i++)
    if (i != q)
      loop_add_axis (&loop, w.dims[i], w.stride[i], out_stride[i]);
  do
    transpose_2d (dst + loop.out_off, out_stride[q], src + loop.in_off,
        w.stride[last], w.dims[q], w.dims[last]);
  while (loop_next (&loop));
}
