/*
 * pool.c — Pooling (NCW, NCHW, NCDHW) on the CPU, as MXNet 1.9.1 computes
 * it:
 *  - max takes the largest value inside the image: padding never wins;
 *  - avg divides by the window clipped to the padded image [−pad, in+pad)
 *    (count_include_pad) or to the image itself;
 *  - sum adds, lp takes (Σ xᵖ)^(1/p) for p = 1, 2, 3 (no absolute value,
 *    as in MXNet).
 * 1-D and 2-D max/avg/sum pooling slide each kernel column along whole
 * output rows (vectorised, like a depthwise convolution); 3-D and lp run
 * window by window with 1-D/2-D as 3-D with leading unit axes.  Global
 * pooling is a plain reduction over each channel's map.  Planes (image,
 * channel) are independent and run in parallel.
 */
#include <float.h>
#include <math.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/params/nn.h"
#include "kernels/cpu/window.h"

void hy_cpu_pooling (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef struct pool_geom {
  int64_t planes;               /* batch · channels */
  int64_t in[3], out[3], k[3], stride[3], pad[3];
  int64_t in_size, out_size;
} pool_geom;

static void
pool_geom_init (pool_geom *g, const hy_pool_params *p, const hy_shape *x,
    const hy_shape *y)
{
  const int n = x->ndim - 2, lead = 3 - n;
  g->planes = x->dims[0] * x->dims[1];
  g->in_size = g->out_size = 1;
  for (int i = 0; i < 3; i++) {
    const int s = i - lead;
    g->in[i] = s >= 0 ? x->dims[2 + s] : 1;
    g->out[i] = s >= 0 ? y->dims[2 + s] : 1;
    g->k[i] = s >= 0 ? p->kernel[s] : 1;
    g->stride[i] = s >= 0 ? p->stride[s] : 1;
    g->pad[i] = s >= 0 ? p->pad[s] : 0;
    g->in_size *= g->in[i];
    g->out_size *= g->out[i];
  }
}

static inline float
pow_p (float x, int p)
{
  return p == 1 ? x : p == 2 ? x * x : x * x * x;
}

static inline float
root_p (float x, int p)
{
  return p == 1 ? x : p == 2 ? sqrtf (x) : cbrtf (x);
}

/* One pooling over planes [begin, end) (see pool_planes). */
typedef struct pool_job {
  const hy_pool_params *p;
  const pool_geom *g;
  const float *x;
  float *y;
  const float *col_count;       /* pool_rows only */
} pool_job;

/* Global pooling reduces each plane with LANES running results, lane l
 * over src[l], src[l + LANES], …, then combined lane by lane in order:
 * one vector operation per LANES values instead of a chain of n
 * dependent ones (a scalar sum of MobileNetV3's 14 × 14 planes waited on
 * the adder's latency: its squeeze-and-excite pooling layers ran at
 * 11 GB/s).  The max is the same whatever the order; the sum is not.
 * MXNet sums a plane in order, and on a 224 × 224 plane of 0-255 values
 * (tests/element's colors model) the lanes' rounding moved its sharp
 * head's scores by 3.7e-4, over the 1e-4 tolerance; so sums run in lanes
 * only on planes of up to LANE_SUM_MAX_VALUES (64 × 64), where each lane
 * adds a few hundred values and the two orders part in the last bits. */
#define LANES 16
#define LANE_SUM_MAX_VALUES 4096

HY_CPU_VECTOR_CLONES static float
plane_sum (const float *restrict src, int64_t n)
{
  float acc[LANES] = { 0 };
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int l = 0; l < LANES; l++)
      acc[l] += src[i + l];
  for (int l = 0; i < n; i++, l++)
    acc[l] += src[i];
  float r = acc[0];
  for (int l = 1; l < LANES; l++)
    r += acc[l];
  return r;
}

/* NaN never wins, as in MXNet (and -FLT_MAX for an empty plane). */
HY_CPU_VECTOR_CLONES static float
plane_max (const float *restrict src, int64_t n)
{
  float acc[LANES];
  for (int l = 0; l < LANES; l++)
    acc[l] = -FLT_MAX;
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int l = 0; l < LANES; l++)
      acc[l] = src[i + l] > acc[l] ? src[i + l] : acc[l];
  for (int l = 0; i < n; i++, l++)
    acc[l] = src[i] > acc[l] ? src[i] : acc[l];
  float r = acc[0];
  for (int l = 1; l < LANES; l++)
    r = acc[l] > r ? acc[l] : r;
  return r;
}

