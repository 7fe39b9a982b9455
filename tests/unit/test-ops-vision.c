/*
 * test-ops-vision.c — inputs of the vision ops that MXNet 1.9.1 reads
 * outside its arrays for, and what we do instead, in both modes:
 *
 *  - _contrib_BilinearResize2D on data with no pixels (a zero height or
 *    width) into a non-empty output: MXNet crashes in every mode; we
 *    refuse the shape, naming node and op, where before hybrid mode gave
 *    the arena's leftovers and imperative mode zeros.  With no planes the
 *    output is empty, as MXNet gives it.
 *  - _contrib_ROIAlign with a batch index that is NaN or too large for
 *    an integer: the row is zeros (as for any index outside the batch),
 *    with no out-of-range float conversion, and the other rows are what
 *    they are without the bad rows.
 *
 * Values computed by these ops are checked against MXNet by the
 * conformance fixtures (op_BilinearResize2D_*, op_ROIAlign_*); this file
 * compares our own runs with each other only.
 */
#include <math.h>
#include <string.h>

#include "hybrid.h"
#include "op-checks.h"

/* ---- BilinearResize2D on data without pixels ---------------------------- */

static void
test_resize_empty_shapes (void)
{
  const char *op = "_contrib_BilinearResize2D";
  hy_shape like[2] = { SHAPE (1, 2, 0, 4), SHAPE (1, 1, 3, 3) };
  expect_error (op, KV ("mode", "like"), like, 2,
      "data of shape (1, 2, 0, 4) has no pixels to resize into a 3 x 3 "
      "output");
  hy_shape no_width[2] = { SHAPE (2, 1, 5, 0), SHAPE (1, 1, 3, 3) };
  expect_error (op, KV ("mode", "like"), no_width, 2, "has no pixels");
  hy_shape sized = SHAPE (1, 1, 0, 4);
  expect_error (op, KV ("height", "3", "width", "3"), &sized, 1,
      "has no pixels");
  /* No planes: nothing is read, the output is as empty as MXNet's. */
  hy_shape no_planes[2] = { SHAPE (0, 1, 0, 2), SHAPE (1, 1, 3, 3) };
  expect_shape (op, KV ("mode", "like"), no_planes, 2, "(0, 1, 3, 3)");
  hy_shape no_channels[2] = { SHAPE (1, 0, 2, 2), SHAPE (1, 1, 3, 4) };
  expect_shape (op, KV ("mode", "like"), no_channels, 2, "(1, 0, 3, 4)");
}

/* The fuzzer's graph: an empty slice of x resized like a transpose of x.
 * The transposes ahead of the resize leave values in the arena where its
 * output is planned, so an unwritten output showed them in hybrid mode. */
static const char resize_json[] = "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
    "{\"op\": \"_plus_scalar\", \"name\": \"p\", \"attrs\": {\"scalar\":"
    " \"5\"}, \"inputs\": [[0, 0, 0]]},"
    "{\"op\": \"transpose\", \"name\": \"q\", \"attrs\": {\"axes\":"
    " \"(0, 1, 3, 2)\"}, \"inputs\": [[1, 0, 0]]},"
    "{\"op\": \"transpose\", \"name\": \"s\", \"attrs\": {\"axes\":"
    " \"(0, 1, 3, 2)\"}, \"inputs\": [[2, 0, 0]]},"
    "{\"op\": \"slice\", \"name\": \"none\", \"attrs\": {\"begin\":"
    " \"(None, None, 1)\", \"end\": \"(None, None, 1)\"},"
    " \"inputs\": [[0, 0, 0]]},"
    "{\"op\": \"_contrib_BilinearResize2D\", \"name\": \"grow\","
    " \"attrs\": {\"mode\": \"like\"}, \"inputs\": [[4, 0, 0], [3, 0, 0]]},"
    "{\"op\": \"transpose\", \"name\": \"t\", \"attrs\": {\"axes\":"
    " \"(0, 1, 3, 2)\"}, \"inputs\": [[5, 0, 0]]}],"
    "\"arg_nodes\": [0], \"heads\": [[6, 0, 0]]}";

static void
test_resize_empty_model (gconstpointer mode_ptr)
{
  hy_mode mode = GPOINTER_TO_INT (mode_ptr);
  g_autoptr (GError) error = NULL;
  hy_model *model = load_json (resize_json, &error);
  g_assert_no_error (error);
  hy_device cpu = { HY_DEVICE_CPU, 0 };
  hy_executor *exec = hy_executor_new (model, cpu, mode, &error);
  hy_shape x_shape = SHAPE (1, 2, 3, 3);
  hy_tensor *x = hy_tensor_new (&x_shape);
  for (int i = 0; i < 18; i++)
    x->data[i] = (float) i;
  /* Shapes are fixed when the executor is made (hybrid) or at the first
   * forward (imperative): either one is refused, naming node and op. */
  if (exec) {
    const hy_tensor *in[1] = { x };
    g_assert_false (hy_executor_forward (exec, in, 1, &error));
  }
  g_assert_error (error, HY_ERROR, HY_ERROR_SHAPE);
  if (!strstr (error->message, "node 'grow' (op _contrib_BilinearResize2D)")
      || !strstr (error->message, "data of shape (1, 2, 0, 3) has no "
          "pixels"))
    g_error ("message \"%s\" lacks the node, op or shape", error->message);
  hy_tensor_free (x);
  if (exec)
    hy_executor_free (exec);
  hy_model_free (model);
}

