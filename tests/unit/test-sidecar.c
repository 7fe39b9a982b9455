/*
 * test-sidecar.c — a model's sidecar (hybrid-sidecar.h): the name beside
 * the symbol file, every key read, errors naming file, key and value,
 * unknown keys listed, and a written sidecar read back the same.
 */
#include <string.h>

#include <glib/gstdio.h>

#include "hybrid.h"
#include "hybrid-sidecar.h"

static char *dir;

static char *
write_file (const char *name, const char *text)
{
  char *path = g_build_filename (dir, name, NULL);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

static void
test_path_for_model (void)
{
  g_autofree char *a = hy_sidecar_path_for_model ("m/res-net-symbol.json");
  g_assert_cmpstr (a, ==, "m/res-net-model.json");
  /* prefix.onnx shares prefix-model.json with prefix-symbol.json. */
  g_autofree char *b = hy_sidecar_path_for_model ("m/res-net.onnx");
  g_assert_cmpstr (b, ==, "m/res-net-model.json");
  g_assert_null (hy_sidecar_path_for_model ("m/model.json"));
  g_assert_null (hy_sidecar_path_for_model (NULL));
}

static void
test_read_all (void)
{
  g_autofree char *path = write_file ("all-model.json",
      "{\"sidecar_version\": 1, \"input_name\": \"data\", "
      "\"input_size\": [320, 240], \"color_order\": \"bgr\", "
      "\"scale\": \"0-1\", \"mean\": [0.485, 0.456, 0.406], "
      "\"std\": [0.5], \"resize\": \"letterbox\", "
      "\"interpolation\": \"nearest\", \"labels\": \"sub/l.txt\", "
      "\"output\": \"detection\", \"activation\": \"sigmoid\", "
      "\"params\": \"all-0003.params\", \"threshold\": 0.35, "
      "\"top_k\": 3, \"iou_threshold\": 0.45, "
      "\"validation\": {\"accuracy\": 0.9}, \"colour\": 1, \"x\": []}");
  GError *error = NULL;
  g_autoptr (hy_sidecar) s = hy_sidecar_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (s->input_name, ==, "data");
  g_assert_cmpint (s->input_width, ==, 320);
  g_assert_cmpint (s->input_height, ==, 240);
  g_assert_true (s->bgr);
  g_assert_true (s->unit_scale);
  g_assert_cmpint (s->n_mean, ==, 3);
  g_assert_cmpfloat (s->mean[2], ==, 0.406);
  g_assert_cmpint (s->n_std, ==, 1);
  g_assert_cmpint (s->resize, ==, HY_RESIZE_LETTERBOX);
  g_assert_cmpint (s->interpolation, ==, HY_INTERP_NEAREST);
  g_autofree char *labels = g_build_filename (dir, "sub/l.txt", NULL);
  g_assert_cmpstr (s->labels_file, ==, labels);
  g_assert_null (s->labels);
  g_assert_cmpint (s->output, ==, HY_SIDECAR_OUTPUT_DETECTION);
  g_assert_cmpint (s->activation, ==, HY_SIDECAR_ACTIVATION_SIGMOID);
  g_autofree char *params = g_build_filename (dir, "all-0003.params", NULL);
  g_assert_cmpstr (s->params_file, ==, params);
  g_assert_cmpfloat (s->threshold, ==, 0.35);
  g_assert_cmpuint (s->top_k, ==, 3);
  g_assert_cmpfloat (s->iou_threshold, ==, 0.45);
  g_assert_cmpuint (s->set, ==, (1u << 15) - 1);
  g_assert_nonnull (strstr (s->notes_json, "\"accuracy\""));
  g_assert_nonnull (s->unknown_keys);
  g_assert_cmpuint (g_strv_length (s->unknown_keys), ==, 2);
  g_assert_true (g_strv_contains ((const char *const *) s->unknown_keys,
          "colour"));
  g_unlink (path);
}

static void
test_empty_and_inline (void)
{
  g_autofree char *path = write_file ("in-model.json",
      "{\"labels\": [\"cat\", \"dog\"], \"input_size\": \"frame\"}");
  GError *error = NULL;
  g_autoptr (hy_sidecar) s = hy_sidecar_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (s->set, ==, HY_SIDECAR_LABELS | HY_SIDECAR_INPUT_SIZE);
  g_assert_cmpint (s->input_width, ==, HY_SIDECAR_SIZE_FRAME);
  g_assert_cmpuint (g_strv_length (s->labels), ==, 2);
  g_assert_null (s->unknown_keys);
  g_assert_null (s->notes_json);
  g_unlink (path);
}

/* Each bad file fails with a message holding every fragment. */
static void
test_errors (void)
{
  static const struct {
    const char *text, *fragments[3];
  } cases[] = {
    {"{\"scale\": 255}", {"\"scale\"", "255", "\"0-255\", \"0-1\""}},
    {"{\"input_size\": [64]}", {"\"input_size\"", "[64]", "width"}},
    {"{\"input_size\": [64, 0]}", {"\"input_size\"", "[64,0]", NULL}},
    {"{\"mean\": [1, 2]}", {"\"mean\"", "[1,2]", "1 or 3"}},
    {"{\"std\": [1, 0, 1]}", {"\"std\"", "greater than 0", NULL}},
    {"{\"labels\": [\"a\", 3]}", {"\"labels[1]\"", "3", "a string"}},
    {"{\"labels\": 7}", {"\"labels\"", "7", NULL}},
    {"{\"color_order\": \"RGB\"}", {"\"color_order\"", "\"RGB\"", NULL}},
    {"{\"output\": \"boxes\"}", {"\"output\"", "\"boxes\"", NULL}},
    {"{\"top_k\": 0}", {"\"top_k\"", "from 1 to 1000", NULL}},
    {"{\"top_k\": 2.5}", {"\"top_k\"", "2.5", NULL}},
    {"{\"threshold\": \"0.5\"}", {"\"threshold\"", "float range", NULL}},
    {"{\"iou_threshold\": 1.5}", {"\"iou_threshold\"", "from 0 to 1", NULL}},
    {"{\"input_name\": 1}", {"\"input_name\"", "a string", NULL}},
    {"{\"sidecar_version\": 2}", {"\"sidecar_version\"", "2", NULL}},
    {"{\"description\": []}", {"\"description\"", "a string", NULL}},
    {"[1, 2]", {"one JSON object", NULL, NULL}},
    {"{\"scale\": ", {"not valid JSON", NULL, NULL}},
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree char *path = write_file ("bad-model.json", cases[i].text);
    GError *error = NULL;
    hy_sidecar *s = hy_sidecar_load (path, &error);
    g_assert_null (s);
    g_assert_error (error, HY_ERROR, HY_ERROR_FORMAT);
    g_assert_nonnull (strstr (error->message, path));
    for (int f = 0; f < 3 && cases[i].fragments[f]; f++)
      if (!strstr (error->message, cases[i].fragments[f]))
        g_error ("case %u: \"%s\" not in: %s", i, cases[i].fragments[f],
            error->message);
    g_error_free (error);
    g_unlink (path);
  }
  /* Deep nesting is refused before json-glib recurses. */
  GString *deep = g_string_new ("{\"validation\": ");
  for (int i = 0; i < 100; i++)
    g_string_append_c (deep, '[');
  g_autofree char *path = write_file ("deep-model.json", deep->str);
  g_string_free (deep, TRUE);
  GError *error = NULL;
  g_assert_null (hy_sidecar_load (path, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_FORMAT);
  g_assert_nonnull (strstr (error->message, "nested"));
  g_error_free (error);
  g_unlink (path);
}

/* Loads `text` as a sidecar: the error (NULL when it loaded). */
static GError *
load_error (const char *text)
{
  g_autofree char *path = write_file ("check-model.json", text);
  GError *error = NULL;
  hy_sidecar *s = hy_sidecar_load (path, &error);
  hy_sidecar_free (s);
  g_unlink (path);
  g_assert_true ((s == NULL) == (error != NULL));
  if (error) {
    g_assert_error (error, HY_ERROR, HY_ERROR_FORMAT);
    g_assert_nonnull (strstr (error->message, path));
  }
  return error;
}

static void
assert_refused (const char *text, const char *fragment)
{
  GError *error = load_error (text);
  if (!error)
    g_error ("loaded: %s", text);
  if (!strstr (error->message, fragment))
    g_error ("\"%s\" not in: %s (for %s)", fragment, error->message, text);
  g_error_free (error);
}

static void
assert_loads (const char *text)
{
  GError *error = load_error (text);
  g_assert_no_error (error);
}

/* json-glib reads "{…}{…}" as the first object and drops the rest: a
 * second value is refused, naming the file. */
static void
test_one_value (void)
{
  assert_refused ("{\"scale\": \"0-1\"}{\"scale\": \"0-255\"}",
      "more than one JSON value");
  assert_refused ("{\"scale\": \"0-1\"}\n[1]\n", "more than one JSON value");
  assert_loads ("{\"scale\": \"0-1\"}\n");
}

/* json-glib keeps a repeated key's last value: refused, naming the key,
 * at the top and in a nested object; the same key in two objects is no
 * repeat. */
static void
test_duplicate_keys (void)
{
  assert_refused ("{\"scale\": \"0-1\", \"mean\": [0], \"scale\": \"0-255\"}",
      "key \"scale\"");
  assert_refused ("{\"validation\": {\"top1\": 0.7, \"top1\": 0.9}}",
      "key \"top1\"");
  assert_loads ("{\"scale\": \"0-1\", \"validation\": {\"scale\": 1, "
      "\"x\": {\"scale\": 2}}, \"training\": [{\"a\": 1}, {\"a\": 2}]}");
}

/* The frame conversion computes in float: mean and std must be floats
 * (std one it can divide by), or the sidecar fails at load, naming itself
 * and the key, not at caps time. */
static void
test_float_channels (void)
{
  assert_refused ("{\"mean\": [1e39]}", "\"mean\"");
  assert_refused ("{\"mean\": [0, -3.5e38, 0]}", "\"mean\"");
  assert_refused ("{\"std\": [1e39]}", "\"std\"");
  assert_refused ("{\"std\": [1, 1e-39, 1]}", "\"std\"");
  assert_loads ("{\"mean\": [-3.4e38, 0, 3.4e38], \"std\": [1.2e-38]}");
}

/* input_size takes what the element's input-size takes: 16384 at most. */
static void
test_input_size_bound (void)
{
  assert_refused ("{\"input_size\": [16385, 16]}", "1..16384");
  assert_refused ("{\"input_size\": [16, 65536]}", "\"input_size\"");
  assert_loads ("{\"input_size\": [16384, 16384]}");
}

static void
test_find (void)
{
  GError *error = NULL;
  g_autofree char *model = g_build_filename (dir, "none-symbol.json", NULL);
  g_assert_null (hy_sidecar_find (model, &error));
  g_assert_no_error (error);
  g_autofree char *side = write_file ("bad2-model.json", "{\"mean\": 1}");
  g_autofree char *bad = g_build_filename (dir, "bad2-symbol.json", NULL);
  g_assert_null (hy_sidecar_find (bad, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_FORMAT);
  g_clear_error (&error);
  g_unlink (side);
}

/* Written from a struct, read back equal; a labels file is inlined and
 * params dropped by save_for_prefix. */
static void
test_write_read (void)
{
  g_autofree char *labels = write_file ("l.txt", "cat\ndog\r\n");
  g_autoptr (hy_sidecar) s = hy_sidecar_new ();
  s->set = HY_SIDECAR_INPUT_SIZE | HY_SIDECAR_MEAN | HY_SIDECAR_STD
      | HY_SIDECAR_SCALE | HY_SIDECAR_LABELS | HY_SIDECAR_OUTPUT
      | HY_SIDECAR_PARAMS | HY_SIDECAR_ACTIVATION;
  s->input_width = 224;
  s->input_height = 112;
  s->n_mean = 3;
  s->mean[0] = 123.675;
  s->mean[1] = 116.28;
  s->mean[2] = 103.53;
  s->n_std = 1;
  s->std[0] = 58.395;
  s->labels_file = g_strdup (labels);
  s->params_file = g_strdup ("x-0000.params");
  s->output = HY_SIDECAR_OUTPUT_CLASSIFICATION;
  s->activation = HY_SIDECAR_ACTIVATION_NONE;
  g_autofree char *prefix = g_build_filename (dir, "out", NULL);
  GError *error = NULL;
  g_assert_true (hy_sidecar_save_for_prefix (s, prefix, &error));
  g_assert_no_error (error);
  g_autofree char *model = g_build_filename (dir, "out-symbol.json", NULL);
  g_autoptr (hy_sidecar) r = hy_sidecar_find (model, &error);
  g_assert_no_error (error);
  g_assert_nonnull (r);
  g_assert_cmpuint (r->set, ==, s->set & ~(unsigned) HY_SIDECAR_PARAMS);
  g_assert_cmpint (r->input_width, ==, 224);
  g_assert_cmpint (r->input_height, ==, 112);
  g_assert_cmpfloat (r->mean[1], ==, 116.28);
  g_assert_cmpfloat (r->std[0], ==, 58.395);
  g_assert_false (r->unit_scale);
  g_assert_null (r->labels_file);
  g_assert_cmpuint (g_strv_length (r->labels), ==, 2);
  g_assert_cmpstr (r->labels[1], ==, "dog");
  g_assert_cmpint (r->output, ==, HY_SIDECAR_OUTPUT_CLASSIFICATION);
  g_assert_null (r->unknown_keys);
  g_unlink (r->path);
  g_unlink (labels);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  dir = g_dir_make_tmp ("hy-sidecar-XXXXXX", NULL);
  g_assert_nonnull (dir);
  g_test_add_func ("/sidecar/path-for-model", test_path_for_model);
  g_test_add_func ("/sidecar/read-all", test_read_all);
  g_test_add_func ("/sidecar/empty-and-inline", test_empty_and_inline);
  g_test_add_func ("/sidecar/errors", test_errors);
  g_test_add_func ("/sidecar/one-value", test_one_value);
  g_test_add_func ("/sidecar/duplicate-keys", test_duplicate_keys);
  g_test_add_func ("/sidecar/float-channels", test_float_channels);
  g_test_add_func ("/sidecar/input-size-bound", test_input_size_bound);
  g_test_add_func ("/sidecar/find", test_find);
  g_test_add_func ("/sidecar/write-read", test_write_read);
  int status = g_test_run ();
  g_rmdir (dir);
  g_free (dir);
  return status;
}
