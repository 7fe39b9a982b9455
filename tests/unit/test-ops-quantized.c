/*
 * test-ops-quantized.c — MXNet's int8 ops as the loader and the op table
 * read them: a quantized fused layer resolves to one op whose inputs are
 * named; what we do not run is refused with the node, the op and the
 * reason.  Their arithmetic is checked against real MXNet by the onednn
 * suite (tests/conformance/check_int8.py), not here.
 */
#include <string.h>

#include "hybrid.h"
#include "core/graph.h"
#include "core/model-impl.h"

#define VAR(name) "{\"op\": \"null\", \"name\": \"" name "\", \"inputs\": []}"

/* data → quantize_v2 (int8) → a quantized 1×1 convolution whose subgraph
 * holds `inner` after the Convolution, with the node's extra attributes
 * `attrs` (a JSON fragment, may be empty). */
static char *
qconv_json (const char *inner, const char *attrs, const char *out_type)
{
  return g_strdup_printf ("{\"nodes\": [" VAR ("data") ","
      " {\"op\": \"_contrib_quantize_v2\", \"name\": \"data_quantize\","
      "  \"attrs\": {\"out_type\": \"%s\", \"min_calib_range\": \"-1\","
      "   \"max_calib_range\": \"1\"}, \"inputs\": [[0, 0, 0]]},"
      " " VAR ("w") ","
      " {\"op\": \"_sg_mkldnn_conv\", \"name\": \"qconv\", \"attrs\":"
      "  {\"quantized\": \"true\"%s},"
      "  \"inputs\": [[1, 0, 0], [2, 0, 0], [1, 1, 0], [1, 2, 0]],"
      "  \"subgraphs\": [{\"nodes\": [" VAR ("d0") ", " VAR ("w0") ","
      "   {\"op\": \"Convolution\", \"name\": \"conv\", \"attrs\": {\"kernel\":"
      "    \"(1, 1)\", \"num_filter\": \"2\", \"no_bias\": \"True\"},"
      "    \"inputs\": [[0, 0, 0], [1, 0, 0]]}%s],"
      "   \"arg_nodes\": [0, 1], \"heads\": [[2, 0, 0]]}]}],"
      " \"arg_nodes\": [0, 2], \"heads\": [[3, 0, 0]]}", out_type, attrs,
      inner);
}

static hy_graph *
parse (const char *json, GError **error)
{
  return hy_symbol_json_parse (json, strlen (json), "q.json", error);
}

static void
assert_resolve_fails (const char *json, const char *const *substrings)
{
  g_autoptr (GError) error = NULL;
  hy_graph *g = parse (json, &error);
  if (g) {
    g_assert_false (hy_graph_resolve (g, NULL, &error)
        && hy_graph_infer_dtypes (g, &error));
    hy_graph_free (g);
  }
  g_assert_nonnull (error);
  for (int i = 0; substrings[i]; i++)
    if (!strstr (error->message, substrings[i]))
      g_error ("expected \"%s\" in: %s", substrings[i], error->message);
}

static void
test_calibrated_conv_resolves (void)
{
  g_autofree char *json = qconv_json (", {\"op\": \"Activation\", \"name\":"
      " \"act\", \"attrs\": {\"act_type\": \"relu\"}, \"inputs\": [[2, 0, 0]]}",
      ", \"with_act\": \"true\", \"min_calib_range\": \"0\","
      " \"max_calib_range\": \"3\"", "int8");
  g_autoptr (GError) error = NULL;
  hy_graph *g = parse (json, &error);
  g_assert_no_error (error);
  g_assert_true (hy_graph_resolve (g, NULL, &error));
  g_assert_true (hy_graph_infer_dtypes (g, &error));
  g_assert_no_error (error);
  hy_node *n = hy_graph_node (g, (guint) hy_graph_find (g, "qconv"));
  g_assert_cmpuint (n->n_outputs, ==, 3);
  /* the Convolution's attributes were taken from the subgraph */
  g_assert_cmpstr (g_hash_table_lookup (n->attrs, "kernel"), ==, "(1, 1)");
  g_assert_cmpstr (g_hash_table_lookup (n->attrs, "act_type"), ==, "relu");
  char buf[32];
  g_assert_cmpstr (hy_op_input_name (n->op, n->params, 1, buf, sizeof buf),
      ==, "weight");
  g_assert_cmpstr (hy_op_input_name (n->op, n->params, 2, buf, sizeof buf),
      ==, "min_data");
  hy_graph_free (g);
}