/* ---- ROIAlign batch indices that are no integer ------------------------- */

static const char roi_json[] = "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"rois\", \"inputs\": []},"
    "{\"op\": \"_contrib_ROIAlign\", \"name\": \"pool\", \"attrs\":"
    " {\"pooled_size\": \"(2, 3)\", \"spatial_scale\": \"0.5\","
    " \"sample_ratio\": \"2\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]}],"
    "\"arg_nodes\": [0, 1], \"heads\": [[2, 0, 0]]}";

enum { ROI_N = 2, ROI_C = 3, ROI_H = 6, ROI_W = 7, ROI_BINS = 2 * 3 };

/* ROIAlign "pool" over data (2, 3, 6, 7) for the given ROI rows. */
static hy_tensor *
run_rois (hy_mode mode, const float (*rows)[5], int n_rows)
{
  g_autoptr (GError) error = NULL;
  hy_model *model = load_json (roi_json, &error);
  g_assert_no_error (error);
  hy_device cpu = { HY_DEVICE_CPU, 0 };
  hy_executor *exec = hy_executor_new (model, cpu, mode, &error);
  g_assert_no_error (error);
  hy_shape data_shape = SHAPE (ROI_N, ROI_C, ROI_H, ROI_W);
  hy_shape rois_shape = SHAPE (n_rows, 5);
  hy_tensor *data = hy_tensor_new (&data_shape);
  for (int i = 0; i < ROI_N * ROI_C * ROI_H * ROI_W; i++)
    data->data[i] = (float) ((i * 37) % 101) / 7.0f - 3.0f;
  hy_tensor *rois = hy_tensor_new (&rois_shape);
  memcpy (rois->data, rows, sizeof (float[5]) * (size_t) n_rows);
  const hy_tensor *in[2] = { data, rois };
  g_assert_true (hy_executor_forward (exec, in, 2, &error));
  g_assert_no_error (error);
  const hy_tensor *out = hy_executor_output (exec, 0);
  g_assert_cmpint (hy_shape_numel (&out->shape), ==,
      (int64_t) n_rows * ROI_C * ROI_BINS);
  hy_tensor *copy = hy_tensor_new (&out->shape);
  memcpy (copy->data, out->data,
      (size_t) hy_shape_numel (&out->shape) * sizeof (float));
  hy_tensor_free (rois);
  hy_tensor_free (data);
  hy_executor_free (exec);
  hy_model_free (model);
  return copy;
}

static void
test_roi_align_bad_batch_index (gconstpointer mode_ptr)
{
  hy_mode mode = GPOINTER_TO_INT (mode_ptr);
  const float rows[][5] = {
    { 1.0f, 1.5f, 2.0f, 9.0f, 8.5f },
    { NAN, 1.0f, 1.0f, 6.0f, 6.0f },
    { 1e30f, 1.0f, 1.0f, 6.0f, 6.0f },
    { INFINITY, 1.0f, 1.0f, 6.0f, 6.0f },
    { 9.3e18f, 1.0f, 1.0f, 6.0f, 6.0f },  /* past int64_t's range */
    { -1e30f, 1.0f, 1.0f, 6.0f, 6.0f },
    { 0.75f, 0.0f, 3.0f, 12.0f, 11.0f },   /* truncated to batch 0 */
  };
  const int n_rows = G_N_ELEMENTS (rows), good[] = { 0, 6 };
  const float good_rows[][5] = {
    { 1.0f, 1.5f, 2.0f, 9.0f, 8.5f },
    { 0.75f, 0.0f, 3.0f, 12.0f, 11.0f },
  };
  hy_tensor *all = run_rois (mode, rows, n_rows);
  hy_tensor *alone = run_rois (mode, good_rows, 2);
  const size_t row = ROI_C * ROI_BINS;
  for (int r = 1; r < n_rows - 1; r++)
    for (size_t i = 0; i < row; i++)
      if (all->data[r * row + i] != 0.0f)
        g_error ("row %d (batch index %g), value %zu: %g, not 0", r,
            rows[r][0], i, all->data[r * row + i]);
  for (int k = 0; k < 2; k++)
    g_assert_cmpmem (all->data + good[k] * row, row * sizeof (float),
        alone->data + k * row, row * sizeof (float));
  /* The good rows pooled something: the comparison above is not of
   * zeros with zeros. */
  gboolean any = FALSE;
  for (size_t i = 0; i < 2 * row; i++)
    any |= alone->data[i] != 0.0f;
  g_assert_true (any);
  hy_tensor_free (alone);
  hy_tensor_free (all);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/vision/resize/empty-data-shapes",
      test_resize_empty_shapes);
  g_test_add_data_func ("/vision/resize/empty-data/imperative",
      GINT_TO_POINTER (HY_MODE_IMPERATIVE), test_resize_empty_model);
  g_test_add_data_func ("/vision/resize/empty-data/hybrid",
      GINT_TO_POINTER (HY_MODE_HYBRID), test_resize_empty_model);
  g_test_add_data_func ("/vision/roi-align/bad-batch-index/imperative",
      GINT_TO_POINTER (HY_MODE_IMPERATIVE), test_roi_align_bad_batch_index);
  g_test_add_data_func ("/vision/roi-align/bad-batch-index/hybrid",
      GINT_TO_POINTER (HY_MODE_HYBRID), test_roi_align_bad_batch_index);
  return g_test_run ();
}
