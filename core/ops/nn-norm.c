/*
 * nn-norm.c — BatchNorm and L2Normalization at inference: attributes and
 * shape inference.
 *
 * MXNet 1.9.1's own defaults apply when a key is absent, and they differ
 * from Gluon's: eps 1e-3 and fix_gamma True (gamma read as 1).  Gluon
 * always writes both, so only Symbol-API graphs rely on them.
 * use_global_stats and momentum change nothing at inference.
 *
 * With output_mean_var MXNet also returns its "mean" and "var" outputs;
 * at inference those are the moving mean and 1 / sqrt(moving_var + eps)
 * (it keeps the inverse standard deviation there, not the variance).
 *
 * _contrib_SyncBatchNorm is BatchNorm across devices in training; at
 * inference it is BatchNorm on axis 1 with the same defaults, its own
 * attribute set (no `axis`, a required `key`, `ndev`), and its own
 * arithmetic order (kernels/cpu/batch-norm.c).  MXNet leaves its "mean"
 * and "var" outputs unwritten at inference, so output_mean_var=True is
 * refused rather than given values MXNet does not have.
 */
#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/nn.h"
#include "core/ops/nn-common.h"

#define BN_DEFAULT_EPS 1e-3

/* What _contrib_SyncBatchNorm takes that BatchNorm does not, and the
 * reverse. */
static gboolean
sync_bn_attrs (GHashTable *attrs, GError **error)
{
  int64_t ndev;
  gboolean output_mean_var;
  if (hy_attr_has (attrs, "axis")) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'axis' is not one of _contrib_SyncBatchNorm's: it "
        "normalises axis 1 always");
    return FALSE;
  }
  if (!hy_attr_require (attrs, "key", error)
      || !hy_attr_int (attrs, "ndev", 1, &ndev, error)
      || !hy_attr_bool (attrs, "output_mean_var", FALSE, &output_mean_var,
          error))
    return FALSE;
  if (output_mean_var) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "attribute 'output_mean_var' = '%s': MXNet leaves "
        "_contrib_SyncBatchNorm's mean and var outputs unwritten at "
        "inference, so there are no values to give",
        hy_attr_string (attrs, "output_mean_var"));
    return FALSE;
  }
  return TRUE;
}

static gboolean
bn_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_batch_norm_params *p = params;
  double eps;
  gboolean fix_gamma, output_mean_var, unused;
  int64_t axis;
  if (p->op == HY_OP_SYNC_BATCH_NORM && !sync_bn_attrs (attrs, error))
    return FALSE;
  if (!hy_attr_float (attrs, "eps", BN_DEFAULT_EPS, &eps, error)
      || !hy_attr_bool (attrs, "fix_gamma", TRUE, &fix_gamma, error)
      || !hy_attr_bool (attrs, "output_mean_var", FALSE, &output_mean_var,
          error)
      || !hy_attr_bool (attrs, "use_global_stats", FALSE, &unused, error)
      || !hy_attr_int (attrs, "axis", 1, &axis, error))
    return FALSE;
  /* NaN fails this test too. */
  if (!(eps >= 0.0)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'eps' = '%s' must be a non-negative number",
        hy_attr_string (attrs, "eps"));
    return FALSE;
  }
  if (axis < -HY_MAX_DIMS || axis >= HY_MAX_DIMS) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'axis' = '%s' is out of range for tensors of at most %d "
        "dimensions", hy_attr_string (attrs, "axis"), HY_MAX_DIMS);
    return FALSE;
  }
  p->eps = (float) eps;
  p->fix_gamma = fix_gamma;
  p->output_mean_var = output_mean_var;
  p->axis = (int) axis;
  return TRUE;
}

static const char *const bn_inputs[] = {
  "data", "gamma", "beta", "moving_mean", "moving_var", NULL,
};

static int
bn_num_outputs (const void *params)
{
  const hy_batch_norm_params *p = params;
  return p->output_mean_var ? 3 : 1;
}

static gboolean
bn_infer_shape (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_batch_norm_params *p = params;
  const hy_shape *d = &in[0];
  char buf[HY_SHAPE_STRLEN];
  int axis;

  if (d->ndim < 1 || !hy_axis_normalize (p->axis, d->ndim, &axis)) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "attribute 'axis' = %d is out of range for data of shape %s",
        p->axis, hy_shape_format (d, buf, sizeof buf));
    return FALSE;
  }
  const hy_shape cshape = { .ndim = 1, .dims = { d->dims[axis] } };
  for (int i = 1; i < 5; i++)
    if (!hy_nn_expect_shape (&in[i], &cshape, bn_inputs[i], error))
      return FALSE;

  out[0] = *d;
  for (int i = 1; i < n_out; i++)
    out[i] = cshape;
  return TRUE;
}

const hy_op_def hy_opdef_batch_norm = {
  .params_size = sizeof (hy_batch_norm_params),
  .parse = bn_parse,
  .input_names = bn_inputs,
  .num_outputs = bn_num_outputs,
  .n_aux = 2,
  .infer_shape = bn_infer_shape,
  .inplace = TRUE,
};

/* ---- L2Normalization ---------------------------------------------------- */

/* MXNet also has a second, hidden output (the norms, for the backward
 * pass); graphs cannot reference it, so only the visible one is made. */

static gboolean
l2_norm_parse (GHashTable *attrs, void *params, GError **error)
{
  static const char *const modes[] = { "instance", "channel", "spatial",
    NULL };
  hy_l2_normalization_params *p = params;
  double eps;
  int mode;
  if (!hy_attr_float (attrs, "eps", 1e-10, &eps, error)
      || !hy_attr_enum (attrs, "mode", modes, HY_L2_NORM_INSTANCE, &mode,
          error))
    return FALSE;
  /* NaN fails this test too. */
  if (!(eps >= 0.0)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'eps' = '%s' must be a non-negative number",
        hy_attr_string (attrs, "eps"));
    return FALSE;
  }
  p->eps = (float) eps;
  p->mode = mode;
  return TRUE;
}

static gboolean
l2_norm_infer_shape (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_l2_normalization_params *p = params;
  int need = p->mode == HY_L2_NORM_INSTANCE ? 1 : 3;
  if (in[0].ndim < need) {
    char buf[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data of shape %s has too few dimensions: mode '%s' needs at least "
        "%d", hy_shape_format (&in[0], buf, sizeof buf),
        p->mode == HY_L2_NORM_CHANNEL ? "channel" : p->mode
        == HY_L2_NORM_SPATIAL ? "spatial" : "instance", need);
    return FALSE;
  }
  out[0] = in[0];
  return TRUE;
}

static const char *const l2_norm_inputs[] = { "data", NULL };

const hy_op_def hy_opdef_l2_normalization = {
  .params_size = sizeof (hy_l2_normalization_params),
  .parse = l2_norm_parse,
  .input_names = l2_norm_inputs,
  .infer_shape = l2_norm_infer_shape,
};
