/*
 * test-dump.c — per-layer dumps (core/dump.c).
 *
 * A dump of a fixture model holds one .npy per op node output and an
 * index.json that parses, with every key tests/conformance/mxnet_dump.py
 * writes too; statistics skip NaN/inf and count them; file names are
 * sanitised and numbered by graph index; write errors come back from
 * hy_dump_new / hy_dump_finish instead of crashing the forward.
 */
#include <math.h>
#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "hybrid.h"
#include "hybrid-npy.h"

static const char *const index_keys[] = {
  "index", "name", "op", "inputs", "output", "shape", "dtype", "file", "min",
  "max", "mean", "std", "nan_count", "inf_count", "time_us", NULL,
};

static const char *
source_dir (void)
{
  const char *d = g_getenv ("HY_SOURCE_DIR");
  return d ? d : ".";
}

static void
remove_tree (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  if (!d)
    return;
  const char *name;
  while ((name = g_dir_read_name (d))) {
    g_autofree char *path = g_build_filename (dir, name, NULL);
    if (g_file_test (path, G_FILE_TEST_IS_DIR))
      remove_tree (path);
    else
      g_unlink (path);
  }
  g_dir_close (d);
  g_rmdir (dir);
}

/* Runs `model` imperatively on `input` with a dump into `dir`, `n` times. */
static void
dump_forward (hy_model *model, hy_tensor *input, const char *dir, int n)
{
  g_autoptr (GError) error = NULL;
  hy_device cpu = { HY_DEVICE_CPU, 0 };
  hy_executor *exec = hy_executor_new (model, cpu, HY_MODE_IMPERATIVE,
      &error);
  g_assert_no_error (error);
  hy_dump *dump = hy_dump_new (dir, &error);
  g_assert_no_error (error);
  hy_dump_attach (dump, exec);
  const hy_tensor *inputs[] = { input };
  for (int i = 0; i < n; i++) {
    g_assert_true (hy_executor_forward (exec, inputs, 1, &error));
    g_assert_no_error (error);
  }
  g_assert_true (hy_dump_finish (dump, &error));
  g_assert_no_error (error);
  hy_executor_free (exec);
  hy_dump_free (dump);
}

/* Parses dir/index.json and checks every entry's keys and file. */
static JsonParser *
load_index (const char *dir, JsonArray **nodes)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (dir, "index.json", NULL);
  JsonParser *parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, path, &error));
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  g_assert_true (json_object_has_member (root, "model"));
  *nodes = json_object_get_array_member (root, "nodes");
  for (guint i = 0; i < json_array_get_length (*nodes); i++) {
    JsonObject *e = json_array_get_object_element (*nodes, i);
    for (int k = 0; index_keys[k]; k++)
      if (!json_object_has_member (e, index_keys[k]))
        g_error ("nodes[%u] has no \"%s\"", i, index_keys[k]);
    g_assert_cmpstr (json_object_get_string_member (e, "dtype"), ==,
        "float32");
    g_autofree char *file = g_build_filename (dir,
        json_object_get_string_member (e, "file"), NULL);
    hy_tensor *t = hy_npy_load (file, &error);
    g_assert_no_error (error);
    JsonArray *shape = json_object_get_array_member (e, "shape");
    g_assert_cmpint (t->shape.ndim, ==, json_array_get_length (shape));
    for (int d = 0; d < t->shape.ndim; d++)
      g_assert_cmpint (t->shape.dims[d], ==,
          json_array_get_int_element (shape, d));
    hy_tensor_free (t);
  }
  return parser;
}

