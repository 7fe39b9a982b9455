/*
 * frame-convert.c — a frame plan's conversion on the CPU: frame to tensor
 * in one pass (hybrid-frame.h, frame-convert.h).
 *
 * Each output row is made from at most two source rows (four with 4:2:0
 * chroma).  A source row is first sampled horizontally into float rows,
 * one per component: a gather through the column table, bounded by the
 * tensor's width, that reads each sample's pixel as a 4-byte word so that
 * gcc vectorises the arithmetic, with loops of their own for the 2x
 * pattern of 4:2:0 chroma at the frame's size and for all-zero weights
 * (nearest, integer ratios).  As output rows walk down the frame,
 * consecutive ones often share source rows, so the last two sampled rows
 * of each plane are kept.  A second, contiguous loop then blends the two
 * rows vertically (or takes one, where the weight is zero), converts YUV
 * to RGB and normalises straight into the tensor's channel rows.  When the
 * frame has the tensor's size the main plane needs no sampling at all:
 * each row is converted and normalised as it is read.  Single-threaded
 * (the element's streaming thread) and allocation-free per frame.
 *
 * Every output value goes through the same float operations, in the same
 * order, as a plain per-pixel bilinear evaluation would (and as the CUDA
 * twin, kernels/cuda/frame-convert.h, does), so every path gives the
 * same bits: vector lanes are IEEE operations like scalar ones, and the
 * shortcuts only skip terms that are exactly zero (a zero weight adds
 * +-0 to a sample that is never -0).  Contracting a multiply and an add
 * into one FMA would change results, hence the fp-contract=off below.
 */
#include <math.h>
#include <string.h>

#include "hybrid.h"
#include "kernels/cpu/frame-convert.h"

/* No FMA contraction, whatever the C mode (ISO C, the build's, already
 * has none; GNU C would fuse in the AVX2 and AVX-512 builds below). */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__cplusplus)
#pragma GCC optimize ("fp-contract=off")
#endif

/* Hot row loops get AVX-512 (x86-64-v4) and AVX2 (x86-64-v3) builds
 * beside the baseline one, picked once at load time, as in
 * kernels/cpu/cpu-features.h (not when compiled as C++, which has no
 * target_clones on C functions). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) \
    && !defined(__cplusplus)
#define PP_CLONES \
  __attribute__ ((target_clones ("arch=x86-64-v4", "arch=x86-64-v3", \
          "default")))
#else
#define PP_CLONES
#endif

#if defined(__GNUC__)
#define PP_INLINE static inline __attribute__ ((always_inline))
#else
#define PP_INLINE static inline
#endif

/* Where output columns (or rows) sample the source: two neighbours and the
 * weight of the second.  Offsets are in bytes for packed pixels. */
typedef struct sample_table {
  int *lo, *hi;
  float *w;
  /* Every weight zero: each output is its `lo` sample as is. */
  bool nearest;
  /* A 2x upscale, like 4:2:0 chroma at the frame's size, for k < pairs:
   * bilinear, outputs 2k+1 and 2k+2 sample k and k+1 (in units) with
   * weights w_odd and w_even; nearest, outputs 2k and 2k+1 are sample k. */
  int pairs;
  float w_odd, w_even;
  /* Outputs [0, wide) may read their samples as 4-byte words at lo and
   * hi (the word stays within the row's samples). */
  int wide;
} sample_table;

struct hy_cpu_frame_converter {
  const hy_frame_desc *d;       /* the plan's: placement, offsets, YUV
                                 * coefficients, normalisation */
  sample_table cols, rows;      /* luma or packed pixels */
  sample_table ccols, crows;    /* 4:2:0 chroma */
  bool direct;                  /* same size: each pixel read as is */
  /* Source rows sampled horizontally, slot (row & 1): R, G, B of packed
   * pixels, gray or luma in [0]; U and V of chroma rows. */
  float *hrow[2][3];
  float *hchroma[2][2];
  bool yuv_bits;                /* see clamp_byte_bits */
  /* Quantized output: one output row's floats, per channel, before they
   * are rounded to bytes (in L1: no float tensor is made). */
  float *qrow[3];
  uint8_t *qbytes[3];           /* and its bytes, before they interleave */
};

static void
table_alloc (sample_table *t, int n)
{
  t->lo = g_new (int, n);
  t->hi = g_new (int, n);
  t->w = g_new (float, n);
}

static void
table_clear (sample_table *t)
{
  g_free (t->lo);
  g_free (t->hi);
  g_free (t->w);
}

/* n outputs over a source of `src` samples that the outputs cover at
 * `ratio` source samples per output; `unit` scales indices to offsets;
 * words from `bytes` on are past the row. */
