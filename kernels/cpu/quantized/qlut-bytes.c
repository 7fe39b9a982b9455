/*
 * qlut-bytes.c — dequantize, float ops, quantize_v2 on bytes as one
 * look-up (qlut-bytes.h).
 *
 * The table is the chain itself run on the 256 possible bytes: their
 * dequantized values as dequantize's bytes kernel makes them
 * (qelementwise-bytes.c: the integer as a float, times
 * hy_dequantize_step), then each link's own kernel on those 256 floats,
 * then quantize_v2's steps (quantize.h) as its bytes kernel stores them.
 * Each link computes every element by itself in one correctly rounded
 * operation (hy_qlut_bytes_link), so an element gives the same bits
 * among 256 as among the value's thousands: the bytes looked up are the
 * bytes the unfused chain writes.  The table depends on the dequantize's
 * range only (quantize_v2 is calibrated), an input of the call read
 * every forward: it is made again only when that range changes, into
 * the call's own buffers, so a forward allocates nothing.
 */
#include <string.h>

#include "hybrid.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/cpu/quantized/qlut-bytes.h"
#include "kernels/cpu/quantized/quantize.h"
#include "kernels/params/elementwise.h"
#include "kernels/params/quantized.h"

/* A link's kernel, as the plan prepared it, and its params. */
typedef struct qlut_link {
  hy_kernel_ptr fn;
  const void *params;
} qlut_link;

typedef struct hy_qlut_bytes {
  hy_dequantize_params dequantize;
  hy_quantize_params quantize;
  int n_links;
  qlut_link links[HY_QLUT_MAX_LINKS];
  /* the range the table was made for (bits: a NaN range is one too) */
  bool made;
  uint32_t min_bits, max_bits;
  uint8_t table[256];
  /* the links' operands: 256 floats each */
  float a[256], b[256];
  hy_tensor ta, tb;
} hy_qlut_bytes;

