/*
 * fuzz-graph.c — structure-aware differential libFuzzer target: the engine
 * past the readers.
 *
 * The fuzzer's bytes drive a small generator that writes a random graph as
 * symbol JSON (ops from kernels/ops.def with attributes inside and outside
 * their valid ranges, random shapes and wiring, residual joins, constants,
 * several heads) plus random weights and inputs.  The model is loaded the
 * way a file is (JSON parser, op resolution, parameter binding), then run
 * imperatively and hybridized.  Either may fail with a GError; neither may
 * crash, leak or trip a sanitizer, and where both run their outputs must
 * agree (abort() otherwise, so libFuzzer keeps the input).
 *
 * The generator asks the core's own op definitions (parse + infer_shape)
 * for each node's output shapes, so it can size weights and find operands
 * that fit; a node the core rejects is dropped, except in inputs whose
 * first byte asks to keep invalid nodes (then the model must fail cleanly).
 *
 * HY_FUZZ_DUMP=DIR writes the last generated case as model-symbol.json,
 * model-0000.params and inputN.npy, so that `hybridinfer run` replays it.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hybrid.h"
#include "hybrid-npy.h"
#include "core/graph.h"
#include "core/model-impl.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define MAX_OPS 10              /* op nodes per graph */
#define MAX_ELEMS 2048          /* per tensor: keeps one run in milliseconds */
#define MAX_VALUES 64
#define MAX_INS 8               /* inputs of one node (add_n, concat) */

/* ---- bytes → choices ---------------------------------------------------- */

typedef struct src {
  const uint8_t *p;
  size_t n;
} src;

/* 0..n-1 from the next byte (0 once the bytes run out: the simplest
 * choice, so shorter inputs mean simpler graphs). */
static guint
pick (src *s, guint n)
{
  if (n <= 1 || s->n == 0)
    return 0;
  guint v = s->p[0];
  s->p++;
  s->n--;
  return v % n;
}

static gboolean
chance (src *s, guint one_in)
{
  return pick (s, one_in) == 0;
}

/* Tensor contents come from a small PRNG seeded by the bytes: the values
 * matter to the kernels, not to coverage. */
static guint32
xorshift (guint32 *state)
{
  guint32 x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *state = x;
}

/* ---- the generator ------------------------------------------------------ */

typedef struct val {
  guint node, index;
  hy_shape shape;
} val;

typedef enum fill {
  FILL_RANDOM,                  /* [-2, 2] */
  FILL_POSITIVE,                /* [0.1, 2]: BatchNorm variances */
  FILL_MASK,                    /* 0 or 1: where's condition */
} fill;

typedef struct gen {
  src s;
  guint32 rng;
  int value_style;
  gboolean keep_invalid;
  gboolean failed;              /* an invalid node was kept */
  GString *json;                /* node objects written so far */
  guint n_nodes;
  GArray *params;               /* hy_param */
  val vals[MAX_VALUES];
  guint n_vals;
  guint n_ops;
  GPtrArray *input_names;       /* data inputs created, with their shapes */
  GArray *input_shapes;
  /* the node being built */
  struct {
    gboolean pending;           /* a constant made for this node */
    guint ref;                  /* value index, or pending index */
    hy_shape shape;
  } in[MAX_INS];
  guint n_in;
  hy_tensor *pend[MAX_INS];
  guint n_pend;
  GPtrArray *attrs;             /* key, value, key, value… */
} gen;

static void
fill_tensor (gen *g, hy_tensor *t, fill how)
{
  int64_t n = hy_shape_numel (&t->shape);
  for (int64_t i = 0; i < n; i++) {
    guint32 r = xorshift (&g->rng);
    float v = ((r >> 8) / 16777216.0f) * 4.0f - 2.0f;
    if (how == FILL_POSITIVE)
      v = 0.1f + fabsf (v);
    else if (how == FILL_MASK)
      v = (float) (r & 1);
    else if (g->value_style == 1)
      v = (float) ((int) (r % 7) - 3);  /* integers: ties for round, floor */
    else if (g->value_style == 2 && r % 16 == 0) {
      static const float special[] = { 0.0f, -0.0f, 1e-30f, -1e30f, 65504.0f,
        1e-8f, 100.0f, -100.0f };
      v = special[(r >> 4) % G_N_ELEMENTS (special)];
    }
    t->data[i] = v;
  }
}

static gboolean
shape_ok (const hy_shape *s)
{
  if (s->ndim < 0 || s->ndim > HY_MAX_DIMS)
    return FALSE;
  int64_t n = 1;
  for (int d = 0; d < s->ndim; d++) {
    if (s->dims[d] < 0 || s->dims[d] > MAX_ELEMS)
      return FALSE;
    n *= s->dims[d];
  }
  return n <= MAX_ELEMS;
}

/* Dims 1..4 (now and then 0 or 7), at most MAX_ELEMS elements. */
static hy_shape
rand_shape (gen *g, int min_rank, int max_rank)
{
  hy_shape s = { .ndim = min_rank + (int) pick (&g->s, max_rank - min_rank + 1) };
  for (int d = 0; d < s.ndim; d++) {
    s.dims[d] = 1 + pick (&g->s, 4);
    if (chance (&g->s, 32))
      s.dims[d] = chance (&g->s, 2) ? 0 : 7;
  }
  return shape_ok (&s) ? s : (hy_shape) { .ndim = 1, .dims = { 3 } };
}

/* A value to feed a node: the latest one half the time (chains), any
 * earlier one otherwise (random wiring, residual joins). */
static const val *
pick_val (gen *g)
{
  if (chance (&g->s, 2))
    return &g->vals[g->n_vals - 1];
  return &g->vals[pick (&g->s, g->n_vals)];
}

/* Prefers a value of rank in [lo, hi], if there is one. */
static const val *
pick_val_rank (gen *g, int lo, int hi)
{
  const val *v = pick_val (g);
  for (guint i = g->n_vals; i-- > 0 && (v->shape.ndim < lo || v->shape.ndim > hi);)
    v = &g->vals[i];
  return v;
}

/* Another value of the same shape, if any (a residual join). */
static const val *
find_same_shape (gen *g, const hy_shape *shape)
{
  guint start = pick (&g->s, g->n_vals);
  for (guint k = 0; k < g->n_vals; k++) {
    const val *v = &g->vals[(start + k) % g->n_vals];
    if (hy_shape_equal (&v->shape, shape))
      return v;
  }
  return NULL;
}

static void
in_val (gen *g, const val *v)
{
  if (g->n_in >= MAX_INS)
    return;
  g->in[g->n_in].pending = FALSE;
  g->in[g->n_in].ref = (guint) (v - g->vals);
  g->in[g->n_in].shape = v->shape;
  g->n_in++;
}

/* A new constant (a weight) of the given shape as the next input. */
static void
in_const (gen *g, hy_shape shape, fill how)
{
  if (g->n_in >= MAX_INS || g->n_pend >= MAX_INS || !shape_ok (&shape))
    return;
  hy_tensor *t = hy_tensor_new (&shape);
  fill_tensor (g, t, how);
  g->in[g->n_in].pending = TRUE;
  g->in[g->n_in].ref = g->n_pend;
  g->in[g->n_in].shape = shape;
  g->n_in++;
  g->pend[g->n_pend++] = t;
}

/* Either an existing value of that shape or a new constant. */
static void
in_operand (gen *g, hy_shape shape)
{
  const val *v = chance (&g->s, 2) ? find_same_shape (g, &shape) : NULL;
  if (v)
    in_val (g, v);
  else
    in_const (g, shape, FILL_RANDOM);
}

static void G_GNUC_PRINTF (3, 4)
attr (gen *g, const char *key, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_ptr_array_add (g->attrs, g_strdup (key));
  g_ptr_array_add (g->attrs, g_strdup_vprintf (fmt, ap));
  va_end (ap);
}

/* One of `choices` (NULL-terminated), or no attribute at all. */
static void
attr_pick (gen *g, const char *key, const char *const *choices)
{
  guint n = g_strv_length ((char **) choices);
  guint i = pick (&g->s, n + 1);
  if (i < n)
    attr (g, key, "%s", choices[i]);
}

static const char *const bools[] = { "True", "False", "1", "0", "maybe", NULL };

/* An integer in [lo, hi], now and then one outside it. */
static int
rand_int (gen *g, int lo, int hi)
{
  static const int odd[] = { -1, 0, -7, 1000, 1 << 30 };
  if (chance (&g->s, 24))
    return odd[pick (&g->s, G_N_ELEMENTS (odd))];
  return lo + (int) pick (&g->s, hi - lo + 1);
}

/* A function, not CLAMP: CLAMP evaluates its argument up to three times,
 * and every rand_int or pick call draws afresh, so CLAMP (rand_int (..))
 * can return an unclamped odd value. */
