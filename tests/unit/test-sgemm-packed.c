/*
 * test-sgemm-packed.c — the packed-A GEMM (kernels/cpu/conv/sgemm-packed.h)
 * and the convolutions that run on it (kernels/cpu/conv/conv-packed.h),
 * against sums taken in double precision here:
 *  - shapes around every tile edge (rows around MR, columns around the
 *    16-float vectors and the 48-column tiles, k around the 128-step
 *    blocks), strided B and C, accumulate or not;
 *  - a row or column block of C is computed bit for bit as in the whole
 *    product, nothing outside the block is written, and the `then`
 *    callback sees every element of the block exactly once;
 *  - both layouts (wide tiles, narrow tiles);
 *  - the wide tiles' epilogue in registers (hy_packed_epilogue): bit for
 *    bit what epilogue.h's pass after the product computes, for each
 *    activation it takes, with and without bias, BatchNorm and residual,
 *    over several K blocks and partial tiles;
 *  - convolutions (3×3, 1×1, strided, padded, dilated, grouped, batch 2,
 *    maps that take either layout) with bias, BatchNorm, residual and
 *    relu fused, on two threads;
 *  - the implicit im2col (kernels/cpu/conv/im2col-panel.h): every panel the
 *    GEMM could ask for, value for value against the lowered matrix, on
 *    output rows of 8 to 112 (odd ones too), padding 0-3, dilation,
 *    strides 1 and 2, square and oblong kernels, with the input in a
 *    buffer of NaNs so that a mask letting a lane past the padding shows;
 *    convolutions on it are bit for bit those lowered first, on one
 *    thread or two; the narrow maps (and rows under 8) keep im2col.
 *
 * On a CPU without AVX-512 the kernel is never chosen: the tests say so
 * and skip.
 */
#include <math.h>
#include <string.h>

#include "hybrid.h"
#include "conv-reference.h"
#include "core/op.h"
#include "kernels/cpu/conv/conv-packed.h"
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/epilogue.h"
#include "kernels/cpu/conv/im2col-panel.h"
#include "kernels/cpu/conv/sgemm-packed.h"
#include "kernels/params/nn.h"

static const hy_packed_layout layouts[] = {
  HY_PACKED_WIDE, HY_PACKED_NARROW,
};

static float *
packed_of (hy_packed_layout layout, const float *a, int64_t m, int64_t k)
{
  float *p = aligned_alloc (64, (hy_packed_a_floats (layout, m, k)
          * sizeof (float) + 63) & ~(size_t) 63);
  hy_packed_a_pack (layout, p, m, k, a, k);
  return p;
}

/* Counts the `then` calls' coverage of C. */
typedef struct coverage {
  int *seen;
  int64_t ld;
} coverage;

static void
count_block (void *arg, int64_t row0, int64_t rows, int64_t col0,
    int64_t cols)
{
  coverage *cv = arg;
  for (int64_t i = row0; i < row0 + rows; i++)
    for (int64_t j = col0; j < col0 + cols; j++)
      cv->seen[i * cv->ld + j]++;
}

#define GUARD 12345.0f

static void
check_gemm (hy_packed_layout layout, int64_t m, int64_t k, int64_t n,
    bool accumulate)
{
  const int64_t ldb = n + 5, ldc = n + 3;
  float *a = g_new (float, m * k), *b = g_new (float, k * ldb);
  float *c = g_new (float, m * ldc), *c0 = g_new (float, m * ldc);
  conv_fill (a, m * k, 1);
  conv_fill (b, k * ldb, 2);
  conv_fill (c0, m * ldc, 3);
  float *p = packed_of (layout, a, m, k);
  /* Columns past n are C's padding: they must keep their value. */
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = n; j < ldc; j++)
      c0[i * ldc + j] = GUARD;
  memcpy (c, c0, (size_t) (m * ldc) * sizeof *c);
  coverage cv = { g_new0 (int, m * ldc), ldc };
  hy_packed_gemm (layout, p, m, k, 0, m, b, ldb, n, c, ldc, accumulate, 0,
      count_block, &cv, NULL);
  for (int64_t i = 0; i < m; i++) {
    for (int64_t j = 0; j < ldc; j++) {
      const float got = c[i * ldc + j];
      if (j >= n) {
        g_assert_cmpfloat (got, ==, GUARD);
        g_assert_cmpint (cv.seen[i * ldc + j], ==, 0);
        continue;
      }
      double want = accumulate ? c0[i * ldc + j] : 0.0, mag = fabs (want);
      for (int64_t q = 0; q < k; q++) {
        want += (double) a[i * k + q] * b[q * ldb + j];
        mag += fabs ((double) a[i * k + q] * b[q * ldb + j]);
      }
      if (!(fabs (got - want) <= 1e-5 * (mag + 1)))
        g_error ("layout %d, m %" G_GINT64_FORMAT " k %" G_GINT64_FORMAT " n %"
            G_GINT64_FORMAT ": C[%" G_GINT64_FORMAT "][%" G_GINT64_FORMAT
            "] = %g, want %g", layout, m, k, n, i, j, got, want);
      g_assert_cmpint (cv.seen[i * ldc + j], ==, 1);
    }
  }
  g_free (a);
  g_free (b);
  g_free (c);
  g_free (c0);
  g_free (cv.seen);
  free (p);
}

