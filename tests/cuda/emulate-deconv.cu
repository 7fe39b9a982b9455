/*
 * emulate-deconv.cu — the CUDA Deconvolution (deconv.cu) checked on the
 * host against the CPU kernel, as far as a machine without a GPU can:
 *
 *  - cuDNN's part: the geometry prepare hands cuDNN (deconv.cuh) drives a
 *    plain implementation of what cudnnConvolutionBackwardData computes
 *    by definition (the adjoint of the grouped cross-correlation with
 *    that pad, stride and dilation, input dx and output dy as described)
 *    and the result, plus the bias launch's element function, must be the
 *    CPU kernel's; and the forward output size cuDNN checks at prepare
 *    (⌊(in + 2·pad − dilate·(k − 1) − 1) / stride⌋ + 1) must give the
 *    data's shape back.  That checks every number in the descriptors; the
 *    cuDNN calls themselves need a GPU (tests/conformance with --device).
 *  - the direct kernel (dilations above 1, MXNet's own col2im there): its
 *    element function over every output, for every case.
 *
 * One line per case and path; exits 1 if any case failed.
 */
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/deconv.cuh"
#include "emulate-harness.h"

/* cudnnConvolutionBackwardData by its definition, for the geometry g:
 * dx (g.y dims, our output) = the adjoint, applied to dy (g.x, our
 * input), of dy = conv (dx, w). */
static void
reference_backward_data (const hy_cuda_deconv_geometry *g, const float *dy,
    const float *w, float *dx)
{
  const int64_t n = g->y[0], cx = g->y[1], hx = g->y[2], wx = g->y[3];
  const int64_t k = g->x[1], hy = g->x[2], wy = g->x[3];
  const int64_t cg = g->w[1], r = g->w[2], s = g->w[3];
  const int64_t kg = k / g->groups;
  memset (dx, 0, (size_t) (n * cx * hx * wx) * sizeof (float));
  for (int64_t b = 0; b < n; b++)
    for (int64_t f = 0; f < k; f++)
      for (int64_t p = 0; p < hy; p++)
        for (int64_t q = 0; q < wy; q++) {
          const float v = dy[((b * k + f) * hy + p) * wy + q];
          for (int64_t c = 0; c < cg; c++)
            for (int64_t i = 0; i < r; i++)
              for (int64_t j = 0; j < s; j++) {
                const int64_t yy = p * g->stride[0] - g->pad[0]
                    + i * g->dilate[0];
                const int64_t xx = q * g->stride[1] - g->pad[1]
                    + j * g->dilate[1];
                if (yy < 0 || yy >= hx || xx < 0 || xx >= wx)
                  continue;
                const int64_t ch = f / kg * cg + c;
                dx[((b * cx + ch) * hx + yy) * wx + xx] +=
                    v * w[((f * cg + c) * r + i) * s + j];
              }
        }
}

/* cuDNN's forward output size along each axis, from the descriptors. */
static bool
forward_dims_match (const hy_cuda_deconv_geometry *g)
{
  if (g->w[0] != g->x[1] || (int64_t) g->w[1] * g->groups != g->y[1]
      || g->x[0] != g->y[0])
    return false;
  for (int i = 0; i < 2; i++) {
    const int ext = g->dilate[i] * (g->w[2 + i] - 1) + 1;
    if ((g->y[2 + i] + 2 * g->pad[i] - ext) / g->stride[i] + 1
        != g->x[2 + i])
      return false;
  }
  return true;
}

/* filters: num_filter, the bias's length; 0: no bias. */
static void
run (const char *const *kv, hy_shape x, hy_shape w, int64_t filters)
{
  const bool bias = filters > 0;
  const hy_shape in[3] = { x, w, S (filters) };
  emu e;
  if (!emu_setup (&e, "Deconvolution", kv, in, bias ? 3 : 2, -1.0f, 1.0f))
    return;
  const hy_deconv_params *p = (const hy_deconv_params *) e.params;
  const float *b = bias ? e.in[2]->data : NULL;
  hy_tensor *y = e.got[0];
  const int64_t n = numel (y);
  hy_cuda_deconv_geometry g;
  if (!hy_cuda_deconv_geometry_of (p, &e.in[0]->shape, &y->shape, &g)) {
    emu_fail_setup (e.name, "geometry refused");
    emu_close (&e);
    return;
  }
  char base[sizeof e.name];
  g_strlcpy (base, e.name, sizeof base);

  /* The direct kernel. */
  const hy_cuda_deconv_args a = hy_cuda_deconv_plan (p, &g);
  for (int64_t i = 0; i < n; i++)
    y->data[i] = hy_cuda_deconv_one (&a, e.in[0]->data, e.in[1]->data, b,
        i);
  g_snprintf (e.name, sizeof e.name, "%s [direct]", base);
  double worst = 0.0;
  char why[256] = "";
  bool ok = emu_compare (e.want, e.got, 1, false, &worst, why, sizeof why);
  emu_report (ok, e.name, worst, why);

  /* cuDNN's path, where prepare takes it. */
  if (!g.dilated) {
    g_snprintf (e.name, sizeof e.name, "%s [cudnn geometry]", base);
    if (!forward_dims_match (&g)) {
      emu_fail_setup (e.name, "the descriptors' forward size is not the "
          "data's");
    } else {
      reference_backward_data (&g, e.in[0]->data, e.in[1]->data, y->data);
      const int64_t spatial = n / ((int64_t) g.y[0] * g.y[1]);
      for (int64_t i = 0; b && i < n; i++)
        y->data[i] = hy_cuda_deconv_biased (y->data[i], b, g.y[1], spatial,
            i);
      worst = 0.0;
      why[0] = 0;
      ok = emu_compare (e.want, e.got, 1, false, &worst, why, sizeof why);
      emu_report (ok, e.name, worst, why);
    }
  }
  emu_close (&e);
}

