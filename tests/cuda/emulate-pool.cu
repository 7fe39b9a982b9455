/*
 * emulate-pool.cu — the CUDA Pooling kernel (pool.cu) emulated on the host
 * against the CPU kernel: for each case the op is parsed and its shapes
 * inferred by the core (valid/full/same conventions), random inputs go
 * through hy_cpu_kernel_for, and the CUDA side's host planning plus its
 * element function (pool.cuh) are run over every output index, as the
 * launch would.  No GPU needed (launch.cuh).
 *
 * One line per case; exits 1 if any case failed.
 */
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/pool.cuh"
#include "emulate-harness.h"

/* ---- the CUDA side, emulated -------------------------------------------- */

/* hy_cuda_pooling: one thread per output element. */
static void
emulate (emu *e)
{
  const int64_t n = hy_shape_numel (&e->got[0]->shape);
  if (n == 0)
    return;
  const hy_cuda_pool_args g = hy_cuda_pool_plan (
      (const hy_pool_params *) e->params, &e->in[0]->shape,
      &e->got[0]->shape);
  for (int64_t i = 0; i < n; i++)
    e->got[0]->data[i] = hy_cuda_pool_one (&g, e->in[0]->data, i);
}

/* Input 0 given NaN, +inf and -inf at scattered positions and a run of
 * each long enough to fill whole windows/rows, then the CPU kernel run
 * again on it: MXNet's NaN semantics (max pooling skips NaN and starts
 * from -FLT_MAX; a softmax row with a NaN or an inf is NaN) must hold on
 * both sides alike. */
static void
sprinkle_specials (emu *e)
{
  static const float sp[] = { NAN, INFINITY, -INFINITY };
  float *x = e->in[0]->data;
  const int64_t n = numel (e->in[0]);
  for (int64_t i = 0; i < n; i++) {
    if ((i * 7 + i / 13) % 9 == 4)
      x[i] = sp[(i / 9) % 3];
    else if (i / 16 % 8 >= 5)   /* runs of 16 of one value */
      x[i] = sp[i / 16 % 8 - 5];
  }
  emu_run_cpu (e);
  g_strlcat (e->name, " NaN/inf", sizeof e->name);
}

static void
run (const char *const *kv, hy_shape in)
{
  emu_run (emulate, "Pooling", kv, &in, 1, -1.0f, 1.0f);
  emu e;
  if (!emu_setup (&e, "Pooling", kv, &in, 1, -1.0f, 1.0f))
    return;
  sprinkle_specials (&e);
  emulate (&e);
  emu_finish (&e);
}

/* ---- cases -------------------------------------------------------------- */

static const char *const types[] = { "max", "avg", "sum" };

static void
pool_2d_cases (void)
{
  for (int t = 0; t < 3; t++) {
    const char *pt = types[t];
    run (KV ("pool_type", pt, "kernel", "(2, 2)", "stride", "(2, 2)"),
        S (2, 3, 8, 8));
    run (KV ("pool_type", pt, "kernel", "(3, 3)", "stride", "(2, 2)",
            "pad", "(1, 1)"), S (2, 3, 7, 9));
    run (KV ("pool_type", pt, "kernel", "(3, 3)", "stride", "(1, 1)",
            "pad", "(1, 1)", "count_include_pad", "False"), S (1, 4, 5, 6));
    run (KV ("pool_type", pt, "kernel", "(3, 2)", "stride", "(2, 3)",
            "pad", "(1, 1)", "pooling_convention", "full"), S (2, 2, 9, 10));
    run (KV ("pool_type", pt, "kernel", "(3, 3)", "stride", "(2, 2)",
            "pad", "(1, 1)", "pooling_convention", "full",
            "count_include_pad", "False"), S (1, 3, 8, 8));
    run (KV ("pool_type", pt, "kernel", "(2, 3)", "stride", "(3, 2)",
            "pooling_convention", "valid"), S (3, 2, 11, 7));
    run (KV ("pool_type", pt, "kernel", "(1, 1)", "stride", "(3, 3)",
            "pooling_convention", "full"), S (1, 2, 5, 5));
    run (KV ("pool_type", pt, "kernel", "(7, 7)", "stride", "(1, 1)"),
        S (2, 8, 7, 7));
    run (KV ("pool_type", pt, "kernel", "(3, 3)", "stride", "(2, 2)",
            "pad", "(2, 2)", "count_include_pad", "None"), S (1, 2, 6, 5));
    run (KV ("pool_type", pt, "global_pool", "True"), S (2, 5, 7, 7));
    run (KV ("pool_type", pt, "kernel", "(3, 3)", "global_pool", "True"),
        S (3, 4, 5, 6));
  }
  /* ResNet's stem and a 1x1 spatial map. */
  run (KV ("pool_type", "max", "kernel", "(3, 3)", "stride", "(2, 2)",
          "pad", "(1, 1)"), S (1, 16, 56, 56));
  run (KV ("pool_type", "avg", "kernel", "(1, 1)"), S (2, 3, 1, 1));
}

