/*
 * test-passes.c — the graph passes of hybrid mode, one by one and
 * together, on the committed fixtures, on small graphs written here as
 * symbol JSON, and on the zoo models when their fixtures exist.
 *
 * Every test checks the rewrite itself (which ops are gone, how many nodes
 * are left) and that the rewritten graph computes what the original does:
 * both are run here, node by node with the CPU kernels, and their outputs
 * must agree within TOL relative.  Shapes must also survive: inferring
 * them again on the rewritten graph gives what the passes left there.
 */
#include <math.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "hybrid.h"
#include "core/model-impl.h"
#include "core/passes/passes.h"
#include "core/passes/graph-edit.h"
#include "kernels/cpu/cpu-kernel.h"
#include "hybrid-npy.h"

#define TOL 1e-5

/* What the project requires of any run against MXNet's own outputs. */
#define MXNET_TOL 1e-4

/* ---- running a graph ----------------------------------------------------- */

/* A graph's data inputs, by name. */
typedef struct feed {
  GPtrArray *names;             /* char * */
  GPtrArray *tensors;           /* hy_tensor *, owned */
} feed;

static feed *
feed_new (void)
{
  feed *f = g_new0 (feed, 1);
  f->names = g_ptr_array_new_with_free_func (g_free);
  f->tensors = g_ptr_array_new_with_free_func (
      (GDestroyNotify) hy_tensor_free);
  return f;
}

static void
feed_free (feed *f)
{
  g_ptr_array_unref (f->names);
  g_ptr_array_unref (f->tensors);
  g_free (f);
}

static void
feed_add (feed *f, const char *name, hy_tensor *t)
{
  g_ptr_array_add (f->names, g_strdup (name));
  g_ptr_array_add (f->tensors, t);
}

static const hy_tensor *
feed_find (const feed *f, const char *name)
{
  for (guint i = 0; i < f->names->len; i++)
    if (!strcmp (g_ptr_array_index (f->names, i), name))
      return g_ptr_array_index (f->tensors, i);
  return NULL;
}

/* Runs every op node in order with the CPU kernels; returns copies of the
 * heads' values (hy_tensor_free them). */
static GPtrArray *
run_graph (const hy_graph *g, const feed *in)
{
  const guint n = hy_graph_n_nodes (g);
  hy_tensor ***values = g_new0 (hy_tensor **, n);
  hy_cpu_ctx ctx = { 0 };
  for (guint i = 0; i < n; i++) {
    const hy_node *node = hy_graph_node (g, i);
    if (!node->op)
      continue;
    g_autofree const hy_tensor **args = g_new0 (const hy_tensor *,
        MAX (node->n_inputs, 1));
    for (guint k = 0; k < node->n_inputs; k++) {
      const hy_entry *e = &node->inputs[k];
      const hy_node *src = hy_graph_node (g, e->node);
      if (src->op)
        args[k] = values[e->node][e->index];
      else if (src->value)
        args[k] = src->value;
      else
        args[k] = feed_find (in, src->name);
    }
    values[i] = g_new0 (hy_tensor *, node->n_outputs);
    for (guint k = 0; k < node->n_outputs; k++)
      values[i][k] = hy_tensor_new (&node->shapes[k]);
    hy_cpu_kernel_fn fn = hy_cpu_kernel_for (node->op->id);
    g_assert_nonnull (fn);
    fn (&ctx, node->params, args, (int) node->n_inputs, values[i],
        (int) node->n_outputs);
  }
  GPtrArray *outs = g_ptr_array_new_with_free_func (
      (GDestroyNotify) hy_tensor_free);
  for (guint h = 0; h < g->n_heads; h++) {
    const hy_entry *e = &g->heads[h];
    const hy_node *src = hy_graph_node (g, e->node);
    const hy_tensor *t = src->op ? values[e->node][e->index]
        : src->value ? src->value : feed_find (in, src->name);
    g_ptr_array_add (outs, hy_tensor_copy (t));
  }
  for (guint i = 0; i < n; i++) {
    const hy_node *node = hy_graph_node (g, i);
    if (!values[i])
      continue;
    for (guint k = 0; k < node->n_outputs; k++)
      hy_tensor_free (values[i][k]);
    g_free (values[i]);
  }
  g_free (values);
  hy_cpu_ctx_clear (&ctx);
  return outs;
}

/* max |a − b| / max(1, max |a|) over every output's finite values; NaN
 * and ±Inf must sit at the same places in both (else: infinity). */
static double
relative_diff (GPtrArray *a, GPtrArray *b)
{
  g_assert_cmpuint (a->len, ==, b->len);
  double worst = 0;
  for (guint i = 0; i < a->len; i++) {
    const hy_tensor *x = g_ptr_array_index (a, i);
    const hy_tensor *y = g_ptr_array_index (b, i);
    g_assert_true (hy_shape_equal (&x->shape, &y->shape));
    double md = 0, mr = 0;
    for (int64_t j = 0; j < hy_shape_numel (&x->shape); j++) {
      float p = x->data[j], q = y->data[j];
      if (!isfinite (p) || !isfinite (q)) {
        if (!((isnan (p) && isnan (q)) || p == q))
          md = INFINITY;
        continue;
      }
      md = MAX (md, fabs ((double) p - q));
      mr = MAX (mr, fabs ((double) x->data[j]));
    }
    if (isnan (md))
      md = INFINITY;
    worst = MAX (worst, md / MAX (1.0, mr));
  }
  return worst;
}

/* ---- building graphs ----------------------------------------------------- */

/* A test subject: a graph with bound parameters and its inputs. */
typedef struct subject {
  hy_model *model;              /* when loaded from files */
  hy_shapes *shapes;            /*   with the inputs' shapes */
  hy_graph *graph;              /* the original (the shapes', or own) */
  gboolean owns_graph;
  GPtrArray *params;            /* hy_tensor *: own graphs' parameters */
  feed *inputs;
} subject;

static void
subject_free (subject *s)
{
  if (s->owns_graph)
    hy_graph_free (s->graph);
  hy_shapes_free (s->shapes);
  hy_model_free (s->model);
  if (s->params)
    g_ptr_array_unref (s->params);
  feed_free (s->inputs);
  g_free (s);
}

static char *
source_path (const char *first, ...)
{
  const char *root = g_getenv ("HY_SOURCE_DIR");
  if (!root)
    root = ".";
  va_list ap;
  va_start (ap, first);
  GString *s = g_string_new (root);
  for (const char *p = first; p; p = va_arg (ap, const char *))
    g_string_append_printf (s, "/%s", p);
  va_end (ap);
  return g_string_free (s, FALSE);
}

/* Loads fixture directory `dir` with the inputs its case.json names and
 * infers shapes; NULL (test skipped by the caller) when it is absent. */
static subject *
load_case (const char *dir)
{
  g_autofree char *spec_path = g_build_filename (dir, "case.json", NULL);
  if (!g_file_test (spec_path, G_FILE_TEST_EXISTS))
    return NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, spec_path, &error));
  JsonObject *spec = json_node_get_object (json_parser_get_root (parser));

  g_autofree char *sym = g_build_filename (dir, "model-symbol.json", NULL);
  g_autofree char *par = g_build_filename (dir, "model-0000.params", NULL);
  subject *s = g_new0 (subject, 1);
  s->model = hy_model_load (sym, g_file_test (par, G_FILE_TEST_EXISTS)
      ? par : NULL, &error);
  g_assert_no_error (error);
  s->shapes = hy_shapes_new (s->model);
  s->graph = hy_shapes_graph (s->shapes);
  s->inputs = feed_new ();
  JsonArray *ins = json_object_get_array_member (spec, "inputs");
  for (guint i = 0; i < json_array_get_length (ins); i++) {
    JsonObject *o = json_array_get_object_element (ins, i);
    const char *name = json_object_get_string_member (o, "name");
    g_autofree char *f = g_build_filename (dir,
        json_object_get_string_member (o, "file"), NULL);
    hy_tensor *t = hy_npy_load (f, &error);
    g_assert_no_error (error);
    g_assert_true (hy_shapes_set_input (s->shapes, name, &t->shape,
            &error));
    feed_add (s->inputs, name, t);
  }
  g_assert_true (hy_shapes_infer (s->shapes, &error));
  g_assert_no_error (error);
  return s;
}

static subject *
load_fixture (const char *name)
{
  g_autofree char *dir = source_path ("tests", "fixtures", name, NULL);
  subject *s = load_case (dir);
  g_assert_nonnull (s);
  return s;
}

/* The zoo fixtures: the build's (HY_ZOO_FIXTURES, set by meson test),
 * else the default cache. */
#define ZOO_DIR_DEFAULT "/root/.cache/hybridinfer/fixtures/zoo"

static const char *
zoo_dir (void)
{
  const char *dir = g_getenv ("HY_ZOO_FIXTURES");
  return dir && *dir ? dir : ZOO_DIR_DEFAULT;
}

static subject *
load_zoo (const char *name)
{
  g_autofree char *dir = g_build_filename (zoo_dir (), name, NULL);
  subject *s = load_case (dir);
  if (!s)
    g_test_skip ("zoo fixtures not generated");
  return s;
}

/* Deterministic values in [-1, 1) (or [lo, hi)). */
static hy_tensor *
tensor_random (const hy_shape *shape, guint32 seed, float lo, float hi)
{
  hy_tensor *t = hy_tensor_new (shape);
  GRand *r = g_rand_new_with_seed (seed);
  for (int64_t i = 0; i < hy_shape_numel (shape); i++)
    t->data[i] = (float) g_rand_double_range (r, lo, hi);
  g_rand_free (r);
  return t;
}

/* Parses symbol JSON written with single quotes (easier to read here),
 * binds every variable whose name ends in a parameter suffix to random
 * values of the shape inference wants, feeds `data` of shape `in`. */
