/*
 * test-preprocess.c — the frame-to-tensor pass (hybrid-frame.h, on the
 * CPU: kernels/cpu/frame-convert.c).
 *
 * Small hand-checked cases (identity, 2x down-scaling, nearest, letterbox
 * padding and its inverse, normalisation, channel order, gray) and, for
 * every pixel layout, random frames of odd sizes and padded strides
 * against a plain reference written here from the documented conventions
 * in double precision.  Also: a run allocates nothing.
 */
#include <math.h>
#include <string.h>

#include "alloc-count.h"
#include "hybrid.h"
#include "hybrid-frame.h"

#define TOL 1e-3                /* on 0..255 values: float vs double */

/* ---- a frame in any layout, built from RGB (or YUV) samples ---------- */

typedef struct test_frame {
  hy_pixel_layout layout;
  int width, height;
  guint8 *data[3];
  int strides[3];
} test_frame;

/* Random content with `pad` spare bytes at the end of every row. */
static test_frame
frame_random (hy_pixel_layout layout, int w, int h, int pad, GRand *rand)
{
  test_frame f = {.layout = layout,.width = w,.height = h };
  int bpp = 1, r, g, b, a;
  hy_pixel_packed (layout, &bpp, &r, &g, &b, &a);
  int n_planes = layout == HY_PIXEL_I420 ? 3 : layout == HY_PIXEL_NV12 ? 2 : 1;
  for (int p = 0; p < n_planes; p++) {
    int pw = p == 0 ? w * bpp : (w + 1) / 2 * (layout == HY_PIXEL_NV12 ? 2 : 1);
    int ph = p == 0 ? h : (h + 1) / 2;
    f.strides[p] = pw + pad;
    f.data[p] = g_malloc ((gsize) f.strides[p] * ph);
    for (int i = 0; i < f.strides[p] * ph; i++)
      f.data[p][i] = (guint8) g_rand_int_range (rand, 0, 256);
  }
  return f;
}

static void
frame_free (test_frame *f)
{
  for (int p = 0; p < 3; p++)
    g_free (f->data[p]);
}

static const uint8_t *const *
planes_of (const test_frame *f)
{
  return (const uint8_t * const *) f->data;
}

/* ---- the reference ------------------------------------------------------ */

typedef struct ref_rgb {
  double r, g, b;
} ref_rgb;

/* Bilinear (or nearest) sample of one byte channel at source position. */
static double
ref_sample (const guint8 *plane, int stride, int step, int offset, int w,
    int h, double sx, double sy, gboolean nearest)
{
  if (nearest) {
    int x = MIN ((int) floor (sx + 0.5), w - 1);
    int y = MIN ((int) floor (sy + 0.5), h - 1);
    return plane[(size_t) y * stride + x * step + offset];
  }
  sx = CLAMP (sx, 0.0, w - 1.0);
  sy = CLAMP (sy, 0.0, h - 1.0);
  int x0 = (int) floor (sx), y0 = (int) floor (sy);
  int x1 = MIN (x0 + 1, w - 1), y1 = MIN (y0 + 1, h - 1);
  double fx = sx - x0, fy = sy - y0;
#define P(x, y) ((double) plane[(size_t) (y) * stride + (x) * step + offset])
  double top = P (x0, y0) + (P (x1, y0) - P (x0, y0)) * fx;
  double bottom = P (x0, y1) + (P (x1, y1) - P (x0, y1)) * fx;
#undef P
  return top + (bottom - top) * fy;
}