static gboolean
skip_without_kernel (void)
{
  if (hy_packed_gemm_supported ())
    return FALSE;
  g_test_skip ("this CPU has no AVX-512F (or HYBRIDINFER_PACKED_GEMM=0): "
      "the packed kernel is never chosen");
  return TRUE;
}

static void
test_shapes (void)
{
  if (skip_without_kernel ())
    return;
  static const int64_t ms[] = { 1, 7, 8, 9, 17, 24, 47, 70 };
  static const int64_t ks[] = { 1, 3, 127, 128, 129, 257, 300 };
  static const int64_t ns[] = { 1, 7, 8, 9, 15, 16, 17, 47, 48, 49, 100 };
  for (guint l = 0; l < G_N_ELEMENTS (layouts); l++)
    for (guint x = 0; x < G_N_ELEMENTS (ms); x++)
      for (guint y = 0; y < G_N_ELEMENTS (ks); y++)
        for (guint z = 0; z < G_N_ELEMENTS (ns); z++)
          check_gemm (layouts[l], ms[x], ks[y], ns[z], (x + y + z) % 2 == 1);
}

/* Large enough for C and A to be cut into several L2 blocks. */
static void
test_large (void)
{
  if (skip_without_kernel ())
    return;
  for (guint l = 0; l < G_N_ELEMENTS (layouts); l++) {
    check_gemm (layouts[l], 1032, 600, 70, false);
    check_gemm (layouts[l], 40, 70, 1700, true);
  }
}

/* Blocks of C, as the threads split a product, are computed bit for bit
 * as the whole: each output's sum runs over k in the same order. */
static void
test_blocks_match_whole (void)
{
  if (skip_without_kernel ())
    return;
  const int64_t m = 72, k = 300, n = 130;
  float *a = g_new (float, m * k), *b = g_new (float, k * n);
  float *whole = g_new0 (float, m * n), *parts = g_new0 (float, m * n);
  conv_fill (a, m * k, 4);
  conv_fill (b, k * n, 5);
  for (guint l = 0; l < G_N_ELEMENTS (layouts); l++) {
    const hy_packed_layout lt = layouts[l];
    float *p = packed_of (lt, a, m, k);
    hy_packed_gemm (lt, p, m, k, 0, m, b, n, n, whole, n, false, 0, NULL,
        NULL, NULL);
    /* Row blocks (at multiples of the alignment, not of a whole tile),
     * then column blocks of them. */
    const int64_t r_cut = 2 * HY_PACKED_ROW_ALIGN, c_cut = 37;
    hy_packed_gemm (lt, p, m, k, 0, r_cut, b, n, n, parts, n, false, 0,
        NULL, NULL, NULL);
    hy_packed_gemm (lt, p, m, k, r_cut, m - r_cut, b, n, c_cut,
        parts + r_cut * n, n, false, 0, NULL, NULL, NULL);
    hy_packed_gemm (lt, p, m, k, r_cut, m - r_cut, b + c_cut, n, n - c_cut,
        parts + r_cut * n + c_cut, n, false, c_cut, NULL, NULL, NULL);
    g_assert_cmpmem (whole, m * n * sizeof (float), parts,
        m * n * sizeof (float));
    free (p);
  }
  g_free (a);
  g_free (b);
  g_free (whole);
  g_free (parts);
}

