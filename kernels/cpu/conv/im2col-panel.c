/*
 * im2col-panel.c — see im2col-panel.h.
 *
 * A panel row is (channel c, tap t) over up to 48 consecutive output
 * positions: three 16-lane vectors.  A vector's positions run along one
 * output row and on into the next ones (at most three rows when rows are
 * at least 8 wide): a "segment" per row.  For every tap and segment the
 * panel's table holds where its lanes start in an input plane and which
 * lanes are inside the input (the rest, padding, read as 0); a row of the
 * panel is then, per vector, one masked load per segment merged into the
 * vector (stride 1) or two loads whose even lanes a permute gathers
 * (stride 2), and one aligned store.  The table depends on the output
 * positions and the taps only, not on the channel: it is made once per
 * panel and used by its every channel.
 */
#include <string.h>

#include <glib.h>

#include "kernels/cpu/conv/im2col-panel.h"
#include "kernels/cpu/conv/sgemm-packed.h"

#define NR HY_PACKED_PANEL_COLS
#define VECTORS (NR / 16)
#define SEGMENTS 3              /* output rows one vector can span */

/* Where one segment of one vector reads, split by kernel row and column
 * (a tap's is the sum of its row's and its column's offsets, its mask
 * their AND): k_h + k_w entries per segment to work out, not k_h · k_w. */
typedef struct panel_row {
  int64_t off;                  /* the input row's start in its plane */
  uint32_t inside;              /* all ones, or 0 when the row is padding */
} panel_row;

typedef struct panel_col {
  int64_t off;                  /* lane 0's input column */
  uint16_t m_lo, m_hi;          /* load masks (m_hi: stride 2's second) */
  uint16_t lanes;               /* the segment's lanes (stride 2's merge) */
} panel_col;

static inline int64_t
panel_floats (void)
{
  return HY_PACKED_PANEL_FLOATS;
}

