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
 *
 * A fused epilogue (bias, BatchNorm, residual, activation: epilogue.h) runs
 * on each block of output right after the GEMM or the depthwise plane that
 * wrote it; without one, the bias is spread into the output before the
 * GEMM.
 */
#include <stdbool.h>
#include <string.h>

#include "cpu-kernel.h"
#include "blas.h"
#include "epilogue.h"
#include "window.h"
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
 * column matrix of output rows [r0, r1) (rows over (d, h) flattened):
 * (channels·k_size, (r1 − r0)·out_w). */
static void
im2col (const conv_geom *g, const float *x, int64_t channels, int64_t r0,
    int64_t r1, float *col)
{
  const int64_t oh = g->out[1], ow = g->out[2];
  float *dst = col;
  for (int64_t c = 0; c < channels; c++) {
    const float *plane = x + c * g->in_size;
    for (int64_t kd = 0; kd < g->k[0]; kd++) {
      for (int64_t kh = 0; kh < g->k[1]; kh++) {
        for (int64_t kw = 0; kw < g->k[2]; kw++) {
          const int64_t off_w = kw * g->dilate[2];
          int64_t lo, hi;
          hy_window_valid_range (ow, g->stride[2], g->pad[2], off_w, g->in[2],
              &lo, &hi);
          /* Input column of output column o is o·stride + first. */
          const int64_t first = off_w - g->pad[2];
          for (int64_t r = r0; r < r1; r++, dst += ow) {
            const int64_t d = r / oh, h = r % oh;
            const int64_t id = d * g->stride[0] - g->pad[0] + kd * g->dilate[0];
            const int64_t ih = h * g->stride[1] - g->pad[1] + kh * g->dilate[1];
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

static bool
is_pointwise (const conv_geom *g)
{
  for (int i = 0; i < 3; i++)
    if (g->k[i] != 1 || g->stride[i] != 1 || g->pad[i] != 0)
      return false;
  return true;
}

/* Floats of lowered input per GEMM.  The input is lowered a block of
 * output rows at a time: the block is read back (packed by OpenBLAS) while
 * it is still in cache, and the workspace stays small however large the
 * image (a 3×3, 64-channel 1080p layer would need 4.8 GB at once).  Wide
 * enough blocks keep the weights' repacking per block negligible. */
#define IM2COL_BLOCK_FLOATS (512 * 1024)

static void
conv_gemm (hy_cpu_ctx *ctx, const conv_geom *g, const float *x,
    const float *w, const float *bias, const hy_fused_epilogue *fused,
    const float *bn, const float *res, float *y)
{
  const bool epilogue = hy_epilogue_is_set (fused);
  const int64_t cg = g->channels / g->groups, fg = g->filters / g->groups;
  const int64_t k = cg * g->k_size, n = g->out_size, ow = g->out[2];
  const int64_t out_rows = g->out[0] * g->out[1];
  const bool pointwise = is_pointwise (g);
  int64_t block_rows = IM2COL_BLOCK_FLOATS / (k * ow);
  if (block_rows < 1)
    block_rows = 1;
  if (block_rows > out_rows)
    block_rows = out_rows;
  float *col = pointwise ? NULL : hy_cpu_workspace (ctx,
      (size_t) (k * block_rows * ow) * sizeof (float));

  for (int64_t b = 0; b < g->batch; b++) {
    for (int64_t grp = 0; grp < g->groups; grp++) {
      const float *xg = x + (b * g->channels + grp * cg) * g->in_size;
      const float *wg = w + grp * fg * k;
      float *yg = y + (b * g->filters + grp * fg) * n;
      const float *bg = bias ? bias + grp * fg : NULL;
      const float *rg = res ? res + (yg - y) : NULL;
      const hy_epilogue_channels ch = {
        bg, bn ? bn + grp * fg : NULL, g->filters,
      };
      if (bias && !epilogue)
        hy_fill_rows (yg, bg, fg, n);
      const float beta = bias && !epilogue ? 1.0f : 0.0f;
      if (pointwise) {
        hy_sgemm (false, false, fg, n, k, wg, xg, beta, yg);
        if (epilogue)
          hy_epilogue_rows (fused, yg, rg, fg, n, n, &ch);
        continue;
      }
      for (int64_t r0 = 0; r0 < out_rows; r0 += block_rows) {
        const int64_t r1 = r0 + block_rows < out_rows
            ? r0 + block_rows : out_rows;
        im2col (g, xg, cg, r0, r1, col);
        /* This block's columns of the output rows: stride n apart. */
        hy_sgemm_ldc (false, false, fg, (r1 - r0) * ow, k, wg, col, beta,
            yg + r0 * ow, n);
        if (epilogue)
          hy_epilogue_rows (fused, yg + r0 * ow, rg ? rg + r0 * ow : NULL,
              fg, (r1 - r0) * ow, n, &ch);
      }
    }
  }
}

/* One output row of a depthwise 3×3 convolution without dilation: the
 * nine taps are summed in registers in one pass over the row.  rows points
 * at the three padded input rows the output row reads. */
HY_CPU_VECTOR_CLONES static void
depthwise_row_3x3 (float *restrict out, const float *restrict r0,
    const float *restrict r1, const float *restrict r2,
    const float *restrict w, float bias, int64_t ow, int64_t stride)
{
  const float w00 = w[0], w01 = w[1], w02 = w[2];
  const float w10 = w[3], w11 = w[4], w12 = w[5];
  const float w20 = w[6], w21 = w[7], w22 = w[8];
  /* Constant strides let gcc vectorise the loads. */
  if (stride == 1) {
    for (int64_t o = 0; o < ow; o++)
      out[o] = bias + w00 * r0[o] + w01 * r0[o + 1] + w02 * r0[o + 2]
          + w10 * r1[o] + w11 * r1[o + 1] + w12 * r1[o + 2]
          + w20 * r2[o] + w21 * r2[o + 1] + w22 * r2[o + 2];
  } else if (stride == 2) {
    for (int64_t o = 0; o < ow; o++) {
      const int64_t i = 2 * o;
      out[o] = bias + w00 * r0[i] + w01 * r0[i + 1] + w02 * r0[i + 2]
          + w10 * r1[i] + w11 * r1[i + 1] + w12 * r1[i + 2]
          + w20 * r2[i] + w21 * r2[i + 1] + w22 * r2[i + 2];
    }
  } else {
    for (int64_t o = 0; o < ow; o++) {
      const int64_t i = stride * o;
      out[o] = bias + w00 * r0[i] + w01 * r0[i + 1] + w02 * r0[i + 2]
          + w10 * r1[i] + w11 * r1[i + 1] + w12 * r1[i + 2]
          + w20 * r2[i] + w21 * r2[i + 1] + w22 * r2[i + 2];
    }
  }
}

/* One output row of any other depthwise window: one multiply-add pass
 * along the row per tap. */
HY_CPU_VECTOR_CLONES static void
depthwise_row (float *restrict out, const float *padded, int64_t pw,
    const conv_geom *g, const float *restrict w, float bias, int64_t row)
{
  const int64_t ow = g->out[2], sw = g->stride[2];
  for (int64_t o = 0; o < ow; o++)
    out[o] = bias;
  for (int64_t i = 0; i < g->k[1]; i++) {
    const float *irow = padded + (row * g->stride[1] + i * g->dilate[1]) * pw;
    for (int64_t j = 0; j < g->k[2]; j++) {
      const float wv = w[i * g->k[2] + j];
      const float *restrict src = irow + j * g->dilate[2];
      if (sw == 1) {
        for (int64_t o = 0; o < ow; o++)
          out[o] += wv * src[o];
      } else {
        for (int64_t o = 0; o < ow; o++)
          out[o] += wv * src[o * sw];
      }
    }
  }
}

/* Depthwise 1-D/2-D: output channel f reads input channel f / multiplier.
 * Each input plane is copied once into a zero-bordered buffer so that the
 * row loops need no bounds checks. */
static void
conv_depthwise (hy_cpu_ctx *ctx, const conv_geom *g, const float *x,
    const float *w, const float *bias, const hy_fused_epilogue *fused,
    const float *bn, const float *res, float *y)
{
  const bool epilogue = hy_epilogue_is_set (fused);
  const int64_t mult = g->filters / g->channels;
  const int64_t ih = g->in[1], iw = g->in[2];
  const int64_t ph = ih + 2 * g->pad[1], pw = iw + 2 * g->pad[2];
  const int64_t oh = g->out[1], ow = g->out[2];
  const bool is_3x3 = g->k[1] == 3 && g->k[2] == 3 && g->dilate[1] == 1
      && g->dilate[2] == 1;
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
          if (is_3x3) {
            const float *r0 = padded + r * g->stride[1] * pw;
            depthwise_row_3x3 (yf + r * ow, r0, r0 + pw, r0 + 2 * pw, wf, b0,
                ow, g->stride[2]);
          } else {
            depthwise_row (yf + r * ow, padded, pw, g, wf, b0, r);
          }
        }
        /* The taps started from the bias: only the rest is left, and the
         * plane is still in cache. */
        if (epilogue) {
          const hy_epilogue_channels ch = {
            NULL, bn ? bn + f : NULL, g->filters,
          };
          hy_epilogue_rows (fused, yf, res ? res + (yf - y) : NULL, 1,
              g->out_size, g->out_size, &ch);
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
  const float *bn = p->fused.batch_norm ? in[p->no_bias ? 2 : 3]->data
      : NULL;
  const float *res = p->fused.residual ? in[n_in - 1]->data : NULL;

  if (g.groups == g.channels && g.filters % g.channels == 0
      && p->n_spatial <= 2 && !is_pointwise (&g))
    conv_depthwise (ctx, &g, in[0]->data, in[1]->data, bias, &p->fused, bn,
        res, out[0]->data);
  else
    conv_gemm (ctx, &g, in[0]->data, in[1]->data, bias, &p->fused, bn, res,
        out[0]->data);
}
