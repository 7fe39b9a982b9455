/*
 * qelementwise-bytes.c — quantize_v2, dequantize and quantized
 * elemwise_mul on values held as bytes NHWC (qelementwise-bytes.h).
 *
 * The arithmetic is the planes kernels' own (quantize.h,
 * elemwise-mul.h), element by element: the bytes hold the integers the
 * planes would, so the results are the same bits.  Where every operand
 * is bytes the loop is one flat pass; where a value in planes meets one
 * in bytes (quantize's float data, dequantize's float output, an
 * elemwise_mul operand some other reader keeps in planes), the pass goes
 * by blocks of pixels, each block's channels read or written at a stride
 * within an L1-sized block, as conv-dnnl-int8.c lays out its data.
 *
 * Measured on MobileNetV3-Large int8 at batch 1: see
 * hy_qelementwise_bytes_output; batch 1 only: see one_image.
 */
#include <string.h>

#include "hybrid.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/quantized/conv-dnnl-int8.h"
#include "kernels/cpu/quantized/elemwise-mul.h"
#include "kernels/cpu/quantized/qelementwise-bytes.h"
#include "kernels/cpu/quantized/quantize.h"
#include "kernels/params/quantized.h"

/* Pixels per block of a pass between layouts: 64 pixels × 960 channels
 * of bytes is 60 KiB, about L1. */
#define PIXEL_BLOCK 64

typedef struct hy_qelementwise_bytes {
  hy_op_id op;
  union {
    hy_quantize_params quantize;
    hy_dequantize_params dequantize;
    hy_quantized_elemwise_mul_params mul;
  } p;
  uint32_t in_bytes;            /* bit k: in[k] held as bytes NHWC */
  bool out_bytes;
} hy_qelementwise_bytes;

