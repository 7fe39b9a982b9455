/*
 * test-frame-quantized.c — a frame converted straight to an int8 model's
 * bytes (hy_frame_plan_convert_quantized) against the float conversion
 * (hy_frame_plan_convert) followed by the model's quantize node, run by
 * an executor on data → _contrib_quantize_v2 (our kernel, which is MXNet
 * 1.9.1's oneDNN reorder bit for bit: the onednn suite checks it), byte
 * for byte.  Frames of random bytes in RGB, BGRx, I420, NV12 and GRAY8,
 * stretched, letterboxed and at the tensor's own size, bilinear and
 * nearest, one and three channels, into int8 and uint8 with calibrated
 * ranges that make values saturate both ways, and a range of [0, 0]
 * (an infinite scale: the kernel's NaN and infinities).
 */
#include <math.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "hybrid.h"
#include "hybrid-frame.h"
#include "kernels/frame/frame-desc.h"

/* data → quantize_v2 with this range and out_type, its values the only
 * output (a graph output is held as float planes: the float kernel). */
static hy_model *
quantize_model (const char *dir, const char *out_type, float min, float max)
{
  g_autofree char *json = g_strdup_printf ("{\"nodes\": ["
      "{\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
      " {\"op\": \"_contrib_quantize_v2\", \"name\": \"data_quantize\","
      "  \"attrs\": {\"out_type\": \"%s\", \"min_calib_range\": \"%.9g\","
      "   \"max_calib_range\": \"%.9g\"}, \"inputs\": [[0, 0, 0]]}],"
      " \"arg_nodes\": [0], \"heads\": [[1, 0, 0]]}", out_type, min, max);
  g_autofree char *path = g_build_filename (dir, "q-symbol.json", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_set_contents (path, json, -1, &error));
  hy_model *model = hy_model_load (path, NULL, &error);
  g_assert_no_error (error);
  g_unlink (path);
  return model;
}

typedef struct frame_case {
  const char *name;
  hy_pixel_layout layout;
  int src_w, src_h, dst_w, dst_h, channels;
  hy_resize_mode resize;
  hy_interpolation interp;
} frame_case;

static const frame_case cases[] = {
  { "rgb-down", HY_PIXEL_RGB, 37, 29, 24, 20, 3, HY_RESIZE_STRETCH,
    HY_INTERP_BILINEAR },
  { "rgb-same-size", HY_PIXEL_RGB, 24, 20, 24, 20, 3, HY_RESIZE_STRETCH,
    HY_INTERP_BILINEAR },
  { "rgb-gray-tensor", HY_PIXEL_RGB, 37, 29, 24, 20, 1, HY_RESIZE_STRETCH,
    HY_INTERP_BILINEAR },
  { "bgrx-up", HY_PIXEL_BGRX, 13, 11, 32, 30, 3, HY_RESIZE_STRETCH,
    HY_INTERP_BILINEAR },
  { "bgrx-nearest", HY_PIXEL_BGRX, 40, 30, 20, 16, 3, HY_RESIZE_STRETCH,
    HY_INTERP_NEAREST },
  { "i420-down", HY_PIXEL_I420, 38, 30, 24, 20, 3, HY_RESIZE_STRETCH,
    HY_INTERP_BILINEAR },
  { "i420-letterbox", HY_PIXEL_I420, 50, 20, 24, 24, 3,
    HY_RESIZE_LETTERBOX, HY_INTERP_BILINEAR },
  { "nv12-same-size", HY_PIXEL_NV12, 24, 20, 24, 20, 3, HY_RESIZE_STRETCH,
    HY_INTERP_BILINEAR },
  { "nv12-up", HY_PIXEL_NV12, 17, 13, 32, 24, 3, HY_RESIZE_STRETCH,
    HY_INTERP_BILINEAR },
  { "rgb-letterbox", HY_PIXEL_RGB, 20, 40, 24, 24, 3, HY_RESIZE_LETTERBOX,
    HY_INTERP_BILINEAR },
  { "gray8-letterbox", HY_PIXEL_GRAY8, 30, 18, 24, 24, 3,
    HY_RESIZE_LETTERBOX, HY_INTERP_NEAREST },
};

/* out_type and calibrated range: int8 and uint8 saturating on both sides
 * of values normalised to about [-1.8, 2.2], and a range of [0, 0]. */
typedef struct quant_case {
  const char *out_type;
  float min, max;
} quant_case;

static const quant_case quants[] = {
  { "int8", -1.0f, 1.2f },
  { "uint8", 0.0f, 1.5f },
  { "int8", -2.5f, 2.5f },
  { "uint8", 0.0f, 0.0f },
  { "int8", 0.0f, 0.0f },
};