static void
table_fill (sample_table *t, int n, int src, double ratio,
    hy_interpolation interp, int unit, int bytes)
{
  t->nearest = true;
  t->wide = 0;
  for (int i = 0; i < n; i++) {
    double centre = (i + 0.5) * ratio;
    int lo, hi;
    float w;
    if (interp == HY_INTERP_NEAREST) {
      lo = hi = MIN ((int) floor (centre), src - 1);
      w = 0.0f;
    } else {
      double s = CLAMP (centre - 0.5, 0.0, (double) (src - 1));
      lo = (int) floor (s);
      hi = MIN (lo + 1, src - 1);
      w = (float) (s - lo);
    }
    t->lo[i] = lo * unit;
    t->hi[i] = hi * unit;
    t->w[i] = w;
    t->nearest &= w == 0.0f;
    if (hi * unit + 4 <= bytes && t->wide == i)
      t->wide = i + 1;
  }
  /* The 2x pattern, from the start on. */
  t->pairs = 0;
  if (t->nearest) {
    for (int k = 0; 2 * k + 1 < n; k++) {
      if (t->lo[2 * k] != k * unit || t->lo[2 * k + 1] != k * unit)
        break;
      t->pairs = k + 1;
    }
    return;
  }
  if (n < 3)
    return;
  t->w_odd = t->w[1];
  t->w_even = t->w[2];
  for (int k = 0; 2 * k + 2 < n; k++) {
    int a = 2 * k + 1, b = 2 * k + 2;
    if (t->lo[a] != k * unit || t->hi[a] != (k + 1) * unit
        || t->lo[b] != k * unit || t->hi[b] != (k + 1) * unit
        || t->w[a] != t->w_odd || t->w[b] != t->w_even)
      break;
    t->pairs = k + 1;
  }
}

static void
setup_yuv (hy_cpu_frame_converter *pp)
{
  const hy_yuv_coefficients *k = &pp->d->yuv;
  /* y, u and v stay within +-300: with coefficients below 1e30 no product
   * or sum comes near FLT_MAX (so none is inf, and none NaN). */
  pp->yuv_bits = fabsf (k->vr) < 1e30f && fabsf (k->ub) < 1e30f
      && fabsf (k->vg) < 1e30f && fabsf (k->ug) < 1e30f;
}

hy_cpu_frame_converter *
hy_cpu_frame_converter_new (const hy_frame_desc *d)
{
  hy_cpu_frame_converter *pp = g_new0 (hy_cpu_frame_converter, 1);
  const hy_frame_config *c = &d->config;
  pp->d = d;
  /* Sampling pixel centres at the same size lands on the pixels: no
   * interpolation (chroma, at half size, still interpolates). */
  pp->direct = d->rw == c->src_width && d->rh == c->src_height;

  const int unit = d->packed ? d->bpp : 1;
  table_alloc (&pp->cols, d->rw);
  table_alloc (&pp->rows, d->rh);
  table_fill (&pp->cols, d->rw, c->src_width, d->rx, c->interpolation, unit,
      c->src_width * unit);
  table_fill (&pp->rows, d->rh, c->src_height, d->ry, c->interpolation, 1,
      0);
  if (hy_frame_layout_is_yuv (c->layout)) {
    int cw = (c->src_width + 1) / 2, ch = (c->src_height + 1) / 2;
    table_alloc (&pp->ccols, d->rw);
    table_alloc (&pp->crows, d->rh);
    /* NV12 interleaves U and V: a chroma sample (U, then V) is two
     * bytes apart. */
    int cunit = c->layout == HY_PIXEL_NV12 ? 2 : 1;
    table_fill (&pp->ccols, d->rw, cw, d->rx / 2, c->interpolation, cunit,
        cw * cunit);
    table_fill (&pp->crows, d->rh, ch, d->ry / 2, c->interpolation, 1, 0);
    setup_yuv (pp);
    for (int s = 0; s < 2; s++)
      for (int i = 0; i < 2; i++)
        pp->hchroma[s][i] = g_new (float, d->rw);
  }

  int planes = d->packed ? 3 : 1;
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < planes; i++)
      pp->hrow[s][i] = g_new (float, d->rw);
  for (int i = 0; i < c->dst_channels; i++) {
    pp->qrow[i] = g_new (float, d->rw);
    pp->qbytes[i] = g_new (uint8_t, d->rw);
  }
  return pp;
}

void
hy_cpu_frame_converter_free (hy_cpu_frame_converter *pp)
{
  if (!pp)
    return;
  table_clear (&pp->cols);
  table_clear (&pp->rows);
  table_clear (&pp->ccols);
  table_clear (&pp->crows);
  for (int s = 0; s < 2; s++) {
    for (int i = 0; i < 3; i++)
      g_free (pp->hrow[s][i]);
    for (int i = 0; i < 2; i++)
      g_free (pp->hchroma[s][i]);
  }
  for (int i = 0; i < 3; i++) {
    g_free (pp->qrow[i]);
    g_free (pp->qbytes[i]);
  }
  g_free (pp);
}

/* ---- horizontal sampling of one source row ---------------------------- */

/* The horizontal half of a bilinear sample: a[lo] + (a[hi] - a[lo]) * w,
 * int difference to float, in that order. */
PP_INLINE float
lerp_h (const uint8_t *restrict a, int lo, int hi, float w)
{
  return a[lo] + (a[hi] - a[lo]) * w;
}

/* Four bytes from p, as one word: a vector unit gathers words (or
 * inserts them lane by lane) where it has no byte gathers. */
PP_INLINE uint32_t
word_at (const uint8_t *p)
{
  uint32_t w;
  memcpy (&w, p, sizeof w);
  return w;
}

