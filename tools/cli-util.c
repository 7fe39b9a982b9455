/*
 * cli-util.c — argument parsing helpers and error reporting for the tool.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hybrid-quantize.h"
#include "hybrid-sidecar.h"

int
hy_cli_fail (const GError *error)
{
  fprintf (stderr, "hybridinfer: error: %s\n", error->message);
  return HY_EXIT_FAIL;
}

int
hy_cli_failf (const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  g_autofree char *msg = g_strdup_vprintf (format, ap);
  va_end (ap);
  fprintf (stderr, "hybridinfer: error: %s\n", msg);
  return HY_EXIT_FAIL;
}

int
hy_cli_usage (GOptionContext *ctx, const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  g_autofree char *msg = g_strdup_vprintf (format, ap);
  va_end (ap);
  fprintf (stderr, "hybridinfer: %s\n", msg);
  if (ctx)
    fprintf (stderr, "Try '%s --help'.\n", g_get_prgname ());
  return HY_EXIT_USAGE;
}

void
hy_cli_split_assignment (const char *text, char **name, char **value)
{
  const char *eq = strchr (text, '=');
  if (eq && eq != text) {
    *name = g_strndup (text, eq - text);
    *value = g_strdup (eq + 1);
  } else {
    *name = NULL;
    *value = g_strdup (text);
  }
}

gboolean
hy_cli_parse_shape (const char *text, char **name, hy_shape *out,
    GError **error)
{
  g_autofree char *dims = NULL;
  hy_cli_split_assignment (text, name, &dims);
  g_auto (GStrv) parts = g_strsplit_set (dims, "x,", -1);
  hy_shape s = { .ndim = 0 };
  for (int i = 0; parts[i]; i++) {
    char *end = NULL;
    gint64 v = g_ascii_strtoll (parts[i], &end, 10);
    if (s.ndim >= HY_MAX_DIMS || !end || *end || end == parts[i] || v <= 0
        || v > G_MAXINT32) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "shape '%s' is not like 1x3x224x224 (1 to %d positive dims)",
          text, HY_MAX_DIMS);
      g_clear_pointer (name, g_free);
      return FALSE;
    }
    s.dims[s.ndim++] = v;
  }
  *out = s;
  return TRUE;
}

gboolean
hy_cli_parse_mode (const char *text, hy_mode *out, GError **error)
{
  if (!text || !strcmp (text, "hybrid"))
    *out = HY_MODE_HYBRID;
  else if (!strcmp (text, "imperative"))
    *out = HY_MODE_IMPERATIVE;
  else {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "--mode '%s' is not hybrid or imperative", text);
    return FALSE;
  }
  return TRUE;
}

gboolean
hy_cli_apply_shapes (hy_shapes *shapes, char **specs, GError **error)
{
  const hy_model *model = hy_shapes_model (shapes);
  for (int s = 0; specs && specs[s]; s++) {
    g_autofree char *name = NULL;
    hy_shape shape;
    if (!hy_cli_parse_shape (specs[s], &name, &shape, error))
      return FALSE;
    if (!name && hy_model_n_inputs (model) != 1) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "--shape %s: the model has %d inputs, name one (NAME=%s)",
          specs[s], hy_model_n_inputs (model), specs[s]);
      return FALSE;
    }
    if (!hy_shapes_set_input (shapes,
            name ? name : hy_model_input_name (model, 0), &shape, error))
      return FALSE;
  }
  return TRUE;
}

gboolean
hy_cli_parse_qdq (const char *text, hy_qdq_mode *out, GError **error)
{
  if (hy_qdq_mode_parse (text ? text : "int8", out, error))
    return TRUE;
  g_prefix_error (error, "--qdq: ");
  return FALSE;
}

hy_model *
hy_cli_load_model (const char *model, const char *params, const char *qdq,
    GError **error)
{
  hy_qdq_mode mode;
  g_autofree char *note = NULL;
  if (!hy_cli_parse_qdq (qdq, &mode, error))
    return NULL;
  hy_model *m = hy_model_load_qdq (model, params, mode, &note, error);
  if (note)
    g_printerr ("hybridinfer: %s\n", note);
  return m;
}

void
hy_cli_tune_blas (char **argv)
{
  if (getenv ("OPENBLAS_CORETYPE") || getenv ("HYBRIDINFER_NO_BLAS_TUNE"))
    return;
  const char *coretype = hy_blas_suggested_coretype ();
  if (!coretype)
    return;
  setenv ("OPENBLAS_CORETYPE", coretype, 1);
  /* /proc/self/exe keeps working when argv[0] is a bare name on PATH. */
  execv ("/proc/self/exe", argv);
  /* exec failed: carry on with the kernels OpenBLAS chose. */
}

/* The source model's sidecar, rewritten for the new prefix.  A sidecar
 * that cannot be read fails the command (a copy would carry the mistake);
 * its unknown keys are dropped with a warning. */
gboolean
hy_cli_copy_sidecar (const char *model, const char *prefix, GError **error)
{
  GError *local = NULL;
  g_autoptr (hy_sidecar) sidecar = hy_sidecar_find (model, &local);
  if (!sidecar) {
    if (!local)
      return TRUE;
    g_propagate_error (error, local);
    return FALSE;
  }
  if (sidecar->unknown_keys) {
    g_autofree char *keys = g_strjoinv ("\", \"", sidecar->unknown_keys);
    g_printerr ("hybridinfer: warning: sidecar %s: unknown key(s) \"%s\" "
        "not copied\n", sidecar->path, keys);
  }
  return hy_sidecar_save_for_prefix (sidecar, prefix, error);
}