/* ---- implicit im2col panels ---------------------------------------------- */

typedef struct panel_case {
  int channels, in_h, in_w, k_h, k_w, stride, pad_h, pad_w, dilate;
} panel_case;

static const panel_case panel_cases[] = {
  { 3, 11, 56, 3, 3, 1, 1, 1, 1 },      /* ResNet's 56-wide rows */
  { 2, 9, 112, 3, 3, 1, 1, 1, 1 },      /* 112 */
  { 5, 20, 14, 3, 3, 1, 1, 1, 1 },      /* 14: a vector spans two rows */
  { 4, 30, 8, 3, 3, 1, 1, 1, 1 },       /* 8: three rows */
  { 4, 25, 9, 3, 3, 1, 0, 0, 1 },       /* odd, 7 wide out, no pad: no */
  { 3, 17, 13, 3, 3, 1, 2, 2, 1 },      /* odd, pad 2 */
  { 2, 19, 15, 5, 5, 1, 2, 2, 1 },
  { 3, 21, 17, 3, 3, 1, 2, 2, 2 },      /* dilation 2 */
  { 2, 23, 23, 1, 3, 1, 0, 1, 1 },      /* 1×3, 3×1 */
  { 2, 23, 23, 3, 1, 1, 1, 0, 1 },
  { 3, 40, 40, 7, 7, 2, 3, 3, 1 },      /* conv0's 7×7/2 */
  { 3, 33, 33, 3, 3, 2, 1, 1, 1 },      /* stride 2, odd */
  { 2, 30, 30, 3, 3, 2, 0, 0, 1 },      /* stride 2, no pad */
  { 4, 29, 31, 1, 1, 2, 0, 0, 1 },      /* 1×1/2 */
  { 2, 27, 35, 3, 3, 2, 2, 3, 2 },      /* stride 2, dilated, pad 2/3 */
  { 1, 9, 120, 3, 3, 1, 1, 1, 1 },
};

static int64_t
out_len (int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dilate)
{
  return (in + 2 * pad - (k - 1) * dilate - 1) / stride + 1;
}

