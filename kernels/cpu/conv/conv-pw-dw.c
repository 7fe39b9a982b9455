/*
 * conv-pw-dw.c — see conv-pw-dw.h.
 */
#include "kernels/cpu/conv/conv-pw-dw.h"

#include <string.h>

#include "kernels/cpu/conv/conv-packed.h"
#include "kernels/cpu/conv/sgemm-packed.h"
#include "kernels/cpu/conv/depthwise-avx512.h"
#include "kernels/params/nn.h"

struct hy_conv_pw_dw {
  /* The expansion's weights, packed; NULL where the chain starts at the
   * depthwise layer (hy_conv_pw_dw_new), which then reads its data from
   * the call's input rows themselves. */
  hy_conv_packed *pw;
  hy_fused_epilogue dw_fused;
  /* Where each operand is in the fused call's `in`, or -1. */
  int pw_bias, pw_bn, dw_weight, dw_bias, dw_bn, dw_res;
  hy_depthwise geom;            /* second's, for whole planes */
  int64_t channels;             /* the call's input channels */
  int64_t filters;              /* the depthwise layer's channels */
  int64_t band_rows;            /* second's output rows per band */
  int64_t buffer_rows;          /* expansion rows a band reads, at most */
  /* A third call taken in (hy_conv_pw_dw_take_projection), or NULL: the
   * projection reading the depthwise layer's output, and where its
   * operands are in `in`. */
  hy_conv_packed *proj;
  int proj_bias, proj_bn, proj_res;
  int64_t proj_filters;
};

/* The expansion's rows a band keeps in the thread's buffer, all its
 * channels: small enough to stay in a core's L2 (1 MB on Zen 5, 2 MB on
 * the Xeons here) beside the depthwise layer's output, and large enough
 * for long products and whole 4-row depthwise blocks.  MobileNetV2 with
 * every pair fused, one thread, Xeon (docs/PERFORMANCE.md, "Pointwise +
 * depthwise"): 6.96 ms a forward with 128 KiB, 5.57 with 512 KiB, 5.61
 * with 1 MiB. */
#define BAND_BUFFER_BYTES (512 * 1024)

/* The depthwise layer's output rows per band: as many as the expansion
 * rows they read, all `filters` channels, fit in BAND_BUFFER_BYTES. */
static int64_t
band_rows_of (const hy_depthwise *g, int64_t filters)
{
  const int64_t k = g->kernel, s = g->stride_h;
  const int64_t row_bytes = filters * g->in_w * (int64_t) sizeof (float);
  const int64_t rows = MAX (k, BAND_BUFFER_BYTES / MAX (row_bytes, 1));
  return MIN ((rows - k) / s + 1, g->out_h);
}

/* A call's operands in the fused call's `in` (-1 where it has none),
 * where its arguments but its data follow `at` + 1 of the calls before
 * it (at 0: the first call's own). */
static void
operands_after (const hy_call *call, int at, int *bias, int *bn, int *res)
{
  const hy_conv_params *p = call->params;
  const hy_fused_inputs f = hy_fused_inputs_of (p->no_bias, &p->fused);
  *bias = f.bias < 0 ? -1 : f.bias + at;
  *bn = f.bn < 0 ? -1 : f.bn + at;
  *res = f.residual < 0 ? -1 : f.residual + at;
}

/* The depthwise kernel's geometry of p (x into y, both 4-D). */
static hy_depthwise
geom_of (const hy_conv_params *p, const hy_shape *x, const hy_shape *y)
{
  return (hy_depthwise) {
    .kernel = p->kernel[0], .in_h = x->dims[2], .in_w = x->dims[3],
    .out_h = y->dims[2], .out_w = y->dims[3],
    .stride_h = p->stride[0], .stride_w = p->stride[1],
    .pad_h = p->pad[0], .pad_w = p->pad[1],
  };
}

/* Whether conv.c would run p (x into y) with the AVX-512 depthwise
 * kernel, epilogue in registers; fills *geom. */