/* Byte o (0..3, in memory order) of a word read by word_at. */
PP_INLINE int
byte_of (uint32_t w, int o)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return (int) ((w >> (24 - 8 * o)) & 0xff);
#else
  return (int) ((w >> (8 * o)) & 0xff);
#endif
}

/* lerp_h of two samples already read. */
PP_INLINE float
lerp_2 (int lo, int hi, float w)
{
  return lo + (hi - lo) * w;
}

/* Sampling a row of one-byte samples through table t: `planes` is 1 for
 * a plane of its own (gray, luma, I420 chroma) into out0, 2 for NV12's
 * interleaved U and V (offsets in the table are even) into out0 and out1.
 * Each step below handles a range of outputs. */

/* Outputs [from, to), the general way: words while they are within the
 * row, then bytes. */
PP_INLINE void
sample_span (float *restrict out0, float *restrict out1,
    const uint8_t *restrict a, const sample_table *t, int from, int to,
    int planes)
{
  const int *restrict lo = t->lo, *restrict hi = t->hi;
  const float *restrict w = t->w;
  int i = from;
  for (; i < MIN (to, t->wide); i++) {
    uint32_t p = word_at (a + lo[i]), q = word_at (a + hi[i]);
    out0[i] = lerp_2 (byte_of (p, 0), byte_of (q, 0), w[i]);
    if (planes == 2)
      out1[i] = lerp_2 (byte_of (p, 1), byte_of (q, 1), w[i]);
  }
  for (; i < to; i++) {
    out0[i] = lerp_h (a, lo[i], hi[i], w[i]);
    if (planes == 2)
      out1[i] = lerp_h (a + 1, lo[i], hi[i], w[i]);
  }
}

/* Nearest, outputs [from, to). */
PP_INLINE void
sample_span_nearest (float *restrict out0, float *restrict out1,
    const uint8_t *restrict a, const sample_table *t, int from, int to,
    int planes)
{
  const int *restrict lo = t->lo;
  int i = from;
  for (; i < MIN (to, t->wide); i++) {
    uint32_t p = word_at (a + lo[i]);
    out0[i] = byte_of (p, 0);
    if (planes == 2)
      out1[i] = byte_of (p, 1);
  }
  for (; i < to; i++) {
    out0[i] = a[lo[i]];
    if (planes == 2)
      out1[i] = a[lo[i] + 1];
  }
}

/* The bilinear 2x pattern: samples k and k + 1 make outputs 2k+1 and
 * 2k+2, k < pairs. */
PP_INLINE void
sample_pairs (float *restrict out0, float *restrict out1,
    const uint8_t *restrict a, const sample_table *t, int planes)
{
  const float w_odd = t->w_odd, w_even = t->w_even;
  for (int k = 0; k < t->pairs; k++) {
    int s0 = a[k * planes], s1 = a[(k + 1) * planes];
    out0[2 * k + 1] = s0 + (s1 - s0) * w_odd;
    out0[2 * k + 2] = s0 + (s1 - s0) * w_even;
    if (planes == 2) {
      int t0 = a[k * 2 + 1], t1 = a[k * 2 + 3];
      out1[2 * k + 1] = t0 + (t1 - t0) * w_odd;
      out1[2 * k + 2] = t0 + (t1 - t0) * w_even;
    }
  }
}

/* The nearest 2x pattern: sample k makes outputs 2k and 2k+1, k <
 * pairs. */
PP_INLINE void
sample_doubles (float *restrict out0, float *restrict out1,
    const uint8_t *restrict a, const sample_table *t, int planes)
{
  for (int k = 0; k < t->pairs; k++) {
    float s0 = a[k * planes];
    out0[2 * k] = s0;
    out0[2 * k + 1] = s0;
    if (planes == 2) {
      float s1 = a[k * 2 + 1];
      out1[2 * k] = s1;
      out1[2 * k + 1] = s1;
    }
  }
}

PP_INLINE void
sample_row_n (float *restrict out0, float *restrict out1,
    const uint8_t *restrict a, const sample_table *t, int n, int planes)
{
  if (t->nearest) {
    sample_doubles (out0, out1, a, t, planes);
    sample_span_nearest (out0, out1, a, t, 2 * t->pairs, n, planes);
  } else if (t->pairs == 0) {
    sample_span (out0, out1, a, t, 0, n, planes);
  } else {
    sample_span (out0, out1, a, t, 0, 1, planes);
    sample_pairs (out0, out1, a, t, planes);
    sample_span (out0, out1, a, t, 2 * t->pairs + 1, n, planes);
  }
}

/* One row of a plane of one-byte samples into n floats. */
PP_CLONES static void
sample_plane (float *restrict out, const uint8_t *restrict a,
    const sample_table *t, int n)
{
  sample_row_n (out, NULL, a, t, n, 1);
}

/* One row of NV12's chroma into n floats of U and n of V. */
PP_CLONES static void
sample_uv (float *restrict u, float *restrict v, const uint8_t *restrict a,
    const sample_table *t, int n)
{
  sample_row_n (u, v, a, t, n, 2);
}

