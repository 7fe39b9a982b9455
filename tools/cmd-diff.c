/*
 * cmd-diff.c — `hybridinfer diff DIR_A DIR_B`: compares two per-layer dumps
 * (ours from `run --dump-dir`, MXNet's from tests/conformance/mxnet_dump.py)
 * node by node and names the first layer where they part ways.
 *
 * An element diverges when |a − b| > atol + rtol·|b| + ptol·peak(B), where
 * peak(B) is the layer's largest finite |value| (B is the reference), or
 * when exactly one of a, b is NaN.  The peak term is the conformance rule
 * applied per layer: float32 summation order alone moves values near zero
 * by ~1e-5 of the layer's scale in deep networks, which is not divergence.  Exit status: 0 no divergence,
 * 1 a divergence, 2 a usage error or an unreadable dump.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "cli.h"
#include "dump-index.h"
#include "hybrid-npy.h"

enum { DIFF_SAME = 0, DIFF_DIVERGES = 1, DIFF_ERROR = 2 };

typedef struct diff_args {
  double rtol, atol, ptol;
  gboolean json, verbose;
} diff_args;

/* What comparing one output found. */
typedef struct tensor_diff {
  gboolean shape_mismatch;
  hy_shape shape_a, shape_b;
  gint64 numel, n_over;
  double max_abs, max_rel;      /* max_rel over elements where b ≠ 0 */
  double worst_excess;          /* error / tolerance at `worst` */
  gint64 worst;                 /* flat index of the element furthest over
                                 * its tolerance; -1 when all are equal */
  float worst_a, worst_b;
} tensor_diff;

static hy_tensor *
load_tensor (const dump_index *d, const dump_entry *e, GError **error)
{
  g_autofree char *path = g_build_filename (d->dir, e->file, NULL);
  return hy_npy_load (path, error);
}

static tensor_diff
compare (const hy_tensor *a, const hy_tensor *b, const diff_args *args)
{
  tensor_diff r = { .shape_a = a->shape, .shape_b = b->shape, .worst = -1 };
  if (!hy_shape_equal (&a->shape, &b->shape)) {
    r.shape_mismatch = TRUE;
    return r;
  }
  r.numel = hy_shape_numel (&a->shape);
  double peak = 0;
  for (gint64 i = 0; i < r.numel; i++)
    if (isfinite (b->data[i]))
      peak = MAX (peak, fabs (b->data[i]));
  double floor_tol = args->atol + args->ptol * peak;
  for (gint64 i = 0; i < r.numel; i++) {
    double x = a->data[i], y = b->data[i];
    double err;
    if (isnan (x) || isnan (y))
      err = isnan (x) && isnan (y) ? 0 : INFINITY;
    else
      err = x == y ? 0 : fabs (x - y);  /* equal infinities: no error */
    if (err == 0)
      continue;
    /* |b| = inf makes the tolerance inf too; an inf error still counts. */
    double tol = floor_tol + args->rtol * fabs (y);
    if (isinf (err) || err > tol)
      r.n_over++;
    if (y != 0 && isfinite (y))
      r.max_rel = MAX (r.max_rel, err / fabs (y));
    r.max_abs = MAX (r.max_abs, err);
    /* The worst element is the one furthest over its own tolerance, not
     * the largest error: that one often sits on a large, close value. */
    double excess = isinf (err) ? INFINITY : tol > 0 ? err / tol : INFINITY;
    if (excess > r.worst_excess || r.worst < 0) {
      r.worst_excess = excess;
      r.worst = i;
      r.worst_a = a->data[i];
      r.worst_b = b->data[i];
    }
  }
  return r;
}

static gboolean
diverges (const tensor_diff *r)
{
  return r->shape_mismatch || r->n_over > 0;
}