/* ---- cases -------------------------------------------------------------- */

int
main (void)
{
  /* 2-D: (N, C, H, W) with weight (C, F/g, kh, kw). */
  run (KV ("kernel", "(4, 4)", "stride", "(2, 2)", "pad", "(1, 1)",
          "num_filter", "3"), S (2, 4, 5, 6), S (4, 3, 4, 4), 0);
  run (KV ("kernel", "(4, 4)", "stride", "(2, 2)", "pad", "(1, 1)",
          "num_filter", "3", "no_bias", "False"), S (2, 4, 5, 6),
      S (4, 3, 4, 4), 3);
  run (KV ("kernel", "(3, 3)", "num_filter", "5", "no_bias", "False"),
      S (1, 2, 4, 4), S (2, 5, 3, 3), 5);
  run (KV ("kernel", "(3, 2)", "stride", "(2, 3)", "pad", "(1, 0)",
          "adj", "(1, 2)", "num_filter", "2"), S (1, 3, 4, 5),
      S (3, 2, 3, 2), 0);
  run (KV ("kernel", "(4, 4)", "stride", "(2, 2)", "num_filter", "4",
          "num_group", "2", "no_bias", "False"), S (2, 6, 3, 3),
      S (6, 2, 4, 4), 4);
  run (KV ("kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)",
          "num_filter", "4", "num_group", "4"), S (1, 4, 5, 5),
      S (4, 1, 3, 3), 0);
  run (KV ("kernel", "(3, 3)", "stride", "(2, 2)", "target_shape",
          "(10, 9)", "num_filter", "2"), S (1, 3, 5, 4), S (3, 2, 3, 3),
      0);
  run (KV ("kernel", "(5, 5)", "stride", "(1, 1)", "pad", "(3, 2)",
          "num_filter", "2"), S (1, 2, 7, 6), S (2, 2, 5, 5), 0);
  run (KV ("kernel", "(1, 1)", "num_filter", "3"), S (2, 5, 3, 3),
      S (5, 3, 1, 1), 0);
  /* Dilated: the direct kernel only. */
  run (KV ("kernel", "(3, 3)", "stride", "(2, 2)", "dilate", "(2, 2)",
          "num_filter", "2", "no_bias", "False"), S (1, 3, 4, 5),
      S (3, 2, 3, 3), 2);
  run (KV ("kernel", "(3, 2)", "stride", "(1, 2)", "dilate", "(3, 1)",
          "pad", "(2, 1)", "num_filter", "4", "num_group", "2"),
      S (2, 4, 5, 4), S (4, 2, 3, 2), 0);
  /* Bilinear UpSampling's Deconvolution (scale 2 and 3): a group per
   * channel, kernel 2s − s mod 2, stride s, pad ⌈(s − 1)/2⌉. */
  run (KV ("kernel", "(4, 4)", "stride", "(2, 2)", "pad", "(1, 1)",
          "num_filter", "3", "num_group", "3"), S (2, 3, 4, 5),
      S (3, 1, 4, 4), 0);
  run (KV ("kernel", "(5, 5)", "stride", "(3, 3)", "pad", "(1, 1)",
          "num_filter", "2", "num_group", "2"), S (1, 2, 3, 4),
      S (2, 1, 5, 5), 0);
  /* Groups, dilation and a stride past the dilated kernel's reach:
   * output positions no tap lands on, each group's taps its own. */
  run (KV ("kernel", "(2, 2)", "stride", "(4, 4)", "dilate", "(2, 2)",
          "num_filter", "6", "num_group", "2", "no_bias", "False"),
      S (2, 4, 3, 4), S (4, 3, 2, 2), 6);
  run (KV ("kernel", "(3, 2)", "stride", "(6, 5)", "dilate", "(2, 3)",
          "pad", "(1, 2)", "num_filter", "3", "num_group", "3"),
      S (1, 6, 4, 3), S (6, 1, 3, 2), 0);
  /* 1-D: (N, C, W). */
  run (KV ("kernel", "(4,)", "stride", "(2,)", "pad", "(1,)",
          "num_filter", "3", "no_bias", "False"), S (2, 4, 7), S (4, 3, 4),
      3);
  run (KV ("kernel", "(3,)", "stride", "(3,)", "adj", "(2,)",
          "num_filter", "2"), S (1, 2, 5), S (2, 2, 3), 0);
  run (KV ("kernel", "(3,)", "dilate", "(2,)", "num_filter", "2"),
      S (1, 2, 6), S (2, 2, 3), 0);
  return emu_summary ();
}