/* One row of packed pixels into R, G, B floats: whole pixels read as
 * words while they can be, byte by byte at the row's end. */
PP_CLONES static void
sample_packed (const hy_cpu_frame_converter *pp, const uint8_t *restrict a,
    float *const out[3])
{
  const sample_table *t = &pp->cols;
  const int *restrict lo = t->lo, *restrict hi = t->hi;
  const float *restrict w = t->w;
  float *restrict r = out[0], *restrict g = out[1], *restrict b = out[2];
  const int o0 = pp->d->off[0], o1 = pp->d->off[1], o2 = pp->d->off[2];
  const uint8_t *ar = a + o0, *ag = a + o1, *ab = a + o2;
  const int n = pp->d->rw, wide = t->wide;
  int i = 0;
  if (t->nearest) {
    for (; i < wide; i++) {
      uint32_t p = word_at (a + lo[i]);
      r[i] = byte_of (p, o0);
      g[i] = byte_of (p, o1);
      b[i] = byte_of (p, o2);
    }
    for (; i < n; i++) {
      r[i] = ar[lo[i]];
      g[i] = ag[lo[i]];
      b[i] = ab[lo[i]];
    }
    return;
  }
  for (; i < wide; i++) {
    uint32_t p = word_at (a + lo[i]), q = word_at (a + hi[i]);
    r[i] = lerp_2 (byte_of (p, o0), byte_of (q, o0), w[i]);
    g[i] = lerp_2 (byte_of (p, o1), byte_of (q, o1), w[i]);
    b[i] = lerp_2 (byte_of (p, o2), byte_of (q, o2), w[i]);
  }
  for (; i < n; i++) {
    r[i] = lerp_h (ar, lo[i], hi[i], w[i]);
    g[i] = lerp_h (ag, lo[i], hi[i], w[i]);
    b[i] = lerp_h (ab, lo[i], hi[i], w[i]);
  }
}

/* ---- output rows ---------------------------------------------------------- */

/* Where output row y's pixels go: channel c at out[c]. */
typedef struct out_row {
  float *out[3];
} out_row;

static inline float
clamp_byte (float v)
{
  return v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
}

/* clamp_byte on the bits: finite floats other than -0 order as their bits
 * read as signed integers do, and vector units take integer minima and
 * maxima where the float comparison needs compares and blends.  The YUV
 * sums it clamps are never -0 (y, a byte times a positive factor plus a
 * non-positive offset, is not; a round-to-nearest sum or difference is -0
 * only when its first term is), and never NaN while the coefficients
 * keep every product finite (yuv_bits), so the result is the same. */
PP_INLINE float
clamp_byte_bits (float v)
{
  const int32_t top = 0x437f0000;       /* 255.0f */
  int32_t b;
  memcpy (&b, &v, sizeof b);
  b = b < top ? b : top;
  b = b > 0 ? b : 0;
  memcpy (&v, &b, sizeof v);
  return v;
}

PP_INLINE float
luma_of (float r, float g, float b, float mul, float add)
{
  return (0.299f * r + 0.587f * g + 0.114f * b) * mul + add;
}

/* Packed pixels at the tensor's size, bytes at o0, o1, o2 of each pixel
 * to channels 0, 1, 2 (or, one channel, R G B to its luma). */
PP_INLINE void
packed_direct_n (const uint8_t *restrict a, float *restrict c0,
    float *restrict c1, float *restrict c2, int n, int bpp, int o0, int o1,
    int o2, const float *mul, const float *add, bool gray)
{
  const float m0 = mul[0], m1 = mul[1], m2 = mul[2];
  const float a0 = add[0], a1 = add[1], a2 = add[2];
  if (gray) {
    for (int i = 0; i < n; i++) {
      const uint8_t *p = a + (size_t) i * bpp;
      c0[i] = luma_of (p[o0], p[o1], p[o2], m0, a0);
    }
    return;
  }
  for (int i = 0; i < n; i++) {
    const uint8_t *p = a + (size_t) i * bpp;
    float x0 = p[o0], x1 = p[o1], x2 = p[o2];
    c0[i] = x0 * m0 + a0;
    c1[i] = x1 * m1 + a1;
    c2[i] = x2 * m2 + a2;
  }
}

/* 4 bytes a pixel: each pixel read as one word. */
PP_INLINE void
packed4_direct_n (const uint8_t *restrict a, float *restrict c0,
    float *restrict c1, float *restrict c2, int n, int o0, int o1, int o2,
    const float *mul, const float *add, bool gray)
{
  const float m0 = mul[0], m1 = mul[1], m2 = mul[2];
  const float a0 = add[0], a1 = add[1], a2 = add[2];
  for (int i = 0; i < n; i++) {
    uint32_t p = word_at (a + (size_t) i * 4);
    float x0 = byte_of (p, o0), x1 = byte_of (p, o1), x2 = byte_of (p, o2);
    if (gray) {
      c0[i] = luma_of (x0, x1, x2, m0, a0);
    } else {
      c0[i] = x0 * m0 + a0;
      c1[i] = x1 * m1 + a1;
      c2[i] = x2 * m2 + a2;
    }
  }
}