/* The colour at output pixel (x, y) of the picture area (rw x rh). */
static ref_rgb
ref_pixel (const test_frame *f, const hy_frame_config *c, int x, int y,
    int rw, int rh)
{
  gboolean nearest = c->interpolation == HY_INTERP_NEAREST;
  /* ref_sample's nearest takes the position of the pixel centre. */
  double sx = (x + 0.5) * f->width / rw - 0.5;
  double sy = (y + 0.5) * f->height / rh - 0.5;
  ref_rgb out;
  int bpp, r, g, b, a;
  if (hy_pixel_packed (f->layout, &bpp, &r, &g, &b, &a)) {
    out.r = ref_sample (f->data[0], f->strides[0], bpp, r, f->width,
        f->height, sx, sy, nearest);
    out.g = ref_sample (f->data[0], f->strides[0], bpp, g, f->width,
        f->height, sx, sy, nearest);
    out.b = ref_sample (f->data[0], f->strides[0], bpp, b, f->width,
        f->height, sx, sy, nearest);
    return out;
  }
  double Y = ref_sample (f->data[0], f->strides[0], 1, 0, f->width,
      f->height, sx, sy, nearest);
  if (f->layout == HY_PIXEL_GRAY8)
    return (ref_rgb) {
    Y, Y, Y};
  int cw = (f->width + 1) / 2, ch = (f->height + 1) / 2;
  double csx = (x + 0.5) * f->width / rw / 2 - 0.5;
  double csy = (y + 0.5) * f->height / rh / 2 - 0.5;
  double U, V;
  if (f->layout == HY_PIXEL_NV12) {
    U = ref_sample (f->data[1], f->strides[1], 2, 0, cw, ch, csx, csy,
        nearest);
    V = ref_sample (f->data[1], f->strides[1], 2, 1, cw, ch, csx, csy,
        nearest);
  } else {
    U = ref_sample (f->data[1], f->strides[1], 1, 0, cw, ch, csx, csy,
        nearest);
    V = ref_sample (f->data[2], f->strides[2], 1, 0, cw, ch, csx, csy,
        nearest);
  }
  double kr = c->yuv_kr, kb = c->yuv_kb, kg = 1 - kr - kb;
  if (!c->yuv_full_range) {
    Y = (Y - 16) * 255 / 219;
    U = (U - 128) * 255 / 224;
    V = (V - 128) * 255 / 224;
  } else {
    U -= 128;
    V -= 128;
  }
  out.r = Y + 2 * (1 - kr) * V;
  out.b = Y + 2 * (1 - kb) * U;
  out.g = (Y - kr * out.r - kb * out.b) / kg;
  out.r = CLAMP (out.r, 0, 255);
  out.g = CLAMP (out.g, 0, 255);
  out.b = CLAMP (out.b, 0, 255);
  return out;
}

static double
ref_channel (ref_rgb p, const hy_frame_config *c, int ch)
{
  double v;
  if (c->dst_channels == 1)
    v = 0.299 * p.r + 0.587 * p.g + 0.114 * p.b;
  else if (ch == 1)
    v = p.g;
  else
    v = (ch == 0) != c->bgr ? p.r : p.b;
  return (v * c->scale - c->mean[ch]) / c->std[ch];
}

/* The whole tensor, as the documented conventions say. */
static double *
reference (const test_frame *f, const hy_frame_config *c)
{
  int W = c->dst_width, H = c->dst_height, C = c->dst_channels;
  int rw = W, rh = H;
  if (c->resize == HY_RESIZE_LETTERBOX) {
    double s = MIN ((double) W / f->width, (double) H / f->height);
    rw = CLAMP ((int) lround (f->width * s), 1, W);
    rh = CLAMP ((int) lround (f->height * s), 1, H);
  }
  int ox = (W - rw) / 2, oy = (H - rh) / 2;
  double *t = g_new (double, (gsize) C * H * W);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      gboolean inside = x >= ox && x < ox + rw && y >= oy && y < oy + rh;
      ref_rgb p = { 0, 0, 0 };
      if (inside)
        p = ref_pixel (f, c, x - ox, y - oy, rw, rh);
      for (int ch = 0; ch < C; ch++)
        t[(size_t) ch * H * W + (size_t) y * W + x] = ref_channel (p, c, ch);
    }
  return t;
}

static hy_frame_config
config_for (const test_frame *f, int w, int h)
{
  return (hy_frame_config) {
    .layout = f->layout,.src_width = f->width,.src_height = f->height,
    .dst_width = w,.dst_height = h,.dst_channels = 3,
    .scale = 1.0f,.mean = {0, 0, 0},.std = {1, 1, 1},
    .yuv_kr = 0.299f,.yuv_kb = 0.114f,
  };
}

static float *
run (const test_frame *f, const hy_frame_config *c)
{
  GError *error = NULL;
  hy_frame_plan *pp = hy_frame_plan_new (c, &error);
  g_assert_no_error (error);
  float *t = g_new (float, (gsize) c->dst_channels * c->dst_width
      * c->dst_height);
  hy_frame_plan_convert (pp, planes_of (f), f->strides, t);
  hy_frame_plan_free (pp);
  return t;
}

