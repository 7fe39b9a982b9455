/*
 * preprocess_bench.c — times the CPU frame conversion (hy_frame_plan_convert,
 * kernels/cpu/frame-convert.c)
 * per pixel layout at 1920x1080 to the frame's own size, 224x224 and
 * 640x360, bilinear and nearest; --hash prints a checksum of the output of
 * many configurations (every layout, odd sizes, padded strides, letterbox,
 * 1 or 3 channels, RGB or BGR, YUV ranges and degenerate YUV matrices) to
 * compare two builds bit for bit — e.g. this file against
 * `git show HEAD:kernels/cpu/frame-convert.c`.  Standalone, built by hand (not
 * by meson):
 *
 *   gcc -O3 -std=c11 -D_GNU_SOURCE -I core/include \
 *     $(pkg-config --cflags glib-2.0) tests/bench/preprocess_bench.c \
 *     -L build/core -lhybrid -Wl,-rpath,$PWD/build/core \
 *     $(pkg-config --libs glib-2.0) -lm -o /tmp/preprocess_bench
 *   /tmp/preprocess_bench [runs] [layout...]   # median and min ms
 *   /tmp/preprocess_bench --hash > a.txt       # then diff two builds
 *
 * PP_BENCH_ONLY=1920x1080/bilinear (a prefix of WxH/interpolation) times
 * that case alone, for perf; PP_BENCH_SMOOTH=1 times gradient frames
 * rather than noise (noise defeats branch prediction in branchy code).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hybrid.h"
#include "hybrid-frame.h"

/* The one libhybrid symbol preprocess.c uses. */
GQuark
hy_error_quark (void)
{
  return g_quark_from_static_string ("hy-error-quark");
}

static const char *const names[] = {
  "RGB", "BGR", "RGBx", "BGRx", "xRGB", "xBGR", "RGBA", "BGRA", "GRAY8",
  "NV12", "I420",
};

#define N_LAYOUTS ((int) (sizeof names / sizeof names[0]))

typedef struct frame {
  uint8_t *plane[3];
  int stride[3];
} frame;

static uint32_t rng = 12345u;

static uint8_t
next_byte (void)
{
  rng = rng * 1664525u + 1013904223u;
  return (uint8_t) (rng >> 24);
}

static void
frame_make (frame *f, hy_pixel_layout layout, int w, int h, int pad)
{
  int cw = (w + 1) / 2, ch = (h + 1) / 2;
  int bytes[3] = { 0, 0, 0 }, rows[3] = { h, ch, ch };
  int bpp, r, g, b, a;
  bytes[0] = hy_pixel_packed (layout, &bpp, &r, &g, &b, &a) ? w * bpp : w;
  if (layout == HY_PIXEL_NV12)
    bytes[1] = 2 * cw;
  if (layout == HY_PIXEL_I420)
    bytes[1] = bytes[2] = cw;
  /* PP_BENCH_SMOOTH=1: gradients instead of noise (branchy code predicts
   * them as it would a camera's frames). */
  bool smooth = g_getenv ("PP_BENCH_SMOOTH") != NULL;
  for (int p = 0; p < 3; p++) {
    f->stride[p] = bytes[p] ? bytes[p] + pad : 0;
    size_t n = (size_t) f->stride[p] * rows[p];
    f->plane[p] = n ? malloc (n) : NULL;
    for (size_t i = 0; i < n; i++) {
      size_t x = i % f->stride[p], y = i / f->stride[p];
      f->plane[p][i] = smooth ? (uint8_t) (p ? 96 + (x + 2 * y) / 32 % 64
          : (x / 8 + y / 4) % 256) : next_byte ();
    }
  }
}

static void
frame_free (frame *f)
{
  for (int p = 0; p < 3; p++)
    free (f->plane[p]);
}

static hy_frame_config
config_make (hy_pixel_layout layout, int sw, int sh, int dw, int dh,
    hy_interpolation interp)
{
  hy_frame_config c = {
    .layout = layout,.src_width = sw,.src_height = sh,.dst_width = dw,
    .dst_height = dh,.dst_channels = 3,.bgr = false,
    .resize = HY_RESIZE_STRETCH,.interpolation = interp,
    .scale = 1.0f / 255.0f,.mean = {0.485f, 0.456f, 0.406f},
    .std = {0.229f, 0.224f, 0.225f},.yuv_kr = 0.299f,.yuv_kb = 0.114f,
    .yuv_full_range = false,
  };
  return c;
}

