/*
 * nn-upsampling.c — UpSampling: attributes and shape inference, as MXNet
 * 1.9.1's (src/operator/nn/upsampling.cc).
 *
 * `scale` is one integer there (a tuple is refused) and `sample_type` has
 * no default.  Nearest takes num_args 4-D inputs (arg0, arg1, ...): the
 * output is arg0's H×W times the scale, every input must divide it, by one
 * factor on both axes (MXNet repeats an input by its height's factor on
 * both axes and fails on a mismatch), and the channels are concatenated
 * or, with multi_input_mode=sum, must be equal.  Bilinear always takes
 * data and weight, whatever num_args says, and runs as MXNet's own
 * Deconvolution with num_group = num_filter, which only computes when
 * num_filter is the channel count: anything else is refused here.
 */
#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/nn.h"
#include "core/ops/nn-common.h"

static const char *const sample_types[] = { "nearest", "bilinear", NULL };
static const char *const input_modes[] = { "concat", "sum", NULL };

/* Deconvolution's own bounds: the scale is its stride and sets its
 * kernel. */
#define UPSAMPLING_MAX_SCALE (1 << 20)

static void
bilinear_deconv (hy_upsampling_params *p)
{
  const int64_t s = p->scale;
  hy_deconv_params *d = &p->deconv;
  d->op = HY_OP_DECONVOLUTION;
  d->n_spatial = 2;
  for (int i = 0; i < 2; i++) {
    d->kernel[i] = 2 * s - s % 2;
    d->stride[i] = s;
    d->dilate[i] = 1;
    d->pad[i] = s / 2;                  /* ⌈(s − 1) / 2⌉ */
  }
  d->num_filter = p->num_filter;
  d->num_group = p->num_filter;
  d->no_bias = true;
}

static gboolean
upsampling_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_upsampling_params *p = params;
  int type, mode;
  int64_t num_args;
  if (!hy_attr_require (attrs, "scale", error)
      || !hy_attr_int (attrs, "scale", 1, &p->scale, error)
      || !hy_attr_require (attrs, "sample_type", error)
      || !hy_attr_enum (attrs, "sample_type", sample_types,
          HY_UPSAMPLING_NEAREST, &type, error)
      || !hy_attr_enum (attrs, "multi_input_mode", input_modes, 0, &mode,
          error)
      || !hy_attr_int (attrs, "num_filter", 0, &p->num_filter, error)
      || !hy_attr_int (attrs, "num_args", 1, &num_args, error))
    return FALSE;
  if (p->scale < 1 || p->scale > UPSAMPLING_MAX_SCALE) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'scale' = '%s' must be an integer in [1, %d]",
        hy_attr_string (attrs, "scale"), UPSAMPLING_MAX_SCALE);
    return FALSE;
  }
  if (num_args < 1 || num_args > G_MAXINT / 2) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'num_args' = '%s' must be at least 1",
        hy_attr_string (attrs, "num_args"));
    return FALSE;
  }
  p->sample_type = type;
  p->sum = mode == 1;
  p->num_args = (int) num_args;
  if (type == HY_UPSAMPLING_BILINEAR) {
    if (p->num_filter < 1 || p->num_filter > G_MAXUINT32) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'num_filter' = '%s' must be the input's channel count "
          "for sample_type='bilinear'", hy_attr_string (attrs, "num_filter")
          ? hy_attr_string (attrs, "num_filter") : "0 (absent)");
      return FALSE;
    }
    bilinear_deconv (p);
  }
  return TRUE;
}

static int
upsampling_num_inputs (const void *params)
{
  const hy_upsampling_params *p = params;
  return p->sample_type == HY_UPSAMPLING_BILINEAR ? 2 : p->num_args;
}

/* As MXNet lists them: bilinear reads data and its kernel, "weight" (a
 * parameter, so a model without it is missing a weight); nearest reads
 * arg0, arg1… (the default names). */
static const char *
upsampling_input_name (const void *params, int i)
{
  const hy_upsampling_params *p = params;
  if (p->sample_type != HY_UPSAMPLING_BILINEAR)
    return NULL;
  return i == 0 ? "data" : "weight";
}

