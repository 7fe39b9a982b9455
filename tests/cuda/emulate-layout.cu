/*
 * emulate-layout.cu — the CUDA kernels of slice_like (slice.cu) and of
 * shape_array, reverse, stack, broadcast_axis and gather_nd (layout.cu)
 * emulated on the host against the CPU kernels: the host planning and the
 * element functions (shape.cuh, slice.cuh, layout.cuh) run over every
 * output index as the launches would.  No GPU needed (launch.cuh).
 *
 * gather_nd's indices are drawn from each axis's valid range [-n, n - 1]
 * (fractions and negatives included), and then the check kernel must
 * record nothing.  An index outside it makes the CPU kernel refuse the
 * forward (MXNet's IndexError) before writing anything; the CUDA check
 * kernel must then record the same index (of the first axis with a bad
 * one, its last), whose message (refusal.h) must be the CPU's word for
 * word, and keep an earlier call's record.
 *
 * One line per case; exits 1 if any case failed.
 */
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/shape.cuh"
#include "kernels/cuda/slice.cuh"
#include "kernels/cuda/layout.cuh"
#include "emulate-harness.h"

#include <setjmp.h>

/* ---- the CUDA side, emulated -------------------------------------------- */

/* hy_cuda_strided_gather: one copy from base when contiguous, else the
 * gather kernel. */
static void
emulate_walk (const hy_cuda_strided_args *w, const hy_tensor *x,
    hy_tensor *y)
{
  const int64_t n = numel (y);
  if (n == 0)
    return;
  if (hy_cuda_strided_contiguous (w)) {
    memcpy (y->data, x->data + w->base, (size_t) n * sizeof (float));
    return;
  }
  for (int64_t i = 0; i < n; i++)
    y->data[i] = x->data[hy_cuda_strided_src (w, i)];
}

/* hy_cuda_stack in layout.cu. */
static void
emulate_stack (emu *e)
{
  const hy_shape joined = hy_cuda_stack_joined (
      (const hy_stack_params *) e->params, &e->in[0]->shape, e->n_in);
  if (hy_shape_numel (&joined) == 0)
    return;
  float *y = e->got[0]->data;
  for (int from = 0; from < e->n_in; from += HY_CUDA_PARTS_MAX) {
    int64_t outer;
    const hy_cuda_parts_args p = hy_cuda_parts_plan (&joined, 1, e->in,
        e->n_in, 1, from, &outer);
    if (outer == 1) {
      for (int k = 0; k < p.n; k++)
        memcpy (y + p.first + p.start[k], p.data[k],
            (size_t) (p.start[k + 1] - p.start[k]) * sizeof (float));
      continue;
    }
    for (int64_t i = 0; i < outer * p.span; i++) {
      int64_t joined_at, at;
      const int k = hy_cuda_parts_locate (&p, i, &joined_at, &at);
      y[joined_at] = p.data[k][at];
    }
  }
}

static void
emulate (emu *e)
{
  const hy_tensor *x = e->in[0];
  hy_tensor *y = e->got[0];
  if (numel (y) == 0)
    return;
  switch (e->op->id) {
    case HY_OP_SLICE_LIKE: {
      const hy_cuda_strided_args w = hy_cuda_slice_like_walk (&x->shape,
          &y->shape);
      emulate_walk (&w, x, y);
      break;
    }
    case HY_OP_REVERSE: {
      const hy_cuda_strided_args w = hy_cuda_reverse_walk (
          (const hy_reverse_params *) e->params, &x->shape);
      emulate_walk (&w, x, y);
      break;
    }
    case HY_OP_BROADCAST_AXIS:
    case HY_OP_BROADCAST_LIKE: {
      const hy_cuda_strided_args w = hy_cuda_broadcast_axis_walk (
          (const hy_broadcast_axis_params *) e->params, &x->shape,
          &y->shape);
      emulate_walk (&w, x, y);
      break;
    }
    case HY_OP_STACK:
      emulate_stack (e);
      break;
    case HY_OP_SHAPE_ARRAY: {
      const hy_cuda_shape_array_args a = hy_cuda_shape_array_plan (
          &x->shape);
      MAP (a, hy_cuda_shape_array_value, y);
      break;
    }
    case HY_OP_GATHER_ND: {
      const hy_cuda_gather_nd_args g = hy_cuda_gather_nd_plan (&x->shape,
          &e->in[1]->shape);
      for (int64_t i = 0; i < numel (y); i++)
        y->data[i] = hy_cuda_gather_nd_one (&g, x->data, e->in[1]->data, i);
      break;
    }
    default:
      printf ("(no emulation for %s)\n", e->op->name);
      break;
  }
}

