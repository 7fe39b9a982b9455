/*
 * quantize-dequantize.c — the CPU kernel of _hy_quantize_dequantize: an
 * ONNX QuantizeLinear and its DequantizeLinear in float, bit for bit what
 * ONNX Runtime's two kernels give for the pair (MLAS's quantize, then
 * (q - zero_point) · scale):
 *
 *   v = x / scale                 a division, as ONNX and MLAS write it
 *   v = clamp (v, qmin - zp, qmax - zp)
 *   y = round_half_even (v) · scale
 *
 * Clamping before rounding gives what rounding then saturating gives,
 * the bounds being integers; a NaN becomes qmin - zp as MLAS's MAXPS makes
 * it.  q - zp is never formed as an integer: what the steps hold is exact
 * in float, so nothing overflows whatever the attributes say.
 */
#include <math.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/params/quantized.h"

void hy_cpu_quantize_dequantize (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef struct qdq_job {
  const float *x, *scale, *zero_point;
  float *y;
  int64_t channels, inner;      /* per-axis: the axis' size, what follows */
  float qmin, qmax;
} qdq_job;

HY_CPU_VECTOR_CLONES static void
qdq_run (const float *x, float *y, int64_t n, float scale, float lo,
    float hi)
{
  for (int64_t i = 0; i < n; i++) {
    /* MAXPS and MINPS written out (a NaN takes lo), which the compiler
     * vectorises, where fmaxf's NaN rule keeps it scalar */
    float v = x[i] / scale;
    v = v > lo ? v : lo;
    v = v < hi ? v : hi;
    /* + 0: a value rounded to -0 comes out +0, as (q - zp) · scale does */
    y[i] = (nearbyintf (v) + 0.0f) * scale;
  }
}

static void
qdq_range (void *arg, int64_t begin, int64_t end, int thread)
{
  const qdq_job *j = arg;
  int64_t i = begin;
  while (i < end) {
    int64_t block = i / j->inner;
    int64_t c = block % j->channels;
    int64_t stop = MIN (end, (block + 1) * j->inner);
    float zp = j->zero_point[c];
    qdq_run (j->x + i, j->y + i, stop - i, j->scale[c], j->qmin - zp,
        j->qmax - zp);
    i = stop;
  }
}

void
hy_cpu_quantize_dequantize (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_quantize_dequantize_params *p = params;
  const hy_shape *s = &in[0]->shape;
  qdq_job j = {
    .x = in[0]->data, .scale = in[1]->data, .zero_point = in[2]->data,
    .y = out[0]->data, .channels = 1, .inner = MAX (hy_shape_numel (s), 1),
    .qmin = p->out_uint8 ? 0.0f : -128.0f,
    .qmax = p->out_uint8 ? 255.0f : 127.0f,
  };
  int64_t n = hy_shape_numel (&in[1]->shape);
  if (n > 1) {
    /* shape inference checked that the axis holds n indices */
    int axis = (int) (p->axis < 0 ? p->axis + s->ndim : p->axis);
    j.channels = n;
    j.inner = 1;
    for (int d = axis + 1; d < s->ndim; d++)
      j.inner *= s->dims[d];
    j.inner = MAX (j.inner, 1);
  }
  hy_cpu_parallel_for (ctx, hy_shape_numel (s), HY_CPU_MIN_THREAD_FLOATS,
      qdq_range, &j);
}
