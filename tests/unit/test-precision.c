/*
 * test-precision.c — choosing a precision on the CPU backend:
 *
 *  - "bf16" and "bfloat16" parse, and an unknown name lists the three;
 *  - fp16 on the CPU is refused, naming the CUDA device it needs;
 *  - bf16 on a CPU with AVX512_BF16 is taken: seed_net's output then
 *    differs from fp32's (the bf16 path really runs) by no more than the
 *    bf16 tolerance, and going back to fp32 gives fp32's output exactly
 *    (the plans are rebuilt);
 *  - bf16 on a CPU without AVX512_BF16 is refused with the message the
 *    user sees.  Run again with HYBRIDINFER_NO_BF16=1 (tests/meson.build),
 *    which hides the feature, so that this is checked on every machine;
 *    on such a CPU the run without it checks the same.
 *
 * Accuracy against MXNet is test-conformance's (--precision bf16).
 */
#include <math.h>
#include <string.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include "hybrid.h"
#include "hybrid-npy.h"
#include "kernels/cpu/cpu-features.h"

/* 2^-7 · 16, relative to max(1, max|fp32|): test-conformance.c's. */
#define BF16_TOL (16.0 / 128.0)

static void
test_parse (void)
{
  hy_precision p = HY_PRECISION_FP32;
  g_assert_true (hy_precision_parse ("bf16", &p, NULL));
  g_assert_cmpint (p, ==, HY_PRECISION_BF16);
  p = HY_PRECISION_FP32;
  g_assert_true (hy_precision_parse ("bfloat16", &p, NULL));
  g_assert_cmpint (p, ==, HY_PRECISION_BF16);
  g_autoptr (GError) error = NULL;
  g_assert_false (hy_precision_parse ("fp8", &p, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "fp32, fp16, bf16"));
}

typedef struct seed_net {
  hy_model *model;
  hy_tensor *input;
} seed_net;

static seed_net
load_seed_net (void)
{
  const char *src = g_getenv ("HY_SOURCE_DIR");
  g_autofree char *dir = g_build_filename (src ? src : ".", "tests",
      "fixtures", "seed_net", NULL);
  g_autofree char *sym = g_build_filename (dir, "model-symbol.json", NULL);
  g_autofree char *par = g_build_filename (dir, "model-0000.params", NULL);
  g_autofree char *in = g_build_filename (dir, "input0.npy", NULL);
  g_autoptr (GError) error = NULL;
  seed_net s = { hy_model_load (sym, par, &error), NULL };
  g_assert_no_error (error);
  s.input = hy_npy_load (in, &error);
  g_assert_no_error (error);
  return s;
}

/* A copy of output 0 after one forward. */
static hy_tensor *
forward_copy (hy_executor *exec, const hy_tensor *input)
{
  g_autoptr (GError) error = NULL;
  const hy_tensor *in[1] = { input };
  g_assert_true (hy_executor_forward (exec, in, 1, &error));
  g_assert_no_error (error);
  const hy_tensor *out = hy_executor_output (exec, 0);
  hy_tensor *copy = hy_tensor_new (&out->shape);
  memcpy (copy->data, out->data, hy_tensor_nbytes (out));
  return copy;
}

static void
test_cpu (void)
{
  seed_net s = load_seed_net ();
  const hy_device cpu = { HY_DEVICE_CPU, 0 };
  g_autoptr (GError) error = NULL;
  hy_executor *exec = hy_executor_new (s.model, cpu, HY_MODE_HYBRID,
      &error);
  g_assert_no_error (error);
  hy_tensor *fp32 = forward_copy (exec, s.input);

  g_assert_false (hy_executor_set_precision (exec, HY_PRECISION_FP16,
          &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message,
          "precision fp16 needs a CUDA device"));
  g_clear_error (&error);

  const gboolean has_bf16 = hy_cpu_features_get ()->avx512_bf16;
  const gboolean ok = hy_executor_set_precision (exec, HY_PRECISION_BF16,
      &error);
  if (!has_bf16) {
    /* The refusal, word for word: what `--precision bf16` prints. */
    g_assert_false (ok);
    g_assert_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED);
    g_assert_cmpstr (error->message, ==, "precision bf16 needs a CPU with "
        "AVX512_BF16; this one has none");
    g_test_message ("refused: %s", error->message);
  } else {
    g_assert_no_error (error);
    g_assert_true (ok);
    hy_tensor *bf16 = forward_copy (exec, s.input);
    double diff = 0, ref = 0;
    for (int64_t i = 0; i < hy_shape_numel (&fp32->shape); i++) {
      diff = MAX (diff, fabs ((double) bf16->data[i] - fp32->data[i]));
      ref = MAX (ref, fabs ((double) fp32->data[i]));
    }
    g_test_message ("bf16 against fp32: max|d| %g, max|fp32| %g", diff,
        ref);
    g_assert_cmpfloat (diff, >, 0.0);
    g_assert_cmpfloat (diff, <=, BF16_TOL * MAX (1.0, ref));
    hy_tensor_free (bf16);

    g_assert_true (hy_executor_set_precision (exec, HY_PRECISION_FP32,
            &error));
    g_assert_no_error (error);
    hy_tensor *again = forward_copy (exec, s.input);
    g_assert_cmpmem (again->data, hy_tensor_nbytes (again), fp32->data,
        hy_tensor_nbytes (fp32));
    hy_tensor_free (again);
  }
  hy_tensor_free (fp32);
  hy_executor_free (exec);
  hy_tensor_free (s.input);
  hy_model_free (s.model);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/precision/parse", test_parse);
  g_test_add_func ("/precision/cpu", test_cpu);
  return g_test_run ();
}