static void
pool_global (void *arg, int64_t begin, int64_t end, int thread)
{
  const pool_job *j = arg;
  const hy_pool_params *p = j->p;
  const float *x = j->x;
  float *y = j->y;
  const int64_t n = j->g->in_size;
  for (int64_t c = begin; c < end; c++) {
    const float *restrict src = x + c * n;
    float r;
    if (p->pool_type == HY_POOL_MAX) {
      r = plane_max (src, n);
    } else if (p->pool_type == HY_POOL_LP) {
      r = 0.0f;
      for (int64_t i = 0; i < n; i++)
        r += pow_p (src[i], p->p_value);
      r = root_p (r, p->p_value);
    } else {
      r = 0.0f;
      if (n <= LANE_SUM_MAX_VALUES)
        r = plane_sum (src, n);
      else
        for (int64_t i = 0; i < n; i++)
          r += src[i];
      if (p->pool_type == HY_POOL_AVG)
        r /= (float) n;
    }
    y[c] = r;
  }
}

/* One window along one axis: [*lo, *hi) inside the image, and its extent
 * within the padded image for averaging. */
static inline int64_t
window (const pool_geom *g, int axis, int64_t o, int64_t *lo, int64_t *hi)
{
  int64_t start = o * g->stride[axis] - g->pad[axis];
  int64_t end = start + g->k[axis];
  const int64_t padded_end = g->in[axis] + g->pad[axis];
  if (end > padded_end)
    end = padded_end;
  const int64_t padded_len = end - start;
  *lo = start > 0 ? start : 0;
  *hi = end < g->in[axis] ? end : g->in[axis];
  return padded_len;
}

static void
pool_windows (void *arg, int64_t begin, int64_t end, int thread)
{
  const pool_job *j = arg;
  const hy_pool_params *p = j->p;
  const pool_geom *g = j->g;
  const float *x = j->x;
  float *y = j->y;
  for (int64_t c = begin; c < end; c++) {
    const float *plane = x + c * g->in_size;
    float *dst = y + c * g->out_size;
    for (int64_t od = 0; od < g->out[0]; od++) {
      int64_t d0, d1;
      const int64_t nd = window (g, 0, od, &d0, &d1);
      for (int64_t oh = 0; oh < g->out[1]; oh++) {
        int64_t h0, h1;
        const int64_t nh = window (g, 1, oh, &h0, &h1);
        for (int64_t ow = 0; ow < g->out[2]; ow++, dst++) {
          int64_t w0, w1;
          const int64_t nw = window (g, 2, ow, &w0, &w1);
          float r = p->pool_type == HY_POOL_MAX ? -FLT_MAX : 0.0f;
          for (int64_t d = d0; d < d1; d++) {
            for (int64_t h = h0; h < h1; h++) {
              const float *row = plane + (d * g->in[1] + h) * g->in[2];
              switch (p->pool_type) {
                case HY_POOL_MAX:
                  for (int64_t w = w0; w < w1; w++)
                    r = row[w] > r ? row[w] : r;
                  break;
                case HY_POOL_LP:
                  for (int64_t w = w0; w < w1; w++)
                    r += pow_p (row[w], p->p_value);
                  break;
                default:
                  for (int64_t w = w0; w < w1; w++)
                    r += row[w];
                  break;
              }
            }
          }
          if (p->pool_type == HY_POOL_AVG) {
            const int64_t count = p->count_include_pad ? nd * nh * nw
                : (d1 - d0) * (h1 - h0) * (w1 - w0);
            /* A window wholly in the padding has nothing to average. */
            r = count > 0 ? r / (float) count : 0.0f;
          } else if (p->pool_type == HY_POOL_LP) {
            r = root_p (r, p->p_value);
          }
          *dst = r;
        }
      }
    }
  }
}

/* out[o] = max(out[o], src[o·stride]) — NaN never wins, as in MXNet. */
HY_CPU_VECTOR_CLONES static void
max_into (float *restrict out, const float *restrict src, int64_t n,
    int64_t stride)
{
  /* Constant strides let gcc vectorise the loads. */
  if (stride == 1) {
    for (int64_t o = 0; o < n; o++)
      out[o] = src[o] > out[o] ? src[o] : out[o];
  } else if (stride == 2) {
    for (int64_t o = 0; o < n; o++)
      out[o] = src[2 * o] > out[o] ? src[2 * o] : out[o];
  } else {
    for (int64_t o = 0; o < n; o++)
      out[o] = src[o * stride] > out[o] ? src[o * stride] : out[o];
  }
}

