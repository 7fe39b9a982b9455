/*
 * depthwise-avx512.c — see depthwise-avx512.h.
 *
 * A block of R output rows × 16 columns is R × K accumulators (one per
 * output row and kernel row).  Each input row the block reads is loaded
 * once, as the K vectors its K column taps need, and multiplied into
 * every accumulator of the block whose output row reads it (up to K at
 * stride 1), so a 3×3 block of 4 rows at stride 1 costs 6 × 2 loads and
 * 6 × 2 shifts for 36 multiply-adds.  Input rows in the padding are
 * skipped; columns in it are masked off.
 *
 * Masked-off lanes are never read, so loads that start before a row or
 * end past the plane are safe.  The epilogue repeats epilogue.h's
 * arithmetic (BatchNorm as a multiply then an add, never fused: the build
 * is ISO C, -ffp-contract=off, as batch-norm.c's own), so a graph with the
 * epilogue fused computes what the unfused one does.
 */
#include "kernels/cpu/conv/depthwise-avx512.h"

#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "kernels/cpu/conv/epilogue-avx512.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/cpu/lane-mask.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX512 __attribute__ ((target ("avx512f")))
#define DW_INLINE static inline __attribute__ ((always_inline)) AVX512

bool
hy_depthwise_supported (const hy_depthwise *g)
{
  static int cpu = -1;
  if (g_atomic_int_get (&cpu) < 0) {
    const char *env = g_getenv ("HYBRIDINFER_DEPTHWISE");
    g_atomic_int_set (&cpu, hy_cpu_features_get ()->avx512f
        && !(env && !strcmp (env, "0")));
  }
  return g_atomic_int_get (&cpu) == 1
      && (g->kernel == 3 || g->kernel == 5 || g->kernel == 7)
      && (g->stride_h == 1 || g->stride_h == 2)
      && (g->stride_w == 1 || g->stride_w == 2)
      && g->pad_h >= 0 && g->pad_w >= 0
      && g->in_h > 0 && g->in_w > 0 && g->out_h > 0 && g->out_w > 0;
}

#else

bool
hy_depthwise_supported (const hy_depthwise *g)
{
  return false;
}

#endif

bool
hy_depthwise_fuses (const hy_fused_epilogue *e)
{
  return hy_avx512_act_fits (e->act);
}

#if defined(__x86_64__) && defined(__GNUC__)

/* One plane's operands, in registers (the K × K weights are the
 * caller's array, so that its size is the kernel's). */
typedef struct plane_regs {
  const __m512 *w;
  __m512 bias;
  hy_fused_act act;
  bool batch_norm;
  __m512 alpha, beta, mean, scale, shift;
  const float *res;
} plane_regs;

/* The operands of one plane, broadcast: built inside each variant below,
 * whose loops then keep them in registers (or, 5×5 and 7×7, read them
 * from the stack as the multiply-adds' memory operands). */
DW_INLINE plane_regs
regs_of (__m512 *wv, const float *w, const int K, float bias,
    const hy_depthwise_epilogue *epi)
{
  plane_regs p;
#pragma GCC unroll 49
  for (int t = 0; t < K * K; t++)
    wv[t] = _mm512_set1_ps (w[t]);
  p.w = wv;
  p.bias = _mm512_set1_ps (bias);
  p.act = epi ? epi->act : HY_FUSED_ACT_NONE;
  p.batch_norm = epi && epi->batch_norm;
  p.alpha = _mm512_set1_ps (epi ? epi->alpha : 0.0f);
  p.beta = _mm512_set1_ps (epi ? epi->beta : 0.0f);
  p.mean = _mm512_set1_ps (p.batch_norm ? epi->mean : 0.0f);
  p.scale = _mm512_set1_ps (p.batch_norm ? epi->scale : 0.0f);
  p.shift = _mm512_set1_ps (p.batch_norm ? epi->shift : 0.0f);
  p.res = epi ? epi->res : NULL;
  return p;
}

/* The epilogue on 16 outputs, those of lanes m at offset `at` of the
 * plane; epilogue.h's order and comparisons (NaN passes ReLU and clip). */