static subject *
subject_from_json (const char *json_single_quoted, const hy_shape *in)
{
  g_autofree char *json = g_strdelimit (g_strdup (json_single_quoted), "'",
      '"');
  g_autoptr (GError) error = NULL;
  subject *s = g_new0 (subject, 1);
  s->graph = hy_symbol_json_parse (json, strlen (json), "test", &error);
  g_assert_no_error (error);
  s->owns_graph = TRUE;
  g_assert_true (hy_graph_resolve (s->graph, NULL, &error));
  s->params = g_ptr_array_new_with_free_func ((GDestroyNotify) hy_tensor_free);
  s->inputs = feed_new ();

  /* Parameter shapes come from each variable's __shape__ attribute. */
  for (guint i = 0; i < hy_graph_n_nodes (s->graph); i++) {
    hy_node *v = hy_graph_node (s->graph, i);
    if (v->op)
      continue;
    const char *decl = hy_attr_string (v->attrs, "__shape__");
    if (!decl) {
      v->var_kind = HY_VAR_INPUT;
      v->shapes[0] = *in;
      feed_add (s->inputs, v->name, tensor_random (in, 7, -1, 1));
      continue;
    }
    hy_tuple t;
    g_assert_true (hy_parse_tuple (decl, &t, FALSE));
    hy_shape shape = hy_shape_make (t.n, t.v);
    /* Variances must be positive. */
    gboolean var = g_str_has_suffix (v->name, "var");
    hy_tensor *value = tensor_random (&shape, 100 + i, var ? 0.5f : -1.0f,
        var ? 2.0f : 1.0f);
    g_ptr_array_add (s->params, value);
    v->value = value;
    v->var_kind = HY_VAR_ARG;
    v->shapes[0] = shape;
  }
  g_assert_true (hy_graph_infer_shapes (s->graph, &error));
  g_assert_no_error (error);
  return s;
}

/* ---- what a rewrite left ------------------------------------------------- */

static int
count_op (const hy_graph *g, hy_op_id id)
{
  int n = 0;
  for (guint i = 0; i < hy_graph_n_nodes (g); i++)
    n += hy_node_is_op (hy_graph_node (g, i), id);
  return n;
}

static int
count_ops (const hy_graph *g)
{
  int n = 0;
  for (guint i = 0; i < hy_graph_n_nodes (g); i++)
    n += hy_graph_node (g, i)->op != NULL;
  return n;
}

