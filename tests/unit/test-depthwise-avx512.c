/*
 * test-depthwise-avx512.c — the AVX-512 depthwise K×K kernel (3×3, 5×5
 * and 7×7; kernels/cpu/conv/depthwise-avx512.h) against sums taken in double
 * precision here:
 *  - planes one at a time, on every geometry whose edges the masks
 *    handle: MobileNet's widths (7 to 112), odd widths, widths around the
 *    16-lane vectors, planes of 1 to 3 rows or columns (thinner than the
 *    kernel), stride 1, 2 and mixed, padding 0 to 3;
 *    the input plane sits between NaN guards, so a tap read from outside
 *    the plane (a broken edge mask) turns its output NaN, and one read
 *    from the wrong row of the plane gives a wrong sum; the output plane
 *    starts NaN (an output never written fails) and sits between guards
 *    that must come back untouched;
 *  - the fused epilogues (bias, BatchNorm, residual, ReLU, ReLU6, a clip
 *    whose bounds cross, MobileNetV3's hard swish and hard sigmoid, in
 *    epilogue.h's order), and that NaN passes ReLU and clip as
 *    epilogue.h's do;
 *  - the hard activations bit for bit epilogue.h's own (what a graph
 *    computes without them fused), NaN and infinities included;
 *  - Convolution through conv.c (the depthwise hook), 3×3 and 5×5
 *    (MobileNetV3's): batch 2, channel
 *    multiplier 2, two threads, hard swish and hard sigmoid, an
 *    activation the kernel leaves to conv.c (leaky), and the same bits
 *    with 1 and 2 threads.
 *
 * On a CPU without AVX-512 the kernel is never chosen: the plane tests
 * say so and skip; the Convolution ones run conv.c's own loop.
 */
#include <math.h>
#include <string.h>

#include "hybrid.h"
#include "conv-reference.h"
#include "core/op.h"
#include "kernels/cpu/conv/conv-packed.h"
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/conv/depthwise-avx512.h"
#include "kernels/cpu/epilogue.h"
#include "kernels/params/nn.h"

#define GUARD 64

static int64_t
out_size (int64_t in, int64_t k, int64_t pad, int64_t stride)
{
  return (in + 2 * pad - k) / stride + 1;
}

/* relu6 (s + 3) / 6, and s times that. */
static double
reference_hard (hy_fused_act act, double s)
{
  const double t = s + 3, c = (t > 6 ? 6 : t < 0 ? 0 : t) / 6;
  return act == HY_FUSED_ACT_HARD_SWISH ? s * c : c;
}

/* One plane, its epilogue after it, in double precision; *mag gets the
 * largest Σ|terms| (the scale of the rounding error to allow). */
static void
reference_plane (const hy_depthwise *g, const float *x, const float *w,
    float bias, const hy_depthwise_epilogue *e, double *y, double *mag)
{
  *mag = 0;
  for (int64_t oy = 0; oy < g->out_h; oy++)
    for (int64_t ox = 0; ox < g->out_w; ox++) {
      double s = bias, m = fabs (bias);
      for (int i = 0; i < g->kernel; i++)
        for (int j = 0; j < g->kernel; j++) {
          const int64_t iy = oy * g->stride_h - g->pad_h + i;
          const int64_t ix = ox * g->stride_w - g->pad_w + j;
          if (iy < 0 || iy >= g->in_h || ix < 0 || ix >= g->in_w)
            continue;
          const double t = (double) w[i * g->kernel + j]
              * x[iy * g->in_w + ix];
          s += t;
          m += fabs (t);
        }
      const int64_t o = oy * g->out_w + ox;
      if (e && e->batch_norm) {
        s = (s - e->mean) * e->scale + e->shift;
        m = (m + fabs (e->mean)) * fabs (e->scale) + fabs (e->shift);
      }
      if (e && e->res) {
        s += e->res[o];
        m += fabs (e->res[o]);
      }
      if (e && e->act == HY_FUSED_ACT_RELU && s <= 0)
        s = 0;
      if (e && e->act == HY_FUSED_ACT_CLIP)
        s = s > e->beta ? e->beta : s < e->alpha ? e->alpha : s;
      if (e && (e->act == HY_FUSED_ACT_HARD_SIGMOID
              || e->act == HY_FUSED_ACT_HARD_SWISH)) {
        /* Near ±3 the slopes (1/6 and up to 1.5) scale the sum's error. */
        m *= 1.5;
        s = reference_hard (e->act, s);
      }
      y[o] = s;
      *mag = MAX (*mag, m);
    }
}

