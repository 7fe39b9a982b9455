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
 *    its inner loop a contiguous multiply-add along the output row (3×3,
 *    5×5 and 7×7 on AVX-512: depthwise-avx512.h).
 *
 * 1-D and 2-D convolutions run as 3-D ones with leading unit axes.
 *
 * A fused epilogue (bias, BatchNorm, residual, activation: epilogue.h) runs
 * on each block of output right after the GEMM or the depthwise plane that
 * wrote it; without one, the bias is spread into the output before the
 * GEMM.
 *
 * Where the CPU has AVX-512, the plan packs a GEMM convolution's weights
 * once (conv-packed.h) and its products run on the packed kernel
 * (sgemm-packed.h) instead of OpenBLAS, which would repack them on every
 * call; the bias then goes in with the epilogue.  A 2-D k×k one on a
 * large map then skips the lowering too: the kernel builds the column
 * matrix's panels from the input as it goes (im2col-panel.h).
 *
 * Threads split independent outputs only (blocks of output positions or of
 * filters, depthwise planes), never a sum.  (OpenBLAS picks its kernels by
 * the shape of each call, so a block's products may still round in the
 * last bit unlike the whole's.)
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/conv/blas.h"
#include "kernels/cpu/conv/conv-packed.h"
#include "kernels/cpu/conv/depthwise-avx512.h"
#include "kernels/cpu/epilogue.h"
#include "kernels/cpu/conv/im2col-avx512.h"
#include "kernels/cpu/conv/im2col-panel.h"
#include "kernels/cpu/conv/sgemm-packed.h"
#include "kernels/cpu/window.h"
#include "kernels/params/nn.h"

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
  if (g->k[0] == 1 && g->out[0] == 1 && g->in[0] == 1
      && hy_im2col_tap_2d_supported (g->stride[2], ow)) {
    /* 2-D, strided or on a small map: one tap's rows at a time, masked
     * (im2col-avx512.h). */
    const int64_t rows = r1 - r0;
    for (int64_t c = 0; c < channels; c++)
      for (int64_t kh = 0; kh < g->k[1]; kh++)
        for (int64_t kw = 0; kw < g->k[2]; kw++, dst += rows * ow)
          hy_im2col_tap_2d (dst, x + c * g->in_size, g->in[1], g->in[2], ow,
              r0, r1, g->stride[1], kh * g->dilate[1] - g->pad[1],
              g->stride[2], kw * g->dilate[2] - g->pad[2]);
    return;
  }
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

/* Narrower blocks than this many output columns are not worth a thread
 * each: splitting the filters of one product shares the work better. */
#define MIN_THREAD_BLOCK_COLS 64

/* A convolution lowered to GEMMs: one per (image, group, block of output
 * rows) — an "item".  Items run in parallel, each on its thread's slice of
 * the im2col workspace, when there are enough of them to share out
 * evenly; otherwise one at a time, each product split over the threads. */
typedef struct conv_job {
  hy_cpu_ctx *ctx;
  const conv_geom *g;
  const float *x, *w, *bias, *bn, *res;
  const float *packed;                  /* NULL: OpenBLAS */
  int packed_layout;
  int64_t packed_group;                 /* floats per group in packed */
  const hy_fused_epilogue *fused;
  float *y;
  bool epilogue, pointwise;
  /* The packed kernel builds B's panels from the input itself
   * (im2col-panel.h): col is then each thread's panel buffer. */
  bool implicit, parallel_items;
  int64_t cg, fg, k, n, ow, out_rows;
  int64_t block_rows, n_blocks;         /* per image and group */
  float *col;
  size_t col_stride;                    /* bytes between threads' slices */
} conv_job;

/* The fused epilogue on one block of a product's output. */
typedef struct conv_epilogue {
  const hy_fused_epilogue *fused;
  float *c;
  const float *res;
  int64_t ldc;
  hy_epilogue_channels ch;
} conv_epilogue;

/* e for the packed kernel's tiles to apply in registers, in *pe, or NULL
 * where they cannot (another activation: conv_epilogue_block runs it). */
static const hy_packed_epilogue *
packed_epilogue_of (const conv_epilogue *e, hy_packed_epilogue *pe)
{
  if (!hy_packed_epilogue_fits (e->fused->act))
    return NULL;
  *pe = (hy_packed_epilogue) {
    e->fused->act, e->fused->alpha, e->fused->beta, e->ch.bias, e->ch.bn,
    e->ch.bn_stride, e->res,
  };
  return pe;
}

static void
conv_epilogue_block (void *arg, int64_t row0, int64_t rows, int64_t col0,
    int64_t cols)
{
  const conv_epilogue *e = arg;
  const int64_t off = row0 * e->ldc + col0;
  const hy_epilogue_channels ch = hy_epilogue_channels_from (&e->ch, row0);
  hy_epilogue_rows (e->fused, e->c + off, e->res ? e->res + off : NULL,
      rows, cols, e->ldc, &ch);
}

/* Lowers channels [begin, end) of one block (see im2col). */
typedef struct im2col_job {
  const conv_geom *g;
  const float *x;
  int64_t r0, r1;
  float *col;
} im2col_job;

static void
im2col_channels (void *arg, int64_t begin, int64_t end, int thread)
{
  const im2col_job *j = arg;
  const int64_t rows_per_channel = j->g->k_size * (j->r1 - j->r0)
      * j->g->out[2];
  im2col (j->g, j->x + begin * j->g->in_size, end - begin, j->r0, j->r1,
      j->col + begin * rows_per_channel);
}

/* One item.  Outside a parallel loop its lowering and its product use
 * every thread; inside one, both run on the calling thread. */
static void
conv_item (const conv_job *j, int64_t item, float *col)
{
  const conv_geom *g = j->g;
  const int64_t image = item / j->n_blocks, block = item % j->n_blocks;
  const int64_t b = image / g->groups, grp = image % g->groups;
  const float *xg = j->x + (b * g->channels + grp * j->cg) * g->in_size;
  float *yg = j->y + (b * g->filters + grp * j->fg) * j->n;
  const float *bg = j->bias ? j->bias + grp * j->fg : NULL;
  const int64_t r0 = block * j->block_rows;
  const int64_t r1 = r0 + j->block_rows < j->out_rows
      ? r0 + j->block_rows : j->out_rows;
  const int64_t cols = (r1 - r0) * j->ow;
  /* This block's columns of the output rows: stride n apart. */
  float *c = yg + r0 * j->ow;

  /* The bias first, for a GEMM with beta = 1. */
  if (bg && !j->epilogue)
    for (int64_t f = 0; f < j->fg; f++)
      for (int64_t i = 0; i < cols; i++)
        c[f * j->n + i] = bg[f];
  const float *lowered = xg;
  const hy_im2col_panel panels = {
    .x = xg, .in_h = g->in[1], .in_w = g->in[2], .out_w = g->out[2],
    .first_pos = r0 * j->ow, .k_h = g->k[1], .k_w = g->k[2],
    .stride_h = g->stride[1], .stride_w = g->stride[2],
    .dilate_h = g->dilate[1], .dilate_w = g->dilate[2],
    .pad_h = g->pad[1], .pad_w = g->pad[2], .scratch = (char *) col,
    /* Split by hy_gemm_run, each thread has its own; inside a loop over
     * items, the product is not split. */
    .scratch_stride = j->parallel_items ? 0 : j->col_stride,
  };
  if (j->implicit)
    lowered = NULL;
  else if (!j->pointwise) {
    const im2col_job ij = { g, xg, r0, r1, col };
    hy_cpu_parallel_for (j->ctx, j->cg,
        hy_cpu_grain (g->k_size * cols), im2col_channels, (void *) &ij);
    lowered = col;
  }
  const conv_epilogue e = {
    j->fused, c, j->res ? j->res + (c - j->y) : NULL, j->n,
    { bg, j->bn ? j->bn + grp * j->fg : NULL, g->filters },
  };
  hy_packed_epilogue pe;
  const hy_gemm gm = {
    .m = j->fg, .n = cols, .k = j->k, .a = j->w + grp * j->fg * j->k,
    .b = lowered, .beta = bg && !j->epilogue ? 1.0f : 0.0f, .c = c,
    .ldc = j->n, .then = j->epilogue ? conv_epilogue_block : NULL,
    .then_arg = (void *) &e,
    .packed_a = j->packed ? j->packed + grp * j->packed_group : NULL,
    .packed_layout = j->packed_layout,
    .b_panel = j->implicit ? hy_im2col_panel_get : NULL,
    .b_panel_arg = (void *) &panels,
    .packed_epi = j->epilogue && j->packed ? packed_epilogue_of (&e, &pe)
        : NULL,
  };
  hy_gemm_run (j->ctx, &gm);
}

static void
conv_items (void *arg, int64_t begin, int64_t end, int thread)
{
  const conv_job *j = arg;
  float *col = j->col ? (float *) ((char *) j->col + thread * j->col_stride)
      : NULL;
  for (int64_t i = begin; i < end; i++)
    conv_item (j, i, col);
}

/* Whether `n_items` items share out evenly enough over the threads. */
static bool
items_share_out (int64_t n_items, int threads)
{
  return n_items % threads == 0 || n_items >= 4 * threads;
}

struct hy_conv_packed {
  hy_conv_params p;
  hy_packed_layout layout;
  bool implicit;                /* B's panels from the input, no im2col */
  hy_shape in_shape, out_shape; /* as set up */
  float *weights;               /* each group's, packed */
};

/* Whether the packed kernel can take g's column matrix a panel at a time
 * from the input (im2col-panel.h) rather than lowered beforehand: 2-D,
 * column stride 1 or 2, rows wide enough for its panels. */
static bool
implicit_im2col_runs (const conv_geom *g, hy_packed_layout layout)
{
  return !is_pointwise (g)
      && g->k[0] == 1 && g->in[0] == 1 && g->out[0] == 1
      && hy_im2col_panel_supported (g->stride[2], g->out[2],
          g->in[1] * g->in[2], layout == HY_PACKED_NARROW ? 8 : 48);
}

/* Wherever it runs: measured one layer at a time against im2col + the
 * same kernel (docs/PERFORMANCE.md, "Implicit im2col"; Zen 5, one
 * thread), it was 1.03-1.19× on ResNet's and MobileNetV2's k×k layers
 * from 112×112 down to 7×7 maps, strided or not; in ResNet-18's profile
 * each stage ran 1.06-1.18× faster and the first layer (7×7/2 on 3
 * channels) level, 0.98-1.02× from run to run.  No layer was slower
 * beyond the runs' noise, so there is nothing to choose yet. */
static bool
implicit_im2col_pays (const conv_geom *g, hy_packed_layout layout)
{
  return implicit_im2col_runs (g, layout);
}

/* packed: the weights as hy_conv_packed_new packed them, or NULL. */
static void
conv_gemm (hy_cpu_ctx *ctx, const conv_geom *g, const float *x,
    const float *w, const hy_conv_packed *packed, const float *bias,
    const hy_fused_epilogue *fused, const float *bn, const float *res,
    float *y)
{
  const int64_t cg = g->channels / g->groups, fg = g->filters / g->groups;
  conv_job j = {
    .ctx = ctx, .g = g, .x = x, .w = w, .bias = bias, .bn = bn, .res = res,
    .packed = packed ? packed->weights : NULL,
    .packed_layout = packed ? packed->layout : HY_PACKED_WIDE,
    .packed_group = packed ? (int64_t) hy_packed_a_floats (packed->layout,
        fg, cg * g->k_size) : 0,
    .fused = fused, .y = y,
    /* The packed kernel runs the epilogue on blocks still in cache: the
     * bias goes in there rather than in a pass of its own before. */
    .epilogue = hy_epilogue_is_set (fused) || (packed && bias),
    .pointwise = is_pointwise (g), .implicit = packed && packed->implicit,
    .cg = cg, .fg = fg,
    .k = cg * g->k_size, .n = g->out_size, .ow = g->out[2],
    .out_rows = g->out[0] * g->out[1],
  };
  if (j.out_rows == 0 || j.ow == 0 || fg == 0)
    return;
  const int threads = hy_cpu_n_threads (ctx);
  const int64_t images = g->batch * g->groups;
  const int64_t macs = images * fg * j.n * j.k;

  /* The input already is the column matrix of a pointwise convolution:
   * one item per image and group. */
  int64_t max_rows = j.pointwise || j.implicit ? j.out_rows
      : IM2COL_BLOCK_FLOATS / (j.k * j.ow);
  max_rows = max_rows < 1 ? 1 : max_rows > j.out_rows ? j.out_rows : max_rows;
  j.n_blocks = (j.out_rows + max_rows - 1) / max_rows;
  bool parallel_items = false;
  if (threads > 1 && macs >= HY_GEMM_SPLIT_MIN_MACS) {
    int64_t blocks = j.n_blocks;
    /* Cut the rows finer until the items share out evenly. */
    while (!j.pointwise && !items_share_out (images * blocks, threads)
        && blocks < j.out_rows)
      blocks++;
    const int64_t cols = (j.out_rows + blocks - 1) / blocks * j.ow;
    if (items_share_out (images * blocks, threads)
        && (cols >= MIN_THREAD_BLOCK_COLS || images >= threads)) {
      parallel_items = true;
      j.n_blocks = blocks;
    }
  }
  j.block_rows = (j.out_rows + j.n_blocks - 1) / j.n_blocks;
  j.n_blocks = (j.out_rows + j.block_rows - 1) / j.block_rows;

  j.parallel_items = parallel_items;
  const size_t col_bytes = (size_t) (j.k * j.block_rows * j.ow)
      * sizeof (float);
  if (j.pointwise)
    j.col = NULL;
  else if (j.implicit)
    j.col = hy_cpu_workspace_per_thread (ctx,
        hy_im2col_panel_scratch_bytes (g->k[1], g->k[2]), &j.col_stride);
  else if (parallel_items)
    j.col = hy_cpu_workspace_per_thread (ctx, col_bytes, &j.col_stride);
  else
    j.col = hy_cpu_workspace (ctx, col_bytes);

  const int64_t n_items = images * j.n_blocks;
  if (parallel_items)
    hy_cpu_parallel_each (ctx, n_items, conv_items, &j);
  else
    conv_items (&j, 0, n_items, 0);
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
 * row loops need no bounds checks.  Planes run in parallel, each thread
 * with its own buffer. */
typedef struct depthwise_job {
  const conv_geom *g;
  const float *x, *w, *bias, *bn, *res;
  const hy_fused_epilogue *fused;
  float *y;
  float *padded;
  size_t padded_stride;         /* bytes between threads' buffers */
} depthwise_job;

/* Input planes [begin, end) of (batch · channels). */
static void
depthwise_planes (void *arg, int64_t begin, int64_t end, int thread)
{
  const depthwise_job *j = arg;
  const conv_geom *g = j->g;
  const bool epilogue = hy_epilogue_is_set (j->fused);
  const int64_t mult = g->filters / g->channels;
  const int64_t ih = g->in[1], iw = g->in[2];
  const int64_t ph = ih + 2 * g->pad[1], pw = iw + 2 * g->pad[2];
  const int64_t oh = g->out[1], ow = g->out[2];
  const bool is_3x3 = g->k[1] == 3 && g->k[2] == 3 && g->dilate[1] == 1
      && g->dilate[2] == 1;
  float *padded = (float *) ((char *) j->padded
      + (size_t) thread * j->padded_stride);
  /* Square odd kernels on AVX-512: the plane as it lies, the epilogue in
   * registers. */
  hy_depthwise dw = {
    .kernel = g->k[1], .in_h = ih, .in_w = iw, .out_h = oh, .out_w = ow,
    .stride_h = g->stride[1], .stride_w = g->stride[2],
    .pad_h = g->pad[1], .pad_w = g->pad[2],
  };
  const bool direct = g->k[1] == g->k[2] && g->dilate[1] == 1
      && g->dilate[2] == 1 && hy_depthwise_supported (&dw);
  const bool direct_epilogue = direct && hy_depthwise_fuses (j->fused);

  /* Borders stay zero from here on: only the interior changes. */
  if (!direct)
    memset (padded, 0, (size_t) (ph * pw) * sizeof (float));
  for (int64_t p = begin; p < end; p++) {
    const int64_t b = p / g->channels, c = p % g->channels;
    const float *plane = j->x + p * g->in_size;
    for (int64_t r = 0; r < ih && !direct; r++)
      memcpy (padded + (r + g->pad[1]) * pw + g->pad[2], plane + r * iw,
          (size_t) iw * sizeof (float));

    for (int64_t m = 0; m < mult; m++) {
      const int64_t f = c * mult + m;
      const float *wf = j->w + f * g->k_size;
      float *yf = j->y + (b * g->filters + f) * g->out_size;
      const float b0 = j->bias ? j->bias[f] : 0.0f;
      if (direct) {
        const hy_depthwise_epilogue de = {
          j->fused->act, j->fused->alpha, j->fused->beta, j->bn != NULL,
          j->bn ? j->bn[f] : 0.0f, j->bn ? j->bn[f + g->filters] : 0.0f,
          j->bn ? j->bn[f + 2 * g->filters] : 0.0f,
          j->res ? j->res + (yf - j->y) : NULL,
        };
        hy_depthwise_plane (&dw, yf, plane, wf, b0,
            direct_epilogue ? &de : NULL);
        if (direct_epilogue)
          continue;
      }
      for (int64_t r = 0; r < oh && !direct; r++) {
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
          NULL, j->bn ? j->bn + f : NULL, g->filters,
        };
        hy_epilogue_rows (j->fused, yf, j->res ? j->res + (yf - j->y) : NULL,
            1, g->out_size, g->out_size, &ch);
      }
    }
  }
}

static void
conv_depthwise (hy_cpu_ctx *ctx, const conv_geom *g, const float *x,
    const float *w, const float *bias, const hy_fused_epilogue *fused,
    const float *bn, const float *res, float *y)
{
  const int64_t ph = g->in[1] + 2 * g->pad[1], pw = g->in[2] + 2 * g->pad[2];
  depthwise_job j = {
    g, x, w, bias, bn, res, fused, y, NULL, 0,
  };
  j.padded = hy_cpu_workspace_per_thread (ctx,
      (size_t) (ph * pw) * sizeof (float), &j.padded_stride);
  /* A plane's work: every output of its filters, one multiply-add per
   * tap. */
  const int64_t plane_macs = g->filters / g->channels * g->out_size
      * g->k_size;
  hy_cpu_parallel_for (ctx, g->batch * g->channels,
      hy_cpu_grain (plane_macs), depthwise_planes, &j);
}

/* The depthwise path copies each plane into a padded one; a pad out of
 * all proportion to the plane (a model may ask for 2^30) would make that
 * copy gigabytes, while im2col reads padding without storing it. */
static bool
padded_plane_fits (const conv_geom *g)
{
  const double plane = (double) g->in[1] * g->in[2];
  const double padded = (double) (g->in[1] + 2 * g->pad[1])
      * (double) (g->in[2] + 2 * g->pad[2]);
  return padded <= 4 * plane + 4096;
}

/* Whether conv.c runs g with its depthwise loop rather than GEMMs. */
static bool
takes_depthwise_loop (const hy_conv_params *p, const conv_geom *g)
{
  return g->groups == g->channels && g->filters % g->channels == 0
      && p->n_spatial <= 2 && !is_pointwise (g) && padded_plane_fits (g);
}

bool
hy_cpu_convolution_is_depthwise (const hy_conv_params *p, const hy_tensor *x,
    const hy_tensor *y)
{
  conv_geom g;
  conv_geom_init (&g, p, &x->shape, &y->shape);
  return takes_depthwise_loop (p, &g);
}

void
hy_cpu_convolution (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_conv_params *p = params;
  conv_geom g;
  conv_geom_init (&g, p, &in[0]->shape, &out[0]->shape);
  const hy_epilogue_operands o = hy_epilogue_operands_of (p->no_bias,
      &p->fused, in);

  if (takes_depthwise_loop (p, &g))
    conv_depthwise (ctx, &g, in[0]->data, in[1]->data, o.bias, &p->fused,
        o.bn, o.res, out[0]->data);
  else
    conv_gemm (ctx, &g, in[0]->data, in[1]->data, NULL, o.bias, &p->fused,
        o.bn, o.res, out[0]->data);
}

/* The narrow tiles for maps of up to this many positions: 7×7 and 14×14,
 * ResNet's and MobileNet's last stages.  Measured on Zen 5, one thread
 * (docs/PERFORMANCE.md, "Packed weights"): on 7×7 maps the narrow tiles
 * ran at 240-263 GFLOP/s where the wide ones computed 64 columns for 49
 * (176-198), on 14×14 3-6 % faster, on 28×28 and more 1-15 % slower. */
#define NARROW_MAX_COLS 256
/* ... but on 14×14 maps (more than NARROW_ALWAYS_COLS positions) only for
 * large weights.  Measured on a Xeon, two threads, in whole forwards
 * (docs/PERFORMANCE.md, "Issue 11 on the Xeon, continued"): MobileNetV2's
 * 14×14 products (at most 96 × 576 weights) ran 10-20 % faster with the
 * wide tiles and the forward 3 % faster, while ResNet-50's (256 × 1024)
 * ran 10-20 % slower with them. */
#define NARROW_ALWAYS_COLS 64
#define NARROW_MIN_WEIGHTS (128 * 1024)

static hy_packed_layout
packed_layout_for (const conv_geom *g)
{
  const int64_t weights = g->filters / g->groups
      * (g->channels / g->groups) * g->k_size;
  const bool narrow = g->out_size <= NARROW_ALWAYS_COLS
      || (g->out_size <= NARROW_MAX_COLS && weights >= NARROW_MIN_WEIGHTS);
  return narrow ? HY_PACKED_NARROW : HY_PACKED_WIDE;
}

bool
hy_conv_packed_runs (const hy_conv_params *p, const hy_tensor *const *in,
    int n_in, const hy_tensor *out, gboolean weights_const)
{
  if (!hy_packed_gemm_supported () || !weights_const || n_in < 2)
    return false;
  conv_geom g;
  conv_geom_init (&g, p, &in[0]->shape, &out->shape);
  /* The depthwise loop has nothing to pack. */
  return !takes_depthwise_loop (p, &g) && g.filters != 0 && g.channels != 0;
}

hy_conv_packed *
hy_conv_packed_new (const hy_conv_params *p, const hy_tensor *const *in,
    int n_in, const hy_tensor *out, gboolean weights_const)
{
  if (!hy_conv_packed_runs (p, in, n_in, out, weights_const))
    return NULL;
  conv_geom g;
  conv_geom_init (&g, p, &in[0]->shape, &out->shape);
  const int64_t cg = g.channels / g.groups, fg = g.filters / g.groups;
  const int64_t k = cg * g.k_size;
  hy_conv_packed *conv = g_new0 (hy_conv_packed, 1);
  conv->p = *p;
  conv->in_shape = in[0]->shape;
  conv->out_shape = out->shape;
  conv->layout = packed_layout_for (&g);
  conv->implicit = implicit_im2col_pays (&g, conv->layout);
  const size_t group_floats = hy_packed_a_floats (conv->layout, fg, k);
  conv->weights = aligned_alloc (64, ((group_floats * (size_t) g.groups
              * sizeof (float)) + 63) & ~(size_t) 63);
  if (!conv->weights) {
    g_free (conv);
    return NULL;                /* OpenBLAS then runs it as before */
  }
  for (int64_t grp = 0; grp < g.groups; grp++)
    hy_packed_a_pack (conv->layout, conv->weights + grp * group_floats, fg, k,
        in[1]->data + grp * fg * k, k);
  return conv;
}

bool
hy_conv_packed_set_implicit (hy_conv_packed *conv, bool on)
{
  conv_geom g;
  hy_shape x = conv->in_shape, y = conv->out_shape;
  conv_geom_init (&g, &conv->p, &x, &y);
  if (on && !implicit_im2col_runs (&g, conv->layout))
    return false;
  conv->implicit = on;
  return true;
}

const char *
hy_conv_packed_kernel_name (const hy_conv_packed *conv)
{
  return conv->implicit ? "packed-implicit" : "packed";
}

void
hy_conv_packed_free (hy_conv_packed *conv)
{
  if (!conv)
    return;
  free (conv->weights);
  g_free (conv);
}

void
hy_conv_packed_pointwise_cols (const hy_conv_packed *conv, const float *x,
    int64_t ldx, int64_t cols, const float *bias, const float *bn,
    const float *res, float *y, int64_t ldy)
{
  const hy_conv_params *p = &conv->p;
  const int64_t channels = conv->in_shape.dims[1];
  const conv_epilogue e = {
    &p->fused, y, res, ldy, { bias, bn, p->num_filter },
  };
  /* The same tiles and epilogue as conv_gemm's product: the same sums. */
  const bool epilogue = hy_epilogue_is_set (&p->fused) || bias;
  hy_packed_epilogue pe;
  hy_packed_gemm (conv->layout, conv->weights, p->num_filter, channels, 0,
      p->num_filter, x, ldx, cols, y, ldy, false, 0,
      epilogue ? conv_epilogue_block : NULL, (void *) &e,
      epilogue ? packed_epilogue_of (&e, &pe) : NULL);
}

void
hy_cpu_convolution_packed (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_conv_packed *conv = params;
  const hy_conv_params *p = &conv->p;
  conv_geom g;
  conv_geom_init (&g, p, &in[0]->shape, &out[0]->shape);
  const hy_epilogue_operands o = hy_epilogue_operands_of (p->no_bias,
      &p->fused, in);
  conv_gemm (ctx, &g, in[0]->data, in[1]->data, conv, o.bias,
      &p->fused, o.bn, o.res, out[0]->data);
}
