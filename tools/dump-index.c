/*
 * dump-index.c — the index.json of a per-layer dump, read as untrusted
 * input (see dump-index.h).
 */
#include <stdio.h>
#include <string.h>

#include "dump-index.h"

static char *
entry_key (const char *name, int output)
{
  return g_strdup_printf ("%s\x1f%d", name, output);
}

void
dump_index_free (dump_index *d)
{
  if (!d)
    return;
  g_free (d->dir);
  g_clear_object (&d->parser);
  if (d->entries)
    g_array_free (d->entries, TRUE);
  if (d->by_key)
    g_hash_table_destroy (d->by_key);
  g_free (d);
}

/* Untrusted JSON: a member of the wrong type reads as absent, quietly. */
static const char *
string_member (JsonObject *o, const char *member)
{
  JsonNode *n = json_object_get_member (o, member);
  return n && JSON_NODE_HOLDS_VALUE (n)
      && json_node_get_value_type (n) == G_TYPE_STRING
      ? json_node_get_string (n) : NULL;
}

/* An integer member, or `def` when absent or not an integer (json-glib's
 * own getter warns on a string and converts a double, out of range too). */
static int
int_member (JsonObject *o, const char *member, int def)
{
  JsonNode *n = json_object_get_member (o, member);
  if (!n || !JSON_NODE_HOLDS_VALUE (n)
      || json_node_get_value_type (n) != G_TYPE_INT64)
    return def;
  gint64 v = json_node_get_int (n);
  return v < G_MININT || v > G_MAXINT ? def : (int) v;
}

static gboolean
read_entry (JsonNode *node, const char *path, guint i, dump_entry *e,
    GError **error)
{
  JsonObject *o = JSON_NODE_HOLDS_OBJECT (node)
      ? json_node_get_object (node) : NULL;
  const char *missing = NULL;
  if (!o)
    missing = "an object";
  else if (!string_member (o, "name"))
    missing = "an object with a string \"name\"";
  else if (!string_member (o, "file"))
    missing = "an object with a string \"file\"";
  if (missing) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: nodes[%u] is not %s", path, i, missing);
    return FALSE;
  }
  e->name = string_member (o, "name");
  e->file = string_member (o, "file");
  e->op = string_member (o, "op") ? string_member (o, "op") : "?";
  e->index = int_member (o, "index", -1);
  e->output = int_member (o, "output", 0);
  JsonNode *inputs = json_object_get_member (o, "inputs");
  e->inputs = inputs && JSON_NODE_HOLDS_ARRAY (inputs)
      ? json_node_get_array (inputs) : NULL;
  /* The index names files inside its own directory, nothing else. */
  if (!*e->file || strchr (e->file, '/') || !strcmp (e->file, "..")) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: nodes[%u] file '%s' is not a file name in the dump directory",
        path, i, e->file);
    return FALSE;
  }
  return TRUE;
}

dump_index *
dump_index_parse (const char *dir, const char *path, const char *json,
    gsize length, GError **error)
{
  /* json-glib recurses: 100,000 '[' would overflow its stack. */
  if (!hy_json_check_nesting (json, length, DUMP_INDEX_MAX_DEPTH, path,
          "a dump index nests 4", error))
    return NULL;
  g_autoptr (dump_index) d = g_new0 (dump_index, 1);
  d->dir = g_strdup (dir);
  d->parser = json_parser_new ();
  GError *local = NULL;
  if (!json_parser_load_from_data (d->parser, json, (gssize) length,
          &local)) {
    hy_json_set_parse_error (error, path, local);
    g_error_free (local);
    return NULL;
  }
  JsonNode *root = json_parser_get_root (d->parser);
  JsonObject *o = root && JSON_NODE_HOLDS_OBJECT (root)
      ? json_node_get_object (root) : NULL;
  JsonNode *nodes = o ? json_object_get_member (o, "nodes") : NULL;
  if (!nodes || !JSON_NODE_HOLDS_ARRAY (nodes)) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: expected an object with a \"nodes\" array", path);
    return NULL;
  }
  JsonArray *arr = json_node_get_array (nodes);
  d->entries = g_array_new (FALSE, TRUE, sizeof (dump_entry));
  d->by_key = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < json_array_get_length (arr); i++) {
    dump_entry e = { 0 };
    if (!read_entry (json_array_get_element (arr, i), path, i, &e, error))
      return NULL;
    g_array_append_val (d->entries, e);
    char *key = entry_key (e.name, e.output);
    if (g_hash_table_contains (d->by_key, key))
      g_free (key);             /* a repeated name: the first one counts */
    else
      g_hash_table_insert (d->by_key, key, GUINT_TO_POINTER (i + 1));
  }
  return g_steal_pointer (&d);
}

dump_index *
dump_index_load (const char *dir, GError **error)
{
  g_autofree char *path = g_build_filename (dir, "index.json", NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS)) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: no index.json (not a "
        "dump from `run --dump-dir` or mxnet_dump.py?)", dir);
    return NULL;
  }
  g_autofree char *text = NULL;
  gsize len;
  if (!hy_file_read_bounded (path, "dump index", DUMP_INDEX_MAX_BYTES, &text,
          &len, error))
    return NULL;
  return dump_index_parse (dir, path, text, len, error);
}

dump_entry *
dump_index_find (dump_index *d, const char *name, int output)
{
  g_autofree char *key = entry_key (name, output);
  guint i = GPOINTER_TO_UINT (g_hash_table_lookup (d->by_key, key));
  return i ? &g_array_index (d->entries, dump_entry, i - 1) : NULL;
}