DW_INLINE __m512
finish (const plane_regs *p, __m512 v, int64_t at, __mmask16 m)
{
  if (p->batch_norm)
    v = _mm512_add_ps (_mm512_mul_ps (_mm512_sub_ps (v, p->mean), p->scale),
        p->shift);
  if (p->res)
    v = _mm512_add_ps (v, _mm512_maskz_loadu_ps (m, p->res + at));
  return hy_avx512_act (p->act, v, p->alpha, p->beta);
}

/* The load masks of one chunk of 16 outputs from o0 on, those of the two
 * or three loads load_taps makes from each input row. */
typedef struct chunk_masks {
  __mmask16 load[3];
  __mmask16 store;
  bool interior;                /* stride 1, no lane off the row */
  bool hi_inside;               /* stride 1: all 16 floats of the second
                                 * vector in the row, so that a plain load
                                 * of it reads nothing past the row's end
                                 * (the plane's, at its last row) */
} chunk_masks;

DW_INLINE chunk_masks
chunk_masks_at (const hy_depthwise *g, int64_t o0, const int K,
    const int SW)
{
  const int64_t pos = o0 * SW - g->pad_w;
  chunk_masks m;
  if (SW == 1) {
    /* 16 + K − 1 floats: a vector and K − 1 after it. */
    const __mmask16 tail = (__mmask16) ((1u << (K - 1)) - 1);
    m.load[0] = hy_lanes_within (pos, 0, g->in_w);
    m.load[1] = hy_lanes_within (pos + 16, 0, g->in_w) & tail;
    m.load[2] = 0;
    m.interior = m.load[0] == 0xffff && m.load[1] == tail;
    m.hi_inside = hy_lanes_within (pos + 16, 0, g->in_w) == 0xffff;
  } else {
    /* 31 + K − 1 floats: two vectors and K − 2 after them. */
    const __mmask16 tail = (__mmask16) ((1u << (K - 2)) - 1);
    m.load[0] = hy_lanes_within (pos, 0, g->in_w);
    m.load[1] = hy_lanes_within (pos + 16, 0, g->in_w);
    m.load[2] = hy_lanes_within (pos + 32, 0, g->in_w) & tail;
    m.interior = m.load[0] == 0xffff && m.load[1] == 0xffff
        && m.load[2] == tail;
    m.hi_inside = true;
  }
  m.store = hy_lanes_within (o0, 0, g->out_w);
  return m;
}

/* A masked load, or (MASKED false: every lane inside the row) a plain
 * one, which is faster on Zen 5 (docs/PERFORMANCE.md, "Depthwise"). */
DW_INLINE __m512i
load_lanes (__mmask16 m, const float *at, const bool MASKED)
{
  return _mm512_castps_si512 (MASKED ? _mm512_maskz_loadu_ps (m, at)
      : _mm512_loadu_ps (at));
}

/* The K column taps' inputs of 16 outputs from one input row, from
 * at = row + o0·SW − pad_w on: v[kw] lane q holds at[q·SW + kw], 0 off
 * the row.  Stride 1: a vector and the K − 1 floats after it, tap kw
 * shifted kw lanes out of the pair (valignd), which beat K unaligned
 * loads.  Stride 2: the even and odd lanes of two vectors are taps 0 and
 * 1; tap 2j (2j + 1) is tap 0 (1) j lanes on, its last j lanes the even
 * (odd) floats after both. */
