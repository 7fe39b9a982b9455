/*
 * emulate-vision.cu — the CUDA kernels of _contrib_BilinearResize2D,
 * _contrib_AdaptiveAvgPooling2D, _contrib_ROIAlign, L2Normalization and
 * _contrib_box_decode emulated on the host against the CPU kernels: the
 * host planning and the element functions (bilinear-resize.cuh,
 * adaptive-pool.cuh, roi-align.cuh, l2-norm.cuh, box-decode.cuh) run over
 * every output index (or group, or box) as the launches would, and
 * L2Normalization's block reduction in its pairwise order.  No GPU
 * needed (launch.cuh).
 *
 * ROIs are drawn as boxes on and around the feature map (some partly or
 * wholly outside, some degenerate or reversed) with batch indices inside
 * and outside the batch, so every branch of the sampling runs.
 *
 * One line per case; exits 1 if any case failed.
 */
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/bilinear-resize.cuh"
#include "kernels/cuda/adaptive-pool.cuh"
#include "kernels/cuda/roi-align.cuh"
#include "kernels/cuda/l2-norm.cuh"
#include "kernels/cuda/box-decode.cuh"
#include "emulate-harness.h"

/* ---- the CUDA side, emulated -------------------------------------------- */

/* l2_kernel in l2-norm.cu: per group, HY_CUDA_THREADS partial sums added
 * pairwise, then every element divided by the norm. */
static void
emulate_l2 (emu *e)
{
  const hy_cuda_l2_args a = hy_cuda_l2_plan (
      (const hy_l2_normalization_params *) e->params, &e->in[0]->shape);
  const float *x = e->in[0]->data;
  float *y = e->got[0]->data;
  for (int64_t g = 0; g < a.groups; g++) {
    double part[HY_CUDA_THREADS];
    for (int t = 0; t < HY_CUDA_THREADS; t++)
      part[t] = hy_cuda_l2_partial (&a, x, g, t, HY_CUDA_THREADS);
    for (int half = HY_CUDA_THREADS / 2; half > 0; half /= 2)
      for (int t = 0; t < half; t++)
        part[t] += part[t + half];
    const float norm = hy_cuda_l2_norm (&a, part[0]);
    for (int64_t k = 0; k < a.per_group; k++) {
      const int64_t at = hy_cuda_l2_at (&a, g, k);
      y[at] = x[at] / norm;
    }
  }
}

static void
emulate (emu *e)
{
  const hy_tensor *x = e->in[0];
  hy_tensor *y = e->got[0];
  const int64_t n = numel (y);
  if (n == 0)
    return;
  switch (e->op->id) {
    case HY_OP_BILINEAR_RESIZE_2D: {
      const hy_cuda_resize_args a = hy_cuda_resize_plan (
          (const hy_bilinear_resize_params *) e->params, &x->shape,
          &y->shape);
      if (a.ih == a.oh && a.iw == a.ow) {
        memcpy (y->data, x->data, (size_t) n * sizeof (float));
        break;
      }
      for (int64_t i = 0; i < n; i++)
        y->data[i] = hy_cuda_resize_one (&a, x->data, i);
      break;
    }
    case HY_OP_ADAPTIVE_AVG_POOLING_2D: {
      const hy_cuda_apool_args a = hy_cuda_apool_plan (&x->shape,
          &y->shape);
      for (int64_t i = 0; i < n; i++)
        y->data[i] = hy_cuda_apool_one (&a, x->data, i);
      break;
    }
    case HY_OP_ROI_ALIGN: {
      const hy_cuda_roi_args a = hy_cuda_roi_plan (
          (const hy_roi_align_params *) e->params, &x->shape, &y->shape);
      for (int64_t i = 0; i < n; i++)
        y->data[i] = hy_cuda_roi_one (&a, x->data, e->in[1]->data, i);
      break;
    }
    case HY_OP_L2_NORMALIZATION:
      emulate_l2 (e);
      break;
    case HY_OP_BOX_DECODE: {
      const hy_cuda_decode_args a = hy_cuda_decode_plan (
          (const hy_box_decode_params *) e->params, &x->shape);
      for (int64_t b = 0; b < x->shape.dims[0] * x->shape.dims[1]; b++)
        hy_cuda_decode_box (&a, x->data, e->in[1]->data, b,
            y->data + b * 4);
      break;
    }
    default:
      printf ("(no emulation for %s)\n", e->op->name);
      break;
  }
}

static void
run (const char *op, const char *const *kv, std::initializer_list<hy_shape> in,
    float lo = -1.0f, float hi = 1.0f)
{
  emu_run (emulate, op, kv, in.begin (), (int) in.size (), lo, hi);
}

/* ---- cases -------------------------------------------------------------- */

