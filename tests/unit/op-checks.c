/*
 * op-checks.c — the op unit tests' shared checks (op-checks.h).
 */
#include <string.h>

#include <glib/gstdio.h>

#include "core/op.h"
#include "op-checks.h"

hy_shape
shape_of (const int64_t *dims, size_t n)
{
  return hy_shape_make ((int) n, dims);
}

/* Parses `op` with attributes kv and infers its output for in[0..n_in):
 * the output shape as text, or NULL with *error set. */
static char *
infer (const char *op_name, const char *const *kv, const hy_shape *in,
    int n_in, GError **error)
{
  const hy_op_info *op = hy_op_lookup (op_name);
  g_assert_nonnull (op);
  g_assert_nonnull (op->def);
  g_autoptr (GHashTable) attrs = g_hash_table_new (g_str_hash, g_str_equal);
  for (int i = 0; kv && kv[i]; i += 2)
    g_hash_table_insert (attrs, (char *) kv[i], (char *) kv[i + 1]);
  g_autofree void *params = hy_op_params_new (op, attrs, error);
  if (!params)
    return NULL;
  g_assert_cmpint (hy_op_num_inputs (op, params), ==, n_in);
  hy_shape out;
  if (!op->def->infer_shape (params, in, n_in, &out, 1, error))
    return NULL;
  char buf[HY_SHAPE_STRLEN];
  return g_strdup (hy_shape_format (&out, buf, sizeof buf));
}

void
expect_shape (const char *op, const char *const *kv, const hy_shape *in,
    int n_in, const char *want)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *got = infer (op, kv, in, n_in, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (got, ==, want);
}

void
expect_error (const char *op, const char *const *kv, const hy_shape *in,
    int n_in, const char *needle)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *got = infer (op, kv, in, n_in, &error);
  if (got)
    g_error ("%s: expected an error mentioning \"%s\", got %s", op, needle,
        got);
  g_assert_true (error->domain == HY_ERROR);
  if (!strstr (error->message, needle))
    g_error ("%s: message \"%s\" lacks \"%s\"", op, error->message, needle);
}

hy_model *
load_json (const char *json, GError **error)
{
  g_autofree char *dir = g_dir_make_tmp ("hy-test-ops-XXXXXX", NULL);
  g_assert_nonnull (dir);
  g_autofree char *sym = g_build_filename (dir, "m-symbol.json", NULL);
  g_assert_true (g_file_set_contents (sym, json, -1, NULL));
  hy_model *model = hy_model_load (sym, NULL, error);
  g_unlink (sym);
  g_rmdir (dir);
  return model;
}