static gboolean
nearest_infer (const hy_upsampling_params *p, const hy_shape *in, int n_in,
    hy_shape *out, GError **error)
{
  char buf[HY_SHAPE_STRLEN], obuf[HY_SHAPE_STRLEN];
  hy_shape o = in[0];
  if (o.ndim == 4) {
    o.dims[1] = 0;
    o.dims[2] *= p->scale;
    o.dims[3] *= p->scale;
  }
  for (int i = 0; i < n_in; i++) {
    const hy_shape *s = &in[i];
    if (s->ndim != 4) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "input %d (arg%d) has shape %s; UpSampling needs 4-D (batch, "
          "channel, y, x) inputs", i, i,
          hy_shape_format (s, buf, sizeof buf));
      return FALSE;
    }
    if (s->dims[2] < 1 || s->dims[3] < 1 || s->dims[0] != in[0].dims[0]
        || o.dims[2] % s->dims[2] != 0 || o.dims[3] % s->dims[3] != 0
        || o.dims[2] / s->dims[2] != o.dims[3] / s->dims[3]) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "input %d (arg%d) of shape %s cannot be repeated to %"
          G_GINT64_FORMAT "×%" G_GINT64_FORMAT " (input 0 %s times %"
          G_GINT64_FORMAT "): "
          "it needs the same batch and one whole factor on both axes", i, i,
          hy_shape_format (s, buf, sizeof buf), (gint64) o.dims[2],
          (gint64) o.dims[3], hy_shape_format (&in[0], obuf, sizeof obuf),
          (gint64) p->scale);
      return FALSE;
    }
    if (p->sum && i > 0 && s->dims[1] != o.dims[1]) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "input %d (arg%d) has %" G_GINT64_FORMAT " channels and input 0 %"
          G_GINT64_FORMAT "; multi_input_mode='sum' needs the same count", i,
          i, (gint64) s->dims[1], (gint64) o.dims[1]);
      return FALSE;
    }
    o.dims[1] = p->sum ? s->dims[1] : o.dims[1] + s->dims[1];
  }
  *out = o;
  return TRUE;
}

static gboolean
upsampling_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_upsampling_params *p = params;
  if (p->sample_type == HY_UPSAMPLING_NEAREST)
    return nearest_infer (p, in, n_in, out, error);
  char buf[HY_SHAPE_STRLEN];
  if (!hy_shape_expect_rank (&in[0], 4, "data (batch, channel, y, x)",
          error))
    return FALSE;
  if (in[0].dims[1] != p->num_filter) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "data %s has %" G_GINT64_FORMAT " channels but num_filter is %"
        G_GINT64_FORMAT "; bilinear UpSampling needs them equal",
        hy_shape_format (&in[0], buf, sizeof buf), (gint64) in[0].dims[1],
        (gint64) p->num_filter);
    return FALSE;
  }
  const int64_t k = p->deconv.kernel[0];
  const hy_shape wshape = { .ndim = 4, .dims = { in[0].dims[1], 1, k, k } };
  if (!hy_nn_expect_shape (&in[1], &wshape, "weight", error))
    return FALSE;
  hy_shape o = in[0];
  o.dims[2] *= p->scale;
  o.dims[3] *= p->scale;
  *out = o;
  return TRUE;
}

/* Bilinear: the deconvolution's multiply-adds, k² per input element. */
static double
upsampling_flops (const void *params, const hy_shape *in, int n_in,
    const hy_shape *out, int n_out)
{
  const hy_upsampling_params *p = params;
  if (p->sample_type != HY_UPSAMPLING_BILINEAR)
    return 0;
  const double k = (double) p->deconv.kernel[0];
  return 2.0 * (double) hy_shape_numel (&in[0]) * k * k;
}

const hy_op_def hy_opdef_upsampling = {
  .params_size = sizeof (hy_upsampling_params),
  .parse = upsampling_parse,
  .num_inputs = upsampling_num_inputs,
  .input_name = upsampling_input_name,
  .infer_shape = upsampling_infer,
  .infer_dtype = hy_dtype_all_alike,
  .flops = upsampling_flops,
};