static void
resize_cases (void)
{
  static const char *const corners[] = { "False", "True" };
  for (int c = 0; c < 2; c++) {
    const char *ac = corners[c];
    run ("_contrib_BilinearResize2D", KV ("height", "10", "width", "12",
            "align_corners", ac), { S (2, 3, 5, 6) });
    run ("_contrib_BilinearResize2D", KV ("height", "3", "width", "4",
            "align_corners", ac), { S (1, 2, 9, 11) });
    run ("_contrib_BilinearResize2D", KV ("height", "7", "width", "5",
            "align_corners", ac), { S (1, 2, 4, 13) });
    run ("_contrib_BilinearResize2D", KV ("height", "1", "width", "1",
            "align_corners", ac), { S (1, 3, 4, 4) });
    run ("_contrib_BilinearResize2D", KV ("height", "6", "width", "6",
            "align_corners", ac), { S (1, 2, 1, 1) });
    run ("_contrib_BilinearResize2D", KV ("scale_height", "2",
            "scale_width", "2", "align_corners", ac), { S (2, 2, 7, 5) });
    run ("_contrib_BilinearResize2D", KV ("scale_height", "0.5",
            "scale_width", "1.7", "align_corners", ac), { S (1, 2, 9, 6) });
    run ("_contrib_BilinearResize2D", KV ("mode", "like", "align_corners",
            ac), { S (1, 3, 8, 8), S (1, 1, 33, 17) });
    run ("_contrib_BilinearResize2D", KV ("mode", "odd_scale",
            "scale_height", "2", "scale_width", "2", "align_corners", ac),
        { S (1, 2, 5, 7) });
    run ("_contrib_BilinearResize2D", KV ("mode", "to_even_up",
            "align_corners", ac), { S (1, 2, 5, 7) });
    run ("_contrib_BilinearResize2D", KV ("mode", "to_odd_down",
            "align_corners", ac), { S (1, 2, 6, 8) });
  }
  /* Equal sizes: a copy. */
  run ("_contrib_BilinearResize2D", KV ("height", "5", "width", "6"),
      { S (2, 3, 5, 6) });
  /* Large values: the weights' rounding shows in every output. */
  run ("_contrib_BilinearResize2D", KV ("height", "31", "width", "29"),
      { S (1, 2, 13, 10) }, -1000.0f, 1000.0f);
}

static void
adaptive_pool_cases (void)
{
  run ("_contrib_AdaptiveAvgPooling2D", KV ("output_size", "1"),
      { S (2, 3, 7, 5) });
  run ("_contrib_AdaptiveAvgPooling2D", KV ("output_size", "2"),
      { S (2, 3, 7, 5) });
  run ("_contrib_AdaptiveAvgPooling2D", KV ("output_size", "(3, 6)"),
      { S (1, 4, 10, 13) });
  run ("_contrib_AdaptiveAvgPooling2D", KV ("output_size", "(6, 6)"),
      { S (1, 2, 15, 20) });
  run ("_contrib_AdaptiveAvgPooling2D", KV ("output_size", "(4, 4)"),
      { S (1, 2, 4, 4) });
  /* More cells than pixels: windows of one pixel, repeated. */
  run ("_contrib_AdaptiveAvgPooling2D", KV ("output_size", "(5, 7)"),
      { S (1, 3, 3, 2) });
  run ("_contrib_AdaptiveAvgPooling2D", NULL, { S (1, 2, 6, 6) });
}

/* ROI rows (batch, x1, y1, x2, y2) for a map of (h, w) pixels at
 * 1 / scale: mostly on the image, some partly or wholly outside, some
 * reversed or of zero size, batch indices outside [0, batches) now and
 * then. */
static void
fill_rois (hy_tensor *rois, int64_t batches, float image_h, float image_w)
{
  const int64_t r = rois->shape.dims[0];
  for (int64_t k = 0; k < r; k++) {
    float *row = rois->data + k * 5;
    row[0] = (float) (k % (batches + 1));       /* batches itself: outside */
    if (k % 9 == 7)
      row[0] = -1.0f;
    if (k % 13 == 4)
      row[0] = 0.7f;                            /* truncated to 0 */
    float x1 = emu_uniform (-0.2f * image_w, 1.0f * image_w);
    float y1 = emu_uniform (-0.2f * image_h, 1.0f * image_h);
    float x2 = x1 + emu_uniform (0.0f, 0.6f * image_w);
    float y2 = y1 + emu_uniform (0.0f, 0.6f * image_h);
    if (k % 7 == 3) {
      x2 = x1;                                  /* degenerate */
      y2 = y1 - 2.0f;                           /* reversed */
    }
    if (k % 11 == 6) {
      x1 = -3.0f * image_w;                     /* wholly outside */
      x2 = -2.0f * image_w;
    }
    row[1] = x1;
    row[2] = y1;
    row[3] = x2;
    row[4] = y2;
  }
}

