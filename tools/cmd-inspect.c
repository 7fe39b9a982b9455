/*
 * cmd-inspect.c — `hybridinfer inspect`: what a model file holds and what
 * we make of it: ops, per-node output shapes, parameters, and any op we
 * cannot run (named by node), as text or as one JSON object.
 */
#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "cli.h"
#include "hybrid-quantize.h"

typedef struct inspect_args {
  char *model, *params;
  char **shapes;
  gboolean json;
  gboolean graph_only;
  char *qdq;
} inspect_args;

static void
build_shape (JsonBuilder *b, const hy_shape *s)
{
  if (s->ndim < 0) {
    json_builder_add_null_value (b);
    return;
  }
  json_builder_begin_array (b);
  for (int d = 0; d < s->ndim; d++)
    json_builder_add_int_value (b, s->dims[d]);
  json_builder_end_array (b);
}

/* The hybrid plan's memory figures, when shapes are known. */
static gboolean
plan_memory (const hy_shapes *shapes, hy_memory_stats *mem)
{
  const hy_model *model = hy_shapes_model (shapes);
  hy_device cpu = { HY_DEVICE_CPU, 0 };
  hy_executor *exec = hy_executor_new (model, cpu, HY_MODE_HYBRID, NULL);
  gboolean ok = exec != NULL;
  for (int i = 0; ok && i < hy_model_n_inputs (model); i++) {
    hy_shape s = hy_shapes_input (shapes, i);
    ok = hy_executor_set_input_shape (exec, hy_model_input_name (model, i),
        &s, NULL);
  }
  ok = ok && hy_executor_prepare (exec, NULL)
      && hy_executor_memory (exec, mem);
  hy_executor_free (exec);
  return ok;
}

static void
add_int_if_known (JsonBuilder *b, const char *name, gboolean known, gint64 bytes)
{
  json_builder_set_member_name (b, name);
  if (known)
    json_builder_add_int_value (b, bytes);
  else
    json_builder_add_null_value (b);
}

static char *
describe_json (hy_model *model, const hy_shapes *shapes, char **unsupported, const char *shape_error,
    const hy_memory_stats *mem)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "model");
  json_builder_add_string_value (b, hy_model_symbol_path (model));
  json_builder_set_member_name (b, "params");
  if (hy_model_params_path (model))
    json_builder_add_string_value (b, hy_model_params_path (model));
  else
    json_builder_add_null_value (b);
  /* A graph-only load has no weights to count. */
  const gboolean weightless = hy_model_is_weightless (model);
  json_builder_set_member_name (b, "weightless");
  json_builder_add_boolean_value (b, weightless);
  add_int_if_known (b, "param_count", !weightless, hy_model_param_count (model));
  add_int_if_known (b, "param_bytes", !weightless, hy_model_param_bytes (model));

  json_builder_set_member_name (b, "inputs");
  json_builder_begin_array (b);
  for (int i = 0; i < hy_model_n_inputs (model); i++) {
    hy_shape s = hy_shapes_input (shapes, i);
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "name");
    json_builder_add_string_value (b, hy_model_input_name (model, i));
    json_builder_set_member_name (b, "shape");
    build_shape (b, &s);
    json_builder_end_object (b);
  }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "outputs");
  json_builder_begin_array (b);
  for (int i = 0; i < hy_model_n_outputs (model); i++) {
    hy_shape s = hy_shapes_output (shapes, i);
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "name");
    json_builder_add_string_value (b, hy_model_output_name (model, i));
    json_builder_set_member_name (b, "shape");
    build_shape (b, &s);
    json_builder_end_object (b);
  }
  json_builder_end_array (b);

  g_autoptr (GHashTable) counts = g_hash_table_new (g_str_hash, g_str_equal);
  json_builder_set_member_name (b, "nodes");
  json_builder_begin_array (b);
  for (int i = 0; i < hy_model_n_nodes (model); i++) {
    hy_node_desc d;
    hy_model_node (model, i, &d);
    if (hy_shapes_inferred (shapes))
      d.shapes = hy_shapes_node (shapes, i);
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "name");
    json_builder_add_string_value (b, d.name);
    json_builder_set_member_name (b, "op");
    json_builder_add_string_value (b, d.op);
    json_builder_set_member_name (b, "kind");
    json_builder_add_string_value (b, d.kind);
    json_builder_set_member_name (b, "supported");
    json_builder_add_boolean_value (b, d.supported);
    json_builder_set_member_name (b, "inputs");
    json_builder_begin_array (b);
    for (int k = 0; k < d.n_inputs; k++)
      json_builder_add_string_value (b, hy_model_node_input (model, i, k, NULL));
    json_builder_end_array (b);
    json_builder_set_member_name (b, "shapes");
    json_builder_begin_array (b);
    for (int k = 0; k < d.n_outputs; k++)
      build_shape (b, &d.shapes[k]);
    json_builder_end_array (b);
    json_builder_end_object (b);
    if (strcmp (d.op, "null"))
      g_hash_table_insert (counts, (char *) d.op, GINT_TO_POINTER (
              GPOINTER_TO_INT (g_hash_table_lookup (counts, d.op)) + 1));
  }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "ops");
  json_builder_begin_object (b);
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init (&it, counts);
  while (g_hash_table_iter_next (&it, &key, &value)) {
    json_builder_set_member_name (b, key);
    json_builder_add_int_value (b, GPOINTER_TO_INT (value));
  }
  json_builder_end_object (b);

  json_builder_set_member_name (b, "unsupported");
  json_builder_begin_array (b);
  for (int i = 0; unsupported && unsupported[i]; i++)
    json_builder_add_string_value (b, unsupported[i]);
  json_builder_end_array (b);
  add_int_if_known (b, "arena_bytes", mem != NULL, mem ? mem->arena_bytes : 0);
  add_int_if_known (b, "naive_bytes", mem != NULL, mem ? mem->naive_bytes : 0);
  add_int_if_known (b, "lower_bound_bytes", mem != NULL,
      mem ? mem->lower_bound_bytes : 0);
  json_builder_set_member_name (b, "shape_error");
  if (shape_error)
    json_builder_add_string_value (b, shape_error);
  else
    json_builder_add_null_value (b);
  json_builder_end_object (b);

  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  return json_generator_to_data (gen, NULL);
}

