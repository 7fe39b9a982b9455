/*
 * emulate-preprocess.cu — the CUDA frame conversion
 * (kernels/cuda/frame-convert.h) run on the host over every output pixel
 * and compared bit for bit with the CPU's (hy_frame_plan_convert, the
 * library's own kernels/cpu/frame-convert.c): every pixel layout,
 * downscales, upscales, odd and equal sizes, rows padded past their
 * pixels, both interpolations, stretch and letterbox, and several
 * normalisations (RGB or BGR, 1 or 3 channels, 0..1 or 0..255, YUV
 * matrices and ranges).  No GPU needed (launch.cuh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hybrid-frame.h"
#include "kernels/cuda/frame-convert.h"
#include "emulate-harness.h"

static const char *const layout_names[] = {
  "RGB", "BGR", "RGBx", "BGRx", "xRGB", "xBGR", "RGBA", "BGRA", "GRAY8",
  "NV12", "I420",
};

typedef struct size_case {
  int src_w, src_h, dst_w, dst_h;
  const char *what;
} size_case;

static const size_case sizes[] = {
  { 64, 48, 20, 15, "down" },
  { 7, 5, 16, 12, "up" },
  { 33, 17, 11, 9, "odd" },
  { 21, 13, 21, 13, "same" },
  { 40, 20, 16, 16, "wide" },
  { 15, 31, 16, 12, "tall" },
  { 1, 1, 3, 2, "1x1" },
};

static unsigned rng = 2024u;

static uint8_t
next_byte (void)
{
  rng = rng * 1664525u + 1013904223u;
  return (uint8_t) (rng >> 24);
}

/* A frame of random bytes (padding included), each row `pad` bytes
 * longer than its samples. */
typedef struct frame {
  uint8_t *plane[3];
  int stride[3];
} frame;

static void
frame_make (frame *f, hy_pixel_layout layout, int w, int h, int pad)
{
  const int cw = (w + 1) / 2, ch = (h + 1) / 2;
  int bytes[3] = { 0, 0, 0 }, rows[3] = { h, ch, ch };
  int bpp, r, g, b, a;
  if (hy_pixel_packed (layout, &bpp, &r, &g, &b, &a))
    bytes[0] = w * bpp;
  else
    bytes[0] = w;
  if (layout == HY_PIXEL_NV12)
    bytes[1] = 2 * cw;
  if (layout == HY_PIXEL_I420)
    bytes[1] = bytes[2] = cw;
  for (int p = 0; p < 3; p++) {
    f->stride[p] = bytes[p] ? bytes[p] + pad : 0;
    const size_t n = (size_t) f->stride[p] * rows[p];
    f->plane[p] = n ? (uint8_t *) malloc (n) : NULL;
    for (size_t i = 0; i < n; i++)
      f->plane[p][i] = next_byte ();
  }
}

static void
frame_clear (frame *f)
{
  for (int p = 0; p < 3; p++)
    free (f->plane[p]);
}

static bool
same (float a, float b)
{
  return memcmp (&a, &b, sizeof a) == 0;
}

/* One configuration: the CPU's tensor against the element function's;
 * returns whether every float agrees. */