static gboolean
skip_without_kernel (void)
{
  const hy_depthwise probe = {
    .kernel = 3, .in_h = 8, .in_w = 8, .out_h = 8, .out_w = 8,
    .stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1,
  };
  if (hy_depthwise_supported (&probe))
    return FALSE;
  g_test_skip ("this CPU has no AVX-512F (or HYBRIDINFER_DEPTHWISE=0): "
      "the kernel is never chosen");
  return TRUE;
}

typedef enum epilogue_kind {
  EPI_NONE,                     /* bias only (epi NULL) */
  EPI_RELU6,                    /* bias, clip [0, 6]: MobileNet's */
  EPI_BN_RES_RELU,              /* BatchNorm, residual, relu */
  EPI_CLIP_NARROW,              /* clip [-0.3, 0.4]: both bounds bite */
  EPI_CLIP_INVERTED,            /* clip [0.4, -0.3]: epilogue.h's order */
  EPI_BN_HARD_SWISH,            /* BatchNorm, hard swish: MobileNetV3's */
  EPI_RES_HARD_SIGMOID,         /* residual, hard sigmoid */
  N_EPI
} epilogue_kind;

/* One plane on the kernel, against the reference. */
static void
check_plane (int64_t k, int64_t in_h, int64_t in_w, int64_t stride_h,
    int64_t stride_w, int64_t pad_h, int64_t pad_w, epilogue_kind kind,
    guint32 seed)
{
  hy_depthwise g = {
    .kernel = k, .in_h = in_h, .in_w = in_w,
    .out_h = out_size (in_h, k, pad_h, stride_h),
    .out_w = out_size (in_w, k, pad_w, stride_w),
    .stride_h = stride_h, .stride_w = stride_w, .pad_h = pad_h,
    .pad_w = pad_w,
  };
  g_assert_true (hy_depthwise_supported (&g));
  const int64_t in_n = in_h * in_w, out_n = g.out_h * g.out_w;

  /* x and y between NaN guards (all-ones bits: a NaN that a float
   * computation never makes, so the guards' bits can be compared). */
  float *xbuf = g_new (float, in_n + 2 * GUARD);
  float *ybuf = g_new (float, out_n + 2 * GUARD);
  memset (xbuf, 0xff, (in_n + 2 * GUARD) * sizeof (float));
  memset (ybuf, 0xff, (out_n + 2 * GUARD) * sizeof (float));
  float *x = xbuf + GUARD, *y = ybuf + GUARD;
  conv_fill (x, in_n, seed);
  float w[49], bias, res_bn[3];
  conv_fill (w, k * k, seed + 1);
  conv_fill (&bias, 1, seed + 2);
  conv_fill (res_bn, 3, seed + 3);
  float *res = g_new (float, out_n);
  conv_fill (res, out_n, seed + 4);
  /* Scaled up so that the clips bite on a good share of the outputs. */
  for (int t = 0; t < k * k; t++)
    w[t] *= 12.0f / (float) k;

  hy_depthwise_epilogue e = { 0 };
  switch (kind) {
    case EPI_NONE:
      break;
    case EPI_RELU6:
      e = (hy_depthwise_epilogue) { .act = HY_FUSED_ACT_CLIP, .alpha = 0,
        .beta = 6 };
      break;
    case EPI_BN_RES_RELU:
      e = (hy_depthwise_epilogue) { .act = HY_FUSED_ACT_RELU,
        .batch_norm = true, .mean = res_bn[0], .scale = res_bn[1] + 1.5f,
        .shift = res_bn[2], .res = res };
      break;
    case EPI_CLIP_NARROW:
      e = (hy_depthwise_epilogue) { .act = HY_FUSED_ACT_CLIP, .alpha = -0.3f,
        .beta = 0.4f };
      break;
    case EPI_CLIP_INVERTED:
      e = (hy_depthwise_epilogue) { .act = HY_FUSED_ACT_CLIP, .alpha = 0.4f,
        .beta = -0.3f };
      break;
    case EPI_BN_HARD_SWISH:
      e = (hy_depthwise_epilogue) { .act = HY_FUSED_ACT_HARD_SWISH,
        .batch_norm = true, .mean = res_bn[0], .scale = res_bn[1] + 1.5f,
        .shift = res_bn[2] };
      break;
    case EPI_RES_HARD_SIGMOID:
      e = (hy_depthwise_epilogue) { .act = HY_FUSED_ACT_HARD_SIGMOID,
        .res = res };
      break;
    default:
      g_assert_not_reached ();
  }
  const hy_depthwise_epilogue *epi = kind == EPI_NONE ? NULL : &e;
  hy_depthwise_plane (&g, y, x, w, bias, epi);

  double *want = g_new (double, out_n), mag;
  reference_plane (&g, x, w, bias, epi, want, &mag);
  for (int64_t o = 0; o < out_n; o++)
    if (!(fabs (y[o] - want[o]) <= 1e-6 * (1 + mag)))
      g_error ("%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " kernel %"
          G_GINT64_FORMAT " stride %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
          " pad %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " epilogue %d: "
          "output (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") is %g, "
          "want %g", in_h, in_w, k, stride_h, stride_w, pad_h, pad_w, kind,
          o / g.out_w, o % g.out_w, y[o], want[o]);
  const uint32_t all_ones = 0xffffffffu;
  for (int64_t i = 0; i < GUARD; i++) {
    g_assert_cmpmem (&ybuf[i], sizeof (float), &all_ones, sizeof all_ones);
    g_assert_cmpmem (&y[out_n + i], sizeof (float), &all_ones,
        sizeof all_ones);
  }
  g_free (xbuf);
  g_free (ybuf);
  g_free (res);
  g_free (want);
}