static bool
runs_depthwise_kernel (const hy_conv_params *p, const hy_shape *x,
    const hy_shape *y, hy_depthwise *geom)
{
  if (p->op != HY_OP_CONVOLUTION || p->n_spatial != 2 || x->ndim != 4
      || y->ndim != 4
      || p->num_group != x->dims[1] || p->num_filter != x->dims[1]
      || p->kernel[0] != p->kernel[1] || p->dilate[0] != 1
      || p->dilate[1] != 1 || p->pad[0] >= p->kernel[0]
      || !hy_depthwise_fuses (&p->fused))
    return false;
  *geom = geom_of (p, x, y);
  const hy_tensor xt = { .shape = *x }, yt = { .shape = *y };
  return hy_cpu_convolution_is_depthwise (p, &xt, &yt)
      && hy_depthwise_supported (geom);
}

/* A 1×1, stride-1, unpadded 2-D convolution of one group without a
 * residual, of more input channels than the few-channels kernel takes. */
static bool
is_pointwise (const hy_conv_params *p, const hy_shape *x)
{
  return p->op == HY_OP_CONVOLUTION && p->n_spatial == 2 && x->ndim == 4
      && x->dims[1] > 4 && p->num_group == 1 && !p->fused.residual
      && p->kernel[0] == 1 && p->kernel[1] == 1 && p->stride[0] == 1
      && p->stride[1] == 1 && p->pad[0] == 0 && p->pad[1] == 0
      && p->dilate[0] == 1 && p->dilate[1] == 1;
}

/* Whether the kernel can run the pair (pointwise first, depthwise
 * second), filling *geom with second's geometry. */
static bool
can_fuse (const hy_conv_params *first, const hy_shape *x,
    const hy_shape *mid, const hy_conv_params *second, const hy_shape *y,
    hy_depthwise *geom)
{
  return hy_packed_gemm_supported () && is_pointwise (first, x)
      && mid->ndim == 4 && mid->dims[0] > 0
      && runs_depthwise_kernel (second, mid, y, geom);
}

bool
hy_conv_pw_dw_pair_runs (const hy_conv_params *pw, const hy_shape *x,
    const hy_shape *mid, const hy_conv_params *dw, const hy_shape *y)
{
  hy_depthwise geom;
  return can_fuse (pw, x, mid, dw, y, &geom);
}

/* A pointwise convolution the packed kernel runs on the columns it is
 * given: like is_pointwise, a residual allowed. */
bool
hy_conv_pw_dw_is_projection (const hy_conv_params *p, const hy_shape *x)
{
  hy_conv_params plain = *p;
  plain.fused.residual = false;
  return is_pointwise (&plain, x);
}

bool
hy_conv_pw_dw_can_take (const hy_conv_params *dw, const hy_shape *x,
    const hy_shape *mid, const hy_conv_params *proj)
{
  hy_depthwise geom;
  return hy_packed_gemm_supported ()
      && runs_depthwise_kernel (dw, x, mid, &geom)
      && hy_conv_pw_dw_is_projection (proj, mid);
}

/* Whether the kernel can run a depthwise layer (`first`, x its data, mid
 * its output) and the projection reading it (`second`) as one, a chain
 * without an expansion; fills *geom with first's geometry. */
static bool
can_fuse_from_depthwise (const hy_conv_params *first, const hy_shape *x,
    const hy_shape *mid, const hy_conv_params *second, hy_depthwise *geom)
{
  return hy_packed_gemm_supported () && x->ndim == 4 && x->dims[0] > 0
      && runs_depthwise_kernel (first, x, mid, geom)
      && hy_conv_pw_dw_is_projection (second, mid);
}

bool
hy_conv_pw_dw_chain_runs (const hy_conv_params *dw, const hy_shape *x,
    const hy_shape *mid, const hy_conv_params *proj)
{
  hy_depthwise geom;
  return can_fuse_from_depthwise (dw, x, mid, proj, &geom);
}

int64_t
hy_conv_pw_dw_band_rows (const hy_conv_params *dw, const hy_shape *x,
    const hy_shape *y)
{
  const hy_depthwise geom = geom_of (dw, x, y);
  return band_rows_of (&geom, x->dims[1]);
}

/* A depthwise layer (`first`, geometry *geom) and the projection reading
 * it (`second`) as one call. */