static void
test_fixture_model (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *fixture = g_build_filename (source_dir (), "tests",
      "fixtures", "seed_net", NULL);
  g_autofree char *sym = g_build_filename (fixture, "model-symbol.json",
      NULL);
  if (!g_file_test (sym, G_FILE_TEST_EXISTS)) {
    g_test_skip ("no tests/fixtures/seed_net");
    return;
  }
  g_autofree char *in_path = g_build_filename (fixture, "input0.npy", NULL);
  hy_model *model = hy_model_load (sym, NULL, &error);
  g_assert_no_error (error);
  hy_tensor *input = hy_npy_load (in_path, &error);
  g_assert_no_error (error);
  g_autofree char *dir = g_dir_make_tmp ("hy-test-dump-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *sub = g_build_filename (dir, "made", "by", "dump", NULL);

  dump_forward (model, input, sub, 1);

  int n_op_outputs = 0;
  for (int i = 0; i < hy_model_n_nodes (model); i++) {
    hy_node_desc d;
    hy_model_node (model, i, &d);
    if (!strcmp (d.kind, "op"))
      n_op_outputs += d.n_outputs;
  }
  JsonArray *nodes;
  g_autoptr (JsonParser) parser = load_index (sub, &nodes);
  g_assert_cmpint (json_array_get_length (nodes), ==, n_op_outputs);

  /* The first op reads the input and its weights, by name. */
  JsonObject *conv = json_array_get_object_element (nodes, 0);
  g_assert_cmpstr (json_object_get_string_member (conv, "op"), ==,
      "Convolution");
  JsonArray *ins = json_object_get_array_member (conv, "inputs");
  g_assert_cmpstr (json_array_get_string_element (ins, 0), ==, "data");
  g_autofree char *expect = g_strdup_printf ("%04d_%s.npy",
      (int) json_object_get_int_member (conv, "index"),
      json_object_get_string_member (conv, "name"));
  g_assert_cmpstr (json_object_get_string_member (conv, "file"), ==, expect);
  g_assert_cmpfloat (json_object_get_double_member (conv, "std"), >, 0);
  g_assert_cmpfloat (json_object_get_double_member (conv, "time_us"), >=, 0);

  remove_tree (dir);
  hy_tensor_free (input);
  hy_model_free (model);
}

/* A node name that needs sanitising, NaN and inf in the data, a node with
 * two outputs and one whose values are all non-finite. */
static const char odd_symbol[] =
    "{\"nodes\": ["
    " {\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
    " {\"op\": \"Flatten\", \"name\": \"odd/name x\", \"inputs\": [[0, 0, 0]]},"
    " {\"op\": \"SliceChannel\", \"name\": \"split0\","
    "  \"attrs\": {\"num_outputs\": \"2\", \"axis\": \"1\"},"
    "  \"inputs\": [[1, 0, 0]]}],"
    " \"arg_nodes\": [0], \"node_row_ptr\": [0, 1, 2, 4],"
    " \"heads\": [[2, 0, 0], [2, 1, 0]],"
    " \"attrs\": {\"mxnet_version\": [\"int\", 10901]}}";

static JsonObject *
entry_for_file (JsonArray *nodes, const char *file)
{
  for (guint i = 0; i < json_array_get_length (nodes); i++) {
    JsonObject *e = json_array_get_object_element (nodes, i);
    if (!strcmp (json_object_get_string_member (e, "file"), file))
      return e;
  }
  g_error ("index.json lists no %s", file);
  return NULL;
}

static void
test_names_stats_outputs (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("hy-test-dump-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *sym = g_build_filename (dir, "odd-symbol.json", NULL);
  g_assert_true (g_file_set_contents (sym, odd_symbol, -1, &error));
  hy_model *model = hy_model_load (sym, NULL, &error);
  g_assert_no_error (error);
  hy_shape shape = { .ndim = 2, .dims = { 2, 4 } };
  hy_tensor *input = hy_tensor_new (&shape);
  const float values[] = { NAN, INFINITY, 1, 2, -INFINITY, NAN, 5, 6 };
  memcpy (input->data, values, sizeof values);
  g_autofree char *out = g_build_filename (dir, "dump", NULL);

  /* Two forwards: the index describes the last, not both. */
  dump_forward (model, input, out, 2);

  JsonArray *nodes;
  g_autoptr (JsonParser) parser = load_index (out, &nodes);
  g_assert_cmpint (json_array_get_length (nodes), ==, 3);

  JsonObject *flat = entry_for_file (nodes, "0001_odd_name_x.npy");
  g_assert_cmpstr (json_object_get_string_member (flat, "name"), ==,
      "odd/name x");
  g_assert_cmpint (json_object_get_int_member (flat, "nan_count"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (flat, "inf_count"), ==, 2);
  g_assert_cmpfloat (json_object_get_double_member (flat, "min"), ==, 1);
  g_assert_cmpfloat (json_object_get_double_member (flat, "max"), ==, 6);
  g_assert_cmpfloat_with_epsilon (
      json_object_get_double_member (flat, "mean"), 3.5, 1e-7);
  g_assert_cmpfloat_with_epsilon (
      json_object_get_double_member (flat, "std"), sqrt (4.25), 1e-7);

  /* Output 0 of the split holds NaN, inf, -inf, NaN: nothing to average. */
  JsonObject *first = entry_for_file (nodes, "0002_split0.npy");
  g_assert_cmpint (json_object_get_int_member (first, "output"), ==, 0);
  g_assert_true (json_node_is_null (json_object_get_member (first, "min")));
  g_assert_true (json_node_is_null (json_object_get_member (first, "std")));
  g_assert_cmpint (json_object_get_int_member (first, "nan_count"), ==, 2);

  JsonObject *second = entry_for_file (nodes, "0002_split0_out1.npy");
  g_assert_cmpint (json_object_get_int_member (second, "output"), ==, 1);
  g_assert_cmpfloat (json_object_get_double_member (second, "max"), ==, 6);
  JsonArray *ins = json_object_get_array_member (second, "inputs");
  g_assert_cmpstr (json_array_get_string_element (ins, 0), ==, "odd/name x");

  remove_tree (dir);
  hy_tensor_free (input);
  hy_model_free (model);
}

static void
test_unwritable (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("hy-test-dump-XXXXXX", &error);
  g_assert_no_error (error);

  /* A directory that cannot be made: under a regular file. */
  g_autofree char *file = g_build_filename (dir, "a-file", NULL);
  g_assert_true (g_file_set_contents (file, "", 0, &error));
  g_autofree char *under = g_build_filename (file, "dump", NULL);
  g_assert_null (hy_dump_new (under, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_IO);
  g_assert_nonnull (strstr (error->message, under));
  g_clear_error (&error);

  /* A directory that vanishes before the forward: the forward still runs,
   * finish reports the first failed write. */
  g_autofree char *sym = g_build_filename (dir, "odd-symbol.json", NULL);
  g_assert_true (g_file_set_contents (sym, odd_symbol, -1, &error));
  hy_model *model = hy_model_load (sym, NULL, &error);
  g_assert_no_error (error);
  hy_shape shape = { .ndim = 2, .dims = { 2, 4 } };
  hy_tensor *input = hy_tensor_new (&shape);
  hy_device cpu = { HY_DEVICE_CPU, 0 };
  hy_executor *exec = hy_executor_new (model, cpu, HY_MODE_IMPERATIVE,
      &error);
  g_autofree char *gone = g_build_filename (dir, "gone", NULL);
  hy_dump *dump = hy_dump_new (gone, &error);
  g_assert_no_error (error);
  g_rmdir (gone);
  hy_dump_attach (dump, exec);
  const hy_tensor *inputs[] = { input };
  g_assert_true (hy_executor_forward (exec, inputs, 1, &error));
  g_assert_false (hy_dump_finish (dump, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "0001_odd_name_x.npy"));

  hy_executor_free (exec);
  hy_dump_free (dump);
  hy_tensor_free (input);
  hy_model_free (model);
  remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/dump/fixture-model", test_fixture_model);
  g_test_add_func ("/dump/names-stats-outputs", test_names_stats_outputs);
  g_test_add_func ("/dump/unwritable", test_unwritable);
  return g_test_run ();
}