static bool
run_case (hy_pixel_layout layout, const size_case *sz, int pad,
    hy_interpolation interp, hy_resize_mode resize, int norm)
{
  hy_frame_config c;
  memset (&c, 0, sizeof c);
  c.layout = layout;
  c.src_width = sz->src_w;
  c.src_height = sz->src_h;
  c.dst_width = sz->dst_w;
  c.dst_height = sz->dst_h;
  c.resize = resize;
  c.interpolation = interp;
  c.yuv_kr = 0.299f;
  c.yuv_kb = 0.114f;
  const char *norm_name = "";
  switch (norm) {
    case 0:
      /* ImageNet, 0..1, RGB */
      norm_name = "rgb imagenet";
      c.dst_channels = 3;
      c.scale = 1.0f / 255.0f;
      c.mean[0] = 0.485f, c.mean[1] = 0.456f, c.mean[2] = 0.406f;
      c.std[0] = 0.229f, c.std[1] = 0.224f, c.std[2] = 0.225f;
      break;
    case 1:
      /* Caffe style: BGR, 0..255, means only; BT.709 full range */
      norm_name = "bgr 0..255 709full";
      c.dst_channels = 3;
      c.bgr = true;
      c.scale = 1.0f;
      c.mean[0] = 103.94f, c.mean[1] = 116.78f, c.mean[2] = 123.68f;
      c.std[0] = c.std[1] = c.std[2] = 1.0f;
      c.yuv_kr = 0.2126f;
      c.yuv_kb = 0.0722f;
      c.yuv_full_range = true;
      break;
    case 2:
      norm_name = "gray 0..1";
      c.dst_channels = 1;
      c.scale = 1.0f / 255.0f;
      c.mean[0] = 0.5f;
      c.std[0] = 0.25f;
      break;
    default:
      norm_name = "rgb -1..1";
      c.dst_channels = 3;
      c.scale = 2.0f / 255.0f;
      c.mean[0] = c.mean[1] = c.mean[2] = 1.0f;
      c.std[0] = c.std[1] = c.std[2] = 1.0f;
      break;
  }

  GError *error = NULL;
  hy_frame_plan *pp = hy_frame_plan_new (&c, &error);
  if (!pp) {
    printf ("FAIL %s: %s\n", layout_names[layout], error->message);
    g_clear_error (&error);
    hy_frame_plan_free (pp);
    return false;
  }

  frame f;
  frame_make (&f, layout, sz->src_w, sz->src_h, pad);
  const int64_t pixels = (int64_t) sz->dst_w * sz->dst_h;
  const int64_t n = pixels * c.dst_channels;
  float *want = (float *) malloc (n * sizeof (float));
  float *got = (float *) malloc (n * sizeof (float));
  /* Different fillers: a float neither writes shows up as a mismatch. */
  for (int64_t i = 0; i < n; i++) {
    want[i] = 1e30f;
    got[i] = -1e30f;
  }
  const uint8_t *const planes[3] = { f.plane[0], f.plane[1], f.plane[2] };
  hy_frame_plan_convert (pp, planes, f.stride, want);

  hy_cuda_frame cf;
  for (int p = 0; p < 3; p++) {
    cf.plane[p] = f.plane[p];
    cf.stride[p] = f.stride[p];
  }
  for (int64_t i = 0; i < pixels; i++)
    hy_cuda_frame_pixel (hy_frame_plan_desc (pp), &cf, i, got);

  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n; i++)
    if (!same (got[i], want[i]) && bad++ == 0)
      first = i;
  printf ("%s %-5s %-4s %2dx%-2d -> %2dx%-2d pad=%d %-8s %-9s %-18s: ",
      bad ? "FAIL" : "ok  ", layout_names[layout], sz->what, sz->src_w,
      sz->src_h, sz->dst_w, sz->dst_h, pad,
      interp == HY_INTERP_NEAREST ? "nearest" : "bilinear",
      resize == HY_RESIZE_LETTERBOX ? "letterbox" : "stretch", norm_name);
  if (bad)
    printf ("%lld of %lld differ, first at %lld (c %lld, y %lld, x %lld): "
        "%.9g, want %.9g\n", (long long) bad, (long long) n,
        (long long) first, (long long) (first / pixels),
        (long long) (first % pixels / sz->dst_w),
        (long long) (first % sz->dst_w), (double) got[first],
        (double) want[first]);
  else
    printf ("%lld floats\n", (long long) n);

  free (want);
  free (got);
  frame_clear (&f);
  hy_frame_plan_free (pp);
  return bad == 0;
}

int
main (void)
{
  const int n_sizes = (int) (sizeof sizes / sizeof sizes[0]);
  for (int layout = HY_PIXEL_RGB; layout <= HY_PIXEL_I420; layout++)
    for (int s = 0; s < n_sizes; s++)
      for (int interp = 0; interp < 2; interp++)
        for (int resize = 0; resize < 2; resize++) {
          /* Padded rows in every other case, the normalisations in turn:
           * each layout meets them all. */
          const int pad = (s + interp) % 2 ? 7 : 0;
          const int norm = (layout + s + resize + 2 * interp) % 4;
          emu_count (run_case ((hy_pixel_layout) layout, &sizes[s], pad,
                  (hy_interpolation) interp, (hy_resize_mode) resize,
                  norm));
        }
  return emu_summary ();
}