PP_CLONES static void
packed_direct_row (const hy_cpu_frame_converter *pp, const uint8_t *restrict a,
    const out_row *o)
{
  const hy_frame_config *c = &pp->d->config;
  const bool gray = c->dst_channels == 1;
  int n = pp->d->rw, o0, o1, o2;
  /* Channel ch takes the byte of R, G, B in tensor order; luma reads
   * them in R, G, B order. */
  if (gray || !c->bgr) {
    o0 = pp->d->off[0];
    o1 = pp->d->off[1];
    o2 = pp->d->off[2];
  } else {
    o0 = pp->d->off[2];
    o1 = pp->d->off[1];
    o2 = pp->d->off[0];
  }
  float *c0 = o->out[0], *c1 = o->out[gray ? 0 : 1],
      *c2 = o->out[gray ? 0 : 2];
  if (pp->d->bpp == 4) {
    if (gray)
      packed4_direct_n (a, c0, c1, c2, n, o0, o1, o2, pp->d->mul, pp->d->add,
          true);
    else
      packed4_direct_n (a, c0, c1, c2, n, o0, o1, o2, pp->d->mul, pp->d->add,
          false);
  } else if (o0 == 0 && o1 == 1 && o2 == 2) {
    if (gray)
      packed_direct_n (a, c0, c1, c2, n, 3, 0, 1, 2, pp->d->mul, pp->d->add, true);
    else
      packed_direct_n (a, c0, c1, c2, n, 3, 0, 1, 2, pp->d->mul, pp->d->add,
          false);
  } else if (o0 == 2 && o1 == 1 && o2 == 0) {
    if (gray)
      packed_direct_n (a, c0, c1, c2, n, 3, 2, 1, 0, pp->d->mul, pp->d->add, true);
    else
      packed_direct_n (a, c0, c1, c2, n, 3, 2, 1, 0, pp->d->mul, pp->d->add,
          false);
  } else {
    packed_direct_n (a, c0, c1, c2, n, pp->d->bpp, o0, o1, o2, pp->d->mul,
        pp->d->add, gray);
  }
}

/* Gray frame at the tensor's size. */
PP_CLONES static void
gray_direct_row (const hy_cpu_frame_converter *pp, const uint8_t *restrict a,
    const out_row *o)
{
  const int n = pp->d->rw;
  if (pp->d->config.dst_channels == 1) {
    float *restrict out = o->out[0];
    const float m = pp->d->mul[0], ad = pp->d->add[0];
    for (int i = 0; i < n; i++) {
      float v = a[i];
      out[i] = luma_of (v, v, v, m, ad);
    }
    return;
  }
  float *restrict c0 = o->out[0], *restrict c1 = o->out[1],
      *restrict c2 = o->out[2];
  const float m0 = pp->d->mul[0], m1 = pp->d->mul[1], m2 = pp->d->mul[2];
  const float a0 = pp->d->add[0], a1 = pp->d->add[1], a2 = pp->d->add[2];
  for (int i = 0; i < n; i++) {
    float v = a[i];
    c0[i] = v * m0 + a0;
    c1[i] = v * m1 + a1;
    c2[i] = v * m2 + a2;
  }
}

/* Sampled rows (top and bottom, R G B; gray repeats one row) blended by
 * wy (or, one, the top rows alone) and normalised. */
PP_INLINE void
blend_row_n (const hy_cpu_frame_converter *pp, const float *const top[3],
    const float *const bot[3], float wy, const out_row *o, bool one)
{
  const hy_frame_config *c = &pp->d->config;
  const int n = pp->d->rw;
  if (c->dst_channels == 1) {
    const float *restrict tr = top[0], *restrict tg = top[1],
        *restrict tb = top[2];
    const float *restrict br = bot[0], *restrict bg = bot[1],
        *restrict bb = bot[2];
    float *restrict out = o->out[0];
    const float m = pp->d->mul[0], ad = pp->d->add[0];
    for (int i = 0; i < n; i++) {
      float r = one ? tr[i] : tr[i] + (br[i] - tr[i]) * wy;
      float g = one ? tg[i] : tg[i] + (bg[i] - tg[i]) * wy;
      float b = one ? tb[i] : tb[i] + (bb[i] - tb[i]) * wy;
      out[i] = luma_of (r, g, b, m, ad);
    }
    return;
  }
  for (int ch = 0; ch < 3; ch++) {
    int k = c->bgr ? 2 - ch : ch;
    const float *restrict t = top[k], *restrict b = bot[k];
    float *restrict out = o->out[ch];
    const float m = pp->d->mul[ch], ad = pp->d->add[ch];
    for (int i = 0; i < n; i++)
      out[i] = (one ? t[i] : t[i] + (b[i] - t[i]) * wy) * m + ad;
  }
}

PP_CLONES static void
blend_row (const hy_cpu_frame_converter *pp, const float *const top[3],
    const float *const bot[3], float wy, const out_row *o)
{
  /* A zero weight adds exactly +-0: the bottom rows are not needed. */
  if (wy == 0.0f)
    blend_row_n (pp, top, bot, wy, o, true);
  else
    blend_row_n (pp, top, bot, wy, o, false);
}

