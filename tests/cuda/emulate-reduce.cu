/*
 * emulate-reduce.cu — the CUDA reductions (reduce.cu: sum, mean, max, min,
 * prod, argmax, argmin) emulated on the host against the CPU kernels: for
 * each case the op is parsed and its shapes inferred by the core, random
 * inputs go through hy_cpu_kernel_for, and the CUDA side's host planning
 * plus its element functions (reduce.cuh) are run over every output index,
 * as the launches would.  No GPU needed (launch.cuh).
 *
 * One line per case; exits 1 if any case failed.
 */
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/reduce.cuh"
#include "emulate-harness.h"

/* ---- the CUDA side, emulated -------------------------------------------- */

/* hy_cuda_reduce and hy_cuda_arg_reduce: one thread per output. */
static void
emulate (emu *e)
{
  const hy_tensor *x = e->in[0];
  hy_tensor *y = e->got[0];
  const int64_t n = hy_shape_numel (&y->shape);
  if (n == 0)
    return;
  if (e->op->id == HY_OP_ARGMAX || e->op->id == HY_OP_ARGMIN) {
    const hy_cuda_arg_reduce_args a = hy_cuda_arg_reduce_plan (
        (const hy_arg_reduce_params *) e->params, &x->shape);
    for (int64_t i = 0; i < n; i++)
      y->data[i] = hy_cuda_arg_reduce_one (&a, x->data, i);
    return;
  }
  const hy_cuda_reduce_args r = hy_cuda_reduce_plan (
      (const hy_reduce_params *) e->params, &x->shape);
  for (int64_t i = 0; i < n; i++)
    y->data[i] = hy_cuda_reduce_one (&r, x->data, i);
}

static void
run (const char *op, const char *const *kv, hy_shape in)
{
  /* Products of many values in [-1, 1] underflow to nothing to compare. */
  const float range = strcmp (op, "prod") == 0 ? 1.6f : 1.0f;
  emu_run (emulate, op, kv, &in, 1, -range, range);
}

/* ---- cases -------------------------------------------------------------- */

static const char *const reducers[] = {
  "sum", "mean", "max", "min", "prod",
};

/* Every reducer over every axis set worth telling apart. */
static void
reduce_cases (void)
{
  for (size_t r = 0; r < G_N_ELEMENTS (reducers); r++) {
    const char *op = reducers[r];
    run (op, NULL, S (7));
    run (op, NULL, S (3, 5, 4));
    run (op, KV ("axis", "()"), S (3, 4));
    run (op, KV ("axis", "0"), S (9));
    run (op, KV ("axis", "0"), S (6, 5));
    run (op, KV ("axis", "1"), S (6, 5));
    run (op, KV ("axis", "-1"), S (2, 3, 37));
    run (op, KV ("axis", "1", "keepdims", "True"), S (2, 3, 4));
    run (op, KV ("axis", "(0, 2)"), S (3, 4, 5));
    run (op, KV ("axis", "(1, 3)"), S (2, 3, 4, 5));
    run (op, KV ("axis", "(0, 2, 4)", "keepdims", "1"), S (2, 3, 4, 3, 2));
    run (op, KV ("axis", "(-1, -2)"), S (2, 3, 7, 7));
    run (op, KV ("axis", "(2, 3)", "keepdims", "True"), S (1, 8, 5, 5));
    run (op, KV ("axis", "1", "exclude", "True"), S (2, 3, 4));
    run (op, KV ("axis", "(0, 3)", "exclude", "True"), S (2, 3, 4, 5));
    run (op, KV ("axis", "1"), S (4, 1, 5));
    run (op, KV ("axis", "(0, 2)"), S (1, 3, 1, 2));
    run (op, KV ("axis", "1"), S (2, 0, 3));
    run (op, KV ("axis", "-1"), S (3, 1000));
  }
  run ("sum_axis", KV ("axis", "1"), S (4, 6));
  run ("max_axis", KV ("axis", "0"), S (4, 6));
  run ("min_axis", KV ("axis", "(0, 1)"), S (4, 6, 2));
  run ("mean", KV ("axis", "(1, 2, 3, 4, 5)"), S (2, 2, 3, 2, 3, 2));

  /* NaN propagates through max and min (and sums). */
  emu_nan_every = 7;
  run ("max", KV ("axis", "1"), S (5, 9));
  run ("min", KV ("axis", "0"), S (9, 5));
  run ("sum", KV ("axis", "-1"), S (4, 20));
  emu_nan_every = 0;
}

static void
arg_reduce_cases (void)
{
  static const char *const ops[] = { "argmax", "argmin" };
  for (int k = 0; k < 2; k++) {
    const char *op = ops[k];
    run (op, NULL, S (11));
    run (op, NULL, S (3, 4, 5));
    run (op, KV ("axis", "None"), S (3, 7));
    run (op, KV ("axis", "0"), S (6, 5));
    run (op, KV ("axis", "1"), S (6, 5));
    run (op, KV ("axis", "-1"), S (2, 3, 1000));
    run (op, KV ("axis", "1", "keepdims", "True"), S (2, 9, 4));
    run (op, KV ("axis", "2"), S (2, 3, 4, 5, 2));
    run (op, KV ("axis", "1"), S (3, 1, 4));
    /* Ties: the first extreme wins. */
    emu_quantum = 0.5f;
    run (op, KV ("axis", "1"), S (4, 30));
    run (op, KV ("axis", "0"), S (30, 4));
    emu_quantum = 0.0f;
    /* The first NaN wins. */
    emu_nan_every = 5;
    run (op, KV ("axis", "-1"), S (4, 12));
    run (op, KV ("axis", "0"), S (12, 4));
    emu_nan_every = 0;
  }
}

/* Integer data (the dtype inference's int_dtype): sums wrap in uint8 and
 * int8, a mean truncates. */
static void
integer_cases (void)
{
  static const hy_dtype dtypes[] = {
    HY_DTYPE_INT64, HY_DTYPE_INT32, HY_DTYPE_UINT8, HY_DTYPE_INT8,
  };
  for (size_t d = 0; d < G_N_ELEMENTS (dtypes); d++) {
    emu_data_dtype = dtypes[d];
    for (size_t r = 0; r < G_N_ELEMENTS (reducers); r++) {
      const hy_shape a = S (3, 7), b = S (2, 3, 4);
      emu_run (emulate, reducers[r], KV ("axis", "1"), &a, 1, -300.0f, 300.0f);
      emu_run (emulate, reducers[r], KV ("axis", "(0, 2)"), &b, 1, -9.0f, 9.0f);
    }
  }
  emu_data_dtype = HY_DTYPE_FLOAT32;
}

int
main (void)
{
  reduce_cases ();
  integer_cases ();
  arg_reduce_cases ();
  return emu_summary ();
}