typedef void (*cpu_kernel) (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

void hy_cpu_qlut_bytes (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

gboolean
hy_qlut_bytes_link (const hy_call_shape *link)
{
  if (!link->in0 || !link->out0 || !hy_shape_equal (link->in0, link->out0))
    return FALSE;
  switch (link->op) {
    case HY_OP_PLUS_SCALAR:
    case HY_OP_MINUS_SCALAR:
    case HY_OP_RMINUS_SCALAR:
    case HY_OP_MUL_SCALAR:
    case HY_OP_DIV_SCALAR:
    case HY_OP_RDIV_SCALAR:
    case HY_OP_MAXIMUM_SCALAR:
    case HY_OP_MINIMUM_SCALAR:{
      /* on float data: integer data rounds after the operation */
      const hy_scalar_params *p = link->params;
      return p->int_dtype == HY_DTYPE_FLOAT32;
    }
    case HY_OP_CLIP:
      return ((const hy_clip_params *) link->params)->int_dtype
          == HY_DTYPE_FLOAT32;
    case HY_OP_RELU:
      return ((const hy_unary_params *) link->params)->int_dtype
          == HY_DTYPE_FLOAT32;
    default:
      return FALSE;
  }
}

/* The table for dequantize's range [min, max]; writes the quantize_v2's
 * range outputs as a side effect of its steps (written every forward by
 * the caller anyway). */
static void
make_table (hy_cpu_ctx *ctx, hy_qlut_bytes *q, float min, float max,
    float *out_min, float *out_max)
{
  const float step = hy_dequantize_step (&q->dequantize, min, max);
  for (int k = 0; k < 256; k++) {
    const float code = q->dequantize.in_uint8 ? (float) (uint8_t) k
        : (float) (int8_t) (uint8_t) k;
    q->a[k] = code * step;
  }
  hy_tensor *x = &q->ta, *y = &q->tb;
  for (int l = 0; l < q->n_links; l++) {
    const hy_tensor *const in[] = { x };
    hy_tensor *const out[] = { y };
    ((cpu_kernel) q->links[l].fn) (ctx, q->links[l].params, in, 1, out, 1);
    hy_tensor *t = x;
    x = y;
    y = t;
  }
  const hy_quantize_steps s = hy_quantize_v2_steps (&q->quantize, x->data,
      256, out_min, out_max);
  for (int k = 0; k < 256; k++)
    q->table[k] = (uint8_t) (int32_t) hy_quantize_one (x->data[k], &s);
}

typedef struct lut_job {
  const uint8_t *table, *x;
  uint8_t *y;
} lut_job;

static void
look_up (void *arg, int64_t begin, int64_t end, int thread)
{
  const lut_job *j = arg;
  for (int64_t i = begin; i < end; i++)
    j->y[i] = j->table[j->x[i]];
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>

#define VBMI __attribute__ ((target ("avx512f,avx512bw,avx512vbmi")))

/* 64 bytes a step: vpermi2b picks each byte's entry among 128 by its low
 * seven bits from the table's two halves, the high bit chooses the half.
 * The same entries as look_up, so the same bytes, some 20 times faster
 * than its one load per byte (the table lookups were most of the chains'
 * time left). */
VBMI static void
look_up_vbmi (void *arg, int64_t begin, int64_t end, int thread)
{
  const lut_job *j = arg;
  const __m512i t0 = _mm512_loadu_si512 (j->table);
  const __m512i t1 = _mm512_loadu_si512 (j->table + 64);
  const __m512i t2 = _mm512_loadu_si512 (j->table + 128);
  const __m512i t3 = _mm512_loadu_si512 (j->table + 192);
  int64_t i = begin;
  for (; i + 64 <= end; i += 64) {
    const __m512i x = _mm512_loadu_si512 (j->x + i);
    const __m512i lo = _mm512_permutex2var_epi8 (t0, x, t1);
    const __m512i hi = _mm512_permutex2var_epi8 (t2, x, t3);
    const __mmask64 high = _mm512_movepi8_mask (x);
    _mm512_storeu_si512 (j->y + i, _mm512_mask_blend_epi8 (high, lo, hi));
  }
  for (; i < end; i++)
    j->y[i] = j->table[j->x[i]];
}
#define HAVE_VBMI 1
#endif

static uint32_t
bits_of (float v)
{
  uint32_t u;
  memcpy (&u, &v, sizeof u);
  return u;
}

void
hy_cpu_qlut_bytes (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  /* the call's own state: one forward at a time runs a plan's calls */
  hy_qlut_bytes *q = (hy_qlut_bytes *) params;
  const float min = in[1]->data[0], max = in[2]->data[0];
  if (!q->made || bits_of (min) != q->min_bits
      || bits_of (max) != q->max_bits) {
    make_table (ctx, q, min, max, out[1]->data, out[2]->data);
    q->made = true;
    q->min_bits = bits_of (min);
    q->max_bits = bits_of (max);
  }
  /* quantize_v2's range, calibrated: the same two floats every forward */
  (void) hy_quantize_v2_steps (&q->quantize, NULL, 0, out[1]->data,
      out[2]->data);
  lut_job j = {
    .table = q->table, .x = (const uint8_t *) in[0]->data,
    .y = (uint8_t *) out[0]->data,
  };
  hy_parallel_fn fn = look_up;
#ifdef HAVE_VBMI
  if (hy_cpu_features_get ()->avx512vbmi)
    fn = look_up_vbmi;
#endif
  hy_cpu_parallel_for (ctx, hy_shape_numel (&in[0]->shape),
      4 * HY_CPU_MIN_THREAD_FLOATS, fn, &j);
}

gboolean
hy_qlut_bytes_fuse (hy_cpu_ctx *ctx, const hy_call *calls, int n,
    const void *const *node_params, hy_call *fused)
{
  if (n < 2 || n - 2 > HY_QLUT_MAX_LINKS
      || calls[0].op != HY_OP_DEQUANTIZE || calls[0].private_inputs != 1u
      || calls[0].n_in != 3 || calls[n - 1].op != HY_OP_QUANTIZE_V2
      || calls[n - 1].private_outputs != 1u || calls[n - 1].n_out != 3
      || !((const hy_quantize_params *) node_params[n - 1])->calibrated
      || !hy_shape_equal (&calls[0].in[0]->shape,
          &calls[n - 1].out[0]->shape))
    return FALSE;
  for (int l = 1; l < n - 1; l++) {
    const hy_call_shape s = {
      calls[l].op, calls[l].params, &calls[l].in[0]->shape,
      &calls[l].out[0]->shape, FALSE, NULL,
    };
    if (!hy_qlut_bytes_link (&s) || calls[l].private_inputs
        || calls[l].private_outputs || calls[l].n_in != 1
        || calls[l].n_out != 1)
      return FALSE;
  }
  hy_qlut_bytes *q = g_new0 (hy_qlut_bytes, 1);
  q->dequantize = *(const hy_dequantize_params *) node_params[0];
  q->quantize = *(const hy_quantize_params *) node_params[n - 1];
  q->n_links = n - 2;
  for (int l = 0; l < q->n_links; l++)
    q->links[l] = (qlut_link) { calls[l + 1].fn, calls[l + 1].params };
  q->ta = (hy_tensor) { .shape = { .ndim = 1, .dims = { 256 } },
    .data = q->a };
  q->tb = (hy_tensor) { .shape = { .ndim = 1, .dims = { 256 } },
    .data = q->b };
  fused->fn = (hy_kernel_ptr) hy_cpu_qlut_bytes;
  fused->params = q;
  return TRUE;
}

void
hy_qlut_bytes_release_call (hy_call *call)
{
  if (call->fn == (hy_kernel_ptr) hy_cpu_qlut_bytes)
    g_free ((void *) call->params);
}

const char *
hy_qlut_bytes_kernel_name (const hy_call *call)
{
  return call->fn == (hy_kernel_ptr) hy_cpu_qlut_bytes ? "int8-bytes-lut"
      : NULL;
}
