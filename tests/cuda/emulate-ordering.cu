/*
 * emulate-ordering.cu — the CUDA topk/sort/argsort kernel (ordering.cu)
 * emulated on the host against the CPU kernel.  Both order a row with the
 * same steps (kernels/ordering-common.h; the conformance fixtures check
 * those against MXNet): what this checks is the kernel's own part, every
 * row run with its own positions in the workspace as the kernel's threads
 * do, whose values, indices and masks must be the CPU's exactly,
 * ties included — inputs are rounded to a coarse step so that rows have
 * many equal values, and some carry NaN.  Rows of up to 16 values take
 * the insertion sort only, longer ones introsort, and k·8 <= n the
 * partial (heap) sort.  No GPU needed (launch.cuh).
 *
 * One line per case; exits 1 if any case failed.
 */
#include <vector>

#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ordering.cuh"
#include "emulate-harness.h"

/* ---- the CUDA side, emulated -------------------------------------------- */

static void
emulate (emu *e)
{
  const hy_order_args a = hy_order_plan (
      (const hy_ordering_params *) e->params, &e->in[0]->shape);
  if (a.rows == 0 || a.n == 0)
    return;
  std::vector<int64_t> pos (hy_cuda_order_workspace (&a) / sizeof (int64_t));
  for (int64_t r = 0; r < a.rows; r++)
    hy_order_one_row (&a, e->in[0]->data, e->got[0]->data,
        e->n_out > 1 ? e->got[1]->data : NULL, pos.data () + r * a.n, r);
}

static void
run (const char *op, const char *const *kv, hy_shape in)
{
  emu_run (emulate, op, kv, &in, 1, -4.0f, 4.0f);
}

/* ---- cases -------------------------------------------------------------- */

static void
cases (void)
{
  static const char *const rets[] = { "value", "indices", "mask", "both" };
  static const char *const asc[] = { "False", "True" };
  for (int r = 0; r < 4; r++) {
    for (int s = 0; s < 2; s++) {
      run ("topk", KV ("k", "3", "ret_typ", rets[r], "is_ascend", asc[s]),
          S (4, 10));
      run ("topk", KV ("k", "5", "ret_typ", rets[r], "is_ascend", asc[s]),
          S (3, 200));           /* k·8 <= n: the heap sort */
      run ("topk", KV ("k", "40", "ret_typ", rets[r], "is_ascend", asc[s]),
          S (2, 300));           /* k·8 > n: introsort */
      run ("topk", KV ("k", "2", "axis", "1", "ret_typ", rets[r],
              "is_ascend", asc[s]), S (2, 37, 3));
      run ("topk", KV ("k", "4", "axis", "None", "ret_typ", rets[r],
              "is_ascend", asc[s]), S (3, 11));
    }
  }
  /* The partial/full boundary: k·8 == n and n - 1. */
  run ("topk", KV ("k", "8", "ret_typ", "both"), S (2, 64));
  run ("topk", KV ("k", "8", "ret_typ", "both"), S (2, 63));
  run ("topk", KV ("k", "1"), S (5, 1000));
  run ("topk", KV ("k", "0", "ret_typ", "indices"), S (3, 17));
  run ("topk", KV ("k", "-1", "ret_typ", "indices", "axis", "0"),
      S (40, 3));
  for (int s = 0; s < 2; s++) {
    run ("sort", KV ("is_ascend", asc[s]), S (3, 16));
    run ("sort", KV ("is_ascend", asc[s]), S (3, 17));
    run ("sort", KV ("is_ascend", asc[s], "axis", "0"), S (500, 2));
    run ("argsort", KV ("is_ascend", asc[s]), S (6, 129));
    run ("argsort", KV ("is_ascend", asc[s], "axis", "-2"), S (2, 90, 4));
    run ("argsort", KV ("is_ascend", asc[s], "axis", "None"), S (7, 61));
    run ("argsort", KV ("is_ascend", asc[s]), S (1, 5000));
  }
  run ("argsort", NULL, S (1, 1));
  run ("sort", NULL, S (2, 0, 3));
}

int
main (void)
{
  /* Few distinct values: long runs of ties. */
  emu_quantum = 1.0f;
  cases ();
  /* Finer ties, and NaN every 7th value. */
  emu_quantum = 0.25f;
  emu_nan_every = 7;
  cases ();
  emu_nan_every = 0;
  emu_quantum = 0.0f;
  run ("argsort", NULL, S (4, 333));
  run ("topk", KV ("k", "10", "ret_typ", "both"), S (4, 333));
  return emu_summary ();
}