/* "(0, 3, 10, 12)" for a flat index into `shape`. */
static char *
format_position (const hy_shape *shape, gint64 flat)
{
  gint64 idx[HY_MAX_DIMS];
  for (int d = shape->ndim - 1; d >= 0; d--) {
    idx[d] = shape->dims[d] ? flat % shape->dims[d] : 0;
    flat = shape->dims[d] ? flat / shape->dims[d] : 0;
  }
  GString *s = g_string_new ("(");
  for (int d = 0; d < shape->ndim; d++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, d ? ", " : "", idx[d]);
  g_string_append_c (s, ')');
  return g_string_free (s, FALSE);
}

static char *
entry_label (const dump_entry *e)
{
  return e->output ? g_strdup_printf ("%s:%d", e->name, e->output)
      : g_strdup (e->name);
}

/* ---- text report -------------------------------------------------------- */

static void
print_node_line (const dump_entry *e, const tensor_diff *r)
{
  g_autofree char *label = entry_label (e);
  char shape[HY_SHAPE_STRLEN];
  if (r->shape_mismatch) {
    char other[HY_SHAPE_STRLEN];
    printf ("DIFF  %04d %s (%s): shape %s in A, %s in B\n", e->index, label,
        e->op, hy_shape_format (&r->shape_a, shape, sizeof shape),
        hy_shape_format (&r->shape_b, other, sizeof other));
    return;
  }
  printf ("%s  %04d %s (%s) %s: max abs %.3g, max rel %.3g",
      diverges (r) ? "DIFF" : "ok  ", e->index, label, e->op,
      hy_shape_format (&r->shape_a, shape, sizeof shape), r->max_abs,
      r->max_rel);
  if (r->n_over)
    printf (", %" G_GINT64_FORMAT " over tolerance", r->n_over);
  printf ("\n");
}

static void
print_first_divergence (const dump_entry *e, const tensor_diff *r)
{
  g_autofree char *label = entry_label (e);
  char shape[HY_SHAPE_STRLEN], other[HY_SHAPE_STRLEN];
  printf ("first divergence: node %04d '%s' (%s)\n", e->index, label, e->op);
  if (e->inputs && json_array_get_length (e->inputs) > 0) {
    printf ("  inputs:");
    for (guint i = 0; i < json_array_get_length (e->inputs); i++) {
      JsonNode *n = json_array_get_element (e->inputs, i);
      const char *in = JSON_NODE_HOLDS_VALUE (n)
          && json_node_get_value_type (n) == G_TYPE_STRING
          ? json_node_get_string (n) : NULL;
      printf ("%s %s", i ? "," : "", in ? in : "?");
    }
    printf ("\n");
  }
  if (r->shape_mismatch) {
    printf ("  shape %s in A, %s in B\n",
        hy_shape_format (&r->shape_a, shape, sizeof shape),
        hy_shape_format (&r->shape_b, other, sizeof other));
    return;
  }
  g_autofree char *pos = format_position (&r->shape_a, r->worst);
  printf ("  shape %s\n", hy_shape_format (&r->shape_a, shape, sizeof shape));
  printf ("  max abs error %.6g, max rel error %.6g\n", r->max_abs,
      r->max_rel);
  printf ("  %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
      " elements over tolerance\n", r->n_over, r->numel);
  printf ("  worst element %s (flat %" G_GINT64_FORMAT "): A %.9g, B %.9g, "
      "%.3g x its tolerance\n", pos, r->worst, r->worst_a, r->worst_b,
      r->worst_excess);
}

/* ---- JSON report -------------------------------------------------------- */

/* JSON has no inf or NaN. */
static void
add_number (JsonBuilder *b, const char *member, double v)
{
  json_builder_set_member_name (b, member);
  if (isfinite (v))
    json_builder_add_double_value (b, v);
  else
    json_builder_add_null_value (b);
}

static void
add_shape (JsonBuilder *b, const char *member, const hy_shape *s)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_array (b);
  for (int d = 0; d < s->ndim; d++)
    json_builder_add_int_value (b, s->dims[d]);
  json_builder_end_array (b);
}