static void
run (const char *op, const char *const *kv, std::initializer_list<hy_shape> in)
{
  emu_run (emulate, op, kv, in.begin (), (int) in.size (), -1.0f, 1.0f);
}

/* ---- cases -------------------------------------------------------------- */

static void
slice_like_cases (void)
{
  run ("slice_like", NULL, { S (5, 7), S (3, 4) });
  run ("slice_like", NULL, { S (5, 7), S (5, 7) });
  run ("slice_like", KV ("axes", "(1,)"), { S (4, 6, 5), S (2, 3, 9) });
  run ("slice_like", KV ("axes", "(0, 2)"), { S (4, 6, 5), S (2, 3, 3) });
  run ("slice_like", KV ("axes", "(-1,)"), { S (2, 3, 8), S (1, 1, 5) });
  run ("slice_like", KV ("axes", "(-2, -1)"),
      { S (1, 3, 10, 12), S (1, 1, 7, 9) });
  run ("slice_like", KV ("axes", "(2, 3)"),
      { S (2, 4, 10, 12), S (1, 8, 10, 1) });
  run ("slice_like", KV ("axes", "(0,)"), { S (6), S (0) });
  run ("slice_like", NULL, { S (2, 3, 4, 5, 6), S (2, 2, 4, 3, 6) });
}

static void
reverse_cases (void)
{
  run ("reverse", KV ("axis", "0"), { S (7) });
  run ("reverse", KV ("axis", "1"), { S (3, 5) });
  run ("reverse", KV ("axis", "(0,)"), { S (3, 5) });
  run ("reverse", KV ("axis", "(0, 1)"), { S (3, 5) });
  run ("reverse", KV ("axis", "(1, 2)"), { S (2, 3, 4) });
  run ("reverse", KV ("axis", "(0, 2)"), { S (2, 3, 4) });
  run ("flip", KV ("axis", "3"), { S (2, 3, 1, 6) });
  run ("reverse", KV ("axis", "2"), { S (2, 3, 1, 6) });
  run ("reverse", KV ("axis", "(0, 1, 2, 3, 4)"), { S (2, 3, 2, 2, 3) });
  run ("reverse", KV ("axis", "0"), { S (0, 4) });
}

static void
stack_cases (void)
{
  run ("stack", KV ("num_args", "2", "axis", "0"), { S (3, 4), S (3, 4) });
  run ("stack", KV ("num_args", "3", "axis", "1"),
      { S (2, 3), S (2, 3), S (2, 3) });
  run ("stack", KV ("num_args", "2", "axis", "2"), { S (2, 3), S (2, 3) });
  run ("stack", KV ("num_args", "2", "axis", "-1"),
      { S (2, 3, 4), S (2, 3, 4) });
  run ("stack", KV ("num_args", "3", "axis", "-2"),
      { S (2, 5), S (2, 5), S (2, 5) });
  run ("stack", KV ("num_args", "1"), { S (4, 2) });
  run ("stack", KV ("num_args", "2", "axis", "1"), { S (0, 3), S (0, 3) });
  {
    /* More inputs than one launch takes, along axis 0 (copies) and 1. */
    hy_shape in[21];
    for (int k = 0; k < 21; k++)
      in[k] = S (3, 2);
    emu_run (emulate, "stack", KV ("num_args", "21", "axis", "0"), in, 21,
        -1.0f, 1.0f);
    emu_run (emulate, "stack", KV ("num_args", "21", "axis", "1"), in, 21,
        -1.0f, 1.0f);
    emu_run (emulate, "stack", KV ("num_args", "21", "axis", "2"), in, 21,
        -1.0f, 1.0f);
  }
}

static void
broadcast_axis_cases (void)
{
  run ("broadcast_axis", KV ("axis", "0", "size", "4"), { S (1, 3) });
  run ("broadcast_axis", KV ("axis", "1", "size", "5"), { S (3, 1) });
  run ("broadcast_axis", KV ("axis", "(0, 2)", "size", "(2, 3)"),
      { S (1, 4, 1) });
  run ("broadcast_axis", KV ("axis", "(1, 2)", "size", "(3, 4)"),
      { S (2, 1, 1, 5) });
  run ("broadcast_axes", KV ("axis", "(0, 1, 2)", "size", "(2, 3, 2)"),
      { S (1, 1, 1) });
  run ("broadcast_axis", KV ("axis", "2", "size", "1"), { S (2, 3, 1) });
  run ("broadcast_axis", KV ("axis", "3", "size", "7"), { S (2, 1, 3, 1) });
  /* broadcast_like: the same walk, the lengths from the second input. */
  run ("broadcast_like", NULL, { S (2, 1, 4, 1), S (2, 3, 4, 5) });
  run ("broadcast_like", KV ("lhs_axes", "(-1, 1)", "rhs_axes", "(0, -2)"),
      { S (2, 1, 1), S (5, 7, 9) });
  run ("broadcast_like", KV ("lhs_axes", "(0,)", "rhs_axes", "(1,)"),
      { S (1, 3), S (2, 6) });
}