/* Max |ours - reference| relative to the value range. */
static double
compare (const test_frame *f, const hy_frame_config *c)
{
  float *ours = run (f, c);
  double *ref = reference (f, c);
  double worst = 0;
  gsize n = (gsize) c->dst_channels * c->dst_width * c->dst_height;
  for (gsize i = 0; i < n; i++)
    worst = MAX (worst, fabs (ours[i] - ref[i]));
  g_free (ours);
  g_free (ref);
  return worst;
}

/* ---- hand-checked cases --------------------------------------------------- */

/* A 4x2 RGB frame whose pixel (x, y) is (10x + y, 100 + x, 200 - y). */
static test_frame
frame_ramp (void)
{
  test_frame f = {.layout = HY_PIXEL_RGB,.width = 4,.height = 2 };
  f.strides[0] = 12;
  f.data[0] = g_malloc (24);
  for (int y = 0; y < 2; y++)
    for (int x = 0; x < 4; x++) {
      guint8 *p = f.data[0] + y * 12 + x * 3;
      p[0] = (guint8) (10 * x + y);
      p[1] = (guint8) (100 + x);
      p[2] = (guint8) (200 - y);
    }
  return f;
}

static void
test_identity (void)
{
  test_frame f = frame_ramp ();
  hy_frame_config c = config_for (&f, 4, 2);
  float *t = run (&f, &c);
  for (int y = 0; y < 2; y++)
    for (int x = 0; x < 4; x++) {
      g_assert_cmpfloat (t[0 * 8 + y * 4 + x], ==, 10 * x + y);
      g_assert_cmpfloat (t[1 * 8 + y * 4 + x], ==, 100 + x);
      g_assert_cmpfloat (t[2 * 8 + y * 4 + x], ==, 200 - y);
    }
  g_free (t);
  frame_free (&f);
}

/* Halving samples between pixel centres: each output is a 2x2 average. */
static void
test_half_bilinear (void)
{
  test_frame f = frame_ramp ();
  hy_frame_config c = config_for (&f, 2, 1);
  float *t = run (&f, &c);
  g_assert_cmpfloat_with_epsilon (t[0], (0 + 10 + 1 + 11) / 4.0, 1e-5);
  g_assert_cmpfloat_with_epsilon (t[1], (20 + 30 + 21 + 31) / 4.0, 1e-5);
  g_assert_cmpfloat_with_epsilon (t[2], 100.5, 1e-5);
  g_assert_cmpfloat_with_epsilon (t[3], 102.5, 1e-5);
  g_free (t);
  frame_free (&f);
}

static void
test_half_nearest (void)
{
  test_frame f = frame_ramp ();
  hy_frame_config c = config_for (&f, 2, 1);
  c.interpolation = HY_INTERP_NEAREST;
  float *t = run (&f, &c);
  /* Centre of output 0 is source x 1.0, row 1.0. */
  g_assert_cmpfloat (t[0], ==, 11);
  g_assert_cmpfloat (t[1], ==, 31);
  g_free (t);
  frame_free (&f);
}

