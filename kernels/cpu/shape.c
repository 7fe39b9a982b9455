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
#include <string.h>

#include "cpu-kernel.h"
#include "shape.h"

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

/* dst (rows x cols, dense) = the transpose of src (cols rows of `rows`
 * elements, src_stride apart), in cache-sized tiles. */
static void
transpose_2d (float *restrict dst, const float *restrict src, int64_t rows,
    int64_t cols, int64_t src_stride)
{
  enum { TILE = 32 };
  for (int64_t r0 = 0; r0 < rows; r0 += TILE) {
    int64_t r1 = r0 + TILE < rows ? r0 + TILE : rows;
    for (int64_t c0 = 0; c0 < cols; c0 += TILE) {
      int64_t c1 = c0 + TILE < cols ? c0 + TILE : cols;
      for (int64_t r = r0; r < r1; r++) {
        float *restrict d = dst + r * cols;
        const float *restrict s = src + r;
        for (int64_t c = c0; c < c1; c++)
          d[c] = s[c * src_stride];
      }
    }
  }
}

/* Advances the counters of the first `nd` axes of w like an odometer and
 * returns the input offset of the next position. */
static int64_t
walk_next (const strided_walk *w, int nd, int64_t *idx, int64_t offset)
{
  for (int k = nd - 1; k >= 0; k--) {
    offset += w->stride[k];
    if (++idx[k] < w->dims[k])
      return offset;
    offset -= w->stride[k] * w->dims[k];
    idx[k] = 0;
  }
  return offset;
}

static int64_t
walk_outer_count (const strided_walk *w, int nd)
{
  int64_t n = 1;
  for (int k = 0; k < nd; k++)
    n *= w->dims[k];
  return n;
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
  for (int i = 0; i < s->ndim; i++)
    axes[i] = p->n_axes ? p->axes[i] : s->ndim - 1 - i;
  strided_walk w = transpose_walk (s, axes);

  if (w.nd == 0 || (w.nd == 1 && w.stride[0] == 1)) {
    memcpy (dst, src, (size_t) numel * sizeof (float));
    return;
  }

  int64_t idx[HY_MAX_DIMS] = { 0 };
  int64_t inner = w.dims[w.nd - 1];
  if (w.stride[w.nd - 1] == 1) {
    /* The innermost axis stays innermost: whole runs are contiguous. */
    int64_t outer = walk_outer_count (&w, w.nd - 1), off = 0;
    for (int64_t o = 0; o < outer; o++) {
      memcpy (dst + o * inner, src + off, (size_t) inner * sizeof (float));
      off = walk_next (&w, w.nd - 1, idx, off);
    }
    return;
  }
  if (w.nd >= 2 && w.stride[w.nd - 2] == 1) {
    /* The last two output axes are a 2-D transpose of the input's. */
    int64_t rows = w.dims[w.nd - 2];
    int64_t outer = walk_outer_count (&w, w.nd - 2), off = 0;
    for (int64_t o = 0; o < outer; o++) {
      transpose_2d (dst + o * rows * inner, src + off, rows, inner,
          w.stride[w.nd - 1]);
      off = walk_next (&w, w.nd - 2, idx, off);
    }
    return;
  }
  int64_t outer = walk_outer_count (&w, w.nd - 1), off = 0;
  int64_t step = w.stride[w.nd - 1];
  for (int64_t o = 0; o < outer; o++) {
    float *restrict d = dst + o * inner;
    const float *restrict base = src + off;
    for (int64_t k = 0; k < inner; k++)
      d[k] = base[k * step];
    off = walk_next (&w, w.nd - 1, idx, off);
  }
}