/* Every geometry below with a k × k kernel; pads[] are k's. */
static void
check_planes (int64_t k, const int64_t (*pads)[2], guint n_pads)
{
  /* MobileNet's, odd ones, around 16 and 32 lanes (and 32 input columns
   * at stride 2, with the 1 to 5 floats after them the wider kernels
   * read), and planes thinner than the kernel. */
  static const int64_t widths[] = {
    1, 2, 3, 5, 7, 8, 9, 11, 13, 14, 15, 16, 17, 19, 28, 29, 31, 32, 33,
    34, 35, 37, 56, 112,
  };
  static const int64_t heights[] = { 1, 2, 3, 5, 7, 9, 14, 17 };
  static const int64_t strides[][2] = { { 1, 1 }, { 2, 2 }, { 1, 2 },
    { 2, 1 } };
  guint32 seed = 1 + 1000 * (guint32) k;
  for (guint wi = 0; wi < G_N_ELEMENTS (widths); wi++)
    for (guint hi = 0; hi < G_N_ELEMENTS (heights); hi++)
      for (guint si = 0; si < G_N_ELEMENTS (strides); si++)
        for (guint pi = 0; pi < n_pads; pi++) {
          const int64_t h = heights[hi], w = widths[wi];
          if (h + 2 * pads[pi][0] < k || w + 2 * pads[pi][1] < k)
            continue;           /* no output */
          const epilogue_kind kind = (epilogue_kind) (seed % N_EPI);
          check_plane (k, h, w, strides[si][0], strides[si][1],
              pads[pi][0], pads[pi][1], kind, seed);
          seed += 7;
        }
  /* MobileNet's maps, square, "same" padding, every epilogue. */
  static const int64_t sizes[] = { 7, 14, 28, 56, 112 };
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    for (int64_t s = 1; s <= 2; s++)
      for (int kind = 0; kind < N_EPI; kind++) {
        check_plane (k, sizes[i], sizes[i], s, s, k / 2, k / 2,
            (epilogue_kind) kind, seed);
        seed += 7;
      }
}

static void
test_planes_3x3 (void)
{
  if (skip_without_kernel ())
    return;
  static const int64_t pads[][2] = { { 1, 1 }, { 0, 0 }, { 2, 2 }, { 0, 1 },
    { 1, 0 } };
  check_planes (3, pads, G_N_ELEMENTS (pads));
}

/* MobileNetV3's (pad 2), and pads that leave some taps of every edge
 * output, or none, inside the plane. */
static void
test_planes_5x5 (void)
{
  if (skip_without_kernel ())
    return;
  static const int64_t pads[][2] = { { 2, 2 }, { 0, 0 }, { 1, 1 }, { 3, 3 },
    { 4, 4 }, { 0, 2 }, { 2, 0 } };
  check_planes (5, pads, G_N_ELEMENTS (pads));
}

static void
test_planes_7x7 (void)
{
  if (skip_without_kernel ())
    return;
  static const int64_t pads[][2] = { { 3, 3 }, { 0, 0 }, { 1, 2 }, { 5, 5 } };
  check_planes (7, pads, G_N_ELEMENTS (pads));
}

