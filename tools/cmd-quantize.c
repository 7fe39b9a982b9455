/*
 * cmd-quantize.c — `hybridinfer quantize`: calibrate an fp32 export on
 * .npy batches and write its int8 form as MXNet 1.9.1's quantize_net_v2
 * would (hybrid-quantize.h): real MXNet and hybridinfer both load it.
 *
 *   hybridinfer quantize M-symbol.json --calib DIR|A.npy,B.npy
 *       --calib-mode naive|entropy [--exclude NAME,...] [--exclude-op OP,...]
 *       [--dtype auto|int8|uint8] -o PREFIX
 *
 * Each .npy file is one calibration batch (a directory: its *.npy files in
 * name order), as one batch of MXNet's calibration iterator.  The model's
 * sidecar, when it has one, is rewritten beside the int8 files.
 */
#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>

#include "cli.h"
#include "hybrid-npy.h"
#include "hybrid-quantize.h"

typedef struct quantize_args {
  char *params, *prefix, *mode, *dtype;
  char **calib, **exclude, **exclude_op;
} quantize_args;

static int
compare_paths (gconstpointer a, gconstpointer b, gpointer user_data)
{
  (void) user_data;
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* A directory's .npy files, in name order. */
static gboolean
add_dir (GPtrArray *files, const char *dir, GError **error)
{
  GError *local = NULL;
  g_autoptr (GDir) d = g_dir_open (dir, 0, &local);
  if (!d) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO, "--calib %s: %s", dir,
        local->message);
    g_error_free (local);
    return FALSE;
  }
  guint before = files->len;
  const char *name;
  while ((name = g_dir_read_name (d)))
    if (g_str_has_suffix (name, ".npy"))
      g_ptr_array_add (files, g_build_filename (dir, name, NULL));
  if (files->len == before) {
    g_set_error (error, HY_ERROR, HY_ERROR_MISSING,
        "--calib %s: the folder holds no .npy file", dir);
    return FALSE;
  }
  g_qsort_with_data (files->pdata + before, (gint) (files->len - before),
      sizeof (gpointer), compare_paths, NULL);
  return TRUE;
}

/* Every --calib value: folders, files, or comma-separated files. */
static GPtrArray *
calib_files (char **values, GError **error)
{
  GPtrArray *files = g_ptr_array_new_with_free_func (g_free);
  for (char **v = values; v && *v; v++) {
    g_auto (GStrv) parts = g_strsplit (*v, ",", -1);
    for (char **p = parts; *p; p++) {
      if (!**p)
        continue;
      if (g_file_test (*p, G_FILE_TEST_IS_DIR)) {
        if (!add_dir (files, *p, error)) {
          g_ptr_array_unref (files);
          return NULL;
        }
      } else {
        g_ptr_array_add (files, g_strdup (*p));
      }
    }
  }
  if (files->len == 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_MISSING,
        "--calib names no .npy file");
    g_ptr_array_unref (files);
    return NULL;
  }
  return files;
}

/* "a,b" repeated → one NULL-terminated list. */
static char **
split_lists (char **values)
{
  GPtrArray *out = g_ptr_array_new ();
  for (char **v = values; v && *v; v++) {
    g_auto (GStrv) parts = g_strsplit (*v, ",", -1);
    for (char **p = parts; *p; p++)
      if (**p)
        g_ptr_array_add (out, g_strdup (*p));
  }
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (out, FALSE);
}

static gboolean
calibrate (hy_quantizer *q, const hy_model *model, GPtrArray *files,
    GError **error)
{
  for (guint i = 0; i < files->len; i++) {
    const char *path = files->pdata[i];
    hy_tensor *t = hy_npy_load (path, error);
    if (!t)
      return FALSE;
    const hy_tensor *inputs[1] = { t };
    gboolean ok = hy_quantizer_calibrate (q, inputs, error);
    hy_tensor_free (t);
    if (!ok) {
      g_prefix_error (error, "%s (input '%s'): ", path,
          hy_model_input_name (model, 0));
      return FALSE;
    }
  }
  return TRUE;
}

/* A QDQ file's int8 model, its ranges from its pairs, as an MXNet int8
 * export. */
static int
save_qdq (const hy_model *model, const char *path, const char *prefix,
    const char *dir)
{
  g_autoptr (GError) error = NULL;
  hy_qdq_summary sum;
  if (g_mkdir_with_parents (dir, 0755) != 0)
    return hy_cli_failf ("cannot create the folder %s for -o %s: %s", dir,
        prefix, g_strerror (errno));
  if (!hy_qdq_save (model, prefix, &sum, &error)
      || !hy_cli_copy_sidecar (path, prefix, &error))
    return hy_cli_fail (error);
  g_autofree char *text = hy_qdq_summary_format (&sum);
  g_print ("%s-symbol.json: %s\n", prefix, text);
  return HY_EXIT_OK;
}

