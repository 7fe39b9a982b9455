/*
 * cmd-run.c — `hybridinfer run`: one forward over .npy inputs, outputs as
 * output0.npy, output1.npy, … (one per graph head, in order), all or none
 * (see write_outputs).  With --dump-dir, every layer's output is dumped
 * too (docs/DEBUGGING.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "cli.h"
#include "hybrid-npy.h"

typedef struct run_args {
  char *model, *params, *output_dir, *device, *mode, *dump_dir, *precision;
  char **inputs;
  char *qdq;
} run_args;

static void
run_args_clear (run_args *a)
{
  g_free (a->model);
  g_free (a->params);
  g_free (a->qdq);
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

/* "outputN.npy", exactly: the only names the output set may clear. */
static gboolean
output_index (const char *name, gint64 *n)
{
  if (!g_str_has_prefix (name, "output") || !g_ascii_isdigit (name[6]))
    return FALSE;
  char *end = NULL;
  *n = g_ascii_strtoll (name + 6, &end, 10);
  return !strcmp (end, ".npy");
}

/* Removes every outputN.npy in `dir` with N >= keep. */
static void
remove_outputs (const char *dir, int keep)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  if (!d)
    return;
  /* Names first: no unlinking while the directory is being read. */
  g_autoptr (GPtrArray) doomed = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  gint64 n;
  while ((name = g_dir_read_name (d)))
    if (output_index (name, &n) && n >= keep)
      g_ptr_array_add (doomed, g_build_filename (dir, name, NULL));
  g_dir_close (d);
  for (guint i = 0; i < doomed->len; i++)
    g_unlink (g_ptr_array_index (doomed, i));
}

static gboolean
write_file (const char *path, const char *shown, GBytes *bytes,
    GError **error)
{
  gsize len;
  const char *data = g_bytes_get_data (bytes, &len);
  int fd = g_open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  gsize done = 0;
  int saved = 0;
  if (fd < 0)
    saved = errno;
  while (fd >= 0 && done < len) {
    ssize_t n = write (fd, data + done, len - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      saved = n < 0 ? errno : EIO;
      break;
    }
    done += (gsize) n;
  }
  if (fd >= 0 && close (fd) != 0 && !saved)
    saved = errno;
  if (saved) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: cannot write "
        "%" G_GSIZE_FORMAT " bytes: %s", shown, len, g_strerror (saved));
    return FALSE;
  }
  return TRUE;
}

/* All heads or none.  Each head is written to a temporary beside its
 * name and only when every one is written are they renamed into place; a
 * full disk on head 2 must not leave heads 0 and 1 beside it.  outputN.npy
 * of an earlier run (of a model with more heads) go too, so the directory
 * holds exactly this run's set; a failed run clears the set, so nothing in
 * the directory can pass for its output. */
static gboolean
write_outputs (hy_executor *exec, const char *dir, GError **error)
{
  if (g_mkdir_with_parents (dir, 0755) != 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO,
        "cannot create output directory %s: %s", dir, g_strerror (errno));
    return FALSE;
  }
  int n = hy_executor_n_outputs (exec);
  g_autoptr (GPtrArray) temps = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) finals = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; i < n; i++) {
    g_autofree char *name = g_strdup_printf ("output%d.npy", i);
    g_autofree char *tmp = g_strdup_printf (".output%d.npy.%d.tmp", i,
        (int) getpid ());
    g_ptr_array_add (finals, g_build_filename (dir, name, NULL));
    g_ptr_array_add (temps, g_build_filename (dir, tmp, NULL));
  }
  int written = 0;
  for (; written < n; written++) {
    g_autoptr (GBytes) bytes = hy_npy_write (hy_executor_output (exec,
            written));
    if (!write_file (g_ptr_array_index (temps, written),
            g_ptr_array_index (finals, written), bytes, error)) {
      written++;                /* a part may be there: remove it too */
      goto fail;
    }
  }
  for (int i = 0; i < n; i++) {
    if (g_rename (g_ptr_array_index (temps, i),
            g_ptr_array_index (finals, i)) != 0) {
      int saved = errno;
      g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: cannot rename %s into "
          "place: %s", (char *) g_ptr_array_index (finals, i),
          (char *) g_ptr_array_index (temps, i), g_strerror (saved));
      goto fail;
    }
  }
  remove_outputs (dir, n);
  return TRUE;

fail:
  for (int i = 0; i < written; i++)
    g_unlink (g_ptr_array_index (temps, i));
  remove_outputs (dir, 0);
  return FALSE;
}

int
hy_cmd_run (int argc, char **argv)
{
  run_args a = { 0 };
  GOptionEntry entries[] = {
    {"model", 'm', 0, G_OPTION_ARG_FILENAME, &a.model,
        "Model: prefix-symbol.json or prefix.onnx", "M"},
    {"params", 'p', 0, G_OPTION_ARG_FILENAME, &a.params,
        "Params file (default: newest prefix-NNNN.params beside the model)", "P"},
    HY_CLI_QDQ_OPTION (a.qdq),
    {"input", 'i', 0, G_OPTION_ARG_FILENAME_ARRAY, &a.inputs,
        "Input tensor, float32 .npy (repeat for several inputs)", "[NAME=]FILE"},
    {"output-dir", 'o', 0, G_OPTION_ARG_FILENAME, &a.output_dir,
        "Where output0.npy, output1.npy, … are written", "DIR"},
    {"device", 'd', 0, G_OPTION_ARG_STRING, &a.device,
        "cpu, cuda, cuda:N or auto (default: cpu)", "DEV"},
    {"precision", 0, 0, G_OPTION_ARG_STRING, &a.precision,
        "fp32 (default), fp16 (CUDA only) or bf16 (CPU with AVX512_BF16)", "P"},
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

  model = hy_cli_load_model (a.model, a.params, a.qdq, &error);
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
