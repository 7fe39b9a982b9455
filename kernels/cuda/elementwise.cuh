/*
 * elementwise.cuh — the element functions of the CUDA elementwise kernels
 * (elementwise.cu), apart so that tests/cuda/emulate-elementwise.cu can
 * run them on the host: unary math, scalar and binary ops (with numpy
 * broadcasting), add_n, clip, hard_sigmoid, where, Cast and
 * zeros_like/ones_like.
 *
 * Each family has an args struct, passed to its kernel by value, a host
 * function that fills it from the params and tensors, and an HY_CUDA_HD
 * function giving output element i.  Every element reads its inputs before
 * its own output is written and no other element's, so out may be in[0].
 *
 * The arithmetic is kernels/cpu/elementwise.c's, formula for formula
 * (MXNet 1.9.1's float32 semantics and edge cases).
 */
#ifndef HY_CUDA_ELEMENTWISE_CUH
#define HY_CUDA_ELEMENTWISE_CUH

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cuda/launch.cuh"
#include "kernels/params/elementwise.h"
#include "kernels/elementwise-common.h"
#include "hybrid-tensor.h"

/* ---- unary math -------------------------------------------------------- */

/* MXNet's rint: the nearer of floor and ceil, floor on a tie. */
HY_CUDA_HD float
hy_cuda_rint (float v)
{
  const float f = floorf (v), c = ceilf (v);
  return v - f <= c - v ? f : c;
}

HY_CUDA_HD float
hy_cuda_unary_op (hy_op_id op, float v)
{
  switch (op) {
    /* MXNet: isnan(v) || v > 0 ? v : 0 — NaN passes, −0 becomes +0. */
    case HY_OP_RELU: return !(v <= 0.0f) ? v : 0.0f;
    case HY_OP_SIGMOID: return 1.0f / (1.0f + expf (-v));
    case HY_OP_TANH: return tanhf (v);
    case HY_OP_SOFTSIGN: return v / (1.0f + fabsf (v));
    case HY_OP_EXP: return expf (v);
    case HY_OP_LOG: return logf (v);
    case HY_OP_LOG2: return log2f (v);
    case HY_OP_LOG10: return log10f (v);
    case HY_OP_LOG1P: return log1pf (v);
    case HY_OP_EXPM1: return expm1f (v);
    case HY_OP_SQRT: return sqrtf (v);
    case HY_OP_RSQRT: return 1.0f / sqrtf (v);
    case HY_OP_SQUARE: return v * v;
    case HY_OP_ABS: return fabsf (v);
    case HY_OP_NEGATIVE: return -v;
    case HY_OP_RECIPROCAL: return 1.0f / v;
    case HY_OP_FLOOR: return floorf (v);
    case HY_OP_CEIL: return ceilf (v);
    case HY_OP_ROUND: return roundf (v);        /* half away from zero */
    case HY_OP_RINT: return hy_cuda_rint (v);
    case HY_OP_TRUNC: return truncf (v);
    case HY_OP_SIGN: return v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : 0.0f;
    case HY_OP_ERF: return erff (v);
    case HY_OP_SIN: return sinf (v);
    case HY_OP_COS: return cosf (v);
    default: return v;          /* not a unary op: the core never asks */
  }
}

/* int_dtype: integer data, every result held in it (hy_cast_value; 0,
 * float32, keeps it), as on the CPU. */
typedef struct hy_cuda_unary_args {
  const float *x;
  float *o;
  hy_op_id op;
  int int_dtype;
} hy_cuda_unary_args;

static inline hy_cuda_unary_args
hy_cuda_unary_plan (const hy_unary_params *p, const hy_tensor *x,
    hy_tensor *o)
{
  hy_cuda_unary_args a = { x->data, o->data, p->op, (int) p->int_dtype };
  return a;
}

