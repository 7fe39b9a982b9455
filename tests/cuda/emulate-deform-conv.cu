/*
 * emulate-deform-conv.cu — the CUDA _contrib_ModulatedDeformableConvolution
 * (deform-conv.cu) checked on the host against the CPU kernel: per
 * sample, the column kernel's element function over every column element
 * at the sample's place in each tensor (the launch's pointers), then
 * what cublasSgemmStridedBatched computes by its definition
 * (column-major, with the sizes, leading dimensions, strides and batch
 * the kernel hands it), then the bias launch's element function.  That
 * checks every number the launches get; the cuBLAS call itself needs a
 * GPU (tests/conformance with --device).
 *
 * The offsets are drawn to sample outside the image (whole taps outside
 * (−1, H) × (−1, W), and corners outside it), on the grid exactly
 * (multiples of ½, which put positions on −1, 0 and H − 1), and as NaN;
 * the masks 0, 1, fractional, or a mix of the three.
 *
 * One line per case; exits 1 if any case failed.
 */
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/deform-conv.cuh"
#include "emulate-harness.h"

typedef enum {
  OFFSET_NEAR,                  /* uniform in (−2, 2) */
  OFFSET_FAR,                   /* uniform in (−H − 2, H + 2): most outside */
  OFFSET_GRID,                  /* multiples of ½ in [−3, 3] */
  OFFSET_NAN,                   /* near, every seventh NaN */
} offset_kind;

typedef enum {
  MASK_FRACTIONAL,              /* uniform in [0, 1) */
  MASK_ZERO,
  MASK_ONE,
  MASK_MIXED,                   /* 0, 1 or fractional */
} mask_kind;

static const char *const offset_names[] = { "near", "far", "grid", "nan" };
static const char *const mask_names[] = { "fractional", "0", "1", "mixed" };

static float
offset_value (offset_kind kind, int64_t i, float extent)
{
  switch (kind) {
    case OFFSET_FAR:
      return emu_uniform (-extent - 2.0f, extent + 2.0f);
    case OFFSET_GRID:
      return roundf (emu_uniform (-3.0f, 3.0f) * 2.0f) / 2.0f;
    case OFFSET_NAN:
      if (i % 7 == 3)
        return NAN;
      return emu_uniform (-2.0f, 2.0f);
    case OFFSET_NEAR:
    default:
      return emu_uniform (-2.0f, 2.0f);
  }
}

static float
mask_value (mask_kind kind)
{
  switch (kind) {
    case MASK_ZERO:
      return 0.0f;
    case MASK_ONE:
      return 1.0f;
    case MASK_MIXED: {
      const float r = emu_uniform (0.0f, 3.0f);
      return r < 1.0f ? 0.0f : r < 2.0f ? 1.0f : r - 2.0f;
    }
    case MASK_FRACTIONAL:
    default:
      return emu_uniform (0.0f, 1.0f);
  }
}

/* cublasSgemmStridedBatched (N, N) by its definition, alpha 1, beta 0:
 * column-major C_b (m, n) = A_b (m, k) · B_b (k, n). */
static void
reference_gemm (const hy_cuda_deform_gemm *g, const float *a, const float *b,
    float *c)
{
  for (int bi = 0; bi < g->batch; bi++) {
    const float *ab = a + bi * g->stride_a, *bb = b + bi * g->stride_b;
    float *cb = c + bi * g->stride_c;
    for (int j = 0; j < g->n; j++)
      for (int i = 0; i < g->m; i++) {
        double sum = 0.0;
        for (int l = 0; l < g->k; l++)
          sum += (double) ab[i + (int64_t) l * g->lda]
              * bb[l + (int64_t) j * g->ldb];
        cb[i + (int64_t) j * g->ldc] = (float) sum;
      }
  }
}