int
hy_cmd_quantize (int argc, char **argv)
{
  quantize_args a = { 0 };
  GOptionEntry entries[] = {
    {"params", 'p', 0, G_OPTION_ARG_FILENAME, &a.params,
        "Params file (default: newest prefix-NNNN.params beside the model)", "P"},
    {"calib", 'c', 0, G_OPTION_ARG_FILENAME_ARRAY, &a.calib,
        "Calibration batches: .npy files (comma-separated) or a folder of "
        "them; one batch per file", "DIR|NPY"},
    {"calib-mode", 0, 0, G_OPTION_ARG_STRING, &a.mode,
        "naive (min/max) or entropy (KL threshold); default entropy", "MODE"},
    {"exclude", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a.exclude,
        "Layers (fp32 node names) left fp32", "NAME,..."},
    {"exclude-op", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a.exclude_op,
        "Ops left fp32 (Convolution, FullyConnected, Pooling, Flatten)",
        "OP,..."},
    {"dtype", 0, 0, G_OPTION_ARG_STRING, &a.dtype,
        "What fp32 data is quantized to: auto (default), int8 or uint8", "T"},
    {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.prefix,
        "Write OUT-symbol.json and OUT-0000.params", "OUT"},
    {NULL}
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
      "MODEL - calibrate and write an int8 model MXNet loads (a QDQ ONNX "
      "file: from its own scales, no --calib)");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  hy_model *model = NULL;
  hy_quantizer *q = NULL;
  GPtrArray *files = NULL;
  g_auto (GStrv) exclude = NULL, exclude_op = NULL;
  g_autofree char *dir = NULL;
  int status = HY_EXIT_FAIL;
  hy_quantize_options opts = { .calib_mode = HY_CALIB_ENTROPY };

  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    status = hy_cli_usage (ctx, "quantize: %s", error->message);
    goto out;
  }
  if (argc != 2) {
    status = hy_cli_usage (ctx, argc < 2
        ? "quantize: the model's symbol file is required"
        : "quantize: unexpected argument '%s'", argc < 2 ? "" : argv[2]);
    goto out;
  }
  if (!a.prefix) {
    status = hy_cli_usage (ctx, "quantize: -o is required");
    goto out;
  }
  if ((a.mode && !hy_calib_mode_parse (a.mode, &opts.calib_mode, &error))
      || (a.dtype && !hy_quantized_dtype_parse (a.dtype, &opts.dtype,
              &error))) {
    status = hy_cli_usage (ctx, "quantize: %s", error->message);
    goto out;
  }
  exclude = split_lists (a.exclude);
  exclude_op = split_lists (a.exclude_op);
  opts.exclude_layers = (const char *const *) exclude;
  opts.exclude_ops = (const char *const *) exclude_op;
  dir = g_path_get_dirname (a.prefix);
  if (!(model = hy_cli_load_model (argv[1], a.params, "float", &error))) {
    status = hy_cli_fail (error);
    goto out;
  }
  if (hy_model_has_qdq (model)) {
    status = a.calib
        ? hy_cli_usage (ctx, "quantize: %s is quantized already (its "
            "QuantizeLinear/DequantizeLinear pairs give the ranges): give "
            "no --calib", argv[1])
        : save_qdq (model, argv[1], a.prefix, dir);
    goto out;
  }
  if (!a.calib) {
    status = hy_cli_usage (ctx, "quantize: --calib is required");
    goto out;
  }
  if (!(files = calib_files (a.calib, &error))) {
    status = hy_cli_fail (error);
    goto out;
  }
  if (hy_model_n_inputs (model) != 1) {
    status = hy_cli_failf ("%s: the model has %d inputs; quantize feeds "
        "each .npy file to a model's one input", argv[1],
        hy_model_n_inputs (model));
    goto out;
  }
  if (g_mkdir_with_parents (dir, 0755) != 0) {
    status = hy_cli_failf ("cannot create the folder %s for -o %s: %s", dir,
        a.prefix, g_strerror (errno));
    goto out;
  }
  if (!(q = hy_quantizer_new (model, &opts, &error))
      || !calibrate (q, model, files, &error)
      || !hy_quantizer_save (q, a.prefix, &error)
      || !hy_cli_copy_sidecar (argv[1], a.prefix, &error)) {
    status = hy_cli_fail (error);
    goto out;
  }
  g_print ("%s-symbol.json: %d int8 layers, calibrated (%s) on %d "
      "batches\n", a.prefix, hy_quantizer_n_quantized (q),
      opts.calib_mode == HY_CALIB_NAIVE ? "naive" : "entropy",
      hy_quantizer_n_batches (q));
  status = HY_EXIT_OK;

out:
  hy_quantizer_free (q);
  hy_model_free (model);
  if (files)
    g_ptr_array_unref (files);
  g_free (a.params);
  g_free (a.prefix);
  g_free (a.mode);
  g_free (a.dtype);
  g_strfreev (a.calib);
  g_strfreev (a.exclude);
  g_strfreev (a.exclude_op);
  return status;
}