DW_INLINE void
load_taps (const float *at, const chunk_masks *m, const int K, const int SW,
    const bool MASKED, __m512 v[])
{
  if (SW == 1) {
    const __m512i lo = load_lanes (m->load[0], at, MASKED);
    /* Only K − 1 of hi's lanes are needed: near the row's end a plain
     * load would read past it. */
    const __m512i hi = load_lanes (m->load[1], at + 16,
        MASKED || !m->hi_inside);
    v[0] = _mm512_castsi512_ps (lo);
    /* valignd takes its shift as an immediate: one case per tap. */
#define TAP_S1(kw) \
    if (kw < K) \
      v[kw] = _mm512_castsi512_ps (_mm512_alignr_epi32 (hi, lo, kw));
    TAP_S1 (1) TAP_S1 (2) TAP_S1 (3) TAP_S1 (4) TAP_S1 (5) TAP_S1 (6)
#undef TAP_S1
  } else {
    const __m512i even = _mm512_set_epi32 (30, 28, 26, 24, 22, 20, 18, 16,
        14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_set_epi32 (31, 29, 27, 25, 23, 21, 19, 17,
        15, 13, 11, 9, 7, 5, 3, 1);
    const __m512 lo = _mm512_castsi512_ps (load_lanes (m->load[0],
            at, MASKED));
    const __m512 hi = _mm512_castsi512_ps (load_lanes (m->load[1],
            at + 16, MASKED));
    const __m512i last = load_lanes (m->load[2], at + 32, true);
    v[0] = _mm512_permutex2var_ps (lo, even, hi);
    v[1] = _mm512_permutex2var_ps (lo, odd, hi);
    /* 3×3 needs only the float after both: last's lane 0 as it is. */
    const __m512i last_even = K == 3 ? last
        : _mm512_permutexvar_epi32 (even, last);
    const __m512i last_odd = K == 3 ? last
        : _mm512_permutexvar_epi32 (odd, last);
    const __m512i e0 = _mm512_castps_si512 (v[0]);
    const __m512i o0 = _mm512_castps_si512 (v[1]);
#define TAP_S2(kw) \
    if (kw < K) \
      v[kw] = _mm512_castsi512_ps (kw % 2 == 0 \
          ? _mm512_alignr_epi32 (last_even, e0, kw / 2) \
          : _mm512_alignr_epi32 (last_odd, o0, kw / 2));
    TAP_S2 (2) TAP_S2 (3) TAP_S2 (4) TAP_S2 (5) TAP_S2 (6)
#undef TAP_S2
  }
}

/* Output rows [r0, r0 + R), the 16 columns from o0 on.  CHECK_ROWS:
 * some of the input rows the block reads lie in the padding (at the top
 * or bottom of the plane), and are skipped. */
DW_INLINE void
rows_block (const hy_depthwise *g, const plane_regs *p, float *y,
    const float *x, int64_t r0, int64_t o0, const chunk_masks *m,
    const int K, const int R, const int SH, const int SW, const bool MASKED,
    const bool CHECK_ROWS)
{
  const int64_t ow = g->out_w, iw = g->in_w, ih = g->in_h;
  const int64_t i0 = r0 * SH - g->pad_h;
  const float *row = x + i0 * iw + o0 * SW - g->pad_w;
  /* One sum per (output row, kernel row), added up at the end: a
   * multiply-add takes 4 cycles, and one chain of K² per output would
   * keep only the K output rows an input row feeds in flight. */
  __m512 acc[4][7];             /* R × K of them */
#pragma GCC unroll 4
  for (int rr = 0; rr < R; rr++)
#pragma GCC unroll 7
    for (int kh = 0; kh < K; kh++)
      acc[rr][kh] = kh == 0 ? p->bias : _mm512_setzero_ps ();
#pragma GCC unroll 16
  for (int ii = 0; ii < (R - 1) * SH + K; ii++, row += iw) {
    if (CHECK_ROWS && (i0 + ii < 0 || i0 + ii >= ih))
      continue;
    __m512 v[7];
    load_taps (row, m, K, SW, MASKED, v);
#pragma GCC unroll 4
    for (int rr = 0; rr < R; rr++) {
      const int kh = ii - rr * SH;
      if (kh < 0 || kh >= K)
        continue;
      __m512 a = acc[rr][kh];
#pragma GCC unroll 7
      for (int kw = 0; kw < K; kw++)
        a = _mm512_fmadd_ps (p->w[kh * K + kw], v[kw], a);
      acc[rr][kh] = a;
    }
  }
#pragma GCC unroll 4
  for (int rr = 0; rr < R; rr++) {
    const int64_t at = (r0 + rr) * ow + o0;
    __m512 sum = _mm512_add_ps (acc[rr][0], acc[rr][1]);
#pragma GCC unroll 7
    for (int kh = 2; kh < K; kh++)
      sum = _mm512_add_ps (sum, acc[rr][kh]);
    _mm512_mask_storeu_ps (y + at, m->store, finish (p, sum, at,
            m->store));
  }
}

/* Output rows [r, r + R) of a strip: without row checks where every
 * input row they read lies in the plane (all but the first and last
 * blocks). */
DW_INLINE void
rows_block_any (const hy_depthwise *g, const plane_regs *p, float *y,
    const float *x, int64_t r, int64_t o0, const chunk_masks *m,
    const int K, const int R, const int SH, const int SW, const bool MASKED)
{
  const int64_t i0 = r * SH - g->pad_h;
  if (i0 >= 0 && i0 + (R - 1) * SH + K <= g->in_h)
    rows_block (g, p, y, x, r, o0, m, K, R, SH, SW, MASKED, false);
  else
    rows_block (g, p, y, x, r, o0, m, K, R, SH, SW, MASKED, true);
}

/* A strip of 16 columns at a time, down every output row RMAX rows at a
 * time, then the rest: a strip's masks are computed once. */
DW_INLINE void
rows_strip (const hy_depthwise *g, const plane_regs *p, float *y,
    const float *x, int64_t o0, const chunk_masks *m, const int K,
    const int SH, const int SW, const bool MASKED)
{
  /* R × K sums and K² weights: more rows at 5×5 and 7×7 would spill the
   * sums. */
  const int RMAX = K == 3 ? 4 : 2;
  int64_t r = 0;
  for (; r + RMAX <= g->out_h; r += RMAX)
    rows_block_any (g, p, y, x, r, o0, m, K, RMAX, SH, SW, MASKED);
  if (RMAX == 4 && r + 2 <= g->out_h) {
    rows_block_any (g, p, y, x, r, o0, m, K, 2, SH, SW, MASKED);
    r += 2;
  }
  if (r < g->out_h)
    rows_block_any (g, p, y, x, r, o0, m, K, 1, SH, SW, MASKED);
}

DW_INLINE void
rows_plane (const hy_depthwise *g, const plane_regs *p, float *y,
    const float *x, const int K, const int SH, const int SW)
{
  for (int64_t o0 = 0; o0 < g->out_w; o0 += 16) {
    const chunk_masks m = chunk_masks_at (g, o0, K, SW);
    if (m.interior)
      rows_strip (g, p, y, x, o0, &m, K, SH, SW, false);
    else
      rows_strip (g, p, y, x, o0, &m, K, SH, SW, true);
  }
}

/* One function per kernel size and stride pair, so that each is compiled
 * with its own constants. */
#define PLANE_VARIANT(K, SH, SW) \
  static AVX512 __attribute__ ((noinline)) void \
  rows_plane_k##K##_s##SH##SW (const hy_depthwise *g, float *y, \
      const float *x, const float *w, float bias, \
      const hy_depthwise_epilogue *epi) \
  { \
    __m512 wv[K * K]; \
    const plane_regs p = regs_of (wv, w, K, bias, epi); \
    rows_plane (g, &p, y, x, K, SH, SW); \
  }

