/*
 * depthwise-avx512.c — see depthwise-avx512.h.
 *
 * A block of R output rows × 16 columns is R × 3 accumulators (one per
 * output row and kernel row).  Each input row the block reads is loaded
 * once, as the three vectors its three column taps need, and multiplied
 * into every accumulator of the block whose output row reads it (up to
 * three at stride 1), so a block of 4 rows at stride 1 costs 6 × 2 loads
 * and 6 × 2 shifts for 36 multiply-adds.  Input rows in the padding are
 * skipped; columns in it are masked off.
 *
 * Masked-off lanes are never read, so loads that start before a row or
 * end past the plane are safe.  The epilogue repeats epilogue.h's
 * arithmetic (BatchNorm as a multiply then an add, never fused: the build
 * is ISO C, -ffp-contract=off, as batch-norm.c's own), so a graph with the
 * epilogue fused computes what the unfused one does.
 */
#include "depthwise-avx512.h"

#include <stdlib.h>
#include <string.h>

#include <glib.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX512 __attribute__ ((target ("avx512f")))
#define DW_INLINE static inline __attribute__ ((always_inline)) AVX512

bool
hy_depthwise_3x3_supported (const hy_depthwise_3x3 *g)
{
  static int cpu = -1;
  if (g_atomic_int_get (&cpu) < 0) {
    __builtin_cpu_init ();
    const char *env = g_getenv ("HYBRIDINFER_DEPTHWISE");
    g_atomic_int_set (&cpu, __builtin_cpu_supports ("avx512f")
        && !(env && !strcmp (env, "0")));
  }
  return g_atomic_int_get (&cpu) == 1
      && (g->stride_h == 1 || g->stride_h == 2)
      && (g->stride_w == 1 || g->stride_w == 2)
      && g->pad_h >= 0 && g->pad_w >= 0
      && g->in_h > 0 && g->in_w > 0 && g->out_h > 0 && g->out_w > 0;
}

#else

bool
hy_depthwise_3x3_supported (const hy_depthwise_3x3 *g)
{
  return false;
}

#endif

bool
hy_depthwise_3x3_fuses (const hy_fused_epilogue *e)
{
  return e->act == HY_FUSED_ACT_NONE || e->act == HY_FUSED_ACT_RELU
      || e->act == HY_FUSED_ACT_CLIP;
}

#if defined(__x86_64__) && defined(__GNUC__)

/* Lanes q of [0, 16) with lo <= pos + q < hi. */
DW_INLINE __mmask16
lanes_within (int64_t pos, int64_t lo, int64_t hi)
{
  int64_t a = lo - pos, b = hi - pos;
  a = a < 0 ? 0 : a > 16 ? 16 : a;
  b = b < 0 ? 0 : b > 16 ? 16 : b;
  if (b <= a)
    return 0;
  return (__mmask16) ((((uint32_t) 1 << b) - 1) & ~(((uint32_t) 1 << a) - 1));
}

/* One plane's operands, in registers. */
typedef struct plane_regs {
  __m512 w[9];
  __m512 bias;
  hy_fused_act act;
  bool batch_norm;
  __m512 alpha, beta, mean, scale, shift;
  const float *res;
} plane_regs;

/* The operands of one plane, broadcast: built inside each variant below,
 * whose loops then keep them in registers. */
DW_INLINE plane_regs
regs_of (const float *w, float bias, const hy_depthwise_epilogue *epi)
{
  plane_regs p;
#pragma GCC unroll 9
  for (int t = 0; t < 9; t++)
    p.w[t] = _mm512_set1_ps (w[t]);
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
  const __m512 zero = _mm512_setzero_ps ();
  switch (p->act) {
    case HY_FUSED_ACT_RELU:
      v = _mm512_mask_mov_ps (v, _mm512_cmp_ps_mask (v, zero, _CMP_LE_OQ),
          zero);
      break;
    case HY_FUSED_ACT_CLIP:
      /* v > beta ? beta : v < alpha ? alpha : v.  maxps (alpha, v) is
       * alpha > v ? alpha : v, v itself when v is NaN. */
      v = _mm512_mask_mov_ps (_mm512_max_ps (p->alpha, v),
          _mm512_cmp_ps_mask (v, p->beta, _CMP_GT_OQ), p->beta);
      break;
    default:
      break;
  }
  return v;
}

/* The load masks of one chunk of 16 outputs from o0 on, those of the two
 * or three loads load_taps makes from each input row. */
typedef struct chunk_masks {
  __mmask16 load[3];
  __mmask16 store;
  bool interior;                /* stride 1, no lane off the row */
} chunk_masks;