static double
now_ms (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
time_case (const hy_frame_config *c, const frame *f, int runs,
    double *min)
{
  GError *error = NULL;
  hy_frame_plan *pp = hy_frame_plan_new (c, &error);
  if (!pp) {
    fprintf (stderr, "%s\n", error->message);
    exit (1);
  }
  size_t n = (size_t) c->dst_channels * c->dst_width * c->dst_height;
  float *dst = malloc (n * sizeof (float));
  double *t = malloc (runs * sizeof (double));
  const uint8_t *const planes[3] = { f->plane[0], f->plane[1], f->plane[2] };
  for (int i = 0; i < 3; i++)   /* warm up: page faults, caches */
    hy_frame_plan_convert (pp, planes, f->stride, dst);
  for (int i = 0; i < runs; i++) {
    double t0 = now_ms ();
    hy_frame_plan_convert (pp, planes, f->stride, dst);
    t[i] = now_ms () - t0;
  }
  qsort (t, runs, sizeof (double), cmp_double);
  double median = t[runs / 2];
  *min = t[0];
  free (t);
  free (dst);
  hy_frame_plan_free (pp);
  return median;
}

static void
bench (int runs, int argc, char **argv)
{
  static const int sizes[][2] = { {1920, 1080}, {224, 224}, {640, 360} };
  /* PP_BENCH_ONLY=WxH[/nearest|/bilinear]: that case alone (profiling). */
  const char *only = g_getenv ("PP_BENCH_ONLY");
  printf ("%-6s %-9s %-10s %10s %10s\n", "layout", "interp", "dst",
      "median ms", "min ms");
  for (int l = 0; l < N_LAYOUTS; l++) {
    bool wanted = argc == 0;
    for (int a = 0; a < argc; a++)
      wanted |= g_ascii_strcasecmp (argv[a], names[l]) == 0;
    if (!wanted)
      continue;
    frame f;
    frame_make (&f, (hy_pixel_layout) l, 1920, 1080, 0);
    for (int s = 0; s < 3; s++)
      for (int interp = 0; interp < 2; interp++) {
        char what[64];
        g_snprintf (what, sizeof what, "%dx%d/%s", sizes[s][0], sizes[s][1],
            interp ? "nearest" : "bilinear");
        if (only && !g_str_has_prefix (what, only))
          continue;
        hy_frame_config c = config_make ((hy_pixel_layout) l, 1920,
            1080, sizes[s][0], sizes[s][1], (hy_interpolation) interp);
        double min, ms = time_case (&c, &f, runs, &min);
        printf ("%-6s %-9s %4dx%-5d %10.3f %10.3f\n", names[l],
            interp ? "nearest" : "bilinear", sizes[s][0], sizes[s][1], ms,
            min);
        fflush (stdout);
      }
    if (only) {
      frame_free (&f);
      continue;
    }
    /* Letterbox into a square (padding bands). */
    hy_frame_config c = config_make ((hy_pixel_layout) l, 1920, 1080,
        640, 640, HY_INTERP_BILINEAR);
    c.resize = HY_RESIZE_LETTERBOX;
    double min, ms = time_case (&c, &f, runs, &min);
    printf ("%-6s %-9s %4dx%-5d %10.3f %10.3f\n", names[l], "bil+lbox", 640,
        640, ms, min);
    frame_free (&f);
  }
}

static uint64_t
fnv (const void *p, size_t n)
{
  const uint8_t *b = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

static void
hash_all (void)
{
  static const int sizes[][4] = {
    {1920, 1080, 1920, 1080}, {1920, 1080, 224, 224}, {1920, 1080, 640, 360},
    {1280, 720, 1920, 1080}, {37, 23, 37, 23}, {37, 23, 64, 50},
    {37, 23, 11, 7}, {64, 48, 20, 15}, {7, 5, 16, 12}, {33, 17, 11, 9},
    {21, 13, 21, 13}, {40, 20, 16, 16}, {15, 31, 16, 12}, {1, 1, 3, 2},
    {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 1, 3, 1}, {1, 5, 1, 5}, {5, 1, 9, 4},
    {100, 60, 50, 30}, {100, 60, 200, 120}, {99, 61, 99, 61},
    {99, 61, 33, 77}, {640, 480, 640, 640}, {17, 9, 17, 40},
    {161, 33, 161, 33}, {160, 34, 80, 17},
  };
  for (int l = 0; l < N_LAYOUTS; l++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      bool big = sizes[s][0] >= 1280;
      for (int pad = 0; pad < (big ? 1 : 2); pad++) {
        frame f;
        frame_make (&f, (hy_pixel_layout) l, sizes[s][0], sizes[s][1],
            pad * 13);
        const uint8_t *const planes[3] =
            { f.plane[0], f.plane[1], f.plane[2] };
        bool yuv = l == HY_PIXEL_NV12 || l == HY_PIXEL_I420;
        for (int v = 0; v < (big ? 4 : yuv ? 36 : 32); v++) {
          hy_frame_config c = config_make ((hy_pixel_layout) l,
              sizes[s][0], sizes[s][1], sizes[s][2], sizes[s][3],
              (hy_interpolation) (v & 1));
          if (v & 2)
            c.resize = HY_RESIZE_LETTERBOX;
          if (v & 4)
            c.dst_channels = 1;
          if (v & 8) {
            c.bgr = true;
            c.scale = 1.0f;
            c.mean[0] = 103.9f;
            c.mean[1] = 116.8f;
            c.mean[2] = 123.7f;
            c.std[0] = c.std[1] = c.std[2] = 1.0f;
          }
          if (v & 16) {
            c.yuv_full_range = true;
            c.yuv_kr = 0.2126f;
            c.yuv_kb = 0.0722f;
          }
          if (v >= 32) {
            /* Degenerate matrices: infinite or huge coefficients, NaN. */
            c.yuv_kr = 0.5f;
            c.yuv_kb = v & 1 ? 0.5f : 0.49999997f;
          }
          GError *error = NULL;
          hy_frame_plan *pp = hy_frame_plan_new (&c, &error);
          size_t n = (size_t) c.dst_channels * c.dst_width * c.dst_height;
          float *dst = malloc (n * sizeof (float));
          memset (dst, 0xa5, n * sizeof (float));
          hy_frame_plan_convert (pp, planes, f.stride, dst);
          printf ("%-5s %4dx%-4d -> %4dx%-4d pad %2d v %2d: %016llx\n",
              names[l], sizes[s][0], sizes[s][1], sizes[s][2], sizes[s][3],
              pad * 13, v, (unsigned long long) fnv (dst, n * sizeof (float)));
          free (dst);
          hy_frame_plan_free (pp);
        }
        frame_free (&f);
      }
    }
}

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "--hash") == 0) {
    hash_all ();
    return 0;
  }
  int runs = argc > 1 ? atoi (argv[1]) : 21;
  if (runs < 1)
    runs = 21;
  bench (runs, argc > 2 ? argc - 2 : 0, argv + 2);
  return 0;
}
