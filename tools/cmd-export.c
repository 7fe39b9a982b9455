/*
 * cmd-export.c — `hybridinfer export`: write a loaded model back out as
 * MXNet 1.9.1 export files (PREFIX-symbol.json + PREFIX-NNNN.params).
 *
 * Reading a file and writing it again upgrades legacy (0.8/0.9-era) symbol
 * files and params key spellings to what current MXNet and Gluon's
 * SymbolBlock.imports expect.
 *
 * The model's sidecar (PREFIX-model.json, hybrid-sidecar.h), when it has
 * one, is rewritten beside the new files: its labels inline and no params
 * key, so that the new sidecar holds wherever the export is moved.
 */
#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>

#include "cli.h"

typedef struct export_args {
  char *model, *params, *prefix, *format;
  char **shapes;
  int epoch;
  char *qdq;
} export_args;

/* PREFIX.onnx for the inputs' declared shapes or those of --shape. */
static gboolean
export_onnx (const hy_model *model, const export_args *a, GError **error)
{
  hy_shapes *shapes = hy_shapes_new (model);
  g_autofree char *path = g_strdup_printf ("%s.onnx", a->prefix);
  gboolean ok = hy_cli_apply_shapes (shapes, a->shapes, error);
  for (int i = 0; ok && i < hy_model_n_inputs (model); i++) {
    if (hy_shapes_input (shapes, i).ndim < 0) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "input '%s' has no declared shape, and an ONNX file holds one: "
          "give it with --shape %s=DIMS (like 1x3x224x224)",
          hy_model_input_name (model, i), hy_model_input_name (model, i));
      ok = FALSE;
    }
  }
  ok = ok && hy_shapes_infer (shapes, error)
      && hy_model_export_onnx (model, shapes, path, error);
  hy_shapes_free (shapes);
  return ok;
}

/* The prefix's folder must exist: hy_model_export writes beside it. */
static gboolean
ensure_prefix_dir (const char *prefix, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (prefix);
  if (g_mkdir_with_parents (dir, 0755) != 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO,
        "cannot create the folder %s for --prefix %s: %s", dir, prefix,
        g_strerror (errno));
    return FALSE;
  }
  return TRUE;
}

int
hy_cmd_export (int argc, char **argv)
{
  export_args a = { .epoch = 0 };
  GOptionEntry entries[] = {
    {"model", 'm', 0, G_OPTION_ARG_FILENAME, &a.model,
        "Model: prefix-symbol.json or prefix.onnx", "M"},
    {"params", 'p', 0, G_OPTION_ARG_FILENAME, &a.params,
        "Params file (default: newest prefix-NNNN.params beside the model)", "P"},
    /* A QDQ file is written back as it is unless asked: its int8 model
     * is MXNet's form, which `quantize` writes. */
    {"qdq", 0, 0, G_OPTION_ARG_STRING, &a.qdq,
        "A QDQ ONNX file: float (default: its pairs kept as written) or "
        "int8 (its int8 model)", "MODE"},
    {"prefix", 'o', 0, G_OPTION_ARG_FILENAME, &a.prefix,
        "Write OUT-symbol.json, OUT-NNNN.params, or OUT.onnx with --format "
        "onnx (and OUT-model.json when the model has a sidecar)", "OUT"},
    {"epoch", 'e', 0, G_OPTION_ARG_INT, &a.epoch,
        "The NNNN of the params file name (default 0)", "N"},
    {"format", 'f', 0, G_OPTION_ARG_STRING, &a.format,
        "mxnet (default: OUT-symbol.json + OUT-NNNN.params) or onnx "
        "(OUT.onnx, opset 13: an op without an ONNX form is refused, naming "
        "the node)", "F"},
    {"shape", 's', 0, G_OPTION_ARG_STRING_ARRAY, &a.shapes,
        "With --format onnx: an input's shape, [NAME=]1x3x224x224 "
        "(repeatable; default: the declared ones). The file's shapes, "
        "batch included, are static", "SHAPE"},
    {NULL}
  };
  g_autoptr (GOptionContext) ctx =
      g_option_context_new ("- write the model as MXNet 1.9.1 export files "
          "or as ONNX");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  hy_model *model = NULL;
  int status = HY_EXIT_FAIL;
  gboolean onnx = FALSE;

  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    status = hy_cli_usage (ctx, "export: %s", error->message);
    goto out;
  }
  if (!a.model || !a.prefix) {
    status = hy_cli_usage (ctx, "export: --model and --prefix are required");
    goto out;
  }
  if (argc > 1) {
    status = hy_cli_usage (ctx, "export: unexpected argument '%s'", argv[1]);
    goto out;
  }
  /* MXNet formats the epoch with %04d; past 9999 the name still works but
   * no longer sorts, and a negative one is surely a typo. */
  if (a.epoch < 0 || a.epoch > 9999) {
    status = hy_cli_usage (ctx, "export: --epoch %d is not in 0..9999",
        a.epoch);
    goto out;
  }
  onnx = a.format && !strcmp (a.format, "onnx");
  if (a.format && !onnx && strcmp (a.format, "mxnet")) {
    status = hy_cli_usage (ctx, "export: --format %s is not mxnet or onnx",
        a.format);
    goto out;
  }
  if (a.shapes && !onnx) {
    status = hy_cli_usage (ctx, "export: --shape is for --format onnx (an "
        "MXNet export holds no input shapes)");
    goto out;
  }
  model = hy_cli_load_model (a.model, a.params,
      a.qdq ? a.qdq : "float", &error);
  if (!model || !ensure_prefix_dir (a.prefix, &error)
      || !(onnx ? export_onnx (model, &a, &error)
          : hy_model_export (model, a.prefix, a.epoch, &error))
      || !hy_cli_copy_sidecar (a.model, a.prefix, &error)) {
    status = hy_cli_fail (error);
    goto out;
  }
  status = HY_EXIT_OK;

out:
  hy_model_free (model);
  g_free (a.model);
  g_free (a.params);
  g_free (a.qdq);
  g_free (a.prefix);
  g_free (a.format);
  g_strfreev (a.shapes);
  return status;
}