HY_CUDA_HD float
hy_cuda_unary_at (const hy_cuda_unary_args *a, int64_t i)
{
  return hy_cast_value (a->int_dtype, hy_cuda_unary_op (a->op, a->x[i]));
}

/* ---- binary computations ----------------------------------------------- */

HY_CUDA_HD float
hy_cuda_binary_op (hy_binary_fn fn, float x, float y)
{
  switch (fn) {
    case HY_BINARY_ADD: return x + y;
    case HY_BINARY_SUB: return x - y;
    case HY_BINARY_MUL: return x * y;
    case HY_BINARY_DIV: return x / y;
    case HY_BINARY_MOD: return hy_float_mod (x, y);
    case HY_BINARY_POWER: return powf (x, y);
    /* NaN wins from either side. */
    case HY_BINARY_MAXIMUM: return x > y || x != x ? x : y;
    case HY_BINARY_MINIMUM: return x < y || x != x ? x : y;
    case HY_BINARY_EQUAL: return x == y ? 1.0f : 0.0f;
    case HY_BINARY_NOT_EQUAL: return x != y ? 1.0f : 0.0f;
    case HY_BINARY_GREATER: return x > y ? 1.0f : 0.0f;
    case HY_BINARY_GREATER_EQUAL: return x >= y ? 1.0f : 0.0f;
    case HY_BINARY_LESSER: return x < y ? 1.0f : 0.0f;
    case HY_BINARY_LESSER_EQUAL: return x <= y ? 1.0f : 0.0f;
    default: return 0.0f;
  }
}

/* fn on integer data (int_dtype, not float32): division truncates, and
 * the result is held in the dtype. */
HY_CUDA_HD float
hy_cuda_binary_value (hy_binary_fn fn, int int_dtype, float x, float y)
{
  if (int_dtype == HY_DTYPE_FLOAT32)
    return hy_cuda_binary_op (fn, x, y);
  const float r = fn == HY_BINARY_DIV ? hy_int_div (x, y)
      : fn == HY_BINARY_MOD ? hy_int_mod (x, y) : hy_cuda_binary_op (fn, x, y);
  return hy_cast_value (int_dtype, r);
}

/* ---- scalar ops -------------------------------------------------------- */

typedef struct hy_cuda_scalar_args {
  const float *x;
  float *o;
  hy_binary_fn fn;
  bool scalar_first;            /* fn (scalar, x) */
  bool square;                  /* x^2 as x · x, as the CPU computes it */
  float scalar;
  int int_dtype;
} hy_cuda_scalar_args;

static inline hy_cuda_scalar_args
hy_cuda_scalar_plan (const hy_scalar_params *p, const hy_tensor *x,
    hy_tensor *o)
{
  hy_cuda_scalar_args a = {
    x->data, o->data, p->fn, p->scalar_first,
    p->fn == HY_BINARY_POWER && !p->scalar_first && p->scalar == 2.0f,
    hy_cast_value (p->int_dtype, p->scalar), (int) p->int_dtype,
  };
  return a;
}

HY_CUDA_HD float
hy_cuda_scalar_at (const hy_cuda_scalar_args *a, int64_t i)
{
  const float v = a->x[i];
  if (a->square)
    return hy_cast_value (a->int_dtype, v * v);
  return a->scalar_first
      ? hy_cuda_binary_value (a->fn, a->int_dtype, a->scalar, v)
      : hy_cuda_binary_value (a->fn, a->int_dtype, v, a->scalar);
}

/* ---- binary ops with broadcasting -------------------------------------- */

/* The CPU's broadcast plan (elementwise-common.h): the output's axes with
 * size-1 axes dropped and neighbours merged where both operands step
 * through them as one; equal shapes (or an operand of one value) become a
 * single axis, which needs no division. */
typedef struct hy_cuda_binary_args {
  const float *a, *b;
  float *o;
  hy_binary_fn fn;
  int int_dtype;
  hy_broadcast_plan bc;
} hy_cuda_binary_args;