#define PLANE_VARIANTS(K) \
  PLANE_VARIANT (K, 1, 1) PLANE_VARIANT (K, 2, 2) \
  PLANE_VARIANT (K, 1, 2) PLANE_VARIANT (K, 2, 1) \
  static inline __attribute__ ((always_inline)) void \
  rows_plane_k##K (const hy_depthwise *g, float *y, const float *x, \
      const float *w, float bias, const hy_depthwise_epilogue *epi) \
  { \
    if (g->stride_h == 1 && g->stride_w == 1) \
      rows_plane_k##K##_s11 (g, y, x, w, bias, epi); \
    else if (g->stride_h == 2 && g->stride_w == 2) \
      rows_plane_k##K##_s22 (g, y, x, w, bias, epi); \
    else if (g->stride_h == 1) \
      rows_plane_k##K##_s12 (g, y, x, w, bias, epi); \
    else \
      rows_plane_k##K##_s21 (g, y, x, w, bias, epi); \
  }

PLANE_VARIANTS (3)
PLANE_VARIANTS (5)
PLANE_VARIANTS (7)

void
hy_depthwise_plane (const hy_depthwise *g, float *y, const float *x,
    const float *w, float bias, const hy_depthwise_epilogue *epi)
{
  if (g->kernel == 3)
    rows_plane_k3 (g, y, x, w, bias, epi);
  else if (g->kernel == 5)
    rows_plane_k5 (g, y, x, w, bias, epi);
  else
    rows_plane_k7 (g, y, x, w, bias, epi);
}

#else

void
hy_depthwise_plane (const hy_depthwise *g, float *y, const float *x,
    const float *w, float bias, const hy_depthwise_epilogue *epi)
{
  g_assert_not_reached ();      /* hy_depthwise_supported said no */
}

#endif
