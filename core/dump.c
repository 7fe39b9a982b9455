/*
 * dump.c — per-layer dumps: every op node output of an imperative forward
 * as a .npy file, plus an index.json describing them.
 *
 * The format is shared with tests/conformance/mxnet_dump.py, which writes
 * the same files from real MXNet, so that `hybridinfer diff` can find the
 * first layer where the two disagree.  The node hook cannot fail a forward,
 * so the first write error is kept and reported by hy_dump_finish.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "hybrid.h"
#include "hybrid-npy.h"

struct hy_dump {
  char *dir;
  char *model;                  /* symbol path, from the first event */
  GPtrArray *entries;           /* one JSON object text per file written */
  int last_index;               /* node index of the previous event */
  GError *error;                /* the first write error */
};

/* Statistics over the finite values; NaN and ±inf are only counted. */
typedef struct value_stats {
  double min, max, mean, std;
  gint64 n_finite, nan_count, inf_count;
} value_stats;

static value_stats
compute_stats (const hy_tensor *t)
{
  value_stats s = { .min = INFINITY, .max = -INFINITY };
  gint64 n = hy_shape_numel (&t->shape);
  double sum = 0;
  for (gint64 i = 0; i < n; i++) {
    float v = t->data[i];
    if (isnan (v))
      s.nan_count++;
    else if (isinf (v))
      s.inf_count++;
    else {
      s.n_finite++;
      sum += v;
      s.min = MIN (s.min, v);
      s.max = MAX (s.max, v);
    }
  }
  if (s.n_finite == 0)
    return s;
  s.mean = sum / (double) s.n_finite;
  /* A second pass: sum-of-squares minus mean² loses everything when the
   * mean is large next to the spread. */
  double sq = 0;
  for (gint64 i = 0; i < n; i++) {
    float v = t->data[i];
    if (isfinite (v))
      sq += (v - s.mean) * (v - s.mean);
  }
  s.std = sqrt (sq / (double) s.n_finite);
  return s;
}

/* Anything outside [A-Za-z0-9._-] becomes '_': node names are free text. */
static char *
sanitize_name (const char *name)
{
  char *s = g_strdup (name);
  for (char *p = s; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '.' && *p != '_' && *p != '-')
      *p = '_';
  return s;
}

static void
append_string (GString *out, const char *text)
{
  g_autoptr (JsonNode) node = json_node_new (JSON_NODE_VALUE);
  json_node_set_string (node, text);
  g_autofree char *quoted = json_to_string (node, FALSE);
  g_string_append (out, quoted);
}

/* JSON has no NaN: a statistic over no finite values is null. */
static void
append_number (GString *out, double v, gboolean defined)
{
  if (!defined || !isfinite (v)) {
    g_string_append (out, "null");
    return;
  }
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append (out, g_ascii_formatd (buf, sizeof buf, "%.9g", v));
}

static char *
describe_output (const hy_model *model, const hy_node_event *ev, int k,
    const char *file, const value_stats *s)
{
  const hy_node_desc *node = ev->node;
  const hy_shape *shape = &ev->outputs[k]->shape;
  GString *o = g_string_new ("{\"index\": ");
  g_string_append_printf (o, "%d, \"name\": ", ev->index);
  append_string (o, node->name);
  g_string_append (o, ", \"op\": ");
  append_string (o, node->op);
  g_string_append (o, ", \"inputs\": [");
  for (int i = 0; i < node->n_inputs; i++) {
    if (i)
      g_string_append (o, ", ");
    append_string (o, hy_model_node_input (model, ev->index, i, NULL));
  }
  g_string_append_printf (o, "], \"output\": %d, \"shape\": [", k);
  for (int d = 0; d < shape->ndim; d++)
    g_string_append_printf (o, "%s%" G_GINT64_FORMAT, d ? ", " : "",
        (gint64) shape->dims[d]);
  g_string_append (o, "], \"dtype\": \"float32\", \"file\": ");
  append_string (o, file);
  gboolean any = s->n_finite > 0;
  g_string_append (o, ", \"min\": ");
  append_number (o, s->min, any);
  g_string_append (o, ", \"max\": ");
  append_number (o, s->max, any);
  g_string_append (o, ", \"mean\": ");
  append_number (o, s->mean, any);
  g_string_append (o, ", \"std\": ");
  append_number (o, s->std, any);
  g_string_append_printf (o, ", \"nan_count\": %" G_GINT64_FORMAT
      ", \"inf_count\": %" G_GINT64_FORMAT ", \"time_us\": ",
      s->nan_count, s->inf_count);
  append_number (o, ev->elapsed_us, TRUE);
  g_string_append_c (o, '}');
  return g_string_free (o, FALSE);
}