static void
roi_case (const char *const *kv, const hy_shape &data, int64_t rois,
    float image_h, float image_w)
{
  const hy_shape in[2] = { data, S (rois, 5) };
  emu e;
  if (!emu_open (&e, "_contrib_ROIAlign", kv, in, 2))
    return;
  for (int64_t i = 0; i < numel (e.in[0]); i++)
    e.in[0]->data[i] = emu_uniform (-1.0f, 1.0f);
  fill_rois (e.in[1], data.dims[0], image_h, image_w);
  emu_run_cpu (&e);
  emulate (&e);
  emu_finish (&e);
}

static void
roi_align_cases (void)
{
  /* Faster R-CNN's: 14×14 at 1/16, adaptive grid. */
  roi_case (KV ("pooled_size", "(7, 7)", "spatial_scale", "0.0625",
          "sample_ratio", "-1"), S (2, 4, 12, 15), 23, 192.0f, 240.0f);
  roi_case (KV ("pooled_size", "(7, 7)", "spatial_scale", "0.0625",
          "sample_ratio", "2"), S (2, 4, 12, 15), 23, 192.0f, 240.0f);
  roi_case (KV ("pooled_size", "(3, 4)", "spatial_scale", "0.5",
          "sample_ratio", "3", "aligned", "True"), S (1, 3, 9, 11), 17,
      18.0f, 22.0f);
  roi_case (KV ("pooled_size", "(2, 2)", "spatial_scale", "1.0",
          "aligned", "True"), S (3, 2, 6, 6), 19, 6.0f, 6.0f);
  roi_case (KV ("pooled_size", "(2, 3)", "spatial_scale", "0.25",
          "position_sensitive", "True"), S (2, 12, 8, 8), 15, 32.0f, 32.0f);
  roi_case (KV ("pooled_size", "(2, 2)", "spatial_scale", "0.25",
          "sample_ratio", "2", "position_sensitive", "True", "aligned",
          "True"), S (1, 8, 5, 7), 11, 20.0f, 28.0f);
  roi_case (KV ("pooled_size", "(1, 1)", "spatial_scale", "1.0"),
      S (1, 1, 1, 1), 9, 1.0f, 1.0f);
}

static void
l2_cases (void)
{
  static const char *const modes[] = { "instance", "channel", "spatial" };
  for (int m = 0; m < 3; m++) {
    const char *mode = modes[m];
    run ("L2Normalization", KV ("mode", mode), { S (2, 5, 4, 3) });
    run ("L2Normalization", KV ("mode", mode, "eps", "1e-3"),
        { S (3, 7, 1) });
    run ("L2Normalization", KV ("mode", mode), { S (2, 300, 3) });
    run ("L2Normalization", KV ("mode", mode), { S (1, 3, 700) });
    run ("L2Normalization", KV ("mode", mode), { S (2, 2, 2, 3, 4) });
  }
  /* instance takes any rank. */
  run ("L2Normalization", KV ("eps", "1e-3"), { S (3, 7) });
  run ("L2Normalization", NULL, { S (4) });
  /* SSD's conv4_3: channel mode over 512 channels. */
  run ("L2Normalization", KV ("mode", "channel"), { S (1, 512, 5, 5) });
  run ("L2Normalization", KV ("mode", "instance"), { S (1, 64, 38, 38) },
      -100.0f, 100.0f);
}

static void
box_decode_cases (void)
{
  run ("_contrib_box_decode", NULL, { S (2, 10, 4), S (1, 10, 4) });
  run ("_contrib_box_decode", KV ("std0", "0.1", "std1", "0.1", "std2",
          "0.2", "std3", "0.2"), { S (3, 17, 4), S (1, 17, 4) }, -3.0f,
      3.0f);
  run ("_contrib_box_decode", KV ("format", "corner"),
      { S (1, 12, 4), S (1, 12, 4) });
  run ("_contrib_box_decode", KV ("format", "corner", "clip", "0.5"),
      { S (2, 9, 4), S (1, 9, 4) }, -2.0f, 2.0f);
  run ("_contrib_box_decode", KV ("clip", "1.2", "std2", "3"),
      { S (2, 33, 4), S (1, 33, 4) }, -2.0f, 2.0f);
  /* Every third value NaN: a NaN offset under a clip becomes the clip. */
  emu_nan_every = 3;
  run ("_contrib_box_decode", KV ("clip", "0.7"),
      { S (2, 15, 4), S (1, 15, 4) });
  run ("_contrib_box_decode", NULL, { S (1, 15, 4), S (1, 15, 4) });
  emu_nan_every = 0;
}

int
main (void)
{
  resize_cases ();
  adaptive_pool_cases ();
  roi_align_cases ();
  l2_cases ();
  box_decode_cases ();
  return emu_summary ();
}