/* Every panel of the case's column matrix, against the matrix itself. */
static void
test_panels (gconstpointer data)
{
  if (skip_without_kernel ())
    return;
  const panel_case *q = data;
  const int64_t oh = out_len (q->in_h, q->k_h, q->stride, q->pad_h,
      q->dilate);
  const int64_t ow = out_len (q->in_w, q->k_w, q->stride, q->pad_w,
      q->dilate);
  const int64_t taps = q->k_h * q->k_w, k = q->channels * taps;
  const int64_t plane = q->in_h * q->in_w, n = oh * ow;
  /* NaN all around the input: a lane let in past the padding reads it. */
  const int64_t margin = 4096;
  float *buf = g_new (float, q->channels * plane + 2 * margin);
  memset (buf, 0xff, (size_t) (q->channels * plane + 2 * margin)
      * sizeof *buf);
  float *x = buf + margin;
  conv_fill (x, q->channels * plane, 11);
  float *col = g_new (float, k * n);
  for (int64_t c = 0; c < q->channels; c++)
    for (int64_t t = 0; t < taps; t++)
      for (int64_t pos = 0; pos < n; pos++) {
        const int64_t iy = pos / ow * q->stride - q->pad_h
            + t / q->k_w * q->dilate;
        const int64_t ix = pos % ow * q->stride - q->pad_w
            + t % q->k_w * q->dilate;
        col[(c * taps + t) * n + pos] = iy >= 0 && iy < q->in_h && ix >= 0
            && ix < q->in_w ? x[(c * q->in_h + iy) * q->in_w + ix] : 0.0f;
      }
  const size_t scratch = hy_im2col_panel_scratch_bytes (q->k_h, q->k_w);
  char *bufs = aligned_alloc (64, 2 * scratch);
  /* The wide tiles' panels (up to 48 columns, 128 rows), the narrow
   * ones' (8, 256). */
  for (int narrow = 0; narrow < 2; narrow++) {
  const int64_t panel_cols = narrow ? 8 : 48;
  if (!hy_im2col_panel_supported (q->stride, ow, q->in_h * q->in_w,
          panel_cols)) {
    /* A vector would span more than three output rows: rows under 8 (4
     * for narrow panels); conv.c keeps im2col (test_conv checks it
     * runs). */
    g_assert_cmpint (ow, <, narrow ? 4 : 8);
    continue;
  }
  /* B's column 0 at some output row, as conv.c's row blocks start. */
  for (int64_t first_row = 0; first_row < oh && first_row < 3; first_row += 2) {
    hy_im2col_panel p = {
      .x = x, .in_h = q->in_h, .in_w = q->in_w, .out_w = ow,
      .first_pos = first_row * ow, .k_h = q->k_h, .k_w = q->k_w,
      .stride_h = q->stride, .stride_w = q->stride, .dilate_h = q->dilate,
      .dilate_w = q->dilate, .pad_h = q->pad_h, .pad_w = q->pad_w,
      .scratch = bufs, .scratch_stride = scratch,
    };
    const int64_t cols = n - p.first_pos;
    static const int64_t widths[][6] = {
      { 48, 1, 16, 17, 33, 47 }, { 8, 1, 7, 3, 5, 6 },
    };
    const int64_t k_steps[][2] = {
      { 0, narrow ? 256 : 128 }, { 5, 37 }, { 1, 1 },
    };
    for (guint w = 0; w < G_N_ELEMENTS (widths[0]); w++)
      for (int64_t j = 0; j < cols; j += w == 0 ? panel_cols : 7) {
        const int64_t width = MIN (widths[narrow][w], cols - j);
        for (guint s = 0; s < G_N_ELEMENTS (k_steps); s++)
          for (int64_t k0 = k_steps[s][0]; k0 < k; k0 += k_steps[s][1]) {
            const int64_t kc = MIN (k_steps[s][1], k - k0);
            int64_t ldb = 0;
            const int thread = (int) ((j + k0) % 2);
            const float *b = hy_im2col_panel_get (&p, thread, k0, kc, j,
                width, &ldb);
            g_assert_true ((const char *) b >= bufs + thread * scratch
                && (const char *) b < bufs + (thread + 1) * scratch);
            for (int64_t kk = 0; kk < kc; kk++)
              for (int64_t jj = 0; jj < width; jj++) {
                const float want = col[(k0 + kk) * n + p.first_pos + j + jj];
                const float got = b[kk * ldb + jj];
                if (memcmp (&got, &want, sizeof got))
                  g_error ("row %" G_GINT64_FORMAT " (channel %"
                      G_GINT64_FORMAT ", tap %" G_GINT64_FORMAT
                      "), position %" G_GINT64_FORMAT " (output row %"
                      G_GINT64_FORMAT ", column %" G_GINT64_FORMAT
                      "): %g, want %g", k0 + kk, (k0 + kk) / taps,
                      (k0 + kk) % taps, p.first_pos + j + jj,
                      (p.first_pos + j + jj) / ow,
                      (p.first_pos + j + jj) % ow, got, want);
              }
          }
      }
  }
  }
  free (bufs);
  g_free (col);
  g_free (buf);
}

/* ---- convolutions -------------------------------------------------------- */

typedef struct conv_case {
  int batch, channels, size, filters, kernel, stride, pad, dilate, groups;
  bool bias, batch_norm, residual, relu;
  int height;                   /* 0: size (square) */
  bool implicit;                /* the implicit im2col can run it */
} conv_case;