static hy_conv_pw_dw *
new_from_depthwise (const hy_call *first, const hy_call *second,
    const hy_depthwise *geom)
{
  hy_conv_pw_dw *conv = g_new0 (hy_conv_pw_dw, 1);
  conv->dw_fused = ((const hy_conv_params *) first->params)->fused;
  conv->pw_bias = conv->pw_bn = -1;
  conv->dw_weight = 1;
  operands_after (first, 0, &conv->dw_bias, &conv->dw_bn, &conv->dw_res);
  conv->geom = *geom;
  conv->channels = conv->filters = first->in[0]->shape.dims[1];
  conv->proj_bias = conv->proj_bn = conv->proj_res = -1;
  conv->band_rows = band_rows_of (geom, conv->filters);
  if (!hy_conv_pw_dw_take_projection (conv, first, second)) {
    g_free (conv);
    return NULL;
  }
  return conv;
}

hy_conv_pw_dw *
hy_conv_pw_dw_new (const hy_call *first, const hy_call *second)
{
  if (first->op != HY_OP_CONVOLUTION || second->op != HY_OP_CONVOLUTION
      || first->n_out != 1 || second->n_in < 2 || second->n_out != 1
      || second->in[0] != first->out[0] || !hy_call_input_const (second, 1))
    return NULL;
  const hy_conv_params *dp = second->params;
  const hy_shape *mid = &first->out[0]->shape;
  hy_depthwise geom;
  if (can_fuse_from_depthwise (first->params, &first->in[0]->shape, mid, dp,
          &geom))
    return new_from_depthwise (first, second, &geom);
  if (!can_fuse (first->params, &first->in[0]->shape, mid, dp,
          &second->out[0]->shape, &geom))
    return NULL;
  hy_conv_packed *pw = hy_conv_packed_new (first->params, first->in,
      first->n_in, first->out[0], hy_call_input_const (first, 1));
  if (!pw)
    return NULL;

  const hy_conv_params *pp = first->params;
  hy_conv_pw_dw *conv = g_new0 (hy_conv_pw_dw, 1);
  conv->pw = pw;
  conv->dw_fused = dp->fused;
  const hy_fused_inputs pf = hy_fused_inputs_of (pp->no_bias, &pp->fused);
  conv->pw_bias = pf.bias;
  conv->pw_bn = pf.bn;
  /* second's in[k], k >= 1, follows first's arguments. */
  const int at = first->n_in - 1;
  conv->dw_weight = 1 + at;
  operands_after (second, at, &conv->dw_bias, &conv->dw_bn, &conv->dw_res);
  conv->geom = geom;
  conv->channels = first->in[0]->shape.dims[1];
  conv->filters = mid->dims[1];
  conv->proj_bias = conv->proj_bn = conv->proj_res = -1;

  conv->band_rows = band_rows_of (&geom, conv->filters);
  conv->buffer_rows = (conv->band_rows - 1) * geom.stride_h + geom.kernel;
  return conv;
}

bool
hy_conv_pw_dw_take_projection (hy_conv_pw_dw *conv, const hy_call *first,
    const hy_call *second)
{
  if (conv->proj || second->op != HY_OP_CONVOLUTION || second->n_in < 2
      || second->n_out != 1 || second->in[0] != first->out[0]
      || !hy_call_input_const (second, 1))
    return false;
  const hy_conv_params *pp = second->params;
  if (!hy_conv_pw_dw_is_projection (pp, &first->out[0]->shape))
    return false;
  conv->proj = hy_conv_packed_new (pp, second->in, second->n_in,
      second->out[0], hy_call_input_const (second, 1));
  if (!conv->proj)
    return false;
  /* second's in[k], k >= 1, follows first's (the pair's) arguments. */
  const int at = first->n_in - 1;
  operands_after (second, at, &conv->proj_bias, &conv->proj_bn,
      &conv->proj_res);
  conv->proj_filters = pp->num_filter;
  return true;
}

const char *
hy_conv_pw_dw_kernel_name (const hy_conv_pw_dw *conv)
{
  if (!conv->pw)
    return "depthwise+pointwise";
  return conv->proj ? "pointwise+depthwise+pointwise"
      : "pointwise+depthwise";
}

void
hy_conv_pw_dw_free (hy_conv_pw_dw *conv)
{
  if (!conv)
    return;
  hy_conv_packed_free (conv->pw);
  hy_conv_packed_free (conv->proj);
  g_free (conv);
}

