/*
 * quantize.c — CPU kernels of _contrib_quantize_v2 and _contrib_dequantize
 * as MXNet 1.9.1's oneDNN build computes them (its mkldnn_quantize_v2 and
 * mkldnn_dequantize): one scale for the tensor, applied by a oneDNN
 * reorder, which rounds to nearest even and saturates.
 */
#include <math.h>

#include "kernels/cpu/cpu-features.h"
#include "kernels/cpu/cpu-kernel.h"
#ifdef HY_HAVE_DNNL
#include "kernels/cpu/quantized/conv-dnnl-int8.h"
#include "kernels/cpu/quantized/quantize-bytes.h"
#endif
#include "kernels/cpu/quantized/quantized-common.h"
#include "kernels/params/quantized.h"

void hy_cpu_quantize_v2 (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_dequantize (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_quantize_v2_bytes (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* x · scale rounded to even and saturated (hy_q_store's steps, written
 * so that gcc vectorises them: rintf is one vector round on the clones'
 * targets), a NaN stored as nan_as, on the pool's threads.
 *
 * Why: MobileNetV3's hard swish and squeeze-excitation quantize every
 * hard sigmoid's output, 29 of these on 112×112 to 1×1 maps, and the
 * scalar loop called rintf per element on one thread.  With
 * elemwise-mul.c's loops likewise, the calls of MobileNetV3-Large's
 * batch-1 forward that are not convolutions took 6.9-8.9 ms of CPU time
 * before and 4.2-4.5 after, the forward 20.6-23.7 and 18.1-18.6
 * (bench --profile -t 2 -n 40, alternated 3 times, Intel Xeon, 2 vCPUs
 * loaded by other builds). */
typedef struct quantize_job {
  const float *x;
  float *q;
  float scale, lo, hi, nan_as;
} quantize_job;

HY_CPU_VECTOR_CLONES static void
quantize_span (const float *x, float *q, int64_t n, float scale, float lo,
    float hi, float nan_as)
{
  for (int64_t i = 0; i < n; i++) {
    const float v = x[i] * scale;
    float r = rintf (v);
    r = r < lo ? lo : r > hi ? hi : r;
    q[i] = v != v ? nan_as : r;
  }
}

static void
quantize_range (void *arg, int64_t begin, int64_t end, int thread)
{
  const quantize_job *j = arg;
  quantize_span (j->x + begin, j->q + begin, end - begin, j->scale, j->lo,
      j->hi, j->nan_as);
}

/* The scale, the saturation and the NaN's value of one forward, its range
 * written into out[1] and out[2] (shared by both outputs' layouts). */
static quantize_job
quantize_setup (const hy_quantize_params *p, const float *x, int64_t n,
    hy_tensor *const *out)
{
  float lo = p->min_calib, hi = p->max_calib;
  if (!p->calibrated) {
    /* MXNet finds the data's own range on every call then */
    lo = hi = n > 0 ? x[0] : 0.0f;
    for (int64_t i = 1; i < n; i++) {
      lo = fminf (lo, x[i]);
      hi = fmaxf (hi, x[i]);
    }
  }
  float range;
  if (p->out_uint8) {
    /* uint8 covers [0, max]: what lies below 0 saturates to 0 */
    range = fmaxf (0.0f, hi);
    out[1]->data[0] = 0.0f;
    out[2]->data[0] = range;
  } else {
    range = fmaxf (fabsf (lo), fabsf (hi));
    out[1]->data[0] = -range;
    out[2]->data[0] = range;
  }
  /* Not hy_q_scale: MXNet's quantize_v2 divides by the range itself, so
   * a range of [0, 0] (a layer dead on the calibration images) gives an
   * infinite scale, and 0 · inf a NaN, which its reorder stores as 127
   * in int8 and as 0 in uint8 (measured: the int8_dead fixtures).  The
   * layers after it multiply their data by 0 then (hy_q_scale). */
  quantize_job j = {
    .x = x,
    .scale = (p->out_uint8 ? HY_UINT8_RANGE : HY_INT8_RANGE) / range,
    .lo = p->out_uint8 ? 0.0f : -128.0f,
    .hi = p->out_uint8 ? 255.0f : 127.0f,
    .nan_as = p->out_uint8 ? 0.0f : 127.0f,
  };
  return j;
}

void
hy_cpu_quantize_v2 (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  int64_t n = hy_shape_numel (&in[0]->shape);
  quantize_job j = quantize_setup (params, in[0]->data, n, out);
  j.q = out[0]->data;
  hy_cpu_parallel_for (ctx, n, HY_CPU_MIN_THREAD_FLOATS, quantize_range, &j);
}

/* ---- the output held as bytes, NHWC ---------------------------------------
 * Where every reader of the output is one of oneDNN's int8 convolutions
 * (conv-dnnl-int8.h), the plan holds it as the bytes they read: the
 * convolution then has no planes to lay out as bytes first, and a frame
 * converted straight to these bytes (hybrid.h, hy_input_quantization)
 * skips this call altogether. */

/* Pixels per item: 64 pixels of every channel stay in L1. */
#define BYTES_PIXEL_BLOCK 64

typedef struct quantize_bytes_job {
  quantize_job q;
  void *bytes;
  int64_t C, hw, blocks;
  bool u8;
} quantize_bytes_job;

/* Items: (image, block of pixels); each channel's run quantized through a
 * float row in L1, then written at a stride of C. */
static void
quantize_bytes_range (void *arg, int64_t begin, int64_t end, int thread)
{
  const quantize_bytes_job *b = arg;
  float row[BYTES_PIXEL_BLOCK];
  for (int64_t item = begin; item < end; item++) {
    const int64_t n = item / b->blocks;
    const int64_t i0 = item % b->blocks * BYTES_PIXEL_BLOCK;
    const int64_t len = MIN (i0 + BYTES_PIXEL_BLOCK, b->hw) - i0;
    const int64_t at = (n * b->hw + i0) * b->C;
    for (int64_t ch = 0; ch < b->C; ch++) {
      quantize_span (b->q.x + (n * b->C + ch) * b->hw + i0, row, len,
          b->q.scale, b->q.lo, b->q.hi, b->q.nan_as);
      if (b->u8) {
        uint8_t *d = (uint8_t *) b->bytes + at + ch;
        for (int64_t i = 0; i < len; i++)
          d[i * b->C] = (uint8_t) row[i];
      } else {
        int8_t *d = (int8_t *) b->bytes + at + ch;
        for (int64_t i = 0; i < len; i++)
          d[i * b->C] = (int8_t) row[i];
      }
    }
  }
}

void
hy_cpu_quantize_v2_bytes (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_quantize_params *p = params;
  const hy_shape *s = &in[0]->shape;
  quantize_bytes_job b = {
    .q = quantize_setup (p, in[0]->data, hy_shape_numel (s), out),
    .bytes = out[0]->data,
    .C = s->dims[1],
    .hw = s->dims[2] * s->dims[3],
    .u8 = p->out_uint8,
  };
  b.blocks = (b.hw + BYTES_PIXEL_BLOCK - 1) / BYTES_PIXEL_BLOCK;
  hy_cpu_parallel_for (ctx, s->dims[0] * b.blocks,
      hy_cpu_grain (BYTES_PIXEL_BLOCK * b.C), quantize_bytes_range, &b);
}

#ifdef HY_HAVE_DNNL
/* An output of 4-D data whose readers all take bytes (the plan asks them,
 * plan-segment.c), when int8 values may be held as bytes at all. */
size_t
hy_quantize_bytes_output (const hy_call_shape *call)
{
  if (call->op != HY_OP_QUANTIZE_V2 || !hy_int8_bytes_on () || !call->in0
      || call->in0->ndim != 4)
    return 0;
  return (size_t) hy_shape_numel (call->out0);
}

gboolean
hy_quantize_bytes_prepare_call (hy_call *call, GError **error)
{
  if (call->op != HY_OP_QUANTIZE_V2 || !(call->private_outputs & 1u))
    return TRUE;
  if (call->in[0]->shape.ndim != 4) {
    g_set_error (error, HY_ERROR, HY_ERROR_BACKEND, "quantize_v2: only "
        "4-D data is written as bytes");
    return FALSE;
  }
  call->fn = (hy_kernel_ptr) hy_cpu_quantize_v2_bytes;
  return TRUE;
}
#endif

void
hy_cpu_dequantize (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_dequantize_params *p = params;
  /* real units per step, range / 127.5 (or 255.5), as MXNet hands
   * oneDNN's reorder its output scale */
  float step = fmaxf (fabsf (in[1]->data[0]), fabsf (in[2]->data[0]))
      / (p->in_uint8 ? HY_UINT8_RANGE : HY_INT8_RANGE);
  const float *q = in[0]->data;
  float *y = out[0]->data;
  int64_t n = hy_shape_numel (&in[0]->shape);
  for (int64_t i = 0; i < n; i++)
    y[i] = q[i] * step;
}
