/*
 * nn-act.c — Activation and LeakyReLU: attributes and shape inference.
 *
 * Activation's act_type is required (relu, sigmoid, tanh, softrelu,
 * softsign).  LeakyReLU's defaults to leaky with slope 0.25; rrelu runs at
 * inference as leaky with slope (lower_bound + upper_bound) / 2; prelu
 * reads a second input, gamma: one slope per channel (axis 1), a single
 * shared slope of shape (1,), or one per element (gamma shaped like data).
 * rrelu has a second output, its random-slope mask, which MXNet leaves
 * unwritten at inference; we give zeros.
 */
#include "hybrid.h"
#include "core/op.h"
#include "core/shape-learn.h"
#include "kernels/params/nn.h"

/* ---- Activation ---------------------------------------------------------- */

static const char *const act_types[] = {
  "relu", "sigmoid", "tanh", "softrelu", "softsign", NULL,
};

static gboolean
act_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_activation_params *p = params;
  if (!hy_attr_has (attrs, "act_type")) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'act_type' is required (relu|sigmoid|tanh|softrelu|"
        "softsign)");
    return FALSE;
  }
  int type;
  if (!hy_attr_enum (attrs, "act_type", act_types, HY_ACT_RELU, &type, error))
    return FALSE;
  p->act_type = type;
  return TRUE;
}

static const char *const act_inputs[] = { "data", NULL };

static gboolean
same_shape_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  out[0] = in[0];
  return TRUE;
}

const hy_op_def hy_opdef_activation = {
  .params_size = sizeof (hy_activation_params),
  .parse = act_parse,
  .input_names = act_inputs,
  .infer_shape = same_shape_infer,
  .inplace = TRUE,
};

/* ---- LeakyReLU ----------------------------------------------------------- */

/* In hy_leaky_type order. */
static const char *const leaky_types[] = {
  "leaky", "prelu", "rrelu", "elu", "selu", "gelu", NULL,
};

static gboolean
leaky_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_leaky_relu_params *p = params;
  int type;
  double slope, lower, upper;
  if (!hy_attr_enum (attrs, "act_type", leaky_types, HY_LEAKY_LEAKY, &type,
          error)
      || !hy_attr_float (attrs, "slope", 0.25, &slope, error)
      || !hy_attr_float (attrs, "lower_bound", 0.125, &lower, error)
      || !hy_attr_float (attrs, "upper_bound", 0.334, &upper, error))
    return FALSE;
  p->act_type = type;
  p->lower_bound = (float) lower;
  p->upper_bound = (float) upper;
  /* MXNet averages the float32 bounds in float32. */
  p->slope = type == HY_LEAKY_RRELU
      ? (p->lower_bound + p->upper_bound) / 2.0f : (float) slope;
  return TRUE;
}

static const char *const leaky_inputs[] = { "data", "gamma", NULL };

static int
leaky_num_inputs (const void *params)
{
  const hy_leaky_relu_params *p = params;
  return p->act_type == HY_LEAKY_PRELU ? 2 : 1;
}

static int
leaky_num_outputs (const void *params)
{
  const hy_leaky_relu_params *p = params;
  return p->act_type == HY_LEAKY_RRELU ? 2 : 1;
}

static gboolean
prelu_gamma_fits (const hy_shape *d, const hy_shape *g)
{
  if (hy_shape_equal (d, g))
    return TRUE;
  if (g->ndim != 1)
    return FALSE;
  /* Like MXNet, a vector gamma goes on axis 1 when it fits there (or is a
   * single shared slope), else on axis 0. */
  if (g->dims[0] == 1)
    return TRUE;
  if (d->ndim >= 2 && d->dims[1] == g->dims[0])
    return TRUE;
  return d->ndim >= 1 && d->dims[0] == g->dims[0];
}

static gboolean
leaky_infer_shape (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_leaky_relu_params *p = params;
  /* A gamma not known yet (no weights loaded) is one slope per channel,
   * as MXNet infers it. */
  hy_shape per_channel = { .ndim = 1,
    .dims = { in[0].ndim >= 2 ? in[0].dims[1] : 1 } };
  if (p->act_type == HY_LEAKY_PRELU && !hy_shape_learn (&in[1], &per_channel)
      && !prelu_gamma_fits (&in[0], &in[1])) {
    char d[HY_SHAPE_STRLEN], g[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "prelu gamma has shape %s; expected (channels,) = (%" G_GINT64_FORMAT
        ",), (1,) or the data shape %s", hy_shape_format (&in[1], g, sizeof g),
        (gint64) (in[0].ndim >= 2 ? in[0].dims[1] : in[0].ndim == 1
            ? in[0].dims[0] : 1), hy_shape_format (&in[0], d, sizeof d));
    return FALSE;
  }
  for (int i = 0; i < n_out; i++)
    out[i] = in[0];
  return TRUE;
}

const hy_op_def hy_opdef_leaky_relu = {
  .params_size = sizeof (hy_leaky_relu_params),
  .parse = leaky_parse,
  .input_names = leaky_inputs,
  .num_inputs = leaky_num_inputs,
  .num_outputs = leaky_num_outputs,
  .infer_shape = leaky_infer_shape,
  .inplace = TRUE,
};
