/*
 * nn-pool.c — Pooling: attributes and shape inference.
 *
 * MXNet 1.9.1 semantics: `kernel` is required unless global_pool; stride
 * defaults to 1 and pad to 0 on every kernel axis; pool_type max, output
 * size by pooling_convention (valid: floor, full: ceil, same: ceil(in /
 * stride) for 1-D max pooling only).  lp pooling needs p_value 1, 2 or 3.
 * Only channel-first layouts run here.
 */
#include <string.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/nn.h"
#include "core/ops/nn-common.h"

static const char *const pool_types[] = { "max", "avg", "sum", "lp", NULL };
static const char *const conventions[] = { "valid", "full", "same", NULL };
static const char *const layouts_first[] = { "NCW", "NCHW", "NCDHW", NULL };
static const char *const layouts_last[] = { "NWC", "NHWC", "NDHWC", NULL };

static gboolean
parse_layout (GHashTable *attrs, int n_spatial, GError **error)
{
  const char *v = hy_attr_string (attrs, "layout");
  if (!v)
    return TRUE;
  g_autofree char *layout = g_strstrip (g_strdup (v));
  if (!strcmp (layout, "None"))
    return TRUE;
  if (g_strv_contains (layouts_last, layout)) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "attribute 'layout' = '%s' is not supported; only channel-first "
        "layouts (NCW, NCHW, NCDHW) are", layout);
    return FALSE;
  }
  if (!g_strv_contains (layouts_first, layout)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'layout' = '%s' is not one of None|NCW|NCHW|NCDHW", layout);
    return FALSE;
  }
  if (n_spatial > 0 && strcmp (layout, layouts_first[n_spatial - 1]) != 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'layout' = '%s' does not match the %d-D kernel "
        "(expected %s)", layout, n_spatial, layouts_first[n_spatial - 1]);
    return FALSE;
  }
  return TRUE;
}

static gboolean
pool_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_pool_params *p = params;
  int pool_type, convention;
  gboolean global_pool, count_include_pad;

  if (!hy_attr_enum (attrs, "pool_type", pool_types, HY_POOL_MAX, &pool_type,
          error)
      || !hy_attr_enum (attrs, "pooling_convention", conventions,
          HY_POOL_VALID, &convention, error)
      || !hy_attr_bool (attrs, "global_pool", FALSE, &global_pool, error))
    return FALSE;
  /* count_include_pad is optional in MXNet: "None" means the default. */
  const char *cip = hy_attr_string (attrs, "count_include_pad");
  count_include_pad = TRUE;
  if (cip && strcmp (cip, "None") != 0
      && !hy_attr_bool (attrs, "count_include_pad", TRUE, &count_include_pad,
          error))
    return FALSE;
  p->pool_type = pool_type;
  p->convention = convention;
  p->global_pool = global_pool;
  p->count_include_pad = count_include_pad;

  int n = hy_nn_kernel_attr (attrs, p->kernel, error);
  if (n < 0)
    return FALSE;
  if (n == 0 && !global_pool) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'kernel' is required unless global_pool is True");
    return FALSE;
  }
  p->n_spatial = n;
  /* Global pooling ignores stride and pad: do not reject what it ignores. */
  if (!global_pool) {
    if (!hy_nn_spatial_attr (attrs, "stride", n, 1, 1, p->stride, error)
        || !hy_nn_spatial_attr (attrs, "pad", n, 0, 0, p->pad, error))
      return FALSE;
  }

  p->p_value = 1;
  if (pool_type == HY_POOL_LP) {
    int64_t pv;
    gboolean none;
    if (!hy_attr_opt_int (attrs, "p_value", 0, &pv, &none, error))
      return FALSE;
    if (none || !hy_attr_has (attrs, "p_value")) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'p_value' is required for pool_type 'lp'");
      return FALSE;
    }
    if (pv < 1 || pv > 3) {
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "attribute 'p_value' = '%s' is not supported; MXNet runs 1, 2 "
          "or 3", hy_attr_string (attrs, "p_value"));
      return FALSE;
    }
    p->p_value = (int) pv;
  }

  if (convention == HY_POOL_SAME && !global_pool) {
    if (n != 1 || pool_type != HY_POOL_MAX) {
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "attribute 'pooling_convention' = 'same' is supported for 1-D max "
          "pooling only");
      return FALSE;
    }
    if (p->pad[0] != 0) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'pad' must be 0 with pooling_convention 'same'");
      return FALSE;
    }
  }
  return parse_layout (attrs, n, error);
}

static const char *const pool_inputs[] = { "data", NULL };

static int64_t
ceil_div (int64_t a, int64_t b)
{
  return (a + b - 1) / b;
}

static gboolean
pool_infer_shape (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_pool_params *p = params;
  const hy_shape *d = &in[0];
  char buf[HY_SHAPE_STRLEN];

  if (d->ndim < 3 || d->ndim > 2 + HY_NN_MAX_SPATIAL) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data must have 3 to 5 dimensions (NCW, NCHW or NCDHW), got shape %s",
        hy_shape_format (d, buf, sizeof buf));
    return FALSE;
  }
  hy_shape o = *d;
  if (p->global_pool) {
    for (int i = 2; i < d->ndim; i++)
      o.dims[i] = 1;
    out[0] = o;
    return TRUE;
  }
  const int n = p->n_spatial;
  if (d->ndim != n + 2) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data must have %d dimensions for a %d-D kernel, got shape %s",
        n + 2, n, hy_shape_format (d, buf, sizeof buf));
    return FALSE;
  }
  for (int i = 0; i < n; i++) {
    const int64_t size = d->dims[2 + i], pad = p->pad[i];
    const int64_t k = p->kernel[i], s = p->stride[i];
    if (!hy_nn_window_fits (size, pad, k, i, error))
      return FALSE;
    switch (p->convention) {
      case HY_POOL_VALID:
        o.dims[2 + i] = 1 + (size + 2 * pad - k) / s;
        break;
      case HY_POOL_FULL:
        o.dims[2 + i] = 1 + ceil_div (size + 2 * pad - k, s);
        break;
      case HY_POOL_SAME:
        o.dims[2 + i] = ceil_div (size + 2 * pad, s);
        break;
    }
  }
  out[0] = o;
  return TRUE;
}

const hy_op_def hy_opdef_pooling = {
  .params_size = sizeof (hy_pool_params),
  .parse = pool_parse,
  .input_names = pool_inputs,
  .infer_shape = pool_infer_shape,
};
