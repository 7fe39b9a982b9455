/*
 * im2col-avx512.c — see im2col-avx512.h.
 *
 * 16 output columns at a time: a masked load (stride 1), or two whose even
 * lanes a permute gathers (stride 2) — lanes that fall in the padding are
 * masked off, and read as 0 — and a masked store.  Masked-off lanes are never
 * touched, so a load that starts before the row or ends past the plane
 * is safe.
 */
#include "kernels/cpu/conv/im2col-avx512.h"
#include "kernels/cpu/lane-mask.h"
#include "kernels/cpu/conv/sgemm-packed.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX512 __attribute__ ((target ("avx512f")))

bool
hy_im2col_tap_2d_supported (int64_t stride_w, int64_t out_w)
{
  /* The same CPU test (and off switch) as the packed GEMM's. */
  return (stride_w == 2 || (stride_w == 1 && out_w <= 16))
      && hy_packed_gemm_supported ();
}

AVX512 void
hy_im2col_tap_2d (float *dst, const float *plane, int64_t in_h,
    int64_t in_w, int64_t out_w, int64_t r0, int64_t r1, int64_t stride_h,
    int64_t ih_off, int64_t stride_w, int64_t first)
{
  const __m512i even = _mm512_set_epi32 (30, 28, 26, 24, 22, 20, 18, 16,
      14, 12, 10, 8, 6, 4, 2, 0);
  for (int64_t r = r0; r < r1; r++, dst += out_w) {
    const int64_t ih = r * stride_h + ih_off;
    const float *row = ih >= 0 && ih < in_h ? plane + ih * in_w : NULL;
    for (int64_t o0 = 0; o0 < out_w; o0 += 16) {
      const __mmask16 out = hy_lanes_within (o0, 0, out_w);
      __m512 v;
      if (!row) {
        v = _mm512_setzero_ps ();
      } else if (stride_w == 1) {
        const int64_t pos = o0 + first;
        v = _mm512_maskz_loadu_ps (hy_lanes_within (pos, 0, in_w) & out,
            row + pos);
      } else {
        const int64_t pos = 2 * o0 + first;
        const __m512 lo = _mm512_maskz_loadu_ps (hy_lanes_within (pos, 0, in_w),
            row + pos);
        const __m512 hi = _mm512_maskz_loadu_ps (hy_lanes_within (pos + 16, 0,
                in_w), row + pos + 16);
        v = _mm512_permutex2var_ps (lo, even, hi);
      }
      _mm512_mask_storeu_ps (dst + o0, out, v);
    }
  }
}

#else

bool
hy_im2col_tap_2d_supported (int64_t stride_w, int64_t out_w)
{
  return false;
}

void
hy_im2col_tap_2d (float *dst, const float *plane, int64_t in_h,
    int64_t in_w, int64_t out_w, int64_t r0, int64_t r1, int64_t stride_h,
    int64_t ih_off, int64_t stride_w, int64_t first)
{
  for (int64_t r = r0; r < r1; r++, dst += out_w) {
    const int64_t ih = r * stride_h + ih_off;
    for (int64_t o = 0; o < out_w; o++) {
      const int64_t iw = o * stride_w + first;
      dst[o] = ih >= 0 && ih < in_h && iw >= 0 && iw < in_w
          ? plane[ih * in_w + iw] : 0.0f;
    }
  }
}

#endif
