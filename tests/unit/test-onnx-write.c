/*
 * test-onnx-write.c — hy_model_export_onnx's contract at the C API: a
 * model written with the shapes given loads back with those shapes; an
 * op without an ONNX form is refused naming the node and the op, and
 * leaves nothing in the folder (no file, no temporary); an input without
 * a shape is refused naming it.  That ONNX Runtime computes MXNet's
 * outputs from the files is tests/conformance/check_onnx_export.py's.
 */
#include <string.h>

#include <glib/gstdio.h>

#include "hybrid.h"

static char *
fixture_symbol (const char *name)
{
  const char *root = g_getenv ("HY_SOURCE_DIR");
  return g_build_filename (root ? root : ".", "tests", "fixtures", name,
      "model-symbol.json", NULL);
}

/* Whether this build writes ONNX at all; skips visibly when not. */
static gboolean
refused_for_build (const GError *error)
{
  if (error && strstr (error->message, "built without protobuf-c")) {
    g_test_skip ("this build has no protobuf-c: it writes no ONNX");
    return TRUE;
  }
  return FALSE;
}

static hy_model *
load_with_shape (const char *fixture, const hy_shape *shape,
    hy_shapes **shapes)
{
  g_autofree char *path = fixture_symbol (fixture);
  GError *error = NULL;
  hy_model *model = hy_model_load (path, NULL, &error);
  g_assert_no_error (error);
  *shapes = hy_shapes_new (model);
  g_assert_true (hy_shapes_set_input (*shapes, "data", shape, &error));
  g_assert_true (hy_shapes_infer (*shapes, &error));
  g_assert_no_error (error);
  return model;
}

static guint
entries_in (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  guint n = 0;
  while (d && g_dir_read_name (d))
    n++;
  if (d)
    g_dir_close (d);
  return n;
}

static void
test_written_loads_back (void)
{
  hy_shape shape = { .ndim = 4, .dims = { 4, 1, 28, 28 } };
  hy_shapes *shapes;
  hy_model *model = load_with_shape ("seed_net", &shape, &shapes);
  g_autofree char *dir = g_dir_make_tmp ("hy-onnx-write-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "seed.onnx", NULL);
  GError *error = NULL;
  gboolean ok = hy_model_export_onnx (model, shapes, out, &error);
  if (!refused_for_build (error)) {
    g_assert_no_error (error);
    g_assert_true (ok);
    hy_model *back = hy_model_load (out, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpint (hy_model_n_inputs (back), ==, 1);
    g_assert_cmpstr (hy_model_input_name (back, 0), ==, "data");
    hy_shape in = hy_model_input_shape (back, 0);
    g_assert_true (hy_shape_equal (&in, &shape));
    hy_shape want = hy_shapes_output (shapes, 0);
    hy_shape got = hy_model_output_shape (back, 0);
    g_assert_true (hy_shape_equal (&got, &want));
    g_assert_cmpstr (hy_model_output_name (back, 0), ==,
        hy_model_output_name (model, 0));
    g_assert_cmpint (hy_model_param_count (back), ==,
        hy_model_param_count (model));
    hy_model_free (back);
    g_unlink (out);
  }
  g_clear_error (&error);
  g_rmdir (dir);
  hy_shapes_free (shapes);
  hy_model_free (model);
}

static void
test_refusal_leaves_nothing (void)
{
  hy_shape shape = { .ndim = 3, .dims = { 4, 3, 5 } };
  hy_shapes *shapes;
  hy_model *model = load_with_shape ("op_topk_axis_neg3_ascend", &shape,
      &shapes);
  g_autofree char *dir = g_dir_make_tmp ("hy-onnx-write-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "topk.onnx", NULL);
  GError *error = NULL;
  g_assert_false (hy_model_export_onnx (model, shapes, out, &error));
  if (!refused_for_build (error)) {
    g_assert_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED);
    g_assert_nonnull (strstr (error->message,
            "node 'topk' (topk): op 'topk' has no ONNX form"));
  }
  g_assert_cmpuint (entries_in (dir), ==, 0);
  g_clear_error (&error);
  g_rmdir (dir);
  hy_shapes_free (shapes);
  hy_model_free (model);
}

static void
test_input_without_shape (void)
{
  g_autofree char *path = fixture_symbol ("seed_net");
  GError *error = NULL;
  hy_model *model = hy_model_load (path, NULL, &error);
  g_assert_no_error (error);
  g_autofree char *dir = g_dir_make_tmp ("hy-onnx-write-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "seed.onnx", NULL);
  g_assert_false (hy_model_export_onnx (model, NULL, out, &error));
  if (!refused_for_build (error)) {
    g_assert_error (error, HY_ERROR, HY_ERROR_SHAPE);
    g_assert_nonnull (strstr (error->message, "input 'data' has no shape"));
  }
  g_assert_cmpuint (entries_in (dir), ==, 0);
  g_clear_error (&error);
  g_rmdir (dir);
  hy_model_free (model);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/onnx-write/written-loads-back", test_written_loads_back);
  g_test_add_func ("/onnx-write/refusal-leaves-nothing",
      test_refusal_leaves_nothing);
  g_test_add_func ("/onnx-write/input-without-shape",
      test_input_without_shape);
  return g_test_run ();
}