static int
clamp_int (int v, int lo, int hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

static const char *
rand_float (gen *g)
{
  static const char *const floats[] = { "0", "1", "-1", "0.5", "2", "-2.5",
    "0.001", "3.7", "1e-05", "100", "-0.25", "1e30", "nan", "inf", "x", "" };
  return floats[pick (&g->s, chance (&g->s, 8) ? G_N_ELEMENTS (floats) : 11)];
}

/* "(a, b, c)" */
static char *
tuple_str (const int64_t *v, int n)
{
  GString *s = g_string_new ("(");
  for (int i = 0; i < n; i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? ", " : "", (gint64) v[i]);
  if (n == 1)
    g_string_append_c (s, ',');
  g_string_append_c (s, ')');
  return g_string_free (s, FALSE);
}

static void
attr_tuple (gen *g, const char *key, const int64_t *v, int n)
{
  g_autofree char *t = tuple_str (v, n);
  attr (g, key, "%s", t);
}

static int
rand_axis (gen *g, int ndim)
{
  return rand_int (g, -ndim - 1, ndim);
}

static void
reset_node (gen *g)
{
  for (guint i = 0; i < g->n_pend; i++)
    hy_tensor_free (g->pend[i]);
  g->n_in = g->n_pend = 0;
  g_ptr_array_set_size (g->attrs, 0);
}

static void
add_val (gen *g, guint node, guint index, const hy_shape *shape)
{
  if (g->n_vals < MAX_VALUES)
    g->vals[g->n_vals++] = (val) { node, index, *shape };
}

static guint
add_variable (gen *g, const char *prefix)
{
  guint idx = g->n_nodes++;
  g_string_append_printf (g->json,
      "%s{\"op\": \"null\", \"name\": \"%s%u\", \"inputs\": []}",
      idx ? ",\n" : "", prefix, idx);
  return idx;
}

typedef enum verdict {
  NODE_OK,
  NODE_REJECTED,                /* by the core: the model must fail */
  NODE_TOO_BIG,                 /* by us: outputs over MAX_ELEMS */
} verdict;

/* The node being built, checked with the core's own op definition (its
 * output shapes when it passes). */
static verdict
check_node (gen *g, const char *op_name, hy_shape *out, int *n_out)
{
  const hy_op_info *op = hy_op_lookup (op_name);
  if (!op || !op->def)
    return NODE_REJECTED;
  g_autoptr (GHashTable) attrs = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i + 1 < g->attrs->len; i += 2)
    g_hash_table_insert (attrs, g->attrs->pdata[i], g->attrs->pdata[i + 1]);
  GError *error = NULL;
  void *params = hy_op_params_new (op, attrs, &error);
  gboolean ok = params != NULL;
  if (ok && hy_op_num_inputs (op, params) != (int) g->n_in)
    ok = FALSE;
  gboolean big = FALSE;
  if (ok) {
    *n_out = hy_op_num_outputs (op, params);
    big = *n_out < 1 || *n_out > MAX_INS;
  }
  if (ok && !big) {
    hy_shape in[MAX_INS];
    for (guint i = 0; i < g->n_in; i++)
      in[i] = g->in[i].shape;
    for (int k = 0; k < *n_out; k++)
      out[k] = (hy_shape) { .ndim = -1 };
    ok = op->def->infer_shape (params, in, g->n_in, out, *n_out, &error);
    for (int k = 0; ok && k < *n_out; k++)
      big = big || !shape_ok (&out[k]);
  }
  g_clear_error (&error);
  g_free (params);
  return !ok ? NODE_REJECTED : big ? NODE_TOO_BIG : NODE_OK;
}

/* Commits the node being built (its constants first), or drops it when
 * the core rejects it and invalid nodes are not kept. */
static void
emit (gen *g, const char *op_name)
{
  hy_shape out[MAX_INS];
  int n_out = 0;
  verdict v = check_node (g, op_name, out, &n_out);
  gboolean ok = v == NODE_OK;
  if (v == NODE_TOO_BIG || (!ok && !g->keep_invalid)) {
    reset_node (g);
    return;
  }
  const hy_op_info *op = hy_op_lookup (op_name);
  int n_aux = op && op->def ? op->def->n_aux : 0;
  guint first_const = g->n_nodes;
  for (guint k = 0; k < g->n_pend; k++) {
    guint idx = add_variable (g, "c");
    hy_param p = { .name = g_strdup_printf ("c%u", idx),
      .kind = HY_PARAM_ARG, .stored_dtype = 0, .tensor = g->pend[k] };
    for (guint i = 0; i < g->n_in; i++)
      if (g->in[i].pending && g->in[i].ref == k
          && (int) i >= (int) g->n_in - n_aux)
        p.kind = HY_PARAM_AUX;
    g_array_append_val (g->params, p);
    /* Constants join the pool: later ops on them exercise folding. */
    if (p.kind == HY_PARAM_ARG)
      add_val (g, idx, 0, &p.tensor->shape);
  }
  g->n_pend = 0;

  guint idx = g->n_nodes++;
  g_string_append_printf (g->json, ",\n{\"op\": \"%s\", \"name\": \"n%u\", "
      "\"attrs\": {", op_name, idx);
  for (guint i = 0; i + 1 < g->attrs->len; i += 2)
    g_string_append_printf (g->json, "%s\"%s\": \"%s\"", i ? ", " : "",
        (char *) g->attrs->pdata[i], (char *) g->attrs->pdata[i + 1]);
  g_string_append (g->json, "}, \"inputs\": [");
  for (guint i = 0; i < g->n_in; i++) {
    guint node = g->in[i].pending ? first_const + g->in[i].ref
        : g->vals[g->in[i].ref].node;
    guint index = g->in[i].pending ? 0 : g->vals[g->in[i].ref].index;
    g_string_append_printf (g->json, "%s[%u, %u, 0]", i ? ", " : "", node,
        index);
  }
  g_string_append (g->json, "]}");
  g->n_ops++;
  if (!ok) {
    g->failed = TRUE;
    add_val (g, idx, 0, &(hy_shape) { .ndim = 1, .dims = { 1 } });
  }
  for (int k = 0; ok && k < n_out; k++)
    add_val (g, idx, k, &out[k]);
  reset_node (g);
}

/* ---- one generator per op family (kernels/ops.def) ---------------------- */

/* kernel/stride/dilate/pad for n spatial axes. */
static void
window_attrs (gen *g, int n, int64_t *kernel, gboolean dilate)
{
  int64_t stride[3], pad[3], dil[3];
  for (int i = 0; i < n; i++) {
    kernel[i] = rand_int (g, 1, 3);
    stride[i] = rand_int (g, 1, 2);
    pad[i] = rand_int (g, 0, 1);
    dil[i] = rand_int (g, 1, 2);
  }
  attr_tuple (g, "kernel", kernel, n);
  if (!chance (&g->s, 3))
    attr_tuple (g, "stride", stride, n);
  if (!chance (&g->s, 3))
    attr_tuple (g, "pad", pad, n);
  if (dilate && chance (&g->s, 3))
    attr_tuple (g, "dilate", dil, n);
}

static void
gen_convolution (gen *g, const char *op)
{
  const val *x = pick_val_rank (g, 3, 5);
  int n = CLAMP (x->shape.ndim - 2, 1, 3);
  int64_t c = x->shape.ndim >= 2 ? x->shape.dims[1] : 1;
  int64_t kernel[3];
  window_attrs (g, n, kernel, TRUE);
  int64_t group = pick (&g->s, 3) == 0 && c > 0 ? c : rand_int (g, 1, 2);
  int64_t filters = group * rand_int (g, 1, 3);
  gboolean no_bias = chance (&g->s, 2);
  attr (g, "num_filter", "%" G_GINT64_FORMAT, (gint64) filters);
  if (group != 1 || chance (&g->s, 4))
    attr (g, "num_group", "%" G_GINT64_FORMAT, (gint64) group);
  attr (g, "no_bias", "%s", no_bias ? "True" : "False");
  if (chance (&g->s, 8))
    attr_pick (g, "layout", (const char *const[]) { "NCHW", "NHWC", "NCW",
        "None", "XYZ", NULL });
  in_val (g, x);
  hy_shape w = { .ndim = n + 2, .dims = { filters, group ? c / group : 1 } };
  for (int i = 0; i < n; i++)
    w.dims[2 + i] = kernel[i];
  in_const (g, w, FILL_RANDOM);
  if (!no_bias)
    in_const (g, (hy_shape) { .ndim = 1, .dims = { filters } }, FILL_RANDOM);
  emit (g, op);
}

static void
gen_fully_connected (gen *g, const char *op)
{
  const val *x = pick_val (g);
  gboolean flatten = !chance (&g->s, 3);
  int64_t hidden = rand_int (g, 1, 6);
  gboolean no_bias = chance (&g->s, 3);
  attr (g, "num_hidden", "%" G_GINT64_FORMAT, (gint64) hidden);
  attr (g, "flatten", "%s", flatten ? "True" : "False");
  if (no_bias || chance (&g->s, 2))
    attr (g, "no_bias", "%s", no_bias ? "True" : "False");
  int64_t in_units = 1;
  if (flatten)
    for (int d = 1; d < x->shape.ndim; d++)
      in_units *= x->shape.dims[d];
  else if (x->shape.ndim > 0)
    in_units = x->shape.dims[x->shape.ndim - 1];
  in_val (g, x);
  in_const (g, (hy_shape) { .ndim = 2, .dims = { hidden, in_units } },
      FILL_RANDOM);
  if (!no_bias)
    in_const (g, (hy_shape) { .ndim = 1, .dims = { hidden } }, FILL_RANDOM);
  emit (g, op);
}

static void
gen_pooling (gen *g, const char *op)
{
  const val *x = pick_val_rank (g, 3, 5);
  int n = CLAMP (x->shape.ndim - 2, 1, 3);
  int64_t kernel[3];
  gboolean global = chance (&g->s, 4);
  if (global)
    attr (g, "global_pool", "True");
  if (!global || chance (&g->s, 2))
    window_attrs (g, n, kernel, FALSE);
  attr_pick (g, "pool_type", (const char *const[]) { "max", "avg", "sum",
      "lp", "median", NULL });
  attr_pick (g, "pooling_convention", (const char *const[]) { "valid",
      "full", "same", "bogus", NULL });
  if (chance (&g->s, 3))
    attr_pick (g, "count_include_pad", bools);
  if (chance (&g->s, 3))
    attr_pick (g, "p_value", (const char *const[]) { "1", "2", "3", "4",
        "None", NULL });
  in_val (g, x);
  emit (g, op);
}

static void
gen_batch_norm (gen *g, const char *op)
{
  const val *x = pick_val_rank (g, 1, 6);
  /* _contrib_SyncBatchNorm: axis 1, a key, no axis attribute. */
  const gboolean sync = strcmp (op, "BatchNorm") != 0;
  int axis = sync || chance (&g->s, 2) ? 1 : rand_axis (g, x->shape.ndim);
  if ((!sync && (axis != 1 || chance (&g->s, 4))) || chance (&g->s, 32))
    attr (g, "axis", "%d", axis);
  if (sync && !chance (&g->s, 16))
    attr (g, "key", "%s", "bn");
  if (sync && chance (&g->s, 4))
    attr (g, "ndev", "%d", rand_int (g, 1, 4));
  int a = axis < 0 ? axis + x->shape.ndim : axis;
  int64_t c = a >= 0 && a < x->shape.ndim ? x->shape.dims[a] : 1;
  if (chance (&g->s, 2))
    attr (g, "eps", "%s", chance (&g->s, 2) ? "1e-05" : "0.001");
  if (chance (&g->s, 2))
    attr_pick (g, "fix_gamma", bools);
  if (chance (&g->s, 4))
    attr_pick (g, "use_global_stats", bools);
  if (chance (&g->s, 6))
    attr_pick (g, "output_mean_var", bools);
  hy_shape v = { .ndim = 1, .dims = { c } };
  in_val (g, x);
  in_const (g, v, FILL_RANDOM);
  in_const (g, v, FILL_RANDOM);
  in_const (g, v, FILL_RANDOM);
  in_const (g, v, chance (&g->s, 16) ? FILL_RANDOM : FILL_POSITIVE);
  emit (g, op);
}

