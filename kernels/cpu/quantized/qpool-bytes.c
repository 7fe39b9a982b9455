/*
 * qpool-bytes.c — quantized max pooling on values held as bytes NHWC
 * (qpool-bytes.h).
 *
 * Every window's largest integer, which is what the planes kernel
 * (pool.c, through quantized/pool.c) gives whatever the order: bytes hold
 * no NaN, and pool_takes admits no window without a pixel of the image
 * (the planes kernel's -FLT_MAX, which no byte holds).  Each output
 * pixel's channels are one run of bytes, so the max runs over them as one
 * vector loop; rows of outputs are shared over the pool's threads.
 *
 * Measured on ResNet-18 v1 int8 at batch 1 (bench -t 2 -n 40, old and
 * new library alternated three times, Intel Xeon, 2 vCPUs loaded by
 * other builds, CPU time per forward): 5.0-5.7 ms before, 3.3-3.9 after;
 * the first convolution went from 2.0 ms to 0.22 (oneDNN writing bytes
 * itself instead of our pass to float planes) and the pooling from 0.38
 * to 0.07.
 */
#include <math.h>
#include <string.h>

#include "hybrid.h"
#include "kernels/cpu/quantized/conv-dnnl-int8.h"
#include "kernels/cpu/quantized/qpool-bytes.h"
#include "kernels/params/quantized.h"

/* A pixel of a planes output is gathered on the stack first. */
#define MAX_CHANNELS 4096
/* Kernels and strides past this are left to the planes kernel. */
#define MAX_WINDOW 4096

typedef struct hy_qpool_bytes {
  hy_quantized_pool_params p;
  bool y_bytes;                 /* else float planes */
} hy_qpool_bytes;

