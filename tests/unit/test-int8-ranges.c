/*
 * test-int8-ranges.c — an int8 convolution whose data range changes
 * between the forwards of one hybrid executor gives MXNet's result for
 * each range.
 *
 * Why: the fused oneDNN int8 convolution bakes its scales and int32 bias
 * into a primitive made on the first forward, for that forward's ranges
 * (kernels/cpu/quantized/conv-dnnl-int8.c), and skips recomputing them
 * while the ranges stay; a forward with another range must take the
 * other path, and one with the first range again the primitive again.
 * A calibrated export never changes a range, so the case is made for it:
 * gen_int8_ranges.py feeds one convolution's range from two graph inputs
 * and has real MXNet 1.9.1 compute the outputs of the calibrated range,
 * a wider one and the calibrated one again, in that order
 * (HY_INT8_RANGES names its directory).
 */
#include <math.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include "hybrid.h"
#include "hybrid-npy.h"

/* The layers' integers are MXNet's exactly; the last fp32 scale rounds
 * within 1e-6 (as test-plan-alloc.c's int8 checks). */
#define INT8_VS_MXNET_TOL 1e-5

static hy_tensor *
load_npy (const char *dir, const char *file)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (dir, file, NULL);
  hy_tensor *t = hy_npy_load (path, &error);
  g_assert_no_error (error);
  return t;
}

/* max|a − b| over max(1, max|b|) */
static double
relative_diff (const hy_tensor *a, const hy_tensor *b)
{
  g_assert_true (hy_shape_equal (&a->shape, &b->shape));
  double diff = 0, ref = 0;
  for (int64_t i = 0; i < hy_shape_numel (&a->shape); i++) {
    diff = MAX (diff, fabs ((double) a->data[i] - b->data[i]));
    ref = MAX (ref, fabs ((double) b->data[i]));
  }
  return diff / MAX (1.0, ref);
}

static void
test_range_change (void)
{
  const char *dir = g_getenv ("HY_INT8_RANGES");
  g_assert_nonnull (dir);
  g_autoptr (GError) error = NULL;
  g_autofree char *sym = g_build_filename (dir, "model-symbol.json", NULL);
  g_autofree char *par = g_build_filename (dir, "model-0000.params", NULL);
  g_autofree char *spec = g_build_filename (dir, "forwards.json", NULL);
  hy_model *model = hy_model_load (sym, par, &error);
  g_assert_no_error (error);
  g_autoptr (JsonParser) parser = json_parser_new ();
  json_parser_load_from_file (parser, spec, &error);
  g_assert_no_error (error);
  JsonArray *forwards = json_object_get_array_member (
      json_node_get_object (json_parser_get_root (parser)), "forwards");
  g_assert_cmpint ((int) json_array_get_length (forwards), ==, 3);

  hy_device cpu = { HY_DEVICE_CPU, 0 };
  hy_executor *exec = hy_executor_new (model, cpu, HY_MODE_HYBRID, &error);
  g_assert_no_error (error);
  const int n_in = hy_model_n_inputs (model);
  for (guint k = 0; k < json_array_get_length (forwards); k++) {
    JsonObject *fw = json_array_get_object_element (forwards, k);
    JsonArray *ins = json_object_get_array_member (fw, "inputs");
    g_assert_cmpint ((int) json_array_get_length (ins), ==, n_in);
    g_autoptr (GPtrArray) inputs = g_ptr_array_new_full (n_in,
        (GDestroyNotify) hy_tensor_free);
    g_ptr_array_set_size (inputs, n_in);
    for (int i = 0; i < n_in; i++) {
      JsonObject *o = json_array_get_object_element (ins, i);
      int at = hy_model_input_index (model,
          json_object_get_string_member (o, "name"));
      g_assert_cmpint (at, >=, 0);
      g_ptr_array_index (inputs, at) = load_npy (dir,
          json_object_get_string_member (o, "file"));
    }
    gboolean ok = hy_executor_forward (exec,
        (const hy_tensor *const *) inputs->pdata, n_in, &error);
    g_assert_no_error (error);
    g_assert_true (ok);
    hy_tensor *want = load_npy (dir,
        json_object_get_string_member (fw, "output"));
    const hy_tensor *got = hy_executor_output (exec, 0);
    double diff = relative_diff (got, want);
    g_test_message ("forward %u: max|diff| / max(1, max|MXNet|) = %g", k,
        diff);
    if (!(diff <= INT8_VS_MXNET_TOL))
      g_error ("forward %u (range %s): %g from MXNet's output, over %g", k,
          k == 1 ? "wider" : "calibrated", diff, INT8_VS_MXNET_TOL);
    hy_tensor_free (want);
  }
  hy_executor_free (exec);
  hy_model_free (model);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/int8-ranges/range-change", test_range_change);
  return g_test_run ();
}
