/*
 * test-sgemm-packed.c — the packed-A GEMM (kernels/cpu/sgemm-packed.h)
 * and the convolutions that run on it (kernels/cpu/conv-packed.h),
 * against sums taken in double precision here:
 *  - shapes around every tile edge (rows around MR, columns around the
 *    16-float vectors and the 48-column tiles, k around the 128-step
 *    blocks), strided B and C, accumulate or not;
 *  - a row or column block of C is computed bit for bit as in the whole
 *    product, nothing outside the block is written, and the `then`
 *    callback sees every element of the block exactly once;
 *  - both layouts (wide tiles, narrow tiles);
 *  - convolutions (3×3, 1×1, strided, padded, dilated, grouped, batch 2,
 *    maps that take either layout) with bias, BatchNorm, residual and
 *    relu fused, on two threads.
 *
 * On a CPU without AVX-512 the kernel is never chosen: the tests say so
 * and skip.
 */
#include <math.h>
#include <string.h>

#include "hybrid.h"
#include "core/op.h"
#include "kernels/cpu/conv-packed.h"
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/sgemm-packed.h"
#include "kernels/params/nn.h"

static void
fill (float *v, int64_t n, guint32 seed)
{
  GRand *r = g_rand_new_with_seed (seed);
  for (int64_t i = 0; i < n; i++)
    v[i] = (float) g_rand_double_range (r, -1, 1);
  g_rand_free (r);
}

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
  fill (a, m * k, 1);
  fill (b, k * ldb, 2);
  fill (c0, m * ldc, 3);
  float *p = packed_of (layout, a, m, k);
  /* Columns past n are C's padding: they must keep their value. */
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = n; j < ldc; j++)
      c0[i * ldc + j] = GUARD;
  memcpy (c, c0, (size_t) (m * ldc) * sizeof *c);
  coverage cv = { g_new0 (int, m * ldc), ldc };
  hy_packed_gemm (layout, p, m, k, 0, m, b, ldb, n, c, ldc, accumulate, 0,
      count_block, &cv);
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
  fill (a, m * k, 4);
  fill (b, k * n, 5);
  for (guint l = 0; l < G_N_ELEMENTS (layouts); l++) {
    const hy_packed_layout lt = layouts[l];
    float *p = packed_of (lt, a, m, k);
    hy_packed_gemm (lt, p, m, k, 0, m, b, n, n, whole, n, false, 0, NULL,
        NULL);
    /* Row blocks (at multiples of the alignment, not of a whole tile),
     * then column blocks of them. */
    const int64_t r_cut = 2 * HY_PACKED_ROW_ALIGN, c_cut = 37;
    hy_packed_gemm (lt, p, m, k, 0, r_cut, b, n, n, parts, n, false, 0,
        NULL, NULL);
    hy_packed_gemm (lt, p, m, k, r_cut, m - r_cut, b, n, c_cut,
        parts + r_cut * n, n, false, 0, NULL, NULL);
    hy_packed_gemm (lt, p, m, k, r_cut, m - r_cut, b + c_cut, n, n - c_cut,
        parts + r_cut * n + c_cut, n, false, c_cut, NULL, NULL);
    g_assert_cmpmem (whole, m * n * sizeof (float), parts,
        m * n * sizeof (float));
    free (p);
  }
  g_free (a);
  g_free (b);
  g_free (whole);
  g_free (parts);
}

/* ---- convolutions -------------------------------------------------------- */

typedef struct conv_case {
  int batch, channels, size, filters, kernel, stride, pad, dilate, groups;
  bool bias, batch_norm, residual, relu;
} conv_case;

static const conv_case conv_cases[] = {
  { 1, 64, 14, 64, 3, 1, 1, 1, 1, false, true, true, true },
  { 2, 16, 9, 40, 3, 2, 1, 1, 1, true, false, false, false },
  { 1, 96, 7, 200, 1, 1, 0, 1, 1, true, true, false, true },
  { 1, 32, 12, 24, 1, 2, 0, 1, 1, false, false, false, true },
  { 1, 3, 23, 16, 7, 2, 3, 1, 1, false, true, false, true },
  { 2, 24, 10, 36, 3, 1, 2, 2, 3, true, false, true, false },
  { 1, 200, 5, 9, 3, 1, 1, 1, 1, true, true, true, true },
  /* more than 256 output positions: the wide tiles */
  { 1, 40, 20, 24, 3, 1, 1, 1, 1, true, true, true, true },
  { 2, 24, 33, 20, 1, 1, 0, 1, 2, false, false, false, true },
};

