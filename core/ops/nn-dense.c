/*
 * nn-dense.c — FullyConnected, dot and batch_dot: attributes and shapes.
 *
 * FullyConnected: y = x·Wᵀ + b with W (num_hidden, K).  flatten (default)
 * reads x as (d0, d1·…·dn); otherwise it maps the last axis only.
 *
 * dot follows mx.nd.dot on N-D arrays: a is read as a matrix (all but its
 * last axis, last axis) — or, transposed, (first axis, the rest) — and b as
 * (first axis, the rest) — or, transposed, (all but its last axis, last
 * axis); the contracted axes vanish and the rest concatenate.  Two vectors
 * give shape (1,).  batch_dot multiplies matching (…, M, K)·(…, K, N)
 * stacks, transposes swapping the last two axes.
 */
#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/nn.h"
#include "core/ops/nn-common.h"

/* ---- FullyConnected ---------------------------------------------------- */

static gboolean
fc_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_fc_params *p = params;
  if (!hy_attr_has (attrs, "num_hidden")) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'num_hidden' is required");
    return FALSE;
  }
  int64_t num_hidden;
  gboolean no_bias, flatten;
  if (!hy_attr_int (attrs, "num_hidden", 0, &num_hidden, error)
      || !hy_attr_bool (attrs, "no_bias", FALSE, &no_bias, error)
      || !hy_attr_bool (attrs, "flatten", TRUE, &flatten, error))
    return FALSE;
  if (num_hidden < 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'num_hidden' = '%s' must be positive",
        hy_attr_string (attrs, "num_hidden"));
    return FALSE;
  }
  p->num_hidden = num_hidden;
  p->no_bias = no_bias;
  p->flatten = flatten;
  p->fused = (hy_fused_epilogue) { .act = HY_FUSED_ACT_NONE };
  return TRUE;
}

/* The last two only after the fusion passes (hy_fused_epilogue), and
 * then each comes right after the last input present before it. */
static const char *const fc_inputs[] = {
  "data", "weight", "bias", "batch_norm", "residual", NULL,
};

static int
fc_num_inputs (const void *params)
{
  const hy_fc_params *p = params;
  return hy_fused_inputs_of (p->no_bias, &p->fused).n;
}

static gboolean
fc_infer_shape (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_fc_params *p = params;
  const hy_shape *d = &in[0];
  char buf[HY_SHAPE_STRLEN];

  if (d->ndim < 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data must have at least 1 dimension, got shape %s",
        hy_shape_format (d, buf, sizeof buf));
    return FALSE;
  }
  hy_shape o;
  int64_t k;
  if (p->flatten) {
    k = 1;
    for (int i = 1; i < d->ndim; i++)
      k *= d->dims[i];
    o = (hy_shape) { .ndim = 2, .dims = { d->dims[0], p->num_hidden } };
  } else {
    k = d->dims[d->ndim - 1];
    o = *d;
    o.dims[o.ndim - 1] = p->num_hidden;
  }

  hy_shape wshape = { .ndim = 2, .dims = { p->num_hidden, k } };
  if (!hy_nn_expect_shape (&in[1], &wshape, "weight", error))
    return FALSE;
  if (!p->no_bias) {
    hy_shape bshape = { .ndim = 1, .dims = { p->num_hidden } };
    if (!hy_nn_expect_shape (&in[2], &bshape, "bias", error))
      return FALSE;
  }
  const hy_fused_inputs f = hy_fused_inputs_of (p->no_bias, &p->fused);
  if (f.bn >= 0) {
    hy_shape bn = { .ndim = 2, .dims = { 3, p->num_hidden } };
    if (!hy_nn_expect_shape (&in[f.bn], &bn,
            "fused batch_norm (mean, scale, shift)", error))
      return FALSE;
  }
  if (f.residual >= 0
      && !hy_nn_expect_shape (&in[f.residual], &o, "residual", error))
    return FALSE;
  out[0] = o;
  return TRUE;
}

/* weight (num_hidden, K): K multiply-adds per output element. */
static double
fc_flops (const void *params, const hy_shape *in, int n_in,
    const hy_shape *out, int n_out)
{
  const hy_shape *w = &in[1];
  if (n_in < 2 || w->ndim != 2)
    return 0;
  return 2.0 * (double) hy_shape_numel (&out[0]) * (double) w->dims[1];
}

const hy_op_def hy_opdef_fully_connected = {
  .params_size = sizeof (hy_fc_params),
  .parse = fc_parse,
  .input_names = fc_inputs,
  .num_inputs = fc_num_inputs,
  .infer_shape = fc_infer_shape,
  .flops = fc_flops,
};

/* ---- dot, batch_dot ---------------------------------------------------- */

static gboolean
dot_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_dot_params *p = params;
  gboolean ta, tb;
  if (!hy_attr_bool (attrs, "transpose_a", FALSE, &ta, error)
      || !hy_attr_bool (attrs, "transpose_b", FALSE, &tb, error))
    return FALSE;
  p->transpose_a = ta;
  p->transpose_b = tb;
  /* forward_stype only picks a sparse kernel: dense results are equal. */
  return TRUE;
}

static const char *const dot_inputs[] = { "lhs", "rhs", NULL };

