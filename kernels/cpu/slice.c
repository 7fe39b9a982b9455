/*
 * slice.c — CPU kernels of slice, slice_axis, slice_like, Concat and
 * SliceChannel.
 *
 * Each one views its tensors as (outer, axis, inner) blocks so that
 * everything below the cut axis moves with one memcpy per block.  Concat,
 * the one that moves whole feature maps (DenseNet, Inception), splits its
 * output into equal ranges over the context's threads.
 */
#include <stdbool.h>
#include <string.h>

#include <glib.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/params/shape.h"

/* Referenced weakly by cpu-backend.c through ops.def; declared here so the
 * definitions have prototypes. */
void hy_cpu_slice (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_slice_axis (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_slice_like (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_concat (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_split (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

static int64_t
dims_product (const hy_shape *s, int from, int to)
{
  int64_t n = 1;
  for (int i = from; i < to; i++)
    n *= s->dims[i];
  return n;
}

static int
normalize_axis (int axis, int ndim)
{
  return axis < 0 ? axis + ndim : axis;
}

/* ---- slice -------------------------------------------------------------- */

/* A slice seen as rows: the axes before `cut` (the last axis actually cut)
 * are walked, and each position of them copies one row of count[cut]
 * blocks of `inner` contiguous floats. */
typedef struct slice_walk {
  const float *src;
  float *dst;
  int cut;
  int64_t inner;
  int64_t first[HY_MAX_DIMS], step[HY_MAX_DIMS], count[HY_MAX_DIMS];
  int64_t in_stride[HY_MAX_DIMS];
} slice_walk;

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "kernels/cpu/lane-mask.h"

static bool
have_avx512 (void)
{
  return hy_cpu_features_get ()->avx512f;
}

/* dst[t] = src[2t] for t < n: two vectors of the row in, their even
 * lanes out.  Loads are masked to the 2n − 1 floats the row has. */
__attribute__ ((target ("avx512f")))
static void
every_second (float *dst, const float *src, int64_t n)
{
  const __m512i even = _mm512_setr_epi32 (0, 2, 4, 6, 8, 10, 12, 14, 16, 18,
      20, 22, 24, 26, 28, 30);
  const int64_t span = 2 * n - 1;
  for (int64_t t = 0; t < n; t += 16) {
    const __m512 lo = _mm512_maskz_loadu_ps (hy_lanes_within (2 * t, 0,
            span), src + 2 * t);
    const __m512 hi = _mm512_maskz_loadu_ps (hy_lanes_within (2 * t + 16, 0,
            span), src + 2 * t + 16);
    _mm512_mask_storeu_ps (dst + t, hy_lanes_within (t, 0, n),
        _mm512_permutex2var_ps (lo, even, hi));
  }
}
#else
static bool
have_avx512 (void)
{
  return false;
}

static void
every_second (float *dst, const float *src, int64_t n)
{
  g_assert_not_reached ();
}
#endif

/* dst[t] = src[t · step] for t < n. */
static void
gather_strided (float *dst, const float *src, int64_t step, int64_t n)
{
  if (step == 2 && have_avx512 ()) {
    every_second (dst, src, n);
    return;
  }
  for (int64_t t = 0; t < n; t++)
    dst[t] = src[t * step];
}

/* Rows [begin, end) of the walk. */
static void
slice_rows (void *arg, int64_t begin, int64_t end, int thread)
{
  const slice_walk *w = arg;
  const int cut = w->cut;
  const int64_t n = w->count[cut], inner = w->inner;
  const int64_t cut_step = w->step[cut] * w->in_stride[cut];

  /* Where row `begin` starts: its index on each walked axis. */
  int64_t idx[HY_MAX_DIMS] = { 0 }, off = w->first[cut] * w->in_stride[cut];
  for (int64_t k = cut - 1, rest = begin; k >= 0; k--) {
    idx[k] = rest % w->count[k];
    rest /= w->count[k];
  }
  for (int k = 0; k < cut; k++)
    off += (w->first[k] + idx[k] * w->step[k]) * w->in_stride[k];

  float *dst = w->dst + begin * n * inner;
  for (int64_t o = begin; o < end; o++, dst += n * inner) {
    const float *base = w->src + off;
    if (w->step[cut] == 1)
      memcpy (dst, base, (size_t) (n * inner) * sizeof (float));
    else if (inner > 1)
      for (int64_t t = 0; t < n; t++)
        memcpy (dst + t * inner, base + t * cut_step,
            (size_t) inner * sizeof (float));
    else
      gather_strided (dst, base, w->step[cut], n);
    for (int k = cut - 1; k >= 0; k--) {
      off += w->step[k] * w->in_stride[k];
      if (++idx[k] < w->count[k])
        break;
      off -= w->count[k] * w->step[k] * w->in_stride[k];
      idx[k] = 0;
    }
  }
}

void
hy_cpu_slice (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_slice_params *p = params;
  const hy_shape *s = &in[0]->shape;
  int nd = s->ndim;
  if (hy_shape_numel (&out[0]->shape) == 0)
    return;

  slice_walk w = { .src = in[0]->data, .dst = out[0]->data, .inner = 1 };
  int64_t st = 1;
  for (int i = nd - 1; i >= 0; i--) {
    hy_slice_resolve (p, i, s->dims[i], &w.first[i], &w.step[i],
        &w.count[i]);
    w.in_stride[i] = st;
    st *= s->dims[i];
  }

  /* Trailing axes taken whole are one contiguous block per position of
   * the last axis that is actually cut. */
  w.cut = nd - 1;
  while (w.cut >= 0 && w.first[w.cut] == 0 && w.step[w.cut] == 1
      && w.count[w.cut] == s->dims[w.cut]) {
    w.inner *= s->dims[w.cut];
    w.cut--;
  }
  if (w.cut < 0) {
    memcpy (w.dst, w.src, (size_t) w.inner * sizeof (float));
    return;
  }

  int64_t rows = 1;
  for (int k = 0; k < w.cut; k++)
    rows *= w.count[k];
  /* A strided slice of feature maps (pass-early-stride.c) moves
   * megabytes: the threads share its rows. */
  hy_cpu_parallel_for (ctx, rows, hy_cpu_grain (w.count[w.cut] * w.inner),
      slice_rows, &w);
}

/* ---- slice_like --------------------------------------------------------- */

/* Every cut starts at 0 and the output's shape already says where each
 * one ends: that is a slice with begin 0 and end = the output's dims. */
void
hy_cpu_slice_like (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_shape *o = &out[0]->shape;
  hy_slice_params s = { .op = HY_OP_SLICE, .n = o->ndim };
  for (int i = 0; i < o->ndim; i++)
    s.end[i] = o->dims[i];
  const hy_tensor *data[1] = { in[0] };
  hy_cpu_slice (ctx, &s, data, 1, out, n_out);
}

/* ---- slice_axis --------------------------------------------------------- */

void
hy_cpu_slice_axis (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_slice_axis_params *p = params;
  const hy_shape *s = &in[0]->shape;
  if (hy_shape_numel (&out[0]->shape) == 0)
    return;
  int axis = normalize_axis (p->axis, s->ndim);
  int64_t len = s->dims[axis], begin, end;
  hy_slice_axis_bounds (p, len, &begin, &end);
  int64_t outer = dims_product (s, 0, axis);
  int64_t inner = dims_product (s, axis + 1, s->ndim);
  int64_t run = (end - begin) * inner;
  const float *src = in[0]->data + begin * inner;
  float *dst = out[0]->data;
  for (int64_t o = 0; o < outer; o++)
    memcpy (dst + o * run, src + o * len * inner,
        (size_t) run * sizeof (float));
}

/* ---- Concat ------------------------------------------------------------- */

/* The output's elements [begin, end): a run of whole or partial blocks,
 * `outer` times one block per input in turn. */
typedef struct concat_job {
  const hy_tensor *const *in;
  int n_in;
  int axis;
  int64_t inner, out_block;
  float *dst;
} concat_job;

static void
concat_range (void *arg, int64_t begin, int64_t end, int thread)
{
  const concat_job *j = arg;
  int64_t o = begin / j->out_block, pos = begin % j->out_block;
  /* The input whose block holds `pos`, and where in it. */
  int k = 0;
  int64_t block = j->in[0]->shape.dims[j->axis] * j->inner;
  while (pos >= block) {
    pos -= block;
    block = j->in[++k]->shape.dims[j->axis] * j->inner;
  }
  for (int64_t e = begin; e < end;) {
    const int64_t len = end - e < block - pos ? end - e : block - pos;
    memcpy (j->dst + e, j->in[k]->data + o * block + pos,
        (size_t) len * sizeof (float));
    e += len;
    pos = 0;
    if (++k == j->n_in) {
      k = 0;
      o++;
    }
    block = j->in[k]->shape.dims[j->axis] * j->inner;
  }
}

void
hy_cpu_concat (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_concat_params *p = params;
  const hy_shape *os = &out[0]->shape;
  const int64_t numel = hy_shape_numel (os);
  if (numel == 0)
    return;
  int axis = normalize_axis (p->dim, os->ndim);
  int64_t inner = dims_product (os, axis + 1, os->ndim);
  const concat_job j = {
    in, n_in, axis, inner, os->dims[axis] * inner, out[0]->data,
  };
  hy_cpu_parallel_for (ctx, numel, HY_CPU_MIN_THREAD_FLOATS, concat_range,
      (void *) &j);
}

/* ---- SliceChannel ------------------------------------------------------- */

void
hy_cpu_split (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_split_params *p = params;
  const hy_shape *s = &in[0]->shape;
  if (hy_shape_numel (s) == 0)
    return;
  int axis = normalize_axis (p->axis, s->ndim);
  int64_t outer = dims_product (s, 0, axis);
  int64_t inner = dims_product (s, axis + 1, s->ndim);
  int64_t in_block = s->dims[axis] * inner;
  int64_t part = in_block / n_out;
  for (int j = 0; j < n_out; j++) {
    const float *src = in[0]->data + j * part;
    float *dst = out[j]->data;
    for (int64_t o = 0; o < outer; o++)
      memcpy (dst + o * part, src + o * in_block,
          (size_t) part * sizeof (float));
  }
}
