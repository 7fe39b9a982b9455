/*
 * cmd-run.c — `hybridinfer run`: one forward over .npy inputs, outputs as
 * output0.npy, output1.npy, … (one per graph head, in order).  With
 * --dump-dir, every layer's output is dumped too (docs/DEBUGGING.md).
 */
#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>

#include "cli.h"
#include "npy.h"

typedef struct run_args {
  char *model, *params, *output_dir, *device, *mode, *dump_dir, *precision;
  char **inputs;
} run_args;

static void
run_args_clear (run_args *a)
{
  g_free (a->model);
  g_free (a->params);
  g_free (a->output_dir);
  g_free (a->device);
  g_free (a->mode);
  g_free (a->precision);
  g_free (a->dump_dir);
  g_strfreev (a->inputs);
}

/* Orders the given "[NAME=]FILE" inputs as the model's inputs. */
static gboolean
load_inputs (hy_model *model, char **specs, hy_tensor **tensors,
    GError **error)
{
  int n = hy_model_n_inputs (model);
  int n_specs = specs ? (int) g_strv_length (specs) : 0;
  if (n_specs != n) {
    GString *names = g_string_new (NULL);
    for (int i = 0; i < n; i++)
      g_string_append_printf (names, "%s'%s'", i ? ", " : "",
          hy_model_input_name (model, i));
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "the model takes %d input(s) (%s), %d --input given", n, names->str,
        n_specs);
    g_string_free (names, TRUE);
    return FALSE;
  }
  int next_unnamed = 0;
  for (int s = 0; s < n_specs; s++) {
    g_autofree char *name = NULL, *file = NULL;
    hy_cli_split_assignment (specs[s], &name, &file);
    int idx;
    if (name) {
      idx = hy_model_input_index (model, name);
      if (idx < 0) {
        g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
            "--input %s: the model has no input named '%s'", specs[s], name);
        return FALSE;
      }
    } else {
      while (next_unnamed < n && tensors[next_unnamed])
        next_unnamed++;
      idx = next_unnamed;
    }
    if (idx >= n || tensors[idx]) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "--input %s: input '%s' is given twice", specs[s],
          hy_model_input_name (model, MIN (idx, n - 1)));
      return FALSE;
    }
    tensors[idx] = hy_npy_load (file, error);
    if (!tensors[idx]) {
      g_prefix_error (error, "input '%s': ", hy_model_input_name (model, idx));
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
write_outputs (hy_executor *exec, const char *dir, GError **error)
{
  if (g_mkdir_with_parents (dir, 0755) != 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO,
        "cannot create output directory %s: %s", dir, g_strerror (errno));
    return FALSE;
  }
  for (int i = 0; i < hy_executor_n_outputs (exec); i++) {
    g_autofree char *name = g_strdup_printf ("output%d.npy", i);
    g_autofree char *path = g_build_filename (dir, name, NULL);
    if (!hy_npy_save (hy_executor_output (exec, i), path, error))
      return FALSE;
  }
  return TRUE;
}

int
hy_cmd_run (int argc, char **argv)
{
  run_args a = { 0 };
  GOptionEntry entries[] = {
    {"model", 'm', 0, G_OPTION_ARG_FILENAME, &a.model,
        "Symbol file (prefix-symbol.json)", "M"},
    {"params", 'p', 0, G_OPTION_ARG_FILENAME, &a.params,
        "Params file (default: newest prefix-NNNN.params beside the model)", "P"},
    {"input", 'i', 0, G_OPTION_ARG_FILENAME_ARRAY, &a.inputs,
        "Input tensor, float32 .npy (repeat for several inputs)", "[NAME=]FILE"},
    {"output-dir", 'o', 0, G_OPTION_ARG_FILENAME, &a.output_dir,
        "Where output0.npy, output1.npy, … are written", "DIR"},
    {"device", 'd', 0, G_OPTION_ARG_STRING, &a.device,
        "cpu, cuda, cuda:N or auto (default: cpu)", "DEV"},
    {"precision", 0, 0, G_OPTION_ARG_STRING, &a.precision,
        "fp32 (default) or fp16 (CUDA only)", "P"},
    {"mode", 0, 0, G_OPTION_ARG_STRING, &a.mode,
        "hybrid (default) or imperative", "MODE"},
    {"dump-dir", 0, 0, G_OPTION_ARG_FILENAME, &a.dump_dir,
        "Also write every layer's output and index.json here (implies "
        "--mode imperative)", "DIR"},
    {NULL}
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- run one forward");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  /* Declared before the first goto: a jump past an initialised g_autofree
   * would free stack garbage at "out". */
  g_autofree char *note = NULL;
  int status = HY_EXIT_FAIL;
  hy_model *model = NULL;
  hy_executor *exec = NULL;
  hy_dump *dump = NULL;
  hy_tensor **tensors = NULL;
  int n_inputs = 0;

  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    status = hy_cli_usage (ctx, "run: %s", error->message);
    goto out;
  }
  if (!a.model || !a.output_dir) {
    status = hy_cli_usage (ctx, "run: --model and --output-dir are required");
    goto out;
  }
  /* Hybrid mode runs fused nodes with no one-to-one layer: nothing to
   * dump.  Only an explicit --mode hybrid conflicts. */
  if (a.dump_dir && a.mode && !strcmp (a.mode, "hybrid")) {
    status = hy_cli_usage (ctx, "run: --dump-dir needs --mode imperative "
        "(hybrid mode fuses layers, so they cannot be dumped one by one)");
    goto out;
  }
  hy_mode mode;
  hy_device device;
  hy_precision precision;
  if (!hy_cli_parse_mode (a.dump_dir && !a.mode ? "imperative" : a.mode, &mode,
          &error)
      || !hy_precision_parse (a.precision ? a.precision : "fp32", &precision,
          &error)
      || !hy_device_resolve_auto (a.device ? a.device : "cpu", &device, &note,
          &error)) {
    status = hy_cli_fail (error);
    goto out;
  }
  if (note)
    g_printerr ("hybridinfer: %s\n", note);

  model = hy_cli_load_model (a.model, a.params, &error);
  if (!model) {
    status = hy_cli_fail (error);
    goto out;
  }
  n_inputs = hy_model_n_inputs (model);
  tensors = g_new0 (hy_tensor *, MAX (n_inputs, 1));
  if (!load_inputs (model, a.inputs, tensors, &error)
      || !(exec = hy_executor_new (model, device, mode, &error))
      || !hy_executor_set_precision (exec, precision, &error)
      || (a.dump_dir && !(dump = hy_dump_new (a.dump_dir, &error)))) {
    status = hy_cli_fail (error);
    goto out;
  }
  if (dump)
    hy_dump_attach (dump, exec);
  if (!hy_executor_forward (exec, (const hy_tensor *const *) tensors,
          n_inputs, &error)
      || !write_outputs (exec, a.output_dir, &error)
      || (dump && !hy_dump_finish (dump, &error))) {
    status = hy_cli_fail (error);
    goto out;
  }
  status = HY_EXIT_OK;

out:
  for (int i = 0; tensors && i < n_inputs; i++)
    hy_tensor_free (tensors[i]);
  g_free (tensors);
  hy_executor_free (exec);
  hy_dump_free (dump);         /* after the executor that calls into it */
  hy_model_free (model);
  run_args_clear (&a);
  return status;
}