static gboolean
contracted_mismatch (const hy_shape *a, const hy_shape *b, int64_t ka,
    int64_t kb, GError **error)
{
  char sa[HY_SHAPE_STRLEN], sb[HY_SHAPE_STRLEN];
  g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
      "lhs %s and rhs %s do not fit: contracted sizes %" G_GINT64_FORMAT
      " and %" G_GINT64_FORMAT " differ", hy_shape_format (a, sa, sizeof sa),
      hy_shape_format (b, sb, sizeof sb), (gint64) ka, (gint64) kb);
  return FALSE;
}

static gboolean
dot_infer (const hy_dot_params *p, const hy_shape *a, const hy_shape *b,
    hy_shape *out, GError **error)
{
  char buf[HY_SHAPE_STRLEN];
  if (a->ndim < 1 || b->ndim < 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "dot needs arrays of at least 1 dimension, got %s",
        hy_shape_format (a->ndim < 1 ? a : b, buf, sizeof buf));
    return FALSE;
  }
  if (a->ndim == 1 && b->ndim == 1) {
    if (p->transpose_a || p->transpose_b) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attributes 'transpose_a'/'transpose_b' must be False for the dot "
          "of two vectors");
      return FALSE;
    }
    if (a->dims[0] != b->dims[0])
      return contracted_mismatch (a, b, a->dims[0], b->dims[0], error);
    *out = (hy_shape) { .ndim = 1, .dims = { 1 } };
    return TRUE;
  }

  /* The contracted axis of each side and the axes that stay. */
  const int ka_axis = p->transpose_a ? 0 : a->ndim - 1;
  const int kb_axis = p->transpose_b ? b->ndim - 1 : 0;
  if (a->dims[ka_axis] != b->dims[kb_axis])
    return contracted_mismatch (a, b, a->dims[ka_axis], b->dims[kb_axis],
        error);
  const int keep_a = a->ndim - 1, keep_b = b->ndim - 1;
  if (keep_a + keep_b > HY_MAX_DIMS) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "dot result would have %d dimensions; at most %d are supported",
        keep_a + keep_b, HY_MAX_DIMS);
    return FALSE;
  }
  hy_shape o = { .ndim = 0 };
  for (int i = 0; i < a->ndim; i++)
    if (i != ka_axis)
      o.dims[o.ndim++] = a->dims[i];
  for (int i = 0; i < b->ndim; i++)
    if (i != kb_axis)
      o.dims[o.ndim++] = b->dims[i];
  *out = o;
  return TRUE;
}

static gboolean
batch_dot_infer (const hy_dot_params *p, const hy_shape *a,
    const hy_shape *b, hy_shape *out, GError **error)
{
  char sa[HY_SHAPE_STRLEN], sb[HY_SHAPE_STRLEN];
  if (a->ndim < 3 || a->ndim != b->ndim) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "batch_dot needs lhs and rhs of the same rank >= 3, got %s and %s",
        hy_shape_format (a, sa, sizeof sa), hy_shape_format (b, sb, sizeof sb));
    return FALSE;
  }
  const int nd = a->ndim;
  for (int i = 0; i < nd - 2; i++) {
    if (a->dims[i] != b->dims[i]) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "batch_dot: lhs %s and rhs %s differ on batch axis %d",
          hy_shape_format (a, sa, sizeof sa),
          hy_shape_format (b, sb, sizeof sb), i);
      return FALSE;
    }
  }
  const int64_t m = a->dims[nd - (p->transpose_a ? 1 : 2)];
  const int64_t ka = a->dims[nd - (p->transpose_a ? 2 : 1)];
  const int64_t kb = b->dims[nd - (p->transpose_b ? 1 : 2)];
  const int64_t n = b->dims[nd - (p->transpose_b ? 2 : 1)];
  if (ka != kb)
    return contracted_mismatch (a, b, ka, kb, error);
  hy_shape o = *a;
  o.dims[nd - 2] = m;
  o.dims[nd - 1] = n;
  *out = o;
  return TRUE;
}

static gboolean
dot_infer_shape (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_dot_params *p = params;
  if (p->op == HY_OP_BATCH_DOT)
    return batch_dot_infer (p, &in[0], &in[1], &out[0], error);
  return dot_infer (p, &in[0], &in[1], &out[0], error);
}

/* The summed dimension: a's last (first when transposed) for dot, the
 * same of its last two for batch_dot. */
static double
dot_flops (const void *params, const hy_shape *in, int n_in,
    const hy_shape *out, int n_out)
{
  const hy_dot_params *p = params;
  const hy_shape *a = &in[0];
  if (n_in < 2 || a->ndim < 1)
    return 0;
  int k_axis = p->op == HY_OP_BATCH_DOT
      ? (p->transpose_a ? a->ndim - 2 : a->ndim - 1)
      : (p->transpose_a ? 0 : a->ndim - 1);
  if (k_axis < 0)
    return 0;
  return 2.0 * (double) hy_shape_numel (&out[0]) * (double) a->dims[k_axis];
}

const hy_op_def hy_opdef_dot = {
  .params_size = sizeof (hy_dot_params),
  .parse = dot_parse,
  .input_names = dot_inputs,
  .infer_shape = dot_infer_shape,
  .flops = dot_flops,
};