/* How yuv_row_n reads luma: from two sampled rows blended by wy, from
 * one, or from the frame's bytes converted to floats first (the loop
 * then works on floats only, which gcc vectorises with fewer registers
 * than one that mixes bytes and floats). */
enum { LUMA_BLEND, LUMA_ONE };
/* Likewise chroma: two rows blended by cwy, or one. */
enum { CHROMA_BLEND, CHROMA_ONE };

/* A YUV row: luma from lt and lb (LUMA_BLEND) or lt (LUMA_ONE), chroma
 * from ut and ub_, vt and vb (CHROMA_BLEND) or ut and vt (CHROMA_ONE). */
PP_INLINE void
yuv_row_n (const hy_cpu_frame_converter *pp, const float *restrict lt,
    const float *restrict lb, float wy,
    const float *restrict ut, const float *restrict ub_,
    const float *restrict vt, const float *restrict vb, float cwy,
    const out_row *o, int luma, int chroma, bool gray, bool bits)
{
  const int n = pp->d->rw;
  const float y_mul = pp->d->yuv.y_mul, y_add = pp->d->yuv.y_add;
  const float c_mul = pp->d->yuv.c_mul;
  const float vr = pp->d->yuv.vr, ug = pp->d->yuv.ug, vg = pp->d->yuv.vg;
  const float ub = pp->d->yuv.ub;
  const int cr = pp->d->config.bgr ? 2 : 0, cb = 2 - cr;
  float *restrict outr = o->out[gray ? 0 : cr];
  float *restrict outg = o->out[gray ? 0 : 1];
  float *restrict outb = o->out[gray ? 0 : cb];
  const float mr = pp->d->mul[cr], mg = pp->d->mul[1], mb = pp->d->mul[cb];
  const float ar = pp->d->add[cr], ag = pp->d->add[1], ab = pp->d->add[cb];
  const float m0 = pp->d->mul[0], a0 = pp->d->add[0];
  for (int i = 0; i < n; i++) {
    float y = luma == LUMA_ONE ? lt[i] : lt[i] + (lb[i] - lt[i]) * wy;
    float u = chroma == CHROMA_ONE ? ut[i] : ut[i] + (ub_[i] - ut[i]) * cwy;
    float v = chroma == CHROMA_ONE ? vt[i] : vt[i] + (vb[i] - vt[i]) * cwy;
    y = y * y_mul + y_add;
    u = (u - 128.0f) * c_mul;
    v = (v - 128.0f) * c_mul;
    float r = y + vr * v, g = y - ug * u - vg * v, b = y + ub * u;
    r = bits ? clamp_byte_bits (r) : clamp_byte (r);
    g = bits ? clamp_byte_bits (g) : clamp_byte (g);
    b = bits ? clamp_byte_bits (b) : clamp_byte (b);
    if (gray) {
      outr[i] = luma_of (r, g, b, m0, a0);
    } else {
      outr[i] = r * mr + ar;
      outg[i] = g * mg + ag;
      outb[i] = b * mb + ab;
    }
  }
}

/* All the variants of yuv_row_n, each compiled on its own. */
#define YUV_ROW_VARIANT(luma, chroma, gray) \
  yuv_row_n (pp, lt, lb, wy, ct[0], cb[0], ct[1], cb[1], cwy, o, luma, \
      chroma, gray, true)

/* ya: the frame's luma row when it needs no sampling (then scratch takes
 * it as floats); else lt and lb, blended by wy.  ct and cb: U and V of two
 * sampled chroma rows, blended by cwy. */
PP_CLONES static void
yuv_row (const hy_cpu_frame_converter *pp, const uint8_t *restrict ya,
    float *restrict scratch, const float *lt, const float *lb, float wy,
    const float *const ct[2], const float *const cb[2], float cwy,
    const out_row *o)
{
  const bool gray = pp->d->config.dst_channels == 1;
  /* A zero weight adds exactly +-0: the second row is not needed. */
  const bool luma_one = ya || wy == 0.0f, chroma_one = cwy == 0.0f;
  if (ya) {
    for (int i = 0; i < pp->d->rw; i++)
      scratch[i] = ya[i];
    lt = scratch;
  }
  if (!pp->yuv_bits) {
    /* Out-of-range coefficients: the plain clamp, one variant (a zero
     * weight blends a row with itself into itself). */
    yuv_row_n (pp, lt, luma_one ? lt : lb, luma_one ? 0.0f : wy, ct[0],
        chroma_one ? ct[0] : cb[0], ct[1], chroma_one ? ct[1] : cb[1], cwy,
        o, LUMA_BLEND, CHROMA_BLEND, gray, false);
    return;
  }
  switch ((luma_one ? 4 : 0) | (chroma_one ? 2 : 0) | (gray ? 1 : 0)) {
    case 0:
      YUV_ROW_VARIANT (LUMA_BLEND, CHROMA_BLEND, false);
      break;
    case 1:
      YUV_ROW_VARIANT (LUMA_BLEND, CHROMA_BLEND, true);
      break;
    case 2:
      YUV_ROW_VARIANT (LUMA_BLEND, CHROMA_ONE, false);
      break;
    case 3:
      YUV_ROW_VARIANT (LUMA_BLEND, CHROMA_ONE, true);
      break;
    case 4:
      YUV_ROW_VARIANT (LUMA_ONE, CHROMA_BLEND, false);
      break;
    case 5:
      YUV_ROW_VARIANT (LUMA_ONE, CHROMA_BLEND, true);
      break;
    case 6:
      YUV_ROW_VARIANT (LUMA_ONE, CHROMA_ONE, false);
      break;
    default:
      YUV_ROW_VARIANT (LUMA_ONE, CHROMA_ONE, true);
      break;
  }
}

