/*
 * test-graph.c — op resolution: aliases, legacy auxiliary states, the
 * checks that can only happen once output counts are known, and the dtype
 * inference that tells kernels which data is integer.
 */
#include <string.h>

#include "hybrid.h"
#include "core/graph.h"
#include "core/model-impl.h"
#include "kernels/params/elementwise.h"

/* A variable, then `op` on it; `extra` is spliced into the op node. */
static hy_graph *
parse (const char *json, GError **error)
{
  return hy_symbol_json_parse (json, strlen (json), "test.json", error);
}

static void
test_alias_resolves_to_canonical (void)
{
  const char *json = "{\"nodes\": ["
      "{\"op\": \"null\", \"name\": \"a\", \"inputs\": []},"
      "{\"op\": \"null\", \"name\": \"b\", \"inputs\": []},"
      "{\"op\": \"_Plus\", \"name\": \"sum\", \"inputs\": [[0, 0], [1, 0]]}],"
      "\"arg_nodes\": [0, 1], \"heads\": [[2, 0]]}";
  g_autoptr (GError) error = NULL;
  hy_graph *g = parse (json, &error);
  g_assert_no_error (error);
  g_assert_true (hy_graph_resolve (g, NULL, &error));
  g_assert_cmpstr (hy_graph_node (g, 2)->op->name, ==, "elemwise_add");
  hy_graph_free (g);
}

static void
test_legacy_batchnorm_gets_aux_variables (void)
{
  /* A 0.8-era BatchNorm lists only data, gamma and beta. */
  const char *json = "{\"nodes\": ["
      "{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
      "{\"op\": \"null\", \"name\": \"bn_gamma\", \"inputs\": []},"
      "{\"op\": \"null\", \"name\": \"bn_beta\", \"inputs\": []},"
      "{\"op\": \"BatchNorm\", \"name\": \"bn\", \"param\": {\"eps\": \"1e-5\"},"
      " \"inputs\": [[0, 0], [1, 0], [2, 0]]}],"
      "\"arg_nodes\": [0, 1, 2], \"heads\": [[3, 0]]}";
  g_autoptr (GError) error = NULL;
  hy_graph *g = parse (json, &error);
  g_assert_no_error (error);
  g_assert_true (hy_graph_resolve (g, NULL, &error));
  g_assert_cmpint (hy_graph_n_nodes (g), ==, 6);
  g_assert_cmpint (hy_graph_find (g, "bn_moving_mean"), >=, 0);
  g_assert_cmpint (hy_graph_find (g, "bn_moving_var"), >=, 0);
  /* The new variables come before their consumer, and the head follows. */
  int bn = hy_graph_find (g, "bn");
  g_assert_cmpint (hy_graph_find (g, "bn_moving_var"), <, bn);
  g_assert_cmpuint (g->heads[0].node, ==, (guint) bn);
  hy_node *node = hy_graph_node (g, bn);
  g_assert_cmpuint (node->n_inputs, ==, 5);
  g_assert_cmpuint (node->inputs[3].node, ==,
      (guint) hy_graph_find (g, "bn_moving_mean"));
  hy_graph_free (g);
}

static void
test_unknown_op_names_node (void)
{
  const char *json = "{\"nodes\": ["
      "{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
      "{\"op\": \"FancyOp\", \"name\": \"magic\", \"inputs\": [[0, 0]]}],"
      "\"arg_nodes\": [0], \"heads\": [[1, 0]]}";
  g_autoptr (GError) error = NULL;
  hy_graph *g = parse (json, &error);
  g_assert_false (hy_graph_resolve (g, NULL, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "'magic'"));
  g_assert_nonnull (strstr (error->message, "FancyOp"));
  hy_graph_free (g);

  /* For inspection, the same graph lists the node instead of failing. */
  g_clear_error (&error);
  g = parse (json, &error);
  g_autoptr (GPtrArray) unsupported = g_ptr_array_new_with_free_func (g_free);
  g_assert_true (hy_graph_resolve (g, unsupported, &error));
  g_assert_cmpuint (unsupported->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (unsupported, 0), ==, "magic (FancyOp)");
  hy_graph_free (g);
}