/* The convolution, its epilogue after it, in double precision. */
static void
reference_conv (const conv_case *q, int out, const float *x, const float *w,
    const float *bias, const float *bn, const float *res, float *y)
{
  const int cg = q->channels / q->groups, fg = q->filters / q->groups;
  for (int b = 0; b < q->batch; b++)
    for (int f = 0; f < q->filters; f++)
      for (int oy = 0; oy < out; oy++)
        for (int ox = 0; ox < out; ox++) {
          const int grp = f / fg;
          double s = bias ? bias[f] : 0.0;
          for (int c = 0; c < cg; c++)
            for (int i = 0; i < q->kernel; i++)
              for (int j = 0; j < q->kernel; j++) {
                const int iy = oy * q->stride - q->pad + i * q->dilate;
                const int ix = ox * q->stride - q->pad + j * q->dilate;
                if (iy < 0 || iy >= q->size || ix < 0 || ix >= q->size)
                  continue;
                s += (double) w[((f * cg + c) * q->kernel + i) * q->kernel
                    + j] * x[((b * q->channels + grp * cg + c) * q->size
                        + iy) * q->size + ix];
              }
          if (bn)
            s = (s - bn[f]) * bn[q->filters + f] + bn[2 * q->filters + f];
          const int64_t o = ((int64_t) (b * q->filters + f) * out + oy) * out
              + ox;
          if (res)
            s += res[o];
          if (q->relu && s < 0)
            s = 0;
          y[o] = (float) s;
        }
}

static void
test_conv (gconstpointer data)
{
  if (skip_without_kernel ())
    return;
  const conv_case *q = data;
  const int ext = (q->kernel - 1) * q->dilate + 1;
  const int out = (q->size + 2 * q->pad - ext) / q->stride + 1;
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
  hy_shape xs = { 4, { q->batch, q->channels, q->size, q->size } };
  hy_shape ws = { 4, { q->filters, q->channels / q->groups, q->kernel,
      q->kernel } };
  hy_shape bs = { 1, { q->filters } }, ns = { 2, { 3, q->filters } };
  hy_shape ys = { 4, { q->batch, q->filters, out, out } };
  hy_tensor *in[5];
  int n_in = 0;
  in[n_in] = hy_tensor_new (&xs);
  fill (in[n_in]->data, hy_shape_numel (&xs), 6);
  in[++n_in] = hy_tensor_new (&ws);
  fill (in[n_in]->data, hy_shape_numel (&ws), 7);
  const float *bias = NULL, *bn = NULL, *res = NULL;
  if (q->bias) {
    in[++n_in] = hy_tensor_new (&bs);
    fill (in[n_in]->data, q->filters, 8);
    bias = in[n_in]->data;
  }
  if (q->batch_norm) {
    in[++n_in] = hy_tensor_new (&ns);
    fill (in[n_in]->data, 3 * q->filters, 9);
    for (int f = 0; f < q->filters; f++)       /* a positive scale */
      in[n_in]->data[q->filters + f] += 1.5f;
    bn = in[n_in]->data;
  }
  if (q->residual) {
    in[++n_in] = hy_tensor_new (&ys);
    fill (in[n_in]->data, hy_shape_numel (&ys), 10);
    res = in[n_in]->data;
  }
  n_in++;
  hy_tensor *got = hy_tensor_new (&ys);
  float *want = g_new (float, hy_shape_numel (&ys));
  reference_conv (q, out, in[0]->data, in[1]->data, bias, bn, res, want);

  hy_conv_packed *conv = hy_conv_packed_new (&p,
      (const hy_tensor *const *) in, n_in, got, 2u);
  g_assert_nonnull (conv);
  /* Weights that may change between forwards are never packed. */
  g_assert_null (hy_conv_packed_new (&p, (const hy_tensor *const *) in,
          n_in, got, 1u));
  hy_cpu_ctx ctx = { 0 };
  hy_cpu_ctx_set_threads (&ctx, 2);
  for (int r = 0; r < 2; r++) {
    memset (got->data, 0xff, hy_tensor_nbytes (got));   /* NaN */
    hy_cpu_convolution_packed (&ctx, conv, (const hy_tensor *const *) in,
        n_in, &got, 1);
    for (int64_t i = 0; i < hy_shape_numel (&ys); i++)
      if (!(fabsf (got->data[i] - want[i]) <= 1e-4f * (1 + fabsf (want[i]))))
        g_error ("output %" G_GINT64_FORMAT ": %g, want %g", i,
            got->data[i], want[i]);
  }
  hy_cpu_ctx_clear (&ctx);
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
  g_test_add_func ("/sgemm-packed/blocks-match-whole",
      test_blocks_match_whole);
  for (guint i = 0; i < G_N_ELEMENTS (conv_cases); i++) {
    g_autofree char *name = g_strdup_printf ("/sgemm-packed/conv/%u", i);
    g_test_add_data_func (name, &conv_cases[i], test_conv);
  }
  return g_test_run ();
}