typedef struct pw_dw_job {
  const hy_conv_pw_dw *conv;
  const float *x, *pw_bias, *pw_bn, *dw_weight, *dw_bias, *dw_bn, *dw_res;
  const float *proj_bias, *proj_bn, *proj_res;
  float *y;
  int64_t runs;                 /* per image */
  float *buffer;
  size_t buffer_stride;         /* bytes between threads' buffers */
} pw_dw_job;

/* The depthwise layer's input rows [lo, hi) of one image: where `src`
 * holds them, from row lo on, planes src_plane floats apart (the thread's
 * buffer of the expansion's rows, or the call's input itself). */
typedef struct band_source {
  const float *src;
  int64_t src_plane;
} band_source;

/* The depthwise layer's output rows [o0, o1) of one image from its input
 * rows [lo, hi) into dst: its planes dst_plane floats apart, each from
 * row o0 on. */
static void
depthwise_band (const pw_dw_job *j, int64_t image, int64_t o0, int64_t o1,
    int64_t lo, int64_t hi, band_source in, float *dst, int64_t dst_plane)
{
  const hy_conv_pw_dw *conv = j->conv;
  const int64_t n = conv->filters;
  const int64_t out_plane = conv->geom.out_h * conv->geom.out_w;
  hy_depthwise band = conv->geom;
  band.in_h = hi - lo;
  band.out_h = o1 - o0;
  /* Output row o0 reads from row o0·stride − pad on: lo itself, or above
   * it in the padding. */
  band.pad_h = lo - (o0 * conv->geom.stride_h - conv->geom.pad_h);
  const hy_fused_epilogue *e = &conv->dw_fused;
  const int64_t k2 = conv->geom.kernel * conv->geom.kernel;
  for (int64_t f = 0; f < n; f++) {
    const int64_t at = (image * n + f) * out_plane + o0 * conv->geom.out_w;
    const hy_depthwise_epilogue de = {
      e->act, e->alpha, e->beta, j->dw_bn != NULL,
      j->dw_bn ? j->dw_bn[f] : 0.0f, j->dw_bn ? j->dw_bn[f + n] : 0.0f,
      j->dw_bn ? j->dw_bn[f + 2 * n] : 0.0f,
      j->dw_res ? j->dw_res + at : NULL,
    };
    hy_depthwise_plane (&band, dst + f * dst_plane, in.src
        + f * in.src_plane, j->dw_weight + f * k2,
        j->dw_bias ? j->dw_bias[f] : 0.0f, &de);
  }
}

/* The depthwise layer's output rows [o0, o1) of one image, as its call
 * would write them, or, with a projection, that projection's output rows
 * from them: the band's depthwise output goes to the thread's buffer
 * (`band`), which the product reads from its cache. */
static void
finish_band (const pw_dw_job *j, int64_t image, int64_t o0, int64_t o1,
    int64_t lo, int64_t hi, band_source in, float *band)
{
  const hy_conv_pw_dw *conv = j->conv;
  const int64_t out_w = conv->geom.out_w;
  const int64_t out_plane = conv->geom.out_h * out_w;
  if (!conv->proj) {
    depthwise_band (j, image, o0, o1, lo, hi, in,
        j->y + image * conv->filters * out_plane + o0 * out_w, out_plane);
    return;
  }
  const int64_t cols = (o1 - o0) * out_w;
  depthwise_band (j, image, o0, o1, lo, hi, in, band, cols);
  const int64_t at = image * conv->proj_filters * out_plane + o0 * out_w;
  hy_conv_packed_pointwise_cols (conv->proj, band, cols, cols, j->proj_bias,
      j->proj_bn, j->proj_res ? j->proj_res + at : NULL, j->y + at,
      out_plane);
}

/* Output rows [begin, end) of one image, a band at a time; the rows two
 * bands share are moved to the buffer's top rather than computed again. */