#undef YUV_ROW_VARIANT

/* ---- the frame ------------------------------------------------------------ */

static void
fill (float *restrict p, int n, float v)
{
  for (int i = 0; i < n; i++)
    p[i] = v;
}

/* Letterbox bands: black, normalised. */
static void
fill_padding (const hy_cpu_frame_converter *pp, float *dst)
{
  const hy_frame_config *c = &pp->d->config;
  int w = c->dst_width, h = c->dst_height;
  size_t plane = (size_t) w * h;
  int right = w - pp->d->ox - pp->d->rw;
  for (int ch = 0; ch < c->dst_channels; ch++) {
    float *p = dst + ch * plane;
    float v = pp->d->add[ch];
    fill (p, pp->d->oy * w, v);
    fill (p + (size_t) (pp->d->oy + pp->d->rh) * w, (h - pp->d->oy - pp->d->rh) * w, v);
    for (int y = pp->d->oy; y < pp->d->oy + pp->d->rh; y++) {
      fill (p + (size_t) y * w, pp->d->ox, v);
      fill (p + (size_t) y * w + pp->d->ox + pp->d->rw, right, v);
    }
  }
}

/* The sampled rows of one plane kept between output rows: slot (row & 1)
 * holds source row key[row & 1]. */
typedef struct row_cache {
  int key[2];
} row_cache;

/* Source row `row` of the main plane (packed, gray or luma), sampled. */
static int
main_row (const hy_cpu_frame_converter *pp, row_cache *rc, int row,
    const uint8_t *const planes[3], const int strides[3])
{
  int s = row & 1;
  if (rc->key[s] != row) {
    const uint8_t *a = planes[0] + (size_t) row * strides[0];
    if (pp->d->packed)
      sample_packed (pp, a, pp->hrow[s]);
    else
      sample_plane (pp->hrow[s][0], a, &pp->cols, pp->d->rw);
    rc->key[s] = row;
  }
  return s;
}

/* Chroma row `row`: U and V sampled. */
static int
chroma_row (const hy_cpu_frame_converter *pp, row_cache *rc, int row,
    const uint8_t *const planes[3], const int strides[3])
{
  int s = row & 1;
  if (rc->key[s] != row) {
    const uint8_t *u = planes[1] + (size_t) row * strides[1];
    if (pp->d->config.layout == HY_PIXEL_NV12) {
      sample_uv (pp->hchroma[s][0], pp->hchroma[s][1], u, &pp->ccols,
          pp->d->rw);
    } else {
      const uint8_t *v = planes[2] + (size_t) row * strides[2];
      sample_plane (pp->hchroma[s][0], u, &pp->ccols, pp->d->rw);
      sample_plane (pp->hchroma[s][1], v, &pp->ccols, pp->d->rw);
    }
    rc->key[s] = row;
  }
  return s;
}

/* Output row j of the picture (row oy + j of the tensor), its channels
 * written at o (rc and crc: the sampled rows kept between calls). */
static void
convert_row (const hy_cpu_frame_converter *pp, int j,
    const uint8_t *const planes[3], const int strides[3], row_cache *rc,
    row_cache *crc, const out_row *o)
{
  const bool yuv = hy_frame_layout_is_yuv (pp->d->config.layout);
  /* The main plane: bytes as is, or two sampled rows. */
  const uint8_t *direct = NULL;
  const float *top[3] = { NULL, NULL, NULL }, *bot[3] = { NULL, NULL,
    NULL };
  float wy = pp->rows.w[j];
  if (pp->direct) {
    direct = planes[0] + (size_t) pp->rows.lo[j] * strides[0];
  } else {
    int st = main_row (pp, rc, pp->rows.lo[j], planes, strides), sb = st;
    /* A zero weight adds exactly +-0: the bottom row is not needed. */
    if (wy != 0.0f)
      sb = main_row (pp, rc, pp->rows.hi[j], planes, strides);
    for (int k = 0; k < 3; k++) {
      int p = pp->d->packed ? k : 0;
      top[k] = pp->hrow[st][p];
      bot[k] = pp->hrow[sb][p];
    }
  }

  if (yuv) {
    float cwy = pp->crows.w[j];
    int st = chroma_row (pp, crc, pp->crows.lo[j], planes, strides);
    int sb = st;
    if (cwy != 0.0f)
      sb = chroma_row (pp, crc, pp->crows.hi[j], planes, strides);
    const float *ct[2] = { pp->hchroma[st][0], pp->hchroma[st][1] };
    const float *cb[2] = { pp->hchroma[sb][0], pp->hchroma[sb][1] };
    yuv_row (pp, direct, pp->hrow[0][0], top[0], bot[0], wy, ct, cb, cwy, o);
  } else if (direct && pp->d->packed) {
    packed_direct_row (pp, direct, o);
  } else if (direct) {
    gray_direct_row (pp, direct, o);
  } else {
    blend_row (pp, top, bot, wy, o);
  }
}

