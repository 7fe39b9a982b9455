/*
 * emulate-softmax.cu — the CUDA softmax kernel (softmax.cu: softmax,
 * log_softmax, SoftmaxActivation, SoftmaxOutput) emulated on the host
 * against the CPU kernel: for each case the op is parsed and its shapes
 * inferred by the core, random inputs go through hy_cpu_kernel_for, and
 * the CUDA side's host planning plus its row function (softmax.cuh) are
 * run over every row, as the launch would — once into a separate output
 * and once in place.  No GPU needed (launch.cuh).
 *
 * One line per case; exits 1 if any case failed.
 */
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/softmax.cuh"
#include "emulate-harness.h"

/* ---- the CUDA side, emulated -------------------------------------------- */

/* hy_cuda_softmax: one thread per row, into y (which may be x's data). */
static void
emulate_into (emu *e, const float *x, float *y)
{
  if (hy_shape_numel (&e->in[0]->shape) == 0)
    return;
  int64_t rows;
  const hy_cuda_softmax_args m = hy_cuda_softmax_plan (
      (const hy_softmax_params *) e->params, &e->in[0]->shape, &rows);
  for (int64_t r = 0; r < rows; r++)
    hy_cuda_softmax_row (&m, x, y, r);
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

/* Runs the case three times: out of place, in place (the planner may give
 * softmax its input's buffer), and with special values among the inputs. */
static void
run (const char *op, const char *const *kv,
    std::initializer_list<hy_shape> in, float range)
{
  /* Plain, in place, then plain with special values among the inputs. */
  for (int inplace = 0; inplace < 3; inplace++) {
    emu e;
    const uint64_t seed = emu_rng;
    if (!emu_setup (&e, op, kv, in.begin (), (int) in.size (), -range,
            range))
      return;
    if (inplace == 2) {
      sprinkle_specials (&e);
      emulate_into (&e, e.in[0]->data, e.got[0]->data);
    } else if (!inplace) {
      emulate_into (&e, e.in[0]->data, e.got[0]->data);
      emu_rng = seed;           /* the same inputs in place */
    } else {
      float *buf = e.got[0]->data;
      memcpy (buf, e.in[0]->data, hy_tensor_nbytes (e.in[0]));
      emulate_into (&e, buf, buf);
      g_strlcat (e.name, " in place", sizeof e.name);
    }
    emu_finish (&e);
  }
}

/* ---- cases -------------------------------------------------------------- */

static void
softmax_cases (void)
{
  static const char *const ops[] = { "softmax", "log_softmax" };
  for (int k = 0; k < 2; k++) {
    const char *op = ops[k];
    run (op, NULL, { S (10) }, 3.0f);
    run (op, NULL, { S (4, 1000) }, 10.0f);
    run (op, KV ("axis", "-1"), { S (2, 3, 17) }, 3.0f);
    run (op, KV ("axis", "0"), { S (5, 7) }, 3.0f);
    run (op, KV ("axis", "1"), { S (2, 5, 3, 3) }, 3.0f);
    run (op, KV ("axis", "-3"), { S (2, 5, 3, 3) }, 3.0f);
    run (op, KV ("axis", "2"), { S (2, 3, 4, 5, 6) }, 3.0f);
    run (op, KV ("axis", "1"), { S (3, 1, 4) }, 3.0f);
    run (op, KV ("axis", "-1", "temperature", "2.5"), { S (3, 9) }, 3.0f);
    run (op, KV ("axis", "1", "temperature", "0.5"), { S (2, 6, 5) }, 3.0f);
    run (op, KV ("temperature", "None"), { S (3, 8) }, 3.0f);
    /* Large logits: the max subtraction keeps exp finite. */
    run (op, KV ("axis", "-1"), { S (3, 50) }, 80.0f);
  }
  run ("SoftmaxActivation", NULL, { S (4, 10) }, 3.0f);
  run ("SoftmaxActivation", KV ("mode", "instance"), { S (2, 3, 4) }, 3.0f);
  run ("SoftmaxActivation", KV ("mode", "channel"), { S (2, 6, 3, 3) },
      3.0f);
  run ("SoftmaxOutput", NULL, { S (4, 10), S (4) }, 3.0f);
  run ("SoftmaxOutput", NULL, { S (2, 3, 4, 5), S (2) }, 3.0f);
  run ("Softmax", NULL, { S (3, 1000), S (3) }, 10.0f);
  run ("SoftmaxOutput", KV ("multi_output", "True"),
      { S (2, 5, 4), S (2, 4) }, 3.0f);
  run ("SoftmaxOutput", KV ("preserve_shape", "True"),
      { S (2, 3, 6), S (2, 3) }, 3.0f);
}

int
main (void)
{
  softmax_cases ();
  return emu_summary ();
}