static void
gen_activation (gen *g, const char *op)
{
  attr_pick (g, "act_type", (const char *const[]) { "relu", "sigmoid", "tanh",
      "softrelu", "softsign", "log_sigmoid", "mish", NULL });
  in_val (g, pick_val (g));
  emit (g, op);
}

static void
gen_leaky_relu (gen *g, const char *op)
{
  const val *x = pick_val (g);
  static const char *const types[] = { "leaky", "prelu", "rrelu", "elu",
    "selu", "gelu", "swish", NULL };
  guint t = pick (&g->s, G_N_ELEMENTS (types) - 1);
  attr (g, "act_type", "%s", types[t]);
  if (chance (&g->s, 2))
    attr (g, "slope", "%s", rand_float (g));
  if (chance (&g->s, 4)) {
    attr (g, "lower_bound", "%s", rand_float (g));
    attr (g, "upper_bound", "%s", rand_float (g));
  }
  in_val (g, x);
  if (t == 1) {
    hy_shape gs = { .ndim = 1, .dims = { 1 } };
    switch (pick (&g->s, 3)) {
      case 0: gs = x->shape; break;
      case 1: if (x->shape.ndim >= 2) gs.dims[0] = x->shape.dims[1]; break;
      default: break;
    }
    in_const (g, gs, FILL_RANDOM);
  }
  emit (g, op);
}

static void
gen_dot (gen *g, const char *op)
{
  gboolean batch = !strcmp (op, "batch_dot");
  const val *x = batch ? pick_val_rank (g, 3, 3) : pick_val_rank (g, 1, 3);
  gboolean ta = chance (&g->s, 3), tb = chance (&g->s, 3);
  if (ta)
    attr (g, "transpose_a", "True");
  if (tb)
    attr (g, "transpose_b", "True");
  in_val (g, x);
  const hy_shape *s = &x->shape;
  int64_t n = rand_int (g, 1, 4);
  hy_shape r = { .ndim = 2 };
  if (batch && s->ndim == 3) {
    int64_t k = ta ? s->dims[1] : s->dims[2];
    r = (hy_shape) { .ndim = 3, .dims = { s->dims[0], tb ? n : k, tb ? k : n } };
  } else if (s->ndim >= 1) {
    int64_t k = ta ? s->dims[0] : s->dims[s->ndim - 1];
    r.dims[0] = tb ? n : k;
    r.dims[1] = tb ? k : n;
    if (chance (&g->s, 4))
      r = (hy_shape) { .ndim = 1, .dims = { k } };
  }
  if (chance (&g->s, 8))
    in_val (g, pick_val (g));
  else
    in_operand (g, r);
  emit (g, op);
}

static void
gen_softmax (gen *g, const char *op)
{
  const val *x = pick_val (g);
  if (!strcmp (op, "SoftmaxActivation")) {
    attr_pick (g, "mode", (const char *const[]) { "instance", "channel",
        "pixel", NULL });
    in_val (g, x);
  } else if (!strcmp (op, "SoftmaxOutput")) {
    if (chance (&g->s, 2))
      attr_pick (g, "multi_output", bools);
    if (chance (&g->s, 2))
      attr_pick (g, "preserve_shape", bools);
    in_val (g, x);
    in_const (g, (hy_shape) { .ndim = 1, .dims = { x->shape.ndim > 0
        ? x->shape.dims[0] : 1 } }, FILL_MASK);
  } else {
    if (chance (&g->s, 2))
      attr (g, "axis", "%d", rand_axis (g, x->shape.ndim));
    if (chance (&g->s, 4))
      attr (g, "temperature", "%s", rand_float (g));
    if (chance (&g->s, 16))
      attr_pick (g, "use_length", bools);
    in_val (g, x);
  }
  emit (g, op);
}

static void
gen_unary (gen *g, const char *op)
{
  in_val (g, pick_val (g));
  emit (g, op);
}

static void
gen_scalar (gen *g, const char *op)
{
  attr (g, "scalar", "%s", rand_float (g));
  if (chance (&g->s, 4))
    attr_pick (g, "is_int", bools);
  in_val (g, pick_val (g));
  emit (g, op);
}

/* The shape with some axes set to 1 or dropped from the front: a
 * broadcasting partner. */
static hy_shape
broadcast_partner (gen *g, const hy_shape *s)
{
  hy_shape r = *s;
  for (int d = 0; d < r.ndim; d++)
    if (chance (&g->s, 2))
      r.dims[d] = 1;
  if (r.ndim > 0 && chance (&g->s, 3)) {
    int drop = 1 + (int) pick (&g->s, r.ndim);
    memmove (r.dims, r.dims + drop, (r.ndim - drop) * sizeof r.dims[0]);
    r.ndim -= drop;
  }
  return r;
}

static void
gen_binary (gen *g, const char *op)
{
  const val *x = pick_val (g);
  gboolean swap = chance (&g->s, 2);
  if (!swap)
    in_val (g, x);
  switch (pick (&g->s, 4)) {
    case 0: in_val (g, x); break;                   /* x op x */
    case 1: in_operand (g, x->shape); break;         /* residual join */
    case 2:
      if (g_str_has_prefix (op, "broadcast_")) {
        in_const (g, broadcast_partner (g, &x->shape), FILL_RANDOM);
        break;
      }
      /* fall through */
    default: in_val (g, pick_val (g)); break;       /* whatever fits */
  }
  if (swap)
    in_val (g, x);
  emit (g, op);
}

static void
gen_add_n (gen *g, const char *op)
{
  const val *x = pick_val (g);
  int n = rand_int (g, 1, 4);
  attr (g, "num_args", "%d", n);
  in_val (g, x);
  for (int i = 1; i < CLAMP (n, 1, MAX_INS); i++)
    in_operand (g, x->shape);
  emit (g, op);
}

static void
gen_clip (gen *g, const char *op)
{
  if (!chance (&g->s, 16))
    attr (g, "a_min", "%s", rand_float (g));
  if (!chance (&g->s, 16))
    attr (g, "a_max", "%s", rand_float (g));
  in_val (g, pick_val (g));
  emit (g, op);
}

static void
gen_hard_sigmoid (gen *g, const char *op)
{
  if (chance (&g->s, 2))
    attr (g, "alpha", "%s", rand_float (g));
  if (chance (&g->s, 2))
    attr (g, "beta", "%s", rand_float (g));
  in_val (g, pick_val (g));
  emit (g, op);
}

static void
gen_where (gen *g, const char *op)
{
  const val *x = pick_val (g);
  hy_shape c = x->shape;
  if (c.ndim > 1 && chance (&g->s, 3))
    c.ndim = 1;                 /* a condition per row */
  in_const (g, c, FILL_MASK);
  in_val (g, x);
  in_operand (g, x->shape);
  emit (g, op);
}

static void
gen_cast (gen *g, const char *op)
{
  attr_pick (g, "dtype", (const char *const[]) { "float32", "float16",
      "float64", "int32", "uint8", "int8", "int64", "bool", "bfloat16",
      "complex", NULL });
  in_val (g, pick_val (g));
  emit (g, op);
}

static void
gen_fill_like (gen *g, const char *op)
{
  in_val (g, pick_val (g));
  emit (g, op);
}

static void
gen_reduce (gen *g, const char *op)
{
  const val *x = pick_val (g);
  int nd = x->shape.ndim;
  switch (pick (&g->s, 4)) {
    case 0: break;
    case 1: attr (g, "axis", "%d", rand_axis (g, nd)); break;
    case 2: {
      int64_t axes[2] = { rand_axis (g, nd), rand_axis (g, nd) };
      attr_tuple (g, "axis", axes, 2);
      break;
    }
    default: attr (g, "axis", "()"); break;
  }
  if (chance (&g->s, 2))
    attr_pick (g, "keepdims", bools);
  if (chance (&g->s, 4))
    attr_pick (g, "exclude", bools);
  in_val (g, x);
  emit (g, op);
}

static void
gen_arg_reduce (gen *g, const char *op)
{
  const val *x = pick_val (g);
  if (!chance (&g->s, 4))
    attr (g, "axis", "%d", rand_axis (g, x->shape.ndim));
  if (chance (&g->s, 2))
    attr_pick (g, "keepdims", bools);
  in_val (g, x);
  emit (g, op);
}

static void
gen_identity (gen *g, const char *op)
{
  if (!strcmp (op, "Dropout")) {
    if (chance (&g->s, 2))
      attr (g, "p", "%s", rand_float (g));
    if (chance (&g->s, 3))
      attr_pick (g, "mode", (const char *const[]) { "training", "always",
          "never", NULL });
  }
  in_val (g, pick_val (g));
  emit (g, op);
}

static void
gen_flatten (gen *g, const char *op)
{
  in_val (g, pick_val (g));
  emit (g, op);
}

/* lhs_begin … rhs_end in and around the ranks, or None; rhs any value
 * (a reshape of x's own shape now and then, so the counts match). */
static void
gen_reshape_like (gen *g, const char *op)
{
  const val *x = pick_val (g);
  const val *y = chance (&g->s, 2) ? x : pick_val (g);
  static const char *const keys[] = { "lhs_begin", "lhs_end", "rhs_begin",
    "rhs_end" };
  for (int k = 0; k < 4; k++)
    if (chance (&g->s, 2))
      attr (g, keys[k], "%d", rand_int (g, -2, 3));
    else if (chance (&g->s, 8))
      attr (g, keys[k], "%s", "None");
  in_val (g, x);
  in_val (g, y);
  emit (g, op);
}