static void
check_case (const frame_case *fc, const char *dir, GRand *rand)
{
  hy_frame_config config = {
    .layout = fc->layout,
    .src_width = fc->src_w, .src_height = fc->src_h,
    .dst_width = fc->dst_w, .dst_height = fc->dst_h,
    .dst_channels = fc->channels,
    .resize = fc->resize, .interpolation = fc->interp,
    .scale = 1.0f / 255.0f,
    .mean = { 0.45f, 0.40f, 0.35f }, .std = { 0.25f, 0.24f, 0.23f },
    .yuv_kr = 0.299f, .yuv_kb = 0.114f,
  };
  g_autoptr (GError) error = NULL;
  hy_frame_plan *plan = hy_frame_plan_new (&config, &error);
  g_assert_no_error (error);

  /* random bytes, rows padded as a mapped frame's may be */
  size_t row_bytes[3];
  int rows[3], strides[3] = { 0, 0, 0 };
  const uint8_t *planes[3] = { NULL, NULL, NULL };
  guint8 *owned[3] = { NULL, NULL, NULL };
  int n_planes = hy_frame_planes (&config, row_bytes, rows);
  for (int p = 0; p < n_planes; p++) {
    strides[p] = (int) row_bytes[p] + 7;
    size_t n = (size_t) strides[p] * rows[p];
    owned[p] = g_malloc (n);
    for (size_t i = 0; i < n; i++)
      owned[p][i] = (guint8) g_rand_int_range (rand, 0, 256);
    planes[p] = owned[p];
  }

  const int C = fc->channels, hw = fc->dst_w * fc->dst_h;
  hy_shape shape = { .ndim = 4, .dims = { 1, C, fc->dst_h, fc->dst_w } };
  hy_tensor *floats = hy_tensor_new (&shape);
  hy_frame_plan_convert (plan, planes, strides, floats->data);
  uint8_t *bytes = g_malloc ((size_t) C * hw);

  for (size_t k = 0; k < G_N_ELEMENTS (quants); k++) {
    const quant_case *qc = &quants[k];
    hy_model *model = quantize_model (dir, qc->out_type, qc->min, qc->max);
    hy_executor *exec = hy_executor_new (model,
        (hy_device) { HY_DEVICE_CPU, 0 }, HY_MODE_HYBRID, &error);
    g_assert_no_error (error);
    const hy_tensor *in[1] = { floats };
    g_assert_true (hy_executor_forward (exec, in, 1, &error));
    g_assert_no_error (error);
    const hy_tensor *want = hy_executor_output (exec, 0);

    /* the scale as hybrid.h states the node's (hy_input_quantization) */
    const gboolean u8 = strcmp (qc->out_type, "uint8") == 0;
    const float range = u8 ? fmaxf (0.0f, qc->max)
        : fmaxf (fabsf (qc->min), fabsf (qc->max));
    hy_input_quantization q = {
      .scale = (u8 ? 255.5f : 127.5f) / range, .is_uint8 = u8,
    };
    memset (bytes, 0xa5, (size_t) C * hw);
    hy_frame_plan_convert_quantized (plan, planes, strides, &q, bytes);
    int saturated = 0;
    for (int c = 0; c < C; c++)
      for (int i = 0; i < hw; i++) {
        const uint8_t b = bytes[(size_t) i * C + c];
        const int got = u8 ? b : (int8_t) b;
        const float w = want->data[(size_t) c * hw + i];
        if ((float) got != w)
          g_error ("%s, %s [%g, %g]: channel %d pixel (%d, %d): %d, the "
              "float conversion and the quantize node %g", fc->name,
              qc->out_type, qc->min, qc->max, c, i % fc->dst_w,
              i / fc->dst_w, got, w);
        saturated += got == (u8 ? 255 : 127) || got == (u8 ? 0 : -128);
      }
    g_test_message ("%s, %s [%g, %g]: %d values equal, %d saturated",
        fc->name, qc->out_type, qc->min, qc->max, C * hw, saturated);
    hy_executor_free (exec);
    hy_model_free (model);
  }
  g_free (bytes);
  hy_tensor_free (floats);
  for (int p = 0; p < 3; p++)
    g_free (owned[p]);
  hy_frame_plan_free (plan);
}

static void
test_bytes_equal_float_then_quantize (gconstpointer data)
{
  const frame_case *fc = data;
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("hy-test-frame-q-XXXXXX", &error);
  g_assert_no_error (error);
  GRand *rand = g_rand_new_with_seed (20261202);
  check_case (fc, dir, rand);
  g_rand_free (rand);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree char *path = g_strdup_printf ("/frame-quantized/%s",
        cases[i].name);
    g_test_add_data_func (path, &cases[i],
        test_bytes_equal_float_then_quantize);
  }
  return g_test_run ();
}