void hy_cpu_quantize_v2_bytes (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_dequantize_bytes (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_quantized_elemwise_mul_bytes (hy_cpu_ctx *ctx,
    const void *params, const hy_tensor *const *in, int n_in,
    hy_tensor *const *out, int n_out);

/* One pass over a 4-D value: items are (image, block of pixels). */
typedef struct bytes_job {
  const hy_qelementwise_bytes *q;
  const void *a, *b;
  void *y;
  int64_t C, hw, blocks;
  float scale;                  /* dequantize's step, elemwise_mul's */
  hy_quantize_steps steps;      /* quantize_v2's */
} bytes_job;

static bytes_job
job_for (const hy_qelementwise_bytes *q, const hy_tensor *x)
{
  const hy_shape *s = &x->shape;
  bytes_job j = { .q = q, .C = s->dims[1], .hw = s->dims[2] * s->dims[3] };
  j.blocks = (j.hw + PIXEL_BLOCK - 1) / PIXEL_BLOCK;
  return j;
}

/* The items of a pass by blocks on the pool's threads. */
static void
run_blocks (hy_cpu_ctx *ctx, const hy_tensor *x, bytes_job *j,
    hy_parallel_fn fn)
{
  hy_cpu_parallel_for (ctx, x->shape.dims[0] * j->blocks,
      hy_cpu_grain (PIXEL_BLOCK * j->C), fn, j);
}

/* Where element (n, ch, pixel i) lies in each layout. */
static inline int64_t
at_bytes (const bytes_job *j, int64_t n, int64_t ch, int64_t i)
{
  return (n * j->hw + i) * j->C + ch;
}

static inline int64_t
at_planes (const bytes_job *j, int64_t n, int64_t ch, int64_t i)
{
  return (n * j->C + ch) * j->hw + i;
}

/* ---- quantize_v2: float planes in, bytes out ---------------------------- */

/* A channel's run of pixels quantized into bytes (the low byte of the
 * integer: int8 or uint8 alike), in the vector clones. */
HY_CPU_VECTOR_CLONES static void
quantize_span (const float *x, uint8_t *q, int64_t n,
    const hy_quantize_steps *s)
{
  const hy_quantize_steps st = *s;
  for (int64_t i = 0; i < n; i++)
    q[i] = (uint8_t) (int32_t) hy_quantize_one (x[i], &st);
}

static void
quantize_blocks (void *arg, int64_t begin, int64_t end, int thread)
{
  const bytes_job *j = arg;
  const float *x = j->a;
  uint8_t *y = j->y;
  uint8_t run[PIXEL_BLOCK];
  for (int64_t item = begin; item < end; item++) {
    const int64_t n = item / j->blocks;
    const int64_t i0 = item % j->blocks * PIXEL_BLOCK;
    const int64_t i1 = MIN (i0 + PIXEL_BLOCK, j->hw);
    for (int64_t ch = 0; ch < j->C; ch++) {
      quantize_span (x + at_planes (j, n, ch, i0), run, i1 - i0, &j->steps);
      uint8_t *to = y + at_bytes (j, n, ch, i0);
      for (int64_t i = 0; i < i1 - i0; i++)
        to[i * j->C] = run[i];
    }
  }
}

void
hy_cpu_quantize_v2_bytes (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_qelementwise_bytes *q = params;
  bytes_job j = job_for (q, in[0]);
  j.a = in[0]->data;
  j.y = out[0]->data;
  j.steps = hy_quantize_v2_steps (&q->p.quantize, in[0]->data,
      hy_shape_numel (&in[0]->shape), out[1]->data, out[2]->data);
  run_blocks (ctx, in[0], &j, quantize_blocks);
}

/* ---- dequantize: bytes in, float planes out ----------------------------- */

/* A channel's run of pixels, gathered from the bytes, in real units. */
HY_CPU_VECTOR_CLONES static void
dequantize_span (const float *q, float *y, int64_t n, float step)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = q[i] * step;
}

static void
dequantize_blocks (void *arg, int64_t begin, int64_t end, int thread)
{
  const bytes_job *j = arg;
  const bool u8 = j->q->p.dequantize.in_uint8;
  float run[PIXEL_BLOCK];
  for (int64_t item = begin; item < end; item++) {
    const int64_t n = item / j->blocks;
    const int64_t i0 = item % j->blocks * PIXEL_BLOCK;
    const int64_t i1 = MIN (i0 + PIXEL_BLOCK, j->hw);
    for (int64_t ch = 0; ch < j->C; ch++) {
      const int64_t from = at_bytes (j, n, ch, i0);
      if (u8) {
        const uint8_t *x = (const uint8_t *) j->a + from;
        for (int64_t i = 0; i < i1 - i0; i++)
          run[i] = (float) x[i * j->C];
      } else {
        const int8_t *x = (const int8_t *) j->a + from;
        for (int64_t i = 0; i < i1 - i0; i++)
          run[i] = (float) x[i * j->C];
      }
      dequantize_span (run, (float *) j->y + at_planes (j, n, ch, i0),
          i1 - i0, j->scale);
    }
  }
}

void
hy_cpu_dequantize_bytes (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_qelementwise_bytes *q = params;
  bytes_job j = job_for (q, in[0]);
  j.a = in[0]->data;
  j.y = out[0]->data;
  j.scale = hy_dequantize_step (&q->p.dequantize, in[1]->data[0],
      in[2]->data[0]);
  run_blocks (ctx, in[0], &j, dequantize_blocks);
}

/* ---- quantized elemwise_mul: int8 operands, each bytes or planes -------- */

/* Every operand and the output bytes: one flat pass. */
HY_CPU_VECTOR_CLONES static void
mul_bytes_span (const int8_t *a, const int8_t *b, int8_t *y, int64_t n,
    float scale)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = hy_qmul_cast_to_int8 ((float) a[i] * (float) b[i] * scale);
}

static void
mul_flat (void *arg, int64_t begin, int64_t end, int thread)
{
  const bytes_job *j = arg;
  mul_bytes_span ((const int8_t *) j->a + begin,
      (const int8_t *) j->b + begin, (int8_t *) j->y + begin, end - begin,
      j->scale);
}

static inline float
mul_operand (const bytes_job *j, const void *x, bool bytes, int64_t n,
    int64_t ch, int64_t i)
{
  return bytes ? (float) ((const int8_t *) x)[at_bytes (j, n, ch, i)]
      : ((const float *) x)[at_planes (j, n, ch, i)];
}