static void
add_node (JsonBuilder *b, const dump_entry *e, const tensor_diff *r)
{
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "index");
  json_builder_add_int_value (b, e->index);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, e->name);
  json_builder_set_member_name (b, "output");
  json_builder_add_int_value (b, e->output);
  json_builder_set_member_name (b, "op");
  json_builder_add_string_value (b, e->op);
  json_builder_set_member_name (b, "diverges");
  json_builder_add_boolean_value (b, diverges (r));
  add_shape (b, "shape_a", &r->shape_a);
  add_shape (b, "shape_b", &r->shape_b);
  if (!r->shape_mismatch) {
    add_number (b, "max_abs", r->max_abs);
    add_number (b, "max_rel", r->max_rel);
    json_builder_set_member_name (b, "n_over");
    json_builder_add_int_value (b, r->n_over);
    json_builder_set_member_name (b, "numel");
    json_builder_add_int_value (b, r->numel);
    if (r->worst >= 0) {
      g_autofree char *pos = format_position (&r->shape_a, r->worst);
      json_builder_set_member_name (b, "worst_index");
      json_builder_add_int_value (b, r->worst);
      json_builder_set_member_name (b, "worst_position");
      json_builder_add_string_value (b, pos);
      add_number (b, "worst_a", r->worst_a);
      add_number (b, "worst_b", r->worst_b);
      add_number (b, "worst_excess", r->worst_excess);
    }
  }
  json_builder_end_object (b);
}

static void
add_only_in (JsonBuilder *b, const char *member, GPtrArray *labels)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_array (b);
  for (guint i = 0; i < labels->len; i++)
    json_builder_add_string_value (b, g_ptr_array_index (labels, i));
  json_builder_end_array (b);
}

/* ---- the command -------------------------------------------------------- */

static int
diff_error (const GError *error)
{
  fprintf (stderr, "hybridinfer: error: %s\n", error->message);
  return DIFF_ERROR;
}

static int
run_diff (dump_index *a, dump_index *b, const diff_args *args)
{
  g_autoptr (GPtrArray) only_a = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) only_b = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (JsonBuilder) jb = json_builder_new ();
  json_builder_begin_object (jb);
  json_builder_set_member_name (jb, "nodes");
  json_builder_begin_array (jb);

  int compared = 0, n_divergent = 0;
  gboolean have_first = FALSE;
  dump_entry first_entry = { 0 };
  tensor_diff first = { 0 };
  for (guint i = 0; i < a->entries->len; i++) {
    dump_entry *ea = &g_array_index (a->entries, dump_entry, i);
    dump_entry *eb = dump_index_find (b, ea->name, ea->output);
    if (!eb) {
      g_ptr_array_add (only_a, entry_label (ea));
      continue;
    }
    eb->matched = TRUE;
    g_autoptr (GError) error = NULL;
    hy_tensor *ta = load_tensor (a, ea, &error);
    hy_tensor *tb = ta ? load_tensor (b, eb, &error) : NULL;
    if (!tb) {
      hy_tensor_free (ta);
      return diff_error (error);
    }
    tensor_diff r = compare (ta, tb, args);
    hy_tensor_free (ta);
    hy_tensor_free (tb);
    compared++;
    if (diverges (&r)) {
      n_divergent++;
      if (!have_first) {
        have_first = TRUE;
        first_entry = *ea;
        first = r;
      }
    }
    if (args->json)
      add_node (jb, ea, &r);
    else if (args->verbose)
      print_node_line (ea, &r);
  }
  json_builder_end_array (jb);
  for (guint i = 0; i < b->entries->len; i++) {
    dump_entry *eb = &g_array_index (b->entries, dump_entry, i);
    if (!eb->matched)
      g_ptr_array_add (only_b, entry_label (eb));
  }

  if (compared == 0) {
    fprintf (stderr, "hybridinfer: error: %s and %s have no node output in "
        "common (dumps of different models?)\n", a->dir, b->dir);
    return DIFF_ERROR;
  }

  if (args->json) {
    json_builder_set_member_name (jb, "a");
    json_builder_add_string_value (jb, a->dir);
    json_builder_set_member_name (jb, "b");
    json_builder_add_string_value (jb, b->dir);
    add_number (jb, "rtol", args->rtol);
    add_number (jb, "atol", args->atol);
    add_number (jb, "ptol", args->ptol);
    json_builder_set_member_name (jb, "compared");
    json_builder_add_int_value (jb, compared);
    json_builder_set_member_name (jb, "divergent");
    json_builder_add_int_value (jb, n_divergent);
    json_builder_set_member_name (jb, "first_divergence");
    if (have_first)
      add_node (jb, &first_entry, &first);
    else
      json_builder_add_null_value (jb);
    add_only_in (jb, "only_in_a", only_a);
    add_only_in (jb, "only_in_b", only_b);
    json_builder_end_object (jb);
    g_autoptr (JsonNode) root = json_builder_get_root (jb);
    g_autofree char *text = json_to_string (root, TRUE);
    printf ("%s\n", text);
  } else {
    for (guint i = 0; i < only_a->len; i++)
      printf ("only in A: %s\n", (char *) g_ptr_array_index (only_a, i));
    for (guint i = 0; i < only_b->len; i++)
      printf ("only in B: %s\n", (char *) g_ptr_array_index (only_b, i));
    printf ("compared %d node outputs (rtol %g, atol %g, ptol %g): "
        "%d divergent\n", compared, args->rtol, args->atol, args->ptol,
        n_divergent);
    if (have_first)
      print_first_divergence (&first_entry, &first);
  }
  return have_first ? DIFF_DIVERGES : DIFF_SAME;
}

