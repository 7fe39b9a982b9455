/*
 * test-ops-detection.c — what the detection and indexing ops refuse, and
 * how: MultiBoxPrior/MultiBoxDetection's attribute and shape checks (the
 * CHECKs MXNet 1.9.1 makes, some only when the op first runs), the error
 * a model load gives for them (naming node and op), and gather_nd's
 * IndexError on an index out of range, in both modes, after which the
 * same executor runs again.
 *
 * Values computed by the ops are checked against MXNet by the conformance
 * fixtures (op_MultiBox*, op_gather_nd_*, model_ssd_symbol); the few
 * gathered values asserted here are copies of the input, by index.
 */
#include <math.h>
#include <string.h>

#include "hybrid.h"
#include "op-checks.h"

/* ---- MultiBoxPrior ------------------------------------------------------ */

static void
test_prior_shapes (void)
{
  const char *op = "_contrib_MultiBoxPrior";
  hy_shape map = SHAPE (2, 8, 5, 3);
  expect_shape (op, NULL, &map, 1, "(1, 15, 4)");
  /* sizes + ratios - 1 anchors per position; lists as Python writes
   * them, a bare number and a trailing comma included. */
  expect_shape (op, KV ("sizes", "(0.2, 0.272)", "ratios", "[1, 2, 0.5]"),
      &map, 1, "(1, 60, 4)");
  expect_shape (op, KV ("sizes", "0.5", "ratios", "(1,)"), &map, 1,
      "(1, 15, 4)");
  hy_shape rank5 = SHAPE (1, 2, 3, 4, 7);
  expect_shape (op, NULL, &rank5, 1, "(1, 12, 4)");
  /* A zero step passes MXNet's check and makes both automatic. */
  expect_shape (op, KV ("steps", "(0, 0.25)"), &map, 1, "(1, 15, 4)");
}

static void
test_prior_refusals (void)
{
  const char *op = "_contrib_MultiBoxPrior";
  hy_shape map = SHAPE (1, 2, 3, 3);
  expect_error (op, KV ("sizes", "()"), &map, 1, "'sizes' must hold 1 to");
  expect_error (op, KV ("ratios", "()"), &map, 1, "'ratios' must hold");
  expect_error (op, KV ("sizes", "(0.1, x)"), &map, 1,
      "attribute 'sizes' = '(0.1, x)' is not a tuple of numbers");
  expect_error (op, KV ("sizes", "(0.1,,0.2)"), &map, 1, "'sizes'");
  expect_error (op, KV ("steps", "(0.1,)"), &map, 1,
      "'steps' must hold 2 values, not 1");
  expect_error (op, KV ("offsets", "(0.5, 0.5, 0.5)"), &map, 1,
      "'offsets' must hold 2 values, not 3");
  expect_error (op, KV ("offsets", "(0.5, 1.5)"), &map, 1,
      "both must lie in [0, 1]");
  expect_error (op, KV ("offsets", "(nan, 0.5)"), &map, 1,
      "both must lie in [0, 1]");
  expect_error (op, KV ("steps", "(0.1, -1)"), &map, 1,
      "give both steps (y, x) or neither");
  expect_error (op, KV ("clip", "maybe"), &map, 1, "'clip'");
  hy_shape flat = SHAPE (2, 3, 4);
  expect_error (op, NULL, &flat, 1, "must be (batch, channels, height, "
      "width)");
  hy_shape empty = SHAPE (2, 3, 0, 4);
  expect_error (op, NULL, &empty, 1, "with a height and a width");
}

/* ---- MultiBoxDetection -------------------------------------------------- */

static void
test_detection_shapes (void)
{
  const char *op = "_contrib_MultiBoxDetection";
  hy_shape in[3] = { SHAPE (2, 4, 30), SHAPE (2, 120), SHAPE (1, 30, 4) };
  expect_shape (op, NULL, in, 3, "(2, 30, 6)");
  expect_shape (op, KV ("variances", "[0.1, 0.1, 0.2, 0.2]", "nms_topk",
          "400", "background_id", "3", "clip", "False"), in, 3,
      "(2, 30, 6)");
  /* MXNet reads the first anchor set whatever anchor's leading dim. */
  hy_shape more[3] = { SHAPE (2, 4, 30), SHAPE (2, 120), SHAPE (2, 30, 4) };
  expect_shape (op, NULL, more, 3, "(2, 30, 6)");
}