static void
describe_text (hy_model *model, const hy_shapes *shapes, char **unsupported, const char *shape_error,
    const hy_memory_stats *mem)
{
  char buf[HY_SHAPE_STRLEN];
  printf ("model:  %s\n", hy_model_symbol_path (model));
  printf ("params: %s\n", hy_model_params_path (model)
      ? hy_model_params_path (model) : "(none)");
  if (hy_model_is_weightless (model))
    printf ("parameters: not read (graph only)\n");
  else
    printf ("parameters: %" G_GINT64_FORMAT " (%.2f MiB float32)\n",
        hy_model_param_count (model),
        hy_model_param_bytes (model) / (1024.0 * 1024.0));
  for (int i = 0; i < hy_model_n_inputs (model); i++) {
    hy_shape s = hy_shapes_input (shapes, i);
    printf ("input  %d: %s %s\n", i, hy_model_input_name (model, i),
        hy_shape_format (&s, buf, sizeof buf));
  }
  for (int i = 0; i < hy_model_n_outputs (model); i++) {
    hy_shape s = hy_shapes_output (shapes, i);
    printf ("output %d: %s %s\n", i, hy_model_output_name (model, i),
        hy_shape_format (&s, buf, sizeof buf));
  }
  printf ("\n%5s  %-40s %-20s %s\n", "#", "node", "op", "output shape(s)");
  for (int i = 0; i < hy_model_n_nodes (model); i++) {
    hy_node_desc d;
    hy_model_node (model, i, &d);
    if (hy_shapes_inferred (shapes))
      d.shapes = hy_shapes_node (shapes, i);
    if (!strcmp (d.kind, "param") || !strcmp (d.kind, "aux"))
      continue;                 /* weights: counted above, not listed */
    printf ("%5d  %-40s %-20s", i, d.name,
        !strcmp (d.op, "null") ? d.kind : d.op);
    for (int k = 0; k < d.n_outputs; k++)
      printf (" %s", hy_shape_format (&d.shapes[k], buf, sizeof buf));
    printf ("%s\n", d.supported ? "" : "   <- UNSUPPORTED");
  }
  if (unsupported) {
    printf ("\nunsupported ops (%u):\n", g_strv_length (unsupported));
    for (int i = 0; unsupported[i]; i++)
      printf ("  %s\n", unsupported[i]);
  }
  if (mem)
    printf ("\nmemory (hybrid plan): arena %.2f MiB, naive sum of "
        "intermediates %.2f MiB, lower bound %.2f MiB\n",
        mem->arena_bytes / 1048576.0, mem->naive_bytes / 1048576.0,
        mem->lower_bound_bytes / 1048576.0);
  if (shape_error)
    printf ("\nshapes not inferred: %s\n", shape_error);
}