/* x: data (N, C, H, W); w: weight (F, C/g, kh, kw); bias: with a bias. */
static void
run (const char *const *kv, hy_shape x, hy_shape w, bool bias,
    offset_kind offsets, mask_kind masks)
{
  /* The offset and mask shapes follow from the output's plane, which
   * is the convolution's. */
  hy_shape in[5] = { x, S (0), S (0), w, S (w.dims[0]) };
  {
    GHashTable *attrs = g_hash_table_new (g_str_hash, g_str_equal);
    for (int i = 0; kv[i]; i += 2)
      g_hash_table_insert (attrs, (char *) kv[i], (char *) kv[i + 1]);
    const hy_op_info *op = hy_op_lookup (
        "_contrib_ModulatedDeformableConvolution");
    GError *error = NULL;
    void *params = op ? hy_op_params_new (op, attrs, &error) : NULL;
    g_hash_table_unref (attrs);
    if (!params) {
      emu_fail_setup ("_contrib_ModulatedDeformableConvolution",
          error ? error->message : "unknown op");
      g_clear_error (&error);
      return;
    }
    const hy_deform_conv_params *p = (const hy_deform_conv_params *) params;
    int64_t out[2];
    for (int i = 0; i < 2; i++)
      out[i] = (x.dims[2 + i] + 2 * p->pad[i] - (p->dilate[i]
              * (p->kernel[i] - 1) + 1)) / p->stride[i] + 1;
    const int64_t taps = p->kernel[0] * p->kernel[1];
    const int64_t dg = p->num_deformable_group;
    in[1] = S (x.dims[0], 2 * dg * taps, out[0], out[1]);
    in[2] = S (x.dims[0], dg * taps, out[0], out[1]);
    g_free (params);
  }

  emu e;
  if (!emu_open (&e, "_contrib_ModulatedDeformableConvolution", kv, in,
          bias ? 5 : 4))
    return;
  {
    const size_t len = strlen (e.name);
    g_snprintf (e.name + len, sizeof e.name - len, " offsets %s, mask %s",
        offset_names[offsets], mask_names[masks]);
  }
  const float extent = (float) (x.dims[2] > x.dims[3] ? x.dims[2]
      : x.dims[3]);
  for (int k = 0; k < e.n_in; k++)
    for (int64_t i = 0; i < numel (e.in[k]); i++)
      e.in[k]->data[i] = k == 1 ? offset_value (offsets, i, extent)
          : k == 2 ? mask_value (masks) : emu_uniform (-1.0f, 1.0f);
  emu_run_cpu (&e);

  const hy_deform_conv_params *p = (const hy_deform_conv_params *) e.params;
  hy_tensor *y = e.got[0];
  const hy_cuda_deform_args a = hy_cuda_deform_plan (p, &e.in[0]->shape,
      &y->shape);
  hy_cuda_deform_gemm g;
  if (!hy_cuda_deform_gemm_of (p, &a, &g)) {
    emu_fail_setup (e.name, "gemm geometry refused");
    emu_close (&e);
    return;
  }
  /* The launches' sizes must cover the tensors exactly. */
  const int64_t batch = x.dims[0];
  if (a.x_sample * batch != numel (e.in[0])
      || a.offset_sample * batch != numel (e.in[1])
      || a.mask_sample * batch != numel (e.in[2])
      || a.y_sample * batch != numel (y)
      || g.stride_c * g.batch != a.y_sample
      || g.stride_a * g.batch != a.columns
      || g.stride_b * g.batch != numel (e.in[3])) {
    emu_fail_setup (e.name, "the launches' sizes do not match the tensors");
    emu_close (&e);
    return;
  }

  float *col = g_new (float, a.columns);
  for (int64_t n = 0; n < batch; n++) {
    for (int64_t i = 0; i < a.columns; i++)
      col[i] = hy_cuda_deform_column (&a, e.in[0]->data + n * a.x_sample,
          e.in[1]->data + n * a.offset_sample,
          e.in[2]->data + n * a.mask_sample, i);
    reference_gemm (&g, col, e.in[3]->data, y->data + n * a.y_sample);
  }
  g_free (col);
  if (bias)
    for (int64_t i = 0; i < numel (y); i++)
      y->data[i] = hy_cuda_deform_biased (y->data[i], e.in[4]->data,
          p->num_filter, a.ho * a.wo, i);
  emu_finish (&e);
}

/* ---- cases -------------------------------------------------------------- */

int
main (void)
{
  /* CenterNet's layer, small: 3×3, pad 1, one deformable group. */
  const emu_kv plain = KV ("kernel", "(3, 3)", "pad", "(1, 1)",
      "num_filter", "3", "no_bias", "False");
  for (int o = OFFSET_NEAR; o <= OFFSET_NAN; o++)
    for (int m = MASK_FRACTIONAL; m <= MASK_MIXED; m++)
      run (plain, S (2, 4, 6, 5), S (3, 4, 3, 3), true, (offset_kind) o,
          (mask_kind) m);
  /* Deformable groups: each channel block its own offsets and masks. */
  run (KV ("kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "4",
          "num_deformable_group", "2", "no_bias", "True"), S (2, 4, 5, 5),
      S (4, 4, 3, 3), false, OFFSET_NEAR, MASK_MIXED);
  run (KV ("kernel", "(1, 1)", "num_filter", "2",
          "num_deformable_group", "4"), S (1, 4, 4, 3), S (2, 4, 1, 1),
      true, OFFSET_GRID, MASK_FRACTIONAL);
  /* Convolution groups, alone and with deformable groups across them. */
  run (KV ("kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "4",
          "num_group", "2"), S (2, 4, 5, 6), S (4, 2, 3, 3), true,
      OFFSET_FAR, MASK_FRACTIONAL);
  run (KV ("kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "6",
          "num_group", "3", "num_deformable_group", "2"), S (1, 6, 5, 4),
      S (6, 2, 3, 3), true, OFFSET_NEAR, MASK_FRACTIONAL);
  run (KV ("kernel", "(2, 2)", "num_filter", "4", "num_group", "2",
          "num_deformable_group", "4", "no_bias", "True"), S (2, 8, 4, 4),
      S (4, 4, 2, 2), false, OFFSET_GRID, MASK_MIXED);
  /* Stride, dilation and padding, square and not. */
  run (KV ("kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)",
          "num_filter", "3"), S (1, 3, 7, 8), S (3, 3, 3, 3), true,
      OFFSET_NEAR, MASK_FRACTIONAL);
  run (KV ("kernel", "(3, 3)", "dilate", "(2, 2)", "pad", "(2, 2)",
          "num_filter", "2", "num_deformable_group", "2"), S (1, 2, 6, 6),
      S (2, 2, 3, 3), true, OFFSET_FAR, MASK_MIXED);
  run (KV ("kernel", "(3, 2)", "stride", "(2, 1)", "dilate", "(1, 2)",
          "pad", "(1, 0)", "num_filter", "5"), S (2, 3, 7, 6),
      S (5, 3, 3, 2), true, OFFSET_GRID, MASK_ONE);
  run (KV ("kernel", "(2, 3)", "stride", "(1, 3)", "pad", "(0, 2)",
          "num_filter", "2", "num_group", "2", "num_deformable_group", "2"),
      S (1, 4, 5, 7), S (2, 2, 2, 3), true, OFFSET_NAN, MASK_FRACTIONAL);
  /* A 1×1 map: every corner but one outside. */
  run (KV ("kernel", "(1, 1)", "num_filter", "2"), S (2, 3, 1, 1),
      S (2, 3, 1, 1), true, OFFSET_GRID, MASK_FRACTIONAL);
  return emu_summary ();
}