static void
test_detection_refusals (void)
{
  const char *op = "_contrib_MultiBoxDetection";
  hy_shape ok[3] = { SHAPE (2, 4, 30), SHAPE (2, 120), SHAPE (1, 30, 4) };
  expect_error (op, KV ("variances", "(0.1, 0.1, 0.2)"), ok, 3,
      "'variances' must hold 4 values, not 3");
  expect_error (op, KV ("threshold", "high"), ok, 3, "'threshold'");
  expect_error (op, KV ("nms_topk", "1e30"), ok, 3, "'nms_topk'");
  expect_error (op, KV ("force_suppress", "2"), ok, 3, "'force_suppress'");

  hy_shape cls_rank[3] = { SHAPE (2, 120), SHAPE (2, 120), SHAPE (1, 30, 4) };
  expect_error (op, NULL, cls_rank, 3, "cls_prob must be (batch, classes, "
      "anchors)");
  hy_shape loc_rank[3] = { SHAPE (2, 4, 30), SHAPE (2, 30, 4),
    SHAPE (1, 30, 4) };
  expect_error (op, NULL, loc_rank, 3, "loc_pred must be (batch, anchors "
      "* 4)");
  hy_shape anchor_width[3] = { SHAPE (2, 4, 30), SHAPE (2, 120),
    SHAPE (1, 40, 3) };
  expect_error (op, NULL, anchor_width, 3, "anchor must be (1, anchors, 4)");
  hy_shape count[3] = { SHAPE (2, 4, 30), SHAPE (2, 120), SHAPE (1, 29, 4) };
  expect_error (op, NULL, count, 3, "disagree on the number of anchors");
  hy_shape loc_count[3] = { SHAPE (2, 4, 30), SHAPE (2, 116),
    SHAPE (1, 30, 4) };
  expect_error (op, NULL, loc_count, 3, "4 values per anchor");
  hy_shape loc_batch[3] = { SHAPE (2, 4, 30), SHAPE (1, 120),
    SHAPE (1, 30, 4) };
  expect_error (op, NULL, loc_batch, 3, "fewer batches");
  hy_shape none[3] = { SHAPE (2, 4, 0), SHAPE (2, 0), SHAPE (1, 0, 4) };
  expect_error (op, NULL, none, 3, "at least one anchor");
}

/* ---- through a model file ----------------------------------------------- */

static void
test_model_names_node_and_op (void)
{
  const char *json = "{\"nodes\": ["
      "{\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
      "{\"op\": \"_contrib_MultiBoxPrior\", \"name\": \"anchors3\","
      " \"attrs\": {\"sizes\": \"(0.2, 0.3)\", \"offsets\": \"(0.5, 2)\"},"
      " \"inputs\": [[0, 0, 0]]}],"
      "\"arg_nodes\": [0], \"heads\": [[1, 0, 0]]}";
  g_autoptr (GError) error = NULL;
  hy_model *model = load_json (json, &error);
  g_assert_null (model);
  g_assert_nonnull (error);
  if (!strstr (error->message, "anchors3")
      || !strstr (error->message, "_contrib_MultiBoxPrior")
      || !strstr (error->message, "offsets"))
    g_error ("message \"%s\" does not name the node, op and attribute",
        error->message);
}

/* ---- gather_nd out of range --------------------------------------------- */

/* data (3, 4) and indices (2, 2) into gather_nd "pick", doubled into the
 * head; another gather_nd, "unused", reads the same inputs and reaches no
 * head: neither mode runs it (MXNet's graph would not even hold it), so
 * only "pick" may fail. */
static const char gather_json[] = "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"indices\", \"inputs\": []},"
    "{\"op\": \"gather_nd\", \"name\": \"unused\", \"inputs\": [[0, 0, 0],"
    " [1, 0, 0]]},"
    "{\"op\": \"gather_nd\", \"name\": \"pick\", \"inputs\": [[0, 0, 0],"
    " [1, 0, 0]]},"
    "{\"op\": \"_mul_scalar\", \"name\": \"twice\", \"attrs\": {\"scalar\":"
    " \"2\"}, \"inputs\": [[3, 0, 0]]}],"
    "\"arg_nodes\": [0, 1], \"heads\": [[4, 0, 0]]}";