/* Index order is topological and shapes re-infer to what they are. */
static void
assert_graph_valid (hy_graph *g)
{
  for (guint i = 0; i < hy_graph_n_nodes (g); i++) {
    const hy_node *n = hy_graph_node (g, i);
    for (guint k = 0; k < n->n_inputs; k++) {
      g_assert_cmpuint (n->inputs[k].node, <, i);
      g_assert_cmpuint (n->inputs[k].index, <,
          hy_graph_node (g, n->inputs[k].node)->n_outputs);
    }
    if (n->op)
      g_assert_cmpint (hy_op_num_inputs (n->op, n->params), ==,
          (int) n->n_inputs);
  }
  for (guint h = 0; h < g->n_heads; h++)
    g_assert_cmpuint (g->heads[h].node, <, hy_graph_n_nodes (g));

  const guint n = hy_graph_n_nodes (g);
  g_autofree hy_shape *before = g_new (hy_shape, n);
  for (guint i = 0; i < n; i++)
    before[i] = hy_graph_node (g, i)->shapes[0];
  g_autoptr (GError) error = NULL;
  g_assert_true (hy_graph_infer_shapes (g, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < n; i++)
    g_assert_true (hy_shape_equal (&before[i],
            &hy_graph_node (g, i)->shapes[0]));
}

static const hy_fused_epilogue *
epilogue_of (const hy_graph *g, const char *name)
{
  int i = hy_graph_find (g, name);
  g_assert_cmpint (i, >=, 0);
  return hy_node_epilogue (hy_graph_node (g, (guint) i));
}

typedef gboolean (*pass_fn) (hy_graph *g, GPtrArray *owned,
    hy_pass_stats *stats, GError **error);

static gboolean
pass_identities (hy_graph *g, GPtrArray *owned, hy_pass_stats *stats,
    GError **error)
{
  return hy_pass_drop_identities (g, stats, error);
}

static gboolean
pass_fuse (hy_graph *g, GPtrArray *owned, hy_pass_stats *stats,
    GError **error)
{
  return hy_pass_fuse_epilogues (g, stats, error);
}

/* The outcome of one rewrite of a subject's graph. */
typedef struct rewrite {
  hy_graph *graph;
  GPtrArray *owned;
  hy_pass_stats stats;
  double diff;                  /* relative, against the original */
} rewrite;

static void
rewrite_clear (rewrite *r)
{
  hy_graph_free (r->graph);
  g_ptr_array_unref (r->owned);
}

/* Copies the subject's graph, runs `pass` on it (all passes when NULL),
 * prunes, checks it is valid and compares its outputs. */
static rewrite
rewrite_with (subject *s, pass_fn pass)
{
  rewrite r = { 0 };
  r.graph = hy_graph_copy (s->graph);
  r.owned = g_ptr_array_new_with_free_func ((GDestroyNotify) hy_tensor_free);
  g_autoptr (GError) error = NULL;
  if (pass) {
    g_assert_true (pass (r.graph, r.owned, &r.stats, &error));
    hy_graph_prune (r.graph);
  } else {
    g_assert_true (hy_passes_run (r.graph, r.owned, &r.stats, &error));
  }
  g_assert_no_error (error);
  assert_graph_valid (r.graph);

  GPtrArray *want = run_graph (s->graph, s->inputs);
  GPtrArray *got = run_graph (r.graph, s->inputs);
  r.diff = relative_diff (want, got);
  g_ptr_array_unref (want);
  g_ptr_array_unref (got);
  return r;
}

static void
assert_close (const rewrite *r)
{
  if (!(r->diff <= TOL))
    g_error ("rewritten graph differs by %.3g relative (tolerance %g)",
        r->diff, TOL);
}

/* ---- copy and prune ------------------------------------------------------ */

static void
test_copy (void)
{
  subject *s = load_fixture ("seed_net");
  hy_graph *c = hy_graph_copy (s->graph);
  g_assert_cmpuint (hy_graph_n_nodes (c), ==, hy_graph_n_nodes (s->graph));
  g_assert_cmpuint (c->n_heads, ==, s->graph->n_heads);
  for (guint i = 0; i < hy_graph_n_nodes (c); i++) {
    const hy_node *a = hy_graph_node (s->graph, i), *b = hy_graph_node (c, i);
    g_assert_true (a != b);
    g_assert_cmpstr (a->name, ==, b->name);
    g_assert_true (a->op == b->op);
    g_assert_true (a->value == b->value);     /* parameters are shared */
    g_assert_cmpuint (a->n_inputs, ==, b->n_inputs);
    g_assert_true (a->params != b->params || !a->params);
    g_assert_cmpuint (g_hash_table_size (a->attrs), ==,
        g_hash_table_size (b->attrs));
    g_assert_true (hy_shape_equal (&a->shapes[0], &b->shapes[0]));
  }
  GPtrArray *want = run_graph (s->graph, s->inputs);
  GPtrArray *got = run_graph (c, s->inputs);
  g_assert_cmpfloat (relative_diff (want, got), ==, 0.0);
  g_ptr_array_unref (want);
  g_ptr_array_unref (got);
  hy_graph_free (c);
  subject_free (s);
}

static void
test_prune_keeps_inputs (void)
{
  /* Only fc1 feeds the output: the other branch and its weight go, and
   * the unread input 'extra' stays for callers that feed it by name. */
  static const char *json = "{'nodes': ["
      "{'op': 'null', 'name': 'data', 'inputs': []},"
      "{'op': 'null', 'name': 'extra', 'inputs': []},"
      "{'op': 'null', 'name': 'w1', 'attrs': {'__shape__': '(3, 4)'}, 'inputs': []},"
      "{'op': 'FullyConnected', 'name': 'fc1', 'attrs': {'num_hidden': '3', 'no_bias': 'True'},"
      "  'inputs': [[0, 0, 0], [2, 0, 0]]},"
      "{'op': 'null', 'name': 'w2', 'attrs': {'__shape__': '(5, 4)'}, 'inputs': []},"
      "{'op': 'FullyConnected', 'name': 'fc2', 'attrs': {'num_hidden': '5', 'no_bias': 'True'},"
      "  'inputs': [[0, 0, 0], [4, 0, 0]]},"
      "{'op': 'relu', 'name': 'out', 'inputs': [[3, 0, 0]]}"
      "], 'arg_nodes': [0, 1, 2, 4], 'heads': [[6, 0, 0]]}";
  hy_shape in = { 2, { 2, 4 } };
  subject *s = subject_from_json (json, &in);
  hy_graph *c = hy_graph_copy (s->graph);
  hy_graph_prune (c);
  g_assert_cmpint (hy_graph_find (c, "fc2"), <, 0);
  g_assert_cmpint (hy_graph_find (c, "w2"), <, 0);
  g_assert_cmpint (hy_graph_find (c, "extra"), >=, 0);
  g_assert_cmpuint (hy_graph_n_nodes (c), ==, 5);
  g_assert_cmpuint (c->heads[0].node, ==, (guint) hy_graph_find (c, "out"));
  assert_graph_valid (c);
  hy_graph_free (c);
  subject_free (s);
}

/* ---- identities ---------------------------------------------------------- */

static void
test_identities_dropped (void)
{
  static const char *json = "{'nodes': ["
      "{'op': 'null', 'name': 'data', 'inputs': []},"
      "{'op': 'null', 'name': 'w', 'attrs': {'__shape__': '(6, 4)'}, 'inputs': []},"
      "{'op': 'null', 'name': 'b', 'attrs': {'__shape__': '(6,)'}, 'inputs': []},"
      "{'op': 'FullyConnected', 'name': 'fc', 'attrs': {'num_hidden': '6'},"
      "  'inputs': [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},"
      "{'op': 'Dropout', 'name': 'drop', 'attrs': {'p': '0.5'}, 'inputs': [[3, 0, 0]]},"
      "{'op': '_copy', 'name': 'copy', 'inputs': [[4, 0, 0]]},"
      "{'op': 'BlockGrad', 'name': 'stop', 'inputs': [[5, 0, 0]]},"
      "{'op': 'sigmoid', 'name': 'out', 'inputs': [[6, 0, 0]]},"
      "{'op': 'Dropout', 'name': 'drop2', 'inputs': [[7, 0, 0]]}"
      "], 'arg_nodes': [0, 1, 2], 'heads': [[8, 0, 0], [5, 0, 0]]}";
  hy_shape in = { 2, { 3, 4 } };
  subject *s = subject_from_json (json, &in);
  rewrite r = rewrite_with (s, pass_identities);
  /* All four go: the heads read fc and out instead. */
  g_assert_cmpint (r.stats.identities_dropped, ==, 4);
  g_assert_cmpint (count_op (r.graph, HY_OP_DROPOUT), ==, 0);
  g_assert_cmpint (count_op (r.graph, HY_OP_IDENTITY), ==, 0);
  g_assert_cmpint (count_op (r.graph, HY_OP_BLOCK_GRAD), ==, 0);
  g_assert_cmpint (count_ops (r.graph), ==, 2);
  g_assert_cmpuint (r.graph->heads[1].node, ==,
      (guint) hy_graph_find (r.graph, "fc"));
  assert_close (&r);
  rewrite_clear (&r);
  subject_free (s);
}

static void
test_identity_of_input_kept (void)
{
  /* data → Dropout → output: the output stays an op's. */
  subject *s = load_fixture ("op_Dropout_default");
  rewrite r = rewrite_with (s, pass_identities);
  g_assert_cmpint (r.stats.identities_dropped, ==, 0);
  g_assert_cmpint (count_op (r.graph, HY_OP_DROPOUT), ==, 1);
  assert_close (&r);
  rewrite_clear (&r);
  subject_free (s);
}

/* ---- BatchNorm folding --------------------------------------------------- */

static void
test_fold_bn_legacy (void)
{
  /* MXNet 0.8 file: aux states created by the loader, _Plus residual. */
  subject *s = load_fixture ("legacy_convbn");
  rewrite r = rewrite_with (s, hy_pass_fold_batchnorm);
  g_assert_cmpint (r.stats.batchnorms_folded, ==, 2);
  g_assert_cmpint (count_op (r.graph, HY_OP_BATCH_NORM), ==, 0);
  g_assert_cmpint (count_ops (r.graph), ==, count_ops (s->graph) - 2);
  g_assert_cmpuint (r.owned->len, ==, 2);     /* one operand per BN */
  assert_close (&r);
  rewrite_clear (&r);
  subject_free (s);
}

static void
test_fold_bn_alone_untouched (void)
{
  static const char *const cases[] = {
    "op_BatchNorm_default", "op_BatchNorm_axis3", "op_BatchNorm_2d_input",
    "op_BatchNorm_fixgamma_false_eps1e-5",
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    subject *s = load_fixture (cases[i]);
    rewrite r = rewrite_with (s, hy_pass_fold_batchnorm);
    g_assert_cmpint (r.stats.batchnorms_folded, ==, 0);
    g_assert_cmpint (count_op (r.graph, HY_OP_BATCH_NORM), ==, 1);
    assert_close (&r);
    rewrite_clear (&r);
    subject_free (s);
  }
}

/* Convolution (no bias, Symbol-API BatchNorm defaults: fix_gamma True,
 * eps 1e-3), FullyConnected + BN on axis -1, and a convolution whose
 * output is also read elsewhere (not folded). */
static const char *fold_json = "{'nodes': ["
    "{'op': 'null', 'name': 'data', 'inputs': []},"
    "{'op': 'null', 'name': 'c_weight', 'attrs': {'__shape__': '(4, 3, 3, 3)'}, 'inputs': []},"
    "{'op': 'Convolution', 'name': 'c', 'attrs': {'kernel': '(3, 3)', 'num_filter': '4',"
    "  'no_bias': 'True', 'pad': '(1, 1)'}, 'inputs': [[0, 0, 0], [1, 0, 0]]},"
    "{'op': 'null', 'name': 'bn_gamma', 'attrs': {'__shape__': '(4,)'}, 'inputs': []},"
    "{'op': 'null', 'name': 'bn_beta', 'attrs': {'__shape__': '(4,)'}, 'inputs': []},"
    "{'op': 'null', 'name': 'bn_moving_mean', 'attrs': {'__shape__': '(4,)'}, 'inputs': []},"
    "{'op': 'null', 'name': 'bn_moving_var', 'attrs': {'__shape__': '(4,)'}, 'inputs': []},"
    "{'op': 'BatchNorm', 'name': 'bn', 'inputs': [[2, 0, 0], [3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 0]]},"
    "{'op': 'null', 'name': 'f_weight', 'attrs': {'__shape__': '(5, 100)'}, 'inputs': []},"
    "{'op': 'null', 'name': 'f_bias', 'attrs': {'__shape__': '(5,)'}, 'inputs': []},"
    "{'op': 'FullyConnected', 'name': 'f', 'attrs': {'num_hidden': '5'},"
    "  'inputs': [[7, 0, 0], [8, 0, 0], [9, 0, 0]]},"
    "{'op': 'null', 'name': 'bn2_gamma', 'attrs': {'__shape__': '(5,)'}, 'inputs': []},"
    "{'op': 'null', 'name': 'bn2_beta', 'attrs': {'__shape__': '(5,)'}, 'inputs': []},"
    "{'op': 'null', 'name': 'bn2_moving_mean', 'attrs': {'__shape__': '(5,)'}, 'inputs': []},"
    "{'op': 'null', 'name': 'bn2_moving_var', 'attrs': {'__shape__': '(5,)'}, 'inputs': []},"
    "{'op': 'BatchNorm', 'name': 'bn2', 'attrs': {'axis': '-1', 'fix_gamma': 'False', 'eps': '1e-5'},"
    "  'inputs': [[10, 0, 0], [11, 0, 0], [12, 0, 0], [13, 0, 0], [14, 0, 0]]},"
    "{'op': 'null', 'name': 'd_weight', 'attrs': {'__shape__': '(4, 3, 1, 1)'}, 'inputs': []},"
    "{'op': 'null', 'name': 'd_bias', 'attrs': {'__shape__': '(4,)'}, 'inputs': []},"
    "{'op': 'Convolution', 'name': 'd', 'attrs': {'kernel': '(1, 1)', 'num_filter': '4'},"
    "  'inputs': [[0, 0, 0], [16, 0, 0], [17, 0, 0]]},"
    "{'op': 'BatchNorm', 'name': 'bn3', 'attrs': {'fix_gamma': 'False'},"
    "  'inputs': [[18, 0, 0], [3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 0]]},"
    "{'op': 'elemwise_add', 'name': 'sum', 'inputs': [[18, 0, 0], [19, 0, 0]]}"
    "], 'arg_nodes': [0], 'heads': [[15, 0, 0], [20, 0, 0]]}";

static void
test_fold_bn_conv_and_fc (void)
{
  hy_shape in = { 4, { 2, 3, 5, 5 } };
  subject *s = subject_from_json (fold_json, &in);
  rewrite r = rewrite_with (s, hy_pass_fold_batchnorm);
  g_assert_cmpint (r.stats.batchnorms_folded, ==, 2);
  g_assert_cmpint (count_op (r.graph, HY_OP_BATCH_NORM), ==, 1);
  g_assert_cmpint (hy_graph_find (r.graph, "bn"), <, 0);
  g_assert_cmpint (hy_graph_find (r.graph, "bn2"), <, 0);
  g_assert_cmpint (hy_graph_find (r.graph, "bn3"), >=, 0);
  /* The bias-less convolution reads the BN operand after its weight, and
   * still its own weight: nothing is copied. */
  const hy_node *c = hy_graph_node (r.graph, hy_graph_find (r.graph, "c"));
  g_assert_true (((const hy_conv_params *) c->params)->no_bias);
  g_assert_true (((const hy_conv_params *) c->params)->fused.batch_norm);
  g_assert_cmpuint (c->n_inputs, ==, 3);
  g_assert_cmpstr (hy_graph_node (r.graph, c->inputs[1].node)->name, ==,
      "c_weight");
  g_assert_cmpstr (hy_graph_node (r.graph, c->inputs[2].node)->name, ==,
      "bn_fused");
  g_assert_true (epilogue_of (r.graph, "f")->batch_norm);
  g_assert_cmpuint (r.owned->len, ==, 2);
  assert_close (&r);
  rewrite_clear (&r);
  subject_free (s);
}

static void
test_fold_bn_exact (void)
{
  /* ResNet's pattern with bias-free convolutions (an im2col one, then a
   * pointwise and a depthwise one): BN, residual add, relu/relu6 all move
   * into the convolutions, and the result is the unfused graph's bit for
   * bit — epilogue.h repeats batch-norm.c's arithmetic, and the conformance
   * runner holds hybrid mode to imperative mode's results on deep models
   * where any rounding change is amplified. */
  static const char *json = "{'nodes': ["
      "{'op': 'null', 'name': 'data', 'inputs': []},"
      "{'op': 'null', 'name': 'a_weight', 'attrs': {'__shape__': '(4, 4, 3, 3)'}, 'inputs': []},"
      "{'op': 'Convolution', 'name': 'a', 'attrs': {'kernel': '(3, 3)', 'pad': '(1, 1)',"
      "  'num_filter': '4', 'no_bias': 'True'}, 'inputs': [[0, 0, 0], [1, 0, 0]]},"
      "{'op': 'null', 'name': 'bn_gamma', 'attrs': {'__shape__': '(4,)'}, 'inputs': []},"
      "{'op': 'null', 'name': 'bn_beta', 'attrs': {'__shape__': '(4,)'}, 'inputs': []},"
      "{'op': 'null', 'name': 'bn_moving_mean', 'attrs': {'__shape__': '(4,)'}, 'inputs': []},"
      "{'op': 'null', 'name': 'bn_moving_var', 'attrs': {'__shape__': '(4,)'}, 'inputs': []},"
      "{'op': 'BatchNorm', 'name': 'bn', 'attrs': {'fix_gamma': 'False', 'eps': '1e-5'},"
      "  'inputs': [[2, 0, 0], [3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 0]]},"
      "{'op': 'elemwise_add', 'name': 'sum', 'inputs': [[7, 0, 0], [0, 0, 0]]},"
      "{'op': 'Activation', 'name': 'relu', 'attrs': {'act_type': 'relu'}, 'inputs': [[8, 0, 0]]},"
      "{'op': 'null', 'name': 'b_weight', 'attrs': {'__shape__': '(8, 4, 1, 1)'}, 'inputs': []},"
      "{'op': 'Convolution', 'name': 'b', 'attrs': {'kernel': '(1, 1)', 'num_filter': '8',"
      "  'no_bias': 'True'}, 'inputs': [[9, 0, 0], [10, 0, 0]]},"
      "{'op': 'null', 'name': 'bn2_gamma', 'attrs': {'__shape__': '(8,)'}, 'inputs': []},"
      "{'op': 'null', 'name': 'bn2_beta', 'attrs': {'__shape__': '(8,)'}, 'inputs': []},"
      "{'op': 'null', 'name': 'bn2_moving_mean', 'attrs': {'__shape__': '(8,)'}, 'inputs': []},"
      "{'op': 'null', 'name': 'bn2_moving_var', 'attrs': {'__shape__': '(8,)'}, 'inputs': []},"
      "{'op': 'BatchNorm', 'name': 'bn2', 'inputs': [[11, 0, 0], [12, 0, 0], [13, 0, 0], [14, 0, 0], [15, 0, 0]]},"
      "{'op': 'clip', 'name': 'relu6', 'attrs': {'a_min': '0', 'a_max': '6'}, 'inputs': [[16, 0, 0]]},"
      "{'op': 'null', 'name': 'c_weight', 'attrs': {'__shape__': '(8, 1, 3, 3)'}, 'inputs': []},"
      "{'op': 'Convolution', 'name': 'c', 'attrs': {'kernel': '(3, 3)', 'pad': '(1, 1)',"
      "  'num_filter': '8', 'num_group': '8', 'no_bias': 'True'}, 'inputs': [[17, 0, 0], [18, 0, 0]]},"
      "{'op': 'BatchNorm', 'name': 'bn3', 'attrs': {'fix_gamma': 'False'},"
      "  'inputs': [[19, 0, 0], [12, 0, 0], [13, 0, 0], [14, 0, 0], [15, 0, 0]]},"
      "{'op': 'elemwise_add', 'name': 'sum2', 'inputs': [[17, 0, 0], [20, 0, 0]]}"
      "], 'arg_nodes': [0], 'heads': [[21, 0, 0]]}";
  hy_shape in = { 4, { 2, 4, 6, 7 } };
  subject *s = subject_from_json (json, &in);
  rewrite r = rewrite_with (s, NULL);
  g_assert_cmpint (r.stats.batchnorms_folded, ==, 3);
  g_assert_cmpint (r.stats.adds_fused, ==, 2);
  g_assert_cmpint (r.stats.activations_fused, ==, 2);
  g_assert_cmpint (count_ops (r.graph), ==, 3);
  g_assert_cmpfloat (r.diff, ==, 0.0);
  rewrite_clear (&r);
  subject_free (s);
}

/* ---- epilogue fusion ----------------------------------------------------- */

/* The convolution kernels' three code paths, on 4 input channels. */
typedef enum conv_kind { CONV_IM2COL, CONV_POINTWISE, CONV_DEPTHWISE } conv_kind;

/* A convolution of data (2, 4, 6, 7), then `tail` (JSON nodes from index 4
 * on, reading the convolution at [3, 0, 0] and data at [0, 0, 0]), heads
 * `heads`. */
static subject *
conv_kind_then (conv_kind kind, const char *tail, const char *heads,
    int num_filter)
{
  const char *attrs = kind == CONV_POINTWISE ? "'kernel': '(1, 1)'"
      : kind == CONV_DEPTHWISE
      ? "'kernel': '(3, 3)', 'pad': '(1, 1)', 'num_group': '4'"
      : "'kernel': '(3, 3)', 'pad': '(1, 1)'";
  const int k = kind == CONV_POINTWISE ? 1 : 3;
  const int per_group = kind == CONV_DEPTHWISE ? 1 : 4;
  g_autofree char *json = g_strdup_printf ("{'nodes': ["
      "{'op': 'null', 'name': 'data', 'inputs': []},"
      "{'op': 'null', 'name': 'c_weight', 'attrs': {'__shape__': '(%d, %d, %d, %d)'}, 'inputs': []},"
      "{'op': 'null', 'name': 'c_bias', 'attrs': {'__shape__': '(%d,)'}, 'inputs': []},"
      "{'op': 'Convolution', 'name': 'c', 'attrs': {%s, 'num_filter': '%d'},"
      "  'inputs': [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},"
      "%s], 'arg_nodes': [0], 'heads': %s}", num_filter, per_group, k, k,
      num_filter, attrs, num_filter, tail, heads);
  hy_shape in = { 4, { 2, 4, 6, 7 } };
  return subject_from_json (json, &in);
}

static subject *
conv_then (const char *tail, const char *heads, int num_filter)
{
  return conv_kind_then (CONV_IM2COL, tail, heads, num_filter);
}

static void
test_fuse_activations (void)
{
  static const struct {
    const char *node;
    hy_fused_act act;
    float alpha, beta;
  } cases[] = {
    { "{'op': 'Activation', 'name': 'a', 'attrs': {'act_type': 'relu'}, 'inputs': [[3, 0, 0]]}",
      HY_FUSED_ACT_RELU, 0, 0 },
    { "{'op': 'relu', 'name': 'a', 'inputs': [[3, 0, 0]]}",
      HY_FUSED_ACT_RELU, 0, 0 },
    { "{'op': 'clip', 'name': 'a', 'attrs': {'a_min': '0', 'a_max': '6'}, 'inputs': [[3, 0, 0]]}",
      HY_FUSED_ACT_CLIP, 0, 6 },
    { "{'op': 'clip', 'name': 'a', 'attrs': {'a_min': '-0.5', 'a_max': '0.25'}, 'inputs': [[3, 0, 0]]}",
      HY_FUSED_ACT_CLIP, -0.5f, 0.25f },
    { "{'op': 'LeakyReLU', 'name': 'a', 'attrs': {'act_type': 'leaky', 'slope': '0.1'}, 'inputs': [[3, 0, 0]]}",
      HY_FUSED_ACT_LEAKY, 0.1f, 0 },
    { "{'op': 'LeakyReLU', 'name': 'a', 'inputs': [[3, 0, 0]]}",
      HY_FUSED_ACT_LEAKY, 0.25f, 0 },
    { "{'op': 'Activation', 'name': 'a', 'attrs': {'act_type': 'sigmoid'}, 'inputs': [[3, 0, 0]]}",
      HY_FUSED_ACT_SIGMOID, 0, 0 },
    { "{'op': 'sigmoid', 'name': 'a', 'inputs': [[3, 0, 0]]}",
      HY_FUSED_ACT_SIGMOID, 0, 0 },
    { "{'op': 'Activation', 'name': 'a', 'attrs': {'act_type': 'tanh'}, 'inputs': [[3, 0, 0]]}",
      HY_FUSED_ACT_TANH, 0, 0 },
    { "{'op': 'tanh', 'name': 'a', 'inputs': [[3, 0, 0]]}",
      HY_FUSED_ACT_TANH, 0, 0 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    subject *s = conv_then (cases[i].node, "[[4, 0, 0]]", 5);
    rewrite r = rewrite_with (s, pass_fuse);
    g_assert_cmpint (r.stats.activations_fused, ==, 1);
    g_assert_cmpint (count_ops (r.graph), ==, 1);
    const hy_fused_epilogue *e = epilogue_of (r.graph, "c");
    g_assert_cmpint (e->act, ==, cases[i].act);
    g_assert_cmpfloat (e->alpha, ==, cases[i].alpha);
    g_assert_cmpfloat (e->beta, ==, cases[i].beta);
    g_assert_false (e->residual);
    assert_close (&r);
    rewrite_clear (&r);
    subject_free (s);
  }
}

static void
test_fuse_not_when_shared (void)
{
  /* The convolution's output is read twice (relu and a head; then elu,
   * which no epilogue applies). */
  static const char *const tails[] = {
    "{'op': 'relu', 'name': 'a', 'inputs': [[3, 0, 0]]}",
    "{'op': 'relu', 'name': 'a', 'inputs': [[3, 0, 0]]},"
    "{'op': 'sigmoid', 'name': 'b', 'inputs': [[3, 0, 0]]}",
    "{'op': 'LeakyReLU', 'name': 'a', 'attrs': {'act_type': 'elu'}, 'inputs': [[3, 0, 0]]}",
  };
  static const char *const heads[] = {
    "[[4, 0, 0], [3, 0, 0]]", "[[4, 0, 0], [5, 0, 0]]", "[[4, 0, 0]]",
  };
  for (guint i = 0; i < G_N_ELEMENTS (tails); i++) {
    subject *s = conv_then (tails[i], heads[i], 4);
    rewrite r = rewrite_with (s, pass_fuse);
    g_assert_cmpint (r.stats.activations_fused, ==, 0);
    g_assert_cmpint (count_ops (r.graph), ==, count_ops (s->graph));
    assert_close (&r);
    rewrite_clear (&r);
    subject_free (s);
  }
}

static void
test_dead_branches (void)
{
  /* The convolution feeds a relu nothing reads and a sigmoid that is the
   * output: only the sigmoid is a real consumer, and it fuses. */
  subject *s = conv_then (
      "{'op': 'relu', 'name': 'a', 'inputs': [[3, 0, 0]]},"
      "{'op': 'sigmoid', 'name': 'b', 'inputs': [[3, 0, 0]]}",
      "[[5, 0, 0]]", 4);
  rewrite r = rewrite_with (s, pass_fuse);
  g_assert_cmpint (r.stats.activations_fused, ==, 1);
  g_assert_cmpint (epilogue_of (r.graph, "c")->act, ==, HY_FUSED_ACT_SIGMOID);
  assert_close (&r);
  rewrite_clear (&r);
  subject_free (s);

  /* A BatchNorm nothing reads must not fold into a convolution whose
   * output a live relu reads. */
  s = conv_then (
      "{'op': 'null', 'name': 'bn_gamma', 'attrs': {'__shape__': '(4,)'}, 'inputs': []},"
      "{'op': 'null', 'name': 'bn_beta', 'attrs': {'__shape__': '(4,)'}, 'inputs': []},"
      "{'op': 'null', 'name': 'bn_moving_mean', 'attrs': {'__shape__': '(4,)'}, 'inputs': []},"
      "{'op': 'null', 'name': 'bn_moving_var', 'attrs': {'__shape__': '(4,)'}, 'inputs': []},"
      "{'op': 'BatchNorm', 'name': 'bn', 'inputs': [[3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 0], [7, 0, 0]]},"
      "{'op': 'relu', 'name': 'a', 'inputs': [[3, 0, 0]]}",
      "[[9, 0, 0]]", 4);
  r = rewrite_with (s, hy_pass_fold_batchnorm);
  g_assert_cmpint (r.stats.batchnorms_folded, ==, 0);
  assert_close (&r);
  rewrite_clear (&r);
  subject_free (s);
}

static void
test_fuse_residual (void)
{
  /* conv + data then relu, in both operand orders, and through a
   * broadcast_add of equal shapes: one kernel call is left. */
  static const char *const adds[] = {
    "{'op': 'elemwise_add', 'name': 's', 'inputs': [[3, 0, 0], [0, 0, 0]]}",
    "{'op': '_plus', 'name': 's', 'inputs': [[0, 0, 0], [3, 0, 0]]}",
    "{'op': 'broadcast_add', 'name': 's', 'inputs': [[3, 0, 0], [0, 0, 0]]}",
  };
  for (guint i = 0; i < G_N_ELEMENTS (adds); i++) {
    g_autofree char *tail = g_strdup_printf ("%s,"
        "{'op': 'Activation', 'name': 'a', 'attrs': {'act_type': 'relu'},"
        "  'inputs': [[4, 0, 0]]}", adds[i]);
    subject *s = conv_then (tail, "[[5, 0, 0]]", 4);
    rewrite r = rewrite_with (s, pass_fuse);
    g_assert_cmpint (r.stats.adds_fused, ==, 1);
    g_assert_cmpint (r.stats.activations_fused, ==, 1);
    g_assert_cmpint (count_ops (r.graph), ==, 1);
    const hy_fused_epilogue *e = epilogue_of (r.graph, "c");
    g_assert_true (e->residual);
    g_assert_cmpint (e->act, ==, HY_FUSED_ACT_RELU);
    const hy_node *c = hy_graph_node (r.graph, hy_graph_find (r.graph, "c"));
    g_assert_cmpuint (c->n_inputs, ==, 4);
    g_assert_cmpstr (hy_graph_node (r.graph, c->inputs[3].node)->name, ==,
        "data");
    assert_close (&r);
    rewrite_clear (&r);
    subject_free (s);
  }
}

/* Each convolution path applies every epilogue: bias, residual, act. */
static void
test_fuse_conv_paths (void)
{
  static const char *const acts[] = {
    "{'op': 'clip', 'name': 'a', 'attrs': {'a_min': '-0.5', 'a_max': '0.5'}, 'inputs': [[4, 0, 0]]}",
    "{'op': 'LeakyReLU', 'name': 'a', 'attrs': {'slope': '0.2'}, 'inputs': [[4, 0, 0]]}",
    "{'op': 'sigmoid', 'name': 'a', 'inputs': [[4, 0, 0]]}",
    "{'op': 'identity', 'name': 'a', 'inputs': [[4, 0, 0]]}",
  };
  for (conv_kind kind = CONV_IM2COL; kind <= CONV_DEPTHWISE; kind++) {
    for (guint i = 0; i < G_N_ELEMENTS (acts); i++) {
      g_autofree char *tail = g_strdup_printf ("{'op': 'elemwise_add', "
          "'name': 's', 'inputs': [[0, 0, 0], [3, 0, 0]]}, %s", acts[i]);
      subject *s = conv_kind_then (kind, tail, "[[5, 0, 0]]", 4);
      rewrite r = rewrite_with (s, pass_fuse);
      g_assert_cmpint (r.stats.adds_fused, ==, 1);
      /* _copy is no activation: it stays (the identity pass drops it). */
      g_assert_cmpint (r.stats.activations_fused, ==,
          hy_graph_find (s->graph, "a") >= 0 && i < 3 ? 1 : 0);
      assert_close (&r);
      rewrite_clear (&r);
      subject_free (s);
    }
  }
}

static void
test_fuse_residual_refused (void)
{
  /* relu before the add (act(y) + x is no epilogue), a broadcasting add,
   * and an add of two convolutions where the later one absorbs it. */
  static const char *const tails[] = {
    "{'op': 'relu', 'name': 'a', 'inputs': [[3, 0, 0]]},"
    "{'op': 'elemwise_add', 'name': 's', 'inputs': [[4, 0, 0], [0, 0, 0]]}",
    "{'op': 'null', 'name': 'row', 'attrs': {'__shape__': '(1, 4, 1, 7)'}, 'inputs': []},"
    "{'op': 'broadcast_add', 'name': 's', 'inputs': [[3, 0, 0], [4, 0, 0]]}",
  };
  for (guint i = 0; i < G_N_ELEMENTS (tails); i++) {
    subject *s = conv_then (tails[i], "[[5, 0, 0]]", 4);
    rewrite r = rewrite_with (s, pass_fuse);
    g_assert_cmpint (r.stats.adds_fused, ==, 0);
    g_assert_cmpint (count_op (r.graph, HY_OP_CONVOLUTION), ==, 1);
    g_assert_false (epilogue_of (r.graph, "c")->residual);
    assert_close (&r);
    rewrite_clear (&r);
    subject_free (s);
  }

  subject *s = conv_then (
      "{'op': 'null', 'name': 'd_weight', 'attrs': {'__shape__': '(4, 4, 1, 1)'}, 'inputs': []},"
      "{'op': 'null', 'name': 'd_bias', 'attrs': {'__shape__': '(4,)'}, 'inputs': []},"
      "{'op': 'Convolution', 'name': 'd', 'attrs': {'kernel': '(1, 1)', 'num_filter': '4'},"
      "  'inputs': [[0, 0, 0], [4, 0, 0], [5, 0, 0]]},"
      "{'op': 'elemwise_add', 'name': 's', 'inputs': [[3, 0, 0], [6, 0, 0]]}",
      "[[7, 0, 0]]", 4);
  rewrite r = rewrite_with (s, pass_fuse);
  g_assert_cmpint (r.stats.adds_fused, ==, 1);
  g_assert_false (epilogue_of (r.graph, "c")->residual);
  g_assert_true (epilogue_of (r.graph, "d")->residual);
  assert_close (&r);
  rewrite_clear (&r);
  subject_free (s);
}

/* ---- strides moved up ----------------------------------------------------- */

/* A 1×1 convolution reading `from`, stride s, pad p, 4 filters, no bias
 * (its weight is the node before it). */
#define POINTWISE(name, from, s, p) \
  "{'op': 'null', 'name': '" name "_weight', 'attrs': {'__shape__': '(4, 4, 1, 1)'}, 'inputs': []}," \
  "{'op': 'Convolution', 'name': '" name "', 'attrs': {'kernel': '(1, 1)', 'num_filter': '4'," \
  "  'stride': '(" #s ", " #s ")', 'pad': '(" #p ", " #p ")', 'no_bias': 'True'}," \
  "  'inputs': [[" #from ", 0, 0], [%u, 0, 0]]}"

static int64_t
stride_of (const hy_graph *g, const char *name)
{
  int i = hy_graph_find (g, name);
  g_assert_cmpint (i, >=, 0);
  return ((const hy_conv_params *) hy_graph_node (g, (guint) i)->params)->stride[1];
}

static void
test_early_stride (void)
{
  /* c (1×1, + data, relu) read only by d and e, both 1×1 stride 2: c
   * computes the 3×4 positions they read, its residual through a strided
   * slice, and they run at stride 1.  6×7 maps: the odd width leaves a
   * last column unread. */
  g_autofree char *tail = g_strdup_printf (
      "{'op': 'elemwise_add', 'name': 's', 'inputs': [[3, 0, 0], [0, 0, 0]]},"
      "{'op': 'relu', 'name': 'a', 'inputs': [[4, 0, 0]]},"
      POINTWISE ("d", 5, 2, 0) "," POINTWISE ("e", 5, 2, 0) ","
      "{'op': 'elemwise_mul', 'name': 'm', 'inputs': [[7, 0, 0], [9, 0, 0]]}",
      6, 8);
  subject *s = conv_kind_then (CONV_POINTWISE, tail, "[[10, 0, 0]]", 4);
  rewrite r = rewrite_with (s, NULL);
  g_assert_cmpint (r.stats.strides_taken, ==, 1);
  g_assert_cmpint (count_op (r.graph, HY_OP_SLICE), ==, 1);
  g_assert_cmpint (stride_of (r.graph, "c"), ==, 2);
  g_assert_cmpint (stride_of (r.graph, "d"), ==, 1);
  g_assert_cmpint (stride_of (r.graph, "e"), ==, 1);
  g_assert_true (epilogue_of (r.graph, "c")->residual);
  assert_close (&r);
  rewrite_clear (&r);
  subject_free (s);

  /* A chain: d takes e's stride, then c takes d's (no residual, so no
   * slice); e, read by the head, keeps its own output. */
  g_autofree char *chain = g_strdup_printf (POINTWISE ("d", 3, 1, 0) ","
      POINTWISE ("e", 5, 2, 0), 4, 6);
  s = conv_kind_then (CONV_POINTWISE, chain, "[[7, 0, 0]]", 4);
  r = rewrite_with (s, NULL);
  g_assert_cmpint (r.stats.strides_taken, ==, 2);
  g_assert_cmpint (count_op (r.graph, HY_OP_SLICE), ==, 0);
  g_assert_cmpint (stride_of (r.graph, "c"), ==, 2);
  g_assert_cmpint (stride_of (r.graph, "d"), ==, 1);
  g_assert_cmpint (stride_of (r.graph, "e"), ==, 1);
  assert_close (&r);
  rewrite_clear (&r);
  subject_free (s);
}

static void
test_early_stride_refused (void)
{
  /* c's output read by: a stride-2 1×1 and a 3×3; stride 2 and stride 1;
   * a stride-2 1×1 with padding; a stride-2 1×1 and the graph's output. */
  static const char *const readers[] = {
    POINTWISE ("d", 3, 2, 0) ","
    "{'op': 'null', 'name': 'e_weight', 'attrs': {'__shape__': '(4, 4, 3, 3)'}, 'inputs': []},"
    "{'op': 'Convolution', 'name': 'e', 'attrs': {'kernel': '(3, 3)', 'num_filter': '4',"
    "  'stride': '(2, 2)', 'pad': '(1, 1)', 'no_bias': 'True'}, 'inputs': [[3, 0, 0], [6, 0, 0]]}",
    POINTWISE ("d", 3, 2, 0) "," POINTWISE ("e", 3, 1, 0),
    POINTWISE ("d", 3, 2, 1) "," POINTWISE ("e", 3, 2, 1),
  };
  const char *heads[] = { "[[5, 0, 0], [7, 0, 0]]", "[[5, 0, 0], [7, 0, 0]]",
    "[[5, 0, 0], [7, 0, 0]]" };
  for (guint i = 0; i < G_N_ELEMENTS (readers); i++) {
    g_autofree char *tail = g_strdup_printf (readers[i], 4, 6);
    subject *s = conv_kind_then (CONV_POINTWISE, tail, heads[i], 4);
    rewrite r = rewrite_with (s, NULL);
    g_assert_cmpint (r.stats.strides_taken, ==, 0);
    g_assert_cmpint (stride_of (r.graph, "c"), ==, 1);
    assert_close (&r);
    rewrite_clear (&r);
    subject_free (s);
  }
  g_autofree char *tail = g_strdup_printf (POINTWISE ("d", 3, 2, 0), 4);
  subject *s = conv_kind_then (CONV_POINTWISE, tail, "[[5, 0, 0], [3, 0, 0]]",
      4);
  rewrite r = rewrite_with (s, NULL);
  g_assert_cmpint (r.stats.strides_taken, ==, 0);
  assert_close (&r);
  rewrite_clear (&r);
  subject_free (s);
}

static void
test_fuse_fc (void)
{
  /* FullyConnected: tanh; with a residual then clip; without bias. */
  static const char *json = "{'nodes': ["
      "{'op': 'null', 'name': 'data', 'inputs': []},"
      "{'op': 'null', 'name': 'w', 'attrs': {'__shape__': '(6, 6)'}, 'inputs': []},"
      "{'op': 'null', 'name': 'b', 'attrs': {'__shape__': '(6,)'}, 'inputs': []},"
      "{'op': 'FullyConnected', 'name': 'f1', 'attrs': {'num_hidden': '6'},"
      "  'inputs': [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},"
      "{'op': 'tanh', 'name': 't', 'inputs': [[3, 0, 0]]},"
      "{'op': 'FullyConnected', 'name': 'f2', 'attrs': {'num_hidden': '6', 'no_bias': 'True'},"
      "  'inputs': [[4, 0, 0], [1, 0, 0]]},"
      "{'op': 'elemwise_add', 'name': 's', 'inputs': [[5, 0, 0], [4, 0, 0]]},"
      "{'op': 'clip', 'name': 'c', 'attrs': {'a_min': '-0.3', 'a_max': '0.3'}, 'inputs': [[6, 0, 0]]}"
      "], 'arg_nodes': [0, 1, 2], 'heads': [[7, 0, 0]]}";
  hy_shape in = { 2, { 3, 6 } };
  subject *s = subject_from_json (json, &in);
  rewrite r = rewrite_with (s, pass_fuse);
  g_assert_cmpint (r.stats.activations_fused, ==, 2);
  g_assert_cmpint (r.stats.adds_fused, ==, 1);
  g_assert_cmpint (count_ops (r.graph), ==, 2);
  g_assert_cmpint (epilogue_of (r.graph, "f1")->act, ==, HY_FUSED_ACT_TANH);
  g_assert_cmpint (epilogue_of (r.graph, "f2")->act, ==, HY_FUSED_ACT_CLIP);
  g_assert_true (epilogue_of (r.graph, "f2")->residual);
  assert_close (&r);
  rewrite_clear (&r);
  subject_free (s);
}

/* GluonCV's hard sigmoid of the entry at `in` ("[3, 0, 0]"), as MXNet
 * exports it, from node index `first` on (three nodes: p, r6, hs), with
 * the scalars given; then `rest`. */
static char *
hard_sigmoid_chain (int first, const char *in, const char *plus,
    const char *a_min, const char *a_max, const char *div, const char *rest)
{
  return g_strdup_printf (
      "{'op': '_plus_scalar', 'name': 'p', 'attrs': {'scalar': '%s'}, 'inputs': [%s]},"
      "{'op': 'clip', 'name': 'r6', 'attrs': {'a_min': '%s', 'a_max': '%s'}, 'inputs': [[%d, 0, 0]]},"
      "{'op': '_div_scalar', 'name': 'hs', 'attrs': {'scalar': '%s'}, 'inputs': [[%d, 0, 0]]}%s",
      plus, in, a_min, a_max, first, div, first + 1, rest);
}

static void
test_fuse_hard_activations (void)
{
  /* Hard swish as GluonCV's HardSwish exports it (x · hard sigmoid),
   * the multiply's operands either way round or a broadcast_mul of equal
   * shapes; hard sigmoid alone, and as SE's gate, whose multiply (of
   * other values) stays.  After a residual add too, on each convolution
   * path, and bit for bit the unfused graph. */
  static const struct {
    const char *rest;
    int ops_after;
    hy_fused_act act;
  } cases[] = {
    { ",{'op': 'elemwise_mul', 'name': 'hw', 'inputs': [[X, 0, 0], [H, 0, 0]]}",
      1, HY_FUSED_ACT_HARD_SWISH },
    { ",{'op': 'elemwise_mul', 'name': 'hw', 'inputs': [[H, 0, 0], [X, 0, 0]]}",
      1, HY_FUSED_ACT_HARD_SWISH },
    { ",{'op': 'broadcast_mul', 'name': 'hw', 'inputs': [[X, 0, 0], [H, 0, 0]]}",
      1, HY_FUSED_ACT_HARD_SWISH },
    { ",{'op': '_copy', 'name': 'hw', 'inputs': [[H, 0, 0]]}",
      2, HY_FUSED_ACT_HARD_SIGMOID },
    { ",{'op': 'broadcast_mul', 'name': 'hw', 'inputs': [[0, 0, 0], [H, 0, 0]]}",
      2, HY_FUSED_ACT_HARD_SIGMOID },
  };
  for (conv_kind kind = CONV_IM2COL; kind <= CONV_DEPTHWISE; kind++)
    for (int residual = 0; residual < 2; residual++)
      for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
        /* X: what the chain reads (the convolution, or the add); H: the
         * chain's end. */
        const int x = residual ? 4 : 3, h = x + 3;
        g_autofree char *xs = g_strdup_printf ("%d", x);
        g_autofree char *hs = g_strdup_printf ("%d", h);
        g_autofree char *in = g_strdup_printf ("[%d, 0, 0]", x);
        g_auto (GStrv) p1 = g_strsplit (cases[i].rest, "X", -1);
        g_autofree char *r1 = g_strjoinv (xs, p1);
        g_auto (GStrv) p2 = g_strsplit (r1, "H", -1);
        g_autofree char *rest = g_strjoinv (hs, p2);
        g_autofree char *chain = hard_sigmoid_chain (x + 1, in, "3", "0",
            "6", "6.0", rest);
        g_autofree char *tail = residual
            ? g_strdup_printf ("{'op': 'elemwise_add', 'name': 's', "
                "'inputs': [[0, 0, 0], [3, 0, 0]]}, %s", chain)
            : g_strdup (chain);
        g_autofree char *heads = g_strdup_printf ("[[%d, 0, 0]]", h + 1);
        subject *s = conv_kind_then (kind, tail, heads, 4);
        rewrite r = rewrite_with (s, pass_fuse);
        g_assert_cmpint (r.stats.adds_fused, ==, residual);
        g_assert_cmpint (r.stats.activations_fused, ==, 1);
        g_assert_cmpint (count_ops (r.graph), ==, cases[i].ops_after);
        g_assert_cmpint (count_op (r.graph, HY_OP_PLUS_SCALAR), ==, 0);
        const hy_fused_epilogue *e = epilogue_of (r.graph, "c");
        g_assert_cmpint (e->act, ==, cases[i].act);
        g_assert_cmpint (e->residual, ==, residual);
        g_assert_cmpfloat (r.diff, ==, 0.0);
        rewrite_clear (&r);
        subject_free (s);
      }

  /* FullyConnected: hard swish, then a hard sigmoid as the output. */
  g_autofree char *sig = hard_sigmoid_chain (9, "[8, 0, 0]", "3", "0",
      "6", "6", "");
  g_autofree char *swish = hard_sigmoid_chain (4, "[3, 0, 0]", "3.0",
      "0.0", "6.0", "6",
      ",{'op': 'elemwise_mul', 'name': 'hw', 'inputs': [[6, 0, 0], [3, 0, 0]]},"
      "{'op': 'FullyConnected', 'name': 'f2', 'attrs': {'num_hidden': '6'},"
      "  'inputs': [[7, 0, 0], [1, 0, 0], [2, 0, 0]]},");
  g_autofree char *json = g_strdup_printf ("{'nodes': ["
      "{'op': 'null', 'name': 'data', 'inputs': []},"
      "{'op': 'null', 'name': 'w', 'attrs': {'__shape__': '(6, 6)'}, 'inputs': []},"
      "{'op': 'null', 'name': 'b', 'attrs': {'__shape__': '(6,)'}, 'inputs': []},"
      "{'op': 'FullyConnected', 'name': 'f1', 'attrs': {'num_hidden': '6'},"
      "  'inputs': [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},"
      "%s%s], 'arg_nodes': [0, 1, 2], 'heads': [[11, 0, 0]]}", swish, sig);
  hy_shape in = { 2, { 3, 6 } };
  subject *s = subject_from_json (json, &in);
  rewrite r = rewrite_with (s, pass_fuse);
  g_assert_cmpint (r.stats.activations_fused, ==, 2);
  g_assert_cmpint (count_ops (r.graph), ==, 2);
  g_assert_cmpint (epilogue_of (r.graph, "f1")->act, ==,
      HY_FUSED_ACT_HARD_SWISH);
  g_assert_cmpint (epilogue_of (r.graph, "f2")->act, ==,
      HY_FUSED_ACT_HARD_SIGMOID);
  g_assert_cmpfloat (r.diff, ==, 0.0);
  rewrite_clear (&r);
  subject_free (s);
}

static void
test_fuse_hard_refused (void)
{
  /* Chains that are not the exported hard sigmoid (a scalar, bound or op
   * differs), links or the product read by someone else too, a multiply
   * by something else, an activation fused already: each op stays. */
  static const struct {
    const char *plus, *a_min, *a_max, *div, *mul, *heads;
    int fused;                  /* activations fused */
  } cases[] = {
    { "2.5", "0", "6", "6", "[[3, 0, 0], [6, 0, 0]]", "[[7, 0, 0]]", 0 },
    { "3", "-1", "6", "6", "[[3, 0, 0], [6, 0, 0]]", "[[7, 0, 0]]", 0 },
    { "3", "0", "5", "6", "[[3, 0, 0], [6, 0, 0]]", "[[7, 0, 0]]", 0 },
    { "3", "0", "6", "5", "[[3, 0, 0], [6, 0, 0]]", "[[7, 0, 0]]", 0 },
    /* the _plus_scalar, the clip, the hard sigmoid, the product also a
     * graph output */
    { "3", "0", "6", "6", "[[3, 0, 0], [6, 0, 0]]", "[[7, 0, 0], [4, 0, 0]]", 0 },
    { "3", "0", "6", "6", "[[3, 0, 0], [6, 0, 0]]", "[[7, 0, 0], [5, 0, 0]]", 0 },
    { "3", "0", "6", "6", "[[3, 0, 0], [6, 0, 0]]", "[[7, 0, 0], [6, 0, 0]]", 0 },
    { "3", "0", "6", "6", "[[3, 0, 0], [6, 0, 0]]", "[[7, 0, 0], [3, 0, 0]]", 0 },
    /* the hard sigmoid of the convolution times the data: the hard
     * sigmoid alone fuses */
    { "3", "0", "6", "6", "[[0, 0, 0], [6, 0, 0]]", "[[7, 0, 0]]", 1 },
    /* the convolution squared (its hard sigmoid unread) */
    { "3", "0", "6", "6", "[[3, 0, 0], [3, 0, 0]]", "[[7, 0, 0]]", 0 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree char *rest = g_strdup_printf (",{'op': 'elemwise_mul', "
        "'name': 'hw', 'inputs': %s}", cases[i].mul);
    g_autofree char *tail = hard_sigmoid_chain (4, "[3, 0, 0]",
        cases[i].plus, cases[i].a_min, cases[i].a_max, cases[i].div, rest);
    subject *s = conv_then (tail, cases[i].heads, 4);
    rewrite r = rewrite_with (s, pass_fuse);
    g_assert_cmpint (r.stats.activations_fused, ==, cases[i].fused);
    g_assert_cmpint (epilogue_of (r.graph, "c")->act, ==, cases[i].fused
        ? HY_FUSED_ACT_HARD_SIGMOID : HY_FUSED_ACT_NONE);
    g_assert_cmpfloat (r.diff, ==, 0.0);
    rewrite_clear (&r);
    subject_free (s);
  }

  /* _minus_scalar for the _plus_scalar, _mul_scalar for the division,
   * and a relu fused first: at most that relu. */
  static const char *const tails[] = {
    "{'op': '_minus_scalar', 'name': 'p', 'attrs': {'scalar': '-3'}, 'inputs': [[3, 0, 0]]},"
    "{'op': 'clip', 'name': 'r6', 'attrs': {'a_min': '0', 'a_max': '6'}, 'inputs': [[4, 0, 0]]},"
    "{'op': '_div_scalar', 'name': 'hs', 'attrs': {'scalar': '6'}, 'inputs': [[5, 0, 0]]},"
    "{'op': 'elemwise_mul', 'name': 'hw', 'inputs': [[3, 0, 0], [6, 0, 0]]}",
    "{'op': '_plus_scalar', 'name': 'p', 'attrs': {'scalar': '3'}, 'inputs': [[3, 0, 0]]},"
    "{'op': 'clip', 'name': 'r6', 'attrs': {'a_min': '0', 'a_max': '6'}, 'inputs': [[4, 0, 0]]},"
    "{'op': '_mul_scalar', 'name': 'hs', 'attrs': {'scalar': '0.16666667'}, 'inputs': [[5, 0, 0]]},"
    "{'op': 'elemwise_mul', 'name': 'hw', 'inputs': [[3, 0, 0], [6, 0, 0]]}",
    "{'op': 'relu', 'name': 'a', 'inputs': [[3, 0, 0]]},"
    "{'op': '_plus_scalar', 'name': 'p', 'attrs': {'scalar': '3'}, 'inputs': [[4, 0, 0]]},"
    "{'op': 'clip', 'name': 'r6', 'attrs': {'a_min': '0', 'a_max': '6'}, 'inputs': [[5, 0, 0]]},"
    "{'op': '_div_scalar', 'name': 'hs', 'attrs': {'scalar': '6'}, 'inputs': [[6, 0, 0]]},"
    "{'op': 'elemwise_mul', 'name': 'hw', 'inputs': [[4, 0, 0], [7, 0, 0]]}",
  };
  for (guint i = 0; i < G_N_ELEMENTS (tails); i++) {
    g_autofree char *heads = g_strdup_printf ("[[%d, 0, 0]]", i < 2 ? 7 : 8);
    subject *s = conv_then (tails[i], heads, 4);
    rewrite r = rewrite_with (s, pass_fuse);
    g_assert_cmpint (r.stats.activations_fused, ==, i < 2 ? 0 : 1);
    g_assert_cmpint (count_op (r.graph, HY_OP_ELEMWISE_MUL), ==, 1);
    g_assert_cmpint (epilogue_of (r.graph, "c")->act, ==, i < 2
        ? HY_FUSED_ACT_NONE : HY_FUSED_ACT_RELU);
    g_assert_cmpfloat (r.diff, ==, 0.0);
    rewrite_clear (&r);
    subject_free (s);
  }
}

/* ---- constant folding ---------------------------------------------------- */

static void
test_const_fold (void)
{
  /* weight·0.5 feeds a FullyConnected; a split weight feeds two ops; an
   * _arange is added to the data.  The data-dependent ops stay. */
  static const char *json = "{'nodes': ["
      "{'op': 'null', 'name': 'data', 'inputs': []},"
      "{'op': 'null', 'name': 'w', 'attrs': {'__shape__': '(4, 4)'}, 'inputs': []},"
      "{'op': '_mul_scalar', 'name': 'half', 'attrs': {'scalar': '0.5'}, 'inputs': [[1, 0, 0]]},"
      "{'op': 'transpose', 'name': 'wt', 'inputs': [[2, 0, 0]]},"
      "{'op': 'FullyConnected', 'name': 'fc', 'attrs': {'num_hidden': '4', 'no_bias': 'True'},"
      "  'inputs': [[0, 0, 0], [3, 0, 0]]},"
      "{'op': 'SliceChannel', 'name': 'split', 'attrs': {'num_outputs': '2', 'axis': '0'},"
      "  'inputs': [[1, 0, 0]]},"
      "{'op': 'elemwise_mul', 'name': 'prod', 'inputs': [[5, 1, 0], [5, 0, 0]]},"
      "{'op': 'FullyConnected', 'name': 'fc2', 'attrs': {'num_hidden': '2', 'no_bias': 'True'},"
      "  'inputs': [[4, 0, 0], [6, 0, 0]]},"
      "{'op': '_arange', 'name': 'ramp', 'attrs': {'start': '0', 'stop': '2'}, 'inputs': []},"
      "{'op': 'broadcast_add', 'name': 'out', 'inputs': [[7, 0, 0], [8, 0, 0]]}"
      "], 'arg_nodes': [0, 1], 'heads': [[9, 0, 0]]}";
  hy_shape in = { 2, { 3, 4 } };
  subject *s = subject_from_json (json, &in);
  rewrite r = rewrite_with (s, hy_pass_const_fold);
  g_assert_cmpint (r.stats.nodes_const_folded, ==, 5);
  g_assert_cmpint (count_ops (r.graph), ==, 3);
  g_assert_cmpint (count_op (r.graph, HY_OP_MUL_SCALAR), ==, 0);
  g_assert_cmpint (count_op (r.graph, HY_OP_SLICE_CHANNEL), ==, 0);
  g_assert_cmpint (count_op (r.graph, HY_OP_ARANGE), ==, 0);
  g_assert_cmpuint (r.owned->len, ==, 6);     /* split made two */
  /* The folded weight is a bound variable under the op's name. */
  const hy_node *fc = hy_graph_node (r.graph, hy_graph_find (r.graph, "fc"));
  const hy_node *wt = hy_graph_node (r.graph, fc->inputs[1].node);
  g_assert_null (wt->op);
  g_assert_cmpstr (wt->name, ==, "wt");
  g_assert_nonnull (wt->value);
  assert_close (&r);
  rewrite_clear (&r);
  subject_free (s);
}

static void
test_const_fold_keeps_outputs (void)
{
  /* _arange alone is the graph's output: it stays an op. */
  subject *s = load_fixture ("op__arange_stop");
  rewrite r = rewrite_with (s, hy_pass_const_fold);
  g_assert_cmpint (r.stats.nodes_const_folded, ==, 0);
  g_assert_cmpint (count_op (r.graph, HY_OP_ARANGE), ==, 1);
  assert_close (&r);
  rewrite_clear (&r);
  subject_free (s);
}

/* ---- all passes ---------------------------------------------------------- */

static void
test_all_legacy (void)
{
  /* conv → BN → relu twice, then _Plus of the two relus: both become
   * convolutions with relu; the add stays, since the relu before it is
   * already in the second convolution. */
  subject *s = load_fixture ("legacy_convbn");
  rewrite r = rewrite_with (s, NULL);
  g_assert_cmpint (r.stats.batchnorms_folded, ==, 2);
  g_assert_cmpint (r.stats.activations_fused, ==, 2);
  g_assert_cmpint (r.stats.adds_fused, ==, 0);
  g_assert_cmpint (count_op (r.graph, HY_OP_BATCH_NORM), ==, 0);
  g_assert_cmpint (count_op (r.graph, HY_OP_RELU), ==, 0);
  g_assert_cmpint (count_op (r.graph, HY_OP_ELEMWISE_ADD), ==, 1);
  g_assert_cmpint (count_ops (r.graph), ==, 5);
  assert_close (&r);
  rewrite_clear (&r);
  subject_free (s);
}

/* Every committed fixture: the passes keep the graph valid and its
 * outputs equal. */
static void
test_all_fixtures (void)
{
  g_autofree char *root = source_path ("tests", "fixtures", NULL);
  g_autoptr (GDir) dir = g_dir_open (root, 0, NULL);
  g_assert_nonnull (dir);
  int n = 0;
  const char *name;
  while ((name = g_dir_read_name (dir))) {
    g_autofree char *path = g_build_filename (root, name, NULL);
    subject *s = load_case (path);
    if (!s)
      continue;
    rewrite r = rewrite_with (s, NULL);
    if (!(r.diff <= TOL))
      g_error ("%s: rewritten graph differs by %.3g relative", name, r.diff);
    rewrite_clear (&r);
    subject_free (s);
    n++;
  }
  g_test_message ("%d fixtures", n);
  g_assert_cmpint (n, >, 100);
}

/* The zoo: what the passes do to the models named in the brief, checked
 * against their structure (ops: before → after):
 *  resnet18_v1  68 → 23: 20 BN folded; 17 relu and 8 residual adds fused
 *               (every block ends conv → BN → add → relu), leaving 20
 *               convolutions, 2 poolings and the classifier;
 *  resnet50_v1  174 → 59: likewise 53 BN, 49 relu, 16 adds; the last
 *               1×1 of stages 1-3 takes the stride of the next stage's
 *               two stride-2 1×1 readers, its residual read through a
 *               strided slice (3 ops more);
 *  mobilenetv2  155 → 56: 53 BN, 36 relu6 (clip) and the 10 linear
 *               bottleneck adds, leaving 54 convolutions, pooling, Flatten;
 *  mobilenetv3_large  266 → 82: 46 BN, 48 activations — 19 relu, 21
 *               hard swish (4 ops each) and the 8 squeeze-excitation gates'
 *               hard sigmoid (3 ops each) — 10 adds and the Dropout,
 *               leaving 64 convolutions, 9 poolings, the 8 gates'
 *               broadcast_mul and Flatten;
 *  mobilenetv3_small  232 → 74: likewise 34 BN, 42 activations (14 relu,
 *               19 hard swish, 9 hard sigmoid), 6 adds, the Dropout.
 * The MobileNetV3s must come out bit for bit the original (`exact`): the
 * epilogue repeats the hard activations' own float operations.
 */
typedef struct zoo_expect {
  const char *name;
  int bn_folded, acts_fused, adds_fused, identities;
  int strides_taken, ops_after;
  gboolean exact;
} zoo_expect;

static const zoo_expect zoo[] = {
  { "zoo_resnet18_v1_b1", 20, 17, 8, 0, 0, 23, FALSE },
  { "zoo_resnet50_v1_b1", 53, 49, 16, 0, 3, 59, FALSE },
  { "zoo_mobilenetv2_1.0_b1", 53, 36, 10, 0, 0, 56, FALSE },
  { "zoo_mobilenetv3_large_b1", 46, 48, 10, 1, 0, 82, TRUE },
  { "zoo_mobilenetv3_small_b1", 34, 42, 6, 1, 0, 74, TRUE },
};

/* The rewritten zoo model against the original and against MXNet. */
static void
check_zoo_model (const char *name, rewrite *r, subject *s)
{
  /* Every output MXNet gave (detectors have three). */
  GPtrArray *ref = g_ptr_array_new_with_free_func (
      (GDestroyNotify) hy_tensor_free);
  for (guint i = 0;; i++) {
    g_autoptr (GError) error = NULL;
    g_autofree char *file = g_strdup_printf ("output%u.npy", i);
    g_autofree char *ref_path = g_build_filename (zoo_dir (), name, file,
        NULL);
    if (i > 0 && !g_file_test (ref_path, G_FILE_TEST_EXISTS))
      break;
    g_ptr_array_add (ref, hy_npy_load (ref_path, &error));
    g_assert_no_error (error);
  }
  GPtrArray *got = run_graph (r->graph, s->inputs);
  GPtrArray *orig = run_graph (s->graph, s->inputs);
  double vs_mxnet = relative_diff (ref, got);
  double orig_vs_mxnet = relative_diff (ref, orig);
  g_test_message ("%s: rewritten vs original %.3g, vs MXNet %.3g (original "
      "vs MXNet %.3g)", name, r->diff, vs_mxnet, orig_vs_mxnet);
  if (!(r->diff <= TOL && vs_mxnet <= MXNET_TOL))
    g_error ("%s: rewritten graph differs by %.3g from the original "
        "(tolerance %g) and %.3g from MXNet (tolerance %g)", name, r->diff,
        TOL, vs_mxnet, MXNET_TOL);
  g_ptr_array_unref (ref);
  g_ptr_array_unref (got);
  g_ptr_array_unref (orig);
}

static void
test_zoo (gconstpointer data)
{
  const zoo_expect *x = data;
  subject *s = load_zoo (x->name);
  if (!s)
    return;
  rewrite r = rewrite_with (s, NULL);
  g_test_message ("%s: %u nodes (%d ops) -> %u nodes (%d ops); BN folded "
      "%d, activations fused %d, adds fused %d, identities dropped %d, "
      "strides taken %d", x->name, hy_graph_n_nodes (s->graph),
      count_ops (s->graph), hy_graph_n_nodes (r.graph), count_ops (r.graph),
      r.stats.batchnorms_folded, r.stats.activations_fused,
      r.stats.adds_fused, r.stats.identities_dropped, r.stats.strides_taken);
  g_assert_cmpint (r.stats.batchnorms_folded, ==, x->bn_folded);
  g_assert_cmpint (r.stats.activations_fused, ==, x->acts_fused);
  g_assert_cmpint (r.stats.adds_fused, ==, x->adds_fused);
  g_assert_cmpint (r.stats.identities_dropped, ==, x->identities);
  g_assert_cmpint (r.stats.strides_taken, ==, x->strides_taken);
  g_assert_cmpint (count_ops (r.graph), ==, x->ops_after);
  if (x->exact)
    g_assert_cmpfloat (r.diff, ==, 0.0);
  check_zoo_model (x->name, &r, s);
  rewrite_clear (&r);
  subject_free (s);
}

static gboolean
zoo_expected (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (zoo); i++)
    if (!strcmp (zoo[i].name, name))
      return TRUE;
  return FALSE;
}

/* Every other batch-1 zoo model: valid and still computing the same. */
static void
test_zoo_others (void)
{
  g_autoptr (GDir) dir = g_dir_open (zoo_dir (), 0, NULL);
  if (!dir) {
    g_test_skip ("zoo fixtures not generated");
    return;
  }
  const char *name;
  while ((name = g_dir_read_name (dir))) {
    if (!g_str_has_suffix (name, "_b1") || zoo_expected (name))
      continue;
    subject *s = load_zoo (name);
    if (!s)
      continue;
    rewrite r = rewrite_with (s, NULL);
    g_test_message ("%s: %d ops -> %d; BN folded %d, activations fused %d, "
        "adds fused %d, identities dropped %d, strides taken %d", name,
        count_ops (s->graph), count_ops (r.graph), r.stats.batchnorms_folded,
        r.stats.activations_fused, r.stats.adds_fused,
        r.stats.identities_dropped, r.stats.strides_taken);
    check_zoo_model (name, &r, s);
    rewrite_clear (&r);
    subject_free (s);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/passes/copy", test_copy);
  g_test_add_func ("/passes/prune/keeps-inputs", test_prune_keeps_inputs);
  g_test_add_func ("/passes/identities/dropped", test_identities_dropped);
  g_test_add_func ("/passes/identities/input-kept",
      test_identity_of_input_kept);
  g_test_add_func ("/passes/fold-bn/legacy", test_fold_bn_legacy);
  g_test_add_func ("/passes/fold-bn/alone-untouched",
      test_fold_bn_alone_untouched);
  g_test_add_func ("/passes/fold-bn/conv-and-fc", test_fold_bn_conv_and_fc);
  g_test_add_func ("/passes/fold-bn/exact", test_fold_bn_exact);
  g_test_add_func ("/passes/fuse/activations", test_fuse_activations);
  g_test_add_func ("/passes/fuse/not-when-shared", test_fuse_not_when_shared);
  g_test_add_func ("/passes/fuse/dead-branches", test_dead_branches);
  g_test_add_func ("/passes/fuse/residual", test_fuse_residual);
  g_test_add_func ("/passes/fuse/conv-paths", test_fuse_conv_paths);
  g_test_add_func ("/passes/early-stride/taken", test_early_stride);
  g_test_add_func ("/passes/early-stride/refused",
      test_early_stride_refused);
  g_test_add_func ("/passes/fuse/residual-refused",
      test_fuse_residual_refused);
  g_test_add_func ("/passes/fuse/fc", test_fuse_fc);
  g_test_add_func ("/passes/fuse/hard-activations",
      test_fuse_hard_activations);
  g_test_add_func ("/passes/fuse/hard-refused", test_fuse_hard_refused);
  g_test_add_func ("/passes/const-fold/weights", test_const_fold);
  g_test_add_func ("/passes/const-fold/keeps-outputs",
      test_const_fold_keeps_outputs);
  g_test_add_func ("/passes/all/legacy", test_all_legacy);
  g_test_add_func ("/passes/all/fixtures", test_all_fixtures);

  for (guint i = 0; i < G_N_ELEMENTS (zoo); i++) {
    g_autofree char *path = g_strdup_printf ("/passes/zoo/%s", zoo[i].name);
    g_test_add_data_func (path, &zoo[i], test_zoo);
  }
  g_test_add_func ("/passes/zoo/other-b1", test_zoo_others);
  return g_test_run ();
}
