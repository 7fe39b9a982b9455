/*
 * conv.c — Convolution (NCW, NCHW, NCDHW) on the CPU.
 *
 * The general case lowers each group's input to a column matrix (im2col:
 * one row per (channel, kernel offset), one column per output position)
 * and multiplies the group's weights (F/g, C/g·k…) by it with one SGEMM.
 * Two shapes skip the lowering:
 *  - pointwise (1×1, stride 1, no pad): the input already is the column
 *    matrix;
 *  - depthwise (one input channel per group, 1-D/2-D): a GEMM with K = 9 is
 *    mostly overhead, so a direct loop over the kernel taps runs instead,
 *    its inner loop a contiguous multiply-add along the output row.
 *
 * 1-D and 2-D convolutions run as 3-D ones with leading unit axes.
 */
#include <stdbool.h>
#include <string.h>

#include "cpu-kernel.h"
#include "blas.h"
#include "nn.h"

void hy_cpu_convolution (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* Sizes of one convolution, spatial axes padded to (d, h, w). */
typedef struct conv_geom {
  int64_t batch, channels, filters, groups;
  int64_t in[3], out[3], k[3], stride[3], dilate[3], pad[3];
  int64_t in_size, out_size, k_size;    /* products over (d, h, w) */
} conv_geom;

static void
conv_geom_init (conv_geom *g, const hy_conv_params *p, const hy_shape *x,
    const hy_shape *y)
{
  const int n = p->n_spatial, lead = 3 - n;
  g->batch = x->dims[0];
  g->channels = x->dims[1];
  g->filters = p->num_filter;
  g->groups = p->num_group;
  g->in_size = g->out_size = g->k_size = 1;
  for (int i = 0; i < 3; i++) {
    const int s = i - lead;     /* axis in the op's own spatial tuple */
    g->in[i] = s >= 0 ? x->dims[2 + s] : 1;
    g->out[i] = s >= 0 ? y->dims[2 + s] : 1;
    g->k[i] = s >= 0 ? p->kernel[s] : 1;
    g->stride[i] = s >= 0 ? p->stride[s] : 1;
    g->dilate[i] = s >= 0 ? p->dilate[s] : 1;
    g->pad[i] = s >= 0 ? p->pad[s] : 0;
    g->in_size *= g->in[i];
    g->out_size *= g->out[i];
    g->k_size *= g->k[i];
  }
}

/* The output positions o in [0, n_out) whose input o·stride − pad + off
 * falls inside [0, size): [*lo, *hi). */
static void
valid_range (int64_t n_out, int64_t stride, int64_t pad, int64_t off,
    int64_t size, int64_t *lo, int64_t *hi)
{
  /* o·stride ≥ pad − off  and  o·stride < size + pad − off */
  const int64_t a = pad - off, b = size + pad - off;
  int64_t l = a > 0 ? (a + stride - 1) / stride : 0;
  int64_t h = b > 0 ? (b + stride - 1) / stride : 0;
  if (h > n_out)
    h = n_out;
  if (l > h)
    l = h;
  *lo = l;
  *hi = h;
}

/* One output row of the column matrix: src is the input row, or NULL when
 * the row lies in the padding. */
static void
im2col_row (float *restrict dst, const float *restrict src, const int64_t ow,
    int64_t lo, int64_t hi, int64_t stride, int64_t first)
{
  if (!src) {
    memset (dst, 0, (size_t) ow * sizeof *dst);
    return;
  }
  memset (dst, 0, (size_t) lo * sizeof *dst);
  if (stride == 1) {
    memcpy (dst + lo, src + lo + first, (size_t) (hi - lo) * sizeof *dst);
  } else {
    for (int64_t o = lo; o < hi; o++)
      dst[o] = src[o * stride + first];
  }
  memset (dst + hi, 0, (size_t) (ow - hi) * sizeof *dst);
}

/* Lowers `channels` input channels (contiguous, starting at x) to the
 * (channels·k_size, out_size) column matrix col. */
static void
im2col (const conv_geom *g, const float *x, int64_t channels, float *col)
{
  const int64_t od = g->out[0], oh = g->out[1], ow = g->out[2];
  float *dst = col;
  for (int64_t c = 0; c < channels; c++) {
    const float *plane = x + c * g->in_size;
    for (int64_t kd = 0; kd < g->k[0]; kd++) {
      for (int64_t kh = 0; kh < g->k[1]; kh++) {
        for (int64_t kw = 0; kw < g->k[2]; kw++) {
          const int64_t off_w = kw * g->dilate[2];
          int64_t lo, hi;
          valid_range (ow, g->stride[2], g->pad[2], off_w, g->in[2], &lo, &hi);
          /* Input column of output column o is o·stride + first. */
          const int64_t first = off_w - g->pad[2];
          for (int64_t d = 0; d < od; d++) {
            const int64_t id = d * g->stride[0] - g->pad[0] + kd * g->dilate[0];
            for (int64_t h = 0; h < oh; h++, dst += ow) {
              const int64_t ih =
                  h * g->stride[1] - g->pad[1] + kh * g->dilate[1];
              const bool inside = id >= 0 && id < g->in[0]
                  && ih >= 0 && ih < g->in[1];
              im2col_row (dst,
                  inside ? plane + (id * g->in[1] + ih) * g->in[2] : NULL,
                  ow, lo, hi, g->stride[2], first);
            }
          }
        }
      }
    }
  }
}

static bool
is_pointwise (const conv_geom *g)
{
  for (int i = 0; i < 3; i++)
    if (g->k[i] != 1 || g->stride[i] != 1 || g->pad[i] != 0)
      return false;
  return true;
}

static void
conv_gemm (hy_cpu_ctx *ctx, const conv_geom *g, const float *x,
    const float *w, const float *bias, float *y)
{
  const int64_t cg = g->channels / g->groups, fg = g->filters / g->groups;
  const int64_t k = cg * g->k_size, n = g->out_size;
  const bool pointwise = is_pointwise (g);
  float *col = pointwise ? NULL
      : hy_cpu_workspace (ctx, (size_t) (k * n) * sizeof (float));

  for (int64_t b = 0; b < g->batch; b++) {
    for (int64_t grp = 0; grp < g->groups; grp++) {
      const float *xg = x + (b * g->channels + grp * cg) * g->in_size;
      float *yg = y + (b * g->filters + grp * fg) * n;
      const float *cols = xg;
      if (!pointwise) {
        im2col (g, xg, cg, col);
        cols = col;
      }
      if (bias)
        hy_fill_rows (yg, bias + grp * fg, fg, n);
      hy_sgemm (false, false, fg, n, k, w + grp * fg * k, cols,
          bias ? 1.0f : 0.0f, yg);
    }
  }
}

/* Depthwise 1-D/2-D: output channel f reads input channel f / multiplier.
 * Each input plane is copied once into a zero-bordered buffer so that the
 * tap loops need no bounds checks. */
static void
conv_depthwise (hy_cpu_ctx *ctx, const conv_geom *g, const float *x,
    const float *w, const float *bias, float *y)
{
  const int64_t mult = g->filters / g->channels;
  const int64_t ih = g->in[1], iw = g->in[2];
  const int64_t ph = ih + 2 * g->pad[1], pw = iw + 2 * g->pad[2];
  const int64_t oh = g->out[1], ow = g->out[2];
  const int64_t kh = g->k[1], kw = g->k[2];
  const int64_t sh = g->stride[1], sw = g->stride[2];
  const int64_t dh = g->dilate[1], dw = g->dilate[2];
  float *padded = hy_cpu_workspace (ctx, (size_t) (ph * pw) * sizeof (float));

  memset (padded, 0, (size_t) (ph * pw) * sizeof (float));
  for (int64_t b = 0; b < g->batch; b++) {
    for (int64_t c = 0; c < g->channels; c++) {
      const float *plane = x + (b * g->channels + c) * g->in_size;
      /* Borders stay zero from the memset: only the interior changes. */
      for (int64_t r = 0; r < ih; r++)
        memcpy (padded + (r + g->pad[1]) * pw + g->pad[2], plane + r * iw,
            (size_t) iw * sizeof (float));

      for (int64_t m = 0; m < mult; m++) {
        const int64_t f = c * mult + m;
        const float *wf = w + f * g->k_size;
        float *yf = y + (b * g->filters + f) * g->out_size;
        const float b0 = bias ? bias[f] : 0.0f;
        for (int64_t r = 0; r < oh; r++) {
          float *restrict orow = yf + r * ow;
          for (int64_t o = 0; o < ow; o++)
            orow[o] = b0;
          for (int64_t i = 0; i < kh; i++) {
            const float *irow = padded + (r * sh + i * dh) * pw;
            for (int64_t j = 0; j < kw; j++) {
              const float wv = wf[i * kw + j];
              const float *restrict src = irow + j * dw;
              if (sw == 1) {
                for (int64_t o = 0; o < ow; o++)
                  orow[o] += wv * src[o];
              } else {
                for (int64_t o = 0; o < ow; o++)
                  orow[o] += wv * src[o * sw];
              }
            }
          }
        }
      }
    }
  }
}

void
hy_cpu_convolution (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_conv_params *p = params;
  conv_geom g;
  conv_geom_init (&g, p, &in[0]->shape, &out[0]->shape);
  const float *bias = p->no_bias ? NULL : in[2]->data;

  if (g.groups == g.channels && g.filters % g.channels == 0
      && p->n_spatial <= 2 && !is_pointwise (&g))
    conv_depthwise (ctx, &g, in[0]->data, in[1]->data, bias, out[0]->data);
  else
    conv_gemm (ctx, &g, in[0]->data, in[1]->data, bias, out[0]->data);

  if (p->fused_act == HY_FUSED_ACT_RELU)
    hy_relu_inplace (out[0]->data, hy_shape_numel (&out[0]->shape));
}