DW_INLINE chunk_masks
chunk_masks_at (const hy_depthwise_3x3 *g, int64_t o0, const int SW)
{
  const int64_t pos = o0 * SW - g->pad_w;
  chunk_masks m;
  if (SW == 1) {
    m.load[0] = lanes_within (pos, 0, g->in_w);
    m.load[1] = lanes_within (pos + 16, 0, g->in_w) & 3;
    m.load[2] = 0;
    m.interior = m.load[0] == 0xffff && m.load[1] == 3;
  } else {
    m.load[0] = lanes_within (pos, 0, g->in_w);
    m.load[1] = lanes_within (pos + 16, 0, g->in_w);
    m.load[2] = lanes_within (pos + 32, 0, g->in_w) & 1;
    m.interior = m.load[0] == 0xffff && m.load[1] == 0xffff
        && m.load[2] == 1;
  }
  m.store = lanes_within (o0, 0, g->out_w);
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

/* The three column taps' inputs of 16 outputs from one input row, from
 * at = row + o0·SW − pad_w on: v[kw] lane q holds at[q·SW + kw], 0 off
 * the row.  Stride 1: a vector and the two floats after it, taps 1 and 2
 * shifted out of the pair (valignd), which beat three unaligned loads.
 * Stride 2: the even and odd lanes of two vectors are taps 0 and 1; tap
 * 2 is tap 0 one lane on, its last lane the float after both. */
DW_INLINE void
load_taps (const float *at, const chunk_masks *m, const int SW,
    const bool MASKED, __m512 v[3])
{
  if (SW == 1) {
    const __m512i lo = load_lanes (m->load[0], at, MASKED);
    const __m512i hi = load_lanes (m->load[1], at + 16, MASKED);
    v[0] = _mm512_castsi512_ps (lo);
    v[1] = _mm512_castsi512_ps (_mm512_alignr_epi32 (hi, lo, 1));
    v[2] = _mm512_castsi512_ps (_mm512_alignr_epi32 (hi, lo, 2));
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
    v[2] = _mm512_castsi512_ps (_mm512_alignr_epi32 (last,
            _mm512_castps_si512 (v[0]), 1));
  }
}

/* Output rows [r0, r0 + R), the 16 columns from o0 on.  CHECK_ROWS:
 * some of the input rows the block reads lie in the padding (at the top
 * or bottom of the plane), and are skipped. */
DW_INLINE void
rows_block (const hy_depthwise_3x3 *g, const plane_regs *p, float *y,
    const float *x, int64_t r0, int64_t o0, const chunk_masks *m,
    const int R, const int SH, const int SW, const bool MASKED,
    const bool CHECK_ROWS)
{
  const int64_t ow = g->out_w, iw = g->in_w, ih = g->in_h;
  const int64_t i0 = r0 * SH - g->pad_h;
  const float *row = x + i0 * iw + o0 * SW - g->pad_w;
  /* One sum per (output row, kernel row), added up at the end: a
   * multiply-add takes 4 cycles, and one chain of nine per output would
   * keep only the three output rows an input row feeds in flight. */
  __m512 acc[4][3];             /* R × 3 of them */
#pragma GCC unroll 4
  for (int rr = 0; rr < R; rr++)
#pragma GCC unroll 3
    for (int kh = 0; kh < 3; kh++)
      acc[rr][kh] = kh == 0 ? p->bias : _mm512_setzero_ps ();
#pragma GCC unroll 16
  for (int ii = 0; ii < (R - 1) * SH + 3; ii++, row += iw) {
    if (CHECK_ROWS && (i0 + ii < 0 || i0 + ii >= ih))
      continue;
    __m512 v[3];
    load_taps (row, m, SW, MASKED, v);
#pragma GCC unroll 4
    for (int rr = 0; rr < R; rr++) {
      const int kh = ii - rr * SH;
      if (kh < 0 || kh > 2)
        continue;
      __m512 a = acc[rr][kh];
      a = _mm512_fmadd_ps (p->w[kh * 3], v[0], a);
      a = _mm512_fmadd_ps (p->w[kh * 3 + 1], v[1], a);
      acc[rr][kh] = _mm512_fmadd_ps (p->w[kh * 3 + 2], v[2], a);
    }
  }
#pragma GCC unroll 4
  for (int rr = 0; rr < R; rr++) {
    const int64_t at = (r0 + rr) * ow + o0;
    const __m512 sum = _mm512_add_ps (_mm512_add_ps (acc[rr][0],
            acc[rr][1]), acc[rr][2]);
    _mm512_mask_storeu_ps (y + at, m->store, finish (p, sum, at,
            m->store));
  }
}

/* Output rows [r, r + R) of a strip: without row checks where every
 * input row they read lies in the plane (all but the first and last
 * blocks). */
DW_INLINE void
rows_block_any (const hy_depthwise_3x3 *g, const plane_regs *p, float *y,
    const float *x, int64_t r, int64_t o0, const chunk_masks *m,
    const int R, const int SH, const int SW, const bool MASKED)
{
  const int64_t i0 = r * SH - g->pad_h;
  if (i0 >= 0 && i0 + (R - 1) * SH + 3 <= g->in_h)
    rows_block (g, p, y, x, r, o0, m, R, SH, SW, MASKED, false);
  else
    rows_block (g, p, y, x, r, o0, m, R, SH, SW, MASKED, true);
}

/* A strip of 16 columns at a time, down every output row 4 rows at a
 * time, then the rest: a strip's masks are computed once. */
DW_INLINE void
rows_strip (const hy_depthwise_3x3 *g, const plane_regs *p, float *y,
    const float *x, int64_t o0, const chunk_masks *m, const int SH,
    const int SW, const bool MASKED)
{
  int64_t r = 0;
  for (; r + 4 <= g->out_h; r += 4)
    rows_block_any (g, p, y, x, r, o0, m, 4, SH, SW, MASKED);
  if (r + 2 <= g->out_h) {
    rows_block_any (g, p, y, x, r, o0, m, 2, SH, SW, MASKED);
    r += 2;
  }
  if (r < g->out_h)
    rows_block_any (g, p, y, x, r, o0, m, 1, SH, SW, MASKED);
}

DW_INLINE void
rows_plane (const hy_depthwise_3x3 *g, const plane_regs *p, float *y,
    const float *x, const int SH, const int SW)
{
  for (int64_t o0 = 0; o0 < g->out_w; o0 += 16) {
    const chunk_masks m = chunk_masks_at (g, o0, SW);
    if (m.interior)
      rows_strip (g, p, y, x, o0, &m, SH, SW, false);
    else
      rows_strip (g, p, y, x, o0, &m, SH, SW, true);
  }
}

static AVX512 __attribute__ ((noinline)) void
rows_plane_s11 (const hy_depthwise_3x3 *g, float *y, const float *x,
    const float *w, float bias, const hy_depthwise_epilogue *epi)
{
  const plane_regs p = regs_of (w, bias, epi);
  rows_plane (g, &p, y, x, 1, 1);
}

static AVX512 __attribute__ ((noinline)) void
rows_plane_s22 (const hy_depthwise_3x3 *g, float *y, const float *x,
    const float *w, float bias, const hy_depthwise_epilogue *epi)
{
  const plane_regs p = regs_of (w, bias, epi);
  rows_plane (g, &p, y, x, 2, 2);
}

static AVX512 __attribute__ ((noinline)) void
rows_plane_s12 (const hy_depthwise_3x3 *g, float *y, const float *x,
    const float *w, float bias, const hy_depthwise_epilogue *epi)
{
  const plane_regs p = regs_of (w, bias, epi);
  rows_plane (g, &p, y, x, 1, 2);
}

static AVX512 __attribute__ ((noinline)) void
rows_plane_s21 (const hy_depthwise_3x3 *g, float *y, const float *x,
    const float *w, float bias, const hy_depthwise_epilogue *epi)
{
  const plane_regs p = regs_of (w, bias, epi);
  rows_plane (g, &p, y, x, 2, 1);
}

void
hy_depthwise_3x3_plane (const hy_depthwise_3x3 *g, float *y, const float *x,
    const float *w, float bias, const hy_depthwise_epilogue *epi)
{
  if (g->stride_h == 1 && g->stride_w == 1)
    rows_plane_s11 (g, y, x, w, bias, epi);
  else if (g->stride_h == 2 && g->stride_w == 2)
    rows_plane_s22 (g, y, x, w, bias, epi);
  else if (g->stride_h == 1)
    rows_plane_s12 (g, y, x, w, bias, epi);
  else
    rows_plane_s21 (g, y, x, w, bias, epi);
}

#else

void
hy_depthwise_3x3_plane (const hy_depthwise_3x3 *g, float *y, const float *x,
    const float *w, float bias, const hy_depthwise_epilogue *epi)
{
  g_assert_not_reached ();      /* hy_depthwise_3x3_supported said no */
}

#endif