static void
gen_reshape (gen *g, const char *op)
{
  if (!strcmp (op, "reshape_like")) {
    gen_reshape_like (g, op);
    return;
  }
  const val *x = pick_val (g);
  const hy_shape *s = &x->shape;
  int64_t t[HY_MAX_DIMS];
  int n = 0;
  switch (pick (&g->s, 5)) {
    case 0:                     /* everything flat */
      t[n++] = hy_shape_numel (s);
      break;
    case 1:                     /* keep the first axis, infer the rest */
      t[n++] = 0;
      t[n++] = -1;
      break;
    case 2:                     /* the special codes, at random */
      for (int i = 0; i < 1 + (int) pick (&g->s, 4); i++) {
        static const int64_t codes[] = { 0, -1, -2, -3, -4, 1, 2, 3 };
        t[n++] = codes[pick (&g->s, G_N_ELEMENTS (codes))];
      }
      break;
    case 3:                     /* merge two neighbours, keep the rest */
      for (int d = 0; d < s->ndim; d++)
        t[n++] = d + 1 < s->ndim && d == 0 ? -3 : 0;
      if (s->ndim >= 2)
        n--;
      break;
    default:                    /* split off a factor */
      t[n++] = -4;
      t[n++] = 1;
      t[n++] = -1;
      t[n++] = -2;
      break;
  }
  if (n == 0)
    t[n++] = 1;
  attr_tuple (g, chance (&g->s, 16) ? "target_shape" : "shape", t, n);
  if (chance (&g->s, 4))
    attr_pick (g, "reverse", bools);
  in_val (g, x);
  emit (g, op);
}

static void
gen_expand_dims (gen *g, const char *op)
{
  const val *x = pick_val_rank (g, 0, 5);
  attr (g, "axis", "%d", rand_int (g, -x->shape.ndim - 1, x->shape.ndim));
  in_val (g, x);
  emit (g, op);
}

static void
gen_squeeze (gen *g, const char *op)
{
  const val *x = pick_val (g);
  if (chance (&g->s, 2)) {
    int d = rand_axis (g, x->shape.ndim);
    for (int i = 0; i < x->shape.ndim; i++)
      if (x->shape.dims[i] == 1 && chance (&g->s, 2))
        d = i;
    attr (g, "axis", "%d", d);
  }
  in_val (g, x);
  emit (g, op);
}

static void
gen_transpose (gen *g, const char *op)
{
  const val *x = pick_val (g);
  int nd = x->shape.ndim;
  if (!strcmp (op, "SwapAxis")) {
    /* dim1, dim2: mostly in range, sometimes negative or past the rank. */
    for (int i = 0; i < 2; i++)
      if (!chance (&g->s, 8))
        attr (g, i ? "dim2" : "dim1", "%d", nd > 0 && !chance (&g->s, 16)
            ? pick (&g->s, 2 * nd) - nd : pick (&g->s, 13) - 6);
    in_val (g, x);
    emit (g, op);
    return;
  }
  if (nd > 0 && !chance (&g->s, 4)) {
    int64_t axes[HY_MAX_DIMS];
    for (int i = 0; i < nd; i++)
      axes[i] = i;
    for (int i = nd - 1; i > 0; i--) {  /* Fisher-Yates */
      int j = pick (&g->s, i + 1);
      int64_t t = axes[i];
      axes[i] = axes[j];
      axes[j] = t;
    }
    if (chance (&g->s, 16))
      axes[0] = rand_axis (g, nd);
    attr_tuple (g, "axes", axes, chance (&g->s, 16) ? nd - 1 : nd);
  }
  in_val (g, x);
  emit (g, op);
}

/* "(1, None, -2)": begin/end/step entries for slice. */
static void
attr_slice_tuple (gen *g, const char *key, int n, int lo, int hi)
{
  GString *s = g_string_new ("(");
  for (int i = 0; i < n; i++) {
    if (i)
      g_string_append (s, ", ");
    if (chance (&g->s, 4))
      g_string_append (s, "None");
    else
      g_string_append_printf (s, "%d", rand_int (g, lo, hi));
  }
  g_string_append (s, n == 1 ? ",)" : ")");
  attr (g, key, "%s", s->str);
  g_string_free (s, TRUE);
}

static void
gen_slice (gen *g, const char *op)
{
  const val *x = pick_val (g);
  int n = clamp_int (x->shape.ndim - (int) pick (&g->s, 2), 1, HY_MAX_DIMS);
  attr_slice_tuple (g, "begin", n, -3, 2);
  attr_slice_tuple (g, "end", n, -2, 4);
  if (chance (&g->s, 2))
    attr_slice_tuple (g, "step", n, -2, 2);
  in_val (g, x);
  emit (g, op);
}

static void
gen_slice_axis (gen *g, const char *op)
{
  const val *x = pick_val (g);
  attr (g, "axis", "%d", rand_axis (g, x->shape.ndim));
  attr (g, "begin", "%d", rand_int (g, -3, 2));
  if (chance (&g->s, 4))
    attr (g, "end", "None");
  else
    attr (g, "end", "%d", rand_int (g, -2, 4));
  in_val (g, x);
  emit (g, op);
}

static void
gen_concat (gen *g, const char *op)
{
  const val *x = pick_val (g);
  int nd = x->shape.ndim;
  int dim = chance (&g->s, 2) ? 1 : rand_axis (g, nd);
  int n = rand_int (g, 1, 3);
  attr (g, "dim", "%d", dim);
  attr (g, "num_args", "%d", n);
  in_val (g, x);
  int d = dim < 0 ? dim + nd : dim;
  for (int i = 1; i < CLAMP (n, 1, MAX_INS); i++) {
    hy_shape s = x->shape;
    if (d >= 0 && d < nd && chance (&g->s, 2))
      s.dims[d] = 1 + pick (&g->s, 3);
    in_operand (g, s);
  }
  emit (g, op);
}

static void
gen_split (gen *g, const char *op)
{
  const val *x = pick_val (g);
  int axis = chance (&g->s, 2) ? 1 : rand_axis (g, x->shape.ndim);
  int a = axis < 0 ? axis + x->shape.ndim : axis;
  int n = a >= 0 && a < x->shape.ndim && chance (&g->s, 2)
      ? (int) x->shape.dims[a] : rand_int (g, 1, 3);
  attr (g, "num_outputs", "%d", n);
  attr (g, "axis", "%d", axis);
  if (chance (&g->s, 3))
    attr_pick (g, "squeeze_axis", bools);
  in_val (g, x);
  emit (g, op);
}

static void
gen_tile (gen *g, const char *op)
{
  const val *x = pick_val (g);
  int64_t reps[HY_MAX_DIMS];
  int n = rand_int (g, 0, CLAMP (x->shape.ndim + 1, 1, HY_MAX_DIMS));
  n = CLAMP (n, 0, HY_MAX_DIMS);
  for (int i = 0; i < n; i++)
    reps[i] = rand_int (g, 1, 3);
  attr_tuple (g, "reps", reps, n);
  in_val (g, x);
  emit (g, op);
}

static void
gen_repeat (gen *g, const char *op)
{
  const val *x = pick_val (g);
  attr (g, "repeats", "%d", rand_int (g, 0, 3));
  if (chance (&g->s, 2))
    attr (g, "axis", "%d", rand_axis (g, x->shape.ndim));
  in_val (g, x);
  emit (g, op);
}

/* _contrib_arange_like: start, step (0 too), repeat (0 too), an axis in
 * and out of range, on data of any dtype. */
static void
gen_arange_like (gen *g, const char *op)
{
  const val *x = pick_val (g);
  if (chance (&g->s, 2))
    attr (g, "start", "%s", rand_float (g));
  if (chance (&g->s, 2))
    attr (g, "step", "%s", chance (&g->s, 8) ? "0" : rand_float (g));
  if (chance (&g->s, 3))
    attr (g, "repeat", "%d", rand_int (g, 0, 3));
  if (chance (&g->s, 2))
    attr (g, "axis", "%d", rand_axis (g, x->shape.ndim));
  in_val (g, x);
  emit (g, op);
}

static void
gen_arange (gen *g, const char *op)
{
  if (strcmp (op, "_arange") != 0) {
    gen_arange_like (g, op);
    return;
  }
  attr (g, "start", "%s", rand_float (g));
  if (!chance (&g->s, 4))
    attr (g, "stop", "%d", rand_int (g, -4, 12));
  if (chance (&g->s, 2))
    attr (g, "step", "%s", rand_float (g));
  if (chance (&g->s, 3))
    attr (g, "repeat", "%d", rand_int (g, 1, 3));
  if (chance (&g->s, 8))
    attr_pick (g, "infer_range", bools);
  if (chance (&g->s, 4))
    attr_pick (g, "dtype", (const char *const[]) { "float32", "int32",
        "int64", "float16", NULL });
  emit (g, op);
}

/* Listed in ops.def but not implemented yet: the loader must say so.
 * (`#define gen_<family> gen_unimplemented` for an HY_OP_KNOWN family.) */
static void G_GNUC_UNUSED
gen_unimplemented (gen *g, const char *op)
{
  in_val (g, pick_val (g));
  emit (g, op);
}

static const char *const resize_modes[] = { "size", "odd_scale", "like",
  "to_even_down", "to_even_up", "to_odd_down", "to_odd_up", "scale",
  NULL };

static void
gen_bilinear_resize (gen *g, const char *op)
{
  const val *x = pick_val_rank (g, 4, 4);
  const char *mode = NULL;
  guint m = pick (&g->s, G_N_ELEMENTS (resize_modes));
  if (m < G_N_ELEMENTS (resize_modes) - 1) {
    mode = resize_modes[m];
    attr (g, "mode", "%s", mode);
  }
  if (chance (&g->s, 2))
    attr (g, "height", "%d", rand_int (g, 1, 9));
  if (chance (&g->s, 2))
    attr (g, "width", "%d", rand_int (g, 1, 9));
  if (chance (&g->s, 3))
    attr (g, "scale_height", "%s", rand_float (g));
  if (chance (&g->s, 3))
    attr (g, "scale_width", "%s", rand_float (g));
  if (chance (&g->s, 3))
    attr_pick (g, "align_corners", bools);
  in_val (g, x);
  if (mode && !strcmp (mode, "like")) {
    hy_shape like = { .ndim = 4, .dims = { 1, 1, 1 + pick (&g->s, 6),
        1 + pick (&g->s, 6) } };
    if (chance (&g->s, 8))
      like.ndim = 3;
    in_operand (g, like);
  }
  emit (g, op);
}

static void
gen_adaptive_avg_pool (gen *g, const char *op)
{
  const val *x = pick_val_rank (g, 4, 4);
  if (chance (&g->s, 3)) {
    int64_t size[3];
    int n = (int) pick (&g->s, 4);
    for (int i = 0; i < n; i++)
      size[i] = rand_int (g, 1, 5);
    attr_tuple (g, "output_size", size, n);
  } else if (chance (&g->s, 2))
    attr (g, "output_size", "%d", rand_int (g, 1, 5));
  in_val (g, x);
  emit (g, op);
}