static gboolean
forward (hy_executor *exec, hy_tensor *data, hy_tensor *indices,
    GError **error)
{
  const hy_tensor *in[2] = { data, indices };
  return hy_executor_forward (exec, in, 2, error);
}

static void
set_indices (hy_tensor *t, float a0, float b0, float a1, float b1)
{
  /* Column j is the index pair (row [0, j], row [1, j]). */
  t->data[0] = a0;
  t->data[1] = a1;
  t->data[2] = b0;
  t->data[3] = b1;
}

static void
expect_refusal (hy_executor *exec, hy_tensor *data, hy_tensor *indices,
    const char *needle)
{
  g_autoptr (GError) error = NULL;
  g_assert_false (forward (exec, data, indices, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_INVALID);
  if (!strstr (error->message, "node 'pick' (op gather_nd): ")
      || !strstr (error->message, needle))
    g_error ("message \"%s\" lacks the node and op or \"%s\"",
        error->message, needle);
}

static void
test_gather_nd_out_of_range (gconstpointer mode_ptr)
{
  hy_mode mode = GPOINTER_TO_INT (mode_ptr);
  g_autoptr (GError) error = NULL;
  hy_model *model = load_json (gather_json, &error);
  g_assert_no_error (error);
  hy_device cpu = { HY_DEVICE_CPU, 0 };
  hy_executor *exec = hy_executor_new (model, cpu, mode, &error);
  g_assert_no_error (error);
  hy_shape data_shape = SHAPE (3, 4), indices_shape = SHAPE (2, 2);
  hy_tensor *data = hy_tensor_new (&data_shape);
  for (int i = 0; i < 12; i++)
    data->data[i] = (float) i;
  hy_tensor *indices = hy_tensor_new (&indices_shape);

  /* In range, negative ones from the end: (2, 3) and (-3, -4) = (0, 0). */
  set_indices (indices, 2, 3, -3, -4);
  g_assert_true (forward (exec, data, indices, &error));
  g_assert_no_error (error);
  const hy_tensor *out = hy_executor_output (exec, 0);
  g_assert_cmpfloat (out->data[0], ==, 2 * data->data[2 * 4 + 3]);
  g_assert_cmpfloat (out->data[1], ==, 2 * data->data[0]);

  /* MXNet's message and index: of the first axis with a bad index, the
   * last one. */
  set_indices (indices, 3, 0, 7, 1);
  expect_refusal (exec, data, indices,
      "IndexError: index 7 is out of bounds for axis 0 with size 3");
  set_indices (indices, 0, 4, 1, -5);
  expect_refusal (exec, data, indices,
      "IndexError: index -5 is out of bounds for axis 1 with size 4");
  set_indices (indices, -3.5f, 0, 0, 0);
  expect_refusal (exec, data, indices, "index -3.5 is out of bounds");
  set_indices (indices, 0, 0, NAN, 0);
  expect_refusal (exec, data, indices, "index nan is out of bounds");

  /* The same executor runs again once the indices are good. */
  set_indices (indices, 1, 2, 0, 1);
  g_assert_true (forward (exec, data, indices, &error));
  g_assert_no_error (error);
  out = hy_executor_output (exec, 0);
  g_assert_cmpfloat (out->data[0], ==, 2 * data->data[1 * 4 + 2]);
  g_assert_cmpfloat (out->data[1], ==, 2 * data->data[0 * 4 + 1]);

  hy_tensor_free (indices);
  hy_tensor_free (data);
  hy_executor_free (exec);
  hy_model_free (model);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/detection/multibox-prior/shapes", test_prior_shapes);
  g_test_add_func ("/detection/multibox-prior/refusals", test_prior_refusals);
  g_test_add_func ("/detection/multibox-detection/shapes",
      test_detection_shapes);
  g_test_add_func ("/detection/multibox-detection/refusals",
      test_detection_refusals);
  g_test_add_func ("/detection/model-names-node-and-op",
      test_model_names_node_and_op);
  g_test_add_data_func ("/gather-nd/out-of-range/imperative",
      GINT_TO_POINTER (HY_MODE_IMPERATIVE), test_gather_nd_out_of_range);
  g_test_add_data_func ("/gather-nd/out-of-range/hybrid",
      GINT_TO_POINTER (HY_MODE_HYBRID), test_gather_nd_out_of_range);
  return g_test_run ();
}