HY_CPU_VECTOR_CLONES static void
sum_into (float *restrict out, const float *restrict src, int64_t n,
    int64_t stride)
{
  if (stride == 1) {
    for (int64_t o = 0; o < n; o++)
      out[o] += src[o];
  } else if (stride == 2) {
    for (int64_t o = 0; o < n; o++)
      out[o] += src[2 * o];
  } else {
    for (int64_t o = 0; o < n; o++)
      out[o] += src[o * stride];
  }
}

/* The column parts of the averaging count (one per output column) for
 * pool_rows. */
static void
column_counts (const hy_pool_params *p, const pool_geom *g, float *col_count)
{
  for (int64_t o = 0; o < g->out[2]; o++) {
    int64_t w0, w1;
    const int64_t nw = window (g, 2, o, &w0, &w1);
    col_count[o] = (float) (p->count_include_pad ? nw : w1 - w0);
  }
}

/* 1-D/2-D max, avg and sum: each output row gathers its input rows one
 * kernel column at a time.  The averaging count factors into a row part
 * and a column part (column_counts). */
static void
pool_rows (void *arg, int64_t begin, int64_t end, int thread)
{
  const pool_job *j = arg;
  const hy_pool_params *p = j->p;
  const pool_geom *g = j->g;
  const float *x = j->x;
  float *y = j->y;
  const float *col_count = j->col_count;
  const int64_t ow = g->out[2], sw = g->stride[2], pw = g->pad[2];

  for (int64_t c = begin; c < end; c++) {
    const float *plane = x + c * g->in_size;
    for (int64_t oh = 0; oh < g->out[1]; oh++) {
      float *restrict orow = y + c * g->out_size + oh * ow;
      int64_t h0, h1;
      const int64_t nh = window (g, 1, oh, &h0, &h1);
      const float init = p->pool_type == HY_POOL_MAX ? -FLT_MAX : 0.0f;
      for (int64_t o = 0; o < ow; o++)
        orow[o] = init;
      for (int64_t h = h0; h < h1; h++) {
        const float *row = plane + h * g->in[2];
        for (int64_t kw = 0; kw < g->k[2]; kw++) {
          int64_t lo, hi;
          hy_window_valid_range (ow, sw, pw, kw, g->in[2], &lo, &hi);
          const float *src = row + lo * sw + kw - pw;
          if (p->pool_type == HY_POOL_MAX)
            max_into (orow + lo, src, hi - lo, sw);
          else
            sum_into (orow + lo, src, hi - lo, sw);
        }
      }
      if (p->pool_type == HY_POOL_AVG) {
        const float row_count =
            (float) (p->count_include_pad ? nh : h1 - h0);
        for (int64_t o = 0; o < ow; o++) {
          const float count = row_count * col_count[o];
          /* A window wholly in the padding has nothing to average. */
          orow[o] = count > 0 ? orow[o] / count : 0.0f;
        }
      }
    }
  }
}

void
hy_cpu_pooling (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_pool_params *p = params;
  pool_geom g;
  pool_job j = { p, &g, in[0]->data, out[0]->data, NULL };
  if (p->global_pool) {
    const hy_shape *x = &in[0]->shape;
    g.planes = x->dims[0] * x->dims[1];
    g.in_size = hy_shape_numel (x) / (g.planes > 0 ? g.planes : 1);
    hy_cpu_parallel_for (ctx, g.planes, hy_cpu_grain (g.in_size),
        pool_global, &j);
    return;
  }
  pool_geom_init (&g, p, &in[0]->shape, &out[0]->shape);
  /* A plane's work: every input read about once per kernel tap. */
  int64_t taps = 1;
  for (int i = 0; i < 3; i++)
    taps *= g.k[i];
  const int64_t grain = hy_cpu_grain (g.out_size * taps);
  /* The row path works on one depth slice: a depth padding (which adds
   * output slices wholly in the padding) takes the general one. */
  if (g.in[0] == 1 && g.k[0] == 1 && g.out[0] == 1
      && p->pool_type != HY_POOL_LP) {
    float *col_count = hy_cpu_workspace (ctx,
        (size_t) g.out[2] * sizeof (float));
    column_counts (p, &g, col_count);
    j.col_count = col_count;
    hy_cpu_parallel_for (ctx, g.planes, grain, pool_rows, &j);
  } else {
    hy_cpu_parallel_for (ctx, g.planes, grain, pool_windows, &j);
  }
}