static void
shape_array_cases (void)
{
  run ("shape_array", NULL, { S (7) });
  run ("shape_array", NULL, { S (2, 3, 5, 7) });
  run ("shape_array", NULL, { S (1, 0, 4) });
  run ("shape_array", NULL, { S (2, 1, 3, 1, 2, 2) });
}

/* gather_nd_check_kernel (layout.cu) with its block's threads one after
 * another: each its keys upwards to its first bad one, the smallest of
 * those recorded unless rec holds an earlier call's refusal. */
static void
emulate_gather_nd_check (const hy_cuda_gather_nd_args *g, const float *idx,
    int call, hy_cuda_refusal *rec)
{
  uint64_t first = UINT64_MAX;
  const int64_t keys = (int64_t) g->m * g->rows;
  for (int t = 0; t < HY_CUDA_THREADS; t++) {
    for (int64_t k = t; k < keys; k += HY_CUDA_THREADS) {
      if (hy_cuda_gather_nd_bad (g, idx, k)) {
        first = MIN (first, (uint64_t) k);
        break;
      }
    }
  }
  if (first != UINT64_MAX && rec->kind == HY_CUDA_REFUSAL_NONE)
    hy_cuda_gather_nd_refusal (g, idx, (int64_t) first, call, rec);
}

/* The CPU kernel on e's inputs: TRUE with its message when it refuses
 * them (hy_cpu_refuse jumps back here). */
static bool
cpu_refuses (emu *e, char *message, size_t size)
{
  hy_cpu_ctx ctx = {};
  jmp_buf back;
  ctx.on_no_memory = &back;
  if (setjmp (back)) {
    g_strlcpy (message, ctx.failure, size);
    hy_cpu_ctx_clear (&ctx);
    return true;
  }
  hy_cpu_kernel_for (e->op->id) (&ctx, e->params,
      (const hy_tensor *const *) e->in, e->n_in, e->want, e->n_out);
  ctx.on_no_memory = NULL;
  hy_cpu_ctx_clear (&ctx);
  return false;
}

/* Index values for an axis of length n: valid ones, some negative, some
 * fractional, some at the ends of [-n, n - 1]. */
static void
gather_nd_case (const hy_shape &data, const hy_shape &indices)
{
  const hy_shape in[2] = { data, indices };
  emu e;
  if (!emu_open (&e, "gather_nd", NULL, in, 2))
    return;
  for (int64_t i = 0; i < numel (e.in[0]); i++)
    e.in[0]->data[i] = emu_uniform (-1.0f, 1.0f);
  const int64_t rows = numel (e.in[1]) / indices.dims[0];
  for (int64_t a = 0; a < indices.dims[0]; a++) {
    const float n = (float) data.dims[a];
    for (int64_t r = 0; r < rows; r++) {
      float v = emu_uniform (-n, n - 1.0f);
      if (r % 3 == 0)
        v = truncf (v);         /* whole indices too, -n and n - 1 alike */
      if (r % 11 == 5)
        v = r % 2 ? -n : n - 1.0f;
      e.in[1]->data[a * rows + r] = v;
    }
  }
  emu_run_cpu (&e);
  emulate (&e);
  hy_cuda_refusal rec = {};
  const hy_cuda_gather_nd_args g = hy_cuda_gather_nd_plan (&data, &indices);
  emulate_gather_nd_check (&g, e.in[1]->data, 0, &rec);
  if (rec.kind != HY_CUDA_REFUSAL_NONE) {
    char message[256];
    hy_cuda_refusal_message (&rec, message, sizeof message);
    emu_report (false, e.name, 0.0, message);
    emu_close (&e);
    return;
  }
  emu_finish (&e);
}

/* Bad indices (value, axis, column) among valid ones: the CPU's refusal
 * and the emulated check's record give the same message; an earlier
 * call's record stays. */
typedef struct bad_index {
  float v;
  int axis;
  int64_t column;
} bad_index;