static void
test_output_index_checked_after_resolve (void)
{
  /* relu has one output; asking for its output 5 must not read past it. */
  const char *json = "{\"nodes\": ["
      "{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
      "{\"op\": \"relu\", \"name\": \"r\", \"inputs\": [[0, 0]]},"
      "{\"op\": \"relu\", \"name\": \"r2\", \"inputs\": [[1, 5]]}],"
      "\"arg_nodes\": [0], \"heads\": [[2, 0]]}";
  g_autoptr (GError) error = NULL;
  hy_graph *g = parse (json, &error);
  if (!g) {
    /* The parser may already refuse it; either way it is named. */
    g_assert_nonnull (strstr (error->message, "output"));
    return;
  }
  g_assert_false (hy_graph_resolve (g, NULL, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_FORMAT);
  g_assert_cmpstr (error->message, ==,
      "node 'r2': input 0 refers to output 5 of 'r', which has 1");
  hy_graph_free (g);
}

static void
test_wrong_input_count_lists_expected (void)
{
  const char *json = "{\"nodes\": ["
      "{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
      "{\"op\": \"Convolution\", \"name\": \"conv\","
      " \"attrs\": {\"kernel\": \"(3, 3)\", \"num_filter\": \"4\"},"
      " \"inputs\": [[0, 0]]}],"
      "\"arg_nodes\": [0], \"heads\": [[1, 0]]}";
  g_autoptr (GError) error = NULL;
  hy_graph *g = parse (json, &error);
  g_assert_false (hy_graph_resolve (g, NULL, &error));
  g_assert_cmpstr (error->message, ==, "node 1 'conv' (op Convolution): "
      "has 1 inputs, expected 3 (data, weight, bias)");
  hy_graph_free (g);
}

/* x and y, Cast(x, int64) as node 2, then the nodes in `rest` (JSON
 * objects, numbered from 3); heads [[last, 0]].  Resolved. */
static hy_graph *
typed_graph (const char *rest, guint last, GError **error)
{
  g_autofree char *json = g_strdup_printf ("{\"nodes\": ["
      "{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
      "{\"op\": \"null\", \"name\": \"y\", \"inputs\": []},"
      "{\"op\": \"Cast\", \"name\": \"xi\", \"attrs\": {\"dtype\": \"int64\"},"
      " \"inputs\": [[0, 0]]}, %s],"
      "\"arg_nodes\": [0, 1], \"heads\": [[%u, 0]]}", rest, last);
  hy_graph *g = parse (json, error);
  if (g && !hy_graph_resolve (g, NULL, error))
    g_clear_pointer (&g, hy_graph_free);
  return g;
}

static void
test_dtype_integer_ops_flagged (void)
{
  g_autoptr (GError) error = NULL;
  hy_graph *g = typed_graph (
      "{\"op\": \"shape_array\", \"name\": \"s\", \"inputs\": [[0, 0]]},"
      "{\"op\": \"broadcast_div\", \"name\": \"q\", \"inputs\": [[2, 0], [3, 0]]},"
      "{\"op\": \"_div_scalar\", \"name\": \"h\", \"attrs\": {\"scalar\": \"2\"},"
      " \"inputs\": [[4, 0]]},"
      "{\"op\": \"_div_scalar\", \"name\": \"f\", \"attrs\": {\"scalar\": \"2\","
      " \"is_int\": \"False\"}, \"inputs\": [[4, 0]]},"
      "{\"op\": \"Cast\", \"name\": \"back\", \"attrs\": {\"dtype\": \"float32\"},"
      " \"inputs\": [[5, 0]]},"
      "{\"op\": \"broadcast_div\", \"name\": \"fq\", \"inputs\": [[7, 0], [6, 0]]}",
      8, &error);
  g_assert_no_error (error);
  g_assert_true (hy_graph_infer_dtypes (g, &error));
  g_assert_no_error (error);
  const hy_binary_params *q = hy_graph_node (g, hy_graph_find (g, "q"))->params;
  const hy_scalar_params *h = hy_graph_node (g, hy_graph_find (g, "h"))->params;
  const hy_scalar_params *f = hy_graph_node (g, hy_graph_find (g, "f"))->params;
  const hy_binary_params *fq = hy_graph_node (g, hy_graph_find (g, "fq"))->params;
  g_assert_cmpint (q->int_dtype, ==, HY_DTYPE_INT64);
  g_assert_cmpint (h->int_dtype, ==, HY_DTYPE_INT64);
  /* is_int=False computes in floats (float64 in MXNet), and so does what
   * follows, Cast back to float32 or not. */
  g_assert_cmpint (f->int_dtype, ==, HY_DTYPE_FLOAT32);
  g_assert_cmpint (fq->int_dtype, ==, HY_DTYPE_FLOAT32);
  hy_graph_free (g);
}

static void
test_dtype_mixed_operands_refused (void)
{
  g_autoptr (GError) error = NULL;
  hy_graph *g = typed_graph ("{\"op\": \"broadcast_add\", \"name\": \"mix\","
      " \"inputs\": [[2, 0], [1, 0]]}", 3, &error);
  g_assert_no_error (error);
  g_assert_false (hy_graph_infer_dtypes (g, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "node 'mix' (op broadcast_add)"));
  g_assert_nonnull (strstr (error->message, "input 'rhs' is float32"));
  g_assert_nonnull (strstr (error->message, "'lhs' is int64"));
  hy_graph_free (g);
}

static void
test_dtype_float_only_op_refuses_integers (void)
{
  g_autoptr (GError) error = NULL;
  hy_graph *g = typed_graph ("{\"op\": \"softmax\", \"name\": \"sm\","
      " \"inputs\": [[2, 0]]}", 3, &error);
  g_assert_no_error (error);
  g_assert_false (hy_graph_infer_dtypes (g, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message,
          "node 'sm' (op softmax): input 'data' ('xi') holds int64 values"));
  hy_graph_free (g);
}

static void
test_dtype_unknown_name_refused (void)
{
  g_autoptr (GError) error = NULL;
  hy_graph *g = typed_graph ("{\"op\": \"Cast\", \"name\": \"odd\","
      " \"attrs\": {\"dtype\": \"int3\"}, \"inputs\": [[0, 0]]}", 3, &error);
  g_assert_null (g);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "'odd' (op Cast)"));
  g_assert_nonnull (strstr (error->message, "int3"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/graph/alias", test_alias_resolves_to_canonical);
  g_test_add_func ("/graph/legacy-aux", test_legacy_batchnorm_gets_aux_variables);
  g_test_add_func ("/graph/unknown-op", test_unknown_op_names_node);
  g_test_add_func ("/graph/output-index", test_output_index_checked_after_resolve);
  g_test_add_func ("/graph/input-count", test_wrong_input_count_lists_expected);
  g_test_add_func ("/graph/dtype/integer-ops", test_dtype_integer_ops_flagged);
  g_test_add_func ("/graph/dtype/mixed", test_dtype_mixed_operands_refused);
  g_test_add_func ("/graph/dtype/float-only",
      test_dtype_float_only_op_refuses_integers);
  g_test_add_func ("/graph/dtype/unknown", test_dtype_unknown_name_refused);
  return g_test_run ();
}