/* A QDQ file is shown as it runs: its int8 model, unless --qdq float. */
static gboolean
as_int8_if_qdq (hy_model **model, const char *qdq, GError **error)
{
  hy_qdq_mode mode;
  g_autofree char *note = NULL;
  if (!hy_cli_parse_qdq (qdq, &mode, error))
    return FALSE;
  gboolean ok = hy_model_apply_qdq_mode (model, mode, &note, error);
  if (note)
    g_printerr ("hybridinfer: %s\n", note);
  return ok;
}

int
hy_cmd_inspect (int argc, char **argv)
{
  inspect_args a = { 0 };
  GOptionEntry entries[] = {
    {"model", 'm', 0, G_OPTION_ARG_FILENAME, &a.model,
        "Model: prefix-symbol.json or prefix.onnx", "M"},
    {"params", 'p', 0, G_OPTION_ARG_FILENAME, &a.params,
        "Params file (default: newest prefix-NNNN.params beside the model)", "P"},
    HY_CLI_QDQ_OPTION (a.qdq),
    {"shape", 's', 0, G_OPTION_ARG_STRING_ARRAY, &a.shapes,
        "Input shape for shape inference (repeatable)", "[NAME=]1x3x224x224"},
    {"json", 0, 0, G_OPTION_ARG_NONE, &a.json, "Print one JSON object", NULL},
    {"graph-only", 0, 0, G_OPTION_ARG_NONE, &a.graph_only,
        "Read the symbol file alone, no params (weight shapes inferred from "
        "the ops that read them)", NULL},
    {NULL}
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- describe a model");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  /* Declared before the first goto: a jump past an initialised g_autoptr
   * would free stack garbage at "out". */
  g_autoptr (GError) shape_error = NULL;
  hy_memory_stats mem_stats;
  const hy_memory_stats *mem = NULL;
  char **unsupported = NULL;
  hy_model *model = NULL;
  int status = HY_EXIT_FAIL;
  hy_shapes *shapes = NULL;

  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    status = hy_cli_usage (ctx, "inspect: %s", error->message);
    goto out;
  }
  if (!a.model) {
    status = hy_cli_usage (ctx, "inspect: --model is required");
    goto out;
  }
  if (a.graph_only && a.params) {
    status = hy_cli_usage (ctx, "inspect: --graph-only reads no params "
        "file: drop --params");
    goto out;
  }
  model = a.graph_only
      ? hy_model_load_graph_only (a.model, &unsupported, &error)
      : hy_model_load_for_inspection (a.model, a.params, &unsupported,
      &error);
  if (model && !unsupported && !as_int8_if_qdq (&model, a.qdq, &error)) {
    status = hy_cli_fail (error);
    goto out;
  }
  if (model)
    shapes = hy_shapes_new (model);
  if (!model || !hy_cli_apply_shapes (shapes, a.shapes, &error)) {
    status = hy_cli_fail (error);
    goto out;
  }
  /* Shapes are best effort: a model with an unknown op or no input shape
   * is still worth describing. */
  if (unsupported)
    g_set_error (&shape_error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "the model has unsupported ops");
  else
    hy_shapes_infer (shapes, &shape_error);
  if (!shape_error && !a.graph_only && plan_memory (shapes, &mem_stats))
    mem = &mem_stats;
  if (a.json) {
    g_autofree char *text = describe_json (model, shapes, unsupported,
        shape_error ? shape_error->message : NULL, mem);
    printf ("%s\n", text);
  } else {
    describe_text (model, shapes, unsupported,
        shape_error ? shape_error->message : NULL, mem);
  }
  status = HY_EXIT_OK;

out:
  g_strfreev (unsupported);
  hy_shapes_free (shapes);
  hy_model_free (model);
  g_free (a.model);
  g_free (a.params);
  g_free (a.qdq);
  g_strfreev (a.shapes);
  return status;
}