static const conv_case conv_cases[] = {
  /* up to 256: the narrow tiles, and their 8-column panels where the
   * rows are at least 4 wide */
  { 1, 64, 14, 64, 3, 1, 1, 1, 1, false, true, true, true, 0, true },
  { 2, 16, 9, 40, 3, 2, 1, 1, 1, true, false, false, false, 0, true },
  { 1, 96, 7, 200, 1, 1, 0, 1, 1, true, true, false, true, 0, false },
  { 1, 32, 12, 24, 1, 2, 0, 1, 1, false, false, false, true, 0, true },
  { 1, 3, 23, 16, 7, 2, 3, 1, 1, false, true, false, true, 0, true },
  { 2, 24, 10, 36, 3, 1, 2, 2, 3, true, false, true, false, 0, true },
  { 1, 200, 5, 9, 3, 1, 1, 1, 1, true, true, true, true, 0, true },
  { 1, 300, 7, 40, 3, 1, 1, 1, 1, false, true, true, true, 0, true },
  /* more filters than positions: two threads split the filters, each
   * building the same panels in its own buffer */
  { 1, 64, 7, 96, 3, 1, 1, 1, 1, true, false, false, true, 0, true },
  { 1, 20, 5, 24, 3, 1, 0, 1, 1, true, false, false, true, 9, false },
  /* more than 256 output positions: the wide tiles, and for k×k ones
   * the implicit im2col */
  { 1, 40, 20, 24, 3, 1, 1, 1, 1, true, true, true, true, 0, true },
  { 2, 24, 33, 20, 1, 1, 0, 1, 2, false, false, false, true, 0, false },
  { 1, 16, 56, 24, 3, 1, 1, 1, 1, false, true, false, true, 0, true },
  { 1, 8, 112, 17, 3, 1, 1, 1, 1, true, false, true, false, 12, true },
  { 1, 3, 64, 16, 7, 2, 3, 1, 1, false, true, false, true, 0, true },
  { 1, 12, 13, 20, 3, 1, 2, 1, 1, true, false, false, true, 41, true },
  { 1, 10, 14, 9, 3, 1, 1, 1, 1, true, true, true, true, 40, true },
  { 1, 10, 9, 16, 3, 1, 0, 1, 1, true, false, false, false, 60, false },
  { 1, 20, 24, 16, 3, 1, 2, 2, 1, false, false, true, true, 0, true },
  { 2, 18, 40, 24, 3, 2, 1, 1, 1, true, true, true, true, 0, true },
  { 1, 16, 30, 24, 3, 1, 0, 1, 2, true, false, false, true, 0, true },
  { 1, 32, 40, 16, 1, 2, 0, 1, 1, false, true, false, true, 0, true },
  { 1, 6, 41, 8, 5, 2, 2, 2, 1, true, false, false, false, 35, true },
  /* the narrow tiles' panels for more filters than one row block holds
   * (512 of 256 k a block): cut into blocks on one thread, over two K
   * blocks */
  { 1, 40, 7, 600, 3, 1, 1, 1, 1, true, false, true, true, 0, true },
};

/* ---- the epilogue in registers ------------------------------------- */

typedef struct then_epilogue {
  const hy_fused_epilogue *fused;
  float *c;
  const float *res;
  int64_t ldc;
  hy_epilogue_channels ch;
} then_epilogue;

/* epilogue.h's pass on a finished block, as conv.c runs it. */
static void
epilogue_pass (void *arg, int64_t row0, int64_t rows, int64_t col0,
    int64_t cols)
{
  const then_epilogue *e = arg;
  const int64_t off = row0 * e->ldc + col0;
  const hy_epilogue_channels ch = hy_epilogue_channels_from (&e->ch, row0);
  hy_epilogue_rows (e->fused, e->c + off, e->res ? e->res + off : NULL,
      rows, cols, e->ldc, &ch);
}

static void
must_not_run (void *arg, int64_t row0, int64_t rows, int64_t col0,
    int64_t cols)
{
  g_error ("`then` ran where the tiles applied the epilogue");
}