static void
pool_lp_cases (void)
{
  for (int p = 1; p <= 3; p++) {
    const char *pv = p == 1 ? "1" : p == 2 ? "2" : "3";
    run (KV ("pool_type", "lp", "p_value", pv, "kernel", "(2, 2)",
            "stride", "(2, 2)"), S (2, 3, 6, 6));
    run (KV ("pool_type", "lp", "p_value", pv, "kernel", "(3, 3)",
            "stride", "(2, 2)", "pad", "(1, 1)", "pooling_convention",
            "full"), S (1, 2, 7, 8));
    run (KV ("pool_type", "lp", "p_value", pv, "kernel", "(3,)",
            "stride", "(2,)"), S (2, 3, 9));
    run (KV ("pool_type", "lp", "p_value", pv, "kernel", "(2, 2, 2)"),
        S (1, 2, 4, 4, 4));
    run (KV ("pool_type", "lp", "p_value", pv, "global_pool", "True"),
        S (2, 3, 5, 5));
  }
}

static void
pool_1d_3d_cases (void)
{
  for (int t = 0; t < 3; t++) {
    const char *pt = types[t];
    run (KV ("pool_type", pt, "kernel", "(3,)", "stride", "(2,)"),
        S (2, 3, 11));
    run (KV ("pool_type", pt, "kernel", "(4,)", "stride", "(3,)", "pad",
            "(2,)", "pooling_convention", "full"), S (2, 2, 10));
    run (KV ("pool_type", pt, "kernel", "(3,)", "pad", "(1,)",
            "count_include_pad", "False"), S (1, 3, 7));
    run (KV ("pool_type", pt, "global_pool", "True"), S (2, 4, 9));
    run (KV ("pool_type", pt, "kernel", "(2, 2, 2)", "stride", "(2, 2, 2)"),
        S (2, 2, 4, 6, 6));
    run (KV ("pool_type", pt, "kernel", "(3, 3, 3)", "stride", "(2, 2, 2)",
            "pad", "(1, 1, 1)"), S (1, 2, 5, 6, 7));
    run (KV ("pool_type", pt, "kernel", "(3, 2, 3)", "stride", "(2, 2, 1)",
            "pad", "(1, 0, 1)", "pooling_convention", "full",
            "count_include_pad", "False"), S (1, 3, 6, 5, 4));
    run (KV ("pool_type", pt, "global_pool", "True"), S (2, 3, 3, 4, 5));
  }
  /* 'same': 1-D max pooling only. */
  run (KV ("pool_type", "max", "kernel", "(3,)", "stride", "(2,)",
          "pooling_convention", "same"), S (2, 3, 10));
  run (KV ("pool_type", "max", "kernel", "(4,)", "stride", "(1,)",
          "pooling_convention", "same"), S (1, 2, 7));
  run (KV ("pool_type", "max", "kernel", "(2,)", "stride", "(3,)",
          "pooling_convention", "same"), S (1, 2, 8));
}

int
main (void)
{
  pool_2d_cases ();
  pool_lp_cases ();
  pool_1d_3d_cases ();
  return emu_summary ();
}