/* Operands and output in either layout, block by block. */
static void
mul_blocks (void *arg, int64_t begin, int64_t end, int thread)
{
  const bytes_job *j = arg;
  const hy_qelementwise_bytes *q = j->q;
  const bool a_bytes = q->in_bytes & 1u, b_bytes = q->in_bytes & 2u;
  const bool float_output = q->p.mul.float_output;
  for (int64_t item = begin; item < end; item++) {
    const int64_t n = item / j->blocks;
    const int64_t i0 = item % j->blocks * PIXEL_BLOCK;
    const int64_t i1 = MIN (i0 + PIXEL_BLOCK, j->hw);
    for (int64_t ch = 0; ch < j->C; ch++)
      for (int64_t i = i0; i < i1; i++) {
        const float v = mul_operand (j, j->a, a_bytes, n, ch, i)
            * mul_operand (j, j->b, b_bytes, n, ch, i) * j->scale;
        if (float_output)
          ((float *) j->y)[at_planes (j, n, ch, i)] = v;
        else if (q->out_bytes)
          ((int8_t *) j->y)[at_bytes (j, n, ch, i)] =
              hy_qmul_cast_to_int8 (v);
        else
          ((float *) j->y)[at_planes (j, n, ch, i)] =
              hy_qmul_cast_to_int8 (v);
      }
  }
}

void
hy_cpu_quantized_elemwise_mul_bytes (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_qelementwise_bytes *q = params;
  const hy_quantized_elemwise_mul_params *p = &q->p.mul;
  bytes_job j = job_for (q, in[0]);
  j.a = in[0]->data;
  j.b = in[1]->data;
  j.y = out[0]->data;
  /* MXNet multiplies in int32; the product of two int8 values is exact in
   * float too (elemwise-mul.c) */
  j.scale = hy_qmul_scale (p, in);
  if (q->in_bytes == 3u && q->out_bytes)
    hy_cpu_parallel_for (ctx, hy_shape_numel (&in[0]->shape),
        4 * HY_CPU_MIN_THREAD_FLOATS, mul_flat, &j);
  else
    run_blocks (ctx, in[0], &j, mul_blocks);
  if (p->float_output)
    return;
  out[1]->data[0] = p->min_calib;
  out[2]->data[0] = p->max_calib;
}

/* ---- the plan's hooks --------------------------------------------------- */

/* A 4-D value of one image.  A batch is left in planes: its convolutions
 * run on oneDNN's OpenMP team (conv-dnnl-int8.c, run_fused), and with
 * these calls on our pool between them the team's workers slept and
 * woke late, or spun against our pool's: MobileNetV3-Large batch 8, CPU
 * time 255-455 ms a forward against 106-120 without them (Intel Xeon,
 * 2 vCPUs, load 9-10). */
static bool
one_image (const hy_shape *s)
{
  return s && s->ndim == 4 && s->dims[0] == 1;
}

/* Why: MobileNetV3-Large int8 at batch 1 then holds 105 values as bytes
 * and its arena halves (2.30 -> 1.15 MiB); its hard swishes'
 * convolutions write their bytes through oneDNN (the first: 0.71 ->
 * 0.11 ms, bench --profile).  CPU time per forward, bench -t 2 -n 60,
 * old and new alternated 4 times on an Intel Xeon, 2 vCPUs at load
 * 9-10 (with the batch-1 primitives made for one thread,
 * conv-dnnl-int8.c): 11.1-18.8 ms before, 11.7-13.8 after; on one
 * thread 103-169 before, 9.1-9.3 after (docs/PERFORMANCE.md, "int8
 * update: no OpenMP team at batch 1; the hard swishes in bytes"). */