size_t
hy_im2col_panel_scratch_bytes (int64_t k_h, int64_t k_w)
{
  const size_t table = (size_t) VECTORS * SEGMENTS * ((size_t) k_h
      * sizeof (panel_row) + (size_t) k_w * sizeof (panel_col));
  return (size_t) panel_floats () * sizeof (float) + ((table + 63) & ~(size_t) 63);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX512 __attribute__ ((target ("avx512f")))
#define UNROLL_Q _Pragma ("GCC unroll 3")

static inline int64_t
floor_div (int64_t a, int64_t b)
{
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* Lanes [lo, hi) of 16, clipped. */
static inline uint16_t
lane_range (int64_t lo, int64_t hi)
{
  lo = lo < 0 ? 0 : lo > 16 ? 16 : lo;
  hi = hi < 0 ? 0 : hi > 16 ? 16 : hi;
  if (hi <= lo)
    return 0;
  return (uint16_t) ((((uint32_t) 1 << hi) - 1) & ~(((uint32_t) 1 << lo)
          - 1));
}

/* Bit i of the low 8 bits of v to bit 2i: lane i of a stride-2 vector is
 * element 2i of the 32 loaded. */
static inline uint16_t
spread_even (uint32_t v)
{
  v &= 0xff;
  v = (v | v << 4) & 0x0f0f;
  v = (v | v << 2) & 0x3333;
  v = (v | v << 1) & 0x5555;
  return (uint16_t) v;
}

/* The tables for columns [col, col + width): segments per vector into
 * n_seg, entries at rows[(ky · VECTORS + vector) · SEGMENTS + segment]
 * and cols[(kx · VECTORS + vector) · SEGMENTS + segment]. */
static void
make_tables (const hy_im2col_panel *p, int64_t col, int64_t width,
    panel_row *rows, panel_col *cols, int n_seg[VECTORS])
{
  const int64_t ow = p->out_w;
  for (int q = 0; q < VECTORS; q++) {
    n_seg[q] = 0;
    const int64_t lanes_total = width - 16 * q < 16 ? width - 16 * q : 16;
    if (lanes_total <= 0)
      continue;
    const int64_t pos = p->first_pos + col + 16 * q;
    const int64_t y = pos / ow, x0 = pos % ow;
    /* hy_im2col_panel_supported saw to it that SEGMENTS rows hold every
     * lane. */
    g_assert (SEGMENTS * ow - x0 >= lanes_total);
    for (int s = 0; s < SEGMENTS; s++) {
      /* Lane l of segment s is output (y + s, l + d). */
      const int64_t la = s == 0 ? 0 : s * ow - x0;
      if (la >= lanes_total)
        break;
      const int64_t lb = (s + 1) * ow - x0 < lanes_total
          ? (s + 1) * ow - x0 : lanes_total;
      const int64_t d = x0 - s * ow;
      const int e = q * SEGMENTS + s;
      n_seg[q] = s + 1;
      for (int64_t ky = 0; ky < p->k_h; ky++) {
        const int64_t iy = (y + s) * p->stride_h - p->pad_h
            + ky * p->dilate_h;
        const bool inside = iy >= 0 && iy < p->in_h;
        rows[ky * VECTORS * SEGMENTS + e] = (panel_row) {
          inside ? iy * p->in_w : 0, inside ? 0xffffu : 0 };
      }
      for (int64_t kx = 0; kx < p->k_w; kx++) {
        /* Lane l reads input column l · stride + base. */
        const int64_t base = d * p->stride_w - p->pad_w + kx * p->dilate_w;
        panel_col *c = cols + kx * VECTORS * SEGMENTS + e;
        c->off = base;
        c->lanes = lane_range (la, lb);
        if (p->stride_w == 1) {
          c->m_lo = lane_range (la > -base ? la : -base,
              lb < p->in_w - base ? lb : p->in_w - base);
          c->m_hi = 0;
        } else {
          const int64_t lo = -floor_div (base, 2);
          const int64_t hi = -floor_div (base - p->in_w, 2);
          const uint16_t valid = lane_range (la > lo ? la : lo,
              lb < hi ? lb : hi);
          c->m_lo = spread_even (valid);
          c->m_hi = spread_even (valid >> 8);
        }
      }
    }
  }
}

bool
hy_im2col_panel_supported (int64_t stride_w, int64_t out_w, int64_t in_plane,
    int64_t panel_cols)
{
  static int off = -1;
  if (g_atomic_int_get (&off) < 0) {
    const char *env = g_getenv ("HYBRIDINFER_IMPLICIT_IM2COL");
    g_atomic_int_set (&off, env && !strcmp (env, "0"));
  }
  /* A vector's lanes (up to 16 of a panel's columns) starting anywhere in
   * an output row span at most SEGMENTS rows. */
  const int64_t lanes = panel_cols < 16 ? panel_cols : 16;
  return (stride_w == 1 || stride_w == 2) && out_w > 0
      && out_w - 1 + lanes <= SEGMENTS * out_w
      && in_plane < ((int64_t) 1 << 30) && !g_atomic_int_get (&off)
      && hy_packed_gemm_supported ();
}

/* One vector of the panel rows of one tap for n_ch channels: n segments
 * (a constant), each a masked load (stride 1) or two and a permute
 * (stride 2), merged; rows `step` floats apart in dst, input planes
 * `plane` floats apart in x.  The masks and offsets stay in registers for
 * the channels' loop. */
static inline __attribute__ ((always_inline)) AVX512 void
copy_channels (int stride, int n, const float *x, int64_t plane,
    const int64_t *off, const __mmask16 *m_lo, const __mmask16 *m_hi,
    const __mmask16 *lanes, int64_t n_ch, float *restrict dst, int64_t step)
{
  const __m512i even = _mm512_set_epi32 (30, 28, 26, 24, 22, 20, 18, 16,
      14, 12, 10, 8, 6, 4, 2, 0);
  const int64_t o0 = n > 0 ? off[0] : 0, o1 = n > 1 ? off[1] : 0;
  const int64_t o2 = n > 2 ? off[2] : 0;
  const __mmask16 l0 = n > 0 ? m_lo[0] : 0, l1 = n > 1 ? m_lo[1] : 0;
  const __mmask16 l2 = n > 2 ? m_lo[2] : 0;
  const __mmask16 h0 = stride == 2 && n > 0 ? m_hi[0] : 0;
  const __mmask16 h1 = stride == 2 && n > 1 ? m_hi[1] : 0;
  const __mmask16 h2 = stride == 2 && n > 2 ? m_hi[2] : 0;
  const __mmask16 s1 = stride == 2 && n > 1 ? lanes[1] : 0;
  const __mmask16 s2 = stride == 2 && n > 2 ? lanes[2] : 0;
  for (int64_t c = 0; c < n_ch; c++, x += plane, dst += step) {
    __m512 v = _mm512_setzero_ps ();
    if (stride == 1) {
      if (n > 0)
        v = _mm512_maskz_loadu_ps (l0, x + o0);
      if (n > 1)
        v = _mm512_mask_loadu_ps (v, l1, x + o1);
      if (n > 2)
        v = _mm512_mask_loadu_ps (v, l2, x + o2);
    } else {
      if (n > 0)
        v = _mm512_permutex2var_ps (_mm512_maskz_loadu_ps (l0, x + o0), even,
            _mm512_maskz_loadu_ps (h0, x + o0 + 16));
      if (n > 1)
        v = _mm512_mask_mov_ps (v, s1, _mm512_permutex2var_ps (
                _mm512_maskz_loadu_ps (l1, x + o1), even,
                _mm512_maskz_loadu_ps (h1, x + o1 + 16)));
      if (n > 2)
        v = _mm512_mask_mov_ps (v, s2, _mm512_permutex2var_ps (
                _mm512_maskz_loadu_ps (l2, x + o2), even,
                _mm512_maskz_loadu_ps (h2, x + o2 + 16)));
    }
    _mm512_store_ps (dst, v);
  }
}

/* A whole 48-column row of the panel of one tap for n_ch channels, each
 * vector n (1 or 2) segments with lanes inside the input, or fewer and
 * loads with empty masks: one loop per tap rather than one per vector,
 * for a block's dozen or so channels. */
static inline __attribute__ ((always_inline)) AVX512 void
copy_channels_row (int stride, int n, const float *x, int64_t plane,
    const int64_t off[VECTORS][2], const __mmask16 m_lo[VECTORS][2],
    const __mmask16 m_hi[VECTORS][2], const __mmask16 lanes[VECTORS][2],
    int64_t n_ch, float *restrict dst, int64_t step)
{
  const __m512i even = _mm512_set_epi32 (30, 28, 26, 24, 22, 20, 18, 16,
      14, 12, 10, 8, 6, 4, 2, 0);
  for (int64_t c = 0; c < n_ch; c++, x += plane, dst += step) {
    UNROLL_Q for (int q = 0; q < VECTORS; q++) {
      __m512 v;
      if (stride == 1) {
        v = _mm512_maskz_loadu_ps (m_lo[q][0], x + off[q][0]);
        if (n > 1)
          v = _mm512_mask_loadu_ps (v, m_lo[q][1], x + off[q][1]);
      } else {
        v = _mm512_permutex2var_ps (
            _mm512_maskz_loadu_ps (m_lo[q][0], x + off[q][0]), even,
            _mm512_maskz_loadu_ps (m_hi[q][0], x + off[q][0] + 16));
        if (n > 1)
          v = _mm512_mask_mov_ps (v, lanes[q][1], _mm512_permutex2var_ps (
                  _mm512_maskz_loadu_ps (m_lo[q][1], x + off[q][1]), even,
                  _mm512_maskz_loadu_ps (m_hi[q][1], x + off[q][1] + 16)));
      }
      _mm512_store_ps (dst + 16 * q, v);
    }
  }
}

/* kc rows of the panel from row k0 of B on (nv vectors each): tap by
 * tap, each tap's rows for every channel of the block in one loop (they
 * differ only by the input plane they read). */
static inline __attribute__ ((always_inline)) AVX512 void
pack_rows (int stride, const hy_im2col_panel *p, const panel_row *rows,
    const panel_col *cols, const int n_seg[VECTORS], int nv, int64_t k0,
    int64_t kc, float *restrict dst)
{
  const int64_t ld = 16 * nv;
  const int64_t taps = p->k_h * p->k_w, plane = p->in_h * p->in_w;
  const int64_t c_first = k0 / taps, c_end = (k0 + kc + taps - 1) / taps;
  const bool whole_rows = nv == VECTORS && n_seg[0] <= 2 && n_seg[1] <= 2
      && n_seg[2] <= 2;
  for (int64_t t = 0; t < taps; t++) {
    /* Channels c with k0 <= c · taps + t < k0 + kc. */
    int64_t c0 = c_first, c1 = c_end;
    if (c0 * taps + t < k0)
      c0++;
    if ((c1 - 1) * taps + t >= k0 + kc)
      c1--;
    if (c1 <= c0)
      continue;
    const panel_row *r = rows + t / p->k_w * VECTORS * SEGMENTS;
    const panel_col *c = cols + t % p->k_w * VECTORS * SEGMENTS;
    const float *x = p->x + c0 * plane;
    float *d = dst + (c0 * taps + t - k0) * ld;
    if (whole_rows) {
      /* Each vector's segments with lanes inside the input, first. */
      int64_t off[VECTORS][2] = { { 0 } };
      __mmask16 m_lo[VECTORS][2] = { { 0 } }, m_hi[VECTORS][2] = { { 0 } };
      __mmask16 lanes[VECTORS][2] = { { 0 } };
      int most = 1;
      for (int q = 0; q < VECTORS; q++) {
        int n = 0;
        for (int s = 0; s < n_seg[q]; s++) {
          const int e = q * SEGMENTS + s;
          const __mmask16 lo = (__mmask16) (r[e].inside & c[e].m_lo);
          const __mmask16 hi = (__mmask16) (r[e].inside & c[e].m_hi);
          if (!lo && !hi)
            continue;
          off[q][n] = r[e].off + c[e].off;
          m_lo[q][n] = lo;
          m_hi[q][n] = hi;
          lanes[q][n] = c[e].lanes;
          n++;
        }
        most = n > most ? n : most;
      }
      if (most == 1)
        copy_channels_row (stride, 1, x, plane, off, m_lo, m_hi, lanes,
            c1 - c0, d, taps * ld);
      else
        copy_channels_row (stride, 2, x, plane, off, m_lo, m_hi, lanes,
            c1 - c0, d, taps * ld);
      continue;
    }
    for (int q = 0; q < nv; q++, r += SEGMENTS, c += SEGMENTS, d += 16) {
      /* The segments with lanes inside the input (padding reads 0). */
      int64_t off[SEGMENTS];
      __mmask16 m_lo[SEGMENTS], m_hi[SEGMENTS], lanes[SEGMENTS];
      int n = 0;
      for (int s = 0; s < n_seg[q]; s++) {
        const __mmask16 lo = (__mmask16) (r[s].inside & c[s].m_lo);
        const __mmask16 hi = (__mmask16) (r[s].inside & c[s].m_hi);
        if (!lo && !hi)
          continue;
        off[n] = r[s].off + c[s].off;
        m_lo[n] = lo;
        m_hi[n] = hi;
        lanes[n] = c[s].lanes;
        n++;
      }
      switch (n) {
        case 0:
          copy_channels (stride, 0, x, plane, off, m_lo, m_hi, lanes,
              c1 - c0, d, taps * ld);
          break;
        case 1:
          copy_channels (stride, 1, x, plane, off, m_lo, m_hi, lanes,
              c1 - c0, d, taps * ld);
          break;
        case 2:
          copy_channels (stride, 2, x, plane, off, m_lo, m_hi, lanes,
              c1 - c0, d, taps * ld);
          break;
        default:
          copy_channels (stride, 3, x, plane, off, m_lo, m_hi, lanes,
              c1 - c0, d, taps * ld);
          break;
      }
    }
  }
}

static AVX512 void
pack_rows_1 (const hy_im2col_panel *p, const panel_row *rows,
    const panel_col *cols, const int n_seg[VECTORS], int nv, int64_t k0,
    int64_t kc, float *dst)
{
  pack_rows (1, p, rows, cols, n_seg, nv, k0, kc, dst);
}

static AVX512 void
pack_rows_2 (const hy_im2col_panel *p, const panel_row *rows,
    const panel_col *cols, const int n_seg[VECTORS], int nv, int64_t k0,
    int64_t kc, float *dst)
{
  pack_rows (2, p, rows, cols, n_seg, nv, k0, kc, dst);
}

const float *
hy_im2col_panel_get (void *arg, int thread, int64_t k0, int64_t kc,
    int64_t col, int64_t width, int64_t *ldb)
{
  const hy_im2col_panel *p = arg;
  float *panel = (float *) (p->scratch + (size_t) thread * p->scratch_stride);
  panel_col *cols = (panel_col *) (panel + panel_floats ());
  panel_row *rows = (panel_row *) (cols + p->k_w * VECTORS * SEGMENTS);
  int n_seg[VECTORS];
  const int nv = (int) ((width + 15) / 16);
  g_assert (width <= NR && kc * 16 * nv <= panel_floats ());
  make_tables (p, col, width, rows, cols, n_seg);
  if (p->stride_w == 1)
    pack_rows_1 (p, rows, cols, n_seg, nv, k0, kc, panel);
  else
    pack_rows_2 (p, rows, cols, n_seg, nv, k0, kc, panel);
  *ldb = 16 * nv;
  return panel;
}

#else /* not x86-64: never chosen, but correct */

bool
hy_im2col_panel_supported (int64_t stride_w, int64_t out_w, int64_t in_plane,
    int64_t panel_cols)
{
  return false;
}

const float *
hy_im2col_panel_get (void *arg, int thread, int64_t k0, int64_t kc,
    int64_t col, int64_t width, int64_t *ldb)
{
  const hy_im2col_panel *p = arg;
  float *panel = (float *) (p->scratch + (size_t) thread * p->scratch_stride);
  const int64_t taps = p->k_h * p->k_w;
  for (int64_t kk = 0; kk < kc; kk++) {
    const int64_t c = (k0 + kk) / taps, t = (k0 + kk) % taps;
    const int64_t ky = t / p->k_w, kx = t % p->k_w;
    for (int64_t j = 0; j < width; j++) {
      const int64_t pos = p->first_pos + col + j;
      const int64_t iy = pos / p->out_w * p->stride_h - p->pad_h
          + ky * p->dilate_h;
      const int64_t ix = pos % p->out_w * p->stride_w - p->pad_w
          + kx * p->dilate_w;
      panel[kk * width + j] = iy >= 0 && iy < p->in_h && ix >= 0
          && ix < p->in_w ? p->x[(c * p->in_h + iy) * p->in_w + ix] : 0.0f;
    }
  }
  *ldb = width;
  return panel;
}

#endif