static void
gen_deconvolution (gen *g, const char *op)
{
  const val *x = pick_val_rank (g, 3, 4);
  int n = CLAMP (x->shape.ndim - 2, 1, 3);
  int64_t c = x->shape.ndim >= 2 ? x->shape.dims[1] : 1;
  int64_t kernel[3];
  window_attrs (g, n, kernel, TRUE);
  if (chance (&g->s, 3)) {
    int64_t adj[3];
    for (int i = 0; i < n; i++)
      adj[i] = rand_int (g, 0, 1);
    attr_tuple (g, "adj", adj, n);
  }
  if (chance (&g->s, 4)) {
    int64_t target[3];
    for (int i = 0; i < n; i++)
      target[i] = rand_int (g, 0, 9);
    attr_tuple (g, "target_shape", target, n);
  }
  int64_t group = pick (&g->s, 3) == 0 && c > 0 ? c : rand_int (g, 1, 2);
  int64_t filters = group * rand_int (g, 1, 3);
  gboolean no_bias = !chance (&g->s, 3);
  attr (g, "num_filter", "%" G_GINT64_FORMAT, (gint64) filters);
  if (group != 1 || chance (&g->s, 4))
    attr (g, "num_group", "%" G_GINT64_FORMAT, (gint64) group);
  if (!no_bias || chance (&g->s, 2))
    attr (g, "no_bias", "%s", no_bias ? "True" : "False");
  if (chance (&g->s, 8))
    attr_pick (g, "layout", (const char *const[]) { "NCHW", "NHWC", "NCW",
        "None", NULL });
  in_val (g, x);
  hy_shape w = { .ndim = n + 2, .dims = { c, group ? filters / group : 1 } };
  for (int i = 0; i < n; i++)
    w.dims[2 + i] = kernel[i];
  in_const (g, w, FILL_RANDOM);
  if (!no_bias)
    in_const (g, (hy_shape) { .ndim = 1, .dims = { filters } }, FILL_RANDOM);
  emit (g, op);
}

/* Nearest: inputs at the scaled size over 1, 2 or the scale itself
 * (and now and then not); bilinear: data and a (C, 1, k, k) weight. */
static void
gen_upsampling (gen *g, const char *op)
{
  const val *x = pick_val_rank (g, 4, 4);
  const int scale = rand_int (g, 1, 3);
  /* The inputs' sizes follow the scale when it is in range: an attribute
   * out of it is refused before they matter. */
  const int64_t sc = CLAMP (scale, 1, 3);
  const gboolean bilinear = chance (&g->s, 2);
  const int64_t c = x->shape.ndim >= 2 ? x->shape.dims[1] : 1;
  if (!chance (&g->s, 16))
    attr (g, "scale", "%d", scale);
  if (!chance (&g->s, 16))
    attr (g, "sample_type", "%s", bilinear ? "bilinear" : "nearest");
  in_val (g, x);
  if (bilinear) {
    const int64_t k = 2 * sc - sc % 2;
    attr (g, "num_filter", "%" G_GINT64_FORMAT,
        chance (&g->s, 8) ? (gint64) c + 1 : (gint64) c);
    in_const (g, (hy_shape) { .ndim = 4, .dims = { c, 1, k, k } },
        FILL_RANDOM);
    emit (g, op);
    return;
  }
  const int n = rand_int (g, 1, 3);
  attr (g, "num_args", "%d", n);
  if (chance (&g->s, 2))
    attr_pick (g, "multi_input_mode", (const char *const[]) { "concat",
        "sum", NULL });
  for (int i = 1; i < CLAMP (n, 1, MAX_INS); i++) {
    hy_shape s = x->shape;
    if (s.ndim == 4) {
      const int64_t f = (int64_t[]) { 1, sc, sc * 2 }[pick (&g->s, 3)];
      s.dims[2] = s.dims[2] * sc / f + (chance (&g->s, 16) ? 1 : 0);
      s.dims[3] = s.dims[3] * sc / f;
    }
    in_operand (g, s);
  }
  emit (g, op);
}

/* pad_width of 8 or 10 entries, pads of -1 to 4 (reflect refuses the
 * long ones), the batch or channel axis now and then. */
static void
gen_pad (gen *g, const char *op)
{
  const val *x = pick_val_rank (g, 4, 5);
  /* rand_int strays outside its range now and then: widths[] bounds n. */
  const int n = chance (&g->s, 8) ? 2 * clamp_int (rand_int (g, 3, 5), 0, 5)
      : 2 * CLAMP (x->shape.ndim, 4, 5);
  int64_t widths[10] = { 0 };
  for (int i = 4; i < n; i++)
    widths[i] = rand_int (g, -1, 4);
  if (chance (&g->s, 16))
    widths[pick (&g->s, 4)] = 1;
  if (!chance (&g->s, 16))
    attr_pick (g, "mode", (const char *const[]) { "constant", "edge",
        "reflect", NULL });
  if (!chance (&g->s, 16))
    attr_tuple (g, "pad_width", widths, n);
  if (chance (&g->s, 2))
    attr (g, "constant_value", "%s", rand_float (g));
  in_val (g, x);
  emit (g, op);
}

/* Offsets and masks as constants in [-2, 2], so taps land between
 * pixels, outside the image and on its border; shapes from the window
 * the attributes give, off now and then. */
static void
gen_modulated_deform_conv (gen *g, const char *op)
{
  const val *x = pick_val_rank (g, 4, 4);
  const int64_t n = x->shape.ndim == 4 ? x->shape.dims[0] : 1;
  const int64_t c = x->shape.ndim == 4 ? x->shape.dims[1] : 1;
  int64_t kernel[2], stride[2], pad[2], dil[2], out[2];
  for (int i = 0; i < 2; i++) {
    kernel[i] = rand_int (g, 1, 3);
    stride[i] = rand_int (g, 1, 2);
    pad[i] = rand_int (g, 0, 1);
    dil[i] = rand_int (g, 1, 2);
    const int64_t size = x->shape.ndim == 4 ? x->shape.dims[2 + i] : 1;
    const int64_t extent = dil[i] * (kernel[i] - 1) + 1;
    out[i] = MAX ((size + 2 * pad[i] - extent) / MAX (stride[i], 1) + 1, 1);
  }
  attr_tuple (g, "kernel", kernel, chance (&g->s, 16) ? 1 : 2);
  attr_tuple (g, "stride", stride, 2);
  attr_tuple (g, "pad", pad, 2);
  attr_tuple (g, "dilate", dil, 2);
  const int64_t group = chance (&g->s, 3) && c > 0 ? c : 1;
  const int64_t dgroup = chance (&g->s, 3) && c > 0 ? c : 1;
  const int64_t filters = group * rand_int (g, 1, 3);
  const gboolean no_bias = chance (&g->s, 2);
  attr (g, "num_filter", "%" G_GINT64_FORMAT, (gint64) filters);
  attr (g, "num_group", "%" G_GINT64_FORMAT, (gint64) group);
  attr (g, "num_deformable_group", "%" G_GINT64_FORMAT, (gint64) dgroup);
  attr (g, "no_bias", "%s", no_bias ? "True" : "False");
  if (chance (&g->s, 8))
    attr_pick (g, "layout", (const char *const[]) { "NCHW", "NHWC",
        "None", NULL });
  const int64_t taps = kernel[0] * kernel[1];
  in_val (g, x);
  in_const (g, (hy_shape) { .ndim = 4, .dims = { n, 2 * dgroup * taps,
      out[0], out[1] } }, FILL_RANDOM);
  in_const (g, (hy_shape) { .ndim = 4, .dims = { n, dgroup * taps, out[0],
      out[1] } }, FILL_RANDOM);
  in_const (g, (hy_shape) { .ndim = 4, .dims = { filters, group ? c / group
      : 1, kernel[0], kernel[1] } }, FILL_RANDOM);
  if (!no_bias)
    in_const (g, (hy_shape) { .ndim = 1, .dims = { filters } }, FILL_RANDOM);
  emit (g, op);
}

/* ROIs as (batch index, x1, y1, x2, y2) rows, any values now and then. */
static void
gen_roi_align (gen *g, const char *op)
{
  const val *x = pick_val_rank (g, 4, 4);
  int64_t pooled[2] = { rand_int (g, 1, 3), rand_int (g, 1, 3) };
  if (!chance (&g->s, 16))
    attr_tuple (g, "pooled_size", pooled, chance (&g->s, 16) ? 1 : 2);
  if (!chance (&g->s, 16))
    attr (g, "spatial_scale", "%s", chance (&g->s, 2) ? "0.5" : rand_float (g));
  if (chance (&g->s, 2))
    attr (g, "sample_ratio", "%d", rand_int (g, -1, 3));
  if (chance (&g->s, 4))
    attr_pick (g, "position_sensitive", bools);
  if (chance (&g->s, 4))
    attr_pick (g, "aligned", bools);
  in_val (g, x);
  hy_shape r = { .ndim = 2, .dims = { 1 + pick (&g->s, 4), 5 } };
  if (chance (&g->s, 8))
    r.dims[1] = 4;
  in_const (g, r, chance (&g->s, 2) ? FILL_POSITIVE : FILL_RANDOM);
  emit (g, op);
}

static void
gen_shape_array (gen *g, const char *op)
{
  in_val (g, pick_val (g));
  emit (g, op);
}

static void
gen_reverse (gen *g, const char *op)
{
  const val *x = pick_val (g);
  int64_t axes[3];
  int n = (int) pick (&g->s, 4);
  for (int i = 0; i < n; i++)
    axes[i] = rand_axis (g, x->shape.ndim);
  if (!chance (&g->s, 16))
    attr_tuple (g, "axis", axes, n);
  in_val (g, x);
  emit (g, op);
}

static void
gen_stack (gen *g, const char *op)
{
  const val *x = pick_val (g);
  int n = rand_int (g, 1, 3);
  attr (g, "num_args", "%d", n);
  if (chance (&g->s, 2))
    attr (g, "axis", "%d", rand_axis (g, x->shape.ndim + 1));
  in_val (g, x);
  for (int i = 1; i < CLAMP (n, 1, MAX_INS); i++) {
    hy_shape s = x->shape;
    if (s.ndim > 0 && chance (&g->s, 8))
      s.dims[0] += 1;
    in_operand (g, s);
  }
  emit (g, op);
}

/* Whole (lhs with axes of length 1 where rhs has others), or by axes
 * pairs, in and out of range, lengths that differ now and then. */