static inline hy_cuda_binary_args
hy_cuda_binary_plan (const hy_binary_params *p, const hy_tensor *a,
    const hy_tensor *b, hy_tensor *o)
{
  hy_cuda_binary_args plan;
  memset (&plan, 0, sizeof plan);
  plan.a = a->data;
  plan.b = b->data;
  plan.o = o->data;
  plan.fn = p->fn;
  plan.int_dtype = (int) p->int_dtype;

  hy_broadcast_plan_make (&a->shape, &b->shape, &o->shape, &plan.bc);
  return plan;
}

HY_CUDA_HD float
hy_cuda_binary_at (const hy_cuda_binary_args *a, int64_t i)
{
  const hy_broadcast_plan *bc = &a->bc;
  int64_t oa = 0, ob = 0;
  if (bc->nd == 1) {
    oa = i * bc->sa[0];
    ob = i * bc->sb[0];
  } else {
    /* Unrolled over a constant bound so that the kernel reads the plan
     * straight from its parameters instead of a local copy. */
    int64_t r = i;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int k = HY_MAX_DIMS - 1; k >= 0; k--) {
      if (k >= bc->nd)
        continue;
      const int64_t d = bc->dims[k], idx = r % d;
      r /= d;
      oa += idx * bc->sa[k];
      ob += idx * bc->sb[k];
    }
  }
  return hy_cuda_binary_value (a->fn, a->int_dtype, a->a[oa], a->b[ob]);
}

/* ---- add_n ------------------------------------------------------------- */

/* Inputs per launch: the pointers travel in the kernel's parameters.  More
 * inputs take more launches, each after the first adding onto the output
 * so far — the CPU's left-to-right order. */
#define HY_CUDA_ADD_N_CHUNK 16

typedef struct hy_cuda_add_n_args {
  const float *in[HY_CUDA_ADD_N_CHUNK];
  int n_in;
  float *o;
  int int_dtype;                /* held in it after each launch: it wraps
                                 * as one sum would */
} hy_cuda_add_n_args;

static inline int
hy_cuda_add_n_launches (int n_in)
{
  if (n_in <= HY_CUDA_ADD_N_CHUNK)
    return 1;
  return 1 + (n_in - 2) / (HY_CUDA_ADD_N_CHUNK - 1);
}

/* Launch `launch` of hy_cuda_add_n_launches: the first sums the first
 * inputs, a later one adds the next inputs onto the output. */
static inline hy_cuda_add_n_args
hy_cuda_add_n_plan (const hy_add_n_params *p, const hy_tensor *const *in,
    int n_in, hy_tensor *o, int launch)
{
  hy_cuda_add_n_args a;
  memset (&a, 0, sizeof a);
  a.o = o->data;
  a.int_dtype = (int) p->int_dtype;
  int first = 0;
  if (launch > 0) {
    first = HY_CUDA_ADD_N_CHUNK + (launch - 1) * (HY_CUDA_ADD_N_CHUNK - 1);
    a.in[a.n_in++] = o->data;
  }
  for (int k = first; k < n_in && a.n_in < HY_CUDA_ADD_N_CHUNK; k++)
    a.in[a.n_in++] = in[k]->data;
  return a;
}

HY_CUDA_HD float
hy_cuda_add_n_at (const hy_cuda_add_n_args *a, int64_t i)
{
  float acc = a->in[0][i];
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int k = 1; k < HY_CUDA_ADD_N_CHUNK; k++)
    if (k < a->n_in)
      acc += a->in[k][i];
  return hy_cast_value (a->int_dtype, acc);
}

/* ---- clip, hard_sigmoid, where ---------------------------------------- */

/* min(max(v, lo), hi) for lo <= hi; v when it is NaN. */
HY_CUDA_HD float
hy_cuda_clamp (float v, float lo, float hi)
{
  const float t = hi < v ? hi : v;
  return lo > t ? lo : t;
}