/* NaN passes ReLU and clip, as epilogue.h's comparisons let it. */
static void
test_nan_passes (void)
{
  if (skip_without_kernel ())
    return;
  for (int act = HY_FUSED_ACT_RELU; act <= HY_FUSED_ACT_CLIP; act++)
    for (int64_t size = 7; size <= 9; size += 2) {
      hy_depthwise g = {
        .kernel = 3, .in_h = size, .in_w = size, .out_h = size, .out_w = size,
        .stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1,
      };
      float x[81] = { 0 }, y[81], w[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
      x[size + 1] = NAN;        /* row 1, column 1: its 3×3 neighbourhood */
      const hy_depthwise_epilogue e = { .act = (hy_fused_act) act,
        .alpha = 0, .beta = 6 };
      hy_depthwise_plane (&g, y, x, w, -1.0f, &e);
      for (int64_t r = 0; r < size; r++)
        for (int64_t c = 0; c < size; c++) {
          const float v = y[r * size + c];
          if (r <= 2 && c <= 2)
            g_assert_true (isnan (v));
          else
            g_assert_cmpfloat (v, ==, 0.0f);
        }
    }
}

/* The hard activations fused against the plane without them, then
 * epilogue.h's hy_epilogue_act on each output (what a graph computes with
 * the chain unfused): the same bits, on sums from -12 to 12 (the clip's
 * edges at -3 and 3 inside) and on NaN and infinities. */
static void
test_hard_bits (void)
{
  if (skip_without_kernel ())
    return;
  static const int64_t geoms[][3] = {   /* k, size, stride */
    { 3, 7, 1 }, { 3, 14, 2 }, { 3, 17, 1 }, { 5, 14, 1 }, { 5, 28, 2 },
    { 5, 9, 1 }, { 7, 12, 1 },
  };
  guint32 seed = 77;
  for (guint gi = 0; gi < G_N_ELEMENTS (geoms); gi++)
    for (int act = HY_FUSED_ACT_HARD_SIGMOID;
        act <= HY_FUSED_ACT_HARD_SWISH; act++)
      for (int bn = 0; bn < 2; bn++) {
        const int64_t k = geoms[gi][0], size = geoms[gi][1];
        const int64_t stride = geoms[gi][2];
        hy_depthwise g = {
          .kernel = k, .in_h = size, .in_w = size,
          .out_h = out_size (size, k, k / 2, stride),
          .out_w = out_size (size, k, k / 2, stride),
          .stride_h = stride, .stride_w = stride, .pad_h = k / 2,
          .pad_w = k / 2,
        };
        const int64_t n = g.out_h * g.out_w;
        float *x = g_new (float, size * size), w[49], mbs[3];
        float *plain = g_new (float, n), *fused = g_new (float, n);
        conv_fill (x, size * size, seed++);
        conv_fill (w, k * k, seed++);
        conv_fill (mbs, 3, seed++);
        for (int t = 0; t < k * k; t++)
          w[t] *= 24.0f / (float) k;
        x[size + 1] = NAN;
        x[size * size - 2] = INFINITY;
        x[size * size / 2] = -INFINITY;
        hy_depthwise_epilogue e = {
          .batch_norm = bn, .mean = mbs[0], .scale = mbs[1] + 1.5f,
          .shift = mbs[2],
        };
        hy_depthwise_plane (&g, plain, x, w, 0.25f, &e);
        e.act = (hy_fused_act) act;
        hy_depthwise_plane (&g, fused, x, w, 0.25f, &e);
        int64_t special = 0;
        for (int64_t o = 0; o < n; o++) {
          const float want = hy_epilogue_act ((hy_fused_act) act, plain[o],
              0, 0);
          special += !isfinite (plain[o]);
          if (memcmp (&want, &fused[o], sizeof want)
              && !(isnan (want) && isnan (fused[o])))
            g_error ("%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " stride %"
                G_GINT64_FORMAT " act %d bn %d: output %" G_GINT64_FORMAT
                " is %.9g, want %.9g (of %.9g)", k, k, stride, act, bn, o,
                fused[o], want, plain[o]);
        }
        g_assert_cmpint (special, >, 0);
        g_free (x);
        g_free (plain);
        g_free (fused);
      }
}

/* ---- Convolution through conv.c ---------------------------------------- */

typedef struct conv_case {
  int k, batch, channels, mult, size, stride, pad;
  bool bias, batch_norm, residual;
  hy_fused_act act;
} conv_case;

static const conv_case conv_cases[] = {
  /* MobileNetV2's: bias folded in, ReLU6 fused */
  { 3, 1, 32, 1, 28, 1, 1, true, false, false, HY_FUSED_ACT_CLIP },
  { 3, 1, 24, 1, 14, 2, 1, true, false, false, HY_FUSED_ACT_CLIP },
  { 3, 1, 40, 1, 7, 1, 1, true, false, false, HY_FUSED_ACT_CLIP },
  /* batch, a channel multiplier, BatchNorm and residual fused */
  { 3, 2, 6, 2, 17, 1, 1, false, true, true, HY_FUSED_ACT_RELU },
  { 3, 2, 5, 2, 9, 2, 0, true, false, false, HY_FUSED_ACT_NONE },
  /* an activation left to conv.c's epilogue pass */
  { 3, 2, 8, 1, 13, 1, 1, true, true, false, HY_FUSED_ACT_LEAKY },
  /* MobileNetV3's: BatchNorm and hard swish, 3×3 and 5×5; a hard
   * sigmoid after a residual */
  { 3, 1, 16, 1, 28, 1, 1, false, true, false, HY_FUSED_ACT_HARD_SWISH },
  { 3, 1, 24, 1, 14, 2, 1, false, true, false, HY_FUSED_ACT_HARD_SWISH },
  { 5, 1, 40, 1, 14, 1, 2, false, true, false, HY_FUSED_ACT_HARD_SWISH },
  { 5, 2, 6, 2, 17, 2, 2, true, false, true, HY_FUSED_ACT_HARD_SIGMOID },
  /* MobileNetV3's 5×5: BatchNorm and ReLU */
  { 5, 1, 24, 1, 28, 2, 2, false, true, false, HY_FUSED_ACT_RELU },
  { 5, 1, 40, 1, 14, 1, 2, false, true, false, HY_FUSED_ACT_RELU },
  { 5, 2, 6, 2, 17, 1, 2, true, true, true, HY_FUSED_ACT_CLIP },
  { 5, 2, 5, 1, 9, 2, 0, true, false, false, HY_FUSED_ACT_NONE },
  { 5, 2, 8, 1, 7, 1, 2, true, true, false, HY_FUSED_ACT_LEAKY },
};

/* The convolution, its epilogue after it, in double precision. */
static void
reference_conv (const conv_case *q, int out, const float *x, const float *w,
    const float *bias, const float *bn, const float *res, float *y)
{
  const int filters = q->channels * q->mult;
  for (int b = 0; b < q->batch; b++)
    for (int f = 0; f < filters; f++)
      for (int oy = 0; oy < out; oy++)
        for (int ox = 0; ox < out; ox++) {
          double s = bias ? bias[f] : 0.0;
          for (int i = 0; i < q->k; i++)
            for (int j = 0; j < q->k; j++) {
              const int iy = oy * q->stride - q->pad + i;
              const int ix = ox * q->stride - q->pad + j;
              if (iy < 0 || iy >= q->size || ix < 0 || ix >= q->size)
                continue;
              s += (double) w[(f * q->k + i) * q->k + j]
                  * x[((b * q->channels + f / q->mult) * q->size + iy)
                      * q->size + ix];
            }
          if (bn)
            s = (s - bn[f]) * bn[filters + f] + bn[2 * filters + f];
          const int64_t o = ((int64_t) (b * filters + f) * out + oy) * out
              + ox;
          if (res)
            s += res[o];
          if (q->act == HY_FUSED_ACT_RELU && s < 0)
            s = 0;
          if (q->act == HY_FUSED_ACT_CLIP)
            s = s < 0 ? 0 : s > 6 ? 6 : s;
          if (q->act == HY_FUSED_ACT_LEAKY && s < 0)
            s *= 0.1;
          if (q->act == HY_FUSED_ACT_HARD_SIGMOID
              || q->act == HY_FUSED_ACT_HARD_SWISH)
            s = reference_hard (q->act, s);
          y[o] = (float) s;
        }
}

static void
test_conv (gconstpointer data)
{
  const conv_case *q = data;
  const int out = (q->size + 2 * q->pad - q->k) / q->stride + 1;
  const int filters = q->channels * q->mult;
  hy_conv_params p = {
    .op = hy_op_lookup ("Convolution")->id, .n_spatial = 2,
    .kernel = { q->k, q->k }, .stride = { q->stride, q->stride },
    .dilate = { 1, 1 }, .pad = { q->pad, q->pad },
    .num_filter = filters, .num_group = q->channels, .no_bias = !q->bias,
    .fused = {
      .act = q->act, .alpha = q->act == HY_FUSED_ACT_LEAKY ? 0.1f : 0.0f,
      .beta = 6.0f, .batch_norm = q->batch_norm, .residual = q->residual,
    },
  };
  hy_shape xs = { 4, { q->batch, q->channels, q->size, q->size } };
  hy_shape ws = { 4, { filters, 1, q->k, q->k } };
  hy_shape bs = { 1, { filters } }, ns = { 2, { 3, filters } };
  hy_shape ys = { 4, { q->batch, filters, out, out } };
  hy_tensor *in[5];
  int n_in = 0;
  in[n_in] = hy_tensor_new (&xs);
  conv_fill (in[n_in]->data, hy_shape_numel (&xs), 6);
  in[++n_in] = hy_tensor_new (&ws);
  conv_fill (in[n_in]->data, hy_shape_numel (&ws), 7);
  for (int64_t i = 0; i < hy_shape_numel (&ws); i++)
    in[n_in]->data[i] *= 12.0f / q->k;  /* so that ReLU6 clips some */
  const float *bias = NULL, *bn = NULL, *res = NULL;
  if (q->bias) {
    in[++n_in] = hy_tensor_new (&bs);
    conv_fill (in[n_in]->data, filters, 8);
    bias = in[n_in]->data;
  }
  if (q->batch_norm) {
    in[++n_in] = hy_tensor_new (&ns);
    conv_fill (in[n_in]->data, 3 * filters, 9);
    for (int f = 0; f < filters; f++)   /* a positive scale */
      in[n_in]->data[filters + f] += 1.5f;
    bn = in[n_in]->data;
  }
  if (q->residual) {
    in[++n_in] = hy_tensor_new (&ys);
    conv_fill (in[n_in]->data, hy_shape_numel (&ys), 10);
    res = in[n_in]->data;
  }
  n_in++;
  g_assert_true (hy_cpu_convolution_is_depthwise (&p, in[0],
          &(hy_tensor) { .shape = ys }));
  float *want = g_new (float, hy_shape_numel (&ys));
  reference_conv (q, out, in[0]->data, in[1]->data, bias, bn, res, want);

  const hy_cpu_kernel_fn conv = hy_cpu_kernel_for (p.op);
  hy_tensor *first = NULL;
  for (int threads = 1; threads <= 2; threads++) {
    hy_cpu_ctx ctx = { 0 };
    hy_cpu_ctx_set_threads (&ctx, threads);
    hy_tensor *got = hy_tensor_new (&ys);
    memset (got->data, 0xff, hy_tensor_nbytes (got));   /* NaN */
    conv (&ctx, &p, (const hy_tensor *const *) in, n_in, &got, 1);
    hy_cpu_ctx_clear (&ctx);
    for (int64_t i = 0; i < hy_shape_numel (&ys); i++)
      if (!(fabsf (got->data[i] - want[i]) <= 1e-5f * (1 + fabsf (want[i]))))
        g_error ("%d thread(s), output %" G_GINT64_FORMAT ": %g, want %g",
            threads, i, got->data[i], want[i]);
    if (!first) {
      first = got;
    } else {
      g_assert_cmpmem (first->data, hy_tensor_nbytes (first), got->data,
          hy_tensor_nbytes (got));
      hy_tensor_free (got);
    }
  }
  hy_tensor_free (first);
  for (int i = 0; i < n_in; i++)
    hy_tensor_free (in[i]);
  g_free (want);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/depthwise-avx512/planes", test_planes_3x3);
  g_test_add_func ("/depthwise-avx512/planes-5x5", test_planes_5x5);
  g_test_add_func ("/depthwise-avx512/planes-7x7", test_planes_7x7);
  g_test_add_func ("/depthwise-avx512/nan-passes", test_nan_passes);
  g_test_add_func ("/depthwise-avx512/hard-bits", test_hard_bits);
  for (guint i = 0; i < G_N_ELEMENTS (conv_cases); i++) {
    g_autofree char *name = g_strdup_printf ("/depthwise-avx512/conv/%u", i);
    g_test_add_data_func (name, &conv_cases[i], test_conv);
  }
  return g_test_run ();
}
