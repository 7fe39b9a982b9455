/*
 * elementwise.c — CPU kernels of the elementwise families: unary math,
 * scalar and binary ops (with numpy broadcasting), add_n, clip,
 * hard_sigmoid, where, Cast and zeros_like/ones_like.
 *
 * Every kernel may run in place (out == in[0]) when the output has input
 * 0's size: each loop reads an element before it writes the same index.
 * Loops are plain index loops over contiguous floats so that gcc
 * vectorises them (hot ones also in AVX2 and AVX-512 clones, see
 * cpu-features.h); gcc's runtime overlap check accepts out == in.
 *
 * Large tensors are split into contiguous ranges over the context's
 * threads (flat_job below); every element is computed as on one thread.
 *
 * Numerics follow MXNet 1.9.1's float32 CPU kernels, including its edge
 * cases: maximum/minimum propagate NaN from either side, x mod 0 is 0,
 * rint breaks ties toward the lower neighbour, sign(NaN) is 0.
 *
 * On integer data (the params' int_dtype, set at load) the ops compute as
 * on floats, except that division truncates (hy_int_div), and then hold
 * every result in the dtype as Cast does: truncated, narrow types
 * wrapped (uint8 200 + 100 = 44), as MXNet's integer kernels give them.
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/params/elementwise.h"
#include "kernels/elementwise-common.h"

/* The kernels this file defines (cpu-backend.c looks them up weakly). */
#define HY_CPU_KERNEL(name) \
  void name (hy_cpu_ctx *ctx, const void *params, \
      const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
HY_CPU_KERNEL (hy_cpu_unary);
HY_CPU_KERNEL (hy_cpu_scalar);
HY_CPU_KERNEL (hy_cpu_binary);
HY_CPU_KERNEL (hy_cpu_add_n);
HY_CPU_KERNEL (hy_cpu_clip);
HY_CPU_KERNEL (hy_cpu_hard_sigmoid);
HY_CPU_KERNEL (hy_cpu_where);
HY_CPU_KERNEL (hy_cpu_cast);
HY_CPU_KERNEL (hy_cpu_fill_like);

/* ---- parallel ranges --------------------------------------------------- */

/* One elementwise pass over n floats, run a range [begin, end) at a time
 * by `range` on whichever thread takes it.  Each kernel fills in the
 * operands it uses. */
typedef struct flat_job flat_job;
struct flat_job {
  void (*range) (const flat_job *j, int64_t begin, int64_t end);
  hy_op_id op;
  const void *loops;            /* binary_loops */
  const float *a, *b, *c;
  const hy_tensor *const *in;
  int n_in;
  float s0, s1;
  int dtype;
  float *o;
};

static void
flat_range (void *arg, int64_t begin, int64_t end, int thread)
{
  const flat_job *j = arg;
  j->range (j, begin, end);
}

static void
run_flat (hy_cpu_ctx *ctx, int64_t n, const flat_job *j)
{
  hy_cpu_parallel_for (ctx, n, HY_CPU_MIN_THREAD_FLOATS, flat_range,
      (void *) j);
}

static void hold_in_dtype (hy_cpu_ctx *ctx, float *o, int64_t n,
    hy_dtype int_dtype);

/* ---- unary math -------------------------------------------------------- */

/* MXNet: isnan(v) || v > 0 ? v : 0 — NaN passes, −0 becomes +0. */
static inline float u_relu (float v) { return !(v <= 0.0f) ? v : 0.0f; }
static inline float u_sigmoid (float v) { return 1.0f / (1.0f + expf (-v)); }
static inline float u_softsign (float v) { return v / (1.0f + fabsf (v)); }
static inline float u_rsqrt (float v) { return 1.0f / sqrtf (v); }
static inline float u_square (float v) { return v * v; }
static inline float u_negative (float v) { return -v; }
static inline float u_reciprocal (float v) { return 1.0f / v; }

static inline float
u_sign (float v)
{
  return v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : 0.0f;
}

/* MXNet's rint: the nearer of floor and ceil, floor on a tie (so -2.5
 * gives -3 and 2.5 gives 2) — not C's ties-to-even. */
static inline float
u_rint (float v)
{
  const float f = floorf (v), c = ceilf (v);
  return v - f <= c - v ? f : c;
}

#define MAP(fn) \
  do { \
    for (int64_t i = 0; i < n; i++) \
      o[i] = fn (x[i]); \
  } while (0)

HY_CPU_VECTOR_CLONES static void
unary_map (hy_op_id op, const float *x, float *o, int64_t n)
{
  switch (op) {
    case HY_OP_RELU: MAP (u_relu); break;
    case HY_OP_SIGMOID: MAP (u_sigmoid); break;
    case HY_OP_TANH: MAP (tanhf); break;
    case HY_OP_SOFTSIGN: MAP (u_softsign); break;
    case HY_OP_EXP: MAP (expf); break;
    case HY_OP_LOG: MAP (logf); break;
    case HY_OP_LOG2: MAP (log2f); break;
    case HY_OP_LOG10: MAP (log10f); break;
    case HY_OP_LOG1P: MAP (log1pf); break;
    case HY_OP_EXPM1: MAP (expm1f); break;
    case HY_OP_SQRT: MAP (sqrtf); break;
    case HY_OP_RSQRT: MAP (u_rsqrt); break;
    case HY_OP_SQUARE: MAP (u_square); break;
    case HY_OP_ABS: MAP (fabsf); break;
    case HY_OP_NEGATIVE: MAP (u_negative); break;
    case HY_OP_RECIPROCAL: MAP (u_reciprocal); break;
    case HY_OP_FLOOR: MAP (floorf); break;
    case HY_OP_CEIL: MAP (ceilf); break;
    case HY_OP_ROUND: MAP (roundf); break;      /* half away from zero */
    case HY_OP_RINT: MAP (u_rint); break;
    case HY_OP_TRUNC: MAP (truncf); break;
    case HY_OP_SIGN: MAP (u_sign); break;
    case HY_OP_ERF: MAP (erff); break;
    case HY_OP_SIN: MAP (sinf); break;
    case HY_OP_COS: MAP (cosf); break;
    default: break;             /* not a unary op: the core never asks */
  }
}

static void
unary_range (const flat_job *j, int64_t begin, int64_t end)
{
  unary_map (j->op, j->a + begin, j->o + begin, end - begin);
}

void
hy_cpu_unary (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_unary_params *p = params;
  const flat_job j = {
    .range = unary_range, .op = p->op, .a = in[0]->data, .o = out[0]->data,
  };
  const int64_t n = hy_shape_numel (&out[0]->shape);
  run_flat (ctx, n, &j);
  hold_in_dtype (ctx, out[0]->data, n, p->int_dtype);
}

/* ---- binary computations ----------------------------------------------- */

static inline float b_add (float x, float y) { return x + y; }
static inline float b_sub (float x, float y) { return x - y; }
static inline float b_mul (float x, float y) { return x * y; }
static inline float b_div (float x, float y) { return x / y; }
static inline float b_power (float x, float y) { return powf (x, y); }
/* Python's modulo, in double: elementwise-common.h. */
static inline float b_mod (float x, float y) { return hy_float_mod (x, y); }
static inline float b_eq (float x, float y) { return x == y ? 1.0f : 0.0f; }
static inline float b_ne (float x, float y) { return x != y ? 1.0f : 0.0f; }
static inline float b_gt (float x, float y) { return x > y ? 1.0f : 0.0f; }
static inline float b_ge (float x, float y) { return x >= y ? 1.0f : 0.0f; }
static inline float b_lt (float x, float y) { return x < y ? 1.0f : 0.0f; }
static inline float b_le (float x, float y) { return x <= y ? 1.0f : 0.0f; }

/* NaN wins from either side (x != x is the vectorisable isnan). */
static inline float
b_maximum (float x, float y)
{
  return x > y || x != x ? x : y;
}

static inline float
b_minimum (float x, float y)
{
  return x < y || x != x ? x : y;
}

typedef void (*vv_fn) (int64_t n, const float *a, const float *b, float *o);
typedef void (*vs_fn) (int64_t n, const float *a, float y, float *o);
typedef void (*sv_fn) (int64_t n, float x, const float *b, float *o);

typedef struct binary_loops {
  vv_fn vv;                     /* vector ⊕ vector */
  vs_fn vs;                     /* vector ⊕ scalar */
  sv_fn sv;                     /* scalar ⊕ vector */
} binary_loops;

#define BINARY_LOOPS(fn) \
  HY_CPU_VECTOR_CLONES static void \
  fn##_vv (int64_t n, const float *a, const float *b, float *o) \
  { \
    for (int64_t i = 0; i < n; i++) \
      o[i] = fn (a[i], b[i]); \
  } \
  HY_CPU_VECTOR_CLONES static void \
  fn##_vs (int64_t n, const float *a, float y, float *o) \
  { \
    for (int64_t i = 0; i < n; i++) \
      o[i] = fn (a[i], y); \
  } \
  HY_CPU_VECTOR_CLONES static void \
  fn##_sv (int64_t n, float x, const float *b, float *o) \
  { \
    for (int64_t i = 0; i < n; i++) \
      o[i] = fn (x, b[i]); \
  }

BINARY_LOOPS (b_add)
BINARY_LOOPS (b_sub)
BINARY_LOOPS (b_mul)
BINARY_LOOPS (b_div)
BINARY_LOOPS (b_mod)
BINARY_LOOPS (b_power)
BINARY_LOOPS (b_maximum)
BINARY_LOOPS (b_minimum)
BINARY_LOOPS (b_eq)
BINARY_LOOPS (b_ne)
BINARY_LOOPS (b_gt)
BINARY_LOOPS (b_ge)
BINARY_LOOPS (b_lt)
BINARY_LOOPS (b_le)

/* Integer data: elementwise-common.h. */
static inline float b_idiv (float x, float y) { return hy_int_div (x, y); }
static inline float b_imod (float x, float y) { return hy_int_mod (x, y); }
BINARY_LOOPS (b_idiv)
BINARY_LOOPS (b_imod)

#define LOOPS(fn) { fn##_vv, fn##_vs, fn##_sv }

static const binary_loops binary_table[HY_BINARY_FN_COUNT] = {
  [HY_BINARY_ADD] = LOOPS (b_add),
  [HY_BINARY_SUB] = LOOPS (b_sub),
  [HY_BINARY_MUL] = LOOPS (b_mul),
  [HY_BINARY_DIV] = LOOPS (b_div),
  [HY_BINARY_MOD] = LOOPS (b_mod),
  [HY_BINARY_POWER] = LOOPS (b_power),
  [HY_BINARY_MAXIMUM] = LOOPS (b_maximum),
  [HY_BINARY_MINIMUM] = LOOPS (b_minimum),
  [HY_BINARY_EQUAL] = LOOPS (b_eq),
  [HY_BINARY_NOT_EQUAL] = LOOPS (b_ne),
  [HY_BINARY_GREATER] = LOOPS (b_gt),
  [HY_BINARY_GREATER_EQUAL] = LOOPS (b_ge),
  [HY_BINARY_LESSER] = LOOPS (b_lt),
  [HY_BINARY_LESSER_EQUAL] = LOOPS (b_le),
};

static const binary_loops idiv_loops = LOOPS (b_idiv);
static const binary_loops imod_loops = LOOPS (b_imod);

/* The loops of fn on float data, or on data of an integer dtype. */
static const binary_loops *
loops_for (hy_binary_fn fn, hy_dtype int_dtype)
{
  if (int_dtype != HY_DTYPE_FLOAT32 && fn == HY_BINARY_DIV)
    return &idiv_loops;
  if (int_dtype != HY_DTYPE_FLOAT32 && fn == HY_BINARY_MOD)
    return &imod_loops;
  return &binary_table[fn];
}

/* Flat ranges of the three operand layouts: a and b vectors, a vector
 * and s0 a scalar, s0 a scalar and b a vector. */
static void
vv_range (const flat_job *j, int64_t begin, int64_t end)
{
  const binary_loops *loops = j->loops;
  loops->vv (end - begin, j->a + begin, j->b + begin, j->o + begin);
}

static void
vs_range (const flat_job *j, int64_t begin, int64_t end)
{
  const binary_loops *loops = j->loops;
  loops->vs (end - begin, j->a + begin, j->s0, j->o + begin);
}

static void
sv_range (const flat_job *j, int64_t begin, int64_t end)
{
  const binary_loops *loops = j->loops;
  loops->sv (end - begin, j->s0, j->b + begin, j->o + begin);
}

/* ---- scalar ops -------------------------------------------------------- */

void
hy_cpu_scalar (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_scalar_params *p = params;
  const float *x = in[0]->data;
  const int64_t n = hy_shape_numel (&out[0]->shape);
  flat_job j = {
    .loops = loops_for (p->fn, p->int_dtype), .a = x, .b = x,
    .s0 = hy_cast_value (p->int_dtype, p->scalar), .o = out[0]->data,
  };

  /* x^2 is the common power (e.g. variance); powf is slow and, for 2,
   * exactly x * x anyway. */
  if (p->fn == HY_BINARY_POWER && !p->scalar_first && p->scalar == 2.0f) {
    j.loops = &binary_table[HY_BINARY_MUL];
    j.range = vv_range;
  } else {
    j.range = p->scalar_first ? sv_range : vs_range;
  }
  run_flat (ctx, n, &j);
  hold_in_dtype (ctx, out[0]->data, n, p->int_dtype);
}

/* ---- binary ops with broadcasting -------------------------------------- */

/* The iteration space (hy_broadcast_plan): elementwise-common.h, shared
 * with the CUDA kernels. */

/* A broadcast's rows (its last axis) [begin, end) of the output. */
typedef struct broadcast_job {
  const binary_loops *loops;
  const hy_broadcast_plan *plan;
  const float *a, *b;
  float *o;
} broadcast_job;

static void
broadcast_rows (void *arg, int64_t begin, int64_t end, int thread)
{
  const broadcast_job *j = arg;
  const binary_loops *loops = j->loops;
  const hy_broadcast_plan *plan = j->plan;
  const float *a = j->a, *b = j->b;
  const int inner = plan->nd - 1;
  const int64_t n = plan->dims[inner];
  const int64_t ia = plan->sa[inner], ib = plan->sb[inner];
  float *o = j->o + begin * n;

  /* The odometer's position at row `begin`. */
  int64_t idx[HY_MAX_DIMS] = { 0 };
  int64_t oa = 0, ob = 0;
  for (int64_t k = inner - 1, r = begin; k >= 0; k--) {
    idx[k] = r % plan->dims[k];
    r /= plan->dims[k];
    oa += idx[k] * plan->sa[k];
    ob += idx[k] * plan->sb[k];
  }
  for (int64_t r = begin; r < end; r++, o += n) {
    if (ia && ib)
      loops->vv (n, a + oa, b + ob, o);
    else if (ia)
      loops->vs (n, a + oa, b[ob], o);
    else
      loops->sv (n, a[oa], b + ob, o);
    /* Step the outer axes like an odometer. */
    for (int k = inner - 1; k >= 0; k--) {
      oa += plan->sa[k];
      ob += plan->sb[k];
      if (++idx[k] < plan->dims[k])
        break;
      oa -= plan->sa[k] * plan->dims[k];
      ob -= plan->sb[k] * plan->dims[k];
      idx[k] = 0;
    }
  }
}

static void
run_broadcast (hy_cpu_ctx *ctx, const binary_loops *loops,
    const hy_broadcast_plan *plan, const float *a, const float *b, float *o)
{
  if (plan->nd == 0) {          /* every axis has size 1 */
    loops->vv (1, a, b, o);
    return;
  }
  int64_t rows = 1;
  for (int k = 0; k < plan->nd - 1; k++)
    rows *= plan->dims[k];
  const broadcast_job j = { loops, plan, a, b, o };
  hy_cpu_parallel_for (ctx, rows, hy_cpu_grain (plan->dims[plan->nd - 1]),
      broadcast_rows, (void *) &j);
}

void
hy_cpu_binary (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_binary_params *p = params;
  const binary_loops *loops = loops_for (p->fn, p->int_dtype);
  const hy_shape *sa = &in[0]->shape, *sb = &in[1]->shape;
  const hy_shape *so = &out[0]->shape;
  const float *a = in[0]->data, *b = in[1]->data;
  float *o = out[0]->data;
  const int64_t n = hy_shape_numel (so);
  const int64_t na = hy_shape_numel (sa), nb = hy_shape_numel (sb);

  if (n == 0)
    return;                     /* and never read an empty operand */
  /* The cases that need no plan: equal sizes, or one operand a single
   * value. */
  flat_job j = { .loops = loops, .a = a, .b = b, .o = o };
  if (na == n && nb == n) {
    j.range = vv_range;
  } else if (nb == 1 && na == n) {
    j.range = vs_range;
    j.s0 = b[0];
  } else if (na == 1 && nb == n) {
    j.range = sv_range;
    j.s0 = a[0];
  }
  if (j.range) {
    run_flat (ctx, n, &j);
  } else {
    hy_broadcast_plan plan;
    hy_broadcast_plan_make (sa, sb, so, &plan);
    run_broadcast (ctx, loops, &plan, a, b, o);
  }
  hold_in_dtype (ctx, o, n, p->int_dtype);
}

/* ---- add_n ------------------------------------------------------------- */

static void
add_n_range (const flat_job *j, int64_t begin, int64_t end)
{
  float *o = j->o + begin;
  const int64_t n = end - begin;
  if (j->n_in == 1) {
    if (o != j->in[0]->data + begin)
      memcpy (o, j->in[0]->data + begin, (size_t) n * sizeof (float));
    return;
  }
  /* Left to right, as MXNet's ElementwiseSum adds. */
  b_add_vv (n, j->in[0]->data + begin, j->in[1]->data + begin, o);
  for (int k = 2; k < j->n_in; k++)
    b_add_vv (n, o, j->in[k]->data + begin, o);
}

void
hy_cpu_add_n (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_add_n_params *p = params;
  const flat_job j = {
    .range = add_n_range, .in = in, .n_in = n_in, .o = out[0]->data,
  };
  const int64_t n = hy_shape_numel (&out[0]->shape);
  run_flat (ctx, n, &j);
  hold_in_dtype (ctx, out[0]->data, n, p->int_dtype);
}

/* ---- clip, hard_sigmoid, where ---------------------------------------- */

/* min(max(v, lo), hi) for lo <= hi, spelled so that gcc emits minps/maxps,
 * which keep v when it is NaN (as MXNet's comparisons do). */
static inline float
clamp (float v, float lo, float hi)
{
  const float t = hi < v ? hi : v;
  return lo > t ? lo : t;
}

HY_CPU_VECTOR_CLONES static void
clamp_loop (const float *x, float *o, int64_t n, float lo, float hi)
{
  for (int64_t i = 0; i < n; i++)
    o[i] = clamp (x[i], lo, hi);
}

HY_CPU_VECTOR_CLONES static void
hard_sigmoid_loop (const float *x, float *o, int64_t n, float alpha,
    float beta)
{
  for (int64_t i = 0; i < n; i++)
    o[i] = clamp (alpha * x[i] + beta, 0.0f, 1.0f);
}

/* Any nonzero condition, NaN included, picks x.  Both values are loaded
 * unconditionally so that the select vectorises. */
HY_CPU_VECTOR_CLONES static void
select_loop (const float *c, const float *x, const float *y, float *o,
    int64_t n)
{
  for (int64_t i = 0; i < n; i++) {
    const float xv = x[i], yv = y[i];
    o[i] = c[i] != 0.0f ? xv : yv;
  }
}

/* s0, s1: the bounds. */
static void
clip_range (const flat_job *j, int64_t begin, int64_t end)
{
  const float lo = j->s0, hi = j->s1;
  if (lo <= hi) {
    clamp_loop (j->a + begin, j->o + begin, end - begin, lo, hi);
    return;
  }
  /* Crossed bounds: MXNet's order of tests decides. */
  for (int64_t i = begin; i < end; i++) {
    const float v = j->a[i];
    j->o[i] = v > hi ? hi : v < lo ? lo : v;
  }
}

void
hy_cpu_clip (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_clip_params *p = params;
  const flat_job j = {
    .range = clip_range, .a = in[0]->data, .s0 = p->a_min, .s1 = p->a_max,
    .o = out[0]->data,
  };
  const int64_t n = hy_shape_numel (&out[0]->shape);
  run_flat (ctx, n, &j);
  hold_in_dtype (ctx, out[0]->data, n, p->int_dtype);
}

/* s0, s1: alpha, beta. */
static void
hard_sigmoid_range (const flat_job *j, int64_t begin, int64_t end)
{
  hard_sigmoid_loop (j->a + begin, j->o + begin, end - begin, j->s0, j->s1);
}

void
hy_cpu_hard_sigmoid (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_hard_sigmoid_params *p = params;
  const flat_job j = {
    .range = hard_sigmoid_range, .a = in[0]->data, .s0 = p->alpha,
    .s1 = p->beta, .o = out[0]->data,
  };
  run_flat (ctx, hy_shape_numel (&out[0]->shape), &j);
}

/* c: the condition; a, b: the values it picks from. */
static void
select_range (const flat_job *j, int64_t begin, int64_t end)
{
  select_loop (j->c + begin, j->a + begin, j->b + begin, j->o + begin,
      end - begin);
}

void
hy_cpu_where (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const float *c = in[0]->data, *x = in[1]->data, *y = in[2]->data;
  float *o = out[0]->data;
  const int64_t n = hy_shape_numel (&out[0]->shape);
  const int64_t nc = hy_shape_numel (&in[0]->shape);

  if (nc == n) {
    const flat_job j = {
      .range = select_range, .c = c, .a = x, .b = y, .o = o,
    };
    run_flat (ctx, n, &j);
    return;
  }
  /* A 1-D condition picks whole rows. */
  const int64_t row = nc > 0 ? n / nc : 0;
  for (int64_t r = 0; r < nc; r++) {
    const float *src = c[r] != 0.0f ? x : y;
    memmove (o + r * row, src + r * row, (size_t) row * sizeof (float));
  }
}

/* ---- Cast -------------------------------------------------------------- */

/* The conversions of one value: elementwise-common.h, shared with the CUDA
 * kernels. */
static void
cast_range (const flat_job *j, int64_t begin, int64_t end)
{
  const float *x = j->a + begin;
  float *o = j->o + begin;
  const int64_t n = end - begin;

  switch (j->dtype) {
    case HY_DTYPE_FLOAT16:
      for (int64_t i = 0; i < n; i++)
        o[i] = hy_round_to_float16 (x[i]);
      break;
    case HY_DTYPE_BFLOAT16:
      for (int64_t i = 0; i < n; i++)
        o[i] = hy_round_to_bfloat16 (x[i]);
      break;
    case HY_DTYPE_INT32:
      for (int64_t i = 0; i < n; i++)
        o[i] = (float) hy_float_to_int32 (x[i]);
      break;
    case HY_DTYPE_INT64:
      for (int64_t i = 0; i < n; i++)
        o[i] = hy_float_to_int64 (x[i]);
      break;
    case HY_DTYPE_UINT8:
      for (int64_t i = 0; i < n; i++)
        o[i] = (float) ((uint32_t) hy_float_to_int32 (x[i]) & 0xffu);
      break;
    case HY_DTYPE_INT8:
      for (int64_t i = 0; i < n; i++) {
        const int32_t low =
            (int32_t) ((uint32_t) hy_float_to_int32 (x[i]) & 0xffu);
        o[i] = (float) (low >= 128 ? low - 256 : low);
      }
      break;
    case HY_DTYPE_BOOL:
      for (int64_t i = 0; i < n; i++)
        o[i] = x[i] != 0.0f ? 1.0f : 0.0f;
      break;
    default:                    /* float32, float64: values unchanged */
      if (o != x)
        memcpy (o, x, (size_t) n * sizeof (float));
      break;
  }
}

/* Results on integer data, held in their dtype. */
static void
hold_in_dtype (hy_cpu_ctx *ctx, float *o, int64_t n, hy_dtype int_dtype)
{
  if (int_dtype == HY_DTYPE_FLOAT32)
    return;
  const flat_job j = {
    .range = cast_range, .a = o, .dtype = (int) int_dtype, .o = o,
  };
  run_flat (ctx, n, &j);
}

void
hy_cpu_cast (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_cast_params *p = params;
  const flat_job j = {
    .range = cast_range, .a = in[0]->data, .dtype = p->dtype,
    .o = out[0]->data,
  };
  run_flat (ctx, hy_shape_numel (&out[0]->shape), &j);
}

/* ---- zeros_like, ones_like --------------------------------------------- */

static void
fill_range (const flat_job *j, int64_t begin, int64_t end)
{
  for (int64_t i = begin; i < end; i++)
    j->o[i] = j->s0;
}

void
hy_cpu_fill_like (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_fill_like_params *p = params;
  const flat_job j = {
    .range = fill_range, .s0 = p->value, .o = out[0]->data,
  };
  run_flat (ctx, hy_shape_numel (&out[0]->shape), &j);
}