int
hy_cmd_diff (int argc, char **argv)
{
  diff_args args = { .rtol = 1e-4, .atol = 1e-5, .ptol = 1e-4 };
  GOptionEntry entries[] = {
    {"rtol", 0, 0, G_OPTION_ARG_DOUBLE, &args.rtol,
        "Relative tolerance, times |B| (default 1e-4)", "R"},
    {"atol", 0, 0, G_OPTION_ARG_DOUBLE, &args.atol,
        "Absolute tolerance (default 1e-5)", "A"},
    {"ptol", 0, 0, G_OPTION_ARG_DOUBLE, &args.ptol,
        "Tolerance times the layer's peak |B| (default 1e-4)", "P"},
    {"json", 0, 0, G_OPTION_ARG_NONE, &args.json,
        "Print one JSON object instead of text", NULL},
    {"verbose", 'v', 0, G_OPTION_ARG_NONE, &args.verbose,
        "Print a line per compared node", NULL},
    {NULL}
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
      "DIR_A DIR_B - find the first layer where two dumps differ");
  g_option_context_set_description (ctx, "Exit status: 0 no divergence, "
      "1 a divergence, 2 a usage error or an unreadable dump.\n"
      "Element i diverges when |a-b| > atol + rtol*|b| + ptol*max|B|, or "
      "when exactly one "
      "of a, b is NaN.\n");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return hy_cli_usage (ctx, "diff: %s", error->message);
  if (argc != 3)
    return hy_cli_usage (ctx, "diff: expected two dump directories, got %d",
        argc - 1);
  if (!(args.rtol >= 0) || !(args.atol >= 0) || !(args.ptol >= 0)
      || isinf (args.rtol) || isinf (args.atol) || isinf (args.ptol))
    return hy_cli_usage (ctx, "diff: --rtol, --atol and --ptol must be finite and "
        ">= 0");

  g_autoptr (dump_index) a = dump_index_load (argv[1], &error);
  if (!a)
    return diff_error (error);
  g_autoptr (dump_index) b = dump_index_load (argv[2], &error);
  if (!b)
    return diff_error (error);
  return run_diff (a, b, &args);
}