static void
test_epilogue_in_registers (void)
{
  if (skip_without_kernel ())
    return;
  /* 21 rows (a partial row tile), k over three K blocks, 100 columns (a
   * partial vector and a partial tile column), C rows padded. */
  const int64_t m = 21, k = 300, n = 100, ldc = n + 7;
  float *a = g_new (float, m * k), *b = g_new (float, k * n);
  float *res = g_new (float, m * ldc), *bias = g_new (float, m);
  float *bn = g_new (float, 3 * m);
  float *want = g_new (float, m * ldc), *got = g_new (float, m * ldc);
  conv_fill (a, m * k, 11);
  conv_fill (b, k * n, 12);
  conv_fill (res, m * ldc, 13);
  conv_fill (bias, m, 14);
  conv_fill (bn, 3 * m, 15);
  /* Values either side of the activations' edges: relu's 0, clip's
   * [-1, 0.5], hard sigmoid's [-3, 3]. */
  for (int64_t i = 0; i < 3 * m; i++)
    bn[i] *= 4.0f;
  float *p = packed_of (HY_PACKED_WIDE, a, m, k);
  const hy_fused_act acts[] = {
    HY_FUSED_ACT_NONE, HY_FUSED_ACT_RELU, HY_FUSED_ACT_CLIP,
    HY_FUSED_ACT_HARD_SIGMOID, HY_FUSED_ACT_HARD_SWISH,
  };
  for (guint t = 0; t < G_N_ELEMENTS (acts); t++)
    for (int with = 0; with < 8; with++) {
      const bool has_bias = with & 1, has_bn = with & 2, has_res = with & 4;
      const hy_fused_epilogue fused = {
        .act = acts[t], .alpha = -1.0f, .beta = 0.5f,
        .batch_norm = has_bn, .residual = has_res,
      };
      g_assert_true (hy_packed_epilogue_fits (acts[t]));
      then_epilogue e = {
        &fused, want, has_res ? res : NULL, ldc,
        { has_bias ? bias : NULL, has_bn ? bn : NULL, m },
      };
      const hy_packed_epilogue pe = {
        acts[t], fused.alpha, fused.beta, e.ch.bias, e.ch.bn, m, e.res,
      };
      for (int64_t i = 0; i < m * ldc; i++)
        want[i] = got[i] = GUARD;
      hy_packed_gemm (HY_PACKED_WIDE, p, m, k, 0, m, b, n, n, want, ldc,
          false, 0, epilogue_pass, &e, NULL);
      /* The tiles' own; `then` must not run on top of it. */
      hy_packed_gemm (HY_PACKED_WIDE, p, m, k, 0, m, b, n, n, got, ldc,
          false, 0, must_not_run, NULL, &pe);
      if (memcmp (want, got, (size_t) (m * ldc) * sizeof (float)))
        for (int64_t i = 0; i < m * ldc; i++)
          if (memcmp (&want[i], &got[i], sizeof (float)))
            g_error ("act %d, bias %d, bn %d, res %d: C[%" G_GINT64_FORMAT
                "][%" G_GINT64_FORMAT "] %.9g, the pass after gives %.9g",
                acts[t], has_bias, has_bn, has_res, i / ldc, i % ldc, got[i],
                want[i]);
    }
  /* The activations it leaves to `then`. */
  g_assert_false (hy_packed_epilogue_fits (HY_FUSED_ACT_TANH));
  g_assert_false (hy_packed_epilogue_fits (HY_FUSED_ACT_SIGMOID));
  g_assert_false (hy_packed_epilogue_fits (HY_FUSED_ACT_LEAKY));
  free (p);
  g_free (a);
  g_free (b);
  g_free (res);
  g_free (bias);
  g_free (bn);
  g_free (want);
  g_free (got);
}

/* The convolution, its epilogue after it, in double precision. */
static void
reference_conv (const conv_case *q, int out_h, int out, const float *x,
    const float *w, const float *bias, const float *bn, const float *res,
    float *y)
{
  const conv_reference r = {
    .batch = q->batch, .channels = q->channels,
    .height = q->height ? q->height : q->size, .width = q->size,
    .filters = q->filters, .kernel = q->kernel, .stride = q->stride,
    .pad = q->pad, .dilate = q->dilate, .groups = q->groups,
    .act = q->relu ? HY_FUSED_ACT_RELU : HY_FUSED_ACT_NONE,
  };
  conv_reference_run (&r, out_h, out, x, w, bias, bn, res, y);
}