static void
run_rows (const pw_dw_job *j, int64_t image, int64_t begin, int64_t end,
    float *buffer, float *band)
{
  const hy_conv_pw_dw *conv = j->conv;
  const int64_t h = conv->geom.in_h, w = conv->geom.in_w;
  const int64_t s = conv->geom.stride_h, pad = conv->geom.pad_h;
  const int64_t k = conv->geom.kernel;
  const int64_t buffer_plane = conv->buffer_rows * w;
  const float *x = j->x + image * conv->channels * h * w;
  int64_t have_lo = 0, have_hi = 0;     /* the buffer's rows */
  for (int64_t o0 = begin; o0 < end; o0 += conv->band_rows) {
    const int64_t o1 = MIN (o0 + conv->band_rows, end);
    const int64_t lo = MAX (0, o0 * s - pad);
    const int64_t hi = MIN (h, (o1 - 1) * s - pad + k);
    if (!conv->pw) {
      /* No expansion: the depthwise layer reads the input's rows. */
      finish_band (j, image, o0, o1, lo, hi,
          (band_source) { x + lo * w, h * w }, band);
      continue;
    }
    int64_t from = lo;          /* the first row to compute */
    if (lo >= have_lo && lo < have_hi) {
      from = have_hi;
      if (lo > have_lo)
        for (int64_t f = 0; f < conv->filters; f++)
          memmove (buffer + f * buffer_plane,
              buffer + f * buffer_plane + (lo - have_lo) * w,
              (size_t) ((have_hi - lo) * w) * sizeof (float));
    }
    if (hi > from)
      hy_conv_packed_pointwise_cols (conv->pw, x + from * w, h * w,
          (hi - from) * w, j->pw_bias, j->pw_bn, NULL,
          buffer + (from - lo) * w, buffer_plane);
    have_lo = lo;
    have_hi = hi;
    finish_band (j, image, o0, o1, lo, hi,
        (band_source) { buffer, buffer_plane }, band);
  }
}

/* A thread's buffer: the expansion's rows a band reads, then, with a
 * projection, the band's depthwise output. */
static int64_t
expansion_floats (const hy_conv_pw_dw *conv)
{
  return conv->pw ? conv->filters * conv->buffer_rows * conv->geom.in_w : 0;
}

static int64_t
band_floats (const hy_conv_pw_dw *conv)
{
  return conv->proj ? conv->filters * conv->band_rows * conv->geom.out_w
      : 0;
}

/* Items [begin, end) of (image, run of output rows). */
static void
pw_dw_items (void *arg, int64_t begin, int64_t end, int thread)
{
  const pw_dw_job *j = arg;
  const int64_t out_h = j->conv->geom.out_h;
  float *buffer = (float *) ((char *) j->buffer
      + (size_t) thread * j->buffer_stride);
  float *band = buffer + expansion_floats (j->conv);
  for (int64_t i = begin; i < end; i++) {
    const int64_t image = i / j->runs, run = i % j->runs;
    run_rows (j, image, run * out_h / j->runs, (run + 1) * out_h / j->runs,
        buffer, band);
  }
}

void
hy_cpu_convolution_pw_dw (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_conv_pw_dw *conv = params;
#define OPERAND(index) ((index) < 0 ? NULL : in[index]->data)
  pw_dw_job j = {
    .conv = conv, .x = in[0]->data,
    .pw_bias = OPERAND (conv->pw_bias), .pw_bn = OPERAND (conv->pw_bn),
    .dw_weight = in[conv->dw_weight]->data,
    .dw_bias = OPERAND (conv->dw_bias), .dw_bn = OPERAND (conv->dw_bn),
    .dw_res = OPERAND (conv->dw_res),
    .proj_bias = OPERAND (conv->proj_bias),
    .proj_bn = OPERAND (conv->proj_bn), .proj_res = OPERAND (conv->proj_res),
    .y = out[0]->data,
  };
#undef OPERAND
  const int64_t batch = out[0]->shape.dims[0];
  const int threads = hy_cpu_n_threads (ctx);
  /* An image per thread where the batch shares out; otherwise each image
   * split into runs of rows, one per thread, each run computing the rows
   * it shares with the run above once more. */
  j.runs = batch >= 2 * threads ? 1 : MIN (threads, conv->geom.out_h);
  j.runs = MAX (j.runs, 1);
  j.buffer = hy_cpu_workspace_per_thread (ctx, (size_t) (expansion_floats
          (conv) + band_floats (conv)) * sizeof (float), &j.buffer_stride);
  hy_cpu_parallel_each (ctx, batch * j.runs, pw_dw_items, &j);
}