/* clip's bounds, or hard_sigmoid's alpha and beta as s0, s1. */
typedef struct hy_cuda_clip_args {
  const float *x;
  float *o;
  float s0, s1;
  int int_dtype;                /* clip on integer data */
} hy_cuda_clip_args;

static inline hy_cuda_clip_args
hy_cuda_clip_plan (const hy_clip_params *p, const hy_tensor *x, hy_tensor *o)
{
  hy_cuda_clip_args a = { x->data, o->data, p->a_min, p->a_max,
    (int) p->int_dtype };
  return a;
}

HY_CUDA_HD float
hy_cuda_clip_at (const hy_cuda_clip_args *a, int64_t i)
{
  const float v = a->x[i], lo = a->s0, hi = a->s1;
  /* Crossed bounds: MXNet's order of tests decides. */
  const float r = lo <= hi ? hy_cuda_clamp (v, lo, hi)
      : v > hi ? hi : v < lo ? lo : v;
  return hy_cast_value (a->int_dtype, r);
}

static inline hy_cuda_clip_args
hy_cuda_hard_sigmoid_plan (const hy_hard_sigmoid_params *p,
    const hy_tensor *x, hy_tensor *o)
{
  hy_cuda_clip_args a = { x->data, o->data, p->alpha, p->beta, 0 };
  return a;
}

HY_CUDA_HD float
hy_cuda_hard_sigmoid_at (const hy_cuda_clip_args *a, int64_t i)
{
  return hy_cuda_clamp (a->s0 * a->x[i] + a->s1, 0.0f, 1.0f);
}

/* where: c picks x (nonzero, NaN included) or y; a 1-D condition picks
 * whole rows of `row` values. */
typedef struct hy_cuda_where_args {
  const float *c, *x, *y;
  float *o;
  int64_t row;
} hy_cuda_where_args;

static inline hy_cuda_where_args
hy_cuda_where_plan (const hy_tensor *c, const hy_tensor *x,
    const hy_tensor *y, hy_tensor *o)
{
  const int64_t n = hy_shape_numel (&o->shape);
  const int64_t nc = hy_shape_numel (&c->shape);
  hy_cuda_where_args a = {
    c->data, x->data, y->data, o->data, nc > 0 && nc != n ? n / nc : 1,
  };
  return a;
}

HY_CUDA_HD float
hy_cuda_where_at (const hy_cuda_where_args *a, int64_t i)
{
  const float c = a->c[a->row == 1 ? i : i / a->row];
  return c != 0.0f ? a->x[i] : a->y[i];
}

/* ---- Cast -------------------------------------------------------------- */

typedef struct hy_cuda_cast_args {
  const float *x;
  float *o;
  int dtype;
} hy_cuda_cast_args;

static inline hy_cuda_cast_args
hy_cuda_cast_plan (const hy_cast_params *p, const hy_tensor *x, hy_tensor *o)
{
  hy_cuda_cast_args a = { x->data, o->data, (int) p->dtype };
  return a;
}

HY_CUDA_HD float
hy_cuda_cast_at (const hy_cuda_cast_args *a, int64_t i)
{
  /* The conversion of one value: elementwise-common.h, shared with the
   * CPU kernel. */
  return hy_cast_value (a->dtype, a->x[i]);
}

/* ---- zeros_like, ones_like --------------------------------------------- */

typedef struct hy_cuda_fill_args {
  float *o;
  float value;
} hy_cuda_fill_args;

static inline hy_cuda_fill_args
hy_cuda_fill_like_plan (const hy_fill_like_params *p, hy_tensor *o)
{
  hy_cuda_fill_args a = { o->data, p->value };
  return a;
}

HY_CUDA_HD float
hy_cuda_fill_at (const hy_cuda_fill_args *a, int64_t i)
{
  (void) i;
  return a->value;
}

#endif /* HY_CUDA_ELEMENTWISE_CUH */