static void
test_conv (gconstpointer data)
{
  if (skip_without_kernel ())
    return;
  const conv_case *q = data;
  const int ext = (q->kernel - 1) * q->dilate + 1;
  const int out = (q->size + 2 * q->pad - ext) / q->stride + 1;
  const int in_h = q->height ? q->height : q->size;
  const int out_h = (in_h + 2 * q->pad - ext) / q->stride + 1;
  hy_conv_params p = {
    .op = hy_op_lookup ("Convolution")->id, .n_spatial = 2,
    .kernel = { q->kernel, q->kernel }, .stride = { q->stride, q->stride },
    .dilate = { q->dilate, q->dilate }, .pad = { q->pad, q->pad },
    .num_filter = q->filters, .num_group = q->groups, .no_bias = !q->bias,
    .fused = {
      .act = q->relu ? HY_FUSED_ACT_RELU : HY_FUSED_ACT_NONE,
      .batch_norm = q->batch_norm, .residual = q->residual,
    },
  };
  hy_shape xs = { 4, { q->batch, q->channels, in_h, q->size } };
  hy_shape ws = { 4, { q->filters, q->channels / q->groups, q->kernel,
      q->kernel } };
  hy_shape ys = { 4, { q->batch, q->filters, out_h, out } };
  hy_tensor *in[5];
  int n_in = 0;
  in[n_in] = hy_tensor_new (&xs);
  conv_fill (in[n_in++]->data, hy_shape_numel (&xs), 6);
  in[n_in] = hy_tensor_new (&ws);
  conv_fill (in[n_in++]->data, hy_shape_numel (&ws), 7);
  const conv_operands ops = conv_operands_add (in, &n_in, q->filters,
      q->bias, q->batch_norm, q->residual, &ys);
  hy_tensor *got = hy_tensor_new (&ys);
  float *want = g_new (float, hy_shape_numel (&ys));
  reference_conv (q, out_h, out, in[0]->data, in[1]->data, ops.bias, ops.bn,
      ops.res, want);

  hy_conv_packed *conv = hy_conv_packed_new (&p,
      (const hy_tensor *const *) in, n_in, got, TRUE);
  g_assert_nonnull (conv);
  /* Weights that may change between forwards are never packed. */
  g_assert_null (hy_conv_packed_new (&p, (const hy_tensor *const *) in,
          n_in, got, FALSE));
  /* Whether its column matrix can be built panel by panel: then both
   * ways, which must agree bit for bit. */
  g_assert_cmpint (hy_conv_packed_set_implicit (conv, true), ==,
      q->implicit);
  hy_cpu_ctx ctx[2] = { { 0 }, { 0 } };
  hy_cpu_ctx_set_threads (&ctx[1], 2);
  float *first = g_new (float, hy_shape_numel (&ys));
  bool have_first = false;
  for (int implicit = 0; implicit < (q->implicit ? 2 : 1); implicit++) {
    g_assert_true (hy_conv_packed_set_implicit (conv, implicit));
    /* One thread and two, twice (the second time on a workspace sized
     * by the first). */
    for (int r = 0; r < 4; r++) {
      memset (got->data, 0xff, hy_tensor_nbytes (got));   /* NaN */
      hy_cpu_convolution_packed (&ctx[r % 2], conv,
          (const hy_tensor *const *) in, n_in, &got, 1);
      for (int64_t i = 0; i < hy_shape_numel (&ys); i++)
        if (!(fabsf (got->data[i] - want[i]) <= 1e-4f * (1
                    + fabsf (want[i]))))
          g_error ("%s, %d thread(s): output %" G_GINT64_FORMAT
              ": %g, want %g", implicit ? "implicit im2col" : "im2col",
              r % 2 + 1, i, got->data[i], want[i]);
      if (!have_first)
        memcpy (first, got->data, hy_tensor_nbytes (got));
      have_first = true;
      g_assert_cmpmem (first, hy_tensor_nbytes (got), got->data,
          hy_tensor_nbytes (got));
    }
  }
  g_free (first);
  hy_cpu_ctx_clear (&ctx[0]);
  hy_cpu_ctx_clear (&ctx[1]);
  hy_conv_packed_free (conv);
  for (int i = 0; i < n_in; i++)
    hy_tensor_free (in[i]);
  hy_tensor_free (got);
  g_free (want);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sgemm-packed/shapes", test_shapes);
  g_test_add_func ("/sgemm-packed/large", test_large);
  g_test_add_func ("/sgemm-packed/epilogue-in-registers",
      test_epilogue_in_registers);
  g_test_add_func ("/sgemm-packed/blocks-match-whole",
      test_blocks_match_whole);
  for (guint i = 0; i < G_N_ELEMENTS (panel_cases); i++) {
    g_autofree char *name = g_strdup_printf ("/sgemm-packed/panels/%u", i);
    g_test_add_data_func (name, &panel_cases[i], test_panels);
  }
  for (guint i = 0; i < G_N_ELEMENTS (conv_cases); i++) {
    g_autofree char *name = g_strdup_printf ("/sgemm-packed/conv/%u", i);
    g_test_add_data_func (name, &conv_cases[i], test_conv);
  }
  return g_test_run ();
}