void
hy_cpu_frame_convert (const hy_cpu_frame_converter *pp,
    const uint8_t *const planes[3], const int strides[3], float *dst)
{
  const hy_frame_config *c = &pp->d->config;
  const size_t plane = (size_t) c->dst_width * c->dst_height;
  row_cache rc = { {-1, -1} }, crc = { {-1, -1} };
  if (pp->d->rw != c->dst_width || pp->d->rh != c->dst_height)
    fill_padding (pp, dst);
  for (int j = 0; j < pp->d->rh; j++) {
    out_row o;
    size_t at = (size_t) (pp->d->oy + j) * c->dst_width + pp->d->ox;
    for (int ch = 0; ch < 3; ch++)
      o.out[ch] = dst + (ch < c->dst_channels ? ch * plane + at : at);
    convert_row (pp, j, planes, strides, &rc, &crc, &o);
  }
}

/* ---- quantized output ------------------------------------------------------
 * The same floats, each then rounded as the model's quantize node rounds
 * it (hybrid.h, hy_input_quantize: x · scale to nearest even, saturated,
 * NaN to 127 or 0), into bytes NHWC: a row's floats are made in qrow and
 * rounded while they are in L1. */

/* n floats of one channel to n bytes, contiguous so that the rounding,
 * the saturation and the narrowing vectorise (a store every C bytes
 * kept the loop scalar: 0.30 ms a 224 × 224 frame against 0.21 for the
 * float conversion alone). */
PP_CLONES static void
quantize_row (const float *restrict x, uint8_t *restrict dst, int n,
    float scale, bool u8)
{
  const float lo = u8 ? 0.0f : -128.0f, hi = u8 ? 255.0f : 127.0f;
  const float nan_as = u8 ? 0.0f : 127.0f;
  for (int i = 0; i < n; i++) {
    const float v = x[i] * scale;
    float r = rintf (v);
    r = r < lo ? lo : r > hi ? hi : r;
    r = v != v ? nan_as : r;
    /* through int: a negative float to uint8_t is undefined */
    dst[i] = (uint8_t) (int) r;
  }
}

/* Three channels' bytes into pixels of three. */
PP_CLONES static void
interleave3 (const uint8_t *restrict c0, const uint8_t *restrict c1,
    const uint8_t *restrict c2, uint8_t *restrict dst, int n)
{
  for (int i = 0; i < n; i++) {
    dst[3 * i] = c0[i];
    dst[3 * i + 1] = c1[i];
    dst[3 * i + 2] = c2[i];
  }
}

/* Letterbox bands: black, normalised, quantized. */
static void
fill_padding_quantized (const hy_cpu_frame_converter *pp,
    const hy_input_quantization *q, uint8_t *dst)
{
  const hy_frame_config *c = &pp->d->config;
  const int w = c->dst_width, h = c->dst_height, C = c->dst_channels;
  uint8_t pixel[3];
  for (int ch = 0; ch < C; ch++)
    pixel[ch] = (uint8_t) hy_input_quantize (q, pp->d->add[ch]);
  for (int y = 0; y < h; y++) {
    bool band = y < pp->d->oy || y >= pp->d->oy + pp->d->rh;
    for (int x = 0; x < w; x++) {
      if (!band && x >= pp->d->ox && x < pp->d->ox + pp->d->rw)
        continue;
      memcpy (dst + ((size_t) y * w + x) * C, pixel, (size_t) C);
    }
  }
}

void
hy_cpu_frame_convert_quantized (const hy_cpu_frame_converter *pp,
    const uint8_t *const planes[3], const int strides[3],
    const hy_input_quantization *q, uint8_t *dst)
{
  const hy_frame_config *c = &pp->d->config;
  const int C = c->dst_channels;
  row_cache rc = { {-1, -1} }, crc = { {-1, -1} };
  if (pp->d->rw != c->dst_width || pp->d->rh != c->dst_height)
    fill_padding_quantized (pp, q, dst);
  out_row o;
  for (int ch = 0; ch < 3; ch++)
    o.out[ch] = pp->qrow[ch < C ? ch : 0];
  for (int j = 0; j < pp->d->rh; j++) {
    convert_row (pp, j, planes, strides, &rc, &crc, &o);
    uint8_t *row = dst + ((size_t) (pp->d->oy + j) * c->dst_width
        + pp->d->ox) * C;
    if (C == 1) {
      quantize_row (pp->qrow[0], row, pp->d->rw, q->scale, q->is_uint8);
      continue;
    }
    for (int ch = 0; ch < C; ch++)
      quantize_row (pp->qrow[ch], pp->qbytes[ch], pp->d->rw, q->scale,
          q->is_uint8);
    interleave3 (pp->qbytes[0], pp->qbytes[1], pp->qbytes[2], row,
        pp->d->rw);
  }
}