static void
gen_broadcast_like (gen *g, const char *op)
{
  const val *y = pick_val (g);
  hy_shape lhs = y->shape;
  for (int i = 0; i < lhs.ndim; i++)
    if (chance (&g->s, 2))
      lhs.dims[i] = 1;
  if (chance (&g->s, 3)) {
    int64_t la[3], ra[3];
    const int n = clamp_int (rand_int (g, 1, 3), 1, 3);
    for (int i = 0; i < n; i++) {
      la[i] = rand_axis (g, lhs.ndim);
      ra[i] = rand_axis (g, y->shape.ndim);
    }
    attr_tuple (g, "lhs_axes", la, n);
    attr_tuple (g, "rhs_axes", ra, chance (&g->s, 8) ? n - 1 : n);
  }
  in_operand (g, lhs);
  in_val (g, y);
  emit (g, op);
}

static void
gen_broadcast_axis (gen *g, const char *op)
{
  if (!strcmp (op, "broadcast_like")) {
    gen_broadcast_like (g, op);
    return;
  }
  const val *x = pick_val (g);
  int64_t axes[3], size[3];
  int n = (int) pick (&g->s, 4);
  for (int i = 0; i < n; i++) {
    axes[i] = rand_axis (g, x->shape.ndim);
    size[i] = rand_int (g, 0, 4);
  }
  attr_tuple (g, "axis", axes, n);
  attr_tuple (g, "size", size, chance (&g->s, 8) ? n / 2 : n);
  in_val (g, x);
  emit (g, op);
}

/* topk, sort, argsort: axis in and out of range or None, k past the axis
 * or <= 0, every ret_typ (both has two outputs), index dtypes that hold
 * the axis and ones that do not. */
static void
gen_ordering (gen *g, const char *op)
{
  const val *x = pick_val (g);
  if (chance (&g->s, 6))
    attr (g, "axis", "None");
  else if (chance (&g->s, 2))
    attr (g, "axis", "%d", rand_axis (g, x->shape.ndim));
  if (g_str_equal (op, "topk")) {
    if (chance (&g->s, 2))
      attr (g, "k", "%d", rand_int (g, 0, 6));
    attr_pick (g, "ret_typ", (const char *const[]) { "value", "indices",
        "mask", "both", "all", NULL });
  }
  attr_pick (g, "is_ascend", bools);
  if (!g_str_equal (op, "sort"))
    attr_pick (g, "dtype", (const char *const[]) { "float32", "float64",
        "int32", "int64", "float16", "uint8", "bool", NULL });
  in_val (g, x);
  emit (g, op);
}

/* gather_nd: indices (M, Y...) with M from 1 to past data's rank (refused),
 * as random floats: in range, negative, fractional and out of range. */
static void
gen_gather_nd (gen *g, const char *op)
{
  const val *x = pick_val (g);
  hy_shape idx = {.ndim = 1 + (int) pick (&g->s, 3) };
  idx.dims[0] = pick (&g->s, (guint) CLAMP (x->shape.ndim, 0, HY_MAX_DIMS) + 2);
  for (int d = 1; d < idx.ndim; d++)
    idx.dims[d] = 1 + pick (&g->s, 3);
  in_val (g, x);
  in_operand (g, idx);
  emit (g, op);
}

static void
gen_slice_like (gen *g, const char *op)
{
  const val *x = pick_val (g);
  hy_shape like = x->shape;
  for (int d = 0; d < like.ndim; d++)
    if (like.dims[d] > 0 && chance (&g->s, 2))
      like.dims[d] = pick (&g->s, (guint) like.dims[d] + 2);
  if (chance (&g->s, 2)) {
    int64_t axes[HY_MAX_DIMS];
    int n = rand_int (g, 1, CLAMP (x->shape.ndim, 1, HY_MAX_DIMS));
    for (int i = 0; i < CLAMP (n, 0, HY_MAX_DIMS); i++)
      axes[i] = rand_axis (g, x->shape.ndim);
    attr_tuple (g, "axes", axes, CLAMP (n, 0, HY_MAX_DIMS));
  }
  in_val (g, x);
  in_operand (g, like);
  emit (g, op);
}

static void
gen_l2_normalization (gen *g, const char *op)
{
  attr_pick (g, "mode", (const char *const[]) { "instance", "channel",
      "spatial", "batch", NULL });
  if (chance (&g->s, 2))
    attr (g, "eps", "%s", rand_float (g));
  in_val (g, pick_val (g));
  emit (g, op);
}

static const char *const box_formats[] = { "corner", "center", "xywh",
  NULL };

/* Rows of (id, score, 4 coordinates) now and then, so that boxes overlap
 * and classes repeat; any value otherwise. */
static void
gen_box_nms (gen *g, const char *op)
{
  const val *x = pick_val_rank (g, 2, 4);
  if (chance (&g->s, 2)) {
    hy_shape s = { .ndim = 2 + (int) pick (&g->s, 2) };
    for (int d = 0; d < s.ndim - 1; d++)
      s.dims[d] = 1 + pick (&g->s, 6);
    s.dims[s.ndim - 1] = 6 + pick (&g->s, 2);
    in_const (g, s, chance (&g->s, 2) ? FILL_POSITIVE : FILL_RANDOM);
  } else {
    in_val (g, x);
  }
  if (chance (&g->s, 2))
    attr (g, "overlap_thresh", "%s", rand_float (g));
  if (chance (&g->s, 2))
    attr (g, "valid_thresh", "%s", rand_float (g));
  if (chance (&g->s, 2))
    attr (g, "topk", "%d", rand_int (g, -1, 5));
  if (chance (&g->s, 3))
    attr (g, "coord_start", "%d", rand_int (g, 0, 3));
  if (chance (&g->s, 3))
    attr (g, "score_index", "%d", rand_int (g, 0, 2));
  if (chance (&g->s, 2))
    attr (g, "id_index", "%d", rand_int (g, -1, 1));
  if (chance (&g->s, 3))
    attr (g, "background_id", "%d", rand_int (g, -1, 2));
  if (chance (&g->s, 3))
    attr_pick (g, "force_suppress", bools);
  if (chance (&g->s, 3))
    attr_pick (g, "in_format", box_formats);
  if (chance (&g->s, 3))
    attr_pick (g, "out_format", box_formats);
  emit (g, op);
}

static void
gen_box_decode (gen *g, const char *op)
{
  const val *x = pick_val_rank (g, 3, 3);
  hy_shape d = x->shape;
  if (d.ndim == 3 && d.dims[2] == 4 && chance (&g->s, 2))
    in_val (g, x);
  else {
    d = (hy_shape) { .ndim = 3, .dims = { 1 + pick (&g->s, 2),
        1 + pick (&g->s, 5), 4 } };
    in_const (g, d, FILL_RANDOM);
  }
  hy_shape a = { .ndim = 3, .dims = { 1, d.dims[1], 4 } };
  if (chance (&g->s, 8))
    a.dims[1] += 1;
  in_const (g, a, FILL_POSITIVE);
  static const char *const keys[] = { "std0", "std1", "std2", "std3",
    "clip" };
  for (guint k = 0; k < G_N_ELEMENTS (keys); k++)
    if (chance (&g->s, 3))
      attr (g, keys[k], "%s", rand_float (g));
  if (chance (&g->s, 2))
    attr_pick (g, "format", box_formats);
  emit (g, op);
}

/* A tuple of 1 to 3 numbers most of the time (now and then none, or 5),
 * each one rand_float's: malformed entries included. */
static void
attr_float_tuple (gen *g, const char *key, int usual)
{
  int n = chance (&g->s, 6) ? (int) pick (&g->s, 6) : usual;
  GString *t = g_string_new (chance (&g->s, 4) ? "[" : "(");
  for (int i = 0; i < n; i++)
    g_string_append_printf (t, "%s%s", i ? ", " : "", rand_float (g));
  g_string_append_c (t, t->str[0] == '[' ? ']' : ')');
  attr (g, key, "%s", t->str);
  g_string_free (t, TRUE);
}

/* Anchors of a map of rank 4 (now and then another rank), with lists of
 * sizes and ratios of any length, steps and offsets in and out of range. */
static void
gen_multibox_prior (gen *g, const char *op)
{
  in_val (g, pick_val_rank (g, 4, 5));
  if (chance (&g->s, 2))
    attr_float_tuple (g, "sizes", 1 + (int) pick (&g->s, 3));
  if (chance (&g->s, 2))
    attr_float_tuple (g, "ratios", 1 + (int) pick (&g->s, 3));
  if (chance (&g->s, 3))
    attr_pick (g, "clip", bools);
  if (chance (&g->s, 3))
    attr_float_tuple (g, "steps", 2);
  if (chance (&g->s, 3))
    attr_float_tuple (g, "offsets", 2);
  emit (g, op);
}

/* cls_prob (N, C, A), loc_pred (N, A*4) and anchors (1, A, 4) that fit,
 * now and then with one dim off; the anchors are a MultiBoxPrior's output
 * when one of that size is around. */
static void
gen_multibox_detection (gen *g, const char *op)
{
  const val *a = pick_val_rank (g, 3, 3);
  gboolean prior = a->shape.ndim == 3 && a->shape.dims[0] == 1
      && a->shape.dims[2] == 4 && a->shape.dims[1] > 0
      && a->shape.dims[1] <= 64;
  int64_t n = 1 + pick (&g->s, 2), c = pick (&g->s, 4) + (chance (&g->s, 8)
      ? 0 : 1), na = prior ? a->shape.dims[1] : 1 + pick (&g->s, 12);
  hy_shape cls = { .ndim = 3, .dims = { n, c, na } };
  hy_shape loc = { .ndim = 2, .dims = { n, na * 4 } };
  hy_shape anc = { .ndim = 3, .dims = { 1, na, 4 } };
  if (chance (&g->s, 8))
    loc.dims[pick (&g->s, 2)] += chance (&g->s, 2) ? 1 : -1;
  if (chance (&g->s, 8))
    cls.dims[2] += 1;
  in_const (g, cls, chance (&g->s, 2) ? FILL_POSITIVE : FILL_RANDOM);
  in_operand (g, loc);
  if (prior && chance (&g->s, 4) != 0)
    in_val (g, a);
  else
    in_const (g, anc, FILL_POSITIVE);
  if (chance (&g->s, 3))
    attr_pick (g, "clip", bools);
  if (chance (&g->s, 2))
    attr (g, "threshold", "%s", rand_float (g));
  if (chance (&g->s, 3))
    attr (g, "background_id", "%d", rand_int (g, -1, 2));
  if (chance (&g->s, 2))
    attr (g, "nms_threshold", "%s", rand_float (g));
  if (chance (&g->s, 3))
    attr_pick (g, "force_suppress", bools);
  if (chance (&g->s, 3))
    attr_float_tuple (g, "variances", 4);
  if (chance (&g->s, 2))
    attr (g, "nms_topk", "%d", rand_int (g, -1, 5));
  emit (g, op);
}