static void
test_normalise_and_order (void)
{
  test_frame f = frame_ramp ();
  hy_frame_config c = config_for (&f, 4, 2);
  c.scale = 1.0f / 255.0f;
  c.bgr = true;
  float mean[3] = { 0.5f, 0.25f, 0.125f }, std[3] = { 2.0f, 4.0f, 0.5f };
  memcpy (c.mean, mean, sizeof mean);
  memcpy (c.std, std, sizeof std);
  float *t = run (&f, &c);
  /* Tensor channel 0 is blue now. */
  g_assert_cmpfloat_with_epsilon (t[0], (200 / 255.0 - 0.5) / 2.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[8], (100 / 255.0 - 0.25) / 4.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (t[16], (0 / 255.0 - 0.125) / 0.5, 1e-6);
  g_free (t);
  frame_free (&f);
}

static void
test_gray_model (void)
{
  test_frame f = frame_ramp ();
  hy_frame_config c = config_for (&f, 4, 2);
  c.dst_channels = 1;
  float *t = run (&f, &c);
  g_assert_cmpfloat_with_epsilon (t[5], 0.299 * 11 + 0.587 * 101
      + 0.114 * 199, 1e-3);
  g_free (t);
  frame_free (&f);
}

/* An 8x4 frame letterboxed into 4x4: the picture is 4x2 in rows 1-2. */
static void
test_letterbox (void)
{
  GRand *rand = g_rand_new_with_seed (7);
  test_frame f = frame_random (HY_PIXEL_RGBX, 8, 4, 0, rand);
  hy_frame_config c = config_for (&f, 4, 4);
  c.resize = HY_RESIZE_LETTERBOX;
  c.mean[0] = c.mean[1] = c.mean[2] = 10.0f;
  float *t = run (&f, &c);
  for (int ch = 0; ch < 3; ch++)
    for (int x = 0; x < 4; x++) {
      g_assert_cmpfloat (t[ch * 16 + 0 * 4 + x], ==, -10.0f);
      g_assert_cmpfloat (t[ch * 16 + 3 * 4 + x], ==, -10.0f);
    }
  g_assert_cmpfloat (compare (&f, &c), <, TOL);

  hy_frame_plan *pp = hy_frame_plan_new (&c, NULL);
  float fx, fy;
  hy_frame_plan_to_frame (pp, 0, 1, &fx, &fy);
  g_assert_cmpfloat (fx, ==, 0);
  g_assert_cmpfloat (fy, ==, 0);
  hy_frame_plan_to_frame (pp, 4, 3, &fx, &fy);
  g_assert_cmpfloat (fx, ==, 8);
  g_assert_cmpfloat (fy, ==, 4);
  hy_frame_plan_free (pp);
  g_free (t);
  frame_free (&f);
  g_rand_free (rand);
}

/* A uniform YUV colour converts as BT.601 / BT.709 say. */
static void
test_yuv_colour (void)
{
  struct {
    float kr, kb;
    bool full;
    guint8 y, u, v;
    double r, g, b;
  } cases[] = {
    /* limited-range BT.601 white, black, and a red */
    {0.299f, 0.114f, false, 235, 128, 128, 255, 255, 255},
    {0.299f, 0.114f, false, 16, 128, 128, 0, 0, 0},
    {0.299f, 0.114f, false, 81, 90, 240, 254.9, 0.0, 0.0},
    /* full-range BT.709 mid grey */
    {0.2126f, 0.0722f, true, 128, 128, 128, 128, 128, 128},
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    for (int l = 0; l < 2; l++) {
      test_frame f = {.layout = l ? HY_PIXEL_I420 : HY_PIXEL_NV12,
        .width = 4,.height = 4
      };
      f.strides[0] = 4;
      f.data[0] = g_malloc (16);
      memset (f.data[0], cases[i].y, 16);
      if (l) {
        f.strides[1] = f.strides[2] = 2;
        f.data[1] = g_malloc (4);
        f.data[2] = g_malloc (4);
        memset (f.data[1], cases[i].u, 4);
        memset (f.data[2], cases[i].v, 4);
      } else {
        f.strides[1] = 4;
        f.data[1] = g_malloc (8);
        for (int k = 0; k < 8; k += 2) {
          f.data[1][k] = cases[i].u;
          f.data[1][k + 1] = cases[i].v;
        }
      }
      hy_frame_config c = config_for (&f, 2, 2);
      c.yuv_kr = cases[i].kr;
      c.yuv_kb = cases[i].kb;
      c.yuv_full_range = cases[i].full;
      float *t = run (&f, &c);
      g_assert_cmpfloat_with_epsilon (t[0], cases[i].r, 0.5);
      g_assert_cmpfloat_with_epsilon (t[4], cases[i].g, 0.5);
      g_assert_cmpfloat_with_epsilon (t[8], cases[i].b, 0.5);
      g_free (t);
      frame_free (&f);
    }
  }
}

/* ---- every layout against the reference ---------------------------------- */

static void
test_layouts_against_reference (void)
{
  static const struct {
    int sw, sh, dw, dh;
  } sizes[] = {
    {33, 17, 16, 16}, {7, 5, 32, 24}, {64, 48, 64, 48}, {100, 3, 9, 9},
    {1, 1, 4, 4}, {5, 9, 5, 4},
  };
  GRand *rand = g_rand_new_with_seed (42);
  for (int layout = HY_PIXEL_RGB; layout <= HY_PIXEL_I420; layout++) {
    for (guint s = 0; s < G_N_ELEMENTS (sizes); s++) {
      for (int variant = 0; variant < 4; variant++) {
        test_frame f = frame_random (layout, sizes[s].sw, sizes[s].sh,
            variant * 3, rand);
        hy_frame_config c = config_for (&f, sizes[s].dw, sizes[s].dh);
        c.interpolation = variant & 1 ? HY_INTERP_NEAREST : HY_INTERP_BILINEAR;
        c.resize = variant & 2 ? HY_RESIZE_LETTERBOX : HY_RESIZE_STRETCH;
        c.bgr = variant == 3;
        c.dst_channels = variant == 2 ? 1 : 3;
        c.yuv_full_range = variant == 1;
        double worst = compare (&f, &c);
        if (worst >= TOL)
          g_error ("layout %d, %dx%d -> %dx%d, variant %d: off by %g",
              layout, sizes[s].sw, sizes[s].sh, sizes[s].dw, sizes[s].dh,
              variant, worst);
        frame_free (&f);
      }
    }
  }
  g_rand_free (rand);
}

/* ---- errors and allocation --------------------------------------------------- */

static void
test_bad_config (void)
{
  test_frame f = frame_ramp ();
  hy_frame_config good = config_for (&f, 4, 2), c;
  GError *error = NULL;

  c = good;
  c.std[1] = 0.0f;
  g_assert_null (hy_frame_plan_new (&c, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "std"));
  g_clear_error (&error);

  c = good;
  c.dst_width = 0;
  g_assert_null (hy_frame_plan_new (&c, &error));
  g_assert_nonnull (strstr (error->message, "input size"));
  g_clear_error (&error);

  c = good;
  c.dst_channels = 4;
  g_assert_null (hy_frame_plan_new (&c, &error));
  g_assert_nonnull (strstr (error->message, "channels"));
  g_clear_error (&error);

  c = good;
  c.src_height = -3;
  g_assert_null (hy_frame_plan_new (&c, &error));
  g_assert_nonnull (strstr (error->message, "frame size"));
  g_clear_error (&error);
  frame_free (&f);
}

static void
test_run_allocates_nothing (void)
{
  if (!hy_alloc_can_count ()) {
    g_test_skip ("allocations are not counted under a sanitizer");
    return;
  }
  GRand *rand = g_rand_new_with_seed (3);
  for (int layout = HY_PIXEL_RGB; layout <= HY_PIXEL_I420; layout++) {
    test_frame f = frame_random (layout, 320, 240, 0, rand);
    hy_frame_config c = config_for (&f, 224, 224);
    c.resize = HY_RESIZE_LETTERBOX;
    hy_frame_plan *pp = hy_frame_plan_new (&c, NULL);
    float *t = g_new (float, 3 * 224 * 224);
    hy_alloc_start ();
    for (int i = 0; i < 10; i++)
      hy_frame_plan_convert (pp, planes_of (&f), f.strides, t);
    g_assert_cmpint (hy_alloc_stop (), ==, 0);
    g_free (t);
    hy_frame_plan_free (pp);
    frame_free (&f);
  }
  g_rand_free (rand);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/preprocess/identity", test_identity);
  g_test_add_func ("/preprocess/half-bilinear", test_half_bilinear);
  g_test_add_func ("/preprocess/half-nearest", test_half_nearest);
  g_test_add_func ("/preprocess/normalise-and-order",
      test_normalise_and_order);
  g_test_add_func ("/preprocess/gray-model", test_gray_model);
  g_test_add_func ("/preprocess/letterbox", test_letterbox);
  g_test_add_func ("/preprocess/yuv-colour", test_yuv_colour);
  g_test_add_func ("/preprocess/layouts-against-reference",
      test_layouts_against_reference);
  g_test_add_func ("/preprocess/bad-config", test_bad_config);
  g_test_add_func ("/preprocess/run-allocates-nothing",
      test_run_allocates_nothing);
  return g_test_run ();
}