static void
test_refusals_name_node_and_reason (void)
{
  g_autofree char *sigmoid = qconv_json (", {\"op\": \"Activation\","
      " \"name\": \"act\", \"attrs\": {\"act_type\": \"sigmoid\"},"
      " \"inputs\": [[2, 0, 0]]}", ", \"with_act\": \"true\","
      " \"min_calib_range\": \"0\", \"max_calib_range\": \"1\"", "int8");
  assert_resolve_fails (sigmoid, (const char *const[]) { "'qconv'",
        "_sg_mkldnn_conv", "sigmoid", "relu", NULL });

  g_autofree char *uncalibrated = qconv_json ("", "", "int8");
  assert_resolve_fails (uncalibrated, (const char *const[]) { "'qconv'",
        "min_calib_range", "calibrate", NULL });

  g_autofree char *pooling = qconv_json (", {\"op\": \"Pooling\", \"name\":"
      " \"p\", \"attrs\": {\"kernel\": \"(2, 2)\"}, \"inputs\": [[2, 0, 0]]}",
      ", \"min_calib_range\": \"0\", \"max_calib_range\": \"1\"", "int8");
  assert_resolve_fails (pooling, (const char *const[]) { "'qconv'",
        "Pooling", NULL });

  const char *v1 = "{\"nodes\": [" VAR ("data") ", {\"op\":"
      " \"_contrib_quantize\", \"name\": \"q0\", \"inputs\": [[0, 0, 0],"
      " [0, 0, 0], [0, 0, 0]]}], \"arg_nodes\": [0], \"heads\": [[1, 0, 0]]}";
  assert_resolve_fails (v1, (const char *const[]) { "_contrib_quantize",
        "not implemented", NULL });

  /* ReLU6 is a clip from 0; a clip from anywhere else is not fused */
  g_autofree char *clip = qconv_json (", {\"op\": \"clip\", \"name\":"
      " \"c\", \"attrs\": {\"a_min\": \"-1\", \"a_max\": \"6\"},"
      " \"inputs\": [[2, 0, 0]]}", ", \"with_act\": \"true\","
      " \"min_calib_range\": \"0\", \"max_calib_range\": \"1\"", "int8");
  assert_resolve_fails (clip, (const char *const[]) { "'qconv'",
        "_sg_mkldnn_conv", "clip", "a_min -1", NULL });

  /* requantize reads int32 sums: float data is a dtype error naming the
   * input and what was expected */
  const char *requantize = "{\"nodes\": [" VAR ("data") ", {\"op\":"
      " \"_contrib_requantize\", \"name\": \"rq\", \"inputs\": [[0, 0, 0],"
      " [0, 0, 0], [0, 0, 0]]}], \"arg_nodes\": [0], \"heads\": [[1, 0, 0]]}";
  assert_resolve_fails (requantize, (const char *const[]) { "'rq'",
        "'data'", "float32", "expected int32", NULL });

  /* the unfused quantized convolution: a bias, and more than one group,
   * refused by node name, saying which attribute */
  const char *qconv_bias = "{\"nodes\": [" VAR ("data") ", {\"op\":"
      " \"_contrib_quantized_conv\", \"name\": \"qc\", \"attrs\":"
      " {\"kernel\": \"(3, 3)\", \"num_filter\": \"4\"}, \"inputs\":"
      " [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0],"
      " [0, 0, 0]]}], \"arg_nodes\": [0], \"heads\": [[1, 0, 0]]}";
  assert_resolve_fails (qconv_bias, (const char *const[]) { "'qc'",
        "no_bias", "not supported", NULL });
  const char *qconv_groups = "{\"nodes\": [" VAR ("data") ", {\"op\":"
      " \"_contrib_quantized_conv\", \"name\": \"qc\", \"attrs\":"
      " {\"kernel\": \"(3, 3)\", \"num_filter\": \"4\", \"no_bias\":"
      " \"True\", \"num_group\": \"2\"}, \"inputs\": [[0, 0, 0],"
      " [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]}],"
      " \"arg_nodes\": [0], \"heads\": [[1, 0, 0]]}";
  assert_resolve_fails (qconv_groups, (const char *const[]) { "'qc'",
        "num_group", NULL });

  /* a quantized concat of a float value: the input is named */
  const char *concat = "{\"nodes\": [" VAR ("data") ", " VAR ("lo") ", "
      VAR ("hi") ", {\"op\": \"_contrib_quantize_v2\", \"name\": \"q\","
      " \"attrs\": {\"min_calib_range\": \"-1\", \"max_calib_range\": \"1\"},"
      " \"inputs\": [[0, 0, 0]]}, {\"op\": \"_contrib_quantized_concat\","
      " \"name\": \"qc\", \"attrs\": {\"num_args\": \"2\", \"dim\": \"1\"},"
      " \"inputs\": [[3, 0, 0], [0, 0, 0], [3, 1, 0], [3, 2, 0], [1, 0, 0],"
      " [2, 0, 0]]}], \"arg_nodes\": [0, 1, 2], \"heads\": [[4, 0, 0]]}";
  assert_resolve_fails (concat, (const char *const[]) { "'qc'", "'arg1'",
        "float32", "int8 or uint8", NULL });

  /* dequantizing float data: a dtype error naming the input */
  const char *deq = "{\"nodes\": [" VAR ("data") ", " VAR ("lo") ", "
      VAR ("hi") ", {\"op\": \"_contrib_dequantize\", \"name\": \"dq\","
      " \"inputs\": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}], \"arg_nodes\":"
      " [0, 1, 2], \"heads\": [[3, 0, 0]]}";
  assert_resolve_fails (deq, (const char *const[]) { "'dq'", "'data'",
        "float32", "int8 or uint8", NULL });

  /* a uint8 factor, which MXNet 1.9.1 misreads as int8 (MobileNetV3
   * quantized with quantized_dtype auto): refused, saying what to do */
  const char *mul_u8 = "{\"nodes\": [" VAR ("data") ", {\"op\":"
      " \"_contrib_quantize_v2\", \"name\": \"qa\", \"attrs\":"
      " {\"min_calib_range\": \"-1\", \"max_calib_range\": \"1\"},"
      " \"inputs\": [[0, 0, 0]]}, {\"op\": \"_contrib_quantize_v2\","
      " \"name\": \"qb\", \"attrs\": {\"out_type\": \"uint8\","
      " \"min_calib_range\": \"0\","
      " \"max_calib_range\": \"1\"}, \"inputs\": [[0, 0, 0]]},"
      " {\"op\": \"_contrib_quantized_elemwise_mul\", \"name\": \"qm\","
      " \"attrs\": {\"min_calib_range\": \"-1\", \"max_calib_range\":"
      " \"1\"}, \"inputs\": [[1, 0, 0], [2, 0, 0], [1, 1, 0], [1, 2, 0],"
      " [2, 1, 0], [2, 2, 0]]}], \"arg_nodes\": [0], \"heads\": [[3, 0, 0]]}";
  assert_resolve_fails (mul_u8, (const char *const[]) { "'qm'", "'rhs'",
        "uint8", "quantized_dtype='int8'", NULL });

  /* MXNet has no uncalibrated quantized BatchNorm either */
  const char *bn = "{\"nodes\": [" VAR ("data") ", " VAR ("g") ", "
      VAR ("b") ", " VAR ("m") ", " VAR ("v") ", {\"op\":"
      " \"_contrib_quantize_v2\", \"name\": \"q\", \"attrs\":"
      " {\"min_calib_range\": \"-1\", \"max_calib_range\": \"1\"},"
      " \"inputs\": [[0, 0, 0]]}, {\"op\": \"_contrib_quantized_batch_norm\","
      " \"name\": \"qbn\", \"inputs\": [[5, 0, 0], [1, 0, 0], [2, 0, 0],"
      " [3, 0, 0], [4, 0, 0], [5, 1, 0], [5, 2, 0]]}], \"arg_nodes\":"
      " [0, 1, 2, 3, 4], \"heads\": [[6, 0, 0]]}";
  assert_resolve_fails (bn, (const char *const[]) { "'qbn'",
        "min_calib_range", "calibrate", NULL });

  /* an uncalibrated add, whose int32 sum MXNet hands on: refused */
  const char *add = "{\"nodes\": [" VAR ("data") ", {\"op\":"
      " \"_contrib_quantize_v2\", \"name\": \"q\", \"attrs\":"
      " {\"min_calib_range\": \"-1\", \"max_calib_range\": \"1\"},"
      " \"inputs\": [[0, 0, 0]]}, {\"op\":"
      " \"_contrib_quantized_elemwise_add\", \"name\": \"qadd\","
      " \"inputs\": [[1, 0, 0], [1, 0, 0], [1, 1, 0], [1, 2, 0],"
      " [1, 1, 0], [1, 2, 0]]}], \"arg_nodes\": [0], \"heads\": [[2, 0, 0]]}";
  assert_resolve_fails (add, (const char *const[]) { "'qadd'",
        "min_calib_range", "calibrate", NULL });

  /* a float32 addend: MXNet's add takes quantized values only */
  const char *add_f32 = "{\"nodes\": [" VAR ("data") ", {\"op\":"
      " \"_contrib_quantize_v2\", \"name\": \"q\", \"attrs\":"
      " {\"min_calib_range\": \"-1\", \"max_calib_range\": \"1\"},"
      " \"inputs\": [[0, 0, 0]]}, {\"op\":"
      " \"_contrib_quantized_elemwise_add\", \"name\": \"qadd\","
      " \"attrs\": {\"min_calib_range\": \"-2\", \"max_calib_range\":"
      " \"2\"}, \"inputs\": [[1, 0, 0], [0, 0, 0], [1, 1, 0], [1, 2, 0],"
      " [1, 1, 0], [1, 2, 0]]}], \"arg_nodes\": [0], \"heads\": [[2, 0, 0]]}";
  assert_resolve_fails (add_f32, (const char *const[]) { "'qadd'", "'rhs'",
        "float32", "int8 or uint8", NULL });
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ops-quantized/calibrated-conv-resolves",
      test_calibrated_conv_resolves);
  g_test_add_func ("/ops-quantized/refusals", test_refusals_name_node_and_reason);
  return g_test_run ();
}