static void
on_node (const hy_model *model, const hy_node_event *ev, void *user_data)
{
  hy_dump *dump = user_data;
  /* Node indices only grow within a forward: a smaller one starts the next
   * forward, whose files replace this one's. */
  if (ev->index <= dump->last_index)
    g_ptr_array_set_size (dump->entries, 0);
  dump->last_index = ev->index;
  if (!dump->model)
    dump->model = g_strdup (hy_model_symbol_path (model));

  g_autofree char *base = sanitize_name (ev->node->name);
  for (int k = 0; k < ev->n_outputs; k++) {
    g_autofree char *file = k == 0
        ? g_strdup_printf ("%04d_%s.npy", ev->index, base)
        : g_strdup_printf ("%04d_%s_out%d.npy", ev->index, base, k);
    /* After one failure the directory is presumably gone or full: stop
     * writing rather than repeat the same error for every node. */
    if (!dump->error) {
      g_autofree char *path = g_build_filename (dump->dir, file, NULL);
      hy_npy_save (ev->outputs[k], path, &dump->error);
    }
    value_stats s = compute_stats (ev->outputs[k]);
    g_ptr_array_add (dump->entries,
        describe_output (model, ev, k, file, &s));
  }
}

hy_dump *
hy_dump_new (const char *dir, GError **error)
{
  if (g_mkdir_with_parents (dir, 0755) != 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO,
        "cannot create dump directory %s: %s", dir, g_strerror (errno));
    return NULL;
  }
  hy_dump *dump = g_new0 (hy_dump, 1);
  dump->dir = g_strdup (dir);
  dump->entries = g_ptr_array_new_with_free_func (g_free);
  dump->last_index = -1;
  return dump;
}

void
hy_dump_attach (hy_dump *dump, hy_executor *exec)
{
  hy_executor_set_node_hook (exec, on_node, dump);
}

gboolean
hy_dump_finish (hy_dump *dump, GError **error)
{
  if (dump->error) {
    g_propagate_error (error, g_error_copy (dump->error));
    return FALSE;
  }
  /* One node per line: readable, and line diffs of two dumps line up. */
  GString *text = g_string_new ("{\"model\": ");
  if (dump->model)
    append_string (text, dump->model);
  else
    g_string_append (text, "null");
  g_string_append (text, ",\n \"nodes\": [");
  for (guint i = 0; i < dump->entries->len; i++)
    g_string_append_printf (text, "%s\n  %s", i ? "," : "",
        (const char *) g_ptr_array_index (dump->entries, i));
  g_string_append (text, "\n ]}\n");

  g_autofree char *path = g_build_filename (dump->dir, "index.json", NULL);
  GError *local = NULL;
  gboolean ok = g_file_set_contents (path, text->str, (gssize) text->len,
      &local);
  g_string_free (text, TRUE);
  if (!ok) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: cannot write: %s", path,
        local->message);
    g_error_free (local);
  }
  return ok;
}

void
hy_dump_free (hy_dump *dump)
{
  if (!dump)
    return;
  g_free (dump->dir);
  g_free (dump->model);
  g_ptr_array_free (dump->entries, TRUE);
  g_clear_error (&dump->error);
  g_free (dump);
}