void hy_cpu_quantized_max_pool_bytes (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef struct pool_job {
  const hy_qpool_bytes *q;
  const char *x;
  void *y;
  int64_t C, H, W, OH, OW;
} pool_job;

/* y[c] = max (y[c], x[c]) over a pixel's channels, signed or not. */
static void
max_into (char *y, const char *x, int64_t C, bool u8)
{
  if (u8) {
    uint8_t *restrict d = (uint8_t *) y;
    const uint8_t *restrict s = (const uint8_t *) x;
    for (int64_t c = 0; c < C; c++)
      d[c] = s[c] > d[c] ? s[c] : d[c];
  } else {
    int8_t *restrict d = (int8_t *) y;
    const int8_t *restrict s = (const int8_t *) x;
    for (int64_t c = 0; c < C; c++)
      d[c] = s[c] > d[c] ? s[c] : d[c];
  }
}

static void
to_planes (const pool_job *j, const char *acc, int64_t n, int64_t px)
{
  float *y = j->y;
  const int64_t hw = j->OH * j->OW;
  for (int64_t c = 0; c < j->C; c++)
    y[(n * j->C + c) * hw + px] = j->q->p.in_uint8
        ? (float) (uint8_t) acc[c] : (float) (int8_t) acc[c];
}

static void
max_pool_rows (void *arg, int64_t begin, int64_t end, int thread)
{
  const pool_job *j = arg;
  const hy_pool_params *p = &j->q->p.pool;
  const bool u8 = j->q->p.in_uint8;
  const int64_t C = j->C;
  char pixel[MAX_CHANNELS];
  for (int64_t row = begin; row < end; row++) {
    const int64_t n = row / j->OH, oh = row % j->OH;
    const int64_t hs = oh * p->stride[0] - p->pad[0];
    const int64_t h0 = MAX (hs, 0), h1 = MIN (hs + p->kernel[0], j->H);
    for (int64_t ow = 0; ow < j->OW; ow++) {
      const int64_t ws = ow * p->stride[1] - p->pad[1];
      const int64_t w0 = MAX (ws, 0), w1 = MIN (ws + p->kernel[1], j->W);
      const int64_t px = oh * j->OW + ow;
      char *acc = j->q->y_bytes ? (char *) j->y + (n * j->OH * j->OW + px) * C
          : pixel;
      memcpy (acc, j->x + ((n * j->H + h0) * j->W + w0) * C, (size_t) C);
      for (int64_t h = h0; h < h1; h++)
        for (int64_t w = w0; w < w1; w++)
          max_into (acc, j->x + ((n * j->H + h) * j->W + w) * C, C, u8);
      if (!j->q->y_bytes)
        to_planes (j, acc, n, px);
    }
  }
}

/* Channels per item of the global average: a run of 256 bytes per
 * pixel, summed into int32 lanes. */
#define AVG_CHANNELS 256

/* Items: (image, run of AVG_CHANNELS channels).  The planes kernel sums
 * the same integers in float, exactly (global_avg_takes bounds the sum
 * below 2^24), divides by the pixels and rounds to even (pool.c): so do
 * these, from an exact integer sum. */
static void
avg_pool_global (void *arg, int64_t begin, int64_t end, int thread)
{
  const pool_job *j = arg;
  const bool u8 = j->q->p.in_uint8;
  const int64_t hw = j->H * j->W, runs = (j->C + AVG_CHANNELS - 1)
      / AVG_CHANNELS;
  int32_t acc[AVG_CHANNELS];
  for (int64_t item = begin; item < end; item++) {
    const int64_t n = item / runs, c0 = item % runs * AVG_CHANNELS;
    const int64_t nc = MIN (AVG_CHANNELS, j->C - c0);
    memset (acc, 0, sizeof acc);
    for (int64_t px = 0; px < hw; px++) {
      const char *x = j->x + (n * hw + px) * j->C + c0;
      if (u8)
        for (int64_t c = 0; c < nc; c++)
          acc[c] += ((const uint8_t *) x)[c];
      else
        for (int64_t c = 0; c < nc; c++)
          acc[c] += ((const int8_t *) x)[c];
    }
    for (int64_t c = 0; c < nc; c++) {
      const float mean = rintf ((float) acc[c] / (float) hw);
      /* a 1×1 output: its bytes and its planes lie alike, [n][c] */
      const int64_t at = n * j->C + c0 + c;
      if (!j->q->y_bytes)
        ((float *) j->y)[at] = mean;
      else if (u8)
        ((uint8_t *) j->y)[at] = (uint8_t) mean;
      else
        ((int8_t *) j->y)[at] = (int8_t) mean;
    }
  }
}

void
hy_cpu_quantized_max_pool_bytes (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_qpool_bytes *q = params;
  const hy_shape *s = &in[0]->shape, *o = &out[0]->shape;
  if (q->p.pool.global_pool) {
    pool_job j = {
      .q = q, .x = (const char *) in[0]->data, .y = out[0]->data,
      .C = s->dims[1], .H = s->dims[2], .W = s->dims[3],
    };
    const int64_t runs = (j.C + AVG_CHANNELS - 1) / AVG_CHANNELS;
    hy_cpu_parallel_for (ctx, s->dims[0] * runs,
        hy_cpu_grain (j.H * j.W * AVG_CHANNELS / 4), avg_pool_global, &j);
    out[1]->data[0] = in[1]->data[0];
    out[2]->data[0] = in[2]->data[0];
    return;
  }
  pool_job j = {
    .q = q, .x = (const char *) in[0]->data, .y = out[0]->data,
    .C = s->dims[1], .H = s->dims[2], .W = s->dims[3],
    .OH = o->dims[2], .OW = o->dims[3],
  };
  /* a row's work: each input byte read about once per tap */
  hy_cpu_parallel_for (ctx, s->dims[0] * j.OH, hy_cpu_grain (j.OW * j.C
          * q->p.pool.kernel[0] * q->p.pool.kernel[1] / 4),
      max_pool_rows, &j);
  out[1]->data[0] = in[1]->data[0];
  out[2]->data[0] = in[2]->data[0];
}

/* A global average of 4-D data whose integer sums float holds exactly
 * (the planes kernel's sum in float is then exact too): fewer than 2^24 /
 * 255 pixels.  Why: MobileNetV3-Large's squeeze-excitation blocks and
 * head pool the values the convolutions and hard swishes before them
 * could then keep as bytes (docs/PERFORMANCE.md, "int8 update: the
 * squeeze-excitation's pooling on bytes"). */
static bool
global_avg_takes (const hy_pool_params *p, const hy_call_shape *call)
{
  return p->global_pool && p->pool_type == HY_POOL_AVG
      && call->out0->dims[2] == 1 && call->out0->dims[3] == 1
      && call->in0->dims[2] * call->in0->dims[3] < (1 << 24) / 255;
}

/* A 2-D max pooling whose every window holds a pixel of the image, or a
 * global average (global_avg_takes). */
static bool
pool_takes (const hy_call_shape *call)
{
  if (call->op != HY_OP_QUANTIZED_POOLING || !hy_int8_bytes_on ()
      || !call->in0 || call->in0->ndim != 4 || !call->out0
      || call->out0->ndim != 4 || call->in0->dims[1] > MAX_CHANNELS)
    return false;
  const hy_pool_params *p = &((const hy_quantized_pool_params *)
      call->params)->pool;
  if (global_avg_takes (p, call))
    return true;
  if (p->pool_type != HY_POOL_MAX || p->global_pool || p->n_spatial != 2)
    return false;
  for (int a = 0; a < 2; a++) {
    const int64_t in = call->in0->dims[2 + a], out = call->out0->dims[2 + a];
    /* the first window reaches past the padding, the last starts before
     * the image ends: none is empty.  The attributes are bounded first,
     * so that no product below can overflow whatever a file says. */
    if (p->stride[a] < 1 || p->stride[a] > MAX_WINDOW || p->pad[a] < 0
        || p->kernel[a] > MAX_WINDOW || p->kernel[a] <= p->pad[a]
        || out < 1 || out > in + MAX_WINDOW + 1
        || (out - 1) * p->stride[a] - p->pad[a] >= in)
      return false;
  }
  return true;
}

gboolean
hy_qpool_bytes_reads (const hy_call_shape *call, int input)
{
  return input == 0 && pool_takes (call);
}

size_t
hy_qpool_bytes_output (const hy_call_shape *call, gboolean in0_private)
{
  return in0_private && pool_takes (call)
      ? (size_t) hy_shape_numel (call->out0) : 0;
}

gboolean
hy_qpool_bytes_prepare_call (hy_call *call, GError **error)
{
  if (call->op != HY_OP_QUANTIZED_POOLING
      || !(call->private_inputs || call->private_outputs))
    return TRUE;
  const hy_quantized_pool_params *p = call->params;
  if (!(call->private_inputs & 1u) || call->in[0]->shape.ndim != 4
      || !(p->pool.pool_type == HY_POOL_MAX
          || (p->pool.pool_type == HY_POOL_AVG && p->pool.global_pool))) {
    g_set_error (error, HY_ERROR, HY_ERROR_BACKEND, "quantized pooling: "
        "only a 2-D max pooling or a global average of 4-D data reads "
        "int8 values held as bytes");
    return FALSE;
  }
  hy_qpool_bytes *q = g_new0 (hy_qpool_bytes, 1);
  q->p = *p;
  q->y_bytes = call->private_outputs & 1u;
  call->fn = (hy_kernel_ptr) hy_cpu_quantized_max_pool_bytes;
  call->params = q;
  return TRUE;
}

static gboolean
runs (const hy_call *call)
{
  return call->fn == (hy_kernel_ptr) hy_cpu_quantized_max_pool_bytes;
}

void
hy_qpool_bytes_release_call (hy_call *call)
{
  if (runs (call))
    g_free ((void *) call->params);
}

const char *
hy_qpool_bytes_kernel_name (const hy_call *call)
{
  return runs (call) ? "int8-bytes" : NULL;
}