/* ---- int8 ops (MXNet's oneDNN exports) ------------------------------------
 * The loader checks their ranges, dtypes and fused attributes; most random
 * nodes are refused, which is the path these exercise.  The ones that
 * pass run in both modes like any other op. */

static const char *const out_types[] = { "auto", "int8", "uint8", "int32",
  "float32", "bogus", NULL
};

/* A quantized value's range, as MXNet passes it: min and max inputs of
 * one element each. */
static void
in_range (gen *g)
{
  hy_shape one = { .ndim = 1, .dims = { 1 } };
  in_const (g, one, FILL_RANDOM);
  in_const (g, one, FILL_POSITIVE);
}

static void
calib_attrs (gen *g)
{
  if (!chance (&g->s, 3)) {
    attr (g, "min_calib_range", "%s", rand_float (g));
    attr (g, "max_calib_range", "%s", rand_float (g));
  }
}

/* A value and its range, the attributes every int8 op may carry. */
static void
gen_quantized_unary (gen *g, const char *op)
{
  in_val (g, pick_val (g));
  in_range (g);
  attr_pick (g, "out_type", out_types);
  calib_attrs (g);
  emit (g, op);
}

static void
gen_quantize_v2 (gen *g, const char *op)
{
  in_val (g, pick_val (g));
  attr_pick (g, "out_type", out_types);
  calib_attrs (g);
  emit (g, op);
}

/* ONNX's QuantizeLinear -> DequantizeLinear: one scale and zero point,
 * or one per index of an axis (now and then a wrong count or axis). */
static void
gen_quantize_dequantize (gen *g, const char *op)
{
  static const char *const types[] = { "int8", "uint8", "int4", NULL };
  const val *x = pick_val (g);
  int ndim = x->shape.ndim;
  hy_shape qs = { .ndim = 1, .dims = { 1 } };
  if (ndim > 0 && chance (&g->s, 2)) {
    int axis = rand_axis (g, ndim);
    int a = axis < 0 ? axis + ndim : axis;
    attr (g, "axis", "%d", axis);
    qs.dims[0] = a >= 0 && a < ndim ? x->shape.dims[a] : 2;
    if (chance (&g->s, 16))
      qs.dims[0] += 1;
  } else if (chance (&g->s, 8))
    qs.ndim = 0;
  if (chance (&g->s, 2))
    attr_pick (g, "out_type", types);
  in_val (g, x);
  in_const (g, qs, chance (&g->s, 8) ? FILL_RANDOM : FILL_POSITIVE);
  in_const (g, qs, FILL_RANDOM);
  emit (g, op);
}

/* An ONNX data-dependent tail: NonZero of a value, padded (or cropped) to
 * a fixed length by pads worked out from its Shape, as YOLOv8's nms=True
 * export ends.  Now and then a declared shape the program cannot give (the
 * forward must fail naming the node) or a program that does not parse. */
static void
gen_onnx_tail (gen *g, const char *op)
{
  const val *x = pick_val (g);
  int64_t numel = hy_shape_numel (&x->shape);
  int len = clamp_int ((int) numel + rand_int (g, -2, 3), 0, 64);
  int rank = x->shape.ndim + (chance (&g->s, 16) ? 1 : 0);
  in_val (g, x);
  attr (g, "inputs", "%d", chance (&g->s, 32) ? 2 : 1);
  attr (g, "program", "NonZero i 0 - nz;Shape i 1 - shape;Const i 1 - one;"
      "Gather i 2,3 0 count;Const i %d - length;Sub i 5,4 - missing;"
      "Const i 0 1 zero;Unsqueeze i 6,7 - missing1;Const i 0,0,0 3 before;"
      "Concat i 9,8 0 pads;Pad i 1,10 - padded;Cast f 11 %d rows%s",
      len, chance (&g->s, 8) ? 1 : 0, chance (&g->s, 32) ? ";Bad" : "");
  attr (g, "outputs", "12:%dx%d", rank, len);
  emit (g, op);
}

static void
gen_dequantize (gen *g, const char *op)
{
  gen_quantized_unary (g, op);
}

static void
gen_quantized_flatten (gen *g, const char *op)
{
  gen_quantized_unary (g, op);
}

/* Known and refused by name: _contrib_quantize (v1), the unfused fully
 * connected layer. */
static void
gen_quantize (gen *g, const char *op)
{
  gen_quantized_unary (g, op);
}

/* requantize reads int32 only: mostly a Cast to int32 of any value first
 * (hostile magnitudes, the int32 limits), now and then a float value,
 * which the dtype check refuses. */
static void
gen_requantize (gen *g, const char *op)
{
  if (!chance (&g->s, 4)) {
    attr (g, "dtype", "int32");
    in_val (g, pick_val (g));
    emit (g, "Cast");
  }
  gen_quantized_unary (g, op);
}

/* MXNet's unfused int8 convolution: mostly a quantize_v2 of a rank-4
 * value first (so the data is int8 or uint8), float weights in [-2, 2]
 * (the kernel saturates what is not int8), the four ranges; a bias or a
 * grouped one now and then. */
static void
gen_quantized_conv_plain (gen *g, const char *op)
{
  if (!chance (&g->s, 4)) {
    if (chance (&g->s, 2))
      attr (g, "out_type", "uint8");
    in_val (g, pick_val_rank (g, 4, 4));
    emit (g, "_contrib_quantize_v2");
  }
  const val *x = pick_val_rank (g, 4, 4);
  int64_t c = x->shape.ndim >= 2 ? x->shape.dims[1] : 1;
  int64_t kernel[2];
  window_attrs (g, 2, kernel, TRUE);
  /* one group, as MXNet requires; now and then a depthwise one (refused) */
  int64_t group = chance (&g->s, 8) && c > 0 ? c : 1;
  int64_t filters = group * rand_int (g, 1, 3);
  attr (g, "num_filter", "%" G_GINT64_FORMAT, (gint64) filters);
  if (group != 1)
    attr (g, "num_group", "%" G_GINT64_FORMAT, (gint64) group);
  attr (g, "no_bias", "%s", chance (&g->s, 8) ? "False" : "True");
  in_val (g, x);
  in_const (g, (hy_shape) { .ndim = 4, .dims = { filters, c / group,
          kernel[0], kernel[1] } }, FILL_RANDOM);
  in_range (g);
  in_range (g);
  emit (g, op);
}

static void
gen_quantized_fc_plain (gen *g, const char *op)
{
  gen_quantized_unary (g, op);
}

static void
gen_quantized_act (gen *g, const char *op)
{
  attr_pick (g, "act_type", (const char *const[]) { "relu", "sigmoid",
      "bogus", NULL });
  gen_quantized_unary (g, op);
}

static void
gen_quantized_pooling (gen *g, const char *op)
{
  const val *x = pick_val_rank (g, 3, 5);
  int64_t kernel[3];
  window_attrs (g, CLAMP (x->shape.ndim - 2, 1, 3), kernel, FALSE);
  attr_pick (g, "pool_type", (const char *const[]) { "max", "avg", "sum",
      NULL });
  if (chance (&g->s, 4))
    attr (g, "global_pool", "True");
  in_val (g, x);
  in_range (g);
  emit (g, op);
}

static void
gen_quantized_concat (gen *g, const char *op)
{
  /* n values and their n ranges must fit MAX_INS; num_args may lie */
  int num_args = rand_int (g, 1, 2);
  int n = CLAMP (num_args, 0, MAX_INS / 3);
  for (int i = 0; i < n; i++)
    in_val (g, pick_val (g));
  for (int i = 0; i < n; i++)
    in_range (g);
  attr (g, "num_args", "%d", num_args);
  if (chance (&g->s, 2))
    attr (g, "dim", "%d", rand_int (g, 0, 3));
  emit (g, op);
}

/* The statistics may lie about their length, the eps be hostile. */
static void
gen_quantized_batch_norm (gen *g, const char *op)
{
  const val *x = pick_val (g);
  int64_t c = x->shape.ndim > 1 ? x->shape.dims[1] : 1;
  if (chance (&g->s, 5))
    c = clamp_int (rand_int (g, 0, 4), 1, 4);
  hy_shape cs = { .ndim = 1, .dims = { c } };
  in_val (g, x);
  in_const (g, cs, FILL_RANDOM);
  in_const (g, cs, FILL_RANDOM);
  in_const (g, cs, FILL_RANDOM);
  in_const (g, cs, FILL_POSITIVE);
  in_range (g);
  if (chance (&g->s, 3))
    attr (g, "eps", "%s", rand_float (g));
  if (chance (&g->s, 4))
    attr (g, "axis", "%d", rand_int (g, -3, 3));
  calib_attrs (g);
  emit (g, op);
}

static void
gen_quantized_elemwise_mul (gen *g, const char *op)
{
  const val *x = pick_val (g);
  in_val (g, x);
  in_val (g, chance (&g->s, 2) ? x : pick_val (g));
  in_range (g);
  in_range (g);
  attr_pick (g, "enable_float_output", bools);
  calib_attrs (g);
  emit (g, op);
}

/* The two inputs sometimes of different shapes or dtypes (whatever
 * values the graph holds), the calibrated range hostile. */
static void
gen_quantized_elemwise_add (gen *g, const char *op)
{
  const val *x = pick_val (g);
  in_val (g, x);
  in_val (g, chance (&g->s, 2) ? x : pick_val (g));
  in_range (g);
  in_range (g);
  calib_attrs (g);
  emit (g, op);
}

/* The fused layers without their nested graph: what a hand-edited or
 * truncated export gives. */
static void
gen_quantized_fused (gen *g, const char *op)
{
  in_val (g, pick_val (g));
  in_const (g, (hy_shape) { .ndim = 4, .dims = { 2, 1, 1, 1 } },
      FILL_RANDOM);
  in_range (g);
  attr_pick (g, "quantized", bools);
  attr_pick (g, "with_act", bools);
  attr_pick (g, "with_sum", bools);
  calib_attrs (g);
  emit (g, op);
}

