/*
 * sgemm_bench.c — the packed-weight GEMM (kernels/cpu/conv/sgemm-packed.c),
 * both tile layouts, against single-threaded OpenBLAS sgemm on the
 * products of ResNet-50's and MobileNetV2's convolutions at batch 1
 * (M filters, K = channels × taps, N output positions), one thread, in
 * GFLOP/s of thread CPU time (steady on a busy machine).  OpenBLAS packs
 * its A on every call; that is part of what it costs a convolution, so it
 * is timed in.  --cold cycles through copies of the packed weights larger
 * than the L3 cache, as a network's weights arrive in a forward.
 * Standalone, built by hand (not by meson):
 *
 *   gcc -O2 -std=gnu11 -I . $(pkg-config --cflags glib-2.0) \
 *     tests/bench/sgemm_bench.c kernels/cpu/conv/sgemm-packed.c \
 *     kernels/cpu/cpu-features.c \
 *     $(pkg-config --libs glib-2.0) -lopenblas -lm -o /tmp/sgemm_bench
 *   OPENBLAS_CORETYPE=SkylakeX taskset -c 1 /tmp/sgemm_bench [--cold]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "kernels/cpu/conv/sgemm-packed.h"

extern void openblas_set_num_threads (int n);

typedef struct shape {
  const char *name;
  int m, k, n;
} shape;

static const shape shapes[] = {
  { "conv0 7x7/2 3>64 @112", 64, 147, 12544 },
  { "3x3 64 @56", 64, 576, 3136 },
  { "3x3 128 @28", 128, 1152, 784 },
  { "3x3 256 @14", 256, 2304, 196 },
  { "3x3 512 @7", 512, 4608, 49 },
  { "1x1 64>256 @56", 256, 64, 3136 },
  { "1x1 256>64 @56", 64, 256, 3136 },
  { "1x1 128>512 @28", 512, 128, 784 },
  { "1x1 512>128 @28", 128, 512, 784 },
  { "1x1 256>1024 @14", 1024, 256, 196 },
  { "1x1 1024>256 @14", 256, 1024, 196 },
  { "1x1 512>2048 @7", 2048, 512, 49 },
  { "1x1 2048>512 @7", 512, 2048, 49 },
  { "mb 16>96 @112", 96, 16, 12544 },
  { "mb 96>24 @56", 24, 96, 3136 },
  { "mb 64>384 @14", 384, 64, 196 },
  { "mb 384>64 @14", 64, 384, 196 },
  { "mb 160>960 @7", 960, 160, 49 },
  { "mb 320>1280 @7", 1280, 320, 49 },
};

/* Bytes of weights cycled through with --cold: beyond a 32 MiB L3. */
#define COLD_BYTES (160.0 * 1024 * 1024)

static double
cpu_s (void)
{
  struct timespec t;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static float *
floats (size_t n)
{
  return aligned_alloc (64, (n * sizeof (float) + 63) & ~(size_t) 63);
}

int
main (int argc, char **argv)
{
  const int cold = argc > 1 && !strcmp (argv[1], "--cold");
  openblas_set_num_threads (1);
  if (!hy_packed_gemm_supported ()) {
    printf ("no AVX-512F here: the packed kernel is never chosen\n");
    return 0;
  }
  printf ("%-22s %5s %5s %6s  %8s %8s %8s  (GFLOP/s)\n", "product", "M", "K",
      "N", "openblas", "wide", "narrow");
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    const int m = shapes[s].m, k = shapes[s].k, n = shapes[s].n;
    float *a = floats ((size_t) m * k), *b = floats ((size_t) k * n);
    float *c = floats ((size_t) m * n), *c2 = floats ((size_t) m * n);
    for (size_t i = 0; i < (size_t) m * k; i++)
      a[i] = rand () / (float) RAND_MAX - 0.5f;
    for (size_t i = 0; i < (size_t) k * n; i++)
      b[i] = rand () / (float) RAND_MAX - 0.5f;
    const double flop = 2.0 * m * k * n;
    const int iters = (int) (1e9 / flop) + 3;
    double best[3] = { 1e9, 1e9, 1e9 }, worst_diff = 0, largest = 0;
    for (int l = 0; l < 3; l++) {
      const hy_packed_layout layout = l == 2 ? HY_PACKED_NARROW
          : HY_PACKED_WIDE;
      const size_t packed_floats = hy_packed_a_floats (layout, m, k);
      int copies = cold ? (int) (COLD_BYTES / (packed_floats * 4.0)) + 1 : 1;
      float **p = calloc ((size_t) copies, sizeof *p);
      for (int i = 0; l > 0 && i < copies; i++) {
        p[i] = floats (packed_floats);
        hy_packed_a_pack (layout, p[i], m, k, a, k);
      }
      for (int r = 0; r < 5; r++) {
        double t = cpu_s ();
        for (int i = 0; i < iters; i++) {
          if (l == 0)
            cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k,
                1.0f, a, k, b, n, 0.0f, c, n);
          else
            hy_packed_gemm (layout, p[i % copies], m, k, 0, m, b, n, n, c2, n,
                false, 0, NULL, NULL, NULL);
        }
        t = (cpu_s () - t) / iters;
        best[l] = t < best[l] ? t : best[l];
      }
      for (size_t i = 0; l > 0 && i < (size_t) m * n; i++) {
        worst_diff = fmax (worst_diff, fabs ((double) c[i] - c2[i]));
        largest = fmax (largest, fabs ((double) c[i]));
      }
      for (int i = 0; i < copies; i++)
        free (p[i]);
      free (p);
    }
    printf ("%-22s %5d %5d %6d  %8.1f %8.1f %8.1f%s\n", shapes[s].name, m, k,
        n, flop / best[0] * 1e-9, flop / best[1] * 1e-9,
        flop / best[2] * 1e-9,
        worst_diff > 1e-4 * fmax (1.0, largest) ? "  MISMATCH" : "");
    free (a);
    free (b);
    free (c);
    free (c2);
  }
  return 0;
}