static void
gather_nd_refusal_case (const hy_shape &data, const hy_shape &indices,
    std::initializer_list<bad_index> bad)
{
  const hy_shape in[2] = { data, indices };
  emu e;
  if (!emu_open (&e, "gather_nd", NULL, in, 2))
    return;
  const int64_t rows = numel (e.in[1]) / indices.dims[0];
  for (int64_t a = 0; a < indices.dims[0]; a++)
    for (int64_t r = 0; r < rows; r++)
      e.in[1]->data[a * rows + r] = (float) ((a + r) % data.dims[a]);
  GString *name = g_string_new (e.name);
  g_string_append (name, " refusing");
  for (const bad_index &b : bad) {
    e.in[1]->data[b.axis * rows + b.column] = b.v;
    g_string_append_printf (name, " [%d, %" G_GINT64_FORMAT "]=%g", b.axis,
        (gint64) b.column, b.v);
  }
  char want[256] = "", got[256] = "", why[600] = "";
  const bool refused = cpu_refuses (&e, want, sizeof want);
  const hy_cuda_gather_nd_args g = hy_cuda_gather_nd_plan (&data, &indices);
  hy_cuda_refusal rec = {};
  emulate_gather_nd_check (&g, e.in[1]->data, 3, &rec);
  hy_cuda_refusal_message (&rec, got, sizeof got);
  /* A later call finds the record taken and leaves it. */
  hy_cuda_refusal later = rec;
  emulate_gather_nd_check (&g, e.in[1]->data, 4, &later);
  bool ok = refused && rec.kind == HY_CUDA_REFUSAL_INDEX && rec.call == 3
      && !strcmp (want, got) && !memcmp (&later, &rec, sizeof rec);
  if (!ok)
    g_snprintf (why, sizeof why, "CPU %s \"%s\", CUDA call %d \"%s\"%s",
        refused ? "refuses" : "accepts", want, rec.call, got,
        memcmp (&later, &rec, sizeof rec) ? ", overwritten by a later call"
        : "");
  emu_report (ok, name->str, 0.0, why);
  g_string_free (name, TRUE);
  emu_close (&e);
}

static void
gather_nd_refusal_cases (void)
{
  gather_nd_refusal_case (S (5, 4), S (2, 9), { { 4.0f, 1, 7 } });
  gather_nd_refusal_case (S (5, 4), S (2, 9), { { -6.0f, 0, 0 } });
  gather_nd_refusal_case (S (5, 4), S (2, 9), { { 4.5f, 0, 2 } });
  gather_nd_refusal_case (S (5, 4), S (2, 9), { { -5.5f, 0, 2 } });
  gather_nd_refusal_case (S (5, 4), S (2, 9), { { NAN, 1, 3 } });
  gather_nd_refusal_case (S (5, 4), S (2, 9), { { 1e30f, 0, 8 } });
  /* Of the first axis with any, the last. */
  gather_nd_refusal_case (S (5, 4), S (2, 9), { { 9.0f, 1, 0 },
      { 7.0f, 0, 2 }, { -8.0f, 0, 5 }, { 6.0f, 1, 8 } });
  gather_nd_refusal_case (S (3, 4, 5), S (3, 2, 5), { { 4.0f, 2, 9 },
      { 7.0f, 1, 1 }, { -9.0f, 1, 6 } });
  /* More indices than threads: the bad ones in different threads'
   * keys, the smallest key not the first one a thread meets. */
  gather_nd_refusal_case (S (6, 7), S (2, 700), { { 6.0f, 0, 5 },
      { 9.0f, 0, 300 }, { -7.0f, 0, 699 }, { 70.0f, 1, 10 } });
  gather_nd_refusal_case (S (6, 7), S (2, 700), { { 7.0f, 1, 0 },
      { 8.0f, 1, 257 }, { NAN, 1, 512 } });
}

static void
gather_nd_cases (void)
{
  gather_nd_case (S (5, 4), S (1, 6));
  gather_nd_case (S (5, 4), S (2, 9));
  gather_nd_case (S (5, 4), S (2, 3, 4));
  gather_nd_case (S (3, 4, 5), S (1, 2, 5));
  gather_nd_case (S (3, 4, 5), S (2, 13));
  gather_nd_case (S (3, 4, 5), S (3, 40));
  gather_nd_case (S (2, 3, 4, 5), S (2, 2, 2, 3));
  gather_nd_case (S (6), S (1, 30));
}

int
main (void)
{
  slice_like_cases ();
  reverse_cases ();
  stack_cases ();
  broadcast_axis_cases ();
  shape_array_cases ();
  gather_nd_cases ();
  gather_nd_refusal_cases ();
  return emu_summary ();
}