static void
gen_quantized_conv (gen *g, const char *op)
{
  gen_quantized_fused (g, op);
}

static void
gen_quantized_fc (gen *g, const char *op)
{
  gen_quantized_fused (g, op);
}

typedef void (*op_gen) (gen *g, const char *op);

static const struct {
  const char *name;
  op_gen gen;
} op_table[] = {
#define HY_OP(id, family, name, aliases) { name, gen_##family },
#include "kernels/ops.def"
#undef HY_OP
};

/* ---- the model ---------------------------------------------------------- */

static void
add_input (gen *g)
{
  hy_shape s = rand_shape (g, 1, 5);
  guint idx = add_variable (g, "in");
  g_ptr_array_add (g->input_names, g_strdup_printf ("in%u", idx));
  g_array_append_val (g->input_shapes, s);
  add_val (g, idx, 0, &s);
}

static void
param_clear (gpointer p)
{
  hy_param *param = p;
  g_free (param->name);
  hy_tensor_free (param->tensor);
}

static void
generate (gen *g)
{
  guint8 flags = (guint8) pick (&g->s, 256);
  g->keep_invalid = (flags & 0x7) == 0;
  g->value_style = (flags >> 3) % 3;
  g->rng = 0x9e3779b9u ^ (flags * 0x01000193u) ^ (guint32) g->s.n;
  if (!g->rng)
    g->rng = 1;
  add_input (g);
  if (chance (&g->s, 4))
    add_input (g);
  guint n_ops = 1 + pick (&g->s, MAX_OPS);
  for (guint i = 0; i < n_ops * 2 && g->n_ops < n_ops && !g->failed
      && g->s.n > 0; i++) {
    guint k = pick (&g->s, G_N_ELEMENTS (op_table));
    op_table[k].gen (g, op_table[k].name);
  }

  /* Heads: the last value, and now and then others (inputs included). */
  g_autoptr (GString) heads = g_string_new (NULL);
  guint n_heads = 1 + (chance (&g->s, 2) ? pick (&g->s, 3) : 0);
  for (guint h = 0; h < n_heads; h++) {
    const val *v = h == 0 ? &g->vals[g->n_vals - 1]
        : &g->vals[pick (&g->s, g->n_vals)];
    g_string_append_printf (heads, "%s[%u, %u, 0]", h ? ", " : "", v->node,
        v->index);
  }
  g_string_prepend (g->json, "{\"nodes\": [\n");
  g_string_append_printf (g->json, "],\n\"arg_nodes\": [], \"heads\": [%s],\n"
      "\"attrs\": {\"mxnet_version\": [\"int\", 10901]}}\n", heads->str);
}

/* ---- running and comparing ---------------------------------------------- */

static void
free_outputs (hy_tensor **outs)
{
  for (int i = 0; outs && outs[i]; i++)
    hy_tensor_free (outs[i]);
  g_free (outs);
}

static hy_tensor **
run (hy_model *model, hy_mode mode, hy_tensor **inputs, int n_inputs,
    int *n_out, GError **error)
{
  hy_device cpu = { .kind = HY_DEVICE_CPU };
  hy_executor *exec = hy_executor_new (model, cpu, mode, error);
  if (!exec)
    return NULL;
  hy_tensor **outs = NULL;
  /* Hybrid twice: the second forward reuses the plan and its arena, so
   * anything that depends on stale arena contents shows up as a
   * difference between the two (checked by the caller through run 2). */
  int times = mode == HY_MODE_HYBRID ? 2 : 1;
  for (int t = 0; t < times; t++)
    if (!hy_executor_forward (exec, (const hy_tensor *const *) inputs,
            n_inputs, error))
      goto out;
  *n_out = hy_executor_n_outputs (exec);
  outs = g_new0 (hy_tensor *, *n_out + 1);
  for (int i = 0; i < *n_out; i++) {
    const hy_tensor *t = hy_executor_output (exec, i);
    if (!t) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "fuzz: output %d of a successful forward is NULL", i);
      fprintf (stderr, "%s mode: output %d is NULL after a successful "
          "forward\n", mode == HY_MODE_HYBRID ? "hybrid" : "imperative", i);
      abort ();
    }
    outs[i] = hy_tensor_copy (t);
  }
out:
  hy_executor_free (exec);
  return outs;
}

static gboolean
close_enough (float a, float b, float atol)
{
  if (isnan (a) || isnan (b))
    return isnan (a) && isnan (b);
  if (isinf (a) || isinf (b))
    return a == b;
  double d = fabs ((double) a - b);
  return d <= atol + 1e-5 * fmax (fabs (a), fabs (b));
}

static void
compare (hy_tensor **ref, hy_tensor **got, int n)
{
  for (int i = 0; i < n; i++) {
    char a[HY_SHAPE_STRLEN], b[HY_SHAPE_STRLEN];
    if (!hy_shape_equal (&ref[i]->shape, &got[i]->shape)) {
      fprintf (stderr, "output %d: imperative shape %s, hybrid %s\n", i,
          hy_shape_format (&ref[i]->shape, a, sizeof a),
          hy_shape_format (&got[i]->shape, b, sizeof b));
      abort ();
    }
    int64_t numel = hy_shape_numel (&ref[i]->shape);
    /* The absolute floor scales with the output: folded BatchNorm and
     * fused epilogues round differently, which shows near 0 after
     * cancellation. */
    float scale = 0;
    for (int64_t k = 0; k < numel; k++)
      if (isfinite (ref[i]->data[k]))
        scale = fmaxf (scale, fabsf (ref[i]->data[k]));
    float atol = 1e-6f * (1.0f + scale);
    for (int64_t k = 0; k < numel; k++) {
      if (!close_enough (ref[i]->data[k], got[i]->data[k], atol)) {
        fprintf (stderr, "output %d %s element %" G_GINT64_FORMAT
            ": imperative %.9g, hybrid %.9g\n", i,
            hy_shape_format (&ref[i]->shape, a, sizeof a), (gint64) k,
            ref[i]->data[k], got[i]->data[k]);
        abort ();
      }
    }
  }
}

static void
dump_case (const char *dir, const char *json, const hy_param_list *params,
    hy_tensor **inputs, int n_inputs)
{
  g_mkdir_with_parents (dir, 0755);
  g_autofree char *sym = g_build_filename (dir, "model-symbol.json", NULL);
  g_autofree char *par = g_build_filename (dir, "model-0000.params", NULL);
  g_file_set_contents (sym, json, -1, NULL);
  hy_params_save (params, par, NULL);
  for (int i = 0; i < n_inputs; i++) {
    g_autofree char *name = g_strdup_printf ("input%d.npy", i);
    g_autofree char *path = g_build_filename (dir, name, NULL);
    hy_npy_save (inputs[i], path, NULL);
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  gen g = { .s = { data, size } };
  g.json = g_string_new (NULL);
  g.params = g_array_new (FALSE, TRUE, sizeof (hy_param));
  g.attrs = g_ptr_array_new_with_free_func (g_free);
  g.input_names = g_ptr_array_new_with_free_func (g_free);
  g.input_shapes = g_array_new (FALSE, FALSE, sizeof (hy_shape));
  generate (&g);

  /* The parameter list the model takes over. */
  hy_param_list *params = g_new0 (hy_param_list, 1);
  params->n = g.params->len;
  params->items = (hy_param *) g_array_free (g.params, FALSE);

  GError *error = NULL;
  hy_model *model = NULL;
  hy_tensor *inputs[4] = { NULL };
  int n_inputs = 0;
  hy_graph *graph = hy_symbol_json_parse (g.json->str, g.json->len, "fuzz",
      &error);
  if (!graph) {
    /* The generator writes well-formed JSON: failing here is a bug in it
     * or in the parser. */
    fprintf (stderr, "generated JSON rejected: %s\n%s\n", error->message,
        g.json->str);
    abort ();
  }
  if (!hy_graph_resolve (graph, NULL, &error)) {
    hy_graph_free (graph);
    for (guint i = 0; i < params->n; i++)
      param_clear (&params->items[i]);
    g_free (params->items);
    g_free (params);
    goto done;
  }
  model = hy_model_new_from_graph (graph, params, "fuzz", &error);
  if (!model)
    goto done;

  n_inputs = MIN (hy_model_n_inputs (model), (int) G_N_ELEMENTS (inputs));
  for (int i = 0; i < n_inputs; i++) {
    const char *name = hy_model_input_name (model, i);
    for (guint k = 0; k < g.input_names->len; k++)
      if (!strcmp (name, g.input_names->pdata[k])) {
        inputs[i] = hy_tensor_new (&g_array_index (g.input_shapes, hy_shape, k));
        fill_tensor (&g, inputs[i], FILL_RANDOM);
      }
    if (!inputs[i]) {
      fprintf (stderr, "model input '%s' was not generated\n", name);
      abort ();
    }
  }
  const char *dump = g_getenv ("HY_FUZZ_DUMP");
  if (dump)
    dump_case (dump, g.json->str, model->params, inputs, n_inputs);

  int n_ref = 0, n_got = 0;
  GError *ref_error = NULL, *got_error = NULL;
  hy_tensor **ref = run (model, HY_MODE_IMPERATIVE, inputs, n_inputs, &n_ref,
      &ref_error);
  hy_tensor **got = run (model, HY_MODE_HYBRID, inputs, n_inputs, &n_got,
      &got_error);
  if (!ref != !got) {
    /* Same graph, same shapes: one mode refusing what the other runs is a
     * difference too. */
    fprintf (stderr, "imperative %s, hybrid %s\n",
        ref ? "ran" : ref_error->message, got ? "ran" : got_error->message);
    abort ();
  } else if (ref && got) {
    if (n_ref != n_got)
      abort ();
    compare (ref, got, n_ref);
  }
  if (g.failed && ref) {
    fprintf (stderr, "a node the core's own checks reject ran\n%s\n",
        g.json->str);
    abort ();
  }
  free_outputs (ref);
  free_outputs (got);
  g_clear_error (&ref_error);
  g_clear_error (&got_error);

done:
  g_clear_error (&error);
  for (int i = 0; i < n_inputs; i++)
    hy_tensor_free (inputs[i]);
  hy_model_free (model);
  reset_node (&g);
  g_ptr_array_unref (g.attrs);
  g_ptr_array_unref (g.input_names);
  g_array_unref (g.input_shapes);
  g_string_free (g.json, TRUE);
  return 0;
}
