/*
 * test-qlut-bytes.c — an int8 model's hard sigmoid held as bytes runs as
 * one look-up in hybrid mode (kernels/cpu/quantized/qlut-bytes.h), and
 * its output is imperative mode's, which runs every op of the chain by
 * itself, bit for bit: int8 and uint8 on either side, the scalar ops
 * MXNet may write (÷ 6 or · 1/6), a clip that is a ReLU6, values beyond
 * the calibrated range on both sides.
 */
#include <string.h>

#include "hybrid.h"
#include "qlut-chain.h"

static hy_executor *
executor (hy_model *model, hy_mode mode)
{
  g_autoptr (GError) error = NULL;
  hy_device cpu = { HY_DEVICE_CPU, 0 };
  hy_executor *exec = hy_executor_new (model, cpu, mode, &error);
  g_assert_no_error (error);
  return exec;
}

static void
forward (hy_executor *exec, const hy_tensor *x)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (hy_executor_forward (exec, (const hy_tensor *const *) &x, 1,
          &error));
  g_assert_no_error (error);
}

/* The hybrid plan's calls that ran on bytes, and those of them that ran
 * the chain as one look-up (on node q1, the chain's last). */
static void
count_byte_calls (hy_executor *exec, const hy_tensor *x, int *bytes,
    int *lut, int *calls)
{
  g_autoptr (GError) error = NULL;
  const hy_layer_profile *layers;
  int n = 0;
  g_assert_true (hy_executor_profile (exec, (const hy_tensor *const *) &x,
          1, 1, &layers, &n, &error));
  g_assert_no_error (error);
  *bytes = *lut = 0;
  *calls = n;
  for (int i = 0; i < n; i++) {
    if (layers[i].kernel && g_str_has_prefix (layers[i].kernel, "int8-bytes"))
      (*bytes)++;
    if (layers[i].kernel && !strcmp (layers[i].kernel, "int8-bytes-lut")) {
      g_assert_cmpstr (layers[i].node, ==, "q1");
      (*lut)++;
    }
  }
}

static void
check_chain (const qlut_chain *c, int64_t C, int64_t H, int64_t W)
{
  hy_model *model = qlut_chain_model (c);
  /* beyond the first quantize_v2's range on both sides: its saturated
   * bytes too */
  const float span = c->in_max - c->in_min;
  hy_tensor *x = qlut_chain_input (C, H, W, c->in_min - span / 4,
      c->in_max + span / 4);
  hy_executor *hyb = executor (model, HY_MODE_HYBRID);
  hy_executor *imp = executor (model, HY_MODE_IMPERATIVE);
  for (int r = 0; r < 2; r++) {
    forward (hyb, x);
    forward (imp, x);
    const hy_tensor *a = hy_executor_output (hyb, 0);
    const hy_tensor *b = hy_executor_output (imp, 0);
    g_assert_true (hy_shape_equal (&a->shape, &b->shape));
    const int64_t n = hy_shape_numel (&a->shape);
    for (int64_t i = 0; i < n; i++)
      if (memcmp (&a->data[i], &b->data[i], sizeof (float)))
        g_error ("%s ... %s: element %" G_GINT64_FORMAT " hybrid %.9g, "
            "imperative %.9g", c->first, c->last, i, a->data[i], b->data[i]);
  }
  int bytes, lut, calls;
  count_byte_calls (hyb, x, &bytes, &lut, &calls);
  /* where int8 values are held as bytes (oneDNN's int8 on, the default
   * where built in), the chain is one call: quantize, the look-up,
   * dequantize; else every op runs on planes */
  if (bytes > 0) {
    g_assert_cmpint (lut, ==, 1);
    g_assert_cmpint (calls, ==, 3);
  } else {
    g_assert_cmpint (lut, ==, 0);
  }
  g_test_message ("%s %s ... %s %s (1, %" G_GINT64_FORMAT ", %"
      G_GINT64_FORMAT ", %" G_GINT64_FORMAT "): %d calls, %d as one "
      "look-up; hybrid = imperative bit for bit", c->in_type, c->first,
      c->last, c->out_type, C, H, W, calls, lut);
  hy_executor_free (imp);
  hy_executor_free (hyb);
  hy_tensor_free (x);
  hy_model_free (model);
}

static void
test_hard_sigmoid (void)
{
  const qlut_chain c = QLUT_HARD_SIGMOID;
  check_chain (&c, 16, 9, 9);
  check_chain (&c, 960, 1, 1);  /* a squeeze-excitation's gate */
}

static void
test_variants (void)
{
  const qlut_chain chains[] = {
    /* uint8 in (after a ReLU), · 1/6 */
    { "uint8", 0.0f, 5.0f, "_plus_scalar", "3", 0.0f, 6.0f, "_mul_scalar",
      "0.16666667", "int8", 0.0f, 1.0f },
    /* uint8 out, an odd range, a ReLU6-like clip then a shift */
    { "int8", -2.7f, 3.3f, "_mul_scalar", "1.7", 0.0f, 6.0f,
      "_minus_scalar", "0.5", "uint8", 0.0f, 5.2f },
    /* a range the chain overflows: the second quantize saturates */
    { "int8", -10.0f, 10.0f, "_plus_scalar", "3.0", -1.0f, 6.0f,
      "_div_scalar", "6.0", "int8", -0.05f, 0.5f },
  };
  for (guint i = 0; i < G_N_ELEMENTS (chains); i++)
    check_chain (&chains[i], 24, 7, 5);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/qlut-bytes/hard-sigmoid", test_hard_sigmoid);
  g_test_add_func ("/qlut-bytes/variants", test_variants);
  return g_test_run ();
}