size_t
hy_qelementwise_bytes_output (const hy_call_shape *call)
{
  if (!hy_int8_bytes_on () || !call->in0 || call->in0->ndim != 4)
    return 0;
  /* quantize_v2 at any batch: its bytes are kept only where every reader
   * takes them, at a batch oneDNN's convolutions alone (a model's input
   * quantize, which a caller may then write itself: hybrid.h,
   * hy_input_quantization), and it ran on our pool before them anyway */
  if (call->op == HY_OP_QUANTIZE_V2)
    return (size_t) hy_shape_numel (call->out0);
  if (!one_image (call->in0) || !one_image (call->out0))
    return 0;
  switch (call->op) {
    case HY_OP_QUANTIZED_ELEMWISE_MUL:
      return ((const hy_quantized_elemwise_mul_params *) call->params)
          ->float_output ? 0 : (size_t) hy_shape_numel (call->out0);
    default:
      return 0;
  }
}

gboolean
hy_qelementwise_bytes_reads (const hy_call_shape *call, int input)
{
  if (!hy_int8_bytes_on () || !one_image (call->in0))
    return FALSE;
  switch (call->op) {
    case HY_OP_DEQUANTIZE:
      return input == 0;
    case HY_OP_QUANTIZED_ELEMWISE_MUL:
      /* the operands have one shape (shape inference checks) */
      return input == 0 || input == 1;
    default:
      return FALSE;
  }
}

static bool
takes (hy_op_id op)
{
  return op == HY_OP_QUANTIZE_V2 || op == HY_OP_DEQUANTIZE
      || op == HY_OP_QUANTIZED_ELEMWISE_MUL;
}

gboolean
hy_qelementwise_bytes_prepare_call (hy_call *call, GError **error)
{
  if (!takes (call->op) || !(call->private_inputs || call->private_outputs))
    return TRUE;
  const uint32_t readable = call->op == HY_OP_DEQUANTIZE ? 1u
      : call->op == HY_OP_QUANTIZED_ELEMWISE_MUL ? 3u : 0u;
  const bool writable = call->op == HY_OP_QUANTIZE_V2
      || (call->op == HY_OP_QUANTIZED_ELEMWISE_MUL
      && !((const hy_quantized_elemwise_mul_params *) call->params)
      ->float_output);
  if ((call->private_inputs & ~readable)
      || (call->private_outputs & ~(writable ? 1u : 0u))
      || call->in[0]->shape.ndim != 4) {
    g_set_error (error, HY_ERROR, HY_ERROR_BACKEND, "%s: int8 values held "
        "as bytes are read only as dequantize's data or elemwise_mul's "
        "operands, and written only by quantize_v2 and a calibrated "
        "elemwise_mul, all of 4-D values", call->op == HY_OP_QUANTIZE_V2
        ? "_contrib_quantize_v2" : call->op == HY_OP_DEQUANTIZE
        ? "_contrib_dequantize" : "_contrib_quantized_elemwise_mul");
    return FALSE;
  }
  hy_qelementwise_bytes *q = g_new0 (hy_qelementwise_bytes, 1);
  q->op = call->op;
  q->in_bytes = call->private_inputs;
  q->out_bytes = call->private_outputs & 1u;
  switch (call->op) {
    case HY_OP_QUANTIZE_V2:
      q->p.quantize = *(const hy_quantize_params *) call->params;
      call->fn = (hy_kernel_ptr) hy_cpu_quantize_v2_bytes;
      break;
    case HY_OP_DEQUANTIZE:
      q->p.dequantize = *(const hy_dequantize_params *) call->params;
      call->fn = (hy_kernel_ptr) hy_cpu_dequantize_bytes;
      break;
    default:
      q->p.mul = *(const hy_quantized_elemwise_mul_params *) call->params;
      call->fn = (hy_kernel_ptr) hy_cpu_quantized_elemwise_mul_bytes;
      break;
  }
  call->params = q;
  return TRUE;
}

static gboolean
runs (const hy_call *call)
{
  return call->fn == (hy_kernel_ptr) hy_cpu_quantize_v2_bytes
      || call->fn == (hy_kernel_ptr) hy_cpu_dequantize_bytes
      || call->fn == (hy_kernel_ptr) hy_cpu_quantized_elemwise_mul_bytes;
}

void
hy_qelementwise_bytes_release_call (hy_call *call)
{
  if (runs (call))
    g_free ((void *) call->params);
}

const char *
hy_qelementwise_bytes_kernel_name (const hy_call *call)
{
  return runs (call) ? "int8-bytes" : NULL;
}
